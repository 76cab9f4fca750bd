//! Agent kinds, each declared once beside its actor (`<actor>/kind.rs`): its scenario table, the raw schema of a
//! group, validation into a spec, how members are built, its policies and the metrics it sums over a run.
//!
//! The application iterates a [`Registry`] to read scenario files, print `gridmarket list` and `schema`, build
//! simulations and name metrics, so a new kind is its own folder plus one line in [`Registry::standard`].
//!
//! A registry also holds the policies that scenarios name but the kinds do not list themselves: providers' queue
//! orders ([`QueueOrder`], `queue-order = "<name>"`) and meta-brokers' one-application-at-a-time policies
//! ([`MetaPolicy`], `policy = "<name>"`). A new one is a type implementing the trait plus one line,
//! [`Registry::with_queue_order`] or [`Registry::with_meta_policy`], in [`Registry::standard`] or in a program of
//! its own.
//!
//! A group is one table under the kind's table (`[providers.fast]`): [`AgentKind::parse`] reads it as written,
//! [`RawGroup::check`] resolves its references to other groups into a [`GroupSpec`], and the spec builds each member
//! for every replication.

pub mod limits;
pub mod values;

use std::collections::BTreeMap;
use std::fmt;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::broker::UserJob;
use crate::metabroker::{MetaPolicy, SchedulingPolicy};
use crate::model::Service;
use crate::provider::ProviderInfo;
use crate::provider::scheduler::QueueOrder;
use crate::provider::scheduler::order::{ARRIVAL, ShortestJobFirst};
use crate::sim::{AgentId, BoxedAgent};

/// One kind of agent, as scenarios, the command line and the runner know it.
pub trait AgentKind: Send + Sync {
    /// The kind as the directory, latency rules and trace name it (`"provider"`).
    fn name(&self) -> &'static str;
    /// The scenario table holding its groups (`"providers"`); metrics of its members are named
    /// `<table>.<agent>.<metric>`.
    fn table(&self) -> &'static str;
    /// One line for `gridmarket list`.
    fn about(&self) -> &'static str;
    /// Its policy keys and their choices, for `gridmarket list`.
    fn policies(&self) -> Vec<Policy> {
        Vec::new()
    }
    /// The JSON schema of one group's table, for `gridmarket schema`.
    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema;
    /// Reads one group's table as written (unknown keys refused).
    fn parse(&self, group: toml::Value) -> Result<Box<dyn RawGroup>, ParseError>;
    /// The metrics each member reports (`<table>.<member>.<name>` in `summary.json`). A scenario's target naming a
    /// metric of a member that is not among them is refused as misspelt.
    fn metrics(&self) -> &'static [Metric] {
        &[]
    }
    /// Metrics its members report that the runner also sums over all of them into a run-wide metric.
    fn summed_metrics(&self) -> &'static [&'static str] {
        &[]
    }
    /// The run-wide metrics [`derive_metrics`](Self::derive_metrics) may add.
    fn derived_metrics(&self) -> &'static [Metric] {
        &[]
    }
    /// Adds run-wide metrics derived from the sums ([`summed_metrics`](Self::summed_metrics)).
    fn derive_metrics(&self, _metrics: &mut BTreeMap<String, f64>) {}
    /// Whether its members' accounts may go below zero (a user billed after use); others may never pay more than
    /// they received.
    fn credit(&self) -> bool {
        false
    }
    /// Whether its members may book transfers between two other accounts (a clearing house, such as an exchange
    /// settling an auction).
    fn clears(&self) -> bool {
        false
    }
    /// Whether its members sell compute at posted prices: their prices feed the run's `market.*` metrics and their
    /// receipts the providers' revenue.
    fn sells_compute(&self) -> bool {
        false
    }
    /// Whether its members bill in US dollars (Garg 2010 ch6's electricity prices) rather than G$: a study with one
    /// reports its money in dollars.
    fn bills_in_dollars(&self) -> bool {
        false
    }
    /// The rows of the report's summary table each of its members gets.
    fn summary_rows(&self) -> SummaryRows {
        SummaryRows { metrics: &[], members: 0, only_if_all: false }
    }
    /// The services its members offer their peers, who find them by these in the directory.
    fn services(&self) -> &'static [Service] {
        &[]
    }
}

