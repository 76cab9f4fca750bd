//! Resource provider: a cluster of PEs with a local scheduler, a price, and the jobs of its users.
//!
//! Receives `Job::Submit` (from user brokers and gateways), `Job::SubmitReserved` (a job with a meta-broker's
//! ticket), `Job::Cancel` (from a job's owner), `Market::SlaRequest` (from personalised brokers, Garg (2010) ch3),
//! `Lease::Reserve`/`Release` (advance reservations), `Market::SlotsQuery` (a meta-broker's catalogue update),
//! `Market::QueueQuery` and `Market::Matched` (a double-auction-inspired meta-broker's collection and matches, Garg
//! (2010) ch7),
//! `Lease::Migrate`/`Migrated`/`Resume` (lease migration through a gateway) and `Lease::Suspend`/`Resume` (from a
//! lease's owner); sends `Job::Accepted`/`Rejected`/`Started`/`Completed`, `Lease::Cancelled`,
//! `Market::SlaAccept`/`SlaFail`, `Lease::Reserved`/`ReserveRefused`, `Market::RegisterProvider` (at start, to every
//! meta-broker), `Market::ResourceUpdate` and `Market::QueueInfo`, `Lease::Preempted`/`Resumed`/`DeadlineMissed` to the owners of
//! preempted leases, and `Lease::Migrate` (a lease leaving) and `Migrated`/`MigrateRefused` (a lease arriving) to
//! gateways.
//!
//! Leases (Amini Salehi 2012, ch3): a local request must start at once for its duration; when the cluster cannot hold
//! it, the configured [`PreemptionPolicy`] (NOP, MOV, MLIP, MOML and the prototype's greedy variants, see
//! [`preemption`]) chooses external leases to preempt, each by its type (cancel, suspend, migrate), with the overhead
//! of the configured [`OverheadModel`] occupying its VMs when it resumes. Deadline-constrained external leases are
//! admitted only if their planned completion meets the deadline. Which queued job starts when is delegated to the
//! configured [`SchedulerPolicy`] (FCFS, EASY, conservative or multi-partition EASY backfilling, see [`scheduler`]), in
//! arrival order or that of a [`QueueOrder`]. A job runs for its actual runtime scaled by the provider's speed; the
//! scheduler plans with the user's estimate.
//!
//! This file holds the agent: its configuration and state, the message dispatch and the report. Its handlers are
//! grouped by concern: `lifecycle` (submission, admission, start, end, wake-ups), `reservations` (SLA claims,
//! advance reservations, reserved slots, slot queries), `preempting` (local requests, preemptive priority, what
//! becomes of a preempted lease), `migration` (leases migrating in, parked leases settled) and `owner` (an owner's
//! suspend and cancel).
//!
//! A provider is a core (the scheduler, the jobs' life cycle, billing) and the capabilities its scenario table turns
//! on, each in its own file with its own state, keys and metrics (the decisions of pricing, admission, preemption,
//! energy and trading are unit-tested without a provider):
//!
//! | capability | turned on by (keys) | state | reads the core through |
//! |---|---|---|---|
//! | pricing | `pricing` (default: the price, fixed) | [`pricing`]`::Pricing` | `PricingView` |
//! | admission | `admission` | `external::ExternalRequests` | a lease's "still here?" |
//! | preemption | `preemption`, `overhead`, `cancelled` | `preempting::Preemption` | the plan (`Contention`) |
//! | energy | `energy` | `energy::Energy` | the plan alone |
//! | trading | `exchange`, `sell`, `asking`… | `trading::Seller` | `TradingView` |
//! | SLA, reservations | `sla` | `reservations::Claims` | the plan |
//!
//! A capability decides; what moves leases (starting, suspending, re-planning, migrating them) the core carries out,
//! so that one place keeps a lease's books: consolidation is sized by the energy capability and done by the
//! provider, victims are chosen by the preemption policy and preempted by the provider. The message dispatch below
//! is grouped by capability.

pub mod admission;
pub mod kind;
pub mod overhead;
pub mod pemp;
pub mod power;
pub mod preemption;
pub mod price_rules;
pub mod pricing;
pub mod profile;
pub mod scheduler;
mod trading;

