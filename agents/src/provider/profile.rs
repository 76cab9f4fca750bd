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

use std::collections::BTreeMap;
use std::ops::Bound::{self, Excluded, Unbounded};

use serde::{Deserialize, Serialize};

/// A simulated instant usable as an ordered map key (total order on `f64`).
#[derive(Clone, Copy, Debug)]
pub(super) struct TimeKey(pub(super) f64);

impl TimeKey {
    /// `-0.0 + 0.0 == +0.0`: both zeros must be the same key.
    pub(super) fn new(t: f64) -> Self {
        Self(t + 0.0)
    }
}

impl PartialEq for TimeKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for TimeKey {}

impl PartialOrd for TimeKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for TimeKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// `pes` PEs free throughout `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Slot {
    /// First instant of the slot.
    pub start: f64,
    /// End of the slot (exclusive).
    pub end: f64,
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
    steps: BTreeMap<TimeKey, u32>,
}

impl Profile {
    /// An empty profile: all `capacity` PEs free from the beginning of time.
    pub fn new(capacity: u32) -> Self {
        Self { capacity, steps: BTreeMap::from([(TimeKey(f64::NEG_INFINITY), capacity)]) }
    }

    /// Number of PEs the profile manages.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Free PEs at instant `t`.
    pub fn free_at(&self, t: f64) -> u32 {
        let (_, &free) = self.steps.range(..=TimeKey::new(t)).next_back().expect("time precedes the profile's origin");
        free
    }

    /// Minimum number of free PEs over `[start, end)`: the PEs a job could hold for the whole
    /// window.
    pub fn min_free(&self, start: f64, end: f64) -> u32 {
        self.inside(start, end).fold(self.free_at(start), |min, (_, &free)| min.min(free))
    }

    /// The breakpoints strictly inside `(start, end)`: none for an empty window, which a job shorter than the clock's
    /// resolution at a late time has (`t + d == t`).
    fn inside(&self, start: f64, end: f64) -> impl Iterator<Item = (&TimeKey, &u32)> {
        let (start, end) = (TimeKey::new(start), TimeKey::new(end));
        (start < end).then(|| self.steps.range((Excluded(start), Excluded(end)))).into_iter().flatten()
    }

    /// Earliest `t >= after` such that `pes` PEs are free throughout `[t, t + duration)`.
    ///
    /// Candidates are `after` and the breakpoints; the scan stops at the end of the first window
    /// that fits, so it visits only the breakpoints up to the answer.
    pub fn earliest_fit(&self, after: f64, pes: u32, duration: f64) -> f64 {
        assert!(pes <= self.capacity, "{pes} PEs never fit in {}", self.capacity);
        self.first_fit(after, pes, duration, (Excluded(TimeKey::new(after)), Unbounded))
            .expect("the last step has every PE free")
    }

    /// Earliest start, at or after `after`, of a job that already holds `pes` PEs over
    /// `[held_start, held_start + duration)`, as if it gave them back first: never later than
    /// `held_start`. Inside its own window the job's PEs are its own, so only the breakpoints
    /// before `held_start` matter. Read-only: a job that cannot move costs no update.
    pub fn earliest_refit(&self, after: f64, pes: u32, duration: f64, held_start: f64) -> f64 {
        if TimeKey::new(after) >= TimeKey::new(held_start) {
            return held_start;
        }
        let before = (Excluded(TimeKey::new(after)), Excluded(TimeKey::new(held_start)));
        self.first_fit(after, pes, duration, before).unwrap_or(held_start)
    }

