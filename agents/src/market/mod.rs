//! The induced-value double-auction market of Gode and Sunder (1993): buyers with unit valuations and sellers with
//! unit costs trade one unit at a time in a continuous double auction, in trading periods, each trader pricing its
//! shouts by its strategy (`crate::exchange::traders`).
//!
//! The rules, as Gode and Sunder define them: each trader has several units, traded in the order listed (a buyer's
//! first valuation is its first unit's). At each step of a period a trader with units left is drawn uniformly at
//! random and shouts a price for its next unit: a buyer bids, a seller asks. A bid must improve (exceed) the best bid
//! standing, an ask must improve (undercut) the best ask, or it is ignored. When the best bid reaches the best ask
//! they trade one unit at the price of the order that stood first, and the book is cleared. A period is a fixed
//! number of steps; every period starts with the traders' units anew (what a ZIP trader learnt stays).
//!
//! The agent is the experimenter's view of the market: it knows every valuation and cost, so it measures what the
//! traders cannot (the competitive equilibrium, allocative efficiency, Smith's α; see [`measures`]) and reports them
//! per period and per run. It exchanges no messages but its own step timers (`Timer::Round`): the traders are
//! strategies inside it, drawn from its random stream.

pub mod kind;
pub mod measures;
pub mod schedules;

use crate::exchange::mechanism::{Order, OrderBook, Side};
use crate::exchange::traders::{Limits, Shout, Strategy, TraderStrategy, Unit};
use crate::protocol::{Msg, TimerMsg};
use crate::report::Report;
pub use crate::report::{MarketRecord, PeriodRecord, TradeRecord};
use crate::sim::{Agent, Ctx, Envelope, GridMarket, SimTime};
use measures::{Equilibrium, gini, smiths_alpha, volatility};

/// An induced-value market's set-up.
#[derive(Clone, Debug, PartialEq)]
pub struct MarketConfig {
    /// Each buyer's unit valuations, in the order it trades them.
    pub buyers: Vec<Vec<f64>>,
    /// Each seller's unit costs, in the order it trades them.
    pub sellers: Vec<Vec<f64>>,
    /// How buyers price their bids.
    pub buyer_strategy: Strategy,
    /// How sellers price their asks.
    pub seller_strategy: Strategy,
    /// The price range and the shading fraction.
    pub limits: Limits,
    /// Trading periods.
    pub periods: u32,
    /// Steps per period, one shout each.
    pub steps: u32,
    /// Simulated time per step \[s\].
    pub step: f64,
}

impl MarketConfig {
    /// The competitive equilibrium of one period's units.
    pub fn equilibrium(&self) -> Equilibrium {
        let values: Vec<f64> = self.buyers.iter().flatten().copied().collect();
        let costs: Vec<f64> = self.sellers.iter().flatten().copied().collect();
        Equilibrium::of(&values, &costs)
    }
}

/// A trader inside the market.
#[derive(Debug)]
struct Trader {
    side: Side,
    /// Its units' valuations or costs, in trading order.
    limits: Vec<f64>,
    /// Units traded this period.
    next: usize,
    strategy: Box<dyn TraderStrategy>,
    /// Units traded and surplus over the run.
    units: u32,
    surplus: f64,
}

impl Trader {
    fn limit(&self) -> Option<f64> {
        self.limits.get(self.next).copied()
    }

    fn unit(&self) -> Option<Unit> {
        Some(Unit { index: self.next, limit: self.limit()? })
    }
}

/// The induced-value double-auction market agent.
#[derive(Debug)]
pub struct DoubleAuctionMarket {
    config: MarketConfig,
    equilibrium: Equilibrium,
    /// Buyers first, then sellers; built at start from the agent's random stream.
    traders: Vec<Trader>,
    book: OrderBook,
    /// The trader of each order in the book (cleared with it).
    owners: Vec<usize>,
    /// Steps taken over the run.
    steps: u64,
    trades: Vec<TradeRecord>,
    periods: Vec<PeriodRecord>,
}

impl DoubleAuctionMarket {
    /// A market of `config`; its traders are drawn when it starts.
    pub fn new(config: MarketConfig) -> DoubleAuctionMarket {
        let equilibrium = config.equilibrium();
        DoubleAuctionMarket {
            config,
            equilibrium,
            traders: Vec::new(),
            book: OrderBook::new(),
            owners: Vec::new(),
            steps: 0,
            trades: Vec::new(),
            periods: Vec::new(),
        }
    }

    /// The period the next step belongs to.
    fn period(&self) -> u32 {
        (self.steps / u64::from(self.config.steps)) as u32
    }

