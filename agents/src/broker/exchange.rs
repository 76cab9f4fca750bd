//! A user broker on a market exchange (Garg 2010 ch 8): it registers and logs in, then for each job discovers what
//! the exchange offers, leases a commodity slot at its posted price or bids in an auction, and submits the job to the
//! reserved slot of the ticket the exchange sends. A job that finds nothing, loses its auction or whose reservation
//! fails tries again `retry` seconds later, up to `attempts` times, and is then dropped. A bidding broker asks for
//! the open auctions only, and keeps the list until the earliest of them ends: its jobs due meanwhile bid without
//! asking again (an auction opened in between is seen at the next discovery).
//!
//! Our choice, where the thesis is silent: the broker's valuation of a CPU-second is its job's budget spread over the
//! CPUs and the lease time (`budget / (pes × lease)`), or the strategy's `valuation` for a job without a budget; it
//! bids by its trader strategy (`crate::exchange::traders`): that value (truthful), `shade` times it (shaded), uniform
//! in [0, value] (ZI-C) or in [0, ceiling] (ZI-U), or ZIP's adapted margin on it, which learns from the clearing prices
//! the call markets it bid in announce (`Exchange::Cleared`). It needs leases at least as long as the job's estimate
//! on a reference PE, and, with a deadline, a slot or auction that can end the job by it.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{Submission, UserBroker};
use crate::exchange::mechanism::Side;
use crate::exchange::pick;
use crate::exchange::traders::{Limits, Shout, Strategy, TraderStrategy, Unit};
use crate::model::JobId;
use crate::protocol::{
    AuctionInfo, BidRequest, Discovery, ExchangeMsg, Item, LeaseRequest, Offers, Quote, Refusal, TimerMsg, Trading,
};
use crate::report::JobOutcome;
use crate::sim::{AgentId, Ctx, SimTime};

/// What a bidding broker knows of the open auctions: the list of its last discovery, and when the first of them ends.
pub(super) type Known = Option<(Arc<[AuctionInfo]>, SimTime)>;

/// A bidding broker's trader: its strategy, drawn at its first bid, and the value it last bid for.
#[derive(Debug, Default)]
pub(super) struct Bidder {
    strategy: Option<Box<dyn TraderStrategy>>,
    value: f64,
}

/// How a broker trades on an exchange.
#[derive(Clone, Debug, PartialEq)]
pub struct ExchangeStrategy {
    /// Lease at posted prices, or bid in auctions.
    pub trade: Trade,
    /// Which auction to bid in.
    pub choice: AuctionChoice,
    /// Its value of a CPU-second for a job without a budget [G$].
    pub valuation: f64,
    /// What it bids, as a fraction of its value, when it shades its bids.
    pub shade: f64,
    /// How it prices its bids.
    pub bidding: Strategy,
    /// The highest bid a zero-intelligence unconstrained bidder draws [G$ per CPU-second] (infinite for the others).
    pub ceiling: f64,
    /// Leases or bids a job tries before it is dropped.
    pub attempts: u32,
    /// How long a job waits before it tries again \[s\].
    pub retry: f64,
}

/// How a broker trades.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Trade {
    /// The cheapest commodity slot it can afford (the commodity market).
    #[default]
    Lease,
    /// An auction (a forward auction of a slot, or a call market).
    Bid,
}

/// Which of the open auctions a broker bids in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AuctionChoice {
    /// The one that clears first (then the lower id).
    #[default]
    Earliest,
    /// One chosen uniformly at random (the scalability experiment of Garg 2010 §8.6).
    Random,
}

impl UserBroker {
    fn exchange(&self) -> Option<(AgentId, &ExchangeStrategy)> {
        match &self.submission {
            Submission::Exchange { to, strategy } => Some((*to, strategy)),
            _ => None,
        }
    }

