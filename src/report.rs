//! What a person reads: the summary table on stdout, the targets table, and `report.md` with one SVG chart per
//! swept metric for `gridmarket reproduce`.

use std::fmt::Write as _;
use std::path::Path;

use crate::lock::counts_cell;
use crate::output::write_atomic;
use agents::registry::limits::short;

use crate::plot::{self, Band, BarSeries, Chart, Series};
use crate::runner::metrics::{SLOWDOWN_BOUND, axis_label, substitution_metrics, substitutions, unit_of};
use crate::runner::{Class, Outcome, StudyResult, Verdict, matches_at};
use crate::scenario::Study;
use crate::scenario::plan::{Point, Test, show};

/// Metrics shown on stdout after a run, when measured.
const HEADLINE: [(&str, &str); 12] = [
    ("jobs.total", "jobs"),
    ("jobs.completed", "completed"),
    ("jobs.rejected", "rejected"),
    ("jobs.dropped", "dropped"),
    ("jobs.unfinished", "unfinished at the end"),
    ("jobs.wait", "mean wait [s]"),
    ("jobs.response", "mean response [s]"),
    ("jobs.bounded_slowdown", "mean bounded slowdown"),
    ("utilisation", "utilisation"),
    ("jobs.cost", "cost [G$]"),
    ("events", "messages delivered"),
    ("events_per_job", "messages per job"),
];

/// The market's rows of the summary, shown when money changes hands or prices move.
const MARKET_ROWS: [(&str, &str); 6] = [
    ("market.price", "mean posted price [G$/(PE·s)]"),
    ("market.price_volatility", "price volatility"),
    ("market.contention", "contention index"),
    ("market.gini_load", "load Gini across providers"),
    ("market.revenue", "providers' revenue [G$]"),
    ("market.user_surplus", "users' surplus [G$]"),
];

/// `label` with its money in the study's currency: data centres bill in US dollars (Garg 2010 ch6's prices), the
/// rest of the market in G$.
fn in_currency(study: &Study, label: &str) -> String {
    if study.points[0].plan.agents().any(|a| a.kind.bills_in_dollars()) {
        label.replace("G$", "USD")
    } else {
        label.to_string()
    }
}

