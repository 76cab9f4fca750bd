//! A workload model of our own: arrivals that follow the day.

use std::f64::consts::TAU;
use std::sync::Arc;

use agents::registry::ParseError;
use agents::registry::values::{Positive, PositiveInt};
use agents::sim::rng::SimRng;
use gridmarket::scenario::workload::registry::{self, Arrivals, CheckCx, Extent, ModelSpec, RawModel, WorkloadModel};
use gridmarket::workload::{Limit, Workload, WorkloadJob};
use rand::RngExt;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;

/// Diurnal arrivals: a Poisson process whose rate follows the day, λ(t) = λ (1 + a sin(2π t / P)), drawn by thinning
/// (Lewis & Shedler 1979): candidates at the peak rate λ (1 + a), each kept with probability λ(t) / (λ (1 + a)).
/// Runtimes are exponential.
pub struct Diurnal;

impl WorkloadModel for Diurnal {
    fn name(&self) -> &'static str {
        "diurnal"
    }

    fn about(&self) -> &'static str {
        "Poisson arrivals whose rate follows the day (`rate`, `amplitude`, `period`), exponential runtimes"
    }

    fn keys(&self) -> &'static [&'static str] {
        registry::key_names::<RawDiurnal>()
    }

    fn schema(&self, generator: &mut SchemaGenerator) -> Schema {
        RawDiurnal::json_schema(generator)
    }

    fn parse(&self, keys: toml::Value) -> Result<Box<dyn RawModel>, ParseError> {
        registry::parse::<RawDiurnal>(keys)
    }

    fn extent(&self) -> Extent {
        Extent::JobsOrUntil
    }
}

/// Diurnal arrivals' keys, as a scenario writes them.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawDiurnal {
    /// Mean arrival rate λ over a period [1/s].
    pub rate: Positive,
    /// Amplitude a of the daily swing, in [0, 1): the rate runs from λ (1 − a) to λ (1 + a) (default 0.5).
    pub amplitude: Option<f64>,
    /// Period P of the cycle \[s\] (default 86,400: a day).
    pub period: Option<Positive>,
    /// Mean runtime \[s\].
    pub runtime: Positive,
    /// PEs per job (default 1).
    pub pes: Option<PositiveInt>,
}

impl RawModel for RawDiurnal {
    fn check(&self, _: &mut CheckCx<'_>) -> Result<Arc<dyn ModelSpec>, (String, String)> {
        let amplitude = self.amplitude.unwrap_or(0.5);
        if !(0.0..1.0).contains(&amplitude) {
            return Err(("amplitude".into(), format!("expected a number in [0, 1), found {amplitude}")));
        }
        let (rate, period, runtime) = (self.rate.0, self.period.map_or(86_400.0, |p| p.0), self.runtime.0);
        Ok(Arc::new(DiurnalSpec { rate, amplitude, period, runtime, pes: self.pes.map_or(1, |p| p.0) }))
    }
}

/// Diurnal arrivals as checked.
#[derive(Debug)]
struct DiurnalSpec {
    rate: f64,
    amplitude: f64,
    period: f64,
    runtime: f64,
    pes: u32,
}

impl ModelSpec for DiurnalSpec {
    fn generate(&self, limit: Limit, rng: &mut SimRng) -> Result<Arc<Workload>, String> {
        let peak = self.rate * (1.0 + self.amplitude);
        let mut jobs = Vec::new();
        let mut t = 0.0;
        loop {
            // An exponential gap at the peak rate (1 − u lies in (0, 1]), kept with probability λ(t) / peak.
            t += -(1.0 - rng.random::<f64>()).ln() / peak;
            let keep = self.rate * (1.0 + self.amplitude * (TAU * t / self.period).sin()) / peak;
            if rng.random::<f64>() >= keep {
                continue;
            }
            if limit.reached(jobs.len(), t) {
                break;
            }
            let runtime = -(1.0 - rng.random::<f64>()).ln() * self.runtime;
            jobs.push(WorkloadJob::new(jobs.len() as u64 + 1, t, runtime, self.pes));
        }
        Ok(Arc::new(Workload::new(jobs)))
    }

    fn arrivals(&self) -> Option<Arrivals> {
        Some(Arrivals { gap: 1.0 / self.rate, per_arrival: 1.0, key: "rate" })
    }
}

#[cfg(test)]
mod tests {
    use agents::sim::rng::SimRng;
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn the_busy_half_of_the_day_gets_its_share() {
        // Over [0, P/2) the rate averages λ (1 + 2a/π), over [P/2, P) λ (1 − 2a/π): with a = 0.9 the busy half gets
        // (1 + 1.8/π) / 2 ≈ 78.6% of the arrivals. 100 days at 1,000 arrivals a day: 100,000 arrivals, a standard
        // error of 0.13 points; the band is 1 point.
        let spec = DiurnalSpec { rate: 1000.0 / 86_400.0, amplitude: 0.9, period: 86_400.0, runtime: 60.0, pes: 1 };
        let w = spec.generate(Limit::Until(100.0 * 86_400.0), &mut SimRng::seed_from_u64(1)).unwrap();
        let busy = w.jobs.iter().filter(|j| j.submit % 86_400.0 < 43_200.0).count() as f64;
        let share = busy / w.jobs.len() as f64;
        assert!((share - (1.0 + 1.8 / std::f64::consts::PI) / 2.0).abs() < 0.01, "{share}");
        assert!((w.jobs.len() as f64 / 100_000.0 - 1.0).abs() < 0.02, "{} arrivals", w.jobs.len());
    }
}
