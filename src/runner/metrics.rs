//! From what agents reported to named metrics, job rows, sampled time series and the run's ledger, with the
//! invariants checked (`super::invariants`).
//!
//! Job metrics are over completed jobs: wait = start − submit, response = end − submit, slowdown = response / (end −
//! start), bounded slowdown = response / max(end − start, 10 s) floored at 1 (Feitelson's τ = 10 s), wait over runtime
//! = wait / (end − start) (Garg's (2010) slowdown, §7.3.3). With a warm-up, they leave out the first jobs submitted. Utilisation is the
//! busy PE-seconds that compute over the PE-seconds available from t = 0 until the end of the run
//! (`utilisation_from_first_submit`: from the first job's submission, before which no PE is busy): preemption overhead
//! and the runs of cancelled leases, whose work is lost, keep PEs busy but are not computation (Amini Salehi 2012, Eq
//! 3.10–3.11: each lease's duration counted once). Money: `money.<reason>` sums the ledger's transfers by reason
//! (`money.usage`: what users paid providers).

use std::collections::BTreeMap;

use agents::ledger::{Account, Reason, Transfer};
use agents::model::Service;
use agents::protocol::{JobId, LeaseType};
use agents::registry::limits::MAX_TIMESERIES_ROWS;
use agents::registry::{Metric, Registry, Unit, member_index, member_name};
use agents::report::{JobOutcome, JobRecord, Pes, Report};
use agents::sim::{AgentId, Outcome};

use super::market::{MARKET_METRICS, Site, market_metrics};
use crate::scenario::plan::Plan;

/// Bound of the bounded slowdown \[s\].
pub const SLOWDOWN_BOUND: f64 = 10.0;

/// What `job_metrics` measures of a set of jobs, under `jobs.`, `brokers.<group>.` and `classes.<class>.`.
pub const JOB_METRICS: [Metric; 16] = [
    Metric::new("total", Unit::Count, "jobs submitted"),
    Metric::new("completed", Unit::Count, "jobs that ran to completion"),
    Metric::new("rejected", Unit::Count, "jobs a provider or meta-broker refused"),
    Metric::new(
        "dropped",
        Unit::Count,
        "jobs their owner gave up (no feasible placement before the deadline, budget spent)",
    ),
    Metric::new("running", Unit::Count, "jobs still running when the run ended"),
    Metric::new("pending", Unit::Count, "jobs still waiting when the run ended"),
    Metric::new(
        "unfinished",
        Unit::Count,
        "jobs neither ended nor given up when the run ended (running + pending): a horizon cut them, and the means over \
         completed jobs leave them out",
    ),
    Metric::new("wait", Unit::Seconds, "mean over the `completed` jobs of start − submit"),
    Metric::new("response", Unit::Seconds, "mean over the `completed` jobs of end − submit"),
    Metric::new("slowdown", Unit::Slowdown, "mean over the `completed` jobs of (end − submit) / (end − start)"),
    Metric::new(
        "bounded_slowdown",
        Unit::Slowdown,
        "mean over the `completed` jobs of max(1, (end − submit) / max(end − start, 10 s)) (Feitelson's bound of 10 s)",
    ),
    Metric::new("cost", Unit::Money, "what the owners were billed, summed over all jobs"),
    Metric::new("makespan", Unit::Seconds, "the last completed job's end"),
    Metric::new("deadlines_met", Unit::Count, "jobs with a deadline that completed by it (only when some job has one)"),
    Metric::new(
        "deadlines_missed",
        Unit::Count,
        "jobs with a deadline that did not complete by it: dropped, rejected, late or unfinished (only when some job has one)",
    ),
    Metric::new(
        "wait_over_runtime",
        Unit::Ratio,
        "mean over the `completed` jobs of (start − submit) / (end − start): Garg's (2010) slowdown, waiting time over execution time",
    ),
];

/// The classes of typed leases (Amini Salehi 2012) and what `lease_metrics` measures of each, under
/// `leases.<class>.`.
pub const LEASE_CLASSES: [(&str, &str); 5] = [
    ("local", "the providers' own users' leases"),
    ("external", "leases from other grids, every type but local"),
    ("best_effort", "cancellable and suspendable external leases"),
    ("migratable", "migratable external leases"),
    ("non_preemptable", "non-preemptable external leases"),
];
pub const LEASE_METRICS: [Metric; 5] = [
    Metric::new("total", Unit::Count, "leases of the class"),
    Metric::new("rejected", Unit::Count, "leases of the class rejected"),
    Metric::new("rejection_rate", Unit::Share, "rejected / total"),
    Metric::new("art", Unit::Seconds, "average response time: mean over completed leases of end − submit (Eq 3.12)"),
    Metric::new(
        "awrt",
        Unit::Seconds,
        "average weighted response time (Eqs 4.23-4.24): per provider, completed leases' end − submit weighted by VMs × duration; then the providers' means weighted by their PEs",
    ),
];

/// Metrics of the whole run.
pub const RUN_METRICS: [Metric; 6] = [
    Metric::new("end_time", Unit::Seconds, "simulated time when the run ended"),
    Metric::new("events", Unit::Count, "messages delivered"),
    Metric::new("events_per_job", Unit::Count, "messages delivered per job submitted"),
    Metric::new(
        "utilisation",
        Unit::Share,
        "PE-seconds computing over PE-seconds available from t = 0 to the end, over every agent with PEs",
    ),
    Metric::new(
        "utilisation_from_first_submit",
        Unit::Share,
        "the same PE-seconds computing over those available from the first job's submission to the end",
    ),
    Metric::new(
        "load_deviation",
        Unit::Share,
        "time average, from the first submission to the end, of the standard deviation across providers of their load (busy PEs over PEs; Garg 2010 Fig 7.7)",
    ),
];

