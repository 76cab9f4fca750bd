//! Meta-broker policies beyond the thesis's: a [`MetaPolicy`] places one application at a time.
//!
//! The thesis's policies ([`SchedulingPolicy`]) each compute a joint schedule of the round.
//! A [`MetaPolicy`] is simpler to write: [`place_each`] takes the applications first come, first served (the order of
//! greedy), lists for each the sites that can still take it whole ([`Candidate`]s: in time for its deadline and the
//! site's window, within its budget, with enough CPUs left this round), and asks the policy to choose one or none.
//! None rolls the application over to the next interval, as the dummy provider of the thesis does. A policy is
//! registered by name (`Registry::with_meta_policy`) and chosen in a scenario with `policy = "<name>"`; with
//! `offers = "profiles"` the trade-off meta-broker of chapter 5 runs it instead, on the sites' free profiles
//! (`tradeoff::heuristics::allocate_each`).

use super::SchedulingPolicy;
use super::dam::AuctionPolicy;
use super::energy::mapping::MappingPolicy;
use super::greedy::arrival_order;
use super::model::{App, Problem, Schedule};
use super::tradeoff::heuristics::Heuristic;
use crate::registry::{Registry, serde_name};

/// A meta-broker policy that places one application at a time: where it goes among the sites that can take it.
///
/// A policy is a pure function of the application and its candidates, so it can be unit-tested on its own, and the
/// meta-broker's runs stay a function of the scenario and the seed.
pub trait MetaPolicy: Send + Sync {
    /// Its name in scenario files (`policy = "..."`), in kebab-case, not one of the thesis's.
    fn name(&self) -> &'static str;
    /// One line for `gridmarket list`.
    fn about(&self) -> &'static str;
    /// Where `app` goes: one of `candidates` (never empty, cheapest first, ties by lower site index), or `None` to
    /// roll it over to the next interval.
    fn choose<'c>(&self, app: &App, candidates: &'c [Candidate]) -> Option<&'c Candidate>;
}

crate::registry::by_name!(dyn MetaPolicy);

impl Registry {
    /// Adds `policy`, which scenarios then name in a meta-broker's `policy`.
    ///
    /// # Panics
    /// If its name is one of the thesis's policies (Garg 2010, ch 3–7) or another registered policy's.
    pub fn with_meta_policy(self, policy: &'static dyn MetaPolicy) -> Registry {
        let name = policy.name();
        let thesis = SchedulingPolicy::ALL.iter().map(serde_name);
        let thesis =
            thesis.chain(AuctionPolicy::ALL.iter().map(serde_name)).chain(Heuristic::ALL.iter().map(serde_name));
        let thesis = thesis.chain(MappingPolicy::ALL.iter().map(serde_name));
        let taken = thesis.into_iter().any(|t| t == name) || self.policy::<dyn MetaPolicy>(name).is_some();
        assert!(!taken, "the meta-broker policy name `{name}` is taken");
        self.with_policy(name, policy.about(), policy)
    }
}

/// What a meta-broker runs every round: a policy of the thesis, `T` being its family's (chapters 3–4, 5, 6 or 7), or
/// a registered [`MetaPolicy`], which places one application at a time among the family's candidates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FamilyPolicy<T> {
    /// One of the thesis's policies of the family.
    Thesis(T),
    /// A policy added to the registry.
    Each(&'static dyn MetaPolicy),
}

impl<T> From<&'static dyn MetaPolicy> for FamilyPolicy<T> {
    fn from(policy: &'static dyn MetaPolicy) -> FamilyPolicy<T> {
        FamilyPolicy::Each(policy)
    }
}

/// A site that can take an application whole this round, and what the application would get there.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    /// Index of the site in the snapshot's sites.
    pub site: usize,
    /// CPUs of the site still free this round, after the applications placed before this one (at least the
    /// application's).
    pub free: u32,
    /// The site's price [G$ per CPU-second].
    pub price: f64,
    /// Speed of one of its CPUs relative to the reference CPU.
    pub speed: f64,
    /// When the application would start there \[s\].
    pub start: f64,
    /// When it would finish there \[s\].
    pub finish: f64,
    /// What the whole application would cost there [G$]: CPUs × price × runtime / speed.
    pub cost: f64,
    /// On the data centres of Garg (2010) ch6, what it would emit and earn there; none elsewhere.
    pub footprint: Option<Footprint>,
}

