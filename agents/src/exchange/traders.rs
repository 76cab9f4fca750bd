//! Trader strategies: the price a buyer bids or a seller asks for its next unit, given its limit price (a buyer's
//! valuation, a seller's cost) and, for the adaptive one, what it saw of the market. One [`TraderStrategy`] each,
//! built from a [`Strategy`] named in the scenario; the induced-value market (`crate::market`) runs them, brokers bid
//! and providers ask by them in the exchange's call markets. Each strategy a scenario names is a
//! [`NamedTraderStrategy`] of the registry: the built-in ones below ([`BUILT_IN`]) are registered by the same
//! `Registry::with_trader_strategy` as one's own.
//!
//! - **truthful**: the limit price itself.
//! - **shaded**: a buyer bids a fraction s of its valuation; a seller asks its cost plus (1 − s) of the way from its
//!   cost to the price ceiling (s = 1 is truthful).
//! - **zi-u** (zero intelligence, unconstrained; Gode and Sunder 1993): uniform in [floor, ceiling], whatever the limit:
//!   such a trader may trade at a loss.
//! - **zi-c** (zero intelligence, constrained; Gode and Sunder 1993): a buyer bids uniformly in [floor, valuation], a
//!   seller asks uniformly in [cost, ceiling]: it never trades at a loss.
//! - **zip** (zero intelligence plus; Cliff 1997): shouts λ(1 + μ) for its limit λ and a profit margin μ (μ ≥ 0 for a
//!   seller, −1 ≤ μ ≤ 0 for a buyer), one margin per unit it trades (Cliff's traders hold one unit; a trader of
//!   several units of far-apart limits keeps a margin for each, the one of the unit it holds now adapting), which it
//!   adapts after every shout it sees by the Widrow–Hoff rule with momentum:
//!   towards a target price τ = R q + A around the shout's price q (R uniform in [1, 1 + c_R] and A in [0, c_A] to
//!   raise its price, in [1 − c_R, 1] and [−c_A, 0] to lower it), Δ = β (τ − p), Γ ← γ Γ + (1 − γ) Δ, p ← p + Γ. A
//!   seller raises its price when a trade happened at a price q ≥ its own; lowers it when a bid was accepted at q ≤
//!   its own, or an ask at q ≤ its own went unaccepted (it is active: units left). A buyer mirrors it. β is uniform in
//!   [0.1, 0.5], γ in [0, 0.1], the first margin's size in [0.05, 0.35], c_R = c_A = 0.05 (Cliff 1997's values).

use rand::{Rng, RngExt};

use super::mechanism::Side;
use crate::registry::{Invalid, Registry};

/// A trader's strategy, checked: one of the registry's, the built-in ones ([`BUILT_IN`]) as one's own.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Strategy(pub &'static dyn NamedTraderStrategy);

impl Strategy {
    /// Its limit price.
    pub const TRUTHFUL: Strategy = Strategy(&TRUTHFUL);
    /// A fraction of the way from truthful.
    pub const SHADED: Strategy = Strategy(&SHADED);
    /// Zero intelligence, unconstrained.
    pub const ZI_U: Strategy = Strategy(&ZI_U);
    /// Zero intelligence, constrained.
    pub const ZI_C: Strategy = Strategy(&ZI_C);
    /// Zero intelligence plus.
    pub const ZIP: Strategy = Strategy(&ZIP);

    /// The strategy `name` at `key` names, one of `registry`'s.
    pub fn named(key: &str, name: &str, registry: &Registry) -> Result<Strategy, Invalid> {
        registry.policy_at(key, name).map(Strategy)
    }

    /// A trader of this strategy with `units` units, its own parameters (ZIP's) drawn from `rng`.
    pub fn build(self, limits: Limits, side: Side, units: usize, rng: &mut dyn RngLike) -> Box<dyn TraderStrategy> {
        self.0.build(limits, side, units, rng)
    }
}

