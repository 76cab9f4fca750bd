//! The files a study writes, each atomically (temporary file, then rename). [`FILES`] declares every file and column
//! with its unit and meaning; the writers take their headers from it and `gridmarket schema --outputs` (what
//! `docs/outputs.md` holds) prints it, so the glossary cannot drift from the files.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use agents::ledger::Account;
use agents::registry::Unit;
use agents::sim::AgentId;

use super::RunOptions;
use super::StudyResult;
use super::market;
use super::metrics::{self, SampleRow};
use super::run::RunResult;
use crate::output::{Csv, CsvWriter, Field, write_atomic, write_atomic_with};
use crate::plot::{self, Chart, TimeSeries};
use crate::scenario::Study;
use crate::scenario::plan::{Plan, Point, show};
use crate::stats::{Summary, paired_difference};
use crate::workload::swf::{self, whole};
use crate::workload::{JobStatus, Workload, WorkloadJob};
use agents::report::JobOutcome;

fn num(x: Option<f64>) -> Field<'static> {
    x.map_or(Field::Empty, Field::Num)
}

/// One column of an output file (or one key of a JSON file).
#[derive(Clone, Copy, Debug)]
pub struct Column {
    /// Its header.
    pub name: &'static str,
    /// Its unit (empty when it has none: a name, a label).
    pub unit: &'static str,
    /// What it holds.
    pub about: &'static str,
}

/// One output file.
#[derive(Clone, Copy, Debug)]
pub struct OutputFile {
    /// Its path in the output folder (`p<i>/r<j>/`: point i, replication j).
    pub path: &'static str,
    /// When it is written and what a row is.
    pub about: &'static str,
    /// Its columns, in order.
    pub columns: &'static [Column],
}

impl OutputFile {
    fn header(&self) -> Vec<&'static str> {
        self.columns.iter().map(|c| c.name).collect()
    }
}

const fn col(name: &'static str, unit: &'static str, about: &'static str) -> Column {
    Column { name, unit, about }
}

/// Stands for one column per swept key in the study files.
const SWEPT: Column = col("<swept key>", "", "one column per swept key, its value at the point (none without a sweep)");

const JOBS: OutputFile = OutputFile {
    path: "p<i>/r<j>/jobs.csv",
    about: "one row per job, in id order (`[outputs] jobs`, on by default)",
    columns: &[
        col("id", "", "the job's id, unique in the run"),
        col("source_id", "", "its id in its workload: a trace's job number, or its number in a generated workload"),
        col("owner", "", "the broker that submitted it"),
        col("group", "", "the owner's group"),
        col("submit", "s", "submission time"),
        col("start", "s", "when it started on its site (empty: never started)"),
        col("end", "s", "when it ended: completed, or cancelled while running (empty: did not end)"),
        col("site", "", "the provider that ran it, or was running it"),
        col("pes", "count", "processing elements (PEs) it used"),
        col(
            "runtime",
            "s",
            "its reference runtime: what it needs on a PE of speed 1, as the workload gave it (not an estimate)",
        ),
        col(
            "elapsed",
            "s",
            "the time it actually ran, end − start: the reference runtime stretched by the site's speed, plus any \
             preemption overhead and time suspended",
        ),
        col("deadline", "s", "its deadline as an instant (empty: none)"),
        col("outcome", "", "completed, rejected, dropped, running or pending (the last two: when the run ended)"),
        col(
            "cost",
            "G$",
            "what its owner was billed: the ledger's transfers for the job and its parts (US dollars on data centres)",
        ),
        col(
            "energy",
            "kWh",
            "the energy, with cooling, of its runs on data centres, which meter it (empty: not metered, or not ended)",
        ),
        col("carbon", "kg", "the carbon dioxide that energy emitted (empty: not metered)"),
        col("wait", "s", "start − submit"),
        col("response", "s", "end − submit"),
        col("reason", "", "why it was rejected or dropped (empty: not applicable)"),
    ],
};

const TIMESERIES: OutputFile = OutputFile {
    path: "p<i>/r<j>/timeseries.csv",
    about: "the state of every agent with PEs, sampled every `sample-period` (`[outputs] timeseries`)",
    columns: &[
        col("t", "s", "sample time"),
        col("agent", "", "the provider"),
        col("busy_pes", "count", "PEs busy (computing, in preemption overhead, or running a lease later cancelled)"),
        col("utilisation", "share, 0–1", "busy_pes / the provider's PEs"),
        col("queued", "count", "jobs waiting in its queue"),
        col("price", "G$/(PE·s)", "the price it posts (its pricing strategy moves it; see `docs/market.md`)"),
        col("requests", "count", "claims, submissions and reservations it received in the sample interval ending at t"),
        col(
            "contention",
            "count",
            "requests over its mean free PEs in that interval (at least one): its own contention index",
        ),
    ],
};

const TIME_CHARTS: OutputFile = OutputFile {
    path: "p<i>/utilisation.svg, p<i>/queued.svg, p<i>/price.svg, p<i>/contention.svg",
    about: "with `timeseries.csv` (and providers to sample): replication 0's utilisation, queue length, posted price and \
            contention index over time as step lines, one per provider (one per provider group when there are more than 8 providers: busy PEs over \
            the group's PEs, the jobs queued summed), time in s, h or d by the run's length; written with that run, in studies of at most \
            100 sweep points",
    columns: &[],
};