/// The per-member rows of the report's summary table a kind asks for: `metrics` (name, label) for each of its first
/// `members` members, or, with `only_if_all`, for every member when there are at most `members` (none otherwise).
#[derive(Clone, Copy, Debug)]
pub struct SummaryRows {
    /// (metric name, label) pairs, in the order shown.
    pub metrics: &'static [(&'static str, &'static str)],
    /// How many members get rows.
    pub members: usize,
    /// Rows only when every member fits (a table of a few providers), not for the first few of many.
    pub only_if_all: bool,
}

impl fmt::Debug for dyn AgentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A metric as the glossary (`gridmarket schema --outputs`) documents it and the charts label it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Metric {
    /// Its name in `summary.json`, after the member's prefix.
    pub name: &'static str,
    /// What it measures in.
    pub unit: Unit,
    /// What it measures, in a sentence.
    pub about: &'static str,
    /// It counts what the agent did in place of what it was configured to do (a fallback): a run where it is not 0
    /// says so in its warnings.
    pub substitution: bool,
}

impl Metric {
    /// The metric `name` in `unit`.
    pub const fn new(name: &'static str, unit: Unit, about: &'static str) -> Metric {
        Metric { name, unit, about, substitution: false }
    }

    /// A count of the times the agent did something else than it was configured to do (a search that fell back to
    /// a heuristic, a model it could not use): never silent, a run where it is not 0 warns.
    pub const fn substitution(name: &'static str, about: &'static str) -> Metric {
        Metric { name, unit: Unit::Count, about, substitution: true }
    }
}

/// What a metric measures in, and so the values it can take: one place for the glossary, axis labels and the
/// clipping of confidence intervals on charts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A time or a duration \[s\].
    Seconds,
    /// Work: PEs × time [PE·s].
    PeSeconds,
    /// Money [G$].
    Money,
    /// A price per PE-second [G$/(PE·s)].
    Price,
    /// A share of a whole, from 0 to 1 (utilisation, a rejection rate).
    Share,
    /// A ratio of two times that is at least 1 (a slowdown).
    Slowdown,
    /// A number of things (jobs, messages, rounds), or a number per thing; never negative.
    Count,
    /// A ratio of two quantities that may exceed 1 (a wait over a runtime, a price swing over the price); never
    /// negative.
    Ratio,
    /// A percentage, never negative (Smith's α: a root-mean-square deviation from a price over that price).
    Percent,
    /// Energy \[kWh\].
    Energy,
    /// Power \[W\].
    Power,
    /// Carbon dioxide emitted \[kg\].
    Carbon,
    /// US dollars, which a profit may be below zero of \[USD\].
    Dollars,
    /// Work: CPUs × hours at the highest frequency [CPU·h].
    CpuHours,
    /// Carbon per unit of work [kg/(CPU·h)].
    CarbonPerWork,
    /// Energy per unit of work [kWh/(CPU·h)].
    EnergyPerWork,
    /// Dollars per unit of work, which may be below zero [USD/(CPU·h)].
    DollarsPerWork,
    /// A difference relative to a reference, (x − ref) / ref; any sign.
    Relative,
    /// A carbon emission rate [kg/kWh].
    CarbonRate,
    /// A price of energy [USD/kWh].
    EnergyPrice,
    /// A rate, things per second [1/s].
    PerSecond,
}

impl Unit {
    /// Its symbol, as the glossary writes it.
    pub fn symbol(self) -> &'static str {
        match self {
            Unit::Seconds => "s",
            Unit::PeSeconds => "PE·s",
            Unit::Money => "G$",
            Unit::Price => "G$/(PE·s)",
            Unit::Share => "share, 0–1",
            Unit::Slowdown => "ratio ≥ 1",
            Unit::Count => "count",
            Unit::Ratio => "ratio ≥ 0",
            Unit::Percent => "%",
            Unit::Energy => "kWh",
            Unit::Power => "W",
            Unit::Carbon => "kg",
            Unit::Dollars => "USD",
            Unit::CpuHours => "CPU·h",
            Unit::CarbonPerWork => "kg/(CPU·h)",
            Unit::EnergyPerWork => "kWh/(CPU·h)",
            Unit::DollarsPerWork => "USD/(CPU·h)",
            Unit::Relative => "relative difference",
            Unit::CarbonRate => "kg/kWh",
            Unit::EnergyPrice => "USD/kWh",
            Unit::PerSecond => "1/s",
        }
    }

    /// As an axis shows it after the name: `[s]`, `[G$]`, `(share, 0–1)`.
    pub fn axis(self) -> String {
        match self {
            Unit::Share | Unit::Slowdown | Unit::Count | Unit::Ratio | Unit::Relative => format!("({})", self.symbol()),
            _ => format!("[{}]", self.symbol()),
        }
    }

    /// The values it can take, `(min, max)`: what a confidence interval is clipped to when drawn.
    pub fn bounds(self) -> (f64, f64) {
        match self {
            Unit::Share => (0.0, 1.0),
            Unit::Slowdown => (1.0, f64::INFINITY),
            Unit::Dollars | Unit::DollarsPerWork | Unit::Relative => (f64::NEG_INFINITY, f64::INFINITY),
            _ => (0.0, f64::INFINITY),
        }
    }
}