/// The urgency groups of Garg (2010) §7.4.1, by upper bound, of Eq 7.24's u = (deadline − start) / execution − 1,
/// with the submission as the start and the runtime on a reference PE as the execution time (our reading: the
/// urgency the user asked for, whatever the schedule): very urgent u < 0.25, urgent, intermediate, relaxed, very
/// relaxed u ≥ 1. Measured under `urgency.<group>.` when every job has a deadline.
pub const URGENCY_GROUPS: [(&str, f64); 5] =
    [("very_urgent", 0.25), ("urgent", 0.5), ("intermediate", 0.75), ("relaxed", 1.0), ("very_relaxed", f64::INFINITY)];

/// The groups of a job's valuation per PE, budget / PEs [G$], by upper bound (Garg 2010 §7.4.1 and Fig 7.6(b): below
/// 1,000, medium ones, above 33,000; the bounds between, 11,000 and 22,000, are ours, equal steps up to 33,000).
/// Measured under `valuation.<group>.` when every job has a deadline and a budget.
pub const VALUATION_GROUPS: [(&str, f64); 5] =
    [("very_low", 1_000.0), ("low", 11_000.0), ("medium", 22_000.0), ("high", 33_000.0), ("very_high", f64::INFINITY)];

/// What is measured of each group: its jobs, those completed by their deadline, and the share of these (the success
/// ratio of Garg 2010 Fig 7.6).
pub const GROUP_METRICS: [Metric; 3] = [
    Metric::new("total", Unit::Count, "jobs of the group"),
    Metric::new("met", Unit::Count, "jobs of the group completed by their deadline"),
    Metric::new("success", Unit::Share, "met / total: the group's success ratio"),
];

/// Every agent's money, from the ledger.
pub const LEDGER_METRICS: [Metric; 2] = [
    Metric::new("received", Unit::Money, "what the agent received, summed over the ledger"),
    Metric::new("paid", Unit::Money, "what the agent paid, summed over the ledger"),
];

/// What `metric` measures in (`money.usage` money, `providers.rp.utilisation` a share), from the declarations of
/// the run's metrics and of `registry`'s kinds, by the last segment of its name; `None` for a name none declares.
pub fn unit_of(registry: &Registry, metric: &str) -> Option<Unit> {
    if metric.starts_with("money.") {
        return Some(Unit::Money);
    }
    if let Some(m) = metric.strip_prefix("market.") {
        return MARKET_METRICS.iter().find(|d| d.name == m).map(|d| d.unit);
    }
    let last = metric.rsplit('.').next().unwrap_or(metric);
    declared(registry).find(|m| m.name == last).map(|m| m.unit)
}

/// The metrics that count substitutions ([`Metric::substitution`], an agent doing something else than it was
/// configured to do), by the last segment of their names, with what each counts.
pub fn substitution_metrics(registry: &Registry) -> Vec<(&'static str, &'static str)> {
    declared(registry).filter(|m| m.substitution).map(|m| (m.name, m.about)).collect()
}

/// The substitutions a run's `metrics` record, those not 0, in name order, with what each counts (`counted`: from
/// [`substitution_metrics`]).
pub fn substitutions<'a>(
    counted: &[(&'static str, &'static str)],
    metrics: &'a BTreeMap<String, f64>,
) -> Vec<(&'a str, f64, &'static str)> {
    metrics
        .iter()
        .filter(|(_, v)| **v != 0.0)
        .filter_map(|(k, v)| {
            let last = k.rsplit('.').next().unwrap_or(k);
            counted.iter().find(|(name, _)| *name == last).map(|(_, about)| (k.as_str(), *v, *about))
        })
        .collect()
}

/// `metric` with its unit, as an axis label (`jobs.response [s]`); the bare name when the unit is unknown.
pub fn axis_label(registry: &Registry, metric: &str) -> String {
    unit_of(registry, metric).map_or_else(|| metric.to_string(), |u| format!("{metric} {}", u.axis()))
}

/// Every metric declaration: the run's, the jobs', the leases', the ledger's, the market's and each kind's.
fn declared(registry: &Registry) -> impl Iterator<Item = &Metric> {
    let kinds = registry.kinds().iter().flat_map(|k| k.metrics().iter().chain(k.derived_metrics()));
    let fixed = RUN_METRICS.iter().chain(&JOB_METRICS).chain(&LEASE_METRICS).chain(&GROUP_METRICS);
    fixed.chain(&LEDGER_METRICS).chain(&MARKET_METRICS).chain(kinds)
}

/// Whether a run of `plan` may measure `name` (what a target may name).
pub fn is_metric(plan: &Plan, name: &str) -> bool {
    // Priority classes are numbered by the workloads' draws.
    let class = name.strip_prefix("classes.").and_then(|r| r.split_once('.'));
    if let Some((n, m)) = class
        && n.parse::<u8>().is_ok()
    {
        return JOB_METRICS.iter().any(|j| j.name == m);
    }
    metric_names(plan, name).iter().any(|n| n == name)
}

/// The metrics a run of `plan` may measure, members' metrics for one member of each group: the member `near`
/// names when it is one (`providers.site-7.revenue`), else the first. A few per group, not per agent.
pub fn metric_names(plan: &Plan, near: &str) -> Vec<String> {
    let mut out: Vec<String> = RUN_METRICS.iter().map(|m| m.name.to_string()).collect();
    out.extend(Reason::ALL.iter().map(|r| format!("money.{}", r.name())));
    out.extend(JOB_METRICS.iter().map(|m| format!("jobs.{}", m.name)));
    for (family, groups) in [("urgency", &URGENCY_GROUPS), ("valuation", &VALUATION_GROUPS)] {
        for (group, _) in groups {
            out.extend(GROUP_METRICS.iter().map(|m| format!("{family}.{group}.{}", m.name)));
        }
    }
    for (class, _) in LEASE_CLASSES {
        out.extend(LEASE_METRICS.iter().map(|m| format!("leases.{class}.{}", m.name)));
    }
    let near_member = near.split('.').nth(1).unwrap_or("");
    for g in &plan.groups {
        if g.spec.workload().is_some() {
            out.extend(JOB_METRICS.iter().map(|m| format!("brokers.{}.{}", g.name, m.name)));
        }
        let member = match member_index(&g.name, g.count, near_member) {
            Some(_) => near_member.to_string(),
            None => member_name(&g.name, g.count, 0),
        };
        let table = g.kind.table();
        if summed(plan, g.count) {
            let names = LEDGER_METRICS.iter().map(|m| m.name).chain(g.kind.summed_metrics().iter().copied());
            out.extend(names.map(|k| format!("{table}.{}.{k}", g.name)));
        } else {
            out.extend(g.kind.metrics().iter().chain(&LEDGER_METRICS).map(|m| format!("{table}.{member}.{}", m.name)));
        }
        if g.count > 1 && g.kind.metrics().iter().any(|m| m.name == "utilisation") {
            out.push(format!("{table}.{}.utilisation", g.name));
        }
    }
    if plan.groups.iter().any(|g| g.kind.offers(Service::SellsCompute)) {
        out.extend(MARKET_METRICS.iter().map(|m| format!("market.{}", m.name)));
    }
    for kind in plan.registry.kinds().iter().filter(|k| plan.groups.iter().any(|g| g.kind.name() == k.name())) {
        out.extend(kind.summed_metrics().iter().map(|m| m.to_string()));
        out.extend(kind.derived_metrics().iter().map(|m| m.name.to_string()));
    }
    out
}

