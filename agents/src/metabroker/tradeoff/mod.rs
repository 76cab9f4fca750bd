//! The time/cost trade-off meta-broker of Garg (2010) ch5: rigid parallel applications placed every scheduling
//! interval (SI) by MinCTT, MaxCTT, SuffCTT or greedy ([`heuristics`]), or by a registered policy (each a [`Policy`]
//! of the [`Profiles`] family), on the providers' advance-reservation slots, with the lower bounds of §5.3.1
//! ([`bounds`]) reported beside every run.
//!
//! Providers register at start (`Market::RegisterProvider`, answered `Registered`, or `RegisterRefused` outside its
//! market); users register (`RegisterUser`) and send their applications (`ResourceRequest`). An application's ETC
//! on every site is drawn when it first reaches a round ([`etc`]), and its trade-off factor δ is the meta-broker's or,
//! per user (Case 2), drawn U[0, 1] on arrival. At the end of every interval with applications waiting it asks every
//! provider for its free slots (`SlotsQuery`, answered `ResourceUpdate`: maximal free rectangles over the horizon,
//! turned into each site's free profile); once every answer is in, the heuristic allocates, each allocated
//! application's window is reserved with its provider (`Lease::Reserve`, answered `Reserved` or `ReserveRefused`)
//! and, once held, the user gets one ticket (`Ticket`, quoting c(i, j) and the runtime that makes the job last
//! ETC(i, j) on that site) and submits the job into the slot; the provider bills the usage at its price.
//!
//! With a data-transfer cost (DTC, Garg 2010 §5.4, Fig 5.6), every round first draws each provider's bandwidth
//! factor b_r U(0, 1) from the run's seeded stream (one draw per provider, in provider order, taken as 1 − u for u
//! uniform in [0, 1) so that it is never 0); an application's DTC on r is its initial DTC, `share` (1/10 in the
//! thesis) times its average execution cost over the sites, divided by b_r, and is added to its execution cost in
//! φ's cost term. The user pays it when the ticket is issued: the meta-broker books a transfer from the user to the
//! network carrier (`Reason::DataTransfer`, under the job) and sends the bill (`Market::Invoice`), so the job's
//! recorded cost is the provider's usage bill plus its DTC.
//!
//! An application wider than every site is refused (`Job::Rejected` with the reason, counted `too_wide`); one with no
//! free window within the horizon, or whose window was refused, rolls over to the next interval (counted
//! `rolled_over`).

pub mod bounds;
pub mod etc;
pub mod heuristics;
pub mod prices;

use std::collections::BTreeMap;
use std::sync::Arc;

use rand::RngExt;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use self::bounds::lower_bounds;
use self::etc::EtcModel;
use self::heuristics::{ProfileView, Profiles, Request, Resource, Segment, Unplaced};
use super::round::Rounds;
use super::{App, Policy};
use crate::ledger::{Account, Book, Currency, External, Reason, Transfer};
use crate::protocol::{JobId, JobMsg, JobSpec, LeaseMsg, MarketMsg, Msg, ResourceUpdate, Ticket, TimerMsg};
use crate::report::Report;
use crate::sim::{Agent, AgentId, Ctx, Envelope, GridMarket, SimTime};

/// Where an application's trade-off factor δ comes from (Garg 2010 §5.4's two cases).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Delta {
    /// Case 1: the meta-broker's, one value in [0, 1] for every application.
    Fixed(f64),
    /// Case 2: each user's own, drawn U[0, 1] per application (the thesis gives no distribution): "per-user".
    PerUser(PerUser),
}

/// The word "per-user".
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PerUser {
    /// Drawn U[0, 1] per application.
    PerUser,
}

/// The trade-off settings of a meta-broker.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TradeoffParams {
    /// δ.
    pub delta: Delta,
    /// How ETC varies across sites.
    pub etc: EtcModel,
    /// How far ahead providers report their slots \[s\].
    pub horizon: f64,
    /// The initial DTC as a share of an application's average execution cost (Garg 2010 §5.4: 1/10); none without.
    pub data_transfer: Option<f64>,
}

impl Default for TradeoffParams {
    fn default() -> TradeoffParams {
        TradeoffParams { delta: Delta::Fixed(0.5), etc: EtcModel::HIGH, horizon: 1e8, data_transfer: None }
    }
}

