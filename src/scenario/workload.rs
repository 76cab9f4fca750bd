//! The `[workloads.<name>]` sections: which model or trace, how many jobs, and the QoS each study attaches.

use std::path::Path;
use std::sync::Arc;

use rand::distr::Distribution;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::workload::dist::Dist;
use crate::workload::lublin::LublinParams;
use crate::workload::models::{BotModel, Das2Model, InterGridCluster, MetaBrokerJobModel};
use crate::workload::qos::{self, DeadlineSlack};
use crate::workload::{Limit, OversizePolicy, Workload, WorkloadJob, gwf, swf};
use agents::registry::values::{Count, Fraction, NonNegative, Positive, PositiveInt};

/// Where a workload's jobs come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Model {
    /// Lublin & Feitelson (2003) rigid parallel jobs (`preset`: typed, typeless, garg-ch5, salehi-ch3).
    Lublin,
    /// DAS-2 model of seed 000 Table 4.2 (`cluster` absent: the external "Grid" rows; else that cluster's rows).
    Das2,
    /// GWA bag-of-tasks model of seed 000 ch5 / seed 001.
    Bot,
    /// Seed 003 ch3–4 jobs: tasks of 1 CPU, runtimes 400 s ± 20%, submitted in the first 20 s, deadlines by `slack`.
    Metabroker,
    /// Poisson arrivals (`rate` per second) with `runtime` drawn from a distribution: queueing validation.
    Poisson,
    /// A Standard Workload Format trace (`file`).
    Swf,
    /// A Grid Workloads Format trace (`file`).
    Gwf,
}

/// A workload: a model with its parameters, or a trace file, plus transformations and QoS.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawWorkload {
    /// The model or trace format.
    pub model: Model,
    /// Number of jobs (requests) to generate; or use `until`.
    pub jobs: Option<Count>,
    /// Generate arrivals until this time [s].
    pub until: Option<Positive>,
    /// Lublin: "typed" (batch and interactive streams; default), "typeless", "garg-ch5", "salehi-ch3".
    pub preset: Option<String>,
    /// Lublin: largest job [PEs] (default: the preset's).
    pub max_nodes: Option<PositiveInt>,
    /// Lublin: UHI, log2 of the largest size (seed 003 ch5: log2(p)); applied after `max-nodes`.
    pub u_hi: Option<f64>,
    /// Lublin: UMED, the split of the two-stage uniform (seed 003 ch5: UHI − 2.5); applied after `max-nodes`.
    pub u_med: Option<f64>,
    /// Lublin: scale sizes to this mean [PEs] (seed 000 ch3 uses 4 VMs).
    pub mean_nodes: Option<Positive>,
    /// Lublin: scale runtimes to this mean [s] (seed 000 ch3 uses 2 h).
    pub mean_runtime: Option<Positive>,
    /// Lublin: scale inter-arrival times to this mean [s].
    pub mean_interarrival: Option<Positive>,
    /// DAS-2 and bag-of-tasks: the local rows of cluster "C64", "C128" or "C256" instead of the external ones.
    pub cluster: Option<String>,
    /// Poisson: arrival rate [1/s].
    pub rate: Option<Positive>,
    /// Poisson: runtime distribution, e.g. `{ kind = "exponential", mean = 1.0 }`; kinds: constant, uniform,
    /// exponential, normal, truncated_normal, log_normal, weibull, gamma, hyper_exponential.
    #[schemars(with = "Option<serde_json::Value>")]
    pub runtime: Option<Dist>,
    /// Poisson: PEs per job (default 1).
    pub pes: Option<PositiveInt>,
    /// Swf/gwf: the trace, relative to the scenario file.
    pub file: Option<String>,
    /// Swf/gwf: keep jobs submitted in [from, to) seconds, re-based to 0.
    pub window: Option<[f64; 2]>,
    /// Multiply submit times by this factor (e.g. 0.1 makes arrivals ten times denser).
    pub time_scale: Option<Positive>,
    /// Jobs wider than this many PEs are dropped (or clamped with `clamp = true`).
    pub max_pes: Option<PositiveInt>,
    /// Clamp wide jobs to `max-pes` instead of dropping them.
    #[serde(default)]
    pub clamp: bool,
    /// Runtime estimates: "exact" (the runtime) or "requested" (the trace's requested time when known; default).
    pub estimate: Option<String>,
    /// Deadlines: "tight", "medium" or "relaxed" (seed 003 ch3: runtime + 50/250/500 s ± 20%), or
    /// `[low, high]`: submit + U[low, high] × runtime (seed 003 §7.6).
    #[schemars(with = "Option<serde_json::Value>")]
    pub deadline: Option<toml::Value>,
    /// Budgets: twice the job's cost at this mean price [G$ per PE-second] (seed 003's relaxed budget).
    pub budget_price: Option<NonNegative>,
    /// Lease types (seed 000 ch3), drawn per job: the fraction of local requests; the others are external.
    pub local_fraction: Option<Fraction>,
    /// Lease types: the fraction of external requests that are best effort (cancellable or suspendable, half
    /// each); the rest are deadline-constrained (migratable or non-preemptable, half each). Default 0.5.
    pub best_effort_fraction: Option<Fraction>,
    /// Priority classes: each job is of class 0 (high) with this probability, else of class 1.
    pub priority_fraction: Option<Fraction>,
    /// Deadline of deadline-constrained requests: submit + factor × runtime. [GAP] seed 000 does not say how they
    /// were drawn; default 3.
    pub dc_deadline_factor: Option<Positive>,
}

