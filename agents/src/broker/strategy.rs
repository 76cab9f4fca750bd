//! How a personalised broker chooses a provider by price ([`Choice`]), and how it follows the prices providers
//! post (`Market::PriceChange`).
//!
//! Every rule picks among the providers with enough PEs that have not refused the job yet (all of them again once
//! each has, or always with `on-refusal = "cheapest"`); ties go to the lower agent id.
//! - **cheapest-feasible** (Garg 2010 ch3's greedy broker; the default): the lowest price among those on which the job
//!   meets its deadline and budget if started now.
//! - **cheapest**: the lowest price, feasible or not (a broker that reads only the price list).
//! - **random-cheapest**: one of the k cheapest feasible providers, uniformly at random (a broker that spreads its
//!   claims).
//! - a rule added to the registry ([`ProviderChoice`], `Registry::with_provider_choice`), named by `choose`.

use rand::{Rng, RngExt};

use super::kind::Choose;
use super::{Submission, UserBroker};
use crate::model::ProviderInfo;
use crate::protocol::JobSpec;
use crate::registry::{Registry, serde_name};
use crate::sim::AgentId;

/// A personalised broker's rule for choosing a provider that scenarios name (`choose = "<name>"`), added to the
/// registry with `Registry::with_provider_choice`. It keeps no state of its own: each choice sees the job, the
/// candidates at their posted prices, and the broker's random stream.
pub trait ProviderChoice: Send + Sync {
    /// Its name in scenario files, in kebab-case, not one of the built-in rules'.
    fn name(&self) -> &'static str;
    /// One line for `gridmarket list`.
    fn about(&self) -> &'static str;
    /// The provider `job` claims among `candidates` (those with enough PEs it may still claim, each with its posted
    /// price), where `feasible` says whether the job meets its deadline and budget there if started now; `None`
    /// claims nowhere this time (the job claims again with every provider, then at the next round).
    fn pick(
        &self,
        job: &JobSpec,
        candidates: &[&ProviderInfo],
        feasible: &dyn Fn(&ProviderInfo) -> bool,
        rng: &mut dyn Rng,
    ) -> Option<AgentId>;
}

crate::registry::by_name!(dyn ProviderChoice);

impl Registry {
    /// Adds `choice`, which scenarios then name in a personalised broker's `choose`.
    ///
    /// # Panics
    /// If its name is a built-in rule's or another registered rule's.
    pub fn with_provider_choice(self, choice: &'static dyn ProviderChoice) -> Registry {
        let name = choice.name();
        let taken =
            Choose::ALL.iter().any(|c| serde_name(c) == name) || self.policy::<dyn ProviderChoice>(name).is_some();
        assert!(!taken, "the provider choice name `{name}` is taken");
        self.with_policy(name, choice.about(), choice)
    }
}

/// A personalised broker's rule for choosing a provider by price.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Choice {
    /// The cheapest provider on which the job meets its deadline and budget.
    #[default]
    CheapestFeasible,
    /// The cheapest provider, whatever its feasibility.
    Cheapest,
    /// One of the k cheapest feasible providers, uniformly.
    RandomCheapest(u32),
    /// A rule added to the registry.
    Registered(&'static dyn ProviderChoice),
}

impl Choice {
    /// The provider this rule picks for `job` among `candidates` (those with enough PEs the job may still claim),
    /// where `feasible` says whether the job meets its deadline and budget there.
    pub fn pick(
        self,
        job: &JobSpec,
        candidates: &[&ProviderInfo],
        feasible: impl Fn(&ProviderInfo) -> bool,
        rng: &mut impl Rng,
    ) -> Option<AgentId> {
        let by_price = |a: &&&ProviderInfo, b: &&&ProviderInfo| a.price.total_cmp(&b.price).then(a.id.cmp(&b.id));
        match self {
            Choice::Cheapest => candidates.iter().min_by(by_price).map(|p| p.id),
            Choice::CheapestFeasible => candidates.iter().filter(|p| feasible(p)).min_by(by_price).map(|p| p.id),
            Choice::RandomCheapest(k) => {
                let mut ok: Vec<&&ProviderInfo> = candidates.iter().filter(|p| feasible(p)).collect();
                ok.sort_by(by_price);
                ok.truncate(k as usize);
                (!ok.is_empty()).then(|| ok[rng.random_range(0..ok.len())].id)
            }
            Choice::Registered(choice) => choice.pick(job, candidates, &feasible, rng),
        }
    }
}

