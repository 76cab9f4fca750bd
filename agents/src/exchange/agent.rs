//! The market exchange actor, Mandi (Garg 2010, *Meta Scheduling for Market-Oriented Grid and Utility Computing*,
//! ch 8): accounts and sessions, a service catalogue of providers' time slots, discovery, commodity leases at
//! posted prices, auctions of any mechanism running side by side and cleared at their end times, reservations
//! through the providers' advance reservation, and contracts booked in the run's ledger.
//!
//! The interaction phases of §8.4 are the messages of [`ExchangeMsg`]. The rules of §8.2 hold: a time slot is in at
//! most one negotiation at a time; an application joins at most one auction; an application's CPUs are reserved
//! only when all of them are matched; a reservation a provider refuses is retried at the next cycle (up to
//! `retries` times). Trading is separated from reservation: a lease or a match becomes a reservation request, which
//! the reservation monitor sends to the provider at its next cycle; the provider's reservation id is the ticket.
//!
//! What is traded is a lease of CPUs over a window. A contract is paid when its reservation is confirmed: the
//! exchange, a clearing house ([`AgentKind::clears`](crate::registry::AgentKind::clears)), books the buyer's payment
//! to the seller, and what a mechanism keeps (McAfee's reduced trade) as its own revenue; the provider bills nothing
//! more for the job (`prepaid` tickets).
//!
//! Where the thesis is silent: an auction's units are CPUs for its lease time (an application of m CPUs bids
//! for m units at one price per CPU-second); a slot of c CPUs traded in an auction offers c units, and what is not
//! sold stays in the catalogue; an application matched with CPUs of several slots gets one reservation and ticket
//! per slot (the later parts under fresh ids, as the meta-broker's split jobs); an application not matched whole
//! loses all its CPUs (the mechanism's other trades stand, at their price); a session token is the agent's own and
//! acts only for it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::mechanism::{Form, Mechanism, MechanismKind, MechanismParams, Order};
use crate::ledger::{Account, Book, Currency, Reason, Transfer};
use crate::model::JobId;
use crate::protocol::{
    Advertisement, AuctionInfo, AuctionRequest, BidRequest, ExchangeMsg, Item, JobSpec, LeaseMsg, LeaseRequest,
    MarketMsg, Msg, Offer, Offers, Quote, Refusal, Ticket, TimerMsg, Trading,
};
use crate::report::Report;
use crate::sim::{Agent, AgentId, Ctx, Envelope, GridMarket, SimTime};

/// How the exchange runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExchangeConfig {
    /// The reservation monitor's period \[s\]: leases and matches are reserved at the next multiple of it.
    pub cycle: f64,
    /// How many times a reservation a provider refused is tried again before the transaction fails.
    pub retries: u32,
    /// Call markets the exchange itself holds, if any.
    pub markets: Option<Markets>,
}

/// Call markets (double auctions) the exchange opens, `count` at a time, each period.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Markets {
    /// How they clear.
    pub mechanism: MechanismKind,
    /// Its parameters.
    pub params: MechanismParams,
    /// How many are open at once.
    pub count: u32,
    /// Each clears this long after it opens, and the next ones open then \[s\].
    pub period: f64,
    /// How long the leases they trade last \[s\].
    pub lease: f64,
    /// When the first ones open.
    pub from: SimTime,
    /// No more open after this time.
    pub until: SimTime,
}

/// A slot of the service catalogue.
#[derive(Clone, Debug)]
struct Slot {
    provider: AgentId,
    /// CPUs not leased or sold yet.
    cpus: u32,
    start: SimTime,
    duration: f64,
    speed: f64,
    trading: Trading,
    /// The auction it is in (its item, or one of its asks).
    auction: Option<u64>,
}

impl Slot {
    fn end(&self) -> SimTime {
        self.start + self.duration
    }
}

/// A consumer's application in an auction: the job, its price per CPU-second, and its arrival order.
#[derive(Clone, Debug)]
struct Buy {
    job: JobSpec,
    price: f64,
    seq: u64,
}

/// An auction, open or clearing.
struct Auction {
    holder: AgentId,
    kind: MechanismKind,
    mechanism: Box<dyn Mechanism>,
    item: Item,
    reserve: f64,
    end: SimTime,
    lease: f64,
    /// Bids, by (owner, job).
    buys: BTreeMap<(AgentId, JobId), Buy>,
    /// Asks, by slot: price per CPU-second and arrival order.
    sells: BTreeMap<u64, (f64, u64)>,
}

