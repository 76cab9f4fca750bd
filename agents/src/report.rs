//! What agents report at the end of a run: one record per job they own, named metrics, and step-function series.

use serde::Serialize;

use crate::ledger::Transfer;
use crate::protocol::JobId;
use gridmarket_kernel::{AgentId, SimTime};

/// How a job ended (or where it stood when the run ended). Every job has exactly one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JobOutcome {
    /// Ran to completion.
    Completed,
    /// Refused by the provider or gateway (too wide, infeasible).
    Rejected,
    /// Given up by its owner (deadline passed, no feasible provider).
    Dropped,
    /// Running when the run ended.
    Running,
    /// Submitted or waiting for submission when the run ended.
    Pending,
}

impl JobOutcome {
    /// The name written in outputs.
    pub fn as_str(self) -> &'static str {
        match self {
            JobOutcome::Completed => "completed",
            JobOutcome::Rejected => "rejected",
            JobOutcome::Dropped => "dropped",
            JobOutcome::Running => "running",
            JobOutcome::Pending => "pending",
        }
    }
}

/// One job's life, as its owner saw it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JobRecord {
    /// Run-wide job id.
    pub id: JobId,
    /// Submission time \[s\].
    pub submit: f64,
    /// Start of execution \[s\].
    pub start: Option<f64>,
    /// End of execution \[s\].
    pub end: Option<f64>,
    /// The provider that ran (or was running) it.
    pub site: Option<AgentId>,
    /// PEs used.
    pub pes: u32,
    /// Runtime on a reference PE \[s\].
    pub runtime: f64,
    /// Deadline \[s\], if any.
    pub deadline: Option<f64>,
    /// Budget [G$], if any (the initial valuation a double-auction-inspired meta-broker reads).
    pub budget: Option<f64>,
    /// Lease type (Amini Salehi 2012), if any.
    pub lease: Option<crate::protocol::LeaseType>,
    /// Priority class, 0 the highest.
    pub priority: u8,
    /// Outcome.
    pub outcome: JobOutcome,
    /// What the owner was billed [G$]: the sum of the ledger's transfers for the job and its parts.
    pub cost: f64,
    /// Why it was rejected or dropped.
    pub reason: Option<String>,
    /// The ids its parts ran under, when a meta-broker split it over sites (the job's own id is the first part).
    pub parts: Vec<JobId>,
}

impl JobRecord {
    /// The ids it ran under: its parts and its own (the first part when a meta-broker split it).
    pub fn ran_as(&self) -> Vec<JobId> {
        let mut ids = self.parts.clone();
        if !ids.contains(&self.id) {
            ids.push(self.id);
        }
        ids
    }
}

/// A piecewise-constant quantity: `(t, v)` means the value is `v` from `t` until the next point.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Series {
    points: Vec<(f64, f64)>,
}

impl Series {
    /// Records that the value becomes `v` at `t` (times must not decrease).
    pub fn set(&mut self, t: SimTime, v: f64) {
        let t = t.secs();
        match self.points.last_mut() {
            Some(last) if last.0 == t => last.1 = v,
            Some(last) if last.1 == v => {}
            _ => self.points.push((t, v)),
        }
    }

    /// The change points.
    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    /// The value at `t` (0 before the first point).
    pub fn at(&self, t: f64) -> f64 {
        let i = self.points.partition_point(|p| p.0 <= t);
        if i == 0 { 0.0 } else { self.points[i - 1].1 }
    }

    /// The integral of the value over `[from, until)`, from the points within (a binary search, then those).
    pub fn integral_over(&self, from: f64, until: f64) -> f64 {
        if until <= from {
            return 0.0;
        }
        let first = self.points.partition_point(|p| p.0 <= from);
        let mut sum = 0.0;
        let (mut t, mut v) = (from, self.at(from));
        for &(next, value) in self.points[first..].iter().take_while(|p| p.0 < until) {
            sum += v * (next - t);
            (t, v) = (next, value);
        }
        sum + v * (until - t)
    }

