//! Example: a provider queue order, a pricing rule, a meta-broker policy and a workload model of our own, each one
//! file plus one registration line, run on small scenarios and checked (`docs/writing-a-policy.md` walks through it).
//!
//! This example demonstrates in particular:
//! - a queue order (`smallest_area_first.rs`, a `QueueOrder`): the waiting job of smallest area (PEs × estimate)
//!   first, which a provider selects with `queue-order = "smallest-area-first"`;
//! - a pricing rule (`surge.rs`, a `NamedPriceRule`): the configured price times one plus the jobs waiting per PE,
//!   which a provider selects with `pricing = { rule = "surge" }`;
//! - a meta-broker policy (`earliest_finish.rs`, a `MetaPolicy`): each job on the site where it finishes first,
//!   whatever the price, which a meta-broker selects with `policy = "earliest-finish"`;
//! - a workload model (`diurnal.rs`, a `WorkloadModel`): Poisson arrivals whose rate follows the day, which a
//!   workload selects with `model = "diurnal"`;
//! - registering them (`Registry::with_queue_order`, `with_price_rule`, `with_meta_policy`,
//!   `WorkloadRegistry::with`) without editing gridmarket;
//! - the same meta-broker policy in later chapters' settings: Garg (2010) ch5's free profiles and times to compute
//!   (`tradeoff_policy.toml`, `offers = "profiles"`), against the thesis's greedy-ctt, and ch7's queues
//!   (`queue_policy.toml`, `offers = "queues"`), against its FCFS baseline;
//! - checking the outcome (every `.toml` here): smallest area first waits less than arrival order, and earliest
//!   finish responds sooner than the cheap site and pays more, in all three settings, and a daily swing of the
//!   arrivals makes jobs wait longer than steady arrivals at the same mean load.
//!
//! ```text
//!   brokers ──Submit──▶ cluster (EASY backfilling, its queue by smallest area first)
//!
//!   brokers ──ResourceRequest──▶ mb ("earliest-finish") ──Reserve──▶ fast (speed 2, dear) | cheap (speed 1)
//! ```
//!
//! Run: `cargo run --release --example custom_policy`

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use agents::registry::Registry;
use gridmarket::runner::run::run;
use gridmarket::scenario::workload::WorkloadRegistry;
use gridmarket::scenario::{LoadOptions, Study};

mod diurnal;
mod earliest_finish;
mod smallest_area_first;
mod surge;

use diurnal::Diurnal;
use earliest_finish::EarliestFinish;
use smallest_area_first::SmallestAreaFirst;
use surge::Surge;

/// Runs every point of the scenario `file` (in this folder) and returns, per point, the mean of each metric over its
/// replications.
fn run_points(opts: &LoadOptions, file: &str) -> anyhow::Result<[BTreeMap<String, f64>; 2]> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/custom_policy").join(file);
    let study = Study::load(&path, opts)?;
    let interrupt = Arc::new(AtomicBool::new(false));
    let mut means = Vec::new();
    for point in &study.points {
        let mut sums: BTreeMap<String, f64> = BTreeMap::new();
        for rep in 0..point.plan.replications {
            for (metric, value) in run(&point.plan, rep, &interrupt, None)?.measured.metrics {
                *sums.entry(metric).or_default() += value;
            }
        }
        let n = f64::from(point.plan.replications);
        means.push(sums.into_iter().map(|(metric, sum)| (metric, sum / n)).collect());
    }
    means.try_into().map_err(|points: Vec<_>| anyhow::anyhow!("{file}: expected 2 points, found {}", points.len()))
}

