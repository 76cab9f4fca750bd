//! Command-line tests: the built `gridmarket` binary run as a user runs it, from the repository root.
//!
//! - every scenario in `tests/scenarios/broken/` is refused by `validate` (exit 78) with exactly the message in the
//!   `.err` file next to it (`GRIDMARKET_BLESS=1 cargo test --test cli` rewrites the `.err` files after a deliberate
//!   change of wording; read the diff before committing it);
//! - `run` on `tests/scenarios/tiny/` writes the documented files, and its results do not depend on `--jobs`, are
//!   the same for the same seed, change with `--seed` and `--set`; each point's time series are charted (SVG);
//! - `--resume` re-runs only the runs that had not finished, after a simulated and after a real (SIGINT)
//!   interruption;
//! - targets and sanity checks are reported apart, with pass / FAIL / inconclusive on stdout, in `expectations.csv`,
//!   `checks.csv` and `report.md` (an overall count at its top, each chart once, with its targets drawn), and set
//!   the exit code (`--strict`: inconclusive fails too);
//! - a hand-made CSV job list runs as computed by hand, in `schedule.csv` and in the SWF of `--schedule-swf`;
//! - `reproduce --quick`, `list`, `schema` and `workload generate|stats|convert`, with gzip-compressed traces.
//!
//! Every test writes into its own folder under the system's temporary directory and removes it when it passes.
//! Commands run with a time limit and, on Linux, a memory limit: a bad input whose check breaks fails its test
//! quickly rather than filling the machine.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The tiny sweep: 3 scheduler policies × 3 replications, 40 jobs per broker group.
const TINY: &str = "tests/scenarios/tiny/tiny.toml";
/// One target that cannot hold, two replications.
const TINY_FAIL: &str = "tests/scenarios/tiny-fail/tiny-fail.toml";
const BROKEN: &str = "tests/scenarios/broken";
/// Exit code of a refused scenario.
const EXIT_CONFIG: i32 = 78;

/// The repository root: every command runs there, so paths in messages are as a user sees them.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Virtual memory a command may use [KiB] (Linux): a tenth of it is plenty for every test.
const MEMORY_KIB: u32 = 1 << 20;

fn gridmarket() -> Command {
    let bin = env!("CARGO_BIN_EXE_gridmarket");
    let mut c = if cfg!(target_os = "linux") {
        // `exec` keeps the process id, which the Ctrl-C test signals.
        let mut sh = Command::new("sh");
        sh.arg("-c").arg(format!("ulimit -v {MEMORY_KIB}; exec \"$0\" \"$@\"")).arg(bin);
        sh
    } else {
        Command::new(bin)
    };
    c.current_dir(root()).env_remove("RUST_LOG").env_remove("RUST_BACKTRACE").stdin(Stdio::null());
    c
}

/// Runs `gridmarket ARGS` to completion, within two minutes.
fn run(args: &[&str]) -> Output {
    run_within(args, Duration::from_secs(120))
}

/// Runs `gridmarket ARGS`, killing it and failing the test if it takes longer than `limit`.
fn run_within(args: &[&str], limit: Duration) -> Output {
    let mut child = gridmarket()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the gridmarket binary runs");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped")));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for gridmarket") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("gridmarket {args:?} took more than {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Output { status, stdout: stdout.join().expect("stdout"), stderr: stderr.join().expect("stderr") }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts the exit code, showing both streams when it is not the one expected.
#[track_caller]
fn assert_exit(o: &Output, code: i32, what: &str) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "{what}: exit status {:?}\n--- stdout\n{}--- stderr\n{}",
        o.status,
        stdout(o),
        stderr(o)
    );
}

/// A fresh folder under the temporary directory, removed on drop unless the test failed.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("gridmarket-cli-{}-{n}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("creating a temporary folder");
        TempDir(dir)
    }

    fn join(&self, p: &str) -> PathBuf {
        self.0.join(p)
    }

    /// `self/p` as a command-line argument.
    fn arg(&self, p: &str) -> String {
        self.join(p).to_string_lossy().into_owned()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

fn read_string(path: &Path) -> String {
    String::from_utf8(read(path)).unwrap_or_else(|e| panic!("{} is not UTF-8: {e}", path.display()))
}

/// The `p<i>/r<j>` run folders under `out`, sorted.
fn run_dirs(out: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for p in sorted_entries(out).into_iter().filter(|p| is_numbered(p, 'p')) {
        dirs.extend(sorted_entries(&p).into_iter().filter(|r| is_numbered(r, 'r')));
    }
    dirs
}

fn is_numbered(path: &Path, prefix: char) -> bool {
    path.is_dir()
        && path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix(prefix))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("a folder entry").path())
        .collect();
    v.sort();
    v
}

/// The study files and every run's data files, which must not depend on `--jobs` (`run.json` records the
/// command line, so it is compared without it by [`run_json_without_command`]).
fn result_files(out: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> =
        ["points.csv", "runs.csv", "summary.csv", "summary.json", "differences.csv", "expectations.csv", "checks.csv"]
            .iter()
            .map(|f| out.join(f))
            .collect();
    for dir in run_dirs(out) {
        files.extend(["jobs.csv", "timeseries.csv", "summary.json"].iter().map(|f| dir.join(f)));
    }
    files
}

fn run_json_without_command(dir: &Path) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_slice(&read(&dir.join("run.json"))).expect("run.json is JSON");
    v.as_object_mut().expect("run.json is an object").remove("command");
    v
}

/// Asserts that two output folders hold the same results, byte for byte.
#[track_caller]
fn assert_same_results(a: &Path, b: &Path) {
    let (fa, fb) = (result_files(a), result_files(b));
    let rel = |f: &PathBuf, base: &Path| f.strip_prefix(base).unwrap().to_path_buf();
    assert_eq!(
        fa.iter().map(|f| rel(f, a)).collect::<Vec<_>>(),
        fb.iter().map(|f| rel(f, b)).collect::<Vec<_>>(),
        "the two runs wrote different files"
    );
    for (x, y) in fa.iter().zip(&fb) {
        assert_same_bytes(x, y);
    }
    for (x, y) in run_dirs(a).iter().zip(run_dirs(b)) {
        assert_eq!(run_json_without_command(x), run_json_without_command(&y), "{}/run.json", x.display());
    }
}

/// Asserts that two files are equal, byte for byte, showing the first lines that differ.
#[track_caller]
fn assert_same_bytes(a: &Path, b: &Path) {
    let (x, y) = (read(a), read(b));
    if x != y {
        let (x, y) = (String::from_utf8_lossy(&x), String::from_utf8_lossy(&y));
        let diff: Vec<String> = x
            .lines()
            .zip(y.lines())
            .enumerate()
            .filter(|(_, (l, r))| l != r)
            .take(3)
            .map(|(i, (l, r))| format!("line {}:\n  -{l}\n  +{r}", i + 1))
            .collect();
        panic!(
            "{} and {} differ ({} and {} lines):\n{}",
            a.display(),
            b.display(),
            x.lines().count(),
            y.lines().count(),
            diff.join("\n")
        );
    }
}

/// `point → mean` of `metric` in a `summary.csv` (labels of the tiny sweep contain no comma).
fn means(summary_csv: &Path, metric: &str) -> BTreeMap<usize, f64> {
    let text = read_string(summary_csv);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).expect("a summary.csv column");
    let (m, mean) = (column("metric"), column("mean"));
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f.get(m) == Some(&metric))
        .map(|f| (f[0].parse().expect("a point number"), f[mean].parse().expect("a mean")))
        .collect()
}

/// A line-by-line comparison of an expected and an actual text, for failure messages.
fn line_diff(expected: &str, actual: &str) -> String {
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let mut out = String::new();
    for i in 0..e.len().max(a.len()) {
        match (e.get(i), a.get(i)) {
            (Some(x), Some(y)) if x == y => out.push_str(&format!("   {x}\n")),
            (x, y) => {
                if let Some(x) = x {
                    out.push_str(&format!("  -{x}\n"));
                }
                if let Some(y) = y {
                    out.push_str(&format!("  +{y}\n"));
                }
            }
        }
    }
    if expected.ends_with('\n') != actual.ends_with('\n') {
        out.push_str("  (the final newline differs)\n");
    }
    out
}

