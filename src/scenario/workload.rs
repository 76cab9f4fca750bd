//! The `[workloads.<name>]` sections: which model or trace, how many jobs, and the QoS each study attaches.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use rand::distr::Distribution;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::workload::dist::Dist;
use crate::workload::lublin::LublinParams;
use crate::workload::models::{BotModel, Das2Model, InterGridCluster, InterarrivalUnit, MetaBrokerJobModel};
use crate::workload::qos::{self, DeadlineSlack, UrgencyMix};
use crate::workload::{Limit, OversizePolicy, Skipped, Workload, WorkloadError, WorkloadJob, csv, gwf, swf};
use agents::registry::limits::{MAX_JOBS, MAX_TIME, MIN_MEAN_RUNTIME, RATES, TIME_SCALES, approx, short};
use agents::registry::values::{Delay, Fraction, JobCount, NonNegative, Positive, PositiveInt, Price, Seconds};

/// Where a workload's jobs come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Model {
    /// Lublin & Feitelson (2003) rigid parallel jobs (`preset`: typed, typeless, garg-ch5, salehi-ch3, thunder,
    /// thunder-table).
    Lublin,
    /// DAS-2 model of Amini Salehi (2012) Table 4.2 (`cluster` absent: the external "Grid" rows; else that cluster's
    /// rows).
    Das2,
    /// GWA bag-of-tasks model of Amini Salehi (2012) ch5 / Amini Salehi, Javadi & Buyya.
    Bot,
    /// Garg (2010) ch3–4 jobs: tasks of 1 CPU, runtimes 400 s ± 20%, submitted in the first 20 s, deadlines by `slack`.
    Metabroker,
    /// Poisson arrivals (`rate` per second) with `runtime` drawn from a distribution: queueing validation.
    Poisson,
    /// The local requests Amini Salehi (2012) ch6 interleaves with a trace (`rho`, `delta`, `theta`, `rp-nodes` over
    /// `until`), each a local lease.
    LocalRequests,
    /// A Standard Workload Format trace (`file`).
    Swf,
    /// A Grid Workloads Format trace (`file`).
    Gwf,
    /// A job list in CSV (`file`), for hand-made cases.
    Csv,
}

/// A workload: a model with its parameters, or a trace file, plus transformations and QoS.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawWorkload {
    /// The model or trace format.
    pub model: Model,
    /// Number of jobs (requests; bags for `bot`) to generate, or use `until`, or both (generation stops at whichever
    /// comes first): at most 10 million jobs per workload, which models that would exceed on average are refused.
    /// Not for traces.
    pub jobs: Option<JobCount>,
    /// Generate arrivals until this time [s; at most 1e12] (not for traces or `metabroker`); with `jobs`, stop at
    /// whichever comes first.
    pub until: Option<Seconds>,
    /// Lublin: "typed" (batch and interactive streams; default), "typeless", "garg-ch5", "salehi-ch3", "thunder" (the
    /// LLNL Thunder log's jobs as Garg (2010) Table 7.1 gives them: mean 44 CPUs, runtimes of mean 2328.911 s and
    /// standard deviation 7790.11 s; arriving so that they keep Thunder's 4,096 CPUs 88% busy, a mean gap of 124.8 s
    /// before any `time-scale`) or "thunder-table" (the same jobs every 16.176 s on average, as the table states,
    /// which is 7.7 weeks of that machine's work per week: see docs/workloads.md).
    pub preset: Option<String>,
    /// Lublin: largest job \[PEs\] (default: the preset's; at most 2^20).
    pub max_nodes: Option<PositiveInt>,
    /// Lublin: UHI, log2 of the largest size (Garg (2010) ch5: log2(p); at most 20); applied after `max-nodes`.
    pub u_hi: Option<f64>,
    /// Lublin: UMED, the split of the two-stage uniform (Garg 2010, ch5: UHI − 2.5); applied after `max-nodes`.
    pub u_med: Option<f64>,
    /// Lublin: scale sizes to this mean \[PEs\] (Amini Salehi 2012, ch3 uses 4 VMs). DAS-2: move the split m of the
    /// two-stage log-uniform size so that the mean is this (ch4's external sweep of the number of VMs).
    pub mean_nodes: Option<Positive>,
    /// Lublin: scale runtimes to this mean \[s\] (Amini Salehi 2012, ch3 uses 2 h); the longest runtime, about 50 times
    /// the mean, must stay within 1e12 s. DAS-2: the log-normal's location a for this mean, b kept.
    pub mean_runtime: Option<Seconds>,
    /// Lublin: scale inter-arrival times to this mean \[s\]; the last arrival must stay within 1e12 s on average.
    /// DAS-2: the Weibull scale for this mean, the shape kept.
    pub mean_interarrival: Option<Seconds>,
    /// DAS-2 and bag-of-tasks: the local rows of cluster "C64", "C128" or "C256" instead of the external ones.
    pub cluster: Option<String>,
    /// DAS-2: the time unit of Table 4.2's Weibull inter-arrival scales, which the table leaves unstated: "seconds"
    /// (default; the DAS-2 model's unit, each cluster's local requests alone offering 3–7 times its capacity) or
    /// "minutes" (gaps 60 times longer: local loads of 5–11%, external requests 1% of the grid). `mean-interarrival`
    /// is in seconds either way.
    pub interarrival_unit: Option<InterarrivalUnit>,
    /// Bag-of-tasks: the Weibull scale of the gaps between bags, α_e or α_l \[s\] (default 1.7 external, 4 local; shape
    /// 7.86). With `cluster`, the value for C128: C64 uses α_l + 1 and C256 α_l − 1.
    pub scale: Option<Positive>,
    /// Bag-of-tasks: the mean task duration M_e or M_l \[s\] (default 90; normal, standard deviation 6.1). With
    /// `cluster`, the value for C128: C64 uses M_l − 1 and C256 M_l + 1.
    pub task_duration: Option<Positive>,
    /// Bag-of-tasks: each bag is one request of as many PEs as it has tasks, for the mean of their durations (its
    /// work the sum of theirs), rather than one single-PE job per task; with `urgency-ratios`, its deadline is submit
    /// + ratio × that duration (a moldable provider rescales it to the duration it runs for).
    #[serde(default)]
    pub bags: bool,
    /// Bag-of-tasks: the urgency classes of external bags (Amini Salehi, Javadi & Buyya): half of high urgency with a
    /// deadline ratio N(2, 1), half of low urgency with N(4, 1), the ratio truncated at 1, when true; with `bags`.
    #[serde(default)]
    pub urgency_ratios: bool,
    /// Poisson: arrival rate [1/s; from 1e-9 to 1e6].
    pub rate: Option<Positive>,
    /// Poisson: one arrival rate per priority class [1/s], class 0 (the highest) first, instead of `rate` and
    /// `priority-fraction`: `class-rates = [0.3, 0.3]` is `rate = 0.6` with `priority-fraction = 0.5`. At most 256
    /// classes; their total from 1e-9 to 1e6.
    pub class_rates: Option<Vec<Positive>>,
    /// Poisson: runtime distribution, e.g. `{ kind = "exponential", mean = 1.0 }`; kinds: constant, uniform,
    /// exponential, truncated_normal (with `low` >= 0), log_normal, weibull, gamma, hyper_exponential (a plain normal
    /// would draw negative runtimes). Its mean is at least 1e-6 s and at most 1e12 s. A hyper_exponential takes its
    /// `phases = [{ prob, mean }, …]`, or `mean` and `scv` (squared coefficient of variation, at least 1) for the
    /// two-phase fit with balanced means.
    #[schemars(with = "Option<serde_json::Value>")]
    pub runtime: Option<Dist>,
    /// Poisson: PEs per job (default 1).
    pub pes: Option<PositiveInt>,
    /// Poisson: PEs per job drawn uniformly from the integers in [low, high] (at most 2^20), instead of `pes`.
    pub pes_range: Option<[u32; 2]>,
    /// Swf/gwf/csv: the trace or job list, relative to the scenario file; a gzip-compressed file (`.swf.gz`) is read
    /// as it is. A CSV job list has a header row naming its columns, in any order: `submit` \[s\], `cpus` and `runtime`
    /// \[s\] are required; `estimate` \[s\], `deadline` [s, absolute] and `budget` [G$] are optional, an empty cell
    /// leaving the job without. Its jobs are numbered 1, 2, … in row order.
    pub file: Option<String>,
    /// Swf/gwf: keep jobs submitted in [from, to) seconds, re-based to 0.
    pub window: Option<[f64; 2]>,
    /// Keep the first N jobs (at most 10 million): in file order, or in the order drawn, after `window` and before
    /// `max-pes` drops any. With `bot`, whose `jobs` counts bags, it counts jobs (tasks).
    pub first: Option<JobCount>,
    /// Multiply submit times by this factor (e.g. 0.1 makes arrivals ten times denser; from 1e-6 to 1e6, and submit
    /// times stay within 1e12 s).
    pub time_scale: Option<Positive>,
    /// Multiply runtimes by this factor (from 1e-6 to 1e6; e.g. 0.5 replays a trace on PEs twice as fast).
    /// Runtime estimates (a trace's requested times) are multiplied too, so each keeps its ratio to its runtime.
    pub runtime_scale: Option<Positive>,
    /// Add this many seconds to every runtime (from 0 to 1e12), after `runtime-scale`. Runtime estimates get the same,
    /// so each stays as far above (or below) its runtime; runtimes must stay within 1e12 s.
    pub runtime_offset: Option<Delay>,
    /// Jobs wider than this many PEs are dropped (or clamped with `clamp = true`).
    pub max_pes: Option<PositiveInt>,
    /// Clamp wide jobs to `max-pes` instead of dropping them (with `max-pes` only).
    #[serde(default)]
    pub clamp: bool,
    /// Split every job of p PEs into p one-PE jobs of its submit time and runtime, after `max-pes` (Asaduzzaman &
    /// Maheswaran's reading of a parallel job as independent threads, one resource each, for a public computing
    /// utility).
    #[serde(default)]
    pub per_pe: bool,
    /// Runtime estimates: "exact" (the runtime) or "requested" (the trace's requested time when known; default).
    pub estimate: Option<String>,
    /// Deadlines: "tight", "medium" or "relaxed" (Garg 2010, ch3: runtime + 50/250/500 s ± 20%), or
    /// `[low, high]`: submit + U[low, high] × runtime (Garg 2010, §7.6).
    #[schemars(with = "Option<serde_json::Value>")]
    pub deadline: Option<toml::Value>,
    /// Deadlines by urgency class (Garg 2010 §6.5, after Irwin et al.): `{ high-fraction = 0.4 }` makes each job high
    /// urgency (HU) with that probability, else low urgency (LU), and gives it the deadline submit + ratio ×
    /// runtime, the ratio drawn from a normal of the class (HU: mean `high-mean` 4, variance `high-variance` 2; LU:
    /// mean `low-mean` 12, variance `low-variance` 6, our choice: the thesis gives the LU mean as 3 × the HU one and
    /// no variance), redrawn until at least 1. A job of high urgency at one fraction is so at every larger one, with
    /// the same ratio. Not with `deadline`.
    pub urgency: Option<RawUrgency>,
    /// Data each job moves in and out \[GB\], drawn per job from a distribution (e.g. `{ kind = "uniform", low = 0.0,
    /// high = 10000.0 }`, Garg (2010) §6.6.2's U[0, 10] TB), which a data centre charges for.
    #[schemars(with = "Option<serde_json::Value>")]
    pub data_size: Option<Dist>,
    /// Budgets: twice the job's cost at this mean price [G$ per PE-second; at most 1e6] (Garg's (2010) relaxed budget).
    pub budget_price: Option<Price>,
    /// Budgets drawn from a distribution [G$], e.g. `{ kind = "uniform", low = 90000.0, high = 160000.0 }` (Garg
    /// 2010 §7.4.1: the users' initial valuations, which a double-auction-inspired meta-broker reads as the job's
    /// budget); kinds as `runtime`'s, of positive values. Not with `budget-price`.
    #[schemars(with = "Option<serde_json::Value>")]
    pub budget: Option<Dist>,
    /// Metabroker: the variation of the number of tasks, its standard deviation over its mean 5: a fraction in
    /// (0, 1], or `[low, high]` to draw each job's own uniformly from that range (Garg 2010 §3.5 and §4.3.1: "10-50%
    /// variations in the number of tasks (using Gaussian distribution)", i.e. `[0.1, 0.5]`). Default 0.3.
    #[schemars(with = "Option<serde_json::Value>")]
    pub task_variation: Option<toml::Value>,
    /// Lease types (Amini Salehi 2012, ch3), drawn per job: the fraction of local requests; the others are external.
    pub local_fraction: Option<Fraction>,
    /// Lease types: the fraction of external requests that are best effort (cancellable or suspendable, half
    /// each); the rest are deadline-constrained (migratable or non-preemptable, half each). Default 0.5; with
    /// `local-fraction` only.
    pub best_effort_fraction: Option<Fraction>,
    /// Priority classes: each job is of class 0 (high) with this probability, else of class 1.
    pub priority_fraction: Option<Fraction>,
    /// Deadline of deadline-constrained requests: submit + factor × runtime (at most 1e6). Amini Salehi (2012) does not
    /// say how they were drawn; we assume 3 by default. With `local-fraction` only.
    pub dc_deadline_factor: Option<Positive>,
    /// Budgets: the job's PE-seconds (PEs × runtime) times a price per PE-second drawn per job from this distribution
    /// [G$ per PE-second], e.g. `{ kind = "uniform", low = 0.0, high = 10.0 }`: what its user values a PE-second at,
    /// so that a price-driven broker drops the job once every price is above it. Kinds as `runtime`'s, of
    /// non-negative values. Not with `budget-price`.
    #[schemars(with = "Option<serde_json::Value>")]
    pub budget_per_pe_second: Option<Dist>,
    /// Every job is a lease of this type (Amini Salehi 2012): "local", "cancellable", "suspendable", "migratable" or
    /// "non-preemptable". Not with `local-fraction`.
    #[schemars(with = "Option<String>")]
    pub lease_type: Option<agents::protocol::LeaseType>,
    /// Local requests: ρ, the share of the provider's node-time they take (Amini Salehi 2012, ch6: 5% to 30%).
    pub rho: Option<Fraction>,
    /// Local requests: δ, their mean duration \[s\] (each drawn in δ ± 30 min; at least 1,800 s).
    pub delta: Option<Seconds>,
    /// Local requests: θ, their size range, "small" (1–24 nodes), "medium" (25–48) or "large" (49–72).
    pub theta: Option<String>,
    /// Local requests: the provider's nodes, which ρ is a share of.
    pub rp_nodes: Option<PositiveInt>,
    /// Local requests: how long before its start each is made \[s\] (an advance reservation; the injection files
    /// Haizea distributes for the thesis's setting make them 86,400 s, a day, ahead). Absent: when it starts.
    pub notice: Option<Delay>,
}

