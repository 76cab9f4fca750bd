//! The `gridmarket` command line, as a library function: [`main`] runs it over the kinds, policies and workload
//! models of the registries it is given, so that a program of a few lines is the whole command line with a pricing
//! rule, a queue order or a workload model of its own (see `docs/market.md`):
//!
//! ```no_run
//! use agents::registry::Registry;
//! use gridmarket::scenario::Plugins;
//!
//! fn main() -> std::process::ExitCode {
//!     // `Registry::standard().with_price_rule(&MyRule)` would add a pricing rule of one's own.
//!     gridmarket::cli::main(Plugins { registry: Registry::standard(), ..Plugins::default() })
//! }
//! ```

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};

use crate::runner::shard::{self, Loaded, Merged, Shard, ShardRun};
use crate::runner::{
    Outcome, RunOptions, StudyResult, evaluate_versus, run_shard, run_study, unjudged, write_verdicts,
};
use crate::scenario::{Plugins, ScenarioError, Study};
use crate::{report, schema, slurm};

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

/// What `run`, `validate` and `slurm` change of a scenario as they load it.
#[derive(clap::Args)]
struct Overrides {
    /// Replace the scenario's seed.
    #[arg(long, allow_negative_numbers = true, value_parser = parse_seed)]
    seed: Option<u64>,
    /// Replace the number of replications.
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..))]
    replications: Option<u32>,
    /// Set a key, adding it if the file lacks it: `--set providers.fast.pes=128` (repeatable, once per key).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
}

/// A seed: a whole number a `u64` holds.
fn parse_seed(s: &str) -> Result<u64, String> {
    s.parse().map_err(|_| format!("expected a whole number from 0 to {}", u64::MAX))
}

