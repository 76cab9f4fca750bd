//! The energy-aware meta-broker of Garg (2010) ch6: one resource provider's meta-scheduler over its data centres,
//! placing users' applications to emit less carbon or earn more profit.
//!
//! Users register (`Market::RegisterUser`, answered `Registered`) and send their applications
//! (`Market::ResourceRequest`); data centres register with their first advertisement (`Energy::Advert`, answered
//! `Registered`). At the end of every scheduling interval (50 s by default, "so that at least one application
//! arrives per cycle") with applications waiting, it asks every registered data centre for its slots up to the
//! latest deadline waiting (`Energy::Query`), and once every answer is in, maps the applications by its
//! [`MappingPolicy`](mapping::MappingPolicy) (see [`mapping`]), running each data centre's DVS policy on its
//! advertised slots to know the slot, frequency, carbon and profit of each pair. It sends each mapped application to its data centre
//! (`Energy::Assign`); on `Energy::Assigned` the user gets a `Market::Ticket` and submits the application into the
//! slot. An application no data centre can finish by its deadline is rejected in its cycle (`Job::Rejected`, with
//! the reason): the slots only fill up, so a later cycle could not do better.
//!
//! The meta-broker predicts what each data centre will decide; a data centre that decides otherwise (another slot
//! or frequency, or a refusal) breaks that rule and is reported as a violation. Beside every run it reports the
//! carbon and profit bounds of §6.3.3 ([`bounds`]) over every application it received and the data centres as
//! they advertised themselves.

pub mod bounds;
pub mod kind;
pub mod mapping;

use std::collections::BTreeMap;
use std::sync::Arc;

use bounds::{BoundApp, BoundSite, Objective};
use mapping::{App, DataCentreView, DataCentres, DcView};

use super::Policy;
use super::round::Rounds;
use crate::datacenter::dvs::Placement;
use crate::datacenter::power::Costs;
use crate::protocol::{
    Assigned, Assignment, DataCentreAdvert, EnergyMsg, JobId, JobMsg, JobSpec, LeaseMsg, MarketMsg, Msg, Ticket,
    TimerMsg,
};
use crate::report::Report;
use crate::sim::{Agent, AgentId, Ctx, Envelope, GridMarket, SimTime};

/// An assignment sent, waiting for the data centre's answer.
struct Pending {
    job: JobSpec,
    dc: AgentId,
    placement: Placement,
    costs: Costs,
}

/// The energy-aware meta-broker agent.
pub struct EnergyMetaBroker {
    policy: Arc<dyn Policy<DataCentres>>,
    /// The data centres of its provider, which may register, in the order the scenario lists them.
    members: Vec<AgentId>,
    /// The catalogue (each registered data centre's last advertisement), the users, the cycles and the
    /// assignments sent.
    rounds: Rounds<DataCentreAdvert, Pending>,
    /// Applications waiting for a cycle, by id, and when each arrived.
    queue: BTreeMap<JobId, (JobSpec, SimTime)>,
    /// The cycle's query, while answers are due: until when slots were asked for, and the applications it is for
    /// (those that arrive meanwhile wait for the next cycle).
    asking: Option<(SimTime, Vec<(JobSpec, SimTime)>)>,
    /// Every application received, for the bounds, and the first arrival.
    seen: Vec<BoundApp>,
    first_arrival: Option<SimTime>,
    assigned: u64,
    rejected: u64,
    /// What the tickets quoted, summed [$].
    quoted: f64,
    violations: Vec<(f64, String)>,
}

impl EnergyMetaBroker {
    /// A meta-broker over the data centres `members`, mapping by `policy` (a [`MappingPolicy`](mapping::MappingPolicy),
    /// a registered [`MetaPolicy`](super::MetaPolicy) as [`OneAtATime`](super::OneAtATime), or a registered policy of
    /// the family) every `interval` seconds.
    pub fn new(
        policy: impl Into<Arc<dyn Policy<DataCentres>>>,
        interval: f64,
        members: impl IntoIterator<Item = AgentId>,
    ) -> EnergyMetaBroker {
        let members = members.into_iter().fold(Vec::new(), |mut v, id| {
            if !v.contains(&id) {
                v.push(id);
            }
            v
        });
        EnergyMetaBroker {
            policy: policy.into(),
            rounds: Rounds::new(interval, members.iter().copied()),
            members,
            queue: BTreeMap::new(),
            asking: None,
            seen: Vec::new(),
            first_arrival: None,
            assigned: 0,
            rejected: 0,
            quoted: 0.0,
            violations: Vec::new(),
        }
    }