/// One row of `jobs.csv` as a run keeps it: the numbers of the job's record, its owner and site by agent index
/// (their names are looked up when the row is written), without the reason, energy and carbon that only some jobs
/// have (kept beside, by job id, in [`Measured`]). A run keeps one of these per job rather than the record.
#[derive(Clone, Debug, PartialEq)]
pub struct JobRow {
    /// Run-wide job id.
    pub id: JobId,
    /// The owning broker.
    pub owner: AgentId,
    /// The provider that ran (or was running) it.
    pub site: Option<AgentId>,
    /// Submission time \[s\].
    pub submit: f64,
    /// Start of execution \[s\].
    pub start: Option<f64>,
    /// End of execution \[s\].
    pub end: Option<f64>,
    /// Runtime on a reference PE \[s\].
    pub runtime: f64,
    /// Deadline \[s\], if any.
    pub deadline: Option<f64>,
    /// Budget [G$], if any.
    pub budget: Option<f64>,
    /// What the owner was billed [G$].
    pub cost: f64,
    /// PEs used.
    pub pes: u32,
    /// Lease type (Amini Salehi 2012), if any.
    pub lease: Option<LeaseType>,
    /// Priority class, 0 the highest.
    pub priority: u8,
    /// Outcome.
    pub outcome: JobOutcome,
}

impl JobRow {
    /// The row of `record`, which `owner` reported.
    pub fn of(owner: AgentId, record: &JobRecord) -> JobRow {
        JobRow {
            id: record.id,
            owner,
            site: record.site,
            submit: record.submit,
            start: record.start,
            end: record.end,
            runtime: record.runtime,
            deadline: record.deadline,
            budget: record.budget,
            cost: record.cost,
            pes: record.pes,
            lease: record.lease,
            priority: record.priority,
            outcome: record.outcome,
        }
    }
}

/// Where a job came from, as the run dealt it.
#[derive(Clone, Copy, Debug)]
pub struct Source {
    /// Its id in its workload (a trace's job number).
    pub id: u64,
    /// The runtime estimate it was submitted with \[s\].
    pub estimate: f64,
}

/// One row of `timeseries.csv`.
#[derive(Clone, Debug)]
pub struct SampleRow {
    /// Sample time \[s\].
    pub t: f64,
    /// The provider.
    pub agent: String,
    /// PEs busy.
    pub busy_pes: f64,
    /// Busy PEs over all PEs.
    pub utilisation: f64,
    /// Jobs waiting in the queue.
    pub queued: f64,
    /// The price posted [G$ per PE-second].
    pub price: f64,
    /// Requests received in the sample interval ending at `t`.
    pub requests: f64,
    /// Those requests over the mean free PEs of the interval (at least one).
    pub contention: f64,
}

/// What one run measured.
#[derive(Clone, Debug, Default)]
pub struct Measured {
    /// Named metrics (the keys of `summary.json`).
    pub metrics: BTreeMap<String, f64>,
    /// Job rows in job-id order.
    pub jobs: Vec<JobRow>,
    /// Why each rejected or dropped job was, by job id.
    pub reasons: BTreeMap<JobId, String>,
    /// The energy (with cooling) \[kWh\] and carbon \[kg\] of each job's runs, by job id, for the jobs that agents
    /// metered.
    pub metered: BTreeMap<JobId, (f64, f64)>,
    /// Where each job came from: `sources[id - 1]` for job `id`.
    pub sources: Vec<Source>,
    /// Samples in time order, then provider order.
    pub samples: Vec<SampleRow>,
    /// Every transfer of money, in time order (then booking agent, then booking order).
    pub ledger: Vec<Transfer>,
    /// Agent names, by id (the ledger's accounts).
    pub names: Vec<String>,
    /// The agents with PEs (providers), in scenario order, and their PEs.
    pub sites: Vec<(String, f64)>,
    /// Each induced-value market's periods and trades, by agent name.
    pub markets: Vec<(String, agents::market::MarketRecord)>,
    /// The kinds whose capacity the over-subscription invariant checked, and those it did not.
    pub coverage: super::invariants::Coverage,
}

impl Measured {
    /// An agent's name by its id ("env" for one outside the scenario).
    pub fn name(&self, id: AgentId) -> &str {
        self.names.get(id.index()).map_or("env", String::as_str)
    }

    /// Where job `id` (numbered from 1) came from in its workload.
    pub fn source(&self, id: u64) -> Option<&Source> {
        usize::try_from(id).ok().and_then(|id| self.sources.get(id.checked_sub(1)?))
    }
}

