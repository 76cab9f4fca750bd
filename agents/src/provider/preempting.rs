//! Preemption at the provider: local requests that preempt leases, preemptive-resume priority, and what becomes of
//! a preempted lease by its type (restart, resume here, migrate or drop). [`super::preemption`] holds the policies
//! that choose what to preempt.

use std::collections::BTreeMap;

use super::preemption::{Contention, LeaseTerms, PreemptionPolicy, SearchLimits};
use super::scheduler::{QueuedJob, Rejected, ReservationId, ReservationRequest, Started};
use super::{CancelledLeases, LocalJob, Provider};
use crate::model::{JobId, LeaseType, PreemptionKind};
use crate::protocol::{JobMsg, JobSpec, LeaseMsg, Migration, Msg, TimerMsg};
use crate::registry::{Metric, Unit};
use crate::sim::{Ctx, SimTime};

/// The preemption capability's state.
#[derive(Debug, Default)]
pub(super) struct Preemption {
    /// What contention cost.
    pub(super) stats: ContentionStats,
    /// Leases out of the scheduler until someone decides: suspended migratable leases whose gateway is looking
    /// for a destination, and leases their owner suspended. The lease as evicted from the scheduler, its remaining
    /// runtime here and its overhead [s].
    pub(super) parked: BTreeMap<JobId, (QueuedJob, f64, f64)>,
    /// Jobs that arrived in this instant, which may preempt lower classes once the pass has placed them
    /// (preemptive-resume priority).
    pub(super) arrivals: Vec<JobId>,
}

/// What contention cost, for the metrics of Amini Salehi (2012) ch3.
#[derive(Clone, Debug, Default)]
pub(super) struct ContentionStats {
    pub(super) local_requests: u64,
    pub(super) local_rejected: u64,
    /// Leases preempted (running or holding a queued reservation).
    pub(super) preempted_leases: u64,
    /// VMs of the running leases preempted.
    pub(super) preempted_vms: u64,
    /// Σ h(C) over the chosen sets [s].
    pub(super) overhead: f64,
    /// Σ v·h(L): PE-seconds the overhead keeps busy, which are not computation.
    pub(super) overhead_pe_seconds: f64,
    /// PE-seconds cancelled leases ran before their preemption: busy, but their work is lost, so not computation.
    pub(super) lost_pe_seconds: f64,
    /// Exact searches that hit the limit and fell back to the greedy policy.
    pub(super) search_fallbacks: u64,
    /// Running migratable leases preempted (Amini Salehi 2012, ch4's migration rate is `migrated /
    /// preempted_migratable`).
    pub(super) preempted_migratable: u64,
    /// Leases that left for another provider.
    pub(super) migrated_out: u64,
    /// Leases that arrived from another provider.
    pub(super) migrated_in: u64,
    /// Deadline-constrained leases whose plan after a preemption ends past their deadline.
    pub(super) deadline_missed: u64,
    /// Leases their owner suspended (`Lease::Suspend`).
    pub(super) owner_suspends: u64,
}

/// Which external leases a local request may preempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Victims {
    /// Running leases (suspended, cancelled or migrated by type) and planned ones (planned anew).
    RunningOrPlanned,
    /// Planned ones only: a request made ahead preempts no running lease before its start.
    Planned,
}

impl Provider {
    /// A local request (Amini Salehi 2012, ch3) must run from now for its duration, or, made ahead, from its `start`:
    /// in free capacity if there is enough, else in capacity the preemption policy frees; otherwise it is rejected.
    pub(super) fn on_local_request(&mut self, job: JobSpec, ctx: &mut Ctx<'_>) {
        self.preemption.stats.local_requests += 1;
        match job.start.filter(|&at| at > ctx.now()) {
            Some(at) => self.reserve_ahead(job, at, ctx),
            None => self.place_local(job, ctx),
        }
        self.after_event(ctx);
    }

