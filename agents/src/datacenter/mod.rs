//! Data centre: homogeneous CPUs with dynamic voltage scaling, cooling, a carbon emission rate and electricity,
//! data-transfer and CPU prices (Garg 2010 ch6, Table 6.2).
//!
//! At its start it registers with every energy-aware meta-broker (`Energy::Advert`, no slots); at the end of each
//! scheduling interval with requests waiting, a meta-broker asks it (`Energy::Query`) and it advertises its free time
//! slots with its carbon rate, COP, prices, power model (β, α), speed at f_max and frequency levels
//! (`Energy::Advert`). For each application the meta-broker assigns it (`Energy::Assign`), its DVS policy
//! ([`dvs`], the decision is delegated to the configured [`DvsPolicy`]) chooses the frequency and the slot, found by
//! the local scheduler's conservative backfilling with advance reservation (the providers' [`LocalScheduler`]); the
//! slot is reserved and the meta-broker told (`Energy::Assigned`, or `Lease::ReserveRefused` with the reason). The
//! user then submits the application into it (`Job::SubmitReserved`, answered `Accepted`, `Started` at the slot's
//! start, `Completed` at its end) and it runs at that frequency for its stretched runtime T(f) (Eq 6.2).
//!
//! Accounting ([`power`], Eqs 6.3–6.9, and [`meter`]): at an application's end the user pays its CPUs, n·e·p^c with e
//! its runtime at f_max whatever the frequency, and its data, DT·p^DTU; the data centre pays the electricity
//! supplier its energy with cooling, and the network carrier its data, DT·p^DT. Every amount is a US-dollar transfer
//! of the run's ledger, under the application's id. The energy meter integrates what the CPUs draw, running or idle
//! (see [`IdlePower`] for the counting rule); idle CPUs' energy, if counted, is billed at the end of the run.
//! Carbon is the energy with cooling times the carbon rate. The data centre checks that its meter and its
//! applications' energies add up and that no energy is negative, and reports a broken rule as a violation.

pub mod dvs;
pub mod kind;
pub mod meter;
pub mod power;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::ledger::{Account, Book, Currency, External, Reason, Transfer};
use crate::model::JobId;
use crate::model::Service;
use crate::protocol::{Assigned, Assignment, DataCentreAdvert, EnergyMsg, JobMsg, JobSpec, LeaseMsg, Msg, TimerMsg};
use crate::provider::scheduler::{LocalScheduler, ReservationId, ReservationRequest, SchedulerPolicy};
use crate::report::{Capacity, Holds, Metered, Report, Series};
use crate::sim::{Agent, AgentId, Ctx, Envelope, GridMarket, SimTime};
pub use dvs::{DvsPolicy, Placement};
pub use meter::{EnergyMeter, IdlePower};
pub use power::{Costs, PowerModel, Site};

/// The CPU-boundness γ of every application: 1, fully CPU-bound, "the worst case" Garg (2010) §6.2.2 uses in all
/// experiments (applications carry none of their own).
pub const CPU_BOUNDNESS: f64 = 1.0;

/// A data centre's configuration, as built for one replication.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DataCentreConfig {
    /// CPUs.
    pub cpus: u32,
    /// Speed of a CPU at f_max relative to the reference CPU that runtimes are given for.
    pub speed: f64,
    /// The CPUs' power and frequencies.
    pub power: PowerModel,
    /// COP, carbon rate and prices.
    pub site: Site,
    /// How it chooses an application's frequency.
    pub dvs: DvsPolicy,
    /// What idle CPUs draw.
    pub idle: IdlePower,
}

impl DataCentreConfig {
    /// An application's runtime here at f_max, from its runtime on the reference CPU \[s\].
    pub fn runtime_here(&self, reference: f64) -> f64 {
        reference / self.speed
    }
}

/// A slot held for an application, by reservation.
#[derive(Clone, Debug)]
struct Held {
    job: JobId,
    pes: u32,
    start: SimTime,
    frequency: f64,
}

/// An application submitted into its slot, until it ends.
#[derive(Clone, Debug)]
struct Running {
    spec: JobSpec,
    reservation: ReservationId,
    frequency: f64,
    /// Its actual runtime at f_max here, and at its frequency [s].
    runtime_fmax: f64,
    duration: f64,
    start: Option<SimTime>,
}

