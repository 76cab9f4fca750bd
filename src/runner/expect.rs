//! Judging targets (`[[expect]]`) and sanity checks (`[[check]]`).
//!
//! A target is a claim of a source, judged on 95% confidence intervals: a value or a range on the interval of the
//! mean; an order, a relative difference or a comparison with another file on the interval of the paired
//! differences on common seeds (common random numbers make them far less noisy than two independent intervals); a
//! mean difference over the sweep points, as a paper's t-test over its points, on the interval of the mean of one
//! difference per point (or, against another file, Welch's interval of the difference of two such means). It
//! passes when the interval lies inside the claimed band, fails when it lies wholly outside, and is inconclusive
//! (needs more replications) when it straddles a bound or there are fewer than 2 replications (2 points). A target
//! marked as a documented conflict (the source contradicts itself on it) is judged alike but not scored. A sanity
//! check holds by construction, so it is judged on every run instead: it passes when every run meets it.

use std::collections::BTreeMap;

use toml::Value;

use super::StudyResult;
use crate::scenario::Study;
use crate::scenario::plan::{Claim, Point, Test, at_names, same_value, show};
use crate::stats::{Summary, paired_difference, relative_paired_difference, welch_difference};

/// How a target or check fared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The interval lies inside the band (a check: every run meets it).
    Pass,
    /// The interval lies wholly outside the band (a check: a run does not meet it), or the metric is not measured.
    Fail,
    /// The interval straddles a bound, or there are too few replications to tell: needs more replications.
    Inconclusive,
}

impl Outcome {
    /// "pass", "FAIL" or "inconclusive".
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "FAIL",
            Outcome::Inconclusive => "inconclusive",
        }
    }

    /// Several outcomes read together (the steps of an order): a fail if any fails, a pass if all pass.
    fn all(outcomes: impl IntoIterator<Item = Outcome>) -> Outcome {
        let mut all = Outcome::Pass;
        for o in outcomes {
            match o {
                Outcome::Fail => return Outcome::Fail,
                Outcome::Inconclusive => all = Outcome::Inconclusive,
                Outcome::Pass => {}
            }
        }
        all
    }
}

/// One target or check at one sweep point (or group of points), and how it fared.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// What was expected, in words.
    pub target: String,
    /// Where a target comes from; why a check holds.
    pub source: String,
    /// Where a target's band comes from.
    pub tolerance: String,
    /// A target's mean or paired difference ± 95% CI half-width; the spread of a check over the runs.
    pub measured: String,
    /// The verdict.
    pub outcome: Outcome,
    /// How the source contradicts itself on this claim: reported, not scored (never among the targets' counts nor
    /// in the exit code).
    pub conflict: Option<String>,
    /// A hypothesis of our own: scored, but counted apart from the literature's targets.
    pub hypothesis: bool,
    /// What `measured` says, as numbers: the summary judged (of a value, a difference or, for a check, the runs),
    /// one per step of an order; none when nothing was measured.
    pub measures: Vec<Summary>,
}

/// What a claim is, as the counts keep them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// A claim of a source: a family's headline count.
    Target,
    /// A hypothesis of our own: scored, counted apart.
    Hypothesis,
    /// A claim on which the source contradicts itself: reported, not scored.
    Conflict,
    /// A sanity check: holds by construction, judged on every run.
    Check,
}

impl Class {
    /// "target", "hypothesis", "conflict" or "check".
    pub fn label(self) -> &'static str {
        match self {
            Class::Target => "target",
            Class::Hypothesis => "hypothesis",
            Class::Conflict => "conflict",
            Class::Check => "check",
        }
    }
}

impl Verdict {
    /// Whether it counts among the targets, hypotheses and checks and sets the exit code: not a documented conflict.
    pub fn scored(&self) -> bool {
        self.conflict.is_none()
    }

    /// What it is, read as a target (a check's verdicts are kept apart by whoever holds them).
    pub fn class(&self) -> Class {
        match (&self.conflict, self.hypothesis) {
            (Some(_), _) => Class::Conflict,
            (None, true) => Class::Hypothesis,
            (None, false) => Class::Target,
        }
    }

    /// The outcome's label, marked "(indicative)" when `quick`: reduced sizes do not settle a claim.
    pub fn verdict(&self, quick: bool) -> String {
        let label = self.outcome.label();
        if quick { format!("{label} (indicative)") } else { label.into() }
    }
}

