//! A provider on a market exchange (Garg 2010 ch 8 §8.4 phase 3): it registers and logs in, and every `interval`
//! advertises the free slots of its availability profile over the next `horizon`, withdrawing the ones it
//! advertised before; slots sold at its posted price (its price per CPU-second), or in auctions with that price as
//! the reserve: forward auctions it holds for each slot, or asks in the exchange's call markets, each in one chosen
//! at random (a free slot whole, or in lots of a given size, each a slot of the catalogue).
//!
//! In call markets it asks by its trader strategy (`crate::exchange::traders`; [`Provider::asking`]): its price
//! (truthful, the default), or shaded, ZI-C (uniform in [price, ceiling]), ZI-U (uniform in [0, ceiling]) or ZIP
//! (an adaptive margin on its price, learnt from the clearing prices the markets announce, `Exchange::Cleared`).
//!
//! Where the thesis is silent: a slot sold in an auction is not held until the exchange reserves it, so the next
//! advertisement may offer the same CPUs again; the exchange then finds the reservation refused and retries or fails it
//! (the oversubscription that §8.2 leaves to consumers and providers).

use serde::{Deserialize, Serialize};

use super::Provider;
use crate::exchange::mechanism::{MechanismKind, MechanismParams, Side};
use crate::exchange::pick;
use crate::exchange::traders::{Limits, Shout, Strategy, TraderStrategy, Unit};
use crate::protocol::{
    Advertisement, AuctionInfo, AuctionRequest, BidRequest, Discovery, ExchangeMsg, Item, Offers, Quote, TimerMsg,
    Trading,
};
use crate::sim::{AgentId, Ctx};

/// How a provider sells on an exchange.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExchangeTrading {
    /// The exchange -- peer.
    pub exchange: AgentId,
    /// How its slots are sold.
    pub sell: Sell,
    /// How often it advertises its free slots \[s\].
    pub interval: f64,
    /// How far ahead the slots it advertises reach \[s\].
    pub horizon: f64,
    /// How long the leases of the auctions it holds last \[s\].
    pub lease: f64,
}

/// How a provider's slots are sold.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sell {
    /// At its posted price.
    Lease,
    /// In a forward auction of this mechanism it holds for each slot.
    Auction(MechanismKind),
    /// As asks in the exchange's call markets, a free slot in lots of at most this many CPUs (else whole).
    Market(Option<u32>),
}

/// The request number of the provider's own discovery of the markets.
const MARKETS: u64 = u64::MAX;

impl Provider {
    fn trading(&self) -> Option<&ExchangeTrading> {
        self.exchange.as_ref().map(|(t, _)| t)
    }

    pub(super) fn on_exchange(&mut self, from: AgentId, msg: &ExchangeMsg, ctx: &mut Ctx<'_>) {
        let Some(trading) = self.trading().cloned() else { return };
        match msg {
            ExchangeMsg::Registered => ctx.send(from, ExchangeMsg::Login { login: ctx.name().into() }),
            ExchangeMsg::Session { token } => {
                if let Some((_, session)) = &mut self.exchange {
                    session.token = Some(*token);
                }
                self.advertise(ctx);
            }
            ExchangeMsg::Advertised { slot, .. } => {
                let Some((_, session)) = &mut self.exchange else { return };
                session.slots.push(*slot);
                let Some(token) = session.token else { return };
                if let Sell::Auction(mechanism) = trading.sell {
                    let request = AuctionRequest {
                        token,
                        request: *slot,
                        mechanism,
                        params: MechanismParams::default(),
                        item: Item::Slot(*slot),
                        reserve: self.config.price,
                        end: ctx.now() + trading.interval,
                        lease: trading.lease,
                    };
                    ctx.send(from, ExchangeMsg::HoldAuction(Box::new(request)));
                }
            }
            ExchangeMsg::Offers(offers) if offers.request == MARKETS => self.ask_in_markets(offers, ctx),
            ExchangeMsg::Refused(r) => {
                tracing::debug!(provider = ctx.name(), what = r.what.as_str(), reason = r.reason.as_str(), "refused")
            }
            ExchangeMsg::Cleared { price, .. } => {
                self.learn_from_clearing(*price, ctx);
                self.on_cleared(*price, ctx)
            }
            ExchangeMsg::AuctionHeld { .. } | ExchangeMsg::Offers(_) => {}
            _ => crate::sim::unhandled(ctx, msg.kind()),
        }
    }

