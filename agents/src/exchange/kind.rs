//! The exchange kind: `[exchanges.<name>]` in a scenario, one market exchange (Mandi).

use schemars::JsonSchema;
use serde::Deserialize;

use super::agent::{Exchange, ExchangeConfig, Markets};
use super::mechanism::{MechanismKind, MechanismParams};
use crate::model::Service;
use crate::registry::values::{Delay, Interval, Seconds};
use crate::registry::{
    AgentKind, BuildCx, CheckCx, GroupSpec, Invalid, Member, Metric, ParseError, Policy, RawGroup, Registry, Unit,
};
use crate::sim::{BoxedAgent, SimTime};

/// The kind's name in the directory: traders find the exchange by it.
pub const KIND: &str = "exchange";

/// At most this many call markets open at once.
pub const MAX_MARKETS: u32 = 100_000;

/// The market exchange kind.
pub struct ExchangeKind;

impl AgentKind for ExchangeKind {
    fn services(&self) -> &'static [Service] {
        &[Service::ClearsAuctions]
    }

    fn name(&self) -> &'static str {
        KIND
    }

    fn table(&self) -> &'static str {
        "exchanges"
    }

    fn about(&self) -> &'static str {
        "a market exchange (Mandi): accounts, a catalogue of time slots, commodity leases and auctions side by side"
    }

    fn policies(&self, _: &Registry) -> Vec<Policy> {
        vec![Policy::of("mechanism", &MechanismKind::ALL, "of its auctions and call markets")]
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<RawExchange>()
    }

    fn parse(&self, group: toml::Value) -> Result<Box<dyn RawGroup>, ParseError> {
        Ok(Box::new(crate::registry::parse::<RawExchange>(group)?))
    }

    /// It settles contracts between buyers and sellers.
    fn clears(&self) -> bool {
        true
    }

    fn metrics(&self) -> &'static [Metric] {
        const METRICS: &[Metric] = &[
            Metric::new("registered", Unit::Count, "users registered"),
            Metric::new("refused_unauthenticated", Unit::Count, "requests refused for a missing or wrong access token"),
            Metric::new("refused", Unit::Count, "requests refused with a reason (a bad slot, lease or bid)"),
            Metric::new("advertised", Unit::Count, "slots advertised"),
            Metric::new("discoveries", Unit::Count, "discovery requests answered"),
            Metric::new("leases", Unit::Count, "commodity leases taken at a posted price"),
            Metric::new("auctions_held", Unit::Count, "auctions opened"),
            Metric::new("auctions_cleared", Unit::Count, "auctions cleared"),
            Metric::new("bids", Unit::Count, "bids accepted into an auction"),
            Metric::new("matched_cpus", Unit::Count, "CPUs matched by auctions"),
            Metric::new("lost", Unit::Count, "applications that lost an auction"),
            Metric::new("contracts", Unit::Count, "contracts made: reservations a provider held, paid for"),
            Metric::new("failed", Unit::Count, "transactions whose reservation every retry failed"),
            Metric::new("mean_price", Unit::Price, "mean over contracts of the unit price the buyer paid"),
            Metric::new(
                "kept",
                Unit::Money,
                "what the exchange kept of the buyers' payments (a reduced trade's surplus)",
            ),
        ];
        METRICS
    }
}

/// A market exchange (Mandi, Garg 2010 ch 8).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawExchange {
    /// The reservation monitor's period \[s\]: leases and auction matches are reserved with their providers at the
    /// next multiple of it (default 10).
    pub cycle: Option<Interval>,
    /// How often a reservation a provider refused is tried again, a cycle apart, before the transaction fails
    /// (default 3).
    pub retries: Option<u32>,
    /// Call markets the exchange holds itself: `{ mechanism = "k-double", count = 10, period = 600, lease = 3600 }`
    /// opens `count` markets at `from` (default 0) and every `period` until `until` (default: forever), each
    /// clearing `period` seconds after it opens and trading leases of `lease` seconds.
    pub markets: Option<RawMarkets>,
}

