//! The checked scenario: every agent named, every reference resolved, every sweep point built.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use agents::gateway::Dispatch;
use agents::provider::ProviderConfig;
use agents::provider::scheduler::{Partitioning, SchedulerPolicy};
use toml::Value;

use super::error::{ScenarioError, Spans, did_you_mean};
use super::raw::{RawBroker, RawExpect, RawOutputs, RawRuntime, RawScenario, RawSplit};
use super::workload::WorkloadPlan;
use super::{Document, parse_value};

/// Agent kinds, as the latency table and the trace name them.
pub const KINDS: [&str; 4] = ["provider", "broker", "gateway", "metabroker"];

/// One agent to build.
#[derive(Clone, Debug)]
pub struct AgentPlan {
    /// Unique name.
    pub name: String,
    /// Kind: one of [`KINDS`].
    pub kind: &'static str,
    /// The group (table) it comes from.
    pub group: String,
    /// What to build.
    pub spec: AgentSpec,
}

/// The parameters of one agent.
#[derive(Clone, Debug)]
pub enum AgentSpec {
    /// A resource provider, with what is drawn anew for each replication.
    Provider(ProviderConfig, ProviderDraws),
    /// A user broker: member `index` of `count` sharing `workload`.
    Broker {
        /// Workload name.
        workload: String,
        /// This broker's index in its group.
        index: usize,
        /// Brokers in the group.
        count: usize,
        /// How jobs are dealt.
        split: RawSplit,
        /// Where jobs go.
        target: BrokerTarget,
    },
    /// A meta-broker over the named providers.
    MetaBroker {
        /// Provider names.
        providers: Vec<String>,
        /// Scheduling policy.
        policy: agents::metabroker::SchedulingPolicy,
        /// Scheduling interval [s].
        interval: f64,
        /// Solver of the MGN relaxation.
        solver: agents::metabroker::MgnSolver,
    },
    /// A gateway over the named providers.
    Gateway {
        /// Provider names.
        providers: Vec<String>,
        /// Dispatch policy.
        dispatch: Dispatch,
    },
}

/// Provider parameters drawn per member and replication (seed 003 ch3's heterogeneous sites).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ProviderDraws {
    /// PEs uniform in [config.pes, pes_max].
    pub pes_max: Option<u32>,
    /// Price: normal around config.price, sd (high − low) / 4, kept in [low, high].
    pub price_range: Option<(f64, f64)>,
    /// Speed uniform in [low, high].
    pub speed_range: Option<(f64, f64)>,
}

/// Where a broker's jobs go.
#[derive(Clone, Debug)]
pub enum BrokerTarget {
    /// To this provider or gateway.
    Direct(String),
    /// Through this meta-broker.
    MetaBroker(String),
    /// Cheapest feasible of these providers, claimed every `round` seconds.
    Personalised {
        /// Provider names.
        providers: Vec<String>,
        /// Round length [s].
        round: f64,
    },
}

/// One latency setting, names resolved.
#[derive(Clone, Debug)]
pub enum LatencyRule {
    /// Between any two agents.
    Default(f64),
    /// From agents of one kind to agents of another.
    Kinds(String, String, f64),
    /// From one agent to another.
    Pair(String, String, f64),
}

/// A runnable scenario: one sweep point, checked.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Seed of replication 0.
    pub seed: u64,
    /// Replications.
    pub replications: u32,
    /// End time, or `None` to drain.
    pub horizon: Option<f64>,
    /// Sampling period of the time series.
    pub sample_period: Option<f64>,
    /// Agent runtime.
    pub runtime: RawRuntime,
    /// Agents in registration order.
    pub agents: Vec<AgentPlan>,
    /// Workloads by name.
    pub workloads: BTreeMap<String, WorkloadPlan>,
    /// Latencies.
    pub latency: Vec<LatencyRule>,
    /// Outputs.
    pub outputs: RawOutputs,
}

/// One point of the sweep.
#[derive(Clone, Debug)]
pub struct Point {
    /// 0-based index.
    pub index: usize,
    /// `key=value, key=value` (empty without a sweep).
    pub label: String,
    /// The assignments of this point.
    pub assignments: Vec<(String, Value)>,
    /// The checked scenario at this point.
    pub plan: Plan,
    /// A hash of everything that determines this point's runs (the tree after assignments).
    pub hash: u64,
}