/// The urgency classes of `urgency`: the share of high urgency and each class's deadline ratio.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawUrgency {
    /// Probability that a job is of high urgency (Garg (2010) sweeps 0 to 1).
    pub high_fraction: Fraction,
    /// Mean deadline ratio of high urgency (default 4).
    pub high_mean: Option<Positive>,
    /// Variance of the ratio of high urgency (default 2).
    pub high_variance: Option<NonNegative>,
    /// Mean deadline ratio of low urgency (default 12).
    pub low_mean: Option<Positive>,
    /// Variance of the ratio of low urgency (default 6).
    pub low_variance: Option<NonNegative>,
}

impl RawUrgency {
    /// The classes' mix.
    fn mix(&self) -> UrgencyMix {
        let ratio = |mean: Option<Positive>, variance: Option<NonNegative>, m: f64, v: f64| Dist::TruncatedNormal {
            mean: mean.map_or(m, |x| x.0),
            sd: variance.map_or(v, |x| x.0).sqrt(),
            low: Some(qos::MIN_DEADLINE_RATIO),
            high: None,
        };
        UrgencyMix {
            high_fraction: self.high_fraction.0,
            high_ratio: ratio(self.high_mean, self.high_variance, 4.0, 2.0),
            low_ratio: ratio(self.low_mean, self.low_variance, 12.0, 6.0),
        }
    }
}

/// The trace files of a study, by path: each is checked once, whatever the number of sweep points naming it.
#[derive(Debug, Default)]
pub struct TraceCache(BTreeMap<PathBuf, Arc<Trace>>);

/// A trace file: checked record by record when the scenario is loaded, keeping none of them (validating builds no
/// workload), then read by the first run that needs its jobs and shared by every run dealing them at the same time;
/// once no run holds them they are freed (a run keeps its jobs only until it has dealt them to its brokers), and the
/// next run reads the file again.
#[derive(Debug)]
struct Trace {
    path: PathBuf,
    /// Swf, gwf or csv.
    model: Model,
    /// The latest submit time [s].
    last_submit: f64,
    /// The longest runtime [s].
    longest: f64,
    /// The records left out.
    skipped: Skipped,
    jobs: Mutex<Weak<Workload>>,
}

impl Trace {
    /// Reads every record of the file at `path` (in the format of `model`), keeping what the checks of a workload
    /// need.
    fn check(path: PathBuf, model: Model) -> Result<Trace, WorkloadError> {
        let name = path.display().to_string();
        let reader = crate::workload::open(&path)?;
        let (mut last_submit, mut longest, mut jobs) = (0.0f64, 0.0f64, 0u64);
        let mut see = |job: WorkloadJob| {
            last_submit = last_submit.max(job.submit);
            longest = longest.max(job.runtime);
            jobs += 1;
        };
        let skipped = match model {
            Model::Gwf => {
                let mut records = gwf::GwfReader::new(reader, name);
                for job in records.by_ref() {
                    see(job?);
                }
                records.skipped()
            }
            Model::Csv => {
                let w = csv::read_csv(reader, &name)?;
                let skipped = w.skipped;
                w.jobs.into_iter().for_each(see);
                skipped
            }
            _ => {
                let mut records = swf::SwfReader::new(reader, name);
                for job in records.by_ref() {
                    see(job?);
                }
                records.skipped()
            }
        };
        if jobs == 0 {
            let left = skipped.note().map_or(String::new(), |n| format!(" ({n})"));
            let message = format!("no job to simulate{left}");
            return Err(WorkloadError::Line {
                file: path.display().to_string(),
                line: skipped.first_line.unwrap_or(1),
                message,
            });
        }
        Ok(Trace { path, model, last_submit, longest, skipped, jobs: Mutex::new(Weak::new()) })
    }

