//! The mapping phase of Garg (2010) §6.3.1: which data centre each application of a scheduling cycle goes to, as a
//! pure function of the data centres' advertisements and the applications.
//!
//! The scheduling phase inside a data centre (the slot and the frequency) is the data centre's own DVS policy
//! ([`crate::datacenter::dvs`]), which the meta-broker runs on each advertised slot list to know, before it
//! assigns an application, what the application would emit and earn there (CO2E_ij (6.6) and Prof_ij (6.9)).
//!
//! Policies ([`MappingPolicy`]); applications are ordered by earliest deadline first (EDF), ties by arrival:
//! - GMCE (greedy minimum carbon emission): data centres by r^CO2 · (COP + 1)/COP · P(f_max), ascending; each
//!   application to the first where it meets its deadline.
//! - GMP (greedy maximum profit): likewise, data centres by p^e · (COP + 1)/COP · P(f_max).
//! - MCE-MCE (Min-Min on carbon): every application's minimum-carbon data centre among those that meet its deadline
//!   (an application with none is rejected); of these pairs the one of least carbon is mapped, the data centre's
//!   slots updated, and so on.
//! - MP-MP: likewise with the maximum profit at both steps; MCE-MP: minimum carbon at the first step, maximum
//!   profit at the second.
//! - EDF-EST: each application to the data centre where it starts earliest, at the frequency its DVS policy would
//!   run it at (the neutral mapping of §6.5.1 that compares the DVS policies; `earliest_start` says why).
//!
//! Ties between data centres go to the one listed first, between applications to the earlier deadline, then the
//! earlier arrival.

use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BinaryHeap};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::datacenter::CPU_BOUNDNESS;
use crate::datacenter::dvs::{self, DvsPolicy, Placement};
use crate::datacenter::power::{Costs, PowerModel, Site, carbon_key, energy_cost_key};
use crate::metabroker::{Candidate, Family, Footprint, MetaPolicy, OneAtATime, Policy};
use crate::model::JobId;
use crate::protocol::DataCentreAdvert;
use crate::provider::profile::Profile;
use crate::sim::SimTime;

/// An energy-aware meta-broker's mapping policy; deserialises from "gmce", "mce-mce", "gmp", "mp-mp", "mce-mp" and
/// "edf-est".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MappingPolicy {
    /// Greedy minimum carbon emission.
    Gmce,
    /// Min-Min on carbon emission, both steps.
    MceMce,
    /// Greedy maximum profit.
    Gmp,
    /// Max-Max on profit, both steps.
    MpMp,
    /// Minimum carbon emission per application, then the pair of maximum profit.
    MceMp,
    /// Earliest deadline first to the earliest start time.
    EdfEst,
}

impl MappingPolicy {
    /// Every policy, as `gridmarket list` gives them.
    pub const ALL: [MappingPolicy; 6] = [
        MappingPolicy::Gmce,
        MappingPolicy::MceMce,
        MappingPolicy::Gmp,
        MappingPolicy::MpMp,
        MappingPolicy::MceMp,
        MappingPolicy::EdfEst,
    ];
}

/// A data centre as the meta-broker sees it in one cycle: its advertisement, its free CPUs as a profile rebuilt
/// from the advertised slots, updated as applications are mapped to it.
#[derive(Clone, Debug)]
pub struct DcView {
    /// CPUs.
    pub cpus: u32,
    /// Speed at f_max relative to the reference CPU.
    pub speed: f64,
    /// Power model and frequency levels.
    pub power: PowerModel,
    /// COP, carbon rate, prices.
    pub site: Site,
    /// Its DVS policy.
    pub dvs: DvsPolicy,
    /// Free CPUs over time.
    pub profile: Profile,
}

impl DcView {
    /// The view of an advertisement whose slots cover `[now, until)`: the free CPUs at each instant are the most of
    /// any slot covering it (none where no slot does), every CPU after `until`.
    pub fn new(advert: &DataCentreAdvert, now: SimTime, until: SimTime) -> DcView {
        let cpus = advert.cpus;
        let mut profile = Profile::new(cpus);
        // Slots open and close at these times; at each, the free CPUs are the widest open slot's.
        let mut changes: BTreeMap<SimTime, Vec<(bool, u32)>> = BTreeMap::new();
        changes.entry(now).or_default();
        for &(start, end, n) in &advert.slots {
            changes.entry(start.max(now)).or_default().push((true, n));
            changes.entry(end.min(until)).or_default().push((false, n));
        }
        let mut open: BTreeMap<u32, usize> = BTreeMap::new();
        let times: Vec<SimTime> = changes.keys().copied().filter(|&t| t < until).collect();
        for (k, &t) in times.iter().enumerate() {
            for &(opens, n) in &changes[&t] {
                let count = open.entry(n).or_default();
                if opens {
                    *count += 1;
                } else {
                    *count = count.saturating_sub(1);
                    if *count == 0 {
                        open.remove(&n);
                    }
                }
            }
            let free = open.keys().next_back().copied().unwrap_or(0).min(cpus);
            let next = times.get(k + 1).copied().unwrap_or(until);
            if free < cpus && next > t {
                profile.allocate(t, next, cpus - free);
            }
        }
        let (speed, power, site, dvs) = (advert.speed, advert.power.clone(), advert.site, advert.dvs);
        DcView { cpus, speed, power, site, dvs, profile }
    }
}