/// What was measured of a claim and how it fared, before it is labelled with the claim's words.
#[derive(Clone, Debug)]
struct Judged {
    measured: String,
    outcome: Outcome,
    measures: Vec<Summary>,
}

impl Judged {
    /// `s` judged by `rule` against [lo, hi] (`None`: open).
    fn within(rule: Rule, s: Summary, lo: Option<f64>, hi: Option<f64>) -> Judged {
        Judged { measured: rule.measured(&s), outcome: rule.within(&s, lo, hi), measures: vec![s] }
    }

    /// A FAIL with nothing measured, saying why: a claim is never dropped unjudged.
    fn failed(why: impl Into<String>) -> Judged {
        Judged { measured: why.into(), outcome: Outcome::Fail, measures: Vec::new() }
    }

    fn not_measured() -> Judged {
        Judged::failed("not measured")
    }
}

/// Whether `s`, the summary of the replications, lies in [lo, hi]: a target's 95% CI, judged as the module says.
pub fn judge_ci(s: &Summary, lo: f64, hi: f64) -> Outcome {
    if s.n < 2 {
        Outcome::Inconclusive
    } else if lo <= s.lo() && s.hi() <= hi {
        Outcome::Pass
    } else if s.hi() < lo || s.lo() > hi {
        Outcome::Fail
    } else {
        // Straddling a bound, or NaN (a metric undefined in some run).
        Outcome::Inconclusive
    }
}

/// One step "a > b" of a target's order, from the paired differences a − b: a tie on every seed fails, since the
/// source claims a difference.
fn judge_step(d: &Summary) -> Outcome {
    if d.n < 2 {
        Outcome::Inconclusive
    } else if d.lo() > 0.0 {
        Outcome::Pass
    } else if d.hi() <= 0.0 {
        Outcome::Fail
    } else {
        Outcome::Inconclusive
    }
}

/// How claims are judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rule {
    /// A target: on the 95% CI.
    Target,
    /// A sanity check: on every run.
    Check,
}

impl Rule {
    /// Whether `s` lies in [lo, hi] (`None`: open).
    fn within(self, s: &Summary, lo: Option<f64>, hi: Option<f64>) -> Outcome {
        let (lo, hi) = (lo.unwrap_or(f64::NEG_INFINITY), hi.unwrap_or(f64::INFINITY));
        match self {
            Rule::Target => judge_ci(s, lo, hi),
            Rule::Check if s.n == 0 => Outcome::Inconclusive,
            // A NaN among the runs makes min and max NaN: not met.
            Rule::Check if lo <= s.min && s.max <= hi => Outcome::Pass,
            Rule::Check => Outcome::Fail,
        }
    }

    /// One step of an order, from the paired differences: strict for a target, ties allowed for a check.
    fn step(self, d: &Summary) -> Outcome {
        match self {
            Rule::Target => judge_step(d),
            Rule::Check => self.within(d, Some(0.0), None),
        }
    }

    /// What was measured: mean ± CI for a target, the spread over the runs for a check.
    fn measured(self, s: &Summary) -> String {
        match self {
            Rule::Target if s.n < 2 => format!("{} ({} replication)", fmt_summary(s), s.n),
            Rule::Target => fmt_summary(s),
            Rule::Check if s.n == 0 => "no runs".into(),
            Rule::Check if s.min == s.max => format!("{} in {} runs", num(s.min), s.n),
            Rule::Check => format!("{} to {} over {} runs", num(s.min), num(s.max), s.n),
        }
    }

    /// The order sign: ">" for a target, "≥" for a check.
    fn sign(self) -> &'static str {
        match self {
            Rule::Target => " > ",
            Rule::Check => " ≥ ",
        }
    }
}

/// Judges every target and check of `study` (the targets, then the checks) but those comparing with another file
/// ([`evaluate_versus`]).
pub fn evaluate(study: &Study, result: &StudyResult) -> (Vec<Verdict>, Vec<Verdict>) {
    let judge = |claims: &[Claim], rule| claims.iter().flat_map(|c| judge(study, result, c, rule)).collect();
    (judge(&study.targets, Rule::Target), judge(&study.checks, Rule::Check))
}