    /// Exchange mode, once logged in, for every job due and not sent yet: bids in an auction it knows is open, or
    /// asks the exchange what it offers (a bidder: the open auctions only).
    pub(super) fn discover_unsent(&mut self, ctx: &mut Ctx<'_>) {
        let (Some((to, strategy)), Some(token)) = (self.exchange(), self.session) else { return };
        let bidding = strategy.trade == Trade::Bid;
        let now = ctx.now();
        let known = self.known.as_ref().filter(|k| now < k.1).map(|k| k.0.clone());
        for id in std::mem::take(&mut self.unsent) {
            if let Some(auctions) = &known {
                self.bid(id, auctions, ctx);
                continue;
            }
            let Some(t) = self.tracked(id) else { continue };
            let (cpus, duration) = if bidding { (0, 0.0) } else { (t.job.spec.pes, t.job.spec.estimate) };
            ctx.send(to, ExchangeMsg::Discover(Box::new(Discovery { token, request: id, cpus, duration })));
        }
    }

    pub(super) fn on_exchange(&mut self, from: AgentId, msg: &ExchangeMsg, ctx: &mut Ctx<'_>) {
        match msg {
            ExchangeMsg::Registered => ctx.send(from, ExchangeMsg::Login { login: ctx.name().into() }),
            ExchangeMsg::Session { token } => {
                self.session = Some(*token);
                self.discover_unsent(ctx);
            }
            ExchangeMsg::Offers(offers) => self.on_offers(offers, ctx),
            ExchangeMsg::Lost { job, .. } => self.failed(*job, "lost its auction", ctx),
            ExchangeMsg::Cleared { price, .. } => self.on_cleared(*price, ctx),
            ExchangeMsg::Refused(r) => self.on_refused(r, ctx),
            _ => crate::sim::unhandled(ctx, msg.kind()),
        }
    }

    fn on_refused(&mut self, r: &Refusal, ctx: &mut Ctx<'_>) {
        match r.what.as_str() {
            "exchange.lease" | "exchange.bid" | "exchange.reserve" => {
                let why = format!("{} refused: {}", r.what, r.reason);
                self.failed(r.request, &why, ctx)
            }
            _ => tracing::warn!(broker = ctx.name(), what = r.what.as_str(), reason = r.reason.as_str(), "refused"),
        }
    }