    /// Its jobs: those another run holds, or else read from the file.
    fn jobs(&self) -> Result<Arc<Workload>, String> {
        // A run that panicked while reading leaves nothing half-done behind the lock.
        let mut shared = self.jobs.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(w) = shared.upgrade() {
            return Ok(w);
        }
        let mut w = match self.model {
            Model::Gwf => gwf::read_gwf_file(&self.path),
            Model::Csv => csv::read_csv_file(&self.path),
            _ => swf::read_swf_file(&self.path),
        }
        .map_err(|e| e.to_string())?;
        // Read again after the runs before freed it: the file must still hold the jobs that were checked.
        let last_submit = w.jobs.iter().map(|j| j.submit).fold(0.0, f64::max);
        let longest = w.jobs.iter().map(|j| j.runtime).fold(0.0, f64::max);
        if (last_submit, longest) != (self.last_submit, self.longest) {
            return Err(format!("{}: the file changed while the study ran", self.path.display()));
        }
        w.jobs.shrink_to_fit();
        let w = Arc::new(w);
        *shared = Arc::downgrade(&w);
        Ok(w)
    }
}

/// A checked workload description: trace files are read once, models are drawn per run.
#[derive(Clone, Debug)]
pub struct WorkloadPlan {
    raw: RawWorkload,
    trace: Option<Arc<Trace>>,
}

/// Keys that only some models read, with those models: given to another model, a key would be silently ignored.
const MODEL_KEYS: [(&str, &[Model]); 27] = [
    ("jobs", &[Model::Lublin, Model::Das2, Model::Bot, Model::Metabroker, Model::Poisson]),
    ("until", &[Model::Lublin, Model::Das2, Model::Bot, Model::Poisson, Model::LocalRequests]),
    ("rho", &[Model::LocalRequests]),
    ("delta", &[Model::LocalRequests]),
    ("theta", &[Model::LocalRequests]),
    ("rp-nodes", &[Model::LocalRequests]),
    ("notice", &[Model::LocalRequests]),
    ("preset", &[Model::Lublin]),
    ("max-nodes", &[Model::Lublin]),
    ("u-hi", &[Model::Lublin]),
    ("u-med", &[Model::Lublin]),
    ("mean-nodes", &[Model::Lublin, Model::Das2]),
    ("mean-runtime", &[Model::Lublin, Model::Das2]),
    ("mean-interarrival", &[Model::Lublin, Model::Das2]),
    ("cluster", &[Model::Das2, Model::Bot]),
    ("interarrival-unit", &[Model::Das2]),
    ("scale", &[Model::Bot]),
    ("task-duration", &[Model::Bot]),
    ("bags", &[Model::Bot]),
    ("urgency-ratios", &[Model::Bot]),
    ("rate", &[Model::Poisson]),
    ("class-rates", &[Model::Poisson]),
    ("runtime", &[Model::Poisson]),
    ("pes", &[Model::Poisson]),
    ("pes-range", &[Model::Poisson]),
    ("file", &[Model::Swf, Model::Gwf, Model::Csv]),
    ("task-variation", &[Model::Metabroker]),
];

/// Most priority classes `class-rates` may give: classes are numbered by a byte.
const MAX_CLASSES: usize = 256;

/// Largest factor of `dc-deadline-factor` and of `deadline = [low, high]`.
const MAX_DEADLINE_FACTOR: f64 = 1e6;

/// Largest job of the Lublin model [PEs]: its size distribution is tabulated up to 2^20.
const MAX_NODES: u32 = 1 << 20;

impl WorkloadPlan {
    /// Checks the description and its trace, if any (once per `traces`). Errors name the offending key
    /// (relative to the workload's table).
    pub fn check(raw: &RawWorkload, base: &Path, traces: &mut TraceCache) -> Result<WorkloadPlan, (String, String)> {
        let bad = |key: &str, m: String| (key.to_string(), m);
        let model = agents::registry::serde_name(&raw.model);
        for (key, models) in MODEL_KEYS {
            if given(raw, key) && !models.contains(&raw.model) {
                let of: Vec<String> =
                    models.iter().map(|m| format!("\"{}\"", agents::registry::serde_name(m))).collect();
                return Err(bad(key, format!("not a key of the \"{model}\" model (only of {})", of.join(", "))));
            }
        }
        for (key, needs) in
            [("clamp", "max-pes"), ("best-effort-fraction", "local-fraction"), ("dc-deadline-factor", "local-fraction")]
        {
            if given(raw, key) && !given(raw, needs) {
                return Err(bad(key, format!("applies with `{needs}` only, which is not given")));
            }
        }
        if given(raw, "lease-type") && given(raw, "local-fraction") {
            return Err(bad("lease-type", "gives every job's type: leave out `local-fraction`".into()));
        }
        if raw.model == Model::LocalRequests {
            for key in ["until", "rho", "delta", "theta", "rp-nodes"] {
                if !given(raw, key) {
                    return Err(bad(key, "required by the \"local-requests\" model".into()));
                }
            }
            let model = local_requests(raw).map_err(|m| ("theta".to_string(), m))?;
            if model.mean_duration < 1800.0 {
                return Err(bad("delta", format!("expected at least 1800 s, found {}", short(model.mean_duration))));
            }
            if model.count() as u64 > MAX_JOBS {
                let m = format!("makes {} requests, more than the limit of {MAX_JOBS}", model.count());
                return Err(bad("rho", m));
            }
        }
        for other in ["rate", "priority-fraction"] {
            if given(raw, "class-rates") && given(raw, other) {
                return Err(bad("class-rates", format!("sets the rates and the classes: leave out `{other}`")));
            }
        }
        if let Some([lo, hi]) = raw.pes_range {
            if raw.pes.is_some() {
                return Err(bad("pes-range", "draws what `pes` sets: give one of them".into()));
            }
            if !(1 <= lo && lo <= hi && hi <= MAX_NODES) {
                let m = format!("expected [low, high] with 1 <= low <= high <= {MAX_NODES}, found [{lo}, {hi}]");
                return Err(bad("pes-range", m));
            }
        }
        if let Some(rates) = &raw.class_rates
            && !(1..=MAX_CLASSES).contains(&rates.len())
        {
            let m = format!("expected from 1 to {MAX_CLASSES} rates, one per class, found {}", rates.len());
            return Err(bad("class-rates", m));
        }
        let need = |key: &str, present: bool| if present { Ok(()) } else { Err(bad(key, "required".into())) };
        let generated = !matches!(raw.model, Model::Swf | Model::Gwf | Model::Csv);
        if generated && raw.jobs.is_none() && raw.until.is_none() && raw.model != Model::Metabroker {
            return Err(bad("jobs", "a generated workload needs `jobs` or `until`".into()));
        }
        match raw.model {
            Model::Poisson => {
                need("rate", raw.rate.is_some() || raw.class_rates.is_some())?;
                need("runtime", raw.runtime.is_some())?;
            }
            Model::Swf | Model::Gwf | Model::Csv => need("file", raw.file.is_some())?,
            _ => {}
        }
        if let Some(e) = &raw.estimate
            && !matches!(e.as_str(), "exact" | "requested")
        {
            return Err(bad("estimate", format!("expected \"exact\" or \"requested\", found \"{e}\"")));
        }
        if let Some(d) = &raw.deadline {
            deadline_rule(d).map_err(|m| ("deadline".to_string(), m))?;
        }
        if raw.urgency_ratios && !raw.bags {
            return Err(bad("urgency-ratios", "gives each bag's deadline: a key of `bags = true` only".into()));
        }
        if let Some(u) = &raw.urgency {
            if raw.deadline.is_some() {
                return Err(bad("urgency", "gives the deadlines: leave out `deadline`".into()));
            }
            u.mix().sampler().map_err(|e| ("urgency".to_string(), e.to_string()))?;
        }
        if let Some(d) = &raw.data_size {
            d.sampler().map_err(|e| ("data-size".to_string(), e.to_string()))?;
            if !d.non_negative() {
                return Err(bad(
                    "data-size",
                    "may draw negative sizes: use a distribution of non-negative values, e.g. `uniform` from 0".into(),
                ));
            }
        }
        if let Some(v) = &raw.task_variation {
            task_variation(v).map_err(|m| ("task-variation".to_string(), m))?;
        }
        if let Some(d) = &raw.budget_per_pe_second {
            let key = "budget-per-pe-second";
            if raw.budget_price.is_some() || raw.budget.is_some() {
                return Err(bad(key, "sets the budgets `budget-price` or `budget` sets: give one of them".into()));
            }
            d.sampler().map_err(|e| (key.to_string(), e.to_string()))?;
            if !d.non_negative() {
                return Err(bad(key, "may draw negative prices: use a distribution of non-negative values".into()));
            }
        }
        if let Some(d) = &raw.budget {
            if raw.budget_price.is_some() {
                return Err(bad("budget", "draws the budgets `budget-price` sets: give one of them".into()));
            }
            d.sampler().map_err(|e| ("budget".to_string(), e.to_string()))?;
            if !d.non_negative() {
                return Err(bad(
                    "budget",
                    "may draw negative budgets: use a distribution of non-negative values".into(),
                ));
            }
        }
        if let Some(f) = raw.dc_deadline_factor
            && f.0 > MAX_DEADLINE_FACTOR
        {
            return Err(bad(
                "dc-deadline-factor",
                format!("expected at most {}, found {}", short(MAX_DEADLINE_FACTOR), short(f.0)),
            ));
        }
        for (key, factor) in [("time-scale", raw.time_scale), ("runtime-scale", raw.runtime_scale)] {
            if let Some(f) = factor
                && !(TIME_SCALES.0..=TIME_SCALES.1).contains(&f.0)
            {
                let (lo, hi) = (short(TIME_SCALES.0), short(TIME_SCALES.1));
                return Err(bad(key, format!("expected a factor from {lo} to {hi}, found {}", short(f.0))));
            }
        }
        if let Some([from, to]) = raw.window
            && !(0.0 <= from && from < to && to <= MAX_TIME)
        {
            let m = format!(
                "expected [from, to] with 0 <= from < to <= {}, found [{}, {}]",
                short(MAX_TIME),
                short(from),
                short(to)
            );
            return Err(bad("window", m));
        }
        // Build everything that does not depend on the seed now, so a bad parameter fails before any run, and see
        // how many jobs arrive how far apart.
        let scale = raw.time_scale.map_or(1.0, |f| f.0);
        let arrivals = match raw.model {
            Model::Lublin => {
                let p = lublin_params(raw)?;
                let longest = p.runtime_scale * crate::workload::lublin::TOO_MUCH_TIME.exp();
                if longest > MAX_TIME {
                    let m = format!("makes the longest runtime {} s, more than {} s", approx(longest), short(MAX_TIME));
                    return Err(bad("mean-runtime", m));
                }
                let gap = p.mean_interarrival().map_err(|e| ("mean-interarrival".to_string(), e.to_string()))?;
                Some((gap, 1.0, "mean-interarrival"))
            }
            Model::Das2 => Some((das2(raw)?.interarrival.mean(), 1.0, "jobs")),
            Model::Bot => {
                let m = bot(raw).map_err(|m| ("cluster".to_string(), m))?;
                Some((m.interarrival.mean(), m.tasks.mean(), "jobs"))
            }
            Model::Poisson => {
                let rate = poisson_rate(raw);
                let (key, what) =
                    if raw.class_rates.is_some() { ("class-rates", "a total rate") } else { ("rate", "a rate") };
                if !(RATES.0..=RATES.1).contains(&rate) {
                    let (lo, hi) = (short(RATES.0), short(RATES.1));
                    return Err(bad(
                        key,
                        format!("expected {what} from {lo} to {hi} per second, found {}", short(rate)),
                    ));
                }
                if let Some(d) = &raw.runtime {
                    runtime_dist(d).map_err(|m| ("runtime".to_string(), m))?;
                }
                Some((1.0 / rate, 1.0, key))
            }
            Model::Metabroker | Model::Swf | Model::Gwf | Model::Csv | Model::LocalRequests => None,
        };
        if let Some((gap, per_arrival, gap_key)) = arrivals {
            check_arrivals(raw, gap, per_arrival, gap_key, scale)?;
        }
        let trace = match (raw.model, &raw.file) {
            (Model::Swf | Model::Gwf | Model::Csv, Some(f)) => {
                let path = base.join(f);
                let trace = match traces.0.get(&path) {
                    Some(t) => t.clone(),
                    None => {
                        let t = Trace::check(path.clone(), raw.model);
                        let t = Arc::new(t.map_err(|e| ("file".to_string(), e.to_string()))?);
                        traces.0.insert(path, t.clone());
                        t
                    }
                };
                // At most the latest submit time of the window, re-based to its start.
                let [from, to] = raw.window.unwrap_or([0.0, f64::INFINITY]);
                let last = (trace.last_submit.min(to) - from).max(0.0);
                if last * scale > MAX_TIME {
                    let m = format!(
                        "makes the last submit time {} s, more than {} s",
                        approx(last * scale),
                        short(MAX_TIME)
                    );
                    return Err(bad("time-scale", m));
                }
                let longest =
                    trace.longest * raw.runtime_scale.map_or(1.0, |f| f.0) + raw.runtime_offset.map_or(0.0, |d| d.0);
                if longest > MAX_TIME {
                    let key = if raw.runtime_offset.is_some_and(|d| d.0 > MAX_TIME / 2.0) {
                        "runtime-offset"
                    } else {
                        "runtime-scale"
                    };
                    let m = format!("makes the longest runtime {} s, more than {} s", approx(longest), short(MAX_TIME));
                    return Err(bad(key, m));
                }
                Some(trace)
            }
            _ => None,
        };
        Ok(WorkloadPlan { raw: raw.clone(), trace })
    }

