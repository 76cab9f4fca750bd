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

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use rand::{Rng, RngExt};

use super::{Submission, UserBroker};
use crate::model::ProviderInfo;
use crate::sim::AgentId;

/// A personalised broker's rule for choosing a provider by price.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Choice {
    /// The cheapest provider on which the job meets its deadline and budget.
    #[default]
    CheapestFeasible,
    /// The cheapest provider, whatever its feasibility.
    Cheapest,
    /// One of the k cheapest feasible providers, uniformly.
    RandomCheapest(u32),
}

impl Choice {
    /// The provider this rule picks among `candidates` (those with enough PEs the job may still claim), where
    /// `feasible` says whether the job meets its deadline and budget there.
    pub fn pick(
        self,
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
        // 2 and 4 tie at 4.0: the lower id. Provider 2 is infeasible for this job.
        let feasible = |p: &ProviderInfo| p.id != AgentId(2);
        assert_eq!(Choice::Cheapest.pick(&all, feasible, &mut rng), Some(AgentId(2)));
        assert_eq!(Choice::CheapestFeasible.pick(&all, feasible, &mut rng), Some(AgentId(4)));
        assert_eq!(Choice::CheapestFeasible.pick(&all, |_| false, &mut rng), None);
        // The 2 cheapest feasible are 4 and 3, each about half the time; never 1.
        let mut counts = [0u32; 5];
        for _ in 0..2_000 {
            let id = Choice::RandomCheapest(2).pick(&all, feasible, &mut rng).unwrap();
            counts[id.index()] += 1;
        }
        assert_eq!((counts[1], counts[2]), (0, 0));
        assert!(counts[3].abs_diff(1_000) < 100 && counts[4].abs_diff(1_000) < 100, "{counts:?}");
        assert_eq!(Choice::RandomCheapest(9).pick(&all[..1], |_| true, &mut rng), Some(AgentId(1)));
    }
}
