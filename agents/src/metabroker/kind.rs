//! The meta-broker kind: `[metabrokers.<name>]` in a scenario, one meta-broker (Garg 2010, ch3–4 and ch7) scheduling
//! the queued requests on its providers at the end of every interval.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use super::agent::MetaBroker;
use super::dam::agent::AuctionMetaBroker;
use super::dam::{
    AgeUnit, AuctionPolicy, BidTest, DamParams, DeadlineTest, FairShareRule, Payment, Queues, SlotGeneration,
};
use super::tradeoff::etc::EtcModel;
use super::tradeoff::heuristics::{Heuristic, Profiles};
use super::tradeoff::{Delta, TradeoffMetaBroker, TradeoffParams};
use super::{GreedyRank, MetaPolicy, MgnSolver, SchedulingPolicy, Slots};
use crate::model::Service;
use crate::registry::limits::short;
use crate::registry::values::{Fraction, Interval, NonNegative, Positive, Seconds};
use crate::registry::{
    AgentKind, BuildCx, CheckCx, GroupSpec, Invalid, Member, Members, Metric, ParseError, Policy, RawGroup, Registry,
    Unit, serde_name, unknown_name,
};
use crate::sim::BoxedAgent;

/// The kind's name in the directory: providers find meta-brokers by it to register.
pub const KIND: &str = "metabroker";

/// The meta-broker kind.
pub struct MetaBrokerKind;

impl AgentKind for MetaBrokerKind {
    fn services(&self) -> &'static [Service] {
        &[Service::SchedulesOnProviders]
    }

    fn name(&self) -> &'static str {
        KIND
    }

    fn table(&self) -> &'static str {
        "metabrokers"
    }

    fn about(&self) -> &'static str {
        "a market-oriented meta-broker: batches users' requests and reserves slots for them every interval"
    }

    fn policies(&self, registry: &Registry) -> Vec<Policy> {
        let solvers = [MgnSolver::Transportation, MgnSolver::Microlp];
        let registered = [
            Policy::registered::<dyn MetaPolicy>("policy", &[], "registered, one application at a time", registry),
            Policy::registered::<dyn super::Policy<Slots>>("policy", &[], "registered, on slots", registry),
            Policy::registered::<dyn super::Policy<Profiles>>("policy", &[], "registered, on profiles", registry),
            Policy::registered::<dyn super::Policy<Queues>>("policy", &[], "registered, on queues", registry),
        ];
        let mut policies = vec![
            Policy::of("policy", &SchedulingPolicy::ALL, "Garg (2010) ch4"),
            Policy::of("policy", &AuctionPolicy::ALL, "Garg (2010) ch7, DAM and its baselines"),
            Policy::of("policy", &Heuristic::ALL, "Garg (2010) ch5, time/cost trade-off"),
            Policy::of("offers", &Offers::ALL, "what a registered policy chooses among"),
            Policy::of("slots", &[SlotGeneration::Immediate, SlotGeneration::Packaged], "queue-matching policies"),
            Policy::of("bid-test", &[BidTest::Always, BidTest::Literal], "DAM"),
            Policy::of("fair-share", &[FairShareRule::Proportional, FairShareRule::ValuationPerPe], "FairShare"),
            Policy::of("deadline-test", &[DeadlineTest::QueueWait, DeadlineTest::Slot], "DAM"),
            Policy::of("age-unit", &[AgeUnit::Seconds, AgeUnit::Cycles], "DAM's bids"),
            Policy::of("payment", &[Payment::Posted, Payment::KDoubleAuction], "queue-matching policies"),
            Policy::of("solver", &solvers, "of the MGN relaxation"),
            Policy::of("greedy", &[GreedyRank::Cost, GreedyRank::Price], "what greedy ranks sites by"),
        ];
        policies.extend(registered);
        policies
    }

    fn metrics(&self) -> &'static [Metric] {
        const METRICS: &[Metric] = &[
            Metric::new("rounds", Unit::Count, "scheduling rounds run"),
            Metric::new(
                "tickets",
                Unit::Count,
                "tickets issued: a job (or a part of a split job) placed on a provider",
            ),
            Metric::new("dropped", Unit::Count, "jobs dropped: no feasible placement before their deadline"),
            Metric::new("spending", Unit::Money, "what the tickets quoted, summed: the users' spending as planned"),
            Metric::new(
                "data_transfer",
                Unit::Money,
                "trade-off: the data-transfer costs users paid to the network carrier, part of spending",
            ),
            Metric::new("providers", Unit::Count, "providers in the catalogue at the end of the run"),
            Metric::new("users", Unit::Count, "users registered"),
            Metric::new("generations", Unit::Count, "genetic-algorithm generations run, summed over rounds"),
            Metric::substitution(
                "solver_fallbacks",
                "rounds where the configured LP solver failed and the transportation solver stood in",
            ),
            Metric::new(
                "generations_per_round",
                Unit::Count,
                "generations over the rounds that ran the genetic algorithm",
            ),
            Metric::new(
                "too_wide",
                Unit::Count,
                "queue matching and trade-off: applications refused as wider than every queue or site",
            ),
            Metric::new(
                "refused_windows",
                Unit::Count,
                "queue matching: matched windows a provider could not hold (the application waited for the next round)",
            ),
            Metric::new(
                "pending",
                Unit::Count,
                "queue matching and trade-off: applications still unplaced at the end of the run",
            ),
            Metric::new(
                "rolled_over",
                Unit::Count,
                "trade-off: times an application found no window (or its window was refused) and waited a round",
            ),
            Metric::new(
                "makespan",
                Unit::Seconds,
                "trade-off: the last planned finish of a ticketed application after the first arrival (Garg 2010 §5.4)",
            ),
            Metric::new(
                "makespan_shared",
                Unit::Seconds,
                "trade-off: the makespan of the applications more than one provider could run (without those only the \
                 widest fits, which queue there one after another whatever the heuristic)",
            ),
            Metric::new("mean_response", Unit::Seconds, "trade-off: mean of planned finish minus arrival per ticket"),
            Metric::new(
                "cost_bound",
                Unit::Money,
                "trade-off: lower bound of the overall cost, each application alone on its best site (Garg 2010 Eq 5.2)",
            ),
            Metric::new(
                "makespan_bound",
                Unit::Seconds,
                "trade-off: lower bound of the makespan (Garg 2010 Eq 5.3, read as the larger of the latest lone finish \
                 and the work over all CPUs)",
            ),
            Metric::new("cost_bound_gap", Unit::Relative, "trade-off: spending over its lower bound, minus 1"),
            Metric::new("makespan_bound_gap", Unit::Relative, "trade-off: makespan over its lower bound, minus 1"),
        ];
        METRICS
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<RawMetaBroker>()
    }

    fn parse(&self, group: toml::Value) -> Result<Box<dyn RawGroup>, ParseError> {
        Ok(Box::new(crate::registry::parse::<RawMetaBroker>(group)?))
    }

    /// The trade-off policies book their users' data-transfer costs, which users pay to the network carrier.
    fn clears(&self) -> bool {
        true
    }
}

