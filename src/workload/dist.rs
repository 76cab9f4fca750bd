//! Serde-friendly descriptions of the distributions used by the workload models.
//!
//! A [`Dist`] is plain data (it can sit in a scenario file); [`Dist::sampler`] validates it
//! once and returns a [`Sampler`] that draws from it with `rand_distr`.
//! [`TwoStageLogUniform`] is the discrete job-size distribution shared by the
//! Lublin–Feitelson model and the DAS-2 model.

use rand::distr::{Distribution, Uniform};
use rand::{Rng, RngExt};
use rand_distr::{Exp, Gamma, LogNormal, Normal, Weibull};
use serde::{Deserialize, Serialize};

use super::WorkloadError;
use super::math::{gamma_fn, normal_cdf, normal_pdf};

/// Smallest acceptance probability allowed for a truncated normal, so that rejection
/// sampling needs at most about a thousand draws on average.
const MIN_ACCEPTANCE: f64 = 1e-3;

/// One branch of a hyper-exponential distribution.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    /// Probability of this branch.
    pub prob: f64,
    /// Mean of the exponential in this branch.
    pub mean: f64,
}

/// A continuous distribution and its parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Dist {
    /// Always `value`.
    Constant {
        /// The value.
        value: f64,
    },
    /// Uniform on `[low, high)`.
    Uniform {
        /// Lower bound.
        low: f64,
        /// Upper bound.
        high: f64,
    },
    /// Exponential with the given mean (Poisson arrivals when used for inter-arrival times).
    Exponential {
        /// Mean, 1/rate.
        mean: f64,
    },
    /// Normal (Gaussian); may return negative values.
    Normal {
        /// Mean.
        mean: f64,
        /// Standard deviation.
        sd: f64,
    },
    /// Normal restricted to `[low, high]` by resampling until a draw is valid (our default for ratios and durations
    /// where Garg (2010) and Amini Salehi, Javadi & Buyya §A.6 leave the tails open).
    TruncatedNormal {
        /// Mean of the untruncated normal.
        mean: f64,
        /// Standard deviation of the untruncated normal.
        sd: f64,
        /// Lower bound; `None` is unbounded.
        low: Option<f64>,
        /// Upper bound; `None` is unbounded.
        high: Option<f64>,
    },
    /// Log-normal: ln X ~ N(mu, sigma) (DAS-2 durations, Amini Salehi (2012) Table 4.2).
    LogNormal {
        /// Mean of ln X.
        mu: f64,
        /// Standard deviation of ln X.
        sigma: f64,
    },
    /// Weibull with CDF 1 − exp(−(x/scale)^shape).
    Weibull {
        /// Scale (α in Amini Salehi (2012) Tables 4.2 and 5.2).
        scale: f64,
        /// Shape (β in Amini Salehi (2012) Tables 4.2 and 5.2).
        shape: f64,
    },
    /// Gamma with mean shape × scale.
    Gamma {
        /// Shape α.
        shape: f64,
        /// Scale β.
        scale: f64,
    },
    /// Mixture of exponentials (Melendez 2010, §4.1 high-variability service times): its `phases`, or the two-phase fit
    /// with balanced means to `mean` and `scv`.
    HyperExponential {
        /// Branches; probabilities sum to 1. Empty when `mean` and `scv` are given.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        phases: Vec<Phase>,
        /// Mean of the balanced-means fit.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mean: Option<f64>,
        /// Squared coefficient of variation of the balanced-means fit (variance over squared mean), at least 1.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scv: Option<f64>,
    },
}

impl Dist {
    /// Exponential inter-arrival times of a Poisson process with `rate` arrivals per second.
    pub fn poisson_arrivals(rate: f64) -> Dist {
        Dist::Exponential { mean: 1.0 / rate }
    }

    /// Log-normal with the given mean and log-space sd: mu = ln(mean) − sigma²/2
    /// (inverse of Amini Salehi (2012) Eq 4.30).
    pub fn lognormal_with_mean(mean: f64, sigma: f64) -> Dist {
        Dist::LogNormal { mu: mean.ln() - sigma * sigma / 2.0, sigma }
    }