/// A scenario file with its sweep expanded and every point checked.
#[derive(Clone, Debug)]
pub struct Study {
    /// The file.
    pub path: PathBuf,
    /// Name (the `name` key or the file stem).
    pub name: String,
    /// Description.
    pub description: Option<String>,
    /// Source of setup and targets.
    pub source: Option<String>,
    /// Swept keys with their values, in sweep order.
    pub sweep: Vec<(String, Vec<Value>)>,
    /// Every point.
    pub points: Vec<Point>,
    /// Targets.
    pub expects: Vec<RawExpect>,
}

/// How to load: `--quick` and `--set` overrides.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// Apply the scenario's `[quick]` overrides.
    pub quick: bool,
    /// `--set key=value` overrides, in order.
    pub set: Vec<(String, String)>,
    /// `--seed`: replaces the scenario's seed.
    pub seed: Option<u64>,
    /// `--replications`: replaces the scenario's count.
    pub replications: Option<u32>,
}

impl Study {
    /// Loads `path` and checks every sweep point.
    pub fn load(path: &Path, opts: &LoadOptions) -> Result<Study, ScenarioError> {
        let mut doc = Document::load(path)?;
        let spans = doc.spans.clone();
        // Keys given a value outside their own table, in the order applied: their errors are reported there.
        let mut overrides: Vec<(String, Override)> = Vec::new();
        if opts.quick
            && let Some(Value::Table(quick)) = doc.table.get("quick").cloned()
        {
            for (key, value) in quick {
                doc.set(&key, value).map_err(|m| ScenarioError::at_key(&spans, &format!("quick.{key}"), m))?;
                overrides.push((key, Override::Quick));
            }
        }
        for (key, value) in &opts.set {
            doc.set(key, parse_value(value))
                .map_err(|m| ScenarioError::file(path, format!("--set {key}={value}: {m}")))?;
            overrides.push((key.clone(), Override::Set(value.clone())));
        }
        if let Some(seed) = opts.seed {
            doc.table.insert("seed".into(), Value::Integer(seed as i64));
        }
        if let Some(r) = opts.replications {
            doc.table.insert("replications".into(), Value::Integer(i64::from(r)));
        }
        // Check the base document first: its errors point at the file.
        let base: RawScenario = doc.deserialize().map_err(|e| relocate(e, &overrides, &spans))?;
        // In the order written (the tree keeps file order): the first key varies slowest.
        let sweep: Vec<(String, Vec<Value>)> = match doc.table.get("sweep") {
            Some(Value::Table(t)) => {
                t.iter().map(|(k, v)| (k.clone(), v.as_array().cloned().unwrap_or_default())).collect()
            }
            _ => Vec::new(),
        };
        for (key, values) in &sweep {
            if opts.set.iter().any(|(k, _)| k == key) {
                let msg = format!("--set {key}: this key is swept; drop it from [sweep] or drop --set");
                return Err(ScenarioError::file(path, msg));
            }
            if values.is_empty() {
                return Err(ScenarioError::at_key(&spans, &format!("sweep.{key}"), "expected at least one value"));
            }
        }
        let mut points = Vec::new();
        for (index, assignments) in cartesian(&sweep).into_iter().enumerate() {
            let mut point_doc = doc.clone();
            let mut overrides = overrides.clone();
            for (key, value) in &assignments {
                point_doc
                    .set(key, value.clone())
                    .map_err(|m| ScenarioError::at_key(&spans, &format!("sweep.{key}"), m))?;
                overrides.push((key.clone(), Override::Sweep));
            }
            // An error about a swept key points at the sweep; any other names the point it appeared at.
            let at_point = |e: ScenarioError| {
                let mut e = relocate(e, &overrides, &spans);
                if !assignments.is_empty() && !e.key.as_deref().is_some_and(|k| k.starts_with("sweep.")) {
                    e.message = format!("{} (sweep point {})", e.message, label(&assignments));
                }
                e
            };
            let raw: RawScenario = point_doc.deserialize().map_err(at_point)?;
            let plan = Plan::build(&raw, &spans).map_err(at_point)?;
            let hash = fnv1a(toml::to_string(&point_doc.table).unwrap_or_default().as_bytes());
            points.push(Point { index, label: label(&assignments), assignments, plan, hash });
        }
        for (i, e) in base.expect.iter().enumerate() {
            let other = e.versus.as_ref().map(|v| path.with_file_name(&v.scenario));
            if let Some(other) = other.filter(|o| !o.is_file() || o == path) {
                let m = format!("no other scenario {} beside this one", other.display());
                return Err(ScenarioError::at_key(&spans, &format!("expect.{i}.versus.scenario"), m));
            }
            check_expect(e, &sweep).map_err(|(k, m, hint)| {
                let e = ScenarioError::at_key(&spans, &format!("expect.{i}.{k}"), m);
                match hint {
                    Some(h) => e.hint(h),
                    None => e,
                }
            })?;
        }
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        Ok(Study {
            path: path.to_path_buf(),
            name: base.name.clone().unwrap_or(stem),
            description: base.description.clone(),
            source: base.source.clone(),
            sweep,
            points,
            expects: base.expect,
        })
    }
}