fn judge(study: &Study, result: &StudyResult, c: &Claim, rule: Rule) -> Vec<Verdict> {
    let verdict = |target: String, judged: Judged| labelled(c, target, judged);
    let points: Vec<&Point> = study.points.iter().filter(|p| matches_at(p, &c.at)).collect();
    if points.is_empty() {
        // The load refuses an `at` outside the sweep; a claim is still never dropped unjudged.
        let target = format!("{} at {}", c.metric, label_of(&c.at));
        return vec![verdict(target, Judged::failed("matched no sweep point"))];
    }
    let band = |p: &Point, lo: f64, hi: f64| match result.summaries[p.index].get(&c.metric) {
        Some(s) => Judged::within(rule, *s, Some(lo), Some(hi)),
        None => Judged::not_measured(),
    };
    match &c.test {
        Test::Value { value, tol } => points
            .iter()
            .map(|p| {
                let shown = if *tol > 0.0 { format!(" ± {}", short(*tol)) } else { String::new() };
                let target = format!("{} = {value}{shown}{}", c.metric, at(&p.label));
                verdict(target, band(p, value - tol, value + tol))
            })
            .collect(),
        Test::Range { lo, hi } => points
            .iter()
            .map(|p| verdict(format!("{} in [{lo}, {hi}]{}", c.metric, at(&p.label)), band(p, *lo, *hi)))
            .collect(),
        Test::Order { over, values } => along(&points, over)
            .into_iter()
            .map(|(rest, members)| {
                let seeds = |v: &Value| seeds_at(result, &members, over, v, &c.metric);
                let names: Vec<String> = values.iter().map(show).collect();
                let target = format!("{}: {}{}", c.metric, names.join(rule.sign()), at(&rest));
                let mut steps = Vec::new();
                let mut measures = Vec::new();
                let mut outcomes = Vec::new();
                for (v, n) in values.windows(2).zip(names.windows(2)) {
                    let (measured, outcome) = match paired(&seeds(&v[0]), &seeds(&v[1])) {
                        Some(d) => {
                            measures.push(d);
                            (rule.measured(&d), rule.step(&d))
                        }
                        None => ("not measured".to_string(), Outcome::Fail),
                    };
                    steps.push(format!("{} − {}: {measured}", n[0], n[1]));
                    outcomes.push(outcome);
                }
                let judged = Judged { measured: steps.join("; "), outcome: Outcome::all(outcomes), measures };
                verdict(target, judged)
            })
            .collect(),
        Test::Relative { over, a, b, min, max } | Test::Difference { over, a, b, min, max } => {
            let is_relative = matches!(c.test, Test::Relative { .. });
            along(&points, over)
                .into_iter()
                .map(|(rest, members)| {
                    let difference = format!("{} − {}", show(a), show(b));
                    let shown = if is_relative { format!("({difference}) / |{}|", show(b)) } else { difference };
                    let target = format!("{}: {shown} {}{}", c.metric, bounds(*min, *max), at(&rest));
                    let (x, y) = (
                        seeds_at(result, &members, over, a, &c.metric),
                        seeds_at(result, &members, over, b, &c.metric),
                    );
                    let judged = match if is_relative { relative(&x, &y) } else { paired(&x, &y) } {
                        Some(d) => Judged::within(rule, d, *min, *max),
                        None => Judged::not_measured(),
                    };
                    verdict(target, judged)
                })
                .collect()
        }
        Test::MeanDifference { over, a, b, min, max, versus: None, .. } => {
            let target =
                format!("{}: {} {}{}", c.metric, mean_difference(a, b), bounds(*min, *max), at(&label_of(&c.at)));
            let judged = match per_point_differences(result, &points, over, a, b, &c.metric) {
                Some(d) => across_points(&d, rule, *min, *max),
                None => Judged::not_measured(),
            };
            vec![verdict(target, judged)]
        }
        // Judged once the other file has run.
        Test::Versus { .. } | Test::MeanDifference { .. } => Vec::new(),
    }
}

/// Claim `c`'s verdict on `target`, as `judged`.
fn labelled(c: &Claim, target: String, judged: Judged) -> Verdict {
    Verdict {
        target,
        source: c.source.clone(),
        tolerance: c.tolerance.clone(),
        measured: judged.measured,
        outcome: judged.outcome,
        conflict: c.conflict.clone(),
        hypothesis: c.hypothesis,
        measures: judged.measures,
    }
}