    /// The first start from `after` with `pes` free for `duration`, scanning the breakpoints in `range`; when the
    /// range ends first, the start of the last free run (open to the right), if any.
    fn first_fit(&self, after: f64, pes: u32, duration: f64, range: (Bound<TimeKey>, Bound<TimeKey>)) -> Option<f64> {
        let mut candidate = (self.free_at(after) >= pes).then_some(after);
        for (&TimeKey(t), &free) in self.steps.range(range) {
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
    pub fn allocate(&mut self, start: f64, end: f64, pes: u32) {
        self.update(start, end, |free| free.checked_sub(pes).expect("PEs oversubscribed"));
    }

    /// Gives back `pes` PEs over `[start, end)`.
    pub fn release(&mut self, start: f64, end: f64, pes: u32) {
        let capacity = self.capacity;
        self.update(start, end, |free| {
            let free = free + pes;
            assert!(free <= capacity, "released PEs that were not allocated");
            free
        });
    }

    /// Largest number of free PEs anywhere in `[start, end)`.
    pub fn max_free(&self, start: f64, end: f64) -> u32 {
        self.inside(start, end).fold(self.free_at(start), |max, (_, &free)| max.max(free))
    }

    /// Forgets the past: drops breakpoints before `now` (keeping the value in force at `now`).
    pub fn advance(&mut self, now: f64) {
        let now = TimeKey::new(now);
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
    pub fn breakpoints_after(&self, t: f64) -> impl Iterator<Item = f64> + '_ {
        self.steps.range((Excluded(TimeKey::new(t)), Unbounded)).map(|(&TimeKey(t), _)| t)
    }

    /// The profile over `[from, until)` as maximal constant pieces, in time order.
    pub fn segments(&self, from: f64, until: f64) -> Vec<Slot> {
        let mut pieces = vec![Slot { start: from, end: until, pes: self.free_at(from) }];
        for (&TimeKey(t), &free) in self.inside(from, until) {
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
    pub fn free_slots(&self, from: f64, until: f64) -> Vec<Slot> {
        let mut slots = Vec::new();
        if until <= from {
            return slots;
        }
        // Open rectangles: (left edge, height), heights strictly increasing.
        let mut open: Vec<(f64, u32)> = Vec::new();
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
        slots.sort_by(|a, b| a.start.total_cmp(&b.start).then(a.end.total_cmp(&b.end)));
        slots
    }

    /// Pointwise sum of several profiles: the cluster-wide view of a partitioned cluster.
    pub fn sum(profiles: &[Profile]) -> Profile {
        let mut times: Vec<TimeKey> = profiles.iter().flat_map(|p| p.steps.keys().copied()).collect();
        times.sort();
        times.dedup();
        let mut total = Profile::new(profiles.iter().map(Profile::capacity).sum());
        total.steps.clear();
        let mut last = None;
        for t in times {
            let free = profiles
                .iter()
                .filter(|p| p.steps.first_key_value().is_some_and(|(&k, _)| k <= t))
                .map(|p| p.free_at(t.0))
                .sum();
            if last != Some(free) {
                total.steps.insert(t, free);
                last = Some(free);
            }
        }
        total
    }

    /// Applies `change` to every step in `[start, end)`; an empty window (see [`Profile::inside`]) holds nothing.
    fn update(&mut self, start: f64, end: f64, change: impl Fn(u32) -> u32) {
        if start == end {
            return;
        }
        assert!(start < end, "reversed window [{start}, {end})");
        let (start, end) = (TimeKey::new(start), TimeKey::new(end));
        self.split(start);
        self.split(end);
        for (_, free) in self.steps.range_mut(start..end) {
            *free = change(*free);
        }
        // A uniform change keeps the inside canonical; only the two edges may now repeat.
        self.merge(start);
        self.merge(end);
    }

    fn split(&mut self, t: TimeKey) {
        let (&at, &free) = self.steps.range(..=t).next_back().expect("time precedes the profile's origin");
        if at != t {
            self.steps.insert(t, free);
        }
    }

    fn merge(&mut self, t: TimeKey) {
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

    fn steps(p: &Profile) -> Vec<(f64, u32)> {
        p.steps.iter().map(|(&TimeKey(t), &n)| (t, n)).collect()
    }

    #[test]
    fn allocate_release_coalesce() {
        let mut p = Profile::new(8);
        p.advance(0.0);
        p.allocate(0.0, 10.0, 3);
        p.allocate(5.0, 20.0, 4);
        assert_eq!(steps(&p), [(0.0, 5), (5.0, 1), (10.0, 4), (20.0, 8)], "two overlapping jobs");
        assert_eq!(p.min_free(0.0, 10.0), 1);
        assert_eq!(p.min_free(10.0, 30.0), 4);
        assert_eq!(p.max_free(4.0, 12.0), 5);
        p.release(5.0, 20.0, 4);
        assert_eq!(steps(&p), [(0.0, 5), (10.0, 8)], "merged back");
        p.release(0.0, 10.0, 3);
        assert_eq!(steps(&p), [(0.0, 8)]);
    }

    #[test]
    fn earliest_fit_scans_breakpoints() {
        let mut p = Profile::new(8);
        p.advance(0.0);
        p.allocate(0.0, 10.0, 6); // 2 free until 10
        p.allocate(12.0, 15.0, 7); // 1 free on [12, 15)
        assert_eq!(p.earliest_fit(0.0, 2, 12.0), 0.0, "ends where the dip to 1 starts");
        assert_eq!(p.earliest_fit(0.0, 2, 12.5), 15.0);
        assert_eq!(p.earliest_fit(0.0, 3, 2.0), 10.0, "the hole [10,12) is exactly 2 long");
        assert_eq!(p.earliest_fit(0.0, 3, 2.5), 15.0, "too short a hole");
        assert_eq!(p.earliest_fit(11.0, 8, 1.0), 11.0);
        assert_eq!(p.earliest_fit(11.5, 8, 1.0), 15.0);
    }

    #[test]
    fn refit_counts_the_jobs_own_window_as_free() {
        let mut p = Profile::new(8);
        p.advance(0.0);
        p.allocate(0.0, 10.0, 6);
        p.allocate(10.0, 15.0, 4); // the job being refitted
        assert_eq!(p.earliest_refit(0.0, 4, 5.0, 10.0), 10.0, "2 free before it: stays");
        p.release(0.0, 10.0, 6);
        p.allocate(3.0, 4.0, 5);
        assert_eq!(p.earliest_refit(0.0, 4, 5.0, 10.0), 4.0, "[4,9) after the dip at 3");
        assert_eq!(p.earliest_refit(4.0, 4, 9.0, 10.0), 4.0, "runs into its own window");
        assert_eq!(p.earliest_refit(12.0, 4, 5.0, 10.0), 10.0, "never later");
    }

    #[test]
    fn advance_keeps_value_in_force() {
        let mut p = Profile::new(4);
        p.advance(0.0);
        p.allocate(0.0, 10.0, 1);
        p.allocate(2.0, 6.0, 2);
        p.advance(3.0);
        assert_eq!(steps(&p), [(3.0, 1), (6.0, 3), (10.0, 4)]);
        p.advance(6.0);
        assert_eq!(steps(&p), [(6.0, 3), (10.0, 4)]);
    }

    #[test]
    fn free_slots_are_maximal_rectangles() {
        let mut p = Profile::new(4);
        p.advance(0.0);
        p.allocate(10.0, 20.0, 2); // 4 | 2 | 4
        p.allocate(25.0, 40.0, 4); // ... then 0 on [25, 40)
        assert_eq!(
            p.free_slots(0.0, 30.0),
            [
                Slot { start: 0.0, end: 10.0, pes: 4 },
                Slot { start: 0.0, end: 25.0, pes: 2 },
                Slot { start: 20.0, end: 25.0, pes: 4 },
            ]
        );
        assert_eq!(
            p.segments(5.0, 22.0),
            [
                Slot { start: 5.0, end: 10.0, pes: 4 },
                Slot { start: 10.0, end: 20.0, pes: 2 },
                Slot { start: 20.0, end: 22.0, pes: 4 },
            ]
        );
        assert_eq!(p.free_slots(26.0, 50.0), [Slot { start: 40.0, end: 50.0, pes: 4 }]);
        assert_eq!(p.free_slots(26.0, 26.0), []);
    }

    #[test]
    fn windows_below_the_clocks_resolution_are_empty() {
        let mut p = Profile::new(4);
        p.advance(0.0);
        p.allocate(1e12, 2e12, 1);
        let (t, d) = (1e12, 1e-9);
        assert_eq!(t + d, t, "the job's end is its start");
        assert_eq!((p.min_free(t, t + d), p.max_free(t, t + d)), (3, 3));
        assert_eq!(p.segments(t, t + d), [Slot { start: t, end: t, pes: 3 }]);
        let before = p.clone();
        p.allocate(t, t + d, 3);
        p.release(t, t + d, 3);
        assert_eq!(p, before, "an empty window holds no PE");
    }

    #[test]
    fn sum_of_partitions() {
        let mut a = Profile::new(2);
        let mut b = Profile::new(4);
        a.advance(0.0);
        b.advance(0.0);
        a.allocate(0.0, 5.0, 2);
        b.allocate(5.0, 9.0, 2);
        let total = Profile::sum(&[a, b]);
        assert_eq!(total.capacity(), 6);
        assert_eq!(steps(&total), [(0.0, 4), (9.0, 6)], "2+2 then 2+2 coalesce");
    }
}