/// An application the meta-broker received.
struct Waiting {
    spec: JobSpec,
    arrival: SimTime,
    delta: f64,
    /// ETC(i, j) by provider, drawn at its first round.
    etc: BTreeMap<AgentId, f64>,
    /// Its window awaits the provider's answer.
    answering: bool,
}

/// A window sent to a provider, awaiting its answer.
struct Reserving {
    job: JobId,
    provider: AgentId,
    start: SimTime,
    finish: f64,
    cost: f64,
    /// Its DTC, part of `cost` [G$].
    transfer: f64,
    /// Runtime on the reference CPU that lasts ETC(i, j) on the provider [s].
    runtime: f64,
}

/// The time/cost trade-off meta-broker (see the module documentation).
pub struct TradeoffMetaBroker {
    policy: Arc<dyn Policy<Profiles>>,
    params: TradeoffParams,
    /// The catalogue (each registered provider's last update), the users, the interval's rounds and the windows
    /// sent to providers.
    rounds: Rounds<ResourceUpdate, Reserving>,
    /// Applications waiting for a round, by id.
    queue: BTreeMap<JobId, Waiting>,
    /// Every application that reached a round, for the bounds: arrival, CPUs, δ, ETC by provider.
    seen: Vec<(f64, u32, f64, BTreeMap<AgentId, f64>)>,
    tickets: u64,
    too_wide: u64,
    rolled_over: u64,
    /// What the tickets quoted, summed [G$].
    quoted: f64,
    /// The planned finish of the last application ticketed, and the sum of response times [s].
    last_finish: f64,
    /// The planned finish of the last application ticketed that more than one provider could run [s].
    last_shared_finish: f64,
    responses: f64,
    first_arrival: Option<f64>,
    violations: Vec<(f64, String)>,
    /// The DTCs users paid (to the network carrier).
    book: Book,
    /// Their sum [G$].
    transfers: f64,
}

impl TradeoffMetaBroker {
    /// A meta-broker over the providers `members`, allocating by `policy` (a [`Heuristic`](heuristics::Heuristic), a
    /// registered [`MetaPolicy`](super::MetaPolicy) as [`OneAtATime`](super::OneAtATime), or a registered policy of
    /// the family) with `params` every `interval` seconds.
    pub fn new(
        policy: impl Into<Arc<dyn Policy<Profiles>>>,
        params: TradeoffParams,
        interval: f64,
        members: impl IntoIterator<Item = AgentId>,
    ) -> TradeoffMetaBroker {
        TradeoffMetaBroker {
            policy: policy.into(),
            params,
            rounds: Rounds::new(interval, members),
            queue: BTreeMap::new(),
            seen: Vec::new(),
            tickets: 0,
            too_wide: 0,
            rolled_over: 0,
            quoted: 0.0,
            last_finish: 0.0,
            last_shared_finish: 0.0,
            responses: 0.0,
            first_arrival: None,
            violations: Vec::new(),
            book: Book::default(),
            transfers: 0.0,
        }
    }

    fn on_request(&mut self, job: &JobSpec, from: AgentId, ctx: &mut Ctx<'_>) {
        if !self.rounds.is_user(from) {
            let reason = "the user is not registered with the meta-broker".to_string();
            return ctx.send(job.owner, Msg::Job(JobMsg::Rejected { job: job.id, reason }));
        }
        let delta = match self.params.delta {
            Delta::Fixed(d) => d,
            Delta::PerUser(_) => ctx.rng().random_range(0.0..=1.0),
        };
        let arrival = ctx.now();
        self.first_arrival.get_or_insert(arrival.secs());
        let waiting = Waiting { spec: job.clone(), arrival, delta, etc: BTreeMap::new(), answering: false };
        self.queue.insert(job.id, waiting);
        self.rounds.arm(ctx);
    }

    /// The end of an interval: ask every provider for its free slots.
    fn on_round(&mut self, ctx: &mut Ctx<'_>) {
        self.rounds.tick();
        if self.rounds.asking() || self.queue.values().all(|w| w.answering) {
            return;
        }
        if self.rounds.registered() == 0 {
            let reason = "no provider is registered with the meta-broker".to_string();
            for (_, w) in std::mem::take(&mut self.queue) {
                ctx.send(w.spec.owner, Msg::Job(JobMsg::Rejected { job: w.spec.id, reason: reason.clone() }));
            }
            return;
        }
        let horizon = self.params.horizon;
        self.rounds.ask(|| Msg::Market(MarketMsg::SlotsQuery { horizon }), ctx);
    }

