//! The market kind: `[markets.<name>]` in a scenario, an induced-value double-auction market of traders with unit
//! valuations and costs (Gode and Sunder 1993).

use schemars::JsonSchema;
use serde::Deserialize;

use super::schedules::Schedule;
use super::{DoubleAuctionMarket, MarketConfig, quiet_traders};
use crate::exchange::traders::{Limits, NamedTraderStrategy, Strategy};
use crate::registry::limits::{MAX_TIME, short};
use crate::registry::values::{Fraction, GroupSize, Interval, PositiveInt};
use crate::registry::{
    AgentKind, BuildCx, CheckCx, GroupSpec, Invalid, Member, Metric, ParseError, Policy, RawGroup, Registry,
    SummaryRows, Unit,
};
use crate::sim::BoxedAgent;

/// The kind's name in the directory.
pub const KIND: &str = "market";

/// Units of one market over all its traders.
const MAX_UNITS: usize = 100_000;
/// Steps of one market over all its periods.
const MAX_STEPS: u64 = 100_000_000;

/// The induced-value market kind.
pub struct MarketKind;

impl AgentKind for MarketKind {
    fn summary_rows(&self) -> SummaryRows {
        const ROWS: &[(&str, &str)] =
            &[("efficiency", "efficiency"), ("alpha", "Smith's α [%]"), ("trades", "trades/period")];
        SummaryRows { metrics: ROWS, members: 8, only_if_all: true }
    }

    fn name(&self) -> &'static str {
        KIND
    }

    fn table(&self) -> &'static str {
        "markets"
    }

    fn about(&self) -> &'static str {
        "an induced-value continuous double auction of traders with unit valuations and costs (Gode and Sunder 1993)"
    }

    fn policies(&self, registry: &Registry) -> Vec<Policy> {
        vec![
            Policy::registered::<dyn NamedTraderStrategy>(
                "strategy",
                &[],
                "Gode and Sunder (1993); Cliff (1997)",
                registry,
            ),
            Policy::of("schedule", &Schedule::ALL, "demand and supply shapes shipped with gridmarket"),
        ]
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<RawMarket>()
    }

    fn parse(&self, group: toml::Value) -> Result<Box<dyn RawGroup>, ParseError> {
        Ok(Box::new(crate::registry::parse::<RawMarket>(group)?))
    }

    fn metrics(&self) -> &'static [Metric] {
        const METRICS: &[Metric] = &[
            Metric::new(
                "ce_price",
                Unit::Money,
                "P*, the midpoint of the competitive equilibrium's price band (per unit)",
            ),
            Metric::new("ce_quantity", Unit::Count, "Q, the units the competitive equilibrium trades per period"),
            Metric::new("ce_surplus", Unit::Money, "the most surplus a period can give, Σ (v − c) over the Q units"),
            Metric::new(
                "efficiency",
                Unit::Share,
                "allocative efficiency: realised surplus Σ (v − c) over the trades over the most, mean over periods",
            ),
            Metric::new("trades", Unit::Count, "units traded per period, mean over periods"),
            Metric::new("transaction_price", Unit::Money, "the mean transaction price of a period, mean over periods"),
            Metric::new("price_deviation", Unit::Money, "transaction_price − ce_price (may be negative)"),
            Metric::new(
                "alpha",
                Unit::Percent,
                "Smith's α over every trade: 100 √(mean (p − P*)²) / P*, the price's root-mean-square deviation from \
                 the equilibrium",
            ),
            Metric::new("alpha_first", Unit::Percent, "Smith's α of the first period's trades"),
            Metric::new("alpha_last", Unit::Percent, "Smith's α of the last period's trades"),
            Metric::new(
                "alpha_fall",
                Unit::Percent,
                "alpha_first − alpha_last: convergence across periods (may be negative)",
            ),
            Metric::new("alpha_early", Unit::Percent, "Smith's α of the first third of each period's trades, pooled"),
            Metric::new("alpha_late", Unit::Percent, "Smith's α of the last third of each period's trades, pooled"),
            Metric::new(
                "convergence",
                Unit::Percent,
                "alpha_early − alpha_late: convergence within periods (may be negative)",
            ),
            Metric::new(
                "volatility",
                Unit::Ratio,
                "root mean square of successive transaction-price changes over P*, mean over periods",
            ),
            Metric::new("buyer_surplus", Unit::Money, "buyers' surplus Σ (v − p) per period, mean over periods"),
            Metric::new("seller_surplus", Unit::Money, "sellers' surplus Σ (p − c) per period (the providers' side)"),
            Metric::new("welfare", Unit::Money, "buyer_surplus + seller_surplus: the realised surplus per period"),
            Metric::new(
                "extramarginal",
                Unit::Count,
                "trades per period of a unit the equilibrium does not trade (valued below the Q-th highest valuation, or \
                 costing more than the Q-th lowest cost)",
            ),
            Metric::new("gini_units", Unit::Share, "Gini coefficient of the units each trader traded over the run"),
            Metric::new(
                "gini_surplus",
                Unit::Share,
                "Gini coefficient of each trader's surplus over the run (undefined if one lost money)",
            ),
            Metric::new("quiet_traders", Unit::Count, "traders none of whose units can trade without a loss"),
        ];
        METRICS
    }
}

