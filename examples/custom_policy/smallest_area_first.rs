//! A queue order of our own: the waiting job of smallest area first.

use agents::provider::scheduler::{QueueOrder, QueuedJob};
use agents::sim::SimTime;

/// Smallest area first: the waiting job that asks for the fewest PE-seconds (PEs × runtime estimate) goes first, so
/// small jobs overtake wide or long ones.
pub struct SmallestAreaFirst;

impl QueueOrder for SmallestAreaFirst {
    fn name(&self) -> &'static str {
        "smallest-area-first"
    }

    fn about(&self) -> &'static str {
        "the fewest PE-seconds (PEs × runtime estimate) first"
    }

    fn rank(&self, job: &QueuedJob, _now: SimTime) -> f64 {
        f64::from(job.pes) * job.estimate
    }
}

#[cfg(test)]
mod tests {
    use agents::provider::scheduler::{LocalScheduler, SchedulerPolicy, Started};

    use super::*;

    fn job(id: u64, pes: u32, estimate: f64) -> QueuedJob {
        QueuedJob { id, submit: SimTime::ZERO, pes, estimate, partition: None, priority: 0 }
    }

    #[test]
    fn a_small_job_overtakes_a_wide_one() {
        let t = |secs| SimTime::new(secs).unwrap();
        // 4 PEs, busy until 10; a wide job (4 PEs × 100 s) waits, then a small one (1 PE × 10 s) arrives.
        let mut fcfs = LocalScheduler::new(SchedulerPolicy::Fcfs, 4);
        fcfs.order_by(&SmallestAreaFirst).unwrap();
        fcfs.submit(t(0.0), job(1, 4, 10.0)).unwrap();
        fcfs.submit(t(1.0), job(2, 4, 100.0)).unwrap();
        fcfs.submit(t(2.0), job(3, 1, 10.0)).unwrap();
        // By area (400 against 10) the small one goes first when the PEs free up; the wide one follows.
        assert_eq!(fcfs.complete(t(10.0), 1), Ok(vec![Started { id: 3, start: t(10.0) }]));
        assert_eq!(fcfs.complete(t(20.0), 3), Ok(vec![Started { id: 2, start: t(20.0) }]));
        assert_eq!(SmallestAreaFirst.rank(&job(4, 8, 2.5), t(0.0)), 20.0);
    }
}