    /// Weibull with the given mean and shape: scale = mean / Γ(1 + 1/shape).
    pub fn weibull_with_mean(mean: f64, shape: f64) -> Dist {
        Dist::Weibull { scale: mean / gamma_fn(1.0 + 1.0 / shape), shape }
    }

    /// Two-phase hyper-exponential with balanced means, given mean and coefficient of
    /// variation cv ≥ 1 (Melendez 2010, §4.1 recommended parameterisation; cv = 1 is exponential).
    pub fn h2_balanced(mean: f64, cv: f64) -> Result<Dist, WorkloadError> {
        if !(cv >= 1.0 && cv.is_finite() && mean > 0.0 && mean.is_finite()) {
            return Err(WorkloadError::param(
                "h2_balanced",
                format!("need mean > 0 and cv >= 1, got mean {mean}, cv {cv}"),
            ));
        }
        Ok(Dist::HyperExponential { phases: balanced_means(mean, cv * cv)?, mean: None, scv: None })
    }

    /// Analytic mean.
    pub fn mean(&self) -> f64 {
        match *self {
            Dist::Constant { value } => value,
            Dist::Uniform { low, high } => (low + high) / 2.0,
            Dist::Exponential { mean } | Dist::Normal { mean, .. } => mean,
            Dist::TruncatedNormal { mean, sd, low, high } => {
                let (a, b) = standardised_bounds(mean, sd, low, high);
                let z = normal_cdf(b) - normal_cdf(a);
                mean + sd * (pdf_or_zero(a) - pdf_or_zero(b)) / z
            }
            Dist::LogNormal { mu, sigma } => (mu + sigma * sigma / 2.0).exp(),
            Dist::Weibull { scale, shape } => scale * gamma_fn(1.0 + 1.0 / shape),
            Dist::Gamma { shape, scale } => shape * scale,
            Dist::HyperExponential { ref phases, mean, .. } => {
                mean.unwrap_or_else(|| phases.iter().map(|p| p.prob * p.mean).sum())
            }
        }
    }

