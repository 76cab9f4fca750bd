//! The provider kind: `[providers.<group>]` in a scenario, a group of identical clusters (or clusters whose PEs,
//! price and speed are drawn per member and replication, as Garg (2010) ch3's heterogeneous sites).

use std::collections::BTreeMap;
use std::sync::LazyLock;

use rand::RngExt;
use schemars::JsonSchema;
use serde::Deserialize;

use super::admission::model::{Algorithm4, VarianceForm};
use super::admission::{AdmissionConfig, AdmissionPolicy};
use super::energy::RawEnergy;
use super::overhead::OverheadModel;
use super::pemp::EnergyPolicy;
use super::preemption::PreemptionPolicy;
use super::pricing::{NamedPriceRule, PricingConfig, RawPricing, Revision};
use super::scheduler::order::ARRIVAL;
use super::scheduler::{Partitioning, QueueOrder, SchedulerPolicy};
use super::{
    CancelledLeases, EnergyConfig, ExchangeTrading, MoldedDeadline, Provider, ProviderConfig, ProviderInfo, Sell,
    SlaRule,
};
use super::{energy, external, preempting, pricing};
use crate::exchange::mechanism::{MechanismKind, Side};
use crate::exchange::traders::{Ceiling, NamedTraderStrategy, Strategy, reading_a_ceiling};
use crate::metabroker::tradeoff::prices::WeibullPrice;
use crate::model::Service;
use crate::registry::limits::{MAX_PRICE, MAX_VM_MEMORY, SPEEDS, short};
use crate::registry::values::{Fraction, GroupSize, Interval, Positive, PositiveInt, Price, Seconds, Speed};
use crate::registry::{
    AgentKind, BuildCx, CheckCx, GroupSpec, Invalid, Member, Metric, ParseError, Policy, RawGroup, Registry,
    SummaryRows, Unit, serde_name, unknown_name,
};
use crate::sim::{BoxedAgent, rng};

/// The kind's name in the directory: peers find providers by it.
pub const KIND: &str = "provider";

/// The resource provider kind.
pub struct ProviderKind;

/// The core's metrics: how busy the cluster was.
const CORE_USAGE: &[Metric] = &[
    Metric::new(
        "utilisation",
        Unit::Share,
        "PE-seconds computing over PE-seconds available from t = 0 to the end of the run (preemption overhead \
             and the runs of cancelled leases are busy but not computing)",
    ),
    Metric::new("busy_pe_seconds", Unit::PeSeconds, "PE-seconds busy, computing or not"),
];

/// The core's metrics: what became of the jobs submitted, and the cluster's size.
const CORE_COUNTS: &[Metric] = &[
    Metric::new("accepted", Unit::Count, "jobs admitted when submitted"),
    Metric::new("rejected", Unit::Count, "jobs refused when submitted"),
    Metric::new("completed", Unit::Count, "jobs that ran to completion"),
    Metric::new("pes", Unit::Count, "processing elements (PEs) of the cluster"),
];