impl Overrides {
    /// The load options of these overrides; `quick` applies the scenario's `[quick]` table.
    fn loaded(&self, quick: bool) -> anyhow::Result<Loaded> {
        let mut set: Vec<(String, String)> = Vec::with_capacity(self.set.len());
        for s in &self.set {
            let Some((key, value)) = s.split_once('=') else { bail!("--set {s}: expected KEY=VALUE") };
            let (key, value) = (key.trim().to_string(), value.trim().to_string());
            if let Some((_, first)) = set.iter().find(|(k, _)| *k == key) {
                bail!("--set {key} is given twice ({first} and {value}): give each key once");
            }
            set.push((key, value));
        }
        Ok(Loaded { quick, set, seed: self.seed, replications: self.replications })
    }
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario: every sweep point and replication; write outputs and print a summary.
    Run {
        /// The scenario file.
        file: PathBuf,
        #[command(flatten)]
        overrides: Overrides,
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
        /// Run only shard K of N, counted from 1: every N-th (point, replication) task from the K-th; combine the
        /// shards with `merge`.
        #[arg(long, value_name = "K/N")]
        shard: Option<Shard>,
    },
    /// Check scenario files without running them.
    Validate {
        /// Scenario files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        overrides: Overrides,
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
        /// Run only shard K of N, counted from 1, of the family's tasks (its files' in turn); combine the shards
        /// with `merge`.
        #[arg(long, value_name = "K/N")]
        shard: Option<Shard>,
        /// Skip runs already finished in the output folder (same scenario, same seed): after editing only a
        /// family's targets, judges them again without running anything.
        #[arg(long)]
        resume: bool,
        /// Compare the verdicts and numbers with the family's lock (`verdicts.quick.lock` with `--quick`, else
        /// `verdicts.full.lock`) and exit 1 if any differ, naming each; failing targets that are locked as failing
        /// do not set the exit code.
        #[arg(long, conflicts_with = "update_lock")]
        check_lock: bool,
        /// Rewrite the family's lock from this run (a full lock records the command, commit and date).
        #[arg(long)]
        update_lock: bool,
    },
    /// Combine the shards of a study (`run --shard`) or a family (`reproduce --shard`) into its files, as one run
    /// of the whole would write them.
    Merge {
        /// The shards' output folders, every shard of one split.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Output folder: the run folders are hard-linked (or copied) from the shards.
        #[arg(long)]
        out: PathBuf,
        /// Exit 1 when a target or check is inconclusive too, not only when one fails.
        #[arg(long)]
        strict: bool,
    },
    /// Write the scripts that run a scenario on a Slurm cluster: a job array of shards and a merge after them.
    Slurm {
        /// The scenario file.
        file: PathBuf,
        /// Array tasks, one shard each (default: one per run, at most 1000).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(slurm::MAX_ARRAY)))]
        array_size: Option<u32>,
        /// Time limit of each job (`HH:MM:SS`, `D-HH:MM:SS` or minutes).
        #[arg(long, value_parser = slurm::check_time)]
        time: Option<String>,
        /// Partition of the jobs.
        #[arg(long, value_parser = slurm::check_partition)]
        partition: Option<String>,
        /// CPUs of each array task, its parallel runs.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_PARALLEL)))]
        cpus_per_task: u32,
        /// Folder of the scripts, the shards, the logs and the merged outputs (default: results/<scenario name>-slurm).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Run with the scenario's [quick] overrides.
        #[arg(long)]
        quick: bool,
        #[command(flatten)]
        overrides: Overrides,
    },
    /// List scenario families, single scenario files and the policies of each agent kind.
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

/// The command line over what `plugins` offers scenarios: parses the process's arguments, runs the command and
/// returns its exit status (`gridmarket`'s own `main` is this over [`Plugins::default`], gridmarket's own).
pub fn main(plugins: Plugins) -> ExitCode {
    quiet_panics();
    main_from(std::env::args_os(), plugins)
}

/// As [`main`], with the arguments given (the first is the program's name), for a program that runs commands of its
/// own (a test, say): the process's panic hook and signals are left as they are.
pub fn main_from(args: impl IntoIterator<Item = impl Into<OsString>>, plugins: Plugins) -> ExitCode {
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let command = command_line(&args);
    let started = std::time::Instant::now();
    init_logging();
    let cli = Cli::parse_from(&args);
    let usage = matches!(cli.command, Command::Run { usage: true, .. });
    let code = run(cli, &plugins, &command, &Interrupt::CtrlC);
    if usage {
        let peak =
            peak_rss().map_or("unknown (no /proc/self/status)".into(), |kb| format!("{:.1} MiB", kb as f64 / 1024.0));
        // On a shared machine the wall time includes waiting for a CPU; the CPU time does not.
        let cpu = cpu_secs().map_or(String::new(), |s| format!(", CPU {s:.2} s"));
        println!("usage: wall {:.3} s{cpu}, peak memory {peak}", started.elapsed().as_secs_f64());
    }
    match code {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            if e.downcast_ref::<ScenarioError>().is_some() { ExitCode::from(EXIT_CONFIG) } else { ExitCode::from(2) }
        }
    }
}

/// Runs one command from `args` (the first is the program's name) for a program that drives gridmarket, the Python
/// package: the exit code the command line would give (0, or 1 when a target fails, 130 when `interrupt` stopped it
/// early), or the command's error (a refused scenario is a [`ScenarioError`]); a malformed command line is an error
/// with the command line's message. Raising `interrupt` stops the runs as Ctrl-C does; no signal handler is installed.
pub fn run_command(
    args: impl IntoIterator<Item = impl Into<OsString>>,
    plugins: &Plugins,
    interrupt: Arc<AtomicBool>,
) -> anyhow::Result<u8> {
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let command = command_line(&args);
    init_logging();
    let cli = Cli::try_parse_from(&args).map_err(|e| anyhow::anyhow!("{}", e.render()))?;
    run(cli, plugins, &command, &Interrupt::Flag(interrupt))
}

/// The command as run.json and the folders' manifests record it.
fn command_line(args: &[OsString]) -> String {
    args.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ")
}

/// Warnings and errors to stderr (`RUST_LOG` chooses); a second call in one process keeps the first's logger.
fn init_logging() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()))
        .with_writer(std::io::stderr)
        .try_init();
}

/// What stops a command's runs early.
enum Interrupt {
    /// Ctrl-C, through the handler installed once a process.
    CtrlC,
    /// A flag its caller raises.
    Flag(Arc<AtomicBool>),
}

