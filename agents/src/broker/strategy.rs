//! How a personalised broker chooses a provider by price ([`Choice`], a [`ProviderChoice`] of the registry), and how
//! it follows the prices providers post (`Market::PriceChange`).
//!
//! Every rule picks among the providers with enough PEs that have not refused the job yet (all of them again once
//! each has, or always with `on-refusal = "cheapest"`); ties go to the lower agent id.
//! - **cheapest-feasible** (Garg 2010 ch3's greedy broker; the default): the lowest price among those on which the job
//!   meets its deadline and budget if started now.
//! - **cheapest**: the lowest price, feasible or not (a broker that reads only the price list).
//! - **random-cheapest**: one of the k cheapest feasible providers, uniformly at random (a broker that spreads its
//!   claims).
//!
//! Each is a [`ProviderChoice`] registered in the standard registry by `Registry::with_provider_choice`, the line
//! that adds a rule of one's own, named by `choose`.

use rand::{Rng, RngExt};

use super::{Submission, UserBroker};
use crate::model::ProviderInfo;
use crate::protocol::JobSpec;
use crate::registry::{Invalid, Registry};
use crate::sim::AgentId;

/// A personalised broker's rule for choosing a provider that scenarios name (`choose = "<name>"`), held by the
/// registry: the built-in ones ([`BUILT_IN`]) and those added with `Registry::with_provider_choice`. It keeps no state
/// of its own: each choice sees the job, the candidates at their posted prices, and the broker's random stream.
pub trait ProviderChoice: Send + Sync {
    /// Its name in scenario files, in kebab-case.
    fn name(&self) -> &'static str;
    /// One line for `gridmarket list`.
    fn about(&self) -> &'static str;
    /// Whether it reads the broker's `cheapest-k` (how many of the cheapest providers it spreads its claims over): by
    /// default it does not, and the key is refused.
    fn reads_cheapest_k(&self) -> bool {
        false
    }
    /// The provider `job` claims among `candidates` (those with enough PEs it may still claim, each with its posted
    /// price), where `feasible` says whether the job meets its deadline and budget there if started now, and `k` is
    /// the broker's `cheapest-k` (3 unless given); `None` claims nowhere this time (the job claims again with every
    /// provider, then at the next round).
    fn pick(
        &self,
        job: &JobSpec,
        candidates: &[&ProviderInfo],
        feasible: &dyn Fn(&ProviderInfo) -> bool,
        k: u32,
        rng: &mut dyn Rng,
    ) -> Option<AgentId>;
}

crate::registry::by_name!(dyn ProviderChoice);

impl Registry {
    /// Adds `choice`, which scenarios then name in a personalised broker's `choose`.
    ///
    /// # Panics
    /// If its name is another rule's.
    pub fn with_provider_choice(self, choice: &'static dyn ProviderChoice) -> Registry {
        let name = choice.name();
        assert!(self.policy::<dyn ProviderChoice>(name).is_none(), "the provider choice name `{name}` is taken");
        self.with_policy(name, choice.about(), choice)
    }
}

/// A personalised broker's rule for choosing a provider by price, checked: the rule and the broker's `cheapest-k`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Choice {
    /// The rule.
    pub rule: &'static dyn ProviderChoice,
    /// How many of the cheapest providers a rule that reads it spreads its claims over.
    pub k: u32,
}

/// `cheapest-k` when not given.
pub const DEFAULT_K: u32 = 3;

impl Default for Choice {
    fn default() -> Choice {
        Choice::of(&CheapestFeasible)
    }
}

impl Choice {
    /// `rule`, with the default `cheapest-k`.
    pub fn of(rule: &'static dyn ProviderChoice) -> Choice {
        Choice { rule, k: DEFAULT_K }
    }

    /// The rule `name` at `key` names, one of `registry`'s.
    pub fn named(key: &str, name: &str, registry: &Registry) -> Result<Choice, Invalid> {
        registry.policy_at(key, name).map(Choice::of)
    }

    /// The provider this rule picks for `job` among `candidates` (those with enough PEs the job may still claim),
    /// where `feasible` says whether the job meets its deadline and budget there.
    pub fn pick(
        self,
        job: &JobSpec,
        candidates: &[&ProviderInfo],
        feasible: impl Fn(&ProviderInfo) -> bool,
        rng: &mut impl Rng,
    ) -> Option<AgentId> {
        self.rule.pick(job, candidates, &feasible, self.k, rng)
    }
}

/// Every built-in rule, in the order `gridmarket list` gives them.
pub const BUILT_IN: [&dyn ProviderChoice; 3] = [&CheapestFeasible, &Cheapest, &RandomCheapest];