pub use energy::{EnergyConfig, RawEnergy, SwitchOff};
pub use trading::{ExchangeTrading, Sell};

pub use crate::model::ProviderInfo;

mod energy;
mod external;
mod lifecycle;
mod migration;
mod owner;
mod preempting;
mod reservations;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ledger::{Book, Transfer};
use crate::model::{JobId, LeaseType, Service};
use crate::protocol::{JobMsg, JobSpec, LeaseMsg, MarketMsg, Msg, TimerMsg};
use crate::report::{Capacity, Holds, Report, Series};
use crate::sim::{Agent, AgentId, Ctx, Envelope, GridMarket, SimTime, TimerId};
use admission::{Admission, AdmissionConfig};
use overhead::OverheadModel;
use preemption::PreemptionPolicy;
use scheduler::{LocalScheduler, Partitioning, QueueOrder, Rejected, ReservationId, SchedulerPolicy};

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
    /// How a local request that does not fit is resolved (Amini Salehi 2012, ch3).
    pub preemption: PreemptionPolicy,
    /// Overhead of preempting a lease.
    pub overhead: OverheadModel,
    /// Memory of one VM \[MB\], for the overhead model (Amini Salehi 2012: 1,024 MB).
    pub vm_memory_mb: f64,
    /// What happens to a preempted cancellable lease.
    pub cancelled: CancelledLeases,
    /// Preemptive-resume priority: a job that cannot start suspends running jobs of lower priority classes
    /// (youngest of the lowest class first), which resume later with their remaining work.
    pub preemptive_priority: bool,
}

impl ProviderConfig {
    /// Runtime here of work that takes `secs` on a reference PE.
    fn scaled(&self, secs: f64) -> f64 {
        secs / self.speed
    }

    /// The duration the scheduler plans for `job` here. Batch systems kill a job at its estimate; workloads give
    /// estimates >= runtimes, and a shorter one is raised to the runtime rather than silently cutting the job.
    fn planned_duration(&self, job: &JobSpec) -> f64 {
        self.scaled(job.estimate.max(job.runtime))
    }
}

/// Which claims of personalised brokers (`Market::SlaRequest`, Garg 2010 ch3) a provider grants.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SlaRule {
    /// Every claim it can start at once, while its free PEs last.
    #[default]
    Capacity,
    /// Only the first claim of an instant, if it can start at once; the others of that instant fail even if PEs
    /// are left: Garg (2010) §3.6, "the resource owner would select only the first user and would send a fail SLA
    /// for all other users".
    First,
}

/// The deadline of a molded request (Amini Salehi, Javadi & Buyya draw it as a ratio N(2, 1) or N(4, 1) of the
/// runtime as submitted, and do not say what molding does to it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum MoldedDeadline {
    /// It keeps its ratio to the runtime: the molded runtime's share of the time left (the default).
    #[default]
    Scaled,
    /// It stays as submitted: the ratio was drawn for the request as the user sent it.
    Submitted,
}

/// What becomes of a cancelled best-effort lease. Amini Salehi (2012) leaves it open (§3.2.1: "restart" or "terminate
/// early").
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
    /// Seconds it computed here in earlier runs, not billed yet.
    computed: f64,
    /// Seconds its VMs held nodes in earlier runs (computing, in overhead or lost), for its energy.
    held: f64,
    /// Of `runtime`, the seconds of preemption overhead its VMs spend first (not computation) and the seconds of
    /// computation after them.
    overhead: f64,
    work: f64,
    /// Its lease was paid when reserved (an exchange's contract): nothing more is billed.
    prepaid: bool,
    /// The price its reservation was matched at [G$ per PE-second] (a meta-broker's clearing price); `None`: the
    /// provider's own.
    price: Option<f64>,
}

