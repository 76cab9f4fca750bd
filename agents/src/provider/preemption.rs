//! Preemption of external leases in favour of local requests: lease types, candidate sets and the preemption
//! policies of Salehi's thesis (2012), Ch 3 §3.2 (lease types §3.2.1, candidate sets Eq 3.1, policies §3.2.3,
//! Eq 3.8–3.9 and Algorithm 1), and the greedy implementations of its prototype (Ch 7 §7.3.4).
//!
//! A local request asks for `pes` VMs throughout a fixed window `[start, end)`. When the free PEs fall short, the
//! provider may preempt preemptable external leases: running ones, and queued ones that hold a reservation in the
//! availability profile (thesis Fig 3.2). A *candidate set* is a set of such leases whose PEs, together with the free
//! ones, cover the request throughout its window. The thesis does not say whether supersets count; here the sets are
//! the **minimal** ones (no lease can be left out), which reproduces the prototype example of Table 7.1. A set's
//! overhead is `h(C) = Σ h(L)` over its leases ([`super::overhead`]).
//!
//! [`PreemptionPolicy`] chooses what to preempt from a [`Contention`], a snapshot of the schedule:
//! - NOP (no preemption): the local request is rejected, the baseline of Ch 7.
//! - MOV, Minimum Overhead Value (Eq 3.8): the set with the least overhead (system-centric).
//! - MLIP, Minimum Leases Involved in Preemption (Eq 3.9): the set with the fewest leases (user-centric).
//! - MOML, Minimum Overhead Minimum Lease (Algorithm 1): among the sets whose overhead is at most the median
//!   overhead of all sets, the one with the fewest leases.
//! - Greedy MOV and greedy MLIP: the prototype's implementations, which preempt leases one at a time, in ascending
//!   order of overhead or largest first, until the request fits. Their sets need not be minimal.
//!
//! Ties. Sets are enumerated in lexicographic order of their lease ids. Algorithm 1 keeps the first set with a
//! strictly smaller count, so every policy's last tie-break is that order; MOV has no other. MLIP and MOML break ties
//! on the number of leases by the lower overhead first: this is how MOML preempts {5, 6} rather than {3, 6} in Table
//! 7.2. Overheads within a microsecond of each other count as equal. Table 7.2's MLIP row, {1, 6}, is the greedy
//! MLIP's choice; Eq 3.9 with this tie-break prefers the cheaper {5, 6}.
//!
//! Ch 7 also describes a two-round greedy MOML ("leases are sorted based on the imposed overhead, then the minimum
//! number of leases are selected by considering the overhead"). The text does not define the order it picks leases
//! in, so it is not implemented; the exact MOML gives the prototype's result.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

use super::overhead::OverheadModel;
use super::profile::Slot;
use super::scheduler::{LocalScheduler, ReservationRequest};
use crate::model::{JobId, LeaseType};
use crate::sim::SimTime;

/// Overheads closer than this are equal [s]: the same per-lease overheads summed in another order differ in the
/// last bits, and ties must not depend on that.
const OVERHEAD_TIE: f64 = 1e-6;

/// The prototype example's external leases (Amini Salehi 2012, Table 7.1), all suspendable, on a 12-PE cluster: (lease,
/// arrival \[s\], VMs, MB per VM, duration \[s\]). At 00:12:00 a local request for 5 VMs over one hour finds every PE
/// busy; the policies' choices among these leases are the thesis's worked example (Table 7.2).
pub const PROTOTYPE_LEASES: [(JobId, f64, u32, f64, f64); 6] = [
    (1, 0.0, 3, 256.0, 3600.0),
    (2, 300.0, 1, 128.0, 5400.0),
    (3, 360.0, 2, 128.0, 5400.0),
    (4, 480.0, 1, 256.0, 5400.0),
    (5, 530.0, 2, 64.0, 2400.0),
    (6, 580.0, 3, 128.0, 3600.0),
];

/// Where a candidate holds the PEs its preemption gives back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Holding {
    /// A running lease: preempting it cancels, suspends or migrates its VMs.
    Running,
    /// A queued lease with a reservation in the profile: it has no VMs yet, so preempting it only moves it later.
    Reserved,
}

/// A preemptable external lease that overlaps a local request: an element of candidate sets.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The lease.
    pub lease: JobId,
    /// VMs (one per PE) it holds, `v(L)`.
    pub vms: u32,
    /// Its type; never [`LeaseType::Local`] or [`LeaseType::NonPreemptable`].
    pub lease_type: LeaseType,
    /// Running or queued.
    pub holding: Holding,
    /// Start of the window its PEs are given back over: now for a running lease, the planned start of a queued one.
    pub start: SimTime,
    /// End of that window (the planned end).
    pub end: SimTime,
    /// Preemption overhead `h(L)` \[s\].
    pub overhead: f64,
}

/// What a provider knows of a lease besides the scheduler's view, for [`Contention::from_scheduler`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LeaseTerms {
    /// The lease's type.
    pub lease_type: LeaseType,
    /// Memory of each of its VMs \[MB\].
    pub memory_mb: f64,
    /// A deadline the lease must still meet here if it is preempted: a migratable lease's, when no gateway can
    /// move it to another provider. Such a lease is a candidate only if the plan lets it finish by then.
    pub deadline: Option<SimTime>,
}

/// A set of candidates to preempt.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CandidateSet {
    /// Indices into [`Contention::candidates`]: ascending for enumerated sets, in preemption order for greedy ones.
    pub members: Vec<usize>,
    /// Its overhead `h(C) = Σ h(L)` \[s\].
    pub overhead: f64,
}

/// Bound on the work of [`Contention::minimal_sets`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchLimits {
    /// Search-tree nodes to visit at most.
    pub max_steps: u64,
}

impl Default for SearchLimits {
    /// 2^20 steps, about 30 ms in a release build: enough for any contention with up to 20 candidates (the worst
    /// case, 20 one-VM leases with 10 VMs missing, has 184,756 minimal sets).
    fn default() -> Self {
        Self { max_steps: 1 << 20 }
    }
}

/// The candidate-set search hit [`SearchLimits::max_steps`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("enumerating the candidate sets of {candidates} leases takes more than {max_steps} steps")]
pub struct SearchLimitExceeded {
    /// Candidates in the contention.
    pub candidates: usize,
    /// The limit.
    pub max_steps: u64,
}