/// Measures a finished run; `sources[id - 1]` is where job `id` came from. An `Err` is a broken invariant. Each
/// report's job records become compact rows one report at a time, the records freed as they go: a run holds the
/// records of one agent at most, and one row per job.
pub fn measure(
    plan: &Plan,
    names: &[String],
    mut reports: Vec<Report>,
    outcome: &Outcome,
    sources: Vec<Source>,
) -> Result<Measured, String> {
    let end = outcome.now.secs();
    let mut m = Measured { sources, ..Measured::default() };
    m.metrics.insert("end_time".into(), end);
    m.metrics.insert("events".into(), outcome.delivered as f64);

    // One ledger: every agent's book, merged in time order (the sort is stable: per agent, booking order).
    m.ledger = reports.iter().flat_map(|r| r.transfers.iter().cloned()).collect();
    m.ledger.sort_by(|a, b| a.at.cmp(&b.at).then(a.booked_by.cmp(&b.booked_by)));
    m.coverage = super::invariants::check(plan, names, &reports, &m.ledger, end)?;

    // The warm-up: the first jobs submitted (ties by id) stay out of the job metrics.
    let mut warm = std::collections::BTreeSet::new();
    if plan.warm_up > 0 {
        let mut order: Vec<(f64, u64)> = reports.iter().flat_map(|r| r.jobs.iter().map(|j| (j.submit, j.id))).collect();
        order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        warm = order.iter().take(plan.warm_up).map(|j| j.1).collect();
    }
    let mut metered: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
    for m in reports.iter().flat_map(|r| &r.metered) {
        let sum = metered.entry(m.job).or_default();
        *sum = (sum.0 + m.energy, sum.1 + m.carbon);
    }
    // The rows in report order, each group's by position (the group's metrics sum in report order).
    m.jobs.reserve_exact(reports.iter().map(|r| r.jobs.len()).sum());
    let mut by_group: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for ((i, agent), report) in plan.agents().enumerate().zip(&mut reports) {
        for mut r in std::mem::take(&mut report.jobs) {
            if !warm.contains(&r.id) {
                by_group.entry(agent.group).or_default().push(m.jobs.len());
            }
            let ran = r.ran_as().iter().filter_map(|id| metered.get(id)).copied().reduce(|a, b| (a.0 + b.0, a.1 + b.1));
            if let Some(ran) = ran {
                m.metered.insert(r.id, ran);
            }
            if let Some(reason) = r.reason.take() {
                m.reasons.insert(r.id, reason);
            }
            m.jobs.push(JobRow::of(AgentId(i as u32), &r));
        }
    }
    for (group, rows) in &by_group {
        let jobs: Vec<&JobRow> = rows.iter().map(|&i| &m.jobs[i]).collect();
        job_metrics(&format!("brokers.{group}"), &jobs, &mut m.metrics);
    }
    drop(by_group);
    // Rows in id order (a stable sort, so the first of two reports of one id stays first). A broker reports its
    // jobs in submission order, which is id order when its trace is sorted: then nothing moves.
    if !m.jobs.is_sorted_by_key(|j| j.id) {
        m.jobs.sort_by_key(|j| j.id);
    }
    if let Some(w) = m.jobs.windows(2).find(|w| w[0].id == w[1].id) {
        let owner = |j: &JobRow| names.get(j.owner.index()).map_or("?", String::as_str);
        return Err(format!("job {} is reported twice, by {} and by {}", w[0].id, owner(&w[0]), owner(&w[1])));
    }
    let measured: Vec<&JobRow> = m.jobs.iter().filter(|j| !warm.contains(&j.id)).collect();
    job_metrics("jobs", &measured, &mut m.metrics);
    // Messages per job: what a job's whole path costs, the run's set-up shared among the jobs.
    if !m.jobs.is_empty() {
        m.metrics.insert("events_per_job".into(), outcome.delivered as f64 / m.jobs.len() as f64);
    }
    // The PEs of each agent (0 without), by agent index, for the weighted response times.
    let site_pes: Vec<f64> = reports.iter().map(|r| r.pes().map_or(0.0, |p| p.count)).collect();
    lease_metrics(&measured, &site_pes, &mut m.metrics);
    group_metrics(&measured, &mut m.metrics);
    if measured.iter().any(|j| j.priority > 0) {
        let mut by_class: BTreeMap<u8, Vec<&JobRow>> = BTreeMap::new();
        for j in &measured {
            by_class.entry(j.priority).or_default().push(j);
        }
        for (class, jobs) in by_class {
            job_metrics(&format!("classes.{class}"), &jobs, &mut m.metrics);
        }
    }
    drop(measured);

    // Every agent's own metrics, and for agents with PEs utilisation per member, per group and overall.
    let mut busy_total = 0.0;
    let mut capacity_total = 0.0;
    let mut groups: BTreeMap<(&str, &str), (f64, f64, usize)> = BTreeMap::new();
    let mut loads: Vec<(&agents::report::Series, f64)> = Vec::new();
    let sampled = reports.iter().filter(|r| r.pes().is_some()).count();
    let period = sample_period(plan.sample_period, end, sampled);
    let mut sites = Vec::new();
    for (agent, report) in plan.agents().zip(&reports) {
        let prefix = agent.kind.table();
        for (k, v) in &report.metrics {
            m.metrics.insert(format!("{prefix}.{}.{k}", agent.name), *v);
        }
        if let Some(market) = &report.market {
            m.markets.push((agent.name.clone(), (**market).clone()));
        }
        // Agents with PEs count towards utilisation and the time series.
        let Some(Pes { count: pes, busy, wasted }) = report.pes() else { continue };
        let site = Site::of(report);
        m.sites.push((agent.name.clone(), pes));
        if pes > 0.0 {
            loads.push((busy, pes));
        }
        let queued = report.series_named("queued");
        // Overhead and lost runs keep PEs busy but are not computation (Eq 3.10-3.11).
        let busy_secs = (busy.integral(end) - wasted).max(0.0);
        busy_total += busy_secs;
        capacity_total += pes * end;
        let g = groups.entry((prefix, agent.group)).or_default();
        g.0 += busy_secs;
        g.1 += pes * end;
        g.2 += 1;
        if plan.outputs.timeseries {
            let samples = if end > 0.0 { (end / period).floor() as usize } else { 0 };
            for k in 0..=samples {
                let t = k as f64 * period;
                let b = busy.at(t);
                let (price, requests, contention) = match &site {
                    Some(s) => {
                        let from = (t - period).max(0.0);
                        (s.price.map_or(f64::NAN, |p| p.at(t)), s.requests_in(from, t), s.contention(from, t))
                    }
                    None => (f64::NAN, 0.0, 0.0),
                };
                m.samples.push(SampleRow {
                    t,
                    agent: agent.name.clone(),
                    busy_pes: b,
                    utilisation: b / pes,
                    queued: queued.map_or(0.0, |s| s.at(t)),
                    price,
                    requests,
                    contention,
                });
            }
        }
        // The market's metrics are about providers' posted prices.
        if agent.kind.offers(Service::SellsCompute) {
            sites.extend(site);
        }
    }
    for ((prefix, group), (busy, capacity, members)) in groups {
        if members > 1 {
            m.metrics.insert(format!("{prefix}.{group}.utilisation"), ratio(busy, capacity));
        }
    }
    if capacity_total > 0.0 {
        m.metrics.insert("utilisation".into(), ratio(busy_total, capacity_total));
        // No PE is busy before the first job arrives: the same work over the span the users were active in.
        let first_submit = m.jobs.iter().map(|j| j.submit).min_by(f64::total_cmp).unwrap_or(0.0).clamp(0.0, end);
        let span = capacity_total * (end - first_submit) / end;
        m.metrics.insert("utilisation_from_first_submit".into(), ratio(busy_total, span));
    }
    if loads.len() > 1 {
        let first_submit = m.jobs.iter().map(|j| j.submit).min_by(f64::total_cmp).unwrap_or(0.0).clamp(0.0, end);
        m.metrics.insert("load_deviation".into(), load_deviation(&loads, first_submit, end));
    }
    // Run-wide sums of what each kind's members report, and what the kinds derive from them, for the kinds the
    // scenario has.
    for kind in plan.registry.kinds().iter().filter(|k| plan.groups.iter().any(|g| g.kind.name() == k.name())) {
        for k in kind.summed_metrics() {
            let sum: f64 = plan
                .agents()
                .filter(|a| a.kind.name() == kind.name())
                .filter_map(|a| m.metrics.get(&format!("{}.{}.{k}", kind.table(), a.name)))
                .sum();
            m.metrics.insert(k.to_string(), sum);
        }
        kind.derive_metrics(&mut m.metrics);
    }
    m.samples.sort_by(|a, b| a.t.total_cmp(&b.t));
    let mut flows = vec![(0.0, 0.0); names.len()];
    for t in &m.ledger {
        *m.metrics.entry(format!("money.{}", t.reason.name())).or_default() += t.amount;
        if let Account::Agent(id) = t.payee {
            flows[id.index()].0 += t.amount;
        }
        if let Account::Agent(id) = t.payer {
            flows[id.index()].1 += t.amount;
        }
    }
    for (agent, &(received, paid)) in plan.agents().zip(&flows) {
        let table = agent.kind.table();
        m.metrics.insert(format!("{table}.{}.received", agent.name), received);
        m.metrics.insert(format!("{table}.{}.paid", agent.name), paid);
    }
    let revenue: f64 = plan
        .agents()
        .zip(&flows)
        .filter(|(a, _)| a.kind.offers(Service::SellsCompute))
        .map(|(_, (received, _))| received)
        .sum();
    let owned: Vec<(&str, &JobRow)> =
        m.jobs.iter().map(|j| (names.get(j.owner.index()).map_or("?", String::as_str), j)).collect();
    let window = plan.market_window.map_or((0.0, end), |(from, to)| (from.min(end), to.min(end)));
    market_metrics(&sites, plan.contention_k, period, window, &owned, revenue, &mut m.metrics);
    sum_large_groups(plan, &mut m.metrics);
    m.names = names.to_vec();
    // An empty sum of floats is -0.0: written as 0.
    for v in m.metrics.values_mut() {
        *v += 0.0;
    }
    Ok(m)
}

