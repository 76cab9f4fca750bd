//! The user broker kind: `[brokers.<group>]` in a scenario, users sharing a workload, each submitting its jobs
//! directly, through a meta-broker, or to the cheapest provider it can claim (personalised).

use schemars::JsonSchema;
use serde::Deserialize;

use super::strategy::DEFAULT_K;
use super::{
    AuctionChoice, Choice, Claims, ExchangeStrategy, FirstClaim, OnRefusal, ProviderChoice, Submission, Trade,
    UserBroker,
};
use crate::exchange::mechanism::Side;
use crate::exchange::traders::{Ceiling, NamedTraderStrategy, Strategy, reading_a_ceiling};
use crate::model::Service;
use crate::registry::values::{Fraction, GroupSize, Interval, PositiveInt, Price};
use crate::registry::{
    AgentKind, BuildCx, CheckCx, Deal, GroupSpec, Invalid, Member, Members, ParseError, Policy, RawGroup, Registry,
};
use crate::sim::BoxedAgent;

/// The kind's name in the directory.
pub const KIND: &str = "broker";

/// The user broker kind.
pub struct BrokerKind;

impl AgentKind for BrokerKind {
    fn services(&self) -> &'static [Service] {
        &[Service::BuysCompute]
    }

    fn name(&self) -> &'static str {
        KIND
    }

    fn table(&self) -> &'static str {
        "brokers"
    }

    fn about(&self) -> &'static str {
        "user brokers replaying a workload's jobs and recording each job's life"
    }

    fn policies(&self, registry: &Registry) -> Vec<Policy> {
        let modes = ["submit-to", "metabroker", "personalised", "exchange"];
        vec![
            Policy::of("mode", &modes, "direct, meta-brokered, personalised (Garg 2010, ch3), or on an exchange"),
            Policy::of("trade", &[Trade::Lease, Trade::Bid], "on an exchange"),
            Policy::registered::<dyn NamedTraderStrategy>(
                "bidding",
                &[],
                "on an exchange; Gode and Sunder (1993), Cliff (1997)",
                registry,
            ),
            Policy::of("first-claim", &[FirstClaim::OnSubmit, FirstClaim::NextRound], "personalised"),
            Policy::of("on-refusal", &[OnRefusal::NextCheapest, OnRefusal::Cheapest], "personalised"),
            Policy::registered::<dyn ProviderChoice>("choose", &[], "personalised", registry),
        ]
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<RawBroker>()
    }

    fn parse(&self, group: toml::Value) -> Result<Box<dyn RawGroup>, ParseError> {
        Ok(Box::new(crate::registry::parse::<RawBroker>(group)?))
    }

    /// Users are billed after use; their wealth is not modelled (a job's budget bounds what it may cost).
    fn credit(&self) -> bool {
        true
    }
}

