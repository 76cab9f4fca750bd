//! Closed-form steady-state results of elementary queues, the yardstick for the resource-provider actor.
//!
//! Every item is a pure function of its inputs. Rates are per second and times are seconds (any
//! consistent unit works: results take the unit of the inputs). Non-finite or non-positive inputs,
//! unstable systems (utilisation ρ ≥ 1) and results that overflow `f64` are refused with an
//! [`AnalyticError`]; nothing here panics.
//!
//! Sources:
//! - M/M/1, M/M/c (Erlang C) and the Pollaczek–Khinchine mean: L. Kleinrock, *Queueing Systems,
//!   Volume 1: Theory*, Wiley 1975, ch. 3 and 5; M. Harchol-Balter, *Performance Modeling and Design
//!   of Computer Systems*, Cambridge University Press 2013, ch. 14 and 23.
//! - Erlang B recursion and the B-to-C conversion: D. L. Jagerman, "Some properties of the Erlang
//!   loss function", Bell System Technical Journal 53 (1974); Harchol-Balter ch. 14.
//! - Preemptive-resume priority: L. Kleinrock, *Queueing Systems, Volume 2: Computer Applications*,
//!   Wiley 1976, ch. 3; Harchol-Balter ch. 32.
//! - Balanced-means H2 fit: W. Whitt, "Approximating a point process by a renewal process, I: two
//!   basic methods", Operations Research 30(1), 1982; A. O. Allen, *Probability, Statistics, and
//!   Queueing Theory with Computer Science Applications*, 2nd ed., Academic Press 1990.

pub mod dam;

/// The M/G/1/K model of preemption-aware admission control (Amini Salehi, Javadi & Buyya; Amini Salehi (2012) ch5):
/// completion time under preemptive resume, Gamma service, response time and blocking per K, Algorithm 4. It lives
/// with the provider, which evaluates it while it runs.
pub use agents::provider::admission::model as admission;

use serde::Serialize;
use thiserror::Error;

/// Why a formula refused its inputs.
#[derive(Clone, Copy, Debug, PartialEq, Error)]
pub enum AnalyticError {
    /// An input is outside its domain.
    #[error("invalid {name} = {value}: must be {requirement}")]
    InvalidInput {
        /// Parameter name, as in the function signature.
        name: &'static str,
        /// The value given (a count, such as `servers`, as `f64`).
        value: f64,
        /// The domain it must lie in.
        requirement: &'static str,
    },
    /// The offered load reaches the capacity (ρ ≥ 1): no steady state exists.
    #[error("unstable system: utilisation {utilisation} is not below 1")]
    Unstable {
        /// The utilisation ρ that was computed.
        utilisation: f64,
    },
    /// The inputs are valid but a result does not fit in `f64` (e.g. ρ within rounding of 1).
    #[error("{what} is not finite ({value}) for these inputs")]
    NotFinite {
        /// Name of the [`Metrics`] field that overflowed.
        what: &'static str,
        /// Its value.
        value: f64,
    },
}

/// Mean steady-state performance of a queue, or of one class of a priority queue.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Metrics {
    /// Fraction of time a server is busy, ρ (dimensionless). For a priority class: that class's own
    /// share ρ_k = λ_k E\[S_k\].
    pub utilisation: f64,
    /// Probability that an arrival has to wait (dimensionless), where the model gives it in closed
    /// form: ρ for M/M/1 and M/G/1 (Poisson arrivals see time averages), C(c, a) for M/M/c; `None`
    /// for priority classes.
    pub wait_probability: Option<f64>,
    /// Mean time from arrival to completion not spent in service, Wq (seconds). Under preemption this
    /// includes the time a job spends preempted.
    pub wait: f64,
    /// Mean response (sojourn) time W = Wq + E\[S\] (seconds).
    pub response: f64,
    /// Mean number in system L = λW by Little's law (jobs).
    pub in_system: f64,
    /// Mean number waiting Lq = λWq by Little's law (jobs).
    pub in_queue: f64,
}

