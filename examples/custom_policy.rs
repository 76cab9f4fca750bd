//! Example: a provider queue order and a meta-broker policy of your own, each one type plus one registration line,
//! run on scenarios written in the program and checked (`docs/writing-a-policy.md` walks through it).
//!
//! This example demonstrates in particular:
//! - a queue order (`QueueOrder`): the waiting job of smallest area (PEs × estimate) first, which a provider selects
//!   with `queue-order = "smallest-area-first"`;
//! - a meta-broker policy (`MetaPolicy`): each job on the site where it finishes first, whatever the price, which a
//!   meta-broker selects with `policy = "earliest-finish"`;
//! - registering both (`Registry::with_queue_order`, `Registry::with_meta_policy`) without editing gridmarket;
//! - checking the outcome: smallest area first waits less than arrival order, and earliest finish responds sooner
//!   and costs more than greedy (the cheapest site).
//!
//! ```text
//!   brokers ──Submit──▶ cluster (EASY backfilling, queue in "smallest-area-first" order)
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
use gridmarket::scenario::{LoadOptions, Study};

// ANCHOR: queue-order
use agents::provider::scheduler::{QueueOrder, QueuedJob};
use agents::sim::SimTime;

/// Smallest area first: the waiting job that asks for the fewest PE-seconds (PEs × runtime estimate) goes first, so
/// small jobs overtake wide or long ones.
pub struct SmallestAreaFirst;

impl QueueOrder for SmallestAreaFirst {
    fn name(&self) -> &'static str {
        "smallest-area-first"
    }

    fn about(&self) -> &'static str {
        "the fewest PE-seconds (PEs × runtime estimate) first"
    }

    fn rank(&self, job: &QueuedJob, _now: SimTime) -> f64 {
        f64::from(job.pes) * job.estimate
    }
}
// ANCHOR_END: queue-order

// ANCHOR: meta-policy
use agents::metabroker::{App, Candidate, MetaPolicy};

/// Earliest finish: each job on the site where it would finish first, whatever it costs there (on a tie, the
/// cheaper site: candidates come cheapest first, and `min_by` keeps the first of equals).
pub struct EarliestFinish;

impl MetaPolicy for EarliestFinish {
    fn name(&self) -> &'static str {
        "earliest-finish"
    }

    fn about(&self) -> &'static str {
        "each job on the site where it finishes first, whatever the price"
    }

    fn choose<'c>(&self, _app: &App, candidates: &'c [Candidate]) -> Option<&'c Candidate> {
        candidates.iter().min_by(|a, b| a.finish.total_cmp(&b.finish))
    }
}
// ANCHOR_END: meta-policy

/// A cluster under EASY backfilling, its queue by arrival and by smallest area first, on the same jobs.
const QUEUE_SCENARIO: &str = r#"
name = "queue-order"
seed = 7
replications = 4

[workloads.users]
model = "lublin"
jobs = 500
max-nodes = 64
mean-interarrival = 600

[providers.cluster]
pes = 64
scheduler = "easy"
queue-order = "smallest-area-first"

[brokers.user]
count = 20
workload = "users"
submit-to = "cluster"

[sweep]
"providers.cluster.queue-order" = ["arrival", "smallest-area-first"]
"#;

/// Ten jobs of about five tasks through a meta-broker, greedy (the cheapest site) and earliest finish, on a fast
/// dear site and a slow cheap one; either site can take every job at once.
const MARKET_SCENARIO: &str = r#"
name = "meta-policy"
seed = 3
replications = 4
runtime = "inline"

[workloads.jobs]
model = "metabroker"
jobs = 10
deadline = "relaxed"

[providers.fast]
pes = 64
speed = 2.0
price = 0.03

[providers.cheap]
pes = 64
speed = 1.0
price = 0.01

[metabrokers.mb]
policy = "earliest-finish"
providers = ["*"]

[brokers.users]
count = 10
workload = "jobs"
metabroker = "mb"

[sweep]
"metabrokers.mb.policy" = ["greedy", "earliest-finish"]
"#;

/// Runs every point of `scenario` and returns, per point, the mean of each metric over its replications.
fn run_points(registry: &Registry, name: &str, scenario: &str) -> anyhow::Result<Vec<BTreeMap<String, f64>>> {
    let opts = LoadOptions { registry: registry.clone(), ..LoadOptions::default() };
    let study = Study::parse(Path::new(name), scenario, &opts)?;
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
    Ok(means)
}

fn main() -> anyhow::Result<()> {
    // ANCHOR: registry
    let registry = Registry::standard().with_queue_order(&SmallestAreaFirst).with_meta_policy(&EarliestFinish);
    // ANCHOR_END: registry

    let [arrival, smallest] = <[_; 2]>::try_from(run_points(&registry, "queue-order.toml", QUEUE_SCENARIO)?)
        .map_err(|points| anyhow::anyhow!("expected 2 points, found {}", points.len()))?;
    let (wait_arrival, wait_smallest) = (arrival["jobs.wait"], smallest["jobs.wait"]);
    println!("mean wait: arrival order {wait_arrival:.0} s, smallest area first {wait_smallest:.0} s");
    assert_eq!(arrival["jobs.completed"], smallest["jobs.completed"], "the same jobs complete");
    assert!(wait_smallest < 0.9 * wait_arrival, "smallest area first should wait clearly less than arrival order");

    let [greedy, earliest] = <[_; 2]>::try_from(run_points(&registry, "meta-policy.toml", MARKET_SCENARIO)?)
        .map_err(|points| anyhow::anyhow!("expected 2 points, found {}", points.len()))?;
    println!(
        "greedy: response {:.0} s, spending {:.1} G$; earliest finish: response {:.0} s, spending {:.1} G$",
        greedy["jobs.response"],
        greedy["metabrokers.mb.spending"],
        earliest["jobs.response"],
        earliest["metabrokers.mb.spending"]
    );
    assert_eq!(greedy["jobs.completed"], 10.0, "greedy places every job");
    assert_eq!(earliest["jobs.completed"], 10.0, "earliest finish places every job");
    // Every job runs twice as fast on the fast site, at a price three times the cheap one's.
    assert!(earliest["jobs.response"] < greedy["jobs.response"], "earliest finish responds sooner");
    let ratio = earliest["metabrokers.mb.spending"] / greedy["metabrokers.mb.spending"];
    assert!((ratio - 1.5).abs() < 1e-9, "earliest finish pays 3/2 of greedy (price × 3, time ÷ 2), found {ratio}");
    Ok(())
}
