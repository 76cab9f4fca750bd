//! The scenario file, key by key, exactly as written (`RawScenario`). Every field's doc is what
//! `gridmarket schema` prints; defaults are filled in and names resolved by [`super::Scenario::build`].

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use super::values::{NonNegative, Positive, PositiveInt};
use super::workload::RawWorkload;

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
    /// Master seed: every random stream (agents, workloads) derives from it. Replication r uses seed + r.
    #[serde(default)]
    pub seed: u64,
    /// Independent runs per sweep point (seeds seed, seed+1, ...); means get a 95% confidence interval.
    #[serde(default = "one")]
    pub replications: PositiveInt,
    /// End of the run [s of simulated time]. Without it the run goes on until every job has ended (drained).
    pub horizon: Option<Positive>,
    /// Period of `timeseries.csv` samples [s] (default: the end time / 100).
    pub sample_period: Option<Positive>,
    /// How agents are executed: "actix" (every agent an actor; default) or "inline" (one thread, no actors).
    #[serde(default)]
    pub runtime: RawRuntime,
    /// Workloads by name; broker groups refer to them.
    #[serde(default)]
    pub workloads: BTreeMap<String, RawWorkload>,
    /// Resource provider groups by name.
    #[serde(default)]
    pub providers: BTreeMap<String, RawProvider>,
    /// User broker groups by name.
    #[serde(default)]
    pub brokers: BTreeMap<String, RawBroker>,
    /// Gateway groups (InterGrid gateways) by name.
    #[serde(default)]
    pub gateways: BTreeMap<String, RawGateway>,
    /// Meta-brokers (seed 003) by name.
    #[serde(default)]
    pub metabrokers: BTreeMap<String, RawMetaBroker>,
    /// Message latencies (zero unless set).
    #[serde(default)]
    pub latency: RawLatency,
    /// What each run writes.
    #[serde(default)]
    pub outputs: RawOutputs,
    /// Parameter sweep: dotted key → list of values; runs the cartesian product.
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

fn one() -> PositiveInt {
    PositiveInt(1)
}

/// The agent runtime.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RawRuntime {
    /// Every agent an actix actor, the clock an actor (one thread).
    #[default]
    Actix,
    /// Every agent called directly on one thread; same results, faster.
    Inline,
}

/// A group of identical resource providers (a cluster each).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawProvider {
    /// How many providers; with more than one they are named `<group>-0`, `<group>-1`, ...
    #[serde(default = "one")]
    pub count: PositiveInt,
    /// Processing elements (CPUs) per provider.
    pub pes: PositiveInt,
    /// With `pes`, each member's PEs are drawn uniformly from [pes, pes-max] at every replication (seed 003 ch3:
    /// sites of 4–12 CPUs).
    pub pes_max: Option<PositiveInt>,
    /// Each member's price is drawn from a normal with mean `price` and standard deviation (high − low) / 4, redrawn
    /// until it lies in [low, high] (seed 003 ch3: "Gaussian between 4 and 5 G$, mean 4.5"; [INTERP] the deviation).
    pub price_range: Option<[f64; 2]>,
    /// Each member's speed is drawn uniformly from [low, high] at every replication (seed 003: heterogeneous MIPS
    /// ratings; [GAP] the digest's default U[1000, 1330] MIPS against a 1,000-MIPS reference is [1.0, 1.33]).
    pub speed_range: Option<[f64; 2]>,
    /// Speed of a PE relative to the reference PE that job runtimes are given for (default 1).
    pub speed: Option<Positive>,
    /// Price [G$ per PE-second] (default 0).
    pub price: Option<NonNegative>,
    /// Local scheduler: "fcfs", "easy", "conservative" or "multi-partition-easy" (default "easy").
    #[serde(default = "default_scheduler")]
    #[schemars(with = "String")]
    pub scheduler: agents::provider::scheduler::SchedulerPolicy,
    /// How a local request that does not fit is resolved (seed 000 ch3): "nop" (reject it; default), "mov",
    /// "mlip", "moml", "greedy-mov" or "greedy-mlip".
    #[serde(default = "default_preemption")]
    #[schemars(with = "String")]
    pub preemption: agents::provider::preemption::PreemptionPolicy,
    /// Preemption overhead model: `{ model = "thesis" }` (seed 000 Eq 3.2–3.7 with its parameters; default) or
    /// `{ model = "shared-storage", throughput = 40.0 }` (the prototype of ch7).
    #[schemars(with = "Option<serde_json::Value>")]
    pub overhead: Option<agents::provider::overhead::OverheadModel>,
    /// Memory of one VM [MB] (default 1024).
    pub vm_memory: Option<Positive>,
    /// Preemptive-resume priority between job classes (`priority-fraction` of a workload): a job that cannot start
    /// suspends running jobs of lower classes, which resume later with their remaining work (default false).
    #[serde(default)]
    pub preemptive_priority: bool,
    /// A preempted cancellable lease: "restart" in the queue (default) or "drop" (counted as rejected).
    #[serde(default)]
    #[schemars(with = "String")]
    pub cancelled: agents::provider::CancelledLeases,
    /// Multi-partition EASY: relative partition sizes (default [1, 2, 3], seed 003 ch7).
    pub partitions: Option<Vec<PositiveInt>>,
    /// Multi-partition EASY: may a job use idle PEs of other partitions (default true).
    pub borrowing: Option<bool>,
    /// A TOML file of defaults for this group (relative to the scenario file); the group's own keys win.
    #[serde(default)]
    pub profile: Option<String>,
}

