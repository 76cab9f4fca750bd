//! `gridmarket workload ...`: generate a workload to SWF, summarise a trace, convert GWF to SWF.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Subcommand;

use gridmarket::output::write_atomic;
use gridmarket::scenario::workload::{RawWorkload, TraceCache, WorkloadPlan};
use gridmarket::workload::stats::WorkloadStats;
use gridmarket::workload::{Workload, gwf, swf};

/// Workload commands.
#[derive(Subcommand)]
pub enum WorkloadCmd {
    /// Draw a synthetic workload and write it as SWF.
    Generate {
        /// lublin, das2, bot, metabroker or poisson.
        model: String,
        /// Number of jobs.
        #[arg(long)]
        jobs: Option<u64>,
        /// Generate until this time [s] instead of a number of jobs.
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
    /// Summarise a trace (SWF, or GWF by its .gwf extension): jobs, span, sizes, runtimes, offered load.
    Stats {
        /// The trace.
        file: PathBuf,
        /// PEs of the target system, for the offered load.
        #[arg(long)]
        pes: Option<u32>,
    },
    /// Convert a trace (SWF or GWF) to SWF.
    Convert {
        /// Input trace (.swf or .gwf).
        input: PathBuf,
        /// Output SWF file.
        output: PathBuf,
    },
}

pub fn run(cmd: WorkloadCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        WorkloadCmd::Generate { model, jobs, until, params, seed, output } => {
            let mut table = toml::Table::new();
            table.insert("model".into(), model.clone().into());
            if let Some(n) = jobs {
                table.insert("jobs".into(), toml::Value::Integer(i64::try_from(n)?));
            }
            if let Some(t) = until {
                table.insert("until".into(), t.into());
            }
            for p in &params {
                let (k, v) = p.split_once('=').context("--param takes KEY=VALUE")?;
                table.insert(k.trim().into(), gridmarket::scenario::parse_value(v.trim()));
            }
            let raw: RawWorkload = agents::registry::parse(toml::Value::Table(table))
                .map_err(|e| anyhow::anyhow!("{}: {}", e.path.join("."), e.message))?;
            let plan = WorkloadPlan::check(&raw, Path::new("."), &mut TraceCache::default())
                .map_err(|(k, m)| anyhow::anyhow!("{k}: {m}"))?;
            let mut rng = agents::sim::rng::stream(seed, &format!("workload:{model}"), 0);
            let w = plan.generate(&mut rng).map_err(anyhow::Error::msg)?;
            write(&w, &output)?;
            println!("{} jobs written to {}", w.jobs.len(), output.display());
        }
        WorkloadCmd::Stats { file, pes } => {
            let w = read(&file)?;
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
            let w = read(&input)?;
            write(&w, &output)?;
            println!("{} jobs written to {}", w.jobs.len(), output.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn read(path: &Path) -> anyhow::Result<Workload> {
    let w = match path.extension().and_then(|e| e.to_str()) {
        Some("gwf") => gwf::read_gwf_file(path)?,
        Some("swf") => swf::read_swf_file(path)?,
        _ => bail!("{}: expected a .swf or .gwf file", path.display()),
    };
    Ok(w)
}

fn write(w: &Workload, path: &Path) -> anyhow::Result<()> {
    let mut bytes = Vec::new();
    swf::write_swf(w, &mut bytes)?;
    write_atomic(path, &bytes).with_context(|| format!("writing {}", path.display()))
}
