//! One scheduling interval of the time/cost trade-off heuristics (Garg 2010 ch5): `tradeoff/interval/<heuristic>/
//! <apps>x15`, MinCTT over 125 to 2,000 waiting applications on 15 sites (U[20, 300] CPUs, §5.4's scheduling-interval
//! experiment), each site's free profile a list of 40 slots over the next day (a loaded site: free CPUs varying
//! between a fifth and all of them), and MaxCTT, SuffCTT and greedy at 1,000. The heuristics are O(n² · slots);
//! the goal: 1,000 applications in one interval under 1 s.

use std::hint::black_box;

use agents::metabroker::tradeoff::heuristics::{Heuristic, Request, Resource, Segment, allocate};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rand::RngExt;

const SEED: u64 = 2010;
const SITES: usize = 15;
const SLOTS: usize = 40;

fn round(apps: usize) -> (Vec<Request>, Vec<Resource>) {
    let mut rng = agents::sim::rng::stream(SEED, "tradeoff-bench", apps as u64);
    let resources: Vec<Resource> = (0..SITES)
        .map(|_| {
            let cpus = rng.random_range(20..=300u32);
            let mut t = 50.0;
            let free = (0..SLOTS)
                .map(|k| {
                    let end = if k + 1 == SLOTS { 1e8 } else { t + rng.random_range(300.0..4000.0) };
                    let s = Segment { start: t, end, free: rng.random_range(cpus / 5..=cpus) };
                    t = end;
                    s
                })
                .collect();
            Resource { cpus, price: rng.random_range(0.001..2.0), free, transfer: 0.0 }
        })
        .collect();
    let requests = (0..apps)
        .map(|_| {
            // Lublin-like: a quarter serial, the rest powers of two up to 256; runtimes from seconds to hours.
            let cpus = if rng.random::<f64>() < 0.25 { 1 } else { 1u32 << rng.random_range(1..=8) };
            let runtime = rng.random_range(1.0f64..9.0).exp();
            let etc = (0..SITES).map(|_| runtime * rng.random_range(0.5..1.5)).collect();
            Request { arrival: rng.random_range(0.0..50.0), cpus, etc, delta: rng.random() }
        })
        .collect();
    (requests, resources)
}

fn interval(c: &mut Criterion) {
    let mut group = c.benchmark_group("tradeoff/interval");
    group.sample_size(10);
    for apps in [125, 250, 500, 1_000, 2_000] {
        let (q, r) = round(apps);
        group.bench_with_input(BenchmarkId::new("min-ctt", format!("{apps}x{SITES}")), &(q, r), |b, (q, r)| {
            b.iter(|| black_box(allocate(Heuristic::MinCtt, black_box(q), black_box(r), 50.0)))
        });
    }
    let (q, r) = round(1_000);
    for h in [Heuristic::MaxCtt, Heuristic::SuffCtt, Heuristic::Greedy] {
        group.bench_with_input(BenchmarkId::new(h.to_string(), format!("1000x{SITES}")), &(&q, &r), |b, (q, r)| {
            b.iter(|| black_box(allocate(h, black_box(q), black_box(r), 50.0)))
        });
    }
    group.finish();
}

criterion_group!(benches, interval);
criterion_main!(benches);
