//! The scenario file, key by key, exactly as written (`RawScenario`), but for the agent groups, whose tables belong
//! to their kinds (`agents::registry`), and the workloads, whose keys belong to their models
//! ([`super::workload::WorkloadRegistry`]). Every field's doc is what `gridmarket schema` prints; defaults are filled
//! in and names resolved by [`super::Plan::build`].

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use agents::registry::values::{Delay, JobCount, NonNegative, PositiveInt, Replications, Seconds};

/// A scenario: who is in the market, what they run, for how long, what to measure and what to expect.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawScenario {
    /// Human-readable name (default: the file name without `.toml`).
    pub name: Option<String>,
    /// What the scenario studies, in a sentence or two.
    pub description: Option<String>,
    /// Where its setup and targets come from (e.g. "Garg (2010), Meta Scheduling for Market-Oriented Grid and Utility Computing, §3.6").
    pub source: Option<String>,
    /// Master seed: every random stream (agents, workloads) derives from it. Replication r uses seed + r (modulo
    /// 2^64). At most 2^63 − 1, the largest TOML integer; `--seed` takes any 64-bit seed.
    #[serde(default)]
    pub seed: u64,
    /// Independent runs per sweep point (seeds seed, seed+1, ...; at most 10,000, and 100,000 runs in all over the
    /// sweep points); means get a 95% confidence interval.
    #[serde(default = "Replications::one")]
    pub replications: Replications,
    /// Replicate until a metric is known to a precision: after the `replications` first runs of a sweep point, more
    /// are run, in rounds, until the 95% CI half-width of `metric` there is at most `relative` × |its mean| (Melendez
    /// 2010 §4: 5% of the blocking ratio) or the point has `max-replications` runs.
    pub precision: Option<RawPrecision>,
    /// End of the run [s of simulated time; at most 1e12]. Without it the run goes on until every job has ended
    /// (drained).
    pub horizon: Option<Seconds>,
    /// Period of `timeseries.csv` samples \[s\] (default: the end time / 100). At most a million samples per provider
    /// over the horizon; a run whose file would hold more than a million rows (a long drained run, many providers)
    /// is sampled less often.
    pub sample_period: Option<Seconds>,
    /// The k of the contention index (`market.contention`): requests per free PE at the k cheapest providers, per
    /// sample interval (default 1, the cheapest).
    pub contention_k: Option<PositiveInt>,
    /// The window [from, to] \[s\] over which the market metrics of time (`market.contention`, `contention_peak`,
    /// `price`, `price_volatility`, `gini_load`, `cheapest_share`) are measured, to leave out a warm-up and the drain
    /// after arrivals stop (default: the whole run; a `to` past the run's end is its end), and so are each
    /// provider's `price_mean`, `price_settled`, `price_swing` and `price_alternation`. The metrics of money and
    /// jobs (`revenue`, `user_surplus`, `welfare`, `gini_surplus`, `sla_violations`, `refused_cheapest`) keep the
    /// whole run: `warm-up` leaves jobs out.
    pub market_window: Option<[Delay; 2]>,
    /// Steady-state measurement: the job metrics (`jobs.`, `brokers.`, `classes.`, `leases.`, `urgency.`,
    /// `valuation.`) leave out the first this many jobs submitted, a warm-up (Garg 2010 §7.4.2 discards the first
    /// 5,000 applications and measures the next 5,000). Default 0.
    pub warm_up: Option<JobCount>,
    /// How agents are executed: "actix" (every agent an actor; default) or "inline" (one thread, no actors).
    #[serde(default)]
    pub runtime: RawRuntime,
    /// Workloads by name; broker groups refer to them.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub workloads: BTreeMap<String, toml::Value>,
    /// Message latencies (zero unless set).
    #[serde(default)]
    pub latency: RawLatency,
    /// What each run writes.
    #[serde(default)]
    pub outputs: RawOutputs,
    /// Parameter sweep: dotted key → list of values; runs the cartesian product (at most 10,000 points). A `*` in a
    /// key stands for every table at its place: `"datacentres.*.dvs"` sets `dvs` in every data centre group, and
    /// `"workloads.local-*.time-scale"` `time-scale` in every workload whose name starts with `local-`. A value may be
    /// a whole table (`"providers.site.pricing" = [{ rule = "fixed" }, { rule = "demand", gain = 0.5 }]`); a table's
    /// `label = "…"` names it in labels, columns, charts and targets (`order = ["fixed", "demand"]`), and is not one
    /// of its keys; without one it is named by the keys that set it apart from the list's other tables (`demand
    /// gain=0.5` beside `fixed`), and shown as written if those would not tell the tables apart.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, Vec<serde_json::Value>>")]
    pub sweep: BTreeMap<String, Vec<toml::Value>>,
    /// Keys stepped together with a swept key, adding no points: `[linked."workloads.local-*.time-scale"]` with
    /// `"gateways.igg.locals" = [...]` gives the gateway the first of its values where the time scale takes its
    /// first, and so on (one value for each value of the swept key). Points are labelled by the swept keys only.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, BTreeMap<String, Vec<serde_json::Value>>>")]
    pub linked: BTreeMap<String, BTreeMap<String, Vec<toml::Value>>>,
    /// Overrides applied by `--quick` (dotted key → value): reduced sizes fit for CI.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub quick: BTreeMap<String, toml::Value>,
    /// Targets: claims of the source papers, judged on the 95% confidence intervals by `gridmarket reproduce` and
    /// `run`.
    #[serde(default)]
    pub expect: Vec<RawExpect>,
    /// Sanity checks: what holds by construction (a job count, a ratio in [0, 1]), checked on every run and reported
    /// apart from the targets.
    #[serde(default)]
    pub check: Vec<RawCheck>,
    /// Charts for the report of `gridmarket reproduce`, beside the chart of each target's metric.
    #[serde(default)]
    pub chart: Vec<RawChart>,
}

