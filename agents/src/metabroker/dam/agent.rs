//! The double-auction-inspired meta-broker (Garg 2010 ch7, Fig 7.1): the auctioneer of §7.2's three stages, with
//! DAM or one of its baselines as the configured [`AuctionPolicy`](super::AuctionPolicy), or a registered policy
//! (the matching is delegated to it, see [`super`]).
//!
//! Collection: providers register at start (`Market::RegisterProvider`, answered `Registered`, or `RegisterRefused`
//! outside its market); users register (`RegisterUser`) and send their applications (`ResourceRequest`: CPUs,
//! runtime estimate, deadline, budget as the initial valuation; the arrival is the submit time). At the end of every
//! scheduling interval (multiples of SI) the meta-broker asks every registered provider for its queues
//! (`QueueQuery`, answered `QueueInfo`).
//!
//! Valuation and matching, once every report is in: applications no queue can ever serve, or no longer by their
//! deadline, are dropped (`RequestDropped` with the reason); the policy matches the rest; each match is sent to its
//! provider (`Matched`, answered `Lease::Reserved` or `ReserveRefused`) and, once held, to its user (`Ticket`: the
//! user submits the job into the slot, `Job::SubmitReserved`, and the provider bills it at the matched price).
//! Unmatched applications, and those whose window was refused, stay pending and are valued again next interval.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{Application, DamParams, Market, MarketQueue, QueueView, Queues, SlotGeneration, screen};
use crate::metabroker::Policy;
use crate::metabroker::round::Rounds;
use crate::protocol::{JobId, JobSpec, LeaseMsg, MarketMsg, Msg, QueueMatch, QueueReport, Ticket, TimerMsg};
use crate::report::Report;
use crate::sim::{Agent, AgentId, Ctx, Envelope, GridMarket, SimTime};

/// An application waiting for a match.
struct Pending {
    spec: JobSpec,
    /// st_i: when the meta-broker received it.
    submit: SimTime,
    /// Its matched window awaits the provider's answer.
    answering: bool,
}

/// A match sent to a provider, awaiting its answer.
struct Reserving {
    job: JobId,
    provider: AgentId,
    start: SimTime,
    cost: f64,
    pes: u32,
}

/// The meta-broker of Garg (2010) ch7 (see the module documentation).
pub struct AuctionMetaBroker {
    policy: Arc<dyn Policy<Queues>>,
    params: DamParams,
    /// The catalogue (each registered provider's last queue report, none before its first), the users, the
    /// interval's rounds and the matches sent.
    rounds: Rounds<Option<QueueReport>, Reserving>,
    /// Applications waiting for a match, by job id.
    pending: BTreeMap<JobId, Pending>,
    tickets: u64,
    dropped: u64,
    too_wide: u64,
    refused_windows: u64,
    /// What the tickets quoted, summed [G$] (the ledger has what was paid).
    quoted: f64,
}

impl AuctionMetaBroker {
    /// A meta-broker running `policy` (DAM, a baseline, a registered [`MetaPolicy`] as
    /// [`OneAtATime`](crate::metabroker::OneAtATime), or a registered policy of the family) with `params` every
    /// `interval` seconds over the providers `members`.
    ///
    /// [`MetaPolicy`]: crate::metabroker::MetaPolicy
    pub fn new(
        policy: impl Into<Arc<dyn Policy<Queues>>>,
        params: DamParams,
        interval: f64,
        members: impl IntoIterator<Item = AgentId>,
    ) -> AuctionMetaBroker {
        AuctionMetaBroker {
            policy: policy.into(),
            params,
            rounds: Rounds::new(interval, members),
            pending: BTreeMap::new(),
            tickets: 0,
            dropped: 0,
            too_wide: 0,
            refused_windows: 0,
            quoted: 0.0,
        }
    }

    /// A user's application joins the pending bids (a stranger's is dropped).
    fn on_request(&mut self, job: &JobSpec, from: AgentId, ctx: &mut Ctx<'_>) {
        if !self.rounds.is_user(from) {
            self.dropped += 1;
            let reason = "the user is not registered with the meta-broker".to_string();
            return ctx.send(job.owner, Msg::Market(MarketMsg::RequestDropped { job: job.id, reason }));
        }
        self.pending.insert(job.id, Pending { spec: job.clone(), submit: ctx.now(), answering: false });
        self.rounds.arm(ctx);
    }

    /// End of an interval: collection, every provider reports its queues.
    fn on_round(&mut self, ctx: &mut Ctx<'_>) {
        self.rounds.tick();
        if self.pending.is_empty() {
            return;
        }
        let horizon = if self.params.slots == SlotGeneration::Packaged { self.params.horizon } else { 0.0 };
        self.rounds.ask(|| Msg::Market(MarketMsg::QueueQuery { horizon }), ctx);
    }

    fn on_queue_info(&mut self, from: AgentId, report: &QueueReport, ctx: &mut Ctx<'_>) {
        if self.rounds.answer(from, Some(report.clone())) {
            self.match_interval(ctx);
        }
    }

