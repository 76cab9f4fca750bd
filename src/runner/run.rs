//! One run: a sweep point and a replication, built into a simulation, run, and measured.

use std::collections::BTreeMap;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use agents::broker::{Submission, UserBroker, WorkloadJob as BrokerJob};
use agents::gateway::Gateway;
use agents::metabroker::agent::MetaBroker;
use agents::protocol::JobSpec;
use agents::provider::{Provider, ProviderConfig, ProviderInfo};
use agents::report::Report;
use agents::sim::trace::{TraceFilter, TraceSink};
use agents::sim::{AgentId, End, Outcome, Runtime, SimBuilder, SimError, SimTime, rng};

use super::metrics::{self, Measured};
use crate::scenario::plan::{AgentSpec, BrokerTarget, LatencyRule, Plan, ProviderDraws};
use crate::scenario::raw::{RawRuntime, RawSplit};
use crate::workload::Workload;

/// What went wrong in one run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Occurs when a workload cannot be generated with this seed.
    #[error("workload `{name}`: {message}")]
    Workload {
        /// Workload name.
        name: String,
        /// What failed.
        message: String,
    },
    /// Occurs when the simulation stops with an error (or was interrupted).
    #[error(transparent)]
    Sim(#[from] SimError),
    /// Occurs when an invariant of the results is broken (a bug, reported rather than hidden).
    #[error("invariant broken: {0}")]
    Invariant(String),
    /// Occurs when an output cannot be written.
    #[error("writing {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// Everything one run produced.
#[derive(Debug)]
pub struct RunResult {
    /// The seed used.
    pub seed: u64,
    /// The kernel's outcome.
    pub outcome: Outcome,
    /// Metrics, rows and series.
    pub measured: Measured,
}

/// Runs `plan` with replication `rep` (seed `plan.seed + rep`); writes the trace into `trace_to` if asked.
pub fn run(plan: &Plan, rep: u32, interrupt: &Arc<AtomicBool>, trace_to: Option<&Path>) -> Result<RunResult, RunError> {
    let seed = seed_of(plan, rep);
    let mut jobs = deal_jobs(plan, seed)?;
    let mut b = SimBuilder::new(seed);
    b.runtime(match plan.runtime {
        RawRuntime::Actix => Runtime::Actix { threads: 1 },
        RawRuntime::Inline => Runtime::Inline,
    });
    b.interrupt(interrupt.clone());
    let mut infos: BTreeMap<String, ProviderInfo> = BTreeMap::new();
    let id_of =
        |b: &SimBuilder, name: &str| b.directory().lookup(name).ok_or(SimError::NoSuchName { name: name.into() });
    for agent in &plan.agents {
        match &agent.spec {
            AgentSpec::Provider(config, draws) => {
                let config = draw_provider(config, draws, seed, &agent.name);
                let id = b.add(&agent.name, agent.kind, Provider::new(config.clone()))?;
                let info = ProviderInfo { id, pes: config.pes, speed: config.speed, price: config.price };
                infos.insert(agent.name.clone(), info);
            }
            AgentSpec::Gateway { providers, dispatch } => {
                let providers = providers.iter().map(|p| infos[p]).collect();
                b.add(&agent.name, agent.kind, Gateway::new(providers, *dispatch))?;
            }
            AgentSpec::MetaBroker { providers, policy, interval, solver } => {
                let members = providers.iter().map(|p| infos[p].id);
                b.add(&agent.name, agent.kind, MetaBroker::new(*policy, *interval, members).with_solver(*solver))?;
            }
            AgentSpec::Broker { target, .. } => {
                let submission = match target {
                    BrokerTarget::Direct(to) => Submission::Direct { to: id_of(&b, to)? },
                    BrokerTarget::MetaBroker(to) => Submission::MetaBroker { to: id_of(&b, to)? },
                    BrokerTarget::Personalised { providers, round } => Submission::Personalised {
                        providers: providers.iter().map(|p| infos[p]).collect(),
                        round: *round,
                    },
                };
                let workload = jobs.remove(&agent.name).unwrap_or_default();
                b.add(&agent.name, agent.kind, UserBroker::new(workload, submission))?;
            }
        }
    }
    for rule in &plan.latency {
        match rule {
            LatencyRule::Default(s) => b.latency_default(*s)?,
            LatencyRule::Kinds(f, t, s) => b.latency_kinds(f, t, *s)?,
            LatencyRule::Pair(f, t, s) => b.latency_pair(f, t, *s)?,
        };
    }
    let trace_tmp = trace_to.map(|p| p.with_extension("jsonl.partial"));
    if let Some(tmp) = &trace_tmp {
        let file = std::fs::File::create(tmp).map_err(|source| RunError::Io { path: tmp.clone(), source })?;
        let filter = TraceFilter { agents: plan.outputs.trace_agents.clone(), kinds: plan.outputs.trace_kinds.clone() };
        let out: Box<dyn Write + Send> = Box::new(BufWriter::new(file));
        b.trace(TraceSink::new(out, filter));
    }
    let dir = b.directory();
    let names: Vec<String> = (0..dir.len()).map(|i| dir.name(AgentId(i as u32)).unwrap_or("?").to_string()).collect();
    let mut sim = b.build()?;
    let end = match plan.horizon {
        Some(h) => End::Until(SimTime::new(h).map_err(|e| SimError::Runtime(e.to_string()))?),
        None => End::Quiescence,
    };
    let outcome = sim.run(end)?;
    let agents = sim.into_agents();
    if let (Some(tmp), Some(path)) = (&trace_tmp, trace_to) {
        std::fs::rename(tmp, path).map_err(|source| RunError::Io { path: path.to_path_buf(), source })?;
    }
    let reports: Vec<Report> = agents
        .iter()
        .map(|a| {
            let mut r = Report::default();
            a.report(outcome.now, &mut r);
            r
        })
        .collect();
    let measured = metrics::measure(plan, &names, &reports, &outcome).map_err(RunError::Invariant)?;
    Ok(RunResult { seed, outcome, measured })
}

/// Draws each broker group's copy of its workload (a stream per workload and group, so two groups that name
/// one workload get independent draws of it) and deals the jobs among the group's brokers. Job ids are numbered
/// from 1 across the run, in broker order.
fn deal_jobs(plan: &Plan, seed: u64) -> Result<BTreeMap<String, Vec<BrokerJob>>, RunError> {
    let mut generated: BTreeMap<&str, Workload> = BTreeMap::new();
    for agent in &plan.agents {
        let AgentSpec::Broker { workload: name, .. } = &agent.spec else { continue };
        if generated.contains_key(agent.group.as_str()) {
            continue;
        }
        let mut r = rng::stream(seed, &format!("workload:{name}:{}", agent.group), 0);
        let w = plan.workloads[name]
            .generate(&mut r)
            .map_err(|message| RunError::Workload { name: name.clone(), message })?;
        if w.jobs.is_empty() {
            let message = "no jobs (check `jobs`, `until`, `window` and `max-pes`)".to_string();
            return Err(RunError::Workload { name: name.clone(), message });
        }
        generated.insert(&agent.group, w);
    }
    // Deal each group's jobs among its members in one pass, then number them in broker order.
    let mut dealt: BTreeMap<&str, Vec<Vec<&crate::workload::WorkloadJob>>> = BTreeMap::new();
    for agent in &plan.agents {
        let AgentSpec::Broker { count, split, .. } = &agent.spec else { continue };
        if dealt.contains_key(agent.group.as_str()) {
            continue;
        }
        let mut hands = vec![Vec::new(); *count];
        for (i, j) in generated[agent.group.as_str()].jobs.iter().enumerate() {
            let key = match split {
                RawSplit::RoundRobin => i as u64,
                RawSplit::ByUser => j.user.map_or(i as u64, u64::from),
            };
            hands[(key % *count as u64) as usize].push(j);
        }
        dealt.insert(&agent.group, hands);
    }
    let mut out = BTreeMap::new();
    let mut next_id = 1;
    for agent in &plan.agents {
        let AgentSpec::Broker { index, .. } = &agent.spec else { continue };
        let jobs: Vec<BrokerJob> = dealt[agent.group.as_str()][*index]
            .iter()
            .map(|j| {
                let id = next_id;
                next_id += 1;
                BrokerJob {
                    submit: j.submit,
                    spec: JobSpec {
                        id,
                        owner: AgentId::ENV,
                        pes: j.pes,
                        runtime: j.runtime,
                        estimate: j.requested_time.unwrap_or(j.runtime).max(j.runtime),
                        deadline: j.deadline,
                        budget: j.budget,
                        lease: j.lease,
                        memory_mb: None,
                        priority: j.priority,
                    },
                }
            })
            .collect();
        out.insert(agent.name.clone(), jobs);
    }
    Ok(out)
}

/// A member's PEs, price and speed for this replication (its own random stream), when its group draws them.
fn draw_provider(config: &ProviderConfig, draws: &ProviderDraws, seed: u64, name: &str) -> ProviderConfig {
    use rand::RngExt;
    let mut config = config.clone();
    let mut rng = rng::stream(seed, &format!("provider:{name}"), 0);
    if let Some(max) = draws.pes_max {
        config.pes = rng.random_range(config.pes..=max);
    }
    if let Some((lo, hi)) = draws.price_range
        && let Ok(normal) = rand_distr::Normal::new(config.price, (hi - lo) / 4.0)
    {
        // The mean lies in [low, high] (checked when loading), so at least about half of the draws are kept.
        config.price =
            std::iter::repeat_with(|| rng.sample(normal)).find(|p| (lo..=hi).contains(p)).unwrap_or(config.price);
    }
    // Drawn last, so that adding it leaves the other draws as they were.
    if let Some((lo, hi)) = draws.speed_range {
        config.speed = rng.random_range(lo..=hi);
    }
    config
}

/// A run's seed as the outputs report it.
pub fn seed_of(plan: &Plan, rep: u32) -> u64 {
    plan.seed.wrapping_add(u64::from(rep))
}
