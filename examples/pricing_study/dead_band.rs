//! A pricing rule of our own: the price steps up when the provider is busy, down when it is idle, and rests between.

use agents::provider::pricing::{NamedPriceRule, Observation, PriceRule, RuleKeys, RuleSettings};
use agents::registry::Invalid;
use serde::Deserialize;

/// Dead-band pricing: at every revision, a step of a fraction of the configured price up when the utilisation of the
/// last interval was above the band, down when it was below, and no change within, so that the price comes to rest
/// instead of following every swing of the load as the feedback rules do.
pub struct DeadBand;

/// Its own keys in `pricing`, beside `rule`, `interval` and `bounds`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Keys {
    /// The utilisations between which the price is left alone (default [0.4, 0.8]).
    band: Option<[f64; 2]>,
    /// The step, a fraction of the configured price (default 0.1).
    step: Option<f64>,
}

impl NamedPriceRule for DeadBand {
    fn name(&self) -> &'static str {
        "dead-band"
    }

    fn about(&self) -> &'static str {
        "a step of `step` × the price (0.1) up above the utilisation `band` ([0.4, 0.8]), down below, else no change"
    }

    fn keys(&self) -> &'static [&'static str] {
        agents::registry::key_names::<Keys>()
    }

    fn check(&self, keys: RuleKeys, _base: f64) -> Result<Box<dyn RuleSettings>, Invalid> {
        let keys: Keys = keys.parse()?;
        let [low, high] = keys.band.unwrap_or([0.4, 0.8]);
        if !(0.0 <= low && low <= high && high <= 1.0) {
            return Err(Invalid::at("band", format!("expected 0 <= low <= high <= 1, found [{low}, {high}]")));
        }
        let step = keys.step.unwrap_or(0.1);
        if !(0.0..=1.0).contains(&step) {
            return Err(Invalid::at("step", format!("expected a fraction from 0 to 1, found {step}")));
        }
        Ok(Box::new(Band { band: (low, high), step }))
    }
}

/// The dead band's settings: the band of utilisation and the step as a fraction of the configured price.
#[derive(Debug)]
struct Band {
    band: (f64, f64),
    step: f64,
}

impl RuleSettings for Band {
    fn build(&self, base: f64) -> Box<dyn PriceRule> {
        Box::new(Steps { band: self.band, step: self.step * base })
    }
}

/// A provider's dead-band strategy: the band and its step [G$ per PE-second].
#[derive(Debug)]
struct Steps {
    band: (f64, f64),
    step: f64,
}

impl PriceRule for Steps {
    fn next(&mut self, seen: &Observation) -> f64 {
        if seen.utilisation > self.band.1 {
            seen.price + self.step
        } else if seen.utilisation < self.band.0 {
            seen.price - self.step
        } else {
            seen.price
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_price_steps_outside_the_band_and_rests_inside() {
        let seen = |utilisation| Observation {
            now: 3600.0,
            price: 5.0,
            base: 4.0,
            utilisation,
            queue: 0.0,
            demand: 1.0,
            cleared: None,
        };
        let keys = |table: &str| RuleKeys::from(toml::from_str::<toml::Table>(table).unwrap());
        let mut rule = DeadBand.check(keys(""), 4.0).unwrap().build(4.0);
        assert_eq!(rule.next(&seen(0.9)), 5.4);
        assert_eq!(rule.next(&seen(0.6)), 5.0);
        assert_eq!(rule.next(&seen(0.1)), 4.6);
        let mut narrow = DeadBand.check(keys("band = [0.5, 0.5]\nstep = 0.25"), 4.0).unwrap().build(4.0);
        assert_eq!(narrow.next(&seen(0.6)), 6.0);
        assert_eq!(DeadBand.check(keys("band = [0.8, 0.4]"), 4.0).unwrap_err().key, "band");
    }
}
