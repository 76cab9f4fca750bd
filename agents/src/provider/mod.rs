//! Resource provider: a cluster of PEs with a local scheduler, a price, and the jobs of its users.
//!
//! Receives `Job::Submit` (from user brokers and gateways), `Job::Cancel` (from a job's owner),
//! `Market::SlaRequest` (from personalised brokers, seed 003 ch3), `Lease::Reserve`/`Release` (advance
//! reservations), `Market::SlotsQuery` (a meta-broker's catalogue update), `Lease::Migrate`/`Migrated`/`Resume`
//! (lease migration through a gateway) and `Lease::Suspend`/`Resume` (from a lease's owner); sends `Job::Accepted`/`Rejected`/`Started`/`Completed`,
//! `Lease::Cancelled`, `Market::SlaAccept`/`SlaFail`, `Lease::Reserved`/`ReserveRefused`,
//! `Market::RegisterProvider` (at start, to every meta-broker) and `Market::ResourceUpdate`, and
//! `Lease::Preempted`/`Resumed`/`DeadlineMissed` to the owners of preempted leases.
//!
//! Leases (seed 000 ch3): a local request must start at once for its duration; when the cluster cannot hold it,
//! the configured [`PreemptionPolicy`] (NOP, MOV, MLIP, MOML and the prototype's greedy variants, see
//! [`preemption`]) chooses external leases to preempt, each by its type (cancel, suspend, migrate), with the
//! overhead of the configured [`OverheadModel`] occupying its VMs when it resumes. Deadline-constrained external
//! leases are admitted only if their planned completion meets the deadline. Which queued job starts when is
//! delegated to the configured [`SchedulerPolicy`] (FCFS, EASY,
//! conservative or multi-partition EASY backfilling, see [`scheduler`]). A job runs for its actual runtime scaled by
//! the provider's speed; the scheduler plans with the user's estimate.

pub mod overhead;
pub mod preemption;
pub mod profile;
pub mod scheduler;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::kernel::{Agent, AgentId, Ctx, Envelope, SimTime, TimerId};
use crate::model::{JobId, LeaseType, PreemptionKind};
use crate::protocol::{JobMsg, JobSpec, LeaseMsg, MarketMsg, Migration, Msg, ResourceUpdate, TimerMsg};
use crate::report::{Report, Series};
use overhead::OverheadModel;
use preemption::{Contention, LeaseTerms, PreemptionPolicy, SearchLimits};
use scheduler::{
    LocalScheduler, Partitioning, QueuedJob, Rejected, ReservationId, ReservationRequest, SchedulerPolicy, Started,
};

/// A provider's configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProviderConfig {
    /// Processing elements.
    pub pes: u32,
    /// Speed of one PE relative to the reference PE that job runtimes are given for (1 = reference).
    pub speed: f64,
    /// Price [G$ per PE-second].
    pub price: f64,
    /// Local scheduling policy.
    pub scheduler: SchedulerPolicy,
    /// Partition layout for multi-partition EASY.
    pub partitioning: Partitioning,
    /// How a local request that does not fit is resolved (seed 000 ch3).
    pub preemption: PreemptionPolicy,
    /// Overhead of preempting a lease.
    pub overhead: OverheadModel,
    /// Memory of one VM [MB], for the overhead model (seed 000: 1,024 MB).
    pub vm_memory_mb: f64,
    /// What happens to a preempted cancellable lease.
    pub cancelled: CancelledLeases,
    /// Preemptive-resume priority: a job that cannot start suspends running jobs of lower priority classes
    /// (youngest of the lowest class first), which resume later with their remaining work.
    pub preemptive_priority: bool,
}

/// What becomes of a cancelled best-effort lease. [NOTE] seed 000 leaves it open (§3.2 of the digest).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CancelledLeases {
    /// It restarts from scratch in the queue (its work is lost).
    #[default]
    Restart,
    /// It is dropped and counted as rejected.
    Drop,
}

/// A job at this provider, from acceptance to completion.
#[derive(Clone, Debug)]
struct LocalJob {
    spec: JobSpec,
    /// Actual runtime here [s].
    runtime: f64,
    start: Option<SimTime>,
    /// The timer that ends it, while it runs.
    end_timer: Option<TimerId>,
    /// A local request runs in this reservation instead of the queue.
    reservation: Option<ReservationId>,
    /// It was preempted and runs again: announce `Resumed`, not `Started`.
    preempted: bool,
    /// The gateway it came through, which finds a destination when it must migrate.
    via: Option<AgentId>,
}