/// An application of the cycle.
#[derive(Clone, Debug, PartialEq)]
pub struct App {
    /// Its id.
    pub id: JobId,
    /// CPUs.
    pub pes: u32,
    /// Runtime on the reference CPU at f_max, as planned \[s\].
    pub runtime: f64,
    /// Deadline.
    pub deadline: SimTime,
    /// Data moved \[GB\].
    pub data: f64,
}

/// Where one application goes, how it runs there, and what that costs and earns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Choice {
    /// The application, an index into the cycle's applications.
    pub app: usize,
    /// The data centre, an index into the views.
    pub dc: usize,
    /// Its slot and frequency.
    pub placement: Placement,
    /// Eqs (6.3)–(6.9) at that frequency.
    pub costs: Costs,
}

/// How `app` would run on `dc` from `now` under the data centre's DVS policy; `None` if it cannot meet its
/// deadline there.
pub fn evaluate(app: &App, dc: &DcView, now: SimTime) -> Option<(Placement, Costs)> {
    if app.pes == 0 || app.pes > dc.cpus {
        return None;
    }
    let earliest = |d: f64| Some(dc.profile.earliest_fit(now, app.pes, d));
    let p = dvs::place(dc.dvs, &dc.power, app.runtime / dc.speed, CPU_BOUNDNESS, app.deadline, earliest)?;
    Some((p, costs_at(app, dc, p.level)))
}

/// Eqs (6.3)–(6.9) for `app` on `dc` at frequency level `level`: they depend on the level, not on the slot.
fn costs_at(app: &App, dc: &DcView, level: usize) -> Costs {
    let f = dc.power.levels[level];
    Costs::at(&dc.power, &dc.site, f, app.pes, app.runtime / dc.speed, CPU_BOUNDNESS, app.data)
}

/// Chapter 6's family: applications mapped to data centres at the frequencies their DVS policies would choose.
#[derive(Debug)]
pub struct DataCentres;

/// Chapter 6's cycle at `now`: its applications (`apps`, and `seen` as a registered policy sees them, in one order)
/// and the data centres' views, which the mapping updates with the slots it takes.
#[derive(Debug)]
pub struct DataCentreView<'r> {
    /// The cycle's applications.
    pub apps: &'r [App],
    /// The same as a registered policy sees them.
    pub seen: &'r [crate::metabroker::App],
    /// The data centres' slots, power models and DVS policies.
    pub dcs: &'r mut [DcView],
    /// The end of the cycle.
    pub now: SimTime,
}

/// A cycle's mapping: the choices in the order made (applications in none are rejected, unless declined).
#[derive(Debug, Default)]
pub struct Mapping {
    /// Where each mapped application goes.
    pub choices: Vec<Choice>,
    /// The applications that had candidates but that a registered policy declined: they wait for the next cycle.
    pub declined: Vec<usize>,
}

impl Family for DataCentres {
    type View<'r> = DataCentreView<'r>;
    type Placements = Mapping;
}

impl Policy<DataCentres> for MappingPolicy {
    fn place(&self, view: DataCentreView<'_>) -> Mapping {
        Mapping { choices: map(*self, view.apps, view.dcs, view.now), declined: Vec::new() }
    }
}

impl Policy<DataCentres> for OneAtATime {
    fn place(&self, view: DataCentreView<'_>) -> Mapping {
        let (choices, declined) = map_each(self.0, view.apps, view.seen, view.dcs, view.now);
        Mapping { choices, declined }
    }
}

impl From<MappingPolicy> for Arc<dyn Policy<DataCentres>> {
    fn from(policy: MappingPolicy) -> Arc<dyn Policy<DataCentres>> {
        Arc::new(policy)
    }
}

/// Maps the cycle's applications to the data centres by `policy`, in the order it maps them; each data centre's
/// view is updated with the slots taken. Applications not in the result are rejected.
pub fn map(policy: MappingPolicy, apps: &[App], dcs: &mut [DcView], now: SimTime) -> Vec<Choice> {
    // EDF, ties by arrival (the input order).
    let mut edf: Vec<usize> = (0..apps.len()).collect();
    edf.sort_by_key(|&j| (apps[j].deadline, j));
    match policy {
        MappingPolicy::Gmce => greedy(apps, &edf, dcs, now, carbon_key),
        MappingPolicy::Gmp => greedy(apps, &edf, dcs, now, energy_cost_key),
        MappingPolicy::EdfEst => earliest_start(apps, &edf, dcs, now),
        MappingPolicy::MceMce => min_min(apps, &edf, dcs, now, Criterion::Carbon, Criterion::Carbon),
        MappingPolicy::MpMp => min_min(apps, &edf, dcs, now, Criterion::Profit, Criterion::Profit),
        MappingPolicy::MceMp => min_min(apps, &edf, dcs, now, Criterion::Carbon, Criterion::Profit),
    }
}

