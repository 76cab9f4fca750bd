//! Local scheduling policies of a resource provider, as a pure, event-driven state machine.
//!
//! The provider actor feeds events with explicit simulated times (`submit`, `complete`,
//! `tick`, advance reservations, preemption hooks) and gets back the jobs that start now.
//! Policies: FCFS; EASY backfilling (Lifka 1995; Mu'alem & Feitelson 2001): only the queue
//! head holds a reservation; conservative backfilling (Mu'alem & Feitelson 2001): every queued
//! job holds a reservation in the availability profile and early completions compress the
//! schedule; multi-partition EASY backfilling (Lawson & Smirni 2002, as implemented in GridSim
//! by de Assunção & Buyya), used by Garg's thesis Ch7 with three queues in ratio 1:2:3. Advance
//! reservations `(t_start, t_end, n)` (Garg Ch5–8) are honoured by every policy, and the
//! preemption hooks (suspend, remove, reserve-by-preempting) follow Salehi's thesis: a
//! suspended lease is re-queued for "the next available slot". Runtimes used for planning are
//! the users' estimates; jobs are assumed killed at their estimate, as batch systems do.
//!
//! Time: every instant, in the API and inside (the profiles' breakpoints, the planned windows), is a [`SimTime`],
//! every duration (estimates, horizons) `f64` seconds. `SimTime` is totally ordered, so it keys the profiles and the
//! planned starts directly, and its arithmetic is the plain `f64` one (`t + secs`, `t1 - t0`, saturating only at the
//! bounds a run never reaches): one type throughout, rather than conversions at the boundary, and the same schedule
//! as with bare `f64`s. Profiles start at [`SimTime::ZERO`], the start of every run.
//!
//! FCFS and EASY consider waiting jobs in arrival order, or in the order of a [`QueueOrder`] (see [`order`]).
//!
//! This file holds the public types and [`LocalScheduler`]'s events and queries; `cluster` the
//! partitions' availability profiles and the placement of windows in them; `easy` the queue
//! pass of FCFS and (multi-partition) EASY; `conservative` the compression of conservative
//! backfilling; `order` the queue orders; `tests` the unit tests.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::profile::{Profile, Slot};
use crate::model::JobId;
use crate::sim::SimTime;
use cluster::{Cluster, Hold};
use conservative::Release;
pub use order::QueueOrder;

mod cluster;
mod conservative;
mod easy;
pub mod order;
#[cfg(test)]
mod tests;

/// Local scheduling policy; deserialises from "fcfs", "easy", "conservative" and
/// "multi-partition-easy".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SchedulerPolicy {
    /// First come, first served: the queue head blocks everything behind it.
    Fcfs,
    /// EASY (aggressive) backfilling: a reservation for the head only.
    Easy,
    /// Conservative backfilling: a reservation for every queued job.
    Conservative,
    /// EASY backfilling per partition, partitions lending idle PEs to each other.
    MultiPartitionEasy,
}

/// Garg's Ch7 split of each cluster into three queues: 1/6, 2/6 and 3/6 of the PEs.
pub const GARG_QUEUE_RATIOS: [u32; 3] = [1, 2, 3];

/// Layout of a multi-partition cluster.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Partitioning {
    /// Relative partition sizes, smallest job class first.
    pub ratios: Vec<u32>,
    /// Whether a job may use idle PEs of other partitions (GridSim's default: yes).
    pub borrowing: bool,
}

impl Default for Partitioning {
    fn default() -> Self {
        Self { ratios: GARG_QUEUE_RATIOS.to_vec(), borrowing: true }
    }
}

impl Partitioning {
    /// PEs per partition: `floor(pes * ratio / sum)` for each but the last, which takes the rest.
    pub fn sizes(&self, pes: u32) -> Vec<u32> {
        let total: u64 = self.ratios.iter().map(|&r| u64::from(r)).sum();
        assert!(total > 0, "partition ratios must not all be zero");
        let mut sizes: Vec<u32> = self.ratios[..self.ratios.len() - 1]
            .iter()
            .map(|&r| (u64::from(pes) * u64::from(r) / total) as u32)
            .collect();
        sizes.push(pes - sizes.iter().sum::<u32>());
        sizes
    }
}

/// A job as the scheduler sees it: the actual runtime is known only to the actor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueuedJob {
    /// Job identifier, unique among queued and running jobs.
    pub id: JobId,
    /// Submission time (kept for metrics; planning uses the time of the `submit` call).
    pub submit: SimTime,
    /// Number of PEs, all needed at once (rigid job).
    pub pes: u32,
    /// The user's runtime estimate, used for planning; the job is killed when it runs out.
    pub estimate: f64,
    /// Queue (partition) chosen by a meta-broker; `None` lets the scheduler pick one by size.
    #[serde(default)]
    pub partition: Option<usize>,
    /// Priority class, 0 the highest: a waiting job queues behind every waiting job of a higher class, so FCFS and
    /// EASY start classes in order (conservative backfilling still places a job when it arrives; the class only
    /// orders its compression).
    #[serde(default)]
    pub priority: u8,
}