/// What the data centre did, summed.
#[derive(Clone, Debug, Default)]
struct Totals {
    assigned: u64,
    refused: u64,
    completed: u64,
    /// Applications run above the level their DVS policy tried first.
    scaled_up: u64,
    /// Σ n·e at f_max of completed applications [CPU·s].
    work: f64,
    /// Σ n·e·f/f_max, for the work-weighted mean frequency [CPU·s].
    work_at_frequency: f64,
    /// Σ of the applications' CPU energy [J].
    cpu_joules: f64,
    costs: Costs,
}

/// The data centre agent.
pub struct DataCentre {
    config: DataCentreConfig,
    scheduler: LocalScheduler,
    held: BTreeMap<u64, Held>,
    jobs: BTreeMap<JobId, Running>,
    meter: EnergyMeter,
    book: Book,
    busy: Series,
    totals: Totals,
    /// Each completed application's energy and carbon.
    metered: Vec<Metered>,
    violations: Vec<(f64, String)>,
    /// Its own id, known from its start: the payer of the idle energy billed at the end.
    me: AgentId,
    /// Applications whose slot begins at this instant, started at its end.
    starting: Vec<JobId>,
}

impl DataCentre {
    /// A data centre with every CPU free.
    pub fn new(config: DataCentreConfig) -> DataCentre {
        let idle_watts = match config.idle {
            IdlePower::Off => 0.0,
            IdlePower::Static => config.power.beta,
        };
        DataCentre {
            scheduler: LocalScheduler::new(SchedulerPolicy::Conservative, config.cpus),
            meter: EnergyMeter::new(config.cpus, idle_watts),
            config,
            held: BTreeMap::new(),
            jobs: BTreeMap::new(),
            book: Book::default(),
            busy: Series::default(),
            totals: Totals::default(),
            metered: Vec::new(),
            violations: Vec::new(),
            me: AgentId::ENV,
            starting: Vec::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &DataCentreConfig {
        &self.config
    }

    /// What it advertises, with its free slots from `now` to `until`.
    pub fn advert(&self, now: SimTime, until: SimTime) -> DataCentreAdvert {
        let slots = if until > now {
            let slots = self.scheduler.free_slots(now, until - now, None).unwrap_or_default();
            slots.into_iter().map(|s| (s.start, s.end, s.pes)).collect()
        } else {
            Vec::new()
        };
        let c = &self.config;
        DataCentreAdvert { cpus: c.cpus, speed: c.speed, power: c.power.clone(), site: c.site, dvs: c.dvs, slots }
    }

    /// Where and how fast its DVS policy runs an application of `pes` CPUs, taking `runtime` seconds at f_max here,
    /// that must end by `deadline`, given the slots free now.
    pub fn placement(&self, now: SimTime, pes: u32, runtime: f64, deadline: SimTime) -> Option<Placement> {
        let earliest = |d: f64| self.scheduler.earliest_start(now, pes, d, None).ok();
        dvs::place(self.config.dvs, &self.config.power, runtime, CPU_BOUNDNESS, deadline, earliest)
    }

    /// Why an application cannot be placed here at all, before any slot is searched.
    fn unfit(&self, job: &JobSpec, now: SimTime) -> Option<String> {
        let planned = job.estimate.max(job.runtime);
        if job.pes == 0 || job.pes > self.config.cpus {
            return Some(format!("needs {} CPUs; the data centre has {}", job.pes, self.config.cpus));
        }
        if !(planned.is_finite() && planned > 0.0) {
            return Some(format!("a runtime of {planned} s cannot be run"));
        }
        if job.data.is_some_and(|d| !(d.is_finite() && d >= 0.0)) {
            return Some(format!("a data size of {} GB cannot be moved", job.data.unwrap_or_default()));
        }
        match job.deadline {
            Some(d) if d < now => Some(format!("its deadline {d} is past")),
            _ => None,
        }
    }

    fn on_assign(&mut self, from: AgentId, a: &Assignment, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        let job = &a.job;
        let refusal = self.unfit(job, now).or_else(|| {
            let runtime = self.config.runtime_here(job.estimate.max(job.runtime));
            let deadline = job.deadline.unwrap_or(SimTime::MAX);
            let Some(p) = self.placement(now, job.pes, runtime, deadline) else {
                return Some("no free slot ends by its deadline, even at f_max".to_string());
            };
            let request = ReservationRequest { start: p.start, end: p.end(), pes: job.pes, partition: None };
            match self.scheduler.reserve(now, request) {
                Ok(r) => {
                    self.held.insert(r.0, Held { job: job.id, pes: job.pes, start: p.start, frequency: p.frequency });
                    self.totals.assigned += 1;
                    if p.level > self.config.dvs.first_level(&self.config.power) {
                        self.totals.scaled_up += 1;
                    }
                    let assigned = Assigned {
                        request: a.request,
                        reservation: r.0,
                        start: p.start,
                        frequency: p.frequency,
                        duration: p.duration,
                    };
                    ctx.send(from, EnergyMsg::Assigned(Box::new(assigned)));
                    None
                }
                Err(e) => Some(e.to_string()),
            }
        });
        if let Some(reason) = refusal {
            self.totals.refused += 1;
            ctx.send(from, LeaseMsg::ReserveRefused { request: a.request, reason });
        }
    }

    /// The user submits an application into the slot held for it: it starts at the slot's start.
    fn on_submit_reserved(&mut self, job: &JobSpec, reservation: u64, ctx: &mut Ctx<'_>) {
        let (id, owner) = (job.id, job.owner);
        let refusal = match self.held.get(&reservation) {
            None => Some(format!("no slot {reservation} is held here")),
            Some(h) if h.job != id || h.pes < job.pes => {
                Some(format!("slot {reservation} is held for job {} on {} CPUs", h.job, h.pes))
            }
            Some(_) => None,
        };
        if let Some(reason) = refusal {
            return ctx.send(owner, JobMsg::Rejected { job: id, reason });
        }
        let held = self.held.remove(&reservation).expect("just found");
        let runtime_fmax = self.config.runtime_here(job.runtime);
        let duration = runtime_fmax * self.config.power.stretch(held.frequency, CPU_BOUNDNESS);
        ctx.send(owner, JobMsg::Accepted { job: id });
        let running = Running {
            spec: job.clone(),
            reservation: ReservationId(reservation),
            frequency: held.frequency,
            runtime_fmax,
            duration,
            start: None,
        };
        self.jobs.insert(id, running);
        ctx.wake_in((held.start - ctx.now()).max(0.0), TimerMsg::SlotStart { job: id });
    }

    /// A slot begins: its application starts once the applications ending at this instant have given back their
    /// CPUs.
    fn on_slot_start(&mut self, id: JobId, ctx: &mut Ctx<'_>) {
        self.starting.push(id);
        ctx.at_end_of_instant();
    }

    fn start_job(&mut self, id: JobId, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        let Some(job) = self.jobs.get_mut(&id) else { return };
        let watts = self.config.power.power(job.frequency);
        if let Err(e) = self.meter.run(now, job.spec.pes, watts) {
            self.violations.push((now.secs(), format!("job {id} cannot start: {e}")));
            return;
        }
        job.start = Some(now);
        self.busy.set(now, f64::from(self.meter.running()));
        ctx.send(job.spec.owner, JobMsg::Started { job: id });
        ctx.wake_in(job.duration, TimerMsg::JobEnd { job: id });
    }

    /// An application's runtime elapsed: its CPUs go idle, it is billed, its energy paid.
    fn on_job_end(&mut self, id: JobId, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        let Some(job) = self.jobs.remove(&id) else { return };
        let c = &self.config;
        let watts = c.power.power(job.frequency);
        if let Err(e) = self.meter.stop(now, job.spec.pes, watts) {
            self.violations.push((now.secs(), format!("job {id} cannot end: {e}")));
        }
        self.busy.set(now, f64::from(self.meter.running()));
        let data = job.spec.data.unwrap_or(0.0);
        let costs = Costs::of_run(&c.power, &c.site, job.frequency, job.spec.pes, job.duration, job.runtime_fmax, data);
        let work = f64::from(job.spec.pes) * job.runtime_fmax;
        let t = &mut self.totals;
        t.completed += 1;
        t.work += work;
        t.work_at_frequency += work * job.frequency / c.power.f_max();
        t.cpu_joules += watts * f64::from(job.spec.pes) * job.duration;
        add(&mut t.costs, &costs);
        self.metered.push(Metered { job: id, energy: costs.energy, carbon: costs.carbon });
        let (me, user) = (Account::Agent(ctx.me()), Account::Agent(job.spec.owner));
        let bills = [
            (user, me, costs.revenue, Reason::Usage),
            (user, me, costs.data_revenue, Reason::DataTransfer),
            (me, Account::External(External::ElectricitySupplier), costs.energy_cost, Reason::Energy),
            (me, Account::External(External::NetworkCarrier), costs.data_cost, Reason::DataTransfer),
        ];
        let mut cost = 0.0;
        for (payer, payee, amount, reason) in bills {
            let booked = self.book_dollars(now, ctx.me(), (payer, payee), amount, reason, Some(id));
            if payer == user {
                cost += booked;
            }
        }
        ctx.send(job.spec.owner, JobMsg::Completed { job: id, cost });
        // The slot ends with the application (a shorter actual runtime gives the rest back).
        if let Err(e) = self.scheduler.cancel_reservation(now, job.reservation)
            && !matches!(e, crate::provider::scheduler::Rejected::UnknownReservation(_))
        {
            tracing::error!(datacentre = ctx.name(), job = id, "the scheduler refused to end its slot: {e}");
        }
    }

    /// Books a US-dollar transfer (nothing for no money); returns the amount.
    fn book_dollars(
        &mut self,
        at: SimTime,
        me: AgentId,
        (payer, payee): (Account, Account),
        amount: f64,
        reason: Reason,
        job: Option<JobId>,
    ) -> f64 {
        if amount <= 0.0 {
            return 0.0;
        }
        let currency = Currency::Dollar;
        self.book.book(Transfer { at, payer, payee, amount, currency, reason, job, booked_by: me })
    }

    /// Energy of idle CPUs from t = 0 to `now` [kWh], before cooling.
    fn idle_kwh(&self, now: SimTime) -> f64 {
        self.meter.idle_joules(now) / power::JOULES_PER_KWH
    }

    /// The meter against the applications: completed ones' energy plus what the running ones drew so far.
    fn energy_check(&self, now: SimTime) -> Option<String> {
        let running: f64 = self
            .jobs
            .values()
            .filter_map(|j| Some(self.config.power.power(j.frequency) * f64::from(j.spec.pes) * (now - j.start?)))
            .sum();
        let applications = self.totals.cpu_joules + running;
        let metered = self.meter.running_joules(now);
        let idle = self.meter.idle_joules(now);
        if !(metered >= 0.0 && idle >= 0.0 && applications >= 0.0) {
            return Some(format!("negative energy: {metered} J metered, {idle} J idle, {applications} J of jobs"));
        }
        if (metered - applications).abs() > 1e-9 * metered.max(1.0) {
            return Some(format!("the meter has {metered} J but the applications drew {applications} J"));
        }
        None
    }
}

fn add(total: &mut Costs, c: &Costs) {
    total.cpu_energy += c.cpu_energy;
    total.energy += c.energy;
    total.energy_cost += c.energy_cost;
    total.carbon += c.carbon;
    total.revenue += c.revenue;
    total.exec_profit += c.exec_profit;
    total.data_revenue += c.data_revenue;
    total.data_cost += c.data_cost;
    total.profit += c.profit;
}

impl Agent<GridMarket> for DataCentre {
    /// Registers with every energy-aware meta-broker.
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        self.me = ctx.me();
        self.busy.set(now, 0.0);
        for &mb in ctx.offering(Service::PlacesOnDataCentres.name()).to_vec().iter() {
            ctx.send(mb, EnergyMsg::Advert(Box::new(self.advert(now, now))));
        }
    }

    fn end_of_instant(&mut self, ctx: &mut Ctx<'_>) {
        for id in std::mem::take(&mut self.starting) {
            self.start_job(id, ctx);
        }
    }

    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>) {
        match &env.msg {
            Msg::Energy(EnergyMsg::Query { until }) => {
                let advert = self.advert(ctx.now(), *until);
                ctx.send(env.from(), EnergyMsg::Advert(Box::new(advert)));
            }
            Msg::Energy(EnergyMsg::Assign(a)) => self.on_assign(env.from(), a, ctx),
            Msg::Job(JobMsg::SubmitReserved { job, reservation, .. }) => {
                self.on_submit_reserved(job, *reservation, ctx)
            }
            Msg::Job(JobMsg::Submit(job)) => {
                let reason = "a data centre runs applications an energy-aware meta-broker assigned it".to_string();
                ctx.send(job.owner, JobMsg::Rejected { job: job.id, reason })
            }
            Msg::Lease(LeaseMsg::Release { reservation }) => {
                if self.held.remove(reservation).is_some() {
                    let _ = self.scheduler.cancel_reservation(ctx.now(), ReservationId(*reservation));
                }
            }
            Msg::Timer(TimerMsg::SlotStart { job }) => self.on_slot_start(*job, ctx),
            Msg::Timer(TimerMsg::JobEnd { job }) => self.on_job_end(*job, ctx),
            Msg::Market(_) => {}
            other => crate::sim::unhandled(ctx, other.kind()),
        }
    }

