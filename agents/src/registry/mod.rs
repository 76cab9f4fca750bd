//! Agent kinds, each declared once beside its actor (`<actor>/kind.rs`): its scenario table, the raw schema of a
//! group, validation into a spec, how members are built, its policies and the metrics it sums over a run.
//!
//! The application iterates a [`Registry`] to read scenario files, print `gridmarket list` and `schema`, build
//! simulations and name metrics, so a new kind is its own folder plus one line in [`Registry::standard`] (in the
//! crate's top module, `standard`, the one that names every kind). This module names none: every
//! kind uses its types, and finds the groups a scenario refers it to by the [`Service`] it needs of them.
//!
//! A registry also holds the policies that scenarios name but the kinds do not list themselves
//! ([`Registry::with_policy`]): providers' queue orders (`queue-order = "<name>"`,
//! [`Registry::with_queue_order`]) and meta-brokers' one-application-at-a-time policies (`policy = "<name>"`,
//! [`Registry::with_meta_policy`]). A new one is a type implementing the family's trait plus one line, in
//! [`Registry::standard`] or in a program of its own.
//!
//! A group is one table under the kind's table (`[providers.fast]`): [`AgentKind::parse`] reads it as written,
//! [`RawGroup::check`] resolves its references to other groups into a [`GroupSpec`], and the spec builds each member
//! for every replication.

pub mod limits;
pub mod values;
pub mod words;

use std::any::{Any, TypeId};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::model::{ProviderInfo, Service};
use crate::protocol::UserJob;
use crate::sim::{AgentId, BoxedAgent};

/// `Debug` and equality by name for the trait objects of a kind of named plug-in (a queue order, a pricing rule, a
/// meta-broker policy): plug-ins are registered under unique names, so the same name is the same plug-in.
macro_rules! by_name {
    ($($plugin:ty),+) => {$(
        impl std::fmt::Debug for $plugin {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl PartialEq for $plugin {
            fn eq(&self, other: &Self) -> bool {
                self.name() == other.name()
            }
        }
    )+};
}
pub(crate) use by_name;

/// One kind of agent, as scenarios, the command line and the runner know it.
pub trait AgentKind: Send + Sync {
    /// The kind as the directory, latency rules and trace name it (`"provider"`).
    fn name(&self) -> &'static str;
    /// The scenario table holding its groups (`"providers"`); metrics of its members are named
    /// `<table>.<agent>.<metric>`.
    fn table(&self) -> &'static str;
    /// One line for `gridmarket list`.
    fn about(&self) -> &'static str;
    /// Its policy keys and their choices, for `gridmarket list`: its own, and those `registry` adds (a provider's
    /// registered queue orders).
    fn policies(&self, _registry: &Registry) -> Vec<Policy> {
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
    /// Whether its members bill in US dollars (Garg 2010 ch6's electricity prices) rather than G$: a study with one
    /// reports its money in dollars.
    fn bills_in_dollars(&self) -> bool {
        false
    }
    /// The rows of the report's summary table each of its members gets.
    fn summary_rows(&self) -> SummaryRows {
        SummaryRows { metrics: &[], members: 0, only_if_all: false }
    }
    /// The services its members offer their peers: scenarios' references to its groups, and agents looking for
    /// peers in the directory, ask for these.
    fn services(&self) -> &'static [Service] {
        &[]
    }
    /// Whether its members offer `service`.
    fn offers(&self, service: Service) -> bool {
        self.services().contains(&service)
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
    /// The policies of family `P` that `registry` holds, as choices of `key` after the kind's `built_in` ones.
    pub fn registered<P: ?Sized + 'static>(
        key: &'static str,
        built_in: &[&str],
        source: &'static str,
        registry: &Registry,
    ) -> Policy {
        let registered: Vec<_> = registry.policies::<P>().collect();
        let names = registered.iter().map(|&(name, ..)| name);
        Policy {
            key,
            values: built_in.iter().copied().chain(names).map(String::from).collect(),
            source,
            about: registered.iter().map(|&(name, about, _)| (name.to_string(), about.to_string())).collect(),
        }
    }

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

/// The keys of the struct `T` reads, kebab-case, in the order it declares them (what serde lists after "expected
/// one of"); empty for a type that is not read as a struct.
pub fn key_names<T: DeserializeOwned>() -> &'static [&'static str] {
    /// A deserializer that only notes the fields of the struct asked for.
    struct Fields<'a>(&'a mut &'static [&'static str]);
    impl<'de> serde::de::Deserializer<'de> for Fields<'_> {
        type Error = serde::de::value::Error;
        fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(serde::de::Error::custom("not a struct"))
        }
        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(serde::de::Error::custom("fields noted"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
            unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
        }
    }
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(Fields(&mut fields));
    fields
}