impl AgentKind for ProviderKind {
    fn services(&self) -> &'static [Service] {
        &[Service::SellsCompute, Service::RunsJobs]
    }

    fn summary_rows(&self) -> SummaryRows {
        SummaryRows {
            metrics: &[("utilisation", "utilisation"), ("received", "received [G$]")],
            members: 8,
            only_if_all: true,
        }
    }

    fn name(&self) -> &'static str {
        KIND
    }

    fn table(&self) -> &'static str {
        "providers"
    }

    fn about(&self) -> &'static str {
        "a cluster of PEs with a local scheduler, a price, and preemption of external leases"
    }

    fn policies(&self, registry: &Registry) -> Vec<Policy> {
        use PreemptionPolicy::*;
        use SchedulerPolicy::*;
        vec![
            Policy::of("scheduler", &[Fcfs, Easy, Conservative, MultiPartitionEasy], "local scheduling"),
            Policy::of(
                "preemption",
                &[Nop, Mov, Mlip, Moml, GreedyMov, GreedyMlip, TypeAware],
                "Amini Salehi (2012) ch3-4",
            ),
            Policy::of(
                "energy.policy",
                &[EnergyPolicy::Pemp, EnergyPolicy::Gesp, EnergyPolicy::Sesp],
                "Amini Salehi (2012) ch6",
            ),
            Policy::of("sla", &[SlaRule::Capacity, SlaRule::First], "claims of personalised brokers, Garg 2010 ch3"),
            Policy::registered::<dyn NamedPriceRule>(
                "pricing.rule",
                &[],
                "how the posted price moves; see docs/market.md",
                registry,
            ),
            Policy::of(
                "admission.policy",
                &[AdmissionPolicy::Cacp, AdmissionPolicy::Aacp, AdmissionPolicy::Racp, AdmissionPolicy::Pacp],
                "admission control of external requests; Amini Salehi, Javadi & Buyya",
            ),
            Policy::registered::<dyn NamedTraderStrategy>(
                "asking",
                &[],
                "asks in an exchange's call markets; Gode and Sunder (1993), Cliff (1997)",
                registry,
            ),
            Policy::registered::<dyn QueueOrder>("queue-order", &[ARRIVAL], "of the FCFS and EASY queues", registry),
        ]
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<RawProvider>()
    }

    fn parse(&self, group: toml::Value) -> Result<Box<dyn RawGroup>, ParseError> {
        Ok(Box::new(crate::registry::parse::<RawProvider>(group)?))
    }

    fn metrics(&self) -> &'static [Metric] {
        static METRICS: LazyLock<Vec<Metric>> = LazyLock::new(|| {
            let capabilities = [preempting::METRICS, CORE_COUNTS, external::METRICS, pricing::METRICS, energy::METRICS];
            CORE_USAGE.iter().chain(capabilities.into_iter().flatten()).cloned().collect()
        });
        &METRICS
    }

    fn summed_metrics(&self) -> &'static [&'static str] {
        &[
            "preempted_leases",
            "preempted_vms",
            "preemption_overhead",
            "preempted_migratable",
            "migrated_out",
            "deadline_missed",
            "busy_pe_seconds",
            "overhead_pe_seconds",
            "lost_pe_seconds",
            "external_requests",
            "external_refused",
            "external_completed",
            "external_met",
        ]
    }

    fn derived_metrics(&self) -> &'static [Metric] {
        const DERIVED: &[Metric] = &[
            Metric::new("migration_rate", Unit::Share, "migrated_out / preempted_migratable over all providers"),
            Metric::new(
                "migrated_share",
                Unit::Share,
                "migrated_out / migratable leases submitted (leases.migratable.total): Amini Salehi (2012) ch4's migration rate",
            ),
            Metric::new(
                "useful_work",
                Unit::Share,
                "1 − overhead / computation over all providers (Amini Salehi 2012, Eqs 4.21-4.22): the preempted leases' time overhead h(L), summed (preemption_overhead, seconds), over the busy PE-seconds that computed (busy − overhead_pe_seconds − lost)",
            ),
        ];
        DERIVED
    }

    /// Amini Salehi (2012) ch4: the share of preempted migratable leases that moved to another provider, the share of
    /// all migratable leases that did (the chapter's migration rate), and Eq 4.21's useful-work utilisation.
    ///
    /// Eq 4.21 divides each cluster's "time overhead due to VM preemptions" by Eq 4.22's computation time in
    /// VM-seconds. The overhead is read as Σ h(L) over the preempted leases: the chapter quotes it per VM ("161.0 and
    /// 126.1 seconds" to suspend and resume, "447.3 seconds" to migrate one, §4.4.2), and chapter 3's h(L) runs a
    /// lease's VMs one after another, so h(L) is the VM-seconds its VMs spend preempted, Eq 4.22's unit. The
    /// PE-seconds the schedule holds for it (`overhead_pe_seconds`, v·h(L): every VM of the lease waits while the others
    /// are suspended) count each VM's operations v times, so a few preemptions of large leases outweighed all the work
    /// and the ratio fell below 0.
    fn derive_metrics(&self, metrics: &mut BTreeMap<String, f64>) {
        let migratable = metrics.get("preempted_migratable").copied().unwrap_or(0.0);
        if migratable > 0.0 {
            let migrated = metrics.get("migrated_out").copied().unwrap_or(0.0);
            metrics.insert("migration_rate".into(), migrated / migratable);
        }
        let get = |k: &str| metrics.get(k).copied().unwrap_or(0.0);
        let (submitted, migrated) = (get("leases.migratable.total"), get("migrated_out"));
        let computation = get("busy_pe_seconds") - get("overhead_pe_seconds") - get("lost_pe_seconds");
        let overhead = get("preemption_overhead");
        if submitted > 0.0 {
            metrics.insert("migrated_share".into(), migrated / submitted);
        }
        if computation > 0.0 {
            metrics.insert("useful_work".into(), 1.0 - overhead / computation);
        }
    }
}

