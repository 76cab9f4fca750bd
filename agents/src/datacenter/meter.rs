//! An energy meter over the CPUs of a site: what they draw, running or idle, integrated over simulated time.
//!
//! Each CPU is either running (at the power of the frequency its application runs at) or idle (at the idle power).
//! The meter keeps the draw of the running CPUs and the count of the idle ones as step functions and integrates
//! both at every change, so the energy stays right however long CPUs sit idle between applications.
//!
//! The idle power is the counting rule. Garg (2010) §6.2 counts only the energy of applications, E^c_ij = (β + α
//! f³) · n · T(f) (6.3): static power is paid while a CPU runs an application and idle CPUs count for nothing (as
//! if switched off). That is [`IdlePower::Off`]; [`IdlePower::Static`] keeps idle CPUs on at their static power β.

use serde::{Deserialize, Serialize};

use crate::sim::SimTime;

/// What an idle CPU draws; deserialises from "off" and "static".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IdlePower {
    /// Nothing: only applications' energy counts (Garg 2010, Eq 6.3).
    #[default]
    Off,
    /// Its static power β.
    Static,
}

/// The CPUs' energy \[J\], split into what running and idle CPUs drew.
#[derive(Clone, Debug, PartialEq)]
pub struct EnergyMeter {
    cpus: u32,
    idle_watts: f64,
    /// Until when the energies below are integrated.
    at: SimTime,
    running: u32,
    /// The running CPUs' draw [W].
    running_watts: f64,
    running_joules: f64,
    idle_joules: f64,
}

/// Why the meter refused a change: more CPUs than it has would run, or more would stop than run.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MeterError {
    /// `cpus` more CPUs would run, with `running` of `of` running already.
    #[error("{cpus} more CPUs would run, with {running} of {of} running already")]
    Oversubscribed {
        /// CPUs asked for.
        cpus: u32,
        /// CPUs running.
        running: u32,
        /// CPUs of the site.
        of: u32,
    },
    /// `cpus` CPUs would stop with only `running` running.
    #[error("{cpus} CPUs would stop, with only {running} running")]
    NotRunning {
        /// CPUs to stop.
        cpus: u32,
        /// CPUs running.
        running: u32,
    },
}

impl EnergyMeter {
    /// A meter of `cpus` idle CPUs, each drawing `idle_watts` \[W\] while idle, from t = 0.
    pub fn new(cpus: u32, idle_watts: f64) -> EnergyMeter {
        EnergyMeter {
            cpus,
            idle_watts,
            at: SimTime::ZERO,
            running: 0,
            running_watts: 0.0,
            running_joules: 0.0,
            idle_joules: 0.0,
        }
    }

    /// Integrates up to `now` (a time before the last is taken as the last: nothing is drawn twice).
    fn advance(&mut self, now: SimTime) {
        if now <= self.at {
            return;
        }
        let secs = now - self.at;
        self.running_joules += self.running_watts * secs;
        self.idle_joules += f64::from(self.cpus - self.running) * self.idle_watts * secs;
        self.at = now;
    }

    /// `cpus` idle CPUs start running at `now`, each drawing `watts`.
    pub fn run(&mut self, now: SimTime, cpus: u32, watts: f64) -> Result<(), MeterError> {
        if self.running + cpus > self.cpus {
            return Err(MeterError::Oversubscribed { cpus, running: self.running, of: self.cpus });
        }
        self.advance(now);
        self.running += cpus;
        self.running_watts += f64::from(cpus) * watts;
        Ok(())
    }

    /// `cpus` running CPUs, each drawing `watts`, go idle at `now`.
    pub fn stop(&mut self, now: SimTime, cpus: u32, watts: f64) -> Result<(), MeterError> {
        if cpus > self.running {
            return Err(MeterError::NotRunning { cpus, running: self.running });
        }
        self.advance(now);
        self.running -= cpus;
        // Sums of the same draws taken away in another order leave rounding behind: none when nothing runs.
        self.running_watts =
            if self.running == 0 { 0.0 } else { (self.running_watts - f64::from(cpus) * watts).max(0.0) };
        Ok(())
    }

    /// CPUs running now.
    pub fn running(&self) -> u32 {
        self.running
    }

    /// Energy the running CPUs drew from t = 0 to `now` \[J\].
    pub fn running_joules(&self, now: SimTime) -> f64 {
        let mut m = self.clone();
        m.advance(now);
        m.running_joules
    }

    /// Energy the idle CPUs drew from t = 0 to `now` \[J\].
    pub fn idle_joules(&self, now: SimTime) -> f64 {
        let mut m = self.clone();
        m.advance(now);
        m.idle_joules
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(secs: f64) -> SimTime {
        SimTime::new(secs).unwrap()
    }

    #[test]
    fn running_and_idle_cpus_are_integrated_piece_by_piece() {
        let mut m = EnergyMeter::new(4, 10.0);
        m.run(t(100.0), 2, 50.0).unwrap();
        m.run(t(200.0), 1, 80.0).unwrap();
        m.stop(t(300.0), 2, 50.0).unwrap();
        m.stop(t(400.0), 1, 80.0).unwrap();
        // Running: 2 × 50 W over [100, 300) and 80 W over [200, 400): 20,000 + 16,000 J.
        assert_eq!(m.running_joules(t(1000.0)), 36_000.0);
        // Idle: 4 CPUs for 100 s, 2 for 100, 1 for 100, 3 for 100, 4 for 600 (to t = 1000), at 10 W.
        assert_eq!(m.idle_joules(t(1000.0)), 10.0 * (400.0 + 200.0 + 100.0 + 300.0 + 2400.0));
        // Reading does not change what is metered.
        assert_eq!(m.idle_joules(t(400.0)), 10.0 * 1000.0);
        assert_eq!(m.running(), 0);
    }

    #[test]
    fn under_the_thesis_rule_idle_cpus_draw_nothing() {
        let mut m = EnergyMeter::new(8, 0.0);
        m.run(t(0.0), 8, 100.0).unwrap();
        m.stop(t(10.0), 8, 100.0).unwrap();
        assert_eq!(m.running_joules(t(1e6)), 8_000.0);
        assert_eq!(m.idle_joules(t(1e6)), 0.0);
    }

    #[test]
    fn more_cpus_than_the_site_has_or_than_run_are_refused() {
        let mut m = EnergyMeter::new(4, 0.0);
        assert_eq!(
            m.run(t(0.0), 5, 1.0).unwrap_err().to_string(),
            "5 more CPUs would run, with 0 of 4 running already"
        );
        m.run(t(0.0), 3, 1.0).unwrap();
        assert_eq!(m.stop(t(1.0), 4, 1.0).unwrap_err(), MeterError::NotRunning { cpus: 4, running: 3 });
        assert_eq!(m.running_joules(t(1.0)), 3.0, "a refused change meters nothing");
    }
}