impl Metrics {
    /// Completes the metrics by Little's law and refuses non-finite results.
    fn new(
        arrival_rate: f64,
        utilisation: f64,
        wait_probability: Option<f64>,
        wait: f64,
        response: f64,
    ) -> Result<Self, AnalyticError> {
        let (in_system, in_queue) = (arrival_rate * response, arrival_rate * wait);
        let fields = [("wait", wait), ("response", response), ("in_system", in_system), ("in_queue", in_queue)];
        for (what, value) in fields {
            if !value.is_finite() {
                return Err(AnalyticError::NotFinite { what, value });
            }
        }
        Ok(Self { utilisation, wait_probability, wait, response, in_system, in_queue })
    }
}

/// Returns `value` if it is finite and strictly positive.
fn positive(name: &'static str, value: f64) -> Result<f64, AnalyticError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(AnalyticError::InvalidInput { name, value, requirement: "finite and > 0" })
    }
}

/// Returns `utilisation` if it is below 1.
fn stable(utilisation: f64) -> Result<f64, AnalyticError> {
    if utilisation < 1.0 { Ok(utilisation) } else { Err(AnalyticError::Unstable { utilisation }) }
}

/// M/M/1 with arrival rate λ and service rate μ (both per second).
///
/// ρ = λ/μ, W = 1/(μ − λ), Wq = ρ/(μ − λ), L = λW = ρ/(1 − ρ), Lq = λWq = ρ²/(1 − ρ), and an arrival
/// waits with probability ρ. Times in seconds.
pub fn mm1(arrival_rate: f64, service_rate: f64) -> Result<Metrics, AnalyticError> {
    let lambda = positive("arrival_rate", arrival_rate)?;
    let mu = positive("service_rate", service_rate)?;
    let rho = stable(lambda / mu)?;
    let response = 1.0 / (mu - lambda);
    Metrics::new(lambda, rho, Some(rho), rho * response, response)
}

/// Erlang B (loss) probability B(c, a) for `servers` = c ≥ 1 and offered load a = λ/μ > 0 (Erlangs).
///
/// Uses the recursion B(0, a) = 1, B(k, a) = a B(k−1, a) / (k + a B(k−1, a)), which stays in \[0, 1\]
/// and is numerically stable for any c (O(c) steps; c in the thousands is instant).
pub fn erlang_b(servers: usize, offered_load: f64) -> Result<f64, AnalyticError> {
    if servers == 0 {
        return Err(AnalyticError::InvalidInput { name: "servers", value: 0.0, requirement: "at least 1" });
    }
    let a = positive("offered_load", offered_load)?;
    Ok((1..=servers).fold(1.0, |b, k| {
        let ab = a * b;
        ab / (k as f64 + ab)
    }))
}

/// Erlang C probability of waiting C(c, a) for `servers` = c ≥ 1 and offered load a = λ/μ < c (Erlangs).
///
/// C = B / (1 − ρ(1 − B)) with B = [`erlang_b`]\(c, a\) and ρ = a/c.
pub fn erlang_c(servers: usize, offered_load: f64) -> Result<f64, AnalyticError> {
    let b = erlang_b(servers, offered_load)?;
    let rho = stable(offered_load / servers as f64)?;
    Ok(b / (1.0 - rho * (1.0 - b)))
}

/// M/M/c with c = `servers` identical servers, arrival rate λ and per-server service rate μ (per second).
///
/// a = λ/μ, ρ = λ/(cμ), an arrival waits with probability C = [`erlang_c`]\(c, a\),
/// Wq = C/(cμ − λ) and W = Wq + 1/μ (seconds).
pub fn mmc(servers: usize, arrival_rate: f64, service_rate: f64) -> Result<Metrics, AnalyticError> {
    let lambda = positive("arrival_rate", arrival_rate)?;
    let mu = positive("service_rate", service_rate)?;
    let c = servers as f64;
    let prob_wait = erlang_c(servers, lambda / mu)?;
    let wait = prob_wait / (c * mu - lambda);
    Metrics::new(lambda, lambda / (c * mu), Some(prob_wait), wait, wait + 1.0 / mu)
}

/// First two moments of a service-time distribution: E\[S\] (seconds) and E\[S²\] (seconds²).
///
/// Constructors guarantee 0 < E\[S\] and E\[S\]² ≤ E\[S²\] < ∞.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ServiceMoments {
    mean: f64,
    second_moment: f64,
}