    /// One step: a trader with units left shouts; the shout enters the book if it improves its side, trades if it
    /// crosses, and every trader sees it.
    fn on_step(&mut self, ctx: &mut Ctx<'_>) {
        let now = ctx.now().secs();
        let active: Vec<usize> = (0..self.traders.len()).filter(|&i| self.traders[i].limit().is_some()).collect();
        if !active.is_empty() {
            let i = active[rand::RngExt::random_range(ctx.rng(), 0..active.len())];
            self.shout(i, now, ctx);
        }
        self.steps += 1;
        if self.steps.is_multiple_of(u64::from(self.config.steps)) {
            self.end_period(now + self.config.step);
        }
        if self.period() < self.config.periods {
            ctx.wake_in(self.config.step, TimerMsg::Round { n: self.steps });
        }
    }

    fn shout(&mut self, i: usize, now: f64, ctx: &mut Ctx<'_>) {
        let trader = &mut self.traders[i];
        let (side, Some(unit)) = (trader.side, trader.unit()) else { return };
        let price = trader.strategy.shout(side, unit, ctx.rng());
        let improves = match side {
            Side::Bid => self.book.best_bid().is_none_or(|b| price > b.price),
            Side::Ask => self.book.best_ask().is_none_or(|a| price < a.price),
        };
        if !(improves && price.is_finite() && price >= 0.0) {
            return;
        }
        let id = self.owners.len() as u64;
        self.owners.push(i);
        let Ok(trade) = self.book.submit(side, Order::new(id, price)) else { return };
        let traded = trade.map(|t| {
            let (b, s) = (self.owners[t.bid as usize], self.owners[t.ask as usize]);
            self.trade(b, s, t.buyer_pays, now);
            t.buyer_pays
        });
        if traded.is_some() {
            self.book = OrderBook::new();
            self.owners.clear();
        }
        let seen = Shout { side, price, traded };
        for t in &mut self.traders {
            let unit = t.unit();
            t.strategy.observe(t.side, unit, &seen, ctx.rng());
        }
    }

    fn trade(&mut self, b: usize, s: usize, price: f64, now: f64) {
        let value = self.traders[b].limit().unwrap_or(f64::NAN);
        let cost = self.traders[s].limit().unwrap_or(f64::NAN);
        for (i, gain) in [(b, value - price), (s, price - cost)] {
            let t = &mut self.traders[i];
            t.next += 1;
            t.units += 1;
            t.surplus += gain;
        }
        let sellers = self.config.buyers.len();
        self.trades.push(TradeRecord {
            t: now,
            period: self.period(),
            price,
            buyer: b as u32,
            seller: (s - sellers) as u32,
            value,
            cost,
        });
    }

    /// Closes the period that just ended at `end`: its record, then fresh units and an empty book.
    fn end_period(&mut self, end: f64) {
        let period = self.periods.len() as u32;
        let trades: Vec<&TradeRecord> = self.trades.iter().filter(|t| t.period == period).collect();
        let prices: Vec<f64> = trades.iter().map(|t| t.price).collect();
        let e = &self.equilibrium;
        let realised: f64 = trades.iter().map(|t| t.value - t.cost).sum();
        let n = trades.len() as f64;
        self.periods.push(PeriodRecord {
            period,
            start: f64::from(period) * f64::from(self.config.steps) * self.config.step,
            end,
            trades: trades.len() as u32,
            efficiency: if e.surplus > 0.0 { realised / e.surplus } else { f64::NAN },
            mean_price: if n > 0.0 { prices.iter().sum::<f64>() / n } else { f64::NAN },
            alpha: smiths_alpha(&prices, e.price),
            volatility: volatility(&prices, e.price),
            buyer_surplus: trades.iter().map(|t| t.value - t.price).sum(),
            seller_surplus: trades.iter().map(|t| t.price - t.cost).sum(),
            extramarginal: trades.iter().filter(|t| t.value < e.marginal_value || t.cost > e.marginal_cost).count()
                as u32,
        });
        for t in &mut self.traders {
            t.next = 0;
        }
        self.book = OrderBook::new();
        self.owners.clear();
    }

