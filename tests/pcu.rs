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
    assert_eq!(files.len(), 8, "{files:?}");
    for f in files {
        let study = Study::load(&f, &LoadOptions { quick: true, ..LoadOptions::default() }).unwrap();
        assert!(!study.checks.is_empty() && !study.targets.is_empty(), "{}", f.display());
    }
}

#[test]
fn test_the_differentiation_sweep_runs_with_its_checks_met() {
    family::run_quick("scenarios/pcu/differentiation.toml", None);
}

#[test]
fn test_replicas_are_live_as_independent_binomial_ones() {
    // Section 4.6: with X ~ Binomial(k, p) live replicas, P(X ≥ 1) = 1 − (1 − p)^k; measured p and P(X ≥ 1) agree.
    let result = family::run_quick("scenarios/pcu/availability.toml", None);
    let mut shares = Vec::new();
    for run in &result.runs {
        let p = run.metrics["utilities.pcu.replica_uptime"];
        let any = run.metrics["utilities.pcu.replica_availability"];
        let k = (run.point + 1) as i32;
        // At k = 1 the two are the same measurement; the comparison bites at k = 2 and 3.
        let binomial = 1.0 - (1.0 - p).powi(k);
        assert!((any - binomial).abs() < 0.03, "k = {k}: P(X ≥ 1) {any} against 1 − (1 − {p})^k = {binomial}");
        shares.push(any);
    }
    assert_eq!(shares.len(), 3);
    assert!(shares[0] < shares[1] && shares[1] < shares[2], "{shares:?}");
}