/// A job that starts running now.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Started {
    /// The job.
    pub id: JobId,
    /// Its start time (the time of the event that started it).
    pub start: SimTime,
}

/// An advance reservation request: `pes` PEs throughout `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReservationRequest {
    /// Start of the window; not before the time of the request.
    pub start: SimTime,
    /// End of the window (exclusive).
    pub end: SimTime,
    /// Number of PEs.
    pub pes: u32,
    /// Partition to take the PEs from first; `None` takes them from any partition.
    #[serde(default)]
    pub partition: Option<usize>,
}

/// One partition's state, for a meta-broker's queue report (Garg 2010 ch7).
#[derive(Clone, Debug, PartialEq)]
pub struct PartitionState {
    /// PEs of the partition.
    pub pes: u32,
    /// PEs free now.
    pub free: u32,
    /// Busy PEs over PEs.
    pub load: f64,
    /// Work committed per PE \[s\].
    pub backlog: f64,
    /// Free slots over the horizon asked for.
    pub slots: Vec<Slot>,
}

/// Identifier of an accepted advance reservation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ReservationId(pub u64);

/// A running job and the window it holds (`end` = start + estimate).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunningJob {
    /// The job.
    pub id: JobId,
    /// PEs held.
    pub pes: u32,
    /// Start time.
    pub start: SimTime,
    /// Planned end: start plus the user's estimate.
    pub end: SimTime,
}

/// Outcome of [`LocalScheduler::reserve_preempting`].
#[derive(Clone, Debug, PartialEq)]
pub struct Preempted {
    /// The new reservation.
    pub reservation: ReservationId,
    /// The evicted jobs, ready to be re-submitted (running ones carry their remaining estimate).
    pub evicted: Vec<QueuedJob>,
    /// Jobs that start now in capacity the eviction freed but the reservation does not use.
    pub started: Vec<Started>,
}

/// Why the scheduler refused a call.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Rejected {
    /// The request needs more PEs than can ever serve it.
    #[error("request needs {pes} PEs but at most {max} can serve it")]
    TooWide {
        /// PEs requested.
        pes: u32,
        /// PEs that could serve it.
        max: u32,
    },
    /// No such partition.
    #[error("partition {0} does not exist")]
    NoSuchPartition(usize),
    /// Malformed request (no PEs, non-positive duration, window in the past...).
    #[error("invalid request: {0}")]
    Invalid(&'static str),
    /// The profile has fewer free PEs than requested somewhere in the window.
    #[error("not enough free PEs over the requested window")]
    Unavailable,
    /// A job with this id is already queued or running.
    #[error("job {0} is already queued or running")]
    DuplicateJob(JobId),
    /// No queued or running job with this id (as the call requires).
    #[error("job {0} is not known in the required state")]
    UnknownJob(JobId),
    /// No reservation with this id.
    #[error("unknown reservation {0:?}")]
    UnknownReservation(ReservationId),
}

/// A queue key holds the job's priority class above this bit and its arrival number below.
const CLASS_SHIFT: u32 = 56;

/// A job in the queue.
#[derive(Clone)]
struct Waiting {
    job: QueuedJob,
    partition: usize,
    /// Conservative: the job's reservation; EASY: set only for partition heads (pivots).
    hold: Option<Hold>,
    /// Release epoch at which the job was last known to hold its earliest possible start.
    clean: u64,
}

/// A running job, as submitted, and the window it holds.
#[derive(Clone)]
struct Running {
    job: QueuedJob,
    hold: Hold,
}

/// An advance reservation and the PEs it takes from each partition.
#[derive(Clone)]
struct Reservation {
    request: ReservationRequest,
    take: Vec<u32>,
}

/// The local scheduler of one cluster (see the module documentation).
///
/// Every method taking `now` must be called with non-decreasing times. The actor must call
/// [`complete`](Self::complete) no later than `start + estimate` and [`tick`](Self::tick) at
/// [`next_wakeup`](Self::next_wakeup).
///
/// With [`defer_passes`](Self::defer_passes), events only change the state and the queue pass waits for
/// [`pass`](Self::pass), which the actor calls once every event of an instant is in: several jobs that end (or arrive)
/// at one instant are then scheduled together, whatever order their events came in. Queries answer as the pass
/// would leave the schedule.
#[derive(Clone)]
pub struct LocalScheduler {
    policy: SchedulerPolicy,
    /// The order of the FCFS and EASY passes; `None` is arrival order, the queue's own.
    order: Option<&'static dyn QueueOrder>,
    now: SimTime,
    cluster: Cluster,
    /// Waiting jobs by arrival sequence number (queue order).
    queue: BTreeMap<u64, Waiting>,
    seq_of: BTreeMap<JobId, u64>,
    /// Planned starts of waiting jobs: (start, sequence number).
    due: BTreeSet<(SimTime, u64)>,
    running: BTreeMap<JobId, Running>,
    reservations: BTreeMap<ReservationId, Reservation>,
    /// Conservative only: releases not yet seen by every queued job.
    releases: Vec<Release>,
    epoch: u64,
    next_seq: u64,
    next_reservation: u64,
    /// Its guarantees found broken, with when: always checked, reported by the provider (a run with any fails).
    violations: Vec<(SimTime, String)>,
    /// Passes wait for [`pass`](Self::pass).
    deferred: bool,
    /// An event since the last pass.
    pending: bool,
    /// Conservative only: a job whose earliest start is at or after this gets no reservation (see
    /// [`plan_before`](Self::plan_before)).
    horizon: Option<SimTime>,
    /// The pending pass as the queries computed it; any change drops it.
    settled: SettledCache,
}