    /// Its `kind` as a scenario names it (`"exponential"`).
    pub fn kind(&self) -> &'static str {
        match self {
            Dist::Constant { .. } => "constant",
            Dist::Uniform { .. } => "uniform",
            Dist::Exponential { .. } => "exponential",
            Dist::Normal { .. } => "normal",
            Dist::TruncatedNormal { .. } => "truncated_normal",
            Dist::LogNormal { .. } => "log_normal",
            Dist::Weibull { .. } => "weibull",
            Dist::Gamma { .. } => "gamma",
            Dist::HyperExponential { .. } => "hyper_exponential",
        }
    }

    /// Whether it never draws a negative value (for valid parameters).
    pub fn non_negative(&self) -> bool {
        match *self {
            Dist::Constant { value } => value >= 0.0,
            Dist::Uniform { low, .. } => low >= 0.0,
            Dist::Normal { sd, mean } => sd == 0.0 && mean >= 0.0,
            Dist::TruncatedNormal { low, .. } => low.is_some_and(|l| l >= 0.0),
            Dist::Exponential { .. }
            | Dist::LogNormal { .. }
            | Dist::Weibull { .. }
            | Dist::Gamma { .. }
            | Dist::HyperExponential { .. } => true,
        }
    }

    /// Validates the parameters and prepares a sampler.
    pub fn sampler(&self) -> Result<Sampler, WorkloadError> {
        let bad = |what: &str| WorkloadError::param(self.kind(), what.to_string());
        let inner = match *self {
            Dist::Constant { value } if value.is_finite() => Inner::Constant(value),
            Dist::Constant { .. } => return Err(bad("value must be finite")),
            Dist::Uniform { low, high } if low == high && low.is_finite() => Inner::Constant(low),
            Dist::Uniform { low, high } if low.is_finite() && high.is_finite() => {
                Inner::Uniform(Uniform::new(low, high).map_err(|_| bad("need low <= high"))?)
            }
            Dist::Uniform { .. } => return Err(bad("bounds must be finite")),
            Dist::Exponential { mean } if mean > 0.0 && mean.is_finite() => {
                Inner::Exp(Exp::new(1.0 / mean).map_err(|_| bad("mean must be positive"))?)
            }
            Dist::Exponential { .. } => return Err(bad("mean must be positive and finite")),
            Dist::Normal { mean, sd } if mean.is_finite() => {
                Inner::Normal(Normal::new(mean, sd).map_err(|_| bad("sd must be finite and >= 0"))?)
            }
            Dist::Normal { .. } => return Err(bad("mean must be finite")),
            Dist::TruncatedNormal { mean, sd, low, high } => {
                let nan_bound = low.is_some_and(f64::is_nan) || high.is_some_and(f64::is_nan);
                if !(mean.is_finite() && sd > 0.0 && sd.is_finite()) || nan_bound {
                    return Err(bad("need finite mean, sd > 0 and bounds that are numbers"));
                }
                let (a, b) = standardised_bounds(mean, sd, low, high);
                if normal_cdf(b) - normal_cdf(a) < MIN_ACCEPTANCE {
                    return Err(bad("the bounds keep less than 0.1% of the normal mass"));
                }
                Inner::TruncatedNormal {
                    normal: Normal::new(mean, sd).map_err(|_| bad("invalid normal"))?,
                    low: low.unwrap_or(f64::NEG_INFINITY),
                    high: high.unwrap_or(f64::INFINITY),
                }
            }
            Dist::LogNormal { mu, sigma } if mu.is_finite() => {
                Inner::LogNormal(LogNormal::new(mu, sigma).map_err(|_| bad("sigma must be finite and >= 0"))?)
            }
            Dist::LogNormal { .. } => return Err(bad("mu must be finite")),
            Dist::Weibull { scale, shape } if scale.is_finite() && shape.is_finite() => {
                Inner::Weibull(Weibull::new(scale, shape).map_err(|_| bad("scale and shape must be > 0"))?)
            }
            Dist::Weibull { .. } => return Err(bad("scale and shape must be finite")),
            Dist::Gamma { shape, scale } if shape.is_finite() && scale.is_finite() => {
                Inner::Gamma(Gamma::new(shape, scale).map_err(|_| bad("shape and scale must be > 0"))?)
            }
            Dist::Gamma { .. } => return Err(bad("shape and scale must be finite")),
            Dist::HyperExponential { ref phases, mean, scv } => {
                let phases = match (phases.is_empty(), mean, scv) {
                    (false, None, None) => phases.clone(),
                    (true, Some(mean), Some(scv)) => balanced_means(mean, scv)?,
                    _ => return Err(bad("give `phases`, or `mean` and `scv`, not both")),
                };
                let total: f64 = phases.iter().map(|p| p.prob).sum();
                let valid = phases.iter().all(|p| p.prob >= 0.0 && p.mean > 0.0 && p.mean.is_finite());
                if phases.is_empty() || !valid || (total - 1.0).abs() > 1e-9 {
                    return Err(bad("need probabilities summing to 1 and positive means"));
                }
                let mut cumulative = 0.0;
                let branches = phases
                    .iter()
                    .map(|p| {
                        cumulative += p.prob;
                        Exp::new(1.0 / p.mean).map(|e| (cumulative, e)).map_err(|_| bad("positive means"))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Inner::HyperExponential(branches)
            }
        };
        Ok(Sampler(inner))
    }
}

/// The two branches of the hyper-exponential with balanced means (p1/μ1 = p2/μ2) that has this mean and squared
/// coefficient of variation: p1 = (1 + √((scv − 1)/(scv + 1)))/2, μi = 2 pi / mean
/// ([`crate::analytic::H2::balanced_means`]).
fn balanced_means(mean: f64, scv: f64) -> Result<Vec<Phase>, WorkloadError> {
    let bad = |m: String| WorkloadError::param("hyper_exponential", m);
    if !(mean > 0.0 && mean.is_finite()) {
        return Err(bad(format!("mean must be positive and finite, found {mean}")));
    }
    if !(scv >= 1.0 && scv.is_finite()) {
        return Err(bad(format!(
            "scv (variance over squared mean) must be at least 1 (1 is the exponential), found {scv}"
        )));
    }
    let h = crate::analytic::H2::balanced_means(mean, scv).map_err(|e| bad(e.to_string()))?;
    Ok(vec![Phase { prob: h.p(), mean: 1.0 / h.rate1() }, Phase { prob: 1.0 - h.p(), mean: 1.0 / h.rate2() }])
}

/// Truncation bounds in standard units; an unbounded side is ±∞.
fn standardised_bounds(mean: f64, sd: f64, low: Option<f64>, high: Option<f64>) -> (f64, f64) {
    (low.map_or(f64::NEG_INFINITY, |l| (l - mean) / sd), high.map_or(f64::INFINITY, |h| (h - mean) / sd))
}

/// φ(z), with φ(±∞) = 0 without evaluating ∞ × 0.
fn pdf_or_zero(z: f64) -> f64 {
    if z.is_finite() { normal_pdf(z) } else { 0.0 }
}

#[derive(Clone, Debug)]
enum Inner {
    Constant(f64),
    Uniform(Uniform<f64>),
    Exp(Exp<f64>),
    Normal(Normal<f64>),
    TruncatedNormal {
        normal: Normal<f64>,
        low: f64,
        high: f64,
    },
    LogNormal(LogNormal<f64>),
    Weibull(Weibull<f64>),
    Gamma(Gamma<f64>),
    /// (cumulative probability, branch).
    HyperExponential(Vec<(f64, Exp<f64>)>),
}

/// A validated [`Dist`], ready to draw from.
#[derive(Clone, Debug)]
pub struct Sampler(Inner);

impl Distribution<f64> for Sampler {
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        match &self.0 {
            Inner::Constant(v) => *v,
            Inner::Uniform(d) => d.sample(rng),
            Inner::Exp(d) => d.sample(rng),
            Inner::Normal(d) => d.sample(rng),
            Inner::TruncatedNormal { normal, low, high } => loop {
                // Acceptance >= MIN_ACCEPTANCE was checked when the sampler was built.
                let x = normal.sample(rng);
                if x >= *low && x <= *high {
                    break x;
                }
            },
            Inner::LogNormal(d) => d.sample(rng),
            Inner::Weibull(d) => d.sample(rng),
            Inner::Gamma(d) => d.sample(rng),
            Inner::HyperExponential(branches) => {
                let u: f64 = rng.random();
                // Rounding can leave the cumulative sum just below 1: fall back to the last.
                branches
                    .iter()
                    .find(|(cum, _)| u < *cum)
                    .or(branches.last())
                    .map_or(f64::NAN, |(_, exp)| exp.sample(rng))
            }
        }
    }
}

