//! The built-in pricing rules (see `pricing`'s module doc for what each does): each a [`NamedPriceRule`] with its own
//! keys, registered in the standard registry by the same `Registry::with_price_rule` as a rule of one's own, and the
//! strategy ([`PriceRule`]) it builds.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};

use super::pricing::{
    DEFAULT_INTERVAL, NamedPriceRule, Observation, PriceRule, PricingConfig, RawPricing, RawShared, Revision, Rule,
    RuleKeys, RuleSettings,
};
use crate::registry::limits::{MAX_PRICE, short};
use crate::registry::values::Seconds;
use crate::registry::{self, Invalid};

/// Every built-in rule, in the order `gridmarket list` gives them.
pub const BUILT_IN: [&dyn NamedPriceRule; 5] = [&Fixed, &Utilisation, &Demand, &AuctionCleared, &TimeOfDay];

impl Default for PricingConfig {
    fn default() -> Self {
        PricingConfig { rule: Fixed.into(), interval: DEFAULT_INTERVAL, bounds: (0.0, MAX_PRICE) }
    }
}

/// The JSON schema of `pricing`: the shared keys and every built-in rule's own (a key several rules take is
/// documented once, with each of their docs); a registered rule's keys are its own documentation's, so other keys
/// are not excluded here (`RawPricing::check` refuses those of no rule).
impl JsonSchema for RawPricing {
    fn schema_name() -> Cow<'static, str> {
        "RawPricing".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut properties = serde_json::Map::new();
        registry::merge_keys(&mut properties, &RawShared::json_schema(generator));
        for rule in BUILT_IN {
            if let Some(schema) = rule.schema(generator) {
                registry::merge_keys(&mut properties, &schema);
            }
        }
        let schema = serde_json::json!({ "type": "object", "properties": properties, "required": ["rule"] });
        Schema::try_from(schema).expect("an object's schema")
    }
}

/// Hours in a day, the unit of a time-of-day schedule.
const HOURS: f64 = 24.0;

/// Highest gain of a feedback rule: a price multiplied by up to 1000 per unit of signal in one interval.
const MAX_GAIN: f64 = 1_000.0;

/// The configured price, for ever: the rule "fixed" and its strategy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fixed;

impl PriceRule for Fixed {
    fn next(&mut self, seen: &Observation) -> f64 {
        seen.base
    }
}

impl RuleSettings for Fixed {
    fn build(&self, _base: f64) -> Box<dyn PriceRule> {
        Box::new(Fixed)
    }
}

impl From<Fixed> for Rule {
    fn from(rule: Fixed) -> Rule {
        Rule::new(rule.name(), rule.revision(), rule)
    }
}

impl NamedPriceRule for Fixed {
    fn name(&self) -> &'static str {
        "fixed"
    }

    fn about(&self) -> &'static str {
        "the configured price, for ever (the default)"
    }

    fn revision(&self) -> Revision {
        Revision::Never
    }

    fn check(&self, _keys: RuleKeys, _base: f64) -> Result<Box<dyn RuleSettings>, Invalid> {
        Ok(Box::new(Fixed))
    }
}

/// The exchange's last clearing price: the rule "auction-cleared" and its strategy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AuctionCleared;

impl PriceRule for AuctionCleared {
    fn next(&mut self, seen: &Observation) -> f64 {
        seen.cleared.unwrap_or(seen.price)
    }
}

impl RuleSettings for AuctionCleared {
    fn build(&self, _base: f64) -> Box<dyn PriceRule> {
        Box::new(AuctionCleared)
    }
}

impl NamedPriceRule for AuctionCleared {
    fn name(&self) -> &'static str {
        "auction-cleared"
    }

    fn about(&self) -> &'static str {
        "the price the exchange's call markets last cleared at (a provider asking in them)"
    }

    fn revision(&self) -> Revision {
        Revision::OnClearing
    }

    fn check(&self, _keys: RuleKeys, _base: f64) -> Result<Box<dyn RuleSettings>, Invalid> {
        Ok(Box::new(AuctionCleared))
    }
}

impl From<AuctionCleared> for Rule {
    fn from(rule: AuctionCleared) -> Rule {
        Rule::new(rule.name(), rule.revision(), rule)
    }
}

/// p' = p · (1 + gain · (x − target)): the strategy of the utilisation and demand rules.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Feedback {
    /// What x is.
    pub signal: FeedbackSignal,
    /// g, per unit of the signal.
    pub gain: f64,
    /// x*.
    pub target: f64,
}

