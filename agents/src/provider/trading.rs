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

use super::profile::Slot;
use super::scheduler::LocalScheduler;
use super::{Provider, ProviderConfig};
use crate::exchange::mechanism::{MechanismKind, MechanismParams, Side};
use crate::exchange::pick;
use crate::exchange::traders::{Limits, Shout, Strategy, TraderStrategy, Unit};
use crate::protocol::{
    Advertisement, AuctionInfo, AuctionRequest, BidRequest, Discovery, ExchangeMsg, Item, Offers, Quote, TimerMsg,
    Trading,
};
use crate::sim::{AgentId, Ctx, SimTime};

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

/// What the trading capability reads of the provider's core.
pub(super) trait TradingView {
    /// The configured price [G$ per PE-second]: the posted price of its slots, the reserve of its auctions and the
    /// cost of its asks.
    fn price(&self) -> f64;
    /// Speed of one PE relative to the reference PE.
    fn speed(&self) -> f64;
    /// The free slots of its availability profile from `now` over the next `horizon` seconds.
    fn free_slots(&self, now: SimTime, horizon: f64) -> Vec<Slot>;
}

/// The core as trading reads it: its configuration and its plan.
pub(super) struct Stock<'a> {
    pub(super) config: &'a ProviderConfig,
    pub(super) scheduler: &'a LocalScheduler,
}

impl TradingView for Stock<'_> {
    fn price(&self) -> f64 {
        self.config.price
    }

    fn speed(&self) -> f64 {
        self.config.speed
    }

    fn free_slots(&self, now: SimTime, horizon: f64) -> Vec<Slot> {
        self.scheduler.free_slots(now, horizon, None).unwrap_or_default()
    }
}

/// The exchange-trading capability: how the provider sells and its standing on the exchange.
#[derive(Debug)]
pub(super) struct Seller {
    settings: ExchangeTrading,
    session: Session,
}

impl Seller {
    /// Selling by `settings`, not yet registered.
    pub(super) fn new(settings: ExchangeTrading) -> Seller {
        Seller { settings, session: Session::default() }
    }

    /// Asks in call markets by `strategy` (the default: truthful, at its price), zero-intelligence asks drawn up to
    /// `ceiling` [G$ per CPU-second].
    pub(super) fn ask_by(&mut self, strategy: Strategy, ceiling: f64) {
        self.session.asking = Some((strategy, ceiling));
    }

    /// At start: registers at the exchange under the provider's name.
    pub(super) fn register(&self, ctx: &mut Ctx<'_>) {
        ctx.send(self.settings.exchange, ExchangeMsg::Register { login: ctx.name().into() });
    }

    /// A message of the exchange; returns the price a call market it asked in cleared at, for the provider's
    /// pricing.
    pub(super) fn handle(
        &mut self,
        from: AgentId,
        msg: &ExchangeMsg,
        core: &impl TradingView,
        ctx: &mut Ctx<'_>,
    ) -> Option<f64> {
        match msg {
            ExchangeMsg::Registered => ctx.send(from, ExchangeMsg::Login { login: ctx.name().into() }),
            ExchangeMsg::Session { token } => {
                self.session.token = Some(*token);
                self.advertise(core, ctx);
            }
            ExchangeMsg::Advertised { slot, .. } => {
                self.session.slots.push(*slot);
                let token = self.session.token?;
                if let Sell::Auction(mechanism) = self.settings.sell {
                    let request = AuctionRequest {
                        token,
                        request: *slot,
                        mechanism,
                        params: MechanismParams::default(),
                        item: Item::Slot(*slot),
                        reserve: core.price(),
                        end: ctx.now() + self.settings.interval,
                        lease: self.settings.lease,
                    };
                    ctx.send(from, ExchangeMsg::HoldAuction(Box::new(request)));
                }
            }
            ExchangeMsg::Offers(offers) if offers.request == MARKETS => self.ask_in_markets(offers, core.price(), ctx),
            ExchangeMsg::Refused(r) => {
                tracing::debug!(provider = ctx.name(), what = r.what.as_str(), reason = r.reason.as_str(), "refused")
            }
            ExchangeMsg::Cleared { price, .. } => {
                self.learn_from_clearing(*price, core.price(), ctx);
                return Some(*price);
            }
            ExchangeMsg::AuctionHeld { .. } | ExchangeMsg::Offers(_) => {}
            _ => crate::sim::unhandled(ctx, msg.kind()),
        }
        None
    }