impl Interrupt {
    fn flag(&self) -> anyhow::Result<Arc<AtomicBool>> {
        match self {
            Interrupt::CtrlC => interrupt_flag(),
            Interrupt::Flag(flag) => Ok(flag.clone()),
        }
    }
}

fn run(cli: Cli, plugins: &Plugins, command: &str, interrupt: &Interrupt) -> anyhow::Result<u8> {
    let options = |load: &Loaded| load.options(plugins);
    match cli.command {
        Command::Run {
            file,
            overrides,
            out,
            trace,
            schedule_swf,
            jobs,
            resume,
            quick,
            quiet,
            strict,
            usage: _,
            shard,
        } => {
            let load = overrides.loaded(quick)?;
            let study = Study::load(&file, &options(&load))?;
            warn(&study);
            let out = out.unwrap_or_else(|| default_out(&study.name, shard));
            let runs: u32 = study.points.iter().map(|p| p.plan.replications).sum();
            // A trace may replace only a trace: never the scenario, a workload, or another file of the user's.
            if let Some(t) = trace.as_ref().filter(|t| t.exists() && runs == 1) {
                // Its first line only: a trace may be gigabytes.
                let first = std::fs::File::open(t)
                    .ok()
                    .and_then(|f| std::io::BufRead::lines(std::io::BufReader::new(f)).next()?.ok());
                if t.is_dir() {
                    bail!("--trace {}: a folder; the trace is a file", t.display());
                }
                if !first.is_some_and(|l| l.starts_with("{\"t\":")) {
                    bail!("--trace {}: the file exists and is not a message trace; choose another file", t.display());
                }
            }
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
                command: command.to_string(),
                report: Some(report::write_study_report),
            };
            let interrupt = interrupt.flag()?;
            if let Some(shard) = shard {
                let result = run_shard(&study, &opts, &ShardRun { shard, offset: 0, load }, &interrupt)?;
                println!(
                    "shard {shard}: {} of {} runs; outputs: {}",
                    result.runs.len(),
                    shard::tasks(&study),
                    out.display()
                );
                println!("combine the shards with `gridmarket merge DIR... --out DIR`");
                return Ok(finish(&result, &interrupt, strict));
            }
            let result = run_study(&study, &opts, &interrupt)?;
            for w in report::substitution_warnings(&study, &result) {
                eprintln!("warning: {w}");
            }
            print!("{}", report::summary_table(&study, &result));
            let verdicts = report::verdict_tables(&study, &result);
            if !verdicts.is_empty() {
                print!("\n{verdicts}");
            }
            let unjudged = unjudged(&study);
            if !unjudged.is_empty() {
                println!("not judged by `run`: {} claim(s) compare with another file of the family", unjudged.len());
                for (claim, other) in unjudged {
                    println!("  {} versus {other}: `gridmarket reproduce` runs both files and judges it", claim.metric);
                }
            }
            println!("outputs: {}", out.display());
            Ok(finish(&result, &interrupt, strict))
        }
        Command::Validate { files, overrides } => {
            // Every file is checked, and every refusal reported, before the exit status says any was refused; the
            // last refusal is the command's error (for a program, the one of a single file).
            let mut refusals = Vec::new();
            let (full, quick) = (options(&overrides.loaded(false)?), options(&overrides.loaded(true)?));
            for f in &files {
                let checked = Study::load(f, &full).and_then(|study| {
                    // The reduced sizes of `--quick` must be valid too.
                    Study::load(f, &quick)?;
                    Ok(study)
                });
                match checked {
                    Ok(study) => {
                        warn(&study);
                        let runs: u32 = study.points.iter().map(|p| p.plan.replications).sum();
                        println!("{}: ok ({} sweep point(s), {runs} run(s))", f.display(), study.points.len());
                    }
                    Err(e) => refusals.push(e),
                }
            }
            let Some(last) = refusals.pop() else { return Ok(0) };
            for e in &refusals {
                eprintln!("error: {e}");
            }
            Err(last.into())
        }
        Command::Reproduce {
            name,
            quick,
            out,
            jobs,
            scenarios,
            quiet,
            strict,
            shard,
            resume,
            check_lock,
            update_lock,
        } => {
            if shard.is_some() && name == "all" {
                bail!("reproduce all --shard: shard one family at a time");
            }
            if shard.is_some() && (check_lock || update_lock) {
                bail!("a lock holds a whole family's verdicts: check or update it after `merge`, not on a shard");
            }
            let all = name == "all";
            let families = if all { families(&scenarios)? } else { vec![name] };
            if families.is_empty() {
                bail!("no scenario family in {} (a family is a folder of scenario files)", scenarios.display());
            }
            // `all` gives each family a folder of its own under one, with an index of their counts.
            let base = all.then(|| out.clone().unwrap_or_else(|| default_out("all", None)));
            let base_claim = match &base {
                Some(base) => {
                    let declared: Vec<String> = families.iter().cloned().chain(["report.md".into()]).collect();
                    Some(crate::folder::claim(base, command, written_by(base, "all"), &declared)?)
                }
                None => None,
            };
            let interrupt = interrupt.flag()?;
            let mut failed = false;
            let mut index = Vec::new();
            for family in families {
                let dir = scenarios.join(&family);
                if !dir.is_dir() {
                    bail!("no scenario family `{family}` in {}", scenarios.display());
                }
                let out = match &base {
                    Some(base) => base.join(&family),
                    None => out.clone().unwrap_or_else(|| default_out(&family, shard)),
                };
                let load = Loaded { quick, ..Loaded::default() };
                let files = scenario_files(&dir)?;
                let loaded = files.iter().map(|f| Study::load(f, &options(&load))).collect::<Result<Vec<_>, _>>()?;
                let shard_manifest = shard.is_some().then(|| shard::MANIFEST.to_string());
                let declared: Vec<String> =
                    loaded.iter().map(|s| s.name.clone()).chain(["report.md".into()]).chain(shard_manifest).collect();
                let family_claim = crate::folder::claim(&out, command, written_by(&out, &family), &declared)?;
                // Refused before any file of the family runs.
                if shard.is_some()
                    && let Some(m) = loaded.iter().find_map(|s| shard::refuse_adaptive(s).err())
                {
                    bail!("{m}");
                }
                let mut studies = Vec::new();
                // Tasks of the family's earlier files: a shard's tasks are counted across the family.
                let mut offset = 0;
                for study in loaded {
                    let load = load.clone();
                    warn(&study);
                    let opts = RunOptions {
                        out: out.join(&study.name),
                        jobs: jobs.map_or_else(cpus, |j| j as usize),
                        resume,
                        quiet,
                        trace: None,
                        schedule_swf: false,
                        command: command.to_string(),
                        report: None,
                    };
                    let result = match shard {
                        Some(shard) => run_shard(&study, &opts, &ShardRun { shard, offset, load }, &interrupt)?,
                        None => run_study(&study, &opts, &interrupt)?,
                    };
                    offset += shard::tasks(&study);
                    studies.push((study, result));
                    // An interrupted shard writes no manifest for the files it did not reach: run it again.
                    if shard.is_some() && interrupt.load(Ordering::Relaxed) {
                        return Ok(EXIT_INTERRUPTED);
                    }
                }
                if let Some(shard) = shard {
                    let names: Vec<&str> = studies.iter().map(|(s, _)| s.name.as_str()).collect();
                    shard::write_family_manifest(&family, &names, shard, &out)?;
                    let runs: usize = studies.iter().map(|(_, r)| r.runs.len()).sum();
                    println!("shard {shard} of {family}: {runs} of {offset} runs; outputs: {}", out.display());
                    println!("combine the shards with `gridmarket merge DIR... --out DIR`");
                    failed |= studies.iter().any(|(_, r)| !r.unfinished.is_empty());
                } else {
                    let judged = conclude_family(&family, &mut studies, &out, strict)?;
                    let lock = crate::lock::path(&dir, quick);
                    let unfinished = studies.iter().any(|(_, r)| !r.unfinished.is_empty());
                    if check_lock {
                        failed |= unfinished || !lock_holds(&lock, &studies)?;
                    } else if update_lock {
                        if unfinished || interrupt.load(Ordering::Relaxed) {
                            bail!("{family}: runs did not finish, so {} is left as it was", lock.display());
                        }
                        let provenance = (!quick).then(|| crate::lock::Provenance::now(command.to_string()));
                        let entries = crate::lock::entries(&studies);
                        let text = crate::lock::render(&family, quick, &entries, provenance.as_ref());
                        crate::output::write_atomic(&lock, text.as_bytes())
                            .with_context(|| format!("writing {}", lock.display()))?;
                        println!("lock: {} ({} verdicts)", lock.display(), entries.len());
                    } else {
                        failed |= judged;
                    }
                    let targets: Vec<_> = studies.iter().flat_map(|(_, r)| r.verdicts.iter().cloned()).collect();
                    let checks: Vec<_> = studies.iter().flat_map(|(_, r)| r.checks.iter().cloned()).collect();
                    index.push(report::FamilyCounts { family: family.clone(), targets, checks });
                }
                family_claim.seal()?;
                if interrupt.load(Ordering::Relaxed) {
                    return Ok(EXIT_INTERRUPTED);
                }
            }
            if let (Some(base), Some(claim)) = (&base, base_claim) {
                let path = base.join("report.md");
                crate::output::write_atomic(&path, report::index(&index, quick).as_bytes())
                    .with_context(|| format!("writing {}", path.display()))?;
                claim.seal()?;
                println!("index of the families: {}", path.display());
            }
            Ok(if failed { EXIT_TARGET } else { 0 })
        }
        Command::Merge { dirs, out, strict } => match shard::merge(&dirs, plugins)? {
            Merged::Study(merged) => {
                merged.write(&out, Some(report::write_study_report))?;
                let (study, result) = (&merged.study, &merged.result);
                for w in report::substitution_warnings(study, result) {
                    eprintln!("warning: {w}");
                }
                print!("{}", report::summary_table(study, result));
                let verdicts = report::verdict_tables(study, result);
                if !verdicts.is_empty() {
                    print!("\n{verdicts}");
                }
                println!("outputs: {}", out.display());
                Ok(finish(result, &AtomicBool::new(false), strict))
            }
            Merged::Family(family, merged) => {
                let declared: Vec<String> =
                    merged.iter().map(|m| m.study.name.clone()).chain(["report.md".into()]).collect();
                let claim = crate::folder::claim(&out, command, written_by(&out, &family), &declared)?;
                for m in &merged {
                    m.write(&out.join(&m.study.name), None)?;
                }
                let mut studies: Vec<_> = merged.into_iter().map(|m| (m.study, m.result)).collect();
                let failed = conclude_family(&family, &mut studies, &out, strict)?;
                claim.seal()?;
                Ok(if failed { EXIT_TARGET } else { 0 })
            }
        },
        Command::Slurm { file, array_size, time, partition, cpus_per_task, out, quick, overrides } => {
            let load = overrides.loaded(quick)?;
            let study = Study::load(&file, &options(&load))?;
            warn(&study);
            if let Err(m) = shard::refuse_adaptive(&study) {
                bail!("{m}");
            }
            let tasks = shard::tasks(&study);
            let shards =
                array_size.unwrap_or_else(|| u32::try_from(tasks).unwrap_or(u32::MAX).clamp(1, slurm::MAX_ARRAY));
            if shards as usize > tasks {
                eprintln!(
                    "warning: --array-size {shards}: more shards than the study's {tasks} runs; some will be empty"
                );
            }
            let out = out.unwrap_or_else(|| Path::new("results").join(format!("{}-slurm", study.name)));
            // The scripts now, and later what the jobs write: their shards, their logs, the merged study.
            let declared: Vec<String> = ["array.sh", "merge.sh", "submit.sh", "logs", "merged"]
                .into_iter()
                .map(String::from)
                .chain((1..=shards).map(|k| format!("shard-{k}")))
                .collect();
            let claim = crate::folder::claim(&out, command, false, &declared)?;
            let absolute = |p: &Path| std::fs::canonicalize(p).with_context(|| format!("resolving {}", p.display()));
            let mut run_args: Vec<String> = Vec::new();
            if quick {
                run_args.push("--quick".into());
            }
            for s in &overrides.set {
                run_args.extend(["--set".into(), s.clone()]);
            }
            if let Some(seed) = overrides.seed {
                run_args.extend(["--seed".into(), seed.to_string()]);
            }
            if let Some(r) = overrides.replications {
                run_args.extend(["--replications".into(), r.to_string()]);
            }
            let job = slurm::Job {
                name: study.name.clone(),
                binary: absolute(&std::env::current_exe().context("finding the gridmarket binary")?)?,
                file: absolute(&file)?,
                out: absolute(&out)?,
                shards,
                time,
                partition,
                cpus: cpus_per_task,
                run_args,
            };
            for (name, text) in slurm::scripts(&job) {
                let path = job.out.join(name);
                crate::output::write_atomic(&path, text.as_bytes())
                    .with_context(|| format!("writing {}", path.display()))?;
                make_executable(&path)?;
            }
            claim.seal()?;
            println!("{tasks} runs in {shards} shards; submit with: {}", job.out.join("submit.sh").display());
            Ok(0)
        }
        Command::List { scenarios } => {
            println!("scenario families in {}:", scenarios.display());
            for f in families(&scenarios)? {
                let n = scenario_files(&scenarios.join(&f))?.len();
                println!("  {f} ({n} scenario file(s))");
            }
            let singles = scenario_files(&scenarios)?;
            if !singles.is_empty() {
                println!("\nsingle scenarios in {} (`gridmarket run FILE`):", scenarios.display());
                for file in singles {
                    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                    match description(&file) {
                        Some(about) => println!("  {name}: {about}"),
                        None => println!("  {name}"),
                    }
                }
            }
            print!("\n{}", schema::kinds_text(&plugins.registry));
            Ok(0)
        }
        Command::Schema { outputs } => {
            print!("{}", if outputs { schema::outputs_markdown(&plugins.registry) } else { schema::markdown(plugins) });
            Ok(0)
        }
        Command::Workload(cmd) => workload_cmd::run(cmd, &plugins.workloads),
    }
}

