//! A resource's timetable: one CPU, non-preemptive, each accepted request given a slot [start, start + E) with
//! start ≥ S (Melendez 2010 §3.2), kept until it completes.
//!
//! Slots are of three sorts: the running request's; fixed slots, which stay where they were placed (requests that
//! modified EDF put into an earlier idle slot, out of deadline order, and on-demand requests); and the chain, the
//! requests kept in policy order (EDF: by deadline; ESF: by earliest start; ties by arrival), planned one after the
//! other around the fixed slots and planned again at every insertion. A request is accepted only if the new plan
//! meets its deadline and every other one's, so an accepted request never misses its deadline.
//!
//! The transparent broker runs [`Timetable::insert`] on a copy of the resource's timetable: the resource then makes
//! exactly the insertion the broker simulated.

use serde::{Deserialize, Serialize};

use super::{EPSILON, EdfPlacement, LocalPolicy, Request};

/// A request and its planned start \[s\].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Slot {
    /// The request.
    pub request: Request,
    /// When it starts \[s\].
    pub start: f64,
}

impl Slot {
    /// When it ends \[s\].
    pub fn end(&self) -> f64 {
        self.start + self.request.service
    }
}

/// One CPU's plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timetable {
    policy: LocalPolicy,
    placement: EdfPlacement,
    running: Option<Slot>,
    fixed: Vec<Slot>,
    chain: Vec<Slot>,
}

/// The earliest start s ≥ `from` of `length` that overlaps none of `busy` (sorted by start, not overlapping).
fn earliest_fit(busy: &[(f64, f64)], from: f64, length: f64) -> f64 {
    let mut s = from;
    for &(b0, b1) in busy {
        if b1 <= s + EPSILON {
            continue;
        }
        if b0 + EPSILON >= s + length {
            break;
        }
        s = b1;
    }
    s
}

impl Timetable {
    /// An empty timetable run by `policy`.
    pub fn new(policy: LocalPolicy) -> Timetable {
        Timetable { policy, placement: EdfPlacement::Literal, running: None, fixed: Vec::new(), chain: Vec::new() }
    }

    /// The same, with modified EDF accepting by `placement` (no effect on ESF).
    pub fn with_placement(self, placement: EdfPlacement) -> Timetable {
        Timetable { placement, ..self }
    }

    /// Its policy.
    pub fn policy(&self) -> LocalPolicy {
        self.policy
    }

    /// The request running, with its slot.
    pub fn running(&self) -> Option<&Slot> {
        self.running.as_ref()
    }

    /// Every request accepted and not completed, the running one first, with their slots.
    pub fn slots(&self) -> impl Iterator<Item = &Slot> {
        self.running.iter().chain(&self.fixed).chain(&self.chain)
    }

    /// Every request accepted and not completed (with an OD request's rewritten S and D).
    pub fn requests(&self) -> Vec<Request> {
        self.slots().map(|s| s.request).collect()
    }

