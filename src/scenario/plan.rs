//! The checked scenario: every agent named, every reference resolved, every sweep point built.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agents::registry::limits::{
    MAX_AGENTS, MAX_PERIODIC_EVENTS, MAX_RUNS, MAX_SAMPLES, MAX_SWEEP_POINTS, approx, short,
};
use agents::registry::{AgentKind, CheckCx, GroupMembers, GroupSpec, RawGroup, Registry, member_name};
use toml::Value;

use super::error::{ScenarioError, Spans, did_you_mean};
use super::raw::{RawChart, RawExpect, RawOutputs, RawRuntime, RawScenario};
use super::workload::{RawWorkload, TraceCache, WorkloadPlan, WorkloadRegistry};
use super::{Document, parse_value};
use crate::runner::metrics;

/// One agent group to build.
#[derive(Clone, Debug)]
pub struct GroupPlan {
    /// Its kind.
    pub kind: &'static dyn AgentKind,
    /// Its name (the key under the kind's table).
    pub name: String,
    /// How many agents.
    pub count: usize,
    /// What builds its members.
    pub spec: Arc<dyn GroupSpec>,
}

/// One agent, as [`Plan::agents`] lists it.
#[derive(Clone, Debug)]
pub struct AgentPlan<'a> {
    /// Unique name.
    pub name: String,
    /// Its kind.
    pub kind: &'static dyn AgentKind,
    /// The group (table) it comes from.
    pub group: &'a str,
    /// Its index in the group.
    pub index: usize,
    /// The group's size.
    pub count: usize,
    /// What builds it (shared by the group).
    pub spec: &'a dyn GroupSpec,
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
    /// The agent kinds it was read with.
    pub registry: Registry,
    /// Seed of replication 0.
    pub seed: u64,
    /// Replications (the first round, with `precision`).
    pub replications: u32,
    /// Replicate until a metric's 95% CI is this narrow.
    pub precision: Option<Precision>,
    /// End time, or `None` to drain.
    pub horizon: Option<f64>,
    /// Sampling period of the time series.
    pub sample_period: Option<f64>,
    /// The k of the contention index.
    pub contention_k: usize,
    /// The window of the market metrics of time, `(from, to)` \[s\]; `None`: the whole run.
    pub market_window: Option<(f64, f64)>,
    /// Jobs left out of the job metrics, the first submitted (warm-up).
    pub warm_up: usize,
    /// Agent runtime.
    pub runtime: RawRuntime,
    /// Agent groups in registration order (see [`Plan::agents`]).
    pub groups: Vec<GroupPlan>,
    /// Workloads by name.
    pub workloads: BTreeMap<String, WorkloadPlan>,
    /// Latencies.
    pub latency: Vec<LatencyRule>,
    /// Outputs.
    pub outputs: RawOutputs,
}

/// A target precision: more replications until the 95% CI half-width of `metric` is at most `relative` × |mean|,
/// up to `max_replications`.
#[derive(Clone, Debug, PartialEq)]
pub struct Precision {
    /// The metric.
    pub metric: String,
    /// The largest half-width over the mean's magnitude.
    pub relative: f64,
    /// The most replications of a point.
    pub max_replications: u32,
}

impl Precision {
    /// How many replications a point with `summary` of the metric needs in all (its `n` if it has enough): the
    /// half-width shrinks as 1/√n, so n·(half-width / target)², at least one more, at most the maximum.
    pub fn needed(&self, summary: &crate::stats::Summary) -> u32 {
        let n = summary.n as u32;
        let target = self.relative * summary.mean.abs();
        if n >= self.max_replications || (n >= 2 && summary.ci95 <= target) {
            return n;
        }
        let estimate = if target > 0.0 && summary.ci95.is_finite() {
            (f64::from(n.max(2)) * (summary.ci95 / target).powi(2)).ceil().min(f64::from(self.max_replications))
        } else {
            f64::from(self.max_replications)
        };
        (estimate as u32).clamp(n + 1, self.max_replications)
    }
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
    /// Targets (`[[expect]]`).
    pub targets: Vec<Claim>,
    /// Sanity checks (`[[check]]`).
    pub checks: Vec<Claim>,
    /// Charts for the report (`[[chart]]`).
    pub charts: Vec<Chart>,
    /// Loaded with `--quick`: reduced sizes, so its verdicts are only indicative.
    pub quick: bool,
    /// What the user should know although the file is valid (records of a trace left out), once each.
    pub warnings: Vec<ScenarioError>,
}

/// A target or a sanity check, checked against the sweep.
#[derive(Clone, Debug)]
pub struct Claim {
    /// The metric.
    pub metric: String,
    /// A target's source (the figure or table and its value); a check's `why`, if any.
    pub source: String,
    /// Where a target's band comes from (empty when it has none or for a check).
    pub tolerance: String,
    /// The sweep point(s) it applies to.
    pub at: BTreeMap<String, Value>,
    /// What it claims.
    pub test: Test,
    /// A documented conflict: how the source contradicts itself on this claim, which is then reported but not
    /// scored.
    pub conflict: Option<String>,
    /// A hypothesis of our own (no source states it): scored, but counted apart from the literature's targets.
    pub hypothesis: bool,
}

/// What a target or check claims about its metric.
#[derive(Clone, Debug)]
pub enum Test {
    /// `value ± tol` at each point.
    Value { value: f64, tol: f64 },
    /// Within `[lo, hi]` at each point.
    Range { lo: f64, hi: f64 },
    /// Ordered along sweep key `over`, largest first.
    Order { over: String, values: Vec<Value> },
    /// (a − b) / |b| within [min, max] along sweep key `over`.
    Relative { over: String, a: Value, b: Value, min: Option<f64>, max: Option<f64> },
    /// a − b within [min, max] along sweep key `over`, in the metric's unit.
    Difference { over: String, a: Value, b: Value, min: Option<f64>, max: Option<f64> },
    /// The mean over the points of a − b (values of sweep key `over`) within [min, max]; with `versus`, that mean
    /// minus the same mean in the other file (Welch's test, or paired by position with `by_position`).
    MeanDifference {
        over: String,
        a: Value,
        b: Value,
        min: Option<f64>,
        max: Option<f64>,
        versus: Option<String>,
        by_position: bool,
    },
    /// This file's point minus the other file's within [min, max].
    Versus { scenario: String, min: Option<f64>, max: Option<f64> },
}

/// What scenarios may name: the agent kinds and their policies, and the workload models (by default gridmarket's
/// own). The command line runs over one ([`crate::cli::main`]).
#[derive(Clone, Debug, Default)]
pub struct Plugins {
    /// The agent kinds and the policies registered for them.
    pub registry: Registry,
    /// The workload models.
    pub workloads: WorkloadRegistry,
}

