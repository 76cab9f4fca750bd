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

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::profile::{Profile, Slot, TimeKey};
use crate::model::JobId;

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
    pub submit: f64,
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
    pub start: f64,
}

/// An advance reservation request: `pes` PEs throughout `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReservationRequest {
    /// Start of the window; not before the time of the request.
    pub start: f64,
    /// End of the window (exclusive).
    pub end: f64,
    /// Number of PEs.
    pub pes: u32,
    /// Partition to take the PEs from first; `None` takes them from any partition.
    #[serde(default)]
    pub partition: Option<usize>,
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
    pub start: f64,
    /// Planned end: start plus the user's estimate.
    pub end: f64,
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

/// A window held in the profiles, with the PEs taken from each partition.
#[derive(Clone, Debug, PartialEq)]
struct Hold {
    start: f64,
    end: f64,
    take: Vec<u32>,
}

struct Waiting {
    job: QueuedJob,
    partition: usize,
    /// Conservative: the job's reservation; EASY: set only for partition heads (pivots).
    hold: Option<Hold>,
    /// Release epoch at which the job was last known to hold its earliest possible start.
    clean: u64,
}

struct Running {
    job: QueuedJob,
    hold: Hold,
}

struct Reservation {
    request: ReservationRequest,
    take: Vec<u32>,
}

/// Capacity given back to a conservative schedule, logged to prune compression.
struct Release {
    epoch: u64,
    start: f64,
    end: f64,
    /// Upper bound on the free PEs in `[start, end)` from the release on.
    max_free: u32,
}

/// The partitions' profiles (a single one unless multi-partition).
#[derive(Clone)]
struct Cluster {
    parts: Vec<Profile>,
    borrowing: bool,
}

impl Cluster {
    fn capacity(&self) -> u32 {
        self.parts.iter().map(Profile::capacity).sum()
    }

    fn free_at(&self, t: f64) -> u32 {
        self.parts.iter().map(|p| p.free_at(t)).sum()
    }

    fn min_free(&self, start: f64, end: f64) -> u32 {
        self.parts.iter().map(|p| p.min_free(start, end)).sum()
    }

    fn part(&self, partition: usize) -> Result<&Profile, Rejected> {
        self.parts.get(partition).ok_or(Rejected::NoSuchPartition(partition))
    }