/// A group of user brokers sharing a workload.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawBroker {
    /// How many brokers (users; at most 100,000 agents per scenario); the workload's jobs are dealt among them (see
    /// `split`).
    #[serde(default = "GroupSize::one")]
    pub count: GroupSize,
    /// The workload (a key of `[workloads]`). Each group draws its own copy: two groups naming one synthetic
    /// workload get independent draws of it.
    pub workload: String,
    /// How the jobs are dealt: "round-robin" (job i to broker i mod count; default) or "by-user" (the trace's user
    /// id mod count).
    #[serde(default)]
    pub split: Deal,
    /// Where the jobs go: the name of a provider, gateway or utility group (with a count of 1), or of one of its
    /// members.
    pub submit_to: Option<String>,
    /// Meta-brokered mode (Garg 2010, ch3 and ch6): requests go to this meta-broker (or energy-aware meta-broker), jobs
    /// to the slots of its tickets.
    pub metabroker: Option<String>,
    /// Personalised mode (Garg 2010, ch3): each broker claims the cheapest feasible provider among these groups every
    /// round; `["*"]` means every provider.
    pub personalised: Option<Vec<String>>,
    /// Personalised mode: round length \[s\] (default 50, the thesis's scheduling interval; from 0.001 s, so that rounds
    /// advance the clock).
    pub round: Option<Interval>,
    /// Personalised mode: when a job first claims, "on-submit" (default; a refused one retries a round after the
    /// refusal) or "next-round" (at the end of the round it is submitted in, rounds ending at multiples of `round`
    /// like a meta-broker's intervals, and so do the retries).
    #[schemars(with = "Option<String>")]
    pub first_claim: Option<FirstClaim>,
    /// Personalised mode: where a refused job claims next, "next-cheapest" (the cheapest feasible provider that has
    /// not refused it yet; default) or "cheapest" (the cheapest feasible one again: Garg 2010 §3.6, "the same
    /// situation with reduced users").
    #[schemars(with = "Option<String>")]
    pub on_refusal: Option<OnRefusal>,
    /// Personalised mode: refusals after which a job is given up, dropped with the reason (default 1,000): a job no
    /// provider ever grants would otherwise claim every round for ever.
    pub max_refusals: Option<PositiveInt>,
    /// Personalised mode: how a provider is chosen by its posted price (brokers follow the prices providers announce):
    /// "cheapest-feasible" (the cheapest on which the job meets its deadline and budget; default), "cheapest" (the
    /// cheapest, feasible or not) or "random-cheapest" (one of the `cheapest-k` cheapest feasible, at random); or the
    /// name of a rule added to the registry (`Registry::with_provider_choice`).
    pub choose: Option<String>,
    /// Personalised mode, `choose = "random-cheapest"`: how many of the cheapest feasible providers the choice is
    /// among (default 3).
    pub cheapest_k: Option<PositiveInt>,
    /// Exchange mode (Garg 2010 ch 8): the exchange the brokers trade on, for a lease or in an auction.
    pub exchange: Option<String>,
    /// Exchange mode: "lease" (the cheapest affordable commodity slot; default) or "bid" (in an auction).
    #[serde(default)]
    pub trade: Trade,
    /// Exchange mode, bidding: which open auction, "earliest" (the first to clear; default) or "random".
    #[serde(default)]
    pub choice: AuctionChoice,
    /// Exchange mode: the value of a CPU-second to a user whose job has no budget [G$] (default 1); with a budget,
    /// the budget spread over the job's CPUs and lease.
    pub valuation: Option<Price>,
    /// Exchange mode: the bid as a fraction of the value (default 1, truthful; `bidding = "shaded"` when given).
    pub shade: Option<Fraction>,
    /// Exchange mode, bidding: how a bid is priced on the job's value of a CPU-second (see `docs/market.md`):
    /// "truthful" (the value; default), "shaded" (`shade` × the value), "zi-c" (uniform in [0, value]), "zi-u" (uniform
    /// in [0, `ceiling`]) or "zip" (an adaptive margin on the value, learnt from the call markets' clearing prices); or
    /// the name of a strategy added to the registry (`Registry::with_trader_strategy`).
    pub bidding: Option<String>,
    /// Exchange mode, `bidding = "zi-u"`: the highest bid drawn [G$ per CPU-second] (a registered strategy may take
    /// one: its limits' ceiling, else none).
    pub ceiling: Option<Price>,
    /// Exchange mode: leases or bids a job tries before it is dropped (default 3).
    pub attempts: Option<PositiveInt>,
    /// Exchange mode: how long a job waits before it tries again \[s\] (default 60).
    pub retry: Option<Interval>,
}

impl RawGroup for RawBroker {
    fn count(&self) -> usize {
        self.count.0 as usize
    }

    fn check(&self, cx: &CheckCx<'_>) -> Result<Box<dyn GroupSpec>, Invalid> {
        let target = self.target(cx)?;
        cx.workload("workload", &self.workload)?;
        Ok(Box::new(BrokerSpec { workload: self.workload.clone(), split: self.split, target }))
    }
}

