//! A trace replayed in little time: `trace/easy/lublin-50k`, the whole of `gridmarket run` but the process start on
//! a 50,000-job Lublin–Feitelson trace (SWF, drawn here with a fixed seed) under EASY backfilling on 128 PEs, one
//! replication, every output file written (`jobs.csv` among them). Loading checks the trace; the run reads it,
//! deals it to its broker, simulates and writes.

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use gridmarket::runner::{RunOptions, run_study};
use gridmarket::scenario::workload::{RawWorkload, TraceCache, WorkloadPlan, WorkloadRegistry};
use gridmarket::scenario::{LoadOptions, Study};
use gridmarket::workload::swf;

const JOBS: i64 = 50_000;
const SEED: u64 = 1;

/// Writes the trace and a scenario replaying it into `dir`; returns the scenario's path.
fn setup(dir: &Path) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let table = toml::from_str(&format!("model = \"lublin\"\njobs = {JOBS}\nmax-nodes = 128")).unwrap();
    let raw = RawWorkload::parse(&WorkloadRegistry::standard(), toml::Value::Table(table)).unwrap();
    let plan = WorkloadPlan::check(&raw, dir, &mut TraceCache::default()).unwrap();
    let w = plan.generate(&mut agents::sim::rng::stream(SEED, "trace-bench", 0)).unwrap();
    swf::write_swf(&w, std::fs::File::create(dir.join("lublin.swf")).unwrap()).unwrap();
    let scenario = dir.join("easy.toml");
    let text = "name = \"easy\"\nseed = 1\nreplications = 1\nruntime = \"inline\"\n\n[workloads.trace]\nmodel = \"swf\"\n\
                file = \"lublin.swf\"\n\n[providers.cluster]\npes = 128\nscheduler = \"easy\"\n\n[brokers.user]\n\
                workload = \"trace\"\nsubmit-to = \"cluster\"\n";
    std::fs::write(&scenario, text).unwrap();
    scenario
}

fn bench(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("gridmarket-trace-bench-{}", std::process::id()));
    let scenario = setup(&dir);
    let opts = RunOptions::quiet(dir.join("out"), 1);
    let interrupt = Arc::new(AtomicBool::new(false));
    let mut group = c.benchmark_group("trace");
    group.sample_size(10).measurement_time(Duration::from_secs(20));
    group.bench_function("easy/lublin-50k", |b| {
        b.iter(|| {
            let study = Study::load(&scenario, &LoadOptions::default()).unwrap();
            let result = run_study(&study, &opts, &interrupt).unwrap();
            black_box(result.runs.len())
        })
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