/// The claims of `study` that compare with another file (`versus`), with that file: only `gridmarket reproduce`,
/// which runs the family, judges them, so `run` says it left them.
pub fn unjudged(study: &Study) -> Vec<(&Claim, &str)> {
    study
        .targets
        .iter()
        .chain(&study.checks)
        .filter_map(|c| match &c.test {
            Test::Versus { scenario, .. } | Test::MeanDifference { versus: Some(scenario), .. } => {
                Some((c, scenario.as_str()))
            }
            _ => None,
        })
        .collect()
}

/// "mean over the points of (a − b)".
fn mean_difference(a: &Value, b: &Value) -> String {
    format!("mean over the points of ({} − {})", show(a), show(b))
}

/// One value per group of `points` along `over` (every swept key but `over` fixed): the mean of the paired
/// differences a − b of `metric` on common seeds there (NaN without common seeds); `None` when a group did not
/// measure it.
fn per_point_differences(
    result: &StudyResult,
    points: &[&Point],
    over: &str,
    a: &Value,
    b: &Value,
    metric: &str,
) -> Option<Vec<f64>> {
    along(points, over)
        .into_iter()
        .map(|(_, members)| {
            let seeds = |v: &Value| seeds_at(result, &members, over, v, metric);
            paired(&seeds(a), &seeds(b)).map(|d| d.mean)
        })
        .collect()
}

/// The t-test across points of a mean difference: their mean ± 95% CI, judged against [min, max].
fn across_points(differences: &[f64], rule: Rule, min: Option<f64>, max: Option<f64>) -> Judged {
    let s = Summary::of(differences);
    let measured = format!("{} over {} point{}", fmt_summary(&s), s.n, if s.n == 1 { "" } else { "s" });
    Judged { measured, outcome: rule.within(&s, min, max), measures: vec![s] }
}

/// Judges the `versus` targets and checks of `study` against the other studies of its family, already run (the
/// targets, then the checks). Runs pair up by seed: files with the same `seed` and replications pair every run.
pub fn evaluate_versus(
    study: &Study,
    result: &StudyResult,
    family: &[(Study, StudyResult)],
) -> (Vec<Verdict>, Vec<Verdict>) {
    let judge = |claims: &[Claim], rule| {
        claims.iter().flat_map(|c| versus(study, result, family, c, rule)).collect::<Vec<Verdict>>()
    };
    (judge(&study.targets, Rule::Target), judge(&study.checks, Rule::Check))
}

