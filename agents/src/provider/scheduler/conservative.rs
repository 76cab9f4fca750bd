//! The queue pass of conservative backfilling: the compression of the schedule, pruned by a log of the capacity
//! given back.

use super::{LocalScheduler, SchedulerPolicy, Started};
use crate::sim::SimTime;

/// Capacity given back to a conservative schedule, logged to prune compression.
#[derive(Clone)]
pub(super) struct Release {
    epoch: u64,
    start: SimTime,
    pub(super) end: SimTime,
    /// Upper bound on the free PEs in `[start, end)` from the release on.
    max_free: u32,
}

impl LocalScheduler {
    /// Under conservative backfilling, logs capacity given back over `[start, end)` for [`compress`](Self::compress).
    pub(super) fn log_release(&mut self, start: SimTime, end: SimTime) {
        if self.policy == SchedulerPolicy::Conservative {
            self.epoch += 1;
            self.releases.push(Release { epoch: self.epoch, start, end, max_free: self.cluster.max_free(start, end) });
        }
    }

    /// Conservative backfilling after capacity was given back (early completion, removal,
    /// suspension, cancelled reservation): compress the schedule by re-placing every waiting
    /// job in queue order at its earliest start, which is never later than its current
    /// reservation (its old window is free again), and start those that can start now. One
    /// pass per event; a move made during a pass is seen by the jobs ahead of the mover at the
    /// next event.
    ///
    /// Jobs that provably cannot move are skipped. A job that held its earliest start at
    /// epoch `clean` can move earlier only if free PEs grew somewhere before its current start
    /// (inside its own window its PEs are its own): through a release it has not seen, which
    /// begins before that start and left at least `pes` PEs free at some point (every later
    /// change there was a logged release or an allocation).
    pub(super) fn compress(&mut self, now: SimTime) -> Vec<Started> {
        let seen = self.epoch;
        // Conservative backfilling runs on a single partition.
        let profile = &mut self.cluster.parts[0];
        let mut starting = Vec::new();
        for (&seq, waiting) in &mut self.queue {
            // A job that arrived in this instant is placed after the compression (see `pass`).
            let Some(hold) = waiting.hold.as_mut() else { continue };
            let (pes, estimate) = (waiting.job.pes, waiting.job.estimate);
            let unseen =
                |r: &Release| r.epoch > waiting.clean && r.end > now && r.start < hold.start && r.max_free >= pes;
            let start = if hold.start < now {
                // A missed wake-up: the window is partly past, so re-plan from now.
                profile.release(hold.start, hold.end, pes);
                let start = profile.earliest_fit(now, pes, estimate);
                profile.allocate(hold.start, hold.end, pes);
                start
            } else if hold.start > now && self.releases.iter().any(unseen) {
                profile.earliest_refit(now, pes, estimate, hold.start)
            } else {
                hold.start
            };
            if start != hold.start {
                // Conservative backfilling never delays a reservation: only preemption, cancellation and migration
                // move a job back, and they take it out of the queue and submit it anew.
                if start > hold.start && hold.start >= now {
                    let what = format!("job {}'s reservation delayed from {} to {start}", waiting.job.id, hold.start);
                    self.violations.push((now, what));
                }
                self.due.remove(&(hold.start, seq));
                self.due.insert((start, seq));
                let end = start + estimate;
                profile.shift(hold.start, hold.end, start, end, pes);
                self.epoch += 1;
                self.releases.push(Release {
                    epoch: self.epoch,
                    start: hold.start,
                    end: hold.end,
                    max_free: profile.max_free(hold.start, hold.end),
                });
                (hold.start, hold.end) = (start, end);
            }
            waiting.clean = self.epoch;
            if hold.start <= now {
                starting.push(seq);
            }
        }
        // Every waiting job has now seen the releases logged before this pass.
        self.releases.retain(|r| r.epoch > seen);
        starting.into_iter().map(|seq| self.commit(seq, now)).collect()
    }

    /// Conservative backfilling when no capacity was given back: start the jobs whose reservation begins now.
    pub(super) fn start_due(&mut self, now: SimTime) -> Vec<Started> {
        let mut started = Vec::new();
        while let Some(&(t, seq)) = self.due.first()
            && t <= now
        {
            started.push(self.commit(seq, now));
        }
        started
    }
}