/// How to load: the agent kinds, the workload models, `--quick` and `--set` overrides.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// The agent kinds scenarios may use (default: gridmarket's own).
    pub registry: Registry,
    /// The workload models scenarios may use (default: gridmarket's own).
    pub workloads: WorkloadRegistry,
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
        Study::from_document(Document::load(path, &opts.registry)?, opts)
    }

    /// Checks every sweep point of `doc`, a scenario already parsed (from its file, or from text by the fuzz test).
    pub fn from_document(mut doc: Document, opts: &LoadOptions) -> Result<Study, ScenarioError> {
        let registry = &opts.registry;
        let path = &doc.path.clone();
        let spans = doc.spans.clone();
        // Keys given a value outside their own table, in the order applied: their errors are reported there.
        let mut overrides: Vec<(String, Override)> = Vec::new();
        let quick = doc.table.get("quick").and_then(Value::as_table).cloned();
        if opts.quick
            && let Some(quick) = &quick
        {
            for (key, value) in quick.clone() {
                doc.set(&key, value).map_err(|m| ScenarioError::at_key(&spans, &format!("quick.{key}"), m))?;
                overrides.push((key, Override::Quick));
            }
        }
        for (key, value) in &opts.set {
            doc.add(key, parse_value(value))
                .map_err(|m| ScenarioError::file(path, format!("--set {key}={value}: {m}")))?;
            overrides.push((key.clone(), Override::Arg(format!("--set {key}={value}"))));
        }
        if let Some(r) = opts.replications {
            doc.table.insert("replications".into(), Value::Integer(i64::from(r)));
            overrides.push(("replications".into(), Override::Arg(format!("--replications {r}"))));
        }
        // Check the base document first: its errors point at the file.
        let (base, ..) = read(&doc, registry, &opts.workloads).map_err(|e| relocate(e, &overrides, &spans))?;
        // In the order written (the tree keeps file order): the first key varies slowest.
        let mut sweep: Vec<(String, Vec<Value>)> = match doc.table.get("sweep") {
            Some(Value::Table(t)) => {
                t.iter().map(|(k, v)| (k.clone(), v.as_array().cloned().unwrap_or_default())).collect()
            }
            _ => Vec::new(),
        };
        // The command-line argument that gives `key` a value, if any: a swept or linked key cannot have one.
        let given = |key: &str| {
            let set = opts.set.iter().any(|(k, _)| k == key).then(|| format!("--set {key}"));
            set.or_else(|| (key == "replications" && opts.replications.is_some()).then(|| "--replications".into()))
        };
        // A table value's `label` names it in labels, columns and charts; it is no key of the table.
        for (key, values) in &sweep {
            let label = values.iter().filter_map(|v| v.as_table()?.get("label")).find(|l| !l.is_str());
            if let Some(l) = label {
                let m = format!("a swept table's `label` names it: expected a string, found {l}");
                return Err(ScenarioError::at_key(&spans, &format!("sweep.{key}"), m));
            }
        }
        for (_, values) in &mut sweep {
            label_tables(values);
        }
        for (key, values) in &sweep {
            if let Some(arg) = given(key) {
                let msg = format!("{arg}: this key is swept; drop it from [sweep] or drop {arg}");
                return Err(ScenarioError::file(path, msg));
            }
            if values.is_empty() {
                return Err(ScenarioError::at_key(&spans, &format!("sweep.{key}"), "expected at least one value"));
            }
            if key == "seed" {
                let m = "the seed is not swept: a point's replications run seeds seed, seed + 1, …, so the points \
                         would share runs' seeds, and points are compared on common seeds";
                let e = ScenarioError::at_key(&spans, "sweep.seed", m);
                return Err(e.hint("more independent runs: `replications`; another seed: `--seed`"));
            }
            let twice =
                (1..values.len()).find_map(|i| (0..i).find(|&j| same_value(&values[i], &values[j])).map(|j| (j, i)));
            if let Some((j, i)) = twice {
                let m =
                    format!("values {} and {} are the same: two points would be one run twice", values[j], values[i]);
                return Err(ScenarioError::at_key(&spans, &format!("sweep.{key}"), m));
            }
        }
        let linked = linked_keys(&doc, &sweep, &given, &spans)?;
        // Every point takes a swept or linked key's value from the sweep, so a `[quick]` value for it would be lost.
        let swept = sweep.iter().map(|(k, _)| (k, "swept".to_string()));
        let linked_to = linked.iter().flat_map(|(s, ks)| ks.iter().map(move |(k, _)| (k, format!("linked to `{s}`"))));
        for (key, how) in swept.chain(linked_to) {
            if let Some(q) = quick.iter().flat_map(|q| q.keys()).find(|q| overlap(q, key)) {
                let m = format!("`{key}` is {how}: the sweep would override this value at every point");
                return Err(ScenarioError::at_key(&spans, &format!("quick.{q}"), m));
            }
        }
        // Counted before any point is built.
        let sizes: Vec<usize> = sweep.iter().map(|(_, v)| v.len()).collect();
        let count = sizes.iter().try_fold(1usize, |n, &k| n.checked_mul(k).filter(|&n| n <= MAX_SWEEP_POINTS));
        if count.is_none() {
            let product = sizes.iter().map(|k| *k as f64).product::<f64>();
            let factors = sizes.iter().map(usize::to_string).collect::<Vec<_>>().join(" × ");
            let m = format!("{} points ({factors}), more than the limit of {MAX_SWEEP_POINTS}", approx(product));
            return Err(ScenarioError::at_key(&spans, "sweep", m));
        }
        // What does not determine a run is left out of the points (and of their hashes): the sweep itself, the
        // targets and sanity checks, the reduced sizes, the charts.
        for key in ["sweep", "linked", "quick", "expect", "check", "chart"] {
            doc.table.remove(key);
        }
        let mut traces = TraceCache::default();
        let mut warnings: Vec<ScenarioError> = Vec::new();
        if opts.quick && quick.is_none() {
            warnings
                .push(ScenarioError::file(path, "--quick: the scenario has no [quick] table; it runs at full size"));
        }
        let mut points = Vec::new();
        for (index, steps) in cartesian(&sweep).into_iter().enumerate() {
            let mut point_doc = doc.clone();
            let mut overrides = overrides.clone();
            let mut assignments = Vec::with_capacity(steps.len());
            for ((key, values), &step) in sweep.iter().zip(&steps) {
                point_doc
                    .set(key, unlabelled(&values[step]))
                    .map_err(|m| ScenarioError::at_key(&spans, &format!("sweep.{key}"), m))?;
                overrides.push((key.clone(), Override::Sweep));
                assignments.push((key.clone(), values[step].clone()));
                for (linked_key, values) in linked.get(key).into_iter().flatten() {
                    let table = format!("linked.{key}.{linked_key}");
                    point_doc
                        .set(linked_key, values[step].clone())
                        .map_err(|m| ScenarioError::at_key(&spans, &table, m))?;
                    overrides.push((linked_key.clone(), Override::Linked(table)));
                }
            }
            // An error about a swept key points at the sweep; any other names the point it appeared at.
            let at_point = |e: ScenarioError| {
                let mut e = relocate(e, &overrides, &spans);
                if !assignments.is_empty() && !e.key.as_deref().is_some_and(|k| k.starts_with("sweep.")) {
                    e.message = format!("{} (sweep point {})", e.message, label(&assignments));
                }
                e
            };
            let (raw, workloads, groups) = read(&point_doc, registry, &opts.workloads).map_err(at_point)?;
            let mut plan = Plan::build(&raw, &workloads, groups, registry, &spans, &mut traces).map_err(at_point)?;
            if let Some(seed) = opts.seed {
                plan.seed = seed;
            }
            let workload_notes =
                plan.workloads.iter().filter_map(|(name, w)| Some((format!("workloads.{name}.file"), w.note()?)));
            let group_notes = plan
                .groups
                .iter()
                .flat_map(|g| g.spec.notes().into_iter().map(move |n| (format!("{}.{}", g.kind.table(), g.name), n)));
            for (key, note) in workload_notes.chain(group_notes) {
                let warning = relocate(ScenarioError::at_key(&spans, &key, note), &overrides, &spans);
                if !warnings.contains(&warning) {
                    warnings.push(warning);
                }
            }
            let hash = fnv1a(toml::to_string(&point_doc.table).unwrap_or_default().as_bytes());
            points.push(Point { index, label: label(&assignments), assignments, plan, hash });
        }
        if points.len() > MAX_CHARTED_POINTS && points.iter().any(|p| p.plan.outputs.timeseries) {
            let m = format!(
                "{} sweep points: the per-point time charts (p<i>/*.svg) are drawn only for studies of at most \
                 {MAX_CHARTED_POINTS} points; timeseries.csv has the data",
                points.len()
            );
            warnings.push(ScenarioError::at_key(&spans, "sweep", m));
        }
        let most = |p: &Point| p.plan.precision.as_ref().map_or(p.plan.replications, |x| x.max_replications);
        let runs: u64 = points.iter().map(|p| u64::from(most(p))).sum();
        if runs > MAX_RUNS {
            let m = format!(
                "{runs} runs in all ({} sweep point(s) × replications), more than the limit of {MAX_RUNS}",
                points.len()
            );
            return Err(relocate(ScenarioError::at_key(&spans, "replications", m), &overrides, &spans));
        }
        let claims = |table: &str, raws: Vec<RawExpect>| {
            raws.into_iter()
                .enumerate()
                .map(|(i, e)| {
                    let others = [
                        (e.versus.as_ref().map(|v| &v.scenario), "versus.scenario"),
                        (e.mean_difference.as_ref().and_then(|d| d.versus.as_ref()), "mean-difference.versus"),
                    ];
                    for (other, key) in others {
                        let other = other.map(|o| path.with_file_name(o));
                        if let Some(other) = other.filter(|o| !o.is_file() || o == path) {
                            let m = format!("no other scenario {} beside this one", other.display());
                            return Err(ScenarioError::at_key(&spans, &format!("{table}.{i}.{key}"), m));
                        }
                    }
                    check_claim(e, &sweep, &points, table == "expect").map_err(|(k, m, hint)| {
                        let e = ScenarioError::at_key(&spans, &format!("{table}.{i}.{k}"), m);
                        match hint {
                            Some(h) => e.hint(h),
                            None => e,
                        }
                    })
                })
                .collect::<Result<Vec<Claim>, ScenarioError>>()
        };
        let targets = claims("expect", base.expect)?;
        let checks = claims("check", base.check.into_iter().map(RawExpect::from).collect())?;
        let charts = base
            .chart
            .iter()
            .enumerate()
            .map(|(i, c)| {
                check_chart(c, &sweep, &points).map_err(|(k, m)| {
                    let key = if k.is_empty() { format!("chart.{i}") } else { format!("chart.{i}.{k}") };
                    ScenarioError::at_key(&spans, &key, m)
                })
            })
            .collect::<Result<Vec<Chart>, ScenarioError>>()?;
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let name = base.name.clone().unwrap_or(stem);
        if let Err(m) = check_name(&name) {
            let e = match &base.name {
                Some(_) => ScenarioError::at_key(&spans, "name", m),
                None => ScenarioError::file(path, format!("the file's name, the scenario's name without `name`: {m}")),
            };
            return Err(e.hint("the name is the folder of the outputs, results/<name>: a plain file name"));
        }
        Ok(Study {
            path: path.to_path_buf(),
            name,
            description: base.description.clone(),
            source: base.source.clone(),
            sweep,
            points,
            targets,
            checks,
            charts,
            quick: opts.quick,
            warnings,
        })
    }
}

