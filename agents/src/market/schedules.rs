//! Demand and supply schedules shipped with gridmarket, for `schedule = "<name>"` in a market's table.
//!
//! Gode and Sunder (1993) ran five markets whose schedules are drawn in a figure we could not read; these five are
//! our own, of five common shapes, each 6 buyers and 6 sellers with 4 units apiece, prices within [1, 200]. Units are
//! dealt to traders in turn down the demand curve (up the supply curve), so each trader's units come in trading
//! order and every trader holds units from all along the curve.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Traders per side.
const TRADERS: usize = 6;
/// Units per side.
const UNITS: usize = 24;

/// A schedule shipped with gridmarket.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Schedule {
    /// Demand 190 − 7.5k, supply 10 + 7.5k (k = 0..23): mirror images crossing at 100; Q = 13, P* = 100.
    Symmetric,
    /// Every unit costs 60, demand 190 − 7.5k: a flat supply; Q = 18, P* = 60, all the surplus the buyers'.
    FlatSupply,
    /// Every unit is worth 140, supply 10 + 7.5k: a flat demand; Q = 18, P* = 140, all the surplus the sellers'.
    FlatDemand,
    /// Steep demand 195 − 12k (16 units), shallow supply 60 + 3k: an asymmetric cross; Q = 10, P* = 87.
    Asymmetric,
    /// 12 intra-marginal units each side (demand 170 − 5k, supply 30 + 5k) and 12 extra-marginal ones (demand 90 −
    /// 5k, supply 110 + 5k): a wide equilibrium band [90, 110], Q = 12, P* = 100.
    Extramarginal,
}

impl Schedule {
    /// Every schedule, in the order above.
    pub const ALL: [Schedule; 5] = [
        Schedule::Symmetric,
        Schedule::FlatSupply,
        Schedule::FlatDemand,
        Schedule::Asymmetric,
        Schedule::Extramarginal,
    ];

    /// Its demand (valuations, descending) and supply (costs, ascending), unit by unit.
    pub fn curves(self) -> (Vec<f64>, Vec<f64>) {
        let k = |n: usize| (0..n).map(|k| k as f64);
        match self {
            Schedule::Symmetric => {
                (k(UNITS).map(|k| 190.0 - 7.5 * k).collect(), k(UNITS).map(|k| 10.0 + 7.5 * k).collect())
            }
            Schedule::FlatSupply => (k(UNITS).map(|k| 190.0 - 7.5 * k).collect(), vec![60.0; UNITS]),
            Schedule::FlatDemand => (vec![140.0; UNITS], k(UNITS).map(|k| 10.0 + 7.5 * k).collect()),
            Schedule::Asymmetric => {
                (k(16).map(|k| 195.0 - 12.0 * k).collect(), k(UNITS).map(|k| 60.0 + 3.0 * k).collect())
            }
            Schedule::Extramarginal => {
                let demand = k(12).map(|k| 170.0 - 5.0 * k).chain(k(12).map(|k| 90.0 - 5.0 * k)).collect();
                let supply = k(12).map(|k| 30.0 + 5.0 * k).chain(k(12).map(|k| 110.0 + 5.0 * k)).collect();
                (demand, supply)
            }
        }
    }

    /// Each buyer's valuations and each seller's costs, in trading order.
    pub fn traders(self) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
        let (demand, supply) = self.curves();
        (deal(&demand), deal(&supply))
    }
}

/// Unit k to trader k mod 6.
fn deal(units: &[f64]) -> Vec<Vec<f64>> {
    let mut traders = vec![Vec::new(); TRADERS];
    for (k, &u) in units.iter().enumerate() {
        traders[k % TRADERS].push(u);
    }
    traders
}

#[cfg(test)]
mod tests {
    use super::super::measures::Equilibrium;
    use super::*;

    #[test]
    fn test_each_schedule_has_the_equilibrium_its_doc_states() {
        let expected = [(13, 100.0), (18, 60.0), (18, 140.0), (10, 87.0), (12, 100.0)];
        for (s, (q, p)) in Schedule::ALL.into_iter().zip(expected) {
            let (demand, supply) = s.curves();
            let e = Equilibrium::of(&demand, &supply);
            assert_eq!((e.quantity, e.price), (q, p), "{s:?}");
            assert!(demand.iter().chain(&supply).all(|x| (1.0..=200.0).contains(x)), "{s:?}");
            let (buyers, sellers) = s.traders();
            assert_eq!((buyers.len(), sellers.len()), (6, 6));
            assert!(buyers.iter().all(|b| b.windows(2).all(|w| w[0] >= w[1])), "buyers trade their best unit first");
            assert!(sellers.iter().all(|c| c.windows(2).all(|w| w[0] <= w[1])), "sellers their cheapest first");
        }
        let e = Equilibrium::of(&Schedule::Extramarginal.curves().0, &Schedule::Extramarginal.curves().1);
        assert_eq!((e.low, e.high), (90.0, 110.0));
    }
}