/// A policy key of a kind and the values it takes.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    /// The key in the group's table.
    pub key: &'static str,
    /// Its values.
    pub values: Vec<String>,
    /// Where the policies come from, in a few words.
    pub source: &'static str,
    /// One line on each value that needs one (registered policies, which no source describes), by value.
    pub about: Vec<(String, String)>,
}

impl Policy {
    /// The policy `key` with the serde names of `values`.
    pub fn of<T: Serialize>(key: &'static str, values: &[T], source: &'static str) -> Policy {
        Policy { key, values: values.iter().map(serde_name).collect(), source, about: Vec::new() }
    }
}

/// How a unit variant is written in scenario files (its serde name).
pub fn serde_name<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()
}

/// One group as written in the scenario file.
pub trait RawGroup {
    /// How many agents the group stands for.
    fn count(&self) -> usize;
    /// Resolves the group's references (to other groups, to workloads) and checks its values.
    fn check(&self, cx: &CheckCx<'_>) -> Result<Box<dyn GroupSpec>, Invalid>;
}

/// A checked group: what builds its members, anew for every replication.
pub trait GroupSpec: fmt::Debug + Send + Sync {
    /// The workload whose jobs the members replay and how they are dealt among them (user brokers).
    fn workload(&self) -> Option<(&str, Deal)> {
        None
    }
    /// Builds one member.
    fn build(&self, member: &Member<'_>, cx: &mut BuildCx) -> Result<BoxedAgent, String>;
    /// Why its members keep acting for ever (a periodic advertisement, say), if they do: a scenario with such a group
    /// never drains and needs a `horizon`.
    fn perpetual(&self) -> Option<String> {
        None
    }
    /// The periods \[s\] of what each member does again and again while the run lasts (its rounds, price
    /// revisions, advertisements, epochs), each with its key under the group's table: the loader bounds the events
    /// they make over the `horizon` ([`limits::MAX_PERIODIC_EVENTS`]).
    fn periods(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
    /// What the user should know about the group as configured, though it runs (an exchange nobody can trade on):
    /// printed as warnings when the scenario loads.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
    /// The key and the agent a member passes on what it cannot serve (a broker's `forward`), if any: the loader
    /// refuses a cycle of these, round which a request would circulate for ever.
    fn forwards_to(&self) -> Option<(&'static str, String)> {
        None
    }
}

/// How a workload's jobs are dealt among the members of a group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Deal {
    /// Job i to member i mod count.
    #[default]
    RoundRobin,
    /// By the trace's user id mod count (job index when unknown).
    ByUser,
}

/// Why a group's table could not be read: the key path within the group and serde's message.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    /// Keys and array indices from the group's table to the faulty value.
    pub path: Vec<String>,
    /// What serde said.
    pub message: String,
}

/// Reads `value` as a `T`, naming the path of a faulty key.
pub fn parse<T: DeserializeOwned>(value: toml::Value) -> Result<T, ParseError> {
    use serde_path_to_error::Segment;
    serde_path_to_error::deserialize(value).map_err(|e| ParseError {
        path: e
            .path()
            .iter()
            .filter_map(|s| match s {
                Segment::Seq { index } => Some(index.to_string()),
                Segment::Map { key } => Some(key.clone()),
                Segment::Enum { variant } => Some(variant.clone()),
                Segment::Unknown => None,
            })
            .collect(),
        message: e.inner().message().to_string(),
    })
}

/// A checked value that is wrong: where in the group (a dotted key, empty for the group itself), why, and a hint.
#[derive(Clone, Debug, PartialEq)]
pub struct Invalid {
    /// Dotted key path within the group's table.
    pub key: String,
    /// What is wrong, with what was expected and what was found.
    pub message: String,
    /// A suggestion.
    pub hint: Option<String>,
}

impl Invalid {
    /// A problem at `key` (within the group).
    pub fn at(key: impl Into<String>, message: impl Into<String>) -> Invalid {
        Invalid { key: key.into(), message: message.into(), hint: None }
    }

