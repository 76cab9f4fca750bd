//! MMC = Modified MinCost (thesis §4.2.2, Algorithm 4.1): turns the MGN relaxation into a feasible SGN schedule.
//!
//! Inspired by the Minimum Cost method of the transportation problem, MMC starts from the relaxation's mapping
//! (which sites host how many CPUs of each application) and makes every application whole on one site:
//!
//! 1. Applications are sorted by how many sites the relaxation spread them over, fewest first (line 2), stably
//!    over the QoS priority order (Alg. 4.2 sorts the queue by QoS index before calling MMC).
//! 2. An application on one site keeps it: its CPUs there are committed (lines 4–6).
//! 3. A split application moves whole to the most economical of its own sites that still has room beyond the CPUs
//!    already committed there (lines 9–13). Applications the relaxation had put on that site are displaced, lowest
//!    priority first, into the CPUs the moved application vacated elsewhere, where their deadline and budget allow;
//!    what does not fit goes to the dummy provider (InterchangeCapacity, line 14).
//! 4. An application none of its sites can take goes to the dummy provider (line 19).
//! 5. Dummy-provider applications are then placed greedily, highest priority first, each on the cheapest site
//!    that fits it (ScheduleDummyResJob, line 21); the rest are rolled over to the next interval.
//!
//! Our choices where the text is unclear: the room test is `remaining >= required` (the printed strict `>` would refuse
//! an exact fit); "remaining" counts only committed CPUs, since the uncommitted ones are exactly what
//! InterchangeCapacity moves; displaced CPUs go only to the moved application's former sites, as the thesis says. An
//! application on one site needs no special case: the room test always passes for it and nothing is vacated or
//! displaced.

use super::greedy::place_greedily;
use super::model::{Problem, Schedule};

