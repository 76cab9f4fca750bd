//! The queueing model behind preemption-aware admission control (Amini Salehi, Javadi & Buyya, §IV; Amini Salehi
//! (2012) ch5, Eqs 5.1–5.13): each cluster is one server (requests are moldable and spread over all its PEs), local
//! requests form an M/G/1 queue with preemptive priority, and external requests an M/G/1/K queue whose service time
//! is stretched by the local busy periods that preempt it.
//!
//! - [`completion_time`]: an external request of work ω under preemptive resume, E(T) = ω/(1 − ρ_l) (Eq 5.4) and
//!   V(T) = ρ_l (θ² + 1) ω / (μ_l (1 − ρ_l)³) (Eq 5.5 with the local service rate; see [`VarianceForm`]).
//! - [`Service`]: that time as a Gamma distribution by moment matching (Eqs 5.11–5.12), deterministic in the limit
//!   ρ_l → 0 where the Gamma's shape grows without bound.
//! - [`Mg1k`]: M/G/1/K mean response E(R_K) (Bose's form, Eq 5.6) and blocking probability, K = 1, 2, …, from the
//!   departure-epoch probabilities of the M/G/1 embedded chain (Eq 5.8) truncated to K. The chain uses the standard
//!   recursion π_k = (π_0 ā_{k−1} + Σ_{i=1}^{k−1} π_i ā_{k−i}) / a_0 with ā_j = P[more than j arrivals in one
//!   service]: the printed Eq 5.9 is dimensionally inconsistent. The arrivals counted during a service are the
//!   external ones, Λ (the printed Eq 5.10 has the local rate λ). With Gamma service the a_k are negative binomial.
//! - [`pacp_capacity`]: Algorithm 4, the largest K with E(R_K) below the waiting threshold D (Eq 5.13), or the
//!   printed loop ([`Algorithm4::Literal`], which returns two more); [`racp_capacity`]: N_q = μ_e / λ (Sharifian et
//!   al., the rate-based baseline).
//!
//! Domain: rates and times finite, ω > 0, μ_l > 0, Λ ≥ 0, λ ≥ 0, θ ≥ 0, ρ_l = λ/μ_l < 1 (the local queue must be
//! stable: [`ModelError::LocalOverload`]), K ≥ 1, a Gamma shape > 0. ρ_e = Λ E(T) may be 1 or more: the external
//! queue is finite, its arrivals blocked, not unstable. An external load so heavy that no arrival-free service is
//! representable (a_0 below 1e-300, e.g. ρ_e above about 690 with deterministic service) is refused with
//! [`ModelError::Overloaded`]. Within the domain no result is NaN; nothing here panics.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Why the model refused its inputs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ModelError {
    /// Occurs when an input is outside its domain.
    InvalidInput {
        /// Parameter name.
        name: &'static str,
        /// The value given.
        value: f64,
        /// Its domain.
        requirement: &'static str,
    },
    /// Occurs when the local load ρ_l = λ/μ_l reaches 1: local requests alone saturate the cluster.
    LocalOverload {
        /// ρ_l.
        rho_l: f64,
    },
    /// Occurs when the external load is so heavy that a_0, the chance of no arrival during a service, underflows.
    Overloaded {
        /// ρ_e = Λ E(T).
        rho_e: f64,
    },
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::InvalidInput { name, value, requirement } => {
                write!(f, "invalid {name} = {value}: must be {requirement}")
            }
            ModelError::LocalOverload { rho_l } => {
                write!(f, "local load ρ_l = {rho_l} is not below 1: local requests alone saturate the cluster")
            }
            ModelError::Overloaded { rho_e } => {
                write!(f, "external load ρ_e = {rho_e} is too heavy to evaluate (no service is free of arrivals)")
            }
        }
    }
}

impl std::error::Error for ModelError {}

fn check(name: &'static str, value: f64, ok: bool, requirement: &'static str) -> Result<f64, ModelError> {
    if value.is_finite() && ok { Ok(value) } else { Err(ModelError::InvalidInput { name, value, requirement }) }
}

