//! Running studies: every sweep point × replication, in parallel, with outputs written atomically, resumable,
//! interruptible, and summarised with confidence intervals and the scenario's targets.

mod expect;
mod invariants;
pub mod market;
pub mod metrics;
pub mod outputs;
mod progress;
pub mod run;
pub mod shard;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rayon::prelude::*;

pub use expect::{Class, Outcome, Verdict, evaluate, evaluate_versus, fmt_summary, judge_ci, matches_at, unjudged};
pub use outputs::write_verdicts;
pub use run::{RunError, RunResult};

use crate::scenario::Study;
use crate::stats::Summary;

/// How to run a study.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Output folder.
    pub out: PathBuf,
    /// Parallel runs (rayon threads).
    pub jobs: usize,
    /// Skip runs already finished in `out` (same scenario, same seed).
    pub resume: bool,
    /// No progress bar.
    pub quiet: bool,
    /// Write every run's message trace here instead of (or besides) the scenario's `outputs.trace`.
    pub trace: Option<PathBuf>,
    /// Write every run's schedule as SWF too (`schedule.swf`).
    pub schedule_swf: bool,
    /// The command line, recorded in `run.json`.
    pub command: String,
    /// What writes `report.md` and its charts beside the study's files (`run` gives `report::write_study_report`;
    /// `reproduce` writes one for the family instead).
    pub report: Option<StudyReport>,
}

/// Writes a study's report into its output folder, before the folder is sealed.
pub type StudyReport = fn(&Study, &StudyResult, &Path) -> std::io::Result<String>;

impl RunOptions {
    /// Runs into `out` on `jobs` threads, with no progress bar, no resume and no extra outputs: what tests, benches
    /// and programs that run a study start from.
    pub fn quiet(out: impl Into<PathBuf>, jobs: usize) -> Self {
        RunOptions {
            out: out.into(),
            jobs,
            resume: false,
            quiet: true,
            trace: None,
            schedule_swf: false,
            command: String::new(),
            report: None,
        }
    }
}

/// The metrics of one finished run.
#[derive(Clone, Debug)]
pub struct Finished {
    /// Sweep point.
    pub point: usize,
    /// Replication.
    pub rep: u32,
    /// Its seed: runs of different points or files with the same seed pair up (common random numbers).
    pub seed: u64,
    /// Metrics.
    pub metrics: BTreeMap<String, f64>,
}

/// Everything a study produced.
#[derive(Clone, Debug)]
pub struct StudyResult {
    /// Finished runs, in (point, replication) order.
    pub runs: Vec<Finished>,
    /// Runs that did not finish, with the reason.
    pub unfinished: Vec<(usize, u32, String)>,
    /// Per point: metric → summary over replications.
    pub summaries: Vec<BTreeMap<String, Summary>>,
    /// Targets and how they fared.
    pub verdicts: Vec<Verdict>,
    /// Sanity checks and how they fared.
    pub checks: Vec<Verdict>,
}

impl StudyResult {
    /// Seed → value of `metric` at `point`, over the finished runs.
    pub fn by_seed(&self, point: usize, metric: &str) -> BTreeMap<u64, f64> {
        self.runs.iter().filter(|r| r.point == point).filter_map(|r| Some((r.seed, *r.metrics.get(metric)?))).collect()
    }
}

/// Runs every point and replication of `study` (those not already done when resuming), writes each run's files
/// and the study's summaries into `opts.out`, and evaluates the targets. `interrupt` stops it cleanly.
pub fn run_study(study: &Study, opts: &RunOptions, interrupt: &Arc<AtomicBool>) -> std::io::Result<StudyResult> {
    run_share(study, opts, None, interrupt)
}

/// Runs `shard`'s share of the study's runs, writes their files and, instead of the study's summaries (which
/// need every run), `shard.json` for `merge`. The result holds those runs, with neither summaries nor verdicts.
pub fn run_shard(
    study: &Study,
    opts: &RunOptions,
    shard: &shard::ShardRun,
    interrupt: &Arc<AtomicBool>,
) -> std::io::Result<StudyResult> {
    shard::refuse_adaptive(study).map_err(|m| std::io::Error::new(std::io::ErrorKind::InvalidInput, m))?;
    run_share(study, opts, Some(shard), interrupt)
}

