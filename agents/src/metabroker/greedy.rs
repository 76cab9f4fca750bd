//! Greedy meta-scheduling, the thesis's baseline (chapter 3 §3.3 and chapter 4 §4.3.1): cheapest feasible first.
//!
//! Applications are taken first come, first served (\[INTERP\]: earlier submission, then lower id, then lower index)
//! and each goes whole to the cheapest site that still has its CPUs free and meets its deadline and budget; an
//! application no site can take is rolled over (the dummy provider).

use super::model::{Problem, Schedule};

/// The greedy schedule of `problem`.
pub fn greedy(problem: &Problem) -> Schedule {
    let apps = &problem.snapshot().apps;
    let mut order: Vec<usize> = (0..problem.apps()).collect();
    order.sort_by(|&a, &b| apps[a].submit.total_cmp(&apps[b].submit).then(apps[a].id.cmp(&apps[b].id)).then(a.cmp(&b)));
    let mut free: Vec<u32> = (0..problem.sites()).map(|site| problem.capacity(site)).collect();
    let mut choice = vec![None; problem.apps()];
    place_greedily(problem, &order, &mut free, &mut choice);
    problem.sgn_schedule(&choice, None)
}

/// Places each application of `order`, in turn, whole on its cheapest admissible site with enough `free` CPUs,
/// recording the site in `choice` and taking the CPUs from `free`.
pub(crate) fn place_greedily(problem: &Problem, order: &[usize], free: &mut [u32], choice: &mut [Option<usize>]) {
    for &app in order {
        if let Some(c) = problem.cheapest_fit(app, free) {
            free[c.site] -= problem.cpus(app);
            choice[app] = Some(c.site);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metabroker::model::QosIndex;
    use crate::metabroker::tests::hand_snapshot;

    #[test]
    fn hand_instance() {
        // FCFS: A0 takes the cheap S0 (30, 1 CPU left), A1 no longer fits there and takes S1 (80, 2 left),
        // A2 (3 CPUs) fits nowhere and is rolled over with the lowest penalty C = 321.
        let snapshot = hand_snapshot();
        let problem = Problem::new(&snapshot, QosIndex::FairMarket);
        let schedule = greedy(&problem);
        let sites = schedule.sites();
        assert_eq!(sites, vec![Some(0), Some(1), None]);
        assert_eq!(schedule.cost, 110.0);
        assert_eq!(schedule.objective, 431.0);
        assert_eq!(schedule.assignments[2].rolled_over, 3);
    }
}