/// A meta-broker (Garg 2010, ch3–4): schedules the queued requests at the end of every interval.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawMetaBroker {
    /// Scheduling policy: "greedy" (default), "mmc", "ga", "lpga", "hga" (each job whole on one site), or "lp" (the
    /// MGN relaxation: a job's tasks may be split over several sites, one ticket per part); matching applications to
    /// providers' queues (Garg 2010 ch7), "dam" (the double-auction-inspired mechanism) or its baselines "sjf",
    /// "fcfs", "edf-fq", "hvfq" and "fair-share"; trading time against cost on the providers' slots (Garg 2010 ch5),
    /// "min-ctt", "max-ctt", "suff-ctt" or "greedy-ctt"; or the name of a policy added to the registry, which places
    /// one job at a time, or the whole round, on the offers `offers` names (see docs/writing-a-policy.md).
    #[serde(default = "greedy")]
    pub policy: String,
    /// The providers' offers a registered policy chooses among: "slots" (as chapters 3–4's policies see them: each
    /// site's widest free slot now, a job taking its runtime over the site's speed; default) or "profiles" (as
    /// chapter 5's: each site's free profile over `horizon`, a job taking its ETC there, drawn by `etc`, the costs
    /// with `data-transfer`; the ch5 keys apply) or "queues" (as chapter 7's: each provider's queues, a slot in
    /// each as `slots` cuts them, at the price `payment` sets; the ch7 keys apply). A policy of the thesis, or one
    /// registered for one family, reads its own; naming another is refused.
    #[schemars(with = "Option<String>")]
    pub offers: Option<Offers>,
    /// Scheduling interval SI \[s\] (default 50; from 0.001 s, so that rounds advance the clock).
    pub interval: Option<Interval>,
    /// Solver of the MGN relaxation (policies lp, mmc, lpga): "transportation" (exact network simplex; default) or
    /// "microlp".
    #[serde(default)]
    #[schemars(with = "String")]
    pub solver: MgnSolver,
    /// What the greedy policy (and HGA's seed) ranks sites by: "cost" (the application's cost there, price ×
    /// runtime / speed; default) or "price" (the price per CPU-second, as Garg 2010 §3.5 words it: "a resource
    /// provider with the lowest price"). They differ only between sites of different speeds.
    #[serde(default)]
    #[schemars(with = "String")]
    pub greedy: GreedyRank,
    /// The provider groups (or members) it schedules on; `["*"]` means every provider.
    pub providers: Vec<String>,
    /// Queue-matching policies (dam and its baselines): "immediate" slots (the PEs free now, for the application's runtime; default) or "packaged"
    /// ones (each queue's free slots over `horizon`), Garg 2010 §7.3.2.
    #[schemars(with = "Option<String>")]
    pub slots: Option<SlotGeneration>,
    /// Packaged slots: how far ahead queues offer them \[s\] (default 86,400); trade-off policies: how far ahead
    /// providers report their free slots (default 1e8).
    pub horizon: Option<Seconds>,
    /// Trade-off policies: the trade-off factor δ, the weight of cost against time in φ (Garg 2010 Eq 5.1): a number
    /// in [0, 1] for every application (default 0.5), or "per-user", drawn U[0, 1] for each application (§5.4's
    /// Case 2; the thesis gives no distribution).
    #[schemars(with = "Option<serde_json::Value>")]
    pub delta: Option<Delta>,
    /// Trade-off policies: how an application's time to compute (ETC) varies across sites, around its runtime over
    /// the site's speed: `{ variation = "high", cov = 0.9 }` (the CVB gamma method; default), `{ variation = "low",
    /// sd = 20 }` (uniform with this standard deviation \[s\]) or `{ variation = "exact" }`; `cov` and `sd` default to
    /// those values.
    #[schemars(with = "Option<serde_json::Value>")]
    pub etc: Option<EtcModel>,
    /// Trade-off policies: a data-transfer cost (DTC, Garg 2010 §5.4, Fig 5.6), `{ share = 0.1 }`: an application's
    /// initial DTC is `share` times its average execution cost over the sites (the thesis's 1/10), divided every
    /// scheduling interval by each site's bandwidth factor, drawn U(0, 1]; it is added to the cost in φ and the user
    /// pays it to the network carrier. None by default.
    pub data_transfer: Option<DataTransfer>,
    /// DAM: O_k, the asks' proportionality constant of Eq 7.1 (default 1; at most 1e12).
    pub ask_scale: Option<Positive>,
    /// DAM: H_i, the bids' proportionality constant of Eq 7.2 (default 1; at most 1e12).
    pub bid_scale: Option<Positive>,
    /// DAM: "always" (bids meet asks in priority order whatever their values, as asks and bids live on different
    /// scales; default) or "literal" (a bid meets only an ask below it, Alg 7.1's `b_i > a_j`).
    #[schemars(with = "Option<String>")]
    pub bid_test: Option<BidTest>,
    /// Queue-matching policies: what a match pays, "posted" (the provider's price; default) or "k-double-auction" (the price
    /// plus `k` times what the user's valuation per PE-second exceeds it by; the thesis defines no payment).
    #[schemars(with = "Option<String>")]
    pub payment: Option<Payment>,
    /// The k-double-auction payment: k in [0, 1] (default 0.5).
    pub k: Option<Fraction>,
    /// FairShare: "proportional" (an application takes at most its valuation's share of the processors free in the
    /// round, as Garg (2010) §7.4 states; default) or "valuation-per-pe" (no cap, the largest valuation per processor
    /// first: the simulator's first reading). The other queue-matching policies ignore it, so it can be swept.
    #[schemars(with = "Option<String>")]
    pub fair_share: Option<FairShareRule>,
    /// DAM: the deadline test, "queue-wait" (Alg 7.1's line 11 as printed: now plus the queue's waiting time plus the
    /// run ends before the deadline; default) or "slot" (the slot found ends before it: the simulator's first
    /// reading). The baselines ignore it.
    #[schemars(with = "Option<String>")]
    pub deadline_test: Option<DeadlineTest>,
    /// DAM: the unit of the bids' age factor (Eq 7.2 states none), "seconds" (default) or "cycles" (the scheduling
    /// interval: the applications of one cycle are as old as each other). The baselines ignore it.
    #[schemars(with = "Option<String>")]
    pub age_unit: Option<AgeUnit>,
}

