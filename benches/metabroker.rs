//! The meta-broker's scheduling round (Garg 2010, ch4): `metabroker/round/<policy>/<apps>x<sites>` for the LP
//! relaxation + Modified MinCost (`mmc`), the GA and LPGA, from 50 × 25 to 1,000 × 200; and the MGN relaxation
//! alone (§4.2.1) at 200 × 100 and 500 × 200, solved by the exact transportation solver (network simplex) and by
//! microlp through good_lp.
//!
//! Instances follow the chapter 4 setup (§4.3.1) scaled up: applications of about 5 CPUs (Gaussian), 400 s ± 20%,
//! submitted in the first 20 s, medium deadlines (runtime + 250 s ± 20%), budget twice the average cost; sites of
//! 4–12 CPUs at 4–5 G$ per CPU-second (Gaussian, mean 4.5) and speeds U[1, 1.33]; scheduled at T = 50 s. Demand
//! (about 5 CPUs per application) exceeds supply (about 8 per site), so the dummy provider is used too.
//!
//! microlp runs only at 200 × 100: at 500 × 200 it takes tens of seconds per solve.

use std::hint::black_box;
use std::time::Duration;

use agents::metabroker::{
    App, MgnSolver, Params, Problem, QosIndex, SchedulingPolicy, Site, Snapshot, mgn_relaxation, schedule_with,
};
use criterion::{Criterion, criterion_group, criterion_main};
use rand::{Rng, RngExt};
use rand_distr::StandardNormal;

const SEED: u64 = 2010;

/// A chapter 4 round with `apps` applications and `sites` sites.
fn snapshot(apps: usize, sites: usize) -> Snapshot {
    let mut rng = agents::sim::rng::stream(SEED, "metabroker-bench", (apps as u64) << 32 ^ sites as u64);
    let apps = (0..apps as u64)
        .map(|id| {
            let runtime = 400.0 * (1.0 + 0.1 * rng.sample::<f64, _>(StandardNormal)).clamp(0.8, 1.2);
            let submit = 20.0 * rng.random::<f64>();
            App {
                id,
                cpus: (5.0 + 1.5 * rng.sample::<f64, _>(StandardNormal)).round().clamp(1.0, 12.0) as u32,
                runtime,
                budget: Some(2.0 * 4.5 * 400.0 * 5.0),
                deadline: Some(
                    submit + runtime + 250.0 * (1.0 + 0.1 * rng.sample::<f64, _>(StandardNormal)).clamp(0.8, 1.2),
                ),
                submit,
            }
        })
        .collect();
    let sites = (0..sites as u64)
        .map(|id| Site {
            id,
            cpus: 4 + (rng.next_u64() % 9) as u32,
            speed: 1.0 + 0.33 * rng.random::<f64>(),
            price: (4.5 + 0.25 * rng.sample::<f64, _>(StandardNormal)).clamp(4.0, 5.0),
            from: 0.0,
            until: None,
        })
        .collect();
    Snapshot { now: 50.0, apps, sites }
}

/// The round's variants: (name, policy, solver of the MGN relaxation).
const ROUND_VARIANTS: &[(&str, SchedulingPolicy, MgnSolver)] = &[
    ("mmc", SchedulingPolicy::Mmc, MgnSolver::Transportation),
    ("ga", SchedulingPolicy::Ga, MgnSolver::Transportation),
    ("lpga", SchedulingPolicy::Lpga, MgnSolver::Transportation),
];

/// One whole scheduling round (relaxation, rounding, GA) as the meta-broker runs it.
fn round(c: &mut Criterion) {
    let mut group = c.benchmark_group("metabroker");
    group.sample_size(10);
    for (apps, sites) in [(50, 25), (100, 50), (200, 100), (500, 200), (1000, 200)] {
        let snapshot = snapshot(apps, sites);
        for &(name, policy, mgn_solver) in ROUND_VARIANTS {
            let params = Params { mgn_solver, ..Params::default() };
            group.bench_function(format!("round/{name}/{apps}x{sites}"), |b| {
                b.iter(|| schedule_with(policy, black_box(&snapshot), SEED, &params))
            });
        }
    }
    group.finish();
}

fn mgn(c: &mut Criterion) {
    let mut group = c.benchmark_group("metabroker");
    group.sample_size(10);
    for (apps, sites) in [(200, 100), (500, 200)] {
        let snapshot = snapshot(apps, sites);
        let problem = Problem::new(&snapshot, QosIndex::FairMarket);
        let size = format!("{apps}x{sites}");
        group.bench_function(format!("mgn/transportation/{size}"), |b| {
            b.iter(|| mgn_relaxation(black_box(&problem), MgnSolver::Transportation))
        });
        if apps <= 200 {
            // About 1.5 s a solve: ten samples need more than the default 5 s.
            group.measurement_time(Duration::from_secs(20));
            group.bench_function(format!("mgn/microlp/{size}"), |b| {
                b.iter(|| mgn_relaxation(black_box(&problem), MgnSolver::Microlp))
            });
            group.measurement_time(Duration::from_secs(5));
        }
    }
    group.finish();
}

criterion_group!(benches, round, mgn);
criterion_main!(benches);