/// Marks a generated script executable (on Unix).
fn make_executable(path: &Path) -> anyhow::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
            .with_context(|| format!("making {} executable", path.display()))?;
    }
    Ok(())
}

/// The end of a family's reproduction, once each of its files has run (or been merged from shards): the targets
/// and checks that compare two files, `report.md` with its charts, the verdicts on stdout. Whether any target or
/// check failed (or, with `strict`, was inconclusive) or a run did not finish.
fn conclude_family(
    family: &str,
    studies: &mut [(Study, StudyResult)],
    out: &Path,
    strict: bool,
) -> anyhow::Result<bool> {
    let mut failed = false;
    let versus: Vec<_> = studies.iter().map(|(study, result)| evaluate_versus(study, result, studies)).collect();
    for ((study, result), (targets, checks)) in studies.iter_mut().zip(versus) {
        if !targets.is_empty() || !checks.is_empty() {
            result.verdicts.extend(targets);
            result.checks.extend(checks);
            write_verdicts(study, result, &out.join(&study.name))?;
        }
        failed |= fails(result, strict) || !result.unfinished.is_empty();
    }
    report::write_family_report(family, studies, out)?;
    println!("== {family}");
    for (study, result) in studies.iter() {
        println!("-- {}", study.name);
        for w in report::substitution_warnings(study, result) {
            eprintln!("warning: {}: {w}", study.name);
        }
        print!("{}", report::verdict_tables(study, result));
    }
    let quick = studies.iter().any(|(s, _)| s.quick);
    let targets: Vec<_> = studies.iter().flat_map(|(_, r)| r.verdicts.iter().cloned()).collect();
    let checks: Vec<_> = studies.iter().flat_map(|(_, r)| r.checks.iter().cloned()).collect();
    println!("{family}: {}; {}", report::tally_line(&targets, false, quick), report::tally_line(&checks, true, false));
    println!("report: {}", out.join("report.md").display());
    Ok(failed)
}

