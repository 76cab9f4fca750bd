//! The market exchange (Mandi, Garg 2010 ch 8): the actor ([`agent`]), the scenario kind ([`kind`]), and its trading
//! mechanisms, pure functions of the orders ([`mechanism`]).

pub mod agent;
pub mod kind;
pub mod mechanism;
pub mod traders;

use rand::{Rng, RngExt};

/// Draws over all the items [`pick`] tries before it sorts out the ones that fit.
const PICK_TRIES: usize = 16;

/// One of `items` that `fits`, uniformly at random: by rejection, a few draws over all of them (as many as one when
/// they all fit, whatever their number), then among those that fit.
pub(crate) fn pick<'a, T>(items: &'a [T], fits: impl Fn(&T) -> bool, rng: &mut impl Rng) -> Option<&'a T> {
    if items.is_empty() {
        return None;
    }
    for _ in 0..PICK_TRIES {
        let item = &items[rng.random_range(0..items.len())];
        if fits(item) {
            return Some(item);
        }
    }
    let fitting: Vec<&T> = items.iter().filter(|i| fits(i)).collect();
    (!fitting.is_empty()).then(|| fitting[rng.random_range(0..fitting.len())])
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::sim::rng::SimRng;

    #[test]
    fn test_pick_is_uniform_over_the_items_that_fit() {
        let mut rng = SimRng::seed_from_u64(7);
        let items: Vec<u32> = (0..100).collect();
        // One in ten fits: most picks come from the rejection draws, some from the fallback.
        let mut counts = [0u32; 10];
        for _ in 0..20_000 {
            let x = pick(&items, |x| x % 10 == 0, &mut rng).expect("ten fit");
            counts[(*x / 10) as usize] += 1;
        }
        // 2,000 expected each: a binomial sd of 42.
        assert!(counts.iter().all(|&c| c.abs_diff(2_000) < 200), "{counts:?}");
        assert_eq!(pick(&items, |_| false, &mut rng), None);
        assert_eq!(pick(&[] as &[u32], |_| true, &mut rng), None);
    }
}