/// What an application bought of one slot in an auction: CPUs, and Σ over them of the unit prices paid and
/// received [G$ per CPU-second].
#[derive(Clone, Copy, Debug, Default)]
struct Matched {
    cpus: u32,
    paid: f64,
    got: f64,
}

/// A lease or match waiting to be reserved with its provider.
#[derive(Clone, Debug)]
struct Pending {
    consumer: AgentId,
    /// The id to submit under, and the job it is a part of.
    part: JobId,
    job: JobId,
    slot: u64,
    provider: AgentId,
    cpus: u32,
    lease: f64,
    /// Per CPU-second: what the buyer pays, what the seller gets.
    pays: f64,
    gets: f64,
    tries: u32,
    /// Traded in an auction (else leased at a posted price).
    auctioned: bool,
}

/// What the exchange counts.
#[derive(Clone, Debug, Default)]
struct Stats {
    registered: u64,
    refused_unauthenticated: u64,
    refused: u64,
    advertised: u64,
    discoveries: u64,
    leases: u64,
    auctions_held: u64,
    auctions_cleared: u64,
    bids: u64,
    /// CPUs matched by auctions.
    matched: u64,
    /// Applications that lost an auction.
    lost: u64,
    contracts: u64,
    /// Reservations refused `retries + 1` times: failed transactions.
    failed: u64,
    /// Σ over contracts of the unit price, to report the mean.
    price_sum: f64,
    /// What the exchange kept of the buyers' payments (McAfee's reduced trade).
    kept: f64,
}

/// The market exchange agent.
pub struct Exchange {
    config: ExchangeConfig,
    accounts: BTreeMap<Box<str>, AgentId>,
    registered: BTreeMap<AgentId, Box<str>>,
    sessions: BTreeMap<u64, AgentId>,
    /// Each agent's session token.
    tokens: BTreeMap<AgentId, u64>,
    slots: BTreeMap<u64, Slot>,
    next_slot: u64,
    auctions: BTreeMap<u64, Auction>,
    /// The open auctions as discovery shows them, shared by every answer until one opens or the first ends.
    listing: Option<(Arc<[AuctionInfo]>, SimTime)>,
    /// When each auction that cleared closed, to tell a late bidder.
    closed: BTreeMap<u64, SimTime>,
    next_auction: u64,
    /// The auction each application is in.
    joined: BTreeMap<(AgentId, JobId), u64>,
    next_seq: u64,
    /// Reservations waiting for the next cycle, and those sent, by request number.
    pending: Vec<Pending>,
    reserving: BTreeMap<u64, Pending>,
    next_request: u64,
    next_part: JobId,
    cycle_armed: bool,
    book: Book,
    stats: Stats,
}

impl Exchange {
    /// An exchange with no account, slot or auction yet.
    pub fn new(config: ExchangeConfig) -> Exchange {
        Exchange {
            config,
            accounts: BTreeMap::new(),
            registered: BTreeMap::new(),
            sessions: BTreeMap::new(),
            tokens: BTreeMap::new(),
            slots: BTreeMap::new(),
            next_slot: 1,
            auctions: BTreeMap::new(),
            listing: None,
            closed: BTreeMap::new(),
            next_auction: 1,
            joined: BTreeMap::new(),
            next_seq: 0,
            pending: Vec::new(),
            reserving: BTreeMap::new(),
            next_request: 0,
            next_part: Ticket::FIRST_PART_ID,
            cycle_armed: false,
            book: Book::default(),
            stats: Stats::default(),
        }
    }

    fn refuse(&mut self, to: AgentId, request: u64, what: &str, reason: impl Into<String>, ctx: &mut Ctx<'_>) {
        self.stats.refused += 1;
        let refusal = Refusal { request, what: what.to_string(), reason: reason.into() };
        ctx.send(to, ExchangeMsg::Refused(Box::new(refusal)));
    }

    /// Whether `token` is `from`'s session; otherwise the request is refused and counted.
    fn authentic(&mut self, from: AgentId, token: u64, request: u64, what: &str, ctx: &mut Ctx<'_>) -> bool {
        if self.sessions.get(&token) == Some(&from) {
            return true;
        }
        self.stats.refused_unauthenticated += 1;
        let reason = "no session: log in and send the token `Session` gave";
        self.refuse(from, request, what, reason, ctx);
        false
    }