/// A group of induced-value markets (one, usually). Give the traders either by `schedule` or by `buyers` and `sellers`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawMarket {
    /// How many independent markets (each its own traders and draws).
    #[serde(default = "GroupSize::one")]
    pub count: GroupSize,
    /// A demand and supply schedule shipped with gridmarket: "symmetric", "flat-supply", "flat-demand",
    /// "asymmetric" or "extramarginal" (6 buyers and 6 sellers of 4 units each; see `docs/market.md`).
    #[schemars(with = "Option<String>")]
    pub schedule: Option<Schedule>,
    /// Each buyer's unit valuations, in the order it trades them: `[[180, 150], [170, 120, 90]]`.
    pub buyers: Option<Vec<Vec<f64>>>,
    /// Each seller's unit costs, in the order it trades them.
    pub sellers: Option<Vec<Vec<f64>>>,
    /// Every trader's strategy: "truthful", "shaded", "zi-u", "zi-c" (default) or "zip", or the name of a strategy
    /// added to the registry (`Registry::with_trader_strategy`).
    pub strategy: Option<String>,
    /// The buyers' strategy, if not `strategy`.
    pub buyer_strategy: Option<String>,
    /// The sellers' strategy, if not `strategy`.
    pub seller_strategy: Option<String>,
    /// Shaded traders: a buyer bids this fraction of its valuation, a seller asks its cost plus (1 − this) of the way
    /// to the ceiling (default 0.9).
    pub shade: Option<Fraction>,
    /// Trading periods (default 6).
    pub periods: Option<PositiveInt>,
    /// Steps per period, one shout each (default 1,000).
    pub steps: Option<PositiveInt>,
    /// Simulated time per step \[s\] (default 1).
    pub step: Option<Interval>,
    /// The lowest price a shout may take (default 1, Gode and Sunder's).
    pub floor: Option<f64>,
    /// The highest (default 200, Gode and Sunder's).
    pub ceiling: Option<f64>,
}

impl RawGroup for RawMarket {
    fn count(&self) -> usize {
        self.count.0 as usize
    }

