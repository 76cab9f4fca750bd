//! The `[workloads.<name>]` sections: which model or trace, how many jobs, and the QoS each study attaches.
//!
//! A workload's table is flat: `model = "<name>"` picks a model of the [`WorkloadRegistry`], whose own keys (each
//! model's file beside this one) sit beside the keys every model takes ([`RawShared`]): how many jobs, how they are
//! transformed, and the deadlines, budgets, classes and lease types attached to them.

pub mod bot;
pub mod das2;
pub mod local_requests;
pub mod lublin;
pub mod metabroker;
pub mod poisson;
pub mod registry;
mod standard;
pub mod trace;

use std::path::Path;
use std::sync::Arc;

use agents::registry::ParseError;
use agents::registry::limits::{MAX_JOBS, MAX_TIME, TIME_SCALES, approx, short};
use agents::registry::values::{Delay, Fraction, JobCount, NonNegative, Positive, PositiveInt, Price, Seconds};
use agents::sim::rng::SimRng;
use rand::distr::Distribution;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::workload::dist::Dist;
use crate::workload::qos::{self, DeadlineSlack, UrgencyMix};
use crate::workload::{Limit, OversizePolicy, Workload, WorkloadError};
pub use registry::{Arrivals, CheckCx, Extent, ModelSpec, RawModel, WorkloadModel, WorkloadRegistry};
pub use trace::TraceCache;

/// Largest factor of `dc-deadline-factor` and of `deadline = [low, high]`.
const MAX_DEADLINE_FACTOR: f64 = 1e6;

/// Largest job a model draws [PEs]: the Lublin model's size distribution is tabulated up to 2^20.
const MAX_NODES: u32 = 1 << 20;

/// The keys every model takes: how many jobs, how they are transformed, and the QoS attached to them.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawShared {
    /// Number of jobs (requests; bags for `bot`) to generate, or use `until`, or both (generation stops at whichever
    /// comes first): at most 10 million jobs per workload, which models that would exceed on average are refused.
    /// Not for traces.
    pub jobs: Option<JobCount>,
    /// Generate arrivals until this time [s; at most 1e12] (not for traces or `metabroker`); with `jobs`, stop at
    /// whichever comes first.
    pub until: Option<Seconds>,
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

/// A workload as written: its model, the keys every model takes and the model's own.
#[derive(Debug)]
pub struct RawWorkload {
    /// The model (`model = "<name>"`).
    pub model: &'static dyn WorkloadModel,
    /// The keys every model takes.
    pub shared: RawShared,
    /// The model's own keys.
    pub own: Box<dyn RawModel>,
}

impl RawWorkload {
    /// Reads a `[workloads.<name>]` table with the models of `registry`: `model`, then the shared keys and the
    /// model's own. A key of other models only is refused as such, naming them; an unknown key lists the model's.
    pub fn parse(registry: &WorkloadRegistry, table: toml::Value) -> Result<RawWorkload, ParseError> {
        let table = match table {
            toml::Value::Table(t) => t,
            other => {
                let message = "invalid type: not a table, expected struct RawShared".to_string();
                return Err(agents::registry::parse::<RawShared>(other)
                    .err()
                    .unwrap_or(ParseError { path: vec![], message }));
            }
        };
        let at = |key: &str, message: String| ParseError { path: vec![key.to_string()], message };
        let Some(name) = table.get("model") else {
            return Err(ParseError { path: vec![], message: "missing field `model`".into() });
        };
        let name = agents::registry::parse::<String>(name.clone()).map_err(|e| at("model", e.message))?;
        let Some(model) = registry.model(&name) else {
            let names: Vec<&str> = registry.models().iter().map(|m| m.name()).collect();
            return Err(at("model", format!("unknown variant `{name}`, expected {}", one_of(&names))));
        };
        let shared_keys = registry::key_names::<RawShared>();
        let order: Vec<String> = table.keys().cloned().collect();
        let (mut shared, mut own) = (toml::Table::new(), toml::Table::new());
        for (key, value) in table {
            if model.keys().contains(&key.as_str()) {
                own.insert(key, value);
            } else if shared_keys.contains(&key.as_str()) && model.extent().reads(&key) {
                shared.insert(key, value);
            } else if key != "model" {
                return Err(at(&key, not_a_key(registry, model, &key)));
            }
        }
        match (agents::registry::parse::<RawShared>(toml::Value::Table(shared)), model.parse(toml::Value::Table(own))) {
            (Ok(shared), Ok(own)) => Ok(RawWorkload { model, shared, own }),
            // The first faulty key in the table, as one struct would report it.
            (Err(a), Err(b)) => {
                let place = |e: &ParseError| e.path.first().and_then(|k| order.iter().position(|o| o == k));
                Err(if place(&b).unwrap_or(usize::MAX) < place(&a).unwrap_or(usize::MAX) { b } else { a })
            }
            (Err(e), _) | (_, Err(e)) => Err(e),
        }
    }
}