/// The schedule after the pending pass at an instant, with the jobs that pass started: the queries of an instant share
/// it, and the pass itself takes it instead of computing it again (a provider that asks for a planned start after each
/// of an instant's events would otherwise plan a long queue twice for each). A copy of a scheduler starts without it.
#[derive(Default)]
struct SettledCache(OnceLock<(SimTime, Box<LocalScheduler>, Vec<Started>)>);

impl Clone for SettledCache {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl LocalScheduler {
    /// A scheduler for a cluster of `pes` PEs; multi-partition EASY uses the default
    /// [`Partitioning`] (1:2:3 with borrowing).
    pub fn new(policy: SchedulerPolicy, pes: u32) -> Self {
        match policy {
            SchedulerPolicy::MultiPartitionEasy => Self::multi_partition(pes, &Partitioning::default()),
            _ => Self::with_parts(policy, vec![Profile::new(pes)], false),
        }
    }

    /// Guarantees of the schedule found broken, with when (none, unless the scheduler has a bug): a job ran past
    /// its estimate or started off its plan, or a conservative reservation was delayed by a later arrival.
    pub fn violations(&self) -> &[(SimTime, String)] {
        &self.violations
    }

    /// A multi-partition EASY scheduler with the given layout.
    pub fn multi_partition(pes: u32, partitioning: &Partitioning) -> Self {
        let parts = partitioning.sizes(pes).into_iter().map(Profile::new);
        Self::with_parts(SchedulerPolicy::MultiPartitionEasy, parts.collect(), partitioning.borrowing)
    }

    fn with_parts(policy: SchedulerPolicy, parts: Vec<Profile>, borrowing: bool) -> Self {
        Self {
            policy,
            order: None,
            now: SimTime::ZERO,
            cluster: Cluster { parts, borrowing },
            queue: BTreeMap::new(),
            seq_of: BTreeMap::new(),
            due: BTreeSet::new(),
            running: BTreeMap::new(),
            reservations: BTreeMap::new(),
            releases: Vec::new(),
            epoch: 0,
            next_seq: 0,
            next_reservation: 0,
            violations: Vec::new(),
            deferred: false,
            pending: false,
            horizon: None,
            settled: SettledCache::default(),
        }
    }

    /// Under conservative backfilling, a waiting job that cannot start before `horizon` gets no reservation: it
    /// waits unplanned and each pass tries again. A provider that holds its switched-off nodes to `horizon` plans only
    /// on the switched-on ones, and the requests they cannot take are not stacked past it (re-planning them all at
    /// every change would cost the square of the queue).
    pub fn plan_before(&mut self, horizon: SimTime) {
        self.settled.0.take();
        self.horizon = Some(horizon);
    }

    /// Whether a window starting at `start` is beyond the planning horizon.
    fn beyond_horizon(&self, start: SimTime) -> bool {
        self.horizon.is_some_and(|h| start >= h)
    }

    /// The policy.
    pub fn policy(&self) -> SchedulerPolicy {
        self.policy
    }

    /// Has the FCFS and EASY passes consider waiting jobs in `order` rather than by arrival (priority classes still
    /// first). Conservative backfilling refuses: it gives each job its reservation when the job arrives.
    pub fn order_by(&mut self, order: &'static dyn QueueOrder) -> Result<(), Rejected> {
        self.settled.0.take();
        if self.policy == SchedulerPolicy::Conservative {
            return Err(Rejected::Invalid("conservative backfilling plans the queue in arrival order"));
        }
        self.order = Some(order);
        Ok(())
    }

    /// The queue order, if not arrival.
    pub fn queue_order(&self) -> Option<&'static dyn QueueOrder> {
        self.order
    }

    /// Total number of PEs.
    pub fn pes(&self) -> u32 {
        self.cluster.capacity()
    }

    /// PEs of each partition (one entry unless multi-partition).
    pub fn partitions(&self) -> Vec<u32> {
        self.cluster.parts.iter().map(Profile::capacity).collect()
    }

