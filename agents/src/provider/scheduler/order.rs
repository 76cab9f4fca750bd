//! Queue orders: the order in which the FCFS and EASY passes consider waiting jobs, as a rank per job.
//!
//! Arrival order is the default and needs no rank: the queue is kept in it. Another order is a [`QueueOrder`],
//! registered by name (`Registry::with_queue_order`) and chosen in a scenario with `queue-order = "<name>"`; the
//! passes then sort the waiting jobs by (priority class, rank, arrival) at every pass. Conservative backfilling gives
//! each job its reservation when it arrives, so it keeps arrival order and refuses any other.
//!
//! Built in: [`ShortestJobFirst`], the order of "SJF-backfill" in Chiang, Arpaci-Dusseau & Vernon (2002), *The impact
//! of more accurate requested runtimes on production job scheduling performance*.

use super::QueuedJob;
use crate::registry::Registry;
use crate::sim::SimTime;

/// The name of the default order in scenarios: by arrival, which needs no [`QueueOrder`].
pub const ARRIVAL: &str = "arrival";

/// An order of the waiting queue of FCFS and EASY backfilling: a rank per waiting job, lower first.
///
/// A queue order is a pure function of the job and the time, so it can be unit-tested on its own and every pass
/// sees the same order for the same queue. The rank may depend on `now` (an aging order that favours long waits);
/// it is asked again at every pass. Jobs of a higher priority class still go before every job of a lower one, and
/// equal ranks keep arrival order; a NaN rank sorts after every number.
pub trait QueueOrder: Send + Sync {
    /// Its name in scenario files (`queue-order = "..."`), in kebab-case.
    fn name(&self) -> &'static str;
    /// One line for `gridmarket list`.
    fn about(&self) -> &'static str;
    /// The rank of `job` at `now`: the lower, the earlier the pass considers it.
    fn rank(&self, job: &QueuedJob, now: SimTime) -> f64;
}

crate::registry::by_name!(dyn QueueOrder);

impl Registry {
    /// Adds `order`, which scenarios then name in `queue-order`.
    ///
    /// # Panics
    /// If its name is [`ARRIVAL`] or another order's.
    pub fn with_queue_order(self, order: &'static dyn QueueOrder) -> Registry {
        let name = order.name();
        let taken = name == ARRIVAL || self.policy::<dyn QueueOrder>(name).is_some();
        assert!(!taken, "the queue order name `{name}` is taken");
        self.with_policy(name, order.about(), order)
    }
}

/// SJF (shortest job first): the shortest runtime estimate first, whatever its width.
#[derive(Clone, Copy, Debug)]
pub struct ShortestJobFirst;

impl QueueOrder for ShortestJobFirst {
    fn name(&self) -> &'static str {
        "shortest-job-first"
    }

    fn about(&self) -> &'static str {
        "the shortest runtime estimate first (Chiang, Arpaci-Dusseau & Vernon 2002)"
    }

    fn rank(&self, job: &QueuedJob, _now: SimTime) -> f64 {
        job.estimate
    }
}
