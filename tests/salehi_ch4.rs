//! The reproduction family of Amini Salehi (2012) ch4, `scenarios/salehi-ch4/`: the gateway's configured statistics
//! are the DAS-2 model's means as the chapter computes them (Table 4.2 as read there, sizes by Eq 4.28), and its `--quick` size runs end to end with every sanity
//! check passing and PAP refusing, with a reason, clusters its local requests saturate.

mod family;

use std::path::Path;

use gridmarket::scenario::{LoadOptions, Study};
use gridmarket::workload::models::{Das2Model, InterGridCluster, InterarrivalUnit};

const FAMILY: &str = "scenarios/salehi-ch4";
const FILES: [&str; 4] = ["duration.toml", "external-rate.toml", "local-rate.toml", "vms.toml"];

fn number(v: &toml::Value) -> f64 {
    v.as_float().or_else(|| v.as_integer().map(|i| i as f64)).unwrap()
}

#[test]
fn test_configured_statistics_are_the_das2_models_means() {
    let external = Das2Model::external_default().unwrap();
    let clusters = [InterGridCluster::C64, InterGridCluster::C128, InterGridCluster::C256];
    for file in FILES {
        let text = std::fs::read_to_string(Path::new(FAMILY).join(file)).unwrap();
        let doc: toml::Table = text.parse().unwrap();
        let igg = &doc["gateways"]["igg"];
        let near = |got: f64, want: f64, tol: f64, what: &str| {
            assert!((got / want - 1.0).abs() < tol, "{file}: {what} {got} against the model's {want}");
        };
        // The unit the file reads Table 4.2's Weibull rows in (seconds unless it says otherwise).
        let unit = match doc["workloads"]["external"].get("interarrival-unit").and_then(toml::Value::as_str) {
            Some("minutes") => InterarrivalUnit::Minutes,
            _ => InterarrivalUnit::Seconds,
        };
        let external = external.clone().in_unit(unit);
        let e = &igg["external"];
        near(number(&e["rate"]), 1.0 / external.interarrival.mean(), 0.01, "external rate");
        near(number(&e["vms"]), external.size.mean(), 0.01, "external VMs");
        near(number(&e["duration"]), external.duration.mean(), 0.01, "external duration");
        let locals = igg["locals"].as_array().unwrap();
        for (local, cluster) in locals.iter().zip(clusters) {
            let model = Das2Model::local_default(cluster).in_unit(unit);
            near(number(&local["rate"]), 1.0 / model.interarrival.mean(), 0.01, "local rate");
            // Eq 4.28's mean size (3.076, 5.650 and 10.706), as the chapter feeds PAP, not the generator's (4.1, 6.9 and
            // 12.3).
            near(number(&local["vms"]), model.size.eq_4_28_mean(), 1e-4, "local VMs");
            near(number(&local["duration"]), model.duration.mean(), 0.01, "local duration");
        }
    }
}

#[test]
fn test_family_runs_at_quick_size() {
    // One file end to end keeps the test short; the others share its setup and are validated by the CLI tests.
    let study =
        Study::load(&Path::new(FAMILY).join("vms.toml"), &LoadOptions { quick: true, ..LoadOptions::default() })
            .unwrap();
    let result = family::run(&study, "salehi-ch4-vms");
    for check in &result.checks {
        assert_eq!(check.outcome.label(), "pass", "{} measured {}", check.target, check.measured);
    }
    assert!(!result.verdicts.is_empty());
    for s in &result.summaries {
        // Every external request reached a cluster, the metrics of the chapter are measured, and PAP, whose clusters
        // the local requests saturate (ρ ≥ 1), refused at every estimate rather than produce NaN fractions.
        assert_eq!(s["gateways.igg.forwarded"].mean, s["leases.external.total"].mean);
        for metric in ["preempted_vms", "useful_work", "leases.best_effort.awrt", "migrated_share"] {
            assert!(s[metric].mean.is_finite(), "{metric}");
        }
        assert!(s["gateways.igg.pap_refused"].mean >= 0.0);
    }
    let refused: f64 = result.summaries.iter().map(|s| s["gateways.igg.pap_refused"].mean).sum();
    assert!(refused > 0.0, "PAP refuses the saturated clusters");
}