    /// Adds a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Invalid {
        self.hint = Some(hint.into());
        self
    }
}

/// One group of a scenario: its kind, name and size. Members are named, not listed: a group of one is named after
/// the group, larger groups' members `<group>-0`, `<group>-1`... ([`member_name`]), so checking a scenario costs
/// nothing per agent.
#[derive(Clone, Debug)]
pub struct GroupMembers {
    /// The kind's name.
    pub kind: &'static str,
    /// The group's name.
    pub group: String,
    /// Its size.
    pub count: usize,
    /// Its place among its kind's groups as the scenario file lists them (groups are otherwise in name order).
    pub listed: usize,
}

impl GroupMembers {
    /// Every member, all of them.
    pub fn all(&self) -> Members {
        Members { group: self.group.clone(), count: self.count, only: None }
    }

    /// The index of the member called `name`, if it is one.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        member_index(&self.group, self.count, name)
    }
}

/// The index of the member called `name` in a group of `count`, if it is one ([`member_name`]'s inverse).
pub fn member_index(group: &str, count: usize, name: &str) -> Option<usize> {
    if count == 1 {
        return (name == group).then_some(0);
    }
    let i: usize = name.strip_prefix(group)?.strip_prefix('-')?.parse().ok()?;
    // `a-01` is not `a-1`.
    (i < count && member_name(group, count, i) == name).then_some(i)
}

/// The name of member `index` of a group of `count`: the group's name for a group of one, else `<group>-<index>`.
pub fn member_name(group: &str, count: usize, index: usize) -> String {
    if count == 1 { group.to_string() } else { format!("{group}-{index}") }
}

/// Agents a reference names: every member of a group, or one of them.
#[derive(Clone, Debug, PartialEq)]
pub struct Members {
    group: String,
    count: usize,
    only: Option<usize>,
}

impl Members {
    /// How many agents.
    pub fn len(&self) -> usize {
        if self.only.is_some() { 1 } else { self.count }
    }

    /// Never: a group has at least one member.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Their names, in member order.
    pub fn names(&self) -> impl Iterator<Item = String> + '_ {
        let range = match self.only {
            Some(i) => i..i + 1,
            None => 0..self.count,
        };
        range.map(|i| member_name(&self.group, self.count, i))
    }
}

/// What a group's check can see of the rest of the scenario.
pub struct CheckCx<'a> {
    /// The kinds and policies the scenario is read with.
    pub registry: &'a Registry,
    /// The group being checked.
    pub group: &'a str,
    /// Every group of the scenario, kinds in registry order, groups by name.
    pub groups: &'a [GroupMembers],
    /// The scenario's workloads.
    pub workloads: &'a [String],
}

impl CheckCx<'_> {
    /// The members named by `reference` (a group of one of `kinds`, or one member of such a group), for the
    /// value at `key`.
    pub fn resolve(&self, key: &str, reference: &str, kinds: &[&str]) -> Result<Members, Invalid> {
        let of_kinds = || self.groups.iter().filter(|g| kinds.contains(&g.kind));
        if let Some(g) = of_kinds().find(|g| g.group == reference) {
            return Ok(g.all());
        }
        if let Some((g, i)) = of_kinds().find_map(|g| Some((g, g.index_of(reference)?))) {
            return Ok(Members { only: Some(i), ..g.all() });
        }
        let names = of_kinds().flat_map(|g| {
            let members = (g.count > 1).then(|| g.all());
            std::iter::once(g.group.clone()).chain(members.into_iter().flat_map(|m| m.names().collect::<Vec<_>>()))
        });
        let names: Vec<String> = names.collect();
        let problem = Invalid::at(key, format!("no {} named `{reference}`", kinds.join(" or ")));
        Err(match did_you_mean(reference, names.iter().map(String::as_str)) {
            Some(m) => problem.hint(format!("did you mean `{m}`?")),
            None => problem,
        })
    }

    /// Like [`resolve`](Self::resolve) for each of `references` (at `key.0`, `key.1`...), where `"*"` stands for
    /// every member of every group of `kinds`, a kind's groups in the order the file lists them.
    pub fn resolve_all(&self, key: &str, references: &[String], kinds: &[&str]) -> Result<Vec<Members>, Invalid> {
        let mut out = Vec::new();
        for (i, r) in references.iter().enumerate() {
            if r == "*" {
                let mut every: Vec<&GroupMembers> = self.groups.iter().filter(|g| kinds.contains(&g.kind)).collect();
                every.sort_by_key(|g| (kinds.iter().position(|&k| k == g.kind), g.listed));
                out.extend(every.into_iter().map(GroupMembers::all));
            } else {
                out.push(self.resolve(&format!("{key}.{i}"), r, kinds)?);
            }
        }
        Ok(out)
    }

    /// Checks that `name`, at `key`, is a workload of the scenario.
    pub fn workload(&self, key: &str, name: &str) -> Result<(), Invalid> {
        if self.workloads.iter().any(|w| w == name) {
            return Ok(());
        }
        let problem = Invalid::at(key, format!("no workload named `{name}`"));
        Err(match did_you_mean(name, self.workloads.iter().map(String::as_str)) {
            Some(m) => problem.hint(format!("did you mean `{m}`?")),
            None => problem,
        })
    }
}

