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

/// The families of `scenarios/`: the folders holding a scenario file (`profiles/` holds profiles), sorted.
fn families() -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir("scenarios")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && p.file_name().is_some_and(|n| n != "profiles"))
        .filter(|p| std::fs::read_dir(p).unwrap().any(|e| e.unwrap().path().extension().is_some_and(|x| x == "toml")))
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

const RESULTS_BEGIN: &str = "<!-- results: generated from scenarios/*/verdicts.full.lock; GRIDMARKET_BLESS=1 cargo test --test readme rewrites it -->\n";
const RESULTS_END: &str = "<!-- end of results -->";

#[test]
fn test_readme_results_table_is_generated_from_the_full_locks() {
    let locks: Vec<(String, Option<String>)> = families()
        .into_iter()
        .map(|f| {
            let lock = std::fs::read_to_string(format!("scenarios/{f}/verdicts.full.lock")).ok();
            (f, lock)
        })
        .collect();
    let table = gridmarket::lock::results_table(&locks).unwrap();
    let readme = std::fs::read_to_string("README.md").unwrap();
    let start = readme.find(RESULTS_BEGIN).expect("the results table's opening marker") + RESULTS_BEGIN.len();
    let end = start + readme[start..].find(RESULTS_END).expect("the results table's closing marker");
    if std::env::var_os("GRIDMARKET_BLESS").is_some() {
        std::fs::write("README.md", format!("{}{table}{}", &readme[..start], &readme[end..])).unwrap();
    } else {
        assert!(
            readme[start..end] == table,
            "the README's results table is not the one the full locks give (GRIDMARKET_BLESS=1 rewrites it):\n{table}"
        );
    }
}

/// CI checks every family's quick lock (`reproduce all --quick --check-lock`): each family has one.
#[test]
fn test_every_family_has_a_quick_lock() {
    let missing: Vec<String> = families()
        .into_iter()
        .filter(|f| !std::path::Path::new(&format!("scenarios/{f}/verdicts.quick.lock")).is_file())
        .collect();
    assert!(
        missing.is_empty(),
        "families without verdicts.quick.lock (write it with `reproduce NAME --quick --update-lock`): {missing:?}"
    );
}