/// Whether a group of `count` members reports its members' metrics only summed (`[outputs] summed-above`). Never a
/// group of one: it is named as its member, and its sums would take the keys of the group's job metrics.
fn summed(plan: &Plan, count: usize) -> bool {
    plan.outputs.summed_above.is_some_and(|limit| count > (limit as usize).max(1))
}

/// Replaces the members' metrics of each group `[outputs] summed-above` sums by their sums over the group: `paid`,
/// `received` and the kind's summed metrics, as `<table>.<group>.<metric>`, summed in member order.
fn sum_large_groups(plan: &Plan, metrics: &mut BTreeMap<String, f64>) {
    for g in plan.groups.iter().filter(|g| summed(plan, g.count)) {
        let table = g.kind.table();
        let summed = |k: &str| matches!(k, "paid" | "received") || g.kind.summed_metrics().contains(&k);
        let mut sums: BTreeMap<String, f64> = BTreeMap::new();
        for index in 0..g.count {
            let prefix = format!("{table}.{}.", member_name(&g.name, g.count, index));
            let keys: Vec<String> = metrics
                .range(prefix.clone()..)
                .map(|(k, _)| k)
                .take_while(|k| k.starts_with(&prefix))
                .cloned()
                .collect();
            for key in keys {
                let value = metrics.remove(&key).unwrap_or(0.0);
                let k = &key[prefix.len()..];
                if summed(k) {
                    *sums.entry(format!("{table}.{}.{k}", g.name)).or_default() += value;
                }
            }
        }
        metrics.extend(sums);
    }
}