/// Job-size distribution of Lublin & Feitelson (2003), reused by the DAS-2 model.
///
/// A job is serial with probability `serial_prob`. Otherwise x is drawn from a two-stage
/// uniform: U[u_low, u_med] with probability `u_prob`, else U[u_med, u_hi]. With the same
/// uniform draw u, if u ≤ serial_prob + pow2_prob the exponent is rounded, so the job has a
/// power-of-two size. The size is round(2^x) (`calc_number_of_nodes` in `m_lublin99.c`).
///
/// Amini Salehi (2012) Table 4.2 calls the same parameters (P_one, P_pow2, l, m, h, q).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TwoStageLogUniform {
    /// Probability of a serial job (SERIAL_PROB; P_one).
    pub serial_prob: f64,
    /// Probability of a power-of-two parallel job (POW2_PROB; P_pow2).
    pub pow2_prob: f64,
    /// log2 of the smallest parallel size (ULOW; l).
    pub u_low: f64,
    /// Change point of the two-stage uniform (UMED; m).
    pub u_med: f64,
    /// log2 of the largest size (UHI; h).
    pub u_hi: f64,
    /// Probability of the first stage U[u_low, u_med] (UPROB; q).
    pub u_prob: f64,
}

impl TwoStageLogUniform {
    /// Largest allowed `u_hi`: 2^20 PEs keeps the analytic size table small.
    const MAX_U_HI: f64 = 20.0;

    /// Checks the parameter domain.
    pub fn validate(&self) -> Result<(), WorkloadError> {
        let probs = [self.serial_prob, self.pow2_prob, self.u_prob];
        if !probs.iter().all(|p| (0.0..=1.0).contains(p)) {
            let (s, p, u) = (self.serial_prob, self.pow2_prob, self.u_prob);
            let m = format!("probabilities must lie in [0, 1], found serial {s}, power of two {p}, first stage {u}");
            return Err(WorkloadError::param("sizes", m));
        }
        if !(0.0 <= self.u_low && self.u_low <= self.u_med && self.u_med <= self.u_hi && self.u_hi <= Self::MAX_U_HI) {
            let (l, m, h) = (self.u_low, self.u_med, self.u_hi);
            let m = format!("need 0 <= ULOW <= UMED <= UHI <= 20, found ULOW {l}, UMED {m}, UHI {h}");
            return Err(WorkloadError::param("sizes", m));
        }
        Ok(())
    }

