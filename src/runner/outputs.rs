//! The files a study writes, each atomically (temporary file, then rename):
//!
//! | file | contents |
//! |---|---|
//! | `p<i>/r<j>/jobs.csv` | one row per job: `id, source_id, owner, group, submit, start, end, site, pes, runtime, deadline, outcome, cost, wait, response, reason` (`id` unique in the run, `source_id` the job's id in its workload: a trace's job number; times in s, cost in G$; `reason`: why a job was rejected or dropped; empty = not applicable) |
//! | `p<i>/r<j>/timeseries.csv` | provider state sampled every `sample-period`: `t, agent, busy_pes, utilisation, queued` |
//! | `p<i>/utilisation.svg`, `p<i>/queued.svg` | with `timeseries.csv` (and providers to sample): replication 0's utilisation and queue length over time as step lines, one per provider (one per provider group when there are more than 8 providers: busy PEs over the group's PEs, the jobs queued summed), time in s, h or d by the run's length; written with that run |
//! | `p<i>/r<j>/schedule.csv` | the schedule in the columns of Batsim's jobs file, which Evalys reads: `job_id, workload_name, submission_time, requested_number_of_resources, requested_time, success, starting_time, execution_time, finish_time, waiting_time, turnaround_time, stretch, allocated_resources`, then `site, outcome` (`job_id` as `id` in `jobs.csv`; `requested_time` the runtime estimate the scheduler saw; `success` 1 for a completed job, else 0; `execution_time` = finish − start, the time it actually ran; `stretch` = turnaround / execution time; times in s, empty where not applicable). PE ids are not tracked: a provider's scheduler counts free PEs in an availability profile and never assigns particular ones, so `allocated_resources` is empty and the count is `requested_number_of_resources` (Evalys's Gantt charts and utilisation need ids; its wait, turnaround and stretch do not) |
//! | `p<i>/r<j>/schedule.swf` | with `--schedule-swf`: the schedule as SWF v2.2, one line per job in submit order: job number = `id` in `jobs.csv`, submit, wait and run time (start and end instants rounded to whole seconds, the wait and run times their differences), allocated PEs (0 for a job that never started), requested PEs and time (the estimate), status (1 completed, 0 rejected by a provider, 5 dropped by its owner, -1 running or waiting when the run ended), partition = the provider (numbered in the header's notes); a job that did not complete has run time -1 |
//! | `p<i>/r<j>/ledger.csv` | every transfer of money in time order: `t, payer, payee, amount, currency, reason, job, booked_by` (agents by name, external accounts as `electricity-supplier`, `penalty-sink`, `operator`; `job` empty when not for a job) |
//! | `p<i>/r<j>/summary.json` | the run's metrics by name (NaN = undefined, written as null) |
//! | `p<i>/r<j>/run.json` | version, scenario, point, replication, seed, scenario hash, command line, end time, events; written last, so its presence marks a finished run (`--resume`) |
//! | `points.csv` | `point, label` and one column per swept key (its value at the point), for every sweep point |
//! | `summary.csv` / `summary.json` | per point (its columns as in `points.csv`) and metric over replications: `n, mean, std, ci95` (half-width, Student t), `lo, hi` |
//! | `differences.csv` | per point after the first and metric: paired difference to point 0 on common seeds, `n, mean, ci95, lo, hi` |
//! | `expectations.csv` | every target: `target, source, tolerance, measured, verdict, conflict` (`pass`, `FAIL` or `inconclusive`; "(indicative)" after it with `--quick`; `conflict`: how the source contradicts itself on a target that is reported but not scored, empty for a scored one) |
//! | `checks.csv` | every sanity check: `check, why, measured, verdict` (`pass` when every run meets it) |

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use agents::ledger::Account;

use super::RunOptions;
use super::StudyResult;
use super::metrics::{Quantity, SampleRow};
use super::run::RunResult;
use crate::output::{Csv, Field, write_atomic};
use crate::plot::{self, Chart, TimeSeries};
use crate::scenario::Study;
use crate::scenario::plan::{Point, show};
use crate::stats::{Summary, paired_difference};
use crate::workload::swf::{self, whole};
use crate::workload::{JobStatus, Workload, WorkloadJob};
use agents::report::JobOutcome;

fn num(x: Option<f64>) -> Field<'static> {
    x.map_or(Field::Empty, Field::Num)
}