    /// A job arrives at `now`; returns the jobs that start now (possibly including it).
    pub fn submit(&mut self, now: SimTime, job: QueuedJob) -> Result<Vec<Started>, Rejected> {
        self.settled.0.take();
        let partition = self.partition_for(job.pes, job.partition)?;
        if !(job.estimate.is_finite() && job.estimate > 0.0) {
            return Err(Rejected::Invalid("the estimate must be positive and finite"));
        }
        if self.seq_of.contains_key(&job.id) || self.running.contains_key(&job.id) {
            return Err(Rejected::DuplicateJob(job.id));
        }
        self.advance(now);
        // The queue is ordered by this key: the class first, then arrival.
        let seq = (u64::from(job.priority) << CLASS_SHIFT) | self.next_seq;
        self.next_seq += 1;
        self.seq_of.insert(job.id, seq);
        // A deferred conservative job is placed by the pass, after the schedule took in the instant's other events.
        let hold = (self.policy == SchedulerPolicy::Conservative && !self.deferred)
            .then(|| self.cluster.place(partition, job.pes, job.estimate, now))
            .filter(|hold| !self.beyond_horizon(hold.start));
        if let Some(hold) = &hold {
            self.cluster.allocate(hold);
            self.due.insert((hold.start, seq));
        }
        let clean = self.epoch;
        self.queue.insert(seq, Waiting { job, partition, hold, clean });
        Ok(self.after_change(now))
    }

    /// A running job left at `now` (finished, possibly before its estimate, or cancelled):
    /// frees its PEs and returns the jobs that start now.
    pub fn complete(&mut self, now: SimTime, id: JobId) -> Result<Vec<Started>, Rejected> {
        self.settled.0.take();
        let running = self.running.remove(&id).ok_or(Rejected::UnknownJob(id))?;
        self.advance(now);
        if now > running.hold.end {
            self.violations.push((now, format!("job {id} overran its estimate (planned end {})", running.hold.end)));
        }
        if now < running.hold.end {
            self.free(now, running.hold.end, &running.hold.take);
        }
        Ok(self.after_change(now))
    }

    /// Time passes to `now` (a wake-up requested by [`next_wakeup`](Self::next_wakeup)).
    pub fn tick(&mut self, now: SimTime) -> Vec<Started> {
        self.settled.0.take();
        self.advance(now);
        self.after_change(now)
    }

    /// When the actor must call [`tick`](Self::tick) next even if nothing else happens: the
    /// earliest planned start of a waiting job or end of an advance reservation.
    pub fn next_wakeup(&self) -> Option<SimTime> {
        let start = self.due.first().map(|&(t, _)| t);
        let reservation_end = self.reservations.values().map(|r| r.request.end).filter(|&end| end > self.now).min();
        start.into_iter().chain(reservation_end).min()
    }

    /// Removes a waiting job (cancelled, or withdrawn to be sent elsewhere); returns it and the
    /// jobs that start now.
    pub fn remove(&mut self, now: SimTime, id: JobId) -> Result<(QueuedJob, Vec<Started>), Rejected> {
        self.settled.0.take();
        let seq = self.seq_of.remove(&id).ok_or(Rejected::UnknownJob(id))?;
        self.advance(now);
        let waiting = self.queue.remove(&seq).expect("indexed job is queued");
        if let Some(hold) = waiting.hold {
            self.due.remove(&(hold.start, seq));
            self.free(hold.start, hold.end, &hold.take);
        }
        Ok((waiting.job, self.after_change(now)))
    }

    /// Suspends (or cancels) a running lease at `now`. Returns the job with its estimate cut to
    /// the remaining estimated work, ready to be re-submitted ("resumed") into the next
    /// available slot, and the jobs that start now.
    pub fn suspend(&mut self, now: SimTime, id: JobId) -> Result<(QueuedJob, Vec<Started>), Rejected> {
        self.settled.0.take();
        let running = self.running.get(&id).ok_or(Rejected::UnknownJob(id))?;
        if now >= running.hold.end {
            return Err(Rejected::Invalid("the job has no estimated work left"));
        }
        let running = self.running.remove(&id).expect("just found");
        self.advance(now);
        self.free(now, running.hold.end, &running.hold.take);
        let job = QueuedJob { estimate: running.hold.end - now, ..running.job };
        Ok((job, self.after_change(now)))
    }

    /// Accepts an advance reservation only if the profile has `pes` free PEs throughout the
    /// window, next to every running job and every existing reservation (queued jobs'
    /// reservations included), so no reservation is ever delayed by it.
    pub fn reserve(&mut self, now: SimTime, request: ReservationRequest) -> Result<ReservationId, Rejected> {
        self.settled.0.take();
        self.check_reservation(now, &request)?;
        self.advance(now);
        let take = self
            .cluster
            .fit(request.partition, request.pes, request.start, request.end)
            .ok_or(Rejected::Unavailable)?;
        Ok(self.hold(request, take))
    }

    /// Cancels (or ends early) a reservation; returns the jobs that start now.
    pub fn cancel_reservation(&mut self, now: SimTime, id: ReservationId) -> Result<Vec<Started>, Rejected> {
        self.settled.0.take();
        let reservation = self.reservations.remove(&id).ok_or(Rejected::UnknownReservation(id))?;
        self.advance(now);
        let start = reservation.request.start.max(now);
        if start < reservation.request.end {
            self.free(start, reservation.request.end, &reservation.take);
        }
        Ok(self.after_change(now))
    }