/// Which rate divides the variance of the completion time (Eq 5.5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VarianceForm {
    /// The local service rate μ_l: the compound-Poisson variance λ ω E\[B²\] of the local busy periods B, with
    /// E\[B²\] = E\[S_l²\]/(1 − ρ_l)³. It agrees with the Gamma shape of Eq 5.11.
    #[default]
    Corrected,
    /// The external service rate μ_e = 1/E(T), as printed (Eq 5.5 and the scale of Eq 5.11).
    Printed,
}

/// Mean and variance of an external request's completion time under preemptive-resume local requests.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Completion {
    /// E(T) \[s\].
    pub mean: f64,
    /// V(T) \[s²\].
    pub variance: f64,
}

/// Completion time of an external request of work `omega` \[s\] that local requests (Poisson, `local_rate` λ [1/s],
/// service rate `local_service_rate` μ_l [1/s] with coefficient of variation `local_cv` θ) preempt with
/// preemptive-resume priority: every interruption lasts a whole local busy period (Eqs 5.2–5.5).
pub fn completion_time(
    omega: f64,
    local_rate: f64,
    local_service_rate: f64,
    local_cv: f64,
    form: VarianceForm,
) -> Result<Completion, ModelError> {
    let omega = check("omega", omega, omega > 0.0, "positive and finite")?;
    let lambda = check("local_rate", local_rate, local_rate >= 0.0, "non-negative and finite")?;
    let mu_l = check("local_service_rate", local_service_rate, local_service_rate > 0.0, "positive and finite")?;
    let theta = check("local_cv", local_cv, local_cv >= 0.0, "non-negative and finite")?;
    let rho_l = lambda / mu_l;
    if rho_l >= 1.0 {
        return Err(ModelError::LocalOverload { rho_l });
    }
    let mean = omega / (1.0 - rho_l);
    let rate = match form {
        VarianceForm::Corrected => mu_l,
        VarianceForm::Printed => 1.0 / mean,
    };
    let variance = rho_l * (theta * theta + 1.0) * omega / (rate * (1.0 - rho_l).powi(3));
    Ok(Completion { mean, variance })
}

/// The external service-time distribution of the model.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum Service {
    /// Always `mean` \[s\] (no preemption: V(T) = 0).
    Deterministic {
        /// The time \[s\].
        mean: f64,
    },
    /// Gamma with `scale` α \[s\] and `shape` β (mean αβ, variance α²β).
    Gamma {
        /// α \[s\].
        scale: f64,
        /// β.
        shape: f64,
    },
}

impl Service {
    /// Shapes above this are treated as deterministic: the Gamma is then within 1e-6 of its mean in relative sd.
    const MAX_SHAPE: f64 = 1e12;

    /// Gamma by moment matching, α = V/E and β = E²/V (Eq 5.11); deterministic when the variance is 0 or the shape
    /// would exceed 1e12.
    pub fn from_moments(c: Completion) -> Result<Service, ModelError> {
        let mean = check("mean", c.mean, c.mean > 0.0, "positive and finite")?;
        let variance = check("variance", c.variance, c.variance >= 0.0, "non-negative and finite")?;
        let shape = mean * mean / variance;
        if variance == 0.0 || !shape.is_finite() || shape > Service::MAX_SHAPE {
            return Ok(Service::Deterministic { mean });
        }
        Service::gamma(variance / mean, shape)
    }

    /// Gamma with scale α > 0 and shape β > 0.
    pub fn gamma(scale: f64, shape: f64) -> Result<Service, ModelError> {
        let scale = check("scale", scale, scale > 0.0, "positive and finite")?;
        let shape = check("shape", shape, shape > 0.0, "positive and finite")?;
        Ok(Service::Gamma { scale, shape })
    }

    /// Mean \[s\].
    pub fn mean(&self) -> f64 {
        match *self {
            Service::Deterministic { mean } => mean,
            Service::Gamma { scale, shape } => scale * shape,
        }
    }