/// What a registered meta-broker policy chooses among (see `offers`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Offers {
    /// Each site's widest free slot now (Garg 2010 ch3–4).
    #[default]
    Slots,
    /// Each site's free profile over the horizon, with ETCs (Garg 2010 ch5).
    Profiles,
    /// Each provider's queues (Garg 2010 ch7).
    Queues,
}

impl Offers {
    /// Every kind of offer, in the order `gridmarket list` gives them.
    pub const ALL: [Offers; 3] = [Offers::Slots, Offers::Profiles, Offers::Queues];
}

/// A data-transfer cost of the trade-off policies (see `data-transfer`).
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct DataTransfer {
    /// The initial DTC as a share of an application's average execution cost (Garg 2010 §5.4: 0.1).
    pub share: NonNegative,
}

fn greedy() -> String {
    serde_name(&SchedulingPolicy::Greedy)
}

/// Largest O_k and H_i: asks and bids must stay finite.
const MAX_SCALE: f64 = 1e12;

impl RawMetaBroker {
    /// What `policy` names: one of the thesis's, or one of the registry's.
    fn scheduler(&self, cx: &CheckCx<'_>) -> Result<Scheduler, Invalid> {
        let name = self.policy.as_str();
        let batch = |policy: Arc<dyn super::Policy<Slots>>| {
            self.no_auction_keys()?;
            Ok(Scheduler::Batch { policy, solver: self.solver, greedy: self.greedy })
        };
        let tradeoff = |policy: Arc<dyn super::Policy<Profiles>>| {
            Ok(Scheduler::Tradeoff { policy, params: self.tradeoff_params()? })
        };
        if let Some(&policy) = SchedulingPolicy::ALL.iter().find(|p| serde_name(*p) == name) {
            self.offers_are(Offers::Slots)?;
            return batch(Arc::new(policy));
        }
        let auction = |policy: Arc<dyn super::Policy<Queues>>| {
            self.no_tradeoff_keys()?;
            Ok(Scheduler::Auction { policy, params: self.dam_params()? })
        };
        if let Some(&policy) = AuctionPolicy::ALL.iter().find(|p| serde_name(*p) == name) {
            self.offers_are(Offers::Queues)?;
            return auction(Arc::new(policy));
        }
        if let Some(&heuristic) = Heuristic::ALL.iter().find(|p| serde_name(*p) == name) {
            self.offers_are(Offers::Profiles)?;
            return tradeoff(Arc::new(heuristic));
        }
        let registry = cx.registry;
        let registered = match self.offers.unwrap_or_default() {
            Offers::Slots => registry.round_policy::<Slots>(name).map(batch),
            Offers::Profiles => registry.round_policy::<Profiles>(name).map(tradeoff),
            Offers::Queues => registry.round_policy::<Queues>(name).map(auction),
        };
        if let Some(scheduler) = registered {
            return scheduler;
        }
        // A policy of other families than the one `offers` names.
        let families = registry.round_policy_families(name);
        let offers: Vec<String> =
            families.iter().filter(|&&f| f != "data centres").map(|f| format!("\"{f}\"")).collect();
        if !offers.is_empty() {
            let message = format!("the registered policy \"{name}\" reads {}", offers.join(" or "));
            return Err(Invalid::at("offers", message).hint("set `offers` to what it reads"));
        } else if !families.is_empty() {
            let message = format!("the registered policy \"{name}\" maps on data centres");
            return Err(Invalid::at("policy", message).hint("name it in an `[energy-metabrokers]` group"));
        }
        let thesis = SchedulingPolicy::ALL.iter().map(serde_name).chain(AuctionPolicy::ALL.iter().map(serde_name));
        let thesis = thesis.chain(Heuristic::ALL.iter().map(serde_name));
        let mut registered: Vec<&str> = registry.policies::<dyn MetaPolicy>().map(|(name, ..)| name).collect();
        let slots = registry.policies::<dyn super::Policy<Slots>>().map(|(name, ..)| name);
        let profiles = registry.policies::<dyn super::Policy<Profiles>>().map(|(name, ..)| name);
        for family in
            slots.chain(profiles).chain(registry.policies::<dyn super::Policy<Queues>>().map(|(name, ..)| name))
        {
            if !registered.contains(&family) {
                registered.push(family);
            }
        }
        let known: Vec<String> = thesis.chain(registered.into_iter().map(String::from)).collect();
        Err(unknown_name("policy", name, known.iter().map(String::as_str)))
    }