#[test]
fn every_broken_scenario_is_refused_with_its_exact_message() {
    let bless = std::env::var_os("GRIDMARKET_BLESS").is_some();
    let mut scenarios = Vec::new();
    let mut stale = Vec::new();
    for path in sorted_entries(&root().join(BROKEN)) {
        match path.extension().and_then(|e| e.to_str()) {
            Some("toml") => scenarios.push(path),
            Some("err") if !path.with_extension("toml").exists() => stale.push(path.display().to_string()),
            _ => {}
        }
    }
    assert!(stale.is_empty(), ".err files without a scenario: {stale:?}");
    assert!(scenarios.len() >= 12, "only {} broken scenarios in {BROKEN}", scenarios.len());
    let mut failures = Vec::new();
    for path in &scenarios {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let arg = format!("{BROKEN}/{name}");
        let o = run_within(&["validate", &arg], Duration::from_secs(30));
        let actual = stderr(&o);
        let err_file = path.with_extension("err");
        if bless {
            std::fs::write(&err_file, &actual).expect("writing the .err file");
        }
        if o.status.code() != Some(EXIT_CONFIG) {
            failures.push(format!("{arg}: exit status {:?}, expected {EXIT_CONFIG}\n{actual}", o.status));
            continue;
        }
        if !actual.starts_with(&format!("error: {arg}")) {
            failures.push(format!("{arg}: the message does not start with `error: {arg}`:\n{actual}"));
        }
        match std::fs::read_to_string(&err_file) {
            Ok(expected) if expected == actual => {}
            Ok(expected) => failures.push(format!(
                "{arg}: stderr differs from {BROKEN}/{} (- expected, + actual):\n{}",
                err_file.file_name().unwrap().to_string_lossy(),
                line_diff(&expected, &actual)
            )),
            Err(e) => failures.push(format!("{arg}: cannot read {}: {e}; stderr was:\n{actual}", err_file.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} broken scenarios gave another message (GRIDMARKET_BLESS=1 rewrites the .err files):\n\n{}",
        failures.len(),
        scenarios.len(),
        failures.join("\n")
    );
}

#[test]
fn run_refuses_a_broken_scenario_with_the_same_message_as_validate() {
    let out = TempDir::new("run-broken");
    let file = format!("{BROKEN}/negative-pes.toml");
    let o = run(&["run", &file, "--quiet", "--out", &out.arg("out")]);
    assert_exit(&o, EXIT_CONFIG, "run on a broken scenario");
    assert_eq!(stderr(&o), read_string(&root().join(BROKEN).join("negative-pes.err")));
    assert!(!out.join("out").exists(), "nothing is written for a refused scenario");
}

#[test]
fn validate_accepts_the_quickstart_and_the_test_scenarios() {
    let o = run(&["validate", "scenarios/quickstart.toml", TINY, TINY_FAIL]);
    assert_exit(&o, 0, "validate");
    let text = stdout(&o);
    assert!(text.contains("scenarios/quickstart.toml: ok"), "{text}");
    assert!(text.contains(&format!("{TINY}: ok (3 sweep point(s), 9 run(s))")), "{text}");
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
}

#[test]
fn validate_checks_every_file_and_reports_every_refusal() {
    let (bad, worse) = (format!("{BROKEN}/negative-pes.toml"), format!("{BROKEN}/toml-syntax.toml"));
    let o = run(&["validate", &bad, TINY, &worse]);
    assert_exit(&o, EXIT_CONFIG, "validate with two broken files");
    assert!(stdout(&o).contains(&format!("{TINY}: ok")), "{}", stdout(&o));
    let expected = [&bad, &worse].map(|f| read_string(&root().join(f.replace(".toml", ".err"))));
    assert_eq!(stderr(&o), expected.concat());
}

#[test]
fn every_shipped_scenario_validates_and_profiles_are_not_families() {
    let mut files = Vec::new();
    for family in sorted_entries(&root().join("scenarios")).into_iter().filter(|p| p.is_dir()) {
        if family.file_name().is_some_and(|n| n == "profiles") {
            continue;
        }
        files.extend(sorted_entries(&family).into_iter().filter(|p| p.extension().is_some_and(|e| e == "toml")));
    }
    assert!(files.len() >= 10, "{files:?}");
    let args: Vec<String> = files.iter().map(|f| f.strip_prefix(root()).unwrap().display().to_string()).collect();
    let mut all = vec!["validate"];
    all.extend(args.iter().map(String::as_str));
    let o = run(&all);
    assert_exit(&o, 0, "validate every shipped scenario");
    // The shared profiles are merged in (salehi-ch3 and garg-ch3 take their providers from them).
    assert!(stdout(&o).contains("scenarios/salehi-ch3/be.toml: ok (20 sweep point(s), 200 run(s))"), "{}", stdout(&o));
    let o = run(&["list"]);
    assert_exit(&o, 0, "list");
    assert!(!stdout(&o).contains("\n  profiles ("), "the shared profiles are no family: {}", stdout(&o));
    assert!(stdout(&o).contains("\n  garg-ch3 ("), "{}", stdout(&o));
}

#[test]
fn run_writes_the_documented_files_and_prints_the_summary() {
    let tmp = TempDir::new("run");
    let out = tmp.join("out");
    let o = run(&["run", TINY, "--quiet", "--jobs", "2", "--out", &tmp.arg("out")]);
    assert_exit(&o, 0, "run");
    let text = stdout(&o);
    for needle in [
        "metric",
        "providers.big.scheduler=fcfs",
        "providers.big.scheduler=easy",
        "providers.big.scheduler=conservative",
        "completed",
        "utilisation",
        "(3 replications per point",
        &format!("outputs: {}", out.display()),
    ] {
        assert!(text.contains(needle), "the summary lacks `{needle}`:\n{text}");
    }

    let study_files = ["points.csv", "runs.csv", "summary.csv", "summary.json", "differences.csv", "expectations.csv"];
    for f in study_files.iter().chain(&["checks.csv", "report.md"]) {
        assert!(out.join(f).is_file(), "{f} is missing");
    }
    assert_eq!(
        read_string(&out.join("points.csv")),
        "point,label,providers.big.scheduler\n0,providers.big.scheduler=fcfs,fcfs\n\
         1,providers.big.scheduler=easy,easy\n2,providers.big.scheduler=conservative,conservative\n"
    );
    let summary = read_string(&out.join("summary.csv"));
    assert!(summary.starts_with("point,label,providers.big.scheduler,metric,n,mean,std,ci95,lo,hi\n"), "{summary}");
    assert!(summary.contains("\n2,providers.big.scheduler=conservative,conservative,jobs.total,3,80,"), "{summary}");
    assert_eq!(means(&out.join("summary.csv"), "jobs.total"), BTreeMap::from([(0, 80.0), (1, 80.0), (2, 80.0)]));
    let json: serde_json::Value = serde_json::from_slice(&read(&out.join("summary.json"))).unwrap();
    assert_eq!(json["scenario"], "tiny");
    assert_eq!(json["points"].as_array().map(Vec::len), Some(3));
    assert_eq!(json["points"][1]["metrics"]["jobs.total"]["n"], 3);
    let differences = read_string(&out.join("differences.csv"));
    assert!(differences.lines().skip(1).any(|l| l.starts_with("1,")), "{differences}");
    // The tidy table: every replication's value, whose mean is the summary's.
    let runs = read_string(&out.join("runs.csv"));
    assert!(runs.starts_with("point,providers.big.scheduler,replication,seed,metric,value\n"), "{runs}");
    let utilisation: Vec<(String, f64)> = runs
        .lines()
        .filter(|l| l.starts_with("2,") && l.contains(",utilisation,"))
        .map(|l| l.rsplit_once(',').map(|(head, v)| (head.to_string(), v.parse().unwrap())).unwrap())
        .collect();
    assert_eq!(utilisation.len(), 3, "one row per replication: {runs}");
    assert!(utilisation[1].0.starts_with("2,conservative,1,"), "{utilisation:?}");
    let mean = utilisation.iter().map(|u| u.1).sum::<f64>() / 3.0;
    assert!((mean - means(&out.join("summary.csv"), "utilisation")[&2]).abs() < 1e-12);
    let report = read_string(&out.join("report.md"));
    assert!(report.starts_with("# Study: tiny\n\n**Overall: "), "{report}");
    assert!(report.contains("## tiny\n") && report.contains("providers.big.scheduler=easy"), "{report}");
    // The state over time as mean ± CI bands: a chart per quantity, 101 samples per point and quantity.
    for quantity in ["utilisation", "queued", "price"] {
        let chart = format!("tiny-{quantity}-over-time.svg");
        assert!(report.contains(&format!("![{chart}]({chart})")) && out.join(&chart).is_file(), "{report}");
    }
    let series = read_string(&out.join("series.csv"));
    assert!(series.starts_with("point,providers.big.scheduler,quantity,t,n,mean,ci95,lo,hi\n0,fcfs,utilisation,0,3,"));
    assert_eq!(series.lines().count(), 1 + 3 * 3 * 101, "{series}");

    let dirs = run_dirs(&out);
    assert_eq!(dirs.len(), 9, "3 points × 3 replications: {dirs:?}");
    for dir in &dirs {
        for f in ["jobs.csv", "timeseries.csv", "summary.json", "run.json"] {
            assert!(dir.join(f).is_file(), "{}/{f} is missing", dir.display());
        }
    }
    let jobs = read_string(&out.join("p0/r0/jobs.csv"));
    assert!(
        jobs.starts_with(
            "id,source_id,owner,group,submit,start,end,site,pes,runtime,elapsed,deadline,outcome,cost,energy,carbon,wait,response,reason\n"
        ),
        "{jobs}"
    );
    assert_eq!(jobs.lines().count(), 1 + 80, "one row per job");
    for row in jobs.lines().skip(1).map(|l| l.split(',').collect::<Vec<_>>()) {
        let (start, end, elapsed) = (row[5].parse::<f64>(), row[6].parse::<f64>(), row[10].parse::<f64>());
        if let (Ok(s), Ok(e), Ok(x)) = (start, end, elapsed) {
            assert!((e - s - x).abs() < 1e-6, "elapsed is end − start: {row:?}");
        }
    }
    let timeseries = read_string(&out.join("p0/r0/timeseries.csv"));
    assert!(timeseries.starts_with("t,agent,busy_pes,utilisation,queued,price,requests,contention\n"), "{timeseries}");
    assert!(timeseries.contains(",big,") && timeseries.contains(",small,"), "both providers are sampled");
    let run_json: serde_json::Value = serde_json::from_slice(&read(&out.join("p2/r1/run.json"))).unwrap();
    assert_eq!(run_json["point"], 2);
    assert_eq!(run_json["replication"], 1);
    assert_eq!(run_json["seed"], 12, "replication r runs with seed + r");
    assert_eq!(run_json["label"], "providers.big.scheduler=conservative");
    assert!(run_json["command"].as_str().is_some_and(|c| c.contains("--jobs 2")), "{run_json}");
}

#[test]
fn run_charts_the_time_series_of_each_point() {
    let tmp = TempDir::new("charts");
    let o = run(&["run", TINY, "--quiet", "--replications", "2", "--out", &tmp.arg("out")]);
    assert_exit(&o, 0, "run");
    for point in ["p0", "p1", "p2"] {
        for (file, axis) in [("utilisation.svg", ">utilisation (share, 0–1)<"), ("queued.svg", ">jobs queued (count)<")]
        {
            let svg = read_string(&tmp.join(&format!("out/{point}/{file}")));
            assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"), "{point}/{file}");
            // A step line per provider, time in seconds, and what the lines are in the title.
            assert_eq!(svg.matches("<polyline").count(), 2, "{point}/{file}: one line per provider");
            for needle in [">big<", ">small<", ">time [s]<", axis, "replication 0 (seed 11)"] {
                assert!(svg.contains(needle), "{point}/{file} lacks `{needle}`");
            }
        }
    }
    assert!(read_string(&tmp.join("out/p2/utilisation.svg")).contains("providers.big.scheduler=conservative"));
    // Beyond 8 providers, a line per provider group: 9 here.
    let grouped = ["--set", "providers.small.count=8", "--set", "brokers.bob.submit-to=small-3"];
    let o =
        run(&[&["run", TINY, "--quiet", "--replications", "1", "--out", &tmp.arg("grouped")], &grouped[..]].concat());
    assert_exit(&o, 0, "run with 9 providers");
    let svg = read_string(&tmp.join("grouped/p0/utilisation.svg"));
    assert_eq!(svg.matches("<polyline").count(), 2, "{svg}");
    for needle in ["per provider group", ">big (1 provider)<", ">small (8 providers)<"] {
        assert!(svg.contains(needle), "lacks `{needle}`");
    }
    // Without time series, no charts of them.
    let o = run(&["run", TINY, "--quiet", "--set", "outputs.timeseries=false", "--out", &tmp.arg("none")]);
    assert_exit(&o, 0, "run without time series");
    assert!(!tmp.join("none/p0/utilisation.svg").exists() && !tmp.join("none/p0/queued.svg").exists());
}

#[test]
fn run_reports_targets_and_sanity_checks_apart_and_exits_by_their_verdicts() {
    let tmp = TempDir::new("verdicts");
    let o = run(&["run", TINY, "--quiet", "--out", &tmp.arg("out")]);
    assert_exit(&o, 0, "run: inconclusive targets do not fail");
    let text = stdout(&o);
    let targets = text.find("3 of 6 targets pass, 0 FAIL, 3 inconclusive\ntarget ").expect("the targets' tally");
    let checks = text.find("4 of 4 sanity checks pass, 0 FAIL, 0 inconclusive\ncheck ").expect("the checks' tally");
    assert!(targets < checks, "{text}");
    let row = |start: &str, verdict: &str| text.lines().any(|l| l.starts_with(start) && l.ends_with(verdict));
    assert!(row("utilisation = 0.6 ± 0.4 at providers.big.scheduler=fcfs ", "  pass"), "{text}");
    assert!(row("utilisation = 0.6 ± 0.05 at providers.big.scheduler=fcfs ", "  inconclusive"), "{text}");
    assert!(row("jobs.total: fcfs ≥ easy ≥ conservative ", "  pass"), "{text}");

    let expectations = read_string(&tmp.join("out/expectations.csv"));
    assert!(expectations.starts_with("target,source,tolerance,measured,verdict,conflict,class\n"), "{expectations}");
    // The last columns: `conflict`, empty for a scored target, and its class.
    assert!(expectations.lines().skip(1).all(|l| l.ends_with(",,target")), "{expectations}");
    let verdicts: Vec<&str> = expectations.lines().skip(1).map(|l| l.rsplit(',').nth(2).unwrap()).collect();
    assert_eq!(verdicts, ["pass", "pass", "pass", "inconclusive", "inconclusive", "inconclusive"]);
    assert!(expectations.contains(",\"narrower than the 95% CI of a few replications, so inconclusive\","));
    assert!(!expectations.contains("jobs.total"), "a sanity check is not a target:\n{expectations}");
    let checks = read_string(&tmp.join("out/checks.csv"));
    assert!(checks.starts_with("check,why,measured,verdict\n"), "{checks}");
    assert_eq!(checks.lines().count(), 1 + 4, "{checks}");
    assert!(checks.lines().skip(1).all(|l| l.ends_with(",pass")), "{checks}");
    assert!(checks.contains("\"utilisation in [0, 1] at providers.big.scheduler=fcfs\",a fraction,"), "{checks}");

    let o = run(&["run", TINY, "--quiet", "--strict", "--out", &tmp.arg("strict")]);
    assert_exit(&o, 1, "run --strict: an inconclusive target fails");
    let o = run(&["run", TINY_FAIL, "--quiet", "--out", &tmp.arg("fail")]);
    assert_exit(&o, 1, "run: a failed target");
    assert!(stdout(&o).contains("0 of 1 targets pass, 1 FAIL, 0 inconclusive\n"), "{}", stdout(&o));
    assert!(read_string(&tmp.join("fail/expectations.csv")).ends_with(",FAIL,,target\n"));
    let o = run(&["run", TINY_FAIL, "--quiet", "--replications", "1", "--out", &tmp.arg("one")]);
    assert_exit(&o, 0, "run: one replication settles nothing");
    let measured = "10.00 (1 replication)  inconclusive\n";
    assert!(stdout(&o).contains(measured), "{}", stdout(&o));
}

#[test]
fn results_are_identical_for_any_number_of_jobs() {
    let tmp = TempDir::new("jobs");
    for (jobs, dir) in [("1", "one"), ("3", "three")] {
        let o = run(&["run", TINY, "--quiet", "--jobs", jobs, "--out", &tmp.arg(dir)]);
        assert_exit(&o, 0, &format!("run --jobs {jobs}"));
    }
    assert_same_results(&tmp.join("one"), &tmp.join("three"));
}

#[test]
fn the_same_seed_gives_the_same_bytes_and_another_seed_changes_them() {
    let tmp = TempDir::new("seed");
    let go = |dir: &str, extra: &[&str]| {
        let out = tmp.arg(dir);
        let mut args = vec!["run", TINY, "--quiet", "--replications", "2", "--out", &out];
        args.extend_from_slice(extra);
        let o = run(&args);
        assert_exit(&o, 0, &format!("run {extra:?}"));
        o
    };
    let a = go("a", &[]);
    let b = go("b", &[]);
    let c = go("c", &["--seed", "12"]);
    assert_same_results(&tmp.join("a"), &tmp.join("b"));
    let outputs_line =
        |o: &Output| stdout(o).lines().filter(|l| !l.starts_with("outputs:")).collect::<Vec<_>>().join("\n");
    assert_eq!(outputs_line(&a), outputs_line(&b), "the printed summaries differ");
    assert!(
        read(&tmp.join("a/summary.csv")) != read(&tmp.join("c/summary.csv")),
        "--seed 12 gave the same summary as the scenario's seed 11"
    );
    assert!(read(&tmp.join("a/p0/r0/jobs.csv")) != read(&tmp.join("c/p0/r0/jobs.csv")));
    let seed: serde_json::Value = serde_json::from_slice(&read(&tmp.join("c/p0/r1/run.json"))).unwrap();
    assert_eq!(seed["seed"], 13, "--seed replaces the scenario's seed");
    assert_ne!(outputs_line(&a), outputs_line(&c));
}

#[test]
fn set_overrides_a_key_and_a_bad_key_is_refused() {
    let tmp = TempDir::new("set");
    let base = run(&["run", TINY, "--quiet", "--replications", "1", "--out", &tmp.arg("base")]);
    assert_exit(&base, 0, "run");
    let more = run(&[
        "run",
        TINY,
        "--quiet",
        "--replications",
        "1",
        "--set",
        "providers.big.pes=16",
        "--set",
        "workloads.load.jobs=30",
        "--out",
        &tmp.arg("set"),
    ]);
    assert_exit(&more, 0, "run --set");
    assert_eq!(means(&tmp.join("set/summary.csv"), "jobs.total"), BTreeMap::from([(0, 60.0), (1, 60.0), (2, 60.0)]));
    let wait = |dir: &str| means(&tmp.join(dir).join("summary.csv"), "brokers.alice.wait");
    assert_ne!(wait("base"), wait("set"), "doubling the PEs of `big` changed nothing");

    // An unknown field: refused before anything runs, with the --set argument named and a close name.
    let o = run(&["run", TINY, "--quiet", "--set", "providers.big.pess=16", "--out", &tmp.arg("bad")]);
    assert_exit(&o, EXIT_CONFIG, "run --set with an unknown key");
    // The list of known keys grows with the schema: check the parts that locate and explain the error.
    let err = stderr(&o);
    assert!(
        err.starts_with(&format!(
            "error: {TINY}: providers.big.pess: unknown key `pess`, expected one of `count`, `pes`"
        )),
        "{err}"
    );
    assert!(err.ends_with("(from --set providers.big.pess=16)\n  hint: did you mean `pes`?\n"), "{err}");
    // A key the file does not have is added, tables on the way too, and validated as the file's own keys are.
    let o = run(&[
        "run",
        TINY,
        "--quiet",
        "--replications",
        "1",
        "--set",
        "providers.extra.pes=2",
        "--out",
        &tmp.arg("add"),
    ]);
    assert_exit(&o, 0, "run --set adding a provider group");
    assert_eq!(means(&tmp.join("add/summary.csv"), "providers.extra.utilisation").len(), 3, "no provider `extra`");
    let o = run(&["run", TINY, "--quiet", "--set", "providrs.extra.pes=2", "--out", &tmp.arg("bad")]);
    assert_exit(&o, EXIT_CONFIG, "run --set with a misspelt table");
    let err = stderr(&o);
    assert!(err.starts_with(&format!("error: {TINY}: providrs: unknown key `providrs`")), "{err}");
    assert!(err.ends_with("(from --set providrs.extra.pes=2)\n  hint: did you mean `providers`?\n"), "{err}");
    // A reference to a group that does not exist.
    let o = run(&["run", TINY, "--quiet", "--set", "brokers.bob.submit-to=bgi", "--out", &tmp.arg("bad")]);
    assert_exit(&o, EXIT_CONFIG, "run --set with an unknown group");
    let err = stderr(&o);
    assert!(err.starts_with(&format!("error: {TINY}: brokers.bob.submit-to:")), "{err}");
    assert!(err.contains("(from --set brokers.bob.submit-to=bgi)") && err.contains("`big`"), "{err}");
    // A value out of range.
    let o = run(&["run", TINY, "--quiet", "--set", "providers.big.pes=0", "--out", &tmp.arg("bad")]);
    assert_exit(&o, EXIT_CONFIG, "run --set with a bad value");
    assert_eq!(
        stderr(&o),
        format!(
            "error: {TINY}: providers.big.pes: expected a positive integer, found 0 (from --set providers.big.pes=0)\n"
        )
    );
    assert!(!tmp.join("bad").exists(), "nothing is written for a refused scenario");
    // Not KEY=VALUE: a usage error, not a refused scenario.
    let o = run(&["run", TINY, "--quiet", "--set", "providers.big.pes", "--out", &tmp.arg("bad")]);
    assert_exit(&o, 2, "run --set without `=`");
}

/// Replaces the `command` of a finished run's `run.json` by a marker: a run that is done again rewrites it.
fn mark(dir: &Path) {
    let path = dir.join("run.json");
    let mut v: serde_json::Value = serde_json::from_slice(&read(&path)).unwrap();
    v["command"] = "kept by --resume".into();
    std::fs::write(&path, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
}

fn is_marked(dir: &Path) -> bool {
    let v: serde_json::Value = serde_json::from_slice(&read(&dir.join("run.json"))).unwrap();
    v["command"] == "kept by --resume"
}

#[test]
fn resume_reruns_only_the_runs_that_had_not_finished() {
    let tmp = TempDir::new("resume");
    let out = tmp.join("out");
    let args = |extra: &[&str]| {
        let mut a = vec!["run".to_string(), TINY.into(), "--quiet".into(), "--jobs".into(), "2".into()];
        a.extend(["--out".to_string(), tmp.arg("out")]);
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let first = gridmarket().args(args(&[])).output().unwrap();
    assert_exit(&first, 0, "run");
    std::fs::copy(out.join("summary.csv"), tmp.join("summary.csv")).unwrap();
    let summary = read(&out.join("summary.csv"));
    let dirs = run_dirs(&out);
    let original: Vec<Vec<u8>> = dirs.iter().map(|d| read(&d.join("jobs.csv"))).collect();

    // Simulate an interruption: two runs had not finished (no run.json; a half-written summary), one of them
    // had not even written its jobs.
    let unfinished = [out.join("p1/r2"), out.join("p2/r0")];
    for dir in &dirs {
        if unfinished.contains(dir) {
            std::fs::remove_file(dir.join("run.json")).unwrap();
            std::fs::write(dir.join("summary.json"), "{\"jobs.total\": 1").unwrap();
        } else {
            mark(dir);
        }
    }
    std::fs::remove_file(out.join("p2/r0/jobs.csv")).unwrap();
    std::fs::write(out.join("summary.csv"), "stale").unwrap();

    let resumed = gridmarket().args(args(&["--resume"])).output().unwrap();
    assert_exit(&resumed, 0, "run --resume");
    assert_eq!(stdout(&resumed), stdout(&first), "the resumed study prints the same summary");
    for (dir, jobs) in dirs.iter().zip(&original) {
        if unfinished.contains(dir) {
            assert!(!is_marked(dir), "{}", dir.display());
            let run_json = read_string(&dir.join("run.json"));
            assert!(run_json.contains("--resume"), "{} was not re-run: {run_json}", dir.display());
            serde_json::from_slice::<serde_json::Value>(&read(&dir.join("summary.json"))).expect("summary.json");
        } else {
            assert!(is_marked(dir), "{} was re-run although it had finished", dir.display());
        }
        assert!(read(&dir.join("jobs.csv")) == *jobs, "{}/jobs.csv changed", dir.display());
    }
    assert_same_bytes(&tmp.join("summary.csv"), &out.join("summary.csv"));

    // A run of another scenario (here: another seed) is not taken for a finished one.
    let reseeded = gridmarket().args(args(&["--resume", "--seed", "12"])).output().unwrap();
    assert_exit(&reseeded, 0, "run --resume --seed 12");
    assert!(dirs.iter().all(|d| !is_marked(d)), "--resume kept runs of another seed");
    assert!(read(&out.join("summary.csv")) != summary);
}

#[test]
fn resume_completes_a_sweep_interrupted_by_ctrl_c() {
    let tmp = TempDir::new("sigint");
    let out = tmp.join("out");
    // Long enough (9 runs of about 0.1 s each in a debug build) to be interrupted after the first run.
    let args = |dir: &str, extra: &[&str]| {
        let mut a: Vec<String> = ["run", TINY, "--quiet", "--jobs", "1", "--set", "workloads.load.jobs=300"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        a.extend(["--set".into(), "horizon=1e6".into(), "--out".into(), tmp.arg(dir)]);
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let mut child = gridmarket()
        .args(args("out", &[]))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting gridmarket");
    let first_run = out.join("p0/r0/run.json");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !first_run.exists() && Instant::now() < deadline && child.try_wait().unwrap().is_none() {
        std::thread::sleep(Duration::from_millis(5));
    }
    let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
    let interrupted = child.wait_with_output().unwrap();
    if !matches!(kill, Ok(s) if s.success()) || interrupted.status.code() == Some(0) {
        eprintln!("skipped: the sweep ended before it could be interrupted ({:?})", interrupted.status);
        return;
    }
    assert_exit(&interrupted, 130, "the interrupted run");
    let message = stderr(&interrupted);
    assert!(message.contains("rerun with --resume"), "{message}");
    let kept: Vec<PathBuf> = run_dirs(&out).into_iter().filter(|d| d.join("run.json").exists()).collect();
    assert!(!kept.is_empty() && kept.len() < 9, "finished runs before the interruption: {kept:?}");
    for dir in &kept {
        mark(dir);
    }

    // Its larger workload may decide the fixture targets either way: it must decide them as a whole sweep does.
    let whole = gridmarket().args(args("whole", &[])).output().unwrap();
    assert!(matches!(whole.status.code(), Some(0 | 1)), "the uninterrupted run: {:?}", whole.status);
    let resumed = gridmarket().args(args("out", &["--resume"])).output().unwrap();
    assert_exit(&resumed, whole.status.code().unwrap(), "run --resume after Ctrl-C");
    let dirs = run_dirs(&out);
    assert_eq!(dirs.len(), 9);
    for dir in &dirs {
        assert_eq!(is_marked(dir), kept.contains(dir), "{}: only unfinished runs are re-run", dir.display());
    }
    // The same results as a sweep that was never interrupted.
    assert_same_results(&out, &tmp.join("whole"));
}

#[test]
fn reproduce_judges_mean_differences_over_the_points_and_reports_conflicts_apart() {
    let tmp = TempDir::new("pooled");
    let out = tmp.arg("pooled");
    let o = run(&["reproduce", "--quiet", "--scenarios", "tests/scenarios", "--out", &out, "pooled"]);
    assert_exit(&o, 0, "a documented conflict that fails is not scored");
    let text = stdout(&o);
    let tally = "pooled: 2 of 2 targets pass, 0 FAIL, 0 inconclusive; 1 documented conflict (not scored)";
    assert!(text.contains(tally), "{text}");
    // A row of the table, its columns padded to the widest cell.
    let squeeze = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let row = |start: &str, end: &str| {
        text.lines().any(|l| squeeze(l).starts_with(&squeeze(start)) && squeeze(l).ends_with(&squeeze(end)))
    };
    // 10, 20 and 40 more jobs: mean 23.33, sd 15.28, t(2) = 4.303.
    let pooled = "brokers.alice.total: mean over the points of (big − small) in [-20, 70] ";
    assert!(row(pooled, "23.33 ± 37.95 over 3 points  pass"), "{text}");
    // Against 10 and 20 (mean 15, sd 7.07): Welch's df 2.89, rounded down to 2.
    let versus = "brokers.alice.total: mean over the points of (big − small), here − in other, ≥ 100 ";
    assert!(row(versus, "8.333 ± 43.620 (Welch, 3 and 2 points)  FAIL"), "{text}");
    // Paired by position with 15, 26 and 48 (differences −5, −6 and −8: sd 1.53, t(2) = 4.303).
    let paired = "brokers.alice.total: mean over the points of (big − small), here − in paired (points paired by \
                  position), ≤ 0 ";
    assert!(row(paired, "-6.333 ± 3.795 over 3 points  pass"), "{text}");
    let conflicts = text.find("documented conflicts (the source contradicts itself: reported, not scored)\n");
    assert!(conflicts.is_some_and(|c| c < text.find(versus).unwrap()), "{text}");
    let expectations = read_string(&tmp.join("pooled/sweep/expectations.csv"));
    let why = "tests/cli.rs: a documented conflict is reported but does not fail the run";
    assert!(expectations.lines().nth(1).is_some_and(|l| l.ends_with(",pass,,target")), "{expectations}");
    assert!(
        expectations.lines().nth(2).is_some_and(|l| l.ends_with(&format!(",FAIL,{why},conflict"))),
        "{expectations}"
    );
    let report = read_string(&tmp.join("pooled/report.md"));
    assert!(report.contains("| conflict | measured (mean ± CI) | verdict |"), "{report}");
    assert!(report.contains(&format!("| {why} | 8.333 ± 43.620 (Welch, 3 and 2 points) | FAIL |")), "{report}");
}

#[test]
fn reproduce_quick_runs_a_family_and_writes_its_report() {
    let tmp = TempDir::new("reproduce");
    let o =
        run(&["reproduce", "--quick", "--quiet", "--scenarios", "tests/scenarios", "--out", &tmp.arg("tiny"), "tiny"]);
    assert_exit(&o, 0, "reproduce tiny");
    let text = stdout(&o);
    assert!(text.contains("== tiny"), "{text}");
    // The check comparing the family's two files, once per sweep point of tiny.toml.
    let versus = text.lines().filter(|l| l.starts_with("jobs.total: tiny − half ≥ 0 at providers.big.scheduler="));
    assert_eq!(versus.filter(|l| l.trim_end().ends_with("pass")).count(), 3, "{text}");
    let summary = "tiny: 0 of 6 targets pass, 0 FAIL, 6 inconclusive (--quick: indicative); \
                   7 of 7 sanity checks pass, 0 FAIL, 0 inconclusive\n";
    assert!(text.contains(summary), "{text}");
    let checks = read_string(&tmp.join("tiny/tiny/checks.csv"));
    assert!(checks.contains("tiny − half"), "{checks}");
    let report = read_string(&tmp.join("tiny/report.md"));
    assert!(report.starts_with("# Reproduction: tiny"), "{report}");
    assert!(report.contains("(2 replications per point"), "--quick applies the [quick] table:\n{report}");
    for needle in [
        "\n\n**Overall: 0 pass / 0 FAIL / 6 inconclusive of 6 targets** (--quick: indicative); \
         7 pass / 0 FAIL / 0 inconclusive of 7 sanity checks.\n",
        "0 of 6 targets pass, 0 FAIL, 6 inconclusive (--quick: indicative)\n\n\
         | target | source | tolerance | measured (mean ± CI) | verdict |\n",
        "| utilisation = 0.6 ± 0.4 at providers.big.scheduler=fcfs | tests/cli.rs: a fixture target | wide enough",
        " | inconclusive (indicative) |\n",
        "7 of 7 sanity checks pass, 0 FAIL, 0 inconclusive (not targets)\n\n| check | why | measured | verdict |\n",
        "| jobs.total: tiny − half ≥ 0 at providers.big.scheduler=easy | tiny has more broker groups than half.toml | ",
    ] {
        assert!(report.contains(needle), "report.md lacks `{needle}`:\n{report}");
    }
    // Inconclusive targets fail only a strict reproduction.
    let o = run(&[
        "reproduce",
        "--quick",
        "--quiet",
        "--strict",
        "--scenarios",
        "tests/scenarios",
        "--out",
        &tmp.arg("strict"),
        "tiny",
    ]);
    assert_exit(&o, 1, "reproduce --strict tiny");
    let svgs: Vec<PathBuf> =
        sorted_entries(&tmp.join("tiny")).into_iter().filter(|p| p.extension().is_some_and(|e| e == "svg")).collect();
    assert!(!svgs.is_empty(), "no chart written");
    for svg in &svgs {
        assert!(read_string(svg).contains("<svg"), "{}", svg.display());
        let name = svg.file_name().unwrap().to_string_lossy();
        assert_eq!(report.matches(&format!("]({name})")).count(), 1, "report.md shows {name} once:\n{report}");
    }
    // Both targets on utilisation are on its one chart, with the unit on the axis.
    let chart = read_string(&tmp.join("tiny/tiny-utilisation.svg"));
    for needle in [">target 0.6 ± 0.4<", ">target 0.6 ± 0.05<", ">utilisation (share, 0–1)<"] {
        assert!(chart.contains(needle), "the chart lacks `{needle}`:\n{chart}");
    }
    assert!(tmp.join("tiny/tiny/summary.csv").is_file(), "each study's outputs are under the family folder");
    assert_eq!(means(&tmp.join("tiny/tiny/summary.csv"), "jobs.total")[&0], 40.0, "[quick] sets 20 jobs per group");

    let o = run(&[
        "reproduce",
        "--quick",
        "--quiet",
        "--scenarios",
        "tests/scenarios",
        "--out",
        &tmp.arg("fail"),
        "tiny-fail",
    ]);
    assert_exit(&o, 1, "reproduce tiny-fail");
    let text = stdout(&o);
    let failed = |l: &&str| l.starts_with("jobs.total = 11") && l.trim_end().ends_with("FAIL (indicative)");
    assert!(text.lines().any(|l| failed(&l)), "{text}");
    assert!(read_string(&tmp.join("fail/report.md")).contains("| FAIL (indicative) |"));

    let o = run(&["reproduce", "--quick", "--scenarios", "tests/scenarios", "--out", &tmp.arg("none"), "nosuch"]);
    assert_exit(&o, 2, "reproduce of a family that does not exist");
    assert_eq!(stderr(&o), "error: no scenario family `nosuch` in tests/scenarios\n");
}

#[test]
fn list_shows_the_families_and_schema_the_keys() {
    let o = run(&["list", "--scenarios", "tests/scenarios"]);
    assert_exit(&o, 0, "list");
    let text = stdout(&o);
    assert!(
        text.contains("  tiny (2 scenario file(s))") && text.contains("  tiny-fail (1 scenario file(s))"),
        "{text}"
    );
    assert!(text.contains("provider [providers.<name>]"), "{text}");
    assert!(text.contains("scheduler: fcfs, easy, conservative, multi-partition-easy"), "{text}");
    assert!(text.contains("preemption: nop, mov, mlip, moml"), "{text}");
    assert!(!text.contains(":  ("), "a policy line without values: {text}");

    let o = run(&["list"]);
    let text = stdout(&o);
    let about = "  quickstart.toml: Three providers of different speed and price, 30 users with Lublin workloads";
    assert!(text.contains("single scenarios in scenarios") && text.contains(about), "{text}");
    assert!(text.contains("  backfilling.toml: FCFS against EASY") && !text.contains("  garg-ch3.toml"), "{text}");

    let o = run(&["schema"]);
    assert_exit(&o, 0, "schema");
    let text = stdout(&o);
    for key in ["`providers.<name>.pes`", "`providers.<name>.scheduler`", "`brokers.<name>.submit-to`", "`sweep`"] {
        assert!(text.contains(key), "the schema lacks {key}");
    }
}

#[test]
fn workload_generate_stats_and_convert() {
    let tmp = TempDir::new("workload");
    let swf = tmp.arg("x.swf");
    let o = run(&["workload", "generate", "lublin", "--jobs", "200", "--seed", "3", "-o", &swf]);
    assert_exit(&o, 0, "workload generate");
    assert_eq!(stdout(&o), format!("200 jobs written to {swf}\n"));

    let o = run(&["workload", "stats", &swf, "--pes", "64"]);
    assert_exit(&o, 0, "workload stats");
    let text = stdout(&o);
    assert!(
        text.lines().next().is_some_and(|l| l.starts_with(&format!("{swf}: jobs")) && l.ends_with(" 200")),
        "{text}"
    );
    assert!(text.contains("offered load on 64 PEs: "), "{text}");

    // `--jobs` and `--until` together: whichever comes first.
    for (jobs, until, expected) in [("200", "3600", None), ("5", "1e9", Some(5))] {
        let both = tmp.arg("both.swf");
        let o = run(&["workload", "generate", "lublin", "--jobs", jobs, "--until", until, "--seed", "3", "-o", &both]);
        assert_exit(&o, 0, "workload generate --jobs --until");
        let text = read_string(&tmp.join("both.swf"));
        let submits: Vec<f64> = text
            .lines()
            .filter(|l| !l.starts_with(';'))
            .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
            .collect();
        assert!(submits.iter().all(|&t| t < until.parse().unwrap()), "--until {until}: {submits:?}");
        match expected {
            Some(n) => assert_eq!(submits.len(), n),
            None => assert!(!submits.is_empty() && submits.len() < 200, "{} jobs before 3600 s", submits.len()),
        }
    }

    let again = tmp.arg("y.swf");
    let o = run(&["workload", "convert", &swf, &again]);
    assert_exit(&o, 0, "workload convert");
    assert!(read(&tmp.join("x.swf")) == read(&tmp.join("y.swf")), "converting an SWF file changes it");

    // `--jobs` counts jobs for every model; bags of tasks are cut to it. The header says what the file is.
    let bot = tmp.arg("bot.swf");
    let o = run(&["workload", "generate", "bot", "--jobs", "50", "-o", &bot]);
    assert_exit(&o, 0, "workload generate bot");
    assert!(stdout(&o).starts_with("50 jobs of ") && stdout(&o).ends_with(&format!(" bags written to {bot}\n")));
    let text = read_string(&tmp.join("bot.swf"));
    assert!(
        text.starts_with("; Version: 2.2\n; MaxJobs: 50\n; MaxRecords: 50\n; Note: drawn by gridmarket "),
        "{text}"
    );
    assert!(text.contains("`gridmarket workload generate bot --jobs 50 --seed 1`"), "{text}");
    let records: Vec<&str> = text.lines().filter(|l| !l.starts_with(';')).collect();
    assert_eq!(records.len(), 50);
    // Times in whole seconds: the model draws fractional ones.
    for r in &records {
        let fields: Vec<&str> = r.split_whitespace().collect();
        assert!(fields[1].parse::<u64>().is_ok() && fields[3].parse::<u64>().is_ok(), "{r}");
    }

    // GWF to SWF: an SWF header replaces the GWF one; a gzip-compressed trace reads as the plain one.
    let from_gwf = tmp.arg("gwf.swf");
    let o = run(&["workload", "convert", "tests/fixtures/small.gwf.gz", &from_gwf]);
    assert_exit(&o, 0, "workload convert of a GWF trace");
    let text = read_string(&tmp.join("gwf.swf"));
    let header = format!(
        "; Version: 2.2\n; MaxJobs: 3\n; MaxRecords: 3\n; Conversion: gridmarket {} from the GWF trace small.gwf.gz\n",
        env!("CARGO_PKG_VERSION")
    );
    assert!(text.starts_with(&header), "{text}");
    assert!(!text.contains("Version: 1.0") && !text.contains("Grid Workloads Format excerpt"), "{text}");
    assert!(text.ends_with("3 1041867100 0 65 1 -1 -1 1 -1 -1 0 2 1 -1 1 -1 -1 -1\n"), "users from 1: {text}");
    let o = run(&["workload", "stats", "tests/fixtures/small.swf.gz"]);
    assert_exit(&o, 0, "stats of a gzip-compressed trace");
    let plain = run(&["workload", "stats", "tests/fixtures/small.swf"]);
    assert_eq!(stdout(&o).replace("small.swf.gz", "small.swf"), stdout(&plain));

    let o = run(&["workload", "convert", "tests/fixtures/malformed.swf", &tmp.arg("bad.swf")]);
    assert_exit(&o, 2, "workload convert of a malformed trace");
    assert_eq!(
        stderr(&o),
        "error: tests/fixtures/malformed.swf:5: field 4 (Run Time): expected a number, found \"12x\"\n"
    );
    assert!(!tmp.join("bad.swf").exists());
}

#[test]
fn a_hand_made_job_list_runs_as_computed_by_hand() {
    let tmp = TempDir::new("hand");
    let o = run(&["run", "tests/fixtures/hand.toml", "--quiet", "--schedule-swf", "--out", &tmp.arg("out")]);
    assert_exit(&o, 0, "run");
    // FCFS on 4 PEs: job 1 (4 PEs, 100 s) runs 0-100; jobs 2 (2 PEs, 50 s) and 3 (2 PEs, 30 s) start together at
    // 100 and end at 150 and 130; job 4 (1 PE, 10 s) waits for job 3 and runs 130-140. Stretch = turnaround /
    // execution time; the estimate is job 2's own (80 s) or the runtime.
    assert_eq!(
        read_string(&tmp.join("out/p0/r0/schedule.csv")),
        "job_id,workload_name,submission_time,requested_number_of_resources,requested_time,success,starting_time,\
         execution_time,finish_time,waiting_time,turnaround_time,stretch,allocated_resources,site,outcome\n\
         1,hand,0,4,100,1,0,100,100,0,100,1,,site,completed\n\
         2,hand,10,2,80,1,100,50,150,90,140,2.8,,site,completed\n\
         3,hand,20,2,30,1,100,30,130,80,110,3.6666666666666665,,site,completed\n\
         4,hand,30,1,10,1,130,10,140,100,110,11,,site,completed\n"
    );
    // Job 3's deadline reached the simulation.
    let jobs = read_string(&tmp.join("out/p0/r0/jobs.csv"));
    assert!(jobs.contains("\n3,3,user,user,20,100,130,site,2,30,30,1000,completed,"), "{jobs}");

    // The SWF schedule reads back as the jobs that ran: submit, run time (end - start) and PEs.
    let swf_path = tmp.join("out/p0/r0/schedule.swf");
    let w = gridmarket::workload::swf::read_swf_file(&swf_path).expect("our reader reads the schedule");
    let got: Vec<(u64, f64, f64, u32, Option<f64>)> =
        w.jobs.iter().map(|j| (j.id, j.submit, j.runtime, j.pes, j.wait)).collect();
    let ran = [
        (1, 0.0, 100.0, 4, Some(0.0)),
        (2, 10.0, 50.0, 2, Some(90.0)),
        (3, 20.0, 30.0, 2, Some(80.0)),
        (4, 30.0, 10.0, 1, Some(100.0)),
    ];
    assert_eq!(got, ran);
    assert_eq!(w.header_value("Version"), Some("2.2"));
    assert_eq!(w.header_number("MaxJobs"), Some(4.0));
    assert_eq!(w.header_number("MaxProcs"), Some(4.0));
    assert!(w.header.iter().any(|(k, v)| k == "Note" && v == "partition 1 is provider site (4 PEs)"), "{:?}", w.header);
    assert!(w.jobs.iter().all(|j| j.partition == Some(1) && j.status.is_some_and(|s| s.code() == 1)));
    // Without the flag, no SWF; with `outputs.schedule = false`, no schedule.csv.
    let o = run(&[
        "run",
        "tests/fixtures/hand.toml",
        "--quiet",
        "--set",
        "outputs.schedule=false",
        "--out",
        &tmp.arg("off"),
    ]);
    assert_exit(&o, 0, "run without schedule outputs");
    assert!(!tmp.join("off/p0/r0/schedule.csv").exists() && !tmp.join("off/p0/r0/schedule.swf").exists());
    assert!(tmp.join("off/p0/r0/jobs.csv").is_file());
}

#[test]
fn a_trace_keeps_its_job_numbers_and_reports_the_records_left_out() {
    let tmp = TempDir::new("trace");
    let file = "tests/fixtures/skipped.toml";
    let warning = format!(
        "warning: {file}:7:1: workloads.trace.file: skipped.swf: 3 record(s) cannot be simulated (unknown submit \
         time or runtime, no processor count, or a runtime of 0 with no positive requested time: jobs cancelled \
         before they ran) and are left out, the first at line 4; the other jobs keep their numbers\n"
    );
    let o = run(&["validate", file]);
    assert_exit(&o, 0, "validate");
    assert_eq!(stderr(&o), warning, "reported once, although --quick loads the file again");
    let o = run(&["run", file, "--quiet", "--out", &tmp.arg("out")]);
    assert_exit(&o, 0, "run");
    assert_eq!(stderr(&o), warning);
    let jobs = read_string(&tmp.join("out/p0/r0/jobs.csv"));
    let pairs: Vec<(String, String)> = jobs
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].to_string(), f[1].to_string())
        })
        .collect();
    let expected = [("1", "1"), ("2", "2"), ("3", "7")].map(|(a, b)| (a.to_string(), b.to_string()));
    assert_eq!(pairs, expected, "the trace's job 7 is job 7 in source_id:\n{jobs}");
}

#[test]
fn an_empty_sum_is_written_as_zero() {
    let tmp = TempDir::new("idle");
    let o = run(&["run", "tests/fixtures/idle.toml", "--quiet", "--out", &tmp.arg("out")]);
    assert_exit(&o, 0, "run");
    let summary = read_string(&tmp.join("out/p0/r0/summary.json"));
    assert!(summary.contains("\"jobs.cost\": 0.0,") && !summary.contains("-0.0"), "{summary}");
}

#[test]
fn trace_with_several_runs_writes_one_per_run_and_says_so() {
    let tmp = TempDir::new("traces");
    let o =
        run(&["run", TINY, "--quiet", "--replications", "1", "--trace", &tmp.arg("t.jsonl"), "--out", &tmp.arg("out")]);
    assert_exit(&o, 0, "run --trace");
    let out = tmp.arg("out");
    assert_eq!(
        stderr(&o),
        format!(
            "note: --trace {}: 3 runs, so each writes its own trace, {out}/pN/rM/trace.jsonl\n",
            tmp.arg("t.jsonl")
        )
    );
    for p in 0..3 {
        let trace = read_string(&tmp.join(&format!("out/p{p}/r0/trace.jsonl")));
        assert!(trace.lines().count() > 40, "p{p}: {} lines", trace.lines().count());
    }
    assert!(!tmp.join("t.jsonl").exists());
}

#[test]
fn utilisation_is_reported_from_time_zero_and_from_the_first_submission() {
    let tmp = TempDir::new("utilisation");
    // Two jobs of 100 s on one PE, arriving after t = 0 (a mean gap of 1,000 s): 200 busy PE-seconds over the span
    // from t = 0 and over the span from the first submission.
    let file = tmp.join("late.toml");
    std::fs::write(
        &file,
        "[workloads.w]\nmodel = \"poisson\"\njobs = 2\nrate = 0.001\nruntime = { kind = \"constant\", value = 100.0 }\n\n\
         [providers.site]\npes = 1\n\n[brokers.user]\nworkload = \"w\"\nsubmit-to = \"site\"\n",
    )
    .unwrap();
    let o = run(&["run", &tmp.arg("late.toml"), "--quiet", "--out", &tmp.arg("out")]);
    assert_exit(&o, 0, "run");
    let jobs = read_string(&tmp.join("out/p0/r0/jobs.csv"));
    let submits: Vec<f64> = jobs.lines().skip(1).map(|l| l.split(',').nth(4).unwrap().parse().unwrap()).collect();
    let metrics: serde_json::Value = serde_json::from_slice(&read(&tmp.join("out/p0/r0/summary.json"))).unwrap();
    let metric = |k: &str| metrics[k].as_f64().unwrap();
    let (first, end) = (submits[0].min(submits[1]), metric("end_time"));
    assert!(first > 0.0, "{jobs}");
    assert!((metric("utilisation") - 200.0 / end).abs() < 1e-9, "{metrics}");
    assert!((metric("utilisation_from_first_submit") - 200.0 / (end - first)).abs() < 1e-9, "{metrics}");
}

#[test]
fn quick_on_a_scenario_without_a_quick_table_says_so() {
    let tmp = TempDir::new("no-quick");
    let o = run(&["run", "tests/fixtures/idle.toml", "--quick", "--quiet", "--out", &tmp.arg("out")]);
    assert_exit(&o, 0, "run --quick");
    assert_eq!(
        stderr(&o),
        "warning: tests/fixtures/idle.toml: --quick: the scenario has no [quick] table; it runs at full size\n"
    );
}

#[test]
fn bad_command_lines_are_refused_before_anything_runs() {
    let tmp = TempDir::new("args");
    // 100,000 threads were started.
    let o =
        run_within(&["run", TINY, "--quiet", "--jobs", "100000", "--out", &tmp.arg("out")], Duration::from_secs(10));
    assert_exit(&o, 2, "--jobs 100000");
    assert!(stderr(&o).starts_with("error: invalid value '100000' for '--jobs <JOBS>': 100000 is not in 1..=1024\n"));
    let o = run(&["run", TINY, "--quiet", "--replications", "100000", "--out", &tmp.arg("out")]);
    assert_exit(&o, EXIT_CONFIG, "--replications 100000");
    assert_eq!(
        stderr(&o),
        format!(
            "error: {TINY}: replications: expected a positive integer up to 10000, found 100000 (from --replications \
             100000)\n"
        )
    );
    assert!(!tmp.join("out").exists(), "nothing is written for a refused command line");
}

#[test]
fn the_largest_seed_is_kept_whole() {
    let tmp = TempDir::new("seed-max");
    let args = ["run", "tests/fixtures/skipped.toml", "--quiet", "--replications", "2"];
    let o = run(&[&args[..], &["--seed", "18446744073709551615", "--out", &tmp.arg("out")]].concat());
    assert_exit(&o, 0, "run --seed 2^64 - 1");
    let seed = |rep: &str| {
        let v: serde_json::Value = serde_json::from_slice(&read(&tmp.join(&format!("out/p0/{rep}/run.json")))).unwrap();
        v["seed"].clone()
    };
    assert_eq!(seed("r0"), serde_json::json!(u64::MAX), "it was -1");
    assert_eq!(seed("r1"), serde_json::json!(0), "seed + r, modulo 2^64");
}

#[test]
fn output_folder_problems_name_the_folder() {
    let tmp = TempDir::new("out");
    // A file in the way.
    std::fs::write(tmp.join("file"), "").unwrap();
    let o = run(&["run", "tests/fixtures/skipped.toml", "--quiet", "--out", &tmp.arg("file")]);
    assert_exit(&o, 2, "--out a file");
    assert!(stderr(&o).ends_with(&format!("error: output folder {}: exists and is not a folder\n", tmp.arg("file"))));

    // A run that cannot write its jobs: the error names the file, and no summary is written from no run. (The
    // folder is gridmarket's: a folder of files it did not write is refused before anything runs.)
    let o = run(&["run", "tests/fixtures/skipped.toml", "--quiet", "--out", &tmp.arg("blocked")]);
    assert_exit(&o, 0, "a first run");
    std::fs::remove_file(tmp.join("blocked/summary.csv")).unwrap();
    std::fs::remove_file(tmp.join("blocked/p0/r0/jobs.csv")).unwrap();
    std::fs::create_dir_all(tmp.join("blocked/p0/r0/jobs.csv")).unwrap();
    let o = run(&["run", "tests/fixtures/skipped.toml", "--quiet", "--out", &tmp.arg("blocked")]);
    assert_exit(&o, 2, "a run that cannot write");
    let jobs = tmp.join("blocked/p0/r0/jobs.csv");
    assert!(
        stderr(&o).ends_with(&format!(
            "run p0/r0 did not finish: writing {}: Is a directory (os error 21)\n",
            jobs.display()
        )),
        "{}",
        stderr(&o)
    );
    assert!(!tmp.join("blocked/summary.csv").exists(), "a header-only summary.csv");

    // Another scenario's outputs are not mixed with these.
    let o = run(&["run", "tests/scenarios/tiny/half.toml", "--quiet", "--out", &tmp.arg("shared")]);
    assert_exit(&o, 0, "run half.toml");
    let before = read(&tmp.join("shared/summary.csv"));
    let o = run(&["run", "tests/fixtures/skipped.toml", "--quiet", "--out", &tmp.arg("shared")]);
    assert_exit(&o, 2, "run another scenario into the same folder");
    assert!(
        stderr(&o).ends_with(&format!(
            "error: output folder {} holds the outputs of another scenario (scenario `half`, in summary.json); \
             choose another --out or remove them\n",
            tmp.arg("shared")
        )),
        "{}",
        stderr(&o)
    );
    assert!(read(&tmp.join("shared/summary.csv")) == before, "the other scenario's outputs are left as they were");
    // The same scenario again is no other: its runs are replaced.
    let o = run(&["run", "tests/scenarios/tiny/half.toml", "--quiet", "--out", &tmp.arg("shared")]);
    assert_exit(&o, 0, "run half.toml again");
}

#[test]
fn workload_commands_refuse_bad_parameters_and_name_a_missing_file_once() {
    let tmp = TempDir::new("workload-bad");
    let out = tmp.arg("x.swf");
    // Generating these jobs hung.
    let o = run_within(
        &["workload", "generate", "lublin", "--jobs", "10", "--param", "mean-interarrival=1e50", "-o", &out],
        Duration::from_secs(20),
    );
    assert_exit(&o, 2, "mean-interarrival = 1e50");
    assert_eq!(stderr(&o), "error: mean-interarrival: expected a positive number of seconds up to 1e12, found 1e50\n");
    // These runtimes were written, then refused by the reader.
    let normal = "runtime={ kind = \"normal\", mean = -5.0, sd = 1.0 }";
    let o =
        run(&["workload", "generate", "poisson", "--jobs", "10", "--param", "rate=1", "--param", normal, "-o", &out]);
    assert_exit(&o, 2, "negative runtimes");
    assert_eq!(
        stderr(&o),
        "error: runtime: may draw negative runtimes: use a distribution of non-negative values, e.g. \
         `truncated_normal` with `low = 0`\n"
    );
    assert!(!tmp.join("x.swf").exists());

    let o = run(&["workload", "stats", "tests/fixtures/nope.swf"]);
    assert_exit(&o, 2, "stats of a missing file");
    assert_eq!(stderr(&o), "error: tests/fixtures/nope.swf: No such file or directory (os error 2)\n");

    // Gaps between consecutive submit times, whatever the order the trace lists its jobs in.
    let o = run(&["workload", "stats", "tests/fixtures/unsorted.swf"]);
    assert_exit(&o, 0, "stats of an unsorted trace");
    let gaps = stdout(&o).lines().find(|l| l.starts_with("inter-arrival")).map(str::to_string).unwrap_or_default();
    assert_eq!(gaps.split_whitespace().skip(2).collect::<Vec<_>>(), ["40.0", "45.0", "50.0", "55.0", "60.0", "50.0"]);
}

/// Brokers report their jobs in submission order, not id order: the job rows still come out in id order, with the
/// ids dealt broker by broker, and the run's means are the means of the written rows.
#[test]
fn job_rows_of_an_unsorted_trace_come_out_in_id_order() {
    let tmp = TempDir::new("rows");
    // Trace jobs 1 to 5 on one PE, listed out of submission order; two brokers get jobs 1, 3, 5 and 2, 4.
    let job =
        |id: u32, submit: u32, run: u32| format!("{id} {submit} -1 {run} 1 -1 -1 1 {run} -1 1 1 -1 -1 -1 -1 -1 -1\n");
    let trace = [job(1, 30, 20), job(2, 0, 40), job(3, 10, 5), job(4, 5, 10), job(5, 50, 1)].concat();
    std::fs::write(tmp.join("t.swf"), trace).unwrap();
    let scenario = "name = \"rows\"\nseed = 1\nreplications = 1\n\n[workloads.t]\nmodel = \"swf\"\nfile = \"t.swf\"\n\n\
                    [providers.cluster]\npes = 1\nscheduler = \"easy\"\n\n[brokers.user]\ncount = 2\nworkload = \"t\"\n\
                    submit-to = \"cluster\"\n";
    std::fs::write(tmp.join("rows.toml"), scenario).unwrap();
    let o = run(&["run", &tmp.arg("rows.toml"), "--quiet", "--out", &tmp.arg("out")]);
    assert_exit(&o, 0, "run of an unsorted trace");
    let csv = read_string(&tmp.join("out/p0/r0/jobs.csv"));
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let ids: Vec<&str> = rows.iter().map(|r| r[column("id")]).collect();
    assert_eq!(ids, ["1", "2", "3", "4", "5"]);
    let sources: Vec<&str> = rows.iter().map(|r| r[column("source_id")]).collect();
    assert_eq!(sources, ["1", "3", "5", "2", "4"], "ids dealt broker by broker, in trace order");
    let waits: Vec<f64> = rows.iter().map(|r| r[column("wait")].parse().unwrap()).collect();
    assert!(waits.iter().any(|&w| w > 0.0), "jobs waited: {waits:?}");
    let summary: serde_json::Value = serde_json::from_slice(&read(&tmp.join("out/p0/r0/summary.json"))).unwrap();
    let mean = waits.iter().sum::<f64>() / waits.len() as f64;
    assert_eq!(summary["jobs.wait"].as_f64(), Some(mean), "summed in id order");
    let by_group = summary["brokers.user.wait"].as_f64().unwrap();
    assert!((by_group - mean).abs() < 1e-9, "{by_group} against {mean}");
    let schedule = read_string(&tmp.join("out/p0/r0/schedule.csv"));
    let scheduled: Vec<&str> = schedule.lines().skip(1).map(|l| l.split(',').next().unwrap()).collect();
    assert_eq!(scheduled, ids);
    // Tables are written through temporary files renamed at the end: none is left behind.
    let names: Vec<String> = std::fs::read_dir(tmp.join("out/p0/r0"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.starts_with('.')), "{names:?}");
}

/// Parquet tables come with the `parquet` feature; without it, asking for them is refused before anything runs.
#[test]
fn parquet_tables_are_written_with_the_feature_and_refused_without() {
    let tmp = TempDir::new("parquet");
    let args = ["run", "tests/fixtures/hand.toml", "--quiet", "--set", "outputs.parquet=true", "--out"];
    let o = run(&[&args[..], &[tmp.arg("out").as_str()]].concat());
    if cfg!(feature = "parquet") {
        assert_exit(&o, 0, "run with parquet");
        for table in ["jobs", "schedule", "timeseries", "ledger"] {
            let bytes = read(&tmp.join(&format!("out/p0/r0/{table}.parquet")));
            assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"), "{table}.parquet is a Parquet file");
            assert!(!tmp.join(&format!("out/p0/r0/{table}.csv")).exists(), "{table}: Parquet instead of CSV");
        }
    } else {
        assert_exit(&o, 78, "run with parquet, built without it");
        assert!(
            stderr(&o).contains("outputs.parquet: this gridmarket was built without Parquet output"),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn an_exchange_nobody_trades_on_runs_and_says_so() {
    let tmp = TempDir::new("exchange-alone");
    let o = run(&["run", "tests/fixtures/exchange-alone.toml", "--quiet", "--out", &tmp.arg("out")]);
    assert_exit(&o, 0, "run");
    let err = stderr(&o);
    for who in ["no providers: nothing will be offered", "no brokers: nothing will be asked for"] {
        assert!(err.contains(&format!("exchange-alone.toml:7:12: exchanges.mandi: the scenario has {who}")), "{err}");
    }
}

#[test]
fn a_target_at_a_swept_number_written_otherwise_is_judged_and_fails() {
    // `at = { … = 120 }` against a sweep of `[120.0]`: one number, so the failing target is judged, not dropped.
    let tmp = TempDir::new("probe-at");
    let o = run(&["run", "tests/scenarios/probe-at/probe-at.toml", "--quiet", "--out", &tmp.arg("out")]);
    assert_exit(&o, 1, "the target fails");
    let text = stdout(&o);
    assert!(text.contains("0 of 1 targets pass, 1 FAIL, 0 inconclusive"), "{text}");
}

#[test]
fn a_versus_claim_that_matches_no_point_of_the_other_file_fails_and_run_says_what_it_leaves() {
    let tmp = TempDir::new("nomatch");
    let o = run(&["reproduce", "--quiet", "--scenarios", "tests/scenarios", "--out", &tmp.arg("out"), "nomatch"]);
    assert_exit(&o, 1, "a claim that matched nothing is a FAIL");
    let text = stdout(&o);
    assert!(text.contains("nomatch: 0 of 2 targets pass, 2 FAIL, 0 inconclusive"), "{text}");
    assert_eq!(text.matches("no point of there matches  FAIL").count(), 2, "{text}");
    // `run` judges one file: it says which claims it leaves to `reproduce`.
    let o = run(&["run", "tests/scenarios/nomatch/here.toml", "--quiet", "--out", &tmp.arg("run")]);
    assert_exit(&o, 0, "nothing judged, nothing failed");
    let text = stdout(&o);
    assert!(text.contains("not judged by `run`: 1 claim(s) compare with another file of the family"), "{text}");
    assert!(text.contains("jobs.completed versus there.toml: `gridmarket reproduce` runs both files"), "{text}");
}

#[test]
fn check_lock_holds_for_the_locked_family_and_fails_naming_what_a_changed_parameter_moved() {
    let tmp = TempDir::new("lock");
    // Each family its own output folder: one holds the outputs of one scenario file.
    let reproduce = |scenarios: &str, extra: &[&str]| {
        let out = tmp.arg(if scenarios == "tests/scenarios" { "committed" } else { "copied" });
        let mut args = vec!["reproduce", "--quick", "--quiet", "--scenarios", scenarios, "--out", &out, "locked"];
        args.extend_from_slice(extra);
        run(&args)
    };
    let o = reproduce("tests/scenarios", &["--check-lock"]);
    assert_exit(&o, 0, "the committed lock holds, though its targets fail");
    assert!(
        stdout(&o).contains("lock: tests/scenarios/locked/verdicts.quick.lock holds (8 verdicts)"),
        "{}",
        stdout(&o)
    );
    // The family copied, one parameter changed: the lock no longer holds, and says which claims moved.
    let copy = tmp.join("scenarios/locked");
    std::fs::create_dir_all(&copy).unwrap();
    for file in ["queue.toml", "verdicts.quick.lock"] {
        std::fs::copy(root().join("tests/scenarios/locked").join(file), copy.join(file)).unwrap();
    }
    let scenario = read_string(&copy.join("queue.toml")).replace("pes = 4\n", "pes = 5\n");
    std::fs::write(copy.join("queue.toml"), scenario).unwrap();
    let scenarios = tmp.arg("scenarios");
    let o = reproduce(&scenarios, &["--check-lock"]);
    assert_exit(&o, 1, "a changed parameter moves the locked numbers");
    let text = stdout(&o);
    assert!(text.contains("verdicts.quick.lock differs in"), "{text}");
    assert!(text.contains("queue: jobs.wait: fcfs > easy at workloads.w.rate=0.02 [target]: moved from"), "{text}");
    assert!(text.contains("if the change is meant, rerun with --update-lock"), "{text}");
    // `--update-lock` takes the new numbers, which then hold.
    assert_exit(&reproduce(&scenarios, &["--update-lock"]), 0, "the lock is rewritten");
    assert_exit(&reproduce(&scenarios, &["--check-lock"]), 0, "the rewritten lock holds");
    assert_ne!(
        read(&copy.join("verdicts.quick.lock")),
        read(&root().join("tests/scenarios/locked/verdicts.quick.lock"))
    );
    // A family without a lock is refused with what to do.
    std::fs::remove_file(copy.join("verdicts.quick.lock")).unwrap();
    let o = reproduce(&scenarios, &["--check-lock"]);
    assert_exit(&o, 2, "no lock to check");
    assert!(stderr(&o).contains("write it with `--update-lock`"), "{}", stderr(&o));
}

/// A market of personalised brokers over the CSV job list `jobs` (its rows after the header).
fn personalised_market(tmp: &TempDir, jobs: &str) -> String {
    std::fs::write(tmp.join("jobs.csv"), format!("submit,cpus,runtime\n{jobs}")).unwrap();
    let scenario = "name = \"market\"\nseed = 1\n[workloads.w]\nmodel = \"csv\"\nfile = \"jobs.csv\"\n\
                    [providers.a]\npes = 4\nprice = 0.01\n[brokers.u]\nworkload = \"w\"\npersonalised = [\"*\"]\n\
                    round = 50\n";
    std::fs::write(tmp.join("s.toml"), scenario).unwrap();
    tmp.arg("s.toml")
}

#[test]
fn a_job_of_runtime_zero_is_left_out_counted_and_the_run_ends() {
    // It once claimed every round for ever: a provider refuses a job that asks for nothing.
    let tmp = TempDir::new("runtime-zero");
    let s = personalised_market(&tmp, "0,2,100\n10,2,0\n20,1,50\n");
    let o = run_within(&["run", &s, "--quiet", "--out", &tmp.arg("out")], Duration::from_secs(30));
    assert_exit(&o, 0, "run");
    let e = stderr(&o);
    assert!(e.contains("1 record(s) cannot be simulated") && e.contains("the first at line 3"), "{e}");
    let jobs = read_string(&tmp.join("out/p0/r0/jobs.csv"));
    assert_eq!(jobs.lines().count(), 3, "two jobs and the header:\n{jobs}");
    // `workload convert` leaves it out the same way, so its SWF runs too.
    let o = run(&["workload", "convert", &tmp.arg("jobs.csv"), &tmp.arg("jobs.swf")]);
    assert_exit(&o, 0, "convert");
    let swf = read_string(&tmp.join("jobs.swf"));
    assert_eq!(swf.lines().filter(|l| !l.starts_with(';')).count(), 2, "{swf}");
}

#[test]
fn a_job_wider_than_every_provider_is_dropped_for_that_reason() {
    let tmp = TempDir::new("wide");
    let s = personalised_market(&tmp, "0,64,100\n");
    let o = run(&["run", &s, "--quiet", "--out", &tmp.arg("out")]);
    assert_exit(&o, 0, "run");
    let jobs = read_string(&tmp.join("out/p0/r0/jobs.csv"));
    assert!(jobs.contains("64 PEs, wider than every provider (the widest has 4)"), "{jobs}");
}

#[test]
fn overrides_given_twice_or_negative_are_refused_and_validate_takes_them() {
    let o = run(&["run", TINY, "--set", "seed=1", "--set", "seed=2"]);
    assert_exit(&o, 2, "--set twice");
    assert!(stderr(&o).contains("--set seed is given twice (1 and 2): give each key once"), "{}", stderr(&o));
    let o = run(&["run", TINY, "--seed", "-1"]);
    assert_exit(&o, 2, "--seed -1");
    assert!(stderr(&o).contains("invalid value '-1' for '--seed <SEED>': expected a whole number"), "{}", stderr(&o));
    let o = run(&["run", TINY, "--replications", "-1"]);
    assert_exit(&o, 2, "--replications -1");
    assert!(stderr(&o).contains("-1 is not in 1..="), "{}", stderr(&o));
    let o = run(&["validate", TINY, "--set", "replications=0"]);
    assert_exit(&o, EXIT_CONFIG, "validate --set");
    assert!(stderr(&o).contains("(from --set replications=0)"), "{}", stderr(&o));
}

#[test]
fn a_profile_that_names_a_profile_is_refused_in_its_own_file() {
    let tmp = TempDir::new("profile-cycle");
    std::fs::write(tmp.join("p.toml"), "pes = 4\nprofile = \"q.toml\"\n").unwrap();
    std::fs::write(tmp.join("q.toml"), "profile = \"p.toml\"\n").unwrap();
    let scenario = "[workloads.w]\nmodel = \"poisson\"\njobs = 2\nrate = 1.0\nruntime = { kind = \"constant\", value = 5.0 }\n\
                    [providers.site]\nprofile = \"p.toml\"\n[brokers.user]\nworkload = \"w\"\nsubmit-to = \"site\"\n";
    std::fs::write(tmp.join("s.toml"), scenario).unwrap();
    let o = run(&["validate", &tmp.arg("s.toml")]);
    assert_exit(&o, EXIT_CONFIG, "validate");
    let expected = format!(
        "error: {}:2:1: profile: a profile cannot name another profile (named by `providers.site.profile` of {})",
        tmp.arg("p.toml"),
        tmp.arg("s.toml")
    );
    assert!(stderr(&o).starts_with(&expected), "{}", stderr(&o));
}

#[test]
fn a_byte_order_mark_and_a_letter_beyond_ascii_are_read_as_meant() {
    let tmp = TempDir::new("bom");
    let s = personalised_market(&tmp, "0,2,100\n");
    let csv = read_string(&tmp.join("jobs.csv"));
    std::fs::write(tmp.join("jobs.csv"), format!("\u{feff}{csv}")).unwrap();
    let toml = read_string(Path::new(&s)).replace("[providers.a]", "[providers.\"é\"]");
    std::fs::write(&s, toml).unwrap();
    let o = run(&["validate", &s]);
    assert_exit(&o, 0, "validate");
}

#[test]
fn outputs_never_replace_a_file_gridmarket_did_not_write() {
    let tmp = TempDir::new("foreign");
    let s = personalised_market(&tmp, "0,2,100\n");
    // A folder of the user's: refused, their file untouched.
    std::fs::create_dir_all(tmp.join("mine")).unwrap();
    std::fs::write(tmp.join("mine/summary.csv"), "mine").unwrap();
    let o = run(&["run", &s, "--quiet", "--out", &tmp.arg("mine")]);
    assert_exit(&o, 2, "run into a folder of the user's");
    assert!(stderr(&o).contains("holds what gridmarket did not write there (summary.csv)"), "{}", stderr(&o));
    assert_eq!(read_string(&tmp.join("mine/summary.csv")), "mine");
    // The scenario itself as the trace: refused.
    let o = run(&["run", &s, "--quiet", "--out", &tmp.arg("out"), "--trace", &s]);
    assert_exit(&o, 2, "--trace onto the scenario");
    assert!(stderr(&o).contains("the file exists and is not a message trace"), "{}", stderr(&o));
    assert!(read_string(Path::new(&s)).starts_with("name = \"market\""));
    // A run into its own folder again is fine, and a folder locked by a live process is refused with who holds it.
    let o = run(&["run", &s, "--quiet", "--out", &tmp.arg("out")]);
    assert_exit(&o, 0, "run again into its own folder");
    std::fs::write(tmp.join("out/.gridmarket.lock"), "1\ngridmarket run other.toml\n").unwrap();
    let o = run(&["run", &s, "--quiet", "--out", &tmp.arg("out")]);
    assert_exit(&o, 2, "run into a locked folder");
    assert!(stderr(&o).contains("is being written by process 1 (`gridmarket run other.toml`)"), "{}", stderr(&o));
    // A workload written onto a file that is not gridmarket's SWF: refused.
    std::fs::write(tmp.join("notes.swf"), "my notes").unwrap();
    let o = run(&["workload", "convert", &tmp.arg("jobs.csv"), &tmp.arg("notes.swf")]);
    assert_exit(&o, 2, "convert onto a user's file");
    assert_eq!(read_string(&tmp.join("notes.swf")), "my notes");
}

#[test]
fn reproduce_all_gives_each_family_a_folder_and_writes_an_index() {
    let tmp = TempDir::new("all");
    let s = personalised_market(&tmp, "0,2,100\n");
    for family in ["f1", "f2"] {
        std::fs::create_dir_all(tmp.join(&format!("sc/{family}"))).unwrap();
        // The same file name in both families: they once wrote into one folder.
        std::fs::copy(&s, tmp.join(&format!("sc/{family}/same.toml"))).unwrap();
        std::fs::copy(tmp.join("jobs.csv"), tmp.join(&format!("sc/{family}/jobs.csv"))).unwrap();
    }
    let o = run(&["reproduce", "all", "--quiet", "--scenarios", &tmp.arg("sc"), "--out", &tmp.arg("all")]);
    assert_exit(&o, 0, "reproduce all");
    for family in ["f1", "f2"] {
        assert!(tmp.join(&format!("all/{family}/market/summary.csv")).is_file(), "{family}");
        assert!(tmp.join(&format!("all/{family}/report.md")).is_file(), "{family}");
    }
    let index = read_string(&tmp.join("all/report.md"));
    assert!(index.contains("| [f1](f1/report.md) |") && index.contains("| [f2](f2/report.md) |"), "{index}");
}

#[cfg(unix)]
#[test]
fn a_reader_that_goes_away_ends_the_command_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let mut child = gridmarket().arg("schema").stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The pipe is closed here, with most of the schema unwritten.
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.signal(), Some(13), "ended by SIGPIPE: {:?}", o.status);
    assert_eq!(stderr(&o), "", "no panic, no backtrace");
    // Output that cannot be written for another reason is one line and exit code 2.
    if Path::new("/dev/full").exists() {
        let full = std::fs::File::create("/dev/full").unwrap();
        let o = gridmarket().arg("schema").stdout(full).stderr(Stdio::piped()).output().unwrap();
        assert_exit(&o, 2, "schema > /dev/full");
        assert!(stderr(&o).starts_with("error: failed printing to stdout"), "{}", stderr(&o));
    }
}

#[test]
fn progress_is_printed_as_lines_when_stderr_is_not_a_terminal() {
    let tmp = TempDir::new("progress");
    // One run long enough (in a debug build) for a few lines at 50 ms.
    let scenario = "seed = 1\nhorizon = 2e6\n[workloads.w]\nmodel = \"poisson\"\njobs = 20000\nrate = 0.01\n\
                    runtime = { kind = \"constant\", value = 50.0 }\n[providers.site]\npes = 4\n\
                    [brokers.user]\nworkload = \"w\"\nsubmit-to = \"site\"\n";
    std::fs::write(tmp.join("s.toml"), scenario).unwrap();
    let o = gridmarket()
        .args(["run", &tmp.arg("s.toml"), "--out", &tmp.arg("out")])
        .env("GRIDMARKET_PROGRESS_EVERY", "0.05")
        .output()
        .unwrap();
    assert_exit(&o, 0, "run");
    let e = stderr(&o);
    let line = e.lines().find(|l| l.starts_with("progress: 0 of 1 runs done")).unwrap_or_else(|| panic!("{e}"));
    assert!(line.contains("under way: p0/r0 at ") && line.contains("% of its horizon"), "{line}");
    // `--quiet` silences it.
    let o = gridmarket()
        .args(["run", &tmp.arg("s.toml"), "--out", &tmp.arg("out"), "--quiet"])
        .env("GRIDMARKET_PROGRESS_EVERY", "0.05")
        .output()
        .unwrap();
    assert!(!stderr(&o).contains("progress:"), "{}", stderr(&o));
}

#[test]
fn a_sweep_beyond_the_charted_points_draws_no_time_charts_and_says_so() {
    let tmp = TempDir::new("many-points");
    let prices: Vec<String> = (1..=101).map(|p| format!("{p}.0")).collect();
    let scenario = format!(
        "seed = 1\n[workloads.w]\nmodel = \"poisson\"\njobs = 2\nrate = 1.0\nruntime = {{ kind = \"constant\", \
         value = 5.0 }}\n[providers.site]\npes = 4\nprice = 1.0\n[brokers.user]\nworkload = \"w\"\nsubmit-to = \
         \"site\"\n[sweep]\n\"providers.site.price\" = [{}]\n",
        prices.join(", ")
    );
    std::fs::write(tmp.join("s.toml"), scenario).unwrap();
    let o = run(&["run", &tmp.arg("s.toml"), "--quiet", "--out", &tmp.arg("out")]);
    assert_exit(&o, 0, "run");
    assert!(
        stderr(&o).contains("101 sweep points: the per-point time charts (p<i>/*.svg) are drawn only"),
        "{}",
        stderr(&o)
    );
    assert!(!tmp.join("out/p0/utilisation.svg").exists() && tmp.join("out/p0/r0/timeseries.csv").exists());
}

#[test]
fn a_meta_broker_drops_a_job_wider_than_every_provider_instead_of_holding_it_for_ever() {
    let tmp = TempDir::new("metabroker-wide");
    std::fs::write(tmp.join("jobs.csv"), "submit,cpus,runtime\n0,6,100\n5,1,10\n").unwrap();
    let scenario = "name = \"wide\"\nseed = 1\n[workloads.w]\nmodel = \"csv\"\nfile = \"jobs.csv\"\n\
                    [providers.site]\ncount = 2\npes = 4\n[metabrokers.mb]\nproviders = [\"site\"]\n\
                    [brokers.user]\nworkload = \"w\"\nmetabroker = \"mb\"\n";
    std::fs::write(tmp.join("s.toml"), scenario).unwrap();
    // Without a horizon, the run used to last for ever: the job waited at the meta-broker round after round.
    let o = run_within(&["run", &tmp.arg("s.toml"), "--quiet", "--out", &tmp.arg("out")], Duration::from_secs(30));
    assert_exit(&o, 0, "run");
    let jobs = read_string(&tmp.join("out/p0/r0/jobs.csv"));
    assert!(
        jobs.contains(",dropped,") && jobs.contains("6 PEs, wider than every provider (the widest has 4)"),
        "{jobs}"
    );
}

/// The long flags (`--name`) a `--help` text lists under its options, and the subcommands under its commands.
fn help_of(path: &[&str]) -> (Vec<String>, Vec<String>) {
    let o = run(&[path, &["--help"]].concat());
    assert_exit(&o, 0, "--help");
    let (mut flags, mut commands, mut section) = (Vec::new(), Vec::new(), "");
    for line in stdout(&o).lines() {
        match line {
            "Commands:" | "Options:" | "Arguments:" => section = line,
            _ if section == "Commands:" && line.starts_with("  ") => {
                commands.extend(line.split_whitespace().next().filter(|&c| c != "help").map(String::from))
            }
            _ if section == "Options:" => {
                let long = line.split_whitespace().find(|w| w.starts_with("--")).map(|w| w.trim_end_matches(','));
                flags.extend(long.filter(|&f| f != "--help" && f != "--version").map(String::from))
            }
            _ => {}
        }
    }
    (flags, commands)
}

#[test]
fn the_readme_command_table_lists_every_command_and_flag_that_help_shows() {
    let readme = read_string(Path::new("README.md"));
    let rows: Vec<&str> = readme.lines().filter(|l| l.starts_with("| `gridmarket ")).collect();
    let mut paths: Vec<Vec<String>> = help_of(&[]).1.into_iter().map(|c| vec![c]).collect();
    let mut checked = 0;
    while let Some(path) = paths.pop() {
        let words: Vec<&str> = path.iter().map(String::as_str).collect();
        let (flags, commands) = help_of(&words);
        if !commands.is_empty() {
            paths.extend(commands.into_iter().map(|c| [path.clone(), vec![c]].concat()));
            continue;
        }
        let command = format!("`gridmarket {}", words.join(" "));
        // The command cell of every row that names the command.
        let cells: Vec<&str> =
            rows.iter().filter_map(|r| r[1..].split(" | ").next()).filter(|c| c.contains(&command)).collect();
        assert!(!cells.is_empty(), "the README's command table has no row for {command}`");
        for flag in flags {
            assert!(cells.iter().any(|c| c.contains(&flag)), "the README's row of {command}` lacks {flag}");
        }
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} commands found in --help");
}