/// A checked workload description: trace files are read once, models are drawn per run.
#[derive(Clone, Debug)]
pub struct WorkloadPlan {
    raw: RawWorkload,
    trace: Option<Arc<Workload>>,
}

impl WorkloadPlan {
    /// Checks the description and reads its trace, if any. Errors name the offending key (relative to the
    /// workload's table).
    pub fn check(raw: &RawWorkload, base: &Path) -> Result<WorkloadPlan, (String, String)> {
        let need = |key: &str, present: bool| if present { Ok(()) } else { Err((key.to_string(), "required".into())) };
        let generated = !matches!(raw.model, Model::Swf | Model::Gwf);
        if generated && raw.jobs.is_none() && raw.until.is_none() && raw.model != Model::Metabroker {
            return Err(("jobs".into(), "a generated workload needs `jobs` or `until`".into()));
        }
        match raw.model {
            Model::Poisson => {
                need("rate", raw.rate.is_some())?;
                need("runtime", raw.runtime.is_some())?;
            }
            Model::Swf | Model::Gwf => need("file", raw.file.is_some())?,
            _ => {}
        }
        if let Some(e) = &raw.estimate
            && !matches!(e.as_str(), "exact" | "requested")
        {
            return Err(("estimate".into(), format!("expected \"exact\" or \"requested\", found \"{e}\"")));
        }
        if let Some(d) = &raw.deadline {
            deadline_rule(d).map_err(|m| ("deadline".to_string(), m))?;
        }
        // Build everything that does not depend on the seed now, so a bad parameter fails before any run.
        match raw.model {
            Model::Lublin => {
                lublin_params(raw).map_err(|m| ("preset".to_string(), m))?;
            }
            Model::Das2 | Model::Bot => {
                cluster(raw).map_err(|m| ("cluster".to_string(), m))?;
            }
            Model::Poisson => {
                if let Some(d) = &raw.runtime {
                    d.sampler().map_err(|e| ("runtime".to_string(), e.to_string()))?;
                }
            }
            _ => {}
        }
        let trace = match (raw.model, &raw.file) {
            (Model::Swf, Some(f)) => {
                Some(swf::read_swf_file(base.join(f)).map_err(|e| ("file".into(), e.to_string()))?)
            }
            (Model::Gwf, Some(f)) => {
                Some(gwf::read_gwf_file(base.join(f)).map_err(|e| ("file".into(), e.to_string()))?)
            }
            _ => None,
        };
        Ok(WorkloadPlan { raw: raw.clone(), trace: trace.map(Arc::new) })
    }