/// The period `timeseries.csv` samples `sampled` agents at over a run that ended at `end`: the scenario's
/// (default: the end time / 100), longer when the file would hold more than [`MAX_TIMESERIES_ROWS`] rows (a long
/// drained run, many providers).
fn sample_period(period: Option<f64>, end: f64, sampled: usize) -> f64 {
    let period = period.unwrap_or(if end > 0.0 { end / 100.0 } else { 1.0 });
    let rows = (end / period + 1.0) * sampled as f64;
    if rows > MAX_TIMESERIES_ROWS as f64 {
        end * sampled as f64 / (MAX_TIMESERIES_ROWS - sampled) as f64
    } else {
        period
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}

/// Counts by outcome and means over completed jobs, under `prefix`.
fn job_metrics(prefix: &str, jobs: &[&JobRow], out: &mut BTreeMap<String, f64>) {
    let count = |o: JobOutcome| jobs.iter().filter(|j| j.outcome == o).count() as f64;
    let mut put = |k: &str, v: f64| {
        out.insert(format!("{prefix}.{k}"), v);
    };
    put("total", jobs.len() as f64);
    for o in
        [JobOutcome::Completed, JobOutcome::Rejected, JobOutcome::Dropped, JobOutcome::Running, JobOutcome::Pending]
    {
        put(o.as_str(), count(o));
    }
    put("unfinished", count(JobOutcome::Running) + count(JobOutcome::Pending));
    let done: Vec<(f64, f64, f64)> = jobs
        .iter()
        .filter(|j| j.outcome == JobOutcome::Completed)
        .filter_map(|j| Some((j.submit, j.start?, j.end?)))
        .collect();
    let mean = |f: &dyn Fn(&(f64, f64, f64)) -> f64| {
        if done.is_empty() { f64::NAN } else { done.iter().map(f).sum::<f64>() / done.len() as f64 }
    };
    put("wait", mean(&|&(s, b, _)| b - s));
    put("response", mean(&|&(s, _, e)| e - s));
    put("slowdown", mean(&|&(s, b, e)| if e > b { (e - s) / (e - b) } else { 1.0 }));
    put("bounded_slowdown", mean(&|&(s, b, e)| ((e - s) / (e - b).max(SLOWDOWN_BOUND)).max(1.0)));
    put("wait_over_runtime", mean(&|&(s, b, e)| if e > b { (b - s) / (e - b) } else { 0.0 }));
    put("cost", jobs.iter().map(|j| j.cost).sum());
    let makespan = done.iter().map(|d| d.2).fold(f64::NAN, f64::max);
    put("makespan", makespan);
    let with_deadline: Vec<_> = jobs.iter().filter(|j| j.deadline.is_some()).collect();
    if !with_deadline.is_empty() {
        let met = with_deadline
            .iter()
            .filter(|j| j.outcome == JobOutcome::Completed && j.end.zip(j.deadline).is_some_and(|(e, d)| e <= d))
            .count();
        put("deadlines_met", met as f64);
        put("deadlines_missed", (with_deadline.len() - met) as f64);
    }
}

/// The time average over `[from, until)` of the standard deviation, across the providers, of their load (busy PEs
/// over PEs; Garg 2010 §7.4.1's load deviation, Fig 7.7); 0 for an empty span.
fn load_deviation(sites: &[(&agents::report::Series, f64)], from: f64, until: f64) -> f64 {
    if until <= from {
        return 0.0;
    }
    // Every site's change points in time order (a site's own in its order): applied up to each instant, they give
    // the loads in force then.
    let mut changes: Vec<(f64, usize, f64)> = sites
        .iter()
        .enumerate()
        .flat_map(|(i, (s, pes))| s.points().iter().map(move |p| (p.0, i, p.1 / pes)))
        .collect();
    changes.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut times: Vec<f64> = changes.iter().map(|c| c.0).filter(|&t| from < t && t < until).collect();
    times.push(from);
    times.push(until);
    times.sort_by(f64::total_cmp);
    times.dedup();
    let n = sites.len() as f64;
    let mut area = 0.0;
    // Only the sites with a load count: adding an idle site's 0 leaves both sums exactly as they are, so summing the
    // busy ones in site order gives the bits of summing all of them (which made 50,000 sites' run take seconds).
    let mut load = vec![0.0; sites.len()];
    let mut busy = std::collections::BTreeSet::new();
    let mut applied = 0;
    for w in times.windows(2) {
        // As `Series::at`: the last value set by then, 0 before the first.
        while let Some(&(t, i, l)) = changes.get(applied)
            && t <= w[0]
        {
            load[i] = l;
            if l == 0.0 {
                busy.remove(&i);
            } else {
                busy.insert(i);
            }
            applied += 1;
        }
        let (sum, sum2) = busy.iter().map(|&i| load[i]).fold((0.0, 0.0), |(a, b), l| (a + l, b + l * l));
        let mean = sum / n;
        area += (sum2 / n - mean * mean).max(0.0).sqrt() * (w[1] - w[0]);
    }
    area / (until - from)
}

/// The success ratio by urgency group, and by valuation group (see [`URGENCY_GROUPS`], [`VALUATION_GROUPS`]): a job
/// succeeds when it completes by its deadline. A group without jobs has a NaN success ratio.
fn group_metrics(jobs: &[&JobRow], out: &mut BTreeMap<String, f64>) {
    if jobs.is_empty() || jobs.iter().any(|j| j.deadline.is_none()) {
        return;
    }
    let urgency = |j: &JobRow| {
        let slack = j.deadline.unwrap_or(f64::INFINITY) - j.submit;
        if j.runtime > 0.0 { slack / j.runtime - 1.0 } else { slack.signum() * f64::INFINITY }
    };
    put_groups("urgency", &URGENCY_GROUPS, jobs, urgency, out);
    if jobs.iter().all(|j| j.budget.is_some()) {
        let per_pe = |j: &JobRow| j.budget.unwrap_or(0.0) / f64::from(j.pes.max(1));
        put_groups("valuation", &VALUATION_GROUPS, jobs, per_pe, out);
    }
}

/// Each group's total, jobs met and success ratio under `family.<group>.`, a job in the first group whose upper
/// bound its `key` lies below.
fn put_groups(
    family: &str,
    groups: &[(&str, f64)],
    jobs: &[&JobRow],
    key: impl Fn(&JobRow) -> f64,
    out: &mut BTreeMap<String, f64>,
) {
    let mut counts = vec![(0.0, 0.0); groups.len()];
    for j in jobs {
        let k = key(j);
        let g = groups.iter().position(|&(_, bound)| k < bound).unwrap_or(groups.len() - 1);
        counts[g].0 += 1.0;
        if j.outcome == JobOutcome::Completed && j.end.zip(j.deadline).is_some_and(|(e, d)| e <= d) {
            counts[g].1 += 1.0;
        }
    }
    for ((group, _), (total, met)) in groups.iter().zip(counts) {
        out.insert(format!("{family}.{group}.total"), total);
        out.insert(format!("{family}.{group}.met"), met);
        out.insert(format!("{family}.{group}.success"), if total > 0.0 { met / total } else { f64::NAN });
    }
}

/// Amini Salehi (2012) ch3 metrics over typed leases: rejection rates of local and external requests (§4.4) and the
/// average response time of best-effort external leases, ART = Σ (completion − ready) / |β| (Eq 3.12); ch4's
/// average weighted response time (Eqs 4.23–4.24), with `site_pes` the PEs of each agent by index.
fn lease_metrics(jobs: &[&JobRow], site_pes: &[f64], out: &mut BTreeMap<String, f64>) {
    use agents::protocol::LeaseType;
    if jobs.iter().all(|j| j.lease.is_none()) {
        return;
    }
    type Member = fn(LeaseType) -> bool;
    let classes: [Member; 5] = [
        |l| l == LeaseType::Local,
        |l| l != LeaseType::Local,
        |l| matches!(l, LeaseType::Cancellable | LeaseType::Suspendable),
        |l| l == LeaseType::Migratable,
        |l| l == LeaseType::NonPreemptable,
    ];
    for ((name, _), member) in LEASE_CLASSES.into_iter().zip(classes) {
        let of: Vec<&&JobRow> = jobs.iter().filter(|j| j.lease.is_some_and(member)).collect();
        let rejected = of.iter().filter(|j| j.outcome == JobOutcome::Rejected).count() as f64;
        out.insert(format!("leases.{name}.total"), of.len() as f64);
        out.insert(format!("leases.{name}.rejected"), rejected);
        out.insert(format!("leases.{name}.rejection_rate"), ratio(rejected, of.len() as f64));
        let responses: Vec<f64> =
            of.iter().filter(|j| j.outcome == JobOutcome::Completed).filter_map(|j| Some(j.end? - j.submit)).collect();
        let art = if responses.is_empty() { f64::NAN } else { responses.iter().sum::<f64>() / responses.len() as f64 };
        out.insert(format!("leases.{name}.art"), art);
        out.insert(format!("leases.{name}.awrt"), awrt(&of, site_pes));
    }
}

/// AWRT (Amini Salehi 2012, Eqs 4.23–4.24): per site j, Σ v·d·(c − b) / Σ v·d over the completed leases that ended
/// there (v VMs, d duration, b ready = submit, c completion); then Σ_j M_j AWRT_j / Σ_j M_j over the sites with
/// some, M_j their PEs. NaN without a completed lease.
fn awrt(jobs: &[&&JobRow], site_pes: &[f64]) -> f64 {
    let mut per_site: BTreeMap<usize, (f64, f64)> = BTreeMap::new();
    for j in jobs.iter().filter(|j| j.outcome == JobOutcome::Completed) {
        let (Some(site), Some(end)) = (j.site, j.end) else { continue };
        let w = f64::from(j.pes) * j.runtime;
        let e = per_site.entry(site.index()).or_default();
        e.0 += w * (end - j.submit);
        e.1 += w;
    }
    let (mut num, mut den) = (0.0, 0.0);
    for (site, (weighted, weight)) in per_site {
        let pes = site_pes.get(site).copied().unwrap_or(0.0);
        if weight > 0.0 && pes > 0.0 {
            num += pes * weighted / weight;
            den += pes;
        }
    }
    if den > 0.0 { num / den } else { f64::NAN }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_drained_run_is_sampled_less_often() {
        assert_eq!(sample_period(None, 200.0, 3), 2.0, "the end time / 100");
        assert_eq!(sample_period(Some(0.5), 200.0, 3), 0.5);
        // A million seconds every millisecond on 10 providers would be 10^10 rows.
        let period = sample_period(Some(0.001), 1e6, 10);
        let rows = ((1e6 / period).floor() + 1.0) * 10.0;
        assert!(rows <= MAX_TIMESERIES_ROWS as f64 && rows > 0.99 * MAX_TIMESERIES_ROWS as f64, "{rows}");
    }

    /// The direct form: every site's load at every instant.
    fn load_deviation_of_every_site(sites: &[(&agents::report::Series, f64)], from: f64, until: f64) -> f64 {
        if until <= from {
            return 0.0;
        }
        let mut times: Vec<f64> = sites.iter().flat_map(|(s, _)| s.points().iter().map(|p| p.0)).collect();
        times.retain(|&t| from < t && t < until);
        times.extend([from, until]);
        times.sort_by(f64::total_cmp);
        times.dedup();
        let n = sites.len() as f64;
        let area: f64 = times
            .windows(2)
            .map(|w| {
                let (sum, sum2) =
                    sites.iter().map(|(s, pes)| s.at(w[0]) / pes).fold((0.0, 0.0), |(a, b), l| (a + l, b + l * l));
                let mean = sum / n;
                (sum2 / n - mean * mean).max(0.0).sqrt() * (w[1] - w[0])
            })
            .sum();
        area / (until - from)
    }

    #[test]
    fn load_deviation_over_the_busy_sites_is_bitwise_the_sum_over_all() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
        let t = |s| agents::sim::SimTime::new(s).unwrap();
        for _ in 0..500 {
            let sites: Vec<(agents::report::Series, f64)> = (0..rng.random_range(1..40))
                .map(|_| {
                    let pes = f64::from(rng.random_range(1..64u32));
                    let mut series = agents::report::Series::default();
                    let mut now = 0.0;
                    for _ in 0..rng.random_range(0..30) {
                        now += f64::from(rng.random_range(0..5u32));
                        series.set(t(now), f64::from(rng.random_range(0..=pes as u32)));
                    }
                    (series, pes)
                })
                .collect();
            let sites: Vec<(&agents::report::Series, f64)> = sites.iter().map(|(s, p)| (s, *p)).collect();
            let (from, until) = (f64::from(rng.random_range(0..20u32)), f64::from(rng.random_range(0..100u32)));
            let (fast, direct) =
                (load_deviation(&sites, from, until), load_deviation_of_every_site(&sites, from, until));
            assert_eq!(fast.to_bits(), direct.to_bits(), "{fast} vs {direct}");
        }
    }

    #[test]
    fn load_deviation_is_the_time_average_of_the_spread() {
        // Two sites of 4 PEs over [0, 20): A busy 4 over [0, 10), B idle. Loads (1, 0), sd 0.5, then (0, 0): 0.25.
        let t = |s| agents::sim::SimTime::new(s).unwrap();
        let mut a = agents::report::Series::default();
        a.set(t(0.0), 4.0);
        a.set(t(10.0), 0.0);
        let b = agents::report::Series::default();
        assert_eq!(load_deviation(&[(&a, 4.0), (&b, 4.0)], 0.0, 20.0), 0.25);
        assert_eq!(load_deviation(&[(&a, 4.0), (&b, 4.0)], 10.0, 20.0), 0.0);
        assert_eq!(load_deviation(&[(&a, 4.0), (&b, 4.0)], 5.0, 5.0), 0.0);
    }

    #[test]
    fn success_ratios_by_urgency_and_valuation_group() {
        // Runtimes of 100 s from t = 0: deadlines 110 (u = 0.1, very urgent), 300 (u = 2, very relaxed), 160 (u =
        // 0.6, intermediate). The first completes by its deadline, the second after it, the third is dropped.
        // Budgets per PE: 500 (very low), 40,000 (very high), 15,000 (medium).
        let job = |id, deadline, budget, outcome, end| JobRecord {
            id,
            submit: 0.0,
            start: Some(0.0),
            end,
            site: None,
            pes: 1,
            runtime: 100.0,
            deadline: Some(deadline),
            budget: Some(budget),
            lease: None,
            priority: 0,
            outcome,
            cost: 0.0,
            reason: None,
            parts: Vec::new(),
        };
        let jobs = [
            job(1, 110.0, 500.0, JobOutcome::Completed, Some(100.0)),
            job(2, 300.0, 40_000.0, JobOutcome::Completed, Some(350.0)),
            job(3, 160.0, 15_000.0, JobOutcome::Dropped, Some(50.0)),
        ];
        let rows = jobs.each_ref().map(|j| JobRow::of(AgentId(0), j));
        let mut out = BTreeMap::new();
        group_metrics(&rows.each_ref(), &mut out);
        let get = |k: &str| out[k];
        assert_eq!((get("urgency.very_urgent.total"), get("urgency.very_urgent.success")), (1.0, 1.0));
        assert_eq!((get("urgency.very_relaxed.total"), get("urgency.very_relaxed.met")), (1.0, 0.0));
        assert_eq!((get("urgency.intermediate.total"), get("urgency.intermediate.success")), (1.0, 0.0));
        assert!(get("urgency.urgent.success").is_nan());
        assert_eq!(get("valuation.very_low.success"), 1.0);
        assert_eq!(get("valuation.very_high.success"), 0.0);
        assert_eq!(get("valuation.medium.total"), 1.0);
        // Every name is one a target may give.
        let declared: Vec<String> = ["urgency", "valuation"]
            .iter()
            .flat_map(|f| {
                let groups = if *f == "urgency" { URGENCY_GROUPS } else { VALUATION_GROUPS };
                groups.map(|(g, _)| GROUP_METRICS.map(|m| format!("{f}.{g}.{}", m.name)))
            })
            .flatten()
            .collect();
        assert_eq!(out.keys().cloned().collect::<std::collections::BTreeSet<_>>(), declared.into_iter().collect());
        // Without budgets, urgency only; without deadlines, nothing.
        let mut out = BTreeMap::new();
        let no_budget = JobRow { budget: None, ..rows[0].clone() };
        group_metrics(&[&no_budget], &mut out);
        assert!(out.keys().all(|k| k.starts_with("urgency.")) && !out.is_empty());
        let mut out = BTreeMap::new();
        group_metrics(&[&JobRow { deadline: None, ..rows[0].clone() }], &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn a_name_declared_twice_has_one_unit_so_charts_can_look_units_up_by_name() {
        let registry = Registry::standard();
        let mut units: BTreeMap<&str, Unit> = BTreeMap::new();
        for m in declared(&registry) {
            let unit = *units.entry(m.name).or_insert(m.unit);
            assert_eq!(unit, m.unit, "`{}` is declared in two units", m.name);
        }
        for kind in registry.kinds() {
            for summed in kind.summed_metrics() {
                assert!(
                    kind.metrics().iter().any(|m| m.name == *summed),
                    "{}: `{summed}` is summed, not declared",
                    kind.name()
                );
            }
        }
        assert_eq!(axis_label(&registry, "jobs.response"), "jobs.response [s]");
        assert_eq!(axis_label(&registry, "providers.rp.utilisation"), "providers.rp.utilisation (share, 0–1)");
        assert_eq!(axis_label(&registry, "money.usage"), "money.usage [G$]");
        assert_eq!(axis_label(&registry, "no.such"), "no.such");
        assert_eq!(unit_of(&registry, "jobs.bounded_slowdown").map(Unit::bounds), Some((1.0, f64::INFINITY)));
    }

    #[test]
    fn job_metrics_are_the_ones_declared() {
        let job = |outcome, deadline| JobRecord {
            id: 1,
            submit: 0.0,
            start: Some(1.0),
            end: Some(2.0),
            site: None,
            pes: 1,
            runtime: 1.0,
            deadline,
            budget: None,
            lease: None,
            priority: 0,
            outcome,
            cost: 0.0,
            reason: None,
            parts: Vec::new(),
        };
        let (a, b) = (job(JobOutcome::Completed, Some(5.0)), job(JobOutcome::Rejected, None));
        let mut out = BTreeMap::new();
        job_metrics("jobs", &[&JobRow::of(AgentId(0), &a), &JobRow::of(AgentId(0), &b)], &mut out);
        let mut declared: Vec<String> = JOB_METRICS.iter().map(|m| format!("jobs.{}", m.name)).collect();
        declared.sort();
        assert_eq!(out.into_keys().collect::<Vec<_>>(), declared);
    }
}