/// The signal of a [`Feedback`] rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeedbackSignal {
    /// Utilisation.
    Utilisation,
    /// Jobs waiting per PE.
    Queue,
    /// Demand over supply, demand counted as it says.
    Demand(DemandCount),
}

/// What the utilisation rule reads as its signal (`signal`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Signal {
    /// Busy PE-seconds over PE-seconds.
    #[default]
    Utilisation,
    /// Mean jobs waiting per PE.
    Queue,
}

/// What the demand rule counts as demand (`counts`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DemandCount {
    /// Every request (claim, submission, reservation), granted or not: a broker that retries a refused claim asks
    /// again, and its job counts again.
    #[default]
    Requests,
    /// Each job once per interval however often it asks (a reservation, which has no job, counts each time).
    Jobs,
}

impl PriceRule for Feedback {
    fn next(&mut self, seen: &Observation) -> f64 {
        let x = match self.signal {
            FeedbackSignal::Utilisation => seen.utilisation,
            FeedbackSignal::Queue => seen.queue,
            FeedbackSignal::Demand(_) => seen.demand,
        };
        seen.price * (1.0 + self.gain * (x - self.target))
    }
}

impl RuleSettings for Feedback {
    fn build(&self, _base: f64) -> Box<dyn PriceRule> {
        Box::new(*self)
    }

    fn counts_jobs(&self) -> bool {
        self.signal == FeedbackSignal::Demand(DemandCount::Jobs)
    }
}

impl From<Feedback> for Rule {
    fn from(rule: Feedback) -> Rule {
        let name = match rule.signal {
            FeedbackSignal::Demand(_) => Demand.name(),
            FeedbackSignal::Utilisation | FeedbackSignal::Queue => Utilisation.name(),
        };
        Rule::new(name, Revision::Interval, rule)
    }
}

/// The feedback rules' bounds by default: [p0 / 10, 10 · p0].
fn feedback_bounds(base: f64) -> (f64, f64) {
    (base / 10.0, (10.0 * base).min(MAX_PRICE))
}

/// The checks the feedback rules share: a positive configured price, a gain, a target within `[0, max]`.
fn feedback(base: f64, gain: Option<f64>, target: Option<f64>, default: f64, max: f64) -> Result<(f64, f64), Invalid> {
    if base <= 0.0 {
        let m = "moves the price by a fraction of itself, so it needs a positive `price`";
        return Err(Invalid::at("rule", m).hint("give the provider a `price` above 0"));
    }
    let Some(gain) = gain else {
        return Err(Invalid::at("gain", "expected a gain (a number from 0 to 1000), found none"));
    };
    if !(0.0..=MAX_GAIN).contains(&gain) {
        return Err(Invalid::at("gain", format!("expected a number from 0 to 1000, found {}", short(gain))));
    }
    let target = target.unwrap_or(default);
    if !(0.0..=max).contains(&target) {
        let m = format!("expected a number from 0 to {}, found {}", short(max), short(target));
        return Err(Invalid::at("target", m));
    }
    Ok((gain, target))
}

/// The rule "utilisation": feedback on the utilisation, or the queue, over the last interval.
#[derive(Clone, Copy, Debug)]
pub struct Utilisation;

/// The utilisation rule's keys.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawUtilisation {
    /// Utilisation and demand: the gain g (per unit of the signal; from 0 to 1000).
    gain: Option<f64>,
    /// Utilisation: the target x* of the signal (from 0 to 1, default 0.7; with `signal = "queue"` from 0, default
    /// 1).
    target: Option<f64>,
    /// Utilisation: "utilisation" (default) or "queue".
    #[schemars(with = "Option<String>")]
    signal: Option<Signal>,
}

impl NamedPriceRule for Utilisation {
    fn name(&self) -> &'static str {
        "utilisation"
    }

    fn about(&self) -> &'static str {
        "p' = p · (1 + gain · (x − target)), x the utilisation (or jobs waiting per PE) over the last interval"
    }

    fn default_bounds(&self, base: f64) -> (f64, f64) {
        feedback_bounds(base)
    }

    fn keys(&self) -> &'static [&'static str] {
        registry::key_names::<RawUtilisation>()
    }

    fn schema(&self, generator: &mut SchemaGenerator) -> Option<Schema> {
        Some(RawUtilisation::json_schema(generator))
    }

    fn check(&self, keys: RuleKeys, base: f64) -> Result<Box<dyn RuleSettings>, Invalid> {
        let raw: RawUtilisation = keys.parse()?;
        let (signal, default, max) = match raw.signal.unwrap_or_default() {
            Signal::Utilisation => (FeedbackSignal::Utilisation, 0.7, 1.0),
            Signal::Queue => (FeedbackSignal::Queue, 1.0, 1e6),
        };
        let (gain, target) = feedback(base, raw.gain, raw.target, default, max)?;
        Ok(Box::new(Feedback { signal, gain, target }))
    }
}

