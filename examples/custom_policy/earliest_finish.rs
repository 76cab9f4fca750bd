//! A meta-broker policy of our own: each job on the site where it finishes first.

use agents::metabroker::{App, Candidate, MetaPolicy};

/// Earliest finish: each job on the site where it would finish first, whatever it costs there (on a tie, the
/// cheaper site: candidates come cheapest first, and `min_by` keeps the first of equals).
pub struct EarliestFinish;

impl MetaPolicy for EarliestFinish {
    fn name(&self) -> &'static str {
        "earliest-finish"
    }

    fn about(&self) -> &'static str {
        "each job on the site where it finishes first, whatever the price"
    }

    fn choose<'c>(&self, _app: &App, candidates: &'c [Candidate]) -> Option<&'c Candidate> {
        candidates.iter().min_by(|a, b| a.finish.total_cmp(&b.finish))
    }
}

#[cfg(test)]
mod tests {
    use agents::metabroker::{Problem, QosIndex, Site, Snapshot, greedy, place_each};

    use super::*;

    #[test]
    fn the_fast_dear_site_beats_the_slow_cheap_one() {
        // One job of 2 tasks × 100 s; site 0 is slow and cheap (cost 2 × 1 × 100 = 200), site 1 twice as fast at
        // three times the price (cost 2 × 3 × 100 / 2 = 300).
        let app = App { id: 0, cpus: 2, runtime: 100.0, budget: None, deadline: None, submit: 0.0 };
        let slow = Site { id: 0, cpus: 4, speed: 1.0, price: 1.0, from: 0.0, until: None };
        let fast = Site { id: 1, speed: 2.0, price: 3.0, ..slow.clone() };
        let snapshot = Snapshot { now: 0.0, apps: vec![app], sites: vec![slow, fast] };
        let problem = Problem::new(&snapshot, QosIndex::FairMarket);
        let schedule = place_each(&problem, &EarliestFinish);
        assert_eq!(schedule.sites(), vec![Some(1)]);
        assert_eq!((schedule.cost, schedule.assignments[0].parts[0].finish), (300.0, 50.0));
        assert_eq!(greedy(&problem).sites(), vec![Some(0)], "greedy takes the cheapest");
    }
}
