//! A long trace in bounded memory: `gridmarket run` replays a 1,000,000-job Lublin–Feitelson trace (SWF) under EASY
//! backfilling on 128 PEs, one replication, every output written, within [`PEAK_MIB`] of peak resident memory. The
//! bound is linear in the jobs, not constant: the broker tracks, and `jobs.csv` reports, every job of the run.
//!
//! Ignored in CI (minutes of work): `cargo test --release --test trace -- --ignored`.

use std::path::Path;
use std::process::Command;

/// The bound [MiB]: 40 MiB for the process and 500 bytes per job (measured: 461 MiB).
const PEAK_MIB: f64 = 40.0 + 500.0 * 1e6 / 1_048_576.0;

fn gridmarket(args: &[&str], dir: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_gridmarket")).args(args).current_dir(dir).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
#[ignore = "a million-job run: `cargo test --release --test trace -- --ignored`"]
fn a_million_job_trace_runs_in_bounded_memory() {
    let dir = std::env::temp_dir().join(format!("gridmarket-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let generate =
        ["workload", "generate", "lublin", "--jobs", "1000000", "--param", "max-nodes=128", "-o", "lublin.swf"];
    gridmarket(&generate, &dir);
    let scenario = "name = \"million-trace\"\nseed = 1\nreplications = 1\nruntime = \"inline\"\n\n[workloads.trace]\n\
                    model = \"swf\"\nfile = \"lublin.swf\"\n\n[providers.cluster]\npes = 128\nscheduler = \"easy\"\n\n\
                    [brokers.user]\nworkload = \"trace\"\nsubmit-to = \"cluster\"\n";
    std::fs::write(dir.join("easy.toml"), scenario).unwrap();
    let printed = gridmarket(&["run", "easy.toml", "--out", "out", "--quiet", "--jobs", "1", "--usage"], &dir);
    let rows = std::fs::read_to_string(dir.join("out/p0/r0/jobs.csv")).unwrap().lines().count();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(rows, 1_000_001, "a header and a row per job");
    let usage = printed.lines().find(|l| l.starts_with("usage:")).expect("the usage line");
    let peak: f64 = usage.split("peak memory ").nth(1).and_then(|s| s.split(' ').next()).unwrap().parse().unwrap();
    assert!(peak <= PEAK_MIB, "{usage}: above {PEAK_MIB:.0} MiB");
}