const SCHEDULE: OutputFile = OutputFile {
    path: "p<i>/r<j>/schedule.csv",
    about: "the schedule in the columns of Batsim's jobs file, which Evalys reads (`[outputs] schedule`). PE ids \
            are not tracked: a provider's scheduler counts free PEs in an availability profile and never assigns \
            particular ones, so `allocated_resources` is empty (Evalys's Gantt charts need ids; its wait, \
            turnaround and stretch do not)",
    columns: &[
        col("job_id", "", "the job's `id` in `jobs.csv`"),
        col("workload_name", "", "its workload (a trace's path or the model's name)"),
        col("submission_time", "s", "submission time"),
        col("requested_number_of_resources", "count", "PEs"),
        col("requested_time", "s", "the runtime estimate the scheduler saw"),
        col("success", "", "1 for a completed job, else 0"),
        col("starting_time", "s", "start (empty: never started)"),
        col("execution_time", "s", "finish − start: the time it actually ran"),
        col("finish_time", "s", "end (empty: did not end)"),
        col("waiting_time", "s", "start − submission"),
        col("turnaround_time", "s", "finish − submission"),
        col("stretch", "ratio ≥ 1", "turnaround / execution time"),
        col("allocated_resources", "", "empty: PE ids are not tracked"),
        col("site", "", "the provider that ran it"),
        col("outcome", "", "as in `jobs.csv`"),
    ],
};

const SCHEDULE_SWF: OutputFile = OutputFile {
    path: "p<i>/r<j>/schedule.swf",
    about: "with `--schedule-swf`: the schedule as SWF v2.2, one line per job in submit order; start and end rounded \
            to whole seconds, wait and run time their differences; a job that did not complete has run time -1. \
            Unused fields are -1 as the format asks",
    columns: &[
        col("job number", "", "the job's `id` in `jobs.csv`"),
        col("submit time", "s", "submission"),
        col("wait time", "s", "start − submit"),
        col("run time", "s", "end − start"),
        col("allocated processors", "count", "PEs (0 for a job that never started)"),
        col("requested processors", "count", "PEs asked for"),
        col("requested time", "s", "the runtime estimate"),
        col(
            "status",
            "",
            "1 completed, 0 rejected by a provider, 5 dropped by its owner, -1 running or waiting at the end",
        ),
        col("partition number", "", "the provider, numbered in the header's notes"),
    ],
};

const LEDGER: OutputFile = OutputFile {
    path: "p<i>/r<j>/ledger.csv",
    about: "every transfer of money, in time order (`[outputs] ledger`)",
    columns: &[
        col("t", "s", "when"),
        col("payer", "", "an agent's name, or an external account: `electricity-supplier`, `penalty-sink`, `operator`"),
        col("payee", "", "as payer"),
        col("amount", "G$", "how much (in `currency`)"),
        col("currency", "", "the currency's symbol"),
        col("reason", "", "usage, refund, penalty, auction, lease, energy or fee (see `money.<reason>`)"),
        col("job", "", "the job paid for (empty: not for a job)"),
        col("booked_by", "", "the agent that booked it"),
    ],
};

const RUN_SUMMARY: OutputFile = OutputFile {
    path: "p<i>/r<j>/summary.json",
    about: "the run's metrics by name (see Metrics below); NaN (undefined, such as a mean over no job) is written as \
            null",
    columns: &[col("<metric>", "", "its value")],
};

const RUN: OutputFile = OutputFile {
    path: "p<i>/r<j>/run.json",
    about: "what the run was; written last, so its presence marks a finished run (`--resume`)",
    columns: &[
        col("version", "", "gridmarket's version"),
        col("scenario", "", "the scenario file as given"),
        col("point", "", "the sweep point"),
        col("label", "", "the point's label"),
        col("replication", "", "the replication"),
        col("seed", "", "the run's seed"),
        col("hash", "", "the hash of the point's scenario, to tell a changed file on `--resume`"),
        col("command", "", "the command line"),
        col("end_time", "s", "simulated time at the end"),
        col("events", "count", "messages delivered"),
        col("reason", "", "why the run ended"),
        col(
            "substitutions",
            "",
            "metric → count of what an agent did in place of what it was configured to do (an exact search that \
             fell back to a heuristic, a model it could not use), those not 0; each also a warning of `run` and \
             `reproduce`",
        ),
        col(
            "over_subscription",
            "",
            "`checked`: the kinds whose agents report a capacity, which the invariant kept within its units at all \
             times; `not_checked`: the kinds with an agent that reports none (most hold no capacity: brokers, \
             meta-brokers, exchanges)",
        ),
    ],
};

const TRACE: OutputFile = OutputFile {
    path: "p<i>/r<j>/trace.jsonl",
    about: "with `--trace` or `[outputs] trace`: one JSON object per delivered message, in delivery order (filtered \
            by `trace-agents` and `trace-kinds`)",
    columns: &[
        col("t", "s", "delivery time"),
        col("round", "", "zero-delay round within the instant"),
        col("from", "", "the sender (`env` for injected messages)"),
        col("to", "", "the receiver"),
        col("kind", "", "the message kind, `protocol.variant`"),
        col("msg", "", "the message in its serde form"),
    ],
};

const RUNS: OutputFile = OutputFile {
    path: "runs.csv",
    about: "one row per finished run and metric, the tidy table of every replication's value (a metric undefined in \
            a run has no row)",
    columns: &[
        col("point", "", "the point's number (its label is in `points.csv`)"),
        SWEPT,
        col("replication", "", "the replication, from 0"),
        col("seed", "", "the run's seed: runs of different points with the same seed pair up"),
        col("metric", "", "the metric's name (see Metrics below)"),
        col("value", "as the metric", "its value in the run"),
    ],
};