/// A group of identical resource providers (a cluster each).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawProvider {
    /// How many providers (at most 100,000 agents per scenario); with more than one they are named `<group>-0`,
    /// `<group>-1`, ...
    #[serde(default = "GroupSize::one")]
    pub count: GroupSize,
    /// Processing elements (CPUs) per provider.
    pub pes: PositiveInt,
    /// With `pes`, each member's PEs are drawn uniformly from [pes, pes-max] at every replication (Garg 2010, ch3:
    /// sites of 4–12 CPUs).
    pub pes_max: Option<PositiveInt>,
    /// Each member's price is drawn from a normal with mean `price` and standard deviation (high − low) / 4, redrawn
    /// until it lies in [low, high] (Garg 2010, ch3: "Gaussian between 4 and 5 G$, mean 4.5"; the deviation is our
    /// choice); within [0, 1e6].
    pub price_range: Option<[f64; 2]>,
    /// Each member's speed is drawn uniformly from [low, high] at every replication (Garg 2010: heterogeneous MIPS
    /// ratings it does not list; U[1000, 1330] MIPS against a 1,000-MIPS reference, our assumption, is [1.0, 1.33]);
    /// within [0.001, 1000].
    pub speed_range: Option<[f64; 2]>,
    /// Speed of a PE relative to the reference PE that job runtimes are given for (default 1; from 0.001 to 1000).
    pub speed: Option<Speed>,
    /// The price drawn per replication from one Weibull sample shared by `of` sites, this one at `rank` by speed
    /// (Garg 2010 §5.4): `{ shape = 0.4, scale = 0.8, rank = 0, of = 10, consistent = true }`; consistent: the
    /// slowest the cheapest; false: assigned at random. Instead of `price` and `price-range`; one provider per group.
    pub price_weibull: Option<WeibullPrice>,
    /// Price [G$ per PE-second] (default 0; at most 1e6).
    pub price: Option<Price>,
    /// Local scheduler: "fcfs", "easy", "conservative" or "multi-partition-easy" (default "easy").
    #[serde(default = "easy")]
    #[schemars(with = "String")]
    pub scheduler: SchedulerPolicy,
    /// The order in which the "fcfs", "easy" and "multi-partition-easy" schedulers consider waiting jobs: "arrival"
    /// (default), "shortest-job-first" (the shortest estimate first, Chiang, Arpaci-Dusseau & Vernon 2002), or the
    /// name of an order added to the registry (see docs/writing-a-policy.md). Priority classes still come first.
    pub queue_order: Option<String>,
    /// How a local request that does not fit is resolved (Amini Salehi 2012, ch3): "nop" (reject it; default), "mov",
    /// "mlip", "moml", "greedy-mov" or "greedy-mlip".
    #[serde(default = "nop")]
    #[schemars(with = "String")]
    pub preemption: PreemptionPolicy,
    /// Preemption overhead model: `{ model = "thesis" }` (Amini Salehi 2012, Eq 3.2–3.7 with its parameters; default;
    /// each parameter can be given: `suspend_rate`, `resume_rate`, `copy_time`, `pause_time`, `reschedule_time`,
    /// and `exclusion = "global"` (one VM at a time, the thesis's worst case; the default) or `"local"` (one at a
    /// time per node, Haizea's default: a lease's VMs suspend and resume in parallel)) or `{ model = "shared-storage",
    /// throughput = 40.0 }` (the prototype of ch7).
    #[schemars(with = "Option<serde_json::Value>")]
    pub overhead: Option<OverheadModel>,
    /// Memory of one VM \[MB\] (default 1024; at most 1e9).
    pub vm_memory: Option<Positive>,
    /// Preemptive-resume priority between job classes (`priority-fraction` of a workload): a job that cannot start
    /// suspends running jobs of lower classes, which resume later with their remaining work (default false).
    #[serde(default)]
    pub preemptive_priority: bool,
    /// A preempted cancellable lease: "restart" in the queue (default) or "drop" (counted as rejected).
    #[serde(default)]
    #[schemars(with = "String")]
    pub cancelled: CancelledLeases,
    /// Multi-partition EASY: relative partition sizes (default [1, 2, 3], Garg (2010) ch7; at most 64 partitions).
    pub partitions: Option<Vec<PositiveInt>>,
    /// Multi-partition EASY: may a job use idle PEs of other partitions (default true).
    pub borrowing: Option<bool>,
    /// Which claims of personalised brokers it grants: "capacity" (every claim it can start at once; default) or
    /// "first" (only the first claim of an instant, the others fail even if PEs are left: Garg 2010 §3.6, "the
    /// resource owner would select only the first user and would send a fail SLA for all other users").
    #[serde(default)]
    #[schemars(with = "String")]
    pub sla: SlaRule,
    /// Sells its free slots on this exchange (Garg 2010 ch 8), besides serving whoever submits to it.
    pub exchange: Option<String>,
    /// On the exchange: "lease" (at its price; default), "market" (asks at its price in the exchange's call
    /// markets), "first-price" or "vickrey" (an auction it holds for each slot, its price the reserve).
    pub sell: Option<RawSell>,
    /// On the exchange: how often it advertises its free slots \[s\] (default 600).
    pub advertise_every: Option<Interval>,
    /// On the exchange: how far ahead the slots it advertises reach \[s\] (default 86,400).
    pub advertise_ahead: Option<Seconds>,
    /// On the exchange: the lease time of the auctions it holds \[s\] (default 3,600).
    pub auction_lease: Option<Seconds>,
    /// On the exchange, selling in its call markets: the most CPUs of one ask; a free slot is advertised in lots of
    /// that size, each a slot of the catalogue, asked in a market chosen at random (default: the slot whole).
    pub ask_cpus: Option<PositiveInt>,
    /// On the exchange, selling in its call markets: how an ask is priced on the provider's price (see
    /// `docs/market.md`): "truthful" (its price; default), "shaded" (its price plus a tenth of the way to
    /// `ask-ceiling`), "zi-c" (uniform in [price, ask-ceiling]), "zi-u" (uniform in [0, ask-ceiling]) or "zip" (an
    /// adaptive margin on its price, learnt from the markets' clearing prices); or the name of a strategy added to the
    /// registry (`Registry::with_trader_strategy`).
    pub asking: Option<String>,
    /// On the exchange, `asking` "shaded", "zi-c" or "zi-u": the highest ask [G$ per CPU-second] (a registered
    /// strategy may take one: its limits' ceiling, else none).
    pub ask_ceiling: Option<Price>,
    /// Admission control of external requests (Amini Salehi, Javadi & Buyya): `{ policy = "pacp" }`; see
    /// [`RawAdmission`].
    pub admission: Option<RawAdmission>,
    /// Moldable requests: each job's work (PEs × runtime) spreads over all the cluster's PEs, its deadline keeping its
    /// ratio to the runtime (default false).
    #[serde(default)]
    pub moldable: bool,
    /// With `moldable`: "scaled" (the deadline keeps its ratio to the molded runtime; default) or "submitted" (the
    /// deadline stays as the request was submitted).
    pub molded_deadline: Option<MoldedDeadline>,
    /// How the posted price moves (default fixed): `{ rule = "utilisation", gain = 0.5, target = 0.7 }`, "demand",
    /// "auction-cleared" or "time-of-day"; every change is announced to the user brokers. See `docs/market.md`.
    pub pricing: Option<RawPricing>,
    /// Node power states (all off at the start, switched on as needed) managed by an energy policy (Amini Salehi
    /// 2012, ch6): `{ policy = "pemp" }`, with `node-watts`, `boot-delay`, `shutdown-delay`, `waiting-factor`,
    /// `period`, `switch-off` and `break-even`.
    pub energy: Option<RawEnergy>,
}

