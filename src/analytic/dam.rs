//! The queueing model of DAM, the double-auction-inspired meta-scheduler (Garg 2010, §7.3.3, Eqs 7.3–7.23): the
//! expected waiting time E(W) and slowdown E(S) of an application that passes three queues in sequence.
//!
//! 1. Valuation (prioritisation): an M/G/1 non-preemptive priority queue with K classes (Cobham 1954, 7.3–7.5).
//! 2. Matching (dispatch to the m sites): an M/G/m central queue, the least-work-remaining policy, by the
//!    approximation of Nozaki & Ross (1978) on the M/M/m (Erlang C) queue (7.6–7.10).
//! 3. Execution: each site's processors split into partitions, each an M/G/1 FCFS queue for the applications whose
//!    processor need falls in its range (Pollaczek–Khinchine, 7.11–7.19).
//!
//! E(W) = W1 + W2 + W3 and E(S) = S1 + S2 + S3 (7.20–7.21), with slowdown = waiting time / execution time, so each
//! S = W × E(X⁻¹). The thesis minimises E(W) and E(S) over the partition sizes with Mathematica's NMinimize
//! (7.22–7.23); here an exhaustive search over the partition sizes of each site ([`DamModel::optimise`]) finds the
//! exact minimum. Stages 1 and 2 do not depend on the partitions and stage 3 is a sum over sites, so each site is
//! minimised on its own; every slowdown is a wait times E(X⁻¹), so E(S) has E(W)'s minimiser.
//!
//! Where this departs from the printed equations, and why:
//! - Stage 2 uses the textbook Erlang C probability of waiting with the per-server load ρ = λE(X)/m. The printed
//!   7.7 gives E(N) = P_N ρ/(1 − ρ) with P_N the empty-system probability of M/M/m, which is not the M/M/m queue
//!   length (Lq = P_N (mρ)^m ρ / (m! (1 − ρ)²)), and prints ρ = λE(X) without the division by m.
//! - Nozaki–Ross scales the M/M/m queue by E(X²)/(2E(X)²); the printed 7.6 and 7.9 drop the 2, which would double the
//!   M/M/m wait even for exponential service.
//! - W3 is the plain mean over the sites, (1/m) Σ_z E(w_z); the printed 7.18 multiplies the sum by λ/m, which is not
//!   a time.
//! - Within a site, E(w_z) weighs each partition's wait by the share of applications it serves (the mean wait of an
//!   application), by default; the printed 7.17, an unweighted mean over the partitions, is [`PartitionMean::Partitions`].
//! - Partition f serves needs in (r_{f−1}, r_f] with the sizes sorted ascending (7.13's range); needs above the
//!   second largest size go to the largest partition, which has to serve them somewhere.
//!
//! Inputs are checked; unstable queues (a load of 1 or more) and non-finite results are refused with an
//! [`AnalyticError`]; nothing here panics.

use serde::Serialize;

use super::{AnalyticError, ServiceMoments, erlang_c, positive, stable};
use crate::workload::math::gamma_fn;

/// Most partition layouts [`DamModel::optimise`] tries for one site before refusing (about a second of work).
pub const MAX_LAYOUTS: u64 = 20_000_000;

/// Moments of an application's execution time X \[s\]: E(X), E(X²) and E(X⁻¹), the last for slowdowns.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Execution {
    /// E(X) and E(X²).
    pub moments: ServiceMoments,
    /// E(X⁻¹) [1/s].
    pub mean_inverse: f64,
}

impl Execution {
    /// From E(X) \[s\], E(X²) \[s²\] and E(X⁻¹) [1/s], which must be finite (Jensen: E(X⁻¹) ≥ 1/E(X)).
    pub fn new(mean: f64, second_moment: f64, mean_inverse: f64) -> Result<Execution, AnalyticError> {
        let moments = ServiceMoments::new(mean, second_moment)?;
        let mean_inverse = positive("mean_inverse", mean_inverse)?;
        if mean_inverse * mean < 1.0 - 1e-12 {
            let requirement = "at least 1/mean (Jensen's inequality)";
            return Err(AnalyticError::InvalidInput { name: "mean_inverse", value: mean_inverse, requirement });
        }
        Ok(Execution { moments, mean_inverse })
    }