const SERIES: OutputFile = OutputFile {
    path: "series.csv",
    about: "`run` only, with `timeseries.csv`: the market's state over time, mean ± 95% CI over each point's \
            replications, sampled at 101 times from 0 to the end of its shortest replication (each run's state at a \
            time being its last sample at or before it); drawn in `report.md` as `<scenario>-<quantity>-over-time.svg`, \
            a band per point, for studies of at most 8 points",
    columns: &[
        col("point", "", "the point's number (its label is in `points.csv`)"),
        SWEPT,
        col(
            "quantity",
            "",
            "`utilisation` (the providers' mean), `queued` (jobs queued at the providers, summed) or `price` (the \
             providers' mean posted price)",
        ),
        col("t", "s", "the sample time"),
        col("n", "count", "replications sampled"),
        col("mean", "as the quantity", "the mean over the replications"),
        col("ci95", "as the quantity", "the half-width of the 95% confidence interval of the mean (Student t)"),
        col("lo", "as the quantity", "mean − ci95 (not clipped to the values the quantity can take)"),
        col("hi", "as the quantity", "mean + ci95"),
    ],
};

const POINTS: OutputFile = OutputFile {
    path: "points.csv",
    about: "one row per sweep point",
    columns: &[col("point", "", "the point's number"), col("label", "", "its label"), SWEPT],
};

/// The columns of `summary.csv` and `differences.csv` after the point's own.
const SUMMARY_COLUMNS: [Column; 7] = [
    col("metric", "", "the metric's name (see Metrics below)"),
    col("n", "count", "replications that measured it (a metric undefined in a run is left out)"),
    col("mean", "as the metric", "the mean over replications"),
    col("std", "as the metric", "the sample standard deviation"),
    col("ci95", "as the metric", "the half-width of the 95% confidence interval of the mean (Student t)"),
    col("lo", "as the metric", "mean − ci95"),
    col("hi", "as the metric", "mean + ci95"),
];

const SUMMARY: OutputFile = OutputFile {
    path: "summary.csv",
    about: "one row per point and metric, over the replications (also as `summary.json`: `points[]` with `point`, \
            `label`, `swept` and `metrics` by name)",
    columns: &[
        col("point", "", "the point's number"),
        col("label", "", "its label"),
        SWEPT,
        SUMMARY_COLUMNS[0],
        SUMMARY_COLUMNS[1],
        SUMMARY_COLUMNS[2],
        SUMMARY_COLUMNS[3],
        SUMMARY_COLUMNS[4],
        SUMMARY_COLUMNS[5],
        SUMMARY_COLUMNS[6],
    ],
};

const DIFFERENCES: OutputFile = OutputFile {
    path: "differences.csv",
    about: "per point after the first and metric: the paired difference (point − point 0) over the seeds both \
            finished, with the same columns as `summary.csv` describing the difference",
    columns: SUMMARY.columns,
};

const EXPECTATIONS: OutputFile = OutputFile {
    path: "expectations.csv",
    about: "every target (`[[expect]]`) with its verdict",
    columns: &[
        col("target", "", "what is claimed"),
        col("source", "", "where the claim comes from: the paper, its figure or table and section"),
        col("tolerance", "", "the band or test the verdict uses"),
        col("measured", "", "what the runs measured: the mean with its 95% CI, or the paired difference"),
        col(
            "verdict",
            "",
            "`pass` (the whole CI inside the band), `FAIL` (the whole CI outside) or `inconclusive` (more replications \
             needed); \"(indicative)\" after it with `--quick`",
        ),
        col("conflict", "", "how the source contradicts itself on a target reported but not scored (empty: scored)"),
        col(
            "class",
            "",
            "`target` (a claim of a source), `hypothesis` (a claim of our own, counted apart) or `conflict` (the source \
             contradicts itself: not scored)",
        ),
    ],
};

const CHECKS: OutputFile = OutputFile {
    path: "checks.csv",
    about: "every sanity check (`[[check]]`): what holds by construction, reported apart from the targets",
    columns: &[
        col("check", "", "what is checked"),
        col("why", "", "why it must hold"),
        col("measured", "", "what the runs measured"),
        col("verdict", "", "`pass` when every run meets it"),
    ],
};

const REPORT: OutputFile = OutputFile {
    path: "report.md",
    about: "the count of targets that pass, fail or are inconclusive, how verdicts are reached, then per scenario \
            its summary table, targets, sanity checks, one SVG chart per metric a target names \
            (`<scenario>-<metric>.svg`) and the charts of its `[[chart]]` tables; `run` writes it beside the \
            scenario's files, `reproduce` in the family's folder (each scenario's files in a folder of its own)",
    columns: &[],
};

const PERIODS: OutputFile = OutputFile {
    path: "p<i>/r<j>/periods.csv",
    about: "with an induced-value market (`[markets.<name>]`): one row per market and trading period",
    columns: &[
        col("market", "", "the market"),
        col("period", "", "the period, from 0"),
        col("start", "s", "when it began"),
        col("end", "s", "when it ended"),
        col("trades", "count", "units traded"),
        col("efficiency", "share, 0–1", "realised surplus Σ (v − c) over the equilibrium's (empty: no gain possible)"),
        col("mean_price", "G$", "the mean transaction price (empty: no trade)"),
        col("alpha", "%", "Smith's α: the root-mean-square deviation of its prices from P*, over P*"),
        col("volatility", "ratio ≥ 0", "root mean square of successive price changes over P*"),
        col("buyer_surplus", "G$", "Σ (v − p) over its trades"),
        col("seller_surplus", "G$", "Σ (p − c) over its trades"),
        col("extramarginal", "count", "trades of units the equilibrium does not trade"),
        col("ce_price", "G$", "P*, the midpoint of the equilibrium price band"),
    ],
};

