//! The Any Schedulability (AS) criterion (Majumdar 2009, "The Any Schedulability criterion for Providing QoS
//! Guarantees through Advance Reservation Requests"), exactly as Melendez (2010) §3.1 prints it.
//!
//! A set of requests meets every deadline under *any* work-conserving policy if, for each request i,
//!
//! ```text
//! L_i ≥ Σ_{j≠i} [ X1(i,j)·min(E_j, D_j − S_i) + X2(i,j)·E_j ]
//! ```
//!
//! where j overlaps i when S_j < D_i and S_i < D_j (windows that only touch do not), X2 = 1 when j's window
//! encloses i's (S_j < S_i and D_j ≥ D_i) and X1 = 1 for every other overlapping j. The test is sufficient, not
//! necessary: it needs no knowledge of the resource's policy, which is what lets an opaque broker use resources it
//! cannot simulate.

use super::Request;

/// How much of i's laxity j can take: 0 when their windows do not overlap.
fn demand(i: &Request, j: &Request) -> f64 {
    if !(j.start < i.deadline && i.start < j.deadline) {
        return 0.0;
    }
    if j.start < i.start && j.deadline >= i.deadline {
        // X2: j encloses i.
        j.service
    } else {
        // X1, cases (a), (b) and (c).
        j.service.min(j.deadline - i.start)
    }
}

/// Whether request `i`'s inequality holds against the others of `set` (by id, so `i` may be in `set`).
fn holds(i: &Request, set: &[Request]) -> bool {
    let laxity = i.laxity();
    if laxity < 0.0 {
        return false;
    }
    let mut sum = 0.0;
    for j in set.iter().filter(|j| j.id != i.id) {
        sum += demand(i, j);
        if sum > laxity {
            return false;
        }
    }
    true
}

/// The full check: every request's inequality, over `existing` plus `candidate` (O(n²)).
pub fn schedulable(existing: &[Request], candidate: &Request) -> bool {
    let mut set = existing.to_vec();
    set.push(*candidate);
    set.iter().all(|i| holds(i, &set))
}

/// The incremental check: the candidate's inequality and those of the existing requests its window overlaps
/// (O(n)). It decides as [`schedulable`] does whenever `existing` is itself any-schedulable, as it always is when
/// every request entered through the test (only OD requests, which enter without it, can make the two differ).
pub fn schedulable_incremental(existing: &[Request], candidate: &Request) -> bool {
    let mut set = existing.to_vec();
    set.push(*candidate);
    holds(candidate, &set) && existing.iter().filter(|i| demand(i, candidate) > 0.0).all(|i| holds(i, &set))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::AgentId;

    fn set(reqs: &[(f64, f64, f64)]) -> Vec<Request> {
        reqs.iter()
            .enumerate()
            .map(|(k, &(start, service, deadline))| Request {
                id: k as u64,
                source: AgentId(0),
                on_demand: false,
                arrival: 0.0,
                start,
                service,
                deadline,
                rewrite_laxity: 0.0,
            })
            .collect()
    }

    /// Melendez (2010) §3.1's vectors, (S, E, D) in minutes: existing set, candidate, accepted.
    #[test]
    fn the_thesis_test_vectors() {
        type Triple = (f64, f64, f64);
        let vectors: [(&[Triple], Triple, bool); 9] = [
            (&[], (0., 50., 150.), true),
            (&[(0., 50., 150.)], (60., 50., 210.), true),
            (&[(0., 50., 150.), (60., 50., 210.)], (20., 80., 300.), false),
            (&[(100., 50., 250.)], (0., 90., 400.), true),
            (&[(100., 50., 250.), (0., 90., 400.)], (120., 20., 240.), false),
            (&[(0., 80., 100.)], (90., 30., 150.), false),
            (&[(0., 90., 190.), (190., 90., 290.)], (290., 90., 390.), true),
            (&[(0., 50., 150.)], (0., 100., 300.), true),
            (&[], (0., 100., 90.), false),
        ];
        for (n, (existing, candidate, expected)) in vectors.into_iter().enumerate() {
            let mut all = existing.to_vec();
            all.push(candidate);
            let all = set(&all);
            let (candidate, existing) = all.split_last().unwrap();
            assert_eq!(schedulable(existing, candidate), expected, "vector {}", n + 1);
            assert_eq!(schedulable_incremental(existing, candidate), expected, "vector {} (incremental)", n + 1);
        }
    }

    #[test]
    fn the_cases_take_what_the_thesis_says() {
        let r = set(&[(60., 50., 210.), (0., 50., 150.), (100., 50., 250.), (0., 90., 400.)]);
        // (a): j starts before i and ends inside its window: min(E_j, D_j − S_i).
        assert_eq!(demand(&r[0], &r[1]), 50.0);
        let tight = set(&[(60., 50., 210.), (0., 80., 100.)]);
        assert_eq!(demand(&tight[0], &tight[1]), 40.0);
        // X2: j encloses i.
        assert_eq!(demand(&r[2], &r[3]), 90.0);
        // No overlap when windows only touch.
        let touch = set(&[(0., 90., 190.), (190., 90., 290.)]);
        assert_eq!(demand(&touch[0], &touch[1]), 0.0);
    }

    #[test]
    fn incremental_and_full_checks_agree_on_any_schedulable_sets() {
        use rand::{RngExt, SeedableRng};
        let mut rng = crate::sim::rng::SimRng::seed_from_u64(7);
        for _ in 0..200 {
            let mut existing: Vec<Request> = Vec::new();
            for k in 0..30u64 {
                let start = rng.random_range(0.0..500.0);
                let service = rng.random_range(1.0..90.0);
                let mut c = set(&[(start, service, start + service + rng.random_range(1.0..200.0))])[0];
                c.id = k;
                let full = schedulable(&existing, &c);
                assert_eq!(full, schedulable_incremental(&existing, &c));
                if full {
                    existing.push(c);
                }
            }
        }
    }
}