    /// Weibull execution times of `shape` α > 1 and `scale` β \[s\]: E(X) = βΓ(1 + 1/α), E(X²) = β²Γ(1 + 2/α),
    /// E(X⁻¹) = Γ(1 − 1/α)/β. For α ≤ 1, E(X⁻¹) is infinite (no mean slowdown), so such shapes are refused.
    pub fn weibull(shape: f64, scale: f64) -> Result<Execution, AnalyticError> {
        let scale = positive("scale", scale)?;
        if !(shape.is_finite() && shape > 1.0) {
            let requirement = "finite and > 1 (below, the mean slowdown is infinite)";
            return Err(AnalyticError::InvalidInput { name: "shape", value: shape, requirement });
        }
        let g = |x: f64| gamma_fn(x);
        Execution::new(scale * g(1.0 + 1.0 / shape), scale * scale * g(1.0 + 2.0 / shape), g(1.0 - 1.0 / shape) / scale)
    }

    /// E(X) \[s\].
    pub fn mean(&self) -> f64 {
        self.moments.mean()
    }

    /// E(X²) \[s²\].
    pub fn second_moment(&self) -> f64 {
        self.moments.second_moment()
    }
}

/// One priority class of the valuation stage: the probability p_j that an application is of it and the time the
/// meta-broker spends valuing one (1/μ_j and its second moment).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ValuationClass {
    /// p_j, in (0, 1]; the classes' probabilities sum to 1.
    pub probability: f64,
    /// Valuation time of one application of the class \[s\].
    pub service: ServiceMoments,
}

/// How a site's mean wait averages its partitions' (Eq 7.17).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum PartitionMean {
    /// Weighted by the share of applications each partition serves: the mean wait of an application.
    #[default]
    Jobs,
    /// The plain mean over the partitions, as 7.17 is printed.
    Partitions,
}

/// The inputs of the model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DamModel {
    /// λ, the Poisson arrival rate of applications [1/s].
    pub arrival_rate: f64,
    /// X, the execution time of an application.
    pub execution: Execution,
    /// The K priority classes of the valuation stage, highest priority first.
    pub classes: Vec<ValuationClass>,
    /// N_z, the processors of each of the m sites.
    pub sites: Vec<u32>,
    /// n_z, the partitions (queues) of every site.
    pub partitions: usize,
    /// C, the processor need of an application: `(processors, probability)`, probabilities summing to 1.
    pub sizes: Vec<(u32, f64)>,
    /// How a site's wait averages its partitions'.
    pub mean: PartitionMean,
}

/// A stage's (or the whole model's) expected waiting time and slowdown.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Expected {
    /// Expected waiting time \[s\].
    pub wait: f64,
    /// Expected slowdown, waiting time over execution time (dimensionless).
    pub slowdown: f64,
}

/// What the model predicts for a partition layout.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Prediction {
    /// Stage 1, valuation: W1, S1 (7.4–7.5).
    pub valuation: Expected,
    /// Stage 2, matching: W2, S2 (7.9–7.10).
    pub matching: Expected,
    /// Stage 3, execution at the sites: W3, S3 (7.18–7.19).
    pub execution: Expected,
    /// E(W) and E(S) (7.20–7.21).
    pub total: Expected,
    /// The partition sizes r_z of each site, ascending.
    pub layout: Vec<Vec<u32>>,
}