/// A local request that may not fit, and what could be preempted for it: the snapshot policies decide on.
///
/// The request window is cut at every change of the free PEs and at every candidate's start and end; each piece
/// where PEs are missing is a *shortfall*, and a set of candidates is feasible when, in every shortfall, the VMs of
/// its members that hold the whole piece make up the missing PEs.
#[derive(Clone, Debug, PartialEq)]
pub struct Contention {
    /// By lease id, which fixes the enumeration order.
    candidates: Vec<Candidate>,
    /// PEs missing in each shortfall.
    missing: Vec<u32>,
    /// For each candidate, the shortfalls it holds PEs in.
    covers: Vec<Vec<usize>>,
}

impl Contention {
    /// A contention for `request` given the free PEs and the preemptable leases. At instant `t` the free PEs are the
    /// largest `pes` of the `free` slots containing `t` (none: 0), so `free` may be the profile's constant pieces or
    /// its maximal free rectangles ([`LocalScheduler::free_slots`]).
    ///
    /// # Panics
    /// If the window is empty, a lease is listed twice, or a candidate holds no VM or is not preemptable.
    pub fn new(request: &ReservationRequest, free: &[Slot], mut candidates: Vec<Candidate>) -> Self {
        assert!(request.start < request.end, "empty request window [{}, {})", request.start, request.end);
        candidates.sort_by_key(|c| c.lease);
        assert!(candidates.windows(2).all(|w| w[0].lease != w[1].lease), "a lease is listed twice");
        assert!(
            candidates.iter().all(|c| c.vms > 0 && c.lease_type.preemption().is_some()),
            "candidates must be preemptable leases holding VMs"
        );
        let inside = |t: &SimTime| (request.start..=request.end).contains(t);
        let mut cuts: Vec<SimTime> = [request.start, request.end]
            .into_iter()
            .chain(free.iter().flat_map(|s| [s.start, s.end]).filter(inside))
            .chain(candidates.iter().flat_map(|c| [c.start, c.end]).filter(inside))
            .collect();
        cuts.sort();
        cuts.dedup();
        let mut missing = Vec::new();
        let mut covers = vec![Vec::new(); candidates.len()];
        for piece in cuts.windows(2) {
            let (from, to) = (piece[0], piece[1]);
            let free_pes = free.iter().filter(|s| s.start <= from && to <= s.end).map(|s| s.pes).max().unwrap_or(0);
            let short = request.pes.saturating_sub(free_pes);
            if short == 0 {
                continue;
            }
            for (candidate, covered) in candidates.iter().zip(&mut covers) {
                if candidate.start <= from && to <= candidate.end {
                    covered.push(missing.len());
                }
            }
            missing.push(short);
        }
        Self { candidates, missing, covers }
    }

    /// The contention of a local `request` at `now` in a scheduler's plan as it stands, before any pending pass (where
    /// [`LocalScheduler::reserve_preempting`] places the request; after the pass a lease it starts would hold PEs
    /// without being a candidate): the free PEs of its profile and, as candidates, the running leases and the queued
    /// leases holding a reservation whose windows overlap the request and whose `terms` make them preemptable
    /// (`None`: not preemptable). A running lease's overhead is
    /// `model`'s; a queued one costs nothing, as it has no VMs to act on. Queued leases without a reservation hold
    /// no PEs and are left out. PEs are counted cluster-wide, which is exact for a single partition.
    ///
    /// A lease whose terms carry a deadline (a migratable lease that can only resume here) is a candidate only if,
    /// restarted once the request's window ends, at the earliest the plan allows a run of its remaining time plus
    /// the overhead, it still finishes by its deadline: the thesis's migratable lease "will be resumed and finished
    /// before its deadline" (Amini Salehi 2012, §3.2.1). The plan still holds the lease's own PEs and those of the
    /// other leases preempted with it, so the test errs on the side of the deadline.
    pub fn from_scheduler(
        scheduler: &LocalScheduler,
        now: SimTime,
        request: &ReservationRequest,
        model: &OverheadModel,
        terms: impl Fn(JobId) -> Option<LeaseTerms>,
    ) -> Self {
        let candidate = |lease: JobId, vms: u32, holding: Holding, start: SimTime, end: SimTime| {
            if !(start < request.end && request.start < end) {
                return None;
            }
            let LeaseTerms { lease_type, memory_mb, deadline } = terms(lease)?;
            let kind = lease_type.preemption()?;
            let overhead = match holding {
                Holding::Running => model.overhead(kind, vms, memory_mb),
                Holding::Reserved => 0.0,
            };
            if let Some(deadline) = deadline {
                let run = end - start + overhead;
                let resume = scheduler.earliest_start_after(now, request.end, vms, run, None).ok()?;
                if resume + run > deadline {
                    return None;
                }
            }
            Some(Candidate { lease, vms, lease_type, holding, start, end, overhead })
        };
        let running = scheduler.running().filter_map(|r| candidate(r.id, r.pes, Holding::Running, now, r.end));
        let reserved = scheduler.waiting().filter_map(|job| {
            let start = scheduler.planned_start_as_planned(job.id)?;
            candidate(job.id, job.pes, Holding::Reserved, start, start + job.estimate)
        });
        let candidates = running.chain(reserved).collect();
        let free = scheduler
            .free_slots_as_planned(now, request.end - now, None)
            .expect("the whole cluster always has a profile");
        Self::new(request, &free, candidates)
    }

    /// PEs the request lacks at the worst instant of its window even if every candidate were preempted: what only
    /// more capacity can supply.
    pub fn uncovered(&self) -> u32 {
        let mut cover = vec![0u32; self.missing.len()];
        for (candidate, covered) in self.candidates.iter().zip(&self.covers) {
            covered.iter().for_each(|&s| cover[s] += candidate.vms);
        }
        self.missing.iter().zip(&cover).map(|(&m, &c)| m.saturating_sub(c)).max().unwrap_or(0)
    }

    /// The candidates, by lease id.
    pub fn candidates(&self) -> &[Candidate] {
        &self.candidates
    }

