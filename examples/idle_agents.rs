//! Example: memory footprint of 100,000 idle agents in one simulation.
//!
//! This example demonstrates in particular:
//! * building a large simulation with [`SimBuilder`] on the actix runtime (every agent an actor) and inline,
//! * running it (every agent's `start` runs, nothing else happens),
//! * reading the resident set size (Linux `/proc/self/status`), which must stay within 200 MiB.
//!
//! Run: `cargo run --release --example idle_agents [-- N]`

use agents::sim::{Agent, Ctx, End, Envelope, GridMarket, Runtime, SimBuilder, SimTime};

/// Does nothing: the cost measured is the kernel's per-agent overhead.
struct Idle;

impl Agent<GridMarket> for Idle {
    fn handle(&mut self, _: &Envelope, _: &mut Ctx<'_>) {}
}

fn resident_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(f64::NAN);
    kib / 1024.0
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let runtime = match std::env::args().nth(2).as_deref() {
        Some("inline") => Runtime::Inline,
        _ => Runtime::Actix { threads: 1 },
    };
    let before = resident_mib();
    let mut b = SimBuilder::new(1);
    for i in 0..n {
        b.add(&format!("idle-{i}"), "idle", Idle).expect("unique names");
    }
    b.runtime(runtime);
    let mut sim = b.build().expect("valid simulation");
    let out = sim.run(End::Until(SimTime::new(1.0).expect("valid time"))).expect("idle run");
    let after = resident_mib();
    println!(
        "{n} idle agents ({runtime:?}): resident {after:.1} MiB (process start {before:.1} MiB, {:.0} B/agent), now t={}",
        (after - before) * 1024.0 * 1024.0 / n as f64,
        out.now
    );
    assert!(after <= 200.0, "100,000 idle agents must stay within 200 MiB resident");
}