    fn reject(&mut self, job: &JobSpec, reason: String, ctx: &mut Ctx<'_>) {
        self.rejected += 1;
        ctx.send(job.owner, JobMsg::Rejected { job: job.id, reason });
    }

    fn on_request(&mut self, job: &JobSpec, from: AgentId, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        if !self.rounds.is_user(from) {
            return self.reject(job, "the user is not registered with the meta-broker".into(), ctx);
        }
        self.first_arrival.get_or_insert(now);
        let deadline = job.deadline.map_or(f64::INFINITY, SimTime::secs);
        self.seen.push(BoundApp { pes: job.pes, runtime: job.estimate.max(job.runtime), deadline });
        if let Some(d) = job.deadline.filter(|&d| d < now) {
            return self.reject(job, format!("its deadline {d} is before its submission at {now}"), ctx);
        }
        self.queue.insert(job.id, (job.clone(), now));
        self.rounds.arm(ctx);
    }

    fn on_advert(&mut self, from: AgentId, advert: &DataCentreAdvert, ctx: &mut Ctx<'_>) {
        if !self.rounds.admits(from) {
            let reason = format!("{} does not schedule on this data centre", ctx.name());
            return ctx.send(from, MarketMsg::RegisterRefused { reason });
        }
        // The first advertisement registers (one registering during a cycle's query has no slots to give it: it is
        // full for this cycle); a later one answers the query.
        if self.rounds.offer(from).is_none() {
            self.rounds.enter(from, advert.clone());
            ctx.send(from, MarketMsg::Registered);
        } else if self.rounds.answer(from, advert.clone()) {
            self.map_cycle(ctx);
        }
    }

    /// The end of an interval: ask every data centre for its slots.
    fn on_round(&mut self, ctx: &mut Ctx<'_>) {
        self.rounds.tick();
        if self.queue.is_empty() || self.rounds.asking() {
            return;
        }
        if self.rounds.registered() == 0 {
            for (job, _) in std::mem::take(&mut self.queue).into_values() {
                self.reject(&job, "no data centre is registered with the meta-broker".into(), ctx);
            }
            return;
        }
        let jobs: Vec<(JobSpec, SimTime)> = std::mem::take(&mut self.queue).into_values().collect();
        let until = jobs.iter().map(|j| j.0.deadline.unwrap_or(SimTime::MAX)).max().unwrap_or(ctx.now());
        self.asking = Some((until, jobs));
        self.rounds.ask(|| Msg::Energy(EnergyMsg::Query { until }), ctx);
    }

    /// Every data centre answered: map the cycle's applications and assign them.
    fn map_cycle(&mut self, ctx: &mut Ctx<'_>) {
        let Some((until, jobs)) = self.asking.take() else { return };
        let now = ctx.now();
        // In the order the scenario lists them, which breaks the mapping's ties.
        let ids: Vec<AgentId> = self.members.iter().copied().filter(|&id| self.rounds.offer(id).is_some()).collect();
        // The data centres' slots reach `now + (until − now)`, which may round differently from `until`.
        let horizon = if until > now { now + (until - now) } else { now };
        let mut views: Vec<DcView> = ids.iter().map(|&id| DcView::new(self.advert(id), now, horizon)).collect();
        let widest = views.iter().map(|v| v.cpus).max().unwrap_or(0);
        let apps: Vec<App> = jobs
            .iter()
            .map(|(j, _)| App {
                id: j.id,
                pes: j.pes,
                runtime: j.estimate.max(j.runtime),
                deadline: j.deadline.unwrap_or(SimTime::MAX),
                data: j.data.unwrap_or(0.0),
            })
            .collect();
        let mut mapped = vec![false; jobs.len()];
        let seen: Vec<super::App> = jobs.iter().map(|(j, at)| super::App::of_request(j, at.secs())).collect();
        let view = DataCentreView { apps: &apps, seen: &seen, dcs: &mut views, now };
        let mapping = self.policy.place(view);
        // Declined, not impossible: the application waits for the next cycle.
        for i in mapping.declined {
            mapped[i] = true;
            self.queue.insert(jobs[i].0.id, jobs[i].clone());
            self.rounds.arm(ctx);
        }
        for c in mapping.choices {
            mapped[c.app] = true;
            let job = jobs[c.app].0.clone();
            let pending = Pending { job: job.clone(), dc: ids[c.dc], placement: c.placement, costs: c.costs };
            let request = self.rounds.hold(pending);
            ctx.send(ids[c.dc], EnergyMsg::Assign(Box::new(Assignment { request, job })));
        }
        for ((job, _), _) in jobs.iter().zip(&mapped).filter(|(_, m)| !**m) {
            let reason = if job.pes > widest {
                format!("needs {} CPUs, more than any data centre has ({widest})", job.pes)
            } else {
                "no data centre can complete it by its deadline".to_string()
            };
            self.reject(job, reason, ctx);
        }
    }