/// Why `key` is not a key of `model`: it is a key of other models only (named), or of none (the model's are listed,
/// in serde's words, so that the loader words it as any unknown key).
fn not_a_key(registry: &WorkloadRegistry, model: &dyn WorkloadModel, key: &str) -> String {
    let shared = registry::key_names::<RawShared>();
    let reads = |m: &dyn WorkloadModel, k: &str| m.keys().contains(&k) || (shared.contains(&k) && m.extent().reads(k));
    let of: Vec<String> =
        registry.models().iter().filter(|m| reads(**m, key)).map(|m| format!("\"{}\"", m.name())).collect();
    if of.is_empty() {
        let keys: Vec<&str> = std::iter::once("model")
            .chain(model.keys().iter().copied())
            .chain(shared.iter().copied().filter(|k| model.extent().reads(k)))
            .collect();
        return format!("unknown field `{key}`, expected {}", one_of(&keys));
    }
    format!("not a key of the \"{}\" model (only of {})", model.name(), of.join(", "))
}

/// `names` as serde lists what it expected: "`a`", "`a` or `b`", "one of `a`, `b`, `c`".
fn one_of(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.as_slice() {
        [] => "nothing".into(),
        [one] => one.clone(),
        [a, b] => format!("{a} or {b}"),
        all => format!("one of {}", all.join(", ")),
    }
}

/// A checked workload description: trace files are read once, models are drawn per run.
#[derive(Clone, Debug)]
pub struct WorkloadPlan {
    model: &'static dyn WorkloadModel,
    shared: RawShared,
    spec: Arc<dyn ModelSpec>,
}

impl WorkloadPlan {
    /// Checks the description and its trace, if any (once per `traces`). Errors name the offending key
    /// (relative to the workload's table).
    pub fn check(raw: &RawWorkload, base: &Path, traces: &mut TraceCache) -> Result<WorkloadPlan, (String, String)> {
        let shared = &raw.shared;
        shared.check_combinations(raw.model)?;
        shared.check_values()?;
        let spec = raw.own.check(&mut CheckCx { shared, base, traces })?;
        if let Some(arrivals) = spec.arrivals() {
            shared.check_arrivals(arrivals)?;
        }
        Ok(WorkloadPlan { model: raw.model, shared: shared.clone(), spec })
    }

    /// What the user should know about the workload although it is valid: records of its trace left out.
    pub fn note(&self) -> Option<String> {
        self.spec.note()
    }