    /// Draws a size (`calc_number_of_nodes` and `two_stage_uniform` of `m_lublin99.c`).
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u32 {
        let u: f64 = rng.random();
        if u <= self.serial_prob {
            return 1;
        }
        let stage: f64 = rng.random();
        let (a, b) = if stage <= self.u_prob { (self.u_low, self.u_med) } else { (self.u_med, self.u_hi) };
        let mut par = rng.random::<f64>() * (b - a) + a;
        if u <= self.serial_prob + self.pow2_prob {
            par = (par + 0.5).floor();
        }
        (par.exp2() + 0.5).floor() as u32
    }

    /// Largest size the distribution can produce. Rounding the exponent can exceed
    /// 2^u_hi: with u_hi = log2(1000) (Garg 2010) power-of-two jobs reach 1024.
    pub fn max_size(&self) -> u32 {
        let plain = (self.u_hi.exp2() + 0.5).floor();
        let pow2 = (self.u_hi + 0.5).floor().exp2();
        plain.max(pow2) as u32
    }

    /// CDF of the two-stage uniform exponent.
    fn exponent_cdf(&self, x: f64) -> f64 {
        self.u_prob * uniform_cdf(x, self.u_low, self.u_med)
            + (1.0 - self.u_prob) * uniform_cdf(x, self.u_med, self.u_hi)
    }

    /// Exact probability of every size, as `(size, probability)` in increasing size.
    pub fn pmf(&self) -> Vec<(u32, f64)> {
        let n_max = self.max_size() as usize;
        let mut mass = vec![0.0; n_max + 1];
        let p_serial = self.serial_prob;
        let p_pow2 = (self.serial_prob + self.pow2_prob).min(1.0) - p_serial;
        let p_plain = 1.0 - p_serial - p_pow2;
        mass[1] += p_serial;
        let mut k = 0.0_f64;
        while k.exp2() <= n_max as f64 {
            let p = self.exponent_cdf(k + 0.5) - self.exponent_cdf(k - 0.5);
            mass[k.exp2() as usize] += p_pow2 * p;
            k += 1.0;
        }
        for (n, m) in mass.iter_mut().enumerate().skip(1) {
            let n = n as f64;
            let p = self.exponent_cdf((n + 0.5).log2()) - self.exponent_cdf((n - 0.5).log2());
            *m += p_plain * p;
        }
        mass.into_iter().enumerate().filter(|&(_, p)| p > 0.0).map(|(n, p)| (n as u32, p)).collect()
    }

    /// Exact mean size.
    pub fn mean(&self) -> f64 {
        self.pmf().iter().map(|&(n, p)| f64::from(n) * p).sum()
    }

    /// Probability of a serial (size 1) job, including parallel draws that round to 1.
    pub fn serial_fraction(&self) -> f64 {
        self.pmf().first().filter(|(n, _)| *n == 1).map_or(0.0, |&(_, p)| p)
    }

    /// Fraction of parallel jobs (size > 1) whose size is a power of two, including
    /// non-power-of-two draws that happen to round to one.
    pub fn pow2_fraction_parallel(&self) -> f64 {
        let pmf = self.pmf();
        let parallel: f64 = pmf.iter().filter(|(n, _)| *n > 1).map(|(_, p)| p).sum();
        let pow2: f64 = pmf.iter().filter(|(n, _)| *n > 1 && n.is_power_of_two()).map(|(_, p)| p).sum();
        pow2 / parallel
    }

    /// Mean size by Amini Salehi (2012) Eq 4.28–4.29: P_one + 2^⌈r⌉·P_pow2 + 2^r·(1 − P_one − P_pow2)
    /// with r = (q·l + m + (1−q)·h)/2. The thesis's approximation, not the exact mean.
    pub fn eq_4_28_mean(&self) -> f64 {
        let r = (self.u_prob * self.u_low + self.u_med + (1.0 - self.u_prob) * self.u_hi) / 2.0;
        self.serial_prob + r.ceil().exp2() * self.pow2_prob + r.exp2() * (1.0 - (self.serial_prob + self.pow2_prob))
    }

