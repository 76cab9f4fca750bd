//! A pricing rule of our own: the price steps up when the provider is busy, down when it is idle, and rests between.

use agents::provider::pricing::{NamedPriceRule, Observation, PriceRule};

/// Dead-band pricing: at every revision, a step of a tenth of the configured price up when the utilisation of the last
/// interval was above 0.8, down when it was below 0.4, and no change in between, so that the price comes to rest
/// instead of following every swing of the load as the feedback rules do.
pub struct DeadBand;

/// The utilisations between which the price is left alone.
const BAND: (f64, f64) = (0.4, 0.8);

impl NamedPriceRule for DeadBand {
    fn name(&self) -> &'static str {
        "dead-band"
    }

    fn about(&self) -> &'static str {
        "a step of a tenth of the price up above 0.8 utilisation, down below 0.4, else no change"
    }

    fn build(&self, base: f64) -> Box<dyn PriceRule> {
        Box::new(Steps { step: base / 10.0 })
    }
}

/// A provider's dead-band strategy: its step [G$ per PE-second].
#[derive(Debug)]
struct Steps {
    step: f64,
}

impl PriceRule for Steps {
    fn next(&mut self, seen: &Observation) -> f64 {
        if seen.utilisation > BAND.1 {
            seen.price + self.step
        } else if seen.utilisation < BAND.0 {
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
        let mut rule = DeadBand.build(4.0);
        assert_eq!(rule.next(&seen(0.9)), 5.4);
        assert_eq!(rule.next(&seen(0.6)), 5.0);
        assert_eq!(rule.next(&seen(0.1)), 4.6);
    }
}