fn main() -> anyhow::Result<()> {
    // ANCHOR: registry
    let registry = Registry::standard()
        .with_queue_order(&SmallestAreaFirst)
        .with_price_rule(&Surge)
        .with_meta_policy(&EarliestFinish);
    let workloads = WorkloadRegistry::standard().with(&Diurnal);
    // ANCHOR_END: registry
    let opts = &LoadOptions { registry, workloads, ..LoadOptions::default() };

    let [arrival, smallest] = run_points(opts, "queue_order.toml")?;
    let (wait_arrival, wait_smallest) = (arrival["jobs.wait"], smallest["jobs.wait"]);
    println!("mean wait: arrival order {wait_arrival:.0} s, smallest area first {wait_smallest:.0} s");
    assert_eq!(arrival["jobs.completed"], smallest["jobs.completed"], "the same jobs complete");
    assert!(wait_smallest < 0.9 * wait_arrival, "smallest area first should wait clearly less than arrival order");

    let [fixed, surge] = run_points(opts, "surge.toml")?;
    let (price, changes) = ("providers.cluster.price_mean", "providers.cluster.price_changes");
    println!("mean price: fixed {:.4} G$, surge {:.4} G$ ({:.0} changes)", fixed[price], surge[price], surge[changes]);
    assert_eq!((fixed[price], fixed[changes]), (0.01, 0.0), "the fixed price stays put");
    assert!(surge[changes] > 0.0 && surge[price] > 0.01, "the price should surge above the configured one");

    let [greedy, earliest] = run_points(opts, "meta_policy.toml")?;
    let (response, spending) = ("jobs.response", "metabrokers.mb.spending");
    println!(
        "greedy: mean response {:.0} s, spending {:.1} G$; earliest finish: mean response {:.0} s, spending {:.1} G$",
        greedy[response], greedy[spending], earliest[response], earliest[spending]
    );
    assert_eq!((greedy["jobs.completed"], earliest["jobs.completed"]), (10.0, 10.0), "every job is placed");
    assert!(earliest[response] < greedy[response], "earliest finish should respond sooner than greedy");
    // Every job goes to the fast site instead of the cheap one: three times the price for half the time.
    let ratio = earliest[spending] / greedy[spending];
    assert!((ratio - 1.5).abs() < 1e-9, "earliest finish should pay 3/2 of what greedy pays, found {ratio}");

    let [cheapest, earliest] = run_points(opts, "tradeoff_policy.toml")?;
    println!(
        "ch5, greedy-ctt at δ = 1: mean response {:.0} s, spending {:.1} G$; earliest finish: mean response {:.0} s, \
         spending {:.1} G$",
        cheapest[response], cheapest[spending], earliest[response], earliest[spending]
    );
    assert_eq!((cheapest["jobs.completed"], earliest["jobs.completed"]), (40.0, 40.0), "every job is placed");
    assert!(earliest[response] < cheapest[response], "earliest finish should respond sooner than the cheapest window");
    assert!(earliest[spending] > cheapest[spending], "and pay more for it");

    let [fcfs, earliest] = run_points(opts, "queue_policy.toml")?;
    println!(
        "ch7, fcfs: mean response {:.0} s, spending {:.1} G$; earliest finish: mean response {:.0} s, spending {:.1} G$",
        fcfs[response], fcfs[spending], earliest[response], earliest[spending]
    );
    assert_eq!((fcfs["jobs.completed"], earliest["jobs.completed"]), (10.0, 10.0), "every job is placed");
    assert!(earliest[response] < fcfs[response], "earliest finish should respond sooner than the first queue");
    assert!(earliest[spending] > fcfs[spending], "and pay more for it");

    let [steady, swinging] = run_points(opts, "diurnal.toml")?;
    let (wait_steady, wait_swinging) = (steady["jobs.wait"], swinging["jobs.wait"]);
    println!("mean wait: steady arrivals {wait_steady:.0} s, a daily swing of 90% {wait_swinging:.0} s");
    let ratio = swinging["jobs.total"] / steady["jobs.total"];
    assert!((ratio - 1.0).abs() < 0.1, "the same mean load, found {ratio} times the jobs");
    assert!(wait_swinging > 1.5 * wait_steady, "the overloaded peaks should make jobs wait clearly longer");
    Ok(())
}
