//! QoS attributes the studies attach to jobs: deadlines, urgency classes, budgets and
//! valuations. Traces and the Lublin and GWA models have none, so each study draws them.

use rand::distr::Distribution;
use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};

use super::dist::{Dist, Sampler};
use super::{Urgency, UrgencyClass, Workload, WorkloadError};

/// Lowest deadline ratio kept: a deadline shorter than the runtime can never be met.
/// Amini Salehi, Javadi & Buyya §A.6 suggests truncating at 1.0; we resample out-of-range normal draws instead,
/// which is what [`Dist::TruncatedNormal`] does.
pub const MIN_DEADLINE_RATIO: f64 = 1.0;

/// High- and low-urgency requests mixed at random, each with a normal deadline ratio.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UrgencyMix {
    /// Probability that a request is high-urgency.
    pub high_fraction: f64,
    /// Deadline ratio of high-urgency requests.
    pub high_ratio: Dist,
    /// Deadline ratio of low-urgency requests.
    pub low_ratio: Dist,
}

impl UrgencyMix {
    /// Amini Salehi (2012) ch5 / Amini Salehi, Javadi & Buyya §A.6: ratio N(4, 1) for low and N(2, 1) for high urgency,
    /// classes "distributed uniformly" over the arrivals.
    ///
    /// rate_l is not given; we assume 0.5, i.e. `high_fraction` 0.5. Ratios are truncated
    /// at [`MIN_DEADLINE_RATIO`].
    pub fn amini_salehi_ch5() -> Self {
        UrgencyMix { high_fraction: 0.5, high_ratio: ratio(2.0, 1.0), low_ratio: ratio(4.0, 1.0) }
    }

    /// Garg (2010) §6.5 (Irwin et al.): HU ratio normal with mean 4 and variance 2; LU mean
    /// 12 (high:low ratio 3). The LU variance is not given; we assume 6 (3 × 2).
    /// `high_fraction` is the HU share (0, 0.2, …, 1 in the thesis).
    pub fn garg_ch6(high_fraction: f64) -> Self {
        UrgencyMix { high_fraction, high_ratio: ratio(4.0, 2f64.sqrt()), low_ratio: ratio(12.0, 6f64.sqrt()) }
    }

    /// Validates the mix and prepares its samplers.
    pub fn sampler(&self) -> Result<UrgencySampler, WorkloadError> {
        if !(0.0..=1.0).contains(&self.high_fraction) {
            return Err(WorkloadError::param(
                "high_fraction",
                format!("must lie in [0, 1], got {}", self.high_fraction),
            ));
        }
        Ok(UrgencySampler {
            high_fraction: self.high_fraction,
            high: self.high_ratio.sampler()?,
            low: self.low_ratio.sampler()?,
        })
    }

    /// Gives every job an urgency and the deadline submit + ratio × runtime.
    pub fn assign<R: Rng + ?Sized>(&self, w: &mut Workload, rng: &mut R) -> Result<(), WorkloadError> {
        let s = self.sampler()?;
        for job in &mut w.jobs {
            let u = s.sample(rng);
            job.deadline = Some(u.deadline(job.submit, job.runtime));
            job.urgency = Some(u);
        }
        Ok(())
    }
}

/// Normal deadline ratio truncated below at [`MIN_DEADLINE_RATIO`].
fn ratio(mean: f64, sd: f64) -> Dist {
    Dist::TruncatedNormal { mean, sd, low: Some(MIN_DEADLINE_RATIO), high: None }
}

/// A validated [`UrgencyMix`].
#[derive(Clone, Debug)]
pub struct UrgencySampler {
    high_fraction: f64,
    high: Sampler,
    low: Sampler,
}

impl UrgencySampler {
    /// Draws a class, then its deadline ratio.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Urgency {
        let high = rng.random::<f64>() < self.high_fraction;
        let (class, s) = if high { (UrgencyClass::High, &self.high) } else { (UrgencyClass::Low, &self.low) };
        Urgency { class, deadline_ratio: s.sample(rng) }
    }
}

/// Garg (2010) §7.6: deadline = submit + U[low_factor·r, high_factor·r] for runtime r
/// (the thesis uses U[r, 3r]; measured from submission, which it does not state).
pub fn assign_uniform_deadlines<R: Rng + ?Sized>(
    w: &mut Workload,
    low_factor: f64,
    high_factor: f64,
    rng: &mut R,
) -> Result<(), WorkloadError> {
    if !(low_factor.is_finite() && high_factor.is_finite() && 0.0 <= low_factor) || low_factor > high_factor {
        return Err(WorkloadError::param(
            "deadline factors",
            format!("need 0 <= low <= high, got [{low_factor}, {high_factor}]"),
        ));
    }
    for job in &mut w.jobs {
        let f = low_factor + rng.random::<f64>() * (high_factor - low_factor);
        job.deadline = Some(job.submit + f * job.runtime);
    }
    Ok(())
}

/// Garg (2010) §7.6: initial valuations U[90 000, 160 000] currency units.
pub fn garg_ch7_valuation() -> Dist {
    Dist::Uniform { low: 90_000.0, high: 160_000.0 }
}