/// A trader strategy scenarios name (a market's `strategy`, a broker's `bidding`, a provider's `asking`), held by
/// the registry: the built-in ones ([`BUILT_IN`]) and those added with `Registry::with_trader_strategy`.
pub trait NamedTraderStrategy: Send + Sync {
    /// Its name in scenario files, in kebab-case.
    fn name(&self) -> &'static str;
    /// One line for `gridmarket list`.
    fn about(&self) -> &'static str;
    /// A trader of `units` units on `side`, in a market whose shouts lie within `limits`; `rng` is the trader's
    /// own stream, to draw its parameters from.
    fn build(&self, limits: Limits, side: Side, units: usize, rng: &mut dyn RngLike) -> Box<dyn TraderStrategy>;
    /// Whether its shouts on `side` read a price ceiling (a broker's `ceiling`, a provider's `ask-ceiling`): by
    /// default it may be given (+∞ without one).
    fn ceiling(&self, _side: Side) -> Ceiling {
        Ceiling::Optional
    }
    /// Whether it never shouts beyond its limit price, so never trades at a loss: by default the market cannot
    /// tell.
    fn constrained(&self) -> bool {
        false
    }
}

crate::registry::by_name!(dyn NamedTraderStrategy);

/// Whether a strategy's shouts on a side read a price ceiling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ceiling {
    /// They are drawn up to it: one must be given.
    Needed,
    /// They never read it: it is refused.
    Refused,
    /// It may be given.
    Optional,
}

impl Registry {
    /// Adds `strategy`, which scenarios then name wherever a trader strategy is asked for.
    ///
    /// # Panics
    /// If its name is another strategy's.
    pub fn with_trader_strategy(self, strategy: &'static dyn NamedTraderStrategy) -> Registry {
        let name = strategy.name();
        assert!(self.policy::<dyn NamedTraderStrategy>(name).is_none(), "the trader strategy name `{name}` is taken");
        self.with_policy(name, strategy.about(), strategy)
    }
}

/// The strategies of `registry` whose shouts on `side` may read a ceiling, quoted: `"shaded", "zi-u" or "zi-c"`.
pub fn reading_a_ceiling(registry: &Registry, side: Side) -> String {
    let names: Vec<String> = registry
        .policies::<dyn NamedTraderStrategy>()
        .filter(|(.., s)| s.ceiling(side) != Ceiling::Refused)
        .map(|(name, ..)| format!("\"{name}\""))
        .collect();
    match names.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// A built-in strategy: its name, its line for `list`, its ceilings and constraint, and its trader.
pub struct BuiltIn {
    name: &'static str,
    about: &'static str,
    /// Whether a bid reads the ceiling.
    bid_ceiling: Ceiling,
    /// Whether an ask reads the ceiling.
    ask_ceiling: Ceiling,
    constrained: bool,
    trader: fn(Limits, Side, usize, &mut dyn RngLike) -> Box<dyn TraderStrategy>,
}

impl NamedTraderStrategy for BuiltIn {
    fn name(&self) -> &'static str {
        self.name
    }

    fn about(&self) -> &'static str {
        self.about
    }

    fn build(&self, limits: Limits, side: Side, units: usize, rng: &mut dyn RngLike) -> Box<dyn TraderStrategy> {
        (self.trader)(limits, side, units, rng)
    }

    fn ceiling(&self, side: Side) -> Ceiling {
        match side {
            Side::Bid => self.bid_ceiling,
            Side::Ask => self.ask_ceiling,
        }
    }

    fn constrained(&self) -> bool {
        self.constrained
    }
}

/// truthful: the limit price itself.
pub const TRUTHFUL: BuiltIn = BuiltIn {
    name: "truthful",
    about: "the limit price itself",
    bid_ceiling: Ceiling::Refused,
    ask_ceiling: Ceiling::Refused,
    constrained: true,
    trader: |_, _, _, _| Box::new(Truthful),
};

/// shaded: a fraction `shade` of the valuation; the cost plus (1 − `shade`) of the way to the ceiling.
pub const SHADED: BuiltIn = BuiltIn {
    name: "shaded",
    about: "a bid of `shade` × the valuation; an ask of the cost plus (1 − `shade`) of the way to the ceiling",
    bid_ceiling: Ceiling::Refused,
    ask_ceiling: Ceiling::Needed,
    constrained: true,
    trader: |limits, _, _, _| Box::new(Shaded(limits)),
};