/// Algorithm 4.1 on `relaxation`, an MGN schedule of `problem` (normally [`super::lp::mgn_relaxation`]'s).
///
/// Parts that are not admissible, or exceed a site's capacity or an application's CPUs, are ignored, so any
/// schedule is a valid starting point.
pub fn modified_min_cost(problem: &Problem, relaxation: &Schedule) -> Schedule {
    let n = problem.apps();
    let capacity: Vec<u32> = (0..problem.sites()).map(|site| problem.capacity(site)).collect();
    // The current mapping: per application, (site, CPUs) pairs; load counts every mapped CPU per site.
    let mut load = vec![0u32; capacity.len()];
    let mut mapping: Vec<Vec<(usize, u32)>> = vec![Vec::new(); n];
    for (app, assignment) in relaxation.assignments.iter().enumerate().take(n) {
        let mut left = problem.cpus(app);
        for part in &assignment.parts {
            if problem.site_option(app, part.site).is_none() {
                continue;
            }
            let count = part.cpus.min(left).min(capacity[part.site] - load[part.site]);
            if count > 0 {
                mapping[app].push((part.site, count));
                load[part.site] += count;
                left -= count;
            }
        }
    }

    let mut committed = vec![0u32; capacity.len()];
    let mut done = vec![false; n];
    let mut choice: Vec<Option<usize>> = vec![None; n];
    let mut list = problem.priority_order().to_vec();
    list.sort_by_key(|&app| mapping[app].len());
    for &app in &list {
        done[app] = true;
        let cpus = problem.cpus(app);
        let task_cost = |site: usize| problem.site_option(app, site).map_or(f64::INFINITY, |c| c.task_cost);
        let mut providers: Vec<usize> = mapping[app].iter().map(|&(site, _)| site).collect();
        providers.sort_by(|&a, &b| task_cost(a).total_cmp(&task_cost(b)).then(a.cmp(&b)));
        let target = providers.iter().copied().find(|&site| capacity[site] - committed[site] >= cpus);
        let mine = std::mem::take(&mut mapping[app]);
        for &(site, count) in &mine {
            load[site] -= count;
        }
        let Some(target) = target else { continue };

        // AllocateFull: the whole application on `target`.
        load[target] += cpus;
        committed[target] += cpus;
        choice[app] = Some(target);

        // InterchangeCapacity: displace uncommitted CPUs from `target` into the sites `app` vacated.
        let vacated: Vec<usize> = providers.into_iter().filter(|&site| site != target).collect();
        let mut overflow = load[target].saturating_sub(capacity[target]);
        for &victim in problem.priority_order().iter().rev() {
            if overflow == 0 {
                break;
            }
            if done[victim] {
                continue;
            }
            let Some(at) = mapping[victim].iter().position(|&(site, _)| site == target) else { continue };
            let moved = mapping[victim][at].1.min(overflow);
            mapping[victim][at].1 -= moved;
            load[target] -= moved;
            overflow -= moved;
            let mut left = moved;
            let mut destinations: Vec<(f64, usize)> = vacated
                .iter()
                .filter_map(|&site| problem.site_option(victim, site).map(|c| (c.task_cost, site)))
                .collect();
            destinations.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            for (_, site) in destinations {
                let count = left.min(capacity[site] - load[site]);
                if count == 0 {
                    continue;
                }
                match mapping[victim].iter_mut().find(|(s, _)| *s == site) {
                    Some(entry) => entry.1 += count,
                    None => mapping[victim].push((site, count)),
                }
                load[site] += count;
                left -= count;
            }
            // Whatever is left of `moved` is now on the dummy provider: the victim's mapping simply shrinks.
            mapping[victim].retain(|&(_, count)| count > 0);
        }
    }

    // ScheduleDummyResJob: every application is now committed or on the dummy, so the free CPUs are the rest.
    let mut free: Vec<u32> = capacity.iter().zip(&committed).map(|(c, used)| c - used).collect();
    let dummies: Vec<usize> = problem.priority_order().iter().copied().filter(|&app| choice[app].is_none()).collect();
    place_greedily(problem, &dummies, &mut free, &mut choice);
    problem.sgn_schedule(&choice, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metabroker::lp::{MgnSolver, mgn_relaxation};
    use crate::metabroker::model::{QosIndex, Snapshot};
    use crate::metabroker::tests::{app, assert_feasible, ch4_snapshot, hand_snapshot, site};

    #[test]
    fn hand_instance() {
        // Relaxation: A0 {S1: 3}, A1 {S0: 1, S1: 1}, A2 {S0: 3}. A0 and A2 are on one site each and keep it;
        // A1 then finds 1 free CPU on S0 and 1 on S1, needs 2, goes to the dummy and stays there.
        let snapshot = hand_snapshot();
        let problem = Problem::new(&snapshot, QosIndex::FairMarket);
        let relaxation = mgn_relaxation(&problem, MgnSolver::Transportation).unwrap();
        let mmc = modified_min_cost(&problem, &relaxation);
        let sites = mmc.sites();
        assert_eq!(sites, vec![Some(1), None, Some(0)]);
        assert_eq!(mmc.cost, 150.0);
        // A1 is the highest priority: penalty 3C = 963.
        assert_eq!(mmc.objective, 1113.0);
    }

    #[test]
    fn split_application_moves_whole_to_its_cheapest_site_with_room() {
        // S0 (price 1, 4 CPUs), S1 (price 2, 4 CPUs). B0 (2 CPUs, 10 s), B1 (3 CPUs, 30 s), B2 (2 CPUs, 20 s).
        // Relaxation: B1 {S0: 3}, B2 {S0: 1, S1: 1}, B0 {S1: 2}; B2 cannot join B1 on S0 (1 CPU left) so it
        // moves whole to S1, which the IP optimum (210) confirms.
        let snapshot = Snapshot {
            now: 0.0,
            apps: vec![app(0, 2, 10.0, None, 0.0), app(1, 3, 30.0, None, 1.0), app(2, 2, 20.0, None, 2.0)],
            sites: vec![site(0, 4, 1.0), site(1, 4, 2.0)],
        };
        let problem = Problem::new(&snapshot, QosIndex::FairMarket);
        let relaxation = mgn_relaxation(&problem, MgnSolver::Transportation).unwrap();
        assert_eq!(relaxation.cost, 190.0);
        let mmc = modified_min_cost(&problem, &relaxation);
        let sites = mmc.sites();
        assert_eq!(sites, vec![Some(1), Some(0), Some(1)]);
        assert_eq!(mmc.cost, 210.0);
        assert_eq!(mmc.objective, 210.0);
    }

    #[test]
    fn any_starting_schedule_gives_a_feasible_one() {
        for seed in 0..20 {
            let snapshot = ch4_snapshot(300 + seed, 40, 5 + seed as usize, seed % 3);
            let problem = Problem::new(&snapshot, QosIndex::FairMarket);
            // Garbage in (another snapshot's relaxation, truncated), a feasible schedule out.
            let other = ch4_snapshot(900 + seed, 25, 3, 1);
            let wrong = mgn_relaxation(&Problem::new(&other, QosIndex::FairMarket), MgnSolver::Transportation).unwrap();
            assert_feasible(&problem, &modified_min_cost(&problem, &wrong), true);
        }
    }
}
