//! `gridmarket workload ...`: generate a workload to SWF, summarise a trace, convert GWF (or a CSV job list) to SWF.
//!
//! What it writes carries an SWF v2.2 header (version, job and record counts, where the jobs come from) and times in
//! whole seconds, rounded to the nearest, as the format's fields are integers.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Subcommand;

use crate::output::write_atomic;
use crate::scenario::workload::{RawWorkload, TraceCache, WorkloadPlan, WorkloadRegistry};
use crate::workload::stats::WorkloadStats;
use crate::workload::{Workload, csv, gwf, swf};

/// Workload commands.
#[derive(Subcommand)]
pub enum WorkloadCmd {
    /// Draw a synthetic workload and write it as SWF.
    Generate {
        /// The model to draw from, as `model` in a `[workloads.<name>]` table.
        #[arg(value_parser = ["lublin", "das2", "bot", "metabroker", "poisson"])]
        model: String,
        /// Number of jobs, the lines of the SWF file. `bot` draws as many bags (each of one task or more) and keeps
        /// the first that many tasks, so its last bag may be cut short.
        #[arg(long)]
        jobs: Option<u64>,
        /// Generate arrivals until this time [s]; with `--jobs`, stop at whichever comes first.
        #[arg(long)]
        until: Option<f64>,
        /// Model parameter as in a `[workloads.<name>]` table: `--param preset=typeless --param max-nodes=128`.
        #[arg(long = "param", value_name = "KEY=VALUE")]
        params: Vec<String>,
        /// Random seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Output SWF file.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Summarise a trace (SWF; GWF or a CSV job list by its .gwf or .csv extension; any of them gzip-compressed,
    /// .swf.gz): jobs, span, sizes, runtimes, offered load.
    Stats {
        /// The trace.
        file: PathBuf,
        /// PEs of the target system, for the offered load.
        #[arg(long)]
        pes: Option<u32>,
    },
    /// Convert a trace (SWF or GWF) or a CSV job list to SWF; a GWF or CSV file gets an SWF header.
    Convert {
        /// Input trace (.swf, .gwf or .csv, or any of them gzip-compressed: .swf.gz).
        input: PathBuf,
        /// Output SWF file.
        output: PathBuf,
    },
}

pub fn run(cmd: WorkloadCmd, models: &WorkloadRegistry) -> anyhow::Result<u8> {
    match cmd {
        WorkloadCmd::Generate { model, jobs, until, params, seed, output } => {
            let mut table = toml::Table::new();
            table.insert("model".into(), model.clone().into());
            if let Some(n) = jobs {
                let n = toml::Value::Integer(i64::try_from(n)?);
                table.insert("jobs".into(), n.clone());
                // The bag-of-tasks model's `jobs` counts bags of one task or more: as many bags hold enough tasks.
                if model == "bot" {
                    table.insert("first".into(), n);
                }
            }
            if let Some(t) = until {
                table.insert("until".into(), t.into());
            }
            for p in &params {
                let (k, v) = p.split_once('=').context("--param takes KEY=VALUE")?;
                table.insert(k.trim().into(), crate::scenario::parse_value(v.trim()));
            }
            let raw = RawWorkload::parse(models, toml::Value::Table(table))
                .map_err(|e| anyhow::anyhow!("{}: {}", e.path.join("."), e.message))?;
            let plan = WorkloadPlan::check(&raw, Path::new("."), &mut TraceCache::default())
                .map_err(|(k, m)| anyhow::anyhow!("{k}: {m}"))?;
            let mut rng = agents::sim::rng::stream(seed, &format!("workload:{model}"), 0);
            let mut w = std::sync::Arc::unwrap_or_clone(plan.generate(&mut rng).map_err(anyhow::Error::msg)?);
            let mut command = format!("gridmarket workload generate {model}");
            for (flag, value) in [("--jobs", jobs.map(|n| n.to_string())), ("--until", until.map(|t| t.to_string()))] {
                if let Some(v) = value {
                    command.push_str(&format!(" {flag} {v}"));
                }
            }
            for p in &params {
                command.push_str(&format!(" --param '{p}'"));
            }
            let drawn = format!("drawn by gridmarket {}: `{command} --seed {seed}`", env!("CARGO_PKG_VERSION"));
            // The model's own comments (the Lublin model's acknowledgement and limits) stay.
            let model_header = std::mem::take(&mut w.header);
            w.header = swf::header(&w, model_header.into_iter().chain([("Note".into(), drawn)]));
            write(&w, &output)?;
            let bags = w.jobs.iter().filter_map(|j| j.bot).collect::<std::collections::BTreeSet<_>>().len();
            let of_bags = if model == "bot" { format!(" of {bags} bags") } else { String::new() };
            println!("{} jobs{of_bags} written to {}", w.jobs.len(), output.display());
        }
        WorkloadCmd::Stats { file, pes } => {
            let (w, _) = read(&file)?;
            let stats = WorkloadStats::of(&w);
            println!("{}: {stats}", file.display());
            if let Some(note) = w.skipped.note() {
                println!("{note}");
            }
            if let Some(p) = pes {
                match stats.offered_load(p) {
                    Some(load) => println!("offered load on {p} PEs: {load:.3}"),
                    None => println!("offered load on {p} PEs: undefined (empty workload or zero span)"),
                }
            }
        }
        WorkloadCmd::Convert { input, output } => {
            let (mut w, format) = read(&input)?;
            let name = input.file_name().map_or_else(|| input.display().to_string(), |n| n.to_string_lossy().into());
            let conversion = |what: &str| {
                ("Conversion".to_string(), format!("gridmarket {} from the {what} {name}", env!("CARGO_PKG_VERSION")))
            };
            let note = |text: &str| ("Note".to_string(), text.to_string());
            // An SWF file keeps its header; another format's header describes that format, so an SWF one replaces it.
            match format {
                Format::Swf => {}
                Format::Gwf => {
                    // SWF numbers users and groups from 1; the GWF reader numbers their names from 0.
                    for j in &mut w.jobs {
                        j.user = j.user.map(|u| u + 1);
                        j.group = j.group.map(|g| g + 1);
                    }
                    let mut entries = vec![
                        conversion("GWF trace"),
                        note(
                            "user and group numbers count the GWF's user and group names from 1, in order of first \
                              appearance",
                        ),
                        note(
                            "GWF fields 17-29 (sites, job structure, network, disk, platform, virtual organisation, \
                              project) have no SWF field and are left out",
                        ),
                    ];
                    entries.extend(w.skipped.note().map(|n| ("Note".to_string(), format!("in the GWF trace, {n}"))));
                    w.header = swf::header(&w, entries);
                }
                Format::Csv => {
                    let mut entries = vec![conversion("CSV job list")];
                    if w.jobs.iter().any(|j| j.deadline.is_some() || j.budget.is_some()) {
                        entries.push(note("the job list's deadlines and budgets have no SWF field and are left out"));
                    }
                    w.header = swf::header(&w, entries);
                }
            }
            write(&w, &output)?;
            println!("{} jobs written to {}", w.jobs.len(), output.display());
        }
    }
    Ok(0)
}

/// The formats the workload commands read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Swf,
    Gwf,
    Csv,
}