/// zi-u: uniform over the price range, whatever the limit (Gode and Sunder 1993).
pub const ZI_U: BuiltIn = BuiltIn {
    name: "zi-u",
    about: "zero intelligence, unconstrained: uniform in [floor, ceiling] (Gode and Sunder 1993)",
    bid_ceiling: Ceiling::Needed,
    ask_ceiling: Ceiling::Needed,
    constrained: false,
    trader: |limits, _, _, _| Box::new(ZiU(limits)),
};

/// zi-c: uniform on the profitable side of the limit (Gode and Sunder 1993).
pub const ZI_C: BuiltIn = BuiltIn {
    name: "zi-c",
    about: "zero intelligence, constrained: uniform on the profitable side of the limit (Gode and Sunder 1993)",
    bid_ceiling: Ceiling::Refused,
    ask_ceiling: Ceiling::Needed,
    constrained: true,
    trader: |limits, _, _, _| Box::new(ZiC(limits)),
};

/// zip: zero intelligence plus (Cliff 1997).
pub const ZIP: BuiltIn = BuiltIn {
    name: "zip",
    about: "zero intelligence plus: margins adapted by the Widrow–Hoff rule with momentum (Cliff 1997)",
    bid_ceiling: Ceiling::Refused,
    ask_ceiling: Ceiling::Refused,
    constrained: true,
    trader: |limits, side, units, rng| Box::new(Zip::new(limits, side, units, rng)),
};

/// Every built-in strategy, in the order `gridmarket list` gives them.
pub const BUILT_IN: [&BuiltIn; 5] = [&TRUTHFUL, &SHADED, &ZI_U, &ZI_C, &ZIP];

/// What every strategy may read: the price range of the market and the shading fraction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// The lowest price a shout may take.
    pub floor: f64,
    /// The highest.
    pub ceiling: f64,
    /// The shaded strategy's fraction s in [0, 1].
    pub shade: f64,
}

/// A shout the market accepted into its book (it improved the best price on its side), and whether it traded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shout {
    /// A bid or an ask.
    pub side: Side,
    /// Its price.
    pub price: f64,
    /// The price it traded at (the order that stood first), if it crossed.
    pub traded: Option<f64>,
}

/// A trader's unit: which of its units (from 0, in trading order) and its limit price.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Unit {
    /// Its number.
    pub index: usize,
    /// Its valuation (a buyer's) or cost (a seller's).
    pub limit: f64,
}

/// A trader's pricing rule: its shout for its next unit, and what it learns from the shouts it sees.
pub trait TraderStrategy: std::fmt::Debug + Send {
    /// The price it shouts on `side` for `unit`.
    fn shout(&mut self, side: Side, unit: Unit, rng: &mut dyn RngLike) -> f64;
    /// Sees a shout of the market; `unit` is its own next unit (`None`: no units left, inactive).
    fn observe(&mut self, _side: Side, _unit: Option<Unit>, _shout: &Shout, _rng: &mut dyn RngLike) {}
}

/// The random numbers a strategy draws: uniform in [lo, hi].
pub trait RngLike {
    /// Uniform in [lo, hi] (lo when hi ≤ lo).
    fn uniform(&mut self, lo: f64, hi: f64) -> f64;
}

impl<R: Rng> RngLike for R {
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        if hi > lo { lo + (hi - lo) * self.random::<f64>() } else { lo }
    }
}

/// Its limit price.
#[derive(Clone, Copy, Debug)]
pub struct Truthful;

impl TraderStrategy for Truthful {
    fn shout(&mut self, _side: Side, unit: Unit, _rng: &mut dyn RngLike) -> f64 {
        unit.limit
    }
}

/// A fraction s of the valuation; the cost plus (1 − s) of the way to the ceiling.
#[derive(Clone, Copy, Debug)]
pub struct Shaded(pub Limits);