/// Writes one run's files, `run.json` last.
pub fn write_run(
    study: &Study,
    point: usize,
    rep: u32,
    r: &RunResult,
    dir: &Path,
    opts: &RunOptions,
) -> std::io::Result<()> {
    let p = &study.points[point];
    if p.plan.outputs.jobs {
        let mut csv = Csv::new(&[
            "id",
            "source_id",
            "owner",
            "group",
            "submit",
            "start",
            "end",
            "site",
            "pes",
            "runtime",
            "deadline",
            "outcome",
            "cost",
            "wait",
            "response",
            "reason",
        ]);
        for j in &r.measured.jobs {
            let rec = &j.record;
            csv.row(&[
                Field::UInt(rec.id),
                j.source_id.map_or(Field::Empty, Field::UInt),
                Field::Str(&j.owner),
                Field::Str(&j.group),
                Field::Num(rec.submit),
                num(rec.start),
                num(rec.end),
                j.site.as_deref().map_or(Field::Empty, Field::Str),
                Field::UInt(u64::from(rec.pes)),
                Field::Num(rec.runtime),
                num(rec.deadline),
                Field::Str(rec.outcome.as_str()),
                Field::Num(rec.cost),
                num(rec.start.map(|s| s - rec.submit)),
                num(rec.end.filter(|_| rec.start.is_some()).map(|e| e - rec.submit)),
                rec.reason.as_deref().map_or(Field::Empty, Field::Str),
            ]);
        }
        write(&dir.join("jobs.csv"), &csv.into_bytes())?;
    }
    if p.plan.outputs.schedule {
        write(&dir.join("schedule.csv"), &schedule_csv(study, point, r))?;
    }
    if opts.schedule_swf {
        let mut bytes = Vec::new();
        swf::write_swf(&schedule(study, point, rep, r), &mut bytes).map_err(std::io::Error::other)?;
        write(&dir.join("schedule.swf"), &bytes)?;
    }
    if p.plan.outputs.timeseries {
        let mut csv = Csv::new(&["t", "agent", "busy_pes", "utilisation", "queued"]);
        for s in &r.measured.samples {
            csv.row(&[
                Field::Num(s.t),
                Field::Str(&s.agent),
                Field::Num(s.busy_pes),
                Field::Num(s.utilisation),
                Field::Num(s.queued),
            ]);
        }
        write(&dir.join("timeseries.csv"), &csv.into_bytes())?;
    }
    if p.plan.outputs.ledger {
        let m = &r.measured;
        let name = |a: Account| match a {
            Account::Agent(id) => m.names.get(id.index()).map_or("?", String::as_str),
            Account::External(e) => e.name(),
        };
        let mut csv = Csv::new(&["t", "payer", "payee", "amount", "currency", "reason", "job", "booked_by"]);
        for t in &m.ledger {
            csv.row(&[
                Field::Num(t.at.secs()),
                Field::Str(name(t.payer)),
                Field::Str(name(t.payee)),
                Field::Num(t.amount),
                Field::Str(t.currency.symbol()),
                Field::Str(t.reason.name()),
                t.job.map_or(Field::Empty, Field::UInt),
                Field::Str(name(Account::Agent(t.booked_by))),
            ]);
        }
        write_atomic(&dir.join("ledger.csv"), &csv.into_bytes())?;
    }
    if p.plan.outputs.timeseries && rep == 0 && !r.measured.samples.is_empty() {
        write_time_charts(study, point, r, dir.parent().unwrap_or(dir))?;
    }
    write_json(&dir.join("summary.json"), &json!(r.measured.metrics))?;
    let run = json!({
        "version": env!("CARGO_PKG_VERSION"),
        "scenario": study.path.display().to_string(),
        "point": point,
        "label": p.label,
        "replication": rep,
        "seed": r.seed,
        "hash": format!("{:016x}", p.hash),
        "command": opts.command,
        "end_time": r.outcome.now.secs(),
        "events": r.outcome.delivered,
        "reason": r.outcome.reason,
    });
    write_json(&dir.join("run.json"), &run)
}

/// A quantity of `timeseries.csv` charted per point as `p<i>/<name>.svg`; a market series (prices, contention)
/// sampled the same way plugs in as one more entry of [`CHARTED`].
struct Charted {
    /// File stem.
    name: &'static str,
    /// What it is, in the title and on the axis (followed by the unit).
    what: &'static str,
    /// Its unit and the values it can take.
    quantity: Quantity,
    /// How the members of a provider group add up when there are too many providers to draw each.
    combine: Combine,
    /// Its value in a sample.
    value: fn(&SampleRow) -> f64,
}

