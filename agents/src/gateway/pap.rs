//! PAP, the Preemption-aware workload Allocation Policy of Amini Salehi (2012) ch4 (§4.2, Algorithm 2): how many external requests per
//! second a gateway routes to each cluster so as to minimise the mean response time of external requests, each
//! cluster an M/G/1 queue in which local requests have preemptive-resume priority over external ones.
//!
//! Symbols (Table 4.1): cluster j serves external requests in θ_j on average (second moment ω_j) and local requests,
//! arriving at λ_j, in τ_j (second moment μ_j); ρ_j = λ_j τ_j. Given Λ external requests per second, PAP finds the
//! rates Λ̂_j with Σ Λ̂_j = Λ that minimise T = (1/Λ) Σ Λ̂_j T_j (Eq 4.3–4.5), with T_j Kleinrock's response time
//! (Eq 4.4). The Lagrange condition gives, with a_j = 1 − ρ_j,
//!
//! Λ̂_j(z) = a_j/θ_j − (1/θ_j) √( a_j (a_j ω_j + θ_j λ_j μ_j) / (2 θ_j a_j z + ω_j − 2 θ_j²) ),
//!
//! which is Eq 4.7 with the factor a_j the printed numerator drops on θ_j λ_j μ_j (the only form for which the lower
//! bound of Eq 4.9 gives Λ̂_j = 0). Λ̂_j(z) is 0 at the load index ψ_j = λ_j μ_j / (2 a_j²) + θ_j / a_j (Eq 4.14)
//! and increasing above it; below it the cluster gets nothing. Algorithm 2's prefix search as printed always stops at
//! k = 1 (φ_k(ψ_k) = a_k/θ_k), so we bisect the increasing S(z) = Σ_j max(0, Λ̂_j(z)) for S(z) = Λ instead: the
//! clusters with ψ_j ≥ z get 0, the k-prefix the algorithm intends (after Li 2008).
//!
//! Λ must stay below the spare capacity Σ_j a_j/θ_j (where every cluster would be saturated): above it the queues
//! are unstable and PAP caps Λ at [`CAP`] of that capacity, saying so ([`Allocation::capped`]). A cluster saturated
//! by its local requests (ρ_j ≥ 1) gets no external request; when every cluster is saturated, or a statistic is not a
//! positive finite number, PAP refuses ([`PapError`]).

use std::fmt;

/// Share of the spare capacity PAP caps the external rate at when it would exceed it.
pub const CAP: f64 = 0.99;

/// Coefficient of variation of external service times (α_j of Eq 4.18; Amini Salehi 2012, §4.4: 0.5).
pub const EXTERNAL_CV: f64 = 0.5;

/// Coefficient of variation of local service times (β_j of Eq 4.19; Amini Salehi 2012, §4.4: 0.1).
pub const LOCAL_CV: f64 = 0.1;

/// Bisection steps: z is found to the last bits of an f64 (the thesis stops at ε = 0.001 on z, which leaves Σ Λ̂_j
/// off Λ by up to about 1e-4 in the example of the tests).
const STEPS: usize = 200;

/// What PAP knows of one cluster (Table 4.1), service times in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClusterLoad {
    /// θ_j: mean service time of an external request \[s\].
    pub theta: f64,
    /// ω_j: second moment of the external service time \[s²\].
    pub omega: f64,
    /// λ_j: arrival rate of local requests [1/s].
    pub lambda: f64,
    /// τ_j: mean service time of a local request \[s\].
    pub tau: f64,
    /// μ_j: second moment of the local service time \[s²\].
    pub mu: f64,
}

impl ClusterLoad {
    /// A cluster whose service times have the coefficients of variation of §4.4 (Eqs 4.18–4.19: ω = (α θ)² + θ²).
    pub fn with_cvs(theta: f64, lambda: f64, tau: f64, external_cv: f64, local_cv: f64) -> ClusterLoad {
        ClusterLoad {
            theta,
            omega: (external_cv * theta).powi(2) + theta * theta,
            lambda,
            tau,
            mu: (local_cv * tau).powi(2) + tau * tau,
        }
    }

    /// ρ_j = λ_j τ_j: the utilisation by local requests.
    pub fn rho(&self) -> f64 {
        self.lambda * self.tau
    }

    /// a_j / θ_j: the external rate that would saturate the cluster.
    pub fn spare(&self) -> f64 {
        (1.0 - self.rho()).max(0.0) / self.theta
    }

    /// ψ_j (Eq 4.14): the Lagrange multiplier below which the cluster gets no external request.
    pub fn psi(&self) -> f64 {
        let a = 1.0 - self.rho();
        self.lambda * self.mu / (2.0 * a * a) + self.theta / a
    }