const TRADES: OutputFile = OutputFile {
    path: "p<i>/r<j>/trades.csv",
    about: "with an induced-value market: one row per unit traded, in time order",
    columns: &[
        col("market", "", "the market"),
        col("period", "", "the period, from 0"),
        col("t", "s", "when"),
        col("price", "G$", "the price: the one of the order that stood first"),
        col("buyer", "", "the buyer, numbered from 0 in the order the scenario lists them"),
        col("seller", "", "the seller, likewise"),
        col("value", "G$", "the buyer's valuation of the unit"),
        col("cost", "G$", "the seller's cost of the unit"),
    ],
};

const PRICES_CHART: OutputFile = OutputFile {
    path: "p<i>/prices.svg",
    about: "with an induced-value market: replication 0's transaction prices over time, per market, with the \
            competitive equilibrium's price band drawn; written with that run, in studies of at most 100 sweep points",
    columns: &[],
};

const SHARD: OutputFile = OutputFile {
    path: "shard.json",
    about: "with `--shard K/N`, in place of the study's files (which need every run): what `gridmarket merge` reads. \
            With `reproduce`, one per scenario folder, and one in the family's folder with `kind`, `version`, \
            `family`, `studies` (its scenarios in order), `shard` and `of`",
    columns: &[
        col("kind", "", "`gridmarket shard of a study` (or `of a family`)"),
        col("version", "", "gridmarket's version: shards of different versions are not merged"),
        col("name", "", "the scenario's name"),
        col("scenario", "", "the scenario file as given"),
        col("scenario_absolute", "", "the same as an absolute path, for a merge from another folder"),
        col("load", "", "`quick`, `set`, `seed` and `replications` as given: the merge loads the file again with them"),
        col("shard", "", "K, from 1"),
        col("of", "count", "N"),
        col(
            "offset",
            "count",
            "runs of the family's earlier scenarios (0 for `run`): the round robin runs across them",
        ),
        col("points", "", "per sweep point, its `hash`, `seed` and `replications`, to tell a changed file"),
        col(
            "runs",
            "",
            "the shard's finished runs: `point`, `replication`, `seed` and `metrics` by name (exact; NaN and the \
             infinities as the strings \"NaN\", \"inf\", \"-inf\")",
        ),
        col("unfinished", "", "runs that did not finish: `point`, `replication`, `why` (a merge refuses them)"),
    ],
};

/// Every file a study may write, in the order the glossary lists them.
pub const FILES: [OutputFile; 21] = [
    JOBS,
    TIMESERIES,
    TIME_CHARTS,
    PERIODS,
    TRADES,
    PRICES_CHART,
    SCHEDULE,
    SCHEDULE_SWF,
    LEDGER,
    RUN_SUMMARY,
    RUN,
    TRACE,
    POINTS,
    RUNS,
    SERIES,
    SUMMARY,
    DIFFERENCES,
    EXPECTATIONS,
    CHECKS,
    REPORT,
    SHARD,
];