    fn on_register(&mut self, from: AgentId, login: &str, ctx: &mut Ctx<'_>) {
        if login.is_empty() {
            return self.refuse(from, 0, "exchange.register", "an empty login", ctx);
        }
        if self.accounts.contains_key(login) {
            return self.refuse(from, 0, "exchange.register", format!("the login `{login}` is taken"), ctx);
        }
        if let Some(own) = self.registered.get(&from) {
            let reason = format!("already registered as `{own}`");
            return self.refuse(from, 0, "exchange.register", reason, ctx);
        }
        self.accounts.insert(login.into(), from);
        self.registered.insert(from, login.into());
        self.stats.registered += 1;
        ctx.send(from, ExchangeMsg::Registered);
    }

    fn on_login(&mut self, from: AgentId, login: &str, ctx: &mut Ctx<'_>) {
        if self.accounts.get(login) != Some(&from) {
            self.stats.refused_unauthenticated += 1;
            let reason = format!("no account `{login}` of this agent");
            return self.refuse(from, 0, "exchange.login", reason, ctx);
        }
        // Unguessable enough for a simulation, and the same in every run of a seed.
        let token = loop {
            let t = rand::Rng::next_u64(ctx.rng());
            if t != 0 && !self.sessions.contains_key(&t) {
                break t;
            }
        };
        if let Some(old) = self.tokens.insert(from, token) {
            self.sessions.remove(&old);
        }
        self.sessions.insert(token, from);
        ctx.send(from, ExchangeMsg::Session { token });
    }

    fn on_advertise(&mut self, from: AgentId, ad: &Advertisement, ctx: &mut Ctx<'_>) {
        let what = "exchange.advertise";
        if !self.authentic(from, ad.token, ad.request, what, ctx) {
            return;
        }
        let price = match ad.trading {
            Trading::Commodity { price } => price,
            Trading::Auction { reserve } => reserve,
        };
        let reason = if ad.cpus == 0 {
            Some("a slot of no CPU".to_string())
        } else if !(ad.duration.is_finite() && ad.duration > 0.0) {
            Some(format!("expected a positive duration, found {}", ad.duration))
        } else if !(ad.speed.is_finite() && ad.speed > 0.0) {
            Some(format!("expected a positive speed, found {}", ad.speed))
        } else if !(price.is_finite() && price >= 0.0) {
            Some(format!("expected a finite, non-negative price, found {price}"))
        } else if ad.start + ad.duration <= ctx.now() {
            Some(format!("the slot ended at {}", ad.start + ad.duration))
        } else {
            None
        };
        if let Some(reason) = reason {
            return self.refuse(from, ad.request, what, reason, ctx);
        }
        let slot = self.next_slot;
        self.next_slot += 1;
        let (cpus, start, duration, speed, trading) = (ad.cpus, ad.start, ad.duration, ad.speed, ad.trading);
        self.slots.insert(slot, Slot { provider: from, cpus, start, duration, speed, trading, auction: None });
        self.stats.advertised += 1;
        ctx.send(from, ExchangeMsg::Advertised { request: ad.request, slot });
    }

    fn on_withdraw(&mut self, from: AgentId, token: u64, slot: u64, ctx: &mut Ctx<'_>) {
        let what = "exchange.withdraw";
        if !self.authentic(from, token, slot, what, ctx) {
            return;
        }
        match self.slots.get(&slot) {
            Some(s) if s.provider != from => self.refuse(from, slot, what, "not a slot of this provider", ctx),
            Some(s) if s.auction.is_some() => self.refuse(from, slot, what, "the slot is in an auction", ctx),
            Some(_) => {
                self.slots.remove(&slot);
            }
            None => self.refuse(from, slot, what, format!("no slot {slot}"), ctx),
        }
    }

    fn on_discover(&mut self, from: AgentId, token: u64, request: u64, want: (u32, f64), ctx: &mut Ctx<'_>) {
        if !self.authentic(from, token, request, "exchange.discover", ctx) {
            return;
        }
        self.stats.discoveries += 1;
        let now = ctx.now();
        let (cpus, duration) = want;
        let slots = match cpus {
            0 => Vec::new(),
            _ => self
                .slots
                .iter()
                .filter(|(_, s)| s.cpus >= cpus && s.end() >= now.max(s.start) + duration)
                .map(|(&slot, s)| Offer {
                    slot,
                    provider: s.provider,
                    cpus: s.cpus,
                    start: s.start,
                    duration: s.duration,
                    speed: s.speed,
                    trading: s.trading,
                    auction: s.auction,
                })
                .collect(),
        };
        let (auctions, until) = self.listing(now);
        ctx.send(from, ExchangeMsg::Offers(Box::new(Offers { request, slots, auctions, until })));
    }