    fn on_assigned(&mut self, a: &Assigned, ctx: &mut Ctx<'_>) {
        let Some(p) = self.rounds.release(a.request) else { return };
        if a.start != p.placement.start || a.frequency != p.placement.frequency {
            let what = format!(
                "job {}: the data centre placed it at {} and {} GHz, the meta-broker predicted {} and {} GHz",
                p.job.id, a.start, a.frequency, p.placement.start, p.placement.frequency
            );
            self.violations.push((ctx.now().secs(), what));
        }
        self.assigned += 1;
        let cost = p.costs.revenue + p.costs.data_revenue;
        self.quoted += cost;
        let ticket = Ticket {
            job: p.job.id,
            part: p.job.id,
            cpus: p.job.pes,
            provider: p.dc,
            reservation: a.reservation,
            start: a.start,
            cost,
            prepaid: false,
            runtime: None,
        };
        ctx.send(p.job.owner, MarketMsg::Ticket(Box::new(ticket)));
    }

    fn on_refused(&mut self, request: u64, reason: &str, ctx: &mut Ctx<'_>) {
        let Some(p) = self.rounds.release(request) else { return };
        let what = format!("job {}: the data centre refused the slot the meta-broker predicted: {reason}", p.job.id);
        self.violations.push((ctx.now().secs(), what));
        self.reject(&p.job, format!("the data centre refused it: {reason}"), ctx);
    }

    /// A registered data centre's last advertisement.
    fn advert(&self, dc: AgentId) -> &DataCentreAdvert {
        self.rounds.offer(dc).expect("a registered data centre")
    }

    /// The bounds of §6.3.3 over every application received, on the data centres as they advertised themselves.
    fn bounds(&self) -> Option<(bounds::Bound, bounds::Bound)> {
        let start = self.first_arrival?.secs();
        let sites: Vec<BoundSite> = self
            .rounds
            .offers()
            .map(|(_, a)| BoundSite { cpus: a.cpus, speed: a.speed, power: a.power.clone(), site: a.site })
            .collect();
        let carbon = bounds::bound(Objective::Carbon, &self.seen, &sites, start);
        let profit = bounds::bound(Objective::Profit, &self.seen, &sites, start);
        Some((carbon, profit))
    }
}

impl Agent<GridMarket> for EnergyMetaBroker {
    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>) {
        match &env.msg {
            Msg::Market(MarketMsg::RegisterUser) => self.rounds.register_user(env.from(), ctx),
            Msg::Market(MarketMsg::ResourceRequest(job)) => self.on_request(job, env.from(), ctx),
            Msg::Energy(EnergyMsg::Advert(advert)) => self.on_advert(env.from(), advert, ctx),
            Msg::Energy(EnergyMsg::Assigned(a)) => self.on_assigned(a, ctx),
            Msg::Lease(LeaseMsg::ReserveRefused { request, reason }) => self.on_refused(*request, reason, ctx),
            Msg::Timer(TimerMsg::Round { .. }) => self.on_round(ctx),
            other => crate::sim::unhandled(ctx, other.kind()),
        }
    }

    fn report(&self, _now: SimTime, out: &mut Report) {
        out.metrics.extend([
            ("rounds", self.rounds.ticks() as f64),
            ("requests", self.seen.len() as f64),
            ("assigned", self.assigned as f64),
            ("rejected", self.rejected as f64),
            ("quoted", self.quoted),
            ("datacentres", self.rounds.registered() as f64),
        ]);
        if let Some((carbon, profit)) = self.bounds() {
            out.metrics.extend([
                ("carbon_bound", carbon.average()),
                ("carbon_bound_workload", carbon.workload),
                ("profit_bound", profit.average()),
                ("profit_bound_workload", profit.workload),
            ]);
        }
        out.violations.extend(self.violations.iter().cloned());
    }
}