    /// Places an advance reservation by evicting `victims` (running or waiting jobs, e.g. a
    /// candidate set chosen by MOV/MLIP/MOML) atomically, so that no waiting job grabs the
    /// freed PEs in between. If the reservation does not fit even without the victims, nothing
    /// changes and `Unavailable` is returned.
    pub fn reserve_preempting(
        &mut self,
        now: SimTime,
        request: ReservationRequest,
        victims: &[JobId],
    ) -> Result<Preempted, Rejected> {
        self.settled.0.take();
        self.check_reservation(now, &request)?;
        // (victim, its queue sequence number if waiting, the window it holds from now on)
        let mut freed: Vec<(JobId, Option<u64>, Option<Hold>)> = Vec::new();
        for &id in victims {
            if freed.iter().any(|&(victim, ..)| victim == id) {
                return Err(Rejected::Invalid("a victim is listed twice"));
            }
            if let Some(running) = self.running.get(&id) {
                if now >= running.hold.end {
                    return Err(Rejected::Invalid("the job has no estimated work left"));
                }
                let rest = Hold { start: now, ..running.hold.clone() };
                freed.push((id, None, Some(rest)));
            } else {
                let &seq = self.seq_of.get(&id).ok_or(Rejected::UnknownJob(id))?;
                freed.push((id, Some(seq), self.queue[&seq].hold.clone()));
            }
        }
        self.advance(now);
        for hold in freed.iter().filter_map(|(.., hold)| hold.as_ref()) {
            self.cluster.release(hold.start, hold.end, &hold.take);
        }
        let fit = self.cluster.fit(request.partition, request.pes, request.start, request.end);
        let Some(take) = fit else {
            for hold in freed.iter().filter_map(|(.., hold)| hold.as_ref()) {
                self.cluster.allocate(hold);
            }
            return Err(Rejected::Unavailable);
        };
        let reservation = self.hold(request, take);
        let mut evicted = Vec::with_capacity(freed.len());
        for (id, seq, hold) in freed {
            if let Some(seq) = seq {
                self.seq_of.remove(&id);
                let waiting = self.queue.remove(&seq).expect("indexed job is queued");
                evicted.push(waiting.job);
            } else {
                let running = self.running.remove(&id).expect("checked above");
                evicted.push(QueuedJob { estimate: running.hold.end - now, ..running.job });
            }
            if let Some(hold) = hold {
                if let Some(seq) = seq {
                    self.due.remove(&(hold.start, seq));
                }
                self.log_release(hold.start, hold.end);
            }
        }
        let started = self.after_change(now);
        Ok(Preempted { reservation, evicted, started })
    }

    /// Earliest start of a job of `pes` PEs and `duration` submitted at `now`, for deadline
    /// checks. Exact under conservative backfilling (the reservation it would get). Otherwise
    /// a plan that gives every waiting job a reservation in queue order (with non-decreasing
    /// starts under FCFS): EASY may do better by backfilling it, or worse when later jobs
    /// backfill ahead of it.
    pub fn earliest_start(
        &self,
        now: SimTime,
        pes: u32,
        duration: f64,
        partition: Option<usize>,
    ) -> Result<SimTime, Rejected> {
        self.earliest_start_after(now, now, pes, duration, partition)
    }

    /// [`earliest_start`](Self::earliest_start) of a job that may not start before `after`, in the plan at `now`
    /// after any pending pass (the PEs a running job would give back are still held: an upper bound for such a job).
    pub fn earliest_start_after(
        &self,
        now: SimTime,
        after: SimTime,
        pes: u32,
        duration: f64,
        partition: Option<usize>,
    ) -> Result<SimTime, Rejected> {
        let own = self.partition_for(pes, partition)?;
        if !(duration.is_finite() && duration > 0.0) {
            return Err(Rejected::Invalid("the duration must be positive and finite"));
        }
        let now = now.max(self.now);
        let this = self.settled(now);
        let this = this.as_ref();
        let after = after.max(now);
        if this.policy == SchedulerPolicy::Conservative {
            return Ok(this.cluster.place(own, pes, duration, after).start);
        }
        let mut cluster = this.cluster.clone();
        let mut queue_head = now;
        let ranked = this.ranked(now);
        let waiting: Box<dyn Iterator<Item = &Waiting>> = match &ranked {
            None => Box::new(this.queue.values()),
            Some(seqs) => Box::new(seqs.iter().map(|seq| &this.queue[seq])),
        };
        for waiting in waiting.filter(|w| w.hold.is_none()) {
            let job = &waiting.job;
            let hold = cluster.place(waiting.partition, job.pes, job.estimate, queue_head);
            cluster.allocate(&hold);
            if this.policy == SchedulerPolicy::Fcfs {
                queue_head = hold.start;
            }
        }
        Ok(cluster.place(own, pes, duration, queue_head.max(after)).start)
    }