    /// The candidates of `set`, in its order.
    pub fn members<'a>(&'a self, set: &'a CandidateSet) -> impl Iterator<Item = &'a Candidate> + 'a {
        set.members.iter().map(|&i| &self.candidates[i])
    }

    /// Every minimal candidate set, in lexicographic order of lease ids: `[]` if preempting every candidate is not
    /// enough, `[{}]` if the request fits without preemption.
    ///
    /// Depth-first search that decides for each candidate in turn to take it or not. A branch stops as soon as its
    /// set is feasible (any extension has a redundant lease) or when the remaining candidates cannot make up some
    /// shortfall, and a candidate is taken only if it holds PEs in a shortfall still open (otherwise it would be
    /// redundant in every extension). A feasible set is kept if no member is redundant. With `n` candidates and `r`
    /// shortfalls (`r ≤ 2n + 2·|free| + 1`) a step costs O(r), a kept set O(n·r), and there are at most `2^(n+1)`
    /// steps: the number of minimal sets itself can reach `C(n, n/2)` (n one-VM leases, n/2 VMs missing). [`SearchLimits`] caps the
    /// steps; on [`SearchLimitExceeded`] a caller can fall back to a greedy policy, O(n log n + n·r).
    pub fn minimal_sets(&self, limits: SearchLimits) -> Result<Vec<CandidateSet>, SearchLimitExceeded> {
        let mut sets = Vec::new();
        self.search(limits, |members, overhead| sets.push(CandidateSet { members: members.to_vec(), overhead }))?;
        Ok(sets)
    }

    /// Calls `visit` with the members and overhead of every minimal set, in the order of
    /// [`minimal_sets`](Self::minimal_sets), keeping none: a policy keeps what it needs.
    fn search(&self, limits: SearchLimits, visit: impl FnMut(&[usize], f64)) -> Result<(), SearchLimitExceeded> {
        let n = self.candidates.len();
        // reach[i][s]: PEs candidates i.. could give back in shortfall s.
        let mut reach = vec![vec![0; self.missing.len()]; n + 1];
        for i in (0..n).rev() {
            reach[i] = reach[i + 1].clone();
            for &s in &self.covers[i] {
                reach[i][s] += self.candidates[i].vms;
            }
        }
        let mut search =
            Search { contention: self, reach, limits, steps: 0, cover: Cover::new(self), chosen: Vec::new(), visit };
        search.visit(0)
    }

    /// Takes candidates in `order` (ties: by lease id), skipping those that hold no PEs in an open shortfall, until
    /// the request fits; `None` if it never does.
    fn greedy(&self, order: impl Fn(&Candidate, &Candidate) -> Ordering) -> Option<CandidateSet> {
        let mut ranked: Vec<usize> = (0..self.candidates.len()).collect();
        ranked.sort_by(|&a, &b| order(&self.candidates[a], &self.candidates[b]));
        let mut cover = Cover::new(self);
        let mut members = Vec::new();
        for i in ranked {
            if cover.open == 0 {
                break;
            }
            if cover.helps(self, i) {
                cover.take(self, i);
                members.push(i);
            }
        }
        (cover.open == 0).then(|| self.set(members))
    }

    fn set(&self, members: Vec<usize>) -> CandidateSet {
        let overhead = members.iter().map(|&i| self.candidates[i].overhead).sum();
        CandidateSet { members, overhead }
    }
}

/// PEs a set of candidates gives back in each shortfall.
struct Cover {
    given: Vec<u32>,
    /// Shortfalls not yet made up.
    open: usize,
}

impl Cover {
    fn new(contention: &Contention) -> Self {
        Self { given: vec![0; contention.missing.len()], open: contention.missing.len() }
    }

    fn helps(&self, contention: &Contention, i: usize) -> bool {
        contention.covers[i].iter().any(|&s| self.given[s] < contention.missing[s])
    }

    fn take(&mut self, contention: &Contention, i: usize) {
        for &s in &contention.covers[i] {
            let before = self.given[s];
            self.given[s] += contention.candidates[i].vms;
            if before < contention.missing[s] && self.given[s] >= contention.missing[s] {
                self.open -= 1;
            }
        }
    }

    fn untake(&mut self, contention: &Contention, i: usize) {
        for &s in &contention.covers[i] {
            let before = self.given[s];
            self.given[s] -= contention.candidates[i].vms;
            if before >= contention.missing[s] && self.given[s] < contention.missing[s] {
                self.open += 1;
            }
        }
    }

    /// Whether the set stays feasible without candidate `i`.
    fn redundant(&self, contention: &Contention, i: usize) -> bool {
        let vms = contention.candidates[i].vms;
        contention.covers[i].iter().all(|&s| self.given[s] - vms >= contention.missing[s])
    }
}

/// State of [`Contention::search`].
struct Search<'a, V> {
    contention: &'a Contention,
    reach: Vec<Vec<u32>>,
    limits: SearchLimits,
    steps: u64,
    cover: Cover,
    chosen: Vec<usize>,
    visit: V,
}

impl<V: FnMut(&[usize], f64)> Search<'_, V> {
    fn visit(&mut self, next: usize) -> Result<(), SearchLimitExceeded> {
        let contention = self.contention;
        self.steps += 1;
        if self.steps > self.limits.max_steps {
            return Err(SearchLimitExceeded {
                candidates: contention.candidates.len(),
                max_steps: self.limits.max_steps,
            });
        }
        if self.cover.open == 0 {
            if !self.chosen.iter().any(|&i| self.cover.redundant(contention, i)) {
                let overhead = self.chosen.iter().map(|&i| contention.candidates[i].overhead).sum();
                (self.visit)(&self.chosen, overhead);
            }
            return Ok(());
        }
        let reach = &self.reach[next];
        if next == contention.candidates.len()
            || self.cover.given.iter().zip(reach).zip(&contention.missing).any(|((&g, &r), &m)| g + r < m)
        {
            return Ok(());
        }
        if self.cover.helps(contention, next) {
            self.cover.take(contention, next);
            self.chosen.push(next);
            self.visit(next + 1)?;
            self.chosen.pop();
            self.cover.untake(contention, next);
        }
        self.visit(next + 1)
    }
}

/// Compares overheads, equal within [`OVERHEAD_TIE`].
fn cmp_overhead(a: f64, b: f64) -> Ordering {
    if (a - b).abs() <= OVERHEAD_TIE { Ordering::Equal } else { a.total_cmp(&b) }
}

/// What a policy compares sets by: their number of leases and their overhead.
type Key = (usize, f64);

fn key(set: &CandidateSet) -> Key {
    (set.members.len(), set.overhead)
}

/// Lower overhead.
fn by_overhead(a: Key, b: Key) -> Ordering {
    cmp_overhead(a.1, b.1)
}

/// Fewer leases, then lower overhead.
fn by_leases_then_overhead(a: Key, b: Key) -> Ordering {
    a.0.cmp(&b.0).then_with(|| cmp_overhead(a.1, b.1))
}