    /// Withdraws the slots advertised before and advertises the free slots of now; again in `interval`.
    pub(super) fn advertise(&mut self, core: &impl TradingView, ctx: &mut Ctx<'_>) {
        let Some(token) = self.session.token else { return };
        let to = self.settings.exchange;
        for slot in std::mem::take(&mut self.session.slots) {
            ctx.send(to, ExchangeMsg::Withdraw { token, slot });
        }
        let now = ctx.now();
        let trading_rule = match self.settings.sell {
            Sell::Lease => Trading::Commodity { price: core.price() },
            Sell::Auction(_) | Sell::Market(_) => Trading::Auction { reserve: core.price() },
        };
        let lot = match self.settings.sell {
            Sell::Market(Some(lot)) => lot,
            _ => u32::MAX,
        };
        let mut request = 0;
        for s in core.free_slots(now, self.settings.horizon) {
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
                    speed: core.speed(),
                    trading: trading_rule,
                };
                request += 1;
                ctx.send(to, ExchangeMsg::Advertise(Box::new(ad)));
            }
        }
        if let Sell::Market(_) = self.settings.sell {
            let discovery = Discovery { token, request: MARKETS, cpus: 0, duration: 0.0 };
            ctx.send(to, ExchangeMsg::Discover(Box::new(discovery)));
        }
        ctx.wake_in(self.settings.interval, TimerMsg::Advertise);
    }

    /// Offers each of its slots as an ask in one of the exchange's open call markets, chosen at random, at the price
    /// its strategy sets on its own `cost`.
    fn ask_in_markets(&mut self, offers: &Offers, cost: f64, ctx: &mut Ctx<'_>) {
        let session = &mut self.session;
        let Some(token) = session.token else { return };
        let to = self.settings.exchange;
        let (strategy, ceiling) = session.asking.unwrap_or((Strategy::TRUTHFUL, cost));
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
    fn learn_from_clearing(&mut self, price: f64, cost: f64, ctx: &mut Ctx<'_>) {
        if let Some(trader) = &mut self.session.trader {
            let seen = Shout { side: Side::Bid, price, traded: Some(price) };
            trader.observe(Side::Ask, Some(Unit { index: 0, limit: cost }), &seen, ctx.rng_stream(3));
        }
    }
}

/// The trading capability wired into the provider: the exchange's messages in, the clearing prices on to pricing.
impl Provider {
    /// A provider that also sells its free slots on an exchange.
    pub fn selling_on(mut self, trading: ExchangeTrading) -> Provider {
        self.exchange = Some(Seller::new(trading));
        self
    }

    /// Asks in call markets by `strategy` (the default: truthful, at its price), zero-intelligence asks drawn up to
    /// `ceiling` [G$ per CPU-second].
    pub fn asking(mut self, strategy: Strategy, ceiling: f64) -> Provider {
        if let Some(trading) = &mut self.exchange {
            trading.ask_by(strategy, ceiling);
        }
        self
    }

    pub(super) fn on_exchange(&mut self, from: AgentId, msg: &ExchangeMsg, ctx: &mut Ctx<'_>) {
        let Some(trading) = &mut self.exchange else { return };
        let core = Stock { config: &self.config, scheduler: &self.scheduler };
        if let Some(price) = trading.handle(from, msg, &core, ctx) {
            self.on_cleared(price, ctx);
        }
    }

    /// The advertising timer.
    pub(super) fn advertise(&mut self, ctx: &mut Ctx<'_>) {
        if let Some(trading) = &mut self.exchange {
            trading.advertise(&Stock { config: &self.config, scheduler: &self.scheduler }, ctx);
        }
    }
}

/// A provider's standing on the exchange: its session token, the slots it advertised, and how it prices its asks in
/// call markets (the strategy and its ceiling; the trader, drawn at its first ask).
#[derive(Debug, Default)]
struct Session {
    token: Option<u64>,
    slots: Vec<u64>,
    asking: Option<(Strategy, f64)>,
    trader: Option<Box<dyn TraderStrategy>>,
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::protocol::Msg;
    use crate::sim::{Agent, Envelope, GridMarket};
    use crate::testbed::TestBed;

    fn t(s: f64) -> SimTime {
        SimTime::new(s).unwrap()
    }

    /// A fixed stock of free slots at a price, in place of a provider's core.
    struct Stock(Vec<Slot>);

    impl TradingView for Stock {
        fn price(&self) -> f64 {
            2.0
        }

        fn speed(&self) -> f64 {
            1.5
        }