impl LocalJob {
    /// A job accepted here, not started yet, that computes for `runtime` seconds.
    fn new(spec: JobSpec, runtime: f64, reservation: Option<ReservationId>) -> LocalJob {
        let (start, end_timer, preempted, via, computed, overhead) = (None, None, false, None, 0.0, 0.0);
        let (prepaid, price) = (false, None);
        LocalJob {
            spec,
            runtime,
            start,
            end_timer,
            reservation,
            preempted,
            via,
            computed,
            held: 0.0,
            overhead,
            work: runtime,
            prepaid,
            price,
        }
    }

    /// Plans its next run of `runtime` seconds: `overhead` seconds of preemption overhead, then `work` seconds of
    /// computation. (The runtime is given, not summed: it must never exceed what the scheduler planned, and the
    /// sum may round above the caller's bound.)
    fn plan(&mut self, runtime: f64, overhead: f64, work: f64) {
        (self.runtime, self.overhead, self.work) = (runtime, overhead, work);
    }

    /// The deadline preempting it must respect here: a migratable lease with no gateway to find it another
    /// provider can only resume here, so it must still meet its deadline.
    fn deadline_here(&self) -> Option<SimTime> {
        let stays = self.spec.lease == Some(LeaseType::Migratable) && self.via.is_none();
        self.spec.deadline.filter(|_| stays)
    }

    /// Stops the current run at `now`, before its runtime elapsed: what it ran past its overhead is computed.
    fn pause(&mut self, now: SimTime) {
        let Some(start) = self.start.take() else { return };
        let ran = now - start;
        self.held += ran;
        let spent = ran.min(self.overhead);
        self.computed += ran - spent;
        self.overhead -= spent;
        self.work -= ran - spent;
    }
}

/// The resource provider agent.
pub struct Provider {
    config: ProviderConfig,
    scheduler: LocalScheduler,
    jobs: BTreeMap<JobId, LocalJob>,
    /// The pending wake-up the scheduler asked for, and when.
    wakeup: Option<(SimTime, TimerId)>,
    busy: Series,
    queued: Series,
    busy_now: u32,
    waiting_now: u32,
    accepted: u64,
    rejected: u64,
    completed: u64,
    /// What this provider billed (see `crate::ledger` for the rules).
    book: Book,
    /// What contention cost, the leases parked out of the scheduler, the jobs that may preempt this instant.
    preemption: preempting::Preemption,
    /// How it sells on an exchange, and its standing there.
    exchange: Option<trading::Seller>,
    /// The SLA claims it grants and the terms of the reservations others made.
    claims: reservations::Claims,
    /// How its price moves, and the requests it saw.
    pricing: pricing::Pricing,
    /// Node power states and their management (Amini Salehi 2012, ch6), if it has them.
    energy: Option<Box<energy::Energy>>,
    /// Moldable requests: a job's work (PEs × runtime) spreads over all the cluster's PEs (Amini Salehi, Javadi &
    /// Buyya: "the number of VMs required by a request adapts to the number of VMs in the allocated cluster and the
    /// duration of the request changes accordingly"), its deadline as [`MoldedDeadline`] says; `None`: rigid.
    moldable: Option<MoldedDeadline>,
    /// Local requests made ahead whose window could not be held when they were made: placed at their start.
    ahead: BTreeMap<JobId, JobSpec>,
    /// External requests (forwarded by a gateway) and their admission control (see [`admission`]).
    externals: external::ExternalRequests,
}

impl Provider {
    /// A provider with an empty cluster.
    pub fn new(config: ProviderConfig) -> Provider {
        let mut scheduler = match config.scheduler {
            SchedulerPolicy::MultiPartitionEasy => LocalScheduler::multi_partition(config.pes, &config.partitioning),
            policy => LocalScheduler::new(policy, config.pes),
        };
        // One queue pass per instant, once every event of the instant is in (see `end_of_instant`).
        scheduler.defer_passes();
        Provider {
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
            book: Book::default(),
            preemption: preempting::Preemption::default(),
            exchange: None,
            claims: reservations::Claims::default(),
            pricing: pricing::Pricing::new(pricing::PricingConfig::default(), config.price),
            energy: None,
            moldable: None,
            ahead: BTreeMap::new(),
            externals: external::ExternalRequests::default(),
            config,
        }
    }

