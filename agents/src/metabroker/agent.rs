//! The meta-broker actor (seed 003 ch3 §3.2): queues users' requests and, at the end of every scheduling interval,
//! asks every provider for its free slots, runs the configured [`SchedulingPolicy`] over the queue and the offers,
//! reserves each placed request's slot with its provider and hands the user a ticket; what it cannot place rolls
//! over to the next interval, or is dropped once its deadline can no longer be met.
//!
//! Receives `Market::ResourceRequest` (user broker), `Market::FreeSlots` (provider), `Lease::Reserved` /
//! `ReserveRefused` (provider) and its own `Timer::Round`; sends `Market::SlotsQuery` and `Lease::Reserve` to
//! providers and `Market::Ticket` / `RequestDropped` to users. It keeps the accounts: what each user is to pay and
//! each provider to earn, by ticket.
//!
//! [INTERP] The thesis's periodic `ResourceUpdate` is modelled as a pull at the end of each interval (the same
//! information, fresh when the decision is made); each provider offers its widest free slot starting now (the
//! algorithms take one window per site). Bag-of-tasks splitting (the `lp` policy) is not offered to rigid jobs.

use std::collections::BTreeMap;

use rand::Rng;

use super::{App, Schedule, SchedulingPolicy, Site, Snapshot, schedule};
use crate::kernel::{Agent, AgentId, Ctx, Envelope, SimTime};
use crate::protocol::{JobId, JobSpec, LeaseMsg, MarketMsg, Msg, Ticket, TimerMsg};
use crate::provider::ProviderInfo;
use crate::report::Report;

/// How far ahead providers report their free slots [s].
const OFFER_HORIZON: f64 = 86_400.0;

/// The meta-broker agent.
pub struct MetaBroker {
    policy: SchedulingPolicy,
    /// Scheduling interval SI [s].
    interval: f64,
    providers: Vec<ProviderInfo>,
    /// Requests waiting for a round, in arrival order.
    queue: BTreeMap<JobId, JobSpec>,
    /// Offers received in the current round, by provider index.
    offers: Vec<Option<Vec<(f64, f64, u32)>>>,
    round_armed: bool,
    /// Reservations asked for: job → (provider index, start, cost).
    reserving: BTreeMap<JobId, (usize, f64, f64)>,
    rounds: u64,
    tickets: u64,
    dropped: u64,
    spent: f64,
}

impl MetaBroker {
    /// A meta-broker over `providers` running `policy` every `interval` seconds.
    pub fn new(policy: SchedulingPolicy, interval: f64, providers: Vec<ProviderInfo>) -> MetaBroker {
        let offers = vec![None; providers.len()];
        MetaBroker {
            policy,
            interval,
            providers,
            queue: BTreeMap::new(),
            offers,
            round_armed: false,
            reserving: BTreeMap::new(),
            rounds: 0,
            tickets: 0,
            dropped: 0,
            spent: 0.0,
        }
    }

    fn arm(&mut self, ctx: &mut Ctx<'_>) {
        if !self.round_armed {
            self.round_armed = true;
            // Rounds fall at the ends of intervals k·SI, as in the thesis.
            let now = ctx.now().secs();
            let next = ((now / self.interval).floor() + 1.0) * self.interval;
            ctx.wake_in(next - now, TimerMsg::Round { n: self.rounds });
        }
    }

    /// End of an interval: ask every provider for its free slots.
    fn on_round(&mut self, ctx: &mut Ctx<'_>) {
        self.round_armed = false;
        self.rounds += 1;
        self.drop_infeasible(ctx);
        if self.queue.is_empty() {
            return;
        }
        self.offers.iter_mut().for_each(|o| *o = None);
        for p in &self.providers {
            ctx.send(p.id, Msg::Market(MarketMsg::SlotsQuery { horizon: OFFER_HORIZON }));
        }
    }

    fn on_offer(&mut self, from: AgentId, slots: &[(f64, f64, u32)], ctx: &mut Ctx<'_>) {
        let Some(i) = self.providers.iter().position(|p| p.id == from) else { return };
        self.offers[i] = Some(slots.to_vec());
        if self.offers.iter().all(Option::is_some) {
            self.schedule_round(ctx);
        }
    }

