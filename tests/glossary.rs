//! The glossary (`docs/outputs.md`) lists what the runs actually write: every metric a run of the shipped scenarios
//! measures is a declared one, and `run.json`'s keys are the declared ones (the CSV writers take their headers from
//! the declarations).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use gridmarket::runner::metrics::is_metric;
use gridmarket::runner::outputs::FILES;
use gridmarket::runner::{RunOptions, run_study};
use gridmarket::scenario::{LoadOptions, Study};

/// Scenarios that between them have every agent kind (data centres and the energy-aware meta-broker in hand-made),
/// typed leases, priority classes, deadlines, moving prices and an induced-value market.
const SCENARIOS: [&str; 8] = [
    "scenarios/quickstart.toml",
    "scenarios/exchange.toml",
    "scenarios/migration.toml",
    "scenarios/garg-ch4/metabroker.toml",
    "scenarios/queueing/priority.toml",
    "scenarios/market/herding-pricing.toml",
    "scenarios/market/gode-sunder.toml",
    "scenarios/garg-ch6/hand-made.toml",
];

fn declared(path: &str) -> Vec<&'static str> {
    let file = FILES.iter().find(|f| f.path.ends_with(path)).unwrap_or_else(|| panic!("{path} is not declared"));
    file.columns.iter().map(|c| c.name).collect()
}

#[test]
fn every_metric_and_run_json_key_written_is_in_the_glossary() {
    for scenario in SCENARIOS {
        let options = LoadOptions { quick: true, replications: Some(1), ..LoadOptions::default() };
        let mut study = Study::load(scenario.as_ref(), &options).unwrap();
        study.points.truncate(1);
        let name = Path::new(scenario).file_stem().unwrap().to_string_lossy();
        let out = std::env::temp_dir().join(format!("gridmarket-glossary-{name}-{}", std::process::id()));
        let opts = RunOptions::quiet(out.clone(), 1);
        let result = run_study(&study, &opts, &Arc::new(AtomicBool::new(false))).unwrap();
        let plan = &study.points[0].plan;
        for metric in result.summaries[0].keys() {
            assert!(is_metric(plan, metric), "{scenario}: `{metric}` is measured but not in the glossary");
        }
        let run = out.join("p0/r0/run.json");
        let json: serde_json::Value = serde_json::from_slice(&std::fs::read(run).unwrap()).unwrap();
        let mut keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
        let mut expected = declared("run.json");
        keys.sort();
        expected.sort();
        assert_eq!(keys, expected, "{scenario}: run.json");
        let _ = std::fs::remove_dir_all(&out);
    }
}