/// How the samples of a group's members make the group's.
#[derive(Clone, Copy)]
enum Combine {
    /// Their sum (jobs queued).
    Sum,
    /// Their mean weighted by PEs (utilisation: busy PEs over the group's PEs).
    PeWeighted,
}

/// What is charted per point.
const CHARTED: [Charted; 2] = [
    Charted {
        name: "utilisation",
        what: "utilisation",
        quantity: Quantity::Share,
        combine: Combine::PeWeighted,
        value: |s| s.utilisation,
    },
    Charted {
        name: "queued",
        what: "jobs queued",
        quantity: Quantity::Count,
        combine: Combine::Sum,
        value: |s| s.queued,
    },
];

/// Providers drawn one line each; with more, a line per provider group.
const MAX_LINES: usize = 8;

/// Writes the [`CHARTED`] time series of replication 0 of `point` (its run `r`) into the point's folder `dir`.
fn write_time_charts(study: &Study, point: usize, r: &RunResult, dir: &Path) -> std::io::Result<()> {
    let p = &study.points[point];
    let (scale, unit) = plot::time_unit(r.outcome.now.secs());
    // Each provider's line, or its group's when there are too many.
    let sites = &r.measured.sites;
    let by_group = sites.len() > MAX_LINES;
    let group_of: BTreeMap<String, &str> = p.plan.agents().map(|a| (a.name, a.group)).collect();
    // Each line's name and its providers.
    let mut lines: Vec<(&str, usize)> = Vec::new();
    let mut line_of: BTreeMap<&str, (usize, f64)> = BTreeMap::new();
    for (name, pes) in sites {
        let line = if by_group { group_of.get(name).copied().unwrap_or(name) } else { name };
        let i = lines.iter().position(|l| l.0 == line).unwrap_or_else(|| {
            lines.push((line, 0));
            lines.len() - 1
        });
        lines[i].1 += 1;
        line_of.insert(name, (i, *pes));
    }
    let at = if p.label.is_empty() { String::new() } else { format!(", {}", p.label) };
    let per = if by_group { "per provider group" } else { "per provider" };
    let x_label = format!("time [{unit}]");
    for c in &CHARTED {
        // Per line, (t, Σ weight × value, Σ weight): samples come in time order, each instant once per provider.
        let mut sums: Vec<Vec<(f64, f64, f64)>> = vec![Vec::new(); lines.len()];
        for s in &r.measured.samples {
            let Some(&(i, pes)) = line_of.get(s.agent.as_str()) else { continue };
            let w = match c.combine {
                Combine::Sum => 1.0,
                Combine::PeWeighted => pes,
            };
            let (t, v) = (s.t / scale, (c.value)(s));
            match sums[i].last_mut() {
                Some(last) if last.0 == t => (last.1, last.2) = (last.1 + w * v, last.2 + w),
                _ => sums[i].push((t, w * v, w)),
            }
        }
        let series: Vec<TimeSeries> = lines
            .iter()
            .zip(sums)
            .map(|(&(name, members), sums)| TimeSeries {
                label: match (by_group, members) {
                    (false, _) => name.to_string(),
                    (true, 1) => format!("{name} (1 provider)"),
                    (true, n) => format!("{name} ({n} providers)"),
                },
                points: sums
                    .into_iter()
                    .map(|(t, sum, w)| match c.combine {
                        Combine::Sum => (t, sum),
                        Combine::PeWeighted => (t, if w > 0.0 { sum / w } else { f64::NAN }),
                    })
                    .collect(),
            })
            .collect();
        let title = format!("{}{at}: {} {per}, replication 0 (seed {})", study.name, c.what, r.seed);
        let y_label = format!("{} {}", c.what, c.quantity.unit());
        let chart = Chart { y_bounds: c.quantity.bounds(), ..Chart::new(&title, &x_label, &y_label) };
        write(&dir.join(format!("{}.svg", c.name)), plot::time_chart(&chart, &series).as_bytes())?;
    }
    Ok(())
}