    /// The jobs of one run, drawn with `rng` (the workload's own stream).
    pub fn generate(&self, rng: &mut agents::sim::rng::SimRng) -> Result<Workload, String> {
        let raw = &self.raw;
        let limit = match (raw.jobs, raw.until) {
            (Some(n), _) => Limit::Jobs(n.0 as usize),
            (None, Some(t)) => Limit::Until(t.0),
            (None, None) => Limit::Jobs(50),
        };
        let err = |e: crate::workload::WorkloadError| e.to_string();
        let mut w = match raw.model {
            Model::Lublin => lublin_params(raw)?.generate(limit, rng).map_err(err)?,
            Model::Das2 => {
                let model = match cluster(raw)? {
                    Some(c) => Das2Model::local_default(c),
                    None => Das2Model::external_default().map_err(err)?,
                };
                model.generate(limit, rng).map_err(err)?
            }
            Model::Bot => {
                // The tables' defaults (seed 000 Table 5.2): α_e 1.7, α_l 4, M 90 s.
                let model = match cluster(raw)? {
                    Some(c) => BotModel::local(4.0, 90.0, c),
                    None => BotModel::external(1.7, 90.0),
                };
                model.generate(limit, rng).map_err(err)?
            }
            Model::Metabroker => {
                let slack = match raw.deadline.as_ref().and_then(toml::Value::as_str) {
                    Some("medium") => DeadlineSlack::Medium,
                    Some("relaxed") => DeadlineSlack::Relaxed,
                    _ => DeadlineSlack::Tight,
                };
                let mut model = MetaBrokerJobModel::new(slack, 0.3);
                if let Limit::Jobs(n) = limit {
                    model.jobs = n;
                }
                model.generate(rng).map_err(err)?
            }
            Model::Poisson => poisson(raw, limit, rng)?,
            Model::Swf | Model::Gwf => self.trace.as_deref().cloned().unwrap_or_default(),
        };
        if let Some([from, to]) = raw.window {
            w = w.window(from, to).map_err(err)?;
        }
        if let Some(f) = raw.time_scale {
            w.scale_submit(f.0).map_err(err)?;
        }
        if let Some(max) = raw.max_pes {
            let policy = if raw.clamp { OversizePolicy::Clamp } else { OversizePolicy::Drop };
            w.fit_to_cluster(max.0, policy);
        }
        if raw.estimate.as_deref() == Some("exact") {
            for j in &mut w.jobs {
                j.requested_time = None;
            }
        }
        match raw.deadline.as_ref().map(deadline_rule).transpose()? {
            Some(DeadlineRule::Slack(s)) if raw.model != Model::Metabroker => {
                let sampler = s.dist().sampler().map_err(err)?;
                for j in &mut w.jobs {
                    j.deadline = Some(j.submit + j.runtime + sampler.sample(rng));
                }
            }
            Some(DeadlineRule::Factor(lo, hi)) => qos::assign_uniform_deadlines(&mut w, lo, hi, rng).map_err(err)?,
            _ => {}
        }
        if let Some(high) = raw.priority_fraction {
            use rand::RngExt;
            for j in &mut w.jobs {
                j.priority = u8::from(rng.random::<f64>() >= high.0);
            }
        }
        if let Some(local) = raw.local_fraction {
            assign_lease_types(&mut w, local.0, raw, rng);
        }
        if let Some(price) = raw.budget_price {
            for j in &mut w.jobs {
                j.budget = Some(qos::relaxed_budget(j.runtime, j.pes, price.0));
            }
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
            (Some(lo), Some(hi)) if 0.0 <= lo && lo <= hi && hi.is_finite() => Ok(DeadlineRule::Factor(lo, hi)),
            _ => Err(format!("expected [low, high] with 0 <= low <= high, found {v}")),
        },
        other => Err(format!("expected \"tight\", \"medium\", \"relaxed\" or [low, high], found {other}")),
    }
}