/// Where a key's value came from when not from its own table in the file.
#[derive(Clone, Debug)]
enum Override {
    /// The file's `[quick]` table (with `--quick`).
    Quick,
    /// A command-line argument (`--set key=<value>`, `--replications <n>`), as given.
    Arg(String),
    /// The file's `[sweep]` table.
    Sweep,
    /// The file's `[linked]` table, at this key.
    Linked(String),
}

/// Reports an error about an overridden key (or a key under it) where its value came from: the `[quick]` or
/// `[sweep]` entry, or the command-line argument.
fn relocate(mut e: ScenarioError, overrides: &[(String, Override)], spans: &Spans) -> ScenarioError {
    let Some(key) = e.key.clone() else { return e };
    let Some((set, origin)) = overrides.iter().rev().find(|(k, _)| {
        let under = |a: &str, b: &str| a.strip_prefix(b).is_some_and(|r| r.starts_with('.'));
        // A table the override added is not in the file: its errors are the override's too.
        key == *k || under(&key, k) || (under(k, &key) && spans.locate(&key).is_none())
    }) else {
        return e;
    };
    match origin {
        Override::Quick | Override::Sweep => {
            let table = if matches!(origin, Override::Quick) { "quick" } else { "sweep" };
            // A key inside a table the override sets: named in the message, the line being the override's.
            if let Some(inner) = key.strip_prefix(set.as_str()).and_then(|r| r.strip_prefix('.')) {
                e.message = format!("{inner}: {}", e.message);
            }
            e.key = Some(format!("{table}.{set}"));
            e.at = spans.locate(&format!("{table}.{set}"));
        }
        Override::Linked(table) => {
            e.at = spans.locate(table);
            e.key = Some(table.clone());
        }
        Override::Arg(arg) => {
            e.at = None;
            e.message = format!("{} (from {arg})", e.message);
        }
    }
    e
}

fn label(assignments: &[(String, Value)]) -> String {
    assignments.iter().map(|(k, v)| format!("{k}={}", show(v))).collect::<Vec<_>>().join(", ")
}

/// A value as a user would write it on the command line (strings unquoted); a table (a swept `pricing = { … }`) by
/// its `label` if it has one.
pub fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Table(t) if t.get("label").is_some_and(Value::is_str) => t["label"].as_str().unwrap_or_default().into(),
        other => other.to_string(),
    }
}

/// Names each unlabelled table of a swept list by what sets it apart from the others: the keys whose values differ
/// across the list, the first by its value when that is a string, the others as `key=value` (`{ rule = "demand", gain
/// = 0.5 }` beside `{ rule = "fixed" }` is `demand gain=0.5`). A list whose names would not tell its tables apart is
/// left as written.
fn label_tables(values: &mut [Value]) {
    let tables: Vec<&toml::Table> = values.iter().filter_map(Value::as_table).collect();
    if tables.len() != values.len() || tables.len() < 2 || tables.iter().all(|t| t.contains_key("label")) {
        return;
    }
    let mut keys: Vec<&String> = Vec::new();
    for key in tables.iter().flat_map(|t| t.keys()).filter(|k| *k != "label") {
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    let differing: Vec<&String> =
        keys.into_iter().filter(|k| tables.iter().any(|t| t.get(*k) != tables[0].get(*k))).collect();
    let name = |t: &toml::Table| -> String {
        let parts = differing.iter().filter_map(|k| Some((*k, t.get(*k)?)));
        let parts = parts.map(|(k, v)| match v {
            Value::String(s) if Some(&k) == differing.first() => s.clone(),
            other => format!("{k}={}", show(other)),
        });
        parts.collect::<Vec<_>>().join(" ")
    };
    let names: Vec<String> = tables.iter().map(|t| t.get("label").map_or_else(|| name(t), show)).collect();
    if names.iter().any(String::is_empty) || (1..names.len()).any(|i| names[..i].contains(&names[i])) {
        return;
    }
    for (value, name) in values.iter_mut().zip(names) {
        if let Value::Table(t) = value {
            t.entry("label").or_insert(Value::String(name));
        }
    }
}

/// A swept value as the scenario takes it: a table without the `label` that names it.
fn unlabelled(v: &Value) -> Value {
    match v {
        Value::Table(t) if t.contains_key("label") => {
            Value::Table(t.iter().filter(|(k, _)| *k != "label").map(|(k, v)| (k.clone(), v.clone())).collect())
        }
        other => other.clone(),
    }
}

/// Whether two values of a sweep key are the same: numbers as numbers (120 = 120.0), a labelled table as its label
/// (`order = ["fixed", "surge"]`), anything else as written.
pub fn same_value(a: &Value, b: &Value) -> bool {
    let number = |v: &Value| v.as_float().or_else(|| v.as_integer().map(|i| i as f64));
    let label = |v: &Value| v.as_table()?.get("label")?.as_str().map(String::from);
    match (number(a), number(b)) {
        (Some(x), Some(y)) => x == y,
        _ => match (a, b) {
            (Value::String(s), t) | (t, Value::String(s)) => label(t).is_some_and(|l| l == *s) || a == b,
            // A table as written is the swept table it names, whatever the label the sweep gave it.
            (Value::Table(_), Value::Table(_)) => unlabelled(a) == unlabelled(b),
            _ => a == b,
        },
    }
}

/// Every combination of the sweep values as the index of each key's value, the first key varying slowest.
fn cartesian(sweep: &[(String, Vec<Value>)]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new()];
    for (_, values) in sweep {
        out = out
            .into_iter()
            .flat_map(|prefix: Vec<usize>| {
                (0..values.len()).map(move |i| {
                    let mut p = prefix.clone();
                    p.push(i);
                    p
                })
            })
            .collect();
    }
    out
}

/// A key linked to a swept key, with one value for each of the swept key's.
type Linked = (String, Vec<Value>);