    /// Second moment \[s²\].
    pub fn second_moment(&self) -> f64 {
        match *self {
            Service::Deterministic { mean } => mean * mean,
            Service::Gamma { scale, shape } => scale * scale * shape * (shape + 1.0),
        }
    }

    /// a_0 of a_k = P[k Poisson(`rate`) arrivals in one service] (Eq 5.10), and what gives the ratios a_k/a_{k−1}:
    /// Poisson for a deterministic service, negative binomial for Gamma, a_k = a_{k−1} (k − 1 + β)/k · Λα/(1 + Λα).
    fn arrival_probabilities(&self, rate: f64) -> (f64, Ratio) {
        match *self {
            Service::Deterministic { mean } => ((-rate * mean).exp(), Ratio { shape: None, p: rate * mean }),
            Service::Gamma { scale, shape } => {
                let x = rate * scale;
                ((-shape * x.ln_1p()).exp(), Ratio { shape: Some(shape), p: x / (1.0 + x) })
            }
        }
    }
}

/// a_k / a_{k−1}: p/k for Poisson(p), (k − 1 + β)/k · p for the negative binomial of shape β.
#[derive(Clone, Copy, Debug)]
struct Ratio {
    shape: Option<f64>,
    p: f64,
}

impl Ratio {
    fn at(&self, k: usize) -> f64 {
        match self.shape {
            None => self.p / k as f64,
            Some(b) => (k as f64 - 1.0 + b) / k as f64 * self.p,
        }
    }
}

/// Response time and blocking of the M/G/1/K external queue for one K.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Point {
    /// K, the most external requests in the system (in service and waiting).
    pub k: usize,
    /// E(R_K) \[s\]: mean time from arrival to completion of an admitted request.
    pub response: f64,
    /// P_block = 1 − 1/(P_{d,0} + ρ_e): the share of arrivals refused.
    pub blocking: f64,
}

/// The M/G/1/K queue of external requests for K = 1, 2, …: its embedded chain grows one state per K, since the
/// recursion does not depend on K (only the normalisation of Eq 5.8 does).
#[derive(Clone, Debug)]
pub struct Mg1k {
    rate: f64,
    mean: f64,
    rho_e: f64,
    /// a_k, computed as far as needed.
    a: Vec<f64>,
    /// ā_j = 1 − Σ_{m ≤ j} a_m.
    abar: Vec<f64>,
    ratio: Ratio,
    /// π_0, π_1, … of the M/G/1 embedded chain, unnormalised (π_0 = 1, rescaled when large).
    pi: Vec<f64>,
    /// Σ_{k < len} π_k and Σ k π_k.
    sum: f64,
    weighted: f64,
}

impl Mg1k {
    /// The queue with Poisson arrivals of `rate` Λ [1/s] and `service` times.
    pub fn new(rate: f64, service: Service) -> Result<Mg1k, ModelError> {
        let rate = check("external_rate", rate, rate >= 0.0, "non-negative and finite")?;
        let mean = service.mean();
        let rho_e = rate * mean;
        let (a0, ratio) = service.arrival_probabilities(rate);
        if a0.is_nan() || a0 <= 1e-300 {
            return Err(ModelError::Overloaded { rho_e });
        }
        Ok(Mg1k {
            rate,
            mean,
            rho_e,
            a: vec![a0],
            abar: vec![(1.0 - a0).max(0.0)],
            ratio,
            pi: vec![1.0],
            sum: 1.0,
            weighted: 0.0,
        })
    }

    /// ρ_e = Λ E(T) (Eq 5.7).
    pub fn rho_e(&self) -> f64 {
        self.rho_e
    }

    /// The mean response of the M/G/1 queue without a bound (Pollaczek–Khinchine), the limit of E(R_K) as K grows;
    /// `None` when ρ_e ≥ 1.
    pub fn unbounded_response(&self, service: &Service) -> Option<f64> {
        (self.rho_e < 1.0).then(|| self.mean + self.rate * service.second_moment() / (2.0 * (1.0 - self.rho_e)))
    }