fn versus(study: &Study, result: &StudyResult, family: &[(Study, StudyResult)], c: &Claim, rule: Rule) -> Vec<Verdict> {
    let (scenario, min, max) = match &c.test {
        Test::Versus { scenario, min, max } => (scenario, min, max),
        Test::MeanDifference { versus: Some(scenario), min, max, .. } => (scenario, min, max),
        _ => return Vec::new(),
    };
    let verdict = |target: String, judged: Judged| labelled(c, target, judged);
    let other_path = study.path.with_file_name(scenario);
    let Some((other, other_result)) = family.iter().find(|(s, _)| s.path == other_path) else {
        let target = format!("{} versus {scenario}", c.metric);
        return vec![verdict(target, Judged::failed("the other scenario did not run"))];
    };
    let here: Vec<&Point> = study.points.iter().filter(|p| matches_at(p, &c.at)).collect();
    if let Test::MeanDifference { over, a, b, by_position, .. } = &c.test {
        let target = format!(
            "{}: {}, here − in {}{}, {}{}",
            c.metric,
            mean_difference(a, b),
            other.name,
            if *by_position { " (points paired by position)" } else { "" },
            bounds(*min, *max),
            at(&label_of(&c.at))
        );
        // The other file's points within `at`, on the keys it sweeps.
        let there: Vec<&Point> = other.points.iter().filter(|q| matches_swept(q, &other.sweep, &c.at)).collect();
        if here.is_empty() || there.is_empty() {
            let file = if here.is_empty() { &study.name } else { &other.name };
            return vec![verdict(target, Judged::failed(format!("no point of {file} matches")))];
        }
        let differences = (
            per_point_differences(result, &here, over, a, b, &c.metric),
            per_point_differences(other_result, &there, over, a, b, &c.metric),
        );
        let judged = match differences {
            (Some(x), Some(y)) if *by_position && x.len() != y.len() => {
                Judged::failed(format!("not paired: {} groups of points here, {} there", x.len(), y.len()))
            }
            (Some(x), Some(y)) if *by_position => {
                let pairs: Vec<f64> = x.iter().zip(&y).map(|(x, y)| x - y).collect();
                across_points(&pairs, rule, *min, *max)
            }
            (Some(x), Some(y)) => {
                let d = welch_difference(&x, &y);
                let measured = format!("{} (Welch, {} and {} points)", fmt_summary(&d), x.len(), y.len());
                Judged { measured, outcome: rule.within(&d, *min, *max), measures: vec![d] }
            }
            _ => Judged::not_measured(),
        };
        return vec![verdict(target, judged)];
    }
    let mut out = Vec::new();
    for p in here {
        let target = format!("{}: {} − {} {}{}", c.metric, study.name, other.name, bounds(*min, *max), at(&p.label));
        // The other file's points that agree with this one on every key both files sweep.
        let agrees = |q: &&Point| {
            q.assignments.iter().all(|(k, v)| p.assignments.iter().all(|(pk, pv)| pk != k || same_value(pv, v)))
        };
        let matching: Vec<&Point> = other.points.iter().filter(agrees).collect();
        if matching.is_empty() {
            out.push(verdict(target, Judged::failed(format!("no point of {} matches", other.name))));
            continue;
        }
        for q in matching {
            let here = result.by_seed(p.index, &c.metric);
            let judged = match paired(&here, &other_result.by_seed(q.index, &c.metric)) {
                Some(d) if d.n == 0 => {
                    Judged { measured: "no common seeds".into(), outcome: Outcome::Inconclusive, measures: vec![d] }
                }
                // A check's spread already counts its runs.
                Some(d) if rule == Rule::Check => Judged::within(rule, d, *min, *max),
                Some(d) => {
                    let judged = Judged::within(rule, d, *min, *max);
                    Judged { measured: format!("{} on {} common seeds", judged.measured, d.n), ..judged }
                }
                None => Judged::not_measured(),
            };
            out.push(verdict(target.clone(), judged));
        }
    }
    out
}

/// The points of `points` grouped by their values of every swept key but `over`, with the group's label.
fn along<'a>(points: &[&'a Point], over: &str) -> Vec<(String, Vec<&'a Point>)> {
    let mut groups: Vec<(String, Vec<&Point>)> = Vec::new();
    for &p in points {
        let rest = p.assignments.iter().filter(|(k, _)| k != over).map(|(k, v)| format!("{k}={}", show(v)));
        let key = rest.collect::<Vec<_>>().join(", ");
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.1.push(p),
            None => groups.push((key, vec![p])),
        }
    }
    groups
}

/// Seed → value of `metric` at the member of a group where `over` = `v` (empty when not measured).
fn seeds_at(result: &StudyResult, members: &[&Point], over: &str, v: &Value, metric: &str) -> BTreeMap<u64, f64> {
    members
        .iter()
        .find(|p| p.assignments.iter().any(|(k, x)| k == over && same_value(x, v)))
        .map(|p| result.by_seed(p.index, metric))
        .unwrap_or_default()
}

/// The values of `a` and `b` on the seeds both ran, in seed order.
fn common(a: &BTreeMap<u64, f64>, b: &BTreeMap<u64, f64>) -> (Vec<f64>, Vec<f64>) {
    a.iter().filter_map(|(seed, x)| Some((*x, *b.get(seed)?))).unzip()
}

/// The paired differences a − b on common seeds; `None` when either side was not measured.
fn paired(a: &BTreeMap<u64, f64>, b: &BTreeMap<u64, f64>) -> Option<Summary> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let (x, y) = common(a, b);
    paired_difference(&x, &y).ok()
}

/// The paired differences a − b on common seeds over |mean(b)| there; `None` when either side was not measured.
fn relative(a: &BTreeMap<u64, f64>, b: &BTreeMap<u64, f64>) -> Option<Summary> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let (x, y) = common(a, b);
    relative_paired_difference(&x, &y).ok()
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