/// The `[linked]` table checked against the sweep: swept key → (key, one value per value of the swept key).
fn linked_keys(
    doc: &Document,
    sweep: &[(String, Vec<Value>)],
    given: &dyn Fn(&str) -> Option<String>,
    spans: &Spans,
) -> Result<BTreeMap<String, Vec<Linked>>, ScenarioError> {
    let mut linked = BTreeMap::new();
    let Some(Value::Table(table)) = doc.table.get("linked") else { return Ok(linked) };
    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    for (swept, keys) in table {
        let at = |key: &str| format!("linked.{swept}{key}");
        let Some((_, values)) = sweep.iter().find(|(k, _)| k == swept) else {
            let m = "not a key of [sweep]: linked keys step with a swept key";
            return Err(ScenarioError::at_key(spans, &at(""), m));
        };
        let mut steps = Vec::new();
        for (key, list) in keys.as_table().into_iter().flatten() {
            let list = list.as_array().cloned().unwrap_or_default();
            let at = at(&format!(".{key}"));
            if list.len() != values.len() {
                let m = format!(
                    "expected {} values, one for each value of the swept key; found {}",
                    values.len(),
                    list.len()
                );
                return Err(ScenarioError::at_key(spans, &at, m));
            }
            if sweep.iter().any(|(k, _)| k == key) {
                return Err(ScenarioError::at_key(
                    spans,
                    &at,
                    "this key is swept itself; a key is swept or linked, not both",
                ));
            }
            if let Some(other) = seen.insert(key, swept) {
                let m = format!("already linked to `{other}`; a key steps with one swept key");
                return Err(ScenarioError::at_key(spans, &at, m));
            }
            if let Some(arg) = given(key) {
                let m = format!("{arg}: this key is linked to the sweep; drop it from [linked] or drop {arg}");
                return Err(ScenarioError::file(&doc.path, m));
            }
            steps.push((key.clone(), list));
        }
        linked.insert(swept.clone(), steps);
    }
    Ok(linked)
}

/// Whether dotted keys `a` and `b` overlap: one names the other or a table holding it, a `*` in a part of either
/// standing for any run of characters (`local-*`).
fn overlap(a: &str, b: &str) -> bool {
    a.split('.').zip(b.split('.')).all(|(x, y)| super::document::glob(x, y) || super::document::glob(y, x))
}

/// Most sweep points whose runs draw their time charts: four SVGs a point, for 10,000 points, would be 40,000 files
/// nobody opens.
pub const MAX_CHARTED_POINTS: usize = 100;

/// Longest scenario name [characters]: it names a folder.
const MAX_NAME: usize = 100;

/// Why `name` cannot name a folder of outputs, if it cannot: empty, a path (`/`, `\`, `..`), hidden (a leading
/// `.`), too long, or holding a control character or an invisible formatting one (a right-to-left override would
/// show `evil\u{202e}txt.exe` as `evilexe.txt`).
fn check_name(name: &str) -> Result<(), String> {
    let invisible = |c: char| {
        matches!(c, '\u{ad}' | '\u{61c}' | '\u{180e}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}')
            || matches!(c, '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206f}' | '\u{feff}' | '\u{fff9}'..='\u{fffb}')
    };
    let shown = name.escape_default();
    if name.trim().is_empty() {
        Err("expected a name, found an empty one".into())
    } else if name.contains(['/', '\\']) || name == ".." {
        Err(format!("expected a name, found a path: \"{shown}\""))
    } else if name.starts_with('.') {
        Err(format!("expected a name that does not start with `.` (a hidden folder), found \"{shown}\""))
    } else if let Some(c) = name.chars().find(|&c| c.is_control() || invisible(c)) {
        Err(format!("expected a name without control or invisible characters, found U+{:04X} in \"{shown}\"", c as u32))
    } else if name.chars().count() > MAX_NAME {
        Err(format!("expected a name of at most {MAX_NAME} characters, found {}", name.chars().count()))
    } else {
        Ok(())
    }
}

/// FNV-1a: a stable hash (std's hasher may change between releases) for resuming runs.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// Checks a target (or, with `target` false, a sanity check read as one) against the sweep; an error is (key under
/// it, message, hint).
/// A chart of the report, checked against the sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    /// Title.
    pub title: String,
    /// What it draws.
    pub kind: ChartKind,
    /// The sweep points it shows.
    pub at: BTreeMap<String, Value>,
}

/// What a chart draws.
#[derive(Clone, Debug, PartialEq)]
pub enum ChartKind {
    /// Grouped bars: a group per metric (with its label), a bar per value of the first swept key.
    Bars {
        /// (metric, label).
        metrics: Vec<(String, String)>,
    },
    /// A metric against a numeric swept key, with reference values at its values.
    Lines {
        /// The metric.
        metric: String,
        /// The swept key.
        x: String,
        /// Reference values and their legend (none when empty).
        reference: Vec<f64>,
        /// The reference's legend.
        reference_label: String,
    },
    /// The standard deviation of the providers' utilisation over time.
    LoadDeviation,
}

/// `v` as sweep key `key` writes it (120 and 120.0 are one number), or why it is not one of its values, with the
/// values it takes as a hint.
fn sweep_value(sweep: &[(String, Vec<Value>)], key: &str, v: &Value) -> Result<Value, (String, Option<String>)> {
    let Some((_, values)) = sweep.iter().find(|(k, _)| k == key) else {
        return Err((format!("`{key}` is not a sweep key"), None));
    };
    values.iter().find(|x| same_value(x, v)).cloned().ok_or_else(|| {
        let all = values.iter().map(show).collect::<Vec<_>>().join(", ");
        (format!("{} is not a value of sweep key `{key}`", show(v)), Some(format!("`{key}` takes the values {all}")))
    })
}

/// The two values of a `relative`, `difference` or `mean-difference`, with the key they are values of.
fn pair((over, values): (String, Vec<Value>)) -> (String, [Value; 2]) {
    (over, values.try_into().expect("two values named"))
}

/// An `at` value of `key`: one of its swept values, or a list of them (the points at any of them), as the sweep
/// writes them.
fn sweep_at(sweep: &[(String, Vec<Value>)], key: &str, v: &Value) -> Result<Value, (String, Option<String>)> {
    let Value::Array(values) = v else { return sweep_value(sweep, key, v) };
    if values.is_empty() {
        return Err(("expected a value of the sweep key or a list of them, found an empty list".into(), None));
    }
    let mut out: Vec<Value> = Vec::with_capacity(values.len());
    for v in values {
        let v = sweep_value(sweep, key, v)?;
        if out.iter().any(|x| same_value(x, &v)) {
            return Err((format!("{} is listed twice", show(&v)), None));
        }
        out.push(v);
    }
    Ok(Value::Array(out))
}

/// Whether a point's value `of_point` is what an `at` value names: it, or one of a list.
pub fn at_names(at: &Value, of_point: &Value) -> bool {
    match at {
        Value::Array(values) => values.iter().any(|v| same_value(v, of_point)),
        v => same_value(v, of_point),
    }
}

/// Checks a `[[chart]]`: one kind, metrics this scenario measures, swept keys; an error names the key within it.
fn check_chart(c: &RawChart, sweep: &[(String, Vec<Value>)], points: &[Point]) -> Result<Chart, (String, String)> {
    let is_metric = |m: &str| points.iter().any(|p| metrics::is_metric(&p.plan, m));
    let values_of = |key: &str| sweep.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let mut at = BTreeMap::new();
    for (key, v) in &c.at {
        let value = sweep_at(sweep, key, v)
            .map_err(|(m, hint)| (format!("at.{key}"), hint.map_or(m.clone(), |h| format!("{m} ({h})"))))?;
        at.insert(key.clone(), value);
    }
    if sweep.is_empty() {
        return Err((String::new(), "a chart compares sweep points: the scenario has no `[sweep]`".into()));
    }
    let kind = match (c.metrics.is_empty(), &c.metric, &c.over_time) {
        (false, None, None) => {
            if !c.labels.is_empty() && c.labels.len() != c.metrics.len() {
                let m = format!("expected one label per metric ({}), found {}", c.metrics.len(), c.labels.len());
                return Err(("labels".into(), m));
            }
            if let Some((i, m)) = c.metrics.iter().enumerate().find(|(_, m)| !is_metric(m)) {
                return Err((format!("metrics.{i}"), format!("`{m}` is not a metric this scenario measures")));
            }
            let labels = c.labels.iter().chain(&c.metrics).cloned();
            ChartKind::Bars { metrics: c.metrics.iter().cloned().zip(labels).collect() }
        }
        (true, Some(metric), None) => {
            if !is_metric(metric) {
                return Err(("metric".into(), format!("`{metric}` is not a metric this scenario measures")));
            }
            let x =
                c.x.clone()
                    .ok_or(("x".to_string(), "required with `metric`: the swept key of the x axis".to_string()))?;
            let values = values_of(&x).ok_or(("x".to_string(), format!("`{x}` is not a sweep key")))?;
            if values.iter().any(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)).is_none()) {
                return Err(("x".into(), format!("`{x}` takes values that are not numbers")));
            }
            if !c.reference.is_empty() && c.reference.len() != values.len() {
                let m =
                    format!("expected one value per value of `{x}` ({}), found {}", values.len(), c.reference.len());
                return Err(("reference".into(), m));
            }
            let reference_label = c.reference_label.clone().unwrap_or_else(|| "reference".into());
            ChartKind::Lines { metric: metric.clone(), x, reference: c.reference.clone(), reference_label }
        }
        (true, None, Some(what)) if what == "load-deviation" => ChartKind::LoadDeviation,
        (true, None, Some(what)) => {
            return Err(("over-time".into(), format!("expected \"load-deviation\", found \"{what}\"")));
        }
        _ => return Err((String::new(), "give exactly one of `metrics`, `metric` (with `x`) or `over-time`".into())),
    };
    Ok(Chart { title: c.title.clone(), kind, at })
}

