//! One scheduling interval of the double-auction-inspired meta-broker (Garg 2010 ch7): `dam/interval/<policy>/<bids>x
//! <queues>`, the valuation (7.1, 7.2) and the matching (Alg 7.1) of 10,000 pending bids against the 30 queues of the
//! ten EDG sites of Table 7.2 (three queues each, 1:2:3), and the five baselines on the same market; DAM also at
//! 1,000 and 100,000 bids. The goal: one DAM interval of 10,000 × 30 within 50 ms.
//!
//! The market is one of the garg-ch7 family's first intervals: applications of the Thunder-like workload's shape
//! (mostly small, a few wide, runtimes from seconds to hours; deadlines U[r, 3r] after submissions spread over the
//! interval; valuations U[90,000, 160,000]) and queues about half loaded, a few of them full, so that matches stop
//! when the free processors run out, as they do under that workload's load.

use std::hint::black_box;

use agents::metabroker::dam::{Application, AuctionPolicy, DamParams, Market, MarketQueue, match_round};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rand::{Rng, RngExt};

const SEED: u64 = 2007;

/// The ten sites of Garg (2010) Table 7.2: CPUs and MIPS.
const SITES: [(u32, f64); 10] = [
    (2050, 1140.0),
    (2600, 1330.0),
    (650, 1176.0),
    (540, 1166.0),
    (600, 1320.0),
    (350, 1000.0),
    (200, 1330.0),
    (250, 1200.0),
    (650, 1000.0),
    (1000, 1140.0),
];

fn market(bids: usize) -> Market {
    let mut rng = agents::sim::rng::stream(SEED, "dam-bench", bids as u64);
    let now = 50.0;
    let mut queues = Vec::new();
    for (site, &(pes, mips)) in SITES.iter().enumerate() {
        let price = 4.5 + 5.0 * rng.random::<f64>();
        let mut left = pes;
        for (k, ratio) in [1u32, 2, 3].into_iter().enumerate() {
            let size = if k == 2 { left } else { pes * ratio / 6 };
            left -= size;
            let busy = (f64::from(size) * rng.random_range(0.3..1.0)) as u32;
            let load = f64::from(busy) / f64::from(size);
            queues.push(MarketQueue {
                site,
                queue: k as u32,
                pes: size,
                free: size - busy,
                load,
                wait: load * rng.random_range(100.0..5000.0),
                valuation: price,
                speed: mips / 1000.0,
                slots: Vec::new(),
            });
        }
    }
    let apps = (0..bids as u64)
        .map(|id| {
            // Sizes: a third serial, most of the rest small powers of two, a few up to 1,024.
            let widest = 2 + rng.next_u32() % 9;
            let pes = if rng.random::<f64>() < 0.3 { 1 } else { 1u32 << rng.random_range(1..=widest) };
            let runtime = (rng.random_range(0.0f64..11.0)).exp().max(1.0);
            let submit = now * rng.random::<f64>();
            Application {
                id,
                pes,
                runtime,
                deadline: submit + runtime * rng.random_range(1.0..3.0),
                valuation: rng.random_range(90_000.0..160_000.0),
                submit,
            }
        })
        .collect();
    Market { now, queues, apps }
}

fn interval(c: &mut Criterion) {
    let mut group = c.benchmark_group("dam/interval");
    let params = DamParams::default();
    let policies = [
        ("dam", AuctionPolicy::Dam),
        ("sjf", AuctionPolicy::Sjf),
        ("fcfs", AuctionPolicy::Fcfs),
        ("edf-fq", AuctionPolicy::EdfFq),
        ("hvfq", AuctionPolicy::Hvfq),
        ("fair-share", AuctionPolicy::FairShare),
    ];
    let m = market(10_000);
    for (name, policy) in policies {
        group.bench_with_input(BenchmarkId::new(name, "10000x30"), &m, |b, m| {
            b.iter(|| black_box(match_round(policy, &params, black_box(m))))
        });
    }
    for bids in [1_000, 100_000] {
        let m = market(bids);
        group.bench_with_input(BenchmarkId::new("dam", format!("{bids}x30")), &m, |b, m| {
            b.iter(|| black_box(match_round(AuctionPolicy::Dam, &params, black_box(m))))
        });
    }
    group.finish();
}

criterion_group!(benches, interval);
criterion_main!(benches);
