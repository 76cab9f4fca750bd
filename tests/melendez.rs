//! The melendez family (Melendez 2010: matchmaking under limited knowledge of resources): every file loads with
//! checks, and targets but for the EDF references, and the AS-against-EDF and mixed-workload sweeps run at their quick size with their sanity
//! checks met (no deadline miss, nothing a broker accepted refused by a resource, no OD request rejected).

mod family;

use gridmarket::scenario::{LoadOptions, Study};

fn family() -> Vec<std::path::PathBuf> {
    family::files("melendez")
}

#[test]
fn test_every_file_of_the_family_loads_with_targets_and_checks() {
    let files = family();
    assert_eq!(files.len(), 20, "{files:?}");
    let texts: Vec<String> = files.iter().map(|f| std::fs::read_to_string(f).unwrap()).collect();
    for f in files {
        let study = Study::load(&f, &LoadOptions { quick: true, ..LoadOptions::default() }).unwrap();
        // A file without targets of its own is the reference another file compares with (`versus`).
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let reference = texts.iter().any(|t| t.contains(&format!("scenario = \"{name}\"")));
        assert!(!study.checks.is_empty() && (reference || !study.targets.is_empty()), "{}", f.display());
        assert!(study.points.iter().all(|p| p.plan.precision.is_some()), "{}", f.display());
    }
}

#[test]
fn test_as_against_edf_runs_with_its_checks_met() {
    let result = family::run_quick("scenarios/melendez/as-vs-edf-1.toml", None);
    // The AS test is sufficient, not necessary: over the sweep it blocks more than EDF on the same seeds.
    let mean = |target: &str| {
        let points: Vec<f64> = result
            .runs
            .iter()
            .filter(|r| r.metrics.contains_key("sources.src.blocking"))
            .filter(|r| (r.point % 2 == 0) == (target == "as"))
            .map(|r| r.metrics["sources.src.blocking"])
            .collect();
        points.iter().sum::<f64>() / points.len() as f64
    };
    assert!(mean("as") > mean("edf"), "AS {} against EDF {}", mean("as"), mean("edf"));
}

#[test]
fn test_the_mixed_workload_runs_with_no_on_demand_request_rejected() {
    let result = family::run_quick("scenarios/melendez/mixed-1.toml", None);
    let ods: f64 = result.runs.iter().filter_map(|r| r.metrics.get("sources.src.on_demand").copied()).sum();
    assert!(ods > 0.0);
    let rejected: f64 =
        result.runs.iter().filter_map(|r| r.metrics.get("sources.src.on_demand_rejected").copied()).sum();
    assert_eq!(rejected, 0.0);
}