    /// What the user should know about the workload although it is valid: records of its trace left out.
    pub fn note(&self) -> Option<String> {
        let note = self.trace.as_deref()?.skipped.note()?;
        Some(format!("{}: {note}", self.raw.file.as_deref().unwrap_or_default()))
    }

    /// The jobs of one run, drawn with `rng` (the workload's own stream). A trace replayed as it is comes back
    /// shared, not copied: every run of a study reads the one copy in memory; a transformation copies it first.
    pub fn generate(&self, rng: &mut agents::sim::rng::SimRng) -> Result<Arc<Workload>, String> {
        let raw = &self.raw;
        let limit = match (raw.jobs, raw.until) {
            (Some(n), Some(t)) => Limit::JobsUntil(n.0 as usize, t.0),
            (Some(n), None) => Limit::Jobs(n.0 as usize),
            (None, Some(t)) => Limit::Until(t.0),
            (None, None) => Limit::Jobs(50),
        };
        let err = |e: crate::workload::WorkloadError| e.to_string();
        let mut w: Arc<Workload> = match raw.model {
            Model::Lublin => Arc::new({
                lublin_params(raw).map_err(|(k, m)| format!("{k}: {m}"))?.generate(limit, rng).map_err(err)?
            }),
            Model::Das2 => {
                Arc::new(das2(raw).map_err(|(k, m)| format!("{k}: {m}"))?.generate(limit, rng).map_err(err)?)
            }
            Model::Bot => Arc::new(bot(raw)?.generate(limit, rng).map_err(err)?),
            Model::Metabroker => {
                let slack = match raw.deadline.as_ref().and_then(toml::Value::as_str) {
                    Some("medium") => DeadlineSlack::Medium,
                    Some("relaxed") => DeadlineSlack::Relaxed,
                    _ => DeadlineSlack::Tight,
                };
                let variation = raw.task_variation.as_ref().map_or(Ok([0.3, 0.3]), task_variation)?;
                let mut model = MetaBrokerJobModel::new(slack, variation);
                if let Limit::Jobs(n) | Limit::JobsUntil(n, _) = limit {
                    model.jobs = n;
                }
                Arc::new(model.generate(rng).map_err(err)?)
            }
            Model::Poisson => Arc::new(poisson(raw, limit, rng)?),
            Model::LocalRequests => {
                let mut w = local_requests(raw)?.generate(rng).map_err(err)?;
                w.jobs.iter_mut().for_each(|j| j.lease = Some(agents::protocol::LeaseType::Local));
                Arc::new(w)
            }
            Model::Swf | Model::Gwf | Model::Csv => match &self.trace {
                Some(trace) => trace.jobs()?,
                None => Arc::default(),
            },
        };
        limit.check(w.jobs.len()).map_err(err)?;
        if let Some([from, to]) = raw.window {
            w = Arc::new(w.window(from, to).map_err(err)?);
        }
        if let Some(n) = raw.first
            && n.0 < w.jobs.len() as u64
        {
            Arc::make_mut(&mut w).truncate(n.0 as usize);
        }
        if let Some(f) = raw.time_scale {
            Arc::make_mut(&mut w).scale_submit(f.0).map_err(err)?;
        }
        if raw.runtime_scale.is_some() || raw.runtime_offset.is_some() {
            Arc::make_mut(&mut w)
                .transform_runtimes(raw.runtime_scale.map_or(1.0, |f| f.0), raw.runtime_offset.map_or(0.0, |d| d.0))
                .map_err(err)?;
        }
        if let Some(max) = raw.max_pes {
            let policy = if raw.clamp { OversizePolicy::Clamp } else { OversizePolicy::Drop };
            Arc::make_mut(&mut w).fit_to_cluster(max.0, policy);
        }
        if raw.per_pe {
            Arc::make_mut(&mut w).split_per_pe().map_err(err)?;
        }
        if raw.estimate.as_deref() == Some("exact") {
            for j in &mut Arc::make_mut(&mut w).jobs {
                j.requested_time = None;
            }
        }
        match raw.deadline.as_ref().map(deadline_rule).transpose()? {
            Some(DeadlineRule::Slack(s)) if raw.model != Model::Metabroker => {
                let sampler = s.dist().sampler().map_err(err)?;
                for j in &mut Arc::make_mut(&mut w).jobs {
                    j.deadline = Some(j.submit + j.runtime + sampler.sample(rng));
                }
            }
            Some(DeadlineRule::Factor(lo, hi)) => {
                qos::assign_uniform_deadlines(Arc::make_mut(&mut w), lo, hi, rng).map_err(err)?
            }
            _ => {}
        }
        if let Some(u) = &raw.urgency {
            assign_urgency(Arc::make_mut(&mut w), &u.mix(), rng).map_err(err)?;
        }
        if let Some(high) = raw.priority_fraction {
            use rand::RngExt;
            for j in &mut Arc::make_mut(&mut w).jobs {
                j.priority = u8::from(rng.random::<f64>() >= high.0);
            }
        }
        if let Some(local) = raw.local_fraction {
            assign_lease_types(Arc::make_mut(&mut w), local.0, raw, rng);
        }
        if let Some(t) = raw.lease_type {
            Arc::make_mut(&mut w).jobs.iter_mut().for_each(|j| j.lease = Some(t));
        }
        if let Some(price) = raw.budget_price {
            for j in &mut Arc::make_mut(&mut w).jobs {
                j.budget = Some(qos::relaxed_budget(j.runtime, j.pes, price.0));
            }
        }
        if let Some(d) = &raw.budget {
            let sampler = d.sampler().map_err(err)?;
            for j in &mut Arc::make_mut(&mut w).jobs {
                j.budget = Some(sampler.sample(rng));
            }
        }
        // Drawn last, so that the other draws stay as they were.
        if let Some(d) = &raw.budget_per_pe_second {
            let sampler = d.sampler().map_err(err)?;
            for j in &mut Arc::make_mut(&mut w).jobs {
                j.budget = Some(sampler.sample(rng) * f64::from(j.pes) * j.runtime);
            }
        }
        // Drawn after every other draw, so that adding it leaves them as they were.
        if let Some(d) = &raw.data_size {
            let sampler = d.sampler().map_err(err)?;
            for j in &mut Arc::make_mut(&mut w).jobs {
                j.data = Some(sampler.sample(rng).max(0.0));
            }
        }
        // Whatever the draws, the simulation gets times it can hold (the means were checked when loading).
        let out_of_range = |t: f64| !(0.0..=MAX_TIME).contains(&t);
        if let Some(j) = w.jobs.iter().find(|j| out_of_range(j.submit) || out_of_range(j.runtime)) {
            return Err(format!(
                "job {} was drawn with submit time {} s and runtime {} s; each must be from 0 to {} s",
                j.id,
                short(j.submit),
                short(j.runtime),
                short(MAX_TIME)
            ));
        }
        Ok(w)
    }
}