/// The readable summary, mean ± 95% CI half-width: a column per sweep point when there are a few, else a row per
/// point (with a column per swept key) so that wide sweeps stay readable.
pub fn summary_table(study: &Study, result: &StudyResult) -> String {
    // (label, metric key) of every row shown, in order.
    let mut shown: Vec<(String, String)> = HEADLINE
        .iter()
        .filter(|(metric, _)| result.summaries.iter().any(|s| s.contains_key(*metric)))
        .map(|(metric, label)| (in_currency(study, label), metric.to_string()))
        .collect();
    // With a market (money changes hands or prices move), what a pricing study reads of it, after the job rows.
    let positive = |metric: &str| result.summaries.iter().any(|s| s.get(metric).is_some_and(|s| s.mean > 0.0));
    let market = positive("market.revenue") || positive("market.price_volatility");
    if market {
        let present = |(metric, _): &&(&str, &str)| result.summaries.iter().any(|s| s.contains_key(*metric));
        shown.extend(MARKET_ROWS.iter().filter(present).map(|(m, label)| (in_currency(study, label), m.to_string())));
    }
    // Without any job (an induced-value market alone), the job rows say nothing.
    let jobs = result.summaries.iter().any(|s| s.get("jobs.total").is_some_and(|t| t.mean > 0.0));
    if !jobs {
        shown.retain(|(_, metric)| !metric.starts_with("jobs."));
    }
    // Per member of the kinds that ask for rows (induced-value markets and providers when there are few enough to
    // read, Melendez (2010)'s statistics for the first request sources).
    let plan = &study.points[0].plan;
    for kind in plan.registry.kinds() {
        let rows = kind.summary_rows();
        if rows.metrics.is_empty() {
            continue;
        }
        let members: Vec<String> =
            plan.agents().filter(|a| a.kind.name() == kind.name()).map(|a| a.name).take(rows.members + 1).collect();
        if rows.only_if_all && members.len() > rows.members {
            continue;
        }
        for member in members.iter().take(rows.members) {
            for (metric, label) in rows.metrics {
                shown.push((format!("{member}: {label}"), format!("{}.{member}.{metric}", kind.table())));
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
    // Per point, the replications that finished (a target precision makes them differ).
    let n: Vec<usize> =
        study.points.iter().map(|p| result.runs.iter().filter(|r| r.point == p.index).count()).collect();
    let (lo, hi) = (n.iter().min().copied().unwrap_or(0), n.iter().max().copied().unwrap_or(0));
    let count = if lo == hi { lo.to_string() } else { format!("{lo} to {hi}") };
    let _ = writeln!(
        out,
        "({count} replication{} per point; ± is the 95% CI half-width; bounded slowdown with τ = {SLOWDOWN_BOUND} s)",
        if hi == 1 { "" } else { "s" }
    );
    out
}

/// What agents did in place of what they were configured to do, over a study's runs, a line per metric that
/// counts it: "providers.rp.search_fallbacks: exact preemption searches that … : 17 in 3 of 20 runs (p0/r1, …)".
pub fn substitution_warnings(study: &Study, result: &StudyResult) -> Vec<String> {
    let counted = substitution_metrics(&study.points[0].plan.registry);
    // metric → (what it counts, total, the runs where it happened)
    let mut seen: std::collections::BTreeMap<&str, (&str, f64, Vec<String>)> = std::collections::BTreeMap::new();
    for run in &result.runs {
        for (metric, count, about) in substitutions(&counted, &run.metrics) {
            let entry = seen.entry(metric).or_insert((about, 0.0, Vec::new()));
            entry.1 += count;
            entry.2.push(format!("p{}/r{}", run.point, run.rep));
        }
    }
    seen.into_iter()
        .map(|(metric, (about, total, runs))| {
            let shown: Vec<&str> = runs.iter().take(4).map(String::as_str).collect();
            let more = if runs.len() > shown.len() { ", …" } else { "" };
            format!(
                "{metric}: {about}: {} in {} of {} runs ({}{more})",
                short(total),
                runs.len(),
                result.runs.len(),
                shown.join(", ")
            )
        })
        .collect()
}

/// How many of `verdicts` of `class` passed, failed and were inconclusive.
pub fn tally(verdicts: &[Verdict], class: Class) -> [usize; 3] {
    let count = |o: Outcome| verdicts.iter().filter(|v| v.class() == class && v.outcome == o).count();
    [count(Outcome::Pass), count(Outcome::Fail), count(Outcome::Inconclusive)]
}

/// "3 of 5 targets pass, 1 FAIL, 1 inconclusive", marked indicative for `quick` (not for sanity checks, which hold
/// on every run whatever its size); for targets then "; 2 own hypotheses: 2 pass, 0 FAIL, 0 inconclusive" and "; 2
/// documented conflicts (not scored)" if there are any. `verdicts` are a study's targets, or its checks with
/// `checks`.
pub fn tally_line(verdicts: &[Verdict], checks: bool, quick: bool) -> String {
    let of = |class: Class, noun: &str, quick: bool| {
        let [pass, fail, inconclusive] = tally(verdicts, class);
        let quick = if quick { " (--quick: indicative)" } else { "" };
        match pass + fail + inconclusive {
            0 => format!("no {noun}"),
            n => format!("{pass} of {n} {noun} pass, {fail} FAIL, {inconclusive} inconclusive{quick}"),
        }
    };
    if checks {
        // A check's verdict is read like a target's.
        return of(Class::Target, "sanity checks", false);
    }
    let mut line = of(Class::Target, "targets", quick);
    let [pass, fail, inconclusive] = tally(verdicts, Class::Hypothesis);
    match pass + fail + inconclusive {
        0 => {}
        1 => line.push_str(&format!("; 1 own hypothesis: {pass} pass, {fail} FAIL, {inconclusive} inconclusive")),
        n => line.push_str(&format!("; {n} own hypotheses: {pass} pass, {fail} FAIL, {inconclusive} inconclusive")),
    }
    match verdicts.iter().filter(|v| v.class() == Class::Conflict).count() {
        0 => {}
        1 => line.push_str("; 1 documented conflict (not scored)"),
        n => line.push_str(&format!("; {n} documented conflicts (not scored)")),
    }
    line
}

/// The targets, our own hypotheses, the documented conflicts and the sanity checks of a study, each table under its
/// tally (nothing for a study without them).
pub fn verdict_tables(study: &Study, result: &StudyResult) -> String {
    let mut out = String::new();
    if !result.verdicts.is_empty() {
        let _ = writeln!(out, "{}", tally_line(&result.verdicts, false, study.quick));
        for class in [Class::Target, Class::Hypothesis, Class::Conflict] {
            let of_class: Vec<&Verdict> = result.verdicts.iter().filter(|v| v.class() == class).collect();
            if of_class.is_empty() {
                continue;
            }
            let second = match class {
                Class::Conflict => {
                    let _ = writeln!(out, "documented conflicts (the source contradicts itself: reported, not scored)");
                    "conflict"
                }
                Class::Hypothesis => {
                    let _ = writeln!(out, "own hypotheses (no source states them: scored apart from the targets)");
                    "rests on"
                }
                _ => "source",
            };
            let mut rows =
                vec![vec![class.label().into(), second.into(), "measured (mean ± CI)".into(), "verdict".into()]];
            for v in of_class {
                let said =
                    if class == Class::Conflict { v.conflict.clone().unwrap_or_default() } else { v.source.clone() };
                rows.push(vec![v.target.clone(), said, v.measured.clone(), v.verdict(study.quick)]);
            }
            out.push_str(&table(&rows));
        }
    }
    if !result.checks.is_empty() {
        let _ = writeln!(out, "{}", tally_line(&result.checks, true, false));
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

/// The line at the top of `report.md`: "**Overall: 3 pass / 1 FAIL / 1 inconclusive of 5 targets** (--quick:
/// indicative); 2 pass / 0 FAIL / 0 inconclusive of 2 own hypotheses; 7 pass / 0 FAIL / 0 inconclusive of 7 sanity
/// checks", then the documented conflicts if any.
fn overall(targets: &[Verdict], checks: &[Verdict], quick: bool) -> String {
    let counts = |verdicts: &[Verdict], class: Class, noun: &str| {
        let [pass, fail, inconclusive] = tally(verdicts, class);
        match pass + fail + inconclusive {
            0 => format!("no {noun}"),
            n => format!("{pass} pass / {fail} FAIL / {inconclusive} inconclusive of {n} {noun}"),
        }
    };
    let mut line = format!("**Overall: {}**", counts(targets, Class::Target, "targets"));
    if quick && targets.iter().any(|v| v.class() == Class::Target) {
        line.push_str(" (--quick: indicative)");
    }
    if targets.iter().any(|v| v.class() == Class::Hypothesis) {
        let _ = write!(line, "; {}", counts(targets, Class::Hypothesis, "own hypotheses"));
    }
    let _ = write!(line, "; {}", counts(checks, Class::Target, "sanity checks"));
    match targets.iter().filter(|v| v.class() == Class::Conflict).count() {
        0 => {}
        1 => line.push_str("; 1 documented conflict (not scored)"),
        n => line.push_str(&format!("; {n} documented conflicts (not scored)")),
    }
    line.push('.');
    line
}

/// A family's verdicts, for the index of `reproduce all`.
pub struct FamilyCounts {
    /// The family.
    pub family: String,
    /// Its targets, hypotheses and documented conflicts.
    pub targets: Vec<Verdict>,
    /// Its sanity checks.
    pub checks: Vec<Verdict>,
}

/// The index `reproduce all` writes beside the families' folders: each family's counts, linking its report, and the
/// overall total.
pub fn index(families: &[FamilyCounts], quick: bool) -> String {
    let mut md = String::from("# Reproduction: all\n\n");
    let targets: Vec<Verdict> = families.iter().flat_map(|f| f.targets.iter().cloned()).collect();
    let checks: Vec<Verdict> = families.iter().flat_map(|f| f.checks.iter().cloned()).collect();
    let _ = writeln!(md, "{}\n", overall(&targets, &checks, quick));
    md.push_str(
        "| family | targets: pass / FAIL / inconclusive | own hypotheses | documented conflicts | sanity checks |\n",
    );
    md.push_str("|---|---|---|---|---|\n");
    for f in families {
        let conflicts = f.targets.iter().filter(|v| v.class() == Class::Conflict).count();
        let _ = writeln!(
            md,
            "| [{0}]({0}/report.md) | {1} | {2} | {conflicts} | {3} |",
            f.family,
            counts_cell(tally(&f.targets, Class::Target)),
            counts_cell(tally(&f.targets, Class::Hypothesis)),
            counts_cell(tally(&f.checks, Class::Target))
        );
    }
    md
}

/// How to read the verdicts, at the top of `report.md`.
const VERDICT_RULES: &str = "A target is a claim of a source. A value or a range passes when the whole 95% confidence \
interval of the mean lies inside its band and fails when the interval lies wholly outside it; an order, a relative \
difference or a difference to another file is judged the same way on the interval of the paired differences on common \
seeds (an order claims a difference: a tie on every seed fails), and a mean difference over the sweep points on the \
t interval across the points (one difference per point, as a paper's t-test over its points). Anything else, or fewer \
than 2 replications (2 points), is inconclusive: it needs more replications. A documented conflict is a target on \
which the source contradicts itself: it is judged and shown, but not scored. An own hypothesis is a claim no source \
makes (its source column says what it rests on): judged like a target, counted apart. Sanity checks hold by \
construction on every run; they are not targets and are not counted among them.\n\n";

/// Writes `report.md` and the charts of a reproduced family into `out`; returns the Markdown.
pub fn write_family_report(family: &str, studies: &[(Study, StudyResult)], out: &Path) -> std::io::Result<String> {
    let mut md = format!("# Reproduction: {family}\n\n");
    let targets: Vec<Verdict> = studies.iter().flat_map(|(_, r)| r.verdicts.iter().cloned()).collect();
    let checks: Vec<Verdict> = studies.iter().flat_map(|(_, r)| r.checks.iter().cloned()).collect();
    let quick = studies.iter().any(|(s, _)| s.quick);
    let _ = writeln!(md, "{}\n", overall(&targets, &checks, quick));
    md.push_str(VERDICT_RULES);
    for (study, result) in studies {
        md.push_str(&study_section(study, result, out, &out.join(&study.name))?);
    }
    write_atomic(&out.join("report.md"), md.as_bytes())?;
    Ok(md)
}

/// Writes `report.md` and the charts of the study `run` ran into its folder `out`, as `reproduce` reports a
/// family of one; returns the Markdown.
pub fn write_study_report(study: &Study, result: &StudyResult, out: &Path) -> std::io::Result<String> {
    let mut md = format!("# Study: {}\n\n", study.name);
    let _ = writeln!(md, "{}\n", overall(&result.verdicts, &result.checks, study.quick));
    md.push_str(VERDICT_RULES);
    md.push_str(&study_section(study, result, out, out)?);
    if let Some((series, charts)) = crate::charts::time_bands(study, result, out, |l| in_currency(study, l)) {
        write_atomic(&out.join("series.csv"), &series)?;
        if !charts.is_empty() {
            md.push_str("Over time, mean ± 95% CI over the replications (`series.csv`):\n\n");
        }
        for (file, svg) in charts {
            write_atomic(&out.join(&file), svg.as_bytes())?;
            let _ = writeln!(md, "![{file}]({file})\n");
        }
    }
    write_atomic(&out.join("report.md"), md.as_bytes())?;
    Ok(md)
}

/// A study's part of `report.md`: its description, summary table, targets, sanity checks and charts (written into
/// `out`, beside the report; the study's runs are in `runs`).
fn study_section(study: &Study, result: &StudyResult, out: &Path, runs: &Path) -> std::io::Result<String> {
    let mut md = String::new();
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
        let _ = writeln!(md, "{}\n", tally_line(&result.verdicts, false, study.quick));
        for class in [Class::Target, Class::Hypothesis, Class::Conflict] {
            let of_class: Vec<&Verdict> = result.verdicts.iter().filter(|v| v.class() == class).collect();
            if of_class.is_empty() {
                continue;
            }
            match class {
                Class::Conflict => md.push_str(
                    "Documented conflicts: the source contradicts itself on these claims; reported, not scored.\n\n\
                     | target | source | conflict | measured (mean ± CI) | verdict |\n|---|---|---|---|---|\n",
                ),
                Class::Hypothesis => md.push_str(
                    "Own hypotheses: claims no source makes, judged like targets and counted apart.\n\n\
                     | hypothesis | rests on | tolerance | measured (mean ± CI) | verdict |\n|---|---|---|---|---|\n",
                ),
                _ => md.push_str(
                    "| target | source | tolerance | measured (mean ± CI) | verdict |\n|---|---|---|---|---|\n",
                ),
            }
            for v in of_class {
                let third =
                    if class == Class::Conflict { v.conflict.clone().unwrap_or_default() } else { v.tolerance.clone() };
                let cells = [&v.target, &v.source, &third, &v.measured].map(|c| esc(c));
                let _ = writeln!(md, "| {} | {} |", cells.join(" | "), v.verdict(study.quick));
            }
            md.push('\n');
        }
    }
    if !result.checks.is_empty() {
        let _ = writeln!(md, "{} (not targets)\n", tally_line(&result.checks, true, false));
        md.push_str("| check | why | measured | verdict |\n|---|---|---|---|\n");
        for v in &result.checks {
            let cells = [&v.target, &v.source, &v.measured].map(|c| esc(c));
            let _ = writeln!(md, "| {} | {} |", cells.join(" | "), v.outcome.label());
        }
        md.push('\n');
    }
    let asked = crate::charts::scenario_charts(study, result, runs);
    for (file, svg) in charts(study, result).into_iter().chain(asked) {
        write_atomic(&out.join(&file), svg.as_bytes())?;
        let _ = writeln!(md, "![{file}]({file})\n");
    }
    if !result.unfinished.is_empty() {
        let _ = writeln!(md, "Unfinished runs: {}\n", result.unfinished.len());
    }
    let warnings = substitution_warnings(study, result);
    if !warnings.is_empty() {
        md.push_str("Substitutions (what agents did in place of what they were configured to do):\n\n");
        for w in warnings {
            let _ = writeln!(md, "- {}", w.replace('|', "\\|"));
        }
        md.push('\n');
    }
    Ok(md)
}

/// One chart per metric named by a target (once, however many targets name it), against the first swept key (a
/// series per value of the others, named by the last segments of their keys): the value axis labelled with the metric's unit, the confidence intervals clipped
/// to the values it can take, and its value and range targets drawn as bands.
fn charts(study: &Study, result: &StudyResult) -> Vec<(String, String)> {
    let Some((key, values)) = study.sweep.first() else { return Vec::new() };
    let mut metrics: Vec<&str> = Vec::new();
    for t in &study.targets {
        if !metrics.contains(&t.metric.as_str()) {
            metrics.push(&t.metric);
        }
    }
    let numeric: Option<Vec<f64>> =
        values.iter().map(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64))).collect();
    // The index of a point's value of the swept key.
    let index = |p: &Point| values.iter().position(|v| p.assignments.first().is_some_and(|(_, a)| a == v)).unwrap_or(0);
    // Where a point is drawn: its value on a numeric axis, its category's index on a bar chart.
    let x_of = |p: &Point| numeric.as_ref().map_or(index(p) as f64, |xs| xs[index(p)]);
    let mut out = Vec::new();
    for metric in metrics {
        // Series: points grouped by the values of the other swept keys.
        let mut groups: Vec<(String, Vec<(usize, usize)>)> = Vec::new();
        for p in &study.points {
            let rest: Vec<String> =
                p.assignments.iter().skip(1).map(|(k, v)| format!("{}={}", short_key(study, k), show(v))).collect();
            let label = if rest.is_empty() { metric.to_string() } else { rest.join(", ") };
            match groups.iter_mut().find(|g| g.0 == label) {
                Some(g) => g.1.push((index(p), p.index)),
                None => groups.push((label, vec![(index(p), p.index)])),
            }
        }
        let stat =
            |point: usize| result.summaries[point].get(metric).map_or((f64::NAN, f64::NAN), |s| (s.mean, s.ci95));
        let title = format!("{} — {}", study.name, metric);
        let registry = &study.points[0].plan.registry;
        let y_label = in_currency(study, &axis_label(registry, metric));
        let bands = target_bands(study, metric, key, &x_of);
        let chart = Chart {
            title: &title,
            x_label: key,
            y_label: &y_label,
            y_bounds: unit_of(registry, metric).map_or((f64::NEG_INFINITY, f64::INFINITY), |u| u.bounds()),
            bands: &bands,
        };
        let svg = match &numeric {
            Some(xs) => {
                let series: Vec<Series> = groups
                    .iter()
                    .map(|(label, pts)| Series {
                        label: label.clone(),
                        points: pts.iter().map(|&(x, p)| (xs[x], stat(p).0, stat(p).1)).collect(),
                    })
                    .collect();
                plot::line_chart(&chart, &series)
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
                plot::bar_chart(&chart, &categories, &series)
            }
        };
        let file = format!("{}-{}.svg", study.name, metric.replace(['.', '/'], "_"));
        out.push((file, svg));
    }
    out
}

/// A swept key as a chart's legend names it: its last segment (`providers.rp.preemption` → `preemption`), or the
/// whole key when another swept key ends the same.
fn short_key<'a>(study: &Study, key: &'a str) -> &'a str {
    let last = |k: &'a str| k.rsplit('.').next().unwrap_or(k);
    let same = study.sweep.iter().filter(|(k, _)| k.rsplit('.').next() == Some(last(key))).count();
    if same > 1 { key } else { last(key) }
}

