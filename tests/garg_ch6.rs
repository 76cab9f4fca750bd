//! The garg-ch6 family (Garg 2010 ch6, data centres and energy-aware meta-scheduling): every file loads, the
//! hand-made case gives the numbers its checks compute by hand, and a reduced point of the figures' sweeps runs with
//! its sanity checks met.

mod family;

use std::path::Path;

use gridmarket::scenario::{LoadOptions, Study};

#[test]
fn test_every_file_of_the_family_loads_with_targets_and_checks() {
    let files = family::files("garg-ch6");
    assert!(files.len() >= 10, "{files:?}");
    for f in files {
        let study = Study::load(&f, &LoadOptions { quick: true, ..LoadOptions::default() }).unwrap();
        assert!(!study.checks.is_empty(), "{}", f.display());
        if !f.ends_with("hand-made.toml") {
            assert!(!study.targets.is_empty(), "{}", f.display());
        }
    }
}

#[test]
fn test_the_hand_made_case_gives_its_hand_computed_numbers() {
    let study = Study::load(Path::new("scenarios/garg-ch6/hand-made.toml"), &LoadOptions::default()).unwrap();
    let mut jobs = String::new();
    let result = family::run_reading(&study, "hand-made", |out| {
        jobs = std::fs::read_to_string(out.join("p0/r0/jobs.csv")).unwrap();
    });
    family::assert_checks_pass("hand-made", &result);
    // Each application's energy and carbon, in jobs.csv: 132.592 W × 2 for cooling at COP 1, 0.083 kg/kWh.
    let header: Vec<&str> = jobs.lines().next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (outcome, energy, carbon) = (column("outcome"), column("energy"), column("carbon"));
    let rows: Vec<Vec<&str>> = jobs.lines().skip(1).map(|l| l.split(',').collect()).collect();
    let kwh = |cpus: f64, seconds: f64| 2.0 * 132.592 * cpus * seconds / 3.6e6;
    let expected = [kwh(100.0, 3600.0 * 3.2 / 2.2), kwh(150.0, 1800.0 * 3.2 / 2.2)];
    for (row, want) in rows.iter().zip(expected) {
        assert_eq!(row[outcome], "completed", "{row:?}");
        let (e, c): (f64, f64) = (row[energy].parse().unwrap(), row[carbon].parse().unwrap());
        assert!((e - want).abs() < 1e-9 * want, "{e} kWh, expected {want}");
        assert!((c - 0.083 * want).abs() < 1e-9 * want, "{c} kg, expected {}", 0.083 * want);
    }
    assert_eq!((rows[2][outcome], rows[2][energy], rows[2][carbon]), ("rejected", "", ""));
}

#[test]
fn test_a_reduced_point_of_each_figure_runs_with_its_checks_met() {
    for f in family::files("garg-ch6").into_iter().filter(|f| !f.ends_with("hand-made.toml")) {
        let options = LoadOptions { quick: true, replications: Some(1), ..LoadOptions::default() };
        let mut study = Study::load(&f, &options).unwrap();
        // The first and last points: the extremes of the first swept key.
        let last = study.points.len() - 1;
        study.points = vec![study.points[0].clone(), study.points[last].clone()];
        for (i, p) in study.points.iter_mut().enumerate() {
            p.index = i;
        }
        let name = f.file_stem().unwrap().to_string_lossy().into_owned();
        let result = family::run(&study, &name);
        family::assert_checks_pass(&name, &result);
        for s in &result.summaries {
            for metric in ["energy", "carbon", "workload"] {
                let v = s.get(metric).map(|m| m.mean);
                assert!(v.is_some_and(|v| v.is_finite() && v >= 0.0), "{name}: {metric} = {v:?}");
            }
        }
    }
}