    /// Free-slot advertisement `(t_start, t_end, n)` over `[now, now + horizon)` for the whole
    /// cluster or one partition: the maximal free rectangles of the profile (see
    /// [`Profile::free_slots`]). Under FCFS and EASY waiting jobs without a reservation are not
    /// in the profile, so slots may be taken by them; a reservation in a slot is still honoured.
    pub fn free_slots(&self, now: SimTime, horizon: f64, partition: Option<usize>) -> Result<Vec<Slot>, Rejected> {
        self.settled(now.max(self.now)).free_slots_as_planned(now, horizon, partition)
    }

    /// [`free_slots`](Self::free_slots) in the plan as it stands (before a pending pass): what
    /// [`reserve_preempting`](Self::reserve_preempting), made now, can take besides its victims.
    pub fn free_slots_as_planned(
        &self,
        now: SimTime,
        horizon: f64,
        partition: Option<usize>,
    ) -> Result<Vec<Slot>, Rejected> {
        let now = now.max(self.now);
        Ok(self.cluster.profile(partition)?.free_slots(now, now + horizon))
    }

    /// Fraction of the PEs (of the cluster or of a partition) busy at `now`, reservations
    /// included: Garg's queue load `l_k`.
    pub fn load(&self, now: SimTime, partition: Option<usize>) -> Result<f64, Rejected> {
        let now = now.max(self.now);
        let this = self.settled(now);
        let (capacity, free) = match partition {
            None => (this.cluster.capacity(), this.cluster.free_at(now)),
            Some(p) => this.cluster.part(p).map(|part| (part.capacity(), part.free_at(now)))?,
        };
        if capacity == 0 {
            return Ok(0.0);
        }
        Ok(f64::from(capacity - free) / f64::from(capacity))
    }

    /// The fewest PEs free at any time in `[start, end)` over the whole cluster, in the plan as it stands (before a
    /// pending pass): what a reservation made now, before that pass, can take.
    pub fn min_free_as_planned(&self, start: SimTime, end: SimTime) -> u32 {
        self.cluster.min_free(start.max(self.now), end)
    }

    /// PEs of the whole cluster free at `now` in the plan as it stands (before a pending pass): what a reservation
    /// made now can take at once.
    pub fn free_now_as_planned(&self, now: SimTime) -> u32 {
        let profile = self.cluster.profile(None).expect("the whole cluster has a profile");
        profile.free_at(now.max(self.now))
    }

    /// When fewer than `pes` PEs of the whole cluster become free from `start` on, in the plan as it stands (before
    /// a pending pass): `start` if fewer are free then, `None` if never.
    pub fn free_until(&self, start: SimTime, pes: u32) -> Option<SimTime> {
        let profile = self.cluster.profile(None).expect("the whole cluster has a profile");
        profile.free_until(start.max(self.now), pes)
    }

    /// PEs free at `now` (of the cluster or of a partition), reservations included.
    pub fn free_pes(&self, now: SimTime, partition: Option<usize>) -> Result<u32, Rejected> {
        let now = now.max(self.now);
        Ok(self.settled(now).cluster.profile(partition)?.free_at(now))
    }

    /// The work committed from `now` on, per PE \[s\], of the cluster or of a partition: the busy PE-seconds of its
    /// profile ahead (running jobs to their estimated ends, held windows) plus the PE-seconds of the waiting jobs
    /// that hold none, over its PEs. Garg's (2010) queue waiting time `w_k`, read as the wait of a job that needs
    /// the whole queue; 0 for an idle one.
    pub fn backlog(&self, now: SimTime, partition: Option<usize>) -> Result<f64, Rejected> {
        let now = now.max(self.now);
        self.settled(now).backlog_settled(now, partition)
    }

    /// Every partition's state at `now` as a meta-broker reads it, from one view of the schedule: PEs, free PEs,
    /// load, backlog ([`backlog`](Self::backlog)) and free slots over `[now, now + horizon)`.
    pub fn partition_states(&self, now: SimTime, horizon: f64) -> Vec<PartitionState> {
        let now = now.max(self.now);
        let this = self.settled(now);
        (0..this.cluster.parts.len())
            .map(|k| {
                let part = &this.cluster.parts[k];
                let (pes, free) = (part.capacity(), part.free_at(now));
                PartitionState {
                    pes,
                    free,
                    load: if pes == 0 { 0.0 } else { f64::from(pes - free) / f64::from(pes) },
                    backlog: this.backlog_settled(now, Some(k)).unwrap_or(0.0),
                    slots: if horizon > 0.0 { part.free_slots(now, now + horizon) } else { Vec::new() },
                }
            })
            .collect()
    }

    /// [`backlog`](Self::backlog) of a settled schedule.
    fn backlog_settled(&self, now: SimTime, partition: Option<usize>) -> Result<f64, Rejected> {
        let profile = self.cluster.profile(partition)?;
        let capacity = profile.capacity();
        let (mut t, mut free, mut busy) = (now, profile.free_at(now), 0.0);
        for b in profile.breakpoints_after(now) {
            busy += f64::from(capacity - free) * (b - t);
            (t, free) = (b, profile.free_at(b));
        }
        let waiting = self.queue.values().filter(|w| w.hold.is_none() && partition.is_none_or(|p| w.partition == p));
        busy += waiting.map(|w| f64::from(w.job.pes) * w.job.estimate).sum::<f64>();
        Ok(if capacity == 0 { 0.0 } else { busy / f64::from(capacity) })
    }