/// Where a key's value came from when not from its own table in the file.
#[derive(Clone, Debug)]
enum Override {
    /// The file's `[quick]` table (with `--quick`).
    Quick,
    /// `--set key=<value>`.
    Set(String),
    /// The file's `[sweep]` table.
    Sweep,
}

/// Reports an error about an overridden key (or a key under it) where its value came from: the `[quick]` or
/// `[sweep]` entry, or the `--set` argument.
fn relocate(mut e: ScenarioError, overrides: &[(String, Override)], spans: &Spans) -> ScenarioError {
    let Some(key) = e.key.clone() else { return e };
    let Some((set, origin)) = overrides
        .iter()
        .rev()
        .find(|(k, _)| key == *k || key.strip_prefix(k.as_str()).is_some_and(|r| r.starts_with('.')))
    else {
        return e;
    };
    match origin {
        Override::Quick | Override::Sweep => {
            let table = if matches!(origin, Override::Quick) { "quick" } else { "sweep" };
            e.key = Some(format!("{table}.{set}"));
            e.at = spans.locate(&format!("{table}.{set}"));
        }
        Override::Set(value) => {
            e.at = None;
            e.message = format!("{} (from --set {set}={value})", e.message);
        }
    }
    e
}

fn label(assignments: &[(String, Value)]) -> String {
    assignments.iter().map(|(k, v)| format!("{k}={}", show(v))).collect::<Vec<_>>().join(", ")
}

/// A value as a user would write it on the command line (strings unquoted).
pub fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Every combination of the sweep values, the first key varying slowest.
fn cartesian(sweep: &[(String, Vec<Value>)]) -> Vec<Vec<(String, Value)>> {
    let mut out = vec![Vec::new()];
    for (key, values) in sweep {
        out = out
            .into_iter()
            .flat_map(|prefix: Vec<(String, Value)>| {
                values.iter().map(move |v| {
                    let mut p = prefix.clone();
                    p.push((key.clone(), v.clone()));
                    p
                })
            })
            .collect();
    }
    out
}

/// FNV-1a: a stable hash (std's hasher may change between releases) for resuming runs.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// Checks a target against the sweep; an error is (key under the target, message, hint).
fn check_expect(e: &RawExpect, sweep: &[(String, Vec<Value>)]) -> Result<(), (String, String, Option<String>)> {
    let kinds = [e.value.is_some(), e.range.is_some(), e.order.is_some(), e.relative.is_some(), e.versus.is_some()];
    if kinds.iter().filter(|&&k| k).count() != 1 {
        let m = "give exactly one of `value`, `range`, `order`, `relative` or `versus`";
        return Err(("metric".into(), m.into(), None));
    }
    let values_of = |key: &str| sweep.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let swept = || {
        Some(match sweep {
            [] => "the scenario has no `[sweep]`".to_string(),
            _ => format!(
                "the swept keys are {}",
                sweep.iter().map(|(k, _)| format!("`{k}`")).collect::<Vec<_>>().join(", ")
            ),
        })
    };
    for key in e.at.keys() {
        if values_of(key).is_none() {
            return Err((format!("at.{key}"), format!("`{key}` is not a sweep key"), swept()));
        }
    }
    if e.order.is_some() || e.relative.is_some() {
        let Some(over) = e.over.as_deref() else {
            let m = "required with `order` and `relative`: the sweep key they compare the points along";
            return Err(("over".into(), m.into(), swept()));
        };
        let values = values_of(over).ok_or(("over".to_string(), format!("`{over}` is not a sweep key"), swept()))?;
        let listed: Vec<&Value> = match (&e.order, &e.relative) {
            (Some(o), _) => o.iter().collect(),
            (_, Some(r)) => vec![&r.a, &r.b],
            _ => vec![],
        };
        for v in listed {
            if !values.contains(v) {
                let all = values.iter().map(show).collect::<Vec<_>>().join(", ");
                let hint = Some(format!("`{over}` takes the values {all}"));
                return Err(("over".into(), format!("{} is not a value of sweep key `{over}`", show(v)), hint));
            }
        }
    }
    Ok(())
}

