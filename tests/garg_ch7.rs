//! The reproduction family of Garg (2010) ch7, `scenarios/garg-ch7/`: its `--quick` size runs end to end, and the
//! model's predictions its targets quote are those of the queueing model (`gridmarket::analytic::dam`).

mod family;

use std::path::Path;

use gridmarket::analytic::ServiceMoments;
use gridmarket::analytic::dam::{DamModel, Execution, PartitionMean, ValuationClass};
use gridmarket::scenario::plan::Test;
use gridmarket::scenario::{LoadOptions, Study};

const FAMILY: &str = "scenarios/garg-ch7";

fn load(file: &str, quick: bool) -> Study {
    Study::load(&Path::new(FAMILY).join(file), &LoadOptions { quick, ..LoadOptions::default() }).unwrap()
}

/// The model of `model.toml`'s set-up at one point: 5 sites of 128 CPUs in 3 partitions, Weibull(2, `scale`)
/// runtimes, needs uniform in 1–64, four valuation classes of 1 ms.
fn model(rate: f64, scale: f64) -> DamModel {
    let valuation = ServiceMoments::deterministic(0.001).unwrap();
    DamModel {
        arrival_rate: rate,
        execution: Execution::weibull(2.0, scale).unwrap(),
        classes: vec![ValuationClass { probability: 0.25, service: valuation }; 4],
        sites: vec![128; 5],
        partitions: 3,
        sizes: (1..=64).map(|n| (n, 1.0 / 64.0)).collect(),
        mean: PartitionMean::Jobs,
    }
}

#[test]
fn test_model_targets_quote_the_queueing_model() {
    let study = load("model.toml", false);
    let number = |v: &toml::Value| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)).unwrap();
    let mut checked = 0;
    for target in &study.targets {
        let Test::Range { lo, hi } = target.test else { continue };
        let (rate, scale) =
            (number(&target.at["workloads.apps.rate"]), number(&target.at["workloads.apps.runtime.scale"]));
        let predicted = model(rate, scale).optimise().unwrap().total;
        let value = match target.metric.as_str() {
            "jobs.wait" => predicted.wait,
            "jobs.wait_over_runtime" => predicted.slowdown,
            other => panic!("unexpected metric {other}"),
        };
        // The files give 4 significant digits.
        let near = |a: f64, b: f64| (a - b).abs() <= 5e-4 * b.abs();
        if lo == 0.0 {
            assert!(near(hi, value), "{}: below the model's {value}, the file says {hi}", target.source);
        } else {
            assert!(
                near(lo, 0.70 * value) && near(hi, 0.75 * value),
                "{}: [{lo}, {hi}] against {value}",
                target.source
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 24, "8 points × wait and slowdown below the model, 4 points × both 25–30% below");
}

#[test]
fn test_family_runs_at_quick_size() {
    for file in ["dam.toml", "demand.toml", "model.toml", "options.toml"] {
        let study = load(file, true);
        let result = family::run(&study, file);
        for check in &result.checks {
            assert_eq!(check.outcome.label(), "pass", "{file}: {} measured {}", check.target, check.measured);
        }
        if file == "model.toml" {
            // The warm-up: of 2,000 applications the job metrics count the last 1,000.
            assert!(result.summaries.iter().all(|s| s["jobs.total"].mean == 1000.0));
        }
        // Every file but options.toml (which the thesis reports nothing on) has targets.
        assert_eq!(result.verdicts.is_empty(), file == "options.toml", "{file}");
    }
}