impl DamModel {
    /// Checks the inputs: a positive rate, classes and sizes whose probabilities are valid and sum to 1, at least one
    /// site, and at most as many partitions as the smallest site has processors.
    pub fn check(&self) -> Result<(), AnalyticError> {
        positive("arrival_rate", self.arrival_rate)?;
        let invalid = |name, value: f64, requirement| Err(AnalyticError::InvalidInput { name, value, requirement });
        if self.classes.is_empty() {
            return invalid("classes", 0.0, "at least one class");
        }
        if self.sizes.is_empty() {
            return invalid("sizes", 0.0, "at least one processor count");
        }
        let total = |ps: &mut dyn Iterator<Item = f64>| ps.sum::<f64>();
        for (name, p) in self.classes.iter().map(|c| ("classes.probability", c.probability)) {
            if !(p.is_finite() && p > 0.0 && p <= 1.0) {
                return invalid(name, p, "in (0, 1]");
            }
        }
        for &(n, p) in &self.sizes {
            if n == 0 {
                return invalid("sizes.processors", 0.0, "at least 1");
            }
            if !(p.is_finite() && (0.0..=1.0).contains(&p)) {
                return invalid("sizes.probability", p, "in [0, 1]");
            }
        }
        let sums = [
            ("classes", total(&mut self.classes.iter().map(|c| c.probability))),
            ("sizes", total(&mut self.sizes.iter().map(|s| s.1))),
        ];
        for (name, sum) in sums {
            if (sum - 1.0).abs() > 1e-9 {
                return invalid(name, sum, "probabilities summing to 1");
            }
        }
        let smallest = self.sites.iter().copied().min().unwrap_or(0);
        if smallest == 0 {
            return invalid("sites", 0.0, "at least one site, each with at least one processor");
        }
        if self.partitions == 0 || self.partitions > smallest as usize {
            return invalid("partitions", self.partitions as f64, "from 1 to the processors of the smallest site");
        }
        Ok(())
    }

    /// Stage 1 (7.3–7.5), Cobham's non-preemptive priority M/G/1: with ρ_j = p_jλ/μ_j and σ' = Σ p_j E(S_j²),
    /// E(w_j) = (λσ'/2) / ((1 − Σ_{i<j} ρ_i)(1 − Σ_{i≤j} ρ_i)), W1 = Σ p_j (E(w_j) + 1/μ_j) and S1 = W1 E(X⁻¹) (the
    /// classes come from the valuation, not from the execution times, so every class shares E(X⁻¹)).
    pub fn valuation(&self) -> Result<Expected, AnalyticError> {
        self.check()?;
        let lambda = self.arrival_rate;
        let second: f64 = self.classes.iter().map(|c| c.probability * c.service.second_moment()).sum();
        let residual = lambda * second / 2.0;
        let (mut before, mut wait) = (0.0, 0.0);
        for class in &self.classes {
            let rho = class.probability * lambda * class.service.mean();
            let upto = stable(before + rho)?;
            let queued = residual / ((1.0 - before) * (1.0 - upto));
            wait += class.probability * (queued + class.service.mean());
            before = upto;
        }
        self.expected(wait, "valuation wait")
    }

    /// Stage 2 (7.6–7.10), the M/G/m central queue over the m sites by Nozaki–Ross: the M/M/m wait
    /// C(m, a) E(X) / (m − a), a = λE(X) (Erlang C; per-server load ρ = a/m), times E(X²)/(2E(X)²); S2 = W2 E(X⁻¹).
    pub fn matching(&self) -> Result<Expected, AnalyticError> {
        self.check()?;
        let m = self.sites.len();
        let mean = self.execution.mean();
        let offered = self.arrival_rate * mean;
        let waits = erlang_c(m, offered)?;
        let mmm = waits * mean / (m as f64 - offered);
        self.expected(mmm * self.execution.second_moment() / (2.0 * mean * mean), "matching wait")
    }

    /// E(w_z), the mean wait at one site (7.11–7.17) whose partitions have `layout` processors (ascending, summing
    /// to the site's processors; 7.11): partition f serves needs in (r_{f−1}, r_f], the largest also every wider
    /// one, at the rate λ_zf = (λ/m) u_zf (7.12–7.14), as an M/G/1 queue with E(w_zf) = λ_zf E(X²) / (2(1 − ρ_zf)),
    /// ρ_zf = λ_zf E(X) (7.15–7.16).
    pub fn site_wait(&self, layout: &[u32]) -> Result<f64, AnalyticError> {
        self.check()?;
        let cdf = SizeCdf::new(&self.sizes);
        site_wait(self, &cdf, layout)
    }