    /// Λ̂_j(z), the corrected Eq 4.7, floored at 0 (0 for z ≤ ψ_j).
    pub fn rate_at(&self, z: f64) -> f64 {
        if z <= self.psi() {
            return 0.0;
        }
        let (a, th) = (1.0 - self.rho(), self.theta);
        let root = (a * (a * self.omega + th * self.lambda * self.mu)
            / (2.0 * th * a * z + self.omega - 2.0 * th * th))
            .sqrt();
        ((a - root) / th).max(0.0)
    }

    /// T_j (Eq 4.4): the mean response time of external requests routed here at `rate`.
    pub fn response_time(&self, rate: f64) -> f64 {
        let u = rate * self.theta + self.rho();
        (self.theta + (rate * self.omega + self.lambda * self.mu) / (2.0 * (1.0 - u))) / (1.0 - self.rho())
    }

    /// Which statistic is not usable, if any.
    fn invalid(&self) -> Option<(&'static str, f64)> {
        let positive = [("theta", self.theta), ("omega", self.omega)];
        let non_negative = [("lambda", self.lambda), ("tau", self.tau), ("mu", self.mu)];
        positive
            .into_iter()
            .find(|(_, v)| !(v.is_finite() && *v > 0.0))
            .or_else(|| non_negative.into_iter().find(|(_, v)| !(v.is_finite() && *v >= 0.0)))
    }
}

/// PAP's rates for one external arrival rate.
#[derive(Clone, Debug, PartialEq)]
pub struct Allocation {
    /// Λ̂_j for each cluster [1/s], summing to the rate allocated.
    pub rates: Vec<f64>,
    /// The Lagrange multiplier z solving Σ Λ̂_j(z) = Λ.
    pub z: f64,
    /// T (Eq 4.3) at these rates \[s\].
    pub response_time: f64,
    /// Why fewer than Λ requests per second were allocated, if so (Λ capped at [`CAP`] of the spare capacity).
    pub capped: Option<String>,
}

impl Allocation {
    /// The routing fractions P_j = Λ̂_j / Σ Λ̂ (never NaN: the rates sum to a positive number).
    pub fn fractions(&self) -> Vec<f64> {
        let total: f64 = self.rates.iter().sum();
        self.rates.iter().map(|r| r / total).collect()
    }
}

/// Why PAP allocates nothing.
#[derive(Clone, Debug, PartialEq)]
pub enum PapError {
    /// No cluster, or a rate Λ that is not a positive finite number.
    NoDemand(f64),
    /// A statistic of a cluster (by index) is not a positive (θ, ω) or non-negative (λ, τ, μ) finite number.
    BadStatistic {
        /// The cluster's index.
        cluster: usize,
        /// The statistic ("theta", "omega", "lambda", "tau" or "mu").
        what: &'static str,
        /// Its value.
        value: f64,
    },
    /// Every cluster is saturated by its local requests (ρ_j ≥ 1): there is no spare capacity.
    Saturated,
}

impl fmt::Display for PapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PapError::NoDemand(rate) => write!(f, "PAP needs clusters and a positive external rate, found {rate}"),
            PapError::BadStatistic { cluster, what, value } => {
                write!(f, "PAP: cluster {cluster}'s {what} is {value}, not a usable statistic")
            }
            PapError::Saturated => write!(f, "PAP: every cluster is saturated by its local requests (rho >= 1)"),
        }
    }
}

impl std::error::Error for PapError {}