    /// The market as the reports and the pending applications give it.
    fn market(&self, now: SimTime) -> (Market, Vec<AgentId>) {
        let providers = self.rounds.providers();
        let queues = self
            .rounds
            .offers()
            .enumerate()
            .filter_map(|(site, (_, report))| Some((site, report.as_ref()?)))
            .flat_map(|(site, report)| {
                report.queues.iter().map(move |q| MarketQueue {
                    site,
                    queue: q.queue,
                    pes: q.pes,
                    free: q.free,
                    load: q.load,
                    wait: q.wait,
                    valuation: q.valuation,
                    speed: report.speed,
                    slots: q.slots.iter().map(|s| (s.0.secs(), s.1.secs(), s.2)).collect(),
                })
            })
            .collect();
        let apps = self
            .pending
            .values()
            .filter(|p| !p.answering)
            .map(|p| Application {
                id: p.spec.id,
                pes: p.spec.pes,
                runtime: p.spec.estimate.max(p.spec.runtime),
                deadline: p.spec.deadline.map_or(f64::INFINITY, SimTime::secs),
                valuation: p.spec.budget.unwrap_or(0.0),
                submit: p.submit.secs(),
            })
            .collect();
        (Market { now: now.secs(), queues, apps }, providers)
    }

    /// Valuation and matching: drops what no queue can serve in time, matches the rest, sends the matches.
    fn match_interval(&mut self, ctx: &mut Ctx<'_>) {
        let (mut market, providers) = self.market(ctx.now());
        let refused = screen(&market);
        for (i, why) in refused.iter().rev() {
            let app = market.apps.remove(*i);
            let Some(p) = self.pending.remove(&app.id) else { continue };
            self.dropped += 1;
            if matches!(why, super::Refusal::TooWide { .. }) {
                self.too_wide += 1;
            }
            let reason = format!("unmatched at t={}: {why}", ctx.now());
            ctx.send(p.spec.owner, Msg::Market(MarketMsg::RequestDropped { job: app.id, reason }));
        }
        let round = self.policy.place(QueueView { params: &self.params, market: &market });
        for placement in &round.placements {
            let (app, queue) = (&market.apps[placement.app], &market.queues[placement.queue]);
            let (Ok(start), Ok(end)) = (SimTime::new(placement.start), SimTime::new(placement.end)) else {
                tracing::error!(metabroker = ctx.name(), job = app.id, "a match outside simulated time: skipped");
                continue;
            };
            let provider = providers[queue.site];
            let cost = placement.price * f64::from(app.pes) * (placement.end - placement.start);
            let request = self.rounds.hold(Reserving { job: app.id, provider, start, cost, pes: app.pes });
            let (bid, ask) = placement.scores.unzip();
            let m = QueueMatch {
                request,
                job: app.id,
                queue: queue.queue,
                start,
                end,
                pes: app.pes,
                price: placement.price,
                bid,
                ask,
            };
            ctx.send(provider, Msg::Market(MarketMsg::Matched(Box::new(m))));
            if let Some(p) = self.pending.get_mut(&app.id) {
                p.answering = true;
            }
        }
        if !self.pending.is_empty() {
            self.rounds.arm(ctx);
        }
    }

    /// The provider holds the window: the user gets its ticket.
    fn on_reserved(&mut self, request: u64, reservation: u64, ctx: &mut Ctx<'_>) {
        let Some(Reserving { job, provider, start, cost, pes }) = self.rounds.release(request) else { return };
        let Some(p) = self.pending.remove(&job) else { return };
        self.tickets += 1;
        self.quoted += cost;
        let ticket =
            Ticket { job, part: job, cpus: pes, provider, reservation, start, cost, prepaid: false, runtime: None };
        ctx.send(p.spec.owner, Msg::Market(MarketMsg::Ticket(Box::new(ticket))));
    }

    /// The provider could not hold the window: the application waits for the next interval.
    fn on_refused(&mut self, request: u64, reason: &str, ctx: &mut Ctx<'_>) {
        let Some(r) = self.rounds.release(request) else { return };
        self.refused_windows += 1;
        tracing::debug!(metabroker = ctx.name(), job = r.job, reason, "matched window refused: pending again");
        if let Some(p) = self.pending.get_mut(&r.job) {
            p.answering = false;
        }
        self.rounds.arm(ctx);
    }
}

impl Agent<GridMarket> for AuctionMetaBroker {
    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>) {
        match &env.msg {
            Msg::Market(MarketMsg::RegisterProvider(_)) => self.rounds.register_provider(env.from(), None, ctx),
            Msg::Market(MarketMsg::RegisterUser) => self.rounds.register_user(env.from(), ctx),
            Msg::Market(MarketMsg::ResourceRequest(job)) => self.on_request(job, env.from(), ctx),
            Msg::Market(MarketMsg::QueueInfo(report)) => self.on_queue_info(env.from(), report, ctx),
            Msg::Lease(LeaseMsg::Reserved { request, reservation }) => self.on_reserved(*request, *reservation, ctx),
            Msg::Lease(LeaseMsg::ReserveRefused { request, reason }) => self.on_refused(*request, reason, ctx),
            Msg::Timer(TimerMsg::Round { .. }) => self.on_round(ctx),
            other => crate::sim::unhandled(ctx, other.kind()),
        }
    }

    fn report(&self, _now: SimTime, out: &mut Report) {
        out.metrics.extend([
            ("rounds", self.rounds.ticks() as f64),
            ("tickets", self.tickets as f64),
            ("dropped", self.dropped as f64),
            ("too_wide", self.too_wide as f64),
            ("refused_windows", self.refused_windows as f64),
            ("spending", self.quoted),
            ("providers", self.rounds.registered() as f64),
            ("users", self.rounds.users() as f64),
            ("pending", self.pending.len() as f64),
        ]);
    }
}
