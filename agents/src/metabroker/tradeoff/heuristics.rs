//! The time/cost trade-off heuristics of Garg (2010) §5.3 as pure functions: the trade-off metric φ (5.1) and
//! MinCTT, MaxCTT, SuffCTT and greedy over the sites' free-capacity profiles.
//!
//! CTT = cost–time trade-off. MinCTT (Min-Min CTT, Alg 5.1) allocates first the application whose best φ is the
//! lowest, MaxCTT (Max-Min CTT) the one whose best φ is the highest, SuffCTT (Sufferage CTT, Alg 5.2) the one that
//! would lose most, its second-best φ minus its best (infinite with a single feasible site); greedy takes the
//! applications first come, first served, each on its minimum-φ slot.
//!
//! A rigid application needs all its CPUs at once on one site. φ does not depend on the slot except through the
//! response time α = finish − arrival, so on each site the best slot is the earliest one that fits; after an
//! allocation only the allocating site changed, and only the applications whose best window on it overlaps the
//! window taken need a new search there (capacity only falls, so an earlier start cannot appear): that is the
//! incremental update that keeps a round at O(n² + n · m · slots) instead of a full rescan per allocation.
//!
//! Ties (the thesis gives no rule): the earlier arrival first, then the lower index; on a site, the lower resource
//! index.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::metabroker::{App, Candidate, Family, MetaPolicy, OneAtATime, Policy};

/// The trade-off heuristic of a round (Garg 2010 §5.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Heuristic {
    /// MinCTT (Min-Min cost–time trade-off, Alg 5.1): the lowest best φ first.
    MinCtt,
    /// MaxCTT (Max-Min cost–time trade-off): the highest best φ first.
    MaxCtt,
    /// SuffCTT (Sufferage cost–time trade-off, Alg 5.2): the largest sufferage first.
    SuffCtt,
    /// Greedy: first come, first served, each on its minimum-φ slot ("greedy-ctt", beside chapter 4's cheapest-site
    /// greedy).
    #[serde(rename = "greedy-ctt")]
    Greedy,
}

impl Heuristic {
    /// Every heuristic, in the order `gridmarket list` gives them.
    pub const ALL: [Heuristic; 4] = [Heuristic::MinCtt, Heuristic::MaxCtt, Heuristic::SuffCtt, Heuristic::Greedy];
}

impl fmt::Display for Heuristic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Heuristic::MinCtt => "min-ctt",
            Heuristic::MaxCtt => "max-ctt",
            Heuristic::SuffCtt => "suff-ctt",
            Heuristic::Greedy => "greedy-ctt",
        })
    }
}

/// A piece of a site's free-capacity profile: `free` CPUs throughout `[start, end)` \[s\].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    /// Start \[s\].
    pub start: f64,
    /// End \[s\].
    pub end: f64,
    /// CPUs free throughout.
    pub free: u32,
}

/// A site as a round sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Resource {
    /// CPUs of the site.
    pub cpus: u32,
    /// Price c_j [G$ per CPU-second].
    pub price: f64,
    /// Its free capacity over the horizon, in time order, not overlapping (a gap is no free CPU).
    pub free: Vec<Segment>,
    /// The data-transfer cost (DTC) of an application here as a multiple of its average execution cost over the
    /// sites: the initial share (1/10 in Garg 2010 §5.4) over this interval's bandwidth factor; 0 without DTC.
    pub transfer: f64,
}

/// An application waiting for a round.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// Arrival arr(i) \[s\].
    pub arrival: f64,
    /// CPUs p_i, all at once on one site.
    pub cpus: u32,
    /// ETC(i, j), its time to compute on each site \[s\], in the order of the resources.
    pub etc: Vec<f64>,
    /// Trade-off factor δ in [0, 1]: the weight of cost against time.
    pub delta: f64,
}

/// Input a round refuses, with the reason.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BadInput {
    /// Occurs when a trade-off factor is outside [0, 1] (or not a number).
    #[error("application {app}: the trade-off factor δ = {delta} is outside [0, 1]")]
    Delta {
        /// Index of the application.
        app: usize,
        /// The factor given.
        delta: f64,
    },
    /// Occurs when an ETC is zero, negative or not finite.
    #[error("application {app}: ETC on site {site} is {etc}, expected a positive finite time")]
    Etc {
        /// Index of the application.
        app: usize,
        /// Index of the site.
        site: usize,
        /// The ETC given.
        etc: f64,
    },
    /// Occurs when an application's ETC row does not have one entry per site.
    #[error("application {app}: {found} ETC values for {sites} sites")]
    EtcRow {
        /// Index of the application.
        app: usize,
        /// Entries given.
        found: usize,
        /// Sites.
        sites: usize,
    },
    /// Occurs when a site's free segments are negative, empty, unordered or overlapping, or offer more CPUs than it
    /// has, or its price is negative.
    #[error("site {site}: {why}")]
    Slots {
        /// Index of the site.
        site: usize,
        /// What is wrong.
        why: String,
    },
}

