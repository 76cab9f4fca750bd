//! Resource provider: a cluster of PEs with a local scheduler, a price, and the jobs of its users.
//!
//! Receives `Job::Submit` (from user brokers and gateways), `Job::Cancel` (from a job's owner),
//! `Market::SlaRequest` (from personalised brokers, seed 003 ch3), `Lease::Reserve`/`Release` (advance
//! reservations) and `Market::SlotsQuery` (free-slot advertisement); sends `Job::Accepted`/`Rejected`/`Started`/
//! `Completed`, `Lease::Cancelled`, `Market::SlaAccept`/`SlaFail`, `Lease::Reserved`/`ReserveRefused` and
//! `Market::FreeSlots`. Which queued job starts when is delegated to the configured [`SchedulerPolicy`] (FCFS, EASY,
//! conservative or multi-partition EASY backfilling, see [`scheduler`]). A job runs for its actual runtime scaled by
//! the provider's speed; the scheduler plans with the user's estimate.

pub mod overhead;
pub mod preemption;
pub mod profile;
pub mod scheduler;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::kernel::{Agent, AgentId, Ctx, Envelope, SimTime, TimerId};
use crate::protocol::{JobId, JobMsg, JobSpec, LeaseMsg, MarketMsg, Msg, TimerMsg};
use crate::report::{Report, Series};
use scheduler::{LocalScheduler, Partitioning, QueuedJob, ReservationId, ReservationRequest, SchedulerPolicy, Started};

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

    /// Queues a job; answers `Accepted` (then `Started` when it starts) or `Rejected`.
    fn on_submit(&mut self, job: JobSpec, ctx: &mut Ctx<'_>) {
        let (id, owner) = (job.id, job.owner);
        match self.admit(job, ctx.now()) {
            Ok(started) => {
                ctx.send(owner, Msg::Job(JobMsg::Accepted { job: id }));
                self.start(started, ctx);
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
        let estimate = self.scaled(job.estimate.max(job.runtime));
        let can_start_now = self.scheduler.earliest_start(now, job.pes, estimate, None).is_ok_and(|s| s <= now);
        let (id, owner) = (job.id, job.owner);
        match can_start_now.then(|| self.admit(job, ctx.now())) {
            Some(Ok(started)) => {
                ctx.send(owner, Msg::Market(MarketMsg::SlaAccept { job: id, price: self.config.price }));
                self.start(started, ctx);
            }
            _ => ctx.send(owner, Msg::Market(MarketMsg::SlaFail { job: id })),
        }
        self.after_event(ctx);
    }

    /// Queues a job with the scheduler; returns what starts now (the caller answers the owner first).
    fn admit(&mut self, job: JobSpec, now: SimTime) -> Result<Vec<Started>, String> {
        let now = now.secs();
        let runtime = self.scaled(job.runtime);
        // Batch systems kill a job at its estimate; workloads give estimates >= runtimes, and a shorter one is
        // raised to the runtime rather than silently cutting the job.
        let estimate = self.scaled(job.estimate.max(job.runtime));
        let queued = QueuedJob { id: job.id, submit: now, pes: job.pes, estimate, partition: None };
        let id = job.id;
        let started = self.scheduler.submit(now, queued).map_err(|e| e.to_string())?;
        self.accepted += 1;
        self.waiting_now += 1;
        self.jobs.insert(id, LocalJob { spec: job, runtime, start: None, end_timer: None });
        Ok(started)
    }

    fn start(&mut self, started: Vec<Started>, ctx: &mut Ctx<'_>) {
        for s in started {
            let Some(job) = self.jobs.get_mut(&s.id) else { continue };
            job.start = Some(ctx.now());
            self.busy_now += job.spec.pes;
            self.waiting_now -= 1;
            ctx.send(job.spec.owner, Msg::Job(JobMsg::Started { job: s.id }));
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
        match self.scheduler.complete(ctx.now().secs(), id) {
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
        let result = match job.start {
            None => {
                self.waiting_now -= 1;
                self.scheduler.remove(now.secs(), id).map(|(_, started)| started)
            }
            Some(start) => {
                self.busy_now -= job.spec.pes;
                if let Some(timer) = job.end_timer {
                    ctx.cancel(timer);
                }
                let used = now.secs() - start.secs();
                self.revenue += self.config.price * f64::from(job.spec.pes) * used;
                self.scheduler.complete(now.secs(), id)
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

    /// Free-slot advertisement: the maximal free rectangles of the availability profile.
    fn on_slots_query(&mut self, from: AgentId, horizon: f64, ctx: &mut Ctx<'_>) {
        let slots = self.scheduler.free_slots(ctx.now().secs(), horizon, None).unwrap_or_default();
        let slots = slots.into_iter().map(|s| (s.start, s.end, s.pes)).collect();
        ctx.send(from, Msg::Market(MarketMsg::FreeSlots { slots }));
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
    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>) {
        match &env.msg {
            Msg::Job(JobMsg::Submit(job)) => self.on_submit((**job).clone(), ctx),
            Msg::Market(MarketMsg::SlaRequest(job)) => self.on_sla_request((**job).clone(), ctx),
            Msg::Job(JobMsg::Cancel { job }) => self.on_cancel(*job, env.from(), ctx),
            Msg::Lease(LeaseMsg::Reserve { request, start, end, pes }) => {
                self.on_reserve(env.from(), *request, (*start, *end, *pes), ctx)
            }
            Msg::Lease(LeaseMsg::Release { reservation }) => self.on_release(*reservation, ctx),
            Msg::Market(MarketMsg::SlotsQuery { horizon }) => self.on_slots_query(env.from(), *horizon, ctx),
            Msg::Market(MarketMsg::Payment { .. }) => {}
            Msg::Timer(TimerMsg::JobEnd { job }) => self.on_job_end(*job, ctx),
            Msg::Timer(TimerMsg::Wakeup) => self.on_wakeup(ctx),
            other => tracing::error!(provider = ctx.name(), kind = other.kind(), "unhandled message"),
        }
    }

    fn report(&self, now: SimTime, out: &mut Report) {
        let span = now.secs();
        let capacity = f64::from(self.config.pes) * span;
        let busy = self.busy.integral(span);
        out.metrics.extend([
            ("utilisation", if capacity > 0.0 { busy / capacity } else { 0.0 }),
            ("busy_pe_seconds", busy),
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
