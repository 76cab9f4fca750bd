//! Admission control of external requests in the local resource manager (Amini Salehi, Javadi & Buyya; Amini Salehi
//! (2012) ch5): the cluster holds at most K external requests, queued, running and preempted together, and refuses
//! the others, which go back to the gateway that forwarded them.
//!
//! The policies: CACP (conservative: accept all, K = ∞), AACP (aggressive: one at a time, K = 1), RACP (rate-based,
//! Sharifian et al.: K = μ_e/λ) and PACP (preemption-aware: Algorithm 4 on the M/G/1/K model of [`model`]). RACP and
//! PACP need the workload's rates: the provider estimates them from what it has seen since the start (local and
//! external arrival rates, the local service time's mean and coefficient of variation, ω the mean external service
//! time, both as run here) and recomputes K every `period`. The first estimates come sooner, after `period`/64 and
//! then at doubling intervals up to `period`, so that a loaded cluster is not left to admit everything for a whole
//! period (until the first estimate it admits every request). A request is external when it came through a gateway
//! (its submitter is not its owner).

pub mod model;

use serde::{Deserialize, Serialize};

use model::{
    Algorithm4, Capacity, ModelError, PacpInputs, VarianceForm, completion_time, pacp_capacity, racp_capacity,
};

/// Which admission control policy a provider applies to external requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AdmissionPolicy {
    /// Conservative admission control: accept every request (K = ∞).
    Cacp,
    /// Aggressive admission control: one external request at a time (K = 1).
    Aacp,
    /// Rate-based admission control (Sharifian et al.): K = max(1, ⌊μ_e/λ⌋), μ_e = 1/E(T).
    Racp,
    /// Preemption-aware admission control: the K of Algorithm 4.
    Pacp,
}

/// How a provider admits external requests.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdmissionConfig {
    /// The policy.
    pub policy: AdmissionPolicy,
    /// A fixed K for RACP or PACP instead of the estimated one.
    pub capacity: Option<usize>,
    /// Time between two estimates of K \[s\], once the first ones (at doubling intervals from a 64th of it) are made.
    pub period: f64,
    /// rate_l, the share of low-urgency requests, and u_l, u_h, the mean deadline ratios of low and high urgency:
    /// the threshold D = (rate_l u_l + (1 − rate_l) u_h) ω (Eq 5.13).
    pub low_urgency_share: f64,
    /// u_l.
    pub low_ratio: f64,
    /// u_h.
    pub high_ratio: f64,
    /// Algorithm 4 as intended or as printed.
    pub algorithm: Algorithm4,
    /// Eq 5.5's rate.
    pub variance: VarianceForm,
    /// The largest K the search of Algorithm 4 tries.
    pub max_k: usize,
}

impl AdmissionConfig {
    /// `policy` with the defaults: K estimated every hour, rate_l = 0.5 (not given by the source), u_l = 4 and u_h =
    /// 2 (the means of the deadline ratios N(4, 1) and N(2, 1)), the intended Algorithm 4 capped at K = 10,000.
    pub fn new(policy: AdmissionPolicy) -> AdmissionConfig {
        AdmissionConfig {
            policy,
            capacity: None,
            period: 3600.0,
            low_urgency_share: 0.5,
            low_ratio: 4.0,
            high_ratio: 2.0,
            algorithm: Algorithm4::Intended,
            variance: VarianceForm::Corrected,
            max_k: 10_000,
        }
    }
}

/// Running sums of what the provider has seen.
#[derive(Clone, Debug, Default)]
struct Estimates {
    locals: u64,
    local_sum: f64,
    local_squares: f64,
    externals: u64,
    external_sum: f64,
}

impl Estimates {
    /// The inputs of Algorithm 4 at `now`; `None` before any external request or at t = 0.
    fn inputs(&self, now: f64, config: &AdmissionConfig) -> Option<PacpInputs> {
        if self.externals == 0 || now <= 0.0 {
            return None;
        }
        let omega = self.external_sum / self.externals as f64;
        let (local_rate, local_service_rate, local_cv) = if self.locals == 0 {
            (0.0, 1.0, 0.0)
        } else {
            let n = self.locals as f64;
            let mean = self.local_sum / n;
            let variance = (self.local_squares / n - mean * mean).max(0.0);
            (n / now, 1.0 / mean, variance.sqrt() / mean)
        };
        let share = config.low_urgency_share;
        Some(PacpInputs {
            external_rate: self.externals as f64 / now,
            local_rate,
            local_service_rate,
            local_cv,
            omega,
            threshold: (share * config.low_ratio + (1.0 - share) * config.high_ratio) * omega,
            variance: config.variance,
        })
    }
}

