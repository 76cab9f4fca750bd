//! Analytic validation: the provider actor, fed Poisson arrivals through a user broker, against queueing theory.
//! Each scenario of `scenarios/queueing/` runs at its `--quick` size: the whole 95% confidence interval of the
//! simulated mean must lie within a few percent of the analytic value, by the rule of the scenarios' own targets,
//! which must pass too.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use gridmarket::analytic::{self, H2, ServiceMoments};
use gridmarket::runner::{Outcome, RunOptions, judge_ci, run_study};
use gridmarket::scenario::{LoadOptions, Study};
use gridmarket::stats::Summary;

/// Runs `scenarios/queueing/NAME.toml` at its quick size, checks that its targets pass, and returns the summary of
/// every metric.
fn simulate(name: &str) -> BTreeMap<String, Summary> {
    let path = Path::new("scenarios/queueing").join(format!("{name}.toml"));
    let study = Study::load(&path, &LoadOptions { quick: true, ..LoadOptions::default() }).unwrap();
    let out: PathBuf = std::env::temp_dir().join(format!("gridmarket-analytic-{name}-{}", std::process::id()));
    let opts = RunOptions::quiet(out.clone(), 2);
    let result = run_study(&study, &opts, &Arc::new(AtomicBool::new(false))).unwrap();
    let _ = std::fs::remove_dir_all(&out);
    assert!(result.unfinished.is_empty(), "{:?}", result.unfinished);
    for v in &result.verdicts {
        assert_eq!(v.outcome, Outcome::Pass, "{name}: {} measured {}", v.target, v.measured);
    }
    result.summaries[0].clone()
}

#[track_caller]
fn assert_agrees(name: &str, simulated: Summary, analytic: f64, rel_tol: f64) {
    let tol = rel_tol * analytic.abs();
    assert_eq!(
        judge_ci(&simulated, analytic - tol, analytic + tol),
        Outcome::Pass,
        "{name}: simulated {simulated} (CI [{}, {}]) vs analytic {analytic} ± {tol}",
        simulated.lo(),
        simulated.hi()
    );
}

#[test]
fn test_mm1_response_wait_and_utilisation() {
    let m = analytic::mm1(0.5, 1.0).unwrap();
    let s = simulate("mm1");
    assert_agrees("M/M/1 W", s["jobs.response"], m.response, 0.03);
    assert_agrees("M/M/1 Wq", s["jobs.wait"], m.wait, 0.05);
    assert_agrees("M/M/1 ρ", s["utilisation"], m.utilisation, 0.02);
}

#[test]
fn test_mmc_erlang_c() {
    let m = analytic::mmc(4, 3.0, 1.0).unwrap();
    let s = simulate("mmc");
    assert_agrees("M/M/4 W", s["jobs.response"], m.response, 0.03);
    assert_agrees("M/M/4 Wq", s["jobs.wait"], m.wait, 0.08);
}

#[test]
fn test_md1_pollaczek_khinchine() {
    let m = analytic::mg1(0.5, ServiceMoments::deterministic(1.0).unwrap()).unwrap();
    assert_agrees("M/D/1 W", simulate("md1")["jobs.response"], m.response, 0.03);
}

#[test]
fn test_mh2_pollaczek_khinchine() {
    let h2 = H2::balanced_means(1.0, 4.0).unwrap();
    // The scenario writes the same branches out; check they are the ones the formula uses.
    assert!((h2.p() - 0.887_298_334_620_741_7).abs() < 1e-12);
    let m = analytic::mg1(0.5, h2.moments().unwrap()).unwrap();
    assert_agrees("M/H2/1 W", simulate("mh2")["jobs.response"], m.response, 0.05);
}

#[test]
fn test_preemptive_resume_priority_m_m_1() {
    use gridmarket::analytic::PriorityClass;
    let classes = [PriorityClass::exponential(0.3, 1.0).unwrap(), PriorityClass::exponential(0.3, 1.0).unwrap()];
    let t = analytic::preemptive_priority(&classes).unwrap();
    let s = simulate("priority");
    assert_agrees("priority M/M/1, high class", s["classes.0.response"], t[0].response, 0.03);
    assert_agrees("priority M/M/1, low class", s["classes.1.response"], t[1].response, 0.05);
}