/// Writes one run's files, `run.json` last.
pub fn write_run(
    study: &Study,
    point: usize,
    rep: u32,
    r: &RunResult,
    dir: &Path,
    opts: &RunOptions,
) -> std::io::Result<()> {
    let p = &study.points[point];
    let m = &r.measured;
    // Names by agent index, shared by the rows.
    let groups: Vec<&str> = p.plan.agents().map(|a| a.group).collect();
    let name = |id: AgentId| m.name(id);
    let source = |id: u64| m.source(id);
    if p.plan.outputs.jobs {
        stream_table(dir, "jobs", &JOBS.header(), &p.plan, |row| {
            for j in &m.jobs {
                let metered = m.metered.get(&j.id);
                row(&[
                    Field::UInt(j.id),
                    source(j.id).map_or(Field::Empty, |s| Field::UInt(s.id)),
                    Field::Str(name(j.owner)),
                    Field::Str(groups.get(j.owner.index()).copied().unwrap_or("")),
                    Field::Num(j.submit),
                    num(j.start),
                    num(j.end),
                    j.site.map_or(Field::Empty, |s| Field::Str(name(s))),
                    Field::UInt(u64::from(j.pes)),
                    Field::Num(j.runtime),
                    num(j.start.zip(j.end).map(|(b, e)| e - b)),
                    num(j.deadline),
                    Field::Str(j.outcome.as_str()),
                    Field::Num(j.cost),
                    num(metered.map(|m| m.0)),
                    num(metered.map(|m| m.1)),
                    num(j.start.map(|s| s - j.submit)),
                    num(j.end.filter(|_| j.start.is_some()).map(|e| e - j.submit)),
                    m.reasons.get(&j.id).map_or(Field::Empty, |r| Field::Str(r)),
                ])?;
            }
            Ok(())
        })?;
    }
    if p.plan.outputs.schedule {
        stream_table(dir, "schedule", &SCHEDULE.header(), &p.plan, |row| {
            for j in &m.jobs {
                let group = groups.get(j.owner.index()).copied().unwrap_or("");
                let workload =
                    p.plan.groups.iter().find(|g| *g.name == *group).and_then(|g| g.spec.workload()).map(|w| w.0);
                let end = j.end.filter(|_| j.start.is_some());
                let execution = j.start.zip(end).map(|(s, e)| e - s);
                let turnaround = end.map(|e| e - j.submit);
                row(&[
                    Field::UInt(j.id),
                    workload.map_or(Field::Empty, Field::Str),
                    Field::Num(j.submit),
                    Field::UInt(u64::from(j.pes)),
                    num(source(j.id).map(|s| s.estimate)),
                    Field::UInt(u64::from(j.outcome == JobOutcome::Completed)),
                    num(j.start),
                    num(execution),
                    num(end),
                    num(j.start.map(|s| s - j.submit)),
                    num(turnaround),
                    num(turnaround.zip(execution.filter(|&x| x > 0.0)).map(|(t, x)| t / x)),
                    // PE ids are not tracked: see the table above.
                    Field::Empty,
                    j.site.map_or(Field::Empty, |s| Field::Str(name(s))),
                    Field::Str(j.outcome.as_str()),
                ])?;
            }
            Ok(())
        })?;
    }
    if opts.schedule_swf {
        let mut bytes = Vec::new();
        swf::write_swf(&schedule(study, point, rep, r), &mut bytes).map_err(std::io::Error::other)?;
        write(&dir.join("schedule.swf"), &bytes)?;
    }
    if p.plan.outputs.timeseries {
        let mut csv = Csv::new(&TIMESERIES.header());
        for s in &r.measured.samples {
            csv.row(&[
                Field::Num(s.t),
                Field::Str(&s.agent),
                Field::Num(s.busy_pes),
                Field::Num(s.utilisation),
                Field::Num(s.queued),
                Field::Num(s.price),
                Field::Num(s.requests),
                Field::Num(s.contention),
            ]);
        }
        table(dir, "timeseries", csv, &p.plan)?;
    }
    if p.plan.outputs.ledger {
        let m = &r.measured;
        let name = |a: Account| match a {
            Account::Agent(id) => m.names.get(id.index()).map_or("?", String::as_str),
            Account::External(e) => e.name(),
        };
        let mut csv = Csv::new(&LEDGER.header());
        for t in &m.ledger {
            csv.row(&[
                Field::Num(t.at.secs()),
                Field::Str(name(t.payer)),
                Field::Str(name(t.payee)),
                Field::Num(t.amount),
                Field::Str(t.currency.symbol()),
                Field::Str(t.reason.name()),
                t.job.map_or(Field::Empty, Field::UInt),
                Field::Str(name(Account::Agent(t.booked_by))),
            ]);
        }
        table(dir, "ledger", csv, &p.plan)?;
    }
    let charted = study.points.len() <= crate::scenario::MAX_CHARTED_POINTS;
    if p.plan.outputs.timeseries && rep == 0 && charted && !r.measured.samples.is_empty() {
        write_time_charts(study, point, r, dir.parent().unwrap_or(dir))?;
    }
    let markets = &r.measured.markets;
    if !markets.is_empty() {
        write(&dir.join("periods.csv"), &market::periods_csv(&PERIODS.header(), markets).into_bytes())?;
        write(&dir.join("trades.csv"), &market::trades_csv(&TRADES.header(), markets).into_bytes())?;
        if rep == 0 && charted {
            let at = if p.label.is_empty() { String::new() } else { format!(", {}", p.label) };
            let title = format!("{}{at}: transaction prices, replication 0 (seed {})", study.name, r.seed);
            market::prices_chart(&title, markets, dir.parent().unwrap_or(dir))?;
        }
    }
    write_json(&dir.join("summary.json"), &json!(r.measured.metrics))?;
    let run = json!({
        "version": env!("CARGO_PKG_VERSION"),
        "scenario": study.path.display().to_string(),
        "point": point,
        "label": p.label,
        "replication": rep,
        "seed": r.seed,
        "hash": format!("{:016x}", p.hash),
        "command": opts.command,
        "end_time": r.outcome.now.secs(),
        "events": r.outcome.delivered,
        "reason": r.outcome.reason,
        "substitutions": metrics::substitutions(&metrics::substitution_metrics(&p.plan.registry), &r.measured.metrics)
            .into_iter()
            .map(|(k, v, _)| (k.to_string(), json!(v)))
            .collect::<serde_json::Map<_, _>>(),
        "over_subscription": {
            "checked": r.measured.coverage.checked,
            "not_checked": r.measured.coverage.not_checked,
        },
    });
    write_json(&dir.join("run.json"), &run)
}

/// Writes a run's table as `<stem>.csv`, or as `<stem>.parquet` when the scenario asks for Parquet (which loading
/// refuses when the feature is off).
fn table(dir: &Path, stem: &str, csv: Csv, plan: &Plan) -> std::io::Result<()> {
    if plan.outputs.parquet {
        #[cfg(feature = "parquet")]
        {
            let bytes = crate::parquet::from_csv(&csv.into_bytes()).map_err(std::io::Error::other)?;
            return write(&dir.join(format!("{stem}.parquet")), &bytes);
        }
    }
    write(&dir.join(format!("{stem}.csv")), &csv.into_bytes())
}