    /// ā_j, extending a_k and ā_k as needed.
    fn abar(&mut self, j: usize) -> f64 {
        while self.abar.len() <= j {
            let k = self.a.len();
            let a = self.a[k - 1] * self.ratio.at(k);
            self.a.push(a);
            let last = self.abar[k - 1];
            self.abar.push((last - a).max(0.0));
        }
        self.abar[j]
    }

    /// E(R_K) and the blocking probability for capacity `k` ≥ 1.
    pub fn at(&mut self, k: usize) -> Result<Point, ModelError> {
        check("k", k as f64, k >= 1, "at least 1")?;
        if self.rate == 0.0 {
            return Ok(Point { k, response: self.mean, blocking: 0.0 });
        }
        while self.pi.len() < k {
            let n = self.pi.len();
            let mut next = self.pi[0] * self.abar(n - 1);
            for i in 1..n {
                next += self.pi[i] * self.abar(n - i);
            }
            next /= self.a[0];
            self.pi.push(next);
            self.sum += next;
            self.weighted += n as f64 * next;
            // Only ratios matter: keep the unnormalised chain within range when ρ_e > 1 makes it grow.
            if self.sum > 1e200 {
                let s = self.sum;
                self.pi.iter_mut().for_each(|p| *p /= s);
                (self.sum, self.weighted) = (1.0, self.weighted / s);
            }
        }
        // Bose's form: the departure-epoch probabilities P_{d,j} = π_j / Σ_{i<K} π_i.
        let (sum, weighted) = if self.pi.len() == k {
            (self.sum, self.weighted)
        } else {
            let p = &self.pi[..k];
            (p.iter().sum(), p.iter().enumerate().map(|(j, x)| j as f64 * x).sum())
        };
        let p0 = self.pi[0] / sum;
        // P_{d,0} + ρ_e − 1 as ρ_e − Σ_{j≥1} P_{d,j}, which keeps its precision when Λ is tiny.
        let rest: f64 = self.pi[1..k].iter().sum::<f64>() / sum;
        let response = (weighted / sum + k as f64 * (self.rho_e - rest)) / self.rate;
        let blocking = (1.0 - 1.0 / (p0 + self.rho_e)).max(0.0);
        Ok(Point { k, response, blocking })
    }
}

/// How Algorithm 4 turns the response times into K.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Algorithm4 {
    /// The largest K with E(R_K) < D, at least 1: the intent of the algorithm.
    #[default]
    Intended,
    /// The loop as printed: it evaluates K = 0, 1, … and returns one past the first K whose E(R_K) reaches D, so
    /// two more than the intended K (and at least 2).
    Literal,
}

/// What an admission policy allows a cluster to hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Capacity {
    /// At most this many external requests (queued, running and preempted).
    Finite(usize),
    /// Any number.
    Unbounded,
}

/// The inputs of Algorithm 4 in one cluster, all estimated from its workload.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PacpInputs {
    /// Λ_j, external arrival rate [1/s].
    pub external_rate: f64,
    /// λ_j, local arrival rate [1/s].
    pub local_rate: f64,
    /// μ_l, local service rate [1/s].
    pub local_service_rate: f64,
    /// θ_j, coefficient of variation of the local service time.
    pub local_cv: f64,
    /// ω, mean duration of the external requests here \[s\].
    pub omega: f64,
    /// D, the waiting threshold \[s\] (Eq 5.13: D = (rate_l u_l + (1 − rate_l) u_h) ω).
    pub threshold: f64,
    /// Eq 5.5's rate.
    pub variance: VarianceForm,
}

impl PacpInputs {
    /// The external queue these inputs describe, and its service.
    pub fn queue(&self) -> Result<(Mg1k, Service), ModelError> {
        let c = completion_time(self.omega, self.local_rate, self.local_service_rate, self.local_cv, self.variance)?;
        let service = Service::from_moments(c)?;
        Ok((Mg1k::new(self.external_rate, service)?, service))
    }
}