    fn check(&self, cx: &CheckCx<'_>) -> Result<Box<dyn GroupSpec>, Invalid> {
        let (floor, ceiling) = (self.floor.unwrap_or(1.0), self.ceiling.unwrap_or(200.0));
        if !(floor.is_finite() && ceiling.is_finite() && 0.0 <= floor && floor < ceiling) {
            let m =
                format!("expected 0 <= floor < ceiling, found floor {} and ceiling {}", short(floor), short(ceiling));
            return Err(Invalid::at(if self.ceiling.is_some() { "ceiling" } else { "floor" }, m));
        }
        let (buyers, sellers) = match (self.schedule, &self.buyers, &self.sellers) {
            (Some(s), None, None) => s.traders(),
            (None, Some(b), Some(s)) => (b.clone(), s.clone()),
            (Some(_), _, _) => {
                let key = if self.buyers.is_some() { "buyers" } else { "sellers" };
                return Err(Invalid::at(key, "give either `schedule` or `buyers` and `sellers`, not both"));
            }
            (None, None, _) => {
                return Err(
                    Invalid::at("buyers", "expected each buyer's valuations, found none").hint("or name a `schedule`")
                );
            }
            (None, _, None) => {
                return Err(
                    Invalid::at("sellers", "expected each seller's costs, found none").hint("or name a `schedule`")
                );
            }
        };
        for (key, traders) in [("buyers", &buyers), ("sellers", &sellers)] {
            if traders.is_empty() {
                return Err(Invalid::at(key, "expected at least one trader"));
            }
            for (i, units) in traders.iter().enumerate() {
                if units.is_empty() {
                    return Err(Invalid::at(format!("{key}.{i}"), "expected at least one unit"));
                }
                if let Some(x) = units.iter().find(|x| !(floor..=ceiling).contains(*x)) {
                    let (lo, hi) = (short(floor), short(ceiling));
                    return Err(Invalid::at(
                        format!("{key}.{i}"),
                        format!("expected prices from {lo} to {hi}, found {}", short(*x)),
                    ));
                }
            }
        }
        let units = buyers.iter().chain(&sellers).map(Vec::len).sum::<usize>();
        if units > MAX_UNITS {
            return Err(Invalid::at("buyers", format!("{units} units in all, more than {MAX_UNITS}")));
        }
        let periods = self.periods.map_or(6, |p| p.0);
        let steps = self.steps.map_or(1_000, |s| s.0);
        let step = self.step.map_or(1.0, |s| s.0);
        let total = u64::from(periods) * u64::from(steps);
        if total > MAX_STEPS || total as f64 * step > MAX_TIME {
            let m = format!(
                "{periods} periods of {steps} steps of {} s: more than {MAX_STEPS} steps or {} s",
                short(step),
                short(MAX_TIME)
            );
            return Err(Invalid::at("steps", m));
        }
        let config = MarketConfig {
            buyers,
            sellers,
            buyer_strategy: self.strategy("buyer-strategy", &self.buyer_strategy, cx.registry)?,
            seller_strategy: self.strategy("seller-strategy", &self.seller_strategy, cx.registry)?,
            limits: Limits { floor, ceiling, shade: self.shade.map_or(0.9, |s| s.0) },
            periods,
            steps,
            step,
        };
        Ok(Box::new(MarketSpec { config }))
    }
}

impl RawMarket {
    /// The strategy of one side, at `key`: its own, else `strategy`, else ZI-C.
    fn strategy(&self, key: &str, side: &Option<String>, registry: &Registry) -> Result<Strategy, Invalid> {
        match (side, &self.strategy) {
            (Some(name), _) => Strategy::named(key, name, registry),
            (None, Some(name)) => Strategy::named("strategy", name, registry),
            (None, None) => Ok(Strategy::ZI_C),
        }
    }
}

/// A checked market group.
#[derive(Clone, Debug, PartialEq)]
pub struct MarketSpec {
    /// Its set-up.
    pub config: MarketConfig,
}

impl GroupSpec for MarketSpec {
    fn build(&self, _member: &Member<'_>, _cx: &mut BuildCx) -> Result<BoxedAgent, String> {
        Ok(Box::new(DoubleAuctionMarket::new(self.config.clone())))
    }

    /// Traders who cannot trade without a loss, and a market where nothing can.
    fn notes(&self) -> Vec<String> {
        let c = &self.config;
        let quiet = quiet_traders(&c.buyers, &c.sellers);
        let constrained = |s: Strategy| s.0.constrained();
        let mut notes = Vec::new();
        if c.equilibrium().quantity == 0 {
            notes.push(
                "every valuation lies below every cost: no trade can gain, so efficiency is undefined".to_string(),
            );
        }
        if !quiet.is_empty() && constrained(c.buyer_strategy) && constrained(c.seller_strategy) {
            notes.push(format!(
                "{} cannot trade without a loss (valuations below every cost, or costs above every valuation), so \
                 will trade nothing",
                quiet.join(", ")
            ));
        }
        notes
    }
}