    /// Places a local request that must start now (or when the nodes switched on for it are ready).
    pub(super) fn place_local(&mut self, job: JobSpec, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        let estimate = self.config.planned_duration(&job);
        let (start, _) = self.power_for_local(job.pes, now, estimate, ctx);
        let placed = if !(estimate.is_finite() && estimate > 0.0) {
            Err("a local request needs a positive duration".into())
        } else {
            let request = ReservationRequest { start, end: start + estimate, pes: job.pes, partition: None };
            match self.scheduler.reserve(now, request) {
                Ok(r) => Ok((r, Vec::new())),
                Err(Rejected::Unavailable) => self.preempt_for(&request, Victims::RunningOrPlanned, ctx),
                Err(e) => Err(e.to_string()),
            }
        };
        match placed {
            Ok((reservation, started)) => {
                self.accept_local(job, reservation, start, ctx);
                self.start(started, ctx);
            }
            Err(reason) => {
                self.rejected += 1;
                self.preemption.stats.local_rejected += 1;
                ctx.send(job.owner, Msg::Job(JobMsg::Rejected { job: job.id, reason }));
            }
        }
    }

    /// A local request made ahead of its start `at` (an advance reservation; the form of the local requests of the
    /// thesis's setting, made a day ahead): the energy policy decides now (Algorithm 5 runs on a local request's
    /// arrival) and the window is held now, in free capacity, in nodes switched on for it or by taking planned
    /// external leases off it, which are planned anew. Running leases are never preempted ahead of time: if they
    /// hold more of the window than every off node could replace, the request is placed at its start as if made
    /// then (and answered then). One the cluster can never hold is refused at once.
    fn reserve_ahead(&mut self, job: JobSpec, at: SimTime, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        let estimate = self.config.planned_duration(&job);
        if !(estimate.is_finite() && estimate > 0.0) || job.pes > self.config.pes {
            return self.place_local(job, ctx);
        }
        let window = ReservationRequest { start: at, end: at + estimate, pes: job.pes, partition: None };
        // What only running leases and other holds take of the window must be replaceable by nodes switched on.
        let holdable =
            self.contention(&window, Victims::Planned, now).uncovered() <= self.switchable_through(at, window.end, now);
        let held = if holdable {
            let (start, consolidate) = self.power_for_local(job.pes, at, estimate, ctx);
            let request = ReservationRequest { start, end: start + estimate, pes: job.pes, partition: None };
            let placed = match self.scheduler.reserve(now, request) {
                Ok(r) => Ok((r, Vec::new())),
                Err(_) => self.preempt_for(&request, Victims::Planned, ctx),
            };
            placed.ok().map(|(reservation, started)| (reservation, started, start, consolidate))
        } else {
            None
        };
        match held {
            Some((reservation, started, start, consolidate)) => {
                self.accept_local(job, reservation, start, ctx);
                self.start(started, ctx);
                if consolidate > 0 {
                    self.consolidate(consolidate, start, 0, ctx);
                }
            }
            // Running leases hold the window (or the plan still refuses it after the check): placed at its start.
            None => {
                ctx.wake_in(at - now, TimerMsg::SlotStart { job: job.id });
                self.ahead.insert(job.id, job);
            }
        }
    }

    /// A local request holds `reservation` from `start`: accepted, it starts then.
    fn accept_local(&mut self, job: JobSpec, reservation: ReservationId, start: SimTime, ctx: &mut Ctx<'_>) {
        let (now, id) = (ctx.now(), job.id);
        ctx.send(job.owner, Msg::Job(JobMsg::Accepted { job: id }));
        let runtime = self.config.scaled(job.runtime);
        self.accepted += 1;
        self.jobs.insert(id, LocalJob::new(job, runtime, Some(reservation)));
        self.waiting_now += 1;
        if start > now {
            // Its nodes are booting, or it was made ahead: it starts at its window.
            ctx.wake_in(start - now, TimerMsg::SlotStart { job: id });
        } else {
            self.start(vec![Started { id, start: now }], ctx);
        }
    }

    /// The contention of `request` in the plan as it stands at `now`, with the external leases `victims` allows as
    /// candidates.
    pub(super) fn contention(&self, request: &ReservationRequest, victims: Victims, now: SimTime) -> Contention {
        let memory_mb = self.config.vm_memory_mb;
        let jobs = &self.jobs;
        let terms = |id: JobId| {
            let job = jobs.get(&id).filter(|j| victims == Victims::RunningOrPlanned || j.start.is_none())?;
            let lease_type = job.spec.lease?;
            let deadline = job.deadline_here();
            Some(LeaseTerms { lease_type, memory_mb: job.spec.memory_mb.unwrap_or(memory_mb), deadline })
        };
        Contention::from_scheduler(&self.scheduler, now, request, &self.config.overhead, terms)
    }