    /// Stage 3 (7.18–7.19) for a layout per site: W3 = (1/m) Σ_z E(w_z), S3 = W3 E(X⁻¹).
    pub fn execution_stage(&self, layout: &[Vec<u32>]) -> Result<Expected, AnalyticError> {
        self.check()?;
        if layout.len() != self.sites.len() {
            let requirement = "one partition layout per site";
            return Err(AnalyticError::InvalidInput { name: "layout", value: layout.len() as f64, requirement });
        }
        let cdf = SizeCdf::new(&self.sizes);
        let mut sum = 0.0;
        for (&processors, sizes) in self.sites.iter().zip(layout) {
            let valid = sizes.len() == self.partitions
                && sizes.windows(2).all(|w| w[0] <= w[1])
                && sizes.iter().map(|&r| u64::from(r)).sum::<u64>() == u64::from(processors)
                && sizes.iter().all(|&r| r > 0);
            if !valid {
                let requirement = "n_z positive sizes, ascending, summing to the site's processors";
                return Err(AnalyticError::InvalidInput { name: "layout", value: f64::from(processors), requirement });
            }
            sum += site_wait(self, &cdf, sizes)?;
        }
        self.expected(sum / self.sites.len() as f64, "execution wait")
    }

    /// The three stages and their sums for a layout per site (7.20–7.21).
    pub fn predict(&self, layout: &[Vec<u32>]) -> Result<Prediction, AnalyticError> {
        let (valuation, matching, execution) = (self.valuation()?, self.matching()?, self.execution_stage(layout)?);
        let wait = valuation.wait + matching.wait + execution.wait;
        let total = self.expected(wait, "total wait")?;
        Ok(Prediction { valuation, matching, execution, total, layout: layout.to_vec() })
    }

    /// Minimises E(W), and with it E(S) (7.22–7.23), over the partition sizes of every site: every ascending layout
    /// of n_z positive sizes summing to N_z is tried (sites of equal size share one search). Refused when a site has
    /// more than [`MAX_LAYOUTS`] layouts, or when no layout is stable.
    pub fn optimise(&self) -> Result<Prediction, AnalyticError> {
        self.check()?;
        let cdf = SizeCdf::new(&self.sizes);
        let mut best_of: Vec<(u32, Vec<u32>)> = Vec::new();
        let mut layout = Vec::with_capacity(self.sites.len());
        for &processors in &self.sites {
            if let Some((_, best)) = best_of.iter().find(|(n, _)| *n == processors) {
                layout.push(best.clone());
                continue;
            }
            let count = layouts(processors, self.partitions);
            if count > MAX_LAYOUTS {
                let requirement = "a site with at most 20 million partition layouts to search";
                return Err(AnalyticError::InvalidInput { name: "sites", value: f64::from(processors), requirement });
            }
            let mut best: Option<(f64, Vec<u32>)> = None;
            let mut sizes = vec![0; self.partitions];
            let mut first_error = None;
            each_layout(processors, 1, &mut sizes, 0, &mut |sizes| match site_wait(self, &cdf, sizes) {
                Ok(w) if best.as_ref().is_none_or(|b| w < b.0) => best = Some((w, sizes.to_vec())),
                Ok(_) => {}
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            });
            let Some((_, sizes)) = best else {
                return Err(first_error.unwrap_or(AnalyticError::Unstable { utilisation: 1.0 }));
            };
            best_of.push((processors, sizes.clone()));
            layout.push(sizes);
        }
        self.predict(&layout)
    }

    /// A wait and its slowdown W E(X⁻¹), both finite.
    fn expected(&self, wait: f64, what: &'static str) -> Result<Expected, AnalyticError> {
        let slowdown = wait * self.execution.mean_inverse;
        for (what, value) in [(what, wait), ("slowdown", slowdown)] {
            if !value.is_finite() {
                return Err(AnalyticError::NotFinite { what, value });
            }
        }
        Ok(Expected { wait, slowdown })
    }
}

