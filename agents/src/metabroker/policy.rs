//! The meta-broker's policy mechanism: every meta-broker's round hands a view to a [`Policy`] of its [`Family`] and
//! takes back its placements.
//!
//! Every policy of Garg (2010) is an implementation of [`Policy`] for its chapter's family: the ch3–4 ones
//! ([`SchedulingPolicy`]) for [`Slots`], the ch5 trade-off heuristics for `tradeoff::heuristics::Profiles`, the ch6
//! mappings for `energy::mapping::DataCentres`, DAM and its baselines for `dam::Queues`.
//!
//! A policy of one's own is either of two kinds, registered by name and chosen in a scenario with
//! `policy = "<name>"`:
//! - a [`MetaPolicy`] (`Registry::with_meta_policy`), simpler to write, places one application at a time, and
//!   [`OneAtATime`] makes it a policy of every family. In chapters 3–4's ([`place_each`]) it takes the applications
//!   first come, first served (the order of greedy), lists for each the sites that can still take it whole
//!   ([`Candidate`]s: in time for its deadline and the site's window, within its budget, with enough CPUs left this
//!   round), and asks the policy to choose one or none; none rolls the application over to the next interval, as the
//!   dummy provider of the thesis does. The other families list candidates from their own offers, in their own order
//!   (see `allocate_each`, `map_each`, `match_each`);
//! - a [`Policy`] of one family (`Registry::with_round_policy`), which sees the whole round as the thesis's do.
//!
//! The meta-broker's `offers` chooses the family a registered policy runs in (slots, profiles or queues); the
//! energy-aware meta-broker of chapter 6 always runs the data centres' family.
use std::fmt;
use std::sync::Arc;

use super::dam::{AuctionPolicy, Queues};
use super::energy::mapping::{DataCentres, MappingPolicy};
use super::greedy::arrival_order;
use super::model::{App, Problem, Schedule, Snapshot};
use super::tradeoff::heuristics::{Heuristic, Profiles};
use super::{Params, SchedulingPolicy, schedule_with};
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
    /// Adds `policy`, which scenarios then name in a meta-broker's `policy`, in every family.
    ///
    /// # Panics
    /// If its name is one of the thesis's policies (Garg 2010, ch 3–7) or another registered policy's, of any family.
    pub fn with_meta_policy(self, policy: &'static dyn MetaPolicy) -> Registry {
        let name = policy.name();
        let taken = self.meta_policy_name_taken(name) || !self.round_policy_families(name).is_empty();
        assert!(!taken, "the meta-broker policy name `{name}` is taken");
        self.with_policy(name, policy.about(), policy)
    }

    /// Adds `policy`, a policy of family `F` called `name` (`about`: one line for `gridmarket list`), which scenarios
    /// then name in the `policy` of a meta-broker of that family (for chapters 3–5 and 7, the one whose `offers` it
    /// reads). Unlike a [`MetaPolicy`], it sees the whole round and decides what the thesis's policies decide: a
    /// joint schedule, windows, matches or a mapping. Several families may each have a policy of one name.
    ///
    /// # Panics
    /// If `name` is one of the thesis's policies, a [`MetaPolicy`]'s, or another policy's of family `F`.
    pub fn with_round_policy<F: Family>(
        self,
        name: &'static str,
        about: &'static str,
        policy: &'static dyn Policy<F>,
    ) -> Registry {
        let taken = self.meta_policy_name_taken(name) || self.policy::<dyn Policy<F>>(name).is_some();
        assert!(!taken, "the meta-broker policy name `{name}` is taken");
        self.with_policy(name, about, policy)
    }

    /// Whether `name` is a policy of the thesis or a registered [`MetaPolicy`].
    fn meta_policy_name_taken(&self, name: &str) -> bool {
        let thesis = SchedulingPolicy::ALL.iter().map(serde_name);
        let thesis =
            thesis.chain(AuctionPolicy::ALL.iter().map(serde_name)).chain(Heuristic::ALL.iter().map(serde_name));
        let mut thesis = thesis.chain(MappingPolicy::ALL.iter().map(serde_name));
        thesis.any(|t| t == name) || self.policy::<dyn MetaPolicy>(name).is_some()
    }

    /// The families of the registered [`Policy`]s called `name`, in the order chapters 3–4, 5, 7, 6 (that of the
    /// meta-broker's `offers`, then the energy-aware meta-broker's).
    pub fn round_policy_families(&self, name: &str) -> Vec<&'static str> {
        let families = [
            ("slots", self.policy::<dyn Policy<Slots>>(name).is_some()),
            ("profiles", self.policy::<dyn Policy<Profiles>>(name).is_some()),
            ("queues", self.policy::<dyn Policy<Queues>>(name).is_some()),
            ("data centres", self.policy::<dyn Policy<DataCentres>>(name).is_some()),
        ];
        families.into_iter().filter(|&(_, has)| has).map(|(family, _)| family).collect()
    }

    /// The registered policy called `name` that a meta-broker of family `F` runs: a [`MetaPolicy`], or a policy of
    /// the family.
    pub fn round_policy<F: Family>(&self, name: &str) -> Option<Arc<dyn Policy<F>>>
    where
        OneAtATime: Policy<F>,
    {
        match self.policy::<dyn MetaPolicy>(name) {
            Some(policy) => Some(Arc::new(OneAtATime(policy))),
            None => self.policy::<dyn Policy<F>>(name).map(|policy| Arc::new(policy) as Arc<dyn Policy<F>>),
        }
    }
}