/// Call markets the exchange holds.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawMarkets {
    /// How they clear: "k-double" (default), "mcafee" or "posted-price".
    #[serde(default = "k_double")]
    #[schemars(with = "String")]
    pub mechanism: MechanismKind,
    /// The k-double auction's k in [0, 1] (default 0.5).
    pub k: Option<f64>,
    /// How many are open at once (default 1).
    pub count: Option<u32>,
    /// Each clears this long after it opens; the next ones open then \[s\].
    pub period: Interval,
    /// How long the leases they trade last \[s\].
    pub lease: Seconds,
    /// When the first ones open \[s\] (default 0).
    pub from: Option<Delay>,
    /// No more open after this time \[s\] (default: until the run ends).
    pub until: Option<Delay>,
}

fn k_double() -> MechanismKind {
    MechanismKind::KDouble
}

impl RawGroup for RawExchange {
    fn count(&self) -> usize {
        1
    }

    fn check(&self, cx: &CheckCx<'_>) -> Result<Box<dyn GroupSpec>, Invalid> {
        let markets = match &self.markets {
            None => None,
            Some(m) => {
                if matches!(m.mechanism, MechanismKind::FirstPrice | MechanismKind::Vickrey) {
                    let message = format!("a call market clears two sides: \"{}\" is one-sided", m.mechanism.name());
                    return Err(Invalid::at("markets.mechanism", message)
                        .hint("use \"k-double\", \"mcafee\" or \"posted-price\""));
                }
                let params = MechanismParams { form: None, k: m.k };
                m.mechanism.build(params).map_err(|e| Invalid::at("markets.k", e.to_string()))?;
                let count = m.count.unwrap_or(1);
                if count == 0 || count > MAX_MARKETS {
                    let message = format!("expected 1 to {MAX_MARKETS} markets at once, found {count}");
                    return Err(Invalid::at("markets.count", message));
                }
                // Checked as delays: finite and non-negative, so valid times.
                let time = |s: Option<Delay>, default| s.and_then(|s| SimTime::new(s.0).ok()).unwrap_or(default);
                let (from, until) = (time(m.from, SimTime::ZERO), time(m.until, SimTime::MAX));
                let (period, lease) = (m.period.0, m.lease.0);
                Some(Markets { mechanism: m.mechanism, params, count, period, lease, from, until })
            }
        };
        let config =
            ExchangeConfig { cycle: self.cycle.map_or(10.0, |c| c.0), retries: self.retries.unwrap_or(3), markets };
        let missing = |service: Service, who: &str| {
            let kinds = cx.kinds_offering(&[service]);
            (!cx.groups.iter().any(|g| kinds.contains(&g.kind))).then(|| {
                let kinds: Vec<String> = kinds.iter().map(|k| format!("{k}s")).collect();
                format!("the scenario has no {}: nothing will be {who} on this exchange", kinds.join(" or "))
            })
        };
        let notes = [missing(Service::SellsCompute, "offered"), missing(Service::BuysCompute, "asked for")];
        let notes = notes.into_iter().flatten().collect();
        Ok(Box::new(ExchangeSpec { config, notes }))
    }
}

/// A checked exchange.
#[derive(Clone, Debug)]
pub struct ExchangeSpec {
    config: ExchangeConfig,
    notes: Vec<String>,
}

impl GroupSpec for ExchangeSpec {
    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }

    fn periods(&self) -> Vec<(&'static str, f64)> {
        let markets = self.config.markets.as_ref().map(|m| ("markets.period", m.period));
        [("cycle", self.config.cycle)].into_iter().chain(markets).collect()
    }

    fn perpetual(&self) -> Option<String> {
        let m = self.config.markets.as_ref().filter(|m| m.until == SimTime::MAX)?;
        Some(format!("opens call markets every {} s without an `until`", m.period))
    }

    fn build(&self, _: &Member<'_>, _: &mut BuildCx) -> Result<BoxedAgent, String> {
        Ok(Box::new(Exchange::new(self.config.clone())))
    }
}