/// Writes a table through `rows`, which gives its sink each row in turn: straight into the file (buffered and
/// atomic, so a job table is never whole in memory), or into memory first when it goes to Parquet.
fn stream_table(
    dir: &Path,
    stem: &str,
    header: &[&str],
    plan: &Plan,
    rows: impl FnOnce(&mut dyn FnMut(&[Field]) -> std::io::Result<()>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    if plan.outputs.parquet {
        let mut csv = Csv::new(header);
        rows(&mut |fields| {
            csv.row(fields);
            Ok(())
        })?;
        return table(dir, stem, csv, plan);
    }
    let path = dir.join(format!("{stem}.csv"));
    let fill = |out: &mut dyn std::io::Write| {
        let mut csv = CsvWriter::new(out, header)?;
        rows(&mut |fields| csv.row(fields))
    };
    write_atomic_with(&path, fill)
        .map_err(|e| std::io::Error::new(e.kind(), format!("writing {}: {e}", path.display())))
}

/// A quantity of `timeseries.csv` charted per point as `p<i>/<name>.svg`; a market series (prices, contention)
/// sampled the same way plugs in as one more entry of [`CHARTED`].
struct Charted {
    /// File stem.
    name: &'static str,
    /// What it is, in the title and on the axis (followed by the unit).
    what: &'static str,
    /// Its unit and the values it can take.
    unit: Unit,
    /// How the members of a provider group add up when there are too many providers to draw each.
    combine: Combine,
    /// Its value in a sample.
    value: fn(&SampleRow) -> f64,
}

/// How the samples of a group's members make the group's.
#[derive(Clone, Copy)]
enum Combine {
    /// Their sum (jobs queued).
    Sum,
    /// Their mean weighted by PEs (utilisation: busy PEs over the group's PEs).
    PeWeighted,
}

/// What is charted per point.
const CHARTED: [Charted; 4] = [
    Charted {
        name: "utilisation",
        what: "utilisation",
        unit: Unit::Share,
        combine: Combine::PeWeighted,
        value: |s| s.utilisation,
    },
    Charted { name: "queued", what: "jobs queued", unit: Unit::Count, combine: Combine::Sum, value: |s| s.queued },
    Charted {
        name: "price",
        what: "posted price",
        unit: Unit::Price,
        combine: Combine::PeWeighted,
        value: |s| s.price,
    },
    Charted {
        name: "contention",
        what: "contention index",
        unit: Unit::Count,
        combine: Combine::PeWeighted,
        value: |s| s.contention,
    },
];

/// Providers drawn one line each; with more, a line per provider group.
const MAX_LINES: usize = 8;

/// Writes the [`CHARTED`] time series of replication 0 of `point` (its run `r`) into the point's folder `dir`.
fn write_time_charts(study: &Study, point: usize, r: &RunResult, dir: &Path) -> std::io::Result<()> {
    let p = &study.points[point];
    let (scale, unit) = plot::time_unit(r.outcome.now.secs());
    // Each provider's line, or its group's when there are too many.
    let sites = &r.measured.sites;
    let by_group = sites.len() > MAX_LINES;
    let group_of: BTreeMap<String, &str> = p.plan.agents().map(|a| (a.name, a.group)).collect();
    // Each line's name and its providers.
    let mut lines: Vec<(&str, usize)> = Vec::new();
    let mut line_of: BTreeMap<&str, (usize, f64)> = BTreeMap::new();
    for (name, pes) in sites {
        let line = if by_group { group_of.get(name).copied().unwrap_or(name) } else { name };
        let i = lines.iter().position(|l| l.0 == line).unwrap_or_else(|| {
            lines.push((line, 0));
            lines.len() - 1
        });
        lines[i].1 += 1;
        line_of.insert(name, (i, *pes));
    }
    let at = if p.label.is_empty() { String::new() } else { format!(", {}", p.label) };
    let per = if by_group { "per provider group" } else { "per provider" };
    let x_label = format!("time [{unit}]");
    for c in &CHARTED {
        // Per line, (t, Σ weight × value, Σ weight): samples come in time order, each instant once per provider.
        let mut sums: Vec<Vec<(f64, f64, f64)>> = vec![Vec::new(); lines.len()];
        for s in &r.measured.samples {
            let Some(&(i, pes)) = line_of.get(s.agent.as_str()) else { continue };
            let w = match c.combine {
                Combine::Sum => 1.0,
                Combine::PeWeighted => pes,
            };
            let (t, v) = (s.t / scale, (c.value)(s));
            match sums[i].last_mut() {
                Some(last) if last.0 == t => (last.1, last.2) = (last.1 + w * v, last.2 + w),
                _ => sums[i].push((t, w * v, w)),
            }
        }
        let series: Vec<TimeSeries> = lines
            .iter()
            .zip(sums)
            .map(|(&(name, members), sums)| TimeSeries {
                label: match (by_group, members) {
                    (false, _) => name.to_string(),
                    (true, 1) => format!("{name} (1 provider)"),
                    (true, n) => format!("{name} ({n} providers)"),
                },
                points: sums
                    .into_iter()
                    .map(|(t, sum, w)| match c.combine {
                        Combine::Sum => (t, sum),
                        Combine::PeWeighted => (t, if w > 0.0 { sum / w } else { f64::NAN }),
                    })
                    .collect(),
            })
            .collect();
        let title = format!("{}{at}: {} {per}, replication 0 (seed {})", study.name, c.what, r.seed);
        let y_label = format!("{} {}", c.what, c.unit.axis());
        let chart = Chart { y_bounds: c.unit.bounds(), ..Chart::new(&title, &x_label, &y_label) };
        write(&dir.join(format!("{}.svg", c.name)), plot::time_chart(&chart, &series).as_bytes())?;
    }
    Ok(())
}

/// The run's schedule as an SWF workload: one job per job of `jobs.csv`, in submit order, and a header that says
/// what the run was and which provider each partition number is.
fn schedule(study: &Study, point: usize, rep: u32, r: &RunResult) -> Workload {
    let p = &study.points[point];
    let sites = &r.measured.sites;
    let mut jobs: Vec<WorkloadJob> = r
        .measured
        .jobs
        .iter()
        .map(|rec| {
            // Instants are rounded, and the wait and run times are their differences, so that they add up.
            let submit = whole(rec.submit);
            let start = rec.start.map(whole);
            let end = rec.end.filter(|_| rec.outcome == JobOutcome::Completed).map(whole);
            let status = match rec.outcome {
                JobOutcome::Completed => Some(JobStatus::Completed),
                JobOutcome::Rejected => Some(JobStatus::Failed),
                JobOutcome::Dropped => Some(JobStatus::Cancelled),
                JobOutcome::Running | JobOutcome::Pending => None,
            };
            let site = rec.site.map(|s| r.measured.name(s));
            let partition = site.and_then(|s| sites.iter().position(|(name, _)| name == s));
            let estimate = r.measured.source(rec.id);
            WorkloadJob {
                wait: start.map(|s| s - submit),
                requested_pes: Some(rec.pes),
                requested_time: estimate.map(|s| s.estimate),
                status,
                partition: partition.and_then(|i| u32::try_from(i + 1).ok()),
                // −1: a job that did not complete has no run time.
                ..WorkloadJob::new(
                    rec.id,
                    submit,
                    start.zip(end).map_or(-1.0, |(s, e)| e - s),
                    start.map_or(0, |_| rec.pes),
                )
            }
        })
        .collect();
    jobs.sort_by(|a, b| a.submit.total_cmp(&b.submit).then(a.id.cmp(&b.id)));
    let mut w = Workload::new(jobs);
    let entry = |k: &str, v: String| (k.to_string(), v);
    let mut entries = vec![
        entry("Computer", format!("gridmarket {} simulation", env!("CARGO_PKG_VERSION"))),
        entry(
            "Installation",
            format!(
                "scenario {} ({}), point {point}{}, replication {rep}, seed {}",
                study.name,
                study.path.display(),
                if p.label.is_empty() { String::new() } else { format!(" ({})", p.label) },
                r.seed
            ),
        ),
        entry("MaxProcs", sites.iter().map(|(_, pes)| pes).sum::<f64>().to_string()),
        entry("MaxPartitions", sites.len().to_string()),
    ];
    for (i, (name, pes)) in sites.iter().enumerate() {
        entries.push(entry("Note", format!("partition {} is provider {name} ({pes} PEs)", i + 1)));
    }
    entries.push(entry(
        "Note",
        "job numbers are the ids of jobs.csv; status 1 completed, 0 rejected by a provider, 5 dropped by its owner, \
         -1 running or waiting when the run ended"
            .into(),
    ));
    w.header = swf::header(&w, entries);
    w
}

/// The metrics of a finished run in `dir` whose scenario hash and seed match, for `--resume`.
pub fn finished_run(dir: &Path, hash: u64, seed: u64) -> Option<BTreeMap<String, f64>> {
    let run: Value = serde_json::from_slice(&std::fs::read(dir.join("run.json")).ok()?).ok()?;
    if run["hash"] != json!(format!("{hash:016x}")) || run["seed"] != json!(seed) {
        return None;
    }
    let summary: BTreeMap<String, Option<f64>> =
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).ok()?).ok()?;
    Some(summary.into_iter().map(|(k, v)| (k, v.unwrap_or(f64::NAN))).collect())
}