/// The resource provider agent.
pub struct Provider {
    config: ProviderConfig,
    scheduler: LocalScheduler,
    jobs: BTreeMap<JobId, LocalJob>,
    /// The pending wake-up the scheduler asked for, and when.
    wakeup: Option<(f64, TimerId)>,
    busy: Series,
    queued: Series,
    busy_now: u32,
    waiting_now: u32,
    accepted: u64,
    rejected: u64,
    completed: u64,
    revenue: f64,
    contention: ContentionStats,
    /// Leases out of the scheduler until someone decides: suspended migratable leases whose gateway is looking
    /// for a destination, and leases their owner suspended. The lease as evicted from the scheduler, its remaining
    /// runtime here and its overhead [s].
    parked: BTreeMap<JobId, (QueuedJob, f64, f64)>,
}

/// What contention cost, for the metrics of seed 000 ch3.
#[derive(Clone, Debug, Default)]
struct ContentionStats {
    local_requests: u64,
    local_rejected: u64,
    /// Leases preempted (running or holding a queued reservation).
    preempted_leases: u64,
    /// VMs of the running leases preempted.
    preempted_vms: u64,
    /// Σ h(C) over the chosen sets [s].
    overhead: f64,
    /// Σ v·h(L): PE-seconds the overhead keeps busy, which are not computation.
    overhead_pe_seconds: f64,
    /// Exact searches that hit the limit and fell back to the greedy policy.
    search_fallbacks: u64,
    /// Running migratable leases preempted (seed 000 ch4's migration rate is `migrated / preempted_migratable`).
    preempted_migratable: u64,
    /// Leases that left for another provider.
    migrated_out: u64,
    /// Leases that arrived from another provider.
    migrated_in: u64,
    /// Deadline-constrained leases whose plan after a preemption ends past their deadline.
    deadline_missed: u64,
    /// Leases their owner suspended (`Lease::Suspend`).
    owner_suspends: u64,
}