/// P(C ≤ n) of the processor need, by binary search over the sorted sizes.
struct SizeCdf {
    /// (processors, P(C ≤ processors)) in ascending processors.
    steps: Vec<(u32, f64)>,
}

impl SizeCdf {
    fn new(sizes: &[(u32, f64)]) -> SizeCdf {
        let mut sorted = sizes.to_vec();
        sorted.sort_by_key(|s| s.0);
        let mut total = 0.0;
        let steps = sorted
            .into_iter()
            .map(|(n, p)| {
                total += p;
                (n, total)
            })
            .collect();
        SizeCdf { steps }
    }

    fn at(&self, n: u32) -> f64 {
        let i = self.steps.partition_point(|s| s.0 <= n);
        if i == 0 { 0.0 } else { self.steps[i - 1].1 }
    }
}

/// [`DamModel::site_wait`] on a checked model.
fn site_wait(model: &DamModel, cdf: &SizeCdf, layout: &[u32]) -> Result<f64, AnalyticError> {
    let lambda_site = model.arrival_rate / model.sites.len() as f64;
    let (mean, second) = (model.execution.mean(), model.execution.second_moment());
    let mut below = 0.0;
    let mut waits = 0.0;
    for (f, &r) in layout.iter().enumerate() {
        let upto = if f + 1 == layout.len() { 1.0 } else { cdf.at(r) };
        let share = (upto - below).max(0.0);
        below = upto.max(below);
        let lambda = lambda_site * share;
        let rho = stable(lambda * mean)?;
        let wait = lambda * second / (2.0 * (1.0 - rho));
        waits += match model.mean {
            PartitionMean::Jobs => share * wait,
            PartitionMean::Partitions => wait / layout.len() as f64,
        };
    }
    Ok(waits)
}

/// How many ascending layouts of `parts` positive sizes sum to `total` (partitions of `total` into `parts` parts),
/// saturating at [`MAX_LAYOUTS`] + 1.
fn layouts(total: u32, parts: usize) -> u64 {
    // p(n, k) = p(n − 1, k − 1) + p(n − k, k), over n ≤ total and k ≤ parts.
    let (n, k) = (total as usize, parts);
    let mut p = vec![vec![0u64; k + 1]; n + 1];
    p[0][0] = 1;
    for i in 1..=n {
        for j in 1..=k.min(i) {
            p[i][j] = (p[i - 1][j - 1] + p[i - j][j]).min(MAX_LAYOUTS + 1);
        }
    }
    p[n][k]
}

