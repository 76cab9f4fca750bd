//! A pricing rule of our own: the price surges with the queue.

use agents::provider::pricing::{NamedPriceRule, Observation, PriceRule, RuleKeys, RuleSettings};
use agents::registry::Invalid;

/// Surge pricing: at every revision, the configured price times one plus the jobs that waited per PE over the last
/// interval, so that a provider with a queue as long as it has PEs charges double.
#[derive(Debug)]
pub struct Surge;

impl NamedPriceRule for Surge {
    fn name(&self) -> &'static str {
        "surge"
    }

    fn about(&self) -> &'static str {
        "the configured price times one plus the jobs waiting per PE"
    }

    /// It takes no key of its own beside `interval` and `bounds`.
    fn check(&self, _keys: RuleKeys, _base: f64) -> Result<Box<dyn RuleSettings>, Invalid> {
        Ok(Box::new(Surge))
    }
}

impl RuleSettings for Surge {
    fn build(&self, _base: f64) -> Box<dyn PriceRule> {
        Box::new(SurgeRule)
    }
}

/// A provider's surge strategy (it keeps no state: each revision reads the last interval only).
#[derive(Debug)]
struct SurgeRule;

impl PriceRule for SurgeRule {
    fn next(&mut self, seen: &Observation) -> f64 {
        seen.base * (1.0 + seen.queue)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queue_as_long_as_the_pes_doubles_the_price() {
        let seen = |queue| Observation {
            now: 3600.0,
            price: 5.0,
            base: 2.0,
            utilisation: 1.0,
            queue,
            demand: 1.0,
            cleared: None,
        };
        let mut rule = Surge.build(2.0);
        assert_eq!(rule.next(&seen(1.0)), 4.0);
        // It follows the queue from the configured price, not from the price posted.
        assert_eq!(rule.next(&seen(0.0)), 2.0);
    }
}