/// A chart: exactly one of `metrics` (grouped bars), `metric` with `x` (lines against a swept key) or `over-time`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawChart {
    /// The title; the SVG file is named after the scenario and it.
    pub title: String,
    /// Grouped bars: one group per metric, one bar per value of the first swept key (mean ± 95% CI), e.g. the
    /// success ratios of the urgency groups by policy.
    #[serde(default)]
    pub metrics: Vec<String>,
    /// The groups' labels, one per metric (default: the metrics).
    #[serde(default)]
    pub labels: Vec<String>,
    /// Lines: this metric against the swept key `x`, one line per combination of the other swept keys.
    pub metric: Option<String>,
    /// The swept key on the x axis, of numeric values.
    pub x: Option<String>,
    /// With `x`: reference values, one per value of `x` in sweep order (an analytic model's), drawn as a line.
    #[serde(default)]
    pub reference: Vec<f64>,
    /// The reference line's legend (default "reference").
    pub reference_label: Option<String>,
    /// "load-deviation": the standard deviation of the providers' utilisation over time (from `timeseries.csv`,
    /// mean ± 95% CI over the replications at each sample time), one line per value of the first swept key.
    pub over_time: Option<String>,
    /// The sweep points shown (sweep key → value); default every point.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub at: BTreeMap<String, toml::Value>,
}

/// A target precision: `{ metric = "sources.src.blocking", relative = 0.05, max-replications = 100 }`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawPrecision {
    /// The metric (a key of `summary.json`).
    pub metric: String,
    /// The largest 95% CI half-width, as a fraction of the mean's magnitude.
    pub relative: NonNegative,
    /// The most replications a point may have (at least `replications`).
    pub max_replications: Replications,
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

/// Latencies between agents \[s\]: zero unless set here.
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
    /// Latency \[s\].
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
    /// `schedule.csv`: the schedule in the columns of Batsim's jobs file, which Evalys reads (default true).
    /// PE ids are not tracked (a provider counts its free PEs), so `allocated_resources` is empty.
    #[serde(default = "yes")]
    pub schedule: bool,
    /// Write the run's tables (jobs, time series, schedule, ledger) as Apache Parquet (`.parquet`) instead of CSV,
    /// for large runs (default false; needs gridmarket built with `--features parquet`).
    #[serde(default)]
    pub parquet: bool,
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
    /// Groups of more than this many members (and of two or more) report their members' metrics only summed over the group, as
    /// `<table>.<group>.<metric>` (`brokers.user.paid`): `paid`, `received` and what the kind sums run-wide; the
    /// members' other metrics (prices, ratios) are left out. Keeps `summary.json` and `summary.csv` small with
    /// thousands of agents (default: every member reports its own).
    pub summed_above: Option<u32>,
}

