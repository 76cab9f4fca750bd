//! What a person reads: the summary table on stdout, the targets table, and `report.md` with one SVG chart per
//! swept metric for `gridmarket reproduce`.

use std::fmt::Write as _;
use std::path::Path;

use agents::provider::kind::KIND as PROVIDER;

use crate::output::write_atomic;
use crate::plot::{self, BarSeries, Series};
use crate::runner::metrics::SLOWDOWN_BOUND;
use crate::runner::{Outcome, StudyResult, Verdict};
use crate::scenario::Study;
use crate::scenario::plan::show;

/// Metrics shown on stdout after a run, when measured.
const HEADLINE: [(&str, &str); 11] = [
    ("jobs.total", "jobs"),
    ("jobs.completed", "completed"),
    ("jobs.rejected", "rejected"),
    ("jobs.dropped", "dropped"),
    ("jobs.wait", "mean wait [s]"),
    ("jobs.response", "mean response [s]"),
    ("jobs.bounded_slowdown", "mean bounded slowdown"),
    ("utilisation", "utilisation"),
    ("jobs.cost", "cost [G$]"),
    ("events", "messages delivered"),
    ("events_per_job", "messages per job"),
];

/// The readable summary, mean ± 95% CI half-width: a column per sweep point when there are a few, else a row per
/// point (with a column per swept key) so that wide sweeps stay readable.
pub fn summary_table(study: &Study, result: &StudyResult) -> String {
    // (label, metric key) of every row shown, in order.
    let mut shown: Vec<(String, String)> = HEADLINE
        .iter()
        .filter(|(metric, _)| result.summaries.iter().any(|s| s.contains_key(*metric)))
        .map(|(metric, label)| (label.to_string(), metric.to_string()))
        .collect();
    // Per provider, when there are few enough to read.
    let providers: Vec<String> =
        study.points[0].plan.agents().filter(|a| a.kind.name() == PROVIDER).map(|a| a.name).take(9).collect();
    if providers.len() <= 8 {
        for p in providers {
            for (metric, label) in [("utilisation", "utilisation"), ("received", "received [G$]")] {
                shown.push((format!("{p}: {label}"), format!("providers.{p}.{metric}")));
            }
        }
    }
    let cell =
        |point: usize, metric: &str| result.summaries[point].get(metric).map_or("-".into(), crate::runner::fmt_summary);
    let mut rows: Vec<Vec<String>> = Vec::new();
    if study.points.len() <= 4 {
        let mut header = vec!["metric".to_string()];
        header.extend(study.points.iter().map(|p| if p.label.is_empty() { "value".into() } else { p.label.clone() }));
        rows.push(header);
        for (label, metric) in &shown {
            let mut row = vec![label.clone()];
            row.extend(study.points.iter().map(|p| cell(p.index, metric)));
            rows.push(row);
        }
    } else {
        // The last segment of each swept key names its column (`providers.rp.preemption` → `preemption`).
        let mut header: Vec<String> =
            study.sweep.iter().map(|(k, _)| k.rsplit('.').next().unwrap_or(k).to_string()).collect();
        header.extend(shown.iter().map(|(label, _)| label.clone()));
        rows.push(header);
        for p in &study.points {
            let mut row: Vec<String> = p.assignments.iter().map(|(_, v)| show(v)).collect();
            row.extend(shown.iter().map(|(_, metric)| cell(p.index, metric)));
            rows.push(row);
        }
    }
    let mut out = table(&rows);
    let n: Vec<u32> = study.points.iter().map(|p| p.plan.replications).collect();
    let _ = writeln!(
        out,
        "({} replication{} per point; ± is the 95% CI half-width; bounded slowdown with τ = {SLOWDOWN_BOUND} s)",
        n[0],
        if n[0] == 1 { "" } else { "s" }
    );
    out
}

/// How many of the scored `verdicts` passed, failed and were inconclusive (documented conflicts are not scored).
pub fn tally(verdicts: &[Verdict]) -> [usize; 3] {
    let count = |o: Outcome| verdicts.iter().filter(|v| v.scored() && v.outcome == o).count();
    [count(Outcome::Pass), count(Outcome::Fail), count(Outcome::Inconclusive)]
}

/// "3 of 5 targets pass, 1 FAIL, 1 inconclusive", marked indicative for `--quick` (not for sanity checks, which
/// hold on every run whatever its size), then "; 2 documented conflicts (not scored)" if there are any.
pub fn tally_line(noun: &str, verdicts: &[Verdict], quick: bool) -> String {
    let scored = verdicts.iter().filter(|v| v.scored()).count();
    let mut line = if scored == 0 {
        format!("no {noun}")
    } else {
        let [pass, fail, inconclusive] = tally(verdicts);
        let quick = if quick { " (--quick: indicative)" } else { "" };
        format!("{pass} of {scored} {noun} pass, {fail} FAIL, {inconclusive} inconclusive{quick}")
    };
    match verdicts.len() - scored {
        0 => {}
        1 => line.push_str("; 1 documented conflict (not scored)"),
        n => line.push_str(&format!("; {n} documented conflicts (not scored)")),
    }
    line
}