/// The first of the sets offered that no later one beats under `order`, kept with what `offer` makes of it.
struct Best<T> {
    order: fn(Key, Key) -> Ordering,
    best: Option<(Key, T)>,
}

impl<T> Best<T> {
    fn new(order: fn(Key, Key) -> Ordering) -> Self {
        Self { order, best: None }
    }

    fn offer(&mut self, key: Key, make: impl FnOnce() -> T) {
        if self.best.as_ref().is_none_or(|(b, _)| (self.order)(key, *b).is_lt()) {
            self.best = Some((key, make()));
        }
    }
}

/// Index of the first of the `eligible` sets that no later one beats under `order`.
fn first_best(
    sets: &[CandidateSet],
    eligible: impl Fn(&CandidateSet) -> bool,
    order: fn(Key, Key) -> Ordering,
) -> Option<usize> {
    let mut best = Best::new(order);
    for (i, set) in sets.iter().enumerate().filter(|(_, set)| eligible(set)) {
        best.offer(key(set), || i);
    }
    best.best.map(|(_, i)| i)
}

/// MOV, Minimum Overhead Value (Eq 3.8): the set with the least overhead; ties go to the first.
pub fn mov(sets: &[CandidateSet]) -> Option<usize> {
    first_best(sets, |_| true, by_overhead)
}

/// MLIP, Minimum Leases Involved in Preemption (Eq 3.9): the set with the fewest leases; ties go to the lower
/// overhead, then to the first.
pub fn mlip(sets: &[CandidateSet]) -> Option<usize> {
    first_best(sets, |_| true, by_leases_then_overhead)
}

/// MOML, Minimum Overhead Minimum Lease (Algorithm 1): among the sets whose overhead is at most the median
/// ([`median_overhead`], the threshold `α`), the one with the fewest leases; ties go to the lower overhead, then to
/// the first.
pub fn moml(sets: &[CandidateSet]) -> Option<usize> {
    let alpha = median_overhead(sets)?;
    first_best(sets, |set| set.overhead <= alpha + OVERHEAD_TIE, by_leases_then_overhead)
}

/// Median of the sets' overheads, MOML's threshold `α` (the mean of the two middle values for an even count);
/// `None` without sets.
pub fn median_overhead(sets: &[CandidateSet]) -> Option<f64> {
    median(sets.iter().map(|s| s.overhead).collect())
}

fn median(mut overheads: Vec<f64>) -> Option<f64> {
    overheads.sort_by(f64::total_cmp);
    let mid = overheads.len() / 2;
    match overheads.len() {
        0 => None,
        n if n % 2 == 1 => Some(overheads[mid]),
        _ => Some((overheads[mid - 1] + overheads[mid]) / 2.0),
    }
}

/// How a provider resolves a contention between a local request and external leases; deserialises from "nop",
/// "mov", "mlip", "moml", "greedy-mov", "greedy-mlip" and "type-aware".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PreemptionPolicy {
    /// NOP, no preemption: a local request that does not fit is rejected.
    Nop,
    /// MOV, Minimum Overhead Value: the minimal set with the least overhead ([`mov`]).
    Mov,
    /// MLIP, Minimum Leases Involved in Preemption: the minimal set with the fewest leases ([`mlip`]).
    Mlip,
    /// MOML, Minimum Overhead Minimum Lease: the fewest leases among the minimal sets with at most the median
    /// overhead ([`moml`]).
    Moml,
    /// The prototype's MOV: preempt leases in ascending order of overhead (ties: more VMs first, as they free more
    /// for the same overhead, then lease id).
    GreedyMov,
    /// The prototype's MLIP ("naïve"): preempt the largest leases first regardless of overhead (ties: lease id).
    GreedyMlip,
    /// Amini Salehi (2012) ch4's type-aware local scheduler: preempt best-effort leases (cancellable, suspendable)
    /// before deadline-constrained ones (migratable), "more valuable" leases only when the others are not enough; the
    /// prototype's MOV order within a class.
    TypeAware,
}

/// The class of a candidate for the type-aware policy: best effort (0) before deadline-constrained (1).
fn value_class(lease_type: LeaseType) -> u8 {
    u8::from(!matches!(lease_type, LeaseType::Cancellable | LeaseType::Suspendable))
}

impl PreemptionPolicy {
    /// The leases to preempt so that the local request fits, or `None` to reject it. A request that fits without
    /// preemption gets the empty set from every policy. Only the exact policies search, and may fail.
    pub fn select(
        self,
        contention: &Contention,
        limits: SearchLimits,
    ) -> Result<Option<CandidateSet>, SearchLimitExceeded> {
        // The exact policies keep only the best set found so far, not every minimal set: there can be as many as
        // search steps ([`SearchLimits`]). MOML's threshold is the median of all overheads, so it searches twice,
        // keeping 8 bytes a set the first time.
        let (order, threshold): (fn(Key, Key) -> Ordering, f64) = match self {
            PreemptionPolicy::Nop => return Ok(contention.missing.is_empty().then(CandidateSet::default)),
            PreemptionPolicy::GreedyMov => {
                return Ok(contention.greedy(|a, b| a.overhead.total_cmp(&b.overhead).then(b.vms.cmp(&a.vms))));
            }
            PreemptionPolicy::GreedyMlip => return Ok(contention.greedy(|a, b| b.vms.cmp(&a.vms))),
            PreemptionPolicy::TypeAware => {
                return Ok(contention.greedy(|a, b| {
                    value_class(a.lease_type)
                        .cmp(&value_class(b.lease_type))
                        .then(a.overhead.total_cmp(&b.overhead))
                        .then(b.vms.cmp(&a.vms))
                }));
            }
            PreemptionPolicy::Mov => (by_overhead, f64::INFINITY),
            PreemptionPolicy::Mlip => (by_leases_then_overhead, f64::INFINITY),
            PreemptionPolicy::Moml => {
                let mut overheads = Vec::new();
                contention.search(limits, |_, overhead| overheads.push(overhead))?;
                let Some(alpha) = median(overheads) else { return Ok(None) };
                (by_leases_then_overhead, alpha + OVERHEAD_TIE)
            }
        };
        let mut best = Best::new(order);
        contention.search(limits, |members, overhead| {
            if overhead <= threshold {
                best.offer((members.len(), overhead), || members.to_vec());
            }
        })?;
        Ok(best.best.map(|(_, members)| contention.set(members)))
    }
}