    /// Number of waiting jobs (of one partition, or all).
    pub fn queue_len(&self, partition: Option<usize>) -> usize {
        self.queue.values().filter(|w| partition.is_none_or(|p| w.partition == p)).count()
    }

    /// Planned start of a waiting job, if it holds a reservation (every waiting job under
    /// conservative backfilling; partition heads under EASY).
    pub fn planned_start(&self, id: JobId) -> Option<SimTime> {
        // FCFS gives a waiting job no window, before or after a pass: no need to settle a pending one.
        if self.policy == SchedulerPolicy::Fcfs {
            return None;
        }
        self.settled(self.now).planned_start_as_planned(id)
    }

    /// [`planned_start`](Self::planned_start) in the plan as it stands (before a pending pass, which may start the
    /// job or move its window).
    pub fn planned_start_as_planned(&self, id: JobId) -> Option<SimTime> {
        let seq = self.seq_of.get(&id)?;
        self.queue[seq].hold.as_ref().map(|hold| hold.start)
    }

    /// Running jobs, by id.
    pub fn running(&self) -> impl Iterator<Item = RunningJob> + '_ {
        self.running.values().map(|r| RunningJob { id: r.job.id, pes: r.job.pes, start: r.hold.start, end: r.hold.end })
    }

    /// Waiting jobs, by priority class then arrival (the passes' order unless a [`QueueOrder`] is set).
    pub fn waiting(&self) -> impl Iterator<Item = &QueuedJob> + '_ {
        self.queue.values().map(|w| &w.job)
    }

    /// Advance reservations not yet over, by id.
    pub fn reservations(&self) -> impl Iterator<Item = (ReservationId, ReservationRequest)> + '_ {
        self.reservations.iter().map(|(&id, r)| (id, r.request))
    }

    /// The partition that serves a job: the requested one, or else the smallest partition with
    /// at least `pes` PEs (Garg Ch7: partition f serves needs in `(r_{f-1}, r_f]`), or else the
    /// largest one (which must borrow).
    fn partition_for(&self, pes: u32, partition: Option<usize>) -> Result<usize, Rejected> {
        if pes == 0 {
            return Err(Rejected::Invalid("a request needs at least one PE"));
        }
        let parts = &self.cluster.parts;
        let own = match partition {
            Some(p) if p < parts.len() => p,
            Some(p) => return Err(Rejected::NoSuchPartition(p)),
            None => {
                let sizes = parts.iter().map(Profile::capacity).enumerate();
                let smallest_fit = sizes.clone().filter(|&(_, n)| n >= pes).min_by_key(|&(_, n)| n);
                let largest = sizes.min_by_key(|&(_, n)| std::cmp::Reverse(n));
                smallest_fit.or(largest).expect("at least one partition").0
            }
        };
        let max = if self.cluster.borrowing { self.cluster.capacity() } else { parts[own].capacity() };
        if pes > max {
            return Err(Rejected::TooWide { pes, max });
        }
        Ok(own)
    }

    fn check_reservation(&self, now: SimTime, request: &ReservationRequest) -> Result<(), Rejected> {
        // A `SimTime` is finite: only the order of the window is left to check.
        let window_ok = request.start >= now.max(self.now) && request.end > request.start;
        if !window_ok {
            return Err(Rejected::Invalid("the window must be finite, non-empty and not in the past"));
        }
        match request.partition {
            Some(_) => self.partition_for(request.pes, request.partition).map(drop),
            None if request.pes == 0 => Err(Rejected::Invalid("a request needs at least one PE")),
            None if request.pes > self.pes() => Err(Rejected::TooWide { pes: request.pes, max: self.pes() }),
            None => Ok(()),
        }
    }

    fn hold(&mut self, request: ReservationRequest, take: Vec<u32>) -> ReservationId {
        self.cluster.allocate(&Hold { start: request.start, end: request.end, take: take.clone() });
        let id = ReservationId(self.next_reservation);
        self.next_reservation += 1;
        self.reservations.insert(id, Reservation { request, take });
        id
    }

    fn advance(&mut self, now: SimTime) {
        assert!(now >= self.now, "time must not decrease: {now} after {}", self.now);
        self.now = now;
        // Late planned starts are re-planned from their old window, so keep it.
        let keep_from = self.due.first().map_or(now, |&(t, _)| t.min(now));
        for part in &mut self.cluster.parts {
            part.advance(keep_from);
        }
        self.reservations.retain(|_, r| r.request.end > now);
        self.releases.retain(|r| r.end > now);
    }

    /// Gives back capacity and, under conservative backfilling, logs it for compression.
    fn free(&mut self, start: SimTime, end: SimTime, take: &[u32]) {
        self.cluster.release(start, end, take);
        self.log_release(start, end);
    }

    /// Makes the queue passes wait for [`pass`](Self::pass) (see the type's documentation).
    pub fn defer_passes(&mut self) {
        self.settled.0.take();
        self.deferred = true;
    }

    /// Whether an event since the last [`pass`](Self::pass) is waiting for one.
    pub fn pass_pending(&self) -> bool {
        self.pending
    }

    /// The queue pass over every event since the last; returns the jobs that start now.
    pub fn pass(&mut self, now: SimTime) -> Vec<Started> {
        if let Some((at, settled, started)) = self.settled.0.take()
            && at == now
        {
            *self = *settled;
            return started;
        }
        self.advance(now);
        self.pending = false;
        let mut started = self.replan(now);
        if self.policy == SchedulerPolicy::Conservative {
            // The instant's arrivals get their reservations, in queue order, in what the compression left.
            let unplaced: Vec<u64> = self.queue.iter().filter(|(_, w)| w.hold.is_none()).map(|(&s, _)| s).collect();
            // (PEs, estimate) of the jobs that found no start before the horizon in this pass: placements only take
            // capacity, so a job at least as wide and as long finds none either.
            let mut beyond: Vec<(u32, f64)> = Vec::new();
            for seq in unplaced {
                let waiting = &self.queue[&seq];
                let (pes, estimate) = (waiting.job.pes, waiting.job.estimate);
                if beyond.iter().any(|&(p, e)| pes >= p && estimate >= e) {
                    continue;
                }
                let hold = self.cluster.place(waiting.partition, pes, estimate, now);
                if self.beyond_horizon(hold.start) {
                    beyond.push((pes, estimate));
                    continue;
                }
                self.cluster.allocate(&hold);
                let waiting = self.queue.get_mut(&seq).expect("just listed");
                self.due.insert((hold.start, seq));
                let starts = hold.start <= now;
                waiting.hold = Some(hold);
                waiting.clean = self.epoch;
                if starts {
                    started.push(self.commit(seq, now));
                }
            }
        }
        started
    }

    /// After an event: the queue pass now, or a pass pending when passes are deferred.
    fn after_change(&mut self, now: SimTime) -> Vec<Started> {
        if self.deferred {
            self.pending = true;
            return Vec::new();
        }
        self.replan(now)
    }

    /// The schedule as the pending pass will leave it (itself when none is pending), for queries.
    fn settled(&self, now: SimTime) -> Cow<'_, LocalScheduler> {
        if !self.pending {
            return Cow::Borrowed(self);
        }
        let now = now.max(self.now);
        if let Some((at, settled, _)) = self.settled.0.get() {
            return if *at == now { Cow::Borrowed(settled) } else { Cow::Owned(Self::passed(self, now).0) };
        }
        let (settled, started) = Self::passed(self, now);
        let (_, settled, _) = self.settled.0.get_or_init(|| (now, Box::new(settled), started));
        Cow::Borrowed(settled)
    }

    /// A copy of `this` after its pending pass at `now`, with the jobs that pass started.
    fn passed(this: &LocalScheduler, now: SimTime) -> (LocalScheduler, Vec<Started>) {
        let mut settled = this.clone();
        let started = settled.pass(now);
        (settled, started)
    }

    /// The policy's queue pass after an event; returns the jobs that start now.
    fn replan(&mut self, now: SimTime) -> Vec<Started> {
        match self.policy {
            SchedulerPolicy::Fcfs => self.queue_pass(now, true),
            SchedulerPolicy::Easy | SchedulerPolicy::MultiPartitionEasy => self.queue_pass(now, false),
            SchedulerPolicy::Conservative => {
                let late = self.due.first().is_some_and(|&(t, _)| t < now);
                if late || !self.releases.is_empty() { self.compress(now) } else { self.start_due(now) }
            }
        }
    }

    /// The queue's keys in the order of the configured [`QueueOrder`] at `now`: by class, rank, then arrival;
    /// `None` under arrival order, which is the queue's own.
    fn ranked(&self, now: SimTime) -> Option<Vec<u64>> {
        let order = self.order?;
        let rank = |job| {
            let r = order.rank(job, now);
            // Every NaN after every number, whatever its sign bit.
            if r.is_nan() { f64::NAN } else { r }
        };
        let mut keys: Vec<(u64, f64, u64)> =
            self.queue.iter().map(|(&seq, w)| (seq >> CLASS_SHIFT, rank(&w.job), seq)).collect();
        keys.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2)));
        Some(keys.into_iter().map(|(.., seq)| seq).collect())
    }

    /// Moves a waiting job whose window starts now to the running set.
    fn commit(&mut self, seq: u64, now: SimTime) -> Started {
        let waiting = self.queue.remove(&seq).expect("starting job is queued");
        self.seq_of.remove(&waiting.job.id);
        let hold = waiting.hold.expect("a starting job holds its window");
        self.due.remove(&(hold.start, seq));
        if hold.start != now {
            let what = format!("job {} starts off its plan (planned at {})", waiting.job.id, hold.start);
            self.violations.push((now, what));
        }
        let id = waiting.job.id;
        self.running.insert(id, Running { job: waiting.job, hold });
        Started { id, start: now }
    }
}
