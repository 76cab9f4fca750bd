//! Simulated time: seconds as a totally ordered `f64`.

use std::fmt;
use std::ops::{Add, Sub};

use serde::{Deserialize, Serialize};

/// A point in simulated time, in seconds since the start of the run.
///
/// Always finite and non-negative, so it has a total order; values are checked where they enter the kernel
/// ([`SimTime::new`], [`Delay::new`]), and adding a duration saturates at the bounds. Durations in seconds add to it
/// (`t + 2.5`) and the difference of two times is seconds (`t1 - t0`), with plain `f64` rounding.
#[derive(Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct SimTime(f64);

impl SimTime {
    /// The start of every run.
    pub const ZERO: SimTime = SimTime(0.0);
    /// Later than any reachable time: the horizon of a run to quiescence.
    pub const MAX: SimTime = SimTime(f64::MAX);

    /// A time of `secs` seconds; NaN, infinite and negative values are refused.
    #[inline]
    pub fn new(secs: f64) -> Result<SimTime, TimeError> {
        if secs.is_finite() && secs >= 0.0 {
            Ok(SimTime(secs + 0.0)) // + 0.0 turns -0.0 into 0.0, keeping the order total
        } else {
            Err(TimeError { value: secs })
        }
    }

    /// The time whose `f64` bits are `bits` (taken from a valid time).
    #[inline]
    pub(crate) fn from_bits(bits: u64) -> SimTime {
        SimTime(f64::from_bits(bits))
    }

    /// Seconds since the start of the run.
    #[inline]
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

/// `secs` seconds later, for durations kept as plain seconds (runtimes, estimates, horizons).
///
/// Saturates like `+ Delay`: at [`SimTime::MAX`], and at [`SimTime::ZERO`] for a negative duration that would
/// reach before the start of the run, so the result is always a valid time.
///
/// # Panics
/// If `secs` is NaN: a NaN duration is a bug upstream, and no time could stand for it.
impl Add<f64> for SimTime {
    type Output = SimTime;
    fn add(self, secs: f64) -> SimTime {
        let t = self.0 + secs;
        assert!(!t.is_nan(), "{self:?} + {secs} s is not a time");
        // `clamp` keeps the finite sum exact; the saturations only apply past the bounds.
        SimTime(t.clamp(0.0, f64::MAX))
    }
}

/// The seconds from `earlier` to `self`: negative if `earlier` is in fact later. Exact `f64` subtraction, so it is
/// the same number as `self.secs() - earlier.secs()`.
impl Sub for SimTime {
    type Output = f64;
    fn sub(self, earlier: SimTime) -> f64 {
        self.0 - earlier.0
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
    fn adds_seconds_saturating_at_both_ends() {
        let t = SimTime::new(10.0).unwrap();
        assert_eq!(t + 2.5, SimTime::new(12.5).unwrap());
        assert_eq!(t + 0.0, t);
        assert_eq!((t + 0.1).secs(), 10.0 + 0.1, "the same rounding as f64");
        assert_eq!(t + -4.0, SimTime::new(6.0).unwrap(), "a negative duration goes back");
        assert_eq!(t + -20.0, SimTime::ZERO, "but never before the start");
        assert_eq!(t + f64::NEG_INFINITY, SimTime::ZERO);
        assert_eq!(SimTime::MAX + 1e308, SimTime::MAX);
        assert_eq!(t + f64::INFINITY, SimTime::MAX);
        assert!((SimTime::ZERO + -0.0).secs().is_sign_positive());
    }

    #[test]
    #[should_panic(expected = "is not a time")]
    fn adding_nan_seconds_panics() {
        let _ = SimTime::ZERO + f64::NAN;
    }

    #[test]
    fn subtracts_to_seconds() {
        let (a, b) = (SimTime::new(2.5).unwrap(), SimTime::new(10.0).unwrap());
        assert_eq!(b - a, 7.5);
        assert_eq!(a - b, -7.5);
        assert_eq!(b - b, 0.0);
        let (x, y) = (SimTime::new(0.3).unwrap(), SimTime::new(0.1).unwrap());
        assert_eq!(x - y, 0.3 - 0.1, "the same rounding as f64");
    }

    #[test]
    fn deserialising_checks_the_value() {
        assert!(serde_json::from_str::<SimTime>("-3.0").is_err());
        assert_eq!(serde_json::from_str::<SimTime>("2.5").unwrap().secs(), 2.5);
        // A plain number, as an f64 would be: message traces do not change with the type.
        let t = SimTime::new(146708.2493273848).unwrap();
        assert_eq!(serde_json::to_string(&t).unwrap(), serde_json::to_string(&146708.2493273848f64).unwrap());
        assert_eq!(serde_json::to_string(&Some(SimTime::ZERO)).unwrap(), "0.0");
    }
}