/// The rule "demand": feedback on the PE-seconds requested over those offered in the last interval.
#[derive(Clone, Copy, Debug)]
pub struct Demand;

/// The demand rule's keys.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawDemand {
    /// Utilisation and demand: the gain g (per unit of the signal; from 0 to 1000).
    gain: Option<f64>,
    /// Demand: the target x* (from 0, default 1: demand meeting supply).
    target: Option<f64>,
    /// Demand: what counts as demand, "requests" (every claim, submission and reservation, granted or not; default)
    /// or "jobs" (each job once per interval, however often its broker asks).
    #[schemars(with = "Option<String>")]
    counts: Option<DemandCount>,
}

impl NamedPriceRule for Demand {
    fn name(&self) -> &'static str {
        "demand"
    }

    fn about(&self) -> &'static str {
        "p' = p · (1 + gain · (x − target)), x the PE-seconds requested over those offered in the last interval"
    }

    fn default_bounds(&self, base: f64) -> (f64, f64) {
        feedback_bounds(base)
    }

    fn keys(&self) -> &'static [&'static str] {
        registry::key_names::<RawDemand>()
    }

    fn schema(&self, generator: &mut SchemaGenerator) -> Option<Schema> {
        Some(RawDemand::json_schema(generator))
    }

    fn check(&self, keys: RuleKeys, base: f64) -> Result<Box<dyn RuleSettings>, Invalid> {
        let raw: RawDemand = keys.parse()?;
        let (gain, target) = feedback(base, raw.gain, raw.target, 1.0, 1e6)?;
        Ok(Box::new(Feedback { signal: FeedbackSignal::Demand(raw.counts.unwrap_or_default()), gain, target }))
    }
}

/// p0 times the factor of the hour of the day: the strategy of the time-of-day rule.
#[derive(Clone, Debug, PartialEq)]
pub struct Tariff {
    /// (from hour, factor), hours ascending from 0.
    pub schedule: Vec<(f64, f64)>,
    /// The length of a day \[s\].
    pub day: f64,
}

impl Tariff {
    /// The factor in force at `now` \[s\].
    pub fn factor(&self, now: f64) -> f64 {
        let hour = (now.rem_euclid(self.day)) / self.day * HOURS;
        let i = self.schedule.partition_point(|&(from, _)| from <= hour);
        self.schedule.get(i.saturating_sub(1)).map_or(1.0, |e| e.1)
    }

    /// How long after `now` the factor next changes \[s\].
    pub fn until_change(&self, now: f64) -> f64 {
        let into = now.rem_euclid(self.day);
        let hour = into / self.day * HOURS;
        let next = self.schedule.iter().map(|e| e.0).find(|&h| h > hour).unwrap_or(HOURS);
        let wait = next / HOURS * self.day - into;
        // Rounding may leave a change a hair in the past: go on to the next one instead of waking at once.
        if wait > 1e-9 * self.day { wait } else { self.day / HOURS }
    }
}

impl PriceRule for Tariff {
    fn next(&mut self, seen: &Observation) -> f64 {
        seen.base * self.factor(seen.now)
    }

    fn next_change(&self, now: f64) -> Option<f64> {
        Some(self.until_change(now))
    }
}

impl RuleSettings for Tariff {
    fn build(&self, _base: f64) -> Box<dyn PriceRule> {
        Box::new(self.clone())
    }
}

impl From<Tariff> for Rule {
    fn from(rule: Tariff) -> Rule {
        Rule::new(TimeOfDay.name(), TimeOfDay.revision(), rule)
    }
}

/// The rule "time-of-day": peak and off-peak tariffs.
#[derive(Clone, Copy, Debug)]
pub struct TimeOfDay;

/// The time-of-day rule's keys.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawTimeOfDay {
    /// Time-of-day: `[[hour, factor], ...]`, hours from 0 (the first entry) ascending below 24, each factor (≥ 0)
    /// multiplying `price` from its hour until the next entry's.
    schedule: Option<Vec<[f64; 2]>>,
    /// Time-of-day: the length of a day \[s\] (default 86,400).
    day: Option<Seconds>,
}