    /// The run's metrics, means over the periods where not said otherwise.
    fn metrics(&self) -> Vec<(&'static str, f64)> {
        let e = &self.equilibrium;
        let ps = &self.periods;
        let mean = |f: &dyn Fn(&PeriodRecord) -> f64| {
            let v: Vec<f64> = ps.iter().map(f).filter(|x| !x.is_nan()).collect();
            if v.is_empty() { f64::NAN } else { v.iter().sum::<f64>() / v.len() as f64 }
        };
        let prices = |trades: &mut dyn Iterator<Item = &TradeRecord>| trades.map(|t| t.price).collect::<Vec<_>>();
        // Each period's first and last third of its trades, pooled over the periods.
        let (mut early, mut late) = (Vec::new(), Vec::new());
        for p in ps {
            let of: Vec<f64> = prices(&mut self.trades.iter().filter(|t| t.period == p.period));
            let third = of.len() / 3;
            early.extend_from_slice(&of[..third]);
            late.extend_from_slice(&of[of.len() - third..]);
        }
        let alpha_of = |period: Option<&PeriodRecord>| period.map_or(f64::NAN, |p| p.alpha);
        let (alpha_first, alpha_last) = (alpha_of(ps.first()), alpha_of(ps.last()));
        let (alpha_early, alpha_late) = (smiths_alpha(&early, e.price), smiths_alpha(&late, e.price));
        let units: Vec<f64> = self.traders.iter().map(|t| f64::from(t.units)).collect();
        let surplus: Vec<f64> = self.traders.iter().map(|t| t.surplus).collect();
        let quiet = self.quiet_traders().len() as f64;
        vec![
            ("ce_price", e.price),
            ("ce_quantity", f64::from(e.quantity)),
            ("ce_surplus", e.surplus),
            ("efficiency", mean(&|p| p.efficiency)),
            ("trades", mean(&|p| f64::from(p.trades))),
            ("transaction_price", mean(&|p| p.mean_price)),
            ("price_deviation", mean(&|p| p.mean_price) - e.price),
            ("alpha", smiths_alpha(&prices(&mut self.trades.iter()), e.price)),
            ("alpha_first", alpha_first),
            ("alpha_last", alpha_last),
            ("alpha_fall", alpha_first - alpha_last),
            ("alpha_early", alpha_early),
            ("alpha_late", alpha_late),
            ("convergence", alpha_early - alpha_late),
            ("volatility", mean(&|p| p.volatility)),
            ("buyer_surplus", mean(&|p| p.buyer_surplus)),
            ("seller_surplus", mean(&|p| p.seller_surplus)),
            ("welfare", mean(&|p| p.buyer_surplus + p.seller_surplus)),
            ("extramarginal", mean(&|p| f64::from(p.extramarginal))),
            ("gini_units", gini(&units)),
            ("gini_surplus", gini(&surplus)),
            ("quiet_traders", quiet),
        ]
    }

    /// Traders none of whose units can trade without a loss: a buyer whose every valuation lies below every cost,
    /// a seller whose every cost lies above every valuation (named "buyer i" and "seller j", from 0).
    pub fn quiet_traders(&self) -> Vec<String> {
        quiet_traders(&self.config.buyers, &self.config.sellers)
    }
}

/// See [`DoubleAuctionMarket::quiet_traders`].
pub fn quiet_traders(buyers: &[Vec<f64>], sellers: &[Vec<f64>]) -> Vec<String> {
    let lowest_cost = sellers.iter().flatten().copied().fold(f64::INFINITY, f64::min);
    let highest_value = buyers.iter().flatten().copied().fold(f64::NEG_INFINITY, f64::max);
    let buyers = buyers
        .iter()
        .enumerate()
        .filter(|(_, v)| v.iter().all(|&v| v < lowest_cost))
        .map(|(i, _)| format!("buyer {i}"));
    let sellers = sellers
        .iter()
        .enumerate()
        .filter(|(_, c)| c.iter().all(|&c| c > highest_value))
        .map(|(j, _)| format!("seller {j}"));
    buyers.chain(sellers).collect()
}

impl Agent<GridMarket> for DoubleAuctionMarket {
    /// Draws its traders' strategies and sets the first step.
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        let c = &self.config;
        let sides = c.buyers.iter().map(|v| (Side::Bid, v, c.buyer_strategy));
        let sides = sides.chain(c.sellers.iter().map(|v| (Side::Ask, v, c.seller_strategy)));
        let specs: Vec<(Side, Vec<f64>, Strategy)> = sides.map(|(s, v, st)| (s, v.clone(), st)).collect();
        for (side, limits, strategy) in specs {
            let strategy = strategy.build(self.config.limits, side, limits.len(), ctx.rng());
            self.traders.push(Trader { side, limits, next: 0, strategy, units: 0, surplus: 0.0 });
        }
        if self.config.periods > 0 {
            ctx.wake_in(0.0, TimerMsg::Round { n: 0 });
        }
    }

    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>) {
        match &env.msg {
            Msg::Timer(TimerMsg::Round { .. }) => self.on_step(ctx),
            other => crate::sim::unhandled(ctx, other.kind()),
        }
    }

    fn report(&self, _now: SimTime, out: &mut Report) {
        out.metrics.extend(self.metrics());
        out.market = Some(Box::new(MarketRecord {
            equilibrium: self.equilibrium,
            periods: self.periods.clone(),
            trades: self.trades.clone(),
        }));
    }
}

#[cfg(test)]
mod tests;