/// Algorithm 4 (PACP): the capacity K whose expected response time stays below the threshold D. When E(R_K) never
/// reaches D (ρ_e < 1 and the unbounded queue's response below D) every request may be admitted; the search also
/// stops at `max_k`, which it then returns, so it always ends.
pub fn pacp_capacity(inputs: &PacpInputs, algorithm: Algorithm4, max_k: usize) -> Result<Capacity, ModelError> {
    let threshold = check("threshold", inputs.threshold, inputs.threshold > 0.0, "positive and finite")?;
    check("max_k", max_k as f64, max_k >= 1, "at least 1")?;
    let (mut queue, service) = inputs.queue()?;
    if queue.unbounded_response(&service).is_some_and(|r| r < threshold) {
        return Ok(Capacity::Unbounded);
    }
    for k in 1..=max_k {
        if queue.at(k)?.response >= threshold {
            return Ok(Capacity::Finite(match algorithm {
                Algorithm4::Intended => (k - 1).max(1),
                Algorithm4::Literal => k + 1,
            }));
        }
    }
    Ok(Capacity::Finite(max_k))
}

/// RACP (Sharifian et al.): N_q = μ_e / λ, the external service rate over the local arrival rate, rounded down and
/// at least 1 (the source gives neither); unbounded without local arrivals.
pub fn racp_capacity(external_service_rate: f64, local_rate: f64) -> Result<Capacity, ModelError> {
    let mu_e =
        check("external_service_rate", external_service_rate, external_service_rate > 0.0, "positive and finite")?;
    let lambda = check("local_rate", local_rate, local_rate >= 0.0, "non-negative and finite")?;
    let n = mu_e / lambda;
    Ok(if n.is_finite() && n < 1e9 { Capacity::Finite((n.floor() as usize).max(1)) } else { Capacity::Unbounded })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(actual: f64, expected: f64, tol: f64) {
        assert!((actual - expected).abs() <= tol, "{actual} != {expected} (±{tol})");
    }

    /// M/M/1/K as a Gamma of shape 1.
    fn mm1k(lambda: f64, mu: f64) -> Mg1k {
        Mg1k::new(lambda, Service::gamma(1.0 / mu, 1.0).unwrap()).unwrap()
    }

    /// M/M/1/K closed form: L = ρ/(1−ρ) − (K+1)ρ^{K+1}/(1−ρ^{K+1}), P_K = (1−ρ)ρ^K/(1−ρ^{K+1}), R = L/(λ(1−P_K)).
    fn mm1k_closed(lambda: f64, mu: f64, k: usize) -> (f64, f64) {
        let r: f64 = lambda / mu;
        let k1 = k as i32 + 1;
        let l = r / (1.0 - r) - f64::from(k1) * r.powi(k1) / (1.0 - r.powi(k1));
        let pk = (1.0 - r) * r.powi(k as i32) / (1.0 - r.powi(k1));
        (l / (lambda * (1.0 - pk)), pk)
    }

    #[test]
    fn mm1k_matches_the_closed_form_and_the_issue_vectors() {
        let mut q = mm1k(0.8, 1.0);
        let expected = [(1, 1.0, 0.444444), (2, 1.444444, 0.262295), (3, 1.852459, 0.173442)];
        for (k, r, b) in expected.into_iter().chain([(5, 2.563065, 0.088819), (10, 3.797098, 0.023493)]) {
            let p = q.at(k).unwrap();
            close(p.response, r, 1e-6);
            close(p.blocking, b, 1e-6);
            let (rc, bc) = mm1k_closed(0.8, 1.0, k);
            close(p.response, rc, 1e-9);
            close(p.blocking, bc, 1e-9);
        }
        // Overloaded: ρ_e = 1.5 is blocked, not unstable.
        let mut q = mm1k(1.5, 1.0);
        for (k, r, b) in [(1, 1.0, 0.6), (2, 1.6, 0.473684), (5, 3.758294, 0.365414), (10, 8.176476, 0.337232)] {
            let p = q.at(k).unwrap();
            close(p.response, r, 1e-6);
            close(p.blocking, b, 1e-6);
        }
    }

    #[test]
    fn preemptive_resume_completion_time() {
        let c = completion_time(1.0, 0.2, 1.0, 1.0, VarianceForm::Corrected).unwrap();
        close(c.mean, 1.25, 1e-12);
        close(c.variance, 0.78125, 1e-12);
        let c = completion_time(1.0, 0.4, 2.0, 1.0, VarianceForm::Corrected).unwrap();
        close(c.variance, 0.390625, 1e-12);
        // As printed, the rate is μ_e = 1/E(T) = 0.8 rather than μ_l = 1.
        let c = completion_time(1.0, 0.2, 1.0, 1.0, VarianceForm::Printed).unwrap();
        close(c.variance, 0.78125 / 0.8, 1e-12);
        let Service::Gamma { scale, shape } = Service::from_moments(c).unwrap() else { panic!("gamma") };
        close(scale * shape, 1.25, 1e-12);
    }

    /// The vector of Amini Salehi (2012) ch5 worked out with the corrected equations: Λ = 0.004/s, λ = 0.01/s,
    /// 1/μ_l = 30 s, θ = 0.1, ω = 140 s, D = 420 s.
    fn thesis_inputs(external_rate: f64) -> PacpInputs {
        PacpInputs {
            external_rate,
            local_rate: 0.01,
            local_service_rate: 1.0 / 30.0,
            local_cv: 0.1,
            omega: 140.0,
            threshold: (0.5 * 4.0 + 0.5 * 2.0) * 140.0,
            variance: VarianceForm::Corrected,
        }
    }

    #[test]
    fn pacp_vector_of_the_thesis() {
        let inputs = thesis_inputs(0.004);
        let c = completion_time(140.0, 0.01, 1.0 / 30.0, 0.1, VarianceForm::Corrected).unwrap();
        close(c.mean, 200.0, 1e-9);
        close(c.variance, 3710.2, 0.05);
        let Service::Gamma { scale, shape } = Service::from_moments(c).unwrap() else { panic!("gamma") };
        close(scale, 18.55, 0.005);
        close(shape, 10.78, 0.005);
        let (mut q, service) = inputs.queue().unwrap();
        close(q.rho_e(), 0.8, 1e-12);
        for (k, r) in [200.0, 265.6, 336.7, 399.1, 451.1, 493.4, 527.3, 554.0].into_iter().enumerate() {
            close(q.at(k + 1).unwrap().response, r, 0.05);
        }
        // E(R_1) = E(T) exactly; E(R_K) rises to the Pollaczek–Khinchine mean as K grows.
        assert_eq!(q.at(1).unwrap().response, c.mean);
        let pk = q.unbounded_response(&service).unwrap();
        close(pk, 637.1, 0.05);
        close(q.at(2000).unwrap().response, pk, 1e-6);
        assert_eq!(pacp_capacity(&inputs, Algorithm4::Intended, 10_000), Ok(Capacity::Finite(4)));
        assert_eq!(pacp_capacity(&inputs, Algorithm4::Literal, 10_000), Ok(Capacity::Finite(6)));
        assert_eq!(pacp_capacity(&thesis_inputs(0.006), Algorithm4::Intended, 10_000), Ok(Capacity::Finite(3)));
    }

    #[test]
    fn algorithm4_vectors() {
        let inputs = |external_rate| PacpInputs {
            external_rate,
            local_rate: 0.2,
            local_service_rate: 1.0,
            local_cv: 1.0,
            omega: 1.0,
            threshold: 3.0,
            variance: VarianceForm::Corrected,
        };
        let mut q = inputs(0.7).queue().unwrap().0;
        for (k, r) in [1.25, 1.7628, 2.2899, 2.7934, 3.2651].into_iter().enumerate() {
            close(q.at(k + 1).unwrap().response, r, 5e-5);
        }
        let (intended, literal) = (Algorithm4::Intended, Algorithm4::Literal);
        // ρ_e = 0.625: the unbounded queue's 2.8125 s stays below D, so the printed loop would never end.
        assert_eq!(pacp_capacity(&inputs(0.5), intended, 10_000), Ok(Capacity::Unbounded));
        for (rate, k) in [(0.7, 4), (1.0, 3), (2.0, 2)] {
            assert_eq!(pacp_capacity(&inputs(rate), intended, 10_000), Ok(Capacity::Finite(k)));
            assert_eq!(pacp_capacity(&inputs(rate), literal, 10_000), Ok(Capacity::Finite(k + 2)));
        }
        // The cap ends a search that would otherwise run far.
        assert_eq!(pacp_capacity(&inputs(0.7), intended, 3), Ok(Capacity::Finite(3)));
    }

    #[test]
    fn racp_is_the_rate_ratio_rounded_down() {
        assert_eq!(racp_capacity(0.8, 0.2), Ok(Capacity::Finite(4)));
        assert_eq!(racp_capacity(0.1, 0.2), Ok(Capacity::Finite(1)));
        assert_eq!(racp_capacity(0.1, 0.0), Ok(Capacity::Unbounded));
    }

    #[test]
    fn bad_inputs_are_refused_with_a_reason() {
        assert!(matches!(
            completion_time(1.0, 1.0, 1.0, 1.0, VarianceForm::Corrected),
            Err(ModelError::LocalOverload { .. })
        ));
        assert!(matches!(Service::gamma(1.0, 0.0), Err(ModelError::InvalidInput { name: "shape", .. })));
        assert!(matches!(Service::gamma(1.0, -2.0), Err(ModelError::InvalidInput { name: "shape", .. })));
        assert!(matches!(mm1k(0.5, 1.0).at(0), Err(ModelError::InvalidInput { name: "k", .. })));
        assert!(matches!(
            completion_time(f64::NAN, 0.1, 1.0, 1.0, VarianceForm::Corrected),
            Err(ModelError::InvalidInput { name: "omega", .. })
        ));
        let det = Service::Deterministic { mean: 1.0 };
        assert!(matches!(Mg1k::new(1000.0, det), Err(ModelError::Overloaded { .. })));
        assert!(ModelError::LocalOverload { rho_l: 1.2 }.to_string().contains("ρ_l = 1.2"));
    }

    #[test]
    fn never_nan_across_the_domain() {
        // No local load (deterministic service), light to very heavy external load, and large K.
        for rho_l in [0.0, 1e-9, 0.3, 0.99] {
            for rate in [0.0, 1e-6, 0.5, 1.0, 5.0, 50.0, 300.0] {
                let inputs = PacpInputs {
                    external_rate: rate,
                    local_rate: rho_l,
                    local_service_rate: 1.0,
                    local_cv: 0.5,
                    omega: 1.0,
                    threshold: 3.0,
                    variance: VarianceForm::Corrected,
                };
                let (mut q, _) = match inputs.queue() {
                    Ok(q) => q,
                    Err(ModelError::Overloaded { .. }) => continue,
                    Err(e) => panic!("{e}"),
                };
                let mut last = 0.0;
                for k in [1, 2, 3, 10, 100, 400] {
                    let p = q.at(k).unwrap();
                    assert!(p.response.is_finite() && p.blocking.is_finite(), "ρ_l {rho_l} Λ {rate} K {k}: {p:?}");
                    assert!(p.response >= last * (1.0 - 1e-9) && (0.0..=1.0).contains(&p.blocking), "{p:?}");
                    last = p.response;
                }
                assert!(pacp_capacity(&inputs, Algorithm4::Intended, 10_000).is_ok());
            }
        }
    }
}
