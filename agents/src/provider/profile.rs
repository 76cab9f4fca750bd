//! Availability profile of a space-shared cluster: the number of free processing elements
//! (PEs) as a step function of simulated time.
//!
//! This is the data structure behind conservative backfilling (Mu'alem & Feitelson 2001,
//! "Utilization, predictability, workloads, and user runtime estimates in scheduling the IBM
//! SP2 with backfilling", §2) and behind GridSim's profile-based EASY and multi-partition
//! policies (de Assunção & Buyya), which Garg's meta-broker thesis and Salehi's contention
//! thesis use as local schedulers. Breakpoints are kept in time order in blocks of 128 to 256 (fewer after merges),
//! each knowing its fewest and most free PEs: a search skips whole blocks where no window can start, or where the
//! current one cannot end, and an update costs O(log n + breakpoints in the window + a block). A search still visits
//! every breakpoint of a block that holds both, so it is not logarithmic.
//! Free capacity is also advertised as slots `(t_start, t_end, n)` (Garg Ch6–7).
//!
//! Instants are [`SimTime`]s, which are totally ordered and so order the breakpoints; durations are `f64` seconds.

use serde::{Deserialize, Serialize};

use crate::sim::SimTime;

/// `pes` PEs free throughout `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Slot {
    /// First instant of the slot.
    pub start: SimTime,
    /// End of the slot (exclusive).
    pub end: SimTime,
    /// Number of PEs free throughout the slot.
    pub pes: u32,
}

/// Free PEs of a cluster (or of one partition) as a step function of time.
///
/// Each breakpoint `t ↦ n` means "n PEs are free from `t` until the next breakpoint"; the last
/// breakpoint extends to infinity and always has every PE free, because allocations are finite.
/// Adjacent breakpoints never carry the same value, so the representation is canonical.
#[derive(Clone, Debug)]
pub struct Profile {
    capacity: u32,
    /// The breakpoints in time order, in non-empty blocks.
    blocks: Vec<Block>,
}

/// A block that grows past twice this many breakpoints is split in two.
const BLOCK: usize = 128;

/// A run of consecutive breakpoints with the fewest and the most free PEs among them.
#[derive(Clone, Debug)]
struct Block {
    times: Vec<SimTime>,
    free: Vec<u32>,
    min: u32,
    max: u32,
}

impl Block {
    fn new(times: Vec<SimTime>, free: Vec<u32>) -> Self {
        let mut block = Self { times, free, min: 0, max: 0 };
        block.refresh();
        block
    }

    fn refresh(&mut self) {
        self.min = self.free.iter().copied().min().unwrap_or(u32::MAX);
        self.max = self.free.iter().copied().max().unwrap_or(0);
    }

    fn last(&self) -> SimTime {
        *self.times.last().expect("blocks are never empty")
    }
}

/// A breakpoint's place: (block, index in the block); `(blocks, 0)` is past the end.
type Pos = (usize, usize);

impl PartialEq for Profile {
    fn eq(&self, other: &Self) -> bool {
        self.capacity == other.capacity && self.entries_from((0, 0)).eq(other.entries_from((0, 0)))
    }
}

impl Profile {
    /// An empty profile: all `capacity` PEs free from the start of the run.
    pub fn new(capacity: u32) -> Self {
        Self { capacity, blocks: vec![Block::new(vec![SimTime::ZERO], vec![capacity])] }
    }

    /// Number of PEs the profile manages.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Free PEs at instant `t`.
    pub fn free_at(&self, t: SimTime) -> u32 {
        let (b, i) = self.locate(t);
        self.blocks[b].free[i]
    }

    /// Minimum number of free PEs over `[start, end)`: the PEs a job could hold for the whole
    /// window.
    pub fn min_free(&self, start: SimTime, end: SimTime) -> u32 {
        self.fold_inside(start, end, self.free_at(start), u32::min, |block| block.min)
    }

