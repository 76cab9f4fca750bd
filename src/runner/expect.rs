//! Checking `[[expect]]` targets against the measured means.

use toml::Value;

use super::StudyResult;
use crate::scenario::Study;
use crate::scenario::plan::{Point, show};
use crate::scenario::raw::RawExpect;
use crate::stats::Summary;

/// One target and how it fared.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// What was expected, in words.
    pub target: String,
    /// Where the target comes from.
    pub source: String,
    /// What was measured (mean ± 95% CI half-width).
    pub measured: String,
    /// Whether the target holds; `None` when the metric was not measured.
    pub pass: Option<bool>,
}

impl Verdict {
    /// "pass", "FAIL" or "missing".
    pub fn verdict(&self) -> &'static str {
        match self.pass {
            Some(true) => "pass",
            Some(false) => "FAIL",
            None => "missing",
        }
    }
}

/// Evaluates every target of `study`.
pub fn evaluate(study: &Study, result: &StudyResult) -> Vec<Verdict> {
    let mut out = Vec::new();
    for e in &study.expects {
        let source = e.source.clone().unwrap_or_default();
        let points: Vec<&Point> = study.points.iter().filter(|p| matches_at(p, e)).collect();
        let summary = |p: &Point| result.summaries[p.index].get(&e.metric).copied();
        if e.value.is_some() || e.range.is_some() {
            for p in &points {
                let where_ = if p.label.is_empty() { String::new() } else { format!(" at {}", p.label) };
                let s = summary(p);
                let (target, pass) = match (e.value, e.range) {
                    (Some(v), _) => {
                        let tol = e.abs_tol.map_or(0.0, |t| t.0).max(e.rel_tol.map_or(0.0, |t| t.0 * v.abs()));
                        let ci = if e.within_ci { " or within the 95% CI" } else { "" };
                        let pass = s.map(|s| (s.mean - v).abs() <= tol || (e.within_ci && s.contains(v)));
                        (format!("{} = {v} ± {}{ci}{where_}", e.metric, short(tol)), pass)
                    }
                    (None, Some([lo, hi])) => {
                        (format!("{} in [{lo}, {hi}]{where_}", e.metric), s.map(|s| lo <= s.mean && s.mean <= hi))
                    }
                    _ => unreachable!("checked when the scenario was loaded"),
                };
                let measured = s.map_or("not measured".into(), |s| fmt_summary(&s));
                out.push(Verdict { target, source: source.clone(), measured, pass });
            }
            continue;
        }
        let Some(over) = e.over.as_deref() else { continue };
        // Compare along `over` within each group of points that agree on every other swept key.
        let mut groups: Vec<(String, Vec<&Point>)> = Vec::new();
        for p in points {
            let rest = p.assignments.iter().filter(|(k, _)| k != over).map(|(k, v)| format!("{k}={}", show(v)));
            let key = rest.collect::<Vec<_>>().join(", ");
            match groups.iter_mut().find(|g| g.0 == key) {
                Some(g) => g.1.push(p),
                None => groups.push((key, vec![p])),
            }
        }
        for (rest, members) in groups {
            let at = |v: &Value| members.iter().find(|p| p.assignments.iter().any(|(k, x)| k == over && x == v));
            let where_ = if rest.is_empty() { String::new() } else { format!(" at {rest}") };
            if let Some(order) = &e.order {
                let means: Vec<Option<Summary>> = order.iter().map(|v| at(v).and_then(|p| summary(p))).collect();
                let names: Vec<String> = order.iter().map(show).collect();
                let target = format!("{}: {}{where_}", e.metric, names.join(" ≥ "));
                let measured = means
                    .iter()
                    .zip(&names)
                    .map(|(m, n)| format!("{n} {}", m.map_or("n/a".into(), |s| fmt_summary(&s))))
                    .collect::<Vec<_>>()
                    .join(", ");
                let pass = means
                    .iter()
                    .map(|m| m.map(|s| s.mean))
                    .collect::<Option<Vec<f64>>>()
                    .map(|m| m.windows(2).all(|w| w[0] >= w[1]));
                out.push(Verdict { target, source: source.clone(), measured, pass });
            }
            if let Some(rel) = &e.relative {
                let (a, b) = (at(&rel.a).and_then(|p| summary(p)), at(&rel.b).and_then(|p| summary(p)));
                let bounds = bounds(rel.min, rel.max);
                let target =
                    format!("{}: ({a} − {b}) / |{b}| {bounds}{where_}", e.metric, a = show(&rel.a), b = show(&rel.b));
                let diff = a.zip(b).map(|(a, b)| (a.mean - b.mean) / b.mean.abs());
                out.push(Verdict {
                    target,
                    source: source.clone(),
                    measured: diff.map_or("not measured".into(), |d| format!("{d:.4}")),
                    pass: diff.map(|d| within(d, rel.min, rel.max)),
                });
            }
        }
    }
    out
}