enum DeadlineRule {
    Slack(DeadlineSlack),
    Factor(f64, f64),
}

fn deadline_rule(v: &toml::Value) -> Result<DeadlineRule, String> {
    let number = |v: &toml::Value| v.as_float().or_else(|| v.as_integer().map(|i| i as f64));
    match v {
        toml::Value::String(s) => match s.as_str() {
            "tight" => Ok(DeadlineRule::Slack(DeadlineSlack::Tight)),
            "medium" => Ok(DeadlineRule::Slack(DeadlineSlack::Medium)),
            "relaxed" => Ok(DeadlineRule::Slack(DeadlineSlack::Relaxed)),
            other => Err(format!("expected \"tight\", \"medium\", \"relaxed\" or [low, high], found \"{other}\"")),
        },
        toml::Value::Array(a) if a.len() == 2 => match (number(&a[0]), number(&a[1])) {
            (Some(lo), Some(hi)) if 0.0 <= lo && lo <= hi && hi <= MAX_DEADLINE_FACTOR => {
                Ok(DeadlineRule::Factor(lo, hi))
            }
            _ => {
                Err(format!("expected [low, high] with 0 <= low <= high <= {}, found {v}", short(MAX_DEADLINE_FACTOR)))
            }
        },
        other => Err(format!("expected \"tight\", \"medium\", \"relaxed\" or [low, high], found {other}")),
    }
}

/// The range of task-count variations `task-variation` gives: a fraction, or `[low, high]`, within (0, 1].
fn task_variation(v: &toml::Value) -> Result<[f64; 2], String> {
    let number = |v: &toml::Value| v.as_float().or_else(|| v.as_integer().map(|i| i as f64));
    let fraction = |x: f64| 0.0 < x && x <= 1.0;
    let range = match v {
        toml::Value::Array(a) if a.len() == 2 => number(&a[0]).zip(number(&a[1])).map(|(lo, hi)| [lo, hi]),
        other => number(other).map(|x| [x, x]),
    };
    match range {
        Some([lo, hi]) if fraction(lo) && fraction(hi) && lo <= hi => Ok([lo, hi]),
        _ => Err(format!("expected a fraction in (0, 1] or [low, high] with 0 < low <= high <= 1, found {v}")),
    }
}

/// The Lublin parameters the keys give; an error is (the key at fault, why).
fn lublin_params(raw: &RawWorkload) -> Result<LublinParams, (String, String)> {
    fn at(key: &'static str) -> impl Fn(crate::workload::WorkloadError) -> (String, String) {
        move |e| (key.to_string(), e.to_string())
    }
    let mut p = match raw.preset.as_deref().unwrap_or("typed") {
        "typed" => LublinParams::typed(),
        "typeless" => LublinParams::typeless(),
        "garg-ch5" => LublinParams::garg_ch5(),
        "salehi-ch3" => LublinParams::amini_salehi_ch3().map_err(at("preset"))?,
        "thunder" => LublinParams::thunder().map_err(at("preset"))?,
        "thunder-table" => LublinParams::thunder_table().map_err(at("preset"))?,
        other => {
            let m = format!(
                "expected \"typed\", \"typeless\", \"garg-ch5\", \"salehi-ch3\", \"thunder\" or \"thunder-table\", \
                 found \"{other}\""
            );
            return Err(("preset".into(), m));
        }
    };
    if let Some(n) = raw.max_nodes {
        if n.0 > MAX_NODES {
            return Err((
                "max-nodes".into(),
                format!("expected a positive integer up to {MAX_NODES} (2^20), found {}", n.0),
            ));
        }
        p = p.with_max_nodes(n.0);
    }
    for (key, value) in [("u-hi", raw.u_hi), ("u-med", raw.u_med)] {
        if let Some(v) = value
            && !(0.0..=20.0).contains(&v)
        {
            return Err((key.into(), format!("expected a number from 0 to 20 (log2 of 2^20 PEs), found {}", short(v))));
        }
    }
    for s in &mut p.streams {
        if let Some(h) = raw.u_hi {
            s.class.size.u_hi = h;
        }
        if let Some(m) = raw.u_med {
            s.class.size.u_med = m;
        }
        // What was set last is at fault: `u-hi` or `u-med` against each other or the preset's ULOW.
        let key = if raw.u_med.is_some() {
            "u-med"
        } else if raw.u_hi.is_some() {
            "u-hi"
        } else {
            "preset"
        };
        s.class.size.validate().map_err(at(key))?;
    }
    if let Some(m) = raw.mean_nodes {
        p = p.fit_mean_nodes(m.0).map_err(at("mean-nodes"))?;
    }
    if let Some(m) = raw.mean_runtime {
        p = p.scale_runtime_to_mean(m.0).map_err(at("mean-runtime"))?;
    }
    if let Some(m) = raw.mean_interarrival {
        p = p.scale_interarrival_to_mean(m.0).map_err(at("mean-interarrival"))?;
    }
    p.validate().map_err(at("preset"))?;
    Ok(p)
}

/// Whether `key` (kebab-case) of the workload's table is given.
fn given(raw: &RawWorkload, key: &str) -> bool {
    match key {
        "jobs" => raw.jobs.is_some(),
        "until" => raw.until.is_some(),
        "preset" => raw.preset.is_some(),
        "max-nodes" => raw.max_nodes.is_some(),
        "u-hi" => raw.u_hi.is_some(),
        "u-med" => raw.u_med.is_some(),
        "mean-nodes" => raw.mean_nodes.is_some(),
        "mean-runtime" => raw.mean_runtime.is_some(),
        "mean-interarrival" => raw.mean_interarrival.is_some(),
        "cluster" => raw.cluster.is_some(),
        "interarrival-unit" => raw.interarrival_unit.is_some(),
        "scale" => raw.scale.is_some(),
        "task-duration" => raw.task_duration.is_some(),
        "bags" => raw.bags,
        "urgency-ratios" => raw.urgency_ratios,
        "rate" => raw.rate.is_some(),
        "class-rates" => raw.class_rates.is_some(),
        "priority-fraction" => raw.priority_fraction.is_some(),
        "runtime" => raw.runtime.is_some(),
        "pes" => raw.pes.is_some(),
        "pes-range" => raw.pes_range.is_some(),
        "file" => raw.file.is_some(),
        "task-variation" => raw.task_variation.is_some(),
        "clamp" => raw.clamp,
        "max-pes" => raw.max_pes.is_some(),
        "local-fraction" => raw.local_fraction.is_some(),
        "best-effort-fraction" => raw.best_effort_fraction.is_some(),
        "dc-deadline-factor" => raw.dc_deadline_factor.is_some(),
        "urgency" => raw.urgency.is_some(),
        "data-size" => raw.data_size.is_some(),
        "lease-type" => raw.lease_type.is_some(),
        "rho" => raw.rho.is_some(),
        "delta" => raw.delta.is_some(),
        "theta" => raw.theta.is_some(),
        "rp-nodes" => raw.rp_nodes.is_some(),
        "notice" => raw.notice.is_some(),
        _ => false,
    }
}

/// Refuses a generated workload that would on average hold more than [`MAX_JOBS`] jobs, or whose arrivals (`gap`
/// apart on average, of `per_arrival` jobs each, submit times multiplied by `scale`) would go on beyond [`MAX_TIME`].
fn check_arrivals(
    raw: &RawWorkload,
    gap: f64,
    per_arrival: f64,
    gap_key: &str,
    scale: f64,
) -> Result<(), (String, String)> {
    let (key, arrivals) = match (raw.jobs, raw.until) {
        (Some(n), _) => ("jobs", n.0 as f64),
        (None, Some(t)) => ("until", t.0 / gap),
        (None, None) => return Ok(()),
    };
    let jobs = arrivals * per_arrival;
    if jobs > MAX_JOBS as f64 {
        let each = if per_arrival == 1.0 { String::new() } else { format!(" of {} jobs each", approx(per_arrival)) };
        let m = format!(
            "about {} arrivals{each} ({} s apart on average) make about {} jobs, more than the limit of {MAX_JOBS} \
             per workload",
            approx(arrivals),
            approx(gap),
            approx(jobs)
        );
        return Err((key.into(), m));
    }
    // The last arrival, on average, before and after `time-scale`: whichever passes the limit is at fault.
    let last = raw.until.map_or(arrivals * gap, |t| t.0);
    let limit = short(MAX_TIME);
    if last > MAX_TIME {
        let m = format!(
            "{} arrivals {} s apart on average end near {} s, beyond {limit} s",
            approx(arrivals),
            approx(gap),
            approx(last)
        );
        return Err((gap_key.into(), m));
    }
    if last * scale > MAX_TIME {
        let m = format!("puts the last arrival near {} s, beyond {limit} s", approx(last * scale));
        return Err(("time-scale".into(), m));
    }
    Ok(())
}