impl TraderStrategy for Shaded {
    fn shout(&mut self, side: Side, unit: Unit, _rng: &mut dyn RngLike) -> f64 {
        let (Limits { ceiling, shade, .. }, limit) = (self.0, unit.limit);
        match side {
            Side::Bid => shade * limit,
            Side::Ask => limit + (1.0 - shade) * (ceiling - limit).max(0.0),
        }
    }
}

/// Uniform over the whole price range.
#[derive(Clone, Copy, Debug)]
pub struct ZiU(pub Limits);

impl TraderStrategy for ZiU {
    fn shout(&mut self, _side: Side, _unit: Unit, rng: &mut dyn RngLike) -> f64 {
        rng.uniform(self.0.floor, self.0.ceiling)
    }
}

/// Uniform between the limit and the end of the range on the profitable side.
#[derive(Clone, Copy, Debug)]
pub struct ZiC(pub Limits);

impl TraderStrategy for ZiC {
    fn shout(&mut self, side: Side, unit: Unit, rng: &mut dyn RngLike) -> f64 {
        let limit = unit.limit;
        match side {
            Side::Bid => rng.uniform(self.0.floor, limit.max(self.0.floor)),
            Side::Ask => rng.uniform(limit.min(self.0.ceiling), self.0.ceiling),
        }
    }
}

/// Cliff (1997)'s bounds of R's and A's ranges.
const ZIP_CR: f64 = 0.05;
const ZIP_CA: f64 = 0.05;

/// Zero intelligence plus: profit margins adapted by the Widrow–Hoff rule with momentum.
#[derive(Clone, Debug)]
pub struct Zip {
    limits: Limits,
    /// μ of each unit: ≥ 0 for a seller, in [−1, 0] for a buyer.
    margins: Vec<f64>,
    /// Learning rate β.
    beta: f64,
    /// Momentum γ.
    gamma: f64,
    /// Γ, the last smoothed change of its price.
    change: f64,
}

impl Zip {
    /// A ZIP trader on `side` of `units` units, its β, γ and first margins drawn from `rng`.
    pub fn new(limits: Limits, side: Side, units: usize, rng: &mut dyn RngLike) -> Zip {
        let beta = rng.uniform(0.1, 0.5);
        let gamma = rng.uniform(0.0, 0.1);
        let sign = if side == Side::Ask { 1.0 } else { -1.0 };
        let margins = (0..units).map(|_| sign * rng.uniform(0.05, 0.35)).collect();
        Zip { limits, margins, beta, gamma, change: 0.0 }
    }

    /// Its price for `unit`.
    pub fn price(&self, unit: Unit) -> f64 {
        (unit.limit * (1.0 + self.margin(unit.index)))
            .clamp(self.limits.floor, self.limits.ceiling.max(self.limits.floor))
    }

    /// Its margin μ for unit `index`.
    pub fn margin(&self, index: usize) -> f64 {
        self.margins.get(index).copied().unwrap_or(0.0)
    }

    /// Moves its price for `unit` towards τ = R q + A, R and A drawn to raise (`up`) or lower it.
    fn adapt(&mut self, side: Side, unit: Unit, q: f64, up: bool, rng: &mut dyn RngLike) {
        let Unit { index, limit } = unit;
        if limit <= 0.0 || index >= self.margins.len() {
            return;
        }
        let (r, a) = if up {
            (rng.uniform(1.0, 1.0 + ZIP_CR), rng.uniform(0.0, ZIP_CA))
        } else {
            (rng.uniform(1.0 - ZIP_CR, 1.0), rng.uniform(-ZIP_CA, 0.0))
        };
        let target = r * q + a;
        let p = limit * (1.0 + self.margins[index]);
        self.change = self.gamma * self.change + (1.0 - self.gamma) * self.beta * (target - p);
        let margin = (p + self.change) / limit - 1.0;
        // A seller never asks below its cost, a buyer never bids above its valuation (nor below 0).
        self.margins[index] = match side {
            Side::Ask => margin.max(0.0),
            Side::Bid => margin.clamp(-1.0, 0.0),
        };
    }
}