/// By price, then by agent id.
fn by_price(a: &&&ProviderInfo, b: &&&ProviderInfo) -> std::cmp::Ordering {
    a.price.total_cmp(&b.price).then(a.id.cmp(&b.id))
}

/// The cheapest provider on which the job meets its deadline and budget (Garg 2010 ch3's greedy broker; the default).
#[derive(Clone, Copy, Debug)]
pub struct CheapestFeasible;

impl ProviderChoice for CheapestFeasible {
    fn name(&self) -> &'static str {
        "cheapest-feasible"
    }

    fn about(&self) -> &'static str {
        "the cheapest provider on which the job meets its deadline and budget (Garg 2010 ch3; the default)"
    }

    fn pick(
        &self,
        _job: &JobSpec,
        candidates: &[&ProviderInfo],
        feasible: &dyn Fn(&ProviderInfo) -> bool,
        _k: u32,
        _rng: &mut dyn Rng,
    ) -> Option<AgentId> {
        candidates.iter().filter(|p| feasible(p)).min_by(by_price).map(|p| p.id)
    }
}

/// The cheapest provider, whatever its feasibility.
#[derive(Clone, Copy, Debug)]
pub struct Cheapest;

impl ProviderChoice for Cheapest {
    fn name(&self) -> &'static str {
        "cheapest"
    }

    fn about(&self) -> &'static str {
        "the cheapest provider, feasible or not (a broker that reads only the price list)"
    }

    fn pick(
        &self,
        _job: &JobSpec,
        candidates: &[&ProviderInfo],
        _feasible: &dyn Fn(&ProviderInfo) -> bool,
        _k: u32,
        _rng: &mut dyn Rng,
    ) -> Option<AgentId> {
        candidates.iter().min_by(by_price).map(|p| p.id)
    }
}

/// One of the k cheapest feasible providers, uniformly.
#[derive(Clone, Copy, Debug)]
pub struct RandomCheapest;

impl ProviderChoice for RandomCheapest {
    fn name(&self) -> &'static str {
        "random-cheapest"
    }

    fn about(&self) -> &'static str {
        "one of the `cheapest-k` (3) cheapest feasible providers, uniformly at random (claims spread)"
    }

    fn reads_cheapest_k(&self) -> bool {
        true
    }

    fn pick(
        &self,
        _job: &JobSpec,
        candidates: &[&ProviderInfo],
        feasible: &dyn Fn(&ProviderInfo) -> bool,
        k: u32,
        rng: &mut dyn Rng,
    ) -> Option<AgentId> {
        let mut ok: Vec<&&ProviderInfo> = candidates.iter().filter(|p| feasible(p)).collect();
        ok.sort_by(by_price);
        ok.truncate(k as usize);
        (!ok.is_empty()).then(|| ok[rng.random_range(0..ok.len())].id)
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
        assert_eq!(Choice::of(&Cheapest).pick(&job, &all, feasible, &mut rng), Some(AgentId(2)));
        assert_eq!(Choice::of(&CheapestFeasible).pick(&job, &all, feasible, &mut rng), Some(AgentId(4)));
        assert_eq!(Choice::of(&CheapestFeasible).pick(&job, &all, |_| false, &mut rng), None);
        // The 2 cheapest feasible are 4 and 3, each about half the time; never 1.
        let mut counts = [0u32; 5];
        for _ in 0..2_000 {
            let id = Choice { rule: &RandomCheapest, k: 2 }.pick(&job, &all, feasible, &mut rng).unwrap();
            counts[id.index()] += 1;
        }
        assert_eq!((counts[1], counts[2]), (0, 0));
        assert!(counts[3].abs_diff(1_000) < 100 && counts[4].abs_diff(1_000) < 100, "{counts:?}");
        assert_eq!(Choice { rule: &RandomCheapest, k: 9 }.pick(&job, &all[..1], |_| true, &mut rng), Some(AgentId(1)));
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
            _k: u32,
            _rng: &mut dyn Rng,
        ) -> Option<AgentId> {
            let affordable = |p: &&&ProviderInfo| job.budget.is_none_or(|b| p.price * job.runtime / p.speed <= b);
            candidates.iter().filter(affordable).max_by(|a, b| a.speed.total_cmp(&b.speed)).map(|p| p.id)
        }
    }

    #[test]
    fn test_a_registered_choice_is_named_and_asked() {
        let registry = Registry::empty().with_provider_choice(&Fastest);
        let choice = Choice::named("choose", "fastest", &registry).unwrap();
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
                _: u32,
                _: &mut dyn Rng,
            ) -> Option<AgentId> {
                None
            }
        }
        let _ = Registry::standard().with_provider_choice(&Cheapest);
    }
}
