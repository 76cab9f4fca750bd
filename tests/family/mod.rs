//! What the family tests share: a family's files, and one file run at its quick size with its sanity checks met.
// Each test crate that declares `mod family;` uses its own part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use gridmarket::runner::{Outcome, RunOptions, StudyResult, run_study};
use gridmarket::scenario::{LoadOptions, Study};

/// The scenario files of `scenarios/<name>/`, sorted.
pub fn files(name: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(Path::new("scenarios").join(name))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

/// Runs `file` at its quick size (with `replications` if given) and asserts that every run finished and every sanity
/// check passed.
pub fn run_quick(file: &str, replications: Option<u32>) -> StudyResult {
    let opts = LoadOptions { quick: true, replications, ..LoadOptions::default() };
    let study = Study::load(Path::new(file), &opts).unwrap();
    let result = run(&study, &file.replace(['/', '.'], "-"));
    assert_checks_pass(file, &result);
    result
}

/// Runs `study` and asserts that every run finished.
pub fn run(study: &Study, name: &str) -> StudyResult {
    run_reading(study, name, |_| ())
}

/// Runs `study` into a scratch directory, lets `read` look at its outputs, then removes it; asserts that every run
/// finished.
pub fn run_reading(study: &Study, name: &str, read: impl FnOnce(&Path)) -> StudyResult {
    let out = std::env::temp_dir().join(format!("gridmarket-{name}-{}", std::process::id()));
    let opts = RunOptions::quiet(out.clone(), 2);
    let result = run_study(study, &opts, &Arc::new(AtomicBool::new(false))).unwrap();
    read(&out);
    let _ = std::fs::remove_dir_all(&out);
    assert!(result.unfinished.is_empty(), "{name}: {:?}", result.unfinished);
    result
}

/// Asserts that `result` has sanity checks and that every one passed.
pub fn assert_checks_pass(name: &str, result: &StudyResult) {
    let failed: Vec<String> = result
        .checks
        .iter()
        .filter(|c| c.outcome != Outcome::Pass)
        .map(|c| format!("{}: {} ({})", c.target, c.measured, c.source))
        .collect();
    assert!(failed.is_empty(), "{name}: {failed:#?}");
    assert!(!result.checks.is_empty(), "{name} has sanity checks");
}