/// Writes the study-level files.
pub fn write_study(study: &Study, result: &StudyResult, out: &Path) -> std::io::Result<()> {
    // One column per swept key, so the files load as tidy tables (pandas, R) without parsing labels.
    let swept: Vec<&str> =
        study.points.first().map(|p| p.assignments.iter().map(|(k, _)| k.as_str()).collect()).unwrap_or_default();
    let values: Vec<Vec<String>> =
        study.points.iter().map(|p| p.assignments.iter().map(|(_, v)| show(v)).collect()).collect();
    let header = |tail: &[Column]| -> Vec<&str> {
        ["point", "label"].into_iter().chain(swept.iter().copied()).chain(tail.iter().map(|c| c.name)).collect()
    };
    let mut points = Csv::new(&header(&[]));
    for p in &study.points {
        points.row(&lead(p, &values[p.index]));
    }
    write(&out.join("points.csv"), &points.into_bytes())?;

    // Without the label, which `points.csv` holds: a row per run and metric adds up.
    let names = RUNS.columns[2..].iter().map(|c| c.name);
    let mut runs = Csv::new(&["point"].into_iter().chain(swept.iter().copied()).chain(names).collect::<Vec<_>>());
    for run in &result.runs {
        let point = [Field::UInt(run.point as u64)].into_iter().chain(values[run.point].iter().map(|v| Field::Str(v)));
        let point: Vec<Field> = point.collect();
        for (metric, &value) in run.metrics.iter().filter(|m| !m.1.is_nan()) {
            let tail = [Field::UInt(u64::from(run.rep)), Field::UInt(run.seed), Field::Str(metric), Field::Num(value)];
            runs.row(&[point.as_slice(), &tail].concat());
        }
    }
    write(&out.join("runs.csv"), &runs.into_bytes())?;

    let mut csv = Csv::new(&header(&SUMMARY_COLUMNS));
    let mut json_points = Vec::new();
    for (p, summaries) in study.points.iter().zip(&result.summaries) {
        let mut metrics = serde_json::Map::new();
        for (metric, s) in summaries {
            csv.row(&[lead(p, &values[p.index]), summary_fields(metric, s)].concat());
            metrics.insert(metric.clone(), json!({"n": s.n, "mean": s.mean, "std": s.std, "ci95": s.ci95}));
        }
        let assignments: serde_json::Map<String, Value> =
            p.assignments.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        json_points.push(json!({"point": p.index, "label": p.label, "swept": assignments, "metrics": metrics}));
    }
    write(&out.join("summary.csv"), &csv.into_bytes())?;
    write_json(&out.join("summary.json"), &json!({"scenario": study.name, "points": json_points}))?;

    let mut diff = Csv::new(&header(&SUMMARY_COLUMNS));
    for p in study.points.iter().skip(1) {
        for metric in result.summaries[p.index].keys() {
            let (a, b) = paired(result, p.index, 0, metric);
            if a.len() >= 2
                && let Ok(s) = paired_difference(&a, &b)
            {
                diff.row(&[lead(p, &values[p.index]), summary_fields(metric, &s)].concat());
            }
        }
    }
    write(&out.join("differences.csv"), &diff.into_bytes())?;
    write_verdicts(study, result, out)
}