/// One member being built.
#[derive(Clone, Copy, Debug)]
pub struct Member<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its id in the simulation.
    pub id: AgentId,
    /// Its index in the group.
    pub index: usize,
    /// The group's size.
    pub count: usize,
}

/// What building a member can see of the simulation being assembled: kinds are built in registry order, so a
/// kind sees what the kinds before it published.
#[derive(Debug, Default)]
pub struct BuildCx {
    /// The replication's seed.
    pub seed: u64,
    /// Every agent's id, by name.
    pub ids: BTreeMap<String, AgentId>,
    /// Providers as built for this replication (their drawn PEs, speed and price), by name.
    pub providers: BTreeMap<String, ProviderInfo>,
    /// Each user broker's jobs, dealt by the application, by broker name.
    pub jobs: BTreeMap<String, Vec<UserJob>>,
}

impl BuildCx {
    /// The id of the agent called `name`.
    pub fn id(&self, name: &str) -> Result<AgentId, String> {
        self.ids.get(name).copied().ok_or_else(|| format!("no agent named `{name}`"))
    }

    /// The provider called `name`, as built.
    pub fn provider(&self, name: &str) -> Result<ProviderInfo, String> {
        self.providers.get(name).copied().ok_or_else(|| format!("no provider named `{name}` was built"))
    }
}

/// The kinds of a simulation, in build order, and the policies scenarios may name besides the kinds' own.
#[derive(Clone)]
pub struct Registry {
    kinds: Vec<&'static dyn AgentKind>,
    queue_orders: Vec<&'static dyn QueueOrder>,
    meta_policies: Vec<&'static dyn MetaPolicy>,
}

/// The services the standard kind called `kind` offers (none for a kind that is not standard: a test's probe).
pub fn standard_services(kind: &str) -> &'static [Service] {
    static STANDARD: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
    STANDARD.get_or_init(Registry::standard).kind(kind).map_or(&[], |k| k.services())
}

impl Registry {
    /// gridmarket's own kinds and policies. Providers come first: the others refer to them.
    pub fn standard() -> Registry {
        Registry { kinds: Vec::new(), queue_orders: Vec::new(), meta_policies: Vec::new() }
            .with(&crate::provider::kind::ProviderKind)
            .with(&crate::datacenter::kind::DataCentreKind)
            .with(&crate::gateway::kind::GatewayKind)
            .with(&crate::metabroker::kind::MetaBrokerKind)
            .with(&crate::metabroker::energy::kind::EnergyMetaBrokerKind)
            .with(&crate::exchange::kind::ExchangeKind)
            .with(&crate::broker::kind::BrokerKind)
            .with(&crate::market::kind::MarketKind)
            .with(&crate::directory::kind::DirectoryKind)
            .with(&crate::cpu_resource::kind::CpuResourceKind)
            .with(&crate::matchmaker::kind::AsBrokerKind)
            .with(&crate::matchmaker::kind::TransparentBrokerKind)
            .with(&crate::splitter::kind::SplitterKind)
            .with(&crate::request_source::kind::SourceKind)
            .with(&crate::utility::kind::UtilityKind)
            .with(&crate::node::kind::NodeKind)
            .with_queue_order(&ShortestJobFirst)
    }

    /// Adds a queue order that providers may name (`queue-order = "<name>"`).
    ///
    /// # Panics
    /// If its name is taken (`arrival`, or an order added before): a mistake in the program, not in a scenario.
    pub fn with_queue_order(mut self, order: &'static dyn QueueOrder) -> Registry {
        let name = order.name();
        assert!(name != ARRIVAL && self.queue_order(name).is_none(), "the queue order name `{name}` is taken");
        self.queue_orders.push(order);
        self
    }