/// What an application would emit and earn on a data centre of Garg (2010) ch6, at the frequency the data centre's
/// DVS policy would run it at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Footprint {
    /// The carbon it would emit, CO2E \[kg\] (Eq 6.6).
    pub carbon: f64,
    /// The data centre's profit, Prof [$] (Eq 6.9).
    pub profit: f64,
}

/// The schedule that places the applications of `problem` first come, first served, each whole on the site `policy`
/// chooses among its candidates (or rolled over when there is none, or the policy declines).
pub fn place_each(problem: &Problem, policy: &dyn MetaPolicy) -> Schedule {
    let snapshot = problem.snapshot();
    let mut free: Vec<u32> = (0..problem.sites()).map(|site| problem.capacity(site)).collect();
    let mut choice = vec![None; problem.apps()];
    let mut candidates = Vec::new();
    for app in arrival_order(problem) {
        let cpus = problem.cpus(app);
        candidates.clear();
        candidates.extend(problem.site_options(app).iter().filter(|o| cpus <= free[o.site]).map(|o| {
            let site = &snapshot.sites[o.site];
            Candidate {
                site: o.site,
                free: free[o.site],
                price: site.price,
                speed: site.speed,
                start: o.start,
                finish: o.finish,
                cost: f64::from(cpus) * o.task_cost,
                footprint: None,
            }
        }));
        if candidates.is_empty() {
            continue;
        }
        if let Some(chosen) = policy.choose(&snapshot.apps[app], &candidates) {
            free[chosen.site] -= cpus;
            choice[app] = Some(chosen.site);
        }
    }
    problem.sgn_schedule(&choice, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metabroker::model::{QosIndex, Site, Snapshot};
    use crate::metabroker::tests::{app, hand_snapshot, site};
    use crate::metabroker::{greedy, greedy_by};

    /// The first candidate: the cheapest, which is greedy by cost.
    struct Cheapest;

    impl MetaPolicy for Cheapest {
        fn name(&self) -> &'static str {
            "cheapest"
        }
        fn about(&self) -> &'static str {
            "the cheapest site"
        }
        fn choose<'c>(&self, _: &App, candidates: &'c [Candidate]) -> Option<&'c Candidate> {
            candidates.first()
        }
    }

    /// The candidate that finishes first.
    struct EarliestFinish;

    impl MetaPolicy for EarliestFinish {
        fn name(&self) -> &'static str {
            "earliest-finish"
        }
        fn about(&self) -> &'static str {
            "the site that finishes first"
        }
        fn choose<'c>(&self, _: &App, candidates: &'c [Candidate]) -> Option<&'c Candidate> {
            candidates.iter().min_by(|a, b| a.finish.total_cmp(&b.finish))
        }
    }

    /// Declines everything.
    struct Nowhere;

    impl MetaPolicy for Nowhere {
        fn name(&self) -> &'static str {
            "nowhere"
        }
        fn about(&self) -> &'static str {
            "rolls everything over"
        }
        fn choose<'c>(&self, _: &App, _: &'c [Candidate]) -> Option<&'c Candidate> {
            None
        }
    }

    #[test]
    fn the_cheapest_candidate_is_greedy() {
        let snapshot = hand_snapshot();
        let problem = Problem::new(&snapshot, QosIndex::FairMarket);
        assert_eq!(place_each(&problem, &Cheapest), greedy(&problem));
    }

    #[test]
    fn candidates_have_room_and_the_choice_is_kept() {
        // Two 2-CPU applications, a cheap slow site of 2 CPUs and a dear fast one of 4: the first goes to the fast
        // site, the second still finds both (2 CPUs left on each) and also takes the fast one.
        let fast = Site { speed: 2.0, ..site(1, 4, 3.0) };
        let snapshot = Snapshot {
            now: 0.0,
            apps: vec![app(0, 2, 10.0, None, 0.0), app(1, 2, 10.0, None, 1.0)],
            sites: vec![site(0, 2, 1.0), fast],
        };
        let problem = Problem::new(&snapshot, QosIndex::FairMarket);
        let schedule = place_each(&problem, &EarliestFinish);
        assert_eq!(schedule.sites(), vec![Some(1), Some(1)]);
        assert_eq!(schedule.assignments[0].parts[0].finish, 5.0);
        assert_eq!(greedy_by(&problem, crate::metabroker::GreedyRank::Cost).sites(), vec![Some(0), Some(1)]);
        assert_eq!(place_each(&problem, &Nowhere), problem.all_dummy());
    }
}