#[cfg(test)]
mod tests {
    use rand::{RngExt, SeedableRng};
    use rand_pcg::Pcg64;

    use super::super::overhead::{OverheadParams, SharedStorage};
    use super::super::scheduler::{QueuedJob, Rejected, SchedulerPolicy};
    use super::*;
    use PreemptionPolicy::{GreedyMlip, GreedyMov, Mlip, Moml, Mov, Nop};

    /// Lease ids of a set, in its order.
    fn leases(contention: &Contention, set: &CandidateSet) -> Vec<JobId> {
        contention.members(set).map(|c| c.lease).collect()
    }

    fn select(policy: PreemptionPolicy, contention: &Contention) -> Option<(Vec<JobId>, f64)> {
        let set = policy.select(contention, SearchLimits::default()).unwrap()?;
        Some((leases(contention, &set), set.overhead))
    }

    fn assert_choice(policy: PreemptionPolicy, contention: &Contention, expected: &[JobId], overhead: f64) {
        let (chosen, h) = select(policy, contention).unwrap_or_else(|| panic!("{policy:?} rejected"));
        assert_eq!(chosen, expected, "{policy:?}");
        assert!((h - overhead).abs() < 0.005, "{policy:?}: overhead {h}, expected {overhead}");
    }

    fn t(secs: f64) -> SimTime {
        SimTime::new(secs).unwrap()
    }

    fn job(id: JobId, pes: u32, estimate: f64) -> QueuedJob {
        QueuedJob { id, submit: SimTime::ZERO, pes, estimate, partition: None, priority: 0 }
    }

    fn local(start: f64, end: f64, pes: u32) -> ReservationRequest {
        ReservationRequest { start: t(start), end: t(end), pes, partition: None }
    }

    /// Table 7.1 on the prototype's 12 PEs: leases 1–6 (external, suspendable) at their arrival times, then the
    /// local request 7 for 5 VMs over [00:12:00, +3600 s), with the GlusterFS overhead model.
    fn table_7_1() -> (LocalScheduler, ReservationRequest, Contention) {
        let leases = PROTOTYPE_LEASES;
        let mut scheduler = LocalScheduler::new(SchedulerPolicy::Conservative, 12);
        for &(id, arrival, vms, _, duration) in &leases {
            let started = scheduler.submit(t(arrival), job(id, vms, duration)).unwrap();
            assert_eq!(started.len(), 1, "lease {id} starts on arrival");
        }
        let request = local(720.0, 720.0 + 3600.0, 5);
        assert_eq!(scheduler.reserve(t(720.0), request), Err(Rejected::Unavailable), "all 12 PEs are busy");
        let model = OverheadModel::SharedStorage(SharedStorage::PROTOTYPE);
        let terms = |id: JobId| {
            let &(.., memory_mb, _) = leases.iter().find(|l| l.0 == id)?;
            Some(LeaseTerms { lease_type: LeaseType::Suspendable, memory_mb, deadline: None })
        };
        let contention = Contention::from_scheduler(&scheduler, t(720.0), &request, &model, terms);
        (scheduler, request, contention)
    }

    #[test]
    fn table_7_1_candidates_and_minimal_sets() {
        let (_, _, contention) = table_7_1();
        let overheads: Vec<(JobId, f64)> = contention.candidates().iter().map(|c| (c.lease, c.overhead)).collect();
        let expected = [(1, 38.4), (2, 6.4), (3, 12.8), (4, 12.8), (5, 6.4), (6, 19.2)];
        for (&(lease, h), (id, want)) in overheads.iter().zip(expected) {
            assert_eq!(lease, id);
            assert!((h - want).abs() < 1e-9, "lease {id}: {h}");
        }
        // Leases 1, 5 and 6 end inside the request window; the windows still leave the same nine sets.
        let ends: Vec<f64> = contention.candidates().iter().map(|c| c.end.secs()).collect();
        assert_eq!(ends, [3600.0, 5700.0, 5760.0, 5880.0, 2930.0, 4180.0]);
        assert!(contention.candidates().iter().all(|c| c.start == t(720.0) && c.holding == Holding::Running));

        let sets = contention.minimal_sets(SearchLimits::default()).unwrap();
        let listed: Vec<(Vec<JobId>, f64)> = sets.iter().map(|s| (leases(&contention, s), s.overhead)).collect();
        let expected: [(&[JobId], f64); 9] = [
            (&[1, 2, 4], 57.6),
            (&[1, 3], 51.2),
            (&[1, 5], 44.8),
            (&[1, 6], 57.6),
            (&[2, 3, 5], 25.6),
            (&[2, 4, 6], 38.4),
            (&[3, 4, 5], 32.0),
            (&[3, 6], 32.0),
            (&[5, 6], 25.6),
        ];
        assert_eq!(listed.len(), expected.len());
        for ((set, h), (want, want_h)) in listed.iter().zip(expected) {
            assert_eq!(set, want);
            assert!((h - want_h).abs() < 1e-9, "{set:?}: {h}");
        }
        assert!((median_overhead(&sets).unwrap() - 38.4).abs() < 1e-9);
    }

    #[test]
    fn table_7_2_policies() {
        let (_, _, contention) = table_7_1();
        assert_eq!(select(Nop, &contention), None, "NOP rejects request 7");
        assert_choice(Moml, &contention, &[5, 6], 25.6);
        // MOV ties {2, 3, 5} with {5, 6} at 25.6 s; the first in enumeration order wins. The prototype's greedy
        // order gives the same set, in the order Table 7.2 prints it.
        assert_choice(Mov, &contention, &[2, 3, 5], 25.6);
        assert_choice(GreedyMov, &contention, &[5, 2, 3], 25.6);
        // Table 7.2's MLIP {1, 6} is the prototype's largest-first order. Eq 3.9 with the lower overhead among the
        // five two-lease sets gives {5, 6} instead.
        assert_choice(GreedyMlip, &contention, &[1, 6], 57.6);
        assert_choice(Mlip, &contention, &[5, 6], 25.6);
    }