/// The targets, the documented conflicts and the sanity checks of a study, each table under its tally (nothing for
/// a study without them).
pub fn verdict_tables(study: &Study, result: &StudyResult) -> String {
    let mut out = String::new();
    if !result.verdicts.is_empty() {
        let _ = writeln!(out, "{}", tally_line("targets", &result.verdicts, study.quick));
        let (scored, conflicts): (Vec<&Verdict>, Vec<&Verdict>) = result.verdicts.iter().partition(|v| v.scored());
        if !scored.is_empty() {
            let mut rows = vec![["target", "source", "measured (mean ± CI)", "verdict"].map(String::from).to_vec()];
            for v in scored {
                rows.push(vec![v.target.clone(), v.source.clone(), v.measured.clone(), v.verdict(study.quick)]);
            }
            out.push_str(&table(&rows));
        }
        if !conflicts.is_empty() {
            let _ = writeln!(out, "documented conflicts (the source contradicts itself: reported, not scored)");
            let mut rows = vec![["target", "conflict", "measured (mean ± CI)", "verdict"].map(String::from).to_vec()];
            for v in conflicts {
                let conflict = v.conflict.clone().unwrap_or_default();
                rows.push(vec![v.target.clone(), conflict, v.measured.clone(), v.verdict(study.quick)]);
            }
            out.push_str(&table(&rows));
        }
    }
    if !result.checks.is_empty() {
        let _ = writeln!(out, "{}", tally_line("sanity checks", &result.checks, false));
        let mut rows = vec![["check", "why", "measured", "verdict"].map(String::from).to_vec()];
        for v in &result.checks {
            rows.push(vec![v.target.clone(), v.source.clone(), v.measured.clone(), v.outcome.label().into()]);
        }
        out.push_str(&table(&rows));
    }
    out
}

fn table(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> =
        (0..cols).map(|c| rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        let line: Vec<String> = row.iter().enumerate().map(|(c, s)| format!("{s:<w$}", w = width[c])).collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
        if i == 0 {
            let _ = writeln!(out, "{}", width.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().join("  "));
        }
    }
    out
}

/// How to read the verdicts, at the top of `report.md`.
const VERDICT_RULES: &str = "A target is a claim of a source. A value or a range passes when the whole 95% confidence \
interval of the mean lies inside its band and fails when the interval lies wholly outside it; an order, a relative \
difference or a difference to another file is judged the same way on the interval of the paired differences on common \
seeds (an order claims a difference: a tie on every seed fails), and a mean difference over the sweep points on the \
t interval across the points (one difference per point, as a paper's t-test over its points). Anything else, or fewer \
than 2 replications (2 points), is inconclusive: it needs more replications. A documented conflict is a target on \
which the source contradicts itself: it is judged and shown, but not scored. Sanity checks hold by construction on \
every run; they are not targets and are not counted among them.\n\n";