impl Default for RawOutputs {
    fn default() -> Self {
        RawOutputs {
            jobs: true,
            timeseries: true,
            ledger: true,
            schedule: true,
            parquet: false,
            trace: false,
            trace_agents: Vec::new(),
            trace_kinds: Vec::new(),
            summed_above: None,
        }
    }
}

fn yes() -> bool {
    true
}

/// A target: a claim of a source, with exactly one of `value`, `range`, `order`, `relative`, `mean-difference` or
/// `versus`. Each passes when the 95% confidence interval of what it measures lies inside its band (or on its
/// claimed side), fails when the interval lies wholly outside, and is inconclusive otherwise (or with fewer than 2
/// replications, or 2 points for `mean-difference`). A target with `conflict` is reported the same way but not
/// scored.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawExpect {
    /// The metric (a key of `summary.json`, e.g. `jobs.completed`, `providers.fast.utilisation`).
    pub metric: String,
    /// Required: the figure or table and the value it shows (e.g. "Amini Salehi (2012) Table 3.1: −72.0%").
    pub source: Option<String>,
    /// Where the band comes from: the paper's CI, the variance it reports, or a stated modelling allowance.
    /// Required with `abs-tol`, `rel-tol`, `range`, `relative` and `mean-difference`.
    pub tolerance: Option<String>,
    /// The sweep point(s) it applies to (sweep key → one of its values, or a list of them: the points at any of
    /// them, as `{ "workloads.x.mean-runtime" = [420, 700, 900] }` for a paper's test over those points); default
    /// every point.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub at: BTreeMap<String, toml::Value>,
    /// Target value: the mean's 95% CI must lie within `abs-tol` or `rel-tol` of it (default exact).
    pub value: Option<f64>,
    /// Absolute tolerance for `value`.
    pub abs_tol: Option<NonNegative>,
    /// Relative tolerance for `value` (fraction of the target).
    pub rel_tol: Option<NonNegative>,
    /// Inclusive range [low, high] the mean's 95% CI must lie in.
    pub range: Option<[f64; 2]>,
    /// Strict order across the values of sweep key `over`, best first (["MOV", "MOML", "MLIP"] for "MOV > MOML >
    /// MLIP"): each step passes when the 95% CI of the paired differences on common seeds lies above 0 and fails
    /// when it lies at or below 0 (a tie on every seed fails).
    #[serde(default)]
    #[schemars(with = "Option<Vec<serde_json::Value>>")]
    pub order: Option<Vec<toml::Value>>,
    /// The sweep key that `order`, `relative` and `mean-difference` range over.
    pub over: Option<String>,
    /// Relative difference between two values of `over`: the paired differences mean(a) − mean(b) on common seeds
    /// over |mean(b)|, whose 95% CI must lie within [min, max].
    pub relative: Option<RawRelative>,
    /// Difference between two values of `over` at each group of points, in the metric's unit, `{ a, b, min, max }`:
    /// the paired differences a − b on common seeds, whose 95% CI must lie within [min, max] (a paper's "about 20
    /// points more at 80 s").
    pub difference: Option<RawRelative>,
    /// Mean difference between two values of `over` across the sweep points, `{ a, b, min, max }` (optionally
    /// `versus = "file.toml"`), as a paper's t-test over its sweep points: one value a − b per point (each combination of the other swept keys, within `at`: the mean of the
    /// paired differences on common seeds there), and the 95% CI of their mean by a t-test across the points (n =
    /// the number of points), which must lie within [min, max]. With `versus`, the mean here minus the same mean in
    /// another file of the family, by Welch's t-test across the points of both, or paired by position with `by-position`
    /// (checked by `gridmarket reproduce`).
    pub mean_difference: Option<RawMeanDifference>,
    /// Difference to another scenario of the same family at every point: mean(here) − mean(there), paired on the
    /// seeds both files ran, whose 95% CI must lie within [min, max]; "there" is the other file's point with the
    /// same values of the keys both sweep. Checked by `gridmarket reproduce`, which runs both files.
    pub versus: Option<RawVersus>,
    /// A documented conflict: how the source contradicts itself on this claim (two of its statements that cannot
    /// both hold). The target is judged and reported with its measured value and verdict, but not scored: it is
    /// counted apart from the targets and never sets the exit code.
    pub conflict: Option<String>,
    /// A hypothesis of our own, which no source states (its `source` says what it rests on): judged and scored like
    /// a target, but counted apart from the literature's targets, whose count is a family's headline.
    #[serde(default)]
    pub hypothesis: bool,
}

