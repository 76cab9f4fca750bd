//! Simulated time: seconds as a totally ordered `f64`.

use std::fmt;
use std::ops::Add;

use serde::{Deserialize, Serialize};

/// A point in simulated time, in seconds since the start of the run.
///
/// Always finite and non-negative, so it has a total order; values are checked where they enter the kernel
/// ([`SimTime::new`], [`Delay::new`]).
#[derive(Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct SimTime(f64);

impl SimTime {
    /// The start of every run.
    pub const ZERO: SimTime = SimTime(0.0);
    /// Later than any reachable time: the horizon of a run to quiescence.
    pub const MAX: SimTime = SimTime(f64::MAX);

    /// A time of `secs` seconds; NaN, infinite and negative values are refused.
    pub fn new(secs: f64) -> Result<SimTime, TimeError> {
        if secs.is_finite() && secs >= 0.0 {
            Ok(SimTime(secs + 0.0)) // + 0.0 turns -0.0 into 0.0, keeping the order total
        } else {
            Err(TimeError { value: secs })
        }
    }

    /// Seconds since the start of the run.
    pub fn secs(self) -> f64 {
        self.0
    }
}

impl Eq for SimTime {}

impl PartialOrd for SimTime {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SimTime {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // Both are finite and >= 0, so the IEEE order is total; `total_cmp` compiles to an integer compare.
        self.0.total_cmp(&other.0)
    }
}

impl Add<Delay> for SimTime {
    type Output = SimTime;
    fn add(self, d: Delay) -> SimTime {
        // Finite + finite can overflow to +inf only beyond 1.8e308 s; saturate to keep the invariant.
        SimTime((self.0 + d.0).min(f64::MAX))
    }
}

impl fmt::Debug for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}s", self.0)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl TryFrom<f64> for SimTime {
    type Error = TimeError;
    fn try_from(v: f64) -> Result<Self, TimeError> {
        SimTime::new(v)
    }
}

impl From<SimTime> for f64 {
    fn from(t: SimTime) -> f64 {
        t.0
    }
}

/// A non-negative, finite span of simulated time in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
pub struct Delay(f64);

impl Delay {
    /// No delay: delivery in the next round of the same instant.
    pub const ZERO: Delay = Delay(0.0);

    /// A delay of `secs` seconds; NaN, infinite and negative values are refused.
    pub fn new(secs: f64) -> Result<Delay, TimeError> {
        if secs.is_finite() && secs >= 0.0 { Ok(Delay(secs + 0.0)) } else { Err(TimeError { value: secs }) }
    }

    /// Seconds.
    pub fn secs(self) -> f64 {
        self.0
    }
}

/// Occurs when a time or delay is NaN, infinite or negative.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error("expected a finite, non-negative number of seconds, found {value}")]
pub struct TimeError {
    /// The refused value.
    pub value: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_nan_negative_and_infinite() {
        assert!(SimTime::new(f64::NAN).is_err());
        assert!(SimTime::new(-1.0).is_err());
        assert!(SimTime::new(f64::INFINITY).is_err());
        assert!(Delay::new(-0.5).is_err());
        assert!(Delay::new(f64::NAN).is_err());
        assert_eq!(SimTime::new(-0.0).unwrap(), SimTime::ZERO);
    }

    #[test]
    fn orders_totally_and_adds_delays() {
        let a = SimTime::new(1.5).unwrap();
        let b = a + Delay::new(0.25).unwrap();
        assert_eq!(b.secs(), 1.75);
        assert!(a < b && b.cmp(&a).is_gt());
        assert_eq!(SimTime::MAX + Delay::new(1e308).unwrap(), SimTime::MAX);
    }

    #[test]
    fn deserialising_checks_the_value() {
        assert!(serde_json::from_str::<SimTime>("-3.0").is_err());
        assert_eq!(serde_json::from_str::<SimTime>("2.5").unwrap().secs(), 2.5);
    }
}