    /// The integral of the value over `[0, until)`.
    pub fn integral(&self, until: f64) -> f64 {
        let mut sum = 0.0;
        for (i, &(t, v)) in self.points.iter().enumerate() {
            if t >= until {
                break;
            }
            let next = self.points.get(i + 1).map_or(until, |p| p.0.min(until));
            sum += v * (next - t);
        }
        sum
    }
}

/// Everything one agent reports; the runner prefixes names with the agent's name.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// The transfers of money it booked, in booking order.
    pub transfers: Vec<Transfer>,
    /// Rules of its own it found broken (an always-on self-check), each with the simulated time: a run whose
    /// agent reports one fails.
    pub violations: Vec<(f64, String)>,
    /// Jobs this agent owns.
    pub jobs: Vec<JobRecord>,
    /// Named metrics (`utilisation`, `busy_pe_seconds`...).
    pub metrics: Vec<(&'static str, f64)>,
    /// Named step-function series (`busy_pes`, `queued`...).
    pub series: Vec<(&'static str, Series)>,
    /// An induced-value market's equilibrium, periods and trades.
    pub market: Option<Box<MarketRecord>>,
    /// What the jobs it ran consumed, for an agent that meters energy.
    pub metered: Vec<Metered>,
    /// The capacity it holds, for the invariant that none is over-subscribed; `None` for an agent that holds none.
    pub capacity: Option<Capacity>,
}

/// What an agent holds: so many units (PEs, CPUs), and the series of `Report::series` that counts those in use,
/// which must stay within [0, units] at all times (the runner's capacity invariant).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Capacity {
    /// The units it has.
    pub units: f64,
    /// The name of its series of units in use.
    pub in_use: &'static str,
    /// What the units are.
    pub holds: Holds,
}

/// What the units of a [`Capacity`] are, and so what the runner makes of them besides the capacity invariant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Holds {
    /// Processing elements running users' jobs (a provider's cluster, a data centre's CPUs): they make the run's
    /// utilisation (per member, group and run), its time series, the PE-weighted response times and the market's
    /// per-site measures.
    Pes {
        /// PE-seconds the PEs were busy without computing: preemption overhead and runs of leases later cancelled
        /// (Amini Salehi 2012, Eq 3.10–3.11), left out of utilisation.
        wasted: f64,
    },
    /// Anything else (the single CPU of a matchmaking resource, a utility's node): held, not counted as PEs.
    Other,
}

/// The PEs an agent runs users' jobs on, as the runner reads them ([`Report::pes`]).
#[derive(Clone, Copy, Debug)]
pub struct Pes<'a> {
    /// How many (drawn for the run, perhaps).
    pub count: f64,
    /// How many were busy, over time.
    pub busy: &'a Series,
    /// PE-seconds busy without computing ([`Holds::Pes`]).
    pub wasted: f64,
}

impl Report {
    /// The value of metric `name`, if this agent reports it.
    pub fn metric(&self, name: &str) -> Option<f64> {
        self.metrics.iter().find(|m| m.0 == name).map(|m| m.1)
    }

    /// Its series called `name`, if it reports one.
    pub fn series_named(&self, name: &str) -> Option<&Series> {
        self.series.iter().find(|(k, _)| *k == name).map(|(_, s)| s)
    }

    /// The PEs it runs users' jobs on, if it holds any ([`Holds::Pes`]).
    pub fn pes(&self) -> Option<Pes<'_>> {
        let c = self.capacity?;
        let Holds::Pes { wasted } = c.holds else { return None };
        Some(Pes { count: c.units, busy: self.series_named(c.in_use)?, wasted })
    }
}