/// Admission control of external requests, as written.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawAdmission {
    /// "cacp" (accept all), "aacp" (one external request at a time), "racp" (K = μ_e/λ) or "pacp" (Algorithm 4's K).
    #[schemars(with = "String")]
    pub policy: AdmissionPolicy,
    /// RACP or PACP: this K instead of the one estimated from the workload seen (at most 10,000).
    pub k: Option<PositiveInt>,
    /// RACP or PACP: seconds between two estimates of K (default 3,600); the first ones come sooner, after a 64th of
    /// it and then at doubling intervals, and every request is admitted before the first.
    pub period: Option<Interval>,
    /// PACP: rate_l, the share of low-urgency requests in the threshold D = (rate_l u_l + (1 − rate_l) u_h) ω
    /// (default 0.5: the source does not give it).
    pub low_urgency_share: Option<Fraction>,
    /// PACP: u_l, the mean deadline ratio of low urgency (default 4).
    pub low_ratio: Option<Positive>,
    /// PACP: u_h, the mean deadline ratio of high urgency (default 2).
    pub high_ratio: Option<Positive>,
    /// PACP: Algorithm 4 "intended" (the largest K whose expected response stays below D; default) or "literal" (the
    /// loop as printed, which returns two more).
    #[schemars(with = "Option<String>")]
    pub algorithm: Option<Algorithm4>,
    /// PACP: the rate in the variance of the completion time (Eq 5): "corrected" (the local service rate; default)
    /// or "printed" (the external one).
    #[schemars(with = "Option<String>")]
    pub variance: Option<VarianceForm>,
    /// PACP: the largest K its search tries, returned when the expected response never reaches D by then (default
    /// and at most 10,000).
    pub max_k: Option<PositiveInt>,
}

/// The largest K of the admission control: Algorithm 4's search is quadratic in it.
const MAX_ADMISSION_K: u32 = 10_000;

