//! The cluster's state: the availability profile of each partition, and placing windows in them.

use std::borrow::Cow;

use super::Rejected;
use crate::provider::profile::Profile;
use crate::sim::SimTime;

/// A window held in the profiles, with the PEs taken from each partition.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Hold {
    pub(super) start: SimTime,
    pub(super) end: SimTime,
    pub(super) take: Vec<u32>,
}

/// The partitions' profiles (a single one unless multi-partition).
#[derive(Clone)]
pub(super) struct Cluster {
    pub(super) parts: Vec<Profile>,
    pub(super) borrowing: bool,
}

impl Cluster {
    pub(super) fn capacity(&self) -> u32 {
        self.parts.iter().map(Profile::capacity).sum()
    }

    pub(super) fn free_at(&self, t: SimTime) -> u32 {
        self.parts.iter().map(|p| p.free_at(t)).sum()
    }

    pub(super) fn min_free(&self, start: SimTime, end: SimTime) -> u32 {
        self.parts.iter().map(|p| p.min_free(start, end)).sum()
    }

    pub(super) fn part(&self, partition: usize) -> Result<&Profile, Rejected> {
        self.parts.get(partition).ok_or(Rejected::NoSuchPartition(partition))
    }

    /// The profile of one partition, or of the whole cluster.
    pub(super) fn profile(&self, partition: Option<usize>) -> Result<Cow<'_, Profile>, Rejected> {
        match partition {
            None if self.parts.len() == 1 => Ok(Cow::Borrowed(&self.parts[0])),
            None => Ok(Cow::Owned(Profile::sum(&self.parts))),
            Some(p) => self.part(p).map(Cow::Borrowed),
        }
    }

    /// PEs to take from each partition to hold `pes` over `[start, end)`: all from `own` when
    /// it can, otherwise (if borrowing, or for `own == None`) own first, then others in index
    /// order.
    pub(super) fn fit(&self, own: Option<usize>, pes: u32, start: SimTime, end: SimTime) -> Option<Vec<u32>> {
        let mut take = vec![0; self.parts.len()];
        let mut need = pes;
        if let Some(p) = own {
            let free = self.parts[p].min_free(start, end);
            take[p] = free.min(need);
            need -= take[p];
            if need > 0 && !self.borrowing {
                return None;
            }
        }
        for (p, profile) in self.parts.iter().enumerate() {
            if need == 0 {
                break;
            }
            if Some(p) != own {
                take[p] = profile.min_free(start, end).min(need);
                need -= take[p];
            }
        }
        (need == 0).then_some(take)
    }

    /// Earliest placement of a job of partition `own` at or after `after`. With several
    /// partitions it compares the partition alone with the whole cluster and prefers the
    /// partition on ties (GridSim's `AggressiveMultiPartitions`).
    pub(super) fn place(&self, own: usize, pes: u32, duration: f64, after: SimTime) -> Hold {
        let start = if self.parts.len() == 1 {
            self.parts[0].earliest_fit(after, pes, duration)
        } else {
            let alone = (pes <= self.parts[own].capacity()).then(|| self.parts[own].earliest_fit(after, pes, duration));
            let anywhere = self.borrowing.then(|| self.earliest_anywhere(pes, duration, after));
            match (alone, anywhere) {
                (Some(a), Some(b)) => a.min(b),
                (Some(t), None) | (None, Some(t)) => t,
                (None, None) => unreachable!("validated at submission"),
            }
        };
        let end = start + duration;
        let take = self.fit(Some(own), pes, start, end).expect("the placement was searched for");
        Hold { start, end, take }
    }

    /// Earliest start of `pes` PEs across all partitions together; candidates are `after` and
    /// every partition's breakpoints (few under EASY, the only multi-partition policy).
    fn earliest_anywhere(&self, pes: u32, duration: f64, after: SimTime) -> SimTime {
        let mut times: Vec<SimTime> =
            std::iter::once(after).chain(self.parts.iter().flat_map(|p| p.breakpoints_after(after))).collect();
        times.sort();
        times.dedup();
        times
            .into_iter()
            .find(|&t| self.min_free(t, t + duration) >= pes)
            .expect("every partition is free after its last breakpoint")
    }

    pub(super) fn allocate(&mut self, hold: &Hold) {
        for (profile, &pes) in self.parts.iter_mut().zip(&hold.take) {
            if pes > 0 {
                profile.allocate(hold.start, hold.end, pes);
            }
        }
    }

    pub(super) fn release(&mut self, start: SimTime, end: SimTime, take: &[u32]) {
        for (profile, &pes) in self.parts.iter_mut().zip(take) {
            if pes > 0 {
                profile.release(start, end, pes);
            }
        }
    }

    pub(super) fn max_free(&self, start: SimTime, end: SimTime) -> u32 {
        self.parts.iter().map(|p| p.max_free(start, end)).sum()
    }
}
