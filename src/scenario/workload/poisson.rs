//! Poisson arrivals, `model = "poisson"`: jobs arriving at a rate, of runtimes drawn from a distribution, the input
//! of the queueing validations (M/M/c, M/G/1 and their priority classes).

use std::sync::Arc;

use agents::registry::limits::{MAX_TIME, MIN_MEAN_RUNTIME, RATES, short};
use agents::registry::values::{Positive, PositiveInt};
use agents::sim::rng::SimRng;
use rand::distr::Distribution;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;

use super::MAX_NODES;
use super::registry::{self, Arrivals, CheckCx, Extent, ModelSpec, RawModel, WorkloadModel};
use crate::workload::dist::Dist;
use crate::workload::{Limit, Workload, WorkloadJob};

/// Most priority classes `class-rates` may give: classes are numbered by a byte.
const MAX_CLASSES: usize = 256;

/// Poisson arrivals.
pub struct Poisson;

impl WorkloadModel for Poisson {
    fn name(&self) -> &'static str {
        "poisson"
    }

    fn about(&self) -> &'static str {
        "Poisson arrivals (`rate` per second) with `runtime` drawn from a distribution: queueing validation."
    }

    fn keys(&self) -> &'static [&'static str] {
        registry::key_names::<RawPoisson>()
    }

    fn schema(&self, generator: &mut SchemaGenerator) -> Schema {
        RawPoisson::json_schema(generator)
    }

    fn parse(&self, keys: toml::Value) -> Result<Box<dyn RawModel>, agents::registry::ParseError> {
        registry::parse::<RawPoisson>(keys)
    }

    fn extent(&self) -> Extent {
        Extent::JobsOrUntil
    }
}

/// Poisson arrivals' keys.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawPoisson {
    /// Poisson: arrival rate [1/s; from 1e-9 to 1e6].
    pub rate: Option<Positive>,
    /// Poisson: one arrival rate per priority class [1/s], class 0 (the highest) first, instead of `rate` and
    /// `priority-fraction`: `class-rates = [0.3, 0.3]` is `rate = 0.6` with `priority-fraction = 0.5`. At most 256
    /// classes; their total from 1e-9 to 1e6.
    pub class_rates: Option<Vec<Positive>>,
    /// Poisson: runtime distribution, e.g. `{ kind = "exponential", mean = 1.0 }`; kinds: constant, uniform,
    /// exponential, truncated_normal (with `low` >= 0), log_normal, weibull, gamma, hyper_exponential (a plain normal
    /// would draw negative runtimes). Its mean is at least 1e-6 s and at most 1e12 s. A hyper_exponential takes its
    /// `phases = [{ prob, mean }, …]`, or `mean` and `scv` (squared coefficient of variation, at least 1) for the
    /// two-phase fit with balanced means.
    #[schemars(with = "Option<serde_json::Value>")]
    pub runtime: Option<Dist>,
    /// Poisson: PEs per job (default 1).
    pub pes: Option<PositiveInt>,
    /// Poisson: PEs per job drawn uniformly from the integers in [low, high] (at most 2^20), instead of `pes`.
    pub pes_range: Option<[u32; 2]>,
}

impl RawModel for RawPoisson {
    fn check(&self, cx: &mut CheckCx<'_>) -> Result<Arc<dyn ModelSpec>, (String, String)> {
        let bad = |key: &str, m: String| Err((key.to_string(), m));
        let priority_fraction = cx.shared.priority_fraction.is_some();
        for (other, given) in [("rate", self.rate.is_some()), ("priority-fraction", priority_fraction)] {
            if self.class_rates.is_some() && given {
                return bad("class-rates", format!("sets the rates and the classes: leave out `{other}`"));
            }
        }
        if let Some([lo, hi]) = self.pes_range {
            if self.pes.is_some() {
                return bad("pes-range", "draws what `pes` sets: give one of them".into());
            }
            if !(1 <= lo && lo <= hi && hi <= MAX_NODES) {
                let m = format!("expected [low, high] with 1 <= low <= high <= {MAX_NODES}, found [{lo}, {hi}]");
                return bad("pes-range", m);
            }
        }
        if let Some(rates) = &self.class_rates
            && !(1..=MAX_CLASSES).contains(&rates.len())
        {
            let m = format!("expected from 1 to {MAX_CLASSES} rates, one per class, found {}", rates.len());
            return bad("class-rates", m);
        }
        if self.rate.is_none() && self.class_rates.is_none() {
            return bad("rate", "required".into());
        }
        let Some(runtime) = &self.runtime else { return bad("runtime", "required".into()) };
        let class_rates: Vec<f64> = self.class_rates.iter().flatten().map(|r| r.0).collect();
        let rate = self.rate.map_or_else(|| class_rates.iter().sum(), |r| r.0);
        let (key, what) = if self.class_rates.is_some() { ("class-rates", "a total rate") } else { ("rate", "a rate") };
        if !(RATES.0..=RATES.1).contains(&rate) {
            let (lo, hi) = (short(RATES.0), short(RATES.1));
            return bad(key, format!("expected {what} from {lo} to {hi} per second, found {}", short(rate)));
        }
        runtime_dist(runtime).map_err(|m| ("runtime".to_string(), m))?;
        let (runtime, pes, pes_range) = (runtime.clone(), self.pes.map_or(1, |p| p.0), self.pes_range);
        Ok(Arc::new(PoissonSpec { rate, class_rates, key, runtime, pes, pes_range }))
    }
}