    /// The auctions open at `now`, in id order: the last list while no auction opened and none of it ended (a list
    /// per discovery would cost every discovery the number of open auctions).
    fn listing(&mut self, now: SimTime) -> (Arc<[AuctionInfo]>, SimTime) {
        if let Some((list, until)) = &self.listing
            && now < *until
        {
            return (list.clone(), *until);
        }
        let list: Arc<[AuctionInfo]> = self
            .auctions
            .iter()
            .filter(|(_, a)| a.end > now)
            .map(|(&auction, a)| AuctionInfo {
                auction,
                mechanism: a.kind,
                item: a.item.clone(),
                cpus: match a.item {
                    Item::Slot(slot) => self.slots.get(&slot).map_or(0, |s| s.cpus),
                    _ => 0,
                },
                reserve: a.reserve,
                end: a.end,
                lease: a.lease,
            })
            .collect();
        let until = list.iter().map(|a| a.end).min().unwrap_or(SimTime::MAX);
        self.listing = Some((list.clone(), until));
        (list, until)
    }

    /// A commodity lease: the CPUs are taken from the slot now and reserved at the next cycle.
    fn on_lease(&mut self, from: AgentId, lease: &LeaseRequest, ctx: &mut Ctx<'_>) {
        let what = "exchange.lease";
        let job = &lease.job;
        if !self.authentic(from, lease.token, job.id, what, ctx) {
            return;
        }
        let now = ctx.now();
        let reason = match self.slots.get(&lease.slot) {
            None => Some(format!("no slot {}", lease.slot)),
            Some(s) if !matches!(s.trading, Trading::Commodity { .. }) => Some("the slot is sold in auctions".into()),
            Some(s) if s.auction.is_some() => Some("the slot is in an auction".into()),
            Some(_) if job.owner != from => Some("the job is not the sender's".into()),
            Some(s) if job.pes == 0 || job.pes > s.cpus => Some(format!("{} CPUs asked, {} free", job.pes, s.cpus)),
            Some(_) if !(lease.duration.is_finite() && lease.duration > 0.0) => {
                Some(format!("expected a positive lease time, found {}", lease.duration))
            }
            Some(s) if now.max(s.start) + lease.duration > s.end() => {
                Some(format!("a lease of {} s does not fit the slot, which ends at {}", lease.duration, s.end()))
            }
            Some(_) => None,
        };
        if let Some(reason) = reason {
            return self.refuse(from, job.id, what, reason, ctx);
        }
        let slot = self.slots.get_mut(&lease.slot).expect("checked above");
        let Trading::Commodity { price } = slot.trading else { unreachable!("checked above") };
        slot.cpus -= job.pes;
        self.stats.leases += 1;
        let pending = Pending {
            consumer: from,
            part: job.id,
            job: job.id,
            slot: lease.slot,
            provider: slot.provider,
            cpus: job.pes,
            lease: lease.duration,
            pays: price,
            gets: price,
            tries: 0,
            auctioned: false,
        };
        self.pending.push(pending);
        self.arm(ctx);
    }

    fn on_hold_auction(&mut self, from: AgentId, req: &AuctionRequest, ctx: &mut Ctx<'_>) {
        let what = "exchange.hold_auction";
        if !self.authentic(from, req.token, req.request, what, ctx) {
            return;
        }
        match self.open_auction(from, req, ctx.now()) {
            Ok(auction) => {
                ctx.send(from, ExchangeMsg::AuctionHeld { request: req.request, auction });
                let end = req.end;
                ctx.wake_in(end - ctx.now(), TimerMsg::Clear { auction });
            }
            Err(reason) => self.refuse(from, req.request, what, reason, ctx),
        }
    }