fn lublin_params(raw: &RawWorkload) -> Result<LublinParams, String> {
    let mut p = match raw.preset.as_deref().unwrap_or("typed") {
        "typed" => LublinParams::typed(),
        "typeless" => LublinParams::typeless(),
        "garg-ch5" => LublinParams::garg_ch5(),
        "salehi-ch3" => LublinParams::amini_salehi_ch3().map_err(|e| e.to_string())?,
        other => {
            return Err(format!("expected \"typed\", \"typeless\", \"garg-ch5\" or \"salehi-ch3\", found \"{other}\""));
        }
    };
    let e = |e: crate::workload::WorkloadError| e.to_string();
    if let Some(n) = raw.max_nodes {
        p = p.with_max_nodes(n.0);
    }
    for s in &mut p.streams {
        if let Some(h) = raw.u_hi {
            s.class.size.u_hi = h;
        }
        if let Some(m) = raw.u_med {
            s.class.size.u_med = m;
        }
    }
    if let Some(m) = raw.mean_nodes {
        p = p.fit_mean_nodes(m.0).map_err(e)?;
    }
    if let Some(m) = raw.mean_runtime {
        p = p.scale_runtime_to_mean(m.0).map_err(e)?;
    }
    if let Some(m) = raw.mean_interarrival {
        p = p.scale_interarrival_to_mean(m.0).map_err(e)?;
    }
    p.validate().map_err(e)?;
    Ok(p)
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

/// Poisson arrivals with i.i.d. runtimes: the M/G/c input of the analytic validation.
fn poisson(raw: &RawWorkload, limit: Limit, rng: &mut agents::sim::rng::SimRng) -> Result<Workload, String> {
    let rate = raw.rate.map_or(1.0, |r| r.0);
    let gaps = Dist::poisson_arrivals(rate).sampler().map_err(|e| e.to_string())?;
    let runtimes = raw.runtime.as_ref().ok_or("`runtime` is required")?.sampler().map_err(|e| e.to_string())?;
    let pes = raw.pes.map_or(1, |p| p.0);
    let mut jobs = Vec::new();
    let mut t = 0.0;
    loop {
        t += gaps.sample(rng);
        let n = jobs.len();
        match limit {
            Limit::Jobs(max) if n >= max => break,
            Limit::Until(h) if t >= h => break,
            _ => {}
        }
        jobs.push(WorkloadJob::new(n as u64 + 1, t, runtimes.sample(rng), pes));
    }
    Ok(Workload::new(jobs))
}

/// Seed 000 ch3: "types are assigned uniformly at random": local with probability `local`, else external, best
/// effort or deadline-constrained by `best-effort-fraction`, each class split evenly between its two types.
fn assign_lease_types(w: &mut Workload, local: f64, raw: &RawWorkload, rng: &mut agents::sim::rng::SimRng) {
    use agents::protocol::LeaseType;
    use rand::RngExt;
    let best_effort = raw.best_effort_fraction.map_or(0.5, |f| f.0);
    let factor = raw.dc_deadline_factor.map_or(3.0, |f| f.0);
    for j in &mut w.jobs {
        let lease = if rng.random::<f64>() < local {
            LeaseType::Local
        } else if rng.random::<f64>() < best_effort {
            if rng.random_bool(0.5) { LeaseType::Cancellable } else { LeaseType::Suspendable }
        } else {
            if rng.random_bool(0.5) { LeaseType::Migratable } else { LeaseType::NonPreemptable }
        };
        if matches!(lease, LeaseType::Migratable | LeaseType::NonPreemptable) {
            j.deadline = Some(j.submit + factor * j.runtime);
        }
        j.lease = Some(lease);
    }
}
