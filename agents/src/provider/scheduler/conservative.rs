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

/// Whether a clean job may move: a release it has not seen that could let it.
///
/// A job clean at epoch `clean` had no window before its start `held`; inside its own window its PEs are its own. A
/// window that fits now must therefore hold an instant `x` in `[now, held)` where free PEs grew since, hence in the
/// region of a release logged after `clean`, with at least `pes` free at `x`: at most that release's `max_free` (take
/// the last release covering `x`; later changes there only took PEs).
fn may_move(releases: &[Release], clean: u64, (now, held): (SimTime, SimTime), pes: u32) -> bool {
    // Releases are logged in epoch order: the unseen ones are a suffix.
    let unseen = releases.partition_point(|r| r.epoch <= clean);
    releases[unseen..].iter().any(|r| r.end > now && r.start < held && r.max_free >= pes)
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
    /// Jobs that provably cannot move are skipped (see [`may_move`]). A move logs only the part of its old window that
    /// the new one leaves: in a saturated queue most moves slide a job by less than its length, and the jobs behind
    /// it would otherwise see the whole old window as capacity given back.
    pub(super) fn compress(&mut self, now: SimTime) -> Vec<Started> {
        let seen = self.epoch;
        // Conservative backfilling runs on a single partition.
        let profile = &mut self.cluster.parts[0];
        let mut starting = Vec::new();
        for (&seq, waiting) in &mut self.queue {
            // A job that arrived in this instant is placed after the compression (see `pass`).
            let Some(hold) = waiting.hold.as_mut() else { continue };
            let (pes, estimate) = (waiting.job.pes, waiting.job.estimate);
            let start = if hold.start < now {
                // A missed wake-up: the window is partly past, so re-plan from now.
                profile.release(hold.start, hold.end, pes);
                let start = profile.earliest_fit(now, pes, estimate);
                profile.allocate(hold.start, hold.end, pes);
                start
            } else if hold.start > now && may_move(&self.releases, waiting.clean, (now, hold.start), pes) {
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
                // Free PEs grew only where the old window does not overlap the new one.
                let (from, to) = if start < hold.end && hold.start < end {
                    if start < hold.start { (end.max(hold.start), hold.end) } else { (hold.start, start.min(hold.end)) }
                } else {
                    (hold.start, hold.end)
                };
                if from < to {
                    self.releases.push(Release {
                        epoch: self.epoch,
                        start: from,
                        end: to,
                        max_free: profile.max_free(from, to),
                    });
                }
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