/// `expectations.csv` and `checks.csv`: every target and every sanity check of the study with its verdict.
pub fn write_verdicts(study: &Study, result: &StudyResult, out: &Path) -> std::io::Result<()> {
    let mut targets = Csv::new(&EXPECTATIONS.header());
    for v in &result.verdicts {
        let verdict = v.verdict(study.quick);
        targets.row(&[
            Field::Str(&v.target),
            Field::Str(&v.source),
            Field::Str(&v.tolerance),
            Field::Str(&v.measured),
            Field::Str(&verdict),
            v.conflict.as_deref().map_or(Field::Empty, Field::Str),
            Field::Str(v.class().label()),
        ]);
    }
    write(&out.join("expectations.csv"), &targets.into_bytes())?;
    let mut checks = Csv::new(&CHECKS.header());
    for v in &result.checks {
        let verdict = v.outcome.label();
        checks.row(&[Field::Str(&v.target), Field::Str(&v.source), Field::Str(&v.measured), Field::Str(verdict)]);
    }
    write(&out.join("checks.csv"), &checks.into_bytes())
}

/// Values of `metric` at points `a` and `b` on the replications both finished (common seeds).
fn paired(result: &StudyResult, a: usize, b: usize, metric: &str) -> (Vec<f64>, Vec<f64>) {
    let at = |point: usize| -> BTreeMap<u32, f64> {
        result.runs.iter().filter(|r| r.point == point).filter_map(|r| Some((r.rep, *r.metrics.get(metric)?))).collect()
    };
    let (xa, xb) = (at(a), at(b));
    xa.iter().filter_map(|(rep, va)| Some((*va, *xb.get(rep)?))).unzip()
}

/// A point's first columns: its number, its label and the value of each swept key.
fn lead<'a>(p: &'a Point, values: &'a [String]) -> Vec<Field<'a>> {
    [Field::UInt(p.index as u64), Field::Str(&p.label)]
        .into_iter()
        .chain(values.iter().map(|v| Field::Str(v)))
        .collect()
}

fn summary_fields<'a>(metric: &'a str, s: &Summary) -> Vec<Field<'a>> {
    vec![
        Field::Str(metric),
        Field::UInt(s.n as u64),
        Field::Num(s.mean),
        Field::Num(s.std),
        Field::Num(s.ci95),
        Field::Num(s.lo()),
        Field::Num(s.hi()),
    ]
}

/// Writes a file atomically; an error names it.
fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic(path, bytes).map_err(|e| std::io::Error::new(e.kind(), format!("writing {}: {e}", path.display())))
}

/// Claims `out` for `study`'s outputs ([`crate::folder::claim`]): refused if another process is writing into it,
/// if it holds another scenario's outputs, or if it holds files gridmarket did not write there. Outputs of this
/// scenario written before folders had manifests are adopted. The claim is held until it is dropped; seal it when
/// the outputs are written.
pub fn prepare_folder(study: &Study, out: &Path, command: &str) -> std::io::Result<crate::folder::Claim> {
    if out.exists() && !out.is_dir() {
        let m = format!("output folder {}: exists and is not a folder", out.display());
        return Err(std::io::Error::new(std::io::ErrorKind::AlreadyExists, m));
    }
    // `run.json` has the path as given, perhaps relative to another folder: then the file names must match.
    let same_file = |other: &str| match std::fs::canonicalize(other) {
        Ok(o) => std::fs::canonicalize(&study.path).is_ok_and(|p| p == o),
        Err(_) => Path::new(other).file_name() == study.path.file_name(),
    };
    let summary: Option<Value> =
        std::fs::read(out.join("summary.json")).ok().and_then(|b| serde_json::from_slice(&b).ok());
    let summary_of = summary.and_then(|s| s["scenario"].as_str().map(String::from));
    // Whether what is there was written for this scenario (then adopted without a manifest), and if not, by which.
    let mut ours = summary_of.as_ref().is_some_and(|name| *name == study.name);
    let mut other = summary_of
        .filter(|name| *name != study.name)
        .map(|name| (format!("scenario `{name}`"), "summary.json".to_string()));
    for point in read_dir(out).filter(|p| numbered(p, 'p')) {
        for run in read_dir(&point).filter(|r| numbered(r, 'r')) {
            let file = run.join("run.json");
            let scenario: Option<String> = std::fs::read(&file)
                .ok()
                .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
                .and_then(|v| v["scenario"].as_str().map(String::from));
            match scenario {
                Some(path) if !same_file(&path) => {
                    let rel = file.strip_prefix(out).unwrap_or(&file).display().to_string();
                    other = other.or(Some((path, rel)));
                }
                Some(_) => ours = true,
                None => {}
            }
        }
    }
    if let Some((what, file)) = other {
        let m = format!(
            "output folder {} holds the outputs of another scenario ({what}, in {file}); choose another --out or \
             remove them",
            out.display()
        );
        return Err(std::io::Error::new(std::io::ErrorKind::AlreadyExists, m));
    }
    let mut declared: Vec<String> = study.points.iter().map(|p| format!("p{}", p.index)).collect();
    declared.extend(STUDY_FILES.iter().map(|f| f.to_string()));
    crate::folder::claim(out, command, ours, &declared)
}

/// The files a study writes beside its run folders.
const STUDY_FILES: [&str; 7] = [
    "points.csv",
    "summary.csv",
    "summary.json",
    "differences.csv",
    "expectations.csv",
    "checks.csv",
    super::shard::MANIFEST,
];

/// The entries of `dir` (none if it cannot be read).
fn read_dir(dir: &Path) -> impl Iterator<Item = std::path::PathBuf> {
    std::fs::read_dir(dir).into_iter().flatten().filter_map(|e| e.ok().map(|e| e.path()))
}

/// Whether `path` is a folder named `<prefix><digits>`, as run folders are.
fn numbered(path: &Path, prefix: char) -> bool {
    path.is_dir()
        && path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix(prefix))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

fn write_json(path: &Path, v: &Value) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec_pretty(v).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    write(path, &bytes)
}