impl Provider {
    /// A provider with an empty cluster.
    pub fn new(config: ProviderConfig) -> Provider {
        let scheduler = match config.scheduler {
            SchedulerPolicy::MultiPartitionEasy => LocalScheduler::multi_partition(config.pes, &config.partitioning),
            policy => LocalScheduler::new(policy, config.pes),
        };
        Provider {
            config,
            scheduler,
            jobs: BTreeMap::new(),
            wakeup: None,
            busy: Series::default(),
            queued: Series::default(),
            busy_now: 0,
            waiting_now: 0,
            accepted: 0,
            rejected: 0,
            completed: 0,
            revenue: 0.0,
            contention: ContentionStats::default(),
            parked: BTreeMap::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ProviderConfig {
        &self.config
    }

    /// Runtime here of work that takes `secs` on a reference PE.
    fn scaled(&self, secs: f64) -> f64 {
        secs / self.config.speed
    }

    /// The duration the scheduler plans for `job` here. Batch systems kill a job at its estimate; workloads give
    /// estimates >= runtimes, and a shorter one is raised to the runtime rather than silently cutting the job.
    fn planned_duration(&self, job: &JobSpec) -> f64 {
        self.scaled(job.estimate.max(job.runtime))
    }

    /// Queues a job (or serves a local request at once); answers `Accepted` (then `Started` when it starts) or
    /// `Rejected`.
    fn on_submit(&mut self, job: JobSpec, from: AgentId, ctx: &mut Ctx<'_>) {
        let (id, owner) = (job.id, job.owner);
        let admitted = match job.lease {
            Some(LeaseType::Local) => return self.on_local_request(job, ctx),
            Some(LeaseType::Migratable | LeaseType::NonPreemptable) => self.admit_by_deadline(job, ctx.now()),
            _ => self.admit(job, ctx.now()),
        };
        match admitted {
            Ok(started) => {
                self.accepted += 1;
                if from != owner
                    && let Some(job) = self.jobs.get_mut(&id)
                {
                    job.via = Some(from);
                }
                ctx.send(owner, Msg::Job(JobMsg::Accepted { job: id }));
                self.start(started, ctx);
                if self.config.preemptive_priority {
                    self.preempt_lower_classes(id, ctx);
                }
            }
            Err(reason) => {
                self.rejected += 1;
                ctx.send(owner, Msg::Job(JobMsg::Rejected { job: id, reason }));
            }
        }
        self.after_event(ctx);
    }

    /// Personalised-broker claim (seed 003 ch3): granted only if the job can start right now, so the first
    /// claim on free capacity wins and later ones get `SlaFail`.
    fn on_sla_request(&mut self, job: JobSpec, ctx: &mut Ctx<'_>) {
        let now = ctx.now().secs();
        let estimate = self.planned_duration(&job);
        let can_start_now = self.scheduler.earliest_start(now, job.pes, estimate, None).is_ok_and(|s| s <= now);
        let (id, owner) = (job.id, job.owner);
        match can_start_now.then(|| self.admit(job, ctx.now())) {
            Some(Ok(started)) => {
                self.accepted += 1;
                ctx.send(owner, Msg::Market(MarketMsg::SlaAccept { job: id, price: self.config.price }));
                self.start(started, ctx);
            }
            _ => ctx.send(owner, Msg::Market(MarketMsg::SlaFail { job: id })),
        }
        self.after_event(ctx);
    }

    /// A deadline-constrained lease is queued only if its planned completion meets its deadline.
    fn admit_by_deadline(&mut self, job: JobSpec, now: SimTime) -> Result<Vec<Started>, String> {
        if let Some(deadline) = job.deadline {
            let estimate = self.planned_duration(&job);
            let start =
                self.scheduler.earliest_start(now.secs(), job.pes, estimate, None).map_err(|e| e.to_string())?;
            if start + estimate > deadline {
                return Err(format!("cannot complete before its deadline (earliest start {start})"));
            }
        }
        self.admit(job, now)
    }

    /// A local request (seed 000 ch3) must run from now for its duration: in free capacity if there is enough,
    /// else in capacity the preemption policy frees; otherwise it is rejected.
    fn on_local_request(&mut self, job: JobSpec, ctx: &mut Ctx<'_>) {
        self.contention.local_requests += 1;
        let now = ctx.now().secs();
        let estimate = self.planned_duration(&job);
        let request = ReservationRequest { start: now, end: now + estimate, pes: job.pes, partition: None };
        let (id, owner) = (job.id, job.owner);
        let placed = if !(estimate.is_finite() && estimate > 0.0) {
            Err("a local request needs a positive duration".into())
        } else {
            match self.scheduler.reserve(now, request) {
                Ok(r) => Ok((r, Vec::new())),
                Err(Rejected::Unavailable) => self.preempt_for(&request, ctx),
                Err(e) => Err(e.to_string()),
            }
        };
        match placed {
            Ok((reservation, started)) => {
                ctx.send(owner, Msg::Job(JobMsg::Accepted { job: id }));
                let runtime = self.scaled(job.runtime);
                self.accepted += 1;
                let local = LocalJob {
                    spec: job,
                    runtime,
                    start: None,
                    end_timer: None,
                    reservation: Some(reservation),
                    preempted: false,
                    via: None,
                };
                self.jobs.insert(id, local);
                self.waiting_now += 1;
                self.start(vec![Started { id, start: now }], ctx);
                self.start(started, ctx);
            }
            Err(reason) => {
                self.rejected += 1;
                self.contention.local_rejected += 1;
                ctx.send(owner, Msg::Job(JobMsg::Rejected { job: id, reason }));
            }
        }
        self.after_event(ctx);
    }

    /// Chooses leases to preempt for `request` with the configured policy, preempts them and holds the request's
    /// reservation; returns it with the jobs that start in capacity the preemption freed beyond the request.
    fn preempt_for(
        &mut self,
        request: &ReservationRequest,
        ctx: &mut Ctx<'_>,
    ) -> Result<(ReservationId, Vec<Started>), String> {
        let now = ctx.now().secs();
        let memory_mb = self.config.vm_memory_mb;
        let jobs = &self.jobs;
        let terms = |id: JobId| {
            let spec = &jobs.get(&id)?.spec;
            Some(LeaseTerms { lease_type: spec.lease?, memory_mb: spec.memory_mb.unwrap_or(memory_mb) })
        };
        let contention = Contention::from_scheduler(&self.scheduler, now, request, &self.config.overhead, terms);
        let limits = SearchLimits::default();
        let chosen = match self.config.preemption.select(&contention, limits) {
            Ok(set) => set,
            Err(_) => {
                // Too many candidates for an exact search: the prototype's greedy ordering never fails.
                self.contention.search_fallbacks += 1;
                let fallback = match self.config.preemption {
                    PreemptionPolicy::Mlip => PreemptionPolicy::GreedyMlip,
                    _ => PreemptionPolicy::GreedyMov,
                };
                fallback.select(&contention, limits).unwrap_or(None)
            }
        };
        let Some(set) = chosen else { return Err("no capacity, and no preemption can make room".into()) };
        let victims: Vec<(JobId, f64)> = contention.members(&set).map(|c| (c.lease, c.overhead)).collect();
        let ids: Vec<JobId> = victims.iter().map(|v| v.0).collect();
        let preempted = self.scheduler.reserve_preempting(now, *request, &ids).map_err(|e| e.to_string())?;
        self.contention.overhead += set.overhead;
        for evicted in preempted.evicted {
            let overhead = victims.iter().find(|v| v.0 == evicted.id).map_or(0.0, |v| v.1);
            self.requeue_preempted(evicted, overhead, ctx);
        }
        Ok((preempted.reservation, preempted.started))
    }

    /// Preemptive-resume priority: while job `id` waits, suspend the youngest running job of the lowest class below
    /// its own (never a local lease, which holds a reservation).
    fn preempt_lower_classes(&mut self, id: JobId, ctx: &mut Ctx<'_>) {
        let now = ctx.now().secs();
        while let Some(waiting) = self.jobs.get(&id).filter(|j| j.start.is_none()) {
            let class = waiting.spec.priority;
            let victim = self
                .jobs
                .iter()
                .filter(|(_, j)| j.start.is_some() && j.reservation.is_none() && j.spec.priority > class)
                .max_by(|a, b| {
                    a.1.spec.priority.cmp(&b.1.spec.priority).then(a.1.start.cmp(&b.1.start)).then(a.0.cmp(b.0))
                })
                .map(|(&v, _)| v);
            let Some(victim) = victim else { break };
            let Ok((remaining, started)) = self.scheduler.suspend(now, victim) else { break };
            self.requeue_preempted(remaining, 0.0, ctx);
            self.start(started, ctx);
        }
    }

    /// A job with a meta-broker's ticket (seed 003 §3.2 step 8): it runs in its reserved slot, from the slot's
    /// start; the reservation already holds its PEs.
    fn on_submit_reserved(&mut self, job: JobSpec, reservation: u64, start: f64, ctx: &mut Ctx<'_>) {
        let (id, owner) = (job.id, job.owner);
        let held = self.scheduler.reservations().any(|(r, _)| r.0 == reservation);
        if !held {
            self.rejected += 1;
            let reason = format!("no reservation {reservation} here");
            ctx.send(owner, Msg::Job(JobMsg::Rejected { job: id, reason }));
            return;
        }
        ctx.send(owner, Msg::Job(JobMsg::Accepted { job: id }));
        self.accepted += 1;
        self.waiting_now += 1;
        let runtime = self.scaled(job.runtime);
        let reservation = Some(ReservationId(reservation));
        let job =
            LocalJob { spec: job, runtime, start: None, end_timer: None, reservation, preempted: false, via: None };
        self.jobs.insert(id, job);
        ctx.wake_in((start - ctx.now().secs()).max(0.0), TimerMsg::SlotStart { job: id });
        self.after_event(ctx);
    }

    fn on_slot_start(&mut self, id: JobId, ctx: &mut Ctx<'_>) {
        let now = ctx.now().secs();
        self.start(vec![Started { id, start: now }], ctx);
        self.after_event(ctx);
    }

    /// A preempted lease, already out of the scheduler: tell its owner, then restart, resume, migrate or drop it
    /// by type.
    fn requeue_preempted(&mut self, evicted: QueuedJob, overhead: f64, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        let speed = self.config.speed;
        let Some(job) = self.jobs.get_mut(&evicted.id) else { return };
        self.contention.preempted_leases += 1;
        let Some(start) = job.start else {
            // A queued reservation gives way and is planned again; its VMs did not exist yet.
            let requeued = QueuedJob { submit: now.secs(), ..evicted };
            let started = self.scheduler.submit(now.secs(), requeued).unwrap_or_default();
            return self.start(started, ctx);
        };
        let kind = job.spec.lease.and_then(LeaseType::preemption).unwrap_or(PreemptionKind::Suspend);
        let vms = job.spec.pes;
        if let Some(timer) = job.end_timer.take() {
            ctx.cancel(timer);
        }
        self.busy_now -= vms;
        self.contention.preempted_vms += u64::from(vms);
        ctx.send(job.spec.owner, Msg::Lease(LeaseMsg::Preempted { lease: evicted.id, kind, overhead }));
        let done = now.secs() - start.secs();
        job.start = None;
        job.preempted = true;
        // The remaining runtime never exceeds the scheduler's remaining estimate (rounding could make it a few ulps
        // longer, and the scheduler frees the PEs at the estimate).
        let remaining = (job.runtime - done).min(evicted.estimate);
        if kind == PreemptionKind::Migrate {
            self.contention.preempted_migratable += 1;
        }
        match (kind, job.via) {
            (PreemptionKind::Cancel, _) if self.config.cancelled == CancelledLeases::Drop => {
                let job = self.jobs.remove(&evicted.id).expect("found above");
                self.rejected += 1;
                let reason = "cancelled by preemption".to_string();
                ctx.send(job.spec.owner, Msg::Job(JobMsg::Rejected { job: evicted.id, reason }));
            }
            // The work is lost: start again from scratch.
            (PreemptionKind::Cancel, _) => {
                let estimate = job.runtime.max(evicted.estimate + done);
                self.queue_again(QueuedJob { estimate, ..evicted }, ctx);
            }
            (PreemptionKind::Migrate, Some(gateway)) => {
                let mut lease = job.spec.clone();
                (lease.runtime, lease.estimate) = (remaining * speed, evicted.estimate * speed);
                let migration = Migration { lease, source: ctx.me(), overhead };
                ctx.send(gateway, Msg::Lease(LeaseMsg::Migrate(Box::new(migration))));
                self.parked.insert(evicted.id, (evicted, remaining, overhead));
            }
            // Suspended, or migrating without a gateway to find a destination: resume here once the scheduler
            // finds room, with the overhead on its VMs.
            (PreemptionKind::Suspend | PreemptionKind::Migrate, _) => {
                self.resume_here(evicted, remaining, overhead, ctx)
            }
        }
    }

    /// Queues a suspended lease again with `remaining` seconds of work plus the overhead its VMs spend on resuming.
    fn resume_here(&mut self, evicted: QueuedJob, remaining: f64, overhead: f64, ctx: &mut Ctx<'_>) {
        let Some(job) = self.jobs.get_mut(&evicted.id) else { return };
        job.runtime = remaining + overhead;
        self.contention.overhead_pe_seconds += f64::from(job.spec.pes) * overhead;
        let (id, deadline, owner) = (evicted.id, job.spec.deadline, job.spec.owner);
        let estimate = evicted.estimate + overhead;
        self.queue_again(QueuedJob { estimate, ..evicted }, ctx);
        // Only a scheduler that plans every queued job (conservative backfilling) knows the new completion.
        if let (Some(deadline), Some(start)) = (deadline, self.scheduler.planned_start(id)) {
            let expected_end = start + estimate;
            if expected_end > deadline {
                self.contention.deadline_missed += 1;
                ctx.send(owner, Msg::Lease(LeaseMsg::DeadlineMissed { lease: id, expected_end }));
            }
        }
    }

    fn queue_again(&mut self, evicted: QueuedJob, ctx: &mut Ctx<'_>) {
        let now = ctx.now().secs();
        self.waiting_now += 1;
        let id = evicted.id;
        match self.scheduler.submit(now, QueuedJob { submit: now, ..evicted }) {
            Ok(started) => self.start(started, ctx),
            Err(e) => tracing::error!(provider = ctx.name(), lease = id, "requeue refused: {e}"),
        }
    }

    /// A gateway offers a lease migrating from another provider: take it if it can run here (before its deadline),
    /// with the migration overhead on its VMs.
    fn on_migrate_in(&mut self, migration: &Migration, gateway: AgentId, ctx: &mut Ctx<'_>) {
        let Migration { lease, overhead, .. } = migration;
        let id = lease.id;
        let mut planned = lease.clone();
        // The destination plans with the resume overhead included: its VMs are busy for it.
        planned.estimate += overhead * self.config.speed;
        let estimate = self.planned_duration(&planned);
        let answer = match self.admit_by_deadline(planned, ctx.now()) {
            Ok(started) => {
                self.contention.migrated_in += 1;
                // Rounded otherwise than the scheduler's estimate, the runtime can exceed it by an ulp when the speed
                // is not 1, and the job would end after the end its PEs are planned free at.
                let runtime = (self.scaled(lease.runtime) + overhead).min(estimate);
                let job = self.jobs.get_mut(&id).expect("just admitted");
                job.runtime = runtime;
                (job.preempted, job.via) = (true, Some(gateway));
                self.contention.overhead_pe_seconds += f64::from(lease.pes) * overhead;
                self.start(started, ctx);
                LeaseMsg::Migrated { lease: id, to: ctx.me() }
            }
            Err(reason) => {
                tracing::debug!(provider = ctx.name(), lease = id, reason, "migration refused");
                LeaseMsg::MigrateRefused { lease: id }
            }
        };
        ctx.send(gateway, Msg::Lease(answer));
        self.after_event(ctx);
    }

    /// The owner suspends its lease (seed 000 §3.3, the DVE's control of its leases): a running lease's VMs are
    /// suspended, a queued lease leaves the queue, and it waits out of the scheduler until the owner sends
    /// `Resume` (or `Job::Cancel`).
    fn on_suspend(&mut self, id: JobId, from: AgentId, ctx: &mut Ctx<'_>) {
        let now = ctx.now().secs();
        let Some(job) = self.jobs.get_mut(&id) else { return };
        if job.spec.owner != from || job.reservation.is_some() || self.parked.contains_key(&id) {
            tracing::warn!(
                provider = ctx.name(),
                lease = id,
                "suspend refused: not a running or queued lease of the sender"
            );
            return;
        }
        let (owner, vms) = (job.spec.owner, job.spec.pes);
        let (evicted, remaining, overhead, started) = match job.start {
            Some(start) => {
                let Ok((evicted, started)) = self.scheduler.suspend(now, id) else { return };
                if let Some(timer) = job.end_timer.take() {
                    ctx.cancel(timer);
                }
                self.busy_now -= vms;
                let memory_mb = job.spec.memory_mb.unwrap_or(self.config.vm_memory_mb);
                let overhead = self.config.overhead.overhead(PreemptionKind::Suspend, vms, memory_mb);
                let remaining = (job.runtime - (now - start.secs())).min(evicted.estimate);
                (job.start, job.preempted) = (None, true);
                (evicted, remaining, overhead, started)
            }
            None => {
                let Ok((evicted, started)) = self.scheduler.remove(now, id) else { return };
                self.waiting_now -= 1;
                (evicted, job.runtime, 0.0, started)
            }
        };
        self.contention.owner_suspends += 1;
        ctx.send(owner, Msg::Lease(LeaseMsg::Preempted { lease: id, kind: PreemptionKind::Suspend, overhead }));
        self.parked.insert(id, (evicted, remaining, overhead));
        self.start(started, ctx);
        self.after_event(ctx);
    }

    /// A parked lease moved to another provider (`moved`, the gateway's `Migrated`) or resumes here (`Resume`
    /// from the gateway that found no destination, or from the owner that suspended it).
    fn settle_parked(&mut self, id: JobId, moved: bool, from: AgentId, ctx: &mut Ctx<'_>) {
        let entitled = self.jobs.get(&id).is_some_and(|j| j.via == Some(from) || (!moved && j.spec.owner == from));
        if !entitled {
            tracing::warn!(provider = ctx.name(), lease = id, "only the lease's gateway or owner settles it: ignored");
            return;
        }
        let Some((evicted, remaining, overhead)) = self.parked.remove(&id) else { return };
        if moved {
            self.contention.migrated_out += 1;
            self.jobs.remove(&id);
        } else {
            self.resume_here(evicted, remaining, overhead, ctx);
        }
        self.after_event(ctx);
    }

    /// Queues a job with the scheduler; returns what starts now (the caller counts it as accepted and answers the
    /// owner first).
    fn admit(&mut self, job: JobSpec, now: SimTime) -> Result<Vec<Started>, String> {
        let now = now.secs();
        let runtime = self.scaled(job.runtime);
        let estimate = self.planned_duration(&job);
        let queued =
            QueuedJob { id: job.id, submit: now, pes: job.pes, estimate, partition: None, priority: job.priority };
        let id = job.id;
        let started = self.scheduler.submit(now, queued).map_err(|e| e.to_string())?;
        self.waiting_now += 1;
        let job = LocalJob {
            spec: job,
            runtime,
            start: None,
            end_timer: None,
            reservation: None,
            preempted: false,
            via: None,
        };
        self.jobs.insert(id, job);
        Ok(started)
    }

    fn start(&mut self, started: Vec<Started>, ctx: &mut Ctx<'_>) {
        for s in started {
            let Some(job) = self.jobs.get_mut(&s.id) else { continue };
            job.start = Some(ctx.now());
            self.busy_now += job.spec.pes;
            self.waiting_now -= 1;
            let msg = if job.preempted {
                Msg::Lease(LeaseMsg::Resumed { lease: s.id })
            } else {
                Msg::Job(JobMsg::Started { job: s.id })
            };
            ctx.send(job.spec.owner, msg);
            job.end_timer = Some(ctx.wake_in(job.runtime, TimerMsg::JobEnd { job: s.id }));
        }
    }

    /// A job's runtime elapsed: free its PEs, charge its owner, start what can start.
    fn on_job_end(&mut self, id: JobId, ctx: &mut Ctx<'_>) {
        let Some(job) = self.jobs.remove(&id) else { return };
        self.busy_now -= job.spec.pes;
        let cost = self.config.price * f64::from(job.spec.pes) * job.runtime;
        self.revenue += cost;
        self.completed += 1;
        ctx.send(job.spec.owner, Msg::Job(JobMsg::Completed { job: id, cost }));
        let now = ctx.now().secs();
        let freed = match job.reservation {
            Some(r) => match self.scheduler.cancel_reservation(now, r) {
                // A local lease ends with its window, which the scheduler may already have closed this instant.
                Err(Rejected::UnknownReservation(_)) => Ok(self.scheduler.tick(now)),
                other => other,
            },
            None => self.scheduler.complete(now, id),
        };
        match freed {
            Ok(started) => self.start(started, ctx),
            Err(e) => tracing::error!(provider = ctx.name(), job = id, "scheduler refused completion: {e}"),
        }
        self.after_event(ctx);
    }

    /// The owner withdraws a job: a queued one leaves the queue, a running one stops and pays for the time used.
    fn on_cancel(&mut self, id: JobId, from: AgentId, ctx: &mut Ctx<'_>) {
        let Some(job) = self.jobs.get(&id) else { return };
        if job.spec.owner != from {
            tracing::warn!(provider = ctx.name(), job = id, "cancel from an agent that does not own the job: ignored");
            return;
        }
        let job = self.jobs.remove(&id).expect("just found");
        let now = ctx.now();
        if self.parked.remove(&id).is_some() {
            // Out of the scheduler already: nothing runs or waits there.
            ctx.send(job.spec.owner, Msg::Lease(LeaseMsg::Cancelled { lease: id }));
            return self.after_event(ctx);
        }
        let result = match (job.start, job.reservation) {
            // Waiting for its reserved slot: give the slot back.
            (None, Some(r)) => {
                self.waiting_now -= 1;
                self.scheduler.cancel_reservation(now.secs(), r)
            }
            (None, None) => {
                self.waiting_now -= 1;
                self.scheduler.remove(now.secs(), id).map(|(_, started)| started)
            }
            (Some(start), _) => {
                self.busy_now -= job.spec.pes;
                if let Some(timer) = job.end_timer {
                    ctx.cancel(timer);
                }
                let used = now.secs() - start.secs();
                self.revenue += self.config.price * f64::from(job.spec.pes) * used;
                match job.reservation {
                    Some(r) => self.scheduler.cancel_reservation(now.secs(), r),
                    None => self.scheduler.complete(now.secs(), id),
                }
            }
        };
        ctx.send(job.spec.owner, Msg::Lease(LeaseMsg::Cancelled { lease: id }));
        match result {
            Ok(started) => self.start(started, ctx),
            Err(e) => tracing::error!(provider = ctx.name(), job = id, "scheduler refused cancellation: {e}"),
        }
        self.after_event(ctx);
    }

    /// Holds an advance reservation if the PEs are free over the whole window (no queued job is delayed under
    /// conservative backfilling).
    fn on_reserve(&mut self, from: AgentId, request: u64, (start, end, pes): (f64, f64, u32), ctx: &mut Ctx<'_>) {
        let req = ReservationRequest { start, end, pes, partition: None };
        let answer = match self.scheduler.reserve(ctx.now().secs(), req) {
            Ok(r) => LeaseMsg::Reserved { request, reservation: r.0 },
            Err(e) => LeaseMsg::ReserveRefused { request, reason: e.to_string() },
        };
        ctx.send(from, Msg::Lease(answer));
        self.after_event(ctx);
    }

    fn on_release(&mut self, reservation: u64, ctx: &mut Ctx<'_>) {
        match self.scheduler.cancel_reservation(ctx.now().secs(), ReservationId(reservation)) {
            Ok(started) => self.start(started, ctx),
            Err(e) => tracing::warn!(provider = ctx.name(), reservation, "release refused: {e}"),
        }
        self.after_event(ctx);
    }

    /// What this provider is and offers; `slots` over the next `horizon` seconds (none for 0).
    fn resource_update(&self, now: f64, horizon: f64) -> Box<ResourceUpdate> {
        let slots =
            if horizon > 0.0 { self.scheduler.free_slots(now, horizon, None).unwrap_or_default() } else { vec![] };
        let slots = slots.into_iter().map(|s| (s.start, s.end, s.pes)).collect();
        let ProviderConfig { pes: cpus, speed, price, .. } = self.config;
        Box::new(ResourceUpdate { cpus, speed, price, slots })
    }

    /// The meta-broker's periodic catalogue update: the maximal free rectangles of the availability profile.
    fn on_slots_query(&mut self, from: AgentId, horizon: f64, ctx: &mut Ctx<'_>) {
        let update = self.resource_update(ctx.now().secs(), horizon);
        ctx.send(from, Msg::Market(MarketMsg::ResourceUpdate(update)));
    }

    fn on_wakeup(&mut self, ctx: &mut Ctx<'_>) {
        self.wakeup = None;
        let started = self.scheduler.tick(ctx.now().secs());
        self.start(started, ctx);
        self.after_event(ctx);
    }

    /// Records the state series and keeps exactly one wake-up pending at the scheduler's next due time.
    fn after_event(&mut self, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        self.busy.set(now, f64::from(self.busy_now));
        self.queued.set(now, f64::from(self.waiting_now));
        let due = self.scheduler.next_wakeup().filter(|&t| t > now.secs());
        if self.wakeup.map(|w| w.0) != due {
            if let Some((_, timer)) = self.wakeup.take() {
                ctx.cancel(timer);
            }
            if let Some(t) = due {
                self.wakeup = Some((t, ctx.wake_in(t - now.secs(), TimerMsg::Wakeup)));
            }
        }
    }
}

impl Agent for Provider {
    /// Joins every meta-broker's market (one that does not schedule on this provider refuses).
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        for &mb in ctx.of_kind("metabroker").to_vec().iter() {
            let me = self.resource_update(0.0, 0.0);
            ctx.send(mb, Msg::Market(MarketMsg::RegisterProvider(me)));
        }
    }

    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>) {
        match &env.msg {
            Msg::Job(JobMsg::Submit(job)) => self.on_submit((**job).clone(), env.from(), ctx),
            Msg::Lease(LeaseMsg::Migrate(m)) => self.on_migrate_in(m, env.from(), ctx),
            Msg::Lease(LeaseMsg::Migrated { lease, .. }) => self.settle_parked(*lease, true, env.from(), ctx),
            Msg::Lease(LeaseMsg::Resume { lease }) => self.settle_parked(*lease, false, env.from(), ctx),
            Msg::Lease(LeaseMsg::Suspend { lease }) => self.on_suspend(*lease, env.from(), ctx),
            Msg::Market(MarketMsg::SlaRequest(job)) => self.on_sla_request((**job).clone(), ctx),
            Msg::Job(JobMsg::Cancel { job }) => self.on_cancel(*job, env.from(), ctx),
            Msg::Job(JobMsg::SubmitReserved { job, reservation, start }) => {
                self.on_submit_reserved((**job).clone(), *reservation, *start, ctx)
            }
            Msg::Timer(TimerMsg::SlotStart { job }) => self.on_slot_start(*job, ctx),
            Msg::Lease(LeaseMsg::Reserve { request, start, end, pes }) => {
                self.on_reserve(env.from(), *request, (*start, *end, *pes), ctx)
            }
            Msg::Lease(LeaseMsg::Release { reservation }) => self.on_release(*reservation, ctx),
            Msg::Market(MarketMsg::SlotsQuery { horizon }) => self.on_slots_query(env.from(), *horizon, ctx),
            Msg::Market(MarketMsg::Payment { .. } | MarketMsg::Registered) => {}
            Msg::Market(MarketMsg::RegisterRefused { reason }) => {
                tracing::debug!(provider = ctx.name(), from = ?env.from(), reason = reason.as_str(), "not registered")
            }
            Msg::Timer(TimerMsg::JobEnd { job }) => self.on_job_end(*job, ctx),
            Msg::Timer(TimerMsg::Wakeup) => self.on_wakeup(ctx),
            other => tracing::error!(provider = ctx.name(), kind = other.kind(), "unhandled message"),
        }
    }