/// An application allocated: where, when, at what cost.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Placement {
    /// Index of the application in the request list.
    pub app: usize,
    /// Index of the site.
    pub site: usize,
    /// Start of its slot \[s\].
    pub start: f64,
    /// Finish f(i, j) = start + ETC(i, j) \[s\].
    pub finish: f64,
    /// Cost c(i, j) = c_j · p_i · ETC(i, j) + DTC(i, j) [G$].
    pub cost: f64,
    /// Its data-transfer cost DTC(i, j), part of `cost` [G$].
    pub transfer: f64,
    /// Its trade-off metric φ.
    pub phi: f64,
}

/// Why an application was not allocated this round.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Unplaced {
    /// It needs more CPUs than any site has: it can never run (refused).
    TooWide {
        /// The largest site's CPUs.
        widest: u32,
    },
    /// No site has a free window for it within the horizon: it rolls over to the next round.
    NoSlot,
}

impl fmt::Display for Unplaced {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unplaced::TooWide { widest } => write!(f, "needs more CPUs than any site has ({widest})"),
            Unplaced::NoSlot => f.write_str("no site has a free window for it within the horizon"),
        }
    }
}

/// A round's outcome: the placements in the order made, and what was not placed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    /// Allocations, in the order the heuristic made them.
    pub placements: Vec<Placement>,
    /// Applications not allocated, with the reason, by index.
    pub unplaced: Vec<(usize, Unplaced)>,
}

/// The trade-off metric φ(i, j, t) = δ · c(i, j) / γ_i + (1 − δ) · α(i, j) / β_i (5.1), with γ_i the average cost
/// and β_i the average ETC of the application over the sites.
pub fn phi(delta: f64, cost: f64, avg_cost: f64, response: f64, avg_time: f64) -> f64 {
    let c = if avg_cost > 0.0 { cost / avg_cost } else { 1.0 };
    delta * c + (1.0 - delta) * response / avg_time
}

/// A site's free profile, updated as the round allocates.
#[derive(Clone, Debug)]
struct Profile {
    segments: Vec<Segment>,
}

impl Profile {
    /// The earliest start from `from` of a window of `cpus` CPUs for `time` seconds.
    fn earliest(&self, cpus: u32, time: f64, from: f64) -> Option<f64> {
        let mut run: Option<f64> = None;
        let mut prev_end = f64::NEG_INFINITY;
        for s in &self.segments {
            if s.end <= from {
                continue;
            }
            if s.free < cpus {
                run = None;
            } else {
                let start = s.start.max(from);
                let r = match run {
                    Some(r) if s.start <= prev_end => r,
                    _ => start,
                };
                run = Some(r);
                if s.end - r >= time {
                    return Some(r);
                }
            }
            prev_end = s.end;
        }
        None
    }

    /// The CPUs free at `at` (none in a gap).
    fn free_at(&self, at: f64) -> u32 {
        self.segments.iter().find(|s| s.start <= at && at < s.end).map_or(0, |s| s.free)
    }

    /// Takes `cpus` CPUs over `[start, end)`, which lies within segments with that many free.
    fn take(&mut self, cpus: u32, start: f64, end: f64) {
        let mut out = Vec::with_capacity(self.segments.len() + 2);
        for s in &self.segments {
            if s.end <= start || s.start >= end {
                out.push(*s);
                continue;
            }
            if s.start < start {
                out.push(Segment { start: s.start, end: start, free: s.free });
            }
            let (a, b) = (s.start.max(start), s.end.min(end));
            out.push(Segment { start: a, end: b, free: s.free - cpus.min(s.free) });
            if s.end > end {
                out.push(Segment { start: end, end: s.end, free: s.free });
            }
        }
        self.segments = out;
    }
}

/// The φ-ordered key of an option: lower φ first, then (through the caller's scan order) the lower index.
fn less(a: f64, b: f64) -> bool {
    a.total_cmp(&b) == Ordering::Less
}

/// Checks a round's input; see [`BadInput`].
pub fn validate(requests: &[Request], resources: &[Resource]) -> Result<(), BadInput> {
    for (site, r) in resources.iter().enumerate() {
        let bad = |why: String| Err(BadInput::Slots { site, why });
        if !(r.price >= 0.0 && r.price.is_finite()) {
            return bad(format!("price {} is not a non-negative number", r.price));
        }
        if !(r.transfer >= 0.0 && r.transfer.is_finite()) {
            return bad(format!("data-transfer factor {} is not a non-negative number", r.transfer));
        }
        let mut prev_end = f64::NEG_INFINITY;
        for s in &r.free {
            if !(s.start >= 0.0 && s.start < s.end) {
                return bad(format!("slot [{}, {}) is negative or empty", s.start, s.end));
            }
            if s.start < prev_end {
                return bad(format!(
                    "slot [{}, {}) overlaps the slot before it, which ends at {prev_end}",
                    s.start, s.end
                ));
            }
            if s.free > r.cpus {
                return bad(format!("slot [{}, {}) offers {} CPUs of {}", s.start, s.end, s.free, r.cpus));
            }
            prev_end = s.end;
        }
    }
    for (app, q) in requests.iter().enumerate() {
        if !(0.0..=1.0).contains(&q.delta) {
            return Err(BadInput::Delta { app, delta: q.delta });
        }
        if q.etc.len() != resources.len() {
            return Err(BadInput::EtcRow { app, found: q.etc.len(), sites: resources.len() });
        }
        if let Some((site, &etc)) = q.etc.iter().enumerate().find(|(_, e)| !(**e > 0.0 && e.is_finite())) {
            return Err(BadInput::Etc { app, site, etc });
        }
    }
    Ok(())
}

