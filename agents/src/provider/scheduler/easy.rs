//! The queue pass of FCFS and EASY backfilling, per partition under multi-partition EASY.

use super::cluster::Hold;
use super::{LocalScheduler, Started, Waiting};
use crate::sim::SimTime;

impl LocalScheduler {
    /// FCFS and (multi-partition) EASY: start waiting jobs in queue order while they fit now;
    /// FCFS stops at the first that does not, EASY gives the first waiting job of each
    /// partition a reservation at its earliest start (the shadow time, with its extra PEs
    /// implied by the profile) and starts any later job that fits now without touching a
    /// reservation. Shadow times are recomputed at every event, since early completions and
    /// cancellations can advance them. Queue order is arrival within priority classes, or the
    /// configured [`QueueOrder`](super::QueueOrder)'s, ranked anew at every pass.
    pub(super) fn queue_pass(&mut self, now: SimTime, fcfs: bool) -> Vec<Started> {
        // Between passes only the pivots hold windows, and each is in `due`: release them in queue order, without
        // walking the whole queue.
        let mut pivots: Vec<u64> = self.due.iter().map(|&(_, seq)| seq).collect();
        pivots.sort_unstable();
        for seq in pivots {
            let waiting = self.queue.get_mut(&seq).expect("a due job is queued");
            let hold = waiting.hold.take().expect("a due job holds its window");
            self.due.remove(&(hold.start, seq));
            self.cluster.release(hold.start, hold.end, &hold.take);
        }
        let ranked = self.ranked(now);
        let (cluster, due) = (&mut self.cluster, &mut self.due);
        let mut has_pivot = vec![false; cluster.parts.len()];
        let mut pivots = 0;
        let mut free_now = cluster.free_at(now);
        let mut starting = Vec::new();
        // One waiting job; false ends the pass.
        let mut visit = |seq: u64, waiting: &mut Waiting| {
            let (pes, estimate) = (waiting.job.pes, waiting.job.estimate);
            let fit =
                (pes <= free_now).then(|| cluster.fit(Some(waiting.partition), pes, now, now + estimate)).flatten();
            if let Some(take) = fit {
                let hold = Hold { start: now, end: now + estimate, take };
                cluster.allocate(&hold);
                waiting.hold = Some(hold);
                starting.push(seq);
                free_now = cluster.free_at(now);
                return true;
            }
            if fcfs {
                return false;
            }
            if !has_pivot[waiting.partition] {
                let hold = cluster.place(waiting.partition, pes, estimate, now);
                cluster.allocate(&hold);
                due.insert((hold.start, seq));
                waiting.hold = Some(hold);
                has_pivot[waiting.partition] = true;
                pivots += 1;
            }
            !(free_now == 0 && pivots == has_pivot.len())
        };
        match ranked {
            // Arrival order: the queue's own, walked without ranking it.
            None => {
                for (&seq, waiting) in &mut self.queue {
                    if !visit(seq, waiting) {
                        break;
                    }
                }
            }
            Some(seqs) => {
                for seq in seqs {
                    let waiting = self.queue.get_mut(&seq).expect("ranked from the queue");
                    if !visit(seq, waiting) {
                        break;
                    }
                }
            }
        }
        starting.into_iter().map(|seq| self.commit(seq, now)).collect()
    }
}