/// Writes `report.md` and the charts of a reproduced family into `out`; returns the Markdown.
pub fn write_family_report(family: &str, studies: &[(Study, StudyResult)], out: &Path) -> std::io::Result<String> {
    let mut md = format!("# Reproduction: {family}\n\n");
    let targets: Vec<Verdict> = studies.iter().flat_map(|(_, r)| r.verdicts.iter().cloned()).collect();
    let checks: Vec<Verdict> = studies.iter().flat_map(|(_, r)| r.checks.iter().cloned()).collect();
    let quick = studies.iter().any(|(s, _)| s.quick);
    let (targets, checks) = (tally_line("targets", &targets, quick), tally_line("sanity checks", &checks, false));
    let _ = writeln!(md, "In all: {targets}; {checks}.\n");
    md.push_str(VERDICT_RULES);
    for (study, result) in studies {
        let _ = writeln!(md, "## {}\n", study.name);
        if let Some(d) = &study.description {
            let _ = writeln!(md, "{d}\n");
        }
        if let Some(s) = &study.source {
            let _ = writeln!(md, "Source: {s}\n");
        }
        let _ = writeln!(md, "```text\n{}```\n", summary_table(study, result));
        let esc = |t: &str| t.replace('|', "\\|");
        if !result.verdicts.is_empty() {
            let _ = writeln!(md, "{}\n", tally_line("targets", &result.verdicts, study.quick));
            let (scored, conflicts): (Vec<&Verdict>, Vec<&Verdict>) = result.verdicts.iter().partition(|v| v.scored());
            if !scored.is_empty() {
                md.push_str(
                    "| target | source | tolerance | measured (mean ± CI) | verdict |\n|---|---|---|---|---|\n",
                );
                for v in scored {
                    let cells = [&v.target, &v.source, &v.tolerance, &v.measured].map(|c| esc(c));
                    let _ = writeln!(md, "| {} | {} |", cells.join(" | "), v.verdict(study.quick));
                }
                md.push('\n');
            }
            if !conflicts.is_empty() {
                md.push_str(
                    "Documented conflicts: the source contradicts itself on these claims; reported, not scored.\n\n",
                );
                md.push_str("| target | source | conflict | measured (mean ± CI) | verdict |\n|---|---|---|---|---|\n");
                for v in conflicts {
                    let conflict = v.conflict.clone().unwrap_or_default();
                    let cells = [&v.target, &v.source, &conflict, &v.measured].map(|c| esc(c));
                    let _ = writeln!(md, "| {} | {} |", cells.join(" | "), v.verdict(study.quick));
                }
                md.push('\n');
            }
        }
        if !result.checks.is_empty() {
            let _ = writeln!(md, "{} (not targets)\n", tally_line("sanity checks", &result.checks, false));
            md.push_str("| check | why | measured | verdict |\n|---|---|---|---|\n");
            for v in &result.checks {
                let cells = [&v.target, &v.source, &v.measured].map(|c| esc(c));
                let _ = writeln!(md, "| {} | {} |", cells.join(" | "), v.outcome.label());
            }
            md.push('\n');
        }
        let asked = crate::charts::scenario_charts(study, result, &out.join(&study.name));
        for (file, svg) in charts(study, result).into_iter().chain(asked) {
            write_atomic(&out.join(&file), svg.as_bytes())?;
            let _ = writeln!(md, "![{file}]({file})\n");
        }
        if !result.unfinished.is_empty() {
            let _ = writeln!(md, "Unfinished runs: {}\n", result.unfinished.len());
        }
    }
    write_atomic(&out.join("report.md"), md.as_bytes())?;
    Ok(md)
}

/// One chart per metric named by a target, against the first swept key (a series per value of the others).
fn charts(study: &Study, result: &StudyResult) -> Vec<(String, String)> {
    let Some((key, values)) = study.sweep.first() else { return Vec::new() };
    let mut metrics: Vec<&str> = study.targets.iter().map(|e| e.metric.as_str()).collect();
    metrics.dedup();
    let numeric: Option<Vec<f64>> =
        values.iter().map(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64))).collect();
    let mut out = Vec::new();
    for metric in metrics {
        // Series: points grouped by the values of the other swept keys.
        let mut groups: Vec<(String, Vec<(usize, usize)>)> = Vec::new();
        for p in &study.points {
            let rest: Vec<String> = p.assignments.iter().skip(1).map(|(k, v)| format!("{k}={}", show(v))).collect();
            let label = if rest.is_empty() { metric.to_string() } else { rest.join(", ") };
            let x = values.iter().position(|v| p.assignments.first().is_some_and(|(_, a)| a == v)).unwrap_or(0);
            match groups.iter_mut().find(|g| g.0 == label) {
                Some(g) => g.1.push((x, p.index)),
                None => groups.push((label, vec![(x, p.index)])),
            }
        }
        let stat =
            |point: usize| result.summaries[point].get(metric).map_or((f64::NAN, f64::NAN), |s| (s.mean, s.ci95));
        let title = format!("{} — {}", study.name, metric);
        let svg = match &numeric {
            Some(xs) => {
                let series: Vec<Series> = groups
                    .iter()
                    .map(|(label, pts)| Series {
                        label: label.clone(),
                        points: pts.iter().map(|&(x, p)| (xs[x], stat(p).0, stat(p).1)).collect(),
                    })
                    .collect();
                plot::line_chart(&title, key, metric, &series)
            }
            None => {
                let categories: Vec<String> = values.iter().map(show).collect();
                let series: Vec<BarSeries> = groups
                    .iter()
                    .map(|(label, pts)| {
                        let mut v = vec![(f64::NAN, f64::NAN); categories.len()];
                        for &(x, p) in pts {
                            v[x] = stat(p);
                        }
                        BarSeries { label: label.clone(), values: v }
                    })
                    .collect();
                plot::bar_chart(&title, metric, &categories, &series)
            }
        };
        let file = format!("{}-{}.svg", study.name, metric.replace(['.', '/'], "_"));
        out.push((file, svg));
    }
    out
}