/// `schedule.csv`: one row per job, in the columns of Batsim's jobs file that apply.
fn schedule_csv(study: &Study, point: usize, r: &RunResult) -> Vec<u8> {
    let plan = &study.points[point].plan;
    let mut csv = Csv::new(&[
        "job_id",
        "workload_name",
        "submission_time",
        "requested_number_of_resources",
        "requested_time",
        "success",
        "starting_time",
        "execution_time",
        "finish_time",
        "waiting_time",
        "turnaround_time",
        "stretch",
        "allocated_resources",
        "site",
        "outcome",
    ]);
    for j in &r.measured.jobs {
        let rec = &j.record;
        let workload = plan.groups.iter().find(|g| g.name == j.group).and_then(|g| g.spec.workload()).map(|w| w.0);
        let end = rec.end.filter(|_| rec.start.is_some());
        let execution = rec.start.zip(end).map(|(s, e)| e - s);
        let turnaround = end.map(|e| e - rec.submit);
        csv.row(&[
            Field::UInt(rec.id),
            workload.map_or(Field::Empty, Field::Str),
            Field::Num(rec.submit),
            Field::UInt(u64::from(rec.pes)),
            num(j.estimate),
            Field::UInt(u64::from(rec.outcome == JobOutcome::Completed)),
            num(rec.start),
            num(execution),
            num(end),
            num(rec.start.map(|s| s - rec.submit)),
            num(turnaround),
            num(turnaround.zip(execution.filter(|&x| x > 0.0)).map(|(t, x)| t / x)),
            // PE ids are not tracked: see the table above.
            Field::Empty,
            j.site.as_deref().map_or(Field::Empty, Field::Str),
            Field::Str(rec.outcome.as_str()),
        ]);
    }
    csv.into_bytes()
}

/// The run's schedule as an SWF workload: one job per job of `jobs.csv`, in submit order, and a header that says
/// what the run was and which provider each partition number is.
fn schedule(study: &Study, point: usize, rep: u32, r: &RunResult) -> Workload {
    let p = &study.points[point];
    let sites = &r.measured.sites;
    let mut jobs: Vec<WorkloadJob> = r
        .measured
        .jobs
        .iter()
        .map(|j| {
            let rec = &j.record;
            // Instants are rounded, and the wait and run times are their differences, so that they add up.
            let submit = whole(rec.submit);
            let start = rec.start.map(whole);
            let end = rec.end.filter(|_| rec.outcome == JobOutcome::Completed).map(whole);
            let status = match rec.outcome {
                JobOutcome::Completed => Some(JobStatus::Completed),
                JobOutcome::Rejected => Some(JobStatus::Failed),
                JobOutcome::Dropped => Some(JobStatus::Cancelled),
                JobOutcome::Running | JobOutcome::Pending => None,
            };
            let partition = j.site.as_ref().and_then(|s| sites.iter().position(|(name, _)| name == s));
            WorkloadJob {
                wait: start.map(|s| s - submit),
                requested_pes: Some(rec.pes),
                requested_time: j.estimate,
                status,
                partition: partition.and_then(|i| u32::try_from(i + 1).ok()),
                // −1: a job that did not complete has no run time.
                ..WorkloadJob::new(
                    rec.id,
                    submit,
                    start.zip(end).map_or(-1.0, |(s, e)| e - s),
                    start.map_or(0, |_| rec.pes),
                )
            }
        })
        .collect();
    jobs.sort_by(|a, b| a.submit.total_cmp(&b.submit).then(a.id.cmp(&b.id)));
    let mut w = Workload::new(jobs);
    let entry = |k: &str, v: String| (k.to_string(), v);
    let mut entries = vec![
        entry("Computer", format!("gridmarket {} simulation", env!("CARGO_PKG_VERSION"))),
        entry(
            "Installation",
            format!(
                "scenario {} ({}), point {point}{}, replication {rep}, seed {}",
                study.name,
                study.path.display(),
                if p.label.is_empty() { String::new() } else { format!(" ({})", p.label) },
                r.seed
            ),
        ),
        entry("MaxProcs", sites.iter().map(|(_, pes)| pes).sum::<f64>().to_string()),
        entry("MaxPartitions", sites.len().to_string()),
    ];
    for (i, (name, pes)) in sites.iter().enumerate() {
        entries.push(entry("Note", format!("partition {} is provider {name} ({pes} PEs)", i + 1)));
    }
    entries.push(entry(
        "Note",
        "job numbers are the ids of jobs.csv; status 1 completed, 0 rejected by a provider, 5 dropped by its owner, \
         -1 running or waiting when the run ended"
            .into(),
    ));
    w.header = swf::header(&w, entries);
    w
}