    #[test]
    fn preempting_the_moml_set_serves_the_local_request_on_time() {
        let (mut scheduler, request, contention) = table_7_1();
        let set = Moml.select(&contention, SearchLimits::default()).unwrap().unwrap();
        let victims = leases(&contention, &set);
        let preempted = scheduler.reserve_preempting(t(720.0), request, &victims).unwrap();
        let evicted: Vec<(JobId, f64)> = preempted.evicted.iter().map(|j| (j.id, j.estimate)).collect();
        assert_eq!(evicted, [(5, 2210.0), (6, 3460.0)], "remaining work of the suspended leases");
        assert!(preempted.started.is_empty());
    }

    /// A local request arriving with a pass pending: a reservation that ended early this instant freed 2 of 4 PEs,
    /// which the pass would give the queued lease 2. The contention is counted in the plan as it stands, where
    /// `reserve_preempting` places the request: the freed PEs plus the running lease 1 make room. (Counted in the
    /// plan after the pass, lease 2 would hold the freed PEs without being a candidate, and nothing could.)
    #[test]
    fn contention_with_a_pass_pending_is_counted_in_the_plan_as_it_stands() {
        let mut scheduler = LocalScheduler::new(SchedulerPolicy::Conservative, 4);
        let held = scheduler.reserve(SimTime::ZERO, local(0.0, 500.0, 2)).unwrap();
        scheduler.submit(SimTime::ZERO, job(1, 2, 1000.0)).unwrap();
        scheduler.submit(SimTime::ZERO, job(2, 2, 100.0)).unwrap();
        assert_eq!(scheduler.planned_start(2), Some(t(500.0)));
        scheduler.defer_passes();
        assert!(scheduler.cancel_reservation(t(100.0), held).unwrap().is_empty());
        // After the pending pass lease 2 runs: no planned start, and not among the running jobs either, yet.
        assert_eq!(scheduler.planned_start(2), None);
        assert_eq!(scheduler.planned_start_as_planned(2), Some(t(500.0)));

        let request = local(100.0, 400.0, 4);
        let model = OverheadModel::Thesis(OverheadParams::THESIS);
        let terms = |_| Some(LeaseTerms { lease_type: LeaseType::Suspendable, memory_mb: 1024.0, deadline: None });
        let contention = Contention::from_scheduler(&scheduler, t(100.0), &request, &model, terms);
        let set = Mov.select(&contention, SearchLimits::default()).unwrap().expect("preempting lease 1 makes room");
        let victims = leases(&contention, &set);
        assert_eq!(victims, [1]);
        let preempted = scheduler.reserve_preempting(t(100.0), request, &victims).unwrap();
        assert_eq!(preempted.evicted.iter().map(|j| j.id).collect::<Vec<_>>(), [1]);
        assert!(scheduler.pass(t(100.0)).is_empty());
        assert_eq!(scheduler.planned_start(2), Some(t(400.0)), "lease 2 waits for the local request's end");
    }

    /// 14 PEs, all busy over [0, 100): lease 1 (4 VMs) ends at 40, when the queued lease 2 (4 VMs) is planned to
    /// start; leases 3–7 run throughout. A local request for 4 VMs over [0, 100).
    fn hand_made() -> (LocalScheduler, ReservationRequest, Contention) {
        // (id, VMs, estimate, type), submitted at 0 in this order so that lease 2 has to wait.
        let leases = [
            (1, 4, 40.0, LeaseType::Suspendable),
            (3, 4, 200.0, LeaseType::Migratable),
            (4, 2, 200.0, LeaseType::Cancellable),
            (5, 2, 200.0, LeaseType::Suspendable),
            (6, 1, 200.0, LeaseType::Cancellable),
            (7, 1, 200.0, LeaseType::Suspendable),
            (2, 4, 100.0, LeaseType::Suspendable),
        ];
        let mut scheduler = LocalScheduler::new(SchedulerPolicy::Conservative, 14);
        for &(id, vms, estimate, _) in &leases {
            scheduler.submit(SimTime::ZERO, job(id, vms, estimate)).unwrap();
        }
        assert_eq!(scheduler.planned_start(2), Some(t(40.0)));
        let request = local(0.0, 100.0, 4);
        let model = OverheadModel::Thesis(OverheadParams::THESIS);
        let terms = |id: JobId| {
            let &(.., lease_type) = leases.iter().find(|l| l.0 == id)?;
            Some(LeaseTerms { lease_type, memory_mb: 1024.0, deadline: None })
        };
        let contention = Contention::from_scheduler(&scheduler, SimTime::ZERO, &request, &model, terms);
        (scheduler, request, contention)
    }

    #[test]
    fn hand_made_case_separates_the_policies() {
        let (mut scheduler, request, contention) = hand_made();
        let queued = contention.candidates()[1];
        assert_eq!((queued.lease, queued.holding, queued.start, queued.end), (2, Holding::Reserved, t(40.0), t(140.0)));
        assert_eq!(queued.overhead, 0.0, "a queued lease has no VMs to suspend");

        let sets = contention.minimal_sets(SearchLimits::default()).unwrap();
        let listed: Vec<Vec<JobId>> = sets.iter().map(|s| leases(&contention, s)).collect();
        assert_eq!(listed, [vec![1, 2], vec![3], vec![4, 5], vec![4, 6, 7], vec![5, 6, 7]]);
        // h: suspendable 4 VMs 1150.80 + queued 0; migratable 4 VMs; cancellable 0 + suspendable 2 VMs; 0 + 0 +
        // suspendable 1 VM; 576.55 + 0 + 289.42.
        let overheads: Vec<f64> = sets.iter().map(|s| (s.overhead * 100.0).round() / 100.0).collect();
        assert_eq!(overheads, [1150.80, 1413.27, 576.55, 289.42, 865.97]);
        assert!((median_overhead(&sets).unwrap() - 865.97).abs() < 0.005);

        assert_eq!(select(Nop, &contention), None);
        assert_choice(Mov, &contention, &[4, 6, 7], 289.42);
        assert_choice(Mlip, &contention, &[3], 1413.27);
        assert_choice(Moml, &contention, &[4, 5], 576.55);
        // Greedy MOV takes the free queued lease 2 first, which the later picks make redundant.
        assert_choice(GreedyMov, &contention, &[2, 4, 6, 7], 289.42);
        // Greedy MLIP takes lease 1, which covers only [0, 40), and then needs lease 2 for [40, 100).
        assert_choice(GreedyMlip, &contention, &[1, 2], 1150.80);

        let moml = Moml.select(&contention, SearchLimits::default()).unwrap().unwrap();
        let preempted = scheduler.reserve_preempting(SimTime::ZERO, request, &leases(&contention, &moml)).unwrap();
        assert_eq!(preempted.evicted.iter().map(|j| j.id).collect::<Vec<_>>(), [4, 5]);
    }