/// A sanity check: what holds by construction, on every run (`jobs.total = 50`, a ratio in [0, 1]). Exactly one of
/// `value`, `range`, `order` or `versus`, met by every run (`order`: by every seed, ties allowed; `versus`: by
/// every seed both files ran). Never counted among the targets.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawCheck {
    /// The metric (a key of `summary.json`).
    pub metric: String,
    /// Why it holds (e.g. "the workload has 50 jobs").
    pub why: Option<String>,
    /// The sweep point(s) it applies to (sweep key → value); default every point.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub at: BTreeMap<String, toml::Value>,
    /// Value every run must give, within `abs-tol` or `rel-tol` (default exact).
    pub value: Option<f64>,
    /// Absolute tolerance for `value`.
    pub abs_tol: Option<NonNegative>,
    /// Relative tolerance for `value` (fraction of it).
    pub rel_tol: Option<NonNegative>,
    /// Inclusive range [low, high] every run must fall in.
    pub range: Option<[f64; 2]>,
    /// Order across the values of sweep key `over`, largest first: on every seed, each value's run gives at least
    /// the next one's.
    #[serde(default)]
    #[schemars(with = "Option<Vec<serde_json::Value>>")]
    pub order: Option<Vec<toml::Value>>,
    /// The sweep key that `order` ranges over.
    pub over: Option<String>,
    /// Difference to another scenario of the same family, within [min, max] on every seed both files ran.
    pub versus: Option<RawVersus>,
}

impl From<RawCheck> for RawExpect {
    /// A check read as a target with its `why` for a source, to be checked against the sweep the same way.
    fn from(c: RawCheck) -> RawExpect {
        RawExpect {
            metric: c.metric,
            source: c.why,
            tolerance: None,
            at: c.at,
            value: c.value,
            abs_tol: c.abs_tol,
            rel_tol: c.rel_tol,
            range: c.range,
            order: c.order,
            over: c.over,
            relative: None,
            difference: None,
            mean_difference: None,
            versus: c.versus,
            conflict: None,
            hypothesis: false,
        }
    }
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

/// Two values of the swept key compared, and the band of their relative (`relative`: "a is at least 50% below b",
/// `{ a = "MOML", b = "NOP", max = -0.5 }`) or absolute (`difference`) difference.
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

/// "NOP's rate exceeds MOML's by 51.1 to 92.8 points on average over the sweep":
/// `{ a = "nop", b = "moml", min = 0.511, max = 0.928 }`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawMeanDifference {
    /// The value of `over` compared.
    #[schemars(with = "serde_json::Value")]
    pub a: toml::Value,
    /// The value of `over` compared against.
    #[schemars(with = "serde_json::Value")]
    pub b: toml::Value,
    /// Lowest acceptable mean difference.
    pub min: Option<f64>,
    /// Highest acceptable mean difference.
    pub max: Option<f64>,
    /// Another scenario of the family, in the same folder, that sweeps `over` too: the target is then the mean
    /// difference here minus the one there.
    pub versus: Option<String>,
    /// With `versus`: pair the groups of points here and there by their position in the sweep (the i-th with the
    /// i-th; files that sweep the same loads through different values, such as rates scaled with the resources)
    /// and judge the mean of the per-pair differences by a paired t-test across the pairs, instead of Welch's test
    /// across the points of both. Both files must have as many groups.
    #[serde(default)]
    pub by_position: bool,
}