/// Draws every job's initial valuation from `dist`.
pub fn assign_valuations<R: Rng + ?Sized>(w: &mut Workload, dist: &Dist, rng: &mut R) -> Result<(), WorkloadError> {
    let s = dist.sampler()?;
    for job in &mut w.jobs {
        job.valuation = Some(s.sample(rng));
    }
    Ok(())
}

/// Garg (2010) §3.3/§4.4 "relaxed" budget: twice the cost of the job at the mean price,
/// cost = price × execution time × CPUs. Per job (our reading), so that it always exceeds the
/// actual cost, as the thesis requires (prices lie in [4, 5] G$, mean 4.5).
pub fn relaxed_budget(runtime: f64, pes: u32, mean_price: f64) -> f64 {
    2.0 * mean_price * runtime * f64::from(pes)
}

/// Deadline scenarios of Garg (2010) ch3–4: estimated time plus a slack with 20% Gaussian
/// variation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum DeadlineSlack {
    /// Experiment 1: 50 s.
    Tight,
    /// Experiment 2: 250 s.
    Medium,
    /// Experiment 3: 500 s.
    Relaxed,
}

impl DeadlineSlack {
    /// Mean slack, s.
    pub fn seconds(self) -> f64 {
        match self {
            DeadlineSlack::Tight => 50.0,
            DeadlineSlack::Medium => 250.0,
            DeadlineSlack::Relaxed => 500.0,
        }
    }

    /// Slack distribution: "20% variation (Gaussian)" read as N(s, 0.2·s), kept
    /// non-negative.
    pub fn dist(self) -> Dist {
        let s = self.seconds();
        Dist::TruncatedNormal { mean: s, sd: 0.2 * s, low: Some(0.0), high: None }
    }
}

#[cfg(test)]
mod tests {
    use super::super::WorkloadJob;
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    fn workload(n: usize) -> Workload {
        Workload::new((0..n).map(|i| WorkloadJob::new(i as u64 + 1, i as f64 * 10.0, 100.0, 1)).collect())
    }

    #[test]
    fn amini_salehi_urgency_mix() {
        let mut w = workload(20_000);
        let mut rng = Pcg64Mcg::seed_from_u64(4);
        UrgencyMix::amini_salehi_ch5().assign(&mut w, &mut rng).unwrap();
        let (high, low): (Vec<_>, Vec<_>) =
            w.jobs.iter().map(|j| j.urgency.unwrap()).partition(|u| u.class == UrgencyClass::High);
        let mean = |v: &[Urgency]| v.iter().map(|u| u.deadline_ratio).sum::<f64>() / v.len() as f64;
        // Binomial SE of the share at n = 20 000 is 0.0035; ratio SEs are below 0.011.
        // Bands of about 4 SE.
        assert!((high.len() as f64 / 20_000.0 - 0.5).abs() < 0.015);
        assert!((mean(&high) - ratio(2.0, 1.0).mean()).abs() < 0.04);
        assert!((mean(&low) - ratio(4.0, 1.0).mean()).abs() < 0.04);
        assert!(w.jobs.iter().all(|j| {
            let u = j.urgency.unwrap();
            u.deadline_ratio >= MIN_DEADLINE_RATIO && j.deadline == Some(j.submit + u.deadline_ratio * j.runtime)
        }));
    }

    #[test]
    fn garg_ch6_classes() {
        let mut w = workload(10_000);
        let mut rng = Pcg64Mcg::seed_from_u64(6);
        UrgencyMix::garg_ch6(0.2).assign(&mut w, &mut rng).unwrap();
        let high = w.jobs.iter().filter(|j| j.urgency.unwrap().class == UrgencyClass::High).count();
        // Binomial SE 0.004 at n = 10 000; band 0.016.
        assert!((high as f64 / 10_000.0 - 0.2).abs() < 0.016);
        assert!(UrgencyMix::garg_ch6(1.5).assign(&mut w, &mut rng).is_err());
    }

    #[test]
    fn uniform_deadlines_and_valuations() {
        let mut w = workload(1000);
        let mut rng = Pcg64Mcg::seed_from_u64(8);
        assign_uniform_deadlines(&mut w, 1.0, 3.0, &mut rng).unwrap();
        assign_valuations(&mut w, &garg_ch7_valuation(), &mut rng).unwrap();
        for j in &w.jobs {
            let slack = j.deadline.unwrap() - j.submit;
            assert!((100.0..=300.0).contains(&slack));
            assert!((90_000.0..160_000.0).contains(&j.valuation.unwrap()));
        }
        assert!(assign_uniform_deadlines(&mut w, 3.0, 1.0, &mut rng).is_err());
    }

    #[test]
    fn budgets_and_slacks() {
        assert_eq!(relaxed_budget(400.0, 5, 4.5), 18_000.0);
        assert_eq!(DeadlineSlack::Medium.seconds(), 250.0);
        assert!((DeadlineSlack::Tight.dist().mean() - 50.0).abs() < 1e-3);
    }
}