fn check_claim(
    e: RawExpect,
    sweep: &[(String, Vec<Value>)],
    points: &[Point],
    target: bool,
) -> Result<Claim, (String, String, Option<String>)> {
    // A misspelt metric would only show as "not measured" once every run is done.
    if !points.iter().any(|p| metrics::is_metric(&p.plan, &e.metric)) {
        let names = points.first().map(|p| metrics::metric_names(&p.plan, &e.metric)).unwrap_or_default();
        let hint = did_you_mean(&e.metric, names.iter().map(String::as_str)).map(|m| format!("did you mean `{m}`?"));
        let m = format!("`{}` is not a metric this scenario measures", e.metric);
        return Err(("metric".into(), m, hint.or(Some("the metrics are the keys of a run's summary.json".into()))));
    }
    let bounds = [
        ("range", e.range.map(|[lo, hi]| (Some(lo), Some(hi)))),
        ("relative", e.relative.as_ref().map(|r| (r.min, r.max))),
        ("difference", e.difference.as_ref().map(|r| (r.min, r.max))),
        ("mean-difference", e.mean_difference.as_ref().map(|d| (d.min, d.max))),
        ("versus", e.versus.as_ref().map(|v| (v.min, v.max))),
    ];
    for (key, bound) in bounds {
        if let Some((Some(lo), Some(hi))) = bound
            && (lo > hi || lo.is_nan() || hi.is_nan())
        {
            let m = format!("expected low <= high, found {} > {}", short(lo), short(hi));
            return Err((key.into(), m, None));
        }
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
    let member = |key: &str, v: &Value, path: String| {
        sweep_value(sweep, key, v).map_err(|(m, hint)| (path, m, hint.or_else(swept)))
    };
    let mut at = BTreeMap::new();
    for (key, v) in &e.at {
        let path = format!("at.{key}");
        let value = sweep_at(sweep, key, v).map_err(|(m, hint)| (path, m, hint.or_else(swept)))?;
        at.insert(key.clone(), value);
    }
    // The sweep key of `order`, `relative`, `difference` and `mean-difference`, with the values they name as the sweep
    // writes them; two of them the same would compare a point with itself.
    let over = |listed: &[&Value], key: &str| {
        let Some(over) = e.over.clone() else {
            let m = "required with `order`, `relative`, `difference` and `mean-difference`: the sweep key they compare \
                     the points along";
            return Err(("over".to_string(), m.to_string(), swept()));
        };
        if values_of(&over).is_none() {
            return Err(("over".to_string(), format!("`{over}` is not a sweep key"), swept()));
        }
        let mut values: Vec<Value> = Vec::with_capacity(listed.len());
        for v in listed {
            let v = member(&over, v, key.to_string())?;
            if values.iter().any(|x| same_value(x, &v)) {
                return Err((
                    key.to_string(),
                    format!("{} is named twice: a point compared with itself", show(&v)),
                    None,
                ));
            }
            values.push(v);
        }
        Ok((over, values))
    };
    // A band open on both sides is judged against (−∞, ∞) and can only pass.
    let banded = |table: &str, min: Option<f64>, max: Option<f64>| {
        if min.is_none() && max.is_none() {
            let m = format!("`{table}` needs `min`, `max` or both: without a bound it claims nothing");
            return Err((table.to_string(), m, None));
        }
        Ok(())
    };
    let given = [e.value.is_some(), e.range.is_some(), e.order.is_some(), e.relative.is_some()];
    let given = given.into_iter().chain([e.difference.is_some(), e.mean_difference.is_some(), e.versus.is_some()]);
    if given.filter(|g| *g).count() != 1 {
        let m = if target {
            "give exactly one of `value`, `range`, `order`, `relative`, `difference`, `mean-difference` or `versus`"
        } else {
            "give exactly one of `value`, `range`, `order` or `versus`"
        };
        return Err(("metric".into(), m.into(), None));
    }
    let test = if let Some(value) = e.value {
        let tol = e.abs_tol.map_or(0.0, |t| t.0).max(e.rel_tol.map_or(0.0, |t| t.0 * value.abs()));
        Test::Value { value, tol }
    } else if let Some([lo, hi]) = e.range {
        Test::Range { lo, hi }
    } else if let Some(values) = &e.order {
        if values.len() < 2 {
            let m = format!("expected at least two values to order, found {}", values.len());
            let hint = "an order compares points: name two values of `over` or more";
            return Err(("order".into(), m, Some(hint.into())));
        }
        let (over, values) = over(&values.iter().collect::<Vec<_>>(), "order")?;
        Test::Order { over, values }
    } else if let Some(r) = &e.relative {
        banded("relative", r.min, r.max)?;
        let (over, [a, b]) = pair(over(&[&r.a, &r.b], "relative")?);
        Test::Relative { over, a, b, min: r.min, max: r.max }
    } else if let Some(r) = &e.difference {
        banded("difference", r.min, r.max)?;
        let (over, [a, b]) = pair(over(&[&r.a, &r.b], "difference")?);
        Test::Difference { over, a, b, min: r.min, max: r.max }
    } else if let Some(d) = &e.mean_difference {
        banded("mean-difference", d.min, d.max)?;
        if d.by_position && d.versus.is_none() {
            let m = "`by-position` pairs this file's points with another's: give `versus` too";
            return Err(("mean-difference.by-position".into(), m.into(), None));
        }
        let (over, [a, b]) = pair(over(&[&d.a, &d.b], "mean-difference")?);
        Test::MeanDifference {
            over,
            a,
            b,
            min: d.min,
            max: d.max,
            versus: d.versus.clone(),
            by_position: d.by_position,
        }
    } else if let Some(v) = &e.versus {
        banded("versus", v.min, v.max)?;
        Test::Versus { scenario: v.scenario.clone(), min: v.min, max: v.max }
    } else {
        unreachable!("exactly one test is given")
    };
    let source = e.source.filter(|s| !s.trim().is_empty());
    if target && source.is_none() {
        let m = "a target needs a `source`: the figure or table it comes from and the value it shows";
        let hint = "a claim that holds by construction (a job count, a ratio in [0, 1]) is a `[[check]]`";
        return Err(("source".into(), m.into(), Some(hint.into())));
    }
    let banded = e.abs_tol.is_some()
        || e.rel_tol.is_some()
        || e.range.is_some()
        || e.relative.is_some()
        || e.difference.is_some()
        || e.mean_difference.is_some();
    let tolerance = e.tolerance.filter(|t| !t.trim().is_empty());
    if target && banded && tolerance.is_none() {
        let m = "required with `abs-tol`, `rel-tol`, `range`, `relative`, `difference` and `mean-difference`: where \
                 the band comes from";
        let hint = "the paper's CI, the variance it reports, or a stated modelling allowance";
        return Err(("tolerance".into(), m.into(), Some(hint.into())));
    }
    if e.conflict.as_ref().is_some_and(|c| c.trim().is_empty()) {
        let m = "say how the source contradicts itself on this claim";
        return Err(("conflict".into(), m.into(), None));
    }
    if e.hypothesis && e.conflict.is_some() {
        let m = "a hypothesis of our own is not a source contradicting itself: give `hypothesis` or `conflict`";
        return Err(("hypothesis".into(), m.into(), None));
    }
    Ok(Claim {
        metric: e.metric,
        source: source.unwrap_or_default(),
        tolerance: tolerance.unwrap_or_default(),
        at,
        test,
        conflict: e.conflict,
        hypothesis: e.hypothesis,
    })
}

/// One agent group as written: its kind, its name, and its table read by the kind.
pub struct Group {
    /// Its kind.
    pub kind: &'static dyn AgentKind,
    /// Its name (the key under the kind's table).
    pub name: String,
    /// Its place among its kind's groups in the file.
    pub listed: usize,
    /// Its table, read.
    pub raw: Box<dyn RawGroup>,
}

/// A scenario's workloads as read, by name.
pub type RawWorkloads = BTreeMap<String, RawWorkload>;

/// Reads the scenario's own keys, its workloads with the models of `models` (by name), and, for each kind of
/// `registry`, its groups (in name order).
fn read(
    doc: &Document,
    registry: &Registry,
    models: &WorkloadRegistry,
) -> Result<(RawScenario, RawWorkloads, Vec<Group>), ScenarioError> {
    let mut own = doc.table.clone();
    let mut groups = Vec::new();
    for &kind in registry.kinds() {
        let table = kind.table();
        let Some(section) = own.remove(table) else { continue };
        let Value::Table(section) = section else {
            return Err(ScenarioError::at_key(&doc.spans, table, "expected a table of groups"));
        };
        let mut section: Vec<(usize, (String, Value))> = section.into_iter().enumerate().collect();
        section.sort_by(|a, b| a.1.0.cmp(&b.1.0));
        for (listed, (name, value)) in section {
            let raw = kind.parse(value).map_err(|mut e| {
                // Merged away before parsing, `profile` is a key of every group all the same.
                if e.path.len() == 1 && e.message.starts_with("unknown field") {
                    e.message.push_str(", `profile`");
                }
                let path = [table.to_string(), name.clone()].into_iter().chain(e.path).collect();
                doc.error_at(path, e.message)
            })?;
            groups.push(Group { kind, name, listed, raw });
        }
    }
    let raw: RawScenario = doc.deserialize_table(own).map_err(|mut e| {
        // The kinds' tables are keys of the scenario too.
        if e.key.as_ref().is_some_and(|k| !k.contains('.')) && e.message.starts_with("unknown key") {
            for kind in registry.kinds() {
                e.message.push_str(&format!(", `{}`", kind.table()));
            }
            let word = e.key.clone().unwrap_or_default();
            if e.hint.is_none()
                && let Some(m) = did_you_mean(&word, registry.kinds().iter().map(|k| k.table()))
            {
                e = e.hint(format!("did you mean `{m}`?"));
            }
        }
        // Scenarios written before targets were judged on their whole CI.
        if e.key.as_ref().is_some_and(|k| k.starts_with("expect.") && k.ends_with(".within-ci")) {
            e = e.hint("a value target now passes only when its whole 95% CI lies within the tolerance: drop the key");
        }
        e
    })?;
    let mut workloads = BTreeMap::new();
    for (name, table) in &raw.workloads {
        let w = RawWorkload::parse(models, table.clone()).map_err(|e| {
            let path = ["workloads".to_string(), name.clone()].into_iter().chain(e.path).collect();
            doc.error_at(path, e.message)
        })?;
        workloads.insert(name.clone(), w);
    }
    Ok((raw, workloads, groups))
}

/// The key and message of the first cycle among the groups' `forwards_to` links (each such group is one agent), in
/// the order of the groups: the key is that of the cycle's first link.
fn forwarding_cycle(plans: &[GroupPlan]) -> Option<(String, String)> {
    let next = |name: &str| plans.iter().find(|g| g.name == name)?.spec.forwards_to().map(|(_, to)| to);
    for start in plans {
        let Some((key, _)) = start.spec.forwards_to() else { continue };
        let mut path = vec![start.name.clone()];
        while let Some(to) = next(path.last()?) {
            let closed = to == start.name;
            let seen = path.contains(&to);
            path.push(to);
            if closed {
                let m = format!(
                    "forwarding cycle {}: a request no broker accepts would be passed round for ever",
                    path.join(" → ")
                );
                return Some((format!("{}.{}.{key}", start.kind.table(), start.name), m));
            }
            if seen {
                break;
            }
        }
    }
    None
}

impl Plan {
    /// Fills defaults and resolves names, checking `workloads` (the scenario's, as read); `spans` locates errors in
    /// the scenario file, `traces` holds the trace files read so far (each is read once per study).
    pub fn build(
        raw: &RawScenario,
        workloads: &RawWorkloads,
        groups: Vec<Group>,
        registry: &Registry,
        spans: &Spans,
        traces: &mut TraceCache,
    ) -> Result<Plan, ScenarioError> {
        // Every error here is about a value (a name, a reference, an option): point at it.
        let err = |key: &str, msg: String| ScenarioError {
            at: spans.locate_value(key),
            ..ScenarioError::at_key(spans, key, msg)
        };
        if groups.is_empty() {
            let tables: Vec<String> = registry.kinds().iter().map(|k| format!("`[{}.<name>]`", k.table())).collect();
            let m = format!("no agents: there is nothing to simulate (add groups: {})", tables.join(", "));
            return Err(ScenarioError::file(spans.file(), m));
        }
        let base = spans.file().parent().unwrap_or(Path::new(".")).to_path_buf();

        let workloads = workloads
            .iter()
            .map(|(name, w)| {
                let plan = WorkloadPlan::check(w, &base, traces);
                Ok((name.clone(), plan.map_err(|(k, m)| err(&format!("workloads.{name}.{k}"), m))?))
            })
            .collect::<Result<BTreeMap<String, WorkloadPlan>, ScenarioError>>()?;

        // Groups are named and counted, their members never listed: a group of one is named after the group,
        // larger groups' members `<group>-0`, `<group>-1`...
        let mut members: Vec<GroupMembers> = Vec::new();
        let mut agents = 0usize;
        for g in &groups {
            let key = format!("{}.{}", g.kind.table(), g.name);
            let group = &g.name;
            if group.is_empty() || !group.chars().all(|c| c.is_alphanumeric() || c == '-' || c == '_') {
                return Err(err(&key, format!("group name `{group}`: use letters, digits, `-` and `_` only")));
            }
            if members.iter().any(|m| m.group == *group) {
                return Err(err(&key, format!("`{group}` names two groups; group names must be unique")));
            }
            let count = g.raw.count();
            agents += count;
            if agents > MAX_AGENTS {
                let m = format!("{count} more agents make {agents}, more than the limit of {MAX_AGENTS} per scenario");
                return Err(err(&format!("{key}.count"), m));
            }
            members.push(GroupMembers { kind: g.kind.name(), group: group.clone(), count, listed: g.listed });
        }
        // An agent's name is its group's, or `<group>-<i>` in a larger group: found by the group's name.
        let by_name: BTreeMap<&str, &GroupMembers> = members.iter().map(|m| (m.group.as_str(), m)).collect();
        let member_of_larger = |name: &str| {
            let (group, _) = name.rsplit_once('-')?;
            by_name.get(group).filter(|g| g.count > 1)?.index_of(name)
        };
        for (g, m) in groups.iter().zip(&members).filter(|(_, m)| m.count == 1) {
            if member_of_larger(&m.group).is_some() {
                let key = format!("{}.{}", g.kind.table(), g.name);
                return Err(err(&key, format!("agent name `{}` is used twice", m.group)));
            }
        }
        let is_agent = |name: &str| by_name.get(name).is_some_and(|g| g.count == 1) || member_of_larger(name).is_some();
        let agent_hint = |name: &str| {
            let names: Vec<String> = members.iter().flat_map(|m| m.all().names().collect::<Vec<_>>()).collect();
            did_you_mean(name, names.iter().map(String::as_str)).map(|m| format!("did you mean `{m}`?"))
        };

        let workload_names: Vec<String> = raw.workloads.keys().cloned().collect();
        let mut plans = Vec::new();
        for (g, m) in groups.iter().zip(&members) {
            let cx = CheckCx { registry, group: &g.name, groups: &members, workloads: &workload_names };
            let spec: Arc<dyn GroupSpec> = g
                .raw
                .check(&cx)
                .map_err(|p| {
                    let key = [g.kind.table(), g.name.as_str(), p.key.as_str()].into_iter().filter(|k| !k.is_empty());
                    let e = err(&key.collect::<Vec<_>>().join("."), p.message);
                    match p.hint {
                        Some(h) => e.hint(h),
                        None => e,
                    }
                })?
                .into();
            if raw.horizon.is_none()
                && let Some(why) = spec.perpetual()
            {
                let m = format!("required: {}.{} {why}, so the run would never end", g.kind.table(), g.name);
                return Err(ScenarioError::at_key(spans, "horizon", m).hint("set `horizon` to the simulated seconds"));
            }
            plans.push(GroupPlan { kind: g.kind, name: g.name.clone(), count: m.count, spec });
        }
        // What agents do periodically, over the horizon: bounded whatever period each key allows on its own.
        if let Some(h) = raw.horizon.map(|h| h.0) {
            let each = plans
                .iter()
                .flat_map(|g| g.spec.periods().into_iter().map(move |(key, p)| (g, key, g.count as f64 * h / p)));
            let total: f64 = each.clone().map(|(_, _, n)| n).sum();
            if total > MAX_PERIODIC_EVENTS
                && let Some((g, key, n)) = each.max_by(|a, b| a.2.total_cmp(&b.2))
            {
                let m = format!(
                    "{} periodic events over the horizon of {} s ({} of them from this key of {} agent(s)), more than \
                     the limit of {}",
                    approx(total),
                    short(h),
                    approx(n),
                    g.count,
                    short(MAX_PERIODIC_EVENTS)
                );
                let e = err(&format!("{}.{}.{key}", g.kind.table(), g.name), m);
                return Err(e.hint("a longer period, or a shorter `horizon`"));
            }
        }

        forwarding_cycle(&plans).map_or(Ok(()), |(key, m)| Err(err(&key, m)))?;

        let mut latency = Vec::new();
        if let Some(d) = raw.latency.default {
            latency.push(LatencyRule::Default(d.0));
        }
        let kinds: Vec<&str> = registry.kinds().iter().map(|k| k.name()).collect();
        for (i, l) in raw.latency.kinds.iter().enumerate() {
            for (end, field) in [(&l.from, "from"), (&l.to, "to")] {
                if !kinds.contains(&end.as_str()) {
                    let e = err(&format!("latency.kinds.{i}.{field}"), format!("`{end}` is not an agent kind"));
                    let all = format!("the kinds are {}", kinds.join(", "));
                    return Err(e.hint(match did_you_mean(end, kinds.iter().copied()) {
                        Some(m) => format!("did you mean `{m}`? ({all})"),
                        None => all,
                    }));
                }
            }
            if plans.iter().any(|g| g.kind.name() == l.from) && plans.iter().any(|g| g.kind.name() == l.to) {
                latency.push(LatencyRule::Kinds(l.from.clone(), l.to.clone(), l.secs.0));
            }
        }
        for (i, l) in raw.latency.pairs.iter().enumerate() {
            for (end, field) in [(&l.from, "from"), (&l.to, "to")] {
                if !is_agent(end) {
                    let e = err(&format!("latency.pairs.{i}.{field}"), format!("no agent named `{end}`"));
                    return Err(match agent_hint(end) {
                        Some(h) => e.hint(h),
                        None => e,
                    });
                }
            }
            latency.push(LatencyRule::Pair(l.from.clone(), l.to.clone(), l.secs.0));
        }
        if raw.outputs.parquet && !cfg!(feature = "parquet") {
            let why = "this gridmarket was built without Parquet output: build it with `cargo build --release --features \
                       parquet`, or leave the tables as CSV";
            return Err(err("outputs.parquet", why.to_string()));
        }
        for (i, a) in raw.outputs.trace_agents.iter().enumerate() {
            if !is_agent(a) {
                let e = err(&format!("outputs.trace-agents.{i}"), format!("no agent named `{a}`"));
                return Err(match agent_hint(a) {
                    Some(h) => e.hint(h),
                    None => e,
                });
            }
        }
        let horizon = raw.horizon.map(|h| h.0);
        let sample_period = raw.sample_period.map(|p| p.0);
        let providers: usize =
            plans.iter().filter(|g| g.kind.name() == agents::provider::kind::KIND).map(|g| g.count).sum();
        if let Some(k) = raw.contention_k.map(|k| k.0 as usize).filter(|&k| k > providers.max(1)) {
            let m = format!("{k} cheapest providers, but the scenario has {providers}: the index would count them all");
            return Err(err("contention-k", m));
        }
        let market_window = raw.market_window.map(|[from, to]| (from.0, to.0));
        if let Some((from, to)) = market_window.filter(|(from, to)| from >= to) {
            let m = format!("expected [from, to] with from < to, found [{}, {}]", short(from), short(to));
            return Err(err("market-window", m));
        }
        if let (Some(h), Some(p)) = (horizon, sample_period)
            && h / p > MAX_SAMPLES
        {
            let m = format!(
                "{} s samples the horizon of {} s {} times, more than the limit of {} per provider",
                short(p),
                short(h),
                approx(h / p),
                short(MAX_SAMPLES)
            );
            return Err(err("sample-period", m));
        }
        let precision = match &raw.precision {
            None => None,
            Some(p) if p.max_replications.0 < raw.replications.0 => {
                let m = format!(
                    "expected at least `replications` ({}), found {}",
                    raw.replications.0, p.max_replications.0
                );
                return Err(err("precision.max-replications", m));
            }
            Some(p) => Some(Precision {
                metric: p.metric.clone(),
                relative: p.relative.0,
                max_replications: p.max_replications.0,
            }),
        };
        let plan = Plan {
            registry: registry.clone(),
            seed: raw.seed,
            replications: raw.replications.0,
            precision,
            horizon,
            sample_period,
            contention_k: raw.contention_k.map_or(1, |k| k.0 as usize),
            market_window,
            warm_up: raw.warm_up.map_or(0, |n| n.0 as usize),
            runtime: raw.runtime,
            groups: plans,
            workloads,
            latency,
            outputs: raw.outputs.clone(),
        };
        if let Some(p) = &plan.precision
            && !metrics::is_metric(&plan, &p.metric)
        {
            let names = metrics::metric_names(&plan, &p.metric);
            let hint = did_you_mean(&p.metric, names.iter().map(String::as_str));
            let m = format!("`{}` is not a metric this scenario measures", p.metric);
            let e = err("precision.metric", m);
            return Err(match hint {
                Some(h) => ScenarioError { hint: Some(format!("did you mean `{h}`?")), ..e },
                None => e,
            });
        }
        Ok(plan)
    }

    /// Every agent, in registration order: groups as listed, members by index. Names are made as they are listed,
    /// so that a plan holds nothing per agent.
    pub fn agents(&self) -> impl Iterator<Item = AgentPlan<'_>> {
        self.groups.iter().flat_map(|g| {
            (0..g.count).map(move |index| AgentPlan {
                name: member_name(&g.name, g.count, index),
                kind: g.kind,
                group: &g.name,
                index,
                count: g.count,
                spec: &*g.spec,
            })
        })
    }

    /// How many agents.
    pub fn agent_count(&self) -> usize {
        self.groups.iter().map(|g| g.count).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::{LoadOptions, Precision, Study, overlap};
    use crate::stats::Summary;

    #[test]
    fn quick_keys_overlap_swept_keys_through_globs_and_tables() {
        assert!(overlap("workloads.local-c64.time-scale", "workloads.local-*.time-scale"));
        assert!(overlap("workloads.*.until", "workloads.local-c64.until"));
        assert!(overlap("providers.site", "providers.site.pes"), "a table holding the swept key");
        assert!(overlap("providers.site.pes", "providers"));
        assert!(!overlap("workloads.*.until", "workloads.local-c64.time-scale"));
        assert!(!overlap("providers.site.pes", "providers.site2.pes"));
    }

    #[test]
    fn the_market_window_is_read_and_a_window_that_ends_before_it_starts_is_refused() {
        let scenario = |window: &str| {
            let text = format!(
                "market-window = {window}\n[workloads.w]\nmodel = \"poisson\"\njobs = 10\nrate = 0.1\n\
                 runtime = {{ kind = \"constant\", value = 5.0 }}\n[providers.site]\npes = 4\n\
                 [brokers.user]\nworkload = \"w\"\nsubmit-to = \"site\"\n"
            );
            let path = std::env::temp_dir().join(format!("gridmarket-window-{}.toml", std::process::id()));
            std::fs::write(&path, text).unwrap();
            let study = Study::load(&path, &LoadOptions::default());
            std::fs::remove_file(&path).unwrap();
            study
        };
        assert_eq!(scenario("[600, 3600]").unwrap().points[0].plan.market_window, Some((600.0, 3600.0)));
        let refused = scenario("[3600, 600]").unwrap_err();
        assert_eq!((refused.key.as_deref(), refused.at.map(|a| a.0)), (Some("market-window"), Some(1)), "{refused}");
        assert_eq!(refused.message, "expected [from, to] with from < to, found [3600, 600]");
    }

    #[test]
    fn unlabelled_tables_are_named_by_what_sets_them_apart() {
        let names = |list: &str| {
            let mut values: toml::Value = toml::from_str(&format!("v = {list}")).unwrap();
            let values = values["v"].as_array_mut().unwrap();
            super::label_tables(values);
            values.iter().map(super::show).collect::<Vec<_>>()
        };
        let dam = "{ policy = \"dam\", interval = 50, age-unit = \"seconds\" }";
        let list = format!(
            "[{dam}, {{ policy = \"dam\", interval = 50, age-unit = \"cycles\" }}, {{ policy = \"sjf\", interval = 50 }}]"
        );
        assert_eq!(names(&list), ["dam age-unit=seconds", "dam age-unit=cycles", "sjf"]);
        // A number first is shown with its key; a label given is kept and counts among the names.
        let list = "[{ gain = 0.5, label = \"slow\" }, { gain = 2.5 }]";
        assert_eq!(names(list), ["slow", "gain=2.5"]);
        // Names that would not tell the tables apart leave them as written.
        let list = "[{ gain = 0.5, label = \"gain=2.5\" }, { gain = 2.5 }]";
        assert_eq!(names(list), ["gain=2.5", "{ gain = 2.5 }"]);
        assert_eq!(names("[1, { gain = 2.5 }]"), ["1", "{ gain = 2.5 }"]);
    }

    #[test]
    fn a_swept_table_is_named_by_its_label_and_the_label_is_no_key_of_it() {
        let load = |values: &str| {
            let text = format!(
                "horizon = 7200\n[workloads.w]\nmodel = \"poisson\"\njobs = 10\nrate = 0.1\n\
                 runtime = {{ kind = \"constant\", value = 5.0 }}\n[providers.site]\npes = 4\nprice = 2\n\
                 [brokers.user]\nworkload = \"w\"\nsubmit-to = \"site\"\n\
                 [sweep]\n\"providers.site.pricing\" = {values}\n"
            );
            let path = std::env::temp_dir().join(format!("gridmarket-labels-{}.toml", std::process::id()));
            std::fs::write(&path, text).unwrap();
            let study = Study::load(&path, &LoadOptions::default());
            std::fs::remove_file(&path).unwrap();
            study
        };
        let study = load("[{ rule = \"fixed\", label = \"flat\" }, { rule = \"demand\", gain = 0.5 }]").unwrap();
        let labels: Vec<&str> = study.points.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels, ["providers.site.pricing=flat", "providers.site.pricing=demand gain=0.5"]);
        let flat = &study.points[0].assignments[0].1;
        assert!(super::same_value(flat, &toml::Value::from("flat")) && !super::same_value(flat, &"fixed".into()));
        // The table as written still names its point.
        let written: toml::Value = toml::from_str("t = { rule = \"demand\", gain = 0.5 }").unwrap();
        assert!(super::same_value(&study.points[1].assignments[0].1, &written["t"]));
        let refused = load("[{ rule = \"fixed\", label = 1 }]").unwrap_err();
        assert_eq!(refused.key.as_deref(), Some("sweep.providers.site.pricing"));
        assert_eq!(refused.message, "a swept table's `label` names it: expected a string, found 1");
    }

    #[test]
    fn linked_keys_step_with_their_swept_key_and_add_no_points() {
        let text = "seed = 7\n[workloads.w]\nmodel = \"poisson\"\njobs = 10\nrate = 0.1\n\
                    runtime = { kind = \"constant\", value = 5.0 }\n[providers.site]\npes = 4\n\
                    [brokers.user]\nworkload = \"w\"\nsubmit-to = \"site\"\n\
                    [sweep]\n\"brokers.user.submit-to\" = [\"site\"]\n\"providers.site.pes\" = [4, 8, 16]\n\
                    [linked.\"providers.site.pes\"]\nseed = [1, 2, 3]\nreplications = [5, 6, 7]\n";
        let path = std::env::temp_dir().join(format!("gridmarket-linked-{}.toml", std::process::id()));
        std::fs::write(&path, text).unwrap();
        let study = Study::load(&path, &LoadOptions::default());
        // The command line cannot give a linked key a value the sweep would then override.
        let given = Study::load(&path, &LoadOptions { replications: Some(9), ..Default::default() });
        std::fs::remove_file(&path).unwrap();
        let message = given.unwrap_err().message;
        assert_eq!(
            message,
            "--replications: this key is linked to the sweep; drop it from [linked] or drop --replications"
        );
        let study = study.unwrap();
        let got: Vec<_> = study.points.iter().map(|p| (p.label.as_str(), p.plan.seed, p.plan.replications)).collect();
        assert_eq!(
            got,
            [
                ("brokers.user.submit-to=site, providers.site.pes=4", 1, 5),
                ("brokers.user.submit-to=site, providers.site.pes=8", 2, 6),
                ("brokers.user.submit-to=site, providers.site.pes=16", 3, 7),
            ]
        );
    }

    #[test]
    fn a_target_precision_asks_for_replications_as_the_half_width_shrinks() {
        let p = Precision { metric: "b".into(), relative: 0.05, max_replications: 100 };
        // Mean 0.5, so a half-width of 0.025 or less will do.
        let wide = Summary::of(&[0.4, 0.6]);
        assert!(wide.ci95 > 0.025);
        let n = p.needed(&wide);
        assert!(n > 2 && n <= 100, "{n}");
        let narrow = Summary::of(&[0.5, 0.501, 0.499, 0.5]);
        assert_eq!(p.needed(&narrow), 4);
        // At the cap, no more.
        let capped = Precision { max_replications: 2, ..p.clone() };
        assert_eq!(capped.needed(&wide), 2);
        // One run has no interval: at least one more.
        assert!(p.needed(&Summary::of(&[0.5])) >= 2);
    }

    #[test]
    fn a_star_names_a_kinds_groups_in_the_order_the_file_lists_them() {
        let dc =
            "cpus = 4\nbeta = 65\nalpha = 7.5\nf-max = 1.8\ncarbon-rate = 0.1\nelectricity-price = 0.1\ncop = 1.0\n";
        let text = format!(
            "seed = 1\n[workloads.w]\nmodel = \"poisson\"\njobs = 1\nrate = 0.1\n\
             runtime = {{ kind = \"constant\", value = 5.0 }}\n[datacentres.zeta]\n{dc}[datacentres.alpha]\n{dc}\
             [energy-metabrokers.mb]\npolicy = \"gmce\"\ndatacentres = [\"*\"]\n\
             [brokers.user]\nworkload = \"w\"\nmetabroker = \"mb\"\n"
        );
        let path = std::env::temp_dir().join(format!("gridmarket-listed-{}.toml", std::process::id()));
        std::fs::write(&path, text).unwrap();
        let study = Study::load(&path, &LoadOptions::default());
        std::fs::remove_file(&path).unwrap();
        let plan = &study.unwrap().points[0].plan;
        // Agents are in name order; the meta-broker's data centres in the file's.
        let names: Vec<&str> = plan.groups.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["alpha", "zeta", "mb", "user"]);
        let mb = format!("{:?}", plan.groups.iter().find(|g| g.name == "mb").unwrap().spec);
        let (zeta, alpha) = (mb.find("\"zeta\"").unwrap(), mb.find("\"alpha\"").unwrap());
        assert!(zeta < alpha, "{mb}");
    }
}