/// The first estimate comes after the period over this.
const FIRST_ESTIMATE_DIVISOR: f64 = 64.0;

/// A provider's admission control: the policy, its estimates and the current K.
#[derive(Clone, Debug)]
pub struct Admission {
    config: AdmissionConfig,
    estimates: Estimates,
    capacity: Capacity,
    /// When K is estimated next [s].
    next_estimate: f64,
    /// The interval to the estimate after that [s]: doubling from `period`/64 up to `period`.
    interval: f64,
    /// Estimates the model refused (a local load of 1 or more), each answered with K = 1.
    pub fallbacks: u64,
}

impl Admission {
    /// Admission control by `config`.
    pub fn new(config: AdmissionConfig) -> Admission {
        let capacity = match (config.policy, config.capacity) {
            (AdmissionPolicy::Cacp, _) => Capacity::Unbounded,
            (AdmissionPolicy::Aacp, _) => Capacity::Finite(1),
            (_, Some(k)) => Capacity::Finite(k),
            (_, None) => Capacity::Unbounded,
        };
        let first = config.period / FIRST_ESTIMATE_DIVISOR;
        Admission {
            config,
            estimates: Estimates::default(),
            capacity,
            next_estimate: first,
            interval: first,
            fallbacks: 0,
        }
    }

    /// The policy.
    pub fn policy(&self) -> AdmissionPolicy {
        self.config.policy
    }

    /// The current K.
    pub fn capacity(&self) -> Capacity {
        self.capacity
    }

    /// A local request that runs `runtime` seconds here arrived.
    pub fn local_arrived(&mut self, runtime: f64) {
        let e = &mut self.estimates;
        e.locals += 1;
        e.local_sum += runtime;
        e.local_squares += runtime * runtime;
    }

    /// An external request that runs `runtime` seconds here arrived at `now` while `held` others are held:
    /// `Err` with the reason when it is refused.
    pub fn admit(&mut self, runtime: f64, now: f64, held: usize) -> Result<(), String> {
        self.estimates.externals += 1;
        self.estimates.external_sum += runtime;
        if now >= self.next_estimate {
            self.interval = (2.0 * self.interval).min(self.config.period);
            self.next_estimate = now + self.interval;
            self.estimate(now);
        }
        match self.capacity {
            Capacity::Finite(k) if held >= k => {
                let policy = format!("{:?}", self.config.policy).to_uppercase();
                Err(format!("admission control ({policy}): {held} external requests held, K = {k}"))
            }
            _ => Ok(()),
        }
    }