    /// The profile of one partition, or of the whole cluster.
    fn profile(&self, partition: Option<usize>) -> Result<Cow<'_, Profile>, Rejected> {
        match partition {
            None if self.parts.len() == 1 => Ok(Cow::Borrowed(&self.parts[0])),
            None => Ok(Cow::Owned(Profile::sum(&self.parts))),
            Some(p) => self.part(p).map(Cow::Borrowed),
        }
    }

    /// PEs to take from each partition to hold `pes` over `[start, end)`: all from `own` when
    /// it can, otherwise (if borrowing, or for `own == None`) own first, then others in index
    /// order.
    fn fit(&self, own: Option<usize>, pes: u32, start: f64, end: f64) -> Option<Vec<u32>> {
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
    fn place(&self, own: usize, pes: u32, duration: f64, after: f64) -> Hold {
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
    fn earliest_anywhere(&self, pes: u32, duration: f64, after: f64) -> f64 {
        let mut times: Vec<TimeKey> = std::iter::once(after)
            .chain(self.parts.iter().flat_map(|p| p.breakpoints_after(after)))
            .map(TimeKey::new)
            .collect();
        times.sort();
        times.dedup();
        times
            .into_iter()
            .map(|TimeKey(t)| t)
            .find(|&t| self.min_free(t, t + duration) >= pes)
            .expect("every partition is free after its last breakpoint")
    }

    fn allocate(&mut self, hold: &Hold) {
        for (profile, &pes) in self.parts.iter_mut().zip(&hold.take) {
            if pes > 0 {
                profile.allocate(hold.start, hold.end, pes);
            }
        }
    }

    fn release(&mut self, start: f64, end: f64, take: &[u32]) {
        for (profile, &pes) in self.parts.iter_mut().zip(take) {
            if pes > 0 {
                profile.release(start, end, pes);
            }
        }
    }

    fn max_free(&self, start: f64, end: f64) -> u32 {
        self.parts.iter().map(|p| p.max_free(start, end)).sum()
    }
}

/// The local scheduler of one cluster (see the module documentation).
///
/// Every method taking `now` must be called with non-decreasing times. The actor must call
/// [`complete`](Self::complete) no later than `start + estimate` and [`tick`](Self::tick) at
/// [`next_wakeup`](Self::next_wakeup).
pub struct LocalScheduler {
    policy: SchedulerPolicy,
    now: f64,
    cluster: Cluster,
    /// Waiting jobs by arrival sequence number (queue order).
    queue: BTreeMap<u64, Waiting>,
    seq_of: BTreeMap<JobId, u64>,
    /// Planned starts of waiting jobs: (start, sequence number).
    due: BTreeSet<(TimeKey, u64)>,
    running: BTreeMap<JobId, Running>,
    reservations: BTreeMap<ReservationId, Reservation>,
    /// Conservative only: releases not yet seen by every queued job.
    releases: Vec<Release>,
    epoch: u64,
    next_seq: u64,
    next_reservation: u64,
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

    /// A multi-partition EASY scheduler with the given layout.
    pub fn multi_partition(pes: u32, partitioning: &Partitioning) -> Self {
        let parts = partitioning.sizes(pes).into_iter().map(Profile::new);
        Self::with_parts(SchedulerPolicy::MultiPartitionEasy, parts.collect(), partitioning.borrowing)
    }

    fn with_parts(policy: SchedulerPolicy, parts: Vec<Profile>, borrowing: bool) -> Self {
        Self {
            policy,
            now: f64::NEG_INFINITY,
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
        }
    }

    /// The policy.
    pub fn policy(&self) -> SchedulerPolicy {
        self.policy
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
    pub fn submit(&mut self, now: f64, job: QueuedJob) -> Result<Vec<Started>, Rejected> {
        let partition = self.partition_for(job.pes, job.partition)?;
        if !(job.estimate.is_finite() && job.estimate > 0.0) {
            return Err(Rejected::Invalid("the estimate must be positive and finite"));
        }
        if self.seq_of.contains_key(&job.id) || self.running.contains_key(&job.id) {
            return Err(Rejected::DuplicateJob(job.id));
        }
        self.advance(now);
        // The queue is ordered by this key: the class first, then arrival.
        let seq = (u64::from(job.priority) << 56) | self.next_seq;
        self.next_seq += 1;
        self.seq_of.insert(job.id, seq);
        let hold = (self.policy == SchedulerPolicy::Conservative).then(|| {
            let hold = self.cluster.place(partition, job.pes, job.estimate, now);
            self.cluster.allocate(&hold);
            self.due.insert((TimeKey::new(hold.start), seq));
            hold
        });
        let clean = self.epoch;
        self.queue.insert(seq, Waiting { job, partition, hold, clean });
        Ok(self.replan(now))
    }

    /// A running job left at `now` (finished, possibly before its estimate, or cancelled):
    /// frees its PEs and returns the jobs that start now.
    pub fn complete(&mut self, now: f64, id: JobId) -> Result<Vec<Started>, Rejected> {
        let running = self.running.remove(&id).ok_or(Rejected::UnknownJob(id))?;
        self.advance(now);
        debug_assert!(now <= running.hold.end, "job {id} overran its estimate");
        if now < running.hold.end {
            self.free(now, running.hold.end, &running.hold.take);
        }
        Ok(self.replan(now))
    }

    /// Time passes to `now` (a wake-up requested by [`next_wakeup`](Self::next_wakeup)).
    pub fn tick(&mut self, now: f64) -> Vec<Started> {
        self.advance(now);
        self.replan(now)
    }

    /// When the actor must call [`tick`](Self::tick) next even if nothing else happens: the
    /// earliest planned start of a waiting job or end of an advance reservation.
    pub fn next_wakeup(&self) -> Option<f64> {
        let start = self.due.first().map(|&(TimeKey(t), _)| t);
        let reservation_end =
            self.reservations.values().map(|r| r.request.end).filter(|&end| end > self.now).min_by(f64::total_cmp);
        match (start, reservation_end) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Removes a waiting job (cancelled, or withdrawn to be sent elsewhere); returns it and the
    /// jobs that start now.
    pub fn remove(&mut self, now: f64, id: JobId) -> Result<(QueuedJob, Vec<Started>), Rejected> {
        let seq = self.seq_of.remove(&id).ok_or(Rejected::UnknownJob(id))?;
        self.advance(now);
        let waiting = self.queue.remove(&seq).expect("indexed job is queued");
        if let Some(hold) = waiting.hold {
            self.due.remove(&(TimeKey::new(hold.start), seq));
            self.free(hold.start, hold.end, &hold.take);
        }
        Ok((waiting.job, self.replan(now)))
    }

    /// Suspends (or cancels) a running lease at `now`. Returns the job with its estimate cut to
    /// the remaining estimated work, ready to be re-submitted ("resumed") into the next
    /// available slot, and the jobs that start now.
    pub fn suspend(&mut self, now: f64, id: JobId) -> Result<(QueuedJob, Vec<Started>), Rejected> {
        let running = self.running.get(&id).ok_or(Rejected::UnknownJob(id))?;
        if now >= running.hold.end {
            return Err(Rejected::Invalid("the job has no estimated work left"));
        }
        let running = self.running.remove(&id).expect("just found");
        self.advance(now);
        self.free(now, running.hold.end, &running.hold.take);
        let job = QueuedJob { estimate: running.hold.end - now, ..running.job };
        Ok((job, self.replan(now)))
    }

    /// Accepts an advance reservation only if the profile has `pes` free PEs throughout the
    /// window, next to every running job and every existing reservation (queued jobs'
    /// reservations included), so no reservation is ever delayed by it.
    pub fn reserve(&mut self, now: f64, request: ReservationRequest) -> Result<ReservationId, Rejected> {
        self.check_reservation(now, &request)?;
        self.advance(now);
        let take = self
            .cluster
            .fit(request.partition, request.pes, request.start, request.end)
            .ok_or(Rejected::Unavailable)?;
        Ok(self.hold(request, take))
    }

    /// Cancels (or ends early) a reservation; returns the jobs that start now.
    pub fn cancel_reservation(&mut self, now: f64, id: ReservationId) -> Result<Vec<Started>, Rejected> {
        let reservation = self.reservations.remove(&id).ok_or(Rejected::UnknownReservation(id))?;
        self.advance(now);
        let start = reservation.request.start.max(now);
        if start < reservation.request.end {
            self.free(start, reservation.request.end, &reservation.take);
        }
        Ok(self.replan(now))
    }

    /// Places an advance reservation by evicting `victims` (running or waiting jobs, e.g. a
    /// candidate set chosen by MOV/MLIP/MOML) atomically, so that no waiting job grabs the
    /// freed PEs in between. If the reservation does not fit even without the victims, nothing
    /// changes and `Unavailable` is returned.
    pub fn reserve_preempting(
        &mut self,
        now: f64,
        request: ReservationRequest,
        victims: &[JobId],
    ) -> Result<Preempted, Rejected> {
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
                    self.due.remove(&(TimeKey::new(hold.start), seq));
                }
                self.log_release(hold.start, hold.end);
            }
        }
        let started = self.replan(now);
        Ok(Preempted { reservation, evicted, started })
    }

    /// Earliest start of a job of `pes` PEs and `duration` submitted at `now`, for deadline
    /// checks. Exact under conservative backfilling (the reservation it would get). Otherwise
    /// a plan that gives every waiting job a reservation in queue order (with non-decreasing
    /// starts under FCFS): EASY may do better by backfilling it, or worse when later jobs
    /// backfill ahead of it.
    pub fn earliest_start(&self, now: f64, pes: u32, duration: f64, partition: Option<usize>) -> Result<f64, Rejected> {
        let own = self.partition_for(pes, partition)?;
        if !(duration.is_finite() && duration > 0.0) {
            return Err(Rejected::Invalid("the duration must be positive and finite"));
        }
        let now = now.max(self.now);
        if self.policy == SchedulerPolicy::Conservative {
            return Ok(self.cluster.place(own, pes, duration, now).start);
        }
        let mut cluster = self.cluster.clone();
        let mut after = now;
        for waiting in self.queue.values().filter(|w| w.hold.is_none()) {
            let job = &waiting.job;
            let hold = cluster.place(waiting.partition, job.pes, job.estimate, after);
            cluster.allocate(&hold);
            if self.policy == SchedulerPolicy::Fcfs {
                after = hold.start;
            }
        }
        Ok(cluster.place(own, pes, duration, after).start)
    }

    /// Free-slot advertisement `(t_start, t_end, n)` over `[now, now + horizon)` for the whole
    /// cluster or one partition: the maximal free rectangles of the profile (see
    /// [`Profile::free_slots`]). Under FCFS and EASY waiting jobs without a reservation are not
    /// in the profile, so slots may be taken by them; a reservation in a slot is still honoured.
    pub fn free_slots(&self, now: f64, horizon: f64, partition: Option<usize>) -> Result<Vec<Slot>, Rejected> {
        let now = now.max(self.now);
        Ok(self.cluster.profile(partition)?.free_slots(now, now + horizon))
    }

    /// Fraction of the PEs (of the cluster or of a partition) busy at `now`, reservations
    /// included: Garg's queue load `l_k`.
    pub fn load(&self, now: f64, partition: Option<usize>) -> Result<f64, Rejected> {
        let now = now.max(self.now);
        let (capacity, free) = match partition {
            None => (self.cluster.capacity(), self.cluster.free_at(now)),
            Some(p) => self.cluster.part(p).map(|part| (part.capacity(), part.free_at(now)))?,
        };
        if capacity == 0 {
            return Ok(0.0);
        }
        Ok(f64::from(capacity - free) / f64::from(capacity))
    }

    /// Number of waiting jobs (of one partition, or all).
    pub fn queue_len(&self, partition: Option<usize>) -> usize {
        self.queue.values().filter(|w| partition.is_none_or(|p| w.partition == p)).count()
    }

    /// Planned start of a waiting job, if it holds a reservation (every waiting job under
    /// conservative backfilling; partition heads under EASY).
    pub fn planned_start(&self, id: JobId) -> Option<f64> {
        let seq = self.seq_of.get(&id)?;
        self.queue[seq].hold.as_ref().map(|hold| hold.start)
    }

    /// Running jobs, by id.
    pub fn running(&self) -> impl Iterator<Item = RunningJob> + '_ {
        self.running.values().map(|r| RunningJob { id: r.job.id, pes: r.job.pes, start: r.hold.start, end: r.hold.end })
    }

    /// Waiting jobs, in queue order.
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

    fn check_reservation(&self, now: f64, request: &ReservationRequest) -> Result<(), Rejected> {
        let window_ok = request.start.is_finite()
            && request.end.is_finite()
            && request.start >= now.max(self.now)
            && request.end > request.start;
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

    fn advance(&mut self, now: f64) {
        assert!(now.is_finite() && now >= self.now, "time must be finite and non-decreasing: {now} after {}", self.now);
        self.now = now;
        // Late planned starts are re-planned from their old window, so keep it.
        let keep_from = self.due.first().map_or(now, |&(TimeKey(t), _)| t.min(now));
        for part in &mut self.cluster.parts {
            part.advance(keep_from);
        }
        self.reservations.retain(|_, r| r.request.end > now);
        self.releases.retain(|r| r.end > now);
    }

    /// Gives back capacity and, under conservative backfilling, logs it for compression.
    fn free(&mut self, start: f64, end: f64, take: &[u32]) {
        self.cluster.release(start, end, take);
        self.log_release(start, end);
    }

    fn log_release(&mut self, start: f64, end: f64) {
        if self.policy == SchedulerPolicy::Conservative {
            self.epoch += 1;
            self.releases.push(Release { epoch: self.epoch, start, end, max_free: self.cluster.max_free(start, end) });
        }
    }

    fn replan(&mut self, now: f64) -> Vec<Started> {
        match self.policy {
            SchedulerPolicy::Fcfs => self.queue_pass(now, true),
            SchedulerPolicy::Easy | SchedulerPolicy::MultiPartitionEasy => self.queue_pass(now, false),
            SchedulerPolicy::Conservative => {
                let late = self.due.first().is_some_and(|&(TimeKey(t), _)| t < now);
                if late || !self.releases.is_empty() { self.compress(now) } else { self.start_due(now) }
            }
        }
    }

    /// FCFS and (multi-partition) EASY: start waiting jobs in queue order while they fit now;
    /// FCFS stops at the first that does not, EASY gives the first waiting job of each
    /// partition a reservation at its earliest start (the shadow time, with its extra PEs
    /// implied by the profile) and starts any later job that fits now without touching a
    /// reservation. Shadow times are recomputed at every event, since early completions and
    /// cancellations can advance them.
    fn queue_pass(&mut self, now: f64, fcfs: bool) -> Vec<Started> {
        for (&seq, waiting) in &mut self.queue {
            if let Some(hold) = waiting.hold.take() {
                self.due.remove(&(TimeKey::new(hold.start), seq));
                self.cluster.release(hold.start, hold.end, &hold.take);
            }
        }
        let mut has_pivot = vec![false; self.cluster.parts.len()];
        let mut pivots = 0;
        let mut free_now = self.cluster.free_at(now);
        let mut starting = Vec::new();
        for (&seq, waiting) in &mut self.queue {
            let (pes, estimate) = (waiting.job.pes, waiting.job.estimate);
            let fit = (pes <= free_now)
                .then(|| self.cluster.fit(Some(waiting.partition), pes, now, now + estimate))
                .flatten();
            if let Some(take) = fit {
                let hold = Hold { start: now, end: now + estimate, take };
                self.cluster.allocate(&hold);
                waiting.hold = Some(hold);
                starting.push(seq);
                free_now = self.cluster.free_at(now);
                continue;
            }
            if fcfs {
                break;
            }
            if !has_pivot[waiting.partition] {
                let hold = self.cluster.place(waiting.partition, pes, estimate, now);
                self.cluster.allocate(&hold);
                self.due.insert((TimeKey::new(hold.start), seq));
                waiting.hold = Some(hold);
                has_pivot[waiting.partition] = true;
                pivots += 1;
            }
            if free_now == 0 && pivots == has_pivot.len() {
                break;
            }
        }
        starting.into_iter().map(|seq| self.commit(seq, now)).collect()
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
    fn compress(&mut self, now: f64) -> Vec<Started> {
        let seen = self.epoch;
        // Conservative backfilling runs on a single partition.
        let profile = &mut self.cluster.parts[0];
        let mut starting = Vec::new();
        for (&seq, waiting) in &mut self.queue {
            let hold = waiting.hold.as_mut().expect("conservative plans every waiting job");
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
                debug_assert!(start < hold.start || hold.start < now, "job delayed");
                self.due.remove(&(TimeKey::new(hold.start), seq));
                self.due.insert((TimeKey::new(start), seq));
                profile.release(hold.start, hold.end, pes);
                let end = start + estimate;
                profile.allocate(start, end, pes);
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

    fn start_due(&mut self, now: f64) -> Vec<Started> {
        let mut started = Vec::new();
        while let Some(&(TimeKey(t), seq)) = self.due.first()
            && t <= now
        {
            started.push(self.commit(seq, now));
        }
        started
    }

    /// Moves a waiting job whose window starts now to the running set.
    fn commit(&mut self, seq: u64, now: f64) -> Started {
        let waiting = self.queue.remove(&seq).expect("starting job is queued");
        self.seq_of.remove(&waiting.job.id);
        let hold = waiting.hold.expect("a starting job holds its window");
        self.due.remove(&(TimeKey::new(hold.start), seq));
        debug_assert_eq!(hold.start, now, "job {} starts off hold", waiting.job.id);
        let id = waiting.job.id;
        self.running.insert(id, Running { job: waiting.job, hold });
        Started { id, start: now }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use SchedulerPolicy::{Conservative, Easy, Fcfs, MultiPartitionEasy};
    use rand::{RngExt, SeedableRng};
    use rand_pcg::Pcg64;

    /// A test job: the scheduler's view plus the actual runtime (at most the estimate).
    #[derive(Clone, Copy, Debug)]
    struct Spec {
        id: JobId,
        submit: f64,
        pes: u32,
        estimate: f64,
        runtime: f64,
        partition: Option<usize>,
    }

    fn job(id: JobId, submit: f64, pes: u32, estimate: f64, runtime: f64) -> Spec {
        assert!(runtime <= estimate);
        Spec { id, submit, pes, estimate, runtime, partition: None }
    }

    impl Spec {
        fn queued(&self) -> QueuedJob {
            QueuedJob {
                id: self.id,
                submit: self.submit,
                pes: self.pes,
                estimate: self.estimate,
                partition: self.partition,
                priority: 0,
            }
        }
    }

    fn at(start: f64, ids: &[JobId]) -> Vec<Started> {
        ids.iter().map(|&id| Started { id, start }).collect()
    }

    fn window(start: f64, end: f64, pes: u32) -> ReservationRequest {
        ReservationRequest { start, end, pes, partition: None }
    }

    /// What the driver needs, so that the naive reference runs through the same driver.
    trait Driven {
        fn pes(&self) -> u32;
        fn never_delays(&self) -> bool;
        fn submit(&mut self, now: f64, job: QueuedJob) -> Vec<Started>;
        fn complete(&mut self, now: f64, id: JobId) -> Vec<Started>;
        fn tick(&mut self, now: f64) -> Vec<Started>;
        fn reserve(&mut self, now: f64, request: ReservationRequest) -> bool;
        fn next_wakeup(&self) -> Option<f64>;
        fn planned_start(&self, id: JobId) -> Option<f64>;
        fn head(&self) -> Option<JobId>;
        fn idle(&self) -> bool;
    }

    impl Driven for LocalScheduler {
        fn pes(&self) -> u32 {
            LocalScheduler::pes(self)
        }
        fn never_delays(&self) -> bool {
            self.policy() == Conservative
        }
        fn submit(&mut self, now: f64, job: QueuedJob) -> Vec<Started> {
            LocalScheduler::submit(self, now, job).unwrap()
        }
        fn complete(&mut self, now: f64, id: JobId) -> Vec<Started> {
            LocalScheduler::complete(self, now, id).unwrap()
        }
        fn tick(&mut self, now: f64) -> Vec<Started> {
            LocalScheduler::tick(self, now)
        }
        fn reserve(&mut self, now: f64, request: ReservationRequest) -> bool {
            LocalScheduler::reserve(self, now, request).is_ok()
        }
        fn next_wakeup(&self) -> Option<f64> {
            LocalScheduler::next_wakeup(self)
        }
        fn planned_start(&self, id: JobId) -> Option<f64> {
            LocalScheduler::planned_start(self, id)
        }
        fn head(&self) -> Option<JobId> {
            self.waiting().next().map(|job| job.id)
        }
        fn idle(&self) -> bool {
            self.running().next().is_none() && self.waiting().next().is_none()
        }
    }

    #[derive(Debug, Default)]
    struct Outcome {
        starts: BTreeMap<JobId, f64>,
        accepted: Vec<bool>,
    }

    /// Runs a workload in time order (at equal times: completions, reservation requests,
    /// arrivals, then the scheduler's wake-up; ties by id) and checks the invariants: each
    /// start is reported once at the time of its event, every job ends exactly once, no PE is
    /// ever oversubscribed (jobs and accepted reservations), the reservation of the queue head
    /// (EASY's shadow time) never moves later, and under conservative backfilling no job starts
    /// later than its first reservation.
    fn run(s: &mut impl Driven, jobs: &[Spec], requests: &[(f64, ReservationRequest)]) -> Outcome {
        type Completions = BTreeSet<(TimeKey, JobId)>;
        let spec: BTreeMap<JobId, Spec> = jobs.iter().map(|j| (j.id, *j)).collect();
        let record = |started: Vec<Started>, now: f64, out: &mut Outcome, ends: &mut Completions| {
            for s in started {
                assert_eq!(s.start, now, "job {} reported off its event", s.id);
                assert!(out.starts.insert(s.id, now).is_none(), "job {} started twice", s.id);
                ends.insert((TimeKey::new(now + spec[&s.id].runtime), s.id));
            }
        };
        let mut arrivals: Vec<Spec> = jobs.to_vec();
        arrivals.sort_by(|a, b| a.submit.total_cmp(&b.submit).then(a.id.cmp(&b.id)));
        let mut arrivals = arrivals.into_iter().peekable();
        let mut requests = requests.iter().peekable();
        let mut out = Outcome::default();
        let mut first_plan = BTreeMap::new();
        let mut completions = Completions::new();
        let mut ended = BTreeSet::new();
        let mut held = Vec::new();
        let mut head = None;
        for _ in 0..100_000 {
            let head_now = s.head().and_then(|id| Some((id, s.planned_start(id)?)));
            if let (Some((id, before)), Some((now_id, after))) = (head, head_now)
                && id == now_id
            {
                assert!(after <= before, "head {id} delayed from {before} to {after}");
            }
            head = head_now;
            let candidates = [
                completions.first().map(|&(TimeKey(t), _)| t),
                requests.peek().map(|r| r.0),
                arrivals.peek().map(|j| j.submit),
                s.next_wakeup(),
            ];
            let Some(now) = candidates.iter().flatten().copied().min_by(f64::total_cmp) else {
                break;
            };
            if candidates[0] == Some(now) {
                let (_, id) = completions.pop_first().unwrap();
                assert!(ended.insert(id), "job {id} ended twice");
                let started = s.complete(now, id);
                record(started, now, &mut out, &mut completions);
            } else if candidates[1] == Some(now) {
                let &(_, request) = requests.next().unwrap();
                let accepted = s.reserve(now, request);
                if accepted {
                    held.push((request.start, request.end, request.pes));
                }
                out.accepted.push(accepted);
            } else if candidates[2] == Some(now) {
                let job = arrivals.next().unwrap();
                let started = s.submit(now, job.queued());
                let plan = s.planned_start(job.id).unwrap_or(now);
                first_plan.insert(job.id, plan);
                record(started, now, &mut out, &mut completions);
            } else {
                let started = s.tick(now);
                record(started, now, &mut out, &mut completions);
            }
        }
        assert_eq!(out.starts.len(), jobs.len(), "every job starts");
        assert_eq!(ended.len(), jobs.len(), "every job ends");
        assert!(s.idle(), "nothing left behind");
        if s.never_delays() {
            for (id, start) in &out.starts {
                assert!(*start <= first_plan[id], "job {id} delayed past its reservation");
            }
        }
        // Sweep over all holdings; at equal times ends (-) come before starts (+).
        let mut edges: Vec<(f64, i64)> = held
            .iter()
            .map(|&(a, b, n)| (a, b, n))
            .chain(out.starts.iter().map(|(id, &t)| {
                let j = spec[id];
                (t, t + j.runtime, j.pes)
            }))
            .flat_map(|(a, b, n)| [(a, i64::from(n)), (b, -i64::from(n))])
            .collect();
        edges.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        let mut busy = 0;
        for (t, delta) in edges {
            busy += delta;
            assert!(busy <= i64::from(s.pes()), "{busy} PEs busy at {t}");
        }
        out
    }

    /// Conservative backfilling done the obvious way (every query scans every holding, every
    /// compression re-places every waiting job): the reference for the pruned compression.
    struct Naive {
        pes: u32,
        now: f64,
        reservations: Vec<(f64, f64, u32)>,
        running: BTreeMap<JobId, (f64, f64, u32)>,
        /// (id, pes, estimate, planned start), in queue order.
        queue: Vec<(JobId, u32, f64, f64)>,
        /// Capacity was given back, or a job moved, since the last compression.
        dirty: bool,
    }

    impl Naive {
        fn new(pes: u32) -> Self {
            Self { pes, now: 0.0, reservations: Vec::new(), running: BTreeMap::new(), queue: Vec::new(), dirty: false }
        }

        fn holdings(&self, skip: Option<JobId>) -> Vec<(f64, f64, u32)> {
            let queued = self.queue.iter().filter(|q| Some(q.0) != skip).map(|&(_, n, d, t)| (t, t + d, n));
            self.reservations.iter().copied().chain(self.running.values().copied()).chain(queued).collect()
        }

        fn fits(&self, start: f64, end: f64, pes: u32, skip: Option<JobId>) -> bool {
            let holdings = self.holdings(skip);
            let probes = std::iter::once(start).chain(holdings.iter().map(|h| h.0).filter(|&t| t > start && t < end));
            probes.into_iter().all(|t| {
                let used: u32 = holdings.iter().filter(|h| h.0 <= t && t < h.1).map(|h| h.2).sum();
                used + pes <= self.pes
            })
        }

        fn earliest(&self, after: f64, pes: u32, duration: f64, skip: Option<JobId>) -> f64 {
            let mut candidates: Vec<f64> = self.holdings(skip).iter().map(|h| h.1).filter(|&t| t > after).collect();
            candidates.push(after);
            candidates.sort_by(f64::total_cmp);
            candidates.into_iter().find(|&t| self.fits(t, t + duration, pes, skip)).unwrap()
        }

        fn pass(&mut self, now: f64) -> Vec<Started> {
            self.now = now;
            if std::mem::take(&mut self.dirty) {
                for i in 0..self.queue.len() {
                    let (id, pes, estimate, old) = self.queue[i];
                    let new = self.earliest(now, pes, estimate, Some(id));
                    assert!(new <= old);
                    self.dirty |= new < old;
                    self.queue[i].3 = new;
                }
            }
            let (due, rest) = self.queue.iter().partition(|q| q.3 <= now);
            self.queue = rest;
            due.into_iter()
                .map(|(id, pes, estimate, start)| {
                    self.running.insert(id, (start, start + estimate, pes));
                    Started { id, start }
                })
                .collect::<Vec<_>>()
        }
    }

    impl Driven for Naive {
        fn pes(&self) -> u32 {
            self.pes
        }
        fn never_delays(&self) -> bool {
            true
        }
        fn submit(&mut self, now: f64, job: QueuedJob) -> Vec<Started> {
            let start = self.earliest(now, job.pes, job.estimate, None);
            self.queue.push((job.id, job.pes, job.estimate, start));
            self.pass(now)
        }
        fn complete(&mut self, now: f64, id: JobId) -> Vec<Started> {
            let (_, end, _) = self.running.remove(&id).unwrap();
            self.dirty |= now < end;
            self.pass(now)
        }
        fn tick(&mut self, now: f64) -> Vec<Started> {
            self.pass(now)
        }
        fn reserve(&mut self, now: f64, r: ReservationRequest) -> bool {
            self.now = now;
            let ok = r.start >= now && r.pes <= self.pes && self.fits(r.start, r.end, r.pes, None);
            if ok {
                self.reservations.push((r.start, r.end, r.pes));
            }
            ok
        }
        fn next_wakeup(&self) -> Option<f64> {
            let starts = self.queue.iter().map(|q| q.3);
            let ends = self.reservations.iter().map(|r| r.1).filter(|&t| t > self.now);
            starts.chain(ends).min_by(f64::total_cmp)
        }
        fn planned_start(&self, id: JobId) -> Option<f64> {
            self.queue.iter().find(|q| q.0 == id).map(|q| q.3)
        }
        fn head(&self) -> Option<JobId> {
            self.queue.first().map(|q| q.0)
        }
        fn idle(&self) -> bool {
            self.running.is_empty() && self.queue.is_empty()
        }
    }

    #[test]
    fn fcfs_head_blocks_where_easy_backfills() {
        // 4 PEs.       id submit pes est  run
        let jobs =
            [job(1, 0.0, 2, 10.0, 10.0), job(2, 1.0, 4, 5.0, 5.0), job(3, 2.0, 1, 3.0, 3.0), job(4, 3.0, 2, 4.0, 2.0)];
        // FCFS: J1 runs [0,10); J2 needs all 4 PEs and blocks J3 and J4 although 2 PEs idle
        // until 10. J2 runs [10,15); then J3 [15,18) and J4 [15,17) together.
        let mut s = LocalScheduler::new(Fcfs, 4);
        assert_eq!(s.submit(0.0, jobs[0].queued()), Ok(at(0.0, &[1])));
        for j in &jobs[1..] {
            assert_eq!(s.submit(j.submit, j.queued()), Ok(vec![]));
        }
        assert_eq!(s.complete(10.0, 1), Ok(at(10.0, &[2])));
        assert_eq!(s.complete(15.0, 2), Ok(at(15.0, &[3, 4])));
        let fcfs = run(&mut LocalScheduler::new(Fcfs, 4), &jobs, &[]);
        assert_eq!(fcfs.starts, BTreeMap::from([(1, 0.0), (2, 10.0), (3, 15.0), (4, 15.0)]));
        // EASY: J2 reserves [10,15); J3 backfills at 2 (ends 5 <= 10); J4 fits at 5 when J3
        // ends ([5,9) ends before the shadow time 10).
        let easy = run(&mut LocalScheduler::new(Easy, 4), &jobs, &[]);
        assert_eq!(easy.starts, BTreeMap::from([(1, 0.0), (2, 10.0), (3, 2.0), (4, 5.0)]));
    }

    /// EASY on 8 PEs. Free PEs are written `[a,b):n`.
    ///
    /// | t  | event            | profile after / decision                                         |
    /// |----|------------------|-------------------------------------------------------------------|
    /// | 0  | J1 4×20 (run 12) | starts; [0,20):4                                                  |
    /// | 1  | J2 2×10          | starts; [1,11):2 [11,20):4                                        |
    /// | 2  | J3 6×5  (head)   | 2 free: waits; shadow 20 (J1's end), extra PEs 8-6 = 2            |
    /// | 3  | J4 2×30          | fits now; over [20,25) only 2 PEs: the extras → backfills at 3    |
    /// | 4–6| J5 2×10 (run 3), J6 1×4, J7 3×3 | nothing free                                  |
    /// | 11 | J2 ends          | 2 free. J5 [11,21) would take [20,21) from J3 → refused;          |
    /// |    |                  | J6 [11,15) ends before 20 → starts; J7 3 > 1 free                 |
    /// | 12 | J1 ends early    | [12,15):5 [15,33):6 → shadow advances 20 → 15. J5 [12,22) still   |
    /// |    |                  | hits J3 → refused; J7 [12,15) ends exactly at 15 → starts         |
    /// | 15 | J6, J7 end       | J3 starts; J5 becomes head, shadow 20                             |
    /// | 20 | J3 ends          | J5 starts                                                         |
    #[test]
    fn easy_hand_worked() {
        let jobs = [
            job(1, 0.0, 4, 20.0, 12.0),
            job(2, 1.0, 2, 10.0, 10.0),
            job(3, 2.0, 6, 5.0, 5.0),
            job(4, 3.0, 2, 30.0, 30.0),
            job(5, 4.0, 2, 10.0, 3.0),
            job(6, 5.0, 1, 4.0, 4.0),
            job(7, 6.0, 3, 3.0, 3.0),
        ];
        let mut s = LocalScheduler::new(Easy, 8);
        assert_eq!(s.submit(0.0, jobs[0].queued()), Ok(at(0.0, &[1])));
        assert_eq!(s.submit(1.0, jobs[1].queued()), Ok(at(1.0, &[2])));
        assert_eq!(s.submit(2.0, jobs[2].queued()), Ok(vec![]));
        assert_eq!(s.planned_start(3), Some(20.0), "shadow time");
        assert_eq!(s.submit(3.0, jobs[3].queued()), Ok(at(3.0, &[4])), "extra PEs");
        for j in &jobs[4..] {
            assert_eq!(s.submit(j.submit, j.queued()), Ok(vec![]));
        }
        assert_eq!(s.complete(11.0, 2), Ok(at(11.0, &[6])), "J5 refused");
        assert_eq!(s.planned_start(5), None, "only the head holds a reservation");
        assert_eq!(s.complete(12.0, 1), Ok(at(12.0, &[7])), "J5 refused again");
        assert_eq!(s.planned_start(3), Some(15.0), "shadow advanced");
        assert_eq!(s.complete(15.0, 6), Ok(at(15.0, &[3])));
        assert_eq!(s.planned_start(5), Some(20.0));
        assert_eq!(s.complete(15.0, 7), Ok(vec![]));
        assert_eq!(s.complete(20.0, 3), Ok(at(20.0, &[5])));
        assert_eq!(s.complete(23.0, 5), Ok(vec![]));
        assert_eq!(s.complete(33.0, 4), Ok(vec![]));

        let out = run(&mut LocalScheduler::new(Easy, 8), &jobs, &[]);
        let starts = [(1, 0.0), (2, 1.0), (3, 15.0), (4, 3.0), (5, 20.0), (6, 11.0), (7, 12.0)];
        assert_eq!(out.starts, BTreeMap::from(starts));
    }

    /// Conservative backfilling on 8 PEs; `Jn@t` is a reservation, `[a,b):n` free PEs.
    ///
    /// | t | event             | reservation (earliest fit in the profile)                       |
    /// |---|-------------------|------------------------------------------------------------------|
    /// | 0 | J1 4×10 (run 6)   | starts; [0,10):4                                                 |
    /// | 1 | J2 6×5            | J2@10 (4 free until 10)                                          |
    /// | 2 | J3 4×6            | [2,8) has 4 free and ends before J2@10: starts (backfill)         |
    /// | 3 | J4 2×10           | [3,8):0 [8,10):4 [10,15):2 [15,..):8 → J4@8                       |
    /// | 4 | J5 8×4            | [8,10):2 [10,15):0 [15,18):6 → J5@18                              |
    /// | 5 | J6 2×3            | [8,10) too short before J2; J6@15 (6 free on [15,18))             |
    /// | 6 | J1 ends early     | compress in queue order: J2@10 → 8 ([8,15):6 once freed);        |
    /// |   |                   | J4@8 → 6, starts now; J5 stays @18 ([16,18):6 < 8 while J6 sits  |
    /// |   |                   | on [15,18)); J6@15 → 13                                          |
    /// | 7 | J7 2×3            | [7,8):2 but J2@8 holds [8,13): J7@13. J5 sees J6's move → @16    |
    /// | 8 | J3 ends           | J2 starts                                                        |
    /// |13 | J2 ends           | J6, J7 start                                                     |
    /// |16 | J4 ends           | J5 starts                                                        |
    #[test]
    fn conservative_hand_worked() {
        let jobs = [
            job(1, 0.0, 4, 10.0, 6.0),
            job(2, 1.0, 6, 5.0, 5.0),
            job(3, 2.0, 4, 6.0, 6.0),
            job(4, 3.0, 2, 10.0, 10.0),
            job(5, 4.0, 8, 4.0, 4.0),
            job(6, 5.0, 2, 3.0, 3.0),
            job(7, 7.0, 2, 3.0, 3.0),
        ];
        let mut s = LocalScheduler::new(Conservative, 8);
        let planned = |s: &LocalScheduler, ids: &[JobId]| -> Vec<Option<f64>> {
            ids.iter().map(|&id| s.planned_start(id)).collect()
        };
        assert_eq!(s.submit(0.0, jobs[0].queued()), Ok(at(0.0, &[1])));
        assert_eq!(s.submit(1.0, jobs[1].queued()), Ok(vec![]));
        assert_eq!(s.submit(2.0, jobs[2].queued()), Ok(at(2.0, &[3])));
        for j in &jobs[3..6] {
            assert_eq!(s.submit(j.submit, j.queued()), Ok(vec![]));
        }
        assert_eq!(planned(&s, &[2, 4, 5, 6]), [Some(10.0), Some(8.0), Some(18.0), Some(15.0)]);
        assert_eq!(s.complete(6.0, 1), Ok(at(6.0, &[4])), "compression starts J4");
        assert_eq!(planned(&s, &[2, 5, 6]), [Some(8.0), Some(18.0), Some(13.0)]);
        assert_eq!(s.submit(7.0, jobs[6].queued()), Ok(vec![]));
        assert_eq!(planned(&s, &[2, 5, 6, 7]), [Some(8.0), Some(16.0), Some(13.0), Some(13.0)]);
        assert_eq!(s.complete(8.0, 3), Ok(at(8.0, &[2])));
        assert_eq!(s.complete(13.0, 2), Ok(at(13.0, &[6, 7])));
        assert_eq!(s.complete(16.0, 4), Ok(at(16.0, &[5])));
        for id in [6, 7] {
            assert_eq!(s.complete(16.0, id), Ok(vec![]));
        }
        assert_eq!(s.complete(20.0, 5), Ok(vec![]));

        let starts = [(1, 0.0), (2, 8.0), (3, 2.0), (4, 6.0), (5, 16.0), (6, 13.0), (7, 13.0)];
        let out = run(&mut LocalScheduler::new(Conservative, 8), &jobs, &[]);
        assert_eq!(out.starts, BTreeMap::from(starts));
        assert_eq!(run(&mut Naive::new(8), &jobs, &[]).starts, out.starts);
    }

    /// Multi-partition EASY on 12 PEs: partitions of 2, 4 and 6 PEs (1:2:3); by default a job
    /// goes to the smallest partition it fits (≤2 → P0, 3–4 → P1, 5–6 → P2).
    ///
    /// With borrowing:
    /// | t | event          | decision                                                          |
    /// |---|----------------|-------------------------------------------------------------------|
    /// | 0 | J1 6×20 → P2   | starts on P2                                                      |
    /// | 1 | J2 2×10 → P0   | starts on P0                                                      |
    /// | 2 | J3 2×5 → P0    | P0 full; P1 idle → starts on 2 borrowed P1 PEs, [2,7)             |
    /// | 3 | J4 4×10 → P1   | 2 free: head of P1, reserved @7 on P1 (own partition on ties)     |
    /// | 4 | J5 1×3 → P0    | [4,7) on a P1 PE ends by J4@7 → starts                            |
    /// | 5 | J6 1×4 → P0    | [5,9) would hit J4@7 → head of P0, reserved @11 (J2's end)        |
    /// | 7 | J3, J5 end     | J4 starts                                                         |
    /// |11 | J2 ends        | J6 starts                                                         |
    ///
    /// Without borrowing J4 starts at once on idle P1, while P0's jobs queue for P0: J3 @11,
    /// then J5 and J6 @16.
    #[test]
    fn multi_partition_easy() {
        let jobs = [
            job(1, 0.0, 6, 20.0, 20.0),
            job(2, 1.0, 2, 10.0, 10.0),
            job(3, 2.0, 2, 5.0, 5.0),
            job(4, 3.0, 4, 10.0, 10.0),
            job(5, 4.0, 1, 3.0, 3.0),
            job(6, 5.0, 1, 4.0, 4.0),
        ];
        assert_eq!(Partitioning::default().sizes(12), [2, 4, 6]);
        assert_eq!(Partitioning::default().sizes(1024), [170, 341, 513]);
        let mut s = LocalScheduler::new(MultiPartitionEasy, 12);
        assert_eq!(s.partitions(), [2, 4, 6]);
        assert_eq!(s.submit(0.0, jobs[0].queued()), Ok(at(0.0, &[1])));
        assert_eq!(s.submit(1.0, jobs[1].queued()), Ok(at(1.0, &[2])));
        assert_eq!(s.submit(2.0, jobs[2].queued()), Ok(at(2.0, &[3])));
        assert_eq!(s.load(2.0, Some(1)), Ok(0.5), "two P1 PEs lent to J3");
        assert_eq!(s.submit(3.0, jobs[3].queued()), Ok(vec![]));
        assert_eq!(s.planned_start(4), Some(7.0));
        assert_eq!(s.submit(4.0, jobs[4].queued()), Ok(at(4.0, &[5])));
        assert_eq!(s.submit(5.0, jobs[5].queued()), Ok(vec![]));
        assert_eq!(s.planned_start(6), Some(11.0));
        assert_eq!((s.queue_len(Some(0)), s.queue_len(Some(1))), (1, 1));
        assert_eq!(s.complete(7.0, 3), Ok(at(7.0, &[4])));
        assert_eq!(s.complete(7.0, 5), Ok(vec![]));
        assert_eq!(s.complete(11.0, 2), Ok(at(11.0, &[6])));

        let borrowing = run(&mut LocalScheduler::new(MultiPartitionEasy, 12), &jobs, &[]);
        let starts = [(1, 0.0), (2, 1.0), (3, 2.0), (4, 7.0), (5, 4.0), (6, 11.0)];
        assert_eq!(borrowing.starts, BTreeMap::from(starts));

        let strict = Partitioning { borrowing: false, ..Partitioning::default() };
        let out = run(&mut LocalScheduler::multi_partition(12, &strict), &jobs, &[]);
        let starts = [(1, 0.0), (2, 1.0), (3, 11.0), (4, 3.0), (5, 16.0), (6, 16.0)];
        assert_eq!(out.starts, BTreeMap::from(starts));

        // A 7-PE job exceeds every partition: it borrows, or is refused without borrowing.
        let wide = job(9, 0.0, 7, 1.0, 1.0).queued();
        let mut s = LocalScheduler::multi_partition(12, &strict);
        assert_eq!(s.submit(0.0, wide.clone()), Err(Rejected::TooWide { pes: 7, max: 6 }));
        let mut s = LocalScheduler::new(MultiPartitionEasy, 12);
        assert_eq!(s.submit(0.0, wide), Ok(at(0.0, &[9])));
        // A meta-broker may pick the queue (Garg's DAM matches applications to queues).
        let pinned = QueuedJob { id: 10, partition: Some(1), ..job(10, 0.0, 1, 1.0, 1.0).queued() };
        assert_eq!(s.submit(0.0, pinned), Ok(at(0.0, &[10])));
        assert_eq!(s.load(0.0, Some(1)), Ok(0.25));
        let lost = QueuedJob { partition: Some(3), ..job(11, 0.0, 1, 1.0, 1.0).queued() };
        assert_eq!(s.submit(0.0, lost), Err(Rejected::NoSuchPartition(3)));
    }

    /// 4 PEs. Reservation R1 = 3 PEs over [10,20). J1 2×15 cannot run beside it before 20.
    /// J2 1×5 and J3 1×20 fit beside everything (under EASY and conservative; FCFS keeps them
    /// behind J1). At 3, [5,12)×2 collides with R1 (and J3) and is refused; [5,10)×2 is
    /// accepted (R2). At 4 R1 is cancelled: J1 can start at 10 (at 4 under FCFS, where J2 and
    /// J3 hold nothing), when R2 ends; nothing completes then, so the scheduler asks for a
    /// wake-up.
    #[test]
    fn advance_reservations_accepted_refused_respected() {
        let jobs = [job(1, 0.0, 2, 15.0, 15.0), job(2, 1.0, 1, 5.0, 5.0), job(3, 2.0, 1, 20.0, 20.0)];
        for policy in [Easy, Conservative, Fcfs] {
            let mut s = LocalScheduler::new(policy, 4);
            let r1 = s.reserve(0.0, window(10.0, 20.0, 3)).unwrap();
            let past = Rejected::Invalid("the window must be finite, non-empty and not in the past");
            assert_eq!(s.reserve(0.0, window(-1.0, 5.0, 1)), Err(past));
            assert_eq!(s.reserve(0.0, window(2.0, 5.0, 5)), Err(Rejected::TooWide { pes: 5, max: 4 }));
            assert_eq!(s.reserve(0.0, window(12.0, 18.0, 2)), Err(Rejected::Unavailable));
            assert_eq!(s.submit(0.0, jobs[0].queued()), Ok(vec![]));
            let fcfs = policy == Fcfs;
            let expected = if fcfs { vec![] } else { at(1.0, &[2]) };
            assert_eq!(s.submit(1.0, jobs[1].queued()), Ok(expected));
            let expected = if fcfs { vec![] } else { at(2.0, &[3]) };
            assert_eq!(s.submit(2.0, jobs[2].queued()), Ok(expected));
            assert_eq!(s.reserve(3.0, window(5.0, 12.0, 2)), Err(Rejected::Unavailable));
            assert!(s.reserve(3.0, window(5.0, 10.0, 2)).is_ok());
            assert_eq!(s.cancel_reservation(4.0, r1), Ok(if fcfs { at(4.0, &[1]) } else { vec![] }));
            if fcfs {
                assert_eq!(s.next_wakeup(), Some(10.0), "R2 ends");
                assert_eq!(s.tick(10.0), at(10.0, &[2, 3]));
                continue;
            }
            assert_eq!(s.planned_start(1), Some(10.0));
            assert_eq!(s.complete(6.0, 2), Ok(vec![]));
            assert_eq!(s.next_wakeup(), Some(10.0));
            assert_eq!(s.tick(10.0), at(10.0, &[1]));
            assert_eq!(s.complete(22.0, 3), Ok(vec![]));
            assert_eq!(s.complete(25.0, 1), Ok(vec![]));
        }
        // The same workload through the checking driver, R1 kept: J1 waits for R1's end.
        let requests = [(0.0, window(10.0, 20.0, 3)), (3.0, window(5.0, 10.0, 2))];
        for policy in [Easy, Conservative, MultiPartitionEasy] {
            let out = run(&mut LocalScheduler::new(policy, 4), &jobs, &requests);
            assert_eq!(out.accepted, [true, true], "{policy:?}");
            assert_eq!(out.starts, BTreeMap::from([(1, 20.0), (2, 1.0), (3, 2.0)]), "{policy:?}");
        }
    }

    /// Conservative, 4 PEs: J1 4×10 runs; J2 and J3 2×5 are reserved at 10. Suspending J1 at 2
    /// starts both; J1 resumes with its remaining 8 and is reserved at 7. A local request for
    /// [3,6)×2 evicting J2 is accepted (×4 would also need J3's PEs and is refused, changing
    /// nothing); J2 comes back with 4 left, @15. Withdrawing J1 lets J2 move to 6.
    #[test]
    fn preemption_hooks() {
        let mut s = LocalScheduler::new(Conservative, 4);
        assert_eq!(s.submit(0.0, job(1, 0.0, 4, 10.0, 10.0).queued()), Ok(at(0.0, &[1])));
        assert_eq!(s.submit(1.0, job(2, 1.0, 2, 5.0, 5.0).queued()), Ok(vec![]));
        assert_eq!(s.submit(1.0, job(3, 1.0, 2, 5.0, 5.0).queued()), Ok(vec![]));
        assert_eq!(s.suspend(2.0, 9), Err(Rejected::UnknownJob(9)));
        let (j1, started) = s.suspend(2.0, 1).unwrap();
        assert_eq!((j1.estimate, started), (8.0, at(2.0, &[2, 3])));
        assert_eq!(s.submit(2.0, j1), Ok(vec![]), "resumed into the next slot");
        assert_eq!(s.planned_start(1), Some(7.0));

        assert_eq!(s.reserve_preempting(3.0, window(3.0, 6.0, 4), &[2]), Err(Rejected::Unavailable));
        assert_eq!(s.running().map(|l| l.id).collect::<Vec<_>>(), [2, 3], "rolled back");
        assert_eq!(s.planned_start(1), Some(7.0));
        let preempted = s.reserve_preempting(3.0, window(3.0, 6.0, 2), &[2]).unwrap();
        assert_eq!(preempted.started, []);
        assert_eq!(preempted.evicted.len(), 1);
        let j2 = preempted.evicted[0].clone();
        assert_eq!((j2.id, j2.submit, j2.estimate), (2, 1.0, 4.0));
        assert_eq!(s.submit(3.0, j2), Ok(vec![]));
        assert_eq!(s.planned_start(2), Some(15.0));
        let (j1, started) = s.remove(4.0, 1).unwrap();
        assert_eq!((j1.id, started), (1, vec![]));
        assert_eq!(s.planned_start(2), Some(6.0));
        assert_eq!(s.next_wakeup(), Some(6.0));
        assert_eq!(s.tick(6.0), at(6.0, &[2]));
        assert_eq!(s.complete(7.0, 3), Ok(vec![]));
        assert_eq!(s.complete(10.0, 2), Ok(vec![]));
        assert_eq!(s.remove(10.0, 2), Err(Rejected::UnknownJob(2)));
    }

    /// 4 PEs: J1 2×10 runs, J2 4×5 waits for 10, J3 1×20 cannot run beside J2's reservation.
    #[test]
    fn timetable_queries() {
        let jobs = [job(1, 0.0, 2, 10.0, 10.0), job(2, 0.0, 4, 5.0, 5.0), job(3, 0.0, 1, 20.0, 20.0)];
        let slot = |start, end, pes| Slot { start, end, pes };
        // Earliest start of a 1×5 and a 3×5 job. Conservative reserves J3 @15, EASY plans it
        // there, so 1×5 fits at once into [0,10) beside J1 and 3×5 beside J3 @15; FCFS cannot
        // start anything before J3.
        for (policy, small, wide) in [(Conservative, 0.0, 15.0), (Easy, 0.0, 15.0), (Fcfs, 15.0, 15.0)] {
            let mut s = LocalScheduler::new(policy, 4);
            assert_eq!(s.submit(0.0, jobs[0].queued()), Ok(at(0.0, &[1])));
            assert_eq!(s.submit(0.0, jobs[1].queued()), Ok(vec![]));
            assert_eq!(s.load(0.0, None), Ok(0.5));
            if policy != Fcfs {
                let slots = s.free_slots(0.0, 20.0, None).unwrap();
                assert_eq!(slots, [slot(0.0, 10.0, 2), slot(15.0, 20.0, 4)], "{policy:?}");
            }
            assert_eq!(s.submit(0.0, jobs[2].queued()), Ok(vec![]));
            assert_eq!(s.earliest_start(0.0, 1, 5.0, None), Ok(small), "{policy:?}");
            assert_eq!(s.earliest_start(0.0, 3, 5.0, None), Ok(wide), "{policy:?}");
            assert_eq!(s.earliest_start(0.0, 5, 5.0, None), Err(Rejected::TooWide { pes: 5, max: 4 }));
        }
    }

    #[test]
    fn late_wakeup_replans() {
        // The actor should tick at 10 (R ends); ticking at 12 instead starts J1 at 12.
        for policy in [Conservative, Easy, Fcfs, MultiPartitionEasy] {
            let mut s = LocalScheduler::new(policy, 6);
            s.reserve(0.0, window(0.0, 10.0, 6)).unwrap();
            assert_eq!(s.submit(1.0, job(1, 1.0, 6, 5.0, 5.0).queued()), Ok(vec![]));
            assert_eq!(s.next_wakeup(), Some(10.0));
            assert_eq!(s.tick(12.0), at(12.0, &[1]), "{policy:?}");
            assert_eq!(s.running().next().map(|l| l.end), Some(17.0));
        }
    }

    #[test]
    fn rejects_malformed_requests() {
        let mut s = LocalScheduler::new(Easy, 4);
        let bad = |pes, estimate| QueuedJob { pes, estimate, ..job(1, 0.0, 1, 1.0, 1.0).queued() };
        assert!(matches!(s.submit(0.0, bad(0, 1.0)), Err(Rejected::Invalid(_))));
        assert!(matches!(s.submit(0.0, bad(1, 0.0)), Err(Rejected::Invalid(_))));
        assert!(matches!(s.submit(0.0, bad(1, f64::INFINITY)), Err(Rejected::Invalid(_))));
        assert_eq!(s.submit(0.0, bad(5, 1.0)), Err(Rejected::TooWide { pes: 5, max: 4 }));
        assert_eq!(s.submit(0.0, bad(1, 1.0)), Ok(at(0.0, &[1])));
        assert_eq!(s.submit(0.0, bad(1, 1.0)), Err(Rejected::DuplicateJob(1)));
        assert_eq!(s.complete(0.5, 2), Err(Rejected::UnknownJob(2)));
        assert_eq!(s.cancel_reservation(0.5, ReservationId(7)), Err(Rejected::UnknownReservation(ReservationId(7))));
    }

    #[test]
    fn policy_names() {
        for (name, policy) in [
            ("fcfs", Fcfs),
            ("easy", Easy),
            ("conservative", Conservative),
            ("multi-partition-easy", MultiPartitionEasy),
        ] {
            assert_eq!(serde_json::from_str::<SchedulerPolicy>(&format!("\"{name}\"")).unwrap(), policy);
        }
        let job: QueuedJob = serde_json::from_str(r#"{"id":1,"submit":0,"pes":2,"estimate":60}"#).unwrap();
        assert_eq!(job.partition, None);
    }

    /// A random workload on 16 PEs: integer times (so every policy sees exact arithmetic),
    /// mostly small jobs, estimates up to 3× the runtime, a few reservation requests.
    fn random_workload(seed: u64) -> (Vec<Spec>, Vec<(f64, ReservationRequest)>) {
        let mut rng = Pcg64::seed_from_u64(seed);
        let mut t = 0.0;
        let jobs = (0..60)
            .map(|id| {
                t += f64::from(rng.random_range(0..4u32));
                let runtime = f64::from(rng.random_range(1..20u32));
                let estimate = runtime * f64::from(rng.random_range(1..=3u32));
                let pes = [1, 1, 2, 2, 3, 4, 4, 8, 12, 16][rng.random_range(0..10usize)];
                let partition = rng.random_bool(0.2).then(|| rng.random_range(0..3usize));
                Spec { partition, ..job(id, t, pes, estimate, runtime) }
            })
            .collect();
        let requests = (0..6)
            .map(|_| {
                let at = f64::from(rng.random_range(0..80u32));
                let start = at + f64::from(rng.random_range(0..30u32));
                let end = start + f64::from(rng.random_range(1..15u32));
                let pes = rng.random_range(1..=8u32);
                (at, window(start, end, pes))
            })
            .collect::<Vec<_>>();
        let mut requests = requests;
        requests.sort_by(|a, b| a.0.total_cmp(&b.0));
        (jobs, requests)
    }

    #[test]
    fn randomized_invariants() {
        for seed in 0..60 {
            let (jobs, requests) = random_workload(seed);
            let single: Vec<Spec> = jobs.iter().map(|j| Spec { partition: None, ..*j }).collect();
            for policy in [Fcfs, Easy, Conservative] {
                run(&mut LocalScheduler::new(policy, 16), &single, &requests);
            }
            run(&mut LocalScheduler::new(MultiPartitionEasy, 16), &jobs, &requests);
            let strict = Partitioning { borrowing: false, ..Partitioning::default() };
            let fits: Vec<Spec> = single.iter().filter(|j| j.pes <= 9).copied().collect();
            run(&mut LocalScheduler::multi_partition(16, &strict), &fits, &requests);
        }
    }

    #[test]
    fn pruned_compression_matches_naive() {
        for seed in 100..160 {
            let (jobs, requests) = random_workload(seed);
            let jobs: Vec<Spec> = jobs.iter().map(|j| Spec { partition: None, ..*j }).collect();
            let fast = run(&mut LocalScheduler::new(Conservative, 16), &jobs, &requests);
            let naive = run(&mut Naive::new(16), &jobs, &requests);
            assert_eq!(fast.accepted, naive.accepted, "seed {seed}");
            assert_eq!(fast.starts, naive.starts, "seed {seed}");
        }
    }
}
