//! Availability profile of a space-shared cluster: the number of free processing elements
//! (PEs) as a step function of simulated time.
//!
//! This is the data structure behind conservative backfilling (Mu'alem & Feitelson 2001,
//! "Utilization, predictability, workloads, and user runtime estimates in scheduling the IBM
//! SP2 with backfilling", §2) and behind GridSim's profile-based EASY and multi-partition
//! policies (de Assunção & Buyya), which Garg's meta-broker thesis and Salehi's contention
//! thesis use as local schedulers. Breakpoints live in a `BTreeMap`, so a search costs
//! O(breakpoints in the searched window) and an update O(log n + breakpoints in the window).
//! Free capacity is also advertised as slots `(t_start, t_end, n)` (Garg Ch6–7).
//!
//! Instants are [`SimTime`]s, which are totally ordered and so serve as the map's keys; durations are `f64` seconds.

use std::collections::BTreeMap;
use std::ops::Bound::{self, Excluded, Unbounded};

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
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    capacity: u32,
    steps: BTreeMap<SimTime, u32>,
}

impl Profile {
    /// An empty profile: all `capacity` PEs free from the start of the run.
    pub fn new(capacity: u32) -> Self {
        Self { capacity, steps: BTreeMap::from([(SimTime::ZERO, capacity)]) }
    }

    /// Number of PEs the profile manages.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Free PEs at instant `t`.
    pub fn free_at(&self, t: SimTime) -> u32 {
        let (_, &free) = self.steps.range(..=t).next_back().expect("time precedes the profile's origin");
        free
    }

    /// Minimum number of free PEs over `[start, end)`: the PEs a job could hold for the whole
    /// window.
    pub fn min_free(&self, start: SimTime, end: SimTime) -> u32 {
        self.inside(start, end).fold(self.free_at(start), |min, (_, &free)| min.min(free))
    }

    /// The breakpoints strictly inside `(start, end)`: none for an empty window, which a job shorter than the clock's
    /// resolution at a late time has (`t + d == t`).
    fn inside(&self, start: SimTime, end: SimTime) -> impl Iterator<Item = (&SimTime, &u32)> {
        (start < end).then(|| self.steps.range((Excluded(start), Excluded(end)))).into_iter().flatten()
    }

    /// Earliest `t >= after` such that `pes` PEs are free throughout `[t, t + duration)`.
    ///
    /// Candidates are `after` and the breakpoints; the scan stops at the end of the first window
    /// that fits, so it visits only the breakpoints up to the answer.
    pub fn earliest_fit(&self, after: SimTime, pes: u32, duration: f64) -> SimTime {
        assert!(pes <= self.capacity, "{pes} PEs never fit in {}", self.capacity);
        self.first_fit(after, pes, duration, (Excluded(after), Unbounded)).expect("the last step has every PE free")
    }

    /// Earliest start, at or after `after`, of a job that already holds `pes` PEs over
    /// `[held_start, held_start + duration)`, as if it gave them back first: never later than
    /// `held_start`. Inside its own window the job's PEs are its own, so only the breakpoints
    /// before `held_start` matter. Read-only: a job that cannot move costs no update.
    pub fn earliest_refit(&self, after: SimTime, pes: u32, duration: f64, held_start: SimTime) -> SimTime {
        if after >= held_start {
            return held_start;
        }
        let before = (Excluded(after), Excluded(held_start));
        self.first_fit(after, pes, duration, before).unwrap_or(held_start)
    }

    /// The first start from `after` with `pes` free for `duration`, scanning the breakpoints in `range`; when the
    /// range ends first, the start of the last free run (open to the right), if any.
    fn first_fit(
        &self,
        after: SimTime,
        pes: u32,
        duration: f64,
        range: (Bound<SimTime>, Bound<SimTime>),
    ) -> Option<SimTime> {
        let mut candidate = (self.free_at(after) >= pes).then_some(after);
        for (&t, &free) in self.steps.range(range) {
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
        self.steps.range((Excluded(start), Unbounded)).find(|&(_, &free)| free < pes).map(|(&t, _)| t)
    }

    /// Largest number of free PEs anywhere in `[start, end)`.
    pub fn max_free(&self, start: SimTime, end: SimTime) -> u32 {
        self.inside(start, end).fold(self.free_at(start), |max, (_, &free)| max.max(free))
    }

    /// Forgets the past: drops breakpoints before `now` (keeping the value in force at `now`).
    pub fn advance(&mut self, now: SimTime) {
        let mut in_force = None;
        while let Some(entry) = self.steps.first_entry()
            && *entry.key() < now
        {
            in_force = Some(entry.remove());
        }
        if let Some(free) = in_force {
            self.steps.entry(now).or_insert(free);
        }
    }

    /// Breakpoints strictly after `t`, in time order.
    pub fn breakpoints_after(&self, t: SimTime) -> impl Iterator<Item = SimTime> + '_ {
        self.steps.range((Excluded(t), Unbounded)).map(|(&t, _)| t)
    }

    /// The profile over `[from, until)` as maximal constant pieces, in time order.
    pub fn segments(&self, from: SimTime, until: SimTime) -> Vec<Slot> {
        let mut pieces = vec![Slot { start: from, end: until, pes: self.free_at(from) }];
        for (&t, &free) in self.inside(from, until) {
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
        let mut times: Vec<SimTime> = profiles.iter().flat_map(|p| p.steps.keys().copied()).collect();
        times.sort();
        times.dedup();
        let mut total = Profile::new(profiles.iter().map(Profile::capacity).sum());
        total.steps.clear();
        let mut last = None;
        for t in times {
            let free = profiles
                .iter()
                .filter(|p| p.steps.first_key_value().is_some_and(|(&k, _)| k <= t))
                .map(|p| p.free_at(t))
                .sum();
            if last != Some(free) {
                total.steps.insert(t, free);
                last = Some(free);
            }
        }
        total
    }

    /// Applies `change` to every step in `[start, end)`; an empty window (see [`Profile::inside`]) holds nothing.
    fn update(&mut self, start: SimTime, end: SimTime, change: impl Fn(u32) -> u32) {
        if start == end {
            return;
        }
        assert!(start < end, "reversed window [{start}, {end})");
        self.split(start);
        self.split(end);
        for (_, free) in self.steps.range_mut(start..end) {
            *free = change(*free);
        }
        // A uniform change keeps the inside canonical; only the two edges may now repeat.
        self.merge(start);
        self.merge(end);
    }

    fn split(&mut self, t: SimTime) {
        let (&at, &free) = self.steps.range(..=t).next_back().expect("time precedes the profile's origin");
        if at != t {
            self.steps.insert(t, free);
        }
    }

    fn merge(&mut self, t: SimTime) {
        let mut around = self.steps.range(..=t).rev();
        if let (Some((&at, free)), Some((_, before))) = (around.next(), around.next())
            && at == t
            && free == before
        {
            self.steps.remove(&t);
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
        p.steps.iter().map(|(t, &n)| (t.secs(), n)).collect()
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
}