impl RawAdmission {
    fn check(&self) -> Result<AdmissionConfig, Invalid> {
        let estimated = matches!(self.policy, AdmissionPolicy::Racp | AdmissionPolicy::Pacp);
        let pacp = self.policy == AdmissionPolicy::Pacp;
        let keys = [
            ("k", self.k.is_some(), estimated),
            ("period", self.period.is_some(), estimated),
            ("low-urgency-share", self.low_urgency_share.is_some(), pacp),
            ("low-ratio", self.low_ratio.is_some(), pacp),
            ("high-ratio", self.high_ratio.is_some(), pacp),
            ("algorithm", self.algorithm.is_some(), pacp),
            ("variance", self.variance.is_some(), pacp),
            ("max-k", self.max_k.is_some(), pacp),
        ];
        if let Some((key, ..)) = keys.iter().find(|(_, given, applies)| *given && !applies) {
            let policy = serde_name(&self.policy);
            let of = if ["k", "period"].contains(key) { "\"racp\" and \"pacp\"" } else { "\"pacp\"" };
            return Err(Invalid::at(format!("admission.{key}"), format!("a key of {of}, not of \"{policy}\"")));
        }
        for (key, k) in [("k", self.k), ("max-k", self.max_k)] {
            if let Some(k) = k
                && k.0 > MAX_ADMISSION_K
            {
                let m = format!("expected a positive integer up to {MAX_ADMISSION_K}, found {}", k.0);
                return Err(Invalid::at(format!("admission.{key}"), m));
            }
        }
        let d = AdmissionConfig::new(self.policy);
        Ok(AdmissionConfig {
            capacity: self.k.map(|k| k.0 as usize),
            period: self.period.map_or(d.period, |p| p.0),
            low_urgency_share: self.low_urgency_share.map_or(d.low_urgency_share, |f| f.0),
            low_ratio: self.low_ratio.map_or(d.low_ratio, |r| r.0),
            high_ratio: self.high_ratio.map_or(d.high_ratio, |r| r.0),
            algorithm: self.algorithm.unwrap_or(d.algorithm),
            variance: self.variance.unwrap_or(d.variance),
            max_k: self.max_k.map_or(d.max_k, |k| k.0 as usize),
            ..d
        })
    }
}

/// How a provider sells on an exchange, as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RawSell {
    /// At its posted price.
    Lease,
    /// Asks in the exchange's call markets.
    Market,
    /// A first-price sealed-bid auction per slot.
    FirstPrice,
    /// A Vickrey auction per slot.
    Vickrey,
}

/// Partitions of a multi-partition provider: each is an availability profile, kept by every member.
const MAX_PARTITIONS: usize = 64;

fn easy() -> SchedulerPolicy {
    SchedulerPolicy::Easy
}

fn nop() -> PreemptionPolicy {
    PreemptionPolicy::Nop
}

impl RawGroup for RawProvider {
    fn count(&self) -> usize {
        self.count.0 as usize
    }