/// The metrics of a finished run in `dir` whose scenario hash and seed match, for `--resume`.
pub fn finished_run(dir: &Path, hash: u64, seed: u64) -> Option<BTreeMap<String, f64>> {
    let run: Value = serde_json::from_slice(&std::fs::read(dir.join("run.json")).ok()?).ok()?;
    if run["hash"] != json!(format!("{hash:016x}")) || run["seed"] != json!(seed) {
        return None;
    }
    let summary: BTreeMap<String, Option<f64>> =
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).ok()?).ok()?;
    Some(summary.into_iter().map(|(k, v)| (k, v.unwrap_or(f64::NAN))).collect())
}

/// Writes the study-level files.
pub fn write_study(study: &Study, result: &StudyResult, out: &Path) -> std::io::Result<()> {
    // One column per swept key, so the files load as tidy tables (pandas, R) without parsing labels.
    let swept: Vec<&str> =
        study.points.first().map(|p| p.assignments.iter().map(|(k, _)| k.as_str()).collect()).unwrap_or_default();
    let values: Vec<Vec<String>> =
        study.points.iter().map(|p| p.assignments.iter().map(|(_, v)| show(v)).collect()).collect();
    let header = |tail: &[&'static str]| -> Vec<&str> {
        ["point", "label"].into_iter().chain(swept.iter().copied()).chain(tail.iter().copied()).collect()
    };
    let mut points = Csv::new(&header(&[]));
    for p in &study.points {
        points.row(&lead(p, &values[p.index]));
    }
    write(&out.join("points.csv"), &points.into_bytes())?;

    let mut csv = Csv::new(&header(&SUMMARY_COLUMNS));
    let mut json_points = Vec::new();
    for (p, summaries) in study.points.iter().zip(&result.summaries) {
        let mut metrics = serde_json::Map::new();
        for (metric, s) in summaries {
            csv.row(&[lead(p, &values[p.index]), summary_fields(metric, s)].concat());
            metrics.insert(metric.clone(), json!({"n": s.n, "mean": s.mean, "std": s.std, "ci95": s.ci95}));
        }
        let assignments: serde_json::Map<String, Value> =
            p.assignments.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        json_points.push(json!({"point": p.index, "label": p.label, "swept": assignments, "metrics": metrics}));
    }
    write(&out.join("summary.csv"), &csv.into_bytes())?;
    write_json(&out.join("summary.json"), &json!({"scenario": study.name, "points": json_points}))?;

    let mut diff = Csv::new(&header(&SUMMARY_COLUMNS));
    for p in study.points.iter().skip(1) {
        for metric in result.summaries[p.index].keys() {
            let (a, b) = paired(result, p.index, 0, metric);
            if a.len() >= 2
                && let Ok(s) = paired_difference(&a, &b)
            {
                diff.row(&[lead(p, &values[p.index]), summary_fields(metric, &s)].concat());
            }
        }
    }
    write(&out.join("differences.csv"), &diff.into_bytes())?;
    write_verdicts(study, result, out)
}

/// `expectations.csv` and `checks.csv`: every target and every sanity check of the study with its verdict.
pub fn write_verdicts(study: &Study, result: &StudyResult, out: &Path) -> std::io::Result<()> {
    let mut targets = Csv::new(&["target", "source", "tolerance", "measured", "verdict", "conflict"]);
    for v in &result.verdicts {
        let verdict = v.verdict(study.quick);
        targets.row(&[
            Field::Str(&v.target),
            Field::Str(&v.source),
            Field::Str(&v.tolerance),
            Field::Str(&v.measured),
            Field::Str(&verdict),
            v.conflict.as_deref().map_or(Field::Empty, Field::Str),
        ]);
    }
    write(&out.join("expectations.csv"), &targets.into_bytes())?;
    let mut checks = Csv::new(&["check", "why", "measured", "verdict"]);
    for v in &result.checks {
        let verdict = v.outcome.label();
        checks.row(&[Field::Str(&v.target), Field::Str(&v.source), Field::Str(&v.measured), Field::Str(verdict)]);
    }
    write(&out.join("checks.csv"), &checks.into_bytes())
}