    fn report(&self, now: SimTime, out: &mut Report) {
        let c = &self.config;
        let t = &self.totals;
        let span = now.secs();
        let busy = self.busy.integral(span);
        let capacity = f64::from(c.cpus) * span;
        // Idle CPUs' energy, when counted, is paid at the end of the run.
        let idle = self.idle_kwh(now);
        let idle_total = idle * c.site.cooling_factor();
        let idle_cost = c.site.electricity_price * idle_total;
        let mut book = self.book.clone();
        if idle_cost > 0.0 {
            let supplier = Account::External(External::ElectricitySupplier);
            let transfer = Transfer {
                at: now,
                payer: Account::Agent(self.me),
                payee: supplier,
                amount: idle_cost,
                currency: Currency::Dollar,
                reason: Reason::Energy,
                job: None,
                booked_by: self.me,
            };
            book.book(transfer);
        }
        let energy = t.costs.energy + idle_total;
        let energy_cost = t.costs.energy_cost + idle_cost;
        out.metrics.extend([
            ("pes", f64::from(c.cpus)),
            ("utilisation", if capacity > 0.0 { busy / capacity } else { 0.0 }),
            ("assigned", t.assigned as f64),
            ("refused", t.refused as f64),
            ("completed", t.completed as f64),
            ("scaled_up", t.scaled_up as f64),
            ("workload", t.work / 3600.0),
            ("mean_frequency", if t.work > 0.0 { t.work_at_frequency / t.work } else { 0.0 }),
            ("cpu_energy", t.costs.cpu_energy + idle),
            ("idle_energy", idle),
            ("cooling_energy", energy - t.costs.cpu_energy - idle),
            ("energy", energy),
            ("power", if span > 0.0 { energy * power::JOULES_PER_KWH / span } else { 0.0 }),
            ("carbon", t.costs.carbon + c.site.carbon_rate * idle_total),
            ("energy_cost", energy_cost),
            ("earnings", t.costs.revenue + t.costs.data_revenue),
            ("data_cost", t.costs.data_cost),
            ("profit", t.costs.profit - idle_cost),
            ("cop", c.site.cop),
            ("carbon_rate", c.site.carbon_rate),
            ("electricity_price", c.site.electricity_price),
        ]);
        out.transfers.extend_from_slice(book.transfers());
        out.violations.extend(self.violations.iter().cloned());
        out.metered.extend_from_slice(&self.metered);
        out.violations.extend(self.energy_check(now).map(|what| (span, what)));
        out.series.push(("busy_pes", self.busy.clone()));
        out.capacity =
            Some(Capacity { units: f64::from(c.cpus), in_use: "busy_pes", holds: Holds::Pes { wasted: 0.0 } });
    }
}