    fn check(&self, cx: &CheckCx<'_>) -> Result<Box<dyn GroupSpec>, Invalid> {
        let multi = self.scheduler == SchedulerPolicy::MultiPartitionEasy;
        let option = [("partitions", self.partitions.is_some()), ("borrowing", self.borrowing.is_some())]
            .into_iter()
            .find_map(|(o, given)| given.then_some(o));
        if let Some(option) = option
            && !multi
        {
            let scheduler = serde_name(&self.scheduler);
            let message = format!(
                "an option of the \"multi-partition-easy\" scheduler only, but this provider's scheduler is \"{scheduler}\""
            );
            let hint = format!("set `scheduler = \"multi-partition-easy\"` or remove `{option}`");
            return Err(Invalid::at(option, message).hint(hint));
        }
        let mut partitioning = Partitioning::default();
        if let Some(ratios) = &self.partitions {
            if ratios.is_empty() || ratios.len() > MAX_PARTITIONS {
                let m = format!("expected 1 to {MAX_PARTITIONS} partitions, found {}", ratios.len());
                return Err(Invalid::at("partitions", m));
            }
            partitioning.ratios = ratios.iter().map(|r| r.0).collect();
        }
        if let Some(b) = self.borrowing {
            partitioning.borrowing = b;
        }
        let queue_order = self.queue_order(cx)?;
        let config = ProviderConfig {
            pes: self.pes.0,
            speed: self.speed.map_or(1.0, |s| s.0),
            price: self.price.map_or(0.0, |s| s.0),
            scheduler: self.scheduler,
            partitioning,
            preemption: self.preemption,
            overhead: self.overhead.unwrap_or_default(),
            vm_memory_mb: self.vm_memory.map_or(1024.0, |m| m.0),
            cancelled: self.cancelled,
            preemptive_priority: self.preemptive_priority,
        };
        if let Some(max) = self.pes_max
            && max.0 < self.pes.0
        {
            return Err(Invalid::at("pes-max", format!("expected at least `pes` ({}), found {}", self.pes.0, max.0)));
        }
        if let Some([lo, hi]) = self.price_range
            && !(0.0 <= lo && lo <= config.price && config.price <= hi && hi <= MAX_PRICE)
        {
            let message = format!(
                "expected [low, high] with 0 <= low <= price ({}) <= high <= {}, found [{}, {}]",
                config.price,
                short(MAX_PRICE),
                short(lo),
                short(hi)
            );
            return Err(Invalid::at("price-range", message));
        }
        if let Some([lo, hi]) = self.speed_range
            && !(SPEEDS.0 <= lo && lo <= hi && hi <= SPEEDS.1)
        {
            let (min, max) = (short(SPEEDS.0), short(SPEEDS.1));
            let message = format!(
                "expected [low, high] with {min} <= low <= high <= {max}, found [{}, {}]",
                short(lo),
                short(hi)
            );
            return Err(Invalid::at("speed-range", message));
        }
        if let Some(m) = self.vm_memory
            && m.0 > MAX_VM_MEMORY
        {
            let message = format!("expected a number of MB up to {}, found {}", short(MAX_VM_MEMORY), short(m.0));
            return Err(Invalid::at("vm-memory", message));
        }
        let check = config.overhead.check(config.vm_memory_mb);
        check.map_err(|(key, message)| Invalid::at(format!("overhead.{key}"), message))?;
        if let Some(w) = &self.price_weibull {
            w.check().map_err(|(key, m)| Invalid::at(format!("price-weibull.{key}"), m))?;
            let other = [("price", self.price.is_some()), ("price-range", self.price_range.is_some())];
            if let Some((key, _)) = other.iter().find(|k| k.1) {
                return Err(Invalid::at("price-weibull", format!("a drawn price, but `{key}` sets one too"))
                    .hint(format!("remove `{key}`")));
            }
            if self.count.0 > 1 {
                let m = format!("one site of a joint sample, but the group has {} providers", self.count.0);
                return Err(Invalid::at("price-weibull", m).hint("give each site its own table and rank"));
            }
        }
        let draws = Draws {
            price_weibull: self.price_weibull,
            pes_max: self.pes_max.map(|m| m.0),
            price_range: self.price_range.map(|[l, h]| (l, h)),
            speed_range: self.speed_range.map(|[l, h]| (l, h)),
        };
        let keys = [
            ("sell", self.sell.is_some()),
            ("advertise-every", self.advertise_every.is_some()),
            ("advertise-ahead", self.advertise_ahead.is_some()),
            ("auction-lease", self.auction_lease.is_some()),
            ("ask-cpus", self.ask_cpus.is_some()),
            ("asking", self.asking.is_some()),
            ("ask-ceiling", self.ask_ceiling.is_some()),
        ];
        let trading = match &self.exchange {
            None => match keys.iter().find(|k| k.1) {
                Some((key, _)) => return Err(Invalid::at(*key, "a key of a provider that sells on an `exchange`")),
                None => None,
            },
            Some(name) => {
                let exchange =
                    cx.resolve("exchange", name, &[Service::ClearsAuctions])?.names().next().unwrap_or_default();
                let market_keys = [("ask-cpus", self.ask_cpus.is_some()), ("asking", self.asking.is_some())];
                if let Some((key, _)) = market_keys.iter().find(|k| k.1)
                    && self.sell != Some(RawSell::Market)
                {
                    return Err(Invalid::at(*key, "a key of a provider that sells in call markets")
                        .hint("add `sell = \"market\"`"));
                }
                let asking = match &self.asking {
                    Some(name) => Some(Strategy::named("asking", name, cx.registry)?),
                    None => None,
                };
                let ceiling = match (asking.unwrap_or(Strategy::TRUTHFUL).0.ceiling(Side::Ask), self.ask_ceiling) {
                    (Ceiling::Optional, c) => c.map_or(f64::INFINITY, |c| c.0),
                    (Ceiling::Needed, Some(c)) => c.0,
                    (Ceiling::Needed, None) => {
                        let m = "these asks are drawn up to a ceiling: expected a price, found none";
                        return Err(Invalid::at("ask-ceiling", m));
                    }
                    (Ceiling::Refused, Some(_)) => {
                        let m = format!("a key of `asking` {}", reading_a_ceiling(cx.registry, Side::Ask));
                        return Err(Invalid::at("ask-ceiling", m));
                    }
                    (Ceiling::Refused, None) => 0.0,
                };
                let sell = match self.sell.unwrap_or(RawSell::Lease) {
                    RawSell::Lease => Sell::Lease,
                    RawSell::Market => Sell::Market(self.ask_cpus.map(|c| c.0)),
                    RawSell::FirstPrice => Sell::Auction(MechanismKind::FirstPrice),
                    RawSell::Vickrey => Sell::Auction(MechanismKind::Vickrey),
                };
                let interval = self.advertise_every.map_or(600.0, |s| s.0);
                let horizon = self.advertise_ahead.map_or(86_400.0, |s| s.0);
                let lease = self.auction_lease.map_or(3_600.0, |s| s.0);
                let asking = asking.map(|a| (a, ceiling));
                Some(Trading { exchange, sell, interval, horizon, lease, asking })
            }
        };
        let pricing = self.pricing(config.price, &trading, cx.registry)?;
        let energy = self.energy.as_ref().map(RawEnergy::check).transpose();
        let energy = energy.map_err(|(key, m)| Invalid::at(format!("energy.{key}"), m))?;
        let admission = self.admission.as_ref().map(RawAdmission::check).transpose()?;
        let moldable = match (self.moldable, self.molded_deadline) {
            (true, deadline) => Some(deadline.unwrap_or_default()),
            (false, None) => None,
            (false, Some(_)) => {
                return Err(Invalid::at("molded-deadline", "a key of moldable providers: set `moldable = true`"));
            }
        };
        let sla = self.sla;
        Ok(Box::new(ProviderSpec { config, draws, trading, sla, queue_order, pricing, admission, moldable, energy }))
    }
}