/// The value and range targets on `metric` as bands: one across the chart when a target applies at every value of
/// the swept key `key`, else one at each value it applies at (`x_of` gives a point's position), labelled with the
/// other swept keys it is restricted to (the series it is about).
fn target_bands(study: &Study, metric: &str, key: &str, x_of: &dyn Fn(&Point) -> f64) -> Vec<Band> {
    let mut everywhere: Vec<f64> = study.points.iter().map(x_of).collect();
    everywhere.sort_by(f64::total_cmp);
    everywhere.dedup();
    let mut bands = Vec::new();
    for c in study.targets.iter().filter(|c| c.metric == metric) {
        let (lo, hi, value, text) = match c.test {
            Test::Value { value, tol } if tol > 0.0 => {
                (value - tol, value + tol, Some(value), format!("target {} ± {}", short(value), short(tol)))
            }
            Test::Value { value, .. } => (value, value, Some(value), format!("target {}", short(value))),
            Test::Range { lo, hi } => (lo, hi, None, format!("target in [{}, {}]", short(lo), short(hi))),
            _ => continue,
        };
        let rest: Vec<String> =
            c.at.iter()
                .filter(|(k, _)| k.as_str() != key)
                .map(|(k, v)| format!("{}={}", short_key(study, k), show(v)))
                .collect();
        let label = if rest.is_empty() { text } else { format!("{text} ({})", rest.join(", ")) };
        let mut xs: Vec<f64> = study.points.iter().filter(|p| matches_at(p, &c.at)).map(x_of).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        let band = |at| Band { label: label.clone(), lo, hi, value, at };
        if xs == everywhere {
            bands.push(band(None));
        } else {
            bands.extend(xs.into_iter().map(|x| band(Some(x))));
        }
    }
    bands
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::Path;

    use super::*;
    use crate::scenario::plan::{Claim, LoadOptions};

    fn tiny() -> Study {
        Study::load(Path::new("tests/scenarios/tiny/tiny.toml"), &LoadOptions::default()).expect("tiny loads")
    }

    #[test]
    fn targets_become_bands_across_the_chart_or_at_the_points_they_name() {
        let mut study = tiny();
        // tiny's two value targets on utilisation hold at every scheduler; add a range at one of them.
        let at = BTreeMap::from([("providers.big.scheduler".to_string(), toml::Value::String("easy".into()))]);
        let range = Claim { at, test: Test::Range { lo: 0.1, hi: 0.3 }, ..study.targets[0].clone() };
        study.targets.push(range);
        let x_of = |p: &Point| p.index as f64;
        let bands = target_bands(&study, "utilisation", "providers.big.scheduler", &x_of);
        let band = |label: &str, lo, hi, value, at| Band { label: label.into(), lo, hi, value, at };
        assert_eq!(
            bands,
            [
                band("target 0.6 ± 0.4", 0.6 - 0.4, 0.6 + 0.4, Some(0.6), None),
                band("target 0.6 ± 0.05", 0.6 - 0.05, 0.6 + 0.05, Some(0.6), None),
                band("target in [0.1, 0.3]", 0.1, 0.3, None, Some(1.0)),
            ]
        );
        assert!(target_bands(&study, "jobs.total", "providers.big.scheduler", &x_of).is_empty());
    }

    #[test]
    fn each_metric_is_charted_once() {
        let mut study = tiny();
        // Targets on utilisation, then another metric, then utilisation again.
        let other = Claim { metric: "jobs.total".into(), ..study.targets[0].clone() };
        study.targets.insert(1, other);
        let summaries = vec![BTreeMap::new(); study.points.len()];
        let result = StudyResult { runs: vec![], unfinished: vec![], summaries, verdicts: vec![], checks: vec![] };
        let files: Vec<String> = charts(&study, &result).into_iter().map(|(file, _)| file).collect();
        assert_eq!(files, ["tiny-utilisation.svg", "tiny-jobs_total.svg"]);
    }

    #[test]
    fn the_overall_line_counts_every_scored_verdict() {
        let verdict = |outcome, conflict: Option<&str>| Verdict {
            target: String::new(),
            source: String::new(),
            tolerance: String::new(),
            measured: String::new(),
            outcome,
            conflict: conflict.map(String::from),
            hypothesis: false,
            measures: Vec::new(),
        };
        let targets = [
            verdict(Outcome::Pass, None),
            verdict(Outcome::Fail, None),
            verdict(Outcome::Inconclusive, None),
            verdict(Outcome::Pass, None),
            verdict(Outcome::Fail, Some("contradicts itself")),
        ];
        assert_eq!(
            overall(&targets, &[verdict(Outcome::Pass, None)], true),
            "**Overall: 2 pass / 1 FAIL / 1 inconclusive of 4 targets** (--quick: indicative); \
             1 pass / 0 FAIL / 0 inconclusive of 1 sanity checks; 1 documented conflict (not scored)."
        );
        assert_eq!(overall(&[], &[], true), "**Overall: no targets**; no sanity checks.");
    }
}