    fn on_update(&mut self, from: AgentId, update: &ResourceUpdate, ctx: &mut Ctx<'_>) {
        if self.rounds.answer(from, update.clone()) {
            self.allocate_round(ctx);
        }
    }

    /// Every provider answered: allocate the waiting applications and reserve their windows.
    fn allocate_round(&mut self, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        let providers = self.rounds.providers();
        let mut resources: Vec<Resource> = self
            .rounds
            .offers()
            .map(|(_, u)| Resource { cpus: u.cpus, price: u.price, free: profile(&u.slots, now), transfer: 0.0 })
            .collect();
        if let Some(share) = self.params.data_transfer {
            for r in &mut resources {
                let bandwidth = 1.0 - ctx.rng().random::<f64>();
                r.transfer = share / bandwidth;
            }
        }
        let ids: Vec<JobId> = self.queue.iter().filter(|(_, w)| !w.answering).map(|(&id, _)| id).collect();
        let mut requests = Vec::with_capacity(ids.len());
        for id in &ids {
            let w = self.queue.get_mut(id).expect("listed from the queue");
            let fresh = w.etc.is_empty();
            for (p, u) in self.rounds.offers() {
                if !w.etc.contains_key(&p) {
                    let mean = w.spec.runtime / u.speed;
                    w.etc.insert(p, self.params.etc.draw(mean, ctx.rng()));
                }
            }
            if fresh {
                self.seen.push((w.arrival.secs(), w.spec.pes, w.delta, w.etc.clone()));
            }
            let etc = providers.iter().map(|p| w.etc[p]).collect();
            requests.push(Request { arrival: w.arrival.secs(), cpus: w.spec.pes, etc, delta: w.delta });
        }
        let apps: Vec<App> =
            ids.iter().map(|id| &self.queue[id]).map(|w| App::of_request(&w.spec, w.arrival.secs())).collect();
        let speeds: Vec<f64> = self.rounds.offers().map(|(_, u)| u.speed).collect();
        let view =
            ProfileView { apps: &apps, requests: &requests, resources: &resources, speeds: &speeds, now: now.secs() };
        let outcome = self.policy.place(view);
        let outcome = match outcome {
            Ok(o) => o,
            Err(e) => {
                // The meta-broker built this input itself: a bad one is a bug, reported, and the queue waits.
                self.violations.push((now.secs(), format!("round refused its own input: {e}")));
                return self.rounds.arm(ctx);
            }
        };
        for p in &outcome.placements {
            let id = ids[p.app];
            let w = self.queue.get_mut(&id).expect("placed from the queue");
            w.answering = true;
            let provider = providers[p.site];
            let (start, end) = (at(p.start), at(p.finish));
            let speed = self.rounds.offer(provider).expect("placed on a registered provider").speed;
            let runtime = runtime_within(p.start, p.finish, speed);
            let (cost, transfer) = (p.cost, p.transfer);
            let reserving = Reserving { job: id, provider, start, finish: p.finish, cost, transfer, runtime };
            let request = self.rounds.hold(reserving);
            ctx.send(provider, Msg::Lease(LeaseMsg::Reserve { request, start, end, pes: w.spec.pes }));
        }
        for &(app, why) in &outcome.unplaced {
            let id = ids[app];
            match why {
                Unplaced::TooWide { .. } => {
                    let w = self.queue.remove(&id).expect("unplaced from the queue");
                    self.too_wide += 1;
                    let reason = why.to_string();
                    ctx.send(w.spec.owner, Msg::Job(JobMsg::Rejected { job: id, reason }));
                }
                Unplaced::NoSlot => {
                    self.rolled_over += 1;
                    tracing::debug!(metabroker = ctx.name(), job = id, "rolled over: {why}");
                }
            }
        }
        if self.queue.values().any(|w| !w.answering) {
            self.rounds.arm(ctx);
        }
    }