/// " at LABEL", or nothing for the only point.
fn at(label: &str) -> String {
    if label.is_empty() { String::new() } else { format!(" at {label}") }
}

/// `key=value, key=value` of a claim's `at`.
fn label_of(at: &BTreeMap<String, Value>) -> String {
    at.iter().map(|(k, v)| format!("{k}={}", show(v))).collect::<Vec<_>>().join(", ")
}

/// Whether point `p` has every assignment of a claim's `at` (a value, or one of a list).
pub fn matches_at(p: &Point, at: &BTreeMap<String, Value>) -> bool {
    at.iter().all(|(k, v)| p.assignments.iter().any(|(pk, pv)| pk == k && at_names(v, pv)))
}

/// Whether point `p` of a study sweeping `sweep` has the assignments of `at` to the keys it sweeps (another file's
/// claim may name keys this one does not sweep).
fn matches_swept(p: &Point, sweep: &[(String, Vec<Value>)], at: &BTreeMap<String, Value>) -> bool {
    at.iter()
        .filter(|(k, _)| sweep.iter().any(|(s, _)| s == *k))
        .all(|(k, v)| p.assignments.iter().any(|(pk, pv)| pk == k && at_names(v, pv)))
}

/// `mean ± ci95` to about four significant digits of the mean (just the mean with one replication).
pub fn fmt_summary(s: &Summary) -> String {
    let decimals = decimals(s.mean);
    if s.ci95.is_finite() && s.n > 1 {
        format!("{:.decimals$} ± {:.decimals$}", s.mean, s.ci95)
    } else {
        format!("{:.decimals$}", s.mean)
    }
}

/// `x` to about four significant digits.
fn num(x: f64) -> String {
    format!("{x:.*}", decimals(x))
}

fn decimals(x: f64) -> usize {
    let magnitude = if x.is_finite() && x != 0.0 { x.abs().log10().floor() as i32 } else { 0 };
    (3 - magnitude).clamp(0, 6) as usize
}