/// The energy a job consumed where it ran and the carbon that energy emitted.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Metered {
    /// The job (or the part of one) that ran.
    pub job: JobId,
    /// Energy with cooling \[kWh\].
    pub energy: f64,
    /// Carbon dioxide emitted \[kg\].
    pub carbon: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: f64) -> SimTime {
        SimTime::new(s).unwrap()
    }

    #[test]
    fn series_is_a_step_function() {
        let mut s = Series::default();
        s.set(t(0.0), 2.0);
        s.set(t(10.0), 2.0); // no change: no point
        s.set(t(10.0), 4.0);
        s.set(t(10.0), 3.0); // same instant: last value wins
        s.set(t(20.0), 0.0);
        assert_eq!(s.points(), &[(0.0, 2.0), (10.0, 3.0), (20.0, 0.0)]);
        assert_eq!(s.at(5.0), 2.0);
        assert_eq!(s.at(10.0), 3.0);
        assert_eq!(s.integral(30.0), 2.0 * 10.0 + 3.0 * 10.0);
        assert_eq!(s.integral(15.0), 2.0 * 10.0 + 3.0 * 5.0);
        assert_eq!(s.integral_over(5.0, 15.0), 2.0 * 5.0 + 3.0 * 5.0);
        assert_eq!(s.integral_over(12.0, 40.0), 3.0 * 8.0);
        assert_eq!(s.integral_over(15.0, 15.0), 0.0);
        for (a, b) in [(0.0, 30.0), (3.0, 27.0), (10.0, 20.0)] {
            assert_eq!(s.integral_over(a, b), s.integral(b) - s.integral(a));
        }
    }
}

/// One unit traded.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TradeRecord {
    /// When \[s\].
    pub t: f64,
    /// The period, from 0.
    pub period: u32,
    /// The price.
    pub price: f64,
    /// The buyer, numbered from 0 in the order listed.
    pub buyer: u32,
    /// The seller, likewise.
    pub seller: u32,
    /// The buyer's valuation of the unit.
    pub value: f64,
    /// The seller's cost of the unit.
    pub cost: f64,
}

/// What one period gave.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PeriodRecord {
    /// The period, from 0.
    pub period: u32,
    /// When it began and ended \[s\].
    pub start: f64,
    /// When it ended \[s\].
    pub end: f64,
    /// Units traded.
    pub trades: u32,
    /// Realised surplus Σ (v − c) over the trades over the equilibrium surplus.
    pub efficiency: f64,
    /// Mean transaction price.
    pub mean_price: f64,
    /// Smith's α of its trades [%].
    pub alpha: f64,
    /// Price volatility of its trades.
    pub volatility: f64,
    /// Buyers' surplus Σ (v − p).
    pub buyer_surplus: f64,
    /// Sellers' surplus Σ (p − c).
    pub seller_surplus: f64,
    /// Trades of a unit that does not trade at the equilibrium (a valuation below the Q-th highest, or a cost above
    /// the Q-th lowest).
    pub extramarginal: u32,
}

/// Everything an induced-value market (`market`) reports beyond its metrics: the equilibrium, every period, every trade.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MarketRecord {
    /// The competitive equilibrium of a period's units.
    pub equilibrium: Equilibrium,
    /// Each period, in order.
    pub periods: Vec<PeriodRecord>,
    /// Each trade, in order.
    pub trades: Vec<TradeRecord>,
}

/// The competitive equilibrium of unit valuations and costs.
///
/// With valuations ranked v₁ ≥ v₂ ≥ … and costs c₁ ≤ c₂ ≤ …, the quantity Q is the largest q with v_q ≥ c_q; every
/// price in [max(c_Q, v_{Q+1}), min(v_Q, c_{Q+1})] clears the market (demand and supply are both Q there; a missing
/// v_{Q+1} or c_{Q+1} leaves that end open: 0 below, +∞ above). The most surplus any allocation can give is Σ_{q ≤ Q}
/// (v_q − c_q).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Equilibrium {
    /// Q, the units traded.
    pub quantity: u32,
    /// The lowest equilibrium price (NaN when Q = 0).
    pub low: f64,
    /// The highest (NaN when Q = 0).
    pub high: f64,
    /// The midpoint P* of the band, the price Smith's α measures from (the finite end if one end is open).
    pub price: f64,
    /// The most total surplus, the denominator of allocative efficiency.
    pub surplus: f64,
    /// v_Q, the lowest valuation that trades at the equilibrium (+∞ when Q = 0): a unit valued below it is
    /// extra-marginal.
    pub marginal_value: f64,
    /// c_Q, the highest cost that trades at the equilibrium (−∞ when Q = 0): a unit costing more is extra-marginal.
    pub marginal_cost: f64,
}