    /// Moves `u_med` so that the exact mean size equals `target`, the knob
    /// `m_lublin99.c` recommends for changing the mean size ("enlarge med").
    pub fn with_mean(self, target: f64) -> Result<Self, WorkloadError> {
        self.validate()?;
        let at = |m: f64| TwoStageLogUniform { u_med: m, ..self };
        let (mut lo, mut hi) = (self.u_low, self.u_hi);
        let (min, max) = (at(lo).mean(), at(hi).mean());
        if !(min <= target && target <= max) {
            return Err(WorkloadError::param(
                "mean size",
                format!("{target} is outside [{min:.3}, {max:.3}] reachable by moving u_med"),
            ));
        }
        // The mean is continuous and non-decreasing in u_med, so bisection converges.
        for _ in 0..60 {
            let mid = 0.5 * (lo + hi);
            if at(mid).mean() < target {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Ok(at(0.5 * (lo + hi)))
    }
}

/// CDF of U[a, b]; a point mass when a == b.
fn uniform_cdf(x: f64, a: f64, b: f64) -> f64 {
    if b > a {
        ((x - a) / (b - a)).clamp(0.0, 1.0)
    } else if x >= a {
        1.0
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    fn sample_mean(d: &Dist, n: usize, seed: u64) -> f64 {
        let s = d.sampler().unwrap();
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        (0..n).map(|_| s.sample(&mut rng)).sum::<f64>() / n as f64
    }

    #[test]
    fn sample_means_match_analytic_means() {
        // 200 000 draws: the standard error is sd/447; a 1% band is > 5 standard errors
        // for every case here (the largest cv is 2, the H2 case: 2/447 = 0.45%).
        let cases = [
            Dist::Uniform { low: 600.0, high: 5400.0 },
            Dist::poisson_arrivals(0.15),
            Dist::Weibull { scale: 7.0, shape: 1.1 },
            Dist::Gamma { shape: 2.0, scale: 3.0 },
            Dist::lognormal_with_mean(420.0, 1.0),
            Dist::TruncatedNormal { mean: 2.0, sd: 1.0, low: Some(1.0), high: None },
            Dist::h2_balanced(50.0, 2.0).unwrap(),
        ];
        for (i, d) in cases.iter().enumerate() {
            let m = sample_mean(d, 200_000, i as u64);
            assert!((m / d.mean() - 1.0).abs() < 0.01, "{d:?}: {m} vs {}", d.mean());
        }
    }

    #[test]
    fn published_means() {
        // Amini Salehi (2012) §5.6: Weibull(7.0, 1.1) has mean 6.75 s (rate 0.148).
        let w = Dist::Weibull { scale: 7.0, shape: 1.1 };
        assert!((w.mean() - 6.75).abs() < 0.01);
        // Amini Salehi (2012) Eq 4.30: a = 4.595, b = 1.7 gives about 420 s.
        let d = Dist::LogNormal { mu: 4.595, sigma: 1.7 };
        assert!((d.mean() - 420.0).abs() < 1.0);
        // Truncated N(2,1) at 1: mean 2 + φ(-1)/(1 − Φ(-1)) = 2.2876.
        let t = Dist::TruncatedNormal { mean: 2.0, sd: 1.0, low: Some(1.0), high: None };
        assert!((t.mean() - 2.2876).abs() < 1e-3);
    }

    #[test]
    fn invalid_parameters_are_errors() {
        let bad = [
            Dist::Uniform { low: 2.0, high: 1.0 },
            Dist::Exponential { mean: 0.0 },
            Dist::Weibull { scale: -1.0, shape: 1.0 },
            Dist::Gamma { shape: f64::NAN, scale: 1.0 },
            Dist::TruncatedNormal { mean: 0.0, sd: 1.0, low: Some(10.0), high: None },
            Dist::HyperExponential { phases: vec![Phase { prob: 0.5, mean: 1.0 }], mean: None, scv: None },
            Dist::HyperExponential { phases: vec![], mean: Some(1.0), scv: Some(0.5) },
            Dist::HyperExponential { phases: vec![], mean: Some(1.0), scv: None },
            Dist::HyperExponential { phases: vec![Phase { prob: 1.0, mean: 1.0 }], mean: Some(1.0), scv: Some(4.0) },
        ];
        for d in bad {
            assert!(d.sampler().is_err(), "{d:?}");
        }
        assert!(Dist::h2_balanced(1.0, 0.5).is_err());
    }

    #[test]
    fn hyper_exponential_from_mean_and_scv_has_them() {
        let d: Dist = toml::from_str("kind = \"hyper_exponential\"\nmean = 2.0\nscv = 4.0").unwrap();
        assert_eq!(d.mean(), 2.0);
        let Inner::HyperExponential(branches) = &d.sampler().unwrap().0 else { panic!("{d:?}") };
        assert_eq!(branches.len(), 2);
        // The fitted branches: E[S] = Σ p m, E[S²] = Σ 2 p m², so scv = E[S²]/E[S]² − 1.
        let Ok(phases) = balanced_means(2.0, 4.0) else { panic!() };
        let m1: f64 = phases.iter().map(|p| p.prob * p.mean).sum();
        let m2: f64 = phases.iter().map(|p| 2.0 * p.prob * p.mean * p.mean).sum();
        assert!((m1 - 2.0).abs() < 1e-12 && (m2 / (m1 * m1) - 1.0 - 4.0).abs() < 1e-12, "{m1} {m2}");
        // Balanced means: each branch carries half the mean.
        assert!((phases[0].prob * phases[0].mean - phases[1].prob * phases[1].mean).abs() < 1e-12);
        // The sampler's moments: 10^6 draws; the sd of the sample scv is about 0.1 here (heavy fourth moment),
        // so ±0.4 is a wide band at this fixed seed, and the mean's standard error is 0.2%.
        let s = d.sampler().unwrap();
        let mut rng = Pcg64Mcg::seed_from_u64(11);
        let n = 1_000_000;
        let xs: Vec<f64> = (0..n).map(|_| s.sample(&mut rng)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        assert!((mean / 2.0 - 1.0).abs() < 0.01, "{mean}");
        assert!((var / (mean * mean) - 4.0).abs() < 0.4, "{}", var / (mean * mean));
        // scv = 1 is the exponential: both branches have its mean.
        let Ok(exp) = balanced_means(3.0, 1.0) else { panic!() };
        assert_eq!((exp[0].prob, exp[0].mean), (0.5, 3.0));
        let err = Dist::HyperExponential { phases: vec![], mean: Some(1.0), scv: Some(0.5) }.sampler().unwrap_err();
        assert!(err.to_string().contains("scv (variance over squared mean) must be at least 1"), "{err}");
    }

    #[test]
    fn dist_serde_round_trip() {
        let d = Dist::Weibull { scale: 1.7, shape: 7.86 };
        let json = serde_json::to_string(&d).unwrap();
        assert_eq!(json, r#"{"kind":"weibull","scale":1.7,"shape":7.86}"#);
        assert_eq!(serde_json::from_str::<Dist>(&json).unwrap(), d);
    }

    #[test]
    fn two_stage_pmf_sums_to_one_and_matches_samples() {
        let s = TwoStageLogUniform { serial_prob: 0.2, pow2_prob: 0.5, u_low: 0.8, u_med: 3.0, u_hi: 6.0, u_prob: 0.9 };
        let total: f64 = s.pmf().iter().map(|(_, p)| p).sum();
        assert!((total - 1.0).abs() < 1e-12);
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        let n = 200_000;
        let mean = (0..n).map(|_| f64::from(s.sample(&mut rng))).sum::<f64>() / n as f64;
        // Sizes have sd about 6 here: the standard error is 0.013, the band 0.06.
        assert!((mean - s.mean()).abs() < 0.06, "{mean} vs {}", s.mean());
    }

    #[test]
    fn with_mean_hits_target() {
        let s = TwoStageLogUniform { serial_prob: 0.2, pow2_prob: 0.5, u_low: 0.8, u_med: 2.5, u_hi: 6.0, u_prob: 0.9 };
        let fitted = s.with_mean(5.0).unwrap();
        assert!((fitted.mean() - 5.0).abs() < 1e-9);
        assert!(s.with_mean(100.0).is_err());
    }
}