    /// Chooses leases to preempt for `request` with the configured policy, preempts them and holds the request's
    /// reservation; returns it with the jobs that start in capacity the preemption freed beyond the request.
    fn preempt_for(
        &mut self,
        request: &ReservationRequest,
        victims: Victims,
        ctx: &mut Ctx<'_>,
    ) -> Result<(ReservationId, Vec<Started>), String> {
        let now = ctx.now();
        let contention = self.contention(request, victims, now);
        let limits = SearchLimits::default();
        let chosen = match self.config.preemption.select(&contention, limits) {
            Ok(set) => set,
            Err(_) => {
                // Too many candidates for an exact search: the prototype's greedy ordering never fails.
                self.preemption.stats.search_fallbacks += 1;
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
        self.preemption.stats.overhead += set.overhead;
        for evicted in preempted.evicted {
            let overhead = victims.iter().find(|v| v.0 == evicted.id).map_or(0.0, |v| v.1);
            self.requeue_preempted(evicted, overhead, ctx);
        }
        Ok((preempted.reservation, preempted.started))
    }

    /// Preemptive-resume priority: while job `id` waits, suspend the youngest running job of the lowest class below
    /// its own (never a local lease, which holds a reservation).
    pub(super) fn preempt_lower_classes(&mut self, id: JobId, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        while let Some(waiting) = self.jobs.get(&id).filter(|j| j.start.is_none()) {
            let class = waiting.spec.priority;
            // Leases without a reservation run only as the scheduler started them: look among its running jobs,
            // not the whole (possibly long) queue.
            let jobs = &self.jobs;
            let victim = self
                .scheduler
                .running()
                .filter_map(|r| jobs.get_key_value(&r.id))
                .filter(|(_, j)| j.start.is_some() && j.reservation.is_none() && j.spec.priority > class)
                .max_by(|a, b| {
                    a.1.spec.priority.cmp(&b.1.spec.priority).then(a.1.start.cmp(&b.1.start)).then(a.0.cmp(b.0))
                })
                .map(|(&v, _)| v);
            let Some(victim) = victim else { break };
            let Ok((remaining, _)) = self.scheduler.suspend(now, victim) else { break };
            self.requeue_preempted(remaining, 0.0, ctx);
            // At the end of the instant already: see at once whether the job can start now.
            let started = self.scheduler.pass(now);
            self.start(started, ctx);
        }
    }

    /// A preempted lease, already out of the scheduler: tell its owner, then restart, resume, migrate or drop it
    /// by type.
    pub(super) fn requeue_preempted(&mut self, evicted: QueuedJob, overhead: f64, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        let speed = self.config.speed;
        let Some(job) = self.jobs.get_mut(&evicted.id) else { return };
        self.preemption.stats.preempted_leases += 1;
        let Some(start) = job.start else {
            // A queued reservation gives way and is planned again; its VMs did not exist yet.
            let requeued = QueuedJob { submit: now, ..evicted };
            let started = self.scheduler.submit(now, requeued).unwrap_or_default();
            return self.start(started, ctx);
        };
        let kind = job.spec.lease.and_then(LeaseType::preemption).unwrap_or(PreemptionKind::Suspend);
        let vms = job.spec.pes;
        if let Some(timer) = job.end_timer.take() {
            ctx.cancel(timer);
        }
        self.busy_now -= vms;
        self.preemption.stats.preempted_vms += u64::from(vms);
        ctx.send(job.spec.owner, Msg::Lease(LeaseMsg::Preempted { lease: evicted.id, kind, overhead }));
        let done = now - start;
        job.pause(now);
        job.preempted = true;
        // The remaining runtime never exceeds the scheduler's remaining estimate (rounding could make it a few ulps
        // longer, and the scheduler frees the PEs at the estimate).
        let remaining = (job.runtime - done).min(evicted.estimate);
        if kind == PreemptionKind::Migrate {
            self.preemption.stats.preempted_migratable += 1;
        }
        if kind == PreemptionKind::Cancel {
            // What it computed is lost: busy PE-seconds that are not computation.
            self.preemption.stats.lost_pe_seconds += f64::from(vms) * job.computed;
        }
        match (kind, job.via) {
            // The work is lost and not billed, but the nodes drew power for it: its energy is booked.
            (PreemptionKind::Cancel, _) if self.config.cancelled == CancelledLeases::Drop => {
                let job = self.jobs.remove(&evicted.id).expect("found above");
                self.charge_lease(&job, now);
                self.rejected += 1;
                let reason = "cancelled by preemption".to_string();
                ctx.send(job.spec.owner, Msg::Job(JobMsg::Rejected { job: evicted.id, reason }));
            }
            // The work is lost (and not billed): start again from scratch.
            (PreemptionKind::Cancel, _) => {
                job.computed = 0.0;
                job.plan(job.runtime, 0.0, job.runtime);
                let estimate = job.runtime.max(evicted.estimate + done);
                self.queue_again(QueuedJob { estimate, ..evicted }, ctx);
            }
            (PreemptionKind::Migrate, Some(gateway)) => {
                let mut lease = job.spec.clone();
                (lease.runtime, lease.estimate) = (remaining * speed, evicted.estimate * speed);
                let migration = Migration { lease, source: ctx.me(), overhead };
                ctx.send(gateway, Msg::Lease(LeaseMsg::Migrate(Box::new(migration))));
                self.preemption.parked.insert(evicted.id, (evicted, remaining, overhead));
            }
            // Suspended, or migrating without a gateway to find a destination: resume here once the scheduler
            // finds room, with the overhead on its VMs.
            (PreemptionKind::Suspend | PreemptionKind::Migrate, _) => {
                self.resume_here(evicted, remaining, overhead, ctx)
            }
        }
    }

    /// Queues a suspended lease again with `remaining` seconds of work plus the overhead its VMs spend on resuming.
    pub(super) fn resume_here(&mut self, evicted: QueuedJob, remaining: f64, overhead: f64, ctx: &mut Ctx<'_>) {
        let Some(job) = self.jobs.get_mut(&evicted.id) else { return };
        // Overhead left from an earlier resume, if it was preempted again that early, is still to be spent.
        let left = job.overhead;
        job.plan(remaining + overhead, left + overhead, remaining - left);
        self.preemption.stats.overhead_pe_seconds += f64::from(job.spec.pes) * overhead;
        let (id, deadline, owner) = (evicted.id, job.spec.deadline, job.spec.owner);
        let estimate = evicted.estimate + overhead;
        self.queue_again(QueuedJob { estimate, ..evicted }, ctx);
        // Only a scheduler that plans every queued job (conservative backfilling) knows the new completion. Asked only
        // for a lease with a deadline: before the instant's pass, the answer costs a planning of the queue.
        if let Some(deadline) = deadline
            && let Some(start) = self.scheduler.planned_start(id)
        {
            let expected_end = start + estimate;
            if expected_end > deadline {
                self.preemption.stats.deadline_missed += 1;
                ctx.send(owner, Msg::Lease(LeaseMsg::DeadlineMissed { lease: id, expected_end }));
            }
        }
    }

    /// Queues an evicted lease again as if submitted now.
    fn queue_again(&mut self, evicted: QueuedJob, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        self.waiting_now += 1;
        let id = evicted.id;
        match self.scheduler.submit(now, QueuedJob { submit: now, ..evicted }) {
            Ok(started) => self.start(started, ctx),
            Err(e) => tracing::error!(provider = ctx.name(), lease = id, "requeue refused: {e}"),
        }
    }
}

/// The preemption capability's metrics (Amini Salehi 2012, ch3–4).
pub(super) const METRICS: &[Metric] = &[
    Metric::new("local_requests", Unit::Count, "requests from the provider's own (local) users"),
    Metric::new("local_rejected", Unit::Count, "local requests rejected"),
    Metric::new("preempted_leases", Unit::Count, "leases preempted, running or holding a queued reservation"),
    Metric::new("preempted_vms", Unit::Count, "VMs of the running leases preempted"),
    Metric::new("preemption_overhead", Unit::Seconds, "the overhead h(C) of the preempted sets, summed"),
    Metric::new("overhead_pe_seconds", Unit::PeSeconds, "PE-seconds the preemption overhead kept busy"),
    Metric::new("lost_pe_seconds", Unit::PeSeconds, "PE-seconds cancelled leases ran before their preemption"),
    Metric::substitution(
        "search_fallbacks",
        "exact preemption searches that hit their limit and fell back to the greedy policy",
    ),
    Metric::new("preempted_migratable", Unit::Count, "running migratable leases preempted"),
    Metric::new("migrated_out", Unit::Count, "leases that left for another provider"),
    Metric::new("migrated_in", Unit::Count, "leases that arrived from another provider"),
    Metric::new(
        "deadline_missed",
        Unit::Count,
        "deadline-constrained leases whose plan after a preemption ends past their deadline",
    ),
    Metric::new("owner_suspends", Unit::Count, "leases their owner suspended"),
];