    /// `offers` may name only what a policy of the thesis reads (`own`).
    fn offers_are(&self, own: Offers) -> Result<(), Invalid> {
        match self.offers {
            Some(offers) if offers != own => {
                let message = format!("the policy \"{}\" of the thesis reads \"{}\"", self.policy, serde_name(&own));
                Err(Invalid::at("offers", message).hint("remove the key; it chooses what a registered policy sees"))
            }
            _ => Ok(()),
        }
    }

    /// A key of the ch5 policies given to another would be silently ignored: refused.
    fn no_tradeoff_keys(&self) -> Result<(), Invalid> {
        let keys = [
            ("delta", self.delta.is_some()),
            ("etc", self.etc.is_some()),
            ("data-transfer", self.data_transfer.is_some()),
        ];
        match keys.iter().find(|k| k.1) {
            Some((key, _)) => Err(Invalid::at(
                *key,
                format!(
                    "a key of the time/cost trade-off policies (min-ctt, max-ctt, suff-ctt, greedy-ctt), but the \
                     policy is \"{}\"",
                    self.policy
                ),
            )
            .hint("set one of them as `policy`, or remove the key")),
            None => Ok(()),
        }
    }

    /// The ch5 settings, checked; the keys of the ch7 policies other than `horizon` are refused.
    fn tradeoff_params(&self) -> Result<TradeoffParams, Invalid> {
        let defaults = TradeoffParams::default();
        let keys = [
            ("slots", self.slots.is_some()),
            ("ask-scale", self.ask_scale.is_some()),
            ("bid-scale", self.bid_scale.is_some()),
            ("bid-test", self.bid_test.is_some()),
            ("payment", self.payment.is_some()),
            ("k", self.k.is_some()),
            ("fair-share", self.fair_share.is_some()),
            ("deadline-test", self.deadline_test.is_some()),
            ("age-unit", self.age_unit.is_some()),
        ];
        if let Some((key, _)) = keys.iter().find(|k| k.1) {
            let message = format!("a key of the queue-matching policies, but the policy is \"{}\"", self.policy);
            return Err(Invalid::at(*key, message).hint("remove the key"));
        }
        let delta = self.delta.unwrap_or(defaults.delta);
        if let Delta::Fixed(d) = delta
            && !(0.0..=1.0).contains(&d)
        {
            return Err(Invalid::at("delta", format!("expected a number in [0, 1] or \"per-user\", found {d}")));
        }
        let etc = self.etc.unwrap_or(defaults.etc);
        etc.check().map_err(|m| Invalid::at("etc", m))?;
        Ok(TradeoffParams {
            delta,
            etc,
            horizon: self.horizon.map_or(defaults.horizon, |h| h.0),
            data_transfer: self.data_transfer.map(|d| d.share.0),
        })
    }