    fn on_reserved(&mut self, request: u64, reservation: u64, ctx: &mut Ctx<'_>) {
        let Some(r) = self.rounds.release(request) else { return };
        let Some(w) = self.queue.remove(&r.job) else { return };
        self.tickets += 1;
        self.quoted += r.cost;
        self.last_finish = self.last_finish.max(r.finish);
        if self.rounds.offers().filter(|(_, u)| u.cpus >= w.spec.pes).nth(1).is_some() {
            self.last_shared_finish = self.last_shared_finish.max(r.finish);
        }
        self.responses += r.finish - w.arrival.secs();
        let ticket = Ticket {
            job: r.job,
            part: r.job,
            cpus: w.spec.pes,
            provider: r.provider,
            reservation,
            start: r.start,
            cost: r.cost,
            prepaid: false,
            runtime: Some(r.runtime),
        };
        ctx.send(w.spec.owner, Msg::Market(MarketMsg::Ticket(Box::new(ticket))));
        if r.transfer > 0.0 {
            let carrier = Account::External(External::NetworkCarrier);
            let transfer = Transfer {
                at: ctx.now(),
                payer: Account::Agent(w.spec.owner),
                payee: carrier,
                amount: r.transfer,
                currency: Currency::GridDollar,
                reason: Reason::DataTransfer,
                job: Some(r.job),
                booked_by: ctx.me(),
            };
            self.transfers += self.book.book(transfer);
            ctx.send(w.spec.owner, Msg::Market(MarketMsg::Invoice { job: r.job, amount: r.transfer }));
        }
    }

    /// A window refused (the provider's schedule moved under it): the application rolls over.
    fn on_refused(&mut self, request: u64, ctx: &mut Ctx<'_>) {
        let Some(r) = self.rounds.release(request) else { return };
        if let Some(w) = self.queue.get_mut(&r.job) {
            w.answering = false;
            self.rolled_over += 1;
            self.rounds.arm(ctx);
        }
    }

    /// The lower bounds over every application that reached a round, on the providers as they last reported.
    fn bounds(&self) -> bounds::Bounds {
        let providers = self.rounds.providers();
        let resources: Vec<Resource> = self
            .rounds
            .offers()
            .map(|(_, u)| Resource { cpus: u.cpus, price: u.price, free: Vec::new(), transfer: 0.0 })
            .collect();
        let requests: Vec<Request> = self
            .seen
            .iter()
            .filter(|s| providers.iter().all(|p| s.3.contains_key(p)))
            .map(|(arrival, cpus, delta, etc)| Request {
                arrival: *arrival,
                cpus: *cpus,
                etc: providers.iter().map(|p| etc[p]).collect(),
                delta: *delta,
            })
            .collect();
        lower_bounds(&requests, &resources)
    }
}

/// The reference-PE runtime that lasts `finish − start` on a PE of `speed`, at most: the provider ends the job at
/// start + runtime / speed, which rounding may put a hair past the window, into the next reservation.
fn runtime_within(start: f64, finish: f64, speed: f64) -> f64 {
    let mut runtime = (finish - start) * speed;
    while runtime > 0.0 && start + runtime / speed > finish {
        runtime = runtime.next_down();
    }
    runtime
}

/// A placement's instant in a message; placements lie at or after the round's time.
fn at(secs: f64) -> SimTime {
    SimTime::new(secs).expect("a placement starts at or after the round")
}

/// A site's free profile from its maximal free rectangles: at every instant the most PEs any rectangle covering
/// it offers (the rectangles of a profile overlap; their upper envelope is the profile), from `now` on. A sweep over
/// the rectangles' edges with the PEs of the open ones counted: O(k log k) for k rectangles.
pub fn profile(slots: &[(SimTime, SimTime, u32)], now: SimTime) -> Vec<Segment> {
    // Edges in time order, closings before openings at one instant.
    let mut edges: Vec<(SimTime, bool, u32)> = Vec::with_capacity(2 * slots.len());
    for &(start, end, pes) in slots.iter().filter(|s| s.1 > now) {
        edges.push((start.max(now), true, pes));
        edges.push((end, false, pes));
    }
    edges.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut open: BTreeMap<u32, usize> = BTreeMap::new();
    let mut segments: Vec<Segment> = Vec::new();
    let mut k = 0;
    while k < edges.len() {
        let at = edges[k].0;
        while k < edges.len() && edges[k].0 == at {
            let (_, opening, pes) = edges[k];
            if opening {
                *open.entry(pes).or_default() += 1;
            } else if let Some(n) = open.get_mut(&pes) {
                *n -= 1;
                if *n == 0 {
                    open.remove(&pes);
                }
            }
            k += 1;
        }
        let free = open.keys().next_back().copied().unwrap_or(0);
        if let Some(last) = segments.last_mut()
            && last.end.is_infinite()
        {
            last.end = at.secs();
        }
        match segments.last_mut() {
            Some(last) if last.free == free && last.end == at.secs() => last.end = f64::INFINITY,
            _ if free == 0 => {}
            _ => segments.push(Segment { start: at.secs(), end: f64::INFINITY, free }),
        }
    }
    // Every rectangle closes, so the last open segment was closed at the last edge.
    segments.retain(|s| s.end > s.start);
    segments
}