fn default_preemption() -> agents::provider::preemption::PreemptionPolicy {
    agents::provider::preemption::PreemptionPolicy::Nop
}

fn default_scheduler() -> agents::provider::scheduler::SchedulerPolicy {
    agents::provider::scheduler::SchedulerPolicy::Easy
}

/// A group of user brokers sharing a workload.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawBroker {
    /// How many brokers (users); the workload's jobs are dealt among them (see `split`).
    #[serde(default = "one")]
    pub count: PositiveInt,
    /// The workload (a key of `[workloads]`). Each group draws its own copy: two groups naming one synthetic
    /// workload get independent draws of it.
    pub workload: String,
    /// How the jobs are dealt: "round-robin" (job i to broker i mod count; default) or "by-user" (the trace's user
    /// id mod count).
    #[serde(default)]
    pub split: RawSplit,
    /// Where the jobs go: the name of a provider or gateway group (with a count of 1), or of one of its members.
    pub submit_to: Option<String>,
    /// Meta-brokered mode (seed 003 ch3): requests go to this meta-broker, jobs to the slots of its tickets.
    pub metabroker: Option<String>,
    /// Personalised mode (seed 003 ch3): each broker claims the cheapest feasible provider among these groups every
    /// round; `["*"]` means every provider.
    pub personalised: Option<Vec<String>>,
    /// Personalised mode: round length [s] (default 50, the thesis's scheduling interval).
    pub round: Option<Positive>,
    /// A TOML file of defaults for this group (relative to the scenario file); the group's own keys win.
    #[serde(default)]
    pub profile: Option<String>,
}

/// How a workload's jobs are dealt among the brokers of a group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RawSplit {
    /// Job i to broker i mod count.
    #[default]
    RoundRobin,
    /// By the trace's user id mod count (job index when unknown).
    ByUser,
}

/// A group of InterGrid gateways.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawGateway {
    /// How many gateways (each over the same providers).
    #[serde(default = "one")]
    pub count: PositiveInt,
    /// The provider groups (or members) of this gateway's grid.
    pub providers: Vec<String>,
    /// Dispatch policy: "round-robin" (default).
    #[serde(default)]
    #[schemars(with = "String")]
    pub dispatch: agents::gateway::Dispatch,
    /// A TOML file of defaults for this group (relative to the scenario file); the group's own keys win.
    #[serde(default)]
    pub profile: Option<String>,
}

/// A meta-broker (seed 003 ch3–4): schedules the queued requests at the end of every interval.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawMetaBroker {
    /// Scheduling policy: "greedy" (default), "mmc", "ga", "lpga", "hga" (each job whole on one site), or "lp" (the
    /// MGN relaxation: a job's tasks may be split over several sites, one ticket per part).
    #[serde(default = "default_mb_policy")]
    #[schemars(with = "String")]
    pub policy: agents::metabroker::SchedulingPolicy,
    /// Scheduling interval SI [s] (default 50).
    pub interval: Option<Positive>,
    /// Solver of the MGN relaxation (policies lp, mmc, lpga): "transportation" (exact network simplex; default),
    /// "microlp", or "highs" (only in a build with `--features highs`).
    #[serde(default)]
    #[schemars(with = "String")]
    pub solver: agents::metabroker::MgnSolver,
    /// The provider groups (or members) it schedules on; `["*"]` means every provider.
    pub providers: Vec<String>,
}

fn default_mb_policy() -> agents::metabroker::SchedulingPolicy {
    agents::metabroker::SchedulingPolicy::Greedy
}

/// Latencies between agents [s]: zero unless set here.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawLatency {
    /// Latency of every message between two different agents.
    pub default: Option<NonNegative>,
    /// Per pair of agent kinds ("provider", "broker", "gateway"): overrides the default.
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
    pub secs: NonNegative,
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
        RawOutputs { jobs: true, timeseries: true, trace: false, trace_agents: Vec::new(), trace_kinds: Vec::new() }
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