impl TraderStrategy for Zip {
    fn shout(&mut self, _side: Side, unit: Unit, _rng: &mut dyn RngLike) -> f64 {
        self.price(unit)
    }

    fn observe(&mut self, side: Side, unit: Option<Unit>, shout: &Shout, rng: &mut dyn RngLike) {
        let Some(unit) = unit else { return };
        let p = unit.limit * (1.0 + self.margin(unit.index));
        let q = shout.traded.unwrap_or(shout.price);
        // Raise its price (a seller) or lower it (a buyer): the higher profit it could have had.
        let better = |p: f64| match side {
            Side::Ask => p <= q,
            Side::Bid => p >= q,
        };
        // Lower its price (a seller) or raise it (a buyer): it would not have won.
        let worse = |p: f64| match side {
            Side::Ask => p >= q,
            Side::Bid => p <= q,
        };
        let other = match side {
            Side::Ask => Side::Bid,
            Side::Bid => Side::Ask,
        };
        // "Up" moves the price up: a seller's larger margin, a buyer's smaller one.
        let (widen, narrow) = match side {
            Side::Ask => (true, false),
            Side::Bid => (false, true),
        };
        if shout.traded.is_some() {
            if better(p) {
                self.adapt(side, unit, q, widen, rng);
            } else if shout.side == other && worse(p) {
                self.adapt(side, unit, q, narrow, rng);
            }
        } else if shout.side == side && worse(p) {
            self.adapt(side, unit, q, narrow, rng);
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::sim::rng::SimRng;

    const LIMITS: Limits = Limits { floor: 1.0, ceiling: 200.0, shade: 0.8 };

    fn unit(limit: f64) -> Unit {
        Unit { index: 0, limit }
    }

    #[test]
    fn test_zero_intelligence_draws_within_its_constraint() {
        let mut rng = SimRng::seed_from_u64(3);
        let (mut zic, mut ziu) = (ZiC(LIMITS), ZiU(LIMITS));
        let (mut bids, mut asks, mut free) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..10_000 {
            bids.push(zic.shout(Side::Bid, unit(80.0), &mut rng));
            asks.push(zic.shout(Side::Ask, unit(120.0), &mut rng));
            free.push(ziu.shout(Side::Bid, unit(80.0), &mut rng));
        }
        let range = |v: &[f64]| v.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let (lo, hi) = range(&bids);
        assert!(lo >= 1.0 && hi <= 80.0 && (mean(&bids) - 40.5).abs() < 1.0, "ZI-C bids in [1, 80]");
        let (lo, hi) = range(&asks);
        assert!(lo >= 120.0 && hi <= 200.0 && (mean(&asks) - 160.0).abs() < 1.0, "ZI-C asks in [120, 200]");
        let (lo, hi) = range(&free);
        assert!(lo < 5.0 && hi > 195.0 && (mean(&free) - 100.5).abs() < 2.0, "ZI-U bids over [1, 200]");
    }

    #[test]
    fn test_truthful_and_shaded() {
        let mut rng = SimRng::seed_from_u64(3);
        assert_eq!(Truthful.shout(Side::Bid, unit(80.0), &mut rng), 80.0);
        assert_eq!(Shaded(LIMITS).shout(Side::Bid, unit(80.0), &mut rng), 64.0);
        // 120 + 0.2 × (200 − 120).
        assert_eq!(Shaded(LIMITS).shout(Side::Ask, unit(120.0), &mut rng), 136.0);
    }

    #[test]
    fn test_zip_follows_the_rules_of_its_margin() {
        let mut rng = SimRng::seed_from_u64(5);
        let mut seller = Zip::new(LIMITS, Side::Ask, 2, &mut rng);
        assert!((0.05..=0.35).contains(&seller.margin(0)) && (0.05..=0.35).contains(&seller.margin(1)));
        let ask = seller.price(unit(100.0));
        // A trade above its ask: it raises the margin of the unit it holds, and of no other.
        let trade = Shout { side: Side::Bid, price: ask + 30.0, traded: Some(ask + 30.0) };
        let before = (seller.margin(0), seller.margin(1));
        seller.observe(Side::Ask, Some(unit(100.0)), &trade, &mut rng);
        assert!(seller.margin(0) > before.0 && seller.margin(1) == before.1);
        // An ask below its own went unaccepted: it lowers its margin, never below 0.
        for _ in 0..200 {
            let p = seller.price(unit(100.0));
            let undercut = Shout { side: Side::Ask, price: p - 5.0, traded: None };
            seller.observe(Side::Ask, Some(unit(100.0)), &undercut, &mut rng);
        }
        assert!(seller.margin(0) >= 0.0 && seller.margin(0) < 0.05, "{}", seller.margin(0));
        // Inactive, it learns nothing.
        let m = seller.margin(0);
        seller.observe(Side::Ask, None, &trade, &mut rng);
        assert_eq!(seller.margin(0), m);
        // A buyer outbid by an unaccepted higher bid raises its bid, never above its valuation.
        let mut buyer = Zip::new(LIMITS, Side::Bid, 1, &mut rng);
        let bid = buyer.price(unit(100.0));
        assert!(bid < 100.0);
        for _ in 0..200 {
            let q = buyer.price(unit(100.0)) + 10.0;
            buyer.observe(Side::Bid, Some(unit(100.0)), &Shout { side: Side::Bid, price: q, traded: None }, &mut rng);
        }
        assert!(buyer.price(unit(100.0)) > bid && buyer.price(unit(100.0)) <= 100.0);
        assert!((-1.0..=0.0).contains(&buyer.margin(0)));
    }

    /// A fixed margin of a tenth on the limit: a strategy of one's own.
    struct Margin;

    #[derive(Debug)]
    struct MarginTrader;

    impl TraderStrategy for MarginTrader {
        fn shout(&mut self, side: Side, unit: Unit, _rng: &mut dyn RngLike) -> f64 {
            match side {
                Side::Bid => unit.limit * 0.9,
                Side::Ask => unit.limit * 1.1,
            }
        }
    }

    impl NamedTraderStrategy for Margin {
        fn name(&self) -> &'static str {
            "margin"
        }

        fn about(&self) -> &'static str {
            "a tenth below its valuation, above its cost"
        }

        fn build(&self, _: Limits, _: Side, _: usize, _: &mut dyn RngLike) -> Box<dyn TraderStrategy> {
            Box::new(MarginTrader)
        }
    }