    /// Opens an auction after checking the request; returns its id.
    fn open_auction(&mut self, holder: AgentId, req: &AuctionRequest, now: SimTime) -> Result<u64, String> {
        if req.end <= now {
            return Err(format!("the end time {} is not after now ({now})", req.end));
        }
        if !(req.reserve.is_finite() && req.reserve >= 0.0) {
            return Err(format!("expected a finite, non-negative reserve, found {}", req.reserve));
        }
        if !(req.lease.is_finite() && req.lease > 0.0) {
            return Err(format!("expected a positive lease time, found {}", req.lease));
        }
        let one_sided = matches!(req.mechanism, MechanismKind::FirstPrice | MechanismKind::Vickrey);
        let mut params = req.params;
        match &req.item {
            Item::Slot(slot) => {
                let s = self.slots.get(slot).ok_or_else(|| format!("no slot {slot}"))?;
                if s.provider != holder {
                    return Err("not a slot of the holder".into());
                }
                if s.auction.is_some() {
                    return Err(format!("slot {slot} is already in an auction"));
                }
                if !matches!(s.trading, Trading::Auction { .. }) {
                    return Err(format!("slot {slot} is leased at a posted price"));
                }
                if s.start.max(now) + req.lease > s.end() {
                    return Err(format!("a lease of {} s does not fit slot {slot}", req.lease));
                }
            }
            Item::Application(job) => {
                if job.owner != holder || job.pes == 0 {
                    return Err("the application must be the holder's and need a CPU".into());
                }
                if self.joined.contains_key(&(holder, job.id)) {
                    return Err(format!("application {} is already in an auction", job.id));
                }
            }
            Item::Market if one_sided => {
                return Err(format!("a {} auction sells one side's item", req.mechanism.name()));
            }
            Item::Market => {}
        }
        if one_sided {
            let form = if matches!(req.item, Item::Application(_)) { Form::Reverse } else { Form::Forward };
            if params.form.is_some_and(|f| f != form) {
                return Err(format!("the item makes it a {form:?} auction, not {:?}", params.form.unwrap_or(form)));
            }
            params.form = Some(form);
        }
        let mechanism = req.mechanism.build(params).map_err(|e| e.to_string())?;
        let id = self.next_auction;
        self.next_auction += 1;
        self.listing = None;
        match &req.item {
            Item::Slot(slot) => self.slots.get_mut(slot).expect("checked above").auction = Some(id),
            Item::Application(job) => {
                self.joined.insert((holder, job.id), id);
            }
            Item::Market => {}
        }
        let auction = Auction {
            holder,
            kind: req.mechanism,
            mechanism,
            item: req.item.clone(),
            reserve: req.reserve,
            end: req.end,
            lease: req.lease,
            buys: BTreeMap::new(),
            sells: BTreeMap::new(),
        };
        self.auctions.insert(id, auction);
        self.stats.auctions_held += 1;
        Ok(id)
    }

    fn on_bid(&mut self, from: AgentId, bid: &BidRequest, ctx: &mut Ctx<'_>) {
        let what = "exchange.bid";
        let request = match &bid.quote {
            Quote::Buy { job, .. } => job.id,
            Quote::Sell { slot, .. } => *slot,
        };
        if !self.authentic(from, bid.token, request, what, ctx) {
            return;
        }
        match self.join(from, bid, ctx.now()) {
            Ok(()) => self.stats.bids += 1,
            Err(reason) => self.refuse(from, request, what, reason, ctx),
        }
    }

    /// Adds (or replaces) an order in an open auction, after checking it.
    fn join(&mut self, from: AgentId, bid: &BidRequest, now: SimTime) -> Result<(), String> {
        let Some(auction) = self.auctions.get(&bid.auction) else {
            return Err(match self.closed.get(&bid.auction) {
                Some(end) => format!("auction {} closed at {end}", bid.auction),
                None => format!("no auction {}", bid.auction),
            });
        };
        if auction.end <= now {
            return Err(format!("auction {} closed at {}", bid.auction, auction.end));
        }
        let price = match &bid.quote {
            Quote::Buy { price, .. } | Quote::Sell { price, .. } => *price,
        };
        if !(price.is_finite() && price >= 0.0) {
            return Err(format!("expected a finite, non-negative price, found {price}"));
        }
        let seq = self.next_seq;
        match &bid.quote {
            Quote::Buy { job, price } => {
                if matches!(auction.item, Item::Application(_)) {
                    return Err("a reverse auction takes asks, not bids".into());
                }
                if job.owner != from || job.pes == 0 {
                    return Err("the application must be the sender's and need a CPU".into());
                }
                // A hair of tolerance: a bidder's price is often its budget divided by the same CPUs and lease.
                if let Some(budget) = job.budget
                    && price * f64::from(job.pes) * auction.lease > budget * (1.0 + 1e-9)
                {
                    let cost = price * f64::from(job.pes) * auction.lease;
                    return Err(format!("the bid would cost {cost} for the lease, above the budget {budget}"));
                }
                if let Item::Slot(slot) = auction.item
                    && self.slots.get(&slot).is_none_or(|s| s.cpus < job.pes)
                {
                    return Err(format!("the slot has fewer than {} CPUs", job.pes));
                }
                let key = (from, job.id);
                if let Some(other) = self.joined.get(&key).filter(|&&a| a != bid.auction) {
                    return Err(format!("application {} is already in auction {other}", job.id));
                }
                self.joined.insert(key, bid.auction);
                let auction = self.auctions.get_mut(&bid.auction).expect("found above");
                auction.buys.insert(key, Buy { job: job.clone(), price: *price, seq });
            }
            Quote::Sell { slot, price } => {
                if matches!(auction.item, Item::Slot(_)) {
                    return Err("a forward auction takes bids, not asks".into());
                }
                let s = self.slots.get(slot).ok_or_else(|| format!("no slot {slot}"))?;
                if s.provider != from {
                    return Err("not a slot of the sender".into());
                }
                if !matches!(s.trading, Trading::Auction { .. }) {
                    return Err(format!("slot {slot} is leased at a posted price"));
                }
                if s.auction.is_some_and(|a| a != bid.auction) {
                    return Err(format!("slot {slot} is already in an auction"));
                }
                if s.start.max(now) + auction.lease > s.end() {
                    return Err(format!("a lease of {} s does not fit slot {slot}", auction.lease));
                }
                self.slots.get_mut(slot).expect("found above").auction = Some(bid.auction);
                let auction = self.auctions.get_mut(&bid.auction).expect("found above");
                auction.sells.insert(*slot, (*price, seq));
            }
        }
        self.next_seq += 1;
        Ok(())
    }