    /// A key of the ch7 policies given to a ch3–4 one would be silently ignored: refused.
    fn no_auction_keys(&self) -> Result<(), Invalid> {
        self.no_tradeoff_keys()?;
        let keys = [
            ("slots", self.slots.is_some()),
            ("horizon", self.horizon.is_some()),
            ("ask-scale", self.ask_scale.is_some()),
            ("bid-scale", self.bid_scale.is_some()),
            ("bid-test", self.bid_test.is_some()),
            ("payment", self.payment.is_some()),
            ("k", self.k.is_some()),
            ("fair-share", self.fair_share.is_some()),
            ("deadline-test", self.deadline_test.is_some()),
            ("age-unit", self.age_unit.is_some()),
        ];
        match keys.iter().find(|k| k.1) {
            Some((key, _)) => Err(Invalid::at(
                *key,
                format!(
                    "a key of the policies that match applications to queues (dam, sjf, fcfs, edf-fq, hvfq, \
                     fair-share), but the policy is \"{}\"",
                    self.policy
                ),
            )
            .hint("set one of them as `policy`, or remove the key")),
            None => Ok(()),
        }
    }

    /// The ch7 settings, checked.
    fn dam_params(&self) -> Result<DamParams, Invalid> {
        let defaults = DamParams::default();
        let slots = self.slots.unwrap_or_default();
        if self.horizon.is_some() && slots != SlotGeneration::Packaged {
            return Err(Invalid::at("horizon", "a key of packaged slots").hint("add `slots = \"packaged\"`"));
        }
        let payment = self.payment.unwrap_or_default();
        if self.k.is_some() && payment != Payment::KDoubleAuction {
            return Err(
                Invalid::at("k", "a key of the k-double-auction payment").hint("add `payment = \"k-double-auction\"`")
            );
        }
        for (key, scale) in [("ask-scale", self.ask_scale), ("bid-scale", self.bid_scale)] {
            if let Some(s) = scale
                && s.0 > MAX_SCALE
            {
                return Err(Invalid::at(key, format!("expected at most {}, found {}", short(MAX_SCALE), short(s.0))));
            }
        }
        Ok(DamParams {
            slots,
            horizon: self.horizon.map_or(defaults.horizon, |h| h.0),
            ask_scale: self.ask_scale.map_or(defaults.ask_scale, |s| s.0),
            bid_scale: self.bid_scale.map_or(defaults.bid_scale, |s| s.0),
            bid_test: self.bid_test.unwrap_or_default(),
            payment,
            k: self.k.map_or(defaults.k, |k| k.0),
            fair_share: self.fair_share.unwrap_or_default(),
            deadline_test: self.deadline_test.unwrap_or_default(),
            age_unit: match self.age_unit.unwrap_or_default() {
                AgeUnit::Seconds => 1.0,
                AgeUnit::Cycles => self.interval.map_or(50.0, |i| i.0),
            },
        })
    }
}