    /// All offers are in: schedule the queue, reserve what was placed.
    fn schedule_round(&mut self, ctx: &mut Ctx<'_>) {
        let now = ctx.now().secs();
        let sites: Vec<Site> = self
            .providers
            .iter()
            .zip(&self.offers)
            .enumerate()
            .map(|(i, (p, offer))| {
                // The widest slot open now; none means no capacity this round.
                let best = offer
                    .iter()
                    .flatten()
                    .filter(|s| s.0 <= now)
                    .max_by(|a, b| a.2.cmp(&b.2).then(b.1.total_cmp(&a.1)))
                    .copied();
                let (cpus, until) = best.map_or((0, Some(now)), |s| (s.2, Some(s.1)));
                Site { id: i as u64, cpus, speed: p.speed, price: p.price, from: now, until }
            })
            .collect();
        let apps: Vec<App> = self
            .queue
            .values()
            .filter(|j| !self.reserving.contains_key(&j.id))
            .map(|j| App {
                id: j.id,
                cpus: j.pes,
                runtime: j.estimate.max(j.runtime),
                budget: j.budget,
                deadline: j.deadline,
                submit: 0.0,
            })
            .collect();
        let snapshot = Snapshot { now, apps, sites };
        let seed = ctx.rng().next_u64();
        let plan: Schedule = schedule(self.policy, &snapshot, seed);
        for (app, assignment) in snapshot.apps.iter().zip(&plan.assignments) {
            let (Some(site), [part]) = (assignment.site(), assignment.parts.as_slice()) else { continue };
            let provider = self.providers[site].id;
            let msg = LeaseMsg::Reserve { request: app.id, start: part.start, end: part.finish, pes: part.cpus };
            ctx.send(provider, Msg::Lease(msg));
            self.reserving.insert(app.id, (site, part.start, part.cost));
        }
        self.arm(ctx);
    }

    fn on_reserved(&mut self, job: JobId, reservation: u64, ctx: &mut Ctx<'_>) {
        let Some((site, start, cost)) = self.reserving.remove(&job) else { return };
        let Some(spec) = self.queue.remove(&job) else { return };
        self.tickets += 1;
        self.spent += cost;
        let provider = self.providers[site].id;
        let ticket = Ticket { job, provider, reservation, start, cost };
        ctx.send(spec.owner, Msg::Market(MarketMsg::Ticket(Box::new(ticket))));
    }

    /// Drops the requests that no provider could finish by their deadline any more, even if started now.
    fn drop_infeasible(&mut self, ctx: &mut Ctx<'_>) {
        let now = ctx.now().secs();
        let fastest = self.providers.iter().map(|p| p.speed).fold(0.0, f64::max);
        let late: Vec<JobId> = self
            .queue
            .values()
            .filter(|j| j.deadline.is_some_and(|d| fastest <= 0.0 || now + j.estimate.max(j.runtime) / fastest > d))
            .map(|j| j.id)
            .collect();
        for id in late {
            if let Some(j) = self.queue.remove(&id) {
                self.dropped += 1;
                ctx.send(j.owner, Msg::Market(MarketMsg::RequestDropped { job: id }));
            }
        }
    }
}

impl Agent for MetaBroker {
    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>) {
        match &env.msg {
            Msg::Market(MarketMsg::ResourceRequest(job)) => {
                self.queue.insert(job.id, (**job).clone());
                self.arm(ctx);
            }
            Msg::Market(MarketMsg::FreeSlots { slots }) => self.on_offer(env.from(), slots, ctx),
            Msg::Lease(LeaseMsg::Reserved { request, reservation }) => self.on_reserved(*request, *reservation, ctx),
            // Refused: the request stays queued for the next round.
            Msg::Lease(LeaseMsg::ReserveRefused { request, .. }) => {
                self.reserving.remove(request);
            }
            Msg::Timer(TimerMsg::Round { .. }) => self.on_round(ctx),
            other => tracing::error!(metabroker = ctx.name(), kind = other.kind(), "unhandled message"),
        }
    }

    fn report(&self, _now: SimTime, out: &mut Report) {
        out.metrics.extend([
            ("rounds", self.rounds as f64),
            ("tickets", self.tickets as f64),
            ("dropped", self.dropped as f64),
            ("spending", self.spent),
        ]);
    }
}