impl RawBroker {
    fn target(&self, cx: &CheckCx<'_>) -> Result<Target, Invalid> {
        let claims = [
            ("first-claim", self.first_claim.is_some()),
            ("on-refusal", self.on_refusal.is_some()),
            ("choose", self.choose.is_some()),
            ("cheapest-k", self.cheapest_k.is_some()),
            ("max-refusals", self.max_refusals.is_some()),
        ];
        if self.personalised.is_none()
            && let Some((key, _)) = claims.iter().find(|k| k.1)
        {
            return Err(Invalid::at(*key, "a key of personalised brokers, but `personalised` is not given"));
        }
        if let Some(exchange) = &self.exchange {
            if self.submit_to.is_some() || self.personalised.is_some() || self.metabroker.is_some() {
                return Err(Invalid::at("", "give one of `submit-to`, `personalised`, `metabroker` or `exchange`"));
            }
            let names = cx.resolve("exchange", exchange, &[Service::ClearsAuctions])?;
            let bidding = match &self.bidding {
                Some(name) => Strategy::named("bidding", name, cx.registry)?,
                None if self.shade.is_some() => Strategy::SHADED,
                None => Strategy::TRUTHFUL,
            };
            if self.bidding.is_some() && self.trade != Trade::Bid {
                return Err(Invalid::at("bidding", "a key of brokers that bid").hint("add `trade = \"bid\"`"));
            }
            let ceiling = match (bidding.0.ceiling(Side::Bid), self.ceiling) {
                (Ceiling::Needed, Some(c)) => c.0,
                (Ceiling::Needed, None) => {
                    let m =
                        format!("{} bids are drawn up to a ceiling: expected a price, found none", bidding.0.name());
                    return Err(Invalid::at("ceiling", m));
                }
                (Ceiling::Optional, c) => c.map_or(f64::INFINITY, |c| c.0),
                (Ceiling::Refused, Some(_)) => {
                    let m = format!("a key of `bidding` {}", reading_a_ceiling(cx.registry, Side::Bid));
                    return Err(Invalid::at("ceiling", m));
                }
                (Ceiling::Refused, None) => f64::INFINITY,
            };
            let strategy = ExchangeStrategy {
                trade: self.trade,
                choice: self.choice,
                valuation: self.valuation.map_or(1.0, |v| v.0),
                shade: self.shade.map_or(1.0, |s| s.0),
                bidding,
                ceiling,
                attempts: self.attempts.map_or(3, |a| a.0),
                retry: self.retry.map_or(60.0, |r| r.0),
            };
            return Ok(Target::Exchange(names.names().next().unwrap_or_default(), strategy));
        }
        if let Some(mb) = &self.metabroker {
            if self.submit_to.is_some() || self.personalised.is_some() {
                return Err(Invalid::at("", "give one of `submit-to`, `personalised` or `metabroker`"));
            }
            let names = cx.resolve("metabroker", mb, &[Service::SchedulesOnProviders, Service::PlacesOnDataCentres])?;
            return Ok(Target::MetaBroker(names.names().next().unwrap_or_default()));
        }
        match (&self.submit_to, &self.personalised) {
            (Some(to), None) => {
                let members = cx.resolve("submit-to", to, &[Service::RunsJobs])?;
                let first = members.names().next().unwrap_or_default();
                if members.len() == 1 {
                    Ok(Target::Direct(first))
                } else {
                    Err(Invalid::at("submit-to", format!("`{to}` is a group of {}; name one member", members.len()))
                        .hint(format!("e.g. `{first}`")))
                }
            }
            (None, Some(list)) => {
                let providers = cx.resolve_all("personalised", list, &[Service::SellsCompute])?;
                if providers.is_empty() {
                    return Err(Invalid::at("personalised", "expected at least one provider"));
                }
                let claims = Claims {
                    first: self.first_claim.unwrap_or_default(),
                    refused: self.on_refusal.unwrap_or_default(),
                    max_refusals: self.max_refusals.map_or(crate::broker::MAX_REFUSALS, |m| m.0),
                };
                let choice = match &self.choose {
                    Some(name) => Choice::named("choose", name, cx.registry)?,
                    None => Choice::default(),
                };
                let choice = match (choice.rule.reads_cheapest_k(), self.cheapest_k) {
                    (true, k) => Choice { k: k.map_or(DEFAULT_K, |k| k.0), ..choice },
                    (false, Some(_)) => {
                        let readers: Vec<String> = (cx.registry.policies::<dyn ProviderChoice>())
                            .filter(|(.., c)| c.reads_cheapest_k())
                            .map(|(name, ..)| format!("`choose = \"{name}\"`"))
                            .collect();
                        return Err(Invalid::at("cheapest-k", format!("a key of {}", readers.join(" or ")))
                            .hint(format!("add {} or remove `cheapest-k`", readers.join(" or "))));
                    }
                    (false, None) => choice,
                };
                Ok(Target::Personalised { providers, round: self.round.map_or(50.0, |r| r.0), claims, choice })
            }
            (Some(_), Some(_)) => Err(Invalid::at("", "give either `submit-to` or `personalised`, not both")),
            (None, None) => {
                Err(Invalid::at("", "say where jobs go: `submit-to`, `personalised`, `metabroker` or `exchange`"))
            }
        }
    }
}

/// Where a broker's jobs go.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// To this provider or gateway.
    Direct(String),
    /// Through this meta-broker.
    MetaBroker(String),
    /// Cheapest feasible of these providers, claimed every `round` seconds.
    Personalised {
        /// The providers.
        providers: Vec<Members>,
        /// Round length \[s\].
        round: f64,
        /// When they claim, and where after a refusal.
        claims: Claims,
        /// How they choose a provider by price.
        choice: Choice,
    },
    /// On this exchange, with this strategy.
    Exchange(String, ExchangeStrategy),
}

/// A checked broker group.
#[derive(Clone, Debug, PartialEq)]
pub struct BrokerSpec {
    /// The workload its members replay.
    pub workload: String,
    /// How its jobs are dealt.
    pub split: Deal,
    /// Where the jobs go.
    pub target: Target,
}

impl GroupSpec for BrokerSpec {
    fn periods(&self) -> Vec<(&'static str, f64)> {
        match &self.target {
            Target::Personalised { round, .. } => vec![("round", *round)],
            _ => Vec::new(),
        }
    }

    fn workload(&self) -> Option<(&str, Deal)> {
        Some((&self.workload, self.split))
    }

    fn build(&self, member: &Member<'_>, cx: &mut BuildCx) -> Result<BoxedAgent, String> {
        let submission = match &self.target {
            Target::Direct(to) => Submission::Direct { to: cx.id(to)? },
            Target::MetaBroker(to) => Submission::MetaBroker { to: cx.id(to)? },
            Target::Personalised { providers, round, claims, choice } => Submission::Personalised {
                providers: providers
                    .iter()
                    .flat_map(Members::names)
                    .map(|p| cx.provider(&p))
                    .collect::<Result<_, _>>()?,
                round: *round,
                claims: *claims,
                choice: *choice,
            },
            Target::Exchange(to, strategy) => Submission::Exchange { to: cx.id(to)?, strategy: strategy.clone() },
        };
        let jobs = cx.jobs.remove(member.name).unwrap_or_default();
        Ok(Box::new(UserBroker::new(jobs, submission)))
    }
}