/// Calls `visit` with every ascending layout of `sizes.len() − at` more sizes, each at least `from`, summing to
/// `left`.
fn each_layout(left: u32, from: u32, sizes: &mut [u32], at: usize, visit: &mut dyn FnMut(&[u32])) {
    let rest = (sizes.len() - at) as u32;
    if rest == 1 {
        if left >= from {
            sizes[at] = left;
            visit(sizes);
        }
        return;
    }
    // The remaining sizes are all at least this one: it is at most left / rest.
    for r in from..=left / rest {
        sizes[at] = r;
        each_layout(left - r, r, sizes, at + 1, visit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOL: f64 = 1e-12;

    fn close(actual: f64, expected: f64) {
        assert!((actual - expected).abs() <= TOL * expected.abs().max(1.0), "{actual} != {expected}");
    }

    /// λ = 0.3/s, exponential execution of mean 1 s (E(X²) = 2, E(X⁻¹) taken as 3), one site of 6 processors in three
    /// partitions, needs of 1, 2 and 3 processors with probabilities 0.5, 0.3 and 0.2, two classes valued in 0.1 s.
    fn model() -> DamModel {
        let valuation = ServiceMoments::deterministic(0.1).unwrap();
        DamModel {
            arrival_rate: 0.3,
            execution: Execution::new(1.0, 2.0, 3.0).unwrap(),
            classes: vec![
                ValuationClass { probability: 0.5, service: valuation },
                ValuationClass { probability: 0.5, service: valuation },
            ],
            sites: vec![6],
            partitions: 3,
            sizes: vec![(1, 0.5), (2, 0.3), (3, 0.2)],
            mean: PartitionMean::Jobs,
        }
    }

    #[test]
    fn valuation_stage_is_cobham() {
        // λ = 1: ρ_j = 0.5 · 1 · 0.1 = 0.05, σ' = 0.5 · 0.01 + 0.5 · 0.01 = 0.01, λσ'/2 = 0.005.
        // E(w_1) = 0.005/(1 · 0.95) = 1/190; E(w_2) = 0.005/(0.95 · 0.9) = 1/171.
        // W1 = 0.5 (1/190 + 0.1) + 0.5 (1/171 + 0.1) = 0.1 + (1/190 + 1/171)/2 = 0.1 + 1/180.
        let m = DamModel { arrival_rate: 1.0, ..model() };
        let w = m.valuation().unwrap();
        close(w.wait, 0.1 + 1.0 / 180.0);
        close(w.slowdown, 3.0 * (0.1 + 1.0 / 180.0));
        // Equal valuation times conserve the mean wait: one class alone has ρ = 0.1 and E(w) = 0.005/(1 · 0.9) =
        // 1/180, the M/D/1 wait λE(S²)/(2(1 − ρ)).
        let single = DamModel { classes: vec![ValuationClass { probability: 1.0, ..m.classes[0] }], ..m.clone() };
        close(single.valuation().unwrap().wait, 0.1 + 1.0 / 180.0);
    }

    #[test]
    fn matching_stage_is_nozaki_ross_on_erlang_c() {
        // m = 2, λ = 1.5, E(X) = 1: a = 1.5, C(2, 1.5) = 9/14 (by hand: B = 9/29, C = B/(1 − 0.75(1 − B))).
        // M/M/2 wait = C E(X)/(m − a) = (9/14)/0.5 = 9/7. Exponential service: E(X²)/(2E(X)²) = 1, W2 = 9/7.
        let m = DamModel { arrival_rate: 1.5, sites: vec![3, 3], ..model() };
        let w = m.matching().unwrap();
        close(w.wait, 9.0 / 7.0);
        close(w.slowdown, 27.0 / 7.0);
        // Deterministic service (E(X²) = 1, E(X⁻¹) = 1) halves it: 9/14.
        let d = DamModel { execution: Execution::new(1.0, 1.0, 1.0).unwrap(), ..m.clone() };
        close(d.matching().unwrap().wait, 9.0 / 14.0);
        // At a = m the queue is unstable.
        let full = DamModel { arrival_rate: 2.0, ..m };
        assert!(matches!(full.matching(), Err(AnalyticError::Unstable { .. })));
    }

    #[test]
    fn execution_stage_is_pollaczek_khinchine_per_partition() {
        // λ_z = 0.3 (one site). Partition 1 serves needs ≤ 1 (u = 0.5): λ = 0.15, w = 0.15 · 2/(2 · 0.85) = 3/17.
        // Partition 2, needs in (1, 2] (u = 0.3): λ = 0.09, w = 0.09/0.91 = 9/91.
        // Partition 3, needs > 2 (u = 0.2): λ = 0.06, w = 0.06/0.94 = 3/47.
        let m = model();
        let (w1, w2, w3) = (3.0 / 17.0, 9.0 / 91.0, 3.0 / 47.0);
        close(m.site_wait(&[1, 2, 3]).unwrap(), 0.5 * w1 + 0.3 * w2 + 0.2 * w3);
        let printed = DamModel { mean: PartitionMean::Partitions, ..m.clone() };
        close(printed.site_wait(&[1, 2, 3]).unwrap(), (w1 + w2 + w3) / 3.0);
        // Two identical sites: the rate per site halves, and W3 is their plain mean.
        let two = DamModel { sites: vec![6, 6], arrival_rate: 0.6, ..m.clone() };
        let e = two.execution_stage(&[vec![1, 2, 3], vec![1, 2, 3]]).unwrap();
        close(e.wait, 0.5 * w1 + 0.3 * w2 + 0.2 * w3);
        close(e.slowdown, 3.0 * e.wait);
        // A layout that does not add up, or is not ascending, is refused.
        assert!(m.execution_stage(&[vec![1, 2, 2]]).is_err());
        assert!(m.execution_stage(&[vec![3, 2, 1]]).is_err());
        assert!(m.execution_stage(&[]).is_err());
    }

    #[test]
    fn optimise_searches_every_layout() {
        // The ascending layouts of 6 into 3: [1,1,4], [1,2,3], [2,2,2].
        // [1,1,4]: needs ≤ 1 (0.5) to partition 1, none to 2, the rest (0.5) to 3: w = 3/17 for both halves.
        // [2,2,2]: 0.8 to partition 1, λ = 0.24, w = 0.24/0.76 = 6/19; 0.2 to partition 3, w = 3/47:
        // 0.8 · 6/19 + 0.2 · 3/47 = 0.2654.  [1,2,3]: 0.1307 (above), the minimum.
        let m = model();
        close(m.site_wait(&[1, 1, 4]).unwrap(), 3.0 / 17.0);
        close(m.site_wait(&[2, 2, 2]).unwrap(), 0.8 * 6.0 / 19.0 + 0.2 * 3.0 / 47.0);
        let best = m.optimise().unwrap();
        assert_eq!(best.layout, vec![vec![1, 2, 3]]);
        close(best.execution.wait, m.site_wait(&[1, 2, 3]).unwrap());
        let stages = best.valuation.wait + best.matching.wait + best.execution.wait;
        close(best.total.wait, stages);
        close(best.total.slowdown, 3.0 * stages);
        assert_eq!(layouts(6, 3), 3);
        assert_eq!(layouts(128, 3), 1365);
    }

    #[test]
    fn weibull_moments() {
        // Shape 2, scale 1: E(X) = Γ(1.5) = √π/2, E(X²) = Γ(2) = 1, E(X⁻¹) = Γ(0.5) = √π.
        let x = Execution::weibull(2.0, 1.0).unwrap();
        let pi = std::f64::consts::PI;
        assert!((x.mean() - pi.sqrt() / 2.0).abs() < 1e-12);
        assert!((x.second_moment() - 1.0).abs() < 1e-12);
        assert!((x.mean_inverse - pi.sqrt()).abs() < 1e-12);
        // Scale 25: times ×25, E(X⁻¹) ÷25.
        let y = Execution::weibull(2.0, 25.0).unwrap();
        assert!((y.mean() - 25.0 * x.mean()).abs() < 1e-9);
        assert!((y.mean_inverse - x.mean_inverse / 25.0).abs() < 1e-12);
        assert!(Execution::weibull(1.0, 1.0).is_err());
        assert!(Execution::weibull(0.5, 1.0).is_err());
        assert!(Execution::weibull(2.0, 0.0).is_err());
        // Jensen: E(X⁻¹) < 1/E(X) is impossible.
        assert!(Execution::new(2.0, 4.0, 0.4).is_err());
    }

    #[test]
    fn bad_inputs_are_refused_never_panic() {
        let m = model();
        let bad = [
            DamModel { arrival_rate: 0.0, ..m.clone() },
            DamModel { arrival_rate: f64::NAN, ..m.clone() },
            DamModel { classes: vec![], ..m.clone() },
            DamModel { sizes: vec![(1, 0.5)], ..m.clone() },
            DamModel { sizes: vec![(0, 1.0)], ..m.clone() },
            DamModel { sites: vec![], ..m.clone() },
            DamModel { partitions: 7, ..m.clone() },
            DamModel { partitions: 0, ..m.clone() },
        ];
        for b in bad {
            assert!(b.optimise().is_err(), "{b:?}");
            assert!(b.valuation().is_err());
        }
        // Too heavy a load for any layout: every partition layout is unstable.
        let heavy = DamModel { arrival_rate: 5.0, ..m.clone() };
        assert!(matches!(heavy.optimise(), Err(AnalyticError::Unstable { .. })));
    }
}