/// A Poisson workload's runtime distribution: no negative runtimes, a mean within
/// [[`MIN_MEAN_RUNTIME`], [`MAX_TIME`]].
fn runtime_dist(d: &Dist) -> Result<(), String> {
    d.sampler().map_err(|e| e.to_string())?;
    if !d.non_negative() {
        return Err("may draw negative runtimes: use a distribution of non-negative values, e.g. \
                    `truncated_normal` with `low = 0`"
            .into());
    }
    let mean = d.mean();
    if !(MIN_MEAN_RUNTIME..=MAX_TIME).contains(&mean) {
        let (lo, hi) = (short(MIN_MEAN_RUNTIME), short(MAX_TIME));
        return Err(format!("expected a mean runtime from {lo} to {hi} s, found {}", short(mean)));
    }
    Ok(())
}

fn cluster(raw: &RawWorkload) -> Result<Option<InterGridCluster>, String> {
    match raw.cluster.as_deref() {
        None => Ok(None),
        Some("C64") => Ok(Some(InterGridCluster::C64)),
        Some("C128") => Ok(Some(InterGridCluster::C128)),
        Some("C256") => Ok(Some(InterGridCluster::C256)),
        Some(other) => Err(format!("expected \"C64\", \"C128\" or \"C256\", found \"{other}\"")),
    }
}

/// The DAS-2 model of `cluster` (the external rows without one), with the means of `mean-nodes`, `mean-runtime` and
/// `mean-interarrival`; errors name the key.
fn das2(raw: &RawWorkload) -> Result<Das2Model, (String, String)> {
    let mut model = match cluster(raw).map_err(|m| ("cluster".to_string(), m))? {
        Some(c) => Das2Model::local_default(c),
        None => Das2Model::external_default().map_err(|e| ("cluster".to_string(), e.to_string()))?,
    }
    .in_unit(raw.interarrival_unit.unwrap_or_default());
    if let Some(m) = raw.mean_nodes {
        model.size = model.size.with_mean(m.0).map_err(|e| ("mean-nodes".to_string(), e.to_string()))?;
    }
    if let Some(m) = raw.mean_runtime {
        model.duration = Dist::lognormal_with_mean(m.0, Das2Model::DURATION_SIGMA);
    }
    if let Some(m) = raw.mean_interarrival
        && let Dist::Weibull { shape, .. } = model.interarrival
    {
        model.interarrival = Dist::weibull_with_mean(m.0, shape);
    }
    Ok(model)
}

/// The bag-of-tasks model of `cluster`, with the tables' defaults (Amini Salehi 2012, Table 5.2): α_e 1.7, α_l 4, M 90
/// s.
fn bot(raw: &RawWorkload) -> Result<BotModel, String> {
    let m = raw.task_duration.map_or(90.0, |m| m.0);
    let mut model = match cluster(raw)? {
        Some(c) => BotModel::local(raw.scale.map_or(4.0, |a| a.0), m, c),
        None => BotModel::external(raw.scale.map_or(1.7, |a| a.0), m),
    };
    model.whole_bags = raw.bags;
    if raw.bags && !raw.urgency_ratios {
        model.urgency = None;
    }
    Ok(model)
}

/// Poisson arrivals with i.i.d. runtimes: the M/G/c input of the analytic validation.
fn poisson(raw: &RawWorkload, limit: Limit, rng: &mut agents::sim::rng::SimRng) -> Result<Workload, String> {
    use rand::RngExt;
    let rate = poisson_rate(raw);
    let class_rates: Vec<f64> = raw.class_rates.iter().flatten().map(|r| r.0).collect();
    let gaps = Dist::poisson_arrivals(rate).sampler().map_err(|e| e.to_string())?;
    let runtimes = raw.runtime.as_ref().ok_or("`runtime` is required")?.sampler().map_err(|e| e.to_string())?;
    let pes = raw.pes.map_or(1, |p| p.0);
    let mut jobs = Vec::new();
    let mut t = 0.0;
    loop {
        t += gaps.sample(rng);
        let n = jobs.len();
        if limit.reached(n, t) {
            break;
        }
        let mut job = WorkloadJob::new(n as u64 + 1, t, runtimes.sample(rng), pes);
        if let Some([lo, hi]) = raw.pes_range {
            job.pes = rng.random_range(lo..=hi);
        }
        // Independent Poisson streams, one per class, merged: each arrival is of class i with probability λi / λ.
        if class_rates.len() > 1 {
            let mut u = rng.random::<f64>() * rate;
            let class = class_rates.iter().position(|&r| {
                u -= r;
                u < 0.0
            });
            // Rounding can leave u just above 0 after the last class: it is the last.
            job.priority = class.unwrap_or(class_rates.len() - 1) as u8;
        }
        jobs.push(job);
    }
    Ok(Workload::new(jobs))
}

/// A Poisson workload's arrival rate [1/s]: `rate`, or the sum of `class-rates`.
fn poisson_rate(raw: &RawWorkload) -> f64 {
    match (&raw.rate, &raw.class_rates) {
        (Some(r), _) => r.0,
        (None, Some(rates)) => rates.iter().map(|r| r.0).sum(),
        (None, None) => 1.0,
    }
}

/// Garg (2010) §6.5: each job's urgency class and deadline. Every job draws a uniform number, which makes it of high
/// urgency below the mix's fraction, and a seed for its ratio, whatever its class: so the points of a sweep over the
/// fraction share their draws (a job of high urgency at one fraction is so at every larger one, with the same ratio).
fn assign_urgency(
    w: &mut Workload,
    mix: &UrgencyMix,
    rng: &mut agents::sim::rng::SimRng,
) -> Result<(), crate::workload::WorkloadError> {
    use crate::workload::{Urgency, UrgencyClass};
    use rand::{RngExt, SeedableRng};
    let (high, low) = (mix.high_ratio.sampler()?, mix.low_ratio.sampler()?);
    for j in &mut w.jobs {
        let u: f64 = rng.random();
        let mut own = agents::sim::rng::SimRng::seed_from_u64(rng.random());
        let (class, ratio) =
            if u < mix.high_fraction { (UrgencyClass::High, &high) } else { (UrgencyClass::Low, &low) };
        let urgency = Urgency { class, deadline_ratio: ratio.sample(&mut own) };
        j.deadline = Some(urgency.deadline(j.submit, j.runtime));
        j.urgency = Some(urgency);
    }
    Ok(())
}

/// Amini Salehi (2012) ch 3 (§3.3.2): "we generated these types uniformly and assigned them to the generated
/// workloads": local with probability `local`, else external, best effort or deadline-constrained by
/// `best-effort-fraction`, each class split evenly between its two types.
///
/// Every job draws the same three numbers whatever its type, so that the points of a sweep over these fractions
/// share their random numbers: the same jobs are local at every best-effort share, a job best effort at one share
/// stays so at every larger one, and a job local at one local share stays so at every larger one (otherwise the
/// draws a type consumes would shift every later job's, and each point would draw other local requests).
/// The local-request interleaver of Amini Salehi (2012) ch6 the keys give (checked: all present); an error says
/// what is wrong with `theta`.
fn local_requests(raw: &RawWorkload) -> Result<crate::workload::models::LocalRequestModel, String> {
    use crate::workload::models::{LocalRequestModel, LocalSize};
    let theta = match raw.theta.as_deref() {
        Some("small") => LocalSize::Small,
        Some("medium") | None => LocalSize::Medium,
        Some("large") => LocalSize::Large,
        Some(other) => return Err(format!("expected \"small\", \"medium\" or \"large\", found \"{other}\"")),
    };
    Ok(LocalRequestModel {
        rho: raw.rho.map_or(0.0, |r| r.0),
        mean_duration: raw.delta.map_or(0.0, |d| d.0),
        nodes: theta.range(),
        rp_nodes: raw.rp_nodes.map_or(1, |n| n.0),
        horizon: raw.until.map_or(0.0, |u| u.0),
        notice: raw.notice.map_or(0.0, |n| n.0),
    })
}

