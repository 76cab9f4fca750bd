//! Example: the scalability of the market exchange (Garg 2010, *Meta Scheduling for Market-Oriented Grid and Utility
//! Computing*, §8.6): 50,000 requests bidding in 10, 100, 1,000 and 10,000 call markets, the whole path of
//! `scenarios/garg-ch8/mandi.toml` (registration, discovery, bids, clearing, reservations, tickets, the jobs run),
//! on the inline runtime.
//!
//! For each number of markets it prints the wall time of one run (building the agents, running, measuring), the
//! messages delivered, deliveries and requests per second, the resident memory once the scenario is loaded and the
//! peak. Each count runs in a child process of this example (`exchange_scale N`), so that each peak (`VmHWM` of
//! `/proc/self/status`) is that count's alone. The thesis's prototype took about 5 s at 10,000 auctions, and 32 MB
//! at 1,000 auctions, 56 MB at 10,000.
//!
//! Run: `cargo run --release --example exchange_scale` (`-- N`: one count, its raw figures).

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use gridmarket::runner::run::run;
use gridmarket::scenario::{LoadOptions, Study};

const SCENARIO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/garg-ch8/mandi.toml");
const SWEPT: &str = "exchanges.mandi.markets.count";
const COUNTS: [i64; 4] = [10, 100, 1_000, 10_000];

/// A line of `/proc/self/status` in MiB (Linux; NaN elsewhere).
fn status_mib(key: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(f64::NAN);
    kib / 1024.0
}

/// One run with `markets` call markets; prints `wall_s deliveries requests loaded_mib peak_mib`.
fn child(markets: i64) {
    let study = Study::load(Path::new(SCENARIO), &LoadOptions::default()).expect("the scenario loads");
    let point = study
        .points
        .iter()
        .find(|p| p.assignments.iter().any(|(k, v)| k == SWEPT && v.as_integer() == Some(markets)))
        .unwrap_or_else(|| panic!("no point with {markets} markets"));
    let loaded = status_mib("VmRSS:");
    let start = Instant::now();
    let result = run(&point.plan, 0, &Arc::new(AtomicBool::new(false)), None).expect("the run");
    let wall = start.elapsed().as_secs_f64();
    let requests = result.measured.metrics["jobs.total"];
    println!("{wall} {} {requests} {loaded} {}", result.outcome.delivered, status_mib("VmHWM:"));
}

fn main() {
    if let Some(markets) = std::env::args().nth(1) {
        return child(markets.parse().expect("a number of markets"));
    }
    let me = std::env::current_exe().expect("this example's path");
    let head = ["markets", "wall", "deliveries", "deliveries/s", "requests/s", "RSS loaded", "peak RSS"];
    let [a, b, c, d, e, f, g] = head;
    println!("{a:>7}  {b:>9}  {c:>10}  {d:>12}  {e:>10}  {f:>10}  {g:>9}");
    for markets in COUNTS {
        let out = Command::new(&me).arg(markets.to_string()).output().expect("a child run");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let line = String::from_utf8_lossy(&out.stdout);
        let v: Vec<f64> = line.split_whitespace().map(|x| x.parse().expect("a number")).collect();
        let (wall, delivered, requests, loaded, peak) = (v[0], v[1], v[2], v[3], v[4]);
        println!(
            "{markets:>7}  {:>6.1} ms  {delivered:>10}  {:>10.2} M  {:>8.0} k  {loaded:>6.1} MiB  {peak:>5.1} MiB",
            wall * 1e3,
            delivered / wall / 1e6,
            requests / wall / 1e3,
        );
    }
}
