//! The `gridmarket` command line.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use agents::registry::Registry;
use anyhow::{Context, bail};
use clap::{Parser, Subcommand};

use gridmarket::runner::{Outcome, RunOptions, StudyResult, evaluate_versus, run_study, write_verdicts};
use gridmarket::scenario::{LoadOptions, ScenarioError, Study};
use gridmarket::{report, schema};

mod workload_cmd;

/// Exit code of a scenario that is refused (sysexits EX_CONFIG).
const EXIT_CONFIG: u8 = 78;
/// Exit code when a target or a sanity check fails (with `--strict`, also when one is inconclusive).
const EXIT_TARGET: u8 = 1;
/// Exit code after Ctrl-C.
const EXIT_INTERRUPTED: u8 = 130;
/// Most parallel runs (`--jobs`): each is a thread with a whole simulation in memory.
const MAX_PARALLEL: u32 = 1024;

/// gridmarket: an actor-based, multi-agent simulator of grid and cloud resource markets.
#[derive(Parser)]
#[command(version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario: every sweep point and replication; write outputs and print a summary.
    Run {
        /// The scenario file.
        file: PathBuf,
        /// Replace the scenario's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Replace the number of replications.
        #[arg(long)]
        replications: Option<u32>,
        /// Set a key, adding it if the file lacks it: `--set providers.fast.pes=128` (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Output folder (default: results/<scenario name>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Write the message trace (JSON lines) here; with several runs, each run writes `trace.jsonl` in its folder.
        #[arg(long)]
        trace: Option<PathBuf>,
        /// Also write each run's schedule as SWF: `schedule.swf` in its folder, beside `jobs.csv`.
        #[arg(long)]
        schedule_swf: bool,
        /// Parallel runs (default: the number of CPUs; at most 1024).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_PARALLEL)))]
        jobs: Option<u32>,
        /// Skip runs already finished in the output folder.
        #[arg(long)]
        resume: bool,
        /// Apply the scenario's [quick] overrides (reduced sizes).
        #[arg(long)]
        quick: bool,
        /// No progress bar.
        #[arg(long)]
        quiet: bool,
        /// Exit 1 when a target or check is inconclusive too, not only when one fails.
        #[arg(long)]
        strict: bool,
        /// Print the whole process's wall time and peak memory (resident set) when done.
        #[arg(long)]
        usage: bool,
    },
    /// Check scenario files without running them.
    Validate {
        /// Scenario files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Run a family of scenarios (scenarios/NAME/*.toml), check its targets, write report.md and charts.
    Reproduce {
        /// A family under the scenarios folder, or `all`.
        name: String,
        /// Reduced sizes fit for CI.
        #[arg(long)]
        quick: bool,
        /// Output folder (default: results/<family>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Parallel runs (default: the number of CPUs; at most 1024).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_PARALLEL)))]
        jobs: Option<u32>,
        /// The scenarios folder.
        #[arg(long, default_value = "scenarios")]
        scenarios: PathBuf,
        /// No progress bar.
        #[arg(long)]
        quiet: bool,
        /// Exit 1 when a target or check is inconclusive too, not only when one fails.
        #[arg(long)]
        strict: bool,
    },
    /// List scenario families and the policies of each agent kind.
    List {
        /// The scenarios folder.
        #[arg(long, default_value = "scenarios")]
        scenarios: PathBuf,
    },
    /// Print every scenario key with its type, default and meaning (Markdown).
    Schema {
        /// Print instead every output file, column and metric with its unit and meaning.
        #[arg(long)]
        outputs: bool,
    },
    /// Generate, inspect and convert workloads.
    #[command(subcommand)]
    Workload(workload_cmd::WorkloadCmd),
}