impl Plan {
    /// Fills defaults and resolves names; `spans` locates errors in the scenario file.
    pub fn build(raw: &RawScenario, spans: &Spans) -> Result<Plan, ScenarioError> {
        // Every error here is about a value (a name, a reference, an option): point at it.
        let err = |key: &str, msg: String| ScenarioError {
            at: spans.locate_value(key),
            ..ScenarioError::at_key(spans, key, msg)
        };
        let base = spans.file().parent().unwrap_or(Path::new(".")).to_path_buf();

        let mut workloads = BTreeMap::new();
        for (name, w) in &raw.workloads {
            let plan = WorkloadPlan::check(w, &base).map_err(|(k, m)| err(&format!("workloads.{name}.{k}"), m))?;
            workloads.insert(name.clone(), plan);
        }

        // Names: a group of one is named after the group, larger groups get `-0`, `-1`...
        let mut members: BTreeMap<String, (&'static str, Vec<String>)> = BTreeMap::new();
        let groups = raw
            .providers
            .iter()
            .map(|(g, p)| ("providers", "provider", g, p.count.0))
            .chain(raw.brokers.iter().map(|(g, b)| ("brokers", "broker", g, b.count.0)))
            .chain(raw.gateways.iter().map(|(g, w)| ("gateways", "gateway", g, w.count.0)))
            .chain(raw.metabrokers.keys().map(|g| ("metabrokers", "metabroker", g, 1)));
        let mut all_names = BTreeSet::new();
        for (section, kind, group, count) in groups {
            let key = format!("{section}.{group}");
            if group.is_empty() || !group.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
                return Err(err(&key, format!("group name `{group}`: use letters, digits, `-` and `_` only")));
            }
            if members.contains_key(group) {
                return Err(err(&key, format!("`{group}` names two groups; group names must be unique")));
            }
            let names: Vec<String> =
                if count == 1 { vec![group.clone()] } else { (0..count).map(|i| format!("{group}-{i}")).collect() };
            for n in &names {
                if !all_names.insert(n.clone()) {
                    return Err(err(&key, format!("agent name `{n}` is used twice")));
                }
            }
            members.insert(group.clone(), (kind, names));
        }
        let resolve = |key: &str, reference: &str, kinds: &[&str]| -> Result<Vec<String>, ScenarioError> {
            if let Some((kind, names)) = members.get(reference)
                && kinds.contains(kind)
            {
                return Ok(names.clone());
            }
            if let Some((_, (kind, _))) = members.iter().find(|(_, (_, ns))| ns.iter().any(|n| n == reference))
                && kinds.contains(kind)
            {
                return Ok(vec![reference.to_string()]);
            }
            let candidates = members
                .iter()
                .filter(|(_, (k, _))| kinds.contains(k))
                .flat_map(|(g, (_, ns))| std::iter::once(g.as_str()).chain(ns.iter().map(String::as_str)));
            let mut e = err(key, format!("no {} named `{reference}`", kinds.join(" or ")));
            if let Some(m) = did_you_mean(reference, candidates) {
                e = e.hint(format!("did you mean `{m}`?"));
            }
            Err(e)
        };

        let mut agents = Vec::new();
        for (group, p) in &raw.providers {
            let key = format!("providers.{group}");
            let multi = p.scheduler == SchedulerPolicy::MultiPartitionEasy;
            let option = [("partitions", p.partitions.is_some()), ("borrowing", p.borrowing.is_some())]
                .into_iter()
                .find_map(|(o, given)| given.then_some(o));
            if let Some(option) = option
                && !multi
            {
                let scheduler = serde_json::to_value(p.scheduler).ok().and_then(|v| v.as_str().map(String::from));
                let e = err(
                    &format!("{key}.{option}"),
                    format!(
                        "an option of the \"multi-partition-easy\" scheduler only, but this provider's scheduler is \"{}\"",
                        scheduler.unwrap_or_default()
                    ),
                );
                return Err(e.hint(format!("set `scheduler = \"multi-partition-easy\"` or remove `{option}`")));
            }
            let mut partitioning = Partitioning::default();
            if let Some(ratios) = &p.partitions {
                if ratios.is_empty() {
                    return Err(err(&format!("{key}.partitions"), "expected at least one partition".into()));
                }
                partitioning.ratios = ratios.iter().map(|r| r.0).collect();
            }
            if let Some(b) = p.borrowing {
                partitioning.borrowing = b;
            }
            let config = ProviderConfig {
                pes: p.pes.0,
                speed: p.speed.map_or(1.0, |s| s.0),
                price: p.price.map_or(0.0, |s| s.0),
                scheduler: p.scheduler,
                partitioning,
                preemption: p.preemption,
                overhead: p.overhead.unwrap_or_default(),
                vm_memory_mb: p.vm_memory.map_or(1024.0, |m| m.0),
                cancelled: p.cancelled,
                preemptive_priority: p.preemptive_priority,
            };
            if let Some(max) = p.pes_max
                && max.0 < p.pes.0
            {
                return Err(err(
                    &format!("{key}.pes-max"),
                    format!("expected at least `pes` ({}), found {}", p.pes.0, max.0),
                ));
            }
            if let Some([lo, hi]) = p.price_range
                && !(lo.is_finite() && hi.is_finite() && 0.0 <= lo && lo <= config.price && config.price <= hi)
            {
                let msg = format!(
                    "expected [low, high] with 0 <= low <= price ({}) <= high, found [{lo}, {hi}]",
                    config.price
                );
                return Err(err(&format!("{key}.price-range"), msg));
            }
            if let Some([lo, hi]) = p.speed_range
                && !(lo.is_finite() && hi.is_finite() && 0.0 < lo && lo <= hi)
            {
                let msg = format!("expected [low, high] with 0 < low <= high, found [{lo}, {hi}]");
                return Err(err(&format!("{key}.speed-range"), msg));
            }
            let draws = ProviderDraws {
                pes_max: p.pes_max.map(|m| m.0),
                price_range: p.price_range.map(|[l, h]| (l, h)),
                speed_range: p.speed_range.map(|[l, h]| (l, h)),
            };
            for name in &members[group].1 {
                let spec = AgentSpec::Provider(config.clone(), draws);
                agents.push(AgentPlan { name: name.clone(), kind: "provider", group: group.clone(), spec });
            }
        }
        for (group, g) in &raw.gateways {
            let key = format!("gateways.{group}.providers");
            if g.providers.is_empty() {
                return Err(err(&key, "expected at least one provider".into()));
            }
            let mut providers = Vec::new();
            for (i, p) in g.providers.iter().enumerate() {
                providers.extend(resolve(&format!("{key}.{i}"), p, &["provider"])?);
            }
            for name in &members[group].1 {
                let spec = AgentSpec::Gateway { providers: providers.clone(), dispatch: g.dispatch };
                agents.push(AgentPlan { name: name.clone(), kind: "gateway", group: group.clone(), spec });
            }
        }
        for (group, m) in &raw.metabrokers {
            let key = format!("metabrokers.{group}");
            let mut providers = Vec::new();
            for (i, p) in m.providers.iter().enumerate() {
                if p == "*" {
                    for g in raw.providers.keys() {
                        providers.extend(resolve(&format!("{key}.providers"), g, &["provider"])?);
                    }
                } else {
                    providers.extend(resolve(&format!("{key}.providers.{i}"), p, &["provider"])?);
                }
            }
            if providers.is_empty() {
                return Err(err(&format!("{key}.providers"), "expected at least one provider".into()));
            }
            let spec = AgentSpec::MetaBroker {
                providers,
                policy: m.policy,
                interval: m.interval.map_or(50.0, |i| i.0),
                solver: m.solver,
            };
            agents.push(AgentPlan { name: group.clone(), kind: "metabroker", group: group.clone(), spec });
        }
        for (group, b) in &raw.brokers {
            let target = broker_target(group, b, &raw.providers, &resolve, &err)?;
            if !raw.workloads.contains_key(&b.workload) {
                let mut e = err(&format!("brokers.{group}.workload"), format!("no workload named `{}`", b.workload));
                if let Some(m) = did_you_mean(&b.workload, raw.workloads.keys().map(String::as_str)) {
                    e = e.hint(format!("did you mean `{m}`?"));
                }
                return Err(e);
            }
            let names = &members[group].1;
            for (index, name) in names.iter().enumerate() {
                let spec = AgentSpec::Broker {
                    workload: b.workload.clone(),
                    index,
                    count: names.len(),
                    split: b.split,
                    target: target.clone(),
                };
                agents.push(AgentPlan { name: name.clone(), kind: "broker", group: group.clone(), spec });
            }
        }

        let mut latency = Vec::new();
        if let Some(d) = raw.latency.default {
            latency.push(LatencyRule::Default(d.0));
        }
        for (i, l) in raw.latency.kinds.iter().enumerate() {
            for (end, field) in [(&l.from, "from"), (&l.to, "to")] {
                if !KINDS.contains(&end.as_str()) {
                    let e = err(&format!("latency.kinds.{i}.{field}"), format!("`{end}` is not an agent kind"));
                    let kinds = format!("the kinds are {}", KINDS.join(", "));
                    return Err(e.hint(match did_you_mean(end, KINDS) {
                        Some(m) => format!("did you mean `{m}`? ({kinds})"),
                        None => kinds,
                    }));
                }
            }
            if agents.iter().any(|a| a.kind == l.from) && agents.iter().any(|a| a.kind == l.to) {
                latency.push(LatencyRule::Kinds(l.from.clone(), l.to.clone(), l.secs.0));
            }
        }
        for (i, l) in raw.latency.pairs.iter().enumerate() {
            for (end, field) in [(&l.from, "from"), (&l.to, "to")] {
                if !all_names.contains(end) {
                    let mut e = err(&format!("latency.pairs.{i}.{field}"), format!("no agent named `{end}`"));
                    if let Some(m) = did_you_mean(end, all_names.iter().map(String::as_str)) {
                        e = e.hint(format!("did you mean `{m}`?"));
                    }
                    return Err(e);
                }
            }
            latency.push(LatencyRule::Pair(l.from.clone(), l.to.clone(), l.secs.0));
        }
        for (i, a) in raw.outputs.trace_agents.iter().enumerate() {
            if !all_names.contains(a) {
                let mut e = err(&format!("outputs.trace-agents.{i}"), format!("no agent named `{a}`"));
                if let Some(m) = did_you_mean(a, all_names.iter().map(String::as_str)) {
                    e = e.hint(format!("did you mean `{m}`?"));
                }
                return Err(e);
            }
        }
        Ok(Plan {
            seed: raw.seed,
            replications: raw.replications.0,
            horizon: raw.horizon.map(|h| h.0),
            sample_period: raw.sample_period.map(|p| p.0),
            runtime: raw.runtime,
            agents,
            workloads,
            latency,
            outputs: raw.outputs.clone(),
        })
    }
}

