//! The meta-broker actor (Garg 2010, ch3 §3.2): registers providers into a resource catalogue and users into the
//! market, queues users' requests and, at the end of every scheduling interval, has every registered provider
//! update its catalogue entry, runs the configured [`Policy`] of the [`Slots`] family over the queue and the
//! catalogue, reserves each placed request's slot with its provider and hands the user a ticket; what it cannot place
//! rolls over to the next interval, or is dropped once its deadline can no longer be met.
//!
//! Receives `Market::RegisterProvider` / `RegisterUser` (answered `Registered`, or `RegisterRefused` for a provider
//! outside its market), `Market::ResourceRequest` (user broker), `Market::ResourceUpdate` (provider),
//! `Lease::Reserved` / `ReserveRefused` (provider) and its own `Timer::Round`; sends `Market::SlotsQuery` and
//! `Lease::Reserve` to providers and `Market::Ticket` / `RequestDropped` to users. A ticket quotes a cost from the
//! estimate; the provider bills the actual usage (see `crate::ledger`).
//!
//! Our reading where the thesis is silent: its periodic `ResourceUpdate` is pulled at the end of each interval (the
//! same information, fresh when the decision is made); each provider offers its widest free slot starting now (the
//! algorithms take one window per site). The `lp` policy (MGN) splits a bag of tasks over several sites: each part is
//! reserved and ticketed on its own, and the tasks not placed roll over.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rand::Rng;

use super::round::Rounds;
use super::{App, GreedyRank, MgnSolver, Params, Policy, Schedule, Site, SlotView, Slots, Snapshot};
use crate::protocol::{JobId, JobSpec, LeaseMsg, MarketMsg, Msg, ResourceUpdate, Ticket, TimerMsg};
use crate::report::Report;
use crate::sim::{Agent, AgentId, Ctx, Envelope, GridMarket, SimTime};

/// How far ahead providers report their free slots [s], at least: a round asks far enough ahead for its longest
/// queued job at the slowest site (a slot is cut at the horizon, so a job longer than it would never fit).
const OFFER_HORIZON: f64 = 86_400.0;

/// A reservation asked for: for which job, where, when, at what cost, for how many of its tasks.
struct Reserving {
    job: JobId,
    provider: AgentId,
    start: SimTime,
    cost: f64,
    cpus: u32,
}

/// A placement's instant in a message. Every policy places a part within its site's window, which starts at the
/// snapshot's time, so the seconds are a valid time.
fn placed_at(secs: f64) -> SimTime {
    SimTime::new(secs).expect("a placement lies within its site's window")
}

/// The meta-broker agent.
pub struct MetaBroker {
    policy: Arc<dyn Policy<Slots>>,
    params: Params,
    /// The catalogue (each registered provider's last update), the users, the interval's rounds and the
    /// reservations asked for.
    rounds: Rounds<ResourceUpdate, Reserving>,
    /// Requests waiting for a round, by job id.
    queue: BTreeMap<JobId, JobSpec>,
    /// Jobs that have had a ticket (a later part of a split job needs an id of its own), and the next such id.
    ticketed: BTreeSet<JobId>,
    next_part: JobId,
    tickets: u64,
    dropped: u64,
    /// What the tickets quoted, summed [G$]: the users' spending as planned (the ledger has what they paid).
    quoted: f64,
    /// GA generations run, summed over rounds, and the rounds that ran the GA (Garg 2010, Fig 4.4).
    generations: u64,
    ga_rounds: u64,
    /// Rounds where the configured LP solver failed and the transportation solver stood in.
    solver_fallbacks: u64,
}

impl MetaBroker {
    /// A meta-broker whose market holds the providers `members`, running `policy` (a [`SchedulingPolicy`] of the
    /// thesis, a registered [`MetaPolicy`] as [`OneAtATime`](super::OneAtATime), or a registered policy of the family)
    /// every `interval` seconds.
    ///
    /// [`SchedulingPolicy`]: super::SchedulingPolicy
    /// [`MetaPolicy`]: super::MetaPolicy
    pub fn new(
        policy: impl Into<Arc<dyn Policy<Slots>>>,
        interval: f64,
        members: impl IntoIterator<Item = AgentId>,
    ) -> MetaBroker {
        MetaBroker {
            policy: policy.into(),
            params: Params::default(),
            rounds: Rounds::new(interval, members),
            queue: BTreeMap::new(),
            ticketed: BTreeSet::new(),
            next_part: Ticket::FIRST_PART_ID,
            tickets: 0,
            dropped: 0,
            quoted: 0.0,
            generations: 0,
            ga_rounds: 0,
            solver_fallbacks: 0,
        }
    }

