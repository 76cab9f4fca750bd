//! Greedy meta-scheduling, the thesis's baseline (chapter 3 §3.5 and chapter 4 §4.3.1): cheapest feasible first.
//!
//! Applications are taken first come, first served (not stated in the thesis; we order by earlier submission, then
//! lower id, then lower index) and each goes whole to the cheapest site that still has its CPUs free and meets its
//! deadline and budget; an application no site can take is rolled over (the dummy provider).
//!
//! "Cheapest" has two readings ([`GreedyRank`]): the lowest cost of the application there, price × runtime / speed
//! (the default, what the objective (4.1) sums), or the lowest price per CPU-second, as chapter 3 describes the
//! policy: "each of the brokers tries to schedule an application on a resource provider with the lowest price"
//! (§3.5). They differ only when the sites' speeds differ.

use serde::{Deserialize, Serialize};

use super::model::{Problem, Schedule, SiteOption};

/// What the greedy policy ranks sites by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GreedyRank {
    /// The application's cost there: price × runtime / speed (ties: lower site index).
    #[default]
    Cost,
    /// The site's price per CPU-second (ties: lower cost, then lower site index), Garg (2010) §3.5.
    Price,
}

/// The greedy schedule of `problem`, ranking sites by cost.
pub fn greedy(problem: &Problem) -> Schedule {
    greedy_by(problem, GreedyRank::Cost)
}

/// The greedy schedule of `problem`, ranking sites by `rank`.
pub fn greedy_by(problem: &Problem, rank: GreedyRank) -> Schedule {
    let order = arrival_order(problem);
    let mut free: Vec<u32> = (0..problem.sites()).map(|site| problem.capacity(site)).collect();
    let mut choice = vec![None; problem.apps()];
    match rank {
        GreedyRank::Cost => place_greedily(problem, &order, &mut free, &mut choice),
        GreedyRank::Price => {
            let sites = &problem.snapshot().sites;
            for &app in &order {
                let cpus = problem.cpus(app);
                // Options come cheapest first, so the first of the lowest price is also the cheapest of them.
                let best = problem.site_options(app).iter().filter(|c| cpus <= free[c.site]).fold(
                    None::<&SiteOption>,
                    |best, c| match best {
                        Some(b) if sites[b.site].price <= sites[c.site].price => Some(b),
                        _ => Some(c),
                    },
                );
                if let Some(c) = best {
                    free[c.site] -= cpus;
                    choice[app] = Some(c.site);
                }
            }
        }
    }
    problem.sgn_schedule(&choice, None)
}

/// The applications of `problem` first come, first served: by submission, then id, then index.
pub(crate) fn arrival_order(problem: &Problem) -> Vec<usize> {
    let apps = &problem.snapshot().apps;
    let mut order: Vec<usize> = (0..problem.apps()).collect();
    order.sort_by(|&a, &b| apps[a].submit.total_cmp(&apps[b].submit).then(apps[a].id.cmp(&apps[b].id)).then(a.cmp(&b)));
    order
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

    #[test]
    fn price_rank_takes_the_lowest_price_not_the_lowest_cost() {
        // S0: price 1, speed 1 (task cost 10); S1: price 1.5, speed 2 (task cost 7.5). By cost A0 goes to S1, by
        // price to S0; equal prices fall back to the cost order.
        use crate::metabroker::model::{Site, Snapshot};
        use crate::metabroker::tests::{app, site};
        let fast = Site { speed: 2.0, price: 1.5, ..site(1, 4, 1.5) };
        let snapshot =
            Snapshot { now: 0.0, apps: vec![app(0, 2, 10.0, None, 0.0)], sites: vec![site(0, 4, 1.0), fast.clone()] };
        let problem = Problem::new(&snapshot, QosIndex::FairMarket);
        assert_eq!(greedy(&problem).sites(), vec![Some(1)]);
        assert_eq!(greedy_by(&problem, GreedyRank::Price).sites(), vec![Some(0)]);
        let same = Snapshot { sites: vec![site(0, 4, 1.0), Site { price: 1.0, ..fast }], ..snapshot.clone() };
        let problem = Problem::new(&same, QosIndex::FairMarket);
        assert_eq!(greedy_by(&problem, GreedyRank::Price).sites(), vec![Some(1)]);
    }
}