    /// An auction's end: close it, run its mechanism, keep the applications matched whole, queue their
    /// reservations, tell the others they lost.
    fn on_clear(&mut self, id: u64, ctx: &mut Ctx<'_>) {
        let Some(auction) = self.auctions.remove(&id) else { return };
        self.closed.insert(id, auction.end);
        self.stats.auctions_cleared += 1;
        // Unit orders: each application's CPUs, each slot's CPUs, with ids in arrival order of their orders.
        enum Unit {
            Buy((AgentId, JobId)),
            Sell(u64),
        }
        let bought: usize = auction.buys.values().map(|b| b.job.pes as usize).sum();
        let mut units: Vec<Unit> = Vec::with_capacity(bought);
        let (mut bids, mut asks) = (Vec::with_capacity(bought), Vec::new());
        let mut buys: Vec<(&(AgentId, JobId), &Buy)> = auction.buys.iter().collect();
        buys.sort_by_key(|(_, b)| b.seq);
        let mut sells: Vec<(u64, f64, u64)> = auction.sells.iter().map(|(&s, &(p, q))| (s, p, q)).collect();
        sells.sort_by_key(|s| s.2);
        let mut unit = |to: &mut Vec<Order>, who: Unit, price: f64| {
            to.push(Order::new(units.len() as u64, price));
            units.push(who);
        };
        match &auction.item {
            Item::Slot(slot) => {
                let cpus = self.slots.get(slot).map_or(0, |s| s.cpus);
                for _ in 0..cpus {
                    unit(&mut asks, Unit::Sell(*slot), auction.reserve);
                }
            }
            Item::Application(job) => {
                for _ in 0..job.pes {
                    unit(&mut bids, Unit::Buy((auction.holder, job.id)), auction.reserve);
                }
            }
            Item::Market => {}
        }
        for &(&key, buy) in &buys {
            for _ in 0..buy.job.pes {
                unit(&mut bids, Unit::Buy(key), buy.price);
            }
        }
        for &(slot, price, _) in &sells {
            for _ in 0..self.slots.get(&slot).map_or(0, |s| s.cpus) {
                unit(&mut asks, Unit::Sell(slot), price);
            }
        }
        let clearing = auction.mechanism.clear(&bids, &asks);
        // A call market with trades tells its traders the price it cleared at (what auction-cleared providers post,
        // and adaptive traders learn from).
        if matches!(auction.item, Item::Market) && !clearing.trades.is_empty() {
            let price = clearing.received() / clearing.trades.len() as f64;
            let sellers = auction.sells.keys().filter_map(|slot| self.slots.get(slot).map(|s| s.provider));
            let traders: BTreeSet<AgentId> = sellers.chain(auction.buys.keys().map(|k| k.0)).collect();
            for trader in traders {
                ctx.send(trader, ExchangeMsg::Cleared { auction: id, price });
            }
        }
        // Per application, its trades by slot.
        let mut matched: BTreeMap<(AgentId, JobId), BTreeMap<u64, Matched>> = BTreeMap::new();
        for t in &clearing.trades {
            let (Unit::Buy(app), Unit::Sell(slot)) = (&units[t.bid as usize], &units[t.ask as usize]) else {
                continue;
            };
            let m = matched.entry(*app).or_default().entry(*slot).or_default();
            (m.cpus, m.paid, m.got) = (m.cpus + 1, m.paid + t.buyer_pays, m.got + t.seller_gets);
        }
        let application = |key: &(AgentId, JobId)| match &auction.item {
            Item::Application(job) if *key == (auction.holder, job.id) => Some((**job).clone()),
            _ => auction.buys.get(key).map(|b| b.job.clone()),
        };
        let mut apps: Vec<(AgentId, JobId)> = auction.buys.keys().copied().collect();
        if let Item::Application(job) = &auction.item {
            apps.push((auction.holder, job.id));
        }
        for key in apps {
            self.joined.remove(&key);
            let Some(job) = application(&key) else { continue };
            let slots = matched.remove(&key).unwrap_or_default();
            let cpus: u32 = slots.values().map(|s| s.cpus).sum();
            if cpus < job.pes {
                self.stats.lost += 1;
                ctx.send(key.0, ExchangeMsg::Lost { auction: id, job: job.id });
                continue;
            }
            self.stats.matched += u64::from(cpus);
            for (n, (slot, Matched { cpus, paid, got })) in slots.into_iter().enumerate() {
                let Some(s) = self.slots.get_mut(&slot) else { continue };
                s.cpus -= cpus.min(s.cpus);
                let part = if n == 0 {
                    job.id
                } else {
                    self.next_part += 1;
                    self.next_part - 1
                };
                let (pays, gets) = (paid / f64::from(cpus), got / f64::from(cpus));
                let (consumer, provider, lease) = (key.0, s.provider, auction.lease);
                let job = job.id;
                let (tries, auctioned) = (0, true);
                self.pending.push(Pending {
                    consumer,
                    part,
                    job,
                    slot,
                    provider,
                    cpus,
                    lease,
                    pays,
                    gets,
                    tries,
                    auctioned,
                });
            }
        }
        // The auction's slots (its item, its asks) are free to trade again.
        let item = match auction.item {
            Item::Slot(slot) => Some(slot),
            _ => None,
        };
        for slot in auction.sells.keys().copied().chain(item) {
            if let Some(s) = self.slots.get_mut(&slot) {
                s.auction = None;
            }
        }
        self.arm(ctx);
    }