    /// Recomputes K from the estimates, for RACP and PACP without a fixed K.
    fn estimate(&mut self, now: f64) {
        let c = &self.config;
        if c.capacity.is_some() || matches!(c.policy, AdmissionPolicy::Cacp | AdmissionPolicy::Aacp) {
            return;
        }
        let Some(inputs) = self.estimates.inputs(now, c) else { return };
        let capacity = match c.policy {
            AdmissionPolicy::Racp => {
                completion_time(inputs.omega, inputs.local_rate, inputs.local_service_rate, 0.0, c.variance)
                    .and_then(|t| racp_capacity(1.0 / t.mean, inputs.local_rate))
            }
            _ => pacp_capacity(&inputs, c.algorithm, c.max_k),
        };
        self.capacity = capacity.unwrap_or_else(|_: ModelError| {
            self.fallbacks += 1;
            Capacity::Finite(1)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cacp_admits_all_and_aacp_one_at_a_time() {
        let mut cacp = Admission::new(AdmissionConfig::new(AdmissionPolicy::Cacp));
        assert!(cacp.admit(10.0, 1.0, 1000).is_ok());
        let mut aacp = Admission::new(AdmissionConfig::new(AdmissionPolicy::Aacp));
        assert!(aacp.admit(10.0, 1.0, 0).is_ok());
        let refused = aacp.admit(10.0, 1.0, 1).unwrap_err();
        assert!(refused.contains("AACP") && refused.contains("K = 1"), "{refused}");
    }

    #[test]
    fn pacp_estimates_k_from_what_it_saw() {
        // The thesis vector: λ = 0.01/s of locals of 30 s (θ = 0 here), Λ = 0.004/s of externals of 140 s.
        // The first estimate at 640,000 / 64 = 10,000 s.
        let config = AdmissionConfig { period: 640_000.0, ..AdmissionConfig::new(AdmissionPolicy::Pacp) };
        let mut pacp = Admission::new(config);
        for _ in 0..100 {
            pacp.local_arrived(30.0);
        }
        for _ in 0..39 {
            assert!(pacp.admit(140.0, 9_000.0, 50).is_ok(), "no estimate yet: all admitted");
        }
        assert_eq!(pacp.capacity(), Capacity::Unbounded);
        assert!(pacp.admit(140.0, 10_000.0, 3).is_ok());
        // θ = 0 gives V(T) = 3,673.5 s² and K = 4 (E(R_5) = 450.6 s > D = 420 s).
        assert_eq!(pacp.capacity(), Capacity::Finite(4));
        assert!(pacp.admit(140.0, 10_000.0, 4).is_err());
        assert_eq!(pacp.fallbacks, 0);
    }

    #[test]
    fn the_first_estimates_come_at_doubling_intervals() {
        // Period 6,400 s: estimates at 100, 300 (100 + 200), 700, 1,500, ..., then every 6,400 s.
        let mut racp =
            Admission::new(AdmissionConfig { period: 6_400.0, ..AdmissionConfig::new(AdmissionPolicy::Racp) });
        racp.local_arrived(1.0);
        assert!(racp.admit(1.0, 99.0, 0).is_ok());
        assert_eq!(racp.capacity(), Capacity::Unbounded, "no estimate before 100 s");
        // λ = 0.01/s, ρ_l = 0.01, E(T) = 1/0.99: μ_e/λ = 99.
        assert!(racp.admit(1.0, 100.0, 0).is_ok());
        assert_eq!(racp.capacity(), Capacity::Finite(99));
        for _ in 0..40 {
            racp.local_arrived(1.0);
        }
        assert!(racp.admit(1.0, 299.0, 0).is_ok());
        assert_eq!(racp.capacity(), Capacity::Finite(99), "the next estimate is at 300 s");
        // λ = 41/300, ρ_l = 0.137: μ_e/λ = (1 − ρ_l)/λ = 6.3.
        assert!(racp.admit(1.0, 300.0, 0).is_ok());
        assert_eq!(racp.capacity(), Capacity::Finite(6));
        assert_eq!((racp.next_estimate, racp.interval), (700.0, 400.0));
        for now in [700.0, 1_500.0, 3_100.0, 6_300.0] {
            assert!(racp.admit(1.0, now, 0).is_ok());
        }
        assert_eq!((racp.next_estimate, racp.interval), (12_700.0, 6_400.0));
    }

    #[test]
    fn racp_and_a_fixed_k() {
        let mut racp = Admission::new(AdmissionConfig { period: 100.0, ..AdmissionConfig::new(AdmissionPolicy::Racp) });
        // λ = 0.01, ρ_l = 0.3, E(T) = 200 s: μ_e/λ = 0.5, so K = 1.
        racp.local_arrived(30.0);
        assert!(racp.admit(140.0, 100.0, 0).is_ok());
        assert_eq!(racp.capacity(), Capacity::Finite(1));
        let fixed = AdmissionConfig { capacity: Some(2), ..AdmissionConfig::new(AdmissionPolicy::Pacp) };
        let mut pacp = Admission::new(fixed);
        assert!(pacp.admit(1.0, 1e6, 1).is_ok());
        assert!(pacp.admit(1.0, 1e6, 2).is_err());
        // A local load of 1 or more: the model refuses, K = 1.
        let mut over = Admission::new(AdmissionConfig { period: 1.0, ..AdmissionConfig::new(AdmissionPolicy::Pacp) });
        for _ in 0..10 {
            over.local_arrived(5.0);
        }
        assert!(over.admit(1.0, 10.0, 0).is_ok());
        assert_eq!((over.capacity(), over.fallbacks), (Capacity::Finite(1), 1));
    }
}