    /// Solves the MGN relaxation (policies lp, mmc, lpga) with `solver` instead of the transportation solver.
    pub fn with_solver(mut self, solver: MgnSolver) -> MetaBroker {
        self.params.mgn_solver = solver;
        self
    }

    /// Ranks sites by `rank` in the greedy policy (and HGA's seed) instead of by cost.
    pub fn with_greedy_rank(mut self, rank: GreedyRank) -> MetaBroker {
        self.params.greedy = rank;
        self
    }

    fn on_request(&mut self, job: &JobSpec, from: AgentId, ctx: &mut Ctx<'_>) {
        if !self.rounds.is_user(from) {
            tracing::warn!(metabroker = ctx.name(), job = job.id, "request from an unregistered user: dropped");
            self.dropped += 1;
            let reason = "the user is not registered with the meta-broker".to_string();
            return ctx.send(job.owner, Msg::Market(MarketMsg::RequestDropped { job: job.id, reason }));
        }
        self.queue.insert(job.id, job.clone());
        self.rounds.arm(ctx);
    }

    /// End of an interval: ask every provider for its free slots.
    fn on_round(&mut self, ctx: &mut Ctx<'_>) {
        self.rounds.tick();
        self.drop_infeasible(ctx);
        // No provider in the catalogue yet: the requests wait for the round after the next request.
        if self.queue.is_empty() || self.rounds.registered() == 0 {
            return;
        }
        let slowest = self.rounds.offers().map(|(_, p)| p.speed).fold(f64::INFINITY, f64::min);
        let longest = self.queue.values().map(|j| j.estimate.max(j.runtime)).fold(0.0, f64::max);
        // Plus a round: with latency, the question reaches a site after the round began.
        let horizon = OFFER_HORIZON.max(longest / slowest + self.rounds.interval());
        self.rounds.ask(|| Msg::Market(MarketMsg::SlotsQuery { horizon }), ctx);
    }

    fn on_update(&mut self, from: AgentId, update: &ResourceUpdate, ctx: &mut Ctx<'_>) {
        if self.rounds.answer(from, update.clone()) {
            self.schedule_round(ctx);
        }
    }

    /// All offers are in: schedule the queue, reserve what was placed.
    fn schedule_round(&mut self, ctx: &mut Ctx<'_>) {
        // The scheduling algorithms work in seconds (`Snapshot`); messages carry `SimTime`s.
        let now = ctx.now();
        let providers = self.rounds.providers();
        let sites: Vec<Site> = self
            .rounds
            .offers()
            .enumerate()
            .map(|(i, (_, p))| {
                // The widest slot open now; none means no capacity this round.
                let best =
                    p.slots.iter().filter(|s| s.0 <= now).max_by(|a, b| a.2.cmp(&b.2).then(b.1.cmp(&a.1))).copied();
                let (cpus, until) = best.map_or((0, now), |s| (s.2, s.1));
                Site { id: i as u64, cpus, speed: p.speed, price: p.price, from: now.secs(), until: Some(until.secs()) }
            })
            .collect();
        // A job with a reservation still unanswered waits for the answer.
        let answering: BTreeSet<JobId> = self.rounds.held().map(|r| r.job).collect();
        let apps: Vec<App> =
            self.queue.values().filter(|j| !answering.contains(&j.id)).map(|j| App::of_request(j, 0.0)).collect();
        let snapshot = Snapshot { now: now.secs(), apps, sites };
        let seed = ctx.rng().next_u64();
        let plan: Schedule = self.policy.place(SlotView { snapshot: &snapshot, seed, params: &self.params });
        if let Some(why) = &plan.fallback {
            tracing::warn!(metabroker = ctx.name(), round = self.rounds.ticks(), "{why}");
            self.solver_fallbacks += 1;
        }
        if let Some(g) = plan.generations {
            self.generations += g;
            self.ga_rounds += 1;
        }
        // Every part of every placement is reserved; what was not placed (`rolled_over`) stays queued. Only the
        // `lp` policy splits an application over several sites.
        for (app, assignment) in snapshot.apps.iter().zip(&plan.assignments) {
            for part in &assignment.parts {
                let provider = providers[part.site];
                let (start, end) = (placed_at(part.start), placed_at(part.finish));
                let (cost, cpus) = (part.cost, part.cpus);
                let request = self.rounds.hold(Reserving { job: app.id, provider, start, cost, cpus });
                ctx.send(provider, Msg::Lease(LeaseMsg::Reserve { request, start, end, pes: cpus }));
            }
        }
        self.rounds.arm(ctx);
    }