    /// Arms the reservation monitor's next cycle, if anything waits for it.
    fn arm(&mut self, ctx: &mut Ctx<'_>) {
        if !self.cycle_armed && !self.pending.is_empty() {
            self.cycle_armed = true;
            ctx.wake_in(crate::sim::until_next_multiple(ctx.now().secs(), self.config.cycle), TimerMsg::Round { n: 0 });
        }
    }

    /// The reservation monitor's cycle: ask each provider for the reservations waiting.
    fn on_cycle(&mut self, ctx: &mut Ctx<'_>) {
        self.cycle_armed = false;
        let now = ctx.now();
        for p in std::mem::take(&mut self.pending) {
            let start = self.slots.get(&p.slot).map_or(now, |s| s.start.max(now));
            let request = self.next_request;
            self.next_request += 1;
            let end = start + p.lease;
            ctx.send(p.provider, LeaseMsg::Reserve { request, start, end, pes: p.cpus });
            self.reserving.insert(request, p);
        }
    }

    /// The provider holds the window: the contract is made, paid, and the consumer gets its ticket.
    fn on_reserved(&mut self, request: u64, reservation: u64, ctx: &mut Ctx<'_>) {
        let Some(p) = self.reserving.remove(&request) else { return };
        let now = ctx.now();
        let units = f64::from(p.cpus) * p.lease;
        let (cost, earned) = (p.pays * units, p.gets * units);
        let me = ctx.me();
        let reason = if p.auctioned { Reason::Auction } else { Reason::Lease };
        let transfer = |payee, amount| Transfer {
            at: now,
            payer: Account::Agent(p.consumer),
            payee,
            amount,
            currency: Currency::GridDollar,
            reason,
            job: Some(p.part),
            booked_by: me,
        };
        if earned > 0.0 {
            self.book.book(transfer(Account::Agent(p.provider), earned));
        }
        if cost > earned {
            self.stats.kept += self.book.book(transfer(Account::Agent(me), cost - earned));
        }
        self.stats.contracts += 1;
        self.stats.price_sum += p.pays;
        let start = self.slots.get(&p.slot).map_or(now, |s| s.start.max(now));
        let ticket = Ticket {
            job: p.job,
            part: p.part,
            cpus: p.cpus,
            provider: p.provider,
            reservation,
            start,
            cost,
            prepaid: true,
            runtime: None,
        };
        ctx.send(p.consumer, MarketMsg::Ticket(Box::new(ticket)));
    }