    /// A provider whose admission control refuses external requests beyond the K of `config`.
    pub fn with_admission(mut self, config: AdmissionConfig) -> Provider {
        self.externals.admission = Some(Admission::new(config));
        self
    }

    /// A provider that molds every request to its whole cluster, its deadline by `deadline` (see the field
    /// `moldable`).
    pub fn moldable(mut self, deadline: MoldedDeadline) -> Provider {
        self.moldable = Some(deadline);
        self
    }

    /// A provider that grants the SLA claims of personalised brokers by `rule` (default: while its PEs last).
    pub fn with_sla(mut self, rule: SlaRule) -> Provider {
        self.claims.sla = rule;
        self
    }

    /// A provider whose FCFS or EASY queue is considered in `order` rather than by arrival; refused under
    /// conservative backfilling, which plans in arrival order.
    pub fn with_queue_order(mut self, order: &'static dyn QueueOrder) -> Result<Provider, Rejected> {
        self.scheduler.order_by(order)?;
        Ok(self)
    }

    /// The configuration.
    pub fn config(&self) -> &ProviderConfig {
        &self.config
    }

    /// Bills `job`'s owner for `seconds` of computation on its PEs here, booked now; returns the amount (0, and
    /// nothing booked, for no money).
    fn bill(&mut self, job: &LocalJob, seconds: f64, ctx: &Ctx<'_>) -> f64 {
        let price = job.price.or(self.pricing.agreed(job.spec.id)).unwrap_or(self.config.price);
        let amount = price * f64::from(job.spec.pes) * seconds;
        if amount == 0.0 || job.prepaid {
            return 0.0;
        }
        self.book.book(Transfer::usage(ctx.now(), ctx.me(), job.spec.owner, amount, job.spec.id))
    }
}