    /// Leases the cheapest affordable commodity slot, or bids in an auction, for the job of `offers.request`.
    fn on_offers(&mut self, offers: &Offers, ctx: &mut Ctx<'_>) {
        let Some((to, strategy)) = self.exchange() else { return };
        if strategy.trade == Trade::Bid {
            // An empty list is not kept: the next job looks again.
            self.known = (!offers.auctions.is_empty()).then(|| (offers.auctions.clone(), offers.until));
            return self.bid(offers.request, &offers.auctions, ctx);
        }
        let Some(token) = self.session else { return };
        let now = ctx.now();
        let Some(t) = self.tracked(offers.request) else { return };
        if t.life.outcome != JobOutcome::Pending {
            return;
        }
        let job = t.job.spec.clone();
        let slot = offers
            .slots
            .iter()
            .filter_map(|o| match o.trading {
                Trading::Commodity { price } if o.auction.is_none() && o.cpus >= job.pes => {
                    let lease = job.estimate / o.speed;
                    let cost = price * f64::from(job.pes) * lease;
                    let end = o.start.max(now) + lease;
                    let fits = end <= o.start + o.duration && job.deadline.is_none_or(|d| end <= d);
                    (fits && job.budget.is_none_or(|b| cost <= b)).then_some((o, price, lease))
                }
                _ => None,
            })
            .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.start.cmp(&b.0.start)).then(a.0.slot.cmp(&b.0.slot)));
        match slot {
            Some((o, _, duration)) => {
                let lease = LeaseRequest { token, slot: o.slot, job, duration };
                ctx.send(to, ExchangeMsg::Lease(Box::new(lease)));
            }
            None => self.failed(offers.request, "no affordable commodity slot", ctx),
        }
    }

    /// Bids for the job `id` in one of the open `auctions` that fits it, at the price its strategy sets on its value of
    /// a CPU-second.
    fn bid(&mut self, id: JobId, auctions: &[AuctionInfo], ctx: &mut Ctx<'_>) {
        let Some((to, strategy)) = self.exchange() else { return };
        let (choice, valuation, bidding) = (strategy.choice, strategy.valuation, strategy.bidding);
        let limits = Limits { floor: 0.0, ceiling: strategy.ceiling, shade: strategy.shade };
        let Some(token) = self.session else { return };
        let Some(t) = self.tracked(id) else { return };
        if t.life.outcome != JobOutcome::Pending {
            return;
        }
        let job = t.job.spec.clone();
        let fits = |a: &AuctionInfo| {
            let biddable = match &a.item {
                Item::Market => true,
                Item::Slot(_) => a.cpus >= job.pes,
                Item::Application(_) => false,
            };
            biddable && a.lease >= job.estimate && job.deadline.is_none_or(|d| a.end + a.lease <= d)
        };
        let auction = match choice {
            AuctionChoice::Earliest => {
                auctions.iter().filter(|a| fits(a)).min_by(|a, b| a.end.cmp(&b.end).then(a.auction.cmp(&b.auction)))
            }
            AuctionChoice::Random => pick(auctions, fits, ctx.rng_stream(1)),
        };
        match auction {
            Some(a) => {
                let (auction, value) =
                    (a.auction, job.budget.map_or(valuation, |b| b / (f64::from(job.pes) * a.lease)));
                let trader = match &mut self.bidder.strategy {
                    Some(t) => t,
                    None => self.bidder.strategy.insert(bidding.build(limits, Side::Bid, 1, ctx.rng())),
                };
                let price = trader.shout(Side::Bid, Unit { index: 0, limit: value }, ctx.rng());
                self.bidder.value = value;
                let bid = BidRequest { token, auction, quote: Quote::Buy { price, job } };
                ctx.send(to, ExchangeMsg::Bid(Box::new(bid)));
            }
            None => self.failed(id, "no open auction fits the job", ctx),
        }
    }

    /// A call market it bid in cleared at `price`: an adaptive bidder learns from it (a trade at that price).
    fn on_cleared(&mut self, price: f64, ctx: &mut Ctx<'_>) {
        let value = self.bidder.value;
        if let Some(trader) = &mut self.bidder.strategy {
            let seen = Shout { side: Side::Ask, price, traded: Some(price) };
            trader.observe(Side::Bid, Some(Unit { index: 0, limit: value }), &seen, ctx.rng());
        }
    }

    /// A lease or bid of `job` came to nothing: try again later, or drop the job after its last attempt.
    fn failed(&mut self, job: JobId, why: &str, ctx: &mut Ctx<'_>) {
        let Some((_, strategy)) = self.exchange() else { return };
        let (attempts, retry) = (strategy.attempts, strategy.retry);
        let now = ctx.now();
        let Some(mut t) = self.tracked(job) else { return };
        if t.life.outcome != JobOutcome::Pending {
            return;
        }
        let tried = {
            let more = t.more();
            more.attempts += 1;
            more.attempts
        };
        let too_late = t.job.spec.deadline.is_some_and(|d| now + retry + t.job.spec.estimate > d);
        if tried >= attempts || too_late {
            let reason = format!("{why} (after {tried} attempt(s))");
            self.end(job, JobOutcome::Dropped, Some(&reason), now.secs());
        } else {
            ctx.wake_in(retry, TimerMsg::Timeout { id: job });
        }
    }

    /// A job's retry is due: discover again.
    pub(super) fn try_again(&mut self, job: JobId, ctx: &mut Ctx<'_>) {
        if self.tracked(job).is_some_and(|t| t.life.outcome == JobOutcome::Pending) {
            self.unsent.push(job);
            self.discover_unsent(ctx);
        }
    }
}