/// PAP: the rates Λ̂_j minimising the mean external response time for `total` = Λ requests per second.
pub fn pap(clusters: &[ClusterLoad], total: f64) -> Result<Allocation, PapError> {
    if clusters.is_empty() || !(total.is_finite() && total > 0.0) {
        return Err(PapError::NoDemand(total));
    }
    if let Some((cluster, (what, value))) = clusters.iter().enumerate().find_map(|(j, c)| Some((j, c.invalid()?))) {
        return Err(PapError::BadStatistic { cluster, what, value });
    }
    let spare: f64 = clusters.iter().map(ClusterLoad::spare).sum();
    if spare <= 0.0 {
        return Err(PapError::Saturated);
    }
    let (target, capped) = if total < spare {
        (total, None)
    } else {
        let cap = CAP * spare;
        let why = format!(
            "the external rate {total:.6}/s is at or above the spare capacity {spare:.6}/s of the clusters: allocated {cap:.6}/s"
        );
        (cap, Some(why))
    };
    // Saturated clusters get nothing; the others' S(z) rises from 0 at min ψ towards their spare capacity.
    let open: Vec<&ClusterLoad> = clusters.iter().filter(|c| c.rho() < 1.0).collect();
    let sum = |z: f64| open.iter().map(|c| c.rate_at(z)).sum::<f64>();
    let mut lb = open.iter().map(|c| c.psi()).fold(f64::INFINITY, f64::min);
    let mut ub = 2.0 * lb.max(f64::MIN_POSITIVE);
    while sum(ub) < target {
        lb = ub;
        ub *= 2.0;
    }
    for _ in 0..STEPS {
        let z = 0.5 * (lb + ub);
        if z <= lb || z >= ub {
            break;
        }
        if sum(z) < target {
            lb = z;
        } else {
            ub = z;
        }
    }
    let z = ub;
    let rates: Vec<f64> = clusters.iter().map(|c| if c.rho() < 1.0 { c.rate_at(z) } else { 0.0 }).collect();
    let allocated: f64 = rates.iter().sum();
    let response_time = clusters.iter().zip(&rates).map(|(c, &r)| r * c.response_time(r)).sum::<f64>() / allocated;
    Ok(Allocation { rates, z, response_time, capped })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The three-cluster example of the tests: (θ, λ, τ) = (1.0, 0.3, 1.0), (0.5, 0.5, 0.8), (0.25, 1.0, 0.5), CVs
    /// 0.5 and 0.1.
    fn example() -> Vec<ClusterLoad> {
        [(1.0, 0.3, 1.0), (0.5, 0.5, 0.8), (0.25, 1.0, 0.5)]
            .map(|(theta, lambda, tau)| ClusterLoad::with_cvs(theta, lambda, tau, EXTERNAL_CV, LOCAL_CV))
            .to_vec()
    }

    #[test]
    fn the_corrected_eq_4_7_on_the_three_cluster_example() {
        let a = pap(&example(), 3.0).unwrap();
        for (got, want) in a.rates.iter().zip([0.51491, 0.91685, 1.56824]) {
            assert!((got - want).abs() < 5e-6, "{:?}", a.rates);
        }
        assert!((a.response_time - 4.30129).abs() < 5e-6, "{}", a.response_time);
        assert!((a.rates.iter().sum::<f64>() - 3.0).abs() < 1e-9);
        assert_eq!(a.capped, None);
        let p = a.fractions();
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn no_perturbation_lowers_the_mean_response_time() {
        let clusters = example();
        let a = pap(&clusters, 3.0).unwrap();
        let t = |rates: &[f64]| clusters.iter().zip(rates).map(|(c, &r)| r * c.response_time(r)).sum::<f64>() / 3.0;
        for (i, j) in [(0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1)] {
            for d in [1e-3, 1e-2] {
                let mut r = a.rates.clone();
                r[i] += d;
                r[j] -= d;
                assert!(t(&r) > a.response_time, "moving {d} from {j} to {i}");
            }
        }
    }

    #[test]
    fn clusters_with_psi_at_least_z_get_nothing() {
        // A light demand goes to the least loaded cluster only.
        let clusters = example();
        for total in [0.01, 0.5, 1.0, 3.0, 3.8] {
            let a = pap(&clusters, total).unwrap();
            assert!((a.rates.iter().sum::<f64>() - total).abs() < 1e-9, "{total}");
            for (c, r) in clusters.iter().zip(&a.rates) {
                if c.psi() >= a.z {
                    assert_eq!(*r, 0.0, "{total}");
                } else {
                    assert!(*r > 0.0, "{total}");
                }
            }
        }
        let light = pap(&clusters, 0.01).unwrap();
        assert_eq!(light.rates.iter().filter(|r| **r > 0.0).count(), 1, "{:?}", light.rates);
    }

    #[test]
    fn a_rate_beyond_the_spare_capacity_is_capped_with_a_reason() {
        let clusters = example();
        let spare: f64 = clusters.iter().map(ClusterLoad::spare).sum();
        let a = pap(&clusters, spare * 2.0).unwrap();
        assert!((a.rates.iter().sum::<f64>() - CAP * spare).abs() < 1e-9);
        assert!(a.capped.as_deref().unwrap().contains("spare capacity"));
        assert!(a.fractions().iter().all(|p| p.is_finite() && *p >= 0.0));
    }

    #[test]
    fn saturated_clusters_and_bad_statistics() {
        let mut clusters = example();
        clusters[1].lambda = 2.0; // ρ = 1.6
        let a = pap(&clusters, 1.0).unwrap();
        assert_eq!(a.rates[1], 0.0);
        assert!(a.fractions().iter().all(|p| p.is_finite()));
        for c in &mut clusters {
            c.lambda = 10.0;
        }
        assert_eq!(pap(&clusters, 1.0), Err(PapError::Saturated));
        let mut bad = example();
        bad[2].theta = 0.0;
        assert_eq!(pap(&bad, 1.0), Err(PapError::BadStatistic { cluster: 2, what: "theta", value: 0.0 }));
        bad[2].theta = f64::NAN;
        assert!(matches!(pap(&bad, 1.0), Err(PapError::BadStatistic { cluster: 2, .. })));
        let mut negative = example();
        negative[0].lambda = -0.1;
        assert!(matches!(pap(&negative, 1.0), Err(PapError::BadStatistic { cluster: 0, what: "lambda", .. })));
        assert_eq!(pap(&example(), 0.0), Err(PapError::NoDemand(0.0)));
        assert_eq!(pap(&[], 1.0), Err(PapError::NoDemand(1.0)));
    }
}