    /// The provider refused: try again next cycle, or fail the transaction.
    fn on_reserve_refused(&mut self, request: u64, reason: &str, ctx: &mut Ctx<'_>) {
        let Some(mut p) = self.reserving.remove(&request) else { return };
        p.tries += 1;
        if p.tries <= self.config.retries {
            self.pending.push(p);
            return self.arm(ctx);
        }
        self.stats.failed += 1;
        let why = format!("the provider refused the reservation {} times: {reason}", p.tries);
        self.refuse(p.consumer, p.part, "exchange.reserve", why, ctx);
    }

    /// Opens the exchange's own call markets of this period, each clearing at its end.
    fn open_markets(&mut self, ctx: &mut Ctx<'_>) {
        let Some(m) = self.config.markets.clone() else { return };
        let now = ctx.now();
        if now > m.until {
            return;
        }
        let end = now + m.period;
        let me = ctx.me();
        for _ in 0..m.count {
            let req = AuctionRequest {
                token: 0,
                request: 0,
                mechanism: m.mechanism,
                params: m.params,
                item: Item::Market,
                reserve: 0.0,
                end,
                lease: m.lease,
            };
            if let Ok(auction) = self.open_auction(me, &req, now) {
                ctx.wake_in(m.period, TimerMsg::Clear { auction });
            }
        }
        if end <= m.until {
            ctx.wake_in(m.period, TimerMsg::OpenMarkets);
        }
    }
}

impl Agent<GridMarket> for Exchange {
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        if let Some(m) = &self.config.markets {
            ctx.wake_in(m.from.secs(), TimerMsg::OpenMarkets);
        }
    }

    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>) {
        let from = env.from();
        match &env.msg {
            Msg::Exchange(m) => match m {
                ExchangeMsg::Register { login } => self.on_register(from, login, ctx),
                ExchangeMsg::Login { login } => self.on_login(from, login, ctx),
                ExchangeMsg::Advertise(ad) => self.on_advertise(from, ad, ctx),
                ExchangeMsg::Withdraw { token, slot } => self.on_withdraw(from, *token, *slot, ctx),
                ExchangeMsg::Discover(d) => self.on_discover(from, d.token, d.request, (d.cpus, d.duration), ctx),
                ExchangeMsg::Lease(lease) => self.on_lease(from, lease, ctx),
                ExchangeMsg::HoldAuction(req) => self.on_hold_auction(from, req, ctx),
                ExchangeMsg::Bid(bid) => self.on_bid(from, bid, ctx),
                _ => tracing::warn!(exchange = ctx.name(), kind = env.msg.kind(), "not a request: ignored"),
            },
            Msg::Lease(LeaseMsg::Reserved { request, reservation }) => self.on_reserved(*request, *reservation, ctx),
            Msg::Lease(LeaseMsg::ReserveRefused { request, reason }) => self.on_reserve_refused(*request, reason, ctx),
            Msg::Timer(TimerMsg::Clear { auction }) => self.on_clear(*auction, ctx),
            Msg::Timer(TimerMsg::Round { .. }) => self.on_cycle(ctx),
            Msg::Timer(TimerMsg::OpenMarkets) => self.open_markets(ctx),
            other => crate::sim::unhandled(ctx, other.kind()),
        }
    }

    fn report(&self, _now: SimTime, out: &mut Report) {
        let s = &self.stats;
        let mean_price = if s.contracts > 0 { s.price_sum / s.contracts as f64 } else { f64::NAN };
        out.metrics.extend([
            ("registered", s.registered as f64),
            ("refused_unauthenticated", s.refused_unauthenticated as f64),
            ("refused", s.refused as f64),
            ("advertised", s.advertised as f64),
            ("discoveries", s.discoveries as f64),
            ("leases", s.leases as f64),
            ("auctions_held", s.auctions_held as f64),
            ("auctions_cleared", s.auctions_cleared as f64),
            ("bids", s.bids as f64),
            ("matched_cpus", s.matched as f64),
            ("lost", s.lost as f64),
            ("contracts", s.contracts as f64),
            ("failed", s.failed as f64),
            ("mean_price", mean_price),
            ("kept", s.kept),
        ]);
        out.transfers.extend_from_slice(self.book.transfers());
    }
}
