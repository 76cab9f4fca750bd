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
    assert_eq!(files.len(), 9, "{files:?}");
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

#[test]
fn test_the_das2_replay_runs_per_cpu_jobs_against_its_baseline() {
    // Point 1: 100 dedicated CPUs plus public nodes; point 3: the 400 CPUs alone, on the same per-CPU jobs.
    let result = family::run_quick("scenarios/pcu/das2.toml", None);
    let metric = |point: usize, m: &str| result.runs.iter().find(|r| r.point == point).unwrap().metrics[m];
    let submitted = metric(1, "utilities.pcu.submitted");
    assert!(submitted > 1000.0 && submitted == metric(3, "utilities.pcu.submitted"), "{submitted}");
    assert_eq!(metric(3, "utilities.pcu.public_work_share"), 0.0);
    // The same work on a quarter of the CPUs: a busier cluster, and the public nodes take what it cannot.
    let utilisation = |point| metric(point, "utilities.pcu.dedicated_utilisation");
    let public = metric(1, "utilities.pcu.public_work_share");
    assert!(
        public > 0.0 && utilisation(1) > 2.0 * utilisation(3),
        "{} against {}, public {public}",
        utilisation(1),
        utilisation(3)
    );
    assert!(metric(1, "utilities.pcu.response_time") >= metric(3, "utilities.pcu.response_time"));
    // Fewer dedicated CPUs: busier ones, and more of the work on public nodes.
    assert!(utilisation(0) > utilisation(1) && utilisation(1) > utilisation(2), "{result:?}");
    assert!(
        metric(0, "utilities.pcu.public_work_share") > public && public > metric(2, "utilities.pcu.public_work_share")
    );
}

#[test]
fn test_a_traces_memory_is_the_footprint_a_replica_carries() {
    // Three one-CPU jobs: used memory 8,000 KB (requested 4,000), used memory 0 (not recorded) with 4,000 KB
    // requested, and neither. One replica each on always-available public nodes (no dedicated node is free: it has a long job of
    // its own), so the uplink carries each footprint once: 8 + 4 + the utility's default 1 MB.
    // Not the output folder `family::run` makes, which would hold these two files of ours.
    let dir = std::env::temp_dir().join(format!("gridmarket-pcu-memory-input-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let line = |id: u32, submit: u32, runtime: u32, used: i64, requested: i64| {
        format!("{id} {submit} -1 {runtime} 1 -1 {used} 1 {runtime} {requested} 1 1 -1 -1 -1 -1 -1 -1\n")
    };
    let swf =
        [line(1, 0, 100_000, -1, -1), line(2, 1, 50, 8000, 4000), line(3, 2, 50, 0, 4000), line(4, 3, 50, -1, -1)];
    std::fs::write(dir.join("jobs.swf"), swf.concat()).unwrap();
    let scenario = r#"
name = "memory"
seed = 1
replications = 1
horizon = 1000.0
[outputs]
jobs = false
timeseries = false
schedule = false
ledger = false
[workloads.jobs]
model = "swf"
file = "jobs.swf"
[utilities.pcu]
policy = "greedy"
replicas = 1
epoch = 10.0
[nodes.dedicated]
count = 1
utility = "pcu"
[nodes.public]
count = 3
utility = "pcu"
availability = { up = 1e12, down = 1.0 }
[brokers.users]
count = 1
workload = "jobs"
submit-to = "pcu"
"#;
    std::fs::write(dir.join("memory.toml"), scenario).unwrap();
    let study = Study::load(&dir.join("memory.toml"), &LoadOptions::default()).unwrap();
    let result = family::run(&study, "pcu-memory");
    let _ = std::fs::remove_dir_all(&dir);
    let metrics = &result.runs[0].metrics;
    assert_eq!(metrics["utilities.pcu.completed"], 3.0, "{metrics:?}");
    let uplink = metrics["utilities.pcu.uplink_mb"];
    assert!((uplink - 13.0).abs() < 1e-9, "{uplink} MB up");
}