    #[test]
    fn local_and_non_preemptable_leases_are_never_candidates() {
        let mut scheduler = LocalScheduler::new(SchedulerPolicy::Conservative, 4);
        for (id, pes) in [(1, 2), (2, 1), (3, 1)] {
            scheduler.submit(SimTime::ZERO, job(id, pes, 50.0)).unwrap();
        }
        let terms = |id: JobId| {
            let lease_type = [LeaseType::Local, LeaseType::NonPreemptable, LeaseType::Cancellable][id as usize - 1];
            Some(LeaseTerms { lease_type, memory_mb: 1024.0, deadline: None })
        };
        let model = OverheadModel::default();
        let contention = Contention::from_scheduler(&scheduler, t(10.0), &local(10.0, 20.0, 2), &model, terms);
        assert_eq!(contention.candidates().iter().map(|c| c.lease).collect::<Vec<_>>(), [3]);
        assert_eq!(contention.minimal_sets(SearchLimits::default()).unwrap(), []);
        for policy in [Nop, Mov, Mlip, Moml, GreedyMov, GreedyMlip] {
            assert_eq!(select(policy, &contention), None, "{policy:?}: one preemptable VM cannot make up two");
        }
        let fits = Contention::from_scheduler(&scheduler, t(10.0), &local(50.0, 60.0, 4), &model, terms);
        assert_eq!(fits.minimal_sets(SearchLimits::default()).unwrap(), [CandidateSet::default()]);
        for policy in [Nop, Mov, Mlip, Moml, GreedyMov, GreedyMlip] {
            assert_eq!(select(policy, &fits), Some((vec![], 0.0)), "{policy:?}: no preemption needed after 50");
        }
    }

    #[test]
    fn a_migratable_lease_that_must_stay_is_a_candidate_only_if_it_keeps_its_deadline() {
        // 4 PEs: a migratable and a cancellable lease of 2 VMs each run from 0 to 100; a local request for 2 VMs
        // over [10, 40). Preempted at 10, the migratable lease has 90 s left plus 770.84 s of overhead, and the plan
        // (which still holds both leases' PEs until 100) lets it restart at 100: it would end at 960.84.
        let mut scheduler = LocalScheduler::new(SchedulerPolicy::Conservative, 4);
        for id in [1, 2] {
            scheduler.submit(SimTime::ZERO, job(id, 2, 100.0)).unwrap();
        }
        let model = OverheadModel::Thesis(OverheadParams::THESIS);
        let candidates = |deadline: Option<f64>| {
            let terms = |id: JobId| {
                let (lease_type, deadline) = match id {
                    1 => (LeaseType::Migratable, deadline.map(t)),
                    _ => (LeaseType::Cancellable, None),
                };
                Some(LeaseTerms { lease_type, memory_mb: 1024.0, deadline })
            };
            let contention = Contention::from_scheduler(&scheduler, t(10.0), &local(10.0, 40.0, 2), &model, terms);
            contention.candidates().iter().map(|c| c.lease).collect::<Vec<_>>()
        };
        assert_eq!(candidates(None), [1, 2], "a lease that can move elsewhere");
        assert_eq!(candidates(Some(961.0)), [1, 2]);
        assert_eq!(candidates(Some(960.0)), [2], "it would end at 960.84, past its deadline");
    }

    #[test]
    fn choices_among_given_sets() {
        let set = |n: usize, overhead: f64| CandidateSet { members: (0..n).collect(), overhead };
        let sets = [set(2, 10.0), set(1, 30.0), set(3, 5.0), set(2, 10.0 + 1e-12), set(4, 5.0)];
        assert_eq!(mov(&sets), Some(2), "5.0 twice: the first");
        assert_eq!(mlip(&sets), Some(1));
        assert_eq!(median_overhead(&sets), Some(10.0));
        assert_eq!(moml(&sets), Some(0), "two leases at 10 s (set 3 ties within a microsecond)");
        let even = [set(1, 4.0), set(1, 9.0), set(1, 1.0), set(1, 6.0)];
        assert_eq!(median_overhead(&even), Some(5.0), "mean of the middle two");
        for choose in [mov, mlip, moml] {
            assert_eq!(choose(&[]), None);
        }
        assert_eq!(median_overhead(&[]), None);
    }

    /// Free PEs at `at` [s]: the largest slot containing it.
    fn free_at(free: &[Slot], at: f64) -> u32 {
        free.iter().filter(|s| s.start.secs() <= at && at < s.end.secs()).map(|s| s.pes).max().unwrap_or(0)
    }

    /// A random window of 1 to 6 s starting in [0, 10).
    fn window(rng: &mut Pcg64) -> (SimTime, SimTime) {
        let start = f64::from(rng.random_range(0..10u32));
        (t(start), t(start + f64::from(rng.random_range(1..7u32))))
    }