impl UserBroker {
    /// A provider posted a new price: a personalised broker chooses by it from now on.
    pub(super) fn on_price_change(&mut self, from: AgentId, price: f64) {
        if let Submission::Personalised { providers, .. } = &mut self.submission
            && let Some(p) = providers.iter_mut().find(|p| p.id == from)
        {
            p.price = price;
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::sim::rng::SimRng;

    fn provider(id: u32, price: f64) -> ProviderInfo {
        ProviderInfo { id: AgentId(id), pes: 8, speed: 1.0, price }
    }

    #[test]
    fn test_each_rule_picks_by_price() {
        let ps = [provider(1, 5.0), provider(2, 4.0), provider(3, 4.5), provider(4, 4.0)];
        let all: Vec<&ProviderInfo> = ps.iter().collect();
        let mut rng = SimRng::seed_from_u64(1);
        let job = JobSpec::new(1, AgentId(9), 4, 60.0);
        // 2 and 4 tie at 4.0: the lower id. Provider 2 is infeasible for this job.
        let feasible = |p: &ProviderInfo| p.id != AgentId(2);
        assert_eq!(Choice::Cheapest.pick(&job, &all, feasible, &mut rng), Some(AgentId(2)));
        assert_eq!(Choice::CheapestFeasible.pick(&job, &all, feasible, &mut rng), Some(AgentId(4)));
        assert_eq!(Choice::CheapestFeasible.pick(&job, &all, |_| false, &mut rng), None);
        // The 2 cheapest feasible are 4 and 3, each about half the time; never 1.
        let mut counts = [0u32; 5];
        for _ in 0..2_000 {
            let id = Choice::RandomCheapest(2).pick(&job, &all, feasible, &mut rng).unwrap();
            counts[id.index()] += 1;
        }
        assert_eq!((counts[1], counts[2]), (0, 0));
        assert!(counts[3].abs_diff(1_000) < 100 && counts[4].abs_diff(1_000) < 100, "{counts:?}");
        assert_eq!(Choice::RandomCheapest(9).pick(&job, &all[..1], |_| true, &mut rng), Some(AgentId(1)));
    }

    /// The fastest provider the job can afford, whatever its deadline: a rule of one's own.
    struct Fastest;

    impl ProviderChoice for Fastest {
        fn name(&self) -> &'static str {
            "fastest"
        }

        fn about(&self) -> &'static str {
            "the fastest provider"
        }

        fn pick(
            &self,
            job: &JobSpec,
            candidates: &[&ProviderInfo],
            _feasible: &dyn Fn(&ProviderInfo) -> bool,
            _rng: &mut dyn Rng,
        ) -> Option<AgentId> {
            let affordable = |p: &&&ProviderInfo| job.budget.is_none_or(|b| p.price * job.runtime / p.speed <= b);
            candidates.iter().filter(affordable).max_by(|a, b| a.speed.total_cmp(&b.speed)).map(|p| p.id)
        }
    }

    #[test]
    fn test_a_registered_choice_is_named_and_asked() {
        let registry = Registry::empty().with_provider_choice(&Fastest);
        let choice = Choice::Registered(registry.policy::<dyn ProviderChoice>("fastest").unwrap());
        let mut ps = [provider(1, 5.0), provider(2, 4.0), provider(3, 9.0)];
        ps[0].speed = 2.0;
        ps[2].speed = 3.0;
        let all: Vec<&ProviderInfo> = ps.iter().collect();
        let mut rng = SimRng::seed_from_u64(1);
        let mut job = JobSpec::new(1, AgentId(9), 1, 60.0);
        assert_eq!(choice.pick(&job, &all, |_| true, &mut rng), Some(AgentId(3)));
        // 9 G$ for 20 s is over the budget; 5 G$ for 30 s is not.
        job.budget = Some(160.0);
        assert_eq!(choice.pick(&job, &all, |_| true, &mut rng), Some(AgentId(1)));
    }

    #[test]
    #[should_panic(expected = "the provider choice name `cheapest` is taken")]
    fn test_a_built_in_name_cannot_be_registered() {
        struct Cheapest;
        impl ProviderChoice for Cheapest {
            fn name(&self) -> &'static str {
                "cheapest"
            }
            fn about(&self) -> &'static str {
                ""
            }
            fn pick(
                &self,
                _: &JobSpec,
                _: &[&ProviderInfo],
                _: &dyn Fn(&ProviderInfo) -> bool,
                _: &mut dyn Rng,
            ) -> Option<AgentId> {
                None
            }
        }
        let _ = Registry::empty().with_provider_choice(&Cheapest);
    }
}
