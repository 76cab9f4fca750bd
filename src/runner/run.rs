//! One run: a sweep point and a replication, built into a simulation, run, and measured.

use std::collections::BTreeMap;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};

use agents::broker::UserJob;
use agents::protocol::JobSpec;
use agents::registry::{BuildCx, Deal, Member, member_name};
use agents::report::Report;
use agents::sim::trace::{TraceFilter, TraceSink};
use agents::sim::{AgentId, End, Outcome, Runtime, SimBuilder, SimError, SimTime, rng};

use super::metrics::{self, Measured, Source};
use crate::scenario::plan::{LatencyRule, Plan};
use crate::scenario::raw::RawRuntime;
use crate::workload::{Workload, WorkloadJob};

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
    run_watched(plan, rep, interrupt, trace_to, None)
}

/// [`run`], publishing the simulated clock into `clock` as it goes (seconds as `f64` bits), for progress reports.
pub fn run_watched(
    plan: &Plan,
    rep: u32,
    interrupt: &Arc<AtomicBool>,
    trace_to: Option<&Path>,
    clock: Option<Arc<AtomicU64>>,
) -> Result<RunResult, RunError> {
    let seed = seed_of(plan, rep);
    let mut b = SimBuilder::new(seed);
    b.runtime(match plan.runtime {
        RawRuntime::Actix => Runtime::Actix { threads: 1 },
        RawRuntime::Inline => Runtime::Inline,
    });
    b.interrupt(interrupt.clone());
    if let Some(clock) = clock {
        b.clock(clock);
    }
    // Agents are registered in plan order, so their ids are known before any is built.
    let ids = plan.agents().enumerate().map(|(i, a)| (a.name, AgentId(i as u32))).collect();
    let (jobs, sources) = deal_jobs(plan, seed)?;
    let mut cx = BuildCx { seed, ids, jobs, market_window: plan.market_window, ..BuildCx::default() };
    for (i, agent) in plan.agents().enumerate() {
        let member = Member { name: &agent.name, id: AgentId(i as u32), index: agent.index, count: agent.count };
        let built =
            agent.spec.build(&member, &mut cx).map_err(|e| SimError::Runtime(format!("{}: {e}", agent.name)))?;
        let services: Vec<&str> = agent.kind.services().iter().map(|s| s.name()).collect();
        b.add_offering(&agent.name, agent.kind.name(), &services, built)?;
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
    // Each agent's state goes as soon as it has reported: a broker's jobs are never held twice beside another's.
    let reports: Vec<Report> = agents
        .into_iter()
        .map(|a| {
            let mut r = Report::default();
            a.report(outcome.now, &mut r);
            r
        })
        .collect();
    let measured = metrics::measure(plan, &names, reports, &outcome, sources).map_err(RunError::Invariant)?;
    Ok(RunResult { seed, outcome, measured })
}

/// Each broker's jobs, by name, and where each job came from.
type Dealt = (BTreeMap<String, Vec<UserJob>>, Vec<Source>);

/// Draws each broker group's copy of its workload (a stream per workload and group, so two groups that name
/// one workload get independent draws of it) and deals the jobs among the group's brokers. Job ids are numbered
/// from 1 across the run, in broker order; the second list gives, for id `i`, where the job came from at `i - 1`
/// (a trace's job number, its estimate).
fn deal_jobs(plan: &Plan, seed: u64) -> Result<Dealt, RunError> {
    let mut generated: BTreeMap<&str, Arc<Workload>> = BTreeMap::new();
    for group in &plan.groups {
        let Some((name, _)) = group.spec.workload() else { continue };
        let mut r = rng::stream(seed, &format!("workload:{name}:{}", group.name), 0);
        let w = plan.workloads[name]
            .generate(&mut r)
            .map_err(|message| RunError::Workload { name: name.to_string(), message })?;
        if w.jobs.is_empty() {
            let message = "no jobs (check `jobs`, `until`, `window` and `max-pes`)".to_string();
            return Err(RunError::Workload { name: name.to_string(), message });
        }
        generated.insert(&group.name, w);
    }
    // Deal each group's jobs among its members, then number them in member order.
    let mut out = BTreeMap::new();
    let mut sources = Vec::with_capacity(generated.values().map(|w| w.jobs.len()).sum());
    for group in &plan.groups {
        let (Some((workload, deal)), Some(w)) = (group.spec.workload(), generated.remove(group.name.as_str())) else {
            continue;
        };
        // Messages carry instants as `SimTime`s: a workload's times must be valid ones.
        let instant = |secs: f64, what: &str, job: u64| {
            SimTime::new(secs).map_err(|e| RunError::Workload {
                name: workload.to_string(),
                message: format!("job {job}: {what}: {e}"),
            })
        };
        // Each job as its broker gets it, numbered for now by its position in the workload; where it came from
        // and whose hand it goes to, by that position.
        let mut origin = Vec::with_capacity(w.jobs.len());
        let mut hand_of = Vec::with_capacity(w.jobs.len());
        let mut convert = |i: usize, j: &WorkloadJob| {
            let key = match deal {
                Deal::RoundRobin => i as u64,
                Deal::ByUser => j.user.map_or(i as u64, u64::from),
            };
            hand_of.push((key % group.count as u64) as usize);
            let estimate = j.requested_time.unwrap_or(j.runtime).max(j.runtime);
            origin.push(Source { id: j.id, estimate });
            Ok(UserJob {
                submit: instant(j.submit, "submit time", j.id)?,
                spec: JobSpec {
                    id: i as u64,
                    owner: AgentId::ENV,
                    pes: j.pes,
                    runtime: j.runtime,
                    estimate,
                    deadline: j.deadline.map(|d| instant(d, "deadline", j.id)).transpose()?,
                    budget: j.budget,
                    lease: j.lease,
                    // The trace's average memory per processor (SWF field 7, else the request, field 10) [KB];
                    // unknown or zero: the agent's default.
                    memory_mb: j
                        .used_memory
                        .filter(|&kb| kb > 0.0)
                        .or(j.requested_memory.filter(|&kb| kb > 0.0))
                        .map(|kb| kb / 1e3),
                    priority: j.priority,
                    data: j.data,
                    start: j.earliest_start.map(|s| instant(s, "earliest start", j.id)).transpose()?,
                },
            })
        };
        let mut jobs: Vec<UserJob> = match Arc::try_unwrap(w) {
            // The run holds the only copy: the jobs become the brokers' in the workload's own buffer (an in-place
            // collect), so the two are never held at once.
            Ok(w) => w.jobs.into_iter().enumerate().map(|(i, j)| convert(i, &j)).collect::<Result<_, RunError>>()?,
            Err(w) => w.jobs.iter().enumerate().map(|(i, j)| convert(i, j)).collect::<Result<_, RunError>>()?,
        };
        jobs.shrink_to_fit();
        let hands = if group.count == 1 {
            vec![jobs]
        } else {
            let mut sizes = vec![0; group.count];
            hand_of.iter().for_each(|&h| sizes[h] += 1);
            let mut hands: Vec<Vec<UserJob>> = sizes.into_iter().map(Vec::with_capacity).collect();
            for (job, &h) in jobs.into_iter().zip(&hand_of) {
                hands[h].push(job);
            }
            hands
        };
        for (index, mut jobs) in hands.into_iter().enumerate() {
            for job in &mut jobs {
                sources.push(origin[job.spec.id as usize]);
                job.spec.id = sources.len() as u64;
            }
            out.insert(member_name(&group.name, group.count, index), jobs);
        }
    }
    Ok((out, sources))
}

/// A run's seed as the outputs report it.
pub fn seed_of(plan: &Plan, rep: u32) -> u64 {
    plan.seed.wrapping_add(u64::from(rep))
}
