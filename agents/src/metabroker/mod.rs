//! The meta-broker's scheduling algorithms: what it runs at the end of each scheduling interval (SI).
//!
//! Source: S. K. Garg, *Meta Scheduling for Market-Oriented Grid and Utility Computing*, PhD thesis, University of
//! Melbourne, 2010, chapter 4 ("minimise combined user spending"), with the experimental setup of §4.3 and the
//! defaults we chose where it gives none. The meta-broker collects the offers of the sites and the requests of the
//! users during an interval; at its end it computes one joint schedule that minimises the users' combined spending
//! (4.1) under capacity (4.2), budget (4.6) and deadline (4.7) constraints, and rolls over to the next interval
//! what it cannot place (the dummy provider).
//!
//! Policies ([`SchedulingPolicy`]), all pure functions of a [`Snapshot`] and a seed:
//! - Greedy ([`mod@greedy`]): first come, first served, each application on its cheapest feasible site (by cost, or
//!   by price as chapter 3 words it: [`GreedyRank`]).
//! - LP ([`mod@lp`]): the LP/IP for MGN (multi-grid-node, bag-of-tasks) applications, §4.2.1, solved exactly as a
//!   transportation problem; applications may be split across sites.
//! - MMC = Modified MinCost ([`mincost`], Alg. 4.1): the MGN relaxation turned into a feasible schedule for SGN
//!   (single-grid-node, rigid parallel) applications, each whole on one site.
//! - GA ([`mod@ga`]): the genetic algorithm of §4.2.2 from random chromosomes; LPGA = linear-programming-based GA
//!   (Alg. 4.2), the GA seeded with MMC's schedule; HGA = heuristic GA, the GA seeded with Greedy's.
//!
//! Every policy returns a [`Schedule`] with one [`Assignment`] per application; nothing here panics on odd input:
//! empty snapshots, requests no site can take and invalid values all end on the dummy provider.
//!
//! Each is a [`Policy`] of the [`Slots`] family ([`mod@policy`]), as is a registered [`MetaPolicy`], which places one
//! application at a time ([`OneAtATime`]). Chapter 7's double-auction-inspired meta-scheduling (DAM) and its baselines
//! match applications to the providers' queues instead of placing them on slots; they live in [`mod@dam`], with
//! their own actor. Chapter 5's time/cost trade-off heuristics (MinCTT, MaxCTT, SuffCTT and greedy on φ) place
//! rigid applications on the providers' advance-reservation slots; they live in [`mod@tradeoff`], with their own
//! actor.
//!
//! Every meta-broker actor runs the same round routine (the private `round` module): providers register into a
//! catalogue and users into the market, each interval with work waiting asks every registered provider for its
//! offer, the policy runs once every answer is in, and each placement is held under a request number until its
//! provider answers.

pub mod agent;
pub mod dam;
pub mod energy;
pub mod ga;
pub mod greedy;
pub mod kind;
pub mod lp;
pub mod mincost;
pub mod model;
pub mod policy;
mod round;
pub mod tradeoff;
mod transport;

#[cfg(test)]
pub(crate) mod tests;

use serde::{Deserialize, Serialize};

pub use ga::{GaParams, genetic};
pub use greedy::{GreedyRank, greedy, greedy_by};
pub use lp::{MgnSolver, mgn_relaxation, mgn_transportation, sgn_ip};
pub use mincost::modified_min_cost;
pub use model::{App, AppId, Assignment, Part, Problem, QosIndex, Schedule, Site, SiteId, SiteOption, Snapshot};
pub use policy::{Candidate, Family, Footprint, MetaPolicy, OneAtATime, Policy, SlotView, Slots, place_each};

/// The meta-broker's scheduling policy (thesis chapter 4 and the chapter 3 baseline).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SchedulingPolicy {
    /// Greedy: first come, first served, each application whole on the cheapest site that fits it in time and
    /// budget.
    Greedy,
    /// LP: the MGN (multi-grid-node, bag-of-tasks) LP/IP of §4.2.1; an application's tasks may be split across
    /// sites, and tasks no site can take are rolled over.
    Lp,
    /// MMC (Modified MinCost, Alg. 4.1): the MGN relaxation turned into a feasible SGN (single-site) schedule.
    Mmc,
    /// GA: the genetic algorithm of §4.2.2 from random feasible chromosomes.
    Ga,
    /// LPGA (linear-programming-based genetic algorithm, Alg. 4.2): the GA seeded with MMC's schedule.
    Lpga,
    /// HGA (heuristic genetic algorithm): the GA seeded with Greedy's schedule.
    Hga,
}

impl SchedulingPolicy {
    /// Every policy, in the order `gridmarket list` gives them.
    pub const ALL: [SchedulingPolicy; 6] = [
        SchedulingPolicy::Greedy,
        SchedulingPolicy::Mmc,
        SchedulingPolicy::Ga,
        SchedulingPolicy::Lpga,
        SchedulingPolicy::Hga,
        SchedulingPolicy::Lp,
    ];
}

/// Tunables shared by the policies; the defaults follow the thesis where it gives them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// QoS index ranking applications for the dummy penalty: (4.11) by default.
    pub qos: QosIndex,
    /// Solver of the MGN relaxation (LP, MMC, LPGA).
    pub mgn_solver: MgnSolver,
    /// GA parameters (GA, LPGA, HGA).
    pub ga: GaParams,
    /// What the greedy policy (and HGA's seed) ranks sites by: cost by default.
    pub greedy: GreedyRank,
}

/// Runs `policy` on `snapshot` with the default [`Params`]; deterministic for a given `rng_seed`.
pub fn schedule(policy: SchedulingPolicy, snapshot: &Snapshot, rng_seed: u64) -> Schedule {
    schedule_with(policy, snapshot, rng_seed, &Params::default())
}

/// Runs `policy` on `snapshot` with `params`; deterministic for a given `rng_seed` (only the GA policies use it).
///
/// Should the configured LP solver fail on the MGN relaxation, the exact transportation solver stands in (both
/// solve the same problem) and the schedule says so in [`Schedule::fallback`].
pub fn schedule_with(policy: SchedulingPolicy, snapshot: &Snapshot, rng_seed: u64, params: &Params) -> Schedule {
    let problem = Problem::new(snapshot, params.qos);
    let mut fallback = None;
    let mut relaxation = || {
        mgn_relaxation(&problem, params.mgn_solver).unwrap_or_else(|e| {
            fallback = Some(format!("{:?} failed ({e}); the transportation solver stood in", params.mgn_solver));
            mgn_transportation(&problem)
        })
    };
    let mut schedule = match policy {
        SchedulingPolicy::Greedy => greedy_by(&problem, params.greedy),
        SchedulingPolicy::Lp => relaxation(),
        SchedulingPolicy::Mmc => modified_min_cost(&problem, &relaxation()),
        SchedulingPolicy::Ga => genetic(&problem, None, &params.ga, rng_seed),
        SchedulingPolicy::Lpga => {
            let mmc = modified_min_cost(&problem, &relaxation());
            genetic(&problem, Some(&mmc), &params.ga, rng_seed)
        }
        SchedulingPolicy::Hga => genetic(&problem, Some(&greedy_by(&problem, params.greedy)), &params.ga, rng_seed),
    };
    schedule.fallback = fallback;
    schedule
}