impl Agent<GridMarket> for TradeoffMetaBroker {
    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>) {
        match &env.msg {
            Msg::Market(MarketMsg::RegisterProvider(update)) => {
                self.rounds.register_provider(env.from(), (**update).clone(), ctx)
            }
            Msg::Market(MarketMsg::RegisterUser) => self.rounds.register_user(env.from(), ctx),
            Msg::Market(MarketMsg::ResourceRequest(job)) => self.on_request(job, env.from(), ctx),
            Msg::Market(MarketMsg::ResourceUpdate(update)) => self.on_update(env.from(), update, ctx),
            Msg::Lease(LeaseMsg::Reserved { request, reservation }) => self.on_reserved(*request, *reservation, ctx),
            Msg::Lease(LeaseMsg::ReserveRefused { request, .. }) => self.on_refused(*request, ctx),
            Msg::Timer(TimerMsg::Round { .. }) => self.on_round(ctx),
            other => crate::sim::unhandled(ctx, other.kind()),
        }
    }

    fn report(&self, _now: SimTime, out: &mut Report) {
        let b = self.bounds();
        let since_first = |t: f64| self.first_arrival.map_or(0.0, |f| (t - f).max(0.0));
        let makespan = since_first(self.last_finish);
        let gap = |x: f64, bound: f64| if bound > 0.0 { x / bound - 1.0 } else { 0.0 };
        out.metrics.extend([
            ("rounds", self.rounds.queries() as f64),
            ("tickets", self.tickets as f64),
            ("too_wide", self.too_wide as f64),
            ("rolled_over", self.rolled_over as f64),
            ("spending", self.quoted),
            ("data_transfer", self.transfers),
            ("providers", self.rounds.registered() as f64),
            ("users", self.rounds.users() as f64),
            ("pending", self.queue.len() as f64),
            ("makespan", makespan),
            ("makespan_shared", since_first(self.last_shared_finish)),
            ("mean_response", if self.tickets > 0 { self.responses / self.tickets as f64 } else { 0.0 }),
            ("cost_bound", b.cost),
            ("makespan_bound", b.makespan()),
            ("cost_bound_gap", gap(self.quoted, b.cost)),
            ("makespan_bound_gap", gap(makespan, b.makespan())),
        ]);
        out.violations.extend(self.violations.iter().cloned());
        out.transfers.extend_from_slice(self.book.transfers());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: f64) -> SimTime {
        SimTime::new(s).unwrap()
    }

    #[test]
    fn maximal_rectangles_become_their_upper_envelope() {
        // The profile 4 | 2 | 4 over [0, 10), [10, 20), [20, 25), then 0: rectangles (0, 10, 4), (0, 25, 2),
        // (20, 25, 4).
        let slots = [(t(0.0), t(10.0), 4), (t(0.0), t(25.0), 2), (t(20.0), t(25.0), 4)];
        let p = profile(&slots, t(0.0));
        let seg = |start, end, free| Segment { start, end, free };
        assert_eq!(p, [seg(0.0, 10.0, 4), seg(10.0, 20.0, 2), seg(20.0, 25.0, 4)]);
        // From a later instant the profile starts there.
        assert_eq!(profile(&slots, t(5.0))[0], seg(5.0, 10.0, 4));
        assert!(profile(&[], t(0.0)).is_empty());
    }

    #[test]
    fn a_ticketed_runtime_never_outlasts_its_window() {
        // 13724.712592953512 + 60.0 / 1.33 rounds past the window that ETC × speed would give.
        for (start, etc, speed) in [(13_724.712_592_953_512, 45.113, 1.33), (0.1, 0.3, 1.14), (50.0, 20.0, 2.0)] {
            let finish = start + etc;
            let r = runtime_within(start, finish, speed);
            assert!(start + r / speed <= finish);
            assert!((r - etc * speed).abs() <= 1e-9 * etc * speed);
        }
    }
}
