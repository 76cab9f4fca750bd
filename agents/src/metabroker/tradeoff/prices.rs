//! Site prices of Garg (2010) §5.4: drawn from Weibull(α = 0.4, β = 0.8) per replication, "consistent" (the slowest
//! site the cheapest: our reading of a self-contradictory sentence, faster is dearer) or "inconsistent" (assigned
//! at random).
//!
//! Each site draws its own price, yet the draws must be one joint sample: every site of the sample draws the same
//! `of` values from one stream of the replication, sorts them, and takes the one at its `rank` (consistent, the
//! sites ranked by speed from 0 for the slowest) or at the rank's place in a permutation drawn from the same
//! stream (inconsistent). α is Weibull's shape and β its scale (the thesis names neither).

use rand::seq::SliceRandom;
use rand_distr::{Distribution, Weibull};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::sim::rng;

/// A site's place in a joint Weibull price sample.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct WeibullPrice {
    /// Weibull shape α (the thesis: 0.4; from 0.01 to 100).
    pub shape: f64,
    /// Weibull scale β [G$ per PE-second] (the thesis: 0.8; from 1e-9 to 1e6).
    pub scale: f64,
    /// The site's rank by speed among the sites of the sample, from 0 for the slowest.
    pub rank: u32,
    /// The sites of the sample (from 1 to 10,000; `rank` below it).
    pub of: u32,
    /// Consistent pricing (the slower, the cheaper; default) or, false, inconsistent (a random assignment).
    #[serde(default = "yes")]
    pub consistent: bool,
}

fn yes() -> bool {
    true
}

impl WeibullPrice {
    /// Why the parameters are out of range, if they are: the key under the table and the message.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if !(0.01..=100.0).contains(&self.shape) {
            return Err(("shape", format!("expected a number from 0.01 to 100, found {}", self.shape)));
        }
        if !(1e-9..=1e6).contains(&self.scale) {
            return Err(("scale", format!("expected a number from 1e-9 to 1e6, found {}", self.scale)));
        }
        if !(1..=10_000).contains(&self.of) {
            return Err(("of", format!("expected 1 to 10000 sites, found {}", self.of)));
        }
        if self.rank >= self.of {
            return Err(("rank", format!("expected a rank below `of` ({}), found {}", self.of, self.rank)));
        }
        Ok(())
    }

    /// The site's price for the replication of `seed` [G$ per PE-second], at most `max`.
    pub fn draw(&self, seed: u64, max: f64) -> f64 {
        let mut stream = rng::stream(seed, &format!("weibull-prices:{}:{}:{}", self.shape, self.scale, self.of), 0);
        let Ok(weibull) = Weibull::new(self.scale, self.shape) else { return 0.0 };
        let mut sample: Vec<f64> = (0..self.of).map(|_| weibull.sample(&mut stream).min(max)).collect();
        sample.sort_by(f64::total_cmp);
        let mut places: Vec<usize> = (0..self.of as usize).collect();
        // Drawn in both cases, so that the two assignments share their sample.
        places.shuffle(&mut stream);
        sample[if self.consistent { self.rank as usize } else { places[self.rank as usize] }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prices(seed: u64, consistent: bool) -> Vec<f64> {
        (0..10).map(|rank| WeibullPrice { shape: 0.4, scale: 0.8, rank, of: 10, consistent }.draw(seed, 1e6)).collect()
    }

    #[test]
    fn one_joint_sample_sorted_by_speed_or_shuffled() {
        let c = prices(3, true);
        assert!(c.windows(2).all(|w| w[0] <= w[1]), "consistent: the faster, the dearer: {c:?}");
        let mut u = prices(3, false);
        assert_ne!(u, c, "inconsistent prices are assigned at random");
        u.sort_by(f64::total_cmp);
        assert_eq!(u, c, "both assignments share one sample");
        assert_ne!(prices(4, true), c, "each replication draws again");
        // Weibull(0.4, 0.8): a median of 0.8 · ln(2)^2.5 = 0.32 over many replications.
        let mut all: Vec<f64> = (0..500).flat_map(|s| prices(s, true)).collect();
        all.sort_by(f64::total_cmp);
        let median = all[all.len() / 2];
        assert!((median - 0.32).abs() < 0.04, "{median}");
        let bad = WeibullPrice { shape: 0.4, scale: 0.8, rank: 10, of: 10, consistent: true };
        assert_eq!(bad.check().unwrap_err().0, "rank");
    }
}
