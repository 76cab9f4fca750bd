//! The pcu family (Asaduzzaman & Maheswaran: a public computing utility of dedicated and opportunistic nodes): every file loads with
//! targets and checks, and one sweep runs at its quick size with its sanity checks met.

mod family;

use gridmarket::scenario::{LoadOptions, Study};

fn family() -> Vec<std::path::PathBuf> {
    family::files("pcu")
}

#[test]
fn test_every_file_of_the_family_loads_with_targets_and_checks() {
    let files = family();
    assert_eq!(files.len(), 6, "{files:?}");
    for f in files {
        let study = Study::load(&f, &LoadOptions { quick: true, ..LoadOptions::default() }).unwrap();
        assert!(!study.checks.is_empty() && !study.targets.is_empty(), "{}", f.display());
    }
}

#[test]
fn test_the_differentiation_sweep_runs_with_its_checks_met() {
    family::run_quick("scenarios/pcu/differentiation.toml", None);
}
