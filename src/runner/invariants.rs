//! Invariants checked at the end of every run, always (they cost little next to the run). A broken one fails the
//! run with the agent, the simulated time and the amounts; it never passes silently.
//!
//! - **Money** (`agents::ledger::check`): every amount finite and non-negative, every transfer booked by one of
//!   its parties (or by an agent of a clearing kind, [`AgentKind::clears`]), no balance below zero unless the
//!   account's kind allows credit ([`AgentKind::credit`]: users are billed after use); and every completed job's
//!   recorded cost is what the ledger holds for it and its parts.
//! - **Jobs end once**: no job is reported twice, and an ended job has its end (no earlier than its start).
//! - **No PE over-subscribed**: an agent's busy PEs stay within [0, its PEs] at all times.
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

/// Checks a finished run that ended at `end`; `ledger` is the merged books in time order.
pub fn check(plan: &Plan, names: &[String], reports: &[Report], ledger: &[Transfer], end: f64) -> Result<(), String> {
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
        let pes = report.metrics.iter().find(|(k, _)| *k == "pes").map_or(0.0, |m| m.1);
        if let Some((_, busy)) = report.series.iter().find(|(k, _)| *k == "busy_pes")
            && let Some(&(t, v)) = busy.points().iter().find(|p| p.1 > pes || p.1 < 0.0)
        {
            return Err(format!("{who} at t={t}: {v} busy PEs of {pes}"));
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
    Ok(())
}