type Resolve<'a> = dyn Fn(&str, &str, &[&str]) -> Result<Vec<String>, ScenarioError> + 'a;

fn broker_target(
    group: &str,
    b: &RawBroker,
    providers: &BTreeMap<String, super::raw::RawProvider>,
    resolve: &Resolve<'_>,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<BrokerTarget, ScenarioError> {
    let key = format!("brokers.{group}");
    if let Some(mb) = &b.metabroker {
        if b.submit_to.is_some() || b.personalised.is_some() {
            return Err(err(&key, "give one of `submit-to`, `personalised` or `metabroker`".into()));
        }
        let names = resolve(&format!("{key}.metabroker"), mb, &["metabroker"])?;
        return Ok(BrokerTarget::MetaBroker(names[0].clone()));
    }
    match (&b.submit_to, &b.personalised) {
        (Some(to), None) => {
            let key = format!("{key}.submit-to");
            let names = resolve(&key, to, &["provider", "gateway"])?;
            match names.as_slice() {
                [one] => Ok(BrokerTarget::Direct(one.clone())),
                _ => Err(err(&key, format!("`{to}` is a group of {}; name one member", names.len()))
                    .hint(format!("e.g. `{}`", names[0]))),
            }
        }
        (None, Some(list)) => {
            let key = format!("{key}.personalised");
            let mut names = Vec::new();
            for (i, p) in list.iter().enumerate() {
                if p == "*" {
                    for g in providers.keys() {
                        names.extend(resolve(&key, g, &["provider"])?);
                    }
                } else {
                    names.extend(resolve(&format!("{key}.{i}"), p, &["provider"])?);
                }
            }
            if names.is_empty() {
                return Err(err(&key, "expected at least one provider".into()));
            }
            Ok(BrokerTarget::Personalised { providers: names, round: b.round.map_or(50.0, |r| r.0) })
        }
        (Some(_), Some(_)) => Err(err(&key, "give either `submit-to` or `personalised`, not both".into())),
        (None, None) => Err(err(&key, "say where jobs go: `submit-to`, `personalised` or `metabroker`".into())),
    }
}