    /// The jobs of one run, drawn with `rng` (the workload's own stream). A trace replayed as it is comes back
    /// shared, not copied: every run of a study reads the one copy in memory; a transformation copies it first.
    pub fn generate(&self, rng: &mut SimRng) -> Result<Arc<Workload>, String> {
        let raw = &self.shared;
        let limit = match (raw.jobs, raw.until) {
            (Some(n), Some(t)) => Limit::JobsUntil(n.0 as usize, t.0),
            (Some(n), None) => Limit::Jobs(n.0 as usize),
            (None, Some(t)) => Limit::Until(t.0),
            (None, None) => Limit::Jobs(50),
        };
        let mut w = self.spec.generate(limit, rng)?;
        limit.check(w.jobs.len()).map_err(err)?;
        raw.reshape(&mut w)?;
        raw.attach_qos(&mut w, self.model.own_slack_deadlines(), rng)?;
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

/// A generator's or transformation's error, as a run reports it.
fn err(e: WorkloadError) -> String {
    e.to_string()
}

impl RawShared {
    /// Refuses keys that apply only with another, or not with another, and a model of arrivals without `jobs` or
    /// `until`.
    fn check_combinations(&self, model: &dyn WorkloadModel) -> Result<(), (String, String)> {
        let bad = |key: &str, m: String| Err((key.to_string(), m));
        for (key, given, needs, present) in [
            ("clamp", self.clamp, "max-pes", self.max_pes.is_some()),
            (
                "best-effort-fraction",
                self.best_effort_fraction.is_some(),
                "local-fraction",
                self.local_fraction.is_some(),
            ),
            ("dc-deadline-factor", self.dc_deadline_factor.is_some(), "local-fraction", self.local_fraction.is_some()),
        ] {
            if given && !present {
                return bad(key, format!("applies with `{needs}` only, which is not given"));
            }
        }
        if self.lease_type.is_some() && self.local_fraction.is_some() {
            return bad("lease-type", "gives every job's type: leave out `local-fraction`".into());
        }
        if model.extent() == Extent::JobsOrUntil && self.jobs.is_none() && self.until.is_none() {
            return bad("jobs", "a generated workload needs `jobs` or `until`".into());
        }
        Ok(())
    }

    /// Checks each key's value against the limits and the others it must agree with.
    fn check_values(&self) -> Result<(), (String, String)> {
        let bad = |key: &str, m: String| Err((key.to_string(), m));
        if let Some(e) = &self.estimate
            && !matches!(e.as_str(), "exact" | "requested")
        {
            return bad("estimate", format!("expected \"exact\" or \"requested\", found \"{e}\""));
        }
        if let Some(d) = &self.deadline {
            deadline_rule(d).map_err(|m| ("deadline".to_string(), m))?;
        }
        if let Some(u) = &self.urgency {
            if self.deadline.is_some() {
                return bad("urgency", "gives the deadlines: leave out `deadline`".into());
            }
            u.mix().sampler().map_err(|e| ("urgency".to_string(), e.to_string()))?;
        }
        if let Some(d) = &self.data_size {
            d.sampler().map_err(|e| ("data-size".to_string(), e.to_string()))?;
            if !d.non_negative() {
                let m = "may draw negative sizes: use a distribution of non-negative values, e.g. `uniform` from 0";
                return bad("data-size", m.into());
            }
        }
        self.check_budgets()?;
        if let Some(f) = self.dc_deadline_factor
            && f.0 > MAX_DEADLINE_FACTOR
        {
            let m = format!("expected at most {}, found {}", short(MAX_DEADLINE_FACTOR), short(f.0));
            return bad("dc-deadline-factor", m);
        }
        for (key, factor) in [("time-scale", self.time_scale), ("runtime-scale", self.runtime_scale)] {
            if let Some(f) = factor
                && !(TIME_SCALES.0..=TIME_SCALES.1).contains(&f.0)
            {
                let (lo, hi) = (short(TIME_SCALES.0), short(TIME_SCALES.1));
                return bad(key, format!("expected a factor from {lo} to {hi}, found {}", short(f.0)));
            }
        }
        if let Some([from, to]) = self.window
            && !(0.0 <= from && from < to && to <= MAX_TIME)
        {
            let (max, from, to) = (short(MAX_TIME), short(from), short(to));
            return bad("window", format!("expected [from, to] with 0 <= from < to <= {max}, found [{from}, {to}]"));
        }
        Ok(())
    }

    /// At most one of `budget-price`, `budget` and `budget-per-pe-second`, the distributions of non-negative values.
    fn check_budgets(&self) -> Result<(), (String, String)> {
        let bad = |key: &str, m: &str| Err((key.to_string(), m.to_string()));
        if let Some(d) = &self.budget_per_pe_second {
            let key = "budget-per-pe-second";
            if self.budget_price.is_some() || self.budget.is_some() {
                return bad(key, "sets the budgets `budget-price` or `budget` sets: give one of them");
            }
            d.sampler().map_err(|e| (key.to_string(), e.to_string()))?;
            if !d.non_negative() {
                return bad(key, "may draw negative prices: use a distribution of non-negative values");
            }
        }
        if let Some(d) = &self.budget {
            if self.budget_price.is_some() {
                return bad("budget", "draws the budgets `budget-price` sets: give one of them");
            }
            d.sampler().map_err(|e| ("budget".to_string(), e.to_string()))?;
            if !d.non_negative() {
                return bad("budget", "may draw negative budgets: use a distribution of non-negative values");
            }
        }
        Ok(())
    }

    /// Refuses a model's arrivals that would on average make more than [`MAX_JOBS`] jobs, or go on beyond
    /// [`MAX_TIME`] (before or after `time-scale`).
    fn check_arrivals(&self, arrivals: Arrivals) -> Result<(), (String, String)> {
        let Arrivals { gap, per_arrival, key: gap_key } = arrivals;
        let (key, arrivals) = match (self.jobs, self.until) {
            (Some(n), _) => ("jobs", n.0 as f64),
            (None, Some(t)) => ("until", t.0 / gap),
            (None, None) => return Ok(()),
        };
        let jobs = arrivals * per_arrival;
        if jobs > MAX_JOBS as f64 {
            let each =
                if per_arrival == 1.0 { String::new() } else { format!(" of {} jobs each", approx(per_arrival)) };
            let m = format!(
                "about {} arrivals{each} ({} s apart on average) make about {} jobs, more than the limit of \
                 {MAX_JOBS} per workload",
                approx(arrivals),
                approx(gap),
                approx(jobs)
            );
            return Err((key.into(), m));
        }
        // The last arrival, on average, before and after `time-scale`: whichever passes the limit is at fault.
        let last = self.until.map_or(arrivals * gap, |t| t.0);
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
        let scale = self.time_scale.map_or(1.0, |f| f.0);
        if last * scale > MAX_TIME {
            let m = format!("puts the last arrival near {} s, beyond {limit} s", approx(last * scale));
            return Err(("time-scale".into(), m));
        }
        Ok(())
    }

    /// Applies the transformations, in order: `window`, `first`, `time-scale`, `runtime-scale` and
    /// `runtime-offset`, `max-pes`, `per-pe`, `estimate`.
    fn reshape(&self, w: &mut Arc<Workload>) -> Result<(), String> {
        if let Some([from, to]) = self.window {
            *w = Arc::new(w.window(from, to).map_err(err)?);
        }
        if let Some(n) = self.first
            && n.0 < w.jobs.len() as u64
        {
            Arc::make_mut(w).truncate(n.0 as usize);
        }
        if let Some(f) = self.time_scale {
            Arc::make_mut(w).scale_submit(f.0).map_err(err)?;
        }
        if self.runtime_scale.is_some() || self.runtime_offset.is_some() {
            Arc::make_mut(w)
                .transform_runtimes(self.runtime_scale.map_or(1.0, |f| f.0), self.runtime_offset.map_or(0.0, |d| d.0))
                .map_err(err)?;
        }
        if let Some(max) = self.max_pes {
            let policy = if self.clamp { OversizePolicy::Clamp } else { OversizePolicy::Drop };
            Arc::make_mut(w).fit_to_cluster(max.0, policy);
        }
        if self.per_pe {
            Arc::make_mut(w).split_per_pe().map_err(err)?;
        }
        if self.estimate.as_deref() == Some("exact") {
            for j in &mut Arc::make_mut(w).jobs {
                j.requested_time = None;
            }
        }
        Ok(())
    }

    /// Draws the deadlines, urgency classes, priority classes, lease types, budgets and data sizes, in that order
    /// (slack deadlines only when the model has not given them, `own_slack`).
    fn attach_qos(&self, w: &mut Arc<Workload>, own_slack: bool, rng: &mut SimRng) -> Result<(), String> {
        match self.deadline.as_ref().map(deadline_rule).transpose()? {
            Some(DeadlineRule::Slack(s)) if !own_slack => {
                let sampler = s.dist().sampler().map_err(err)?;
                for j in &mut Arc::make_mut(w).jobs {
                    j.deadline = Some(j.submit + j.runtime + sampler.sample(rng));
                }
            }
            Some(DeadlineRule::Factor(lo, hi)) => {
                qos::assign_uniform_deadlines(Arc::make_mut(w), lo, hi, rng).map_err(err)?
            }
            _ => {}
        }
        if let Some(u) = &self.urgency {
            assign_urgency(Arc::make_mut(w), &u.mix(), rng).map_err(err)?;
        }
        if let Some(high) = self.priority_fraction {
            use rand::RngExt;
            for j in &mut Arc::make_mut(w).jobs {
                j.priority = u8::from(rng.random::<f64>() >= high.0);
            }
        }
        if let Some(local) = self.local_fraction {
            assign_lease_types(Arc::make_mut(w), local.0, self, rng);
        }
        if let Some(t) = self.lease_type {
            Arc::make_mut(w).jobs.iter_mut().for_each(|j| j.lease = Some(t));
        }
        if let Some(price) = self.budget_price {
            for j in &mut Arc::make_mut(w).jobs {
                j.budget = Some(qos::relaxed_budget(j.runtime, j.pes, price.0));
            }
        }
        if let Some(d) = &self.budget {
            let sampler = d.sampler().map_err(err)?;
            for j in &mut Arc::make_mut(w).jobs {
                j.budget = Some(sampler.sample(rng));
            }
        }
        // Drawn last, so that the other draws stay as they were.
        if let Some(d) = &self.budget_per_pe_second {
            let sampler = d.sampler().map_err(err)?;
            for j in &mut Arc::make_mut(w).jobs {
                j.budget = Some(sampler.sample(rng) * f64::from(j.pes) * j.runtime);
            }
        }
        // Drawn after every other draw, so that adding it leaves them as they were.
        if let Some(d) = &self.data_size {
            let sampler = d.sampler().map_err(err)?;
            for j in &mut Arc::make_mut(w).jobs {
                j.data = Some(sampler.sample(rng).max(0.0));
            }
        }
        Ok(())
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

/// Garg (2010) §6.5: each job's urgency class and deadline. Every job draws a uniform number, which makes it of high
/// urgency below the mix's fraction, and a seed for its ratio, whatever its class: so the points of a sweep over the
/// fraction share their draws (a job of high urgency at one fraction is so at every larger one, with the same ratio).
fn assign_urgency(w: &mut Workload, mix: &UrgencyMix, rng: &mut SimRng) -> Result<(), crate::workload::WorkloadError> {
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
fn assign_lease_types(w: &mut Workload, local: f64, raw: &RawShared, rng: &mut SimRng) {
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
        let raw: RawShared = toml::from_str(&format!("local-fraction = {local}\nbest-effort-fraction = {best_effort}"))
            .expect("valid shared keys");
        assign_lease_types(&mut w, local, &raw, &mut agents::sim::rng::stream(7, "types", 0));
        w.jobs.iter().map(|j| j.lease.expect("typed")).collect()
    }

    /// A workload table read with the standard models; an error is (the key path, serde's message).
    pub(super) fn parse(table: &str) -> Result<RawWorkload, (String, String)> {
        let table: toml::Table = toml::from_str(table).expect("a TOML table");
        RawWorkload::parse(&WorkloadRegistry::standard(), toml::Value::Table(table))
            .map_err(|e| (e.path.join("."), e.message))
    }

    /// A workload table read and checked, with its files in `tests/fixtures`; an error is (the key, why), whether
    /// the table could not be read or did not pass the checks.
    pub(super) fn check(table: &str) -> Result<WorkloadPlan, (String, String)> {
        let base = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures"));
        WorkloadPlan::check(&parse(table)?, base, &mut TraceCache::default())
    }

    /// The jobs of a workload table whose files are in `tests/fixtures`, drawn with seed 5.
    pub(super) fn generate(table: &str) -> Workload {
        let plan = check(table).expect("a valid workload");
        Arc::unwrap_or_clone(plan.generate(&mut agents::sim::rng::stream(5, "workload", 0)).expect("jobs"))
    }

    /// The ids of a workload's jobs, in order.
    pub(super) fn ids(w: &Workload) -> Vec<u64> {
        w.jobs.iter().map(|j| j.id).collect()
    }

    #[test]
    fn a_key_of_another_model_names_the_models_it_belongs_to() {
        let (key, m) = parse("model = \"lublin\"\njobs = 5\nrate = 1").unwrap_err();
        assert_eq!((key.as_str(), m.as_str()), ("rate", "not a key of the \"lublin\" model (only of \"poisson\")"));
        let (key, m) = parse("model = \"lublin\"\njobs = 5\ncluster = \"C64\"").unwrap_err();
        assert_eq!(
            (key.as_str(), m.as_str()),
            ("cluster", "not a key of the \"lublin\" model (only of \"das2\", \"bot\")")
        );
        // A shared key a model does not read.
        let (key, m) = parse("model = \"swf\"\nfile = \"small.swf\"\njobs = 5").unwrap_err();
        let of = "\"lublin\", \"das2\", \"bot\", \"metabroker\", \"poisson\"";
        assert_eq!((key.as_str(), m), ("jobs", format!("not a key of the \"swf\" model (only of {of})")));
        // A key of no model lists the model's own keys and the shared ones it reads, as serde would.
        let (key, m) = parse("model = \"swf\"\nfiel = \"small.swf\"").unwrap_err();
        assert_eq!(key, "fiel");
        assert!(m.starts_with("unknown field `fiel`, expected one of `model`, `file`, `window`, "), "{m}");
        assert!(!m.contains("`jobs`") && !m.contains("`rate`"), "{m}");
    }

    #[test]
    fn the_first_faulty_key_in_the_table_is_reported() {
        // `rate` (Poisson's) comes before `first` (shared) and after `time-scale` (shared).
        let table = |a: &str, b: &str| format!("model = \"poisson\"\njobs = 5\n{a}\n{b}");
        assert_eq!(parse(&table("rate = -1", "first = 0")).unwrap_err().0, "rate");
        assert_eq!(parse(&table("first = 0", "rate = -1")).unwrap_err().0, "first");
        assert_eq!(parse("jobs = 5").unwrap_err(), (String::new(), "missing field `model`".into()));
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
        let fault = |table: &str| check(table).map(drop).unwrap_err().0;
        let both = "model = \"lublin\"\njobs = 5\nbudget-price = 4.5\nbudget = { kind = \"constant\", value = 1.0 }";
        assert_eq!(fault(both), "budget");
        let negative = "model = \"lublin\"\njobs = 5\nbudget = { kind = \"uniform\", low = -1.0, high = 1.0 }";
        assert_eq!(fault(negative), "budget");
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
        let fault = |table: &str| check(table).map(drop).unwrap_err().0;
        let both = "model = \"poisson\"\njobs = 5\nrate = 1\nruntime = { kind = \"constant\", value = 1.0 }\n\
                    budget-price = 4.5\nbudget-per-pe-second = { kind = \"constant\", value = 1.0 }";
        assert_eq!(fault(both), "budget-per-pe-second");
        let negative = "model = \"poisson\"\njobs = 5\nrate = 1\nruntime = { kind = \"constant\", value = 1.0 }\n\
                        budget-per-pe-second = { kind = \"uniform\", low = -1.0, high = 1.0 }";
        assert_eq!(fault(negative), "budget-per-pe-second");
    }
}