    #[test]
    fn test_a_registered_strategy_is_named_and_built() {
        let registry = Registry::standard().with_trader_strategy(&Margin);
        let strategy = Strategy::named("bidding", "margin", &registry).unwrap();
        assert_eq!(strategy, Strategy(&Margin));
        let mut rng = SimRng::seed_from_u64(3);
        let mut trader = strategy.build(LIMITS, Side::Ask, 1, &mut rng);
        assert_eq!(trader.shout(Side::Ask, unit(100.0), &mut rng), 110.00000000000001);
        assert_eq!(Strategy::named("bidding", "zip", &registry), Ok(Strategy::ZIP));
        let e = Strategy::named("bidding", "margn", &registry).unwrap_err();
        assert_eq!((e.key.as_str(), e.hint.as_deref()), ("bidding", Some("did you mean `margin`?")));
        let e = Strategy::named("bidding", "margin", &Registry::standard()).unwrap_err();
        assert_eq!(e.message, "unknown value `margin`, expected one of `truthful`, `shaded`, `zi-u`, `zi-c`, `zip`");
    }

    #[test]
    #[should_panic(expected = "the trader strategy name `zi-c` is taken")]
    fn test_a_built_in_name_cannot_be_registered() {
        struct ZiCAgain;
        impl NamedTraderStrategy for ZiCAgain {
            fn name(&self) -> &'static str {
                "zi-c"
            }
            fn about(&self) -> &'static str {
                ""
            }
            fn build(&self, _: Limits, _: Side, _: usize, _: &mut dyn RngLike) -> Box<dyn TraderStrategy> {
                Box::new(Truthful)
            }
        }
        let _ = Registry::standard().with_trader_strategy(&ZiCAgain);
    }
}