    fn on_reserved(&mut self, request: u64, reservation: u64, ctx: &mut Ctx<'_>) {
        let Some(Reserving { job, provider, start, cost, cpus }) = self.rounds.release(request) else { return };
        let Some(spec) = self.queue.get_mut(&job) else { return };
        // The tasks left wait for a later round (a split job's other parts may still be answered this one).
        spec.pes -= cpus.min(spec.pes);
        let owner = spec.owner;
        if spec.pes == 0 {
            self.queue.remove(&job);
        }
        let part = if self.ticketed.insert(job) {
            job
        } else {
            self.next_part += 1;
            self.next_part - 1
        };
        self.tickets += 1;
        self.quoted += cost;
        let ticket = Ticket { job, part, cpus, provider, reservation, start, cost, prepaid: false, runtime: None };
        ctx.send(owner, Msg::Market(MarketMsg::Ticket(Box::new(ticket))));
    }

    /// Drops the requests that no provider could finish by their deadline any more, even if started now, and, under
    /// a policy that places an application whole, those wider than every provider, which would otherwise wait for
    /// ever.
    fn drop_infeasible(&mut self, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        let fastest = self.rounds.offers().map(|(_, p)| p.speed).fold(0.0, f64::max);
        // Once every member has registered: a provider yet to register may be the wide one.
        let widest = (!self.policy.splits() && self.rounds.all_registered())
            .then(|| self.rounds.offers().map(|(_, p)| p.cpus).max().unwrap_or(0));
        let late: Vec<(JobId, String)> = self
            .queue
            .values()
            .filter_map(|j| {
                if let Some(widest) = widest.filter(|&w| j.pes > w) {
                    return Some((j.id, format!("{} PEs, wider than every provider (the widest has {widest})", j.pes)));
                }
                let deadline = j.deadline?;
                let reason = if fastest <= 0.0 {
                    "no provider in the catalogue".to_string()
                } else {
                    let finish = now + j.estimate.max(j.runtime) / fastest;
                    if finish <= deadline {
                        return None;
                    }
                    format!("unplaced at t={now}: even the fastest site would finish at {finish} > deadline {deadline}")
                };
                Some((j.id, reason))
            })
            .collect();
        for (id, reason) in late {
            if let Some(j) = self.queue.remove(&id) {
                self.dropped += 1;
                ctx.send(j.owner, Msg::Market(MarketMsg::RequestDropped { job: id, reason }));
            }
        }
    }
}

impl Agent<GridMarket> for MetaBroker {
    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>) {
        match &env.msg {
            Msg::Market(MarketMsg::RegisterProvider(update)) => {
                self.rounds.register_provider(env.from(), (**update).clone(), ctx)
            }
            Msg::Market(MarketMsg::RegisterUser) => self.rounds.register_user(env.from(), ctx),
            Msg::Market(MarketMsg::ResourceRequest(job)) => self.on_request(job, env.from(), ctx),
            Msg::Market(MarketMsg::ResourceUpdate(update)) => self.on_update(env.from(), update, ctx),
            Msg::Lease(LeaseMsg::Reserved { request, reservation }) => self.on_reserved(*request, *reservation, ctx),
            // Refused: the request stays queued for the next round.
            Msg::Lease(LeaseMsg::ReserveRefused { request, .. }) => {
                self.rounds.release(*request);
            }
            Msg::Timer(TimerMsg::Round { .. }) => self.on_round(ctx),
            other => crate::sim::unhandled(ctx, other.kind()),
        }
    }

    fn report(&self, _now: SimTime, out: &mut Report) {
        out.metrics.extend([
            ("rounds", self.rounds.ticks() as f64),
            ("tickets", self.tickets as f64),
            ("dropped", self.dropped as f64),
            ("spending", self.quoted),
            ("providers", self.rounds.registered() as f64),
            ("users", self.rounds.users() as f64),
            ("generations", self.generations as f64),
            ("solver_fallbacks", self.solver_fallbacks as f64),
            (
                "generations_per_round",
                if self.ga_rounds > 0 { self.generations as f64 / self.ga_rounds as f64 } else { 0.0 },
            ),
        ]);
    }
}