/// Evaluates the `versus` targets of `study` against the other studies of its family, already run.
pub fn evaluate_versus(study: &Study, result: &StudyResult, family: &[(Study, StudyResult)]) -> Vec<Verdict> {
    let mut out = Vec::new();
    for e in &study.expects {
        let Some(versus) = &e.versus else { continue };
        let source = e.source.clone().unwrap_or_default();
        let other_path = study.path.with_file_name(&versus.scenario);
        let Some((other, other_result)) = family.iter().find(|(s, _)| s.path == other_path) else {
            let target = format!("{} versus {}", e.metric, versus.scenario);
            out.push(Verdict { target, source, measured: "the other scenario did not run".into(), pass: None });
            continue;
        };
        let bounds = bounds(versus.min, versus.max);
        for p in study.points.iter().filter(|p| matches_at(p, e)) {
            // The other file's points that agree with this one on every key both files sweep.
            let agrees =
                |q: &&Point| q.assignments.iter().all(|(k, v)| p.assignments.iter().all(|(pk, pv)| pk != k || pv == v));
            for q in other.points.iter().filter(agrees) {
                let here = result.summaries[p.index].get(&e.metric).copied();
                let there = other_result.summaries[q.index].get(&e.metric).copied();
                let where_ = if p.label.is_empty() { String::new() } else { format!(" at {}", p.label) };
                let target = format!("{}: {} − {} {bounds}{where_}", e.metric, study.name, other.name);
                let diff = here.zip(there).map(|(a, b)| a.mean - b.mean);
                let measured = match (here, there) {
                    (Some(a), Some(b)) => format!("{} vs {}", fmt_summary(&a), fmt_summary(&b)),
                    _ => "not measured".into(),
                };
                let pass = diff.map(|d| within(d, versus.min, versus.max));
                out.push(Verdict { target, source: source.clone(), measured, pass });
            }
        }
    }
    out
}

/// `[min, max]` in words (either bound may be open).
fn bounds(min: Option<f64>, max: Option<f64>) -> String {
    match (min, max) {
        (Some(lo), Some(hi)) => format!("in [{lo}, {hi}]"),
        (Some(lo), None) => format!("≥ {lo}"),
        (None, Some(hi)) => format!("≤ {hi}"),
        (None, None) => "any".into(),
    }
}

fn within(x: f64, min: Option<f64>, max: Option<f64>) -> bool {
    min.is_none_or(|lo| x >= lo) && max.is_none_or(|hi| x <= hi)
}

fn matches_at(p: &Point, e: &RawExpect) -> bool {
    e.at.iter().all(|(k, v)| p.assignments.iter().any(|(pk, pv)| pk == k && pv == v))
}

/// `mean ± ci95` to about four significant digits of the mean (just the mean with one replication).
pub fn fmt_summary(s: &Summary) -> String {
    let magnitude = if s.mean.is_finite() && s.mean != 0.0 { s.mean.abs().log10().floor() as i32 } else { 0 };
    let decimals = (3 - magnitude).clamp(0, 6) as usize;
    if s.ci95.is_finite() && s.n > 1 {
        format!("{:.decimals$} ± {:.decimals$}", s.mean, s.ci95)
    } else {
        format!("{:.decimals$}", s.mean)
    }
}

/// A number with at most six decimals and no trailing zeros (`0.175`, not `0.17500000000000002`).
fn short(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-" { "0".into() } else { s.to_string() }
}