/// What a round keeps per application: its averages and its best option on every site.
struct Row {
    avg_cost: f64,
    avg_time: f64,
    /// Per site: the earliest start and its φ, if the site can take it.
    best: Vec<Option<(f64, f64)>>,
    /// The best φ, its site, and the second-best φ over the other sites.
    first: Option<(f64, usize)>,
    second: Option<f64>,
}

impl Row {
    fn summarise(&mut self) {
        self.first = None;
        self.second = None;
        for (j, o) in self.best.iter().enumerate() {
            let Some((_, phi)) = *o else { continue };
            match self.first {
                Some((f, _)) if !less(phi, f) => {
                    if self.second.is_none_or(|s| less(phi, s)) {
                        self.second = Some(phi);
                    }
                }
                _ => {
                    self.second = self.first.map(|(f, _)| f);
                    self.first = Some((phi, j));
                }
            }
        }
    }

    /// Sufferage: the second-best φ minus the best; infinite with a single feasible site.
    fn sufferage(&self) -> f64 {
        match (self.first, self.second) {
            (Some((f, _)), Some(s)) => s - f,
            _ => f64::INFINITY,
        }
    }
}

/// The costs of a request on every site: (c(i, j) with its DTC, the DTC). The DTC enters the cost term of φ, as
/// Garg (2010) §5.4 adds it to the execution cost; γ_i is then the average of these totals.
fn costs(q: &Request, resources: &[Resource]) -> Vec<(f64, f64)> {
    let exec: Vec<f64> = resources.iter().zip(&q.etc).map(|(r, etc)| r.price * f64::from(q.cpus) * etc).collect();
    let avg = exec.iter().sum::<f64>() / exec.len().max(1) as f64;
    exec.iter()
        .zip(resources)
        .map(|(c, r)| {
            let dtc = r.transfer * avg;
            (c + dtc, dtc)
        })
        .collect()
}

/// The application indices in arrival order (ties: the lower index), split into those wider than every site
/// (refused, in `outcome`) and the others.
fn arrival_order(requests: &[Request], resources: &[Resource], outcome: &mut Outcome) -> Vec<usize> {
    let widest = resources.iter().map(|r| r.cpus).max().unwrap_or(0);
    let mut order: Vec<usize> = (0..requests.len()).collect();
    order.sort_by(|&a, &b| requests[a].arrival.total_cmp(&requests[b].arrival).then(a.cmp(&b)));
    let (wide, order): (Vec<usize>, Vec<usize>) = order.into_iter().partition(|&i| requests[i].cpus > widest);
    outcome.unplaced.extend(wide.into_iter().map(|i| (i, Unplaced::TooWide { widest })));
    order
}

/// Chapter 5's family: windows on the sites' free profiles, traded off by φ.
#[derive(Debug)]
pub struct Profiles;

/// Chapter 5's round at time `now`: the applications waiting (`apps` as a registered policy sees them, `requests` as
/// the heuristics do, in one order) and the sites' free profiles (`resources`, and their CPU `speeds` in that order).
#[derive(Clone, Copy, Debug)]
pub struct ProfileView<'r> {
    /// The applications as a registered policy sees them.
    pub apps: &'r [App],
    /// The applications with their ETC on every site and their δ.
    pub requests: &'r [Request],
    /// The sites' free profiles, prices and DTCs.
    pub resources: &'r [Resource],
    /// The sites' CPU speeds.
    pub speeds: &'r [f64],
    /// The end of the round; no window starts before it \[s\].
    pub now: f64,
}

impl Family for Profiles {
    type View<'r> = ProfileView<'r>;
    type Placements = Result<Outcome, BadInput>;
}

impl Policy<Profiles> for Heuristic {
    fn place(&self, view: ProfileView<'_>) -> Result<Outcome, BadInput> {
        allocate(*self, view.requests, view.resources, view.now)
    }
}

impl Policy<Profiles> for OneAtATime {
    fn place(&self, view: ProfileView<'_>) -> Result<Outcome, BadInput> {
        allocate_each(self.0, view.apps, view.requests, view.resources, view.speeds, view.now)
    }
}

impl From<Heuristic> for Arc<dyn Policy<Profiles>> {
    fn from(heuristic: Heuristic) -> Arc<dyn Policy<Profiles>> {
        Arc::new(heuristic)
    }
}