        fn free_slots(&self, now: SimTime, horizon: f64) -> Vec<Slot> {
            self.0.iter().filter(|s| s.start.secs() < now.secs() + horizon).copied().collect()
        }
    }

    /// The seller alone in an agent, its core a fixed stock; the clearing prices it hands back, kept.
    struct Shop(Seller, Stock, Arc<Mutex<Vec<f64>>>);

    impl Agent<GridMarket> for Shop {
        fn start(&mut self, ctx: &mut Ctx<'_>) {
            self.0.register(ctx);
        }

        fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>) {
            match &env.msg {
                Msg::Exchange(m) => self.2.lock().unwrap().extend(self.0.handle(env.from(), m, &self.1, ctx)),
                Msg::Timer(TimerMsg::Advertise) => self.0.advertise(&self.1, ctx),
                _ => {}
            }
        }
    }

    /// A test bed with the exchange a probe and the shop selling `stock` by `sell`; the prices handed back.
    fn shop(sell: Sell, stock: Vec<Slot>) -> (TestBed, Arc<Mutex<Vec<f64>>>) {
        let mut tb = TestBed::new(1);
        let mandi = tb.probe("mandi");
        let settings = ExchangeTrading { exchange: mandi, sell, interval: 50.0, horizon: 100.0, lease: 0.0 };
        let handed = Arc::new(Mutex::new(Vec::new()));
        tb.agent("site", "provider", Shop(Seller::new(settings), Stock(stock), handed.clone()));
        (tb, handed)
    }

    fn ads(tb: &TestBed) -> Vec<(f64, u32, f64, Trading)> {
        let ads = tb.deliveries().into_iter().filter_map(|d| match d.msg {
            Msg::Exchange(ExchangeMsg::Advertise(ad)) => Some((d.at, ad.cpus, ad.speed, ad.trading)),
            _ => None,
        });
        ads.collect()
    }

    #[test]
    fn it_logs_in_then_advertises_its_free_slots_in_lots_and_withdraws_them_at_the_next_round() {
        let stock = vec![Slot { start: t(0.0), end: t(60.0), pes: 7 }, Slot { start: t(500.0), end: t(600.0), pes: 2 }];
        let (mut tb, _) = shop(Sell::Market(Some(3)), stock);
        tb.inject(1.0, "mandi", "site", Msg::Exchange(ExchangeMsg::Registered));
        tb.inject(2.0, "mandi", "site", Msg::Exchange(ExchangeMsg::Session { token: 9 }));
        tb.inject(3.0, "mandi", "site", Msg::Exchange(ExchangeMsg::Advertised { request: 0, slot: 41 }));
        tb.run_until(60.0).unwrap();
        let reserve = Trading::Auction { reserve: 2.0 };
        // 7 CPUs in lots of 3 at 2 s and again at 52 s; the slot beyond the horizon is not offered.
        let lots = [(2.0, 3, 1.5, reserve), (2.0, 3, 1.5, reserve), (2.0, 1, 1.5, reserve)];
        let again = lots.map(|l| (52.0, l.1, l.2, l.3));
        assert_eq!(ads(&tb), [lots, again].concat());
        let login = tb.deliveries().into_iter().find(|d| matches!(d.msg, Msg::Exchange(ExchangeMsg::Login { .. })));
        assert_eq!(login.map(|d| d.at), Some(1.0));
        let withdrawn: Vec<(f64, u64)> = tb
            .deliveries()
            .into_iter()
            .filter_map(|d| match d.msg {
                Msg::Exchange(ExchangeMsg::Withdraw { token: 9, slot }) => Some((d.at, slot)),
                _ => None,
            })
            .collect();
        assert_eq!(withdrawn, [(52.0, 41)]);
    }

    #[test]
    fn it_sells_at_its_price_and_hands_a_clearing_price_to_pricing() {
        let (mut tb, handed) = shop(Sell::Lease, vec![Slot { start: t(0.0), end: t(10.0), pes: 4 }]);
        tb.inject(2.0, "mandi", "site", Msg::Exchange(ExchangeMsg::Session { token: 9 }));
        tb.inject(3.0, "mandi", "site", Msg::Exchange(ExchangeMsg::Cleared { auction: 3, price: 1.25 }));
        tb.run_until(10.0).unwrap();
        assert_eq!(ads(&tb), [(2.0, 4, 1.5, Trading::Commodity { price: 2.0 })]);
        assert_eq!(*handed.lock().unwrap(), [1.25]);
    }
}