fn assign_lease_types(w: &mut Workload, local: f64, raw: &RawWorkload, rng: &mut agents::sim::rng::SimRng) {
    use agents::protocol::LeaseType;
    use rand::RngExt;
    let best_effort = raw.best_effort_fraction.map_or(0.5, |f| f.0);
    let factor = raw.dc_deadline_factor.map_or(3.0, |f| f.0);
    for j in &mut w.jobs {
        let [origin, class, kind]: [f64; 3] = std::array::from_fn(|_| rng.random());
        let lease = match (origin < local, class < best_effort, kind < 0.5) {
            (true, ..) => LeaseType::Local,
            (false, true, true) => LeaseType::Cancellable,
            (false, true, false) => LeaseType::Suspendable,
            (false, false, true) => LeaseType::Migratable,
            (false, false, false) => LeaseType::NonPreemptable,
        };
        if matches!(lease, LeaseType::Migratable | LeaseType::NonPreemptable) {
            j.deadline = Some(j.submit + factor * j.runtime);
        }
        j.lease = Some(lease);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::WorkloadJob;
    use agents::protocol::LeaseType;

    /// The lease types of 2,000 one-PE jobs drawn with the same seed at `local` and `best_effort`.
    fn types(local: f64, best_effort: f64) -> Vec<LeaseType> {
        let jobs = (0..2000).map(|i| WorkloadJob::new(i + 1, i as f64, 100.0, 1)).collect();
        let mut w = Workload::new(jobs);
        let raw: RawWorkload = toml::from_str(&format!(
            "model = \"lublin\"\nlocal-fraction = {local}\nbest-effort-fraction = {best_effort}"
        ))
        .expect("a valid workload table");
        assign_lease_types(&mut w, local, &raw, &mut agents::sim::rng::stream(7, "types", 0));
        w.jobs.iter().map(|j| j.lease.expect("typed")).collect()
    }

    /// The jobs of a workload table whose files are in `tests/fixtures`, drawn with seed 5.
    fn generate(table: &str) -> Workload {
        let raw: RawWorkload = toml::from_str(table).expect("a valid workload table");
        let base = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures"));
        let plan = WorkloadPlan::check(&raw, base, &mut TraceCache::default()).expect("a valid workload");
        Arc::unwrap_or_clone(plan.generate(&mut agents::sim::rng::stream(5, "workload", 0)).expect("jobs"))
    }

    fn ids(w: &Workload) -> Vec<u64> {
        w.jobs.iter().map(|j| j.id).collect()
    }

    #[test]
    fn the_das2_replay_offers_the_utilisation_it_is_calibrated_to() {
        // scenarios/pcu/das2.toml calibrates its arrival rate to 15% of DAS-2's 400 CPUs, at full and quick size.
        let doc: toml::Table = toml::from_str(include_str!("../../scenarios/pcu/das2.toml")).unwrap();
        let full = doc["workloads"]["jobs"].as_table().unwrap().clone();
        let mut quick = full.clone();
        for (key, value) in doc["quick"].as_table().unwrap() {
            if let Some(key) = key.strip_prefix("workloads.jobs.") {
                quick.insert(key.to_string(), value.clone());
            }
        }
        for table in [&full, &quick] {
            let raw: RawWorkload = table.clone().try_into().unwrap();
            let model = das2(&raw).unwrap();
            let scale = raw.runtime_scale.map_or(1.0, |s| s.0);
            // Arrival rate × mean CPUs × mean runtime over the CPUs.
            let offered = model.offered_load(model.size.mean(), 400.0, 1.0) * scale;
            assert!((offered - 0.15).abs() < 0.001, "{offered}");
        }
        // On draws, split per CPU: every job has one PE and the work offered is 15% of the CPUs' time.
        let mut drawn = full.clone();
        drawn.remove("until");
        drawn.insert("jobs".into(), toml::Value::Integer(200_000));
        let w = generate(&toml::to_string(&drawn).unwrap());
        assert!(w.jobs.iter().all(|j| j.pes == 1));
        let span = w.jobs.iter().map(|j| j.submit).fold(0.0, f64::max);
        let offered = w.jobs.iter().map(|j| j.runtime).sum::<f64>() / (400.0 * span);
        assert!((offered - 0.15).abs() < 0.15 * 0.05, "{offered}");
    }

    #[test]
    fn per_pe_splits_a_model_s_jobs_keeping_their_work() {
        let table = "model = \"das2\"\ncluster = \"C64\"\njobs = 200";
        let (whole, split) = (generate(table), generate(&format!("{table}\nper-pe = true")));
        let pes: u32 = whole.jobs.iter().map(|j| j.pes).sum();
        assert!(pes > 200, "some jobs are parallel: {pes}");
        assert_eq!(split.jobs.len(), pes as usize);
        assert!(split.jobs.iter().all(|j| j.pes == 1));
        let work = |w: &Workload| w.jobs.iter().map(|j| f64::from(j.pes) * j.runtime).sum::<f64>();
        assert!((work(&whole) - work(&split)).abs() < 1e-6 * work(&whole));
    }

    #[test]
    fn das2_gaps_in_minutes_are_sixty_times_those_in_seconds() {
        let table =
            |unit: &str| format!("model = \"das2\"\ncluster = \"C64\"\njobs = 20\ninterarrival-unit = \"{unit}\"");
        let (s, min) = (generate(&table("seconds")), generate(&table("minutes")));
        assert_eq!(s, generate("model = \"das2\"\ncluster = \"C64\"\njobs = 20"), "seconds is the default");
        for (a, b) in s.jobs.iter().zip(&min.jobs) {
            assert!((b.submit - 60.0 * a.submit).abs() < 1e-6 * b.submit, "{} vs {}", b.submit, a.submit);
            assert_eq!((a.pes, a.runtime), (b.pes, b.runtime));
        }
        // `mean-interarrival` stays in seconds.
        let fixed = |unit: &str| generate(&format!("{}\nmean-interarrival = 30", table(unit)));
        assert_eq!(fixed("seconds"), fixed("minutes"));
        let raw: RawWorkload = toml::from_str("model = \"lublin\"\ninterarrival-unit = \"minutes\"").unwrap();
        let (key, _) = WorkloadPlan::check(&raw, Path::new("."), &mut TraceCache::default()).unwrap_err();
        assert_eq!(key, "interarrival-unit");
        assert!(toml::from_str::<RawWorkload>("model = \"das2\"\ninterarrival-unit = \"hours\"").is_err());
    }

    #[test]
    fn local_requests_are_local_leases_and_lease_type_types_every_job() {
        // n = ρ·nodes·horizon / (δ·θ̄) = 0.15 × 512 × 30 days / (3 h × 36.5) = 505 (Amini Salehi 2012, ch6).
        let w = generate(
            "model = \"local-requests\"\nuntil = 2592000.0\nrho = 0.15\ndelta = 10800.0\ntheta = \"medium\"\nrp-nodes = 512",
        );
        assert_eq!(w.jobs.len(), 505);
        assert!(w.jobs.iter().all(|j| j.lease == Some(LeaseType::Local) && (25..=48).contains(&j.pes)));
        // `notice`: the same requests, each made that long before its start.
        let ahead = generate(
            "model = \"local-requests\"\nuntil = 2592000.0\nrho = 0.15\ndelta = 10800.0\ntheta = \"medium\"\nrp-nodes = 512\nnotice = 86400.0",
        );
        assert_eq!(ahead.jobs.len(), w.jobs.len());
        for (a, s) in ahead.jobs.iter().zip(&w.jobs) {
            assert_eq!((a.earliest_start, a.submit), (Some(s.submit), (s.submit - 86_400.0).max(0.0)));
        }
        let w = generate("model = \"swf\"\nfile = \"small.swf\"\nlease-type = \"suspendable\"");
        assert!(!w.jobs.is_empty() && w.jobs.iter().all(|j| j.lease == Some(LeaseType::Suspendable)));
        let bad = |table: &str| {
            let raw: RawWorkload = toml::from_str(table).expect("a valid workload table");
            WorkloadPlan::check(&raw, Path::new("."), &mut TraceCache::default()).unwrap_err()
        };
        let e = bad(
            "model = \"local-requests\"\nuntil = 1000.0\nrho = 0.1\ndelta = 3600.0\ntheta = \"huge\"\nrp-nodes = 8",
        );
        assert_eq!(e.0, "theta");
        assert_eq!(bad("model = \"local-requests\"\nuntil = 1000.0").0, "rho");
        assert_eq!(bad("model = \"lublin\"\nnotice = 60.0").0, "notice", "a key only local requests read");
        assert!(toml::from_str::<RawWorkload>("model = \"local-requests\"\nnotice = -1.0").is_err());
    }

    #[test]
    fn a_trace_read_again_after_it_changed_is_an_error() {
        let path = std::env::temp_dir().join(format!("gridmarket-changed-{}.swf", std::process::id()));
        let record = |runtime: u32| format!("1 0 10 {runtime} 4 -1 -1 4 7200 -1 1 1 1 -1 1 -1 -1 -1\n");
        std::fs::write(&path, record(3600)).unwrap();
        let trace = Trace::check(path.clone(), Model::Swf).unwrap();
        assert_eq!(trace.jobs().unwrap().jobs.len(), 1, "read as checked");
        // Freed (no run holds it), then the file changes before the next run reads it.
        std::fs::write(&path, record(60)).unwrap();
        let changed = trace.jobs();
        std::fs::remove_file(&path).unwrap();
        assert!(changed.unwrap_err().ends_with(": the file changed while the study ran"));
    }

    #[test]
    fn a_gzip_trace_gives_the_jobs_of_the_plain_one() {
        let gz = generate("model = \"swf\"\nfile = \"small.swf.gz\"");
        assert_eq!(gz, generate("model = \"swf\"\nfile = \"small.swf\""));
        assert_eq!(ids(&gz), [1, 2, 4, 5]);
        let gwf = generate("model = \"gwf\"\nfile = \"small.gwf.gz\"");
        assert_eq!(gwf.jobs, generate("model = \"gwf\"\nfile = \"small.gwf\"").jobs);
    }

    #[test]
    fn first_keeps_exactly_the_first_jobs_in_file_order() {
        // Record 3 of the trace cannot be simulated: the first three jobs are 1, 2 and 4.
        assert_eq!(ids(&generate("model = \"swf\"\nfile = \"small.swf\"\nfirst = 3")), [1, 2, 4]);
        assert_eq!(ids(&generate("model = \"swf\"\nfile = \"small.swf\"\nfirst = 100")), [1, 2, 4, 5]);
        // After `window`, which re-bases: the first two submitted from 60 s on.
        let w = generate("model = \"swf\"\nfile = \"small.swf\"\nwindow = [60, 1000]\nfirst = 2");
        assert_eq!(ids(&w), [2, 4]);
        assert_eq!(w.jobs[0].submit, 0.0);
        // Before `max-pes` drops wide jobs: of jobs 1, 2, 4, job 1 (32 PEs) goes.
        assert_eq!(ids(&generate("model = \"swf\"\nfile = \"small.swf\"\nfirst = 3\nmax-pes = 16")), [2, 4]);
        // A bag-of-tasks workload's `jobs` counts bags: `first` counts tasks.
        let bot = generate("model = \"bot\"\njobs = 30\nfirst = 30");
        assert_eq!(bot.jobs.len(), 30);
        assert!(bot.jobs.last().and_then(|j| j.bot).is_some_and(|b| b < 30), "30 bags hold more than 30 tasks");
    }

    #[test]
    fn runtime_scale_and_offset_apply_to_runtimes_and_estimates() {
        let plain = generate("model = \"swf\"\nfile = \"small.swf\"");
        let scaled = generate("model = \"swf\"\nfile = \"small.swf\"\nruntime-scale = 0.5\nruntime-offset = 10");
        for (a, b) in plain.jobs.iter().zip(&scaled.jobs) {
            assert_eq!(b.runtime, a.runtime * 0.5 + 10.0);
            assert_eq!(b.requested_time, a.requested_time.map(|t| t * 0.5 + 10.0));
            assert_eq!(b.submit, a.submit);
        }
        assert_eq!((scaled.jobs[0].runtime, scaled.jobs[0].requested_time), (1810.0, Some(3610.0)));
        // With `estimate = "exact"` the scaled runtime is the estimate.
        let exact = generate("model = \"swf\"\nfile = \"small.swf\"\nruntime-scale = 2\nestimate = \"exact\"");
        assert_eq!((exact.jobs[0].runtime, exact.jobs[0].requested_time), (7200.0, None));
    }

    #[test]
    fn urgency_classes_give_deadlines_and_nest_across_fractions() {
        let table = |f: f64| {
            format!(
                "model = \"poisson\"\njobs = 4000\nrate = 1\nruntime = {{ kind = \"constant\", value = 100.0 }}\nurgency = {{ high-fraction = {f} }}\ndata-size = {{ kind = \"uniform\", low = 0.0, high = 10000.0 }}"
            )
        };
        let (some, more) = (generate(&table(0.2)), generate(&table(0.6)));
        let ratio = |j: &WorkloadJob| (j.deadline.unwrap() - j.submit) / j.runtime;
        let mean = |w: &Workload, high: bool| {
            let is_high = |j: &&WorkloadJob| j.urgency.unwrap().class == crate::workload::UrgencyClass::High;
            let of: Vec<f64> = w.jobs.iter().filter(|j| is_high(j) == high).map(ratio).collect();
            (of.len() as f64 / w.jobs.len() as f64, of.iter().sum::<f64>() / of.len() as f64)
        };
        // HU ratios N(4, 2) and LU N(12, 6), truncated at 1: the shares and means of each class.
        let (share, hu) = mean(&some, true);
        assert!((share - 0.2).abs() < 0.03 && (hu - 4.0).abs() < 0.15, "{share} {hu}");
        let (_, lu) = mean(&some, false);
        assert!((lu - 12.0).abs() < 0.2, "{lu}");
        for (a, b) in some.jobs.iter().zip(&more.jobs) {
            assert_eq!(a.submit, b.submit);
            assert!(ratio(a) >= 1.0);
            // High urgency at 20% stays so, with its ratio, at 60%.
            if a.urgency.unwrap().class == crate::workload::UrgencyClass::High {
                assert_eq!(a.deadline, b.deadline);
            }
            assert_eq!(a.data, b.data);
            assert!((0.0..=10000.0).contains(&a.data.unwrap()));
        }
    }

    #[test]
    fn budgets_are_drawn_from_their_distribution() {
        let w = generate(
            "model = \"lublin\"\npreset = \"thunder\"\njobs = 500\ndeadline = [1, 3]\n\
             budget = { kind = \"uniform\", low = 90000.0, high = 160000.0 }",
        );
        assert!(w.jobs.iter().all(|j| j.budget.is_some_and(|b| (90_000.0..160_000.0).contains(&b))));
        let deadlines = |j: &WorkloadJob| j.deadline.map(|d| (d - j.submit) / j.runtime);
        assert!(w.jobs.iter().all(|j| deadlines(j).is_some_and(|f| (1.0..=3.0 + 1e-9).contains(&f))));
        let check = |table: &str| {
            let raw: RawWorkload = toml::from_str(table).expect("a valid workload table");
            WorkloadPlan::check(&raw, Path::new("."), &mut TraceCache::default()).map(drop).unwrap_err().0
        };
        let both = "model = \"lublin\"\njobs = 5\nbudget-price = 4.5\nbudget = { kind = \"constant\", value = 1.0 }";
        assert_eq!(check(both), "budget");
        let negative = "model = \"lublin\"\njobs = 5\nbudget = { kind = \"uniform\", low = -1.0, high = 1.0 }";
        assert_eq!(check(negative), "budget");
    }

    #[test]
    fn class_rates_give_each_class_its_rate() {
        let w = generate(
            "model = \"poisson\"\nclass-rates = [0.2, 0.6]\njobs = 40000\nruntime = { kind = \"constant\", value = 1.0 }",
        );
        let span = w.jobs.last().map_or(0.0, |j| j.submit);
        let rate = |class: u8| w.jobs.iter().filter(|j| j.priority == class).count() as f64 / span;
        // 40,000 arrivals: each class's count has a relative standard error below 1%; the bands are 4%.
        assert!((rate(0) / 0.2 - 1.0).abs() < 0.04, "class 0: {}", rate(0));
        assert!((rate(1) / 0.6 - 1.0).abs() < 0.04, "class 1: {}", rate(1));
        assert!(w.jobs.iter().all(|j| j.priority <= 1));
    }

    #[test]
    fn sweep_points_over_the_type_fractions_share_their_draws() {
        let best_effort = |l: LeaseType| matches!(l, LeaseType::Cancellable | LeaseType::Suspendable);
        let (few, many) = (types(0.3, 0.1), types(0.3, 0.5));
        for (a, b) in few.iter().zip(&many) {
            // The same local requests at every best-effort share, and best effort stays best effort.
            assert_eq!(*a == LeaseType::Local, *b == LeaseType::Local);
            assert!(!best_effort(*a) || best_effort(*b), "{a:?} at 10% but {b:?} at 50%");
        }
        let (fewer, more) = (types(0.2, 0.5), types(0.7, 0.5));
        for (a, b) in fewer.iter().zip(&more) {
            // A local request at 20% is local at 70%; an external one keeps its type unless it becomes local.
            assert!(*a != LeaseType::Local || *b == LeaseType::Local);
            assert!(*b == LeaseType::Local || a == b, "{a:?} at 20% local but {b:?} at 70%");
        }
        let share = |t: &[LeaseType], f: fn(&LeaseType) -> bool| t.iter().filter(|l| f(l)).count() as f64 / 2000.0;
        assert!((share(&more, |l| *l == LeaseType::Local) - 0.7).abs() < 0.04);
        assert!((share(&few, |l| *l == LeaseType::Cancellable) - 0.7 * 0.1 * 0.5).abs() < 0.02);
    }

    #[test]
    fn budgets_per_pe_second_value_each_job_at_a_drawn_price() {
        let w = generate(
            "model = \"poisson\"\njobs = 400\nrate = 0.1\nruntime = { kind = \"constant\", value = 50.0 }\n\
             budget-per-pe-second = { kind = \"uniform\", low = 2.0, high = 6.0 }",
        );
        let per = |j: &WorkloadJob| j.budget.unwrap() / (f64::from(j.pes) * j.runtime);
        assert!(w.jobs.iter().all(|j| (2.0..6.0).contains(&per(j))));
        let mean = w.jobs.iter().map(per).sum::<f64>() / w.jobs.len() as f64;
        assert!((mean - 4.0).abs() < 0.2, "{mean}");
        let check = |table: &str| {
            let raw: RawWorkload = toml::from_str(table).expect("a valid workload table");
            WorkloadPlan::check(&raw, Path::new("."), &mut TraceCache::default()).map(drop).unwrap_err().0
        };
        let both = "model = \"poisson\"\njobs = 5\nrate = 1\nruntime = { kind = \"constant\", value = 1.0 }\n\
                    budget-price = 4.5\nbudget-per-pe-second = { kind = \"constant\", value = 1.0 }";
        assert_eq!(check(both), "budget-per-pe-second");
        let negative = "model = \"poisson\"\njobs = 5\nrate = 1\nruntime = { kind = \"constant\", value = 1.0 }\n\
                        budget-per-pe-second = { kind = \"uniform\", low = -1.0, high = 1.0 }";
        assert_eq!(check(negative), "budget-per-pe-second");
    }
}
