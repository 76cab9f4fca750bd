//! A public computing utility at scale (Asaduzzaman & Maheswaran): `pcu/day/<public>-<churn>`, one simulated day of
//! 100 dedicated and 10,000 public nodes whose owners take them back and return them (exponential AV/NA periods),
//! 0.2 jobs/s of 5000 s (ten times the dedicated capacity, so most jobs run as two replicas on public nodes, report
//! progress every epoch and migrate), one replication, the whole of `gridmarket run` but the process start. `paper`
//! has the family's owners (7 h available, 3 h taken back, as in `scenarios/pcu/`: about 48,000 availability
//! transitions a day), `10x` periods ten times shorter (about 480,000). The goal: a day within 60 s on a 2-core
//! machine; each node keeps one timer for its next transition, so a transition costs one event and the progress
//! reports dominate.

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use gridmarket::runner::{RunOptions, run_study};
use gridmarket::scenario::{LoadOptions, Study};

const PUBLIC: u32 = 10_000;

/// Writes a scenario with public periods `up` and `down` (seconds) into `dir`; returns its path.
fn setup(dir: &Path, name: &str, up: f64, down: f64) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let scenario = dir.join(format!("{name}.toml"));
    let text = format!(
        "name = \"{name}\"\nseed = 25\nreplications = 1\nruntime = \"inline\"\nhorizon = 86400.0\n\n[outputs]\n\
         jobs = false\ntimeseries = false\nschedule = false\nledger = false\n\n[workloads.jobs]\nmodel = \"poisson\"\n\
         rate = 0.2\nruntime = {{ kind = \"constant\", value = 5000.0 }}\nuntil = 86400.0\n\n[utilities.pcu]\n\
         policy = \"dynamic\"\nreplicas = 2\n\n[nodes.dedicated]\ncount = 100\nutility = \"pcu\"\n\n[nodes.public]\n\
         count = {PUBLIC}\nutility = \"pcu\"\navailability = {{ up = {up:.1}, down = {down:.1} }}\nspeed = 0.34\n\n\
         [brokers.users]\ncount = 100\nworkload = \"jobs\"\nsubmit-to = \"pcu\"\n"
    );
    std::fs::write(&scenario, text).unwrap();
    scenario
}

fn bench(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("gridmarket-pcu-bench-{}", std::process::id()));
    let interrupt = Arc::new(AtomicBool::new(false));
    let mut group = c.benchmark_group("pcu/day");
    group.sample_size(10).measurement_time(Duration::from_secs(60));
    for (churn, up, down) in [("paper", 25_200.0, 10_800.0), ("10x", 2_520.0, 1_080.0)] {
        let scenario = setup(&dir, churn, up, down);
        let opts = RunOptions::quiet(dir.join(format!("out-{churn}")), 1);
        group.bench_function(format!("{PUBLIC}-{churn}"), |b| {
            b.iter(|| {
                let study = Study::load(&scenario, &LoadOptions::default()).unwrap();
                let result = run_study(&study, &opts, &interrupt).unwrap();
                black_box(result.runs.len())
            })
        });
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