/// Whether `dir` holds what `reproduce` wrote there for `family` before folders had manifests: its `report.md`.
fn written_by(dir: &Path, family: &str) -> bool {
    std::fs::read_to_string(dir.join("report.md")).is_ok_and(|r| r.starts_with(&format!("# Reproduction: {family}\n")))
}

/// Whether the verdicts of a family's `studies` are those of its `lock`; prints what differs.
fn lock_holds(lock: &Path, studies: &[(Study, StudyResult)]) -> anyhow::Result<bool> {
    let text = std::fs::read_to_string(lock).with_context(|| {
        format!("reading {} (write it with `--update-lock`, then review and commit it)", lock.display())
    })?;
    let locked = crate::lock::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", lock.display()))?;
    let differences = crate::lock::compare(&locked, &crate::lock::entries(studies));
    if differences.is_empty() {
        println!("lock: {} holds ({} verdicts)", lock.display(), locked.len());
        return Ok(true);
    }
    println!("lock: {} differs in {} verdict(s):", lock.display(), differences.len());
    for d in &differences {
        println!("  {d}");
    }
    println!("if the change is meant, rerun with --update-lock and commit the lock with it");
    Ok(false)
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
fn finish(result: &StudyResult, interrupt: &AtomicBool, strict: bool) -> u8 {
    for (point, rep, why) in &result.unfinished {
        eprintln!("run p{point}/r{rep} did not finish: {why}");
    }
    if interrupt.load(Ordering::Relaxed) {
        eprintln!("interrupted: {} finished run(s) kept; rerun with --resume to complete", result.runs.len());
        EXIT_INTERRUPTED
    } else if !result.unfinished.is_empty() {
        2
    } else if fails(result, strict) {
        EXIT_TARGET
    } else {
        0
    }
}

/// What the user should know about a valid scenario, on stderr.
/// Where a run writes without `--out`: `results/NAME`, or `results/NAME-shard-K-of-N` for a shard, so that shards
/// run on one machine do not overwrite each other's manifest.
fn default_out(name: &str, shard: Option<Shard>) -> PathBuf {
    let folder = match shard {
        Some(s) => format!("{name}-shard-{}-of-{}", s.index, s.count),
        None => name.to_string(),
    };
    Path::new("results").join(folder)
}

fn warn(study: &Study) {
    for w in &study.warnings {
        eprintln!("warning: {w}");
    }
}

/// A run's panic is caught and reported as one line naming the agent, the simulated time and the message being
/// handled (or as a run that did not finish); the default hook's text and backtrace would only repeat it, so it is
/// printed with `RUST_BACKTRACE` only. A panic of the command itself (the main thread) is printed as usual.
///
/// Output that cannot be written ends the command cleanly: a closed pipe (`gridmarket schema | head`) ends it as the
/// signal does any Unix filter, quietly, and another failure (a full disk) with one line and exit code 2 instead of a
/// panic's backtrace.
fn quiet_panics() {
    // Rust ignores SIGPIPE, which turns a reader that went away into a panic at the next print.
    #[cfg(unix)]
    // SAFETY: restoring the default action of a signal before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let main = std::thread::current().name() == Some("main");
        let message = info.payload().downcast_ref::<String>().map(String::as_str).unwrap_or_default();
        if main && message.starts_with("failed printing to std") {
            eprintln!("error: {message}");
            std::process::exit(2);
        }
        let asked = std::env::var_os("RUST_BACKTRACE").is_some_and(|v| v != "0");
        if asked || main {
            default(info);
        }
    }));
}

/// The flag Ctrl-C raises, lowered: the handler is installed once a process, so that a program may run several
/// commands ([`main_from`]).
fn interrupt_flag() -> anyhow::Result<Arc<AtomicBool>> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    if let Some(flag) = FLAG.get() {
        flag.store(false, Ordering::Relaxed);
        return Ok(flag.clone());
    }
    let flag = Arc::new(AtomicBool::new(false));
    let f = flag.clone();
    ctrlc::set_handler(move || f.store(true, Ordering::Relaxed)).context("installing the Ctrl-C handler")?;
    Ok(FLAG.get_or_init(|| flag).clone())
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
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

/// The `description` of the scenario `file`, if it reads as TOML and has one (`validate` reports a file that does
/// not).
fn description(file: &Path) -> Option<String> {
    let table: toml::Table = std::fs::read_to_string(file).ok()?.parse().ok()?;
    table.get("description")?.as_str().map(String::from)
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
