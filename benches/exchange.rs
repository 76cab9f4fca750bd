//! The market exchange at scale (Garg 2010, *Meta Scheduling for Market-Oriented Grid and Utility Computing*,
//! §8.6): `exchange/path/<markets>`, one run of `scenarios/garg-ch8/mandi.toml` with 10, 100, 1,000 and 10,000 call
//! markets: 50,000 requests from 1,000 brokers, each bidding in a market chosen at random, 1,000 providers asking
//! in them, through the exchange actor (registration and login, discovery, bids, the clearing timers, reservations,
//! tickets, the jobs submitted and run), built, run and measured by the runner on the inline runtime. Throughput is
//! in requests. Peak memory per count: `cargo run --release --example exchange_scale`.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use gridmarket::runner::run::run;
use gridmarket::scenario::{LoadOptions, Study};

const SCENARIO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/garg-ch8/mandi.toml");

fn path(c: &mut Criterion) {
    let study = Study::load(Path::new(SCENARIO), &LoadOptions::default()).expect("the scenario loads");
    let interrupt = Arc::new(AtomicBool::new(false));
    let mut group = c.benchmark_group("exchange");
    // Half a second a run: ten samples of a few runs each.
    group.sample_size(10).sampling_mode(SamplingMode::Flat).measurement_time(Duration::from_secs(25));
    for point in &study.points {
        let markets = point.assignments[0].1.as_integer().expect("the swept number of markets");
        let requests = run(&point.plan, 0, &interrupt, None).expect("a run").measured.metrics["jobs.total"];
        group.throughput(Throughput::Elements(requests as u64));
        group.bench_function(format!("path/{markets}"), |b| {
            b.iter(|| run(&point.plan, 0, &interrupt, None).expect("a run"))
        });
    }
    group.finish();
}

criterion_group!(benches, path);
criterion_main!(benches);