    fn report(&self, now: SimTime, out: &mut Report) {
        let span = now.secs();
        let capacity = f64::from(self.config.pes) * span;
        let busy = self.busy.integral(span);
        let c = &self.contention;
        // Seed 000 Eq 3.10: overhead keeps VMs busy but is not computation.
        let computing = (busy - c.overhead_pe_seconds).max(0.0);
        out.metrics.extend([
            ("utilisation", if capacity > 0.0 { computing / capacity } else { 0.0 }),
            ("busy_pe_seconds", busy),
            ("local_requests", c.local_requests as f64),
            ("local_rejected", c.local_rejected as f64),
            ("preempted_leases", c.preempted_leases as f64),
            ("preempted_vms", c.preempted_vms as f64),
            ("preemption_overhead", c.overhead),
            ("overhead_pe_seconds", c.overhead_pe_seconds),
            ("search_fallbacks", c.search_fallbacks as f64),
            ("preempted_migratable", c.preempted_migratable as f64),
            ("migrated_out", c.migrated_out as f64),
            ("migrated_in", c.migrated_in as f64),
            ("deadline_missed", c.deadline_missed as f64),
            ("owner_suspends", c.owner_suspends as f64),
            ("accepted", self.accepted as f64),
            ("rejected", self.rejected as f64),
            ("completed", self.completed as f64),
            ("revenue", self.revenue),
            ("pes", f64::from(self.config.pes)),
        ]);
        out.series.push(("busy_pes", self.busy.clone()));
        out.series.push(("queued", self.queued.clone()));
    }
}

/// The PEs a provider has, for brokers and gateways that choose among providers.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProviderInfo {
    /// The provider -- peer.
    pub id: AgentId,
    /// PEs.
    pub pes: u32,
    /// Speed relative to the reference PE.
    pub speed: f64,
    /// Price [G$ per PE-second].
    pub price: f64,
}