impl RawProvider {
    /// The queue order named by `queue-order`: `None` for arrival order.
    fn queue_order(&self, cx: &CheckCx<'_>) -> Result<Option<&'static dyn QueueOrder>, Invalid> {
        let Some(name) = self.queue_order.as_deref() else { return Ok(None) };
        let order = match cx.registry.policy::<dyn QueueOrder>(name) {
            Some(order) => Some(order),
            None if name == ARRIVAL => None,
            None => {
                let orders = cx.registry.policies::<dyn QueueOrder>().map(|(name, ..)| name);
                return Err(unknown_name("queue-order", name, std::iter::once(ARRIVAL).chain(orders)));
            }
        };
        if order.is_some() && self.scheduler == SchedulerPolicy::Conservative {
            let message = format!(
                "\"{name}\" applies to the \"fcfs\", \"easy\" and \"multi-partition-easy\" schedulers; conservative \
                 backfilling gives each job its reservation when it arrives, so it keeps arrival order"
            );
            return Err(Invalid::at("queue-order", message).hint("set `scheduler = \"easy\"` or remove `queue-order`"));
        }
        Ok(order)
    }

    /// The pricing strategy, checked for the configured price and every price the group may draw.
    fn pricing(&self, price: f64, trading: &Option<Trading>, registry: &Registry) -> Result<PricingConfig, Invalid> {
        let Some(raw) = &self.pricing else { return Ok(PricingConfig::default()) };
        let config = raw.check(price, registry)?;
        for [lo, hi] in self.price_range.iter() {
            raw.check(*lo, registry)?;
            raw.check(*hi, registry)?;
        }
        if config.rule.revision == Revision::OnClearing
            && !trading.as_ref().is_some_and(|t| matches!(t.sell, Sell::Market(_)))
        {
            return Err(Invalid::at(
                "pricing.rule",
                "posts the price the exchange's call markets clear at, but this provider asks in none",
            )
            .hint("add `exchange = \"...\"` and `sell = \"market\"`"));
        }
        Ok(config)
    }
}

/// How a provider group sells on an exchange, the exchange by name.
#[derive(Clone, Debug, PartialEq)]
pub struct Trading {
    /// The exchange.
    pub exchange: String,
    /// How its slots are sold.
    pub sell: Sell,
    /// Advertisement period \[s\].
    pub interval: f64,
    /// Advertisement look-ahead \[s\].
    pub horizon: f64,
    /// Lease time of the auctions it holds \[s\].
    pub lease: f64,
    /// How it prices its asks in call markets, and their ceiling (none: truthful).
    pub asking: Option<(Strategy, f64)>,
}

/// A checked provider group: the configuration, and what is drawn anew for each member and replication.
#[derive(Clone, Debug)]
pub struct ProviderSpec {
    /// The configuration (the mean of what is drawn).
    pub config: ProviderConfig,
    /// What is drawn.
    pub draws: Draws,
    /// How it sells on an exchange, if it does.
    pub trading: Option<Trading>,
    /// Which SLA claims of personalised brokers it grants.
    pub sla: SlaRule,
    /// The order of its FCFS or EASY queue, if not arrival.
    pub queue_order: Option<&'static dyn QueueOrder>,
    /// How its price moves.
    pub pricing: PricingConfig,
    /// Its admission control of external requests, if any.
    pub admission: Option<AdmissionConfig>,
    /// Whether requests are molded to the whole cluster, and their deadlines how.
    pub moldable: Option<MoldedDeadline>,
    /// Its node power states and energy policy, if any.
    pub energy: Option<EnergyConfig>,
}

/// Provider parameters drawn per member and replication (Garg 2010, ch3's heterogeneous sites).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Draws {
    /// PEs uniform in [config.pes, pes_max].
    pub pes_max: Option<u32>,
    /// Price: normal around config.price, sd (high − low) / 4, kept in [low, high].
    pub price_range: Option<(f64, f64)>,
    /// Price: this site's place in a joint Weibull sample.
    pub price_weibull: Option<WeibullPrice>,
    /// Speed uniform in [low, high].
    pub speed_range: Option<(f64, f64)>,
}