/// Adds the keys of `schema` (an object's JSON schema) to `properties`: a key already there keeps its schema and
/// gains the new doc after its own, unless it says the same (a key several rules or models read is documented once).
pub fn merge_keys(properties: &mut serde_json::Map<String, serde_json::Value>, schema: &schemars::Schema) {
    use serde_json::Value;
    let Some(Value::Object(props)) = schema.get("properties") else { return };
    for (key, prop) in props {
        let Some(Value::Object(known)) = properties.get_mut(key) else {
            properties.insert(key.clone(), prop.clone());
            continue;
        };
        let doc = |p: Option<&Value>| p.and_then(Value::as_str).unwrap_or_default().to_string();
        let (before, added) = (doc(known.get("description")), doc(prop.get("description")));
        if !before.contains(&added) {
            known.insert("description".into(), Value::from(format!("{before} {added}").trim().to_string()));
        }
    }
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
    /// The kinds of the registry whose members offer one of `services`, in registry order.
    pub fn kinds_offering(&self, services: &[Service]) -> Vec<&'static str> {
        let kinds = self.registry.kinds().iter();
        kinds.filter(|k| services.iter().any(|&s| k.offers(s))).map(|k| k.name()).collect()
    }

    /// The members named by `reference` (a group of a kind offering one of `services`, or one member of such a
    /// group), for the value at `key`.
    pub fn resolve(&self, key: &str, reference: &str, services: &[Service]) -> Result<Members, Invalid> {
        let kinds = self.kinds_offering(services);
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

    /// The one agent `reference` (at `key`) names, as [`resolve`](Self::resolve) finds it: a group of one, or one
    /// member of a group.
    pub fn resolve_one(&self, key: &str, reference: &str, services: &[Service]) -> Result<Members, Invalid> {
        let members = self.resolve(key, reference, services)?;
        if members.len() != 1 {
            return Err(Invalid::at(
                key,
                format!("expected one agent, found the group `{reference}` of {}", members.len()),
            )
            .hint(format!("name one member, e.g. `{reference}-0`")));
        }
        Ok(members)
    }

    /// Like [`resolve`](Self::resolve) for each of `references` (at `key.0`, `key.1`...), where `"*"` stands for
    /// every member of every group of a kind offering one of `services`: kinds in registry order, a kind's groups in
    /// the order the file lists them.
    pub fn resolve_all(&self, key: &str, references: &[String], services: &[Service]) -> Result<Vec<Members>, Invalid> {
        let kinds = self.kinds_offering(services);
        let mut out = Vec::new();
        for (i, r) in references.iter().enumerate() {
            if r == "*" {
                let mut every: Vec<&GroupMembers> = self.groups.iter().filter(|g| kinds.contains(&g.kind)).collect();
                every.sort_by_key(|g| (kinds.iter().position(|&k| k == g.kind), g.listed));
                out.extend(every.into_iter().map(GroupMembers::all));
            } else {
                out.push(self.resolve(&format!("{key}.{i}"), r, services)?);
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
    /// The span [from, to] \[s\] over which the market is measured (the scenario's `market-window`), if not the whole
    /// run.
    pub market_window: Option<(f64, f64)>,
}

impl BuildCx {
    /// The id of the agent called `name`.
    pub fn id(&self, name: &str) -> Result<AgentId, String> {
        self.ids.get(name).copied().ok_or_else(|| format!("no agent named `{name}`"))
    }

    /// The id of the one agent `members` names (checked by [`CheckCx::resolve_one`]).
    pub fn single(&self, members: &Members) -> Result<AgentId, String> {
        let name = members.names().next().ok_or("no agent")?;
        self.id(&name)
    }

    /// The provider called `name`, as built.
    pub fn provider(&self, name: &str) -> Result<ProviderInfo, String> {
        self.providers.get(name).copied().ok_or_else(|| format!("no provider named `{name}` was built"))
    }
}

/// The kinds of a simulation, in build order, and the policies scenarios may name besides the kinds' own.
///
/// gridmarket's own are [`Registry::standard`], which the top module of this crate defines: the registry names no
/// kind, so that every kind may use its types.
#[derive(Clone)]
pub struct Registry {
    kinds: Vec<&'static dyn AgentKind>,
    policies: Vec<Registered>,
}

/// A policy registered by name: a `&'static P` of its family `P` (a trait object type, such as a provider's
/// `dyn QueueOrder`), which the kind using that family looks up by the name a scenario gives.
#[derive(Clone)]
struct Registered {
    family: TypeId,
    name: &'static str,
    about: &'static str,
    policy: Arc<dyn Any + Send + Sync>,
}

impl Registry {
    /// A registry of no kind and no policy, to add to ([`with`](Self::with), [`with_policy`](Self::with_policy)).
    pub fn empty() -> Registry {
        Registry { kinds: Vec::new(), policies: Vec::new() }
    }

    /// Registers `policy` of family `P` (a trait object type) under `name`, with one line for `gridmarket list`.
    /// The family's own `with_…` (e.g. `with_queue_order`) calls it after checking the name is not a built-in one.
    ///
    /// # Panics
    /// If `name` is taken in the family: a program registering two policies under one name is wrong.
    pub fn with_policy<P: ?Sized + Sync + 'static>(
        mut self,
        name: &'static str,
        about: &'static str,
        policy: &'static P,
    ) -> Registry {
        assert!(self.policy::<P>(name).is_none(), "the policy name `{name}` is taken");
        self.policies.push(Registered { family: TypeId::of::<P>(), name, about, policy: Arc::new(policy) });
        self
    }

    /// The policies of family `P`, in registration order: (name, line for `gridmarket list`, policy).
    pub fn policies<P: ?Sized + 'static>(
        &self,
    ) -> impl Iterator<Item = (&'static str, &'static str, &'static P)> + Clone {
        self.policies.iter().filter(|r| r.family == TypeId::of::<P>()).filter_map(|r| {
            let policy = r.policy.downcast_ref::<&'static P>()?;
            Some((r.name, r.about, *policy))
        })
    }

    /// The policy of family `P` called `name`.
    pub fn policy<P: ?Sized + 'static>(&self, name: &str) -> Option<&'static P> {
        self.policies::<P>().find(|&(n, ..)| n == name).map(|(.., p)| p)
    }

    /// The policy of family `P` that `name`, given at `key` of a scenario, names; else the error listing the
    /// family's names and the closest.
    pub fn policy_at<P: ?Sized + 'static>(&self, key: &str, name: &str) -> Result<&'static P, Invalid> {
        self.policy::<P>(name).ok_or_else(|| unknown_name(key, name, self.policies::<P>().map(|(name, ..)| name)))
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

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let policies: Vec<&str> = self.policies.iter().map(|r| r.name).collect();
        f.debug_struct("Registry").field("kinds", &self.kinds).field("policies", &policies).finish()
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