/// One family of meta-brokers: what its round hands a policy, and what the policy hands back.
///
/// The meta-brokers of Garg (2010) read different offers (chapters 3–4 the sites' slots, [`Slots`]; chapter 5 their
/// free profiles, `tradeoff::Profiles`; chapter 6 the data centres' slots with their DVS, `energy::DataCentres`;
/// chapter 7 their queues, `dam::Queues`) and decide different things (a joint schedule that may split bags of tasks,
/// windows on profiles, matches with their scores, DVS placements), so each family names its own view and placements.
pub trait Family: 'static {
    /// The round as a policy sees it: the applications waiting and the providers' offers.
    type View<'r>;
    /// What the policy decides.
    type Placements;
}

/// A meta-broker policy: every round, where the applications waiting go on the providers' offers.
///
/// The meta-brokers run one round routine (the private `round` module) and hand its view to their policy, which is
/// an implementation of this trait for the family it runs in: each policy of the thesis for its own chapter's
/// family, and a registered [`MetaPolicy`] ([`OneAtATime`]) for every family.
pub trait Policy<F: Family>: fmt::Debug + Send + Sync {
    /// The round's placements, a function of the view alone (a policy that draws takes its seed from the view); a
    /// family's view may hold state the placements update (the data centres' slots). Placements name applications
    /// and providers by their indices in the view, each application at most once.
    fn place(&self, view: F::View<'_>) -> F::Placements;

    /// Whether it may place an application's tasks on several providers (and over several rounds); by default it
    /// places an application whole, on one.
    fn splits(&self) -> bool {
        false
    }
}

/// A registered policy of a family, as a meta-broker holds it.
impl<F: Family> Policy<F> for &'static dyn Policy<F> {
    fn place(&self, view: F::View<'_>) -> F::Placements {
        (**self).place(view)
    }

    fn splits(&self) -> bool {
        (**self).splits()
    }
}

/// A registered [`MetaPolicy`] as a policy of every family: it places the applications first come, first served, one
/// at a time among the family's candidates ([`place_each`], `tradeoff::heuristics::allocate_each`,
/// `dam::match_each`, `energy::mapping::map_each`).
#[derive(Clone, Copy, Debug)]
pub struct OneAtATime(pub &'static dyn MetaPolicy);

impl<F: Family> From<OneAtATime> for Arc<dyn Policy<F>>
where
    OneAtATime: Policy<F>,
{
    fn from(policy: OneAtATime) -> Arc<dyn Policy<F>> {
        Arc::new(policy)
    }
}

/// Chapters 3–4's family: a joint schedule of the round on the sites' slots.
#[derive(Debug)]
pub struct Slots;

/// Chapters 3–4's round: the snapshot of the queue and the sites' slots, the seed of the round (the GA policies draw)
/// and the meta-broker's tunables.
#[derive(Clone, Copy, Debug)]
pub struct SlotView<'r> {
    /// The applications waiting and the sites' offers.
    pub snapshot: &'r Snapshot,
    /// The round's seed, drawn from the meta-broker's stream.
    pub seed: u64,
    /// The meta-broker's tunables.
    pub params: &'r Params,
}

impl Family for Slots {
    type View<'r> = SlotView<'r>;
    type Placements = Schedule;
}

impl Policy<Slots> for SchedulingPolicy {
    fn place(&self, view: SlotView<'_>) -> Schedule {
        schedule_with(*self, view.snapshot, view.seed, view.params)
    }

    /// Only MGN's LP splits an application's tasks.
    fn splits(&self) -> bool {
        *self == SchedulingPolicy::Lp
    }
}

impl Policy<Slots> for OneAtATime {
    fn place(&self, view: SlotView<'_>) -> Schedule {
        place_each(&Problem::new(view.snapshot, view.params.qos), self.0)
    }
}

impl From<SchedulingPolicy> for Arc<dyn Policy<Slots>> {
    fn from(policy: SchedulingPolicy) -> Arc<dyn Policy<Slots>> {
        Arc::new(policy)
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
        // The same through the family's mechanism, as the meta-broker calls it.
        let params = Params { qos: QosIndex::FairMarket, ..Params::default() };
        let view = SlotView { snapshot: &snapshot, seed: 0, params: &params };
        let policies: [Arc<dyn Policy<Slots>>; 2] =
            [Arc::new(OneAtATime(&Cheapest)), Arc::new(SchedulingPolicy::Greedy)];
        for policy in policies {
            assert_eq!(policy.place(view), greedy(&problem), "{policy:?}");
            assert!(!policy.splits());
        }
        // Only MGN's LP splits a bag of tasks over sites.
        let splitting: Vec<_> = SchedulingPolicy::ALL.into_iter().filter(Policy::<Slots>::splits).collect();
        assert_eq!(splitting, [SchedulingPolicy::Lp]);
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