impl ProviderSpec {
    /// A member's configuration for the replication of `seed`, from its own random stream.
    pub fn draw(&self, seed: u64, name: &str) -> ProviderConfig {
        let mut config = self.config.clone();
        let mut rng = rng::stream(seed, &format!("provider:{name}"), 0);
        if let Some(max) = self.draws.pes_max {
            config.pes = rng.random_range(config.pes..=max);
        }
        if let Some((lo, hi)) = self.draws.price_range
            && let Ok(normal) = rand_distr::Normal::new(config.price, (hi - lo) / 4.0)
        {
            // The mean lies in [low, high] (checked when loading), so at least about half of the draws are kept.
            config.price =
                std::iter::repeat_with(|| rng.sample(normal)).find(|p| (lo..=hi).contains(p)).unwrap_or(config.price);
        }
        // Drawn last, so that adding it leaves the other draws as they were.
        if let Some((lo, hi)) = self.draws.speed_range {
            config.speed = rng.random_range(lo..=hi);
        }
        // From a stream of its own, shared by the sites of the sample.
        if let Some(w) = self.draws.price_weibull {
            config.price = w.draw(seed, MAX_PRICE);
        }
        config
    }
}

impl GroupSpec for ProviderSpec {
    fn periods(&self) -> Vec<(&'static str, f64)> {
        let mut out = Vec::new();
        if self.pricing.rule.revision == Revision::Interval {
            out.push(("pricing.interval", self.pricing.interval));
        }
        out.extend(self.trading.as_ref().map(|t| ("advertise-every", t.interval)));
        out.extend(self.admission.as_ref().map(|a| ("admission.period", a.period)));
        out.extend(self.energy.as_ref().map(|e| ("energy.period", e.period)));
        out
    }

    fn perpetual(&self) -> Option<String> {
        match (&self.trading, self.pricing.rule.revision) {
            (Some(t), _) => Some(format!("advertises on exchange `{}` every {} s", t.exchange, t.interval)),
            (None, Revision::Interval) => Some(format!("revises its price every {} s", self.pricing.interval)),
            (None, Revision::AtChanges) => {
                Some(format!("revises its price at every change its rule `{}` sets", self.pricing.rule.name))
            }
            (None, Revision::Never | Revision::OnClearing) => None,
        }
    }

    fn build(&self, member: &Member<'_>, cx: &mut BuildCx) -> Result<BoxedAgent, String> {
        let config = self.draw(cx.seed, member.name);
        let info = ProviderInfo { id: member.id, pes: config.pes, speed: config.speed, price: config.price };
        cx.providers.insert(member.name.to_string(), info);
        let mut provider = Provider::new(config).with_sla(self.sla).with_pricing(self.pricing.clone());
        if let Some(window) = cx.market_window {
            provider = provider.with_market_window(window);
        }
        if let Some(energy) = self.energy {
            provider = provider.with_energy(energy)?;
        }
        if let Some(admission) = self.admission {
            provider = provider.with_admission(admission);
        }
        if let Some(deadline) = self.moldable {
            provider = provider.moldable(deadline);
        }
        if let Some(order) = self.queue_order {
            provider = provider.with_queue_order(order).map_err(|e| e.to_string())?;
        }
        Ok(Box::new(match &self.trading {
            None => provider,
            Some(t) => {
                let provider = provider.selling_on(ExchangeTrading {
                    exchange: cx.id(&t.exchange)?,
                    sell: t.sell,
                    interval: t.interval,
                    horizon: t.horizon,
                    lease: t.lease,
                });
                match t.asking {
                    Some((strategy, ceiling)) => provider.asking(strategy, ceiling),
                    None => provider,
                }
            }
        }))
    }
}