impl Agent<GridMarket> for Provider {
    /// Joins every meta-broker's market (one that does not schedule on this provider refuses).
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        self.start_pricing(ctx);
        if let Some(trading) = &self.exchange {
            trading.register(ctx);
        }
        for &mb in ctx.offering(Service::SchedulesOnProviders.name()).to_vec().iter() {
            let me = self.resource_update(ctx.now(), 0.0);
            ctx.send(mb, Msg::Market(MarketMsg::RegisterProvider(me)));
        }
    }

    /// The instant's one queue pass, after all its events; then, with preemptive-resume priority, what the
    /// instant's arrivals of higher classes preempt.
    fn end_of_instant(&mut self, ctx: &mut Ctx<'_>) {
        let started = self.scheduler.pass(ctx.now());
        self.start(started, ctx);
        for id in std::mem::take(&mut self.preemption.arrivals) {
            self.preempt_lower_classes(id, ctx);
        }
        self.power_after_pass(ctx.now());
        self.after_event(ctx);
    }

    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>) {
        self.on_request_seen(&env.msg, ctx.now());
        match &env.msg {
            // The core: jobs in, cancelled and ended; the scheduler's wake-ups; what meta-brokers ask of its plan.
            Msg::Job(JobMsg::Submit(job)) => self.on_submit((**job).clone(), env.from(), false, ctx),
            Msg::Job(JobMsg::Reoffer(job)) => self.on_submit((**job).clone(), env.from(), true, ctx),
            Msg::Job(JobMsg::Cancel { job }) => self.on_cancel(*job, env.from(), ctx),
            Msg::Timer(TimerMsg::JobEnd { job }) => self.on_job_end(*job, ctx),
            Msg::Timer(TimerMsg::Wakeup) => self.on_wakeup(ctx),
            Msg::Market(MarketMsg::SlotsQuery { horizon }) => self.on_slots_query(env.from(), *horizon, ctx),
            Msg::Market(MarketMsg::QueueQuery { horizon }) => self.on_queue_query(env.from(), *horizon, ctx),
            Msg::Market(MarketMsg::Matched(m)) => self.on_matched(env.from(), m, ctx),
            Msg::Market(MarketMsg::Registered) => {}
            Msg::Market(MarketMsg::RegisterRefused { reason }) => {
                tracing::debug!(provider = ctx.name(), from = ?env.from(), reason = reason.as_str(), "not registered")
            }
            // Preemption with migration: leases moved through gateways, parked leases settled, an owner's suspend.
            Msg::Lease(LeaseMsg::Migrate(m)) => self.on_migrate_in(m, env.from(), ctx),
            Msg::Lease(LeaseMsg::Migrated { lease, .. }) => self.settle_parked(*lease, true, env.from(), ctx),
            Msg::Lease(LeaseMsg::Resume { lease }) => self.settle_parked(*lease, false, env.from(), ctx),
            Msg::Lease(LeaseMsg::Suspend { lease }) => self.on_suspend(*lease, env.from(), ctx),
            // SLA claims and advance reservations.
            Msg::Market(MarketMsg::SlaRequest(job)) => self.on_sla_request((**job).clone(), ctx),
            Msg::Job(JobMsg::SubmitReserved { job, reservation, start }) => {
                self.on_submit_reserved((**job).clone(), *reservation, *start, ctx)
            }
            Msg::Timer(TimerMsg::SlotStart { job }) => self.on_slot_start(*job, ctx),
            Msg::Lease(LeaseMsg::Reserve { request, start, end, pes }) => {
                self.on_reserve(env.from(), *request, (*start, *end, *pes), ctx)
            }
            Msg::Lease(LeaseMsg::Release { reservation }) => self.on_release(*reservation, ctx),
            // Pricing, energy and trading: each capability's own timer and messages.
            Msg::Timer(TimerMsg::Reprice) => self.on_reprice(ctx),
            Msg::Timer(TimerMsg::PowerCheck) => self.on_power_check(ctx),
            Msg::Exchange(m) => self.on_exchange(env.from(), m, ctx),
            Msg::Timer(TimerMsg::Advertise) => self.advertise(ctx),
            other => crate::sim::unhandled(ctx, other.kind()),
        }
    }

    fn report(&self, now: SimTime, out: &mut Report) {
        let span = now.secs();
        let capacity = f64::from(self.config.pes) * span;
        let busy = self.busy.integral(span);
        let c = &self.preemption.stats;
        // Amini Salehi (2012) Eq 3.10-3.11: computation is Σ v·d over the leases, each lease's duration once;
        // preemption overhead and the lost runs of cancelled leases keep VMs busy but are not computation.
        let computing = (busy - c.overhead_pe_seconds - c.lost_pe_seconds).max(0.0);
        out.metrics.extend([
            ("utilisation", if capacity > 0.0 { computing / capacity } else { 0.0 }),
            ("busy_pe_seconds", busy),
            ("local_requests", c.local_requests as f64),
            ("local_rejected", c.local_rejected as f64),
            ("preempted_leases", c.preempted_leases as f64),
            ("preempted_vms", c.preempted_vms as f64),
            ("preemption_overhead", c.overhead),
            ("overhead_pe_seconds", c.overhead_pe_seconds),
            ("lost_pe_seconds", c.lost_pe_seconds),
            ("search_fallbacks", c.search_fallbacks as f64),
            ("preempted_migratable", c.preempted_migratable as f64),
            ("migrated_out", c.migrated_out as f64),
            ("migrated_in", c.migrated_in as f64),
            ("deadline_missed", c.deadline_missed as f64),
            ("owner_suspends", c.owner_suspends as f64),
            ("accepted", self.accepted as f64),
            ("rejected", self.rejected as f64),
            ("completed", self.completed as f64),
            ("pes", f64::from(self.config.pes)),
        ]);
        self.externals.report(out);
        out.transfers.extend_from_slice(self.book.transfers());
        out.violations.extend(self.scheduler.violations().iter().map(|(t, what)| (t.secs(), what.clone())));
        out.series.push(("busy_pes", self.busy.clone()));
        let wasted = c.overhead_pe_seconds + c.lost_pe_seconds;
        out.capacity =
            Some(Capacity { units: f64::from(self.config.pes), in_use: "busy_pes", holds: Holds::Pes { wasted } });
        out.series.push(("queued", self.queued.clone()));
        self.report_pricing(now, out);
        self.report_energy(now, out);
    }
}