    /// Withdraws the slots advertised before and advertises the free slots of now; again in `interval`.
    pub(super) fn advertise(&mut self, ctx: &mut Ctx<'_>) {
        let Some(trading) = self.trading().cloned() else { return };
        let Some((_, session)) = &mut self.exchange else { return };
        let Some(token) = session.token else { return };
        let to = trading.exchange;
        for slot in std::mem::take(&mut session.slots) {
            ctx.send(to, ExchangeMsg::Withdraw { token, slot });
        }
        let now = ctx.now();
        let trading_rule = match trading.sell {
            Sell::Lease => Trading::Commodity { price: self.config.price },
            Sell::Auction(_) | Sell::Market(_) => Trading::Auction { reserve: self.config.price },
        };
        let lot = match trading.sell {
            Sell::Market(Some(lot)) => lot,
            _ => u32::MAX,
        };
        let slots = self.scheduler.free_slots(now, trading.horizon, None).unwrap_or_default();
        let mut request = 0;
        for s in slots {
            let mut left = s.pes;
            while left > 0 {
                let cpus = left.min(lot);
                left -= cpus;
                let ad = Advertisement {
                    token,
                    request,
                    cpus,
                    start: s.start,
                    duration: s.end - s.start,
                    speed: self.config.speed,
                    trading: trading_rule,
                };
                request += 1;
                ctx.send(to, ExchangeMsg::Advertise(Box::new(ad)));
            }
        }
        if let Sell::Market(_) = trading.sell {
            let discovery = Discovery { token, request: MARKETS, cpus: 0, duration: 0.0 };
            ctx.send(to, ExchangeMsg::Discover(Box::new(discovery)));
        }
        ctx.wake_in(trading.interval, TimerMsg::Advertise);
    }

    /// Asks in call markets by `strategy` (the default: truthful, at its price), zero-intelligence asks drawn up to
    /// `ceiling` [G$ per CPU-second].
    pub fn asking(mut self, strategy: Strategy, ceiling: f64) -> Provider {
        if let Some((_, session)) = &mut self.exchange {
            session.asking = Some((strategy, ceiling));
        }
        self
    }

    /// Offers each of its slots as an ask in one of the exchange's open call markets, chosen at random, at the price
    /// its strategy sets on its own.
    fn ask_in_markets(&mut self, offers: &Offers, ctx: &mut Ctx<'_>) {
        let cost = self.config.price;
        let Some((trading, session)) = &mut self.exchange else { return };
        let Some(token) = session.token else { return };
        let to = trading.exchange;
        let (strategy, ceiling) = session.asking.unwrap_or((Strategy::Truthful, cost));
        // A shaded ask goes a tenth of the way from its price to the ceiling.
        let limits = Limits { floor: 0.0, ceiling: ceiling.max(cost), shade: 0.9 };
        for &slot in &session.slots.clone() {
            let market = |a: &AuctionInfo| matches!(a.item, Item::Market);
            let Some(auction) = pick(&offers.auctions, market, ctx.rng_stream(2)).map(|a| a.auction) else { return };
            let trader = match &mut session.trader {
                Some(t) => t,
                None => session.trader.insert(strategy.build(limits, Side::Ask, 1, ctx.rng_stream(3))),
            };
            let price = trader.shout(Side::Ask, Unit { index: 0, limit: cost }, ctx.rng_stream(3));
            let bid = BidRequest { token, auction, quote: Quote::Sell { slot, price } };
            ctx.send(to, ExchangeMsg::Bid(Box::new(bid)));
        }
    }

    /// A call market it asked in cleared at `price`: an adaptive seller learns from it (a trade at that price).
    fn learn_from_clearing(&mut self, price: f64, ctx: &mut Ctx<'_>) {
        let cost = self.config.price;
        let Some((_, session)) = &mut self.exchange else { return };
        if let Some(trader) = &mut session.trader {
            let seen = Shout { side: Side::Bid, price, traded: Some(price) };
            trader.observe(Side::Ask, Some(Unit { index: 0, limit: cost }), &seen, ctx.rng_stream(3));
        }
    }
}

/// A provider's standing on the exchange: its session token, the slots it advertised, and how it prices its asks in
/// call markets (the strategy and its ceiling; the trader, drawn at its first ask).
#[derive(Debug, Default)]
pub(super) struct Session {
    pub(super) token: Option<u64>,
    pub(super) slots: Vec<u64>,
    asking: Option<(Strategy, f64)>,
    trader: Option<Box<dyn TraderStrategy>>,
}
