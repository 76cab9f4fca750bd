//! Invariants checked at the end of every run, always (they cost little next to the run). A broken one fails the
//! run with the agent, the simulated time and the amounts; it never passes silently.
//!
//! - **Money** (`agents::ledger::check`): every amount finite and non-negative, every transfer booked by one of
//!   its parties (or by an agent of a clearing kind, [`AgentKind::clears`]), no balance below zero unless the
//!   account's kind allows credit ([`AgentKind::credit`]: users are billed after use); and every completed job's
//!   recorded cost is what the ledger holds for it and its parts.
//! - **Jobs end once**: no job is reported twice, and an ended job has its end (no earlier than its start).
//! - **No PE over-subscribed**: an agent that holds capacity (`Report::capacity`: PEs, CPUs, a node) keeps the units
//!   in use within [0, its units] at all times. Which kinds of the run reported a capacity, and which did not (those
//!   that hold none, and any that would hold some without saying so), is written in `run.json`.
//! - **The clock never goes back**: every series, every agent's book and every job record keeps within the run and
//!   in time order.
//! - **Energy is never negative**: no metered job's energy and no energy metric (`Unit::Energy`) below zero.
//! - **Agents' own rules**: whatever an agent reports broken about itself (`Report::violations`; the providers'
//!   schedulers report a job that overran its estimate or started off its plan, and a conservative reservation
//!   delayed by a later arrival, which only a preemption, cancellation or migration may do).
//!
//! [`AgentKind::clears`]: agents::registry::AgentKind::clears
//! [`AgentKind::credit`]: agents::registry::AgentKind::credit

use std::collections::BTreeMap;

use agents::ledger::{self, Account, Transfer};
use agents::registry::AgentKind;
use agents::report::{JobOutcome, Report};
use agents::sim::AgentId;

use crate::scenario::plan::Plan;

/// The kinds of a run whose agents the over-subscription invariant checked (they report a capacity), and those it
/// did not, each in the order of the plan.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Kinds whose agents report a capacity.
    pub checked: Vec<&'static str>,
    /// Kinds with an agent that reports none.
    pub not_checked: Vec<&'static str>,
}

/// Checks a finished run that ended at `end`; `ledger` is the merged books in time order. Returns which kinds the
/// over-subscription invariant covered.
pub fn check(
    plan: &Plan,
    names: &[String],
    reports: &[Report],
    ledger: &[Transfer],
    end: f64,
) -> Result<Coverage, String> {
    let kinds: Vec<&dyn AgentKind> = plan.agents().map(|a| a.kind).collect();
    let kind = |id: AgentId| kinds.get(id.index());
    let name = |a: Account| match a {
        Account::Agent(id) => names.get(id.index()).cloned().unwrap_or_else(|| format!("agent #{}", id.0)),
        Account::External(e) => e.name().to_string(),
    };
    let credit = |a: Account| match a {
        Account::Agent(id) => kind(id).is_some_and(|k| k.credit()),
        Account::External(_) => true,
    };
    let clears = |id: AgentId| kind(id).is_some_and(|k| k.clears());
    ledger::check(ledger, &name, &credit, &clears).map_err(|b| format!("money: {}", b.what))?;
    let mut billed: BTreeMap<(Account, u64), f64> = BTreeMap::new();
    for t in ledger {
        if let Some(job) = t.job {
            *billed.entry((t.payer, job)).or_default() += t.amount;
        }
    }

    let mut coverage = Coverage::default();
    for (i, (who, report)) in names.iter().zip(reports).enumerate() {
        let owner = Account::Agent(AgentId(i as u32));
        if let Some((t, what)) = report.violations.first() {
            return Err(format!("{who} at t={t}: {what}"));
        }
        for (series, points) in report.series.iter().map(|(k, s)| (k, s.points())) {
            if let Some(w) = points.windows(2).find(|w| w[1].0 < w[0].0) {
                return Err(format!("{who}: series `{series}` goes back in time, from t={} to t={}", w[0].0, w[1].0));
            }
            if let Some(p) = points.last().filter(|p| p.0 > end) {
                return Err(format!("{who}: series `{series}` has a point at t={} after the run's end {end}", p.0));
            }
        }
        let kind_name = kind(AgentId(i as u32)).map_or("?", |k| k.name());
        match report.capacity {
            Some(c) => {
                let Some((_, in_use)) = report.series.iter().find(|(k, _)| *k == c.in_use) else {
                    return Err(format!("{who}: its capacity's series `{}` is not among its series", c.in_use));
                };
                if let Some(&(t, v)) = in_use.points().iter().find(|p| !(0.0..=c.units).contains(&p.1)) {
                    return Err(format!("{who} at t={t}: {v} of its {} units in use (`{}`)", c.units, c.in_use));
                }
                if !coverage.checked.contains(&kind_name) {
                    coverage.checked.push(kind_name);
                }
            }
            None if !coverage.not_checked.contains(&kind_name) => coverage.not_checked.push(kind_name),
            None => {}
        }
        let declared = kind(AgentId(i as u32)).map_or(&[][..], |k| k.metrics());
        let energy = |k: &str| declared.iter().any(|m| m.name == k && m.unit == agents::registry::Unit::Energy);
        if let Some((k, v)) = report.metrics.iter().find(|(k, v)| energy(k) && (v.is_nan() || *v < 0.0)) {
            return Err(format!("{who}: energy `{k}` is {v}"));
        }
        if let Some(m) = report.metered.iter().find(|m| m.energy.is_nan() || m.energy < 0.0) {
            return Err(format!("{who}: job {} metered {} kWh", m.job, m.energy));
        }
        let times: Vec<f64> = report.transfers.iter().map(|t| t.at.secs()).collect();
        if let Some(w) = times.windows(2).find(|w| w[1] < w[0]) {
            return Err(format!("{who}: booked a transfer at t={} after one at t={}", w[1], w[0]));
        }
        if let Some(t) = times.last().filter(|&&t| t > end) {
            return Err(format!("{who}: booked a transfer at t={t} after the run's end {end}"));
        }
        for job in &report.jobs {
            let ended = matches!(job.outcome, JobOutcome::Completed | JobOutcome::Rejected | JobOutcome::Dropped);
            let span = match (job.start, job.end) {
                (_, Some(e)) if e > end => Some(format!("ends at t={e}, after the run's end {end}")),
                (Some(s), Some(e)) if e < s => Some(format!("ends at t={e} before it starts at t={s}")),
                (_, None) if ended => Some(format!("is {} without an end", job.outcome.as_str())),
                _ => None,
            };
            if let Some(what) = span {
                return Err(format!("{who}: job {} {what}", job.id));
            }
            if job.outcome == JobOutcome::Completed {
                let billed = job.ran_as().iter().filter_map(|&id| billed.get(&(owner, id))).fold(0.0, |a, b| a + b);
                // The same amounts, summed in another order, may differ in the last bits.
                if (billed - job.cost).abs() > 1e-9 * billed.abs().max(1.0) {
                    let what = format!("job {} recorded a cost of {} but the ledger bills {billed}", job.id, job.cost);
                    return Err(format!("{who}: {what}"));
                }
            }
        }
    }
    // A kind some of whose agents report a capacity and some not is not wholly covered.
    coverage.checked.retain(|k| !coverage.not_checked.contains(k));
    Ok(coverage)
}