/// Maps the cycle's applications by a registered `policy`, earliest deadline first (ties by arrival, the input
/// order), each to the data centre the policy chooses among those where it meets its deadline, as the data centre's
/// DVS policy would run it there. A data centre's [`Candidate`] gives that slot, what the user would pay (CPUs and
/// data) and, as its [`Footprint`], the carbon and the profit; candidates come cheapest first, ties to the data
/// centre listed first. `seen` are the applications as the policy sees them, in the order of `apps`. Returns the
/// choices in the order made, and the applications that had candidates but that the policy declined.
pub fn map_each(
    policy: &dyn MetaPolicy,
    apps: &[App],
    seen: &[crate::metabroker::App],
    dcs: &mut [DcView],
    now: SimTime,
) -> (Vec<Choice>, Vec<usize>) {
    let mut edf: Vec<usize> = (0..apps.len()).collect();
    edf.sort_by_key(|&j| (apps[j].deadline, j));
    let (mut out, mut declined) = (Vec::new(), Vec::new());
    let mut options = Vec::with_capacity(dcs.len());
    let mut candidates = Vec::with_capacity(dcs.len());
    for j in edf {
        let app = &apps[j];
        options.clear();
        options.extend((0..dcs.len()).filter_map(|i| evaluate(app, &dcs[i], now).map(|e| (i, e))));
        candidates.clear();
        candidates.extend(options.iter().map(|&(i, (p, c))| {
            let cost = c.revenue + c.data_revenue;
            Candidate {
                site: i,
                free: dcs[i].profile.free_at(p.start),
                price: c.revenue / (f64::from(app.pes) * p.duration),
                speed: dcs[i].speed,
                start: p.start.secs(),
                finish: p.end().secs(),
                cost,
                footprint: Some(Footprint { carbon: c.carbon, profit: c.profit }),
            }
        }));
        candidates.sort_by(|a, b| a.cost.total_cmp(&b.cost).then(a.site.cmp(&b.site)));
        if candidates.is_empty() {
            continue;
        }
        let Some(dc) = policy.choose(&seen[j], &candidates).map(|c| c.site) else {
            declined.push(j);
            continue;
        };
        let (_, (placement, costs)) = *options.iter().find(|o| o.0 == dc).expect("a candidate is an option");
        let choice = Choice { app: j, dc, placement, costs };
        take(dcs, &choice, app.pes);
        out.push(choice);
    }
    (out, declined)
}

fn take(dcs: &mut [DcView], choice: &Choice, pes: u32) {
    let p = &choice.placement;
    dcs[choice.dc].profile.allocate(p.start, p.end(), pes);
}

/// GMCE and GMP: every application to the first data centre in `key` order where it meets its deadline.
fn greedy(
    apps: &[App],
    edf: &[usize],
    dcs: &mut [DcView],
    now: SimTime,
    key: fn(&PowerModel, &Site) -> f64,
) -> Vec<Choice> {
    let mut order: Vec<usize> = (0..dcs.len()).collect();
    order.sort_by(|&a, &b| {
        key(&dcs[a].power, &dcs[a].site).total_cmp(&key(&dcs[b].power, &dcs[b].site)).then(a.cmp(&b))
    });
    let mut out = Vec::new();
    for &j in edf {
        let found = order.iter().find_map(|&i| evaluate(&apps[j], &dcs[i], now).map(|e| (i, e)));
        if let Some((dc, (placement, costs))) = found {
            let choice = Choice { app: j, dc, placement, costs };
            take(dcs, &choice, apps[j].pes);
            out.push(choice);
        }
    }
    out
}

/// EDF-EST: every application to the data centre where its slot starts earliest.
///
/// "Earliest Start Time" is read as the start the application would get there: its slot once the data centre's DVS
/// policy has chosen the frequency that meets the deadline, as the data centre would run it. The other reading, the
/// start at the policy's first frequency level, ranks a data centre by a slot the application would not use: at a
/// low level its run is longer, so a hole that holds it at the frequency it will run at may not hold it there, and
/// the data centre would look later than it is (a test shows the two readings apart). Garg (2010) §6.5.1 introduces
/// EDF-EST only as the neutral mapping that compares the DVS policies, and leaves the point open.
fn earliest_start(apps: &[App], edf: &[usize], dcs: &mut [DcView], now: SimTime) -> Vec<Choice> {
    let mut out = Vec::new();
    for &j in edf {
        let best = (0..dcs.len())
            .filter_map(|i| evaluate(&apps[j], &dcs[i], now).map(|e| (i, e)))
            .min_by(|a, b| a.1.0.start.cmp(&b.1.0.start).then(a.0.cmp(&b.0)));
        if let Some((dc, (placement, costs))) = best {
            let choice = Choice { app: j, dc, placement, costs };
            take(dcs, &choice, apps[j].pes);
            out.push(choice);
        }
    }
    out
}