/// Allocates `requests` on `resources` by a registered `policy` at the end of a round at time `now`: first come, first
/// served, each application on the site the policy chooses among those with a window for it, or rolled over when
/// there is none or the policy declines. A site's [`Candidate`] is the application's earliest window there, with its
/// cost c(i, j) (its DTC included); candidates come cheapest first, ties by the lower site index. `apps` are the
/// applications as the policy sees them and `speeds` the sites' CPU speeds, in the orders of `requests` and
/// `resources`.
pub fn allocate_each(
    policy: &dyn MetaPolicy,
    apps: &[App],
    requests: &[Request],
    resources: &[Resource],
    speeds: &[f64],
    now: f64,
) -> Result<Outcome, BadInput> {
    validate(requests, resources)?;
    let mut profiles: Vec<Profile> = resources.iter().map(|r| Profile { segments: r.free.clone() }).collect();
    let mut outcome = Outcome::default();
    let m = resources.len() as f64;
    let mut candidates = Vec::with_capacity(resources.len());
    for i in arrival_order(requests, resources, &mut outcome) {
        let q = &requests[i];
        let costs = costs(q, resources);
        candidates.clear();
        for (j, r) in resources.iter().enumerate() {
            let Some(start) = profiles[j].earliest(q.cpus, q.etc[j], now.max(0.0)) else { continue };
            let (price, speed, free) = (r.price, speeds[j], profiles[j].free_at(start));
            let (finish, cost) = (start + q.etc[j], costs[j].0);
            candidates.push(Candidate { site: j, free, price, speed, start, finish, cost, footprint: None });
        }
        candidates.sort_by(|a, b| a.cost.total_cmp(&b.cost).then(a.site.cmp(&b.site)));
        let Some(&c) = (!candidates.is_empty()).then(|| policy.choose(&apps[i], &candidates)).flatten() else {
            outcome.unplaced.push((i, Unplaced::NoSlot));
            continue;
        };
        let avg_cost = costs.iter().map(|c| c.0).sum::<f64>() / m;
        let phi = phi(q.delta, c.cost, avg_cost, c.finish - q.arrival, q.etc.iter().sum::<f64>() / m);
        profiles[c.site].take(q.cpus, c.start, c.finish);
        let transfer = costs[c.site].1;
        outcome.placements.push(Placement {
            app: i,
            site: c.site,
            start: c.start,
            finish: c.finish,
            cost: c.cost,
            transfer,
            phi,
        });
    }
    Ok(outcome)
}