impl RawGroup for RawMetaBroker {
    fn count(&self) -> usize {
        1
    }

    fn check(&self, cx: &CheckCx<'_>) -> Result<Box<dyn GroupSpec>, Invalid> {
        let providers = cx.resolve_all("providers", &self.providers, &[Service::SellsCompute])?;
        if providers.is_empty() {
            return Err(Invalid::at("providers", "expected at least one provider"));
        }
        let scheduler = self.scheduler(cx)?;
        let interval = self.interval.map_or(50.0, |i| i.0);
        Ok(Box::new(MetaBrokerSpec { providers, interval, scheduler }))
    }
}

/// What a meta-broker runs every interval.
#[derive(Clone, Debug)]
pub enum Scheduler {
    /// A ch3–4 policy (or a registered one) over the sites' slots.
    Batch {
        /// The policy.
        policy: Arc<dyn super::Policy<Slots>>,
        /// Solver of the MGN relaxation.
        solver: MgnSolver,
        /// What greedy ranks sites by.
        greedy: GreedyRank,
    },
    /// A ch7 policy (or a registered one) over the sites' queues.
    Auction {
        /// The policy.
        policy: Arc<dyn super::Policy<Queues>>,
        /// Its settings.
        params: DamParams,
    },
    /// A ch5 trade-off heuristic (or a registered policy) over the sites' free profiles.
    Tradeoff {
        /// The policy.
        policy: Arc<dyn super::Policy<Profiles>>,
        /// Its settings.
        params: TradeoffParams,
    },
}

/// A checked meta-broker.
#[derive(Clone, Debug)]
pub struct MetaBrokerSpec {
    /// The providers of its market.
    pub providers: Vec<Members>,
    /// Scheduling interval \[s\].
    pub interval: f64,
    /// What it runs every interval.
    pub scheduler: Scheduler,
}

impl GroupSpec for MetaBrokerSpec {
    fn periods(&self) -> Vec<(&'static str, f64)> {
        vec![("interval", self.interval)]
    }

    fn build(&self, _: &Member<'_>, cx: &mut BuildCx) -> Result<BoxedAgent, String> {
        let members = self.providers.iter().flat_map(Members::names).map(|p| cx.id(&p));
        let members = members.collect::<Result<Vec<_>, _>>()?;
        Ok(match self.scheduler.clone() {
            Scheduler::Batch { policy, solver, greedy } => {
                Box::new(MetaBroker::new(policy, self.interval, members).with_solver(solver).with_greedy_rank(greedy))
            }
            Scheduler::Auction { policy, params } => {
                Box::new(AuctionMetaBroker::new(policy, params, self.interval, members))
            }
            Scheduler::Tradeoff { policy, params } => {
                Box::new(TradeoffMetaBroker::new(policy, params, self.interval, members))
            }
        })
    }
}
