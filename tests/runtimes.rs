//! The runtimes cannot drift apart: every shipped scenario, at its `--quick` size and the two ends of its sweep,
//! writes byte-identical `summary.json`, `jobs.csv` and `ledger.csv` files on the inline runtime and on actix (one
//! arbiter).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use gridmarket::runner::{RunOptions, run_study};
use gridmarket::scenario::{LoadOptions, Study};

/// Every scenario file under `scenarios/` (profiles are not scenarios).
fn shipped() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![PathBuf::from("scenarios")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.ends_with("profiles") {
                dirs.push(path);
            } else if path.extension().is_some_and(|x| x == "toml") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The run files of a study's output folder, relative to it.
fn outputs(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.file_name().is_some_and(|n| n == "summary.json" || n == "jobs.csv" || n == "ledger.csv") {
                out.push(path.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

fn run(file: &Path, runtime: &str, out: &Path) {
    let set = vec![("runtime".to_string(), runtime.to_string())];
    let opts = LoadOptions { quick: true, set, replications: Some(1), ..LoadOptions::default() };
    let mut study = Study::load(file, &opts).unwrap();
    // The ends of its sweep: every file's agents and keys, at a cost that stays flat as families grow.
    let last = study.points.len() - 1;
    study.points = vec![study.points[0].clone(), study.points[last].clone()];
    study.points.dedup_by_key(|p| p.index);
    for (i, p) in study.points.iter_mut().enumerate() {
        p.index = i;
    }
    let opts = RunOptions::quiet(out.to_path_buf(), 2);
    let result = run_study(&study, &opts, &Arc::new(AtomicBool::new(false))).unwrap();
    assert!(result.unfinished.is_empty(), "{}: {:?}", file.display(), result.unfinished);
}

#[test]
fn every_shipped_scenario_gives_the_same_bytes_on_both_runtimes() {
    let root = std::env::temp_dir().join(format!("gridmarket-runtimes-{}", std::process::id()));
    let files = shipped();
    assert!(files.len() >= 10, "found only {files:?}");
    for file in files {
        let name = file.to_string_lossy().replace(['/', '.'], "_");
        let (inline, actix) = (root.join(&name).join("inline"), root.join(&name).join("actix"));
        run(&file, "inline", &inline);
        run(&file, "actix", &actix);
        let files = outputs(&inline);
        assert_eq!(files, outputs(&actix), "{}", file.display());
        assert!(files.iter().any(|f| f.ends_with("jobs.csv")), "{}: no jobs.csv", file.display());
        for f in files {
            let (a, b) = (std::fs::read(inline.join(&f)).unwrap(), std::fs::read(actix.join(&f)).unwrap());
            assert!(a == b, "{}: {} differs between the inline and actix runtimes", file.display(), f.display());
        }
    }
    let _ = std::fs::remove_dir_all(&root);
}
