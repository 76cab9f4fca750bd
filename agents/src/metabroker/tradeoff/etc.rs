//! ETC (estimated time to compute) generation for Garg (2010) §5.4's heterogeneity: high variation by the
//! coefficient-of-variation-based (CVB) gamma method of Ali, Siegel, Maheswaran and Hensgen (2000) with COV 0.9,
//! low variation uniform with a standard deviation of 20 s.
//!
//! The mean of ETC(i, j) is the application's runtime on the reference CPU divided by the site's speed (its MIPS
//! rating over the reference's), so that a faster site is faster on average and "consistent" pricing has an order
//! to follow; the thesis gives the mean μ and not how the sites' ratings enter (our reading). CVB with the task
//! mean fixed at μ: ETC(i, j) ~ Gamma(shape 1/V², scale mean · V²). Uniform: mean ± √3 · 20 s, the half-width
//! shrunk to 90% of the mean when the mean is shorter, so that no ETC is zero or negative and the mean is kept.

use rand::{Rng, RngExt};
use rand_distr::{Distribution, Gamma};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How ETC varies across sites (Garg 2010 §5.4).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", tag = "variation", deny_unknown_fields)]
pub enum EtcModel {
    /// High variation (HI): CVB gamma with this coefficient of variation (0.9 in the thesis).
    High {
        /// Coefficient of variation V (default 0.9; from 0.01 to 10).
        #[serde(default = "cov")]
        cov: f64,
    },
    /// Low variation (LO): uniform with this standard deviation \[s\] (20 in the thesis).
    Low {
        /// Standard deviation \[s\] (default 20; from 0 to 1e6).
        #[serde(default = "sd")]
        sd: f64,
    },
    /// None: ETC is the runtime over the site's speed.
    Exact,
}

fn cov() -> f64 {
    0.9
}

fn sd() -> f64 {
    20.0
}

impl EtcModel {
    /// The thesis's high variation: COV 0.9.
    pub const HIGH: EtcModel = EtcModel::High { cov: 0.9 };
    /// The thesis's low variation: standard deviation 20 s.
    pub const LOW: EtcModel = EtcModel::Low { sd: 20.0 };

    /// Why the parameters are out of range, if they are.
    pub fn check(&self) -> Result<(), String> {
        match *self {
            EtcModel::High { cov } if !(0.01..=10.0).contains(&cov) => {
                Err(format!("expected a coefficient of variation from 0.01 to 10, found {cov}"))
            }
            EtcModel::Low { sd } if !(0.0..=1e6).contains(&sd) => {
                Err(format!("expected a standard deviation from 0 to 1e6 s, found {sd}"))
            }
            _ => Ok(()),
        }
    }

    /// One ETC \[s\] around `mean` [s, positive].
    pub fn draw(&self, mean: f64, rng: &mut impl Rng) -> f64 {
        let x = match *self {
            EtcModel::High { cov } => {
                let shape = 1.0 / (cov * cov);
                Gamma::new(shape, mean / shape).map_or(mean, |g| g.sample(rng))
            }
            EtcModel::Low { sd } => {
                let half = (3f64.sqrt() * sd).min(0.9 * mean);
                if half > 0.0 { rng.random_range(mean - half..=mean + half) } else { mean }
            }
            EtcModel::Exact => mean,
        };
        // A gamma draw can underflow to zero: the shortest ETC is a millionth of the mean.
        x.max(mean * 1e-6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    fn moments(model: EtcModel, mean: f64) -> (f64, f64, f64) {
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        let xs: Vec<f64> = (0..200_000).map(|_| model.draw(mean, &mut rng)).collect();
        let m = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / xs.len() as f64;
        (m, var.sqrt(), xs.iter().copied().fold(f64::INFINITY, f64::min))
    }

    #[test]
    fn cvb_keeps_the_mean_with_the_coefficient_of_variation() {
        let (m, sd, min) = moments(EtcModel::HIGH, 500.0);
        assert!((m / 500.0 - 1.0).abs() < 0.01, "mean {m}");
        assert!((sd / m - 0.9).abs() < 0.01, "cov {}", sd / m);
        assert!(min > 0.0);
    }

    #[test]
    fn low_variation_is_uniform_with_sd_20_and_stays_positive() {
        let (m, sd, _) = moments(EtcModel::LOW, 500.0);
        assert!((m - 500.0).abs() < 0.5 && (sd - 20.0).abs() < 0.2, "{m} {sd}");
        // A 10 s mean: the window shrinks to [1, 19], the mean is kept.
        let (m, _, min) = moments(EtcModel::LOW, 10.0);
        assert!((m - 10.0).abs() < 0.05 && min >= 1.0, "{m} {min}");
        assert!(EtcModel::High { cov: 0.0 }.check().is_err());
        assert!(EtcModel::Low { sd: -1.0 }.check().is_err());
    }
}
