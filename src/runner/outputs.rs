//! The files a study writes, each atomically (temporary file, then rename):
//!
//! | file | contents |
//! |---|---|
//! | `p<i>/r<j>/jobs.csv` | one row per job: `id, owner, group, submit, start, end, site, pes, runtime, deadline, outcome, cost, wait, response, reason` (times in s, cost in G$; `reason`: why a job was rejected or dropped; empty = not applicable) |
//! | `p<i>/r<j>/timeseries.csv` | provider state sampled every `sample-period`: `t, agent, busy_pes, utilisation, queued` |
//! | `p<i>/r<j>/summary.json` | the run's metrics by name (NaN = undefined, written as null) |
//! | `p<i>/r<j>/run.json` | version, scenario, point, replication, seed, scenario hash, command line, end time, events; written last, so its presence marks a finished run (`--resume`) |
//! | `points.csv` | `point, label` for every sweep point |
//! | `summary.csv` / `summary.json` | per point and metric over replications: `n, mean, std, ci95` (half-width, Student t), `lo, hi` |
//! | `differences.csv` | per point after the first and metric: paired difference to point 0 on common seeds, `n, mean, ci95, lo, hi` |
//! | `expectations.csv` | every target: `target, source, tolerance, measured, verdict` (`pass`, `FAIL` or `inconclusive`; "(indicative)" after it with `--quick`) |
//! | `checks.csv` | every sanity check: `check, why, measured, verdict` (`pass` when every run meets it) |

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use super::StudyResult;
use super::run::RunResult;
use crate::output::{Csv, Field, write_atomic};
use crate::scenario::Study;
use crate::stats::{Summary, paired_difference};

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
    command: &str,
) -> std::io::Result<()> {
    let p = &study.points[point];
    if p.plan.outputs.jobs {
        let mut csv = Csv::new(&[
            "id", "owner", "group", "submit", "start", "end", "site", "pes", "runtime", "deadline", "outcome", "cost",
            "wait", "response", "reason",
        ]);
        for j in &r.measured.jobs {
            let rec = &j.record;
            csv.row(&[
                Field::UInt(rec.id),
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
        write_atomic(&dir.join("jobs.csv"), &csv.into_bytes())?;
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
        write_atomic(&dir.join("timeseries.csv"), &csv.into_bytes())?;
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
        "command": command,
        "end_time": r.outcome.now.secs(),
        "events": r.outcome.delivered,
        "reason": r.outcome.reason,
    });
    write_json(&dir.join("run.json"), &run)
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
    let mut points = Csv::new(&["point", "label"]);
    for p in &study.points {
        points.row(&[Field::UInt(p.index as u64), Field::Str(&p.label)]);
    }
    write_atomic(&out.join("points.csv"), &points.into_bytes())?;

    let mut csv = Csv::new(&["point", "label", "metric", "n", "mean", "std", "ci95", "lo", "hi"]);
    let mut json_points = Vec::new();
    for (p, summaries) in study.points.iter().zip(&result.summaries) {
        let mut metrics = serde_json::Map::new();
        for (metric, s) in summaries {
            csv.row(&summary_row(p.index, &p.label, metric, s));
            metrics.insert(metric.clone(), json!({"n": s.n, "mean": s.mean, "std": s.std, "ci95": s.ci95}));
        }
        json_points.push(json!({"point": p.index, "label": p.label, "metrics": metrics}));
    }
    write_atomic(&out.join("summary.csv"), &csv.into_bytes())?;
    write_json(&out.join("summary.json"), &json!({"scenario": study.name, "points": json_points}))?;

    let mut diff = Csv::new(&["point", "label", "metric", "n", "mean", "std", "ci95", "lo", "hi"]);
    for p in study.points.iter().skip(1) {
        for metric in result.summaries[p.index].keys() {
            let (a, b) = paired(result, p.index, 0, metric);
            if a.len() >= 2
                && let Ok(s) = paired_difference(&a, &b)
            {
                diff.row(&summary_row(p.index, &p.label, metric, &s));
            }
        }
    }
    write_atomic(&out.join("differences.csv"), &diff.into_bytes())?;
    write_verdicts(study, result, out)
}

/// `expectations.csv` and `checks.csv`: every target and every sanity check of the study with its verdict.
pub fn write_verdicts(study: &Study, result: &StudyResult, out: &Path) -> std::io::Result<()> {
    let mut targets = Csv::new(&["target", "source", "tolerance", "measured", "verdict"]);
    for v in &result.verdicts {
        let verdict = v.verdict(study.quick);
        targets.row(&[
            Field::Str(&v.target),
            Field::Str(&v.source),
            Field::Str(&v.tolerance),
            Field::Str(&v.measured),
            Field::Str(&verdict),
        ]);
    }
    write_atomic(&out.join("expectations.csv"), &targets.into_bytes())?;
    let mut checks = Csv::new(&["check", "why", "measured", "verdict"]);
    for v in &result.checks {
        let verdict = v.outcome.label();
        checks.row(&[Field::Str(&v.target), Field::Str(&v.source), Field::Str(&v.measured), Field::Str(verdict)]);
    }
    write_atomic(&out.join("checks.csv"), &checks.into_bytes())
}

/// Values of `metric` at points `a` and `b` on the replications both finished (common seeds).
fn paired(result: &StudyResult, a: usize, b: usize, metric: &str) -> (Vec<f64>, Vec<f64>) {
    let at = |point: usize| -> BTreeMap<u32, f64> {
        result.runs.iter().filter(|r| r.point == point).filter_map(|r| Some((r.rep, *r.metrics.get(metric)?))).collect()
    };
    let (xa, xb) = (at(a), at(b));
    xa.iter().filter_map(|(rep, va)| Some((*va, *xb.get(rep)?))).unzip()
}

fn summary_row<'a>(point: usize, label: &'a str, metric: &'a str, s: &Summary) -> Vec<Field<'a>> {
    vec![
        Field::UInt(point as u64),
        Field::Str(label),
        Field::Str(metric),
        Field::UInt(s.n as u64),
        Field::Num(s.mean),
        Field::Num(s.std),
        Field::Num(s.ci95),
        Field::Num(s.lo()),
        Field::Num(s.hi()),
    ]
}

fn write_json(path: &Path, v: &Value) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec_pretty(v).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    write_atomic(path, &bytes)
}