    /// Adds a policy that meta-brokers may name (`policy = "<name>"`).
    ///
    /// # Panics
    /// If its name is taken (by a policy of the thesis, or one added before): a mistake in the program.
    pub fn with_meta_policy(mut self, policy: &'static dyn MetaPolicy) -> Registry {
        let name = policy.name();
        let thesis = SchedulingPolicy::ALL.iter().any(|p| serde_name(p) == name);
        assert!(!thesis && self.meta_policy(name).is_none(), "the meta-broker policy name `{name}` is taken");
        self.meta_policies.push(policy);
        self
    }

    /// The queue orders added, in order.
    pub fn queue_orders(&self) -> &[&'static dyn QueueOrder] {
        &self.queue_orders
    }

    /// The queue order called `name` (`None` for `arrival`, which is no [`QueueOrder`], and for unknown names).
    pub fn queue_order(&self, name: &str) -> Option<&'static dyn QueueOrder> {
        self.queue_orders.iter().copied().find(|o| o.name() == name)
    }

    /// The meta-broker policies added, in order.
    pub fn meta_policies(&self) -> &[&'static dyn MetaPolicy] {
        &self.meta_policies
    }

    /// The meta-broker policy called `name`.
    pub fn meta_policy(&self, name: &str) -> Option<&'static dyn MetaPolicy> {
        self.meta_policies.iter().copied().find(|p| p.name() == name)
    }

    /// `kind`'s policy keys and their values, for `gridmarket list`: its own ([`AgentKind::policies`]) and, for
    /// providers and meta-brokers, the queue orders and meta-broker policies of this registry.
    pub fn policies(&self, kind: &dyn AgentKind) -> Vec<Policy> {
        let mut policies = kind.policies();
        let about = |name: &str, about: &str| (name.to_string(), about.to_string());
        if kind.name() == crate::provider::kind::KIND {
            let names = self.queue_orders.iter().map(|o| o.name().to_string());
            policies.push(Policy {
                key: "queue-order",
                values: std::iter::once(ARRIVAL.to_string()).chain(names).collect(),
                source: "of the FCFS and EASY queues",
                about: self.queue_orders.iter().map(|o| about(o.name(), o.about())).collect(),
            });
        }
        if kind.name() == crate::metabroker::kind::KIND && !self.meta_policies.is_empty() {
            policies.push(Policy {
                key: "policy",
                values: self.meta_policies.iter().map(|p| p.name().to_string()).collect(),
                source: "registered, one application at a time",
                about: self.meta_policies.iter().map(|p| about(p.name(), p.about())).collect(),
            });
        }
        policies
    }

    /// Adds `kind`, built after the kinds before it.
    pub fn with(mut self, kind: &'static dyn AgentKind) -> Registry {
        self.kinds.push(kind);
        self
    }

    /// Every kind, in build order.
    pub fn kinds(&self) -> &[&'static dyn AgentKind] {
        &self.kinds
    }

    /// The kind called `name`.
    pub fn kind(&self, name: &str) -> Option<&'static dyn AgentKind> {
        self.kinds.iter().copied().find(|k| k.name() == name)
    }

    /// The kind whose scenario table is `table`.
    pub fn by_table(&self, table: &str) -> Option<&'static dyn AgentKind> {
        self.kinds.iter().copied().find(|k| k.table() == table)
    }
}

impl Default for Registry {
    fn default() -> Registry {
        Registry::standard()
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("kinds", &self.kinds)
            .field("queue_orders", &self.queue_orders)
            .field("meta_policies", &self.meta_policies)
            .finish()
    }
}

/// The error for a name at `key` that is none of `known` (a policy, say): the names it could be, and the closest.
pub fn unknown_name<'a>(key: &str, name: &str, known: impl IntoIterator<Item = &'a str> + Clone) -> Invalid {
    let list: Vec<String> = known.clone().into_iter().map(|k| format!("`{k}`")).collect();
    let problem = Invalid::at(key, format!("unknown value `{name}`, expected one of {}", list.join(", ")));
    match did_you_mean(name, known) {
        Some(m) => problem.hint(format!("did you mean `{m}`?")),
        None => problem,
    }
}

/// The closest of `candidates` to `word` (at most 2 edits away), for "did you mean".
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::levenshtein(word, c), c))
        .filter(|&(d, _)| d <= 2)
        .min_by_key(|&(d, c)| (d, c))
        .map(|(_, c)| c)
}