/// A Poisson workload's runtime distribution: no negative runtimes, a mean within
/// [[`MIN_MEAN_RUNTIME`], [`MAX_TIME`]].
fn runtime_dist(d: &Dist) -> Result<(), String> {
    d.sampler().map_err(|e| e.to_string())?;
    if !d.non_negative() {
        return Err("may draw negative runtimes: use a distribution of non-negative values, e.g. \
                    `truncated_normal` with `low = 0`"
            .into());
    }
    let mean = d.mean();
    if !(MIN_MEAN_RUNTIME..=MAX_TIME).contains(&mean) {
        let (lo, hi) = (short(MIN_MEAN_RUNTIME), short(MAX_TIME));
        return Err(format!("expected a mean runtime from {lo} to {hi} s, found {}", short(mean)));
    }
    Ok(())
}

/// Poisson arrivals as checked.
#[derive(Debug)]
struct PoissonSpec {
    /// The arrival rate [1/s]: `rate`, or the sum of `class-rates`.
    rate: f64,
    /// The rate of each priority class [1/s], class 0 first (none without `class-rates`).
    class_rates: Vec<f64>,
    /// The key that sets the rate.
    key: &'static str,
    runtime: Dist,
    pes: u32,
    pes_range: Option<[u32; 2]>,
}

impl ModelSpec for PoissonSpec {
    /// Poisson arrivals with i.i.d. runtimes: the M/G/c input of the analytic validation.
    fn generate(&self, limit: Limit, rng: &mut SimRng) -> Result<Arc<Workload>, String> {
        use rand::RngExt;
        let (rate, class_rates) = (self.rate, &self.class_rates);
        let gaps = Dist::poisson_arrivals(rate).sampler().map_err(|e| e.to_string())?;
        let runtimes = self.runtime.sampler().map_err(|e| e.to_string())?;
        let pes = self.pes;
        let mut jobs = Vec::new();
        let mut t = 0.0;
        loop {
            t += gaps.sample(rng);
            let n = jobs.len();
            if limit.reached(n, t) {
                break;
            }
            let mut job = WorkloadJob::new(n as u64 + 1, t, runtimes.sample(rng), pes);
            if let Some([lo, hi]) = self.pes_range {
                job.pes = rng.random_range(lo..=hi);
            }
            // Independent Poisson streams, one per class, merged: each arrival is of class i with probability λi / λ.
            if class_rates.len() > 1 {
                let mut u = rng.random::<f64>() * rate;
                let class = class_rates.iter().position(|&r| {
                    u -= r;
                    u < 0.0
                });
                // Rounding can leave u just above 0 after the last class: it is the last.
                job.priority = class.unwrap_or(class_rates.len() - 1) as u8;
            }
            jobs.push(job);
        }
        Ok(Arc::new(Workload::new(jobs)))
    }

    fn arrivals(&self) -> Option<Arrivals> {
        Some(Arrivals { gap: 1.0 / self.rate, per_arrival: 1.0, key: self.key })
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::workload::tests::generate;

    #[test]
    fn class_rates_give_each_class_its_rate() {
        let w = generate(
            "model = \"poisson\"\nclass-rates = [0.2, 0.6]\njobs = 40000\nruntime = { kind = \"constant\", value = 1.0 }",
        );
        let span = w.jobs.last().map_or(0.0, |j| j.submit);
        let rate = |class: u8| w.jobs.iter().filter(|j| j.priority == class).count() as f64 / span;
        // 40,000 arrivals: each class's count has a relative standard error below 1%; the bands are 4%.
        assert!((rate(0) / 0.2 - 1.0).abs() < 0.04, "class 0: {}", rate(0));
        assert!((rate(1) / 0.6 - 1.0).abs() < 0.04, "class 1: {}", rate(1));
        assert!(w.jobs.iter().all(|j| j.priority <= 1));
    }
}