impl ServiceMoments {
    /// From E\[S\] = `mean` (seconds) and E\[S²\] = `second_moment` (seconds²), which must be at least
    /// E\[S\]² (a variance cannot be negative).
    pub fn new(mean: f64, second_moment: f64) -> Result<Self, AnalyticError> {
        let mean = positive("mean", mean)?;
        if second_moment.is_finite() && second_moment >= mean * mean {
            Ok(Self { mean, second_moment })
        } else {
            Err(AnalyticError::InvalidInput {
                name: "second_moment",
                value: second_moment,
                requirement: "finite and at least mean²",
            })
        }
    }

    /// General distribution given by its mean (seconds) and squared coefficient of variation
    /// cs² = Var\[S\]/E\[S\]² ≥ 0: E\[S²\] = (1 + cs²) E\[S\]².
    pub fn with_scv(mean: f64, scv: f64) -> Result<Self, AnalyticError> {
        if !(scv.is_finite() && scv >= 0.0) {
            return Err(AnalyticError::InvalidInput { name: "scv", value: scv, requirement: "finite and ≥ 0" });
        }
        Self::new(mean, (1.0 + scv) * mean * mean)
    }

    /// Deterministic service of `mean` seconds: E\[S²\] = E\[S\]² (cs² = 0).
    pub fn deterministic(mean: f64) -> Result<Self, AnalyticError> {
        Self::with_scv(mean, 0.0)
    }

    /// Exponential service of `mean` seconds (rate 1/mean): E\[S²\] = 2 E\[S\]² (cs² = 1).
    pub fn exponential(mean: f64) -> Result<Self, AnalyticError> {
        Self::with_scv(mean, 1.0)
    }

    /// E\[S\], seconds.
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// E\[S²\], seconds².
    pub fn second_moment(&self) -> f64 {
        self.second_moment
    }

    /// Squared coefficient of variation cs² = E\[S²\]/E\[S\]² − 1 (dimensionless).
    pub fn scv(&self) -> f64 {
        self.second_moment / (self.mean * self.mean) - 1.0
    }
}

/// Two-phase hyper-exponential distribution H2: with probability p an Exp(μ1) sample, otherwise
/// an Exp(μ2) one (rates per second).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct H2 {
    p: f64,
    rate1: f64,
    rate2: f64,
}

impl H2 {
    /// From branch probability p ∈ \[0, 1\] and branch rates μ1, μ2 > 0 (per second).
    pub fn new(p: f64, rate1: f64, rate2: f64) -> Result<Self, AnalyticError> {
        if !(0.0..=1.0).contains(&p) {
            return Err(AnalyticError::InvalidInput { name: "p", value: p, requirement: "in [0, 1]" });
        }
        Ok(Self { p, rate1: positive("rate1", rate1)?, rate2: positive("rate2", rate2)? })
    }

    /// Balanced-means fit to a mean (seconds) and squared coefficient of variation cs² ≥ 1 (Whitt
    /// 1982; Allen 1990): p = (1 + √((cs² − 1)/(cs² + 1)))/2, μ1 = 2p/mean, μ2 = 2(1 − p)/mean, so
    /// that p/μ1 = (1 − p)/μ2 = mean/2 and E\[S²\] = (1 + cs²) mean². cs² = 1 gives the exponential.
    pub fn balanced_means(mean: f64, scv: f64) -> Result<Self, AnalyticError> {
        let mean = positive("mean", mean)?;
        if !(scv.is_finite() && scv >= 1.0) {
            return Err(AnalyticError::InvalidInput { name: "scv", value: scv, requirement: "finite and ≥ 1" });
        }
        let r = ((scv - 1.0) / (scv + 1.0)).sqrt();
        let p = (1.0 + r) / 2.0;
        // 1 − p = (1 − r)/2 = 1/((cs² + 1)(1 + r)), without the cancellation for large cs².
        let q = 1.0 / ((scv + 1.0) * (1.0 + r));
        Self::new(p, 2.0 * p / mean, 2.0 * q / mean)
    }

    /// Probability p of the first branch.
    pub fn p(&self) -> f64 {
        self.p
    }

    /// Rate μ1 of the first branch, per second.
    pub fn rate1(&self) -> f64 {
        self.rate1
    }

    /// Rate μ2 of the second branch, per second.
    pub fn rate2(&self) -> f64 {
        self.rate2
    }