/// Reads a trace or job list in the format its extension names, past a `.gz` one.
fn read(path: &Path) -> anyhow::Result<(Workload, Format)> {
    let inner = if path.extension().is_some_and(|e| e == "gz") { path.with_extension("") } else { path.to_path_buf() };
    let w = match inner.extension().and_then(|e| e.to_str()) {
        Some("gwf") => (gwf::read_gwf_file(path)?, Format::Gwf),
        Some("swf") => (swf::read_swf_file(path)?, Format::Swf),
        Some("csv") => (csv::read_csv_file(path)?, Format::Csv),
        _ => bail!("{}: expected a .swf, .gwf or .csv file, or one of them gzip-compressed (.swf.gz)", path.display()),
    };
    Ok(w)
}

/// Writes `w` as SWF into `path`, which may replace only an SWF gridmarket wrote (its header carries the note on
/// times): never a user's file, nor the input being converted.
fn write(w: &Workload, path: &Path) -> anyhow::Result<()> {
    if path.exists() {
        let ours = std::fs::File::open(path).ok().is_some_and(|f| {
            let note = format!("; Note: {}", swf::TIMES_NOTE);
            std::io::BufRead::lines(std::io::BufReader::new(f))
                .take_while(|l| l.as_ref().is_ok_and(|l| l.starts_with(';')))
                .any(|l| l.is_ok_and(|l| l == note))
        });
        if !ours {
            bail!(
                "{} exists and is not an SWF gridmarket wrote: it is left as it is; choose another output",
                path.display()
            );
        }
    }
    let mut bytes = Vec::new();
    swf::write_swf(w, &mut bytes)?;
    write_atomic(path, &bytes).with_context(|| format!("writing {}", path.display()))
}