/// What a Min-Min step minimises.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Criterion {
    /// CO2E_ij.
    Carbon,
    /// −Prof_ij.
    Profit,
}

impl Criterion {
    fn key(self, c: &Costs) -> f64 {
        match self {
            Criterion::Carbon => c.carbon,
            Criterion::Profit => -c.profit,
        }
    }

    /// The least key `app` can still reach on `dc` from frequency level `level` up.
    fn least_from(self, app: &App, dc: &DcView, level: usize) -> f64 {
        (level..dc.power.levels.len()).map(|l| self.key(&costs_at(app, dc, l))).fold(f64::INFINITY, f64::min)
    }
}

/// An application's pair with one data centre in a Min-Min cycle: how it would run there (`None`: it cannot meet its
/// deadline there), and whether its slot has lost CPUs since (`stale`: it must be evaluated again).
#[derive(Clone, Copy, Debug)]
struct Pair {
    eval: Option<(Placement, Costs)>,
    stale: bool,
}

/// A heap entry: the application's key (exact if none of its pairs is stale, else a lower bound), its EDF rank, the
/// application, and the version of its pairs the entry was made for (an entry of an older version is out of date).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Entry(f64, usize, usize, u32);

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1)).then(self.2.cmp(&other.2)).then(self.3.cmp(&other.3))
    }
}

