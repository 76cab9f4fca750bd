//! The salehi-ch6 family (Amini Salehi 2012 ch6: preemption-aware energy management): every file loads with targets
//! and checks, and one sweep runs at its quick size with its sanity checks met.

mod family;

use gridmarket::scenario::{LoadOptions, Study};

fn family() -> Vec<std::path::PathBuf> {
    family::files("salehi-ch6")
}

#[test]
fn test_every_file_of_the_family_loads_with_targets_and_checks() {
    let files = family();
    assert_eq!(files.len(), 5, "{files:?}");
    for f in files {
        let study = Study::load(&f, &LoadOptions { quick: true, ..LoadOptions::default() }).unwrap();
        assert!(!study.checks.is_empty() && !study.targets.is_empty(), "{}", f.display());
    }
}

#[test]
fn test_the_local_duration_sweep_runs_with_its_checks_met() {
    // One replication: the sweep's 1-hour points, where external requests starve under GESP, are the slowest.
    family::run_quick("scenarios/salehi-ch6/delta.toml", Some(1));
}