    /// Folds `pick` over the free PEs of the breakpoints strictly inside `(start, end)`, taking `whole` of each block
    /// that lies entirely inside.
    fn fold_inside(
        &self,
        start: SimTime,
        end: SimTime,
        init: u32,
        pick: fn(u32, u32) -> u32,
        whole: fn(&Block) -> u32,
    ) -> u32 {
        let mut acc = init;
        if start >= end {
            return acc;
        }
        let (mut b, mut i) = self.upper(start);
        while let Some(block) = self.blocks.get(b) {
            if i == 0 && block.last() < end {
                acc = pick(acc, whole(block));
            } else {
                let stop = i + block.times[i..].partition_point(|&t| t < end);
                acc = block.free[i..stop].iter().fold(acc, |acc, &free| pick(acc, free));
                if stop < block.times.len() {
                    break;
                }
            }
            (b, i) = (b + 1, 0);
        }
        acc
    }

    /// The breakpoints strictly inside `(start, end)`: none for an empty window, which a job shorter than the clock's
    /// resolution at a late time has (`t + d == t`).
    fn inside(&self, start: SimTime, end: SimTime) -> impl Iterator<Item = (SimTime, u32)> + '_ {
        (start < end)
            .then(|| self.entries_from(self.upper(start)).take_while(move |&(t, _)| t < end))
            .into_iter()
            .flatten()
    }

    /// The breakpoints from `pos` on, in time order.
    fn entries_from(&self, (b, i): Pos) -> impl Iterator<Item = (SimTime, u32)> + '_ {
        let blocks = self.blocks.get(b..).unwrap_or_default();
        blocks.iter().enumerate().flat_map(move |(k, block)| {
            let from = if k == 0 { i } else { 0 };
            block.times[from..].iter().copied().zip(block.free[from..].iter().copied())
        })
    }

    /// The last breakpoint at or before `t`.
    fn locate(&self, t: SimTime) -> Pos {
        let b = self.blocks.partition_point(|block| block.times[0] <= t);
        assert!(b > 0, "time precedes the profile's origin");
        let times = &self.blocks[b - 1].times;
        (b - 1, times.partition_point(|&x| x <= t) - 1)
    }

    /// The first breakpoint strictly after `t` (possibly past the end).
    fn upper(&self, t: SimTime) -> Pos {
        let b = self.blocks.partition_point(|block| block.times[0] <= t);
        if b == 0 {
            return (0, 0);
        }
        let times = &self.blocks[b - 1].times;
        let i = times.partition_point(|&x| x <= t);
        if i < times.len() { (b - 1, i) } else { (b, 0) }
    }

    /// Earliest `t >= after` such that `pes` PEs are free throughout `[t, t + duration)`.
    ///
    /// Candidates are `after` and the breakpoints; the scan stops at the end of the first window
    /// that fits, so it visits only the breakpoints up to the answer, and skips whole blocks where none can start a
    /// window or end the current one.
    pub fn earliest_fit(&self, after: SimTime, pes: u32, duration: f64) -> SimTime {
        assert!(pes <= self.capacity, "{pes} PEs never fit in {}", self.capacity);
        self.first_fit(after, pes, duration, None).expect("the last step has every PE free")
    }

    /// Earliest start, at or after `after`, of a job that already holds `pes` PEs over
    /// `[held_start, held_start + duration)`, as if it gave them back first: never later than
    /// `held_start`. Inside its own window the job's PEs are its own, so only the breakpoints
    /// before `held_start` matter. Read-only: a job that cannot move costs no update.
    pub fn earliest_refit(&self, after: SimTime, pes: u32, duration: f64, held_start: SimTime) -> SimTime {
        if after >= held_start {
            return held_start;
        }
        self.first_fit(after, pes, duration, Some(held_start)).unwrap_or(held_start)
    }

    /// The first start from `after` with `pes` free for `duration`, scanning the breakpoints after `after` (and before
    /// `until`, if given); when the scan ends first, the start of the last free run (open to the right), if any.
    fn first_fit(&self, after: SimTime, pes: u32, duration: f64, until: Option<SimTime>) -> Option<SimTime> {
        let mut candidate = (self.free_at(after) >= pes).then_some(after);
        let (mut b, mut i) = self.upper(after);
        while let Some(block) = self.blocks.get(b) {
            if until.is_some_and(|until| block.times[i] >= until) {
                return candidate;
            }
            match candidate {
                // No breakpoint of the block has `pes` free: none starts a window, and there is none to end.
                None if block.max < pes => {}
                // Every breakpoint keeps the candidate: it fits by the first at or after its end, or the scan ends.
                Some(start) if block.min >= pes => {
                    let fit = start + duration;
                    if fit <= block.last() || until.is_some_and(|until| until <= block.last()) {
                        return candidate;
                    }
                }
                _ => {
                    for (&t, &free) in block.times[i..].iter().zip(&block.free[i..]) {
                        if until.is_some_and(|until| t >= until) {
                            return candidate;
                        }
                        if let Some(start) = candidate
                            && start + duration <= t
                        {
                            return Some(start);
                        }
                        if free < pes {
                            candidate = None;
                        } else if candidate.is_none() {
                            candidate = Some(t);
                        }
                    }
                }
            }
            (b, i) = (b + 1, 0);
        }
        candidate
    }

    /// Takes `pes` PEs over `[start, end)`.
    ///
    /// # Panics
    /// If fewer than `pes` PEs are free somewhere in the window: the callers check first, so
    /// this is an oversubscription bug.
    pub fn allocate(&mut self, start: SimTime, end: SimTime, pes: u32) {
        self.update(start, end, |free| free.checked_sub(pes).expect("PEs oversubscribed"));
    }

    /// Gives back `pes` PEs over `[start, end)`.
    pub fn release(&mut self, start: SimTime, end: SimTime, pes: u32) {
        let capacity = self.capacity;
        self.update(start, end, |free| {
            let free = free + pes;
            assert!(free <= capacity, "released PEs that were not allocated");
            free
        });
    }

    /// Moves a window of `pes` PEs from `[from, from_end)` to `[to, to_end)`, which must have them free once the
    /// window is given back. The same profile as [`release`](Self::release) then [`allocate`](Self::allocate), but
    /// overlapping windows (a job compressed by less than its length) only update where they differ.
    pub fn shift(&mut self, from: SimTime, from_end: SimTime, to: SimTime, to_end: SimTime, pes: u32) {
        if !(to < from_end && from < to_end) {
            self.release(from, from_end, pes);
            self.allocate(to, to_end, pes);
            return;
        }
        // Starts first, then ends; each pair of windows differs on one side of each edge.
        if to < from {
            self.allocate(to, from, pes);
        } else if from < to {
            self.release(from, to, pes);
        }
        if to_end < from_end {
            self.release(to_end, from_end, pes);
        } else if from_end < to_end {
            self.allocate(from_end, to_end, pes);
        }
    }

    /// The end of the run of at least `pes` free PEs that begins at `start`: `start` itself when fewer are free
    /// then, `None` when they stay free for good.
    pub fn free_until(&self, start: SimTime, pes: u32) -> Option<SimTime> {
        if self.free_at(start) < pes {
            return Some(start);
        }
        let (b, i) = self.upper(start);
        for (k, block) in self.blocks.iter().enumerate().skip(b) {
            let from = if k == b { i } else { 0 };
            // A whole block with `pes` free at every breakpoint cannot end the run.
            if from == 0 && block.min >= pes {
                continue;
            }
            if let Some(j) = block.free[from..].iter().position(|&free| free < pes) {
                return Some(block.times[from + j]);
            }
        }
        None
    }

    /// Largest number of free PEs anywhere in `[start, end)`.
    pub fn max_free(&self, start: SimTime, end: SimTime) -> u32 {
        self.fold_inside(start, end, self.free_at(start), u32::max, |block| block.max)
    }

    /// Forgets the past: drops breakpoints before `now` (keeping the value in force at `now`).
    pub fn advance(&mut self, now: SimTime) {
        if self.blocks[0].times[0] >= now {
            return;
        }
        let (b, i) = self.locate(now);
        self.blocks.drain(..b);
        let block = &mut self.blocks[0];
        block.times.drain(..i);
        block.free.drain(..i);
        block.times[0] = now;
        block.refresh();
    }

    /// Breakpoints strictly after `t`, in time order.
    pub fn breakpoints_after(&self, t: SimTime) -> impl Iterator<Item = SimTime> + '_ {
        self.entries_from(self.upper(t)).map(|(t, _)| t)
    }

    /// The profile over `[from, until)` as maximal constant pieces, in time order.
    pub fn segments(&self, from: SimTime, until: SimTime) -> Vec<Slot> {
        let mut pieces = vec![Slot { start: from, end: until, pes: self.free_at(from) }];
        for (t, free) in self.inside(from, until) {
            let last = pieces.last_mut().expect("starts with one piece");
            last.end = t;
            pieces.push(Slot { start: t, end: until, pes: free });
        }
        pieces
    }

    /// Free-slot advertisement over `[from, until)`: every maximal rectangle of free capacity,
    /// i.e. each slot `(t_start, t_end, n)` has `n` PEs free throughout and can be widened
    /// neither in time nor in PEs. A rigid job of `p` PEs and duration `d` fits in the window
    /// iff some slot has `n >= p` and `t_end - t_start >= d`. Sorted by start, then end.
    ///
    /// This is Garg's "packaged" slot list (Ch7 Fig 7.3, after Singh et al.); the "immediate"
    /// list is the first slot starting at `from`. Built with the stack algorithm for maximal
    /// rectangles under a histogram, O(pieces).
    pub fn free_slots(&self, from: SimTime, until: SimTime) -> Vec<Slot> {
        let mut slots = Vec::new();
        if until <= from {
            return slots;
        }
        // Open rectangles: (left edge, height), heights strictly increasing.
        let mut open: Vec<(SimTime, u32)> = Vec::new();
        let pieces = self.segments(from, until);
        let closing = Slot { start: until, end: until, pes: 0 };
        for piece in pieces.iter().chain(std::iter::once(&closing)) {
            let mut left = piece.start;
            while let Some(&(start, pes)) = open.last()
                && pes >= piece.pes
            {
                open.pop();
                if pes > piece.pes {
                    slots.push(Slot { start, end: piece.start, pes });
                }
                left = start;
            }
            if piece.pes > 0 {
                open.push((left, piece.pes));
            }
        }
        slots.sort_by_key(|s| (s.start, s.end));
        slots
    }

    /// Pointwise sum of several profiles: the cluster-wide view of a partitioned cluster.
    pub fn sum(profiles: &[Profile]) -> Profile {
        let mut times: Vec<SimTime> = profiles.iter().flat_map(|p| p.entries_from((0, 0)).map(|(t, _)| t)).collect();
        times.sort();
        times.dedup();
        let mut steps: Vec<(SimTime, u32)> = Vec::new();
        for t in times {
            let free = profiles.iter().filter(|p| p.blocks[0].times[0] <= t).map(|p| p.free_at(t)).sum();
            if steps.last().is_none_or(|&(_, last)| last != free) {
                steps.push((t, free));
            }
        }
        let blocks = steps
            .chunks(BLOCK)
            .map(|chunk| Block::new(chunk.iter().map(|s| s.0).collect(), chunk.iter().map(|s| s.1).collect()));
        Profile { capacity: profiles.iter().map(Profile::capacity).sum(), blocks: blocks.collect() }
    }

    /// Applies `change` to every step in `[start, end)`; an empty window (see [`Profile::inside`]) holds nothing.
    fn update(&mut self, start: SimTime, end: SimTime, change: impl Fn(u32) -> u32) {
        if start == end {
            return;
        }
        assert!(start < end, "reversed window [{start}, {end})");
        self.split(start);
        self.split(end);
        let (mut b, mut i) = self.locate(start);
        while let Some(block) = self.blocks.get_mut(b) {
            let stop = i + block.times[i..].partition_point(|&t| t < end);
            for free in &mut block.free[i..stop] {
                *free = change(*free);
            }
            block.refresh();
            if stop < block.times.len() {
                break;
            }
            (b, i) = (b + 1, 0);
        }
        // A uniform change keeps the inside canonical; only the two edges may now repeat.
        self.merge(start);
        self.merge(end);
    }

    /// Makes `t` a breakpoint (with the value in force there).
    fn split(&mut self, t: SimTime) {
        let (b, i) = self.locate(t);
        let block = &mut self.blocks[b];
        if block.times[i] == t {
            return;
        }
        // The value is already in the block: its extremes stand.
        let free = block.free[i];
        block.times.insert(i + 1, t);
        block.free.insert(i + 1, free);
        if block.times.len() > 2 * BLOCK {
            let times = block.times.split_off(BLOCK);
            let free = block.free.split_off(BLOCK);
            block.refresh();
            self.blocks.insert(b + 1, Block::new(times, free));
        }
    }

    /// Drops the breakpoint at `t`, if any, when it repeats the value before it.
    fn merge(&mut self, t: SimTime) {
        let (b, i) = self.locate(t);
        if self.blocks[b].times[i] != t {
            return;
        }
        let before = match i {
            0 if b == 0 => return,
            0 => *self.blocks[b - 1].free.last().expect("blocks are never empty"),
            _ => self.blocks[b].free[i - 1],
        };
        let block = &mut self.blocks[b];
        if block.free[i] != before {
            return;
        }
        block.times.remove(i);
        block.free.remove(i);
        if block.times.is_empty() {
            self.blocks.remove(b);
            return;
        }
        block.refresh();
        // Keeps blocks from thinning out: a small one joins its successor when both fit in one.
        if block.times.len() < BLOCK / 4
            && let Some(next) = self.blocks.get(b + 1)
            && self.blocks[b].times.len() + next.times.len() <= 2 * BLOCK
        {
            let next = self.blocks.remove(b + 1);
            let block = &mut self.blocks[b];
            block.times.extend(next.times);
            block.free.extend(next.free);
            block.refresh();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(secs: f64) -> SimTime {
        SimTime::new(secs).unwrap()
    }

    fn steps(p: &Profile) -> Vec<(f64, u32)> {
        p.entries_from((0, 0)).map(|(t, n)| (t.secs(), n)).collect()
    }

    #[test]
    fn allocate_release_coalesce() {
        let mut p = Profile::new(8);
        p.advance(t(0.0));
        p.allocate(t(0.0), t(10.0), 3);
        p.allocate(t(5.0), t(20.0), 4);
        assert_eq!(steps(&p), [(0.0, 5), (5.0, 1), (10.0, 4), (20.0, 8)], "two overlapping jobs");
        assert_eq!(p.min_free(t(0.0), t(10.0)), 1);
        assert_eq!(p.min_free(t(10.0), t(30.0)), 4);
        assert_eq!(p.max_free(t(4.0), t(12.0)), 5);
        p.release(t(5.0), t(20.0), 4);
        assert_eq!(steps(&p), [(0.0, 5), (10.0, 8)], "merged back");
        p.release(t(0.0), t(10.0), 3);
        assert_eq!(steps(&p), [(0.0, 8)]);
    }

    #[test]
    fn earliest_fit_scans_breakpoints() {
        let mut p = Profile::new(8);
        p.advance(t(0.0));
        p.allocate(t(0.0), t(10.0), 6); // 2 free until 10
        p.allocate(t(12.0), t(15.0), 7); // 1 free on [12, 15)
        assert_eq!(p.earliest_fit(t(0.0), 2, 12.0), t(0.0), "ends where the dip to 1 starts");
        assert_eq!(p.earliest_fit(t(0.0), 2, 12.5), t(15.0));
        assert_eq!(p.earliest_fit(t(0.0), 3, 2.0), t(10.0), "the hole [10,12) is exactly 2 long");
        assert_eq!(p.earliest_fit(t(0.0), 3, 2.5), t(15.0), "too short a hole");
        assert_eq!(p.earliest_fit(t(11.0), 8, 1.0), t(11.0));
        assert_eq!(p.earliest_fit(t(11.5), 8, 1.0), t(15.0));
    }

    #[test]
    fn free_until_ends_at_the_first_dip_below_the_count() {
        let mut p = Profile::new(8);
        p.advance(t(0.0));
        p.allocate(t(0.0), t(10.0), 6); // 2 free until 10
        p.allocate(t(12.0), t(15.0), 7); // 1 free on [12, 15)
        assert_eq!(p.free_until(t(0.0), 1), None, "one PE is free for good");
        assert_eq!(p.free_until(t(0.0), 2), Some(t(12.0)));
        assert_eq!(p.free_until(t(0.0), 3), Some(t(0.0)), "too few free at the start");
        assert_eq!(p.free_until(t(10.0), 3), Some(t(12.0)));
        assert_eq!(p.free_until(t(13.0), 2), Some(t(13.0)));
    }

    #[test]
    fn refit_counts_the_jobs_own_window_as_free() {
        let mut p = Profile::new(8);
        p.advance(t(0.0));
        p.allocate(t(0.0), t(10.0), 6);
        p.allocate(t(10.0), t(15.0), 4); // the job being refitted
        assert_eq!(p.earliest_refit(t(0.0), 4, 5.0, t(10.0)), t(10.0), "2 free before it: stays");
        p.release(t(0.0), t(10.0), 6);
        p.allocate(t(3.0), t(4.0), 5);
        assert_eq!(p.earliest_refit(t(0.0), 4, 5.0, t(10.0)), t(4.0), "[4,9) after the dip at 3");
        assert_eq!(p.earliest_refit(t(4.0), 4, 9.0, t(10.0)), t(4.0), "runs into its own window");
        assert_eq!(p.earliest_refit(t(12.0), 4, 5.0, t(10.0)), t(10.0), "never later");
    }

    #[test]
    fn shift_equals_release_then_allocate() {
        let mut base = Profile::new(8);
        base.allocate(t(0.0), t(10.0), 3);
        base.allocate(t(20.0), t(40.0), 5);
        base.allocate(t(12.0), t(30.0), 2); // the window that moves
        let moves = [(12.0, 30.0), (5.0, 23.0), (15.0, 33.0), (0.0, 8.0), (40.0, 58.0), (12.0, 25.0), (14.0, 30.0)];
        for (to, to_end) in moves {
            let mut shifted = base.clone();
            shifted.shift(t(12.0), t(30.0), t(to), t(to_end), 2);
            let mut expected = base.clone();
            expected.release(t(12.0), t(30.0), 2);
            expected.allocate(t(to), t(to_end), 2);
            assert_eq!(steps(&shifted), steps(&expected), "to [{to}, {to_end})");
        }
    }

    #[test]
    fn advance_keeps_value_in_force() {
        let mut p = Profile::new(4);
        p.advance(t(0.0));
        p.allocate(t(0.0), t(10.0), 1);
        p.allocate(t(2.0), t(6.0), 2);
        p.advance(t(3.0));
        assert_eq!(steps(&p), [(3.0, 1), (6.0, 3), (10.0, 4)]);
        p.advance(t(6.0));
        assert_eq!(steps(&p), [(6.0, 3), (10.0, 4)]);
    }

    #[test]
    fn free_slots_are_maximal_rectangles() {
        let mut p = Profile::new(4);
        p.advance(t(0.0));
        p.allocate(t(10.0), t(20.0), 2); // 4 | 2 | 4
        p.allocate(t(25.0), t(40.0), 4); // ... then 0 on [25, 40)
        assert_eq!(
            p.free_slots(t(0.0), t(30.0)),
            [
                Slot { start: t(0.0), end: t(10.0), pes: 4 },
                Slot { start: t(0.0), end: t(25.0), pes: 2 },
                Slot { start: t(20.0), end: t(25.0), pes: 4 },
            ]
        );
        assert_eq!(
            p.segments(t(5.0), t(22.0)),
            [
                Slot { start: t(5.0), end: t(10.0), pes: 4 },
                Slot { start: t(10.0), end: t(20.0), pes: 2 },
                Slot { start: t(20.0), end: t(22.0), pes: 4 },
            ]
        );
        assert_eq!(p.free_slots(t(26.0), t(50.0)), [Slot { start: t(40.0), end: t(50.0), pes: 4 }]);
        assert_eq!(p.free_slots(t(26.0), t(26.0)), []);
    }

    #[test]
    fn windows_below_the_clocks_resolution_are_empty() {
        let mut p = Profile::new(4);
        p.advance(t(0.0));
        p.allocate(t(1e12), t(2e12), 1);
        let (at, d) = (t(1e12), 1e-9);
        assert_eq!(at + d, at, "the job's end is its start");
        assert_eq!((p.min_free(at, at + d), p.max_free(at, at + d)), (3, 3));
        assert_eq!(p.segments(at, at + d), [Slot { start: at, end: at, pes: 3 }]);
        let before = p.clone();
        p.allocate(at, at + d, 3);
        p.release(at, at + d, 3);
        assert_eq!(p, before, "an empty window holds no PE");
    }

    #[test]
    fn sum_of_partitions() {
        let mut a = Profile::new(2);
        let mut b = Profile::new(4);
        a.advance(t(0.0));
        b.advance(t(0.0));
        a.allocate(t(0.0), t(5.0), 2);
        b.allocate(t(5.0), t(9.0), 2);
        let total = Profile::sum(&[a, b]);
        assert_eq!(total.capacity(), 6);
        assert_eq!(steps(&total), [(0.0, 4), (9.0, 6)], "2+2 then 2+2 coalesce");
    }

    /// The profile as one sorted map, searched breakpoint by breakpoint: the reference the blocked profile must match.
    #[derive(Clone)]
    struct Reference(std::collections::BTreeMap<SimTime, u32>);

    impl Reference {
        fn free_at(&self, t: SimTime) -> u32 {
            *self.0.range(..=t).next_back().expect("after the origin").1
        }

        fn update(&mut self, start: SimTime, end: SimTime, delta: i64) {
            if start == end {
                return;
            }
            for at in [start, end] {
                let free = self.free_at(at);
                self.0.entry(at).or_insert(free);
            }
            for (_, free) in self.0.range_mut(start..end) {
                *free = u32::try_from(i64::from(*free) + delta).expect("within capacity");
            }
            let mut last = None;
            self.0.retain(|_, &mut free| last.replace(free) != Some(free));
        }

        fn first_fit(&self, after: SimTime, pes: u32, duration: f64, until: Option<SimTime>) -> Option<SimTime> {
            let mut candidate = (self.free_at(after) >= pes).then_some(after);
            for (&t, &free) in self.0.range((std::ops::Bound::Excluded(after), std::ops::Bound::Unbounded)) {
                if until.is_some_and(|until| t >= until) {
                    return candidate;
                }
                if let Some(start) = candidate
                    && start + duration <= t
                {
                    return Some(start);
                }
                if free < pes {
                    candidate = None;
                } else if candidate.is_none() {
                    candidate = Some(t);
                }
            }
            candidate
        }

        fn free_until(&self, start: SimTime, pes: u32) -> Option<SimTime> {
            if self.free_at(start) < pes {
                return Some(start);
            }
            let after = (std::ops::Bound::Excluded(start), std::ops::Bound::Unbounded);
            self.0.range(after).find(|&(_, &free)| free < pes).map(|(&t, _)| t)
        }

        fn extremes(&self, start: SimTime, end: SimTime) -> (u32, u32) {
            let inside = self.0.range(start..end).map(|(_, &f)| f).chain([self.free_at(start)]);
            inside.fold((u32::MAX, 0), |(min, max), f| (min.min(f), max.max(f)))
        }
    }

    #[test]
    fn blocked_profile_matches_a_plain_sorted_map() {
        use rand::RngExt;
        let mut rng = gridmarket_kernel::rng::stream(21, "profile", 0);
        let capacity = 12;
        let (mut p, mut r) =
            (Profile::new(capacity), Reference(std::collections::BTreeMap::from([(SimTime::ZERO, capacity)])));
        let mut held: Vec<(SimTime, SimTime, u32)> = Vec::new();
        let mut now = SimTime::ZERO;
        let mut most = 0;
        for step in 0..8_000 {
            let at = now + rng.random_range(0..4000) as f64;
            let (pes, duration) = (rng.random_range(1..=capacity), rng.random_range(1..300) as f64);
            match rng.random_range(0..10) {
                0..=4 => {
                    let start = p.earliest_fit(at, pes, duration);
                    assert_eq!(Some(start), r.first_fit(at, pes, duration, None), "step {step}: earliest fit");
                    p.allocate(start, start + duration, pes);
                    r.update(start, start + duration, -i64::from(pes));
                    held.push((start, start + duration, pes));
                }
                5..=6 if !held.is_empty() => {
                    let (start, end, pes) = held.swap_remove(rng.random_range(0..held.len()));
                    p.release(start, end, pes);
                    r.update(start, end, i64::from(pes));
                }
                7 if !held.is_empty() => {
                    let k = rng.random_range(0..held.len());
                    let (start, end, pes) = held[k];
                    let to = p.earliest_refit(now, pes, end - start, start);
                    r.update(start, end, i64::from(pes));
                    let expected = if now >= start {
                        start
                    } else {
                        r.first_fit(now, pes, end - start, Some(start)).unwrap_or(start)
                    };
                    r.update(to, to + (end - start), -i64::from(pes));
                    assert_eq!(to, expected, "step {step}: refit");
                    p.shift(start, end, to, to + (end - start), pes);
                    held[k] = (to, to + (end - start), pes);
                }
                8 => {
                    let end = at + duration;
                    assert_eq!(
                        (p.min_free(at, end), p.max_free(at, end)),
                        r.extremes(at, end),
                        "step {step}: extremes"
                    );
                    assert_eq!(p.free_until(at, pes), r.free_until(at, pes), "step {step}: free until");
                }
                _ => {
                    now = now + rng.random_range(0..50) as f64;
                    held.retain(|&(_, end, _)| end > now);
                    held.iter_mut().for_each(|h| h.0 = h.0.max(now));
                    p.advance(now);
                    let free = r.free_at(now);
                    r.0 = r.0.split_off(&now);
                    r.0.entry(now).or_insert(free);
                }
            }
            most = most.max(r.0.len());
            if step % 16 != 0 {
                continue;
            }
            assert_eq!(steps(&p), r.0.iter().map(|(t, &n)| (t.secs(), n)).collect::<Vec<_>>(), "step {step}: steps");
        }
        assert!(most > 4 * BLOCK, "the test spans several blocks ({most} breakpoints at most)");
    }
}