    /// E\[S\] = p/μ1 + (1 − p)/μ2 and E\[S²\] = 2p/μ1² + 2(1 − p)/μ2² (seconds, seconds²).
    pub fn moments(&self) -> Result<ServiceMoments, AnalyticError> {
        let (p, q) = (self.p, 1.0 - self.p);
        let mean = p / self.rate1 + q / self.rate2;
        ServiceMoments::new(mean, 2.0 * p / (self.rate1 * self.rate1) + 2.0 * q / (self.rate2 * self.rate2))
    }
}

/// M/G/1 (Pollaczek–Khinchine) with arrival rate λ (per second) and the given service moments.
///
/// ρ = λE\[S\], Wq = λE\[S²\] / (2(1 − ρ)), W = Wq + E\[S\] (seconds); an arrival waits with
/// probability ρ.
pub fn mg1(arrival_rate: f64, service: ServiceMoments) -> Result<Metrics, AnalyticError> {
    let lambda = positive("arrival_rate", arrival_rate)?;
    let rho = stable(lambda * service.mean)?;
    let wait = lambda * service.second_moment / (2.0 * (1.0 - rho));
    Metrics::new(lambda, rho, Some(rho), wait, wait + service.mean)
}

/// One class of a priority queue: Poisson arrivals at `arrival_rate` (per second) with `service`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PriorityClass {
    /// λ_k, per second.
    pub arrival_rate: f64,
    /// Moments of the class's service time.
    pub service: ServiceMoments,
}

impl PriorityClass {
    /// Class with exponential service at `service_rate` μ_k (per second): E\[S_k²\] = 2/μ_k².
    pub fn exponential(arrival_rate: f64, service_rate: f64) -> Result<Self, AnalyticError> {
        let service = ServiceMoments::exponential(1.0 / positive("service_rate", service_rate)?)?;
        Ok(Self { arrival_rate, service })
    }
}

