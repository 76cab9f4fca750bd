//! The scenario file, key by key, exactly as written (`RawScenario`), but for the agent groups, whose tables belong
//! to their kinds (`agents::registry`). Every field's doc is what `gridmarket schema` prints; defaults are filled in
//! and names resolved by [`super::Plan::build`].

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use super::workload::RawWorkload;
use agents::registry::values::{Delay, NonNegative, Replications, Seconds};

/// A scenario: who is in the market, what they run, for how long, what to measure and what to expect.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawScenario {
    /// Human-readable name (default: the file name without `.toml`).
    pub name: Option<String>,
    /// What the scenario studies, in a sentence or two.
    pub description: Option<String>,
    /// Where its setup and targets come from (e.g. "seed 000, §4.5").
    pub source: Option<String>,
    /// Master seed: every random stream (agents, workloads) derives from it. Replication r uses seed + r (modulo
    /// 2^64). At most 2^63 − 1, the largest TOML integer; `--seed` takes any 64-bit seed.
    #[serde(default)]
    pub seed: u64,
    /// Independent runs per sweep point (seeds seed, seed+1, ...; at most 10,000, and 100,000 runs in all over the
    /// sweep points); means get a 95% confidence interval.
    #[serde(default = "Replications::one")]
    pub replications: Replications,
    /// End of the run [s of simulated time; at most 1e12]. Without it the run goes on until every job has ended
    /// (drained).
    pub horizon: Option<Seconds>,
    /// Period of `timeseries.csv` samples [s] (default: the end time / 100). At most a million samples per provider
    /// over the horizon; a run whose file would hold more than a million rows (a long drained run, many providers)
    /// is sampled less often.
    pub sample_period: Option<Seconds>,
    /// How agents are executed: "actix" (every agent an actor; default) or "inline" (one thread, no actors).
    #[serde(default)]
    pub runtime: RawRuntime,
    /// Workloads by name; broker groups refer to them.
    #[serde(default)]
    pub workloads: BTreeMap<String, RawWorkload>,
    /// Message latencies (zero unless set).
    #[serde(default)]
    pub latency: RawLatency,
    /// What each run writes.
    #[serde(default)]
    pub outputs: RawOutputs,
    /// Parameter sweep: dotted key → list of values; runs the cartesian product (at most 10,000 points).
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, Vec<serde_json::Value>>")]
    pub sweep: BTreeMap<String, Vec<toml::Value>>,
    /// Overrides applied by `--quick` (dotted key → value): reduced sizes fit for CI.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub quick: BTreeMap<String, toml::Value>,
    /// Targets checked by `gridmarket reproduce` (and reported by `run`).
    #[serde(default)]
    pub expect: Vec<RawExpect>,
}

/// The agent runtime.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RawRuntime {
    /// Every agent an actix actor (one thread).
    #[default]
    Actix,
    /// Every agent called directly on one thread; same results, faster.
    Inline,
}

/// Latencies between agents [s]: zero unless set here.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawLatency {
    /// Latency of every message between two different agents (at most 1e12 s, like every latency).
    pub default: Option<Delay>,
    /// Per pair of agent kinds ("provider", "broker", "gateway", "metabroker"...): overrides the default.
    #[serde(default)]
    pub kinds: Vec<RawLink>,
    /// Per pair of agents (names): overrides kinds and default.
    #[serde(default)]
    pub pairs: Vec<RawLink>,
}

/// One directed link's latency.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawLink {
    /// Sender (kind or agent name).
    pub from: String,
    /// Receiver (kind or agent name).
    pub to: String,
    /// Latency [s].
    pub secs: Delay,
}

/// What each run writes into its folder.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawOutputs {
    /// `jobs.csv`: one row per job (default true).
    #[serde(default = "yes")]
    pub jobs: bool,
    /// `timeseries.csv`: sampled provider state (default true).
    #[serde(default = "yes")]
    pub timeseries: bool,
    /// `ledger.csv`: every transfer of money (default true).
    #[serde(default = "yes")]
    pub ledger: bool,
    /// `trace.jsonl`: every delivered message (default false; can be large). Filter with `trace-agents` and
    /// `trace-kinds`.
    #[serde(default)]
    pub trace: bool,
    /// Keep only messages to or from these agents.
    #[serde(default)]
    pub trace_agents: Vec<String>,
    /// Keep only messages whose kind starts with one of these (`"job."`, `"market.sla_"`).
    #[serde(default)]
    pub trace_kinds: Vec<String>,
}

impl Default for RawOutputs {
    fn default() -> Self {
        RawOutputs {
            jobs: true,
            timeseries: true,
            ledger: true,
            trace: false,
            trace_agents: Vec::new(),
            trace_kinds: Vec::new(),
        }
    }
}

fn yes() -> bool {
    true
}

/// A target to check against the measured means: exactly one of `value`, `range`, `order` or `relative`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawExpect {
    /// The metric (a key of `summary.json`, e.g. `jobs.completed`, `providers.fast.utilisation`).
    pub metric: String,
    /// Where the target comes from (e.g. "seed 000, Table 3.1").
    pub source: Option<String>,
    /// The sweep point(s) it applies to (sweep key → value); default every point.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub at: BTreeMap<String, toml::Value>,
    /// Target value, met within `abs-tol` or `rel-tol` (default exact).
    pub value: Option<f64>,
    /// Absolute tolerance for `value`.
    pub abs_tol: Option<NonNegative>,
    /// Relative tolerance for `value` (fraction of the target).
    pub rel_tol: Option<NonNegative>,
    /// Also accept `value` when it lies inside the 95% confidence interval of the mean (analytic checks).
    #[serde(default)]
    pub within_ci: bool,
    /// Inclusive range [low, high] the mean must fall in.
    pub range: Option<[f64; 2]>,
    /// Ordering across the values of sweep key `over`: the mean is non-increasing along this list of values
    /// (write them best first, e.g. ["MOV", "MOML", "MLIP"] for "MOV ≥ MOML ≥ MLIP").
    #[serde(default)]
    #[schemars(with = "Option<Vec<serde_json::Value>>")]
    pub order: Option<Vec<toml::Value>>,
    /// The sweep key that `order` and `relative` range over.
    pub over: Option<String>,
    /// Relative difference between two values of `over`: (mean(a) − mean(b)) / |mean(b)| within [min, max].
    pub relative: Option<RawRelative>,
    /// Difference to another scenario of the same family at every point: mean(here) − mean(there) within
    /// [min, max], where "there" is the other file's point with the same values of the keys both sweep. Checked
    /// by `gridmarket reproduce`, which runs both files.
    pub versus: Option<RawVersus>,
}

/// "at least as many as the other file": `{ scenario = "personalised.toml", min = 0 }`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawVersus {
    /// The other scenario file, in the same folder.
    pub scenario: String,
    /// Lowest acceptable difference.
    pub min: Option<f64>,
    /// Highest acceptable difference.
    pub max: Option<f64>,
}

/// "a is at least 50% below b": `{ a = "MOML", b = "NOP", max = -0.5 }`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawRelative {
    /// The value of `over` compared.
    #[schemars(with = "serde_json::Value")]
    pub a: toml::Value,
    /// The value of `over` compared against.
    #[schemars(with = "serde_json::Value")]
    pub b: toml::Value,
    /// Lowest acceptable relative difference.
    pub min: Option<f64>,
    /// Highest acceptable relative difference.
    pub max: Option<f64>,
}