impl NamedPriceRule for TimeOfDay {
    fn name(&self) -> &'static str {
        "time-of-day"
    }

    fn about(&self) -> &'static str {
        "`price` × the factor of the hour of the day, from `schedule` (peak and off-peak tariffs)"
    }

    fn revision(&self) -> Revision {
        Revision::AtChanges
    }

    fn bounds_hold_the_price(&self) -> bool {
        false
    }

    fn keys(&self) -> &'static [&'static str] {
        registry::key_names::<RawTimeOfDay>()
    }

    fn schema(&self, generator: &mut SchemaGenerator) -> Option<Schema> {
        Some(RawTimeOfDay::json_schema(generator))
    }

    fn check(&self, keys: RuleKeys, _base: f64) -> Result<Box<dyn RuleSettings>, Invalid> {
        let raw: RawTimeOfDay = keys.parse()?;
        let Some(schedule) = &raw.schedule else {
            return Err(Invalid::at("schedule", "expected `[[hour, factor], ...]` from hour 0, found none"));
        };
        check_schedule(schedule).map_err(|m| Invalid::at("schedule", m))?;
        let schedule = schedule.iter().map(|&[h, f]| (h, f)).collect();
        Ok(Box::new(Tariff { schedule, day: raw.day.map_or(86_400.0, |d| d.0) }))
    }
}

/// A time-of-day schedule: hours from 0 ascending below 24, factors finite and non-negative.
fn check_schedule(schedule: &[[f64; 2]]) -> Result<(), String> {
    if schedule.first().map(|e| e[0]) != Some(0.0) {
        return Err("expected a first entry at hour 0".into());
    }
    for (i, &[hour, factor]) in schedule.iter().enumerate() {
        if !(0.0..HOURS).contains(&hour) || (i > 0 && hour <= schedule[i - 1][0]) {
            return Err(format!("entry {i}: expected hours ascending from 0 to below 24, found {}", short(hour)));
        }
        if !(factor.is_finite() && factor >= 0.0) {
            return Err(format!("entry {i}: expected a non-negative factor, found {}", short(factor)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(price: f64, utilisation: f64) -> Observation {
        let (now, base, queue, demand, cleared) = (3600.0, 4.0, 0.0, 0.0, None);
        Observation { now, price, base, utilisation, queue, demand, cleared }
    }

    #[test]
    fn test_feedback_moves_the_price_by_the_gain_times_the_error() {
        let mut rule = Feedback { signal: FeedbackSignal::Utilisation, gain: 0.5, target: 0.6 };
        // Busier than the target by 0.2: up by 10%; idler by 0.4: down by 20%.
        assert!((rule.next(&seen(4.0, 0.8)) - 4.4).abs() < 1e-12);
        assert!((rule.next(&seen(4.0, 0.2)) - 3.2).abs() < 1e-12);
        assert_eq!(rule.next(&seen(4.0, 0.6)), 4.0);
        let mut demand = Feedback { signal: FeedbackSignal::Demand(DemandCount::Requests), gain: 1.0, target: 1.0 };
        assert!((demand.next(&Observation { demand: 1.5, ..seen(2.0, 0.0) }) - 3.0).abs() < 1e-12);
        let mut queue = Feedback { signal: FeedbackSignal::Queue, gain: 0.1, target: 0.0 };
        assert!((queue.next(&Observation { queue: 2.0, ..seen(2.0, 0.0) }) - 2.4).abs() < 1e-12);
    }

    #[test]
    fn test_time_of_day_follows_the_schedule() {
        let t = Tariff { schedule: vec![(0.0, 0.5), (8.0, 1.5), (20.0, 1.0)], day: 86_400.0 };
        assert_eq!(t.factor(0.0), 0.5);
        assert_eq!(t.factor(8.0 * 3600.0 - 1.0), 0.5);
        assert_eq!(t.factor(8.0 * 3600.0), 1.5);
        assert_eq!(t.factor(21.0 * 3600.0), 1.0);
        // The next day starts over.
        assert_eq!(t.factor(86_400.0 + 9.0 * 3600.0), 1.5);
        assert_eq!(t.until_change(0.0), 8.0 * 3600.0);
        assert_eq!(t.until_change(9.0 * 3600.0), 11.0 * 3600.0);
        assert_eq!(t.until_change(20.0 * 3600.0), 4.0 * 3600.0);
        let mut rule = t;
        assert_eq!(rule.next(&Observation { now: 9.0 * 3600.0, ..seen(1.0, 0.0) }), 6.0);
    }

    #[test]
    fn test_fixed_and_auction_cleared() {
        assert_eq!(Fixed.next(&seen(7.0, 1.0)), 4.0);
        assert_eq!(AuctionCleared.next(&seen(7.0, 1.0)), 7.0, "no clearing yet: the price stays");
        assert_eq!(AuctionCleared.next(&Observation { cleared: Some(2.5), ..seen(7.0, 1.0) }), 2.5);
    }
}