/// Allocates `requests` on `resources` by `heuristic` at the end of a round at time `now`, no slot starting before
/// it. Every application is placed at most once; the others are returned with the reason.
pub fn allocate(
    heuristic: Heuristic,
    requests: &[Request],
    resources: &[Resource],
    now: f64,
) -> Result<Outcome, BadInput> {
    validate(requests, resources)?;
    let mut profiles: Vec<Profile> = resources.iter().map(|r| Profile { segments: r.free.clone() }).collect();
    let mut outcome = Outcome::default();
    let order = arrival_order(requests, resources, &mut outcome);
    let cost_rows: Vec<Vec<(f64, f64)>> = requests.iter().map(|q| costs(q, resources)).collect();
    let m = resources.len() as f64;
    let option = |i: usize, j: usize, profiles: &[Profile], avg_cost: f64, avg_time: f64| {
        let q = &requests[i];
        let etc = q.etc[j];
        let start = profiles[j].earliest(q.cpus, etc, now.max(0.0))?;
        Some((start, phi(q.delta, cost_rows[i][j].0, avg_cost, start + etc - q.arrival, avg_time)))
    };
    let new_row = |i: usize, profiles: &[Profile]| {
        let avg_cost = cost_rows[i].iter().map(|c| c.0).sum::<f64>() / m;
        let avg_time = requests[i].etc.iter().sum::<f64>() / m;
        let best = (0..resources.len()).map(|j| option(i, j, profiles, avg_cost, avg_time)).collect();
        let mut row = Row { avg_cost, avg_time, best, first: None, second: None };
        row.summarise();
        row
    };
    let place = |i: usize, j: usize, start: f64, phi: f64| {
        let q = &requests[i];
        let (cost, transfer) = cost_rows[i][j];
        Placement { app: i, site: j, start, finish: start + q.etc[j], cost, transfer, phi }
    };
    if heuristic == Heuristic::Greedy {
        for i in order {
            let row = new_row(i, &profiles);
            match row.first {
                Some((phi, j)) => {
                    let (start, _) = row.best[j].expect("the best site has an option");
                    let p = place(i, j, start, phi);
                    profiles[j].take(requests[i].cpus, p.start, p.finish);
                    outcome.placements.push(p);
                }
                None => outcome.unplaced.push((i, Unplaced::NoSlot)),
            }
        }
        return Ok(outcome);
    }
    let mut rows: Vec<(usize, Row)> = order.iter().map(|&i| (i, new_row(i, &profiles))).collect();
    loop {
        // The application to allocate: scanning in arrival order, a strictly better key wins.
        let mut chosen: Option<(usize, f64)> = None;
        for (k, (_, row)) in rows.iter().enumerate() {
            let Some((best, _)) = row.first else { continue };
            let key = match heuristic {
                Heuristic::MinCtt => best,
                Heuristic::MaxCtt => -best,
                Heuristic::SuffCtt => -row.sufferage(),
                Heuristic::Greedy => unreachable!("greedy allocates in arrival order above"),
            };
            if chosen.is_none_or(|(_, c)| less(key, c)) {
                chosen = Some((k, key));
            }
        }
        let Some((k, _)) = chosen else { break };
        // Removing in place keeps the arrival order the tie rule scans in.
        let (i, row) = rows.remove(k);
        let (phi, j) = row.first.expect("chosen rows have an option");
        let (start, _) = row.best[j].expect("the best site has an option");
        let p = place(i, j, start, phi);
        profiles[j].take(requests[i].cpus, p.start, p.finish);
        outcome.placements.push(p);
        // Incremental update: only site j changed, and only windows overlapping the one taken can move.
        for (x, r) in &mut rows {
            let Some((s, _)) = r.best[j] else { continue };
            if s < p.finish && p.start < s + requests[*x].etc[j] {
                r.best[j] = option(*x, j, &profiles, r.avg_cost, r.avg_time);
                r.summarise();
            }
        }
    }
    outcome.unplaced.extend(rows.into_iter().map(|(i, _)| (i, Unplaced::NoSlot)));
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(cpus: u32, price: f64) -> Resource {
        Resource { cpus, price, free: vec![Segment { start: 0.0, end: 1e9, free: cpus }], transfer: 0.0 }
    }

    fn req(arrival: f64, cpus: u32, etc: &[f64], delta: f64) -> Request {
        Request { arrival, cpus, etc: etc.to_vec(), delta }
    }

    #[test]
    fn phi_is_one_at_the_average_cost_and_time_for_any_delta() {
        for delta in [0.0, 0.25, 0.5, 0.75, 1.0] {
            assert!((phi(delta, 30.0, 30.0, 120.0, 120.0) - 1.0).abs() < 1e-12);
        }
        // Off the averages the weights matter: half the cost at δ = 1 is 0.5, twice the time at δ = 0 is 2.
        assert_eq!(phi(1.0, 15.0, 30.0, 240.0, 120.0), 0.5);
        assert_eq!(phi(0.0, 15.0, 30.0, 240.0, 120.0), 2.0);
    }

    /// A 3 × 2 instance worked by hand. Two sites of 4 CPUs, free from 0: site 0 costs 1 G$/CPU·s, site 1 costs 3.
    /// δ = 0.5, all arrive at 0, each needs 4 CPUs (the whole site), so sites serve one application at a time.
    ///
    /// ETC: A = (10, 10), B = (10, 40), C = (40, 10). Costs c = price · 4 · ETC: A (40, 120), B (40, 480),
    /// C (160, 120). Averages γ: A 80, B 260, C 140; β: A 10, B 25, C 25.
    /// First options (both sites free, start 0, α = ETC):
    /// A: site 0 0.5·40/80 + 0.5·10/10 = 1.25; site 1 0.5·120/80 + 0.5 = 1.25 → tie, lower index: site 0, φ 1.25.
    /// B: site 0 0.5·40/260 + 0.5·10/25 = 0.2769; site 1 0.5·480/260 + 0.5·40/25 = 1.7231.
    /// C: site 0 0.5·160/140 + 0.5·40/25 = 1.3714; site 1 0.5·120/140 + 0.5·10/25 = 0.6286.
    /// MinCTT takes B (0.2769) on site 0 [0, 10), then C (0.6286) on site 1 [0, 10); A then starts at 10 on either:
    /// site 0 0.25 + 0.5·20/10 = 1.25, site 1 0.75 + 1 = 1.75 → site 0 [10, 20).
    /// MaxCTT takes A (1.25) on site 0 [0, 10); B on site 0 now starts at 10: 0.0769 + 0.5·20/25 = 0.4769, on site 1
    /// 1.7231 → best 0.4769; C on site 1 stays 0.6286: C is the larger, site 1 [0, 10); then B on site 0 [10, 20).
    /// SuffCTT sufferages: A 0, B 1.4462, C 0.7429 → B on site 0 [0, 10); A: site 0 from 10: 0.25 + 1.0 = 1.25,
    /// site 1 1.25 → sufferage 0; C unchanged 0.7429 → C on site 1 [0, 10); A on site 0 [10, 20) (1.25; site 1 now
    /// 0.75 + 1.0 = 1.75).
    fn hand_instance() -> (Vec<Request>, Vec<Resource>) {
        let requests =
            vec![req(0.0, 4, &[10.0, 10.0], 0.5), req(0.0, 4, &[10.0, 40.0], 0.5), req(0.0, 4, &[40.0, 10.0], 0.5)];
        (requests, vec![open(4, 1.0), open(4, 3.0)])
    }

    fn trace(o: &Outcome) -> Vec<(usize, usize, f64)> {
        o.placements.iter().map(|p| (p.app, p.site, p.start)).collect()
    }

    #[test]
    fn min_max_and_sufferage_choose_as_worked_by_hand() {
        let (requests, resources) = hand_instance();
        let min = allocate(Heuristic::MinCtt, &requests, &resources, 0.0).unwrap();
        assert_eq!(trace(&min), [(1, 0, 0.0), (2, 1, 0.0), (0, 0, 10.0)]);
        assert!((min.placements[0].phi - (20.0 / 260.0 + 0.2)).abs() < 1e-9);
        let max = allocate(Heuristic::MaxCtt, &requests, &resources, 0.0).unwrap();
        assert_eq!(trace(&max), [(0, 0, 0.0), (2, 1, 0.0), (1, 0, 10.0)]);
        let suff = allocate(Heuristic::SuffCtt, &requests, &resources, 0.0).unwrap();
        assert_eq!(trace(&suff), [(1, 0, 0.0), (2, 1, 0.0), (0, 0, 10.0)]);
        // Greedy: A first on site 0 (the tie), then B: site 0 from 10 (0.4769) against site 1 (1.7231), then C on
        // site 1 at 0.
        let greedy = allocate(Heuristic::Greedy, &requests, &resources, 0.0).unwrap();
        assert_eq!(trace(&greedy), [(0, 0, 0.0), (1, 0, 10.0), (2, 1, 0.0)]);
        for o in [&min, &max, &suff, &greedy] {
            assert!(o.unplaced.is_empty());
            let mut apps: Vec<usize> = o.placements.iter().map(|p| p.app).collect();
            apps.sort();
            assert_eq!(apps, [0, 1, 2], "each application exactly once");
        }
    }

    /// One application of 1 CPU, ETC 10 s on both sites, δ = 1 (cost only); prices 1 and 2 G$/CPU·s: execution
    /// costs 10 and 20, average 15. Without DTC site 0 is cheaper. With an initial DTC share of 1/10 and bandwidth
    /// factors 0.05 and 1 (transfer factors 2 and 0.1): DTC 30 and 1.5, totals 40 and 21.5, so site 1 wins.
    #[test]
    fn a_data_transfer_cost_changes_the_choice() {
        let requests = [req(0.0, 1, &[10.0, 10.0], 1.0)];
        let mut resources = vec![open(1, 1.0), open(1, 2.0)];
        let without = allocate(Heuristic::MinCtt, &requests, &resources, 0.0).unwrap();
        assert_eq!((without.placements[0].site, without.placements[0].cost), (0, 10.0));
        assert_eq!(without.placements[0].transfer, 0.0);
        resources[0].transfer = 0.1 / 0.05;
        resources[1].transfer = 0.1 / 1.0;
        for h in Heuristic::ALL {
            let p = allocate(h, &requests, &resources, 0.0).unwrap().placements[0];
            assert_eq!(p.site, 1, "{h}");
            assert!((p.cost - 21.5).abs() < 1e-12 && (p.transfer - 1.5).abs() < 1e-12, "{h}: {p:?}");
            // γ = (40 + 21.5) / 2: φ = 21.5 / 30.75.
            assert!((p.phi - 21.5 / 30.75).abs() < 1e-12, "{h}");
        }
        resources[0].transfer = -1.0;
        let e = allocate(Heuristic::MinCtt, &requests, &resources, 0.0).unwrap_err();
        assert!(e.to_string().contains("data-transfer factor -1"), "{e}");
    }

    /// A registered policy that takes the candidate finishing first, or declines an application of 3 CPUs.
    struct FinishFirst;

    impl MetaPolicy for FinishFirst {
        fn name(&self) -> &'static str {
            "finish-first"
        }
        fn about(&self) -> &'static str {
            "the candidate that finishes first"
        }
        fn choose<'c>(&self, app: &App, candidates: &'c [Candidate]) -> Option<&'c Candidate> {
            (app.cpus != 3).then(|| candidates.iter().min_by(|a, b| a.finish.total_cmp(&b.finish))).flatten()
        }
    }

    fn apps_of(requests: &[Request]) -> Vec<App> {
        let app = |(id, q): (usize, &Request)| App {
            id: id as u64,
            cpus: q.cpus,
            runtime: q.etc[0],
            budget: None,
            deadline: None,
            submit: q.arrival,
        };
        requests.iter().enumerate().map(app).collect()
    }

    /// The hand instance (A, B, C of 4 CPUs: ETC (10, 10), (10, 40), (40, 10)) placed first come, first served by
    /// finish-first: A on site 0 [0, 10) (the tie goes to the cheaper site, listed first); B finishes at 20 on site 0
    /// and at 40 on site 1: site 0 [10, 20); C finishes at 60 on site 0 and at 10 on site 1: site 1 [0, 10). An
    /// application of 3 CPUs is declined (rolled over) and one of 8 is refused as too wide.
    #[test]
    fn a_registered_policy_chooses_among_the_earliest_windows() {
        let (mut requests, resources) = hand_instance();
        requests.push(req(1.0, 3, &[5.0, 5.0], 0.5));
        requests.push(req(1.0, 8, &[5.0, 5.0], 0.5));
        let speeds = [1.0, 1.0];
        let o = allocate_each(&FinishFirst, &apps_of(&requests), &requests, &resources, &speeds, 0.0).unwrap();
        assert_eq!(trace(&o), [(0, 0, 0.0), (1, 0, 10.0), (2, 1, 0.0)]);
        assert_eq!(o.unplaced, [(4, Unplaced::TooWide { widest: 4 }), (3, Unplaced::NoSlot)]);
        // B on site 0 costs 40 (γ 260, β 25) and responds at 20: φ = 0.5 · 40/260 + 0.5 · 20/25.
        let b = o.placements[1];
        assert_eq!((b.cost, b.finish), (40.0, 20.0));
        assert!((b.phi - (20.0 / 260.0 + 0.4)).abs() < 1e-12);
    }

    #[test]
    fn sufferage_is_infinite_with_one_feasible_site() {
        // A fits only site 1 (6 CPUs): its sufferage is infinite and it goes first although its φ is the highest.
        let requests = vec![req(0.0, 2, &[10.0, 10.0], 0.0), req(0.0, 6, &[50.0, 50.0], 0.0)];
        let resources = vec![open(4, 1.0), open(6, 1.0)];
        let o = allocate(Heuristic::SuffCtt, &requests, &resources, 0.0).unwrap();
        assert_eq!(o.placements[0].app, 1);
        assert_eq!(o.placements[0].site, 1);
    }

    #[test]
    fn a_site_taken_pushes_the_next_window_and_the_horizon_rolls_over() {
        // One site of 4 CPUs free over [0, 25): two 4-CPU applications of 10 s fit, the third rolls over; one of
        // 8 CPUs is refused outright.
        let resources = vec![Resource {
            cpus: 4,
            price: 1.0,
            free: vec![Segment { start: 0.0, end: 25.0, free: 4 }],
            transfer: 0.0,
        }];
        let requests = vec![
            req(0.0, 4, &[10.0], 1.0),
            req(1.0, 4, &[10.0], 1.0),
            req(2.0, 4, &[10.0], 1.0),
            req(3.0, 8, &[10.0], 1.0),
        ];
        for h in Heuristic::ALL {
            let o = allocate(h, &requests, &resources, 0.0).unwrap();
            assert_eq!(o.placements.iter().map(|p| p.start).collect::<Vec<_>>(), [0.0, 10.0], "{h}");
            assert!(o.unplaced.contains(&(3, Unplaced::TooWide { widest: 4 })), "{h}");
            assert!(o.unplaced.contains(&(2, Unplaced::NoSlot)), "{h}");
        }
    }

    #[test]
    fn windows_span_contiguous_segments_and_skip_narrow_ones() {
        // Free 4 on [0, 5), 2 on [5, 8), 4 on [8, 20), 4 on [20, 30): a 3-CPU 15 s job starts at 8 and spans two.
        let free = vec![
            Segment { start: 0.0, end: 5.0, free: 4 },
            Segment { start: 5.0, end: 8.0, free: 2 },
            Segment { start: 8.0, end: 20.0, free: 4 },
            Segment { start: 20.0, end: 30.0, free: 4 },
        ];
        let p = Profile { segments: free.clone() };
        assert_eq!(p.earliest(3, 15.0, 0.0), Some(8.0));
        assert_eq!(p.earliest(2, 15.0, 0.0), Some(0.0));
        assert_eq!(p.earliest(3, 25.0, 0.0), None);
        // A gap in the segments is no capacity.
        let gap = Profile {
            segments: vec![Segment { start: 0.0, end: 5.0, free: 4 }, Segment { start: 6.0, end: 20.0, free: 4 }],
        };
        assert_eq!(gap.earliest(1, 6.0, 0.0), Some(6.0));
        let mut q = Profile { segments: free };
        q.take(3, 8.0, 23.0);
        assert_eq!(q.earliest(3, 5.0, 0.0), Some(0.0));
        assert_eq!(q.earliest(3, 6.0, 0.0), Some(23.0));
        assert_eq!(q.earliest(1, 15.0, 8.0), Some(8.0));
    }

    /// The rounds without the incremental update: every option recomputed from the profiles before each choice.
    fn rescanning(h: Heuristic, requests: &[Request], resources: &[Resource]) -> Vec<(usize, usize, f64)> {
        let mut profiles: Vec<Profile> = resources.iter().map(|r| Profile { segments: r.free.clone() }).collect();
        let mut left: Vec<usize> = (0..requests.len()).collect();
        left.sort_by(|&a, &b| requests[a].arrival.total_cmp(&requests[b].arrival).then(a.cmp(&b)));
        let mut out = Vec::new();
        let m = resources.len() as f64;
        loop {
            let mut best: Option<(f64, usize, usize, f64, f64)> = None; // key, k, site, start, finish
            for (k, &i) in left.iter().enumerate() {
                let q = &requests[i];
                let cost = costs(q, resources);
                let (gamma, beta) = (cost.iter().map(|c| c.0).sum::<f64>() / m, q.etc.iter().sum::<f64>() / m);
                let mut phis: Vec<(f64, usize, f64)> = Vec::new();
                for j in 0..resources.len() {
                    if let Some(start) = profiles[j].earliest(q.cpus, q.etc[j], 0.0) {
                        phis.push((phi(q.delta, cost[j].0, gamma, start + q.etc[j] - q.arrival, beta), j, start));
                    }
                }
                let Some(&(f, j, start)) = phis.iter().min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))) else {
                    continue;
                };
                let second = phis.iter().filter(|o| o.1 != j).map(|o| o.0).min_by(f64::total_cmp);
                let key = match h {
                    Heuristic::MinCtt => f,
                    Heuristic::MaxCtt => -f,
                    Heuristic::SuffCtt => -second.map_or(f64::INFINITY, |s| s - f),
                    Heuristic::Greedy => k as f64,
                };
                if best.is_none_or(|b| less(key, b.0)) {
                    best = Some((key, k, j, start, start + q.etc[j]));
                }
            }
            let Some((_, k, j, start, finish)) = best else { break };
            let i = left.remove(k);
            profiles[j].take(requests[i].cpus, start, finish);
            out.push((i, j, start));
        }
        out
    }

    #[test]
    fn incremental_updates_allocate_as_a_full_rescan_does() {
        use rand::{RngExt, SeedableRng};
        for seed in 0..200 {
            let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
            let resources: Vec<Resource> = (0..rng.random_range(1..5))
                .map(|_| {
                    let cpus = rng.random_range(2..16u32);
                    let mut t = 0.0;
                    let free = (0..rng.random_range(1..6))
                        .map(|_| {
                            let end = t + rng.random_range(1.0..50.0);
                            let s = Segment { start: t, end, free: rng.random_range(0..=cpus) };
                            t = end + if rng.random::<f64>() < 0.2 { 5.0 } else { 0.0 };
                            s
                        })
                        .chain(std::iter::once(Segment { start: 1000.0, end: 1e6, free: cpus }))
                        .collect();
                    Resource { cpus, price: rng.random_range(0.01..3.0), free, transfer: 0.0 }
                })
                .collect();
            let m = resources.len();
            let requests: Vec<Request> = (0..rng.random_range(1..14))
                .map(|_| Request {
                    arrival: rng.random_range(0.0..10.0),
                    cpus: rng.random_range(1..12),
                    etc: (0..m).map(|_| rng.random_range(1.0..40.0)).collect(),
                    delta: rng.random(),
                })
                .collect();
            for h in Heuristic::ALL {
                let o = allocate(h, &requests, &resources, 0.0).unwrap();
                assert_eq!(trace(&o), rescanning(h, &requests, &resources), "seed {seed}, {h}");
            }
        }
    }

    #[test]
    fn bad_input_is_refused_with_a_reason() {
        let ok = vec![open(4, 1.0)];
        let e = allocate(Heuristic::MinCtt, &[req(0.0, 1, &[1.0], 1.5)], &ok, 0.0).unwrap_err();
        assert_eq!(e, BadInput::Delta { app: 0, delta: 1.5 });
        let e = allocate(Heuristic::MinCtt, &[req(0.0, 1, &[0.0], 0.5)], &ok, 0.0).unwrap_err();
        assert!(e.to_string().contains("ETC on site 0 is 0"), "{e}");
        let e = allocate(Heuristic::MinCtt, &[req(0.0, 1, &[1.0, 2.0], 0.5)], &ok, 0.0).unwrap_err();
        assert_eq!(e, BadInput::EtcRow { app: 0, found: 2, sites: 1 });
        let overlapping = vec![Resource {
            cpus: 4,
            price: 1.0,
            free: vec![Segment { start: 0.0, end: 10.0, free: 4 }, Segment { start: 5.0, end: 20.0, free: 2 }],
            transfer: 0.0,
        }];
        let e = allocate(Heuristic::MinCtt, &[], &overlapping, 0.0).unwrap_err();
        assert!(e.to_string().contains("overlaps"), "{e}");
        let negative = vec![Resource {
            cpus: 4,
            price: 1.0,
            free: vec![Segment { start: -1.0, end: 10.0, free: 4 }],
            transfer: 0.0,
        }];
        let e = allocate(Heuristic::MinCtt, &[], &negative, 0.0).unwrap_err();
        assert!(e.to_string().contains("negative"), "{e}");
    }
}