/// A number with at most six decimals and no trailing zeros (`0.175`, not `0.17500000000000002`).
fn short(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-" { "0".into() } else { s.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A summary with the given mean and CI half-width over `n` values.
    fn ci(mean: f64, half: f64, n: usize) -> Summary {
        Summary { n, mean, std: f64::NAN, ci95: half, min: mean - half, max: mean + half }
    }

    #[test]
    fn a_value_target_passes_only_when_the_whole_ci_is_inside_the_band() {
        assert_eq!(judge_ci(&ci(2.0, 0.05, 10), 1.9, 2.1), Outcome::Pass);
        // The band's ends belong to it, and an exact value on every run passes an exact target.
        assert_eq!(judge_ci(&ci(2.0, 0.1, 10), 1.9, 2.1), Outcome::Pass);
        assert_eq!(judge_ci(&ci(50.0, 0.0, 10), 50.0, 50.0), Outcome::Pass);
        // Wholly outside, on either side.
        assert_eq!(judge_ci(&ci(2.5, 0.1, 10), 1.9, 2.1), Outcome::Fail);
        assert_eq!(judge_ci(&ci(1.0, 0.1, 10), 1.9, 2.1), Outcome::Fail);
        // Straddling either bound, or wider than the band, needs more replications: never a pass.
        assert_eq!(judge_ci(&ci(2.08, 0.05, 10), 1.9, 2.1), Outcome::Inconclusive);
        assert_eq!(judge_ci(&ci(1.92, 0.05, 10), 1.9, 2.1), Outcome::Inconclusive);
        assert_eq!(judge_ci(&ci(2.0, 0.5, 10), 1.9, 2.1), Outcome::Inconclusive);
        // Touching a bound from outside is not wholly outside.
        assert_eq!(judge_ci(&ci(2.2, 0.1, 10), 1.9, 2.1), Outcome::Inconclusive);
    }

    #[test]
    fn fewer_than_two_replications_or_an_undefined_metric_is_inconclusive() {
        assert_eq!(judge_ci(&Summary::of(&[2.0]), 1.9, 2.1), Outcome::Inconclusive);
        assert_eq!(judge_ci(&Summary::of(&[]), 1.9, 2.1), Outcome::Inconclusive);
        assert_eq!(judge_ci(&Summary::of(&[2.0, f64::NAN, 2.0]), 1.9, 2.1), Outcome::Inconclusive);
        assert_eq!(judge_step(&Summary::of(&[5.0])), Outcome::Inconclusive);
        // A check needs one run.
        assert_eq!(Rule::Check.within(&Summary::of(&[]), Some(0.0), None), Outcome::Inconclusive);
        assert_eq!(Rule::Check.within(&Summary::of(&[1.0]), Some(0.0), None), Outcome::Pass);
    }

    #[test]
    fn one_sided_bands_are_open_on_the_other_side() {
        assert_eq!(Rule::Target.within(&ci(-0.7, 0.1, 10), None, Some(-0.5)), Outcome::Pass);
        assert_eq!(Rule::Target.within(&ci(-0.3, 0.1, 10), None, Some(-0.5)), Outcome::Fail);
        assert_eq!(Rule::Target.within(&ci(-0.55, 0.1, 10), None, Some(-0.5)), Outcome::Inconclusive);
        assert_eq!(Rule::Target.within(&ci(1e9, 1.0, 10), Some(0.0), None), Outcome::Pass);
    }

    #[test]
    fn an_order_step_is_judged_on_the_paired_ci() {
        // Per-seed gains far less noisy than the two means: the paired CI lies above 0.
        let a = [10.0, 20.0, 30.0, 40.0];
        let b = [9.0, 19.5, 28.5, 39.0];
        let d = paired_difference(&a, &b).unwrap();
        assert_eq!(judge_step(&d), Outcome::Pass);
        assert_eq!(judge_step(&paired_difference(&b, &a).unwrap()), Outcome::Fail);
        // The paired CI straddles 0.
        let c = [10.5, 19.0, 30.5, 39.5];
        assert_eq!(judge_step(&paired_difference(&a, &c).unwrap()), Outcome::Inconclusive);
        // A tie on every seed: the claimed difference is not there.
        assert_eq!(judge_step(&paired_difference(&a, &a).unwrap()), Outcome::Fail);
        // A check allows ties and needs every seed on its side.
        assert_eq!(Rule::Check.step(&paired_difference(&a, &a).unwrap()), Outcome::Pass);
        assert_eq!(Rule::Check.step(&paired_difference(&a, &c).unwrap()), Outcome::Fail);
    }

    #[test]
    fn a_check_holds_on_every_run_or_fails() {
        let runs = Summary::of(&[50.0, 50.0, 50.0]);
        assert_eq!(Rule::Check.within(&runs, Some(50.0), Some(50.0)), Outcome::Pass);
        assert_eq!(Rule::Check.measured(&runs), "50.00 in 3 runs");
        let one_off = Summary::of(&[50.0, 49.0, 50.0]);
        assert_eq!(Rule::Check.within(&one_off, Some(50.0), Some(50.0)), Outcome::Fail);
        assert_eq!(Rule::Check.measured(&one_off), "49.00 to 50.00 over 3 runs");
        assert_eq!(Rule::Check.within(&Summary::of(&[0.5, f64::NAN]), Some(0.0), Some(1.0)), Outcome::Fail);
    }

    #[test]
    fn outcomes_read_together() {
        use Outcome::*;
        assert_eq!(Outcome::all([Pass, Pass]), Pass);
        assert_eq!(Outcome::all([Pass, Inconclusive, Pass]), Inconclusive);
        assert_eq!(Outcome::all([Inconclusive, Fail, Pass]), Fail);
    }

    #[test]
    fn runs_pair_up_on_the_seeds_both_ran() {
        let a = BTreeMap::from([(3, 1.0), (4, 2.0), (5, 4.0)]);
        let b = BTreeMap::from([(4, 1.0), (5, 1.0), (6, 9.0)]);
        assert_eq!(common(&a, &b), (vec![2.0, 4.0], vec![1.0, 1.0]));
        assert_eq!(paired(&a, &b).map(|d| (d.n, d.mean)), Some((2, 2.0)));
        assert_eq!(paired(&a, &BTreeMap::new()), None, "not measured");
        let disjoint = BTreeMap::from([(7, 1.0)]);
        assert_eq!(paired(&a, &disjoint).map(|d| d.n), Some(0), "no common seed: inconclusive, not failed");
    }
}