fn main() -> ExitCode {
    let started = std::time::Instant::now();
    quiet_panics();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()))
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let usage = matches!(cli.command, Command::Run { usage: true, .. });
    let code = run(cli);
    if usage {
        let peak =
            peak_rss().map_or("unknown (no /proc/self/status)".into(), |kb| format!("{:.1} MiB", kb as f64 / 1024.0));
        // On a shared machine the wall time includes waiting for a CPU; the CPU time does not.
        let cpu = cpu_secs().map_or(String::new(), |s| format!(", CPU {s:.2} s"));
        println!("usage: wall {:.3} s{cpu}, peak memory {peak}", started.elapsed().as_secs_f64());
    }
    match code {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            if e.downcast_ref::<ScenarioError>().is_some() { ExitCode::from(EXIT_CONFIG) } else { ExitCode::from(2) }
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Run {
            file,
            seed,
            replications,
            set,
            out,
            trace,
            schedule_swf,
            jobs,
            resume,
            quick,
            quiet,
            strict,
            usage: _,
        } => {
            let set = set
                .iter()
                .map(|s| s.split_once('=').map(|(k, v)| (k.trim().to_string(), v.trim().to_string())))
                .collect::<Option<Vec<_>>>()
                .context("--set takes KEY=VALUE")?;
            let study = Study::load(&file, &LoadOptions { quick, set, seed, replications, ..LoadOptions::default() })?;
            warn(&study);
            let out = out.unwrap_or_else(|| Path::new("results").join(&study.name));
            let runs: u32 = study.points.iter().map(|p| p.plan.replications).sum();
            if let Some(t) = &trace
                && runs > 1
            {
                eprintln!(
                    "note: --trace {}: {runs} runs, so each writes its own trace, {}/pN/rM/trace.jsonl",
                    t.display(),
                    out.display()
                );
            }
            let opts = RunOptions {
                out: out.clone(),
                jobs: jobs.map_or_else(cpus, |j| j as usize),
                resume,
                quiet,
                trace,
                schedule_swf,
                command: command_line(),
            };
            let interrupt = interrupt_flag()?;
            let result = run_study(&study, &opts, &interrupt)?;
            print!("{}", report::summary_table(&study, &result));
            let verdicts = report::verdict_tables(&study, &result);
            if !verdicts.is_empty() {
                print!("\n{verdicts}");
            }
            println!("outputs: {}", out.display());
            Ok(finish(&result, &interrupt, strict))
        }
        Command::Validate { files } => {
            // Every file is checked, and every refusal reported, before the exit status says any was refused.
            let mut refused = 0;
            for f in &files {
                let checked = Study::load(f, &LoadOptions::default()).and_then(|study| {
                    // The reduced sizes of `--quick` must be valid too.
                    Study::load(f, &LoadOptions { quick: true, ..LoadOptions::default() })?;
                    Ok(study)
                });
                match checked {
                    Ok(study) => {
                        warn(&study);
                        let runs: u32 = study.points.iter().map(|p| p.plan.replications).sum();
                        println!("{}: ok ({} sweep point(s), {runs} run(s))", f.display(), study.points.len());
                    }
                    Err(e) => {
                        eprintln!("error: {e}");
                        refused += 1;
                    }
                }
            }
            Ok(if refused > 0 { ExitCode::from(EXIT_CONFIG) } else { ExitCode::SUCCESS })
        }
        Command::Reproduce { name, quick, out, jobs, scenarios, quiet, strict } => {
            let families = if name == "all" { families(&scenarios)? } else { vec![name] };
            let interrupt = interrupt_flag()?;
            let mut failed = false;
            for family in families {
                let dir = scenarios.join(&family);
                if !dir.is_dir() {
                    bail!("no scenario family `{family}` in {}", scenarios.display());
                }
                let out = out.clone().unwrap_or_else(|| Path::new("results").join(&family));
                let mut studies = Vec::new();
                for file in scenario_files(&dir)? {
                    let study = Study::load(&file, &LoadOptions { quick, ..LoadOptions::default() })?;
                    warn(&study);
                    let opts = RunOptions {
                        out: out.join(&study.name),
                        jobs: jobs.map_or_else(cpus, |j| j as usize),
                        resume: false,
                        quiet,
                        trace: None,
                        schedule_swf: false,
                        command: command_line(),
                    };
                    let result = run_study(&study, &opts, &interrupt)?;
                    studies.push((study, result));
                }
                // Targets and checks that compare two files of the family, now that every file has run.
                let versus: Vec<_> =
                    studies.iter().map(|(study, result)| evaluate_versus(study, result, &studies)).collect();
                for ((study, result), (targets, checks)) in studies.iter_mut().zip(versus) {
                    if !targets.is_empty() || !checks.is_empty() {
                        result.verdicts.extend(targets);
                        result.checks.extend(checks);
                        write_verdicts(study, result, &out.join(&study.name))?;
                    }
                    failed |= fails(result, strict) || !result.unfinished.is_empty();
                }
                report::write_family_report(&family, &studies, &out)?;
                println!("== {family}");
                for (study, result) in &studies {
                    println!("-- {}", study.name);
                    print!("{}", report::verdict_tables(study, result));
                }
                let targets: Vec<_> = studies.iter().flat_map(|(_, r)| r.verdicts.iter().cloned()).collect();
                let checks: Vec<_> = studies.iter().flat_map(|(_, r)| r.checks.iter().cloned()).collect();
                println!(
                    "{family}: {}; {}",
                    report::tally_line("targets", &targets, quick),
                    report::tally_line("sanity checks", &checks, false)
                );
                println!("report: {}", out.join("report.md").display());
                if interrupt.load(Ordering::Relaxed) {
                    return Ok(ExitCode::from(EXIT_INTERRUPTED));
                }
            }
            Ok(if failed { ExitCode::from(EXIT_TARGET) } else { ExitCode::SUCCESS })
        }
        Command::List { scenarios } => {
            println!("scenario families in {}:", scenarios.display());
            for f in families(&scenarios)? {
                let n = scenario_files(&scenarios.join(&f))?.len();
                println!("  {f} ({n} scenario file(s))");
            }
            print!("\n{}", schema::kinds_text(&Registry::standard()));
            Ok(ExitCode::SUCCESS)
        }
        Command::Schema { outputs } => {
            let registry = Registry::standard();
            print!("{}", if outputs { schema::outputs_markdown(&registry) } else { schema::markdown(&registry) });
            Ok(ExitCode::SUCCESS)
        }
        Command::Workload(cmd) => workload_cmd::run(cmd),
    }
}