/// Values of `metric` at points `a` and `b` on the replications both finished (common seeds).
fn paired(result: &StudyResult, a: usize, b: usize, metric: &str) -> (Vec<f64>, Vec<f64>) {
    let at = |point: usize| -> BTreeMap<u32, f64> {
        result.runs.iter().filter(|r| r.point == point).filter_map(|r| Some((r.rep, *r.metrics.get(metric)?))).collect()
    };
    let (xa, xb) = (at(a), at(b));
    xa.iter().filter_map(|(rep, va)| Some((*va, *xb.get(rep)?))).unzip()
}

/// A point's first columns: its number, its label and the value of each swept key.
fn lead<'a>(p: &'a Point, values: &'a [String]) -> Vec<Field<'a>> {
    [Field::UInt(p.index as u64), Field::Str(&p.label)]
        .into_iter()
        .chain(values.iter().map(|v| Field::Str(v)))
        .collect()
}

/// The columns of `summary.csv` and `differences.csv` after the point's own.
const SUMMARY_COLUMNS: [&str; 7] = ["metric", "n", "mean", "std", "ci95", "lo", "hi"];

fn summary_fields<'a>(metric: &'a str, s: &Summary) -> Vec<Field<'a>> {
    vec![
        Field::Str(metric),
        Field::UInt(s.n as u64),
        Field::Num(s.mean),
        Field::Num(s.std),
        Field::Num(s.ci95),
        Field::Num(s.lo()),
        Field::Num(s.hi()),
    ]
}

/// Writes a file atomically; an error names it.
fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic(path, bytes).map_err(|e| std::io::Error::new(e.kind(), format!("writing {}: {e}", path.display())))
}

/// Makes `out` the study's output folder: creates it, and refuses one that holds the outputs of another scenario,
/// which would end up mixed with this one's (its own may be replaced or, with `--resume`, kept).
pub fn prepare_folder(study: &Study, out: &Path) -> std::io::Result<()> {
    let named = |e: std::io::Error| std::io::Error::new(e.kind(), format!("output folder {}: {e}", out.display()));
    if out.exists() && !out.is_dir() {
        return Err(named(std::io::Error::new(std::io::ErrorKind::AlreadyExists, "exists and is not a folder")));
    }
    std::fs::create_dir_all(out).map_err(named)?;
    // `run.json` has the path as given, perhaps relative to another folder: then the file names must match.
    let same_file = |other: &str| match std::fs::canonicalize(other) {
        Ok(o) => std::fs::canonicalize(&study.path).is_ok_and(|p| p == o),
        Err(_) => Path::new(other).file_name() == study.path.file_name(),
    };
    let summary: Option<Value> =
        std::fs::read(out.join("summary.json")).ok().and_then(|b| serde_json::from_slice(&b).ok());
    let mut other = summary
        .and_then(|s| s["scenario"].as_str().map(String::from))
        .filter(|name| *name != study.name)
        .map(|name| (format!("scenario `{name}`"), "summary.json".to_string()));
    for point in read_dir(out).filter(|p| numbered(p, 'p')) {
        for run in read_dir(&point).filter(|r| numbered(r, 'r')) {
            let file = run.join("run.json");
            let scenario: Option<String> = std::fs::read(&file)
                .ok()
                .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
                .and_then(|v| v["scenario"].as_str().map(String::from));
            if other.is_none()
                && let Some(path) = scenario.filter(|s| !same_file(s))
            {
                let rel = file.strip_prefix(out).unwrap_or(&file).display().to_string();
                other = Some((path, rel));
            }
        }
    }
    match other {
        Some((what, file)) => Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!(
                "output folder {} holds the outputs of another scenario ({what}, in {file}); choose another --out \
                 or remove them",
                out.display()
            ),
        )),
        None => Ok(()),
    }
}

/// The entries of `dir` (none if it cannot be read).
fn read_dir(dir: &Path) -> impl Iterator<Item = std::path::PathBuf> {
    std::fs::read_dir(dir).into_iter().flatten().filter_map(|e| e.ok().map(|e| e.path()))
}

/// Whether `path` is a folder named `<prefix><digits>`, as run folders are.
fn numbered(path: &Path, prefix: char) -> bool {
    path.is_dir()
        && path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix(prefix))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

fn write_json(path: &Path, v: &Value) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec_pretty(v).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    write(path, &bytes)
}