/// Single-server preemptive-resume priority queue (M/G/1), `classes` in priority order (index 0 is
/// served first and sees no other class). Returns one [`Metrics`] per class, in the same order.
///
/// With ρ_i = λ_i E\[S_i\] and σ_k = Σ_{i≤k} ρ_i (σ_0 = 0), class k has mean response (seconds)
///
/// E\[T_k\] = E\[S_k\]/(1 − σ_{k−1}) + (Σ_{i≤k} λ_i E\[S_i²\]/2) / ((1 − σ_{k−1})(1 − σ_k)),
///
/// and `wait` = E\[T_k\] − E\[S_k\]. For exponential service Σ λ_i E\[S_i²\]/2 = Σ λ_i/μ_i², so the
/// highest class gets T_1 = 1/(μ_1 − λ_1). The whole system must be stable: σ_K < 1.
pub fn preemptive_priority(classes: &[PriorityClass]) -> Result<Vec<Metrics>, AnalyticError> {
    if classes.is_empty() {
        return Err(AnalyticError::InvalidInput { name: "classes", value: 0.0, requirement: "at least one class" });
    }
    let mut total = 0.0;
    for class in classes {
        total += positive("arrival_rate", class.arrival_rate)? * class.service.mean;
    }
    stable(total)?;
    let (mut sigma, mut residual) = (0.0, 0.0);
    classes
        .iter()
        .map(|class| {
            let (lambda, mean) = (class.arrival_rate, class.service.mean);
            let rho = lambda * mean;
            let sigma_before = sigma;
            sigma += rho;
            residual += lambda * class.service.second_moment / 2.0;
            // E[T_k] − E[S_k], with E[S_k]/(1 − σ_{k−1}) − E[S_k] = E[S_k]σ_{k−1}/(1 − σ_{k−1}) (no cancellation).
            let wait = mean * sigma_before / (1.0 - sigma_before) + residual / ((1.0 - sigma_before) * (1.0 - sigma));
            Metrics::new(lambda, rho, None, wait, wait + mean)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Relative tolerance for closed forms.
    const TOL: f64 = 1e-9;

    fn close(actual: f64, expected: f64) {
        assert!((actual - expected).abs() <= TOL * expected.abs(), "{actual} != {expected}");
    }

    fn invalid<T: std::fmt::Debug>(result: Result<T, AnalyticError>, param: &str) {
        match result {
            Err(AnalyticError::InvalidInput { name, .. }) => assert_eq!(name, param),
            other => panic!("expected invalid {param}, got {other:?}"),
        }
    }

    fn unstable<T: std::fmt::Debug>(result: Result<T, AnalyticError>) {
        assert!(matches!(result, Err(AnalyticError::Unstable { .. })), "expected unstable, got {result:?}");
    }

    /// Direct Erlang C formula: (aᶜ/c!)(c/(c − a)) / (Σ_{k<c} aᵏ/k! + (aᶜ/c!)(c/(c − a))).
    fn erlang_c_factorial(c: u32, a: f64) -> f64 {
        let term = |k: u32| a.powi(k as i32) / (1..=k).map(f64::from).product::<f64>();
        let top = term(c) * f64::from(c) / (f64::from(c) - a);
        top / ((0..c).map(term).sum::<f64>() + top)
    }

    #[test]
    fn mm1_textbook() {
        // λ = 0.5, μ = 1: ρ = 0.5, W = 1/(1 − 0.5) = 2, Wq = 0.5 · 2 = 1, L = 1, Lq = 0.5.
        let m = mm1(0.5, 1.0).unwrap();
        close(m.utilisation, 0.5);
        close(m.wait_probability.unwrap(), 0.5);
        close(m.response, 2.0);
        close(m.wait, 1.0);
        close(m.in_system, 1.0);
        close(m.in_queue, 0.5);
    }

    #[test]
    fn mm1_refuses_unstable_and_invalid() {
        unstable(mm1(1.0, 1.0));
        unstable(mm1(2.0, 1.0));
        invalid(mm1(0.0, 1.0), "arrival_rate");
        invalid(mm1(-1.0, 1.0), "arrival_rate");
        invalid(mm1(f64::NAN, 1.0), "arrival_rate");
        invalid(mm1(0.5, f64::INFINITY), "service_rate");
        invalid(mm1(0.5, 0.0), "service_rate");
    }

    #[test]
    fn erlang_two_servers_by_hand() {
        // c = 2, a = 1.5: B(1) = 1.5/2.5 = 0.6, B(2) = 0.9/2.9 = 9/29; C = (9/29)/(1 − 0.75 · 20/29) = 9/14.
        close(erlang_b(2, 1.5).unwrap(), 9.0 / 29.0);
        close(erlang_c(2, 1.5).unwrap(), 9.0 / 14.0);
        // λ = 1.5, μ = 1: Wq = (9/14)/(2 − 1.5) = 9/7 = 1.285714…, W = 16/7 = 2.285714…, ρ = 0.75.
        let m = mmc(2, 1.5, 1.0).unwrap();
        close(m.utilisation, 0.75);
        close(m.wait_probability.unwrap(), 9.0 / 14.0);
        close(m.wait, 9.0 / 7.0);
        close(m.response, 16.0 / 7.0);
        close(m.in_system, 1.5 * 16.0 / 7.0);
    }

    #[test]
    fn erlang_c_three_servers_by_hand() {
        // c = 3, a = 2: (8/6)(3/1) = 4, Σ_{k<3} 2ᵏ/k! = 1 + 2 + 2 = 5, C = 4/9.
        close(erlang_c(3, 2.0).unwrap(), 4.0 / 9.0);
    }

    #[test]
    fn erlang_ten_servers_table_value() {
        // c = 10, a = 8 (tables: C ≈ 0.409, B ≈ 0.1217); digits from a 40-digit evaluation of the
        // factorial formulas (mpmath).
        close(erlang_b(10, 8.0).unwrap(), 0.121_661_064_252_952);
        close(erlang_c(10, 8.0).unwrap(), 0.409_180_150_796_444);
        close(erlang_c(10, 8.0).unwrap(), erlang_c_factorial(10, 8.0));
        // λ = 8, μ = 1: Wq = C/2.
        close(mmc(10, 8.0, 1.0).unwrap().wait, 0.204_590_075_398_222);
    }

    #[test]
    fn erlang_c_recursion_matches_factorial_formula() {
        for c in 1..=20 {
            for fraction in [0.05, 0.3, 0.5, 0.8, 0.95, 0.999] {
                let a = fraction * f64::from(c);
                close(erlang_c(c as usize, a).unwrap(), erlang_c_factorial(c, a));
            }
        }
    }

    #[test]
    fn erlang_c_thousand_servers() {
        // c = 1000, a = 950: 40-digit mpmath value of the factorial formula.
        let c = erlang_c(1000, 950.0).unwrap();
        close(c, 0.068_253_415_377_141_4);
        // Independent check: terms tₖ = aᵏ/k! scaled by t_c, from t_{k−1}/t_k = k/a (no overflow).
        let a = 950.0;
        let mut t = 1.0;
        let mut below = 0.0;
        for k in (1..=1000).rev() {
            t *= f64::from(k) / a;
            below += t;
        }
        let top = 1000.0 / (1000.0 - a);
        close(c, top / (below + top));
        close(mmc(1000, 950.0, 1.0).unwrap().wait, 0.068_253_415_377_141_4 / 50.0);
    }

    #[test]
    fn mmc_one_server_is_mm1() {
        let (c, single) = (mmc(1, 0.7, 1.3).unwrap(), mm1(0.7, 1.3).unwrap());
        close(c.utilisation, single.utilisation);
        close(c.wait_probability.unwrap(), single.utilisation);
        close(c.wait, single.wait);
        close(c.response, single.response);
        close(c.in_system, single.in_system);
    }

    #[test]
    fn erlang_refuses_unstable_and_invalid() {
        unstable(erlang_c(2, 2.0));
        unstable(mmc(3, 3.5, 1.0));
        invalid(erlang_b(0, 1.0), "servers");
        invalid(erlang_c(0, 1.0), "servers");
        invalid(mmc(0, 1.0, 1.0), "servers");
        invalid(erlang_b(3, 0.0), "offered_load");
        invalid(erlang_c(3, f64::NAN), "offered_load");
        invalid(mmc(2, -1.0, 1.0), "arrival_rate");
        invalid(mmc(2, 1.0, f64::NAN), "service_rate");
    }

    #[test]
    fn mg1_pollaczek_khinchine() {
        // M/D/1, λ = 0.5, E[S] = 1: Wq = 0.5 · 1 / (2 · 0.5) = 0.5, W = 1.5.
        let d = mg1(0.5, ServiceMoments::deterministic(1.0).unwrap()).unwrap();
        close(d.wait, 0.5);
        close(d.response, 1.5);
        close(d.wait_probability.unwrap(), 0.5);
        // Exponential service reproduces M/M/1.
        let (e, m) = (mg1(0.5, ServiceMoments::exponential(1.0).unwrap()).unwrap(), mm1(0.5, 1.0).unwrap());
        close(e.wait, m.wait);
        close(e.response, m.response);
        close(e.in_system, m.in_system);
        // cs² = 4, E[S] = 1: E[S²] = 5, Wq = 0.5 · 5 / (2 · 0.5) = 2.5, W = 3.5; H2 and the general form agree.
        let general = mg1(0.5, ServiceMoments::with_scv(1.0, 4.0).unwrap()).unwrap();
        let h2 = mg1(0.5, H2::balanced_means(1.0, 4.0).unwrap().moments().unwrap()).unwrap();
        for m in [general, h2] {
            close(m.wait, 2.5);
            close(m.response, 3.5);
            close(m.in_queue, 1.25);
        }
    }

    #[test]
    fn mg1_refuses_unstable_invalid_and_overflow() {
        unstable(mg1(1.0, ServiceMoments::deterministic(1.0).unwrap()));
        invalid(mg1(0.0, ServiceMoments::deterministic(1.0).unwrap()), "arrival_rate");
        // ρ = 1e-190 but λE[S²] = 1e310 overflows.
        let wild = ServiceMoments::new(1e-200, 1e300).unwrap();
        assert!(matches!(mg1(1e10, wild), Err(AnalyticError::NotFinite { what: "wait", .. })));
    }

    #[test]
    fn service_moments() {
        let g = ServiceMoments::with_scv(2.0, 0.5).unwrap();
        close(g.second_moment(), 6.0);
        close(g.scv(), 0.5);
        close(ServiceMoments::deterministic(3.0).unwrap().second_moment(), 9.0);
        close(ServiceMoments::exponential(3.0).unwrap().second_moment(), 18.0);
        invalid(ServiceMoments::new(2.0, 3.9), "second_moment");
        invalid(ServiceMoments::new(0.0, 1.0), "mean");
        invalid(ServiceMoments::with_scv(1.0, -0.1), "scv");
        invalid(ServiceMoments::with_scv(1.0, f64::INFINITY), "scv");
        invalid(ServiceMoments::deterministic(1e200), "second_moment");
    }

    #[test]
    fn h2_explicit_rates() {
        // p = 0.4, μ1 = 2, μ2 = 0.5: E[S] = 0.2 + 1.2 = 1.4, E[S²] = 0.8/4 + 1.2/0.25 = 5, cs² = 5/1.96 − 1.
        let s = H2::new(0.4, 2.0, 0.5).unwrap().moments().unwrap();
        close(s.mean(), 1.4);
        close(s.second_moment(), 5.0);
        close(s.scv(), 5.0 / 1.96 - 1.0);
        invalid(H2::new(1.5, 1.0, 1.0), "p");
        invalid(H2::new(f64::NAN, 1.0, 1.0), "p");
        invalid(H2::new(0.5, 0.0, 1.0), "rate1");
        invalid(H2::new(0.5, 1.0, -2.0), "rate2");
    }

    #[test]
    fn h2_balanced_means() {
        // cs² = 4, mean 1: p = (1 + √(3/5))/2 = 0.887298334620741688…, μ1 = 2p, μ2 = 2(1 − p).
        let h = H2::balanced_means(1.0, 4.0).unwrap();
        close(h.p(), 0.887_298_334_620_742);
        close(h.rate1(), 1.774_596_669_241_48);
        close(h.rate2(), 0.225_403_330_758_517);
        let s = h.moments().unwrap();
        close(s.mean(), 1.0);
        close(s.second_moment(), 5.0);
        close(s.scv(), 4.0);
        // Balanced means: each branch contributes mean/2. cs² = 100, mean 3: E[S²] = 101 · 9 = 909.
        let h = H2::balanced_means(3.0, 100.0).unwrap();
        close(h.p() / h.rate1(), 1.5);
        close((1.0 - h.p()) / h.rate2(), 1.5);
        close(h.moments().unwrap().second_moment(), 909.0);
        // cs² = 1 is the exponential.
        let h = H2::balanced_means(2.0, 1.0).unwrap();
        close(h.p(), 0.5);
        close(h.rate1(), 0.5);
        close(h.rate2(), 0.5);
        invalid(H2::balanced_means(1.0, 0.5), "scv");
        invalid(H2::balanced_means(-1.0, 4.0), "mean");
    }

    #[test]
    fn priority_two_classes_same_rate() {
        // λ1 = λ2 = 0.3, μ = 1: T1 = 1/0.7 = 10/7; R = 0.3 + 0.3 = 0.6,
        // T2 = 1/0.7 + 0.6/(0.7 · 0.4) = 10/7 + 15/7 = 25/7 = 3.571428…
        let classes = [PriorityClass::exponential(0.3, 1.0).unwrap(), PriorityClass::exponential(0.3, 1.0).unwrap()];
        let m = preemptive_priority(&classes).unwrap();
        close(m[0].response, 10.0 / 7.0);
        close(m[0].wait, 3.0 / 7.0);
        close(m[1].response, 25.0 / 7.0);
        close(m[1].wait, 18.0 / 7.0);
        close(m[0].utilisation, 0.3);
        assert_eq!(m[1].wait_probability, None);
        // Same exponential service: the number in system is that of M/M/1 at ρ = 0.6, L = 1.5.
        close(m[0].in_system + m[1].in_system, 1.5);
    }

    #[test]
    fn priority_two_classes_different_rates() {
        // λ1 = 0.2, μ1 = 2, λ2 = 0.3, μ2 = 0.5: ρ1 = 0.1, ρ2 = 0.6, R = 0.2/4 + 0.3/0.25 = 1.25,
        // T1 = 1/1.8 = 5/9, T2 = 2/0.9 + 1.25/(0.9 · 0.3) = 60/27 + 125/27 = 185/27.
        let (l1, m1, l2, m2) = (0.2, 2.0, 0.3, 0.5);
        let m = preemptive_priority(&[
            PriorityClass::exponential(l1, m1).unwrap(),
            PriorityClass::exponential(l2, m2).unwrap(),
        ])
        .unwrap();
        close(m[0].response, 5.0 / 9.0);
        close(m[1].response, 185.0 / 27.0);
        // The two-class M/M/1 form: T1 = 1/(μ1 − λ1), T2 = (1/μ2)/(1 − ρ1) + R/((1 − ρ1)(1 − ρ1 − ρ2)).
        let (r1, r2, r) = (l1 / m1, l2 / m2, l1 / (m1 * m1) + l2 / (m2 * m2));
        close(m[0].response, 1.0 / (m1 - l1));
        close(m[1].response, (1.0 / m2) / (1.0 - r1) + r / ((1.0 - r1) * (1.0 - r1 - r2)));
    }

    #[test]
    fn priority_classes_conserve_mm1_population() {
        // Equal exponential service: classes 1..=k together form an M/M/1 at load σ_k, so
        // Σ_{i≤k} λ_i T_i = σ_k/(1 − σ_k).
        let rates = [0.3, 0.2, 0.4, 0.5];
        let classes: Vec<_> = rates.iter().map(|&l| PriorityClass::exponential(l, 2.0).unwrap()).collect();
        let m = preemptive_priority(&classes).unwrap();
        let (mut sigma, mut population) = (0.0, 0.0);
        for (rate, class) in rates.iter().zip(&m) {
            sigma += rate / 2.0;
            population += class.in_system;
            close(population, sigma / (1.0 - sigma));
        }
    }

    #[test]
    fn priority_single_class_is_mg1() {
        let service = H2::balanced_means(1.5, 9.0).unwrap().moments().unwrap();
        let p = preemptive_priority(&[PriorityClass { arrival_rate: 0.4, service }]).unwrap();
        let g = mg1(0.4, service).unwrap();
        close(p[0].wait, g.wait);
        close(p[0].response, g.response);
    }

    #[test]
    fn priority_general_service_by_hand() {
        // High: deterministic 1 s at λ1 = 0.2 (ρ1 = 0.2, λ1E[S1²]/2 = 0.1). Low: cs² = 3, mean 2 s at
        // λ2 = 0.25 (ρ2 = 0.5, E[S2²] = 16, λ2E[S2²]/2 = 2). T1 = 1 + 0.1/0.8 = 1.125;
        // T2 = 2/0.8 + 2.1/(0.8 · 0.3) = 2.5 + 8.75 = 11.25.
        let m = preemptive_priority(&[
            PriorityClass { arrival_rate: 0.2, service: ServiceMoments::deterministic(1.0).unwrap() },
            PriorityClass { arrival_rate: 0.25, service: ServiceMoments::with_scv(2.0, 3.0).unwrap() },
        ])
        .unwrap();
        close(m[0].response, 1.125);
        close(m[1].response, 11.25);
        close(m[1].wait, 9.25);
    }

    #[test]
    fn priority_refuses_unstable_and_invalid() {
        invalid(preemptive_priority(&[]), "classes");
        unstable(preemptive_priority(&[
            PriorityClass::exponential(0.6, 1.0).unwrap(),
            PriorityClass::exponential(0.4, 1.0).unwrap(),
        ]));
        invalid(
            preemptive_priority(&[
                PriorityClass::exponential(0.3, 1.0).unwrap(),
                PriorityClass::exponential(0.0, 1.0).unwrap(),
            ]),
            "arrival_rate",
        );
        invalid(PriorityClass::exponential(0.3, 0.0), "service_rate");
    }

    #[test]
    fn extreme_inputs_never_panic() {
        let values =
            [f64::NAN, f64::INFINITY, -1.0, 0.0, 1e-308, 1e-300, 0.5, 1.0 - f64::EPSILON, 1.0, 1e300, f64::MAX];
        for &x in &values {
            for &y in &values {
                let results = [mm1(x, y), mmc(1, x, y), mmc(1000, x, y)];
                let moments = ServiceMoments::new(x, y).or_else(|_| ServiceMoments::with_scv(x, y));
                let general = moments.and_then(|s| mg1(x, s));
                let h2 = H2::balanced_means(x, y).and_then(|h| h.moments()).and_then(|s| mg1(y, s));
                let priority = PriorityClass::exponential(x, y).and_then(|c| preemptive_priority(&[c, c]));
                for m in results.into_iter().chain([general, h2]).flatten().chain(priority.into_iter().flatten()) {
                    assert!(m.response.is_finite() && m.in_system.is_finite() && m.utilisation < 1.0, "{m:?}");
                }
                for p in [erlang_b(3, x), erlang_c(3, x)].into_iter().flatten() {
                    assert!((0.0..=1.0).contains(&p), "{p}");
                }
            }
        }
    }
}
