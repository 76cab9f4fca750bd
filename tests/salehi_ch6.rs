//! The salehi-ch6 family (Amini Salehi 2012 ch6: preemption-aware energy management): every file loads with targets
//! and checks, and one sweep runs at its quick size with its sanity checks met.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use gridmarket::runner::{Outcome, RunOptions, run_study};
use gridmarket::scenario::{LoadOptions, Study};

fn family() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir("scenarios/salehi-ch6")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

#[test]
fn test_every_file_of_the_family_loads_with_targets_and_checks() {
    let files = family();
    assert_eq!(files.len(), 4, "{files:?}");
    for f in files {
        let study = Study::load(&f, &LoadOptions { quick: true, ..LoadOptions::default() }).unwrap();
        assert!(!study.checks.is_empty() && !study.targets.is_empty(), "{}", f.display());
    }
}

#[test]
fn test_the_local_duration_sweep_runs_with_its_checks_met() {
    // One replication: the sweep's 1-hour points, where external requests starve under GESP, are the slowest.
    let opts = LoadOptions { quick: true, replications: Some(1), ..LoadOptions::default() };
    let study = Study::load(Path::new("scenarios/salehi-ch6/delta.toml"), &opts).unwrap();
    let out = std::env::temp_dir().join(format!("gridmarket-salehi-ch6-{}", std::process::id()));
    let opts = RunOptions {
        out: out.clone(),
        jobs: 2,
        resume: false,
        quiet: true,
        trace: None,
        schedule_swf: false,
        command: String::new(),
    };
    let result = run_study(&study, &opts, &Arc::new(AtomicBool::new(false))).unwrap();
    let _ = std::fs::remove_dir_all(&out);
    assert!(result.unfinished.is_empty(), "{:?}", result.unfinished);
    let failed: Vec<String> = result
        .checks
        .iter()
        .filter(|c| c.outcome != Outcome::Pass)
        .map(|c| format!("{}: {} ({})", c.target, c.measured, c.source))
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
    assert!(!result.checks.is_empty());
}