fn run_share(
    study: &Study,
    opts: &RunOptions,
    shard: Option<&shard::ShardRun>,
    interrupt: &Arc<AtomicBool>,
) -> std::io::Result<StudyResult> {
    let claim = outputs::prepare_folder(study, &opts.out, &opts.command)?;
    let mut runs = Vec::new();
    let mut unfinished = Vec::new();
    // Replications run so far and wanted, per point: a point with a target precision gets more, in rounds.
    let mut done = vec![0u32; study.points.len()];
    let mut wanted: Vec<u32> = study.points.iter().map(|p| p.plan.replications).collect();
    loop {
        let tasks: Vec<(usize, u32)> = study
            .points
            .iter()
            .flat_map(|p| (done[p.index]..wanted[p.index]).map(move |r| (p.index, r)))
            .filter(|&(p, r)| shard.is_none_or(|s| s.takes(study, p, r)))
            .collect();
        if tasks.is_empty() || interrupt.load(Ordering::Relaxed) {
            break;
        }
        for (r, (point, _)) in run_tasks(study, &tasks, opts, interrupt)?.into_iter().zip(&tasks) {
            match r {
                Ok(f) => runs.push(f),
                Err(e) => unfinished.push(e),
            }
            done[*point] = wanted[*point];
        }
        for p in &study.points {
            let Some(precision) = &p.plan.precision else { continue };
            let values: Vec<f64> = runs
                .iter()
                .filter(|r| r.point == p.index)
                .filter_map(|r| r.metrics.get(&precision.metric).copied())
                .collect();
            // Only runs that measured it count; a point whose runs failed gets no more.
            if unfinished.iter().any(|u| u.0 == p.index) {
                continue;
            }
            let needed = precision.needed(&Summary::of(&values));
            wanted[p.index] = wanted[p.index].max(needed.min(precision.max_replications));
        }
    }
    if let Some(shard) = shard {
        runs.sort_by_key(|r| (r.point, r.rep));
        shard::write_manifest(study, shard, &runs, &unfinished, &opts.out)?;
        claim.seal()?;
        return Ok(StudyResult { runs, unfinished, summaries: Vec::new(), verdicts: Vec::new(), checks: Vec::new() });
    }
    let result = summarise(study, runs, unfinished);
    // Without a finished run there is nothing to summarise: no header-only files.
    if !result.runs.is_empty() {
        outputs::write_study(study, &result, &opts.out)?;
        if let Some(report) = opts.report {
            report(study, &result, &opts.out)?;
        }
    }
    claim.seal()?;
    Ok(result)
}

/// The study's result from its runs: summaries over the replications of each point, and the verdicts.
pub(crate) fn summarise(study: &Study, mut runs: Vec<Finished>, unfinished: Vec<Unfinished>) -> StudyResult {
    runs.sort_by_key(|r| (r.point, r.rep));
    let summaries: Vec<BTreeMap<String, Summary>> = study
        .points
        .iter()
        .map(|p| {
            let mut by_metric: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
            for run in runs.iter().filter(|r| r.point == p.index) {
                for (k, v) in &run.metrics {
                    by_metric.entry(k).or_default().push(*v);
                }
            }
            by_metric.into_iter().map(|(k, v)| (k.to_string(), Summary::of(&v))).collect()
        })
        .collect();
    let mut result = StudyResult { runs, unfinished, summaries, verdicts: Vec::new(), checks: Vec::new() };
    (result.verdicts, result.checks) = evaluate(study, &result);
    result
}

/// A run that did not finish: its point, its replication and why.
type Unfinished = (usize, u32, String);

/// Runs `tasks` (point, replication) in parallel, in their order.
fn run_tasks(
    study: &Study,
    tasks: &[(usize, u32)],
    opts: &RunOptions,
    interrupt: &Arc<AtomicBool>,
) -> std::io::Result<Vec<Result<Finished, Unfinished>>> {
    let progress = progress::Progress::new(tasks.len() as u64, opts.quiet);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs.clamp(1, tasks.len().max(1)))
        .build()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let stop = AtomicBool::new(false);
    let results = std::thread::scope(|scope| {
        if let Some(p) = &progress {
            scope.spawn(|| p.report_until(&stop));
        }
        let results = pool.install(|| {
            tasks
                .par_iter()
                .map(|&(point, rep)| {
                    let clock = progress.as_ref().map(|p| p.start(point, rep, study.points[point].plan.horizon));
                    // Agents' panics are caught by the kernel; this catches the runner's own, so that one bad run
                    // does not take the others with it.
                    let task = std::panic::AssertUnwindSafe(|| run_task(study, point, rep, opts, interrupt, clock));
                    let result =
                        std::panic::catch_unwind(task).unwrap_or_else(|p| Err(format!("panicked: {}", text(&*p))));
                    if let Some(p) = &progress {
                        p.end(point, rep);
                    }
                    result.map_err(|e| (point, rep, e))
                })
                .collect()
        });
        stop.store(true, Ordering::Relaxed);
        results
    });
    Ok(results)
}

/// The message of a panic.
fn text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

/// Runs (or, when resuming, reloads) one run; the error string says why it did not finish.
fn run_task(
    study: &Study,
    point: usize,
    rep: u32,
    opts: &RunOptions,
    interrupt: &Arc<AtomicBool>,
    clock: Option<Arc<AtomicU64>>,
) -> Result<Finished, String> {
    let p = &study.points[point];
    let dir = run_dir(&opts.out, point, rep);
    let seed = run::seed_of(&p.plan, rep);
    if opts.resume
        && let Some(metrics) = outputs::finished_run(&dir, p.hash, seed)
    {
        return Ok(Finished { point, rep, seed, metrics });
    }
    if interrupt.load(Ordering::Relaxed) {
        return Err("interrupted before it started".into());
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let trace = match &opts.trace {
        Some(t) if study.points.len() == 1 && p.plan.replications == 1 => Some(t.clone()),
        Some(_) => Some(dir.join("trace.jsonl")),
        None => p.plan.outputs.trace.then(|| dir.join("trace.jsonl")),
    };
    let result = run::run_watched(&p.plan, rep, interrupt, trace.as_deref(), clock).map_err(|e| e.to_string())?;
    outputs::write_run(study, point, rep, &result, &dir, opts).map_err(|e| e.to_string())?;
    Ok(Finished { point, rep, seed, metrics: result.measured.metrics })
}

/// The folder of one run.
pub fn run_dir(out: &Path, point: usize, rep: u32) -> PathBuf {
    out.join(format!("p{point}")).join(format!("r{rep}"))
}
