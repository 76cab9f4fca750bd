//! The README's first experiment stays true: it is `scenarios/backfilling.toml` word for word, and its targets,
//! written before it was run, pass.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use gridmarket::runner::{Outcome, RunOptions, run_study};
use gridmarket::scenario::{LoadOptions, Study};

const SCENARIO: &str = "scenarios/backfilling.toml";

#[test]
fn test_readme_experiment_is_the_shipped_scenario() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let start = readme.find("```toml\n").expect("a toml block") + "```toml\n".len();
    let len = readme[start..].find("```").unwrap();
    let shipped = std::fs::read_to_string(SCENARIO).unwrap();
    assert!(readme[start..start + len] == shipped, "the README's first toml block differs from {SCENARIO}");
}

#[test]
fn test_readme_experiment_points_differ_and_its_targets_pass() {
    let study = Study::load(SCENARIO.as_ref(), &LoadOptions::default()).unwrap();
    assert_eq!(study.points.len(), 3);
    let out = std::env::temp_dir().join(format!("gridmarket-readme-{}", std::process::id()));
    let opts = RunOptions::quiet(out.clone(), 2);
    let result = run_study(&study, &opts, &Arc::new(AtomicBool::new(false))).unwrap();
    let _ = std::fs::remove_dir_all(&out);
    let wait = |point: usize| result.summaries[point]["jobs.wait"].mean;
    assert!(wait(0) > wait(1) && wait(0) > wait(2), "FCFS {} EASY {} conservative {}", wait(0), wait(1), wait(2));
    assert_eq!(result.verdicts.len(), 2);
    for v in &result.verdicts {
        assert_eq!(v.outcome, Outcome::Pass, "{}: {}", v.target, v.measured);
    }
}