    #[test]
    fn enumeration_matches_brute_force() {
        let mut rng = Pcg64::seed_from_u64(7);
        for case in 0..400 {
            let request = local(2.0, 8.0, rng.random_range(1..=6));
            let free: Vec<Slot> = (0..rng.random_range(0..3))
                .map(|_| {
                    let (start, end) = window(&mut rng);
                    Slot { start, end, pes: rng.random_range(0..4) }
                })
                .collect();
            let n = rng.random_range(0..=8u64);
            let candidates: Vec<Candidate> = (0..n)
                .map(|i| {
                    let (start, end) = window(&mut rng);
                    Candidate {
                        lease: 100 - i,
                        vms: rng.random_range(1..=4),
                        lease_type: LeaseType::Suspendable,
                        holding: Holding::Running,
                        start,
                        end,
                        overhead: f64::from(rng.random_range(0..5u32)),
                    }
                })
                .collect();
            let contention = Contention::new(&request, &free, candidates);
            let cands = contention.candidates();
            assert!(cands.windows(2).all(|w| w[0].lease < w[1].lease), "sorted by lease id");

            // Feasibility by evaluating every elementary piece of the window at its midpoint (in seconds).
            let mut times: Vec<f64> = [request.start, request.end]
                .into_iter()
                .chain(free.iter().flat_map(|s| [s.start, s.end]))
                .chain(cands.iter().flat_map(|c| [c.start, c.end]))
                .filter(|t| (request.start..=request.end).contains(t))
                .map(SimTime::secs)
                .collect();
            times.sort_by(f64::total_cmp);
            times.dedup();
            let feasible = |mask: u32| {
                times.windows(2).map(|w| (w[0] + w[1]) / 2.0).all(|t| {
                    let given: u32 = (0..cands.len())
                        .filter(|&i| mask & (1 << i) != 0 && cands[i].start.secs() <= t && t < cands[i].end.secs())
                        .map(|i| cands[i].vms)
                        .sum();
                    free_at(&free, t) + given >= request.pes
                })
            };
            let members = |mask: u32| (0..cands.len()).filter(|&i| mask & (1 << i) != 0).collect::<Vec<_>>();
            let mut minimal: Vec<Vec<usize>> = (0..1u32 << cands.len())
                .filter(|&mask| feasible(mask) && members(mask).iter().all(|&i| !feasible(mask & !(1 << i))))
                .map(members)
                .collect();
            minimal.sort();

            let sets = contention.minimal_sets(SearchLimits::default()).unwrap();
            let found: Vec<Vec<usize>> = sets.iter().map(|s| s.members.clone()).collect();
            assert_eq!(found, minimal, "case {case}");
            // Keeping only the best set while searching chooses what choosing among all of them does.
            for (policy, choose) in [(Mov, mov as fn(&[CandidateSet]) -> Option<usize>), (Mlip, mlip), (Moml, moml)] {
                let kept = policy.select(&contention, SearchLimits::default()).unwrap();
                assert_eq!(kept, choose(&sets).map(|i| sets[i].clone()), "case {case}, {policy:?}");
            }
            for policy in [GreedyMov, GreedyMlip] {
                let greedy = policy.select(&contention, SearchLimits::default()).unwrap();
                assert_eq!(greedy.is_some(), !minimal.is_empty(), "case {case}, {policy:?}");
                if let Some(set) = greedy {
                    assert!(feasible(set.members.iter().map(|&i| 1 << i).sum()), "case {case}, {policy:?}");
                }
            }
        }
    }

    #[test]
    fn type_aware_takes_best_effort_leases_first() {
        // A migratable lease with the least overhead, suspendable ones dearer, a cancellable one free: 4 VMs missing.
        let lease = |lease: JobId, vms: u32, lease_type: LeaseType, overhead: f64| Candidate {
            lease,
            vms,
            lease_type,
            holding: Holding::Running,
            start: SimTime::ZERO,
            end: t(10.0),
            overhead,
        };
        let candidates = vec![
            lease(1, 4, LeaseType::Migratable, 5.0),
            lease(2, 2, LeaseType::Suspendable, 300.0),
            lease(3, 1, LeaseType::Cancellable, 0.0),
            lease(4, 2, LeaseType::Suspendable, 200.0),
        ];
        let contention = Contention::new(&local(0.0, 10.0, 4), &[], candidates.clone());
        // MOV would preempt the migratable lease alone; type-aware frees the 4 VMs from best-effort leases, cheapest
        // first: 3 (free), 4, then 2.
        assert_choice(Mov, &contention, &[1], 5.0);
        assert_choice(PreemptionPolicy::TypeAware, &contention, &[3, 4, 2], 500.0);
        // Not enough best-effort VMs: the migratable lease too.
        let contention = Contention::new(&local(0.0, 10.0, 8), &[], candidates);
        let (chosen, _) = select(PreemptionPolicy::TypeAware, &contention).unwrap();
        assert_eq!(chosen, [3, 4, 2, 1]);
    }

    #[test]
    fn uncovered_is_what_preempting_every_candidate_still_leaves_missing_at_the_worst_instant() {
        // 4 PEs over [0, 10): one free throughout, a 2-VM lease the only candidate, holding PEs over [0, 5); the
        // rest is held by what cannot be preempted. Missing 3 throughout: 1 after the lease in [0, 5), 3 in [5, 10).
        let lease = Candidate {
            lease: 1,
            vms: 2,
            lease_type: LeaseType::Suspendable,
            holding: Holding::Running,
            start: SimTime::ZERO,
            end: t(5.0),
            overhead: 1.0,
        };
        let free = [Slot { start: SimTime::ZERO, end: t(10.0), pes: 1 }];
        assert_eq!(Contention::new(&local(0.0, 10.0, 4), &free, vec![lease]).uncovered(), 3);
        assert_eq!(Contention::new(&local(0.0, 5.0, 4), &free, vec![lease]).uncovered(), 1);
        assert_eq!(Contention::new(&local(0.0, 5.0, 3), &free, vec![lease]).uncovered(), 0);
        assert_eq!(Contention::new(&local(0.0, 5.0, 1), &free, Vec::new()).uncovered(), 0, "fits");
    }

    #[test]
    fn search_limit_guards_the_combinatorial_explosion() {
        // n one-VM leases and n/2 VMs missing: C(n, n/2) minimal sets.
        let contention = |n: u64| {
            let candidates = (0..n)
                .map(|lease| Candidate {
                    lease,
                    vms: 1,
                    lease_type: LeaseType::Cancellable,
                    holding: Holding::Running,
                    start: SimTime::ZERO,
                    end: t(10.0),
                    overhead: 0.0,
                })
                .collect();
            Contention::new(&local(0.0, 10.0, n as u32 / 2), &[], candidates)
        };
        assert_eq!(contention(16).minimal_sets(SearchLimits::default()).unwrap().len(), 12_870);
        // 2.7 million sets; a lower limit than the default keeps the test fast.
        let huge = contention(24);
        let limits = SearchLimits { max_steps: 100_000 };
        let exceeded = SearchLimitExceeded { candidates: 24, max_steps: 100_000 };
        assert_eq!(huge.minimal_sets(limits), Err(exceeded));
        assert_eq!(Moml.select(&huge, limits), Err(exceeded));
        let greedy = GreedyMov.select(&huge, limits).unwrap().unwrap();
        assert_eq!(greedy.members, (0..12).collect::<Vec<_>>(), "the greedy fallback stays linear");
    }

    #[test]
    fn config_names() {
        let names: Vec<String> = [Nop, Mov, Mlip, Moml, GreedyMov, GreedyMlip, PreemptionPolicy::TypeAware]
            .iter()
            .map(|p| serde_json::to_value(p).unwrap().as_str().unwrap().to_owned())
            .collect();
        assert_eq!(names, ["nop", "mov", "mlip", "moml", "greedy-mov", "greedy-mlip", "type-aware"]);
    }
}