/// The Min-Min family (MCE-MCE, MP-MP, MCE-MP), computed lazily but exactly: each step maps the pair a plain
/// Min-Min would, which evaluates every application on every data centre again.
///
/// A pair's costs depend only on its frequency level. Mapping an application takes CPUs from one data centre, and
/// a pair there changes only if its slot lost CPUs: a slot that keeps its CPUs is still the earliest at its level,
/// and the levels below still miss the deadline. Then the pair moves to a later slot or a higher level, or cannot
/// meet the deadline at all. A higher level is not always worse: under PrevDVS scheduling starts at f_min, and where
/// α is small a faster level takes less energy per unit of work (France in Garg (2010) Table 6.3). So a pair whose
/// slot lost CPUs is marked stale rather than evaluated, and the application's heap key becomes a lower bound: the
/// least key of the data centres that can still be its first-criterion best, each at its best reachable level. The
/// heap's top is then exact or a bound; a bound is evaluated and pushed again, an exact top is mapped.
fn min_min(
    apps: &[App],
    edf: &[usize],
    dcs: &mut [DcView],
    now: SimTime,
    first: Criterion,
    second: Criterion,
) -> Vec<Choice> {
    let mut rank = vec![0; apps.len()];
    for (r, &j) in edf.iter().enumerate() {
        rank[j] = r;
    }
    let mut pairs: Vec<Vec<Pair>> =
        apps.iter().map(|a| dcs.iter().map(|dc| Pair { eval: evaluate(a, dc, now), stale: false }).collect()).collect();
    // The application's key: `None` if no data centre can meet its deadline.
    let key = |k: usize, row: &[Pair], dcs: &[DcView]| -> Option<f64> {
        let feasible = || row.iter().enumerate().filter_map(|(d, p)| p.eval.map(|(pl, c)| (d, pl, c, p.stale)));
        if row.iter().all(|p| !p.stale) {
            let (_, (_, c)) = feasible()
                .map(|(d, _, c, _)| (first.key(&c), (d, c)))
                .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.0.cmp(&b.1.0)))?;
            return Some(second.key(&c));
        }
        // The best fresh pair's first key bounds the first criterion's minimum from above; a data centre whose
        // least reachable first key is above it cannot be the best.
        let upper = feasible().filter(|p| !p.3).map(|(_, _, c, _)| first.key(&c)).fold(f64::INFINITY, f64::min);
        let bound = feasible()
            .filter_map(|(d, pl, c, stale)| {
                if stale {
                    let app = &apps[k];
                    (first.least_from(app, &dcs[d], pl.level) <= upper)
                        .then(|| second.least_from(app, &dcs[d], pl.level))
                } else {
                    (first.key(&c) <= upper).then(|| second.key(&c))
                }
            })
            .fold(f64::INFINITY, f64::min);
        Some(bound)
    };
    let mut heap = BinaryHeap::new();
    let mut version = vec![0u32; apps.len()];
    // Applications neither mapped nor rejected: a flag, and a list of them to visit.
    let mut live = vec![false; apps.len()];
    for k in 0..apps.len() {
        if let Some(v) = key(k, &pairs[k], dcs) {
            heap.push(Reverse(Entry(v, rank[k], k, 0)));
            live[k] = true;
        }
    }
    let mut waiting: Vec<usize> = (0..apps.len()).filter(|&k| live[k]).collect();
    let mut out = Vec::new();
    while let Some(Reverse(Entry(_, _, k, v))) = heap.pop() {
        if v != version[k] {
            continue;
        }
        version[k] += 1;
        if pairs[k].iter().any(|p| p.stale) {
            for (d, pair) in pairs[k].iter_mut().enumerate() {
                if pair.stale {
                    *pair = Pair { eval: evaluate(&apps[k], &dcs[d], now), stale: false };
                }
            }
            match key(k, &pairs[k], dcs) {
                Some(v) => heap.push(Reverse(Entry(v, rank[k], k, version[k]))),
                None => live[k] = false,
            }
            continue;
        }
        let (dc, (placement, costs)) = pairs[k]
            .iter()
            .enumerate()
            .filter_map(|(d, p)| p.eval.map(|e| (d, e)))
            .min_by(|a, b| first.key(&a.1.1).total_cmp(&first.key(&b.1.1)).then(a.0.cmp(&b.0)))
            .expect("an application in the heap has a feasible pair");
        let choice = Choice { app: k, dc, placement, costs };
        take(dcs, &choice, apps[k].pes);
        out.push(choice);
        live[k] = false;
        // The pairs on `dc` whose slot lost CPUs go stale. Only a slot that overlaps the one just taken can have,
        // and only if the application is wider than what is left free there.
        let (start, end) = (placement.start, placement.end());
        let left = dcs[dc].profile.min_free(start, end);
        waiting.retain(|&j| live[j]);
        for &j in &waiting {
            let pair = &mut pairs[j][dc];
            let Some((p, _)) = pair.eval else { continue };
            if pair.stale || apps[j].pes <= left || p.start >= end || p.end() <= start {
                continue;
            }
            if dcs[dc].profile.min_free(p.start, p.end()) < apps[j].pes {
                pair.stale = true;
                version[j] += 1;
                let v = key(j, &pairs[j], dcs).expect("a stale pair is a feasible one");
                heap.push(Reverse(Entry(v, rank[j], j, version[j])));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use rand::{RngExt, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    use super::*;
    use crate::datacenter::power::PowerModel;

    fn t(secs: f64) -> SimTime {
        SimTime::new(secs).unwrap()
    }

    /// A data centre of `cpus` CPUs with New York's power model, all free, at COP 1.
    fn dc(cpus: u32, carbon_rate: f64, electricity_price: f64, dvs: DvsPolicy) -> DcView {
        let site =
            Site { cop: 1.0, carbon_rate, electricity_price, transfer_price: 0.0, cpu_price: 0.4, data_price: 0.0 };
        let power = PowerModel::new(65.0, 7.5, 0.675, 1.8, 5).unwrap();
        DcView { cpus, speed: 1.0, power, site, dvs, profile: Profile::new(cpus) }
    }

    fn app(id: JobId, pes: u32, runtime: f64, deadline: f64) -> App {
        App { id, pes, runtime, deadline: t(deadline), data: 0.0 }
    }

    fn mapped(choices: &[Choice]) -> Vec<(usize, usize)> {
        choices.iter().map(|c| (c.app, c.dc)).collect()
    }

    #[test]
    fn greedy_policies_fill_the_cleanest_or_cheapest_data_centre_first() {
        // dc 0 is clean and dear, dc 1 dirty and cheap; each holds one 4-CPU application at a time.
        let views = || vec![dc(4, 0.1, 0.3, DvsPolicy::None), dc(4, 0.9, 0.05, DvsPolicy::None)];
        // Three applications of 1,000 s due at 1,500 s, in EDF order 1, 0, 2.
        let apps = [app(10, 4, 1000.0, 1500.0), app(11, 4, 1000.0, 1400.0), app(12, 4, 1000.0, 1500.0)];
        let mut dcs = views();
        let gmce = map(MappingPolicy::Gmce, &apps, &mut dcs, SimTime::ZERO);
        // The first two fill both data centres, the third meets its deadline nowhere.
        assert_eq!(mapped(&gmce), [(1, 0), (0, 1)]);
        let gmp = map(MappingPolicy::Gmp, &apps, &mut views(), SimTime::ZERO);
        assert_eq!(mapped(&gmp), [(1, 1), (0, 0)]);
        assert_eq!(dcs[0].profile.free_at(t(500.0)), 0);
        assert_eq!(dcs[0].profile.free_at(t(1000.0)), 4);
    }

    /// A registered policy: the candidate of least carbon, declining applications of 2 CPUs.
    struct LeastCarbon;

    impl MetaPolicy for LeastCarbon {
        fn name(&self) -> &'static str {
            "least-carbon"
        }
        fn about(&self) -> &'static str {
            "the data centre where it emits least"
        }
        fn choose<'c>(&self, app: &crate::metabroker::App, candidates: &'c [Candidate]) -> Option<&'c Candidate> {
            let carbon = |c: &Candidate| c.footprint.map_or(f64::INFINITY, |f| f.carbon);
            (app.cpus != 2).then(|| candidates.iter().min_by(|a, b| carbon(a).total_cmp(&carbon(b)))).flatten()
        }
    }

    #[test]
    fn a_registered_policy_chooses_among_the_data_centres_that_meet_the_deadline() {
        // The greedy case: the least carbon first, as GMCE: applications 1 and 0 (EDF) fill both data centres, the
        // third meets its deadline nowhere (no candidate: rejected by the meta-broker). A fourth, of 2 CPUs, is
        // declined while it has candidates.
        let apps = [
            app(10, 4, 1000.0, 1500.0),
            app(11, 4, 1000.0, 1400.0),
            app(12, 4, 1000.0, 1500.0),
            app(13, 2, 10.0, 5000.0),
        ];
        let seen: Vec<crate::metabroker::App> = apps
            .iter()
            .map(|a| crate::metabroker::App {
                id: a.id,
                cpus: a.pes,
                runtime: a.runtime,
                budget: None,
                deadline: Some(a.deadline.secs()),
                submit: 0.0,
            })
            .collect();
        let mut dcs = [dc(4, 0.1, 0.3, DvsPolicy::None), dc(4, 0.9, 0.05, DvsPolicy::None)];
        let (choices, declined) = map_each(&LeastCarbon, &apps, &seen, &mut dcs, SimTime::ZERO);
        assert_eq!(mapped(&choices), [(1, 0), (0, 1)]);
        assert_eq!(declined, [3]);
        let mut fresh = [dc(4, 0.1, 0.3, DvsPolicy::None), dc(4, 0.9, 0.05, DvsPolicy::None)];
        let gmce = map(MappingPolicy::Gmce, &apps[..3], &mut fresh, SimTime::ZERO);
        assert_eq!(choices[..], gmce[..], "the same slots, frequencies and costs as GMCE");
        assert_eq!(dcs[0].profile.free_at(t(500.0)), 0);
    }

    #[test]
    fn min_min_maps_the_least_carbon_pair_first_and_updates_the_slots() {
        // One clean 4-CPU data centre and a dirty 8-CPU one.
        let views = || vec![dc(4, 0.1, 0.3, DvsPolicy::None), dc(8, 0.9, 0.05, DvsPolicy::None)];
        // App 1 is small (little carbon anywhere), app 0 large: both prefer dc 0, the pair of least carbon (app 1
        // there) goes first, so app 0 must go to dc 1 to meet its deadline.
        let apps = [app(1, 4, 4000.0, 4050.0), app(2, 2, 100.0, 3000.0)];
        let mce = map(MappingPolicy::MceMce, &apps, &mut views(), SimTime::ZERO);
        assert_eq!(mapped(&mce), [(1, 0), (0, 1)]);
        // MP-MP: the most profitable pair first, app 0 at the cheap dc 1; app 1 there too (8 CPUs hold both).
        let mp = map(MappingPolicy::MpMp, &apps, &mut views(), SimTime::ZERO);
        assert_eq!(mapped(&mp), [(0, 1), (1, 1)]);
        // MCE-MP: each to its cleanest feasible data centre, the most profitable of those pairs first: app 0 takes dc
        // 0 until 4,000 s, past app 1's deadline there.
        let mce_mp = map(MappingPolicy::MceMp, &apps, &mut views(), SimTime::ZERO);
        assert_eq!(mapped(&mce_mp), [(0, 0), (1, 1)]);
    }

    #[test]
    fn edf_est_goes_where_the_slot_starts_earliest() {
        let mut views = vec![dc(4, 0.1, 0.1, DvsPolicy::Ours), dc(4, 0.1, 0.1, DvsPolicy::Ours)];
        views[0].profile.allocate(t(0.0), t(100.0), 4);
        let apps = [app(1, 4, 100.0, 10_000.0), app(2, 4, 100.0, 10_000.0)];
        let est = map(MappingPolicy::EdfEst, &apps, &mut views, SimTime::ZERO);
        // App 0 starts at once on dc 1; then dc 0 frees first (at 100 s, dc 1 at ~118 s at 1.519 GHz).
        assert_eq!(mapped(&est), [(0, 1), (1, 0)]);
        assert_eq!(est[1].placement.start, t(100.0));
        assert_eq!(est[0].placement.frequency, views[1].power.levels[3]);
    }

    #[test]
    fn edf_est_ranks_data_centres_by_the_start_the_application_would_get() {
        // PrevDVS starts at f_min, where the 100-s run takes 250 s. dc 0 is free for 150 s, then busy until 1,000 s:
        // at f_min the application would start at 1,000 s, past its deadline, so PrevDVS raises the frequency until
        // it fits the hole, from 0 s. dc 1 is busy for 50 s, then free: it starts there at 50 s at f_min.
        let mut views = vec![dc(4, 0.1, 0.1, DvsPolicy::Previous), dc(4, 0.1, 0.1, DvsPolicy::Previous)];
        views[0].profile.allocate(t(150.0), t(1000.0), 4);
        views[1].profile.allocate(t(0.0), t(50.0), 4);
        let apps = [app(1, 4, 100.0, 400.0)];
        let first_level_start = |v: &DcView| {
            let (p, _) = evaluate(&App { deadline: t(1e9), ..apps[0].clone() }, v, SimTime::ZERO).unwrap();
            p.start
        };
        // The other reading would rank dc 1 first (50 s against 1,000 s).
        assert_eq!((first_level_start(&views[0]), first_level_start(&views[1])), (t(1000.0), t(50.0)));
        let est = map(MappingPolicy::EdfEst, &apps, &mut views, SimTime::ZERO);
        assert_eq!(mapped(&est), [(0, 0)]);
        assert_eq!(est[0].placement.start, t(0.0));
        assert!(est[0].placement.frequency > views[0].power.levels[0]);
    }

    #[test]
    fn a_view_rebuilt_from_maximal_slots_is_the_advertised_profile() {
        let mut real = Profile::new(10);
        real.allocate(t(0.0), t(50.0), 10);
        real.allocate(t(50.0), t(80.0), 3);
        real.allocate(t(60.0), t(200.0), 5);
        let (now, until) = (t(10.0), t(150.0));
        let slots = real.free_slots(now, until).into_iter().map(|s| (s.start, s.end, s.pes)).collect();
        let advert = DataCentreAdvert {
            cpus: 10,
            speed: 1.0,
            power: PowerModel::new(1.0, 1.0, 1.0, 2.0, 2).unwrap(),
            site: Site {
                cop: 1.0,
                carbon_rate: 0.0,
                electricity_price: 0.0,
                transfer_price: 0.0,
                cpu_price: 0.0,
                data_price: 0.0,
            },
            dvs: DvsPolicy::None,
            slots,
        };
        let view = DcView::new(&advert, now, until);
        for s in [10.0, 49.0, 50.0, 59.0, 60.0, 79.0, 80.0, 149.0] {
            assert_eq!(view.profile.free_at(t(s)), real.free_at(t(s)), "at {s}");
        }
        // Within the advertised window (after it the view has every CPU free).
        for (pes, d) in [(5, 10.0), (7, 5.0), (3, 60.0), (2, 100.0)] {
            assert_eq!(view.profile.earliest_fit(now, pes, d), real.earliest_fit(now, pes, d), "{pes} × {d}");
        }
    }

    #[test]
    fn min_min_does_not_strand_an_application_whose_best_data_centre_changed() {
        // Both applications are cleanest on dc 1, which holds one at a time before their deadline. Once the first
        // takes it, the second can only go to dc 0, listed before the group it was waiting in.
        let mut views = vec![dc(4, 0.9, 0.1, DvsPolicy::None), dc(4, 0.1, 0.1, DvsPolicy::None)];
        let apps = [app(1, 4, 100.0, 150.0), app(2, 4, 100.0, 150.0)];
        let mce = map(MappingPolicy::MceMce, &apps, &mut views, SimTime::ZERO);
        assert_eq!(mapped(&mce), [(0, 1), (1, 0)]);
    }

    /// Min-Min as the thesis states it: every step evaluates every waiting application on every data centre again.
    fn recomputing_min_min(
        apps: &[App],
        dcs: &mut [DcView],
        now: SimTime,
        first: Criterion,
        second: Criterion,
    ) -> Vec<Choice> {
        let mut edf: Vec<usize> = (0..apps.len()).collect();
        edf.sort_by_key(|&j| (apps[j].deadline, j));
        let mut out = Vec::new();
        loop {
            let mut best: Option<(f64, Choice)> = None;
            for &k in &edf {
                if out.iter().any(|c: &Choice| c.app == k) {
                    continue;
                }
                let mut mine: Option<Choice> = None;
                for (d, view) in dcs.iter().enumerate() {
                    if let Some((placement, costs)) = evaluate(&apps[k], view, now)
                        && mine.is_none_or(|m| first.key(&costs) < first.key(&m.costs))
                    {
                        mine = Some(Choice { app: k, dc: d, placement, costs });
                    }
                }
                if let Some(m) = mine
                    && best.is_none_or(|(b, _)| second.key(&m.costs) < b)
                {
                    best = Some((second.key(&m.costs), m));
                }
            }
            let Some((_, choice)) = best else { return out };
            take(dcs, &choice, apps[choice.app].pes);
            out.push(choice);
        }
    }

    /// GMCE, GMP and EDF-EST as plainly as they are stated.
    fn plain_one_pass(policy: MappingPolicy, apps: &[App], dcs: &mut [DcView], now: SimTime) -> Vec<Choice> {
        let mut edf: Vec<usize> = (0..apps.len()).collect();
        edf.sort_by_key(|&j| (apps[j].deadline, j));
        let mut out = Vec::new();
        for k in edf {
            let mut best: Option<(f64, Choice)> = None;
            for (d, view) in dcs.iter().enumerate() {
                let rank = match policy {
                    MappingPolicy::Gmce => carbon_key(&view.power, &view.site),
                    MappingPolicy::Gmp => energy_cost_key(&view.power, &view.site),
                    _ => f64::NAN,
                };
                if let Some((placement, costs)) = evaluate(&apps[k], view, now) {
                    let rank = if rank.is_nan() { placement.start.secs() } else { rank };
                    if best.is_none_or(|(b, _)| rank < b) {
                        best = Some((rank, Choice { app: k, dc: d, placement, costs }));
                    }
                }
            }
            if let Some((_, choice)) = best {
                take(dcs, &choice, apps[k].pes);
                out.push(choice);
            }
        }
        out
    }

    /// A random cycle: 2–5 data centres of 2–16 CPUs, partly busy, with β in [5, 120] W, α in [1, 10] W/GHz³ (so
    /// some are faster for less energy above f_min), f_max in [1.2, 2.2] GHz and five levels; 2–11 applications.
    fn random_cycle(rng: &mut impl RngExt, dvs: DvsPolicy) -> (Vec<App>, Vec<DcView>) {
        let dcs = (0..rng.random_range(2..=5))
            .map(|_| {
                let cpus = rng.random_range(2..=16);
                let f_max = rng.random_range(1.2..2.2);
                let power =
                    PowerModel::new(rng.random_range(5.0..120.0), rng.random_range(1.0..10.0), 0.375 * f_max, f_max, 5)
                        .unwrap();
                let site = Site {
                    cop: rng.random_range(1.0..3.0),
                    carbon_rate: rng.random_range(0.05..1.0),
                    electricity_price: rng.random_range(0.05..0.2),
                    transfer_price: 0.0,
                    cpu_price: 0.4,
                    data_price: 0.0,
                };
                let mut profile = Profile::new(cpus);
                for _ in 0..rng.random_range(0..4) {
                    let start = rng.random_range(0.0..3000.0);
                    let end = start + rng.random_range(100.0..3000.0);
                    if profile.min_free(t(start), t(end)) > 0 {
                        let free = profile.min_free(t(start), t(end));
                        profile.allocate(t(start), t(end), rng.random_range(1..=free));
                    }
                }
                DcView { cpus, speed: rng.random_range(0.8..1.5), power, site, dvs, profile }
            })
            .collect::<Vec<_>>();
        let widest = dcs.iter().map(|d| d.cpus).max().unwrap();
        let apps = (0..rng.random_range(2..=11))
            .map(|i| {
                let runtime = rng.random_range(100.0..3000.0);
                App {
                    id: i,
                    pes: rng.random_range(1..=widest),
                    runtime,
                    deadline: t(runtime * rng.random_range(1.0..5.0)),
                    data: 0.0,
                }
            })
            .collect();
        (apps, dcs)
    }

    #[test]
    fn every_policy_maps_as_its_plain_statement_on_random_cycles() {
        let mut rng = Pcg64Mcg::seed_from_u64(41);
        for dvs in [DvsPolicy::Ours, DvsPolicy::Previous, DvsPolicy::None] {
            for policy in MappingPolicy::ALL {
                for n in 0..1000 {
                    let (apps, dcs) = random_cycle(&mut rng, dvs);
                    let mut fast = dcs.clone();
                    let mut plain = dcs;
                    let got = map(policy, &apps, &mut fast, SimTime::ZERO);
                    let want = match policy {
                        MappingPolicy::MceMce => {
                            recomputing_min_min(&apps, &mut plain, SimTime::ZERO, Criterion::Carbon, Criterion::Carbon)
                        }
                        MappingPolicy::MpMp => {
                            recomputing_min_min(&apps, &mut plain, SimTime::ZERO, Criterion::Profit, Criterion::Profit)
                        }
                        MappingPolicy::MceMp => {
                            recomputing_min_min(&apps, &mut plain, SimTime::ZERO, Criterion::Carbon, Criterion::Profit)
                        }
                        _ => plain_one_pass(policy, &apps, &mut plain, SimTime::ZERO),
                    };
                    assert_eq!(got, want, "{policy:?} under {dvs:?}, instance {n}");
                }
            }
        }
    }
}