/// The process's peak resident set [kB], as Linux counts it (`VmHWM`).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The process's CPU time, user and system [s], as Linux counts it (`/proc/self/stat`, in ticks of 1/100 s: the
/// kernel's USER_HZ on every Linux architecture).
fn cpu_secs() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields 14 and 15 (utime, stime), counted after the command name, which may hold spaces but ends at the last ')'.
    let mut rest = stat[stat.rfind(')')? + 1..].split_whitespace().skip(11);
    let (user, system): (u64, u64) = (rest.next()?.parse().ok()?, rest.next()?.parse().ok()?);
    Some((user + system) as f64 / 100.0)
}

/// Whether a target or check of `result` fails, or with `strict` is inconclusive (documented conflicts are not
/// scored).
fn fails(result: &StudyResult, strict: bool) -> bool {
    result.verdicts.iter().chain(&result.checks).filter(|v| v.scored()).any(|v| match v.outcome {
        Outcome::Pass => false,
        Outcome::Fail => true,
        Outcome::Inconclusive => strict,
    })
}

/// Exit status of a study: 130 if interrupted (after saying which runs did not finish), 2 if runs failed, 1 if a
/// target or check failed (or, with `strict`, was inconclusive).
fn finish(result: &StudyResult, interrupt: &AtomicBool, strict: bool) -> ExitCode {
    for (point, rep, why) in &result.unfinished {
        eprintln!("run p{point}/r{rep} did not finish: {why}");
    }
    if interrupt.load(Ordering::Relaxed) {
        eprintln!("interrupted: {} finished run(s) kept; rerun with --resume to complete", result.runs.len());
        ExitCode::from(EXIT_INTERRUPTED)
    } else if !result.unfinished.is_empty() {
        ExitCode::from(2)
    } else if fails(result, strict) {
        ExitCode::from(EXIT_TARGET)
    } else {
        ExitCode::SUCCESS
    }
}

/// What the user should know about a valid scenario, on stderr.
fn warn(study: &Study) {
    for w in &study.warnings {
        eprintln!("warning: {w}");
    }
}

/// A run's panic is caught and reported as one line naming the agent, the simulated time and the message being
/// handled (or as a run that did not finish); the default hook's text and backtrace would only repeat it, so it is
/// printed with `RUST_BACKTRACE` only. A panic of the command itself (the main thread) is printed as usual.
fn quiet_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let asked = std::env::var_os("RUST_BACKTRACE").is_some_and(|v| v != "0");
        if asked || std::thread::current().name() == Some("main") {
            default(info);
        }
    }));
}

fn interrupt_flag() -> anyhow::Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    let f = flag.clone();
    ctrlc::set_handler(move || f.store(true, Ordering::Relaxed)).context("installing the Ctrl-C handler")?;
    Ok(flag)
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}

/// Sub-folders of `dir` holding at least one scenario file, sorted; `profiles/` holds shared profiles, not
/// scenarios.
fn families(dir: &Path) -> anyhow::Result<Vec<String>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() && path.file_name().is_some_and(|n| n != "profiles") && !scenario_files(&path)?.is_empty() {
            out.push(path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default());
        }
    }
    out.sort();
    Ok(out)
}

/// The `*.toml` files directly in `dir`, sorted (profiles live in sub-folders).
fn scenario_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    out.sort();
    Ok(out)
}