    /// The intervals of `slots`, sorted by start.
    fn busy<'a>(slots: impl Iterator<Item = &'a Slot>) -> Vec<(f64, f64)> {
        let mut busy: Vec<(f64, f64)> = slots.map(|s| (s.start, s.end())).collect();
        busy.sort_by(|a, b| a.0.total_cmp(&b.0));
        busy
    }

    /// The chain with `extra` planned anew at `now`, or `None` if a deadline would be missed.
    fn plan_chain(&self, now: f64, extra: &Request) -> Option<Vec<Slot>> {
        let fixed = Self::busy(self.running.iter().chain(&self.fixed));
        let mut requests: Vec<Request> = self.chain.iter().map(|s| s.request).chain([*extra]).collect();
        match self.policy {
            LocalPolicy::Edf => requests.sort_by(|a, b| a.deadline.total_cmp(&b.deadline).then(a.id.cmp(&b.id))),
            LocalPolicy::Esf => requests.sort_by(|a, b| a.start.total_cmp(&b.start).then(a.id.cmp(&b.id))),
        }
        let mut t = self.running.map_or(now, |r| r.end().max(now));
        let mut plan = Vec::with_capacity(requests.len());
        for r in requests {
            let start = earliest_fit(&fixed, t.max(r.start), r.service);
            if start + r.service > r.deadline + EPSILON {
                return None;
            }
            t = start + r.service;
            plan.push(Slot { request: r, start });
        }
        Some(plan)
    }

    /// Inserts the advance reservation `request` at `now` by the policy, returning its slot, or says why not.
    ///
    /// Modified EDF (Melendez 2010 §3.2.1) first checks that the deadline order stays feasible with the request;
    /// then, if an idle slot of the current plan earlier than its place in that order holds it, it takes that slot
    /// (out of deadline order, leaving the others where they are); otherwise the deadline order is adopted. With
    /// [`EdfPlacement::Either`] an idle slot that holds it is taken even when the deadline order is not feasible.
    /// ESF (§3.2.2) inserts by earliest start and accepts when every deadline is met.
    pub fn insert(&mut self, now: f64, request: Request) -> Result<Slot, String> {
        if let Some(why) = request.invalid() {
            return Err(why);
        }
        let plan = self.plan_chain(now, &request);
        let planned = plan.as_ref().map(|p| *p.iter().find(|s| s.request.id == request.id).expect("it is planned"));
        if self.policy == LocalPolicy::Edf && (planned.is_some() || self.placement == EdfPlacement::Either) {
            let gap = earliest_fit(&Self::busy(self.slots()), request.start.max(now), request.service);
            let earlier = planned.is_none_or(|p| gap < p.start - EPSILON);
            if gap + request.service <= request.deadline + EPSILON && earlier {
                let slot = Slot { request, start: gap };
                self.fixed.push(slot);
                return Ok(slot);
            }
        }
        match (plan, planned) {
            (Some(plan), Some(planned)) => {
                self.chain = plan;
                Ok(planned)
            }
            _ => Err(format!("request {}: the {:?} timetable would miss a deadline", request.id, self.policy)),
        }
    }

    /// Inserts the on-demand `request` at `now`: it takes the earliest idle slot from its earliest start and keeps it,
    /// so it never delays another request and is never refused. Its S becomes that start and its D that start plus E
    /// plus its `rewrite_laxity` (Melendez 2010 §3.4), the window an AS broker sees from then on.
    pub fn insert_on_demand(&mut self, now: f64, mut request: Request) -> Slot {
        let start = earliest_fit(&Self::busy(self.slots()), request.start.max(now), request.service);
        request.start = start;
        request.deadline = start + request.service + request.rewrite_laxity;
        let slot = Slot { request, start };
        self.fixed.push(slot);
        slot
    }

    /// When something next happens: the running request ends, or the next planned one starts.
    pub fn next_event(&self) -> Option<f64> {
        match self.running {
            Some(r) => Some(r.end()),
            None => self.fixed.iter().chain(&self.chain).map(|s| s.start).min_by(f64::total_cmp),
        }
    }

    /// Brings the timetable to `now`: completes the running request if it has ended and starts the next one if it is
    /// due. Returns the requests completed, with their slots.
    pub fn advance(&mut self, now: f64) -> Vec<Slot> {
        let mut done = Vec::new();
        loop {
            if let Some(r) = self.running {
                if r.end() > now + EPSILON {
                    return done;
                }
                done.push(r);
                self.running = None;
            }
            let next = self.fixed.iter().chain(&self.chain).map(|s| s.start).min_by(f64::total_cmp);
            match next {
                Some(start) if start <= now + EPSILON => {
                    let slot = match self.fixed.iter().position(|s| s.start == start) {
                        Some(k) => self.fixed.remove(k),
                        None => {
                            let k = self.chain.iter().position(|s| s.start == start).expect("a planned start");
                            self.chain.remove(k)
                        }
                    };
                    self.running = Some(slot);
                }
                _ => return done,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matchmaking::any_schedulability;
    use crate::sim::AgentId;

    fn req(id: u64, start: f64, service: f64, deadline: f64) -> Request {
        Request {
            id,
            source: AgentId(0),
            on_demand: false,
            arrival: 0.0,
            start,
            service,
            deadline,
            rewrite_laxity: 0.0,
        }
    }

    fn starts(t: &Timetable) -> Vec<(u64, f64)> {
        let mut s: Vec<(u64, f64)> = t.slots().map(|s| (s.request.id, s.start)).collect();
        s.sort_by(|a, b| a.1.total_cmp(&b.1));
        s
    }

    /// A hand-worked modified-EDF timetable, all requests arriving at 0: (S, E, D) per request.
    #[test]
    fn edf_fills_an_earlier_gap_and_otherwise_keeps_deadline_order() {
        let mut t = Timetable::new(LocalPolicy::Edf);
        // A: alone, at its earliest start.
        assert_eq!(t.insert(0.0, req(1, 100.0, 50.0, 200.0)).unwrap().start, 100.0);
        // B: deadline order puts it after A, at 150; the idle [0, 60) is earlier, so it is filled.
        assert_eq!(t.insert(0.0, req(2, 0.0, 60.0, 400.0)).unwrap().start, 0.0);
        // C: after A in deadline order (150); the earliest idle slot long enough is also 150: deadline order.
        assert_eq!(t.insert(0.0, req(3, 0.0, 60.0, 300.0)).unwrap().start, 150.0);
        // D: earliest deadline, first of the chain once B's fixed slot ends.
        assert_eq!(t.insert(0.0, req(4, 0.0, 30.0, 140.0)).unwrap().start, 60.0);
        // E: deadline order D, E, A, C pushes A to 140 and C to 190, all in time.
        assert_eq!(t.insert(0.0, req(5, 0.0, 50.0, 160.0)).unwrap().start, 90.0);
        assert_eq!(starts(&t), [(2, 0.0), (4, 60.0), (5, 90.0), (1, 140.0), (3, 190.0)]);
        // F: in deadline order E would end at 180 > 160: refused, nothing moves.
        assert!(t.insert(0.0, req(6, 0.0, 40.0, 150.0)).is_err());
        assert_eq!(starts(&t), [(2, 0.0), (4, 60.0), (5, 90.0), (1, 140.0), (3, 190.0)]);
        // Time runs: B at 0, done at 60 when D starts.
        assert!(t.advance(0.0).is_empty());
        assert_eq!(t.next_event(), Some(60.0));
        let done = t.advance(60.0);
        assert_eq!(done.iter().map(|s| s.request.id).collect::<Vec<_>>(), [2]);
        assert_eq!(t.running.map(|r| r.request.id), Some(4));
    }

    /// Where the two readings of modified EDF part: R (S 0, E 100, D 150) holds [0, 100); N (S 50, E 20, D 140) comes
    /// first in deadline order, at 50, and would push R to end at 170 > 150, yet the idle [100, 120) holds N in time.
    #[test]
    fn edf_either_placement_takes_an_idle_slot_the_literal_reading_refuses() {
        let (r, n) = (req(1, 0.0, 100.0, 150.0), req(2, 50.0, 20.0, 140.0));
        let mut literal = Timetable::new(LocalPolicy::Edf);
        assert_eq!(literal.insert(0.0, r).unwrap().start, 0.0);
        assert!(literal.insert(0.0, n).is_err());
        assert_eq!(starts(&literal), [(1, 0.0)]);
        let mut either = Timetable::new(LocalPolicy::Edf).with_placement(EdfPlacement::Either);
        assert_eq!(either.insert(0.0, r).unwrap().start, 0.0);
        assert_eq!(either.insert(0.0, n).unwrap().start, 100.0);
        assert_eq!(starts(&either), [(1, 0.0), (2, 100.0)]);
        // Both run to completion in their windows.
        let done: Vec<Slot> = [100.0, 120.0].iter().flat_map(|&t| either.advance(t)).collect();
        assert!(done.iter().all(|s| s.end() <= s.request.deadline + EPSILON && s.start >= s.request.start));
        assert_eq!(done.len(), 2);
        // Where the deadline order is feasible the two readings agree (the hand-worked test above, A and B).
        for placement in [EdfPlacement::Literal, EdfPlacement::Either] {
            let mut t = Timetable::new(LocalPolicy::Edf).with_placement(placement);
            t.insert(0.0, req(1, 100.0, 50.0, 200.0)).unwrap();
            assert_eq!(t.insert(0.0, req(2, 0.0, 60.0, 400.0)).unwrap().start, 0.0);
        }
    }

    #[test]
    fn esf_runs_by_earliest_start_and_refuses_what_would_miss() {
        let mut t = Timetable::new(LocalPolicy::Esf);
        assert_eq!(t.insert(0.0, req(1, 100.0, 50.0, 200.0)).unwrap().start, 100.0);
        // No gap filling, but ESF order puts B (S = 0) first anyway.
        assert_eq!(t.insert(0.0, req(2, 0.0, 60.0, 400.0)).unwrap().start, 0.0);
        // S = 90 goes between B and A, which stays at 100.
        assert_eq!(t.insert(0.0, req(3, 90.0, 10.0, 130.0)).unwrap().start, 90.0);
        assert_eq!(starts(&t), [(2, 0.0), (3, 90.0), (1, 100.0)]);
        // S = 80, E = 60 goes before C, which would end at 150, after its deadline 130.
        assert!(t.insert(0.0, req(4, 80.0, 60.0, 400.0)).is_err());
    }

    #[test]
    fn an_on_demand_request_takes_the_earliest_idle_slot_and_gets_its_window_rewritten() {
        let mut t = Timetable::new(LocalPolicy::Edf);
        t.insert(0.0, req(1, 30.0, 50.0, 200.0)).unwrap();
        let mut od = req(2, 10.0, 40.0, 1e9);
        od.on_demand = true;
        od.rewrite_laxity = 100.0;
        // [10, 50) collides with [30, 80): the first idle slot of 40 from 10 starts at 80.
        let slot = t.insert_on_demand(10.0, od);
        assert_eq!(slot.start, 80.0);
        assert_eq!((slot.request.start, slot.request.deadline), (80.0, 80.0 + 40.0 + 100.0));
        assert_eq!(t.requests().iter().find(|r| r.id == 2).unwrap().deadline, 220.0);
    }

    /// An any-schedulable set meets every deadline under any work-conserving policy: the resource's own insertion
    /// never refuses what an AS broker accepted.
    #[test]
    fn the_timetables_accept_whatever_the_as_test_accepts() {
        use rand::{RngExt, SeedableRng};
        let mut rng = crate::sim::rng::SimRng::seed_from_u64(11);
        let kinds = [(LocalPolicy::Edf, EdfPlacement::Literal), (LocalPolicy::Edf, EdfPlacement::Either)];
        for (policy, placement) in kinds.into_iter().chain([(LocalPolicy::Esf, EdfPlacement::Literal)]) {
            for _ in 0..100 {
                let mut t = Timetable::new(policy).with_placement(placement);
                let mut now = 0.0;
                for id in 0..60u64 {
                    now += rng.random_range(0.0..30.0);
                    for s in t.advance(now) {
                        assert!(s.end() <= s.request.deadline + EPSILON);
                    }
                    let start = now + rng.random_range(0.0..300.0);
                    let service = rng.random_range(10.0..90.0);
                    let r = req(id, start, service, start + service + 100.0);
                    if any_schedulability::schedulable(&t.requests(), &r) {
                        assert!(t.insert(now, r).is_ok(), "{policy:?} refused AS-accepted request {id}");
                    }
                }
            }
        }
    }
}
