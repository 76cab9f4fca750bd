//! Dynamic voltage scaling (DVS) within a data centre, Garg (2010) §6.3.2: at which frequency an application runs,
//! and in which slot.
//!
//! Every policy tries frequency levels from a starting one upwards, each time looking for the earliest free slot of
//! the application's CPUs for its runtime at that frequency (the local scheduler's conservative backfilling with
//! advance reservation); the first level at which the application ends by its deadline wins, and an application
//! that misses it even at f_max fails here (the meta-broker tries the next data centre). The policies differ in the
//! starting level:
//! - ours ("OurDVS"): the level nearest the clamped optimal frequency f_opt = ∛(β / 2α), the local minimum of energy
//!   per unit of work;
//! - previous ("PrevDVS", the comparison of §6.5.1 after Wang and Lu): f_min, scaling up linearly;
//! - none: f_max only.

use serde::{Deserialize, Serialize};

use super::power::PowerModel;
pub use crate::model::DvsPolicy;
use crate::sim::SimTime;

impl DvsPolicy {
    /// Every policy, as `gridmarket list` gives them.
    pub const ALL: [DvsPolicy; 3] = [DvsPolicy::Ours, DvsPolicy::Previous, DvsPolicy::None];

    /// The level the policy tries first.
    pub fn first_level(self, model: &PowerModel) -> usize {
        match self {
            DvsPolicy::Ours => model.nearest_level(model.f_opt()),
            DvsPolicy::Previous => 0,
            DvsPolicy::None => model.levels.len() - 1,
        }
    }
}

/// Where and how fast an application runs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    /// When its slot starts.
    pub start: SimTime,
    /// The frequency level, an index into the model's levels.
    pub level: usize,
    /// The frequency \[GHz\].
    pub frequency: f64,
    /// Its runtime at that frequency \[s\].
    pub duration: f64,
}

impl Placement {
    /// When it ends.
    pub fn end(&self) -> SimTime {
        self.start + self.duration
    }
}

/// The placement `policy` gives an application of `pes` CPUs that takes `runtime` seconds at f_max (fully CPU-bound
/// with `gamma` = 1) and must end by `deadline`; `earliest(duration)` is the earliest start of a slot of its CPUs for
/// `duration` seconds. `None` when it misses its deadline even at f_max.
pub fn place(
    policy: DvsPolicy,
    model: &PowerModel,
    runtime: f64,
    gamma: f64,
    deadline: SimTime,
    mut earliest: impl FnMut(f64) -> Option<SimTime>,
) -> Option<Placement> {
    (policy.first_level(model)..model.levels.len()).find_map(|level| {
        let frequency = model.levels[level];
        let duration = runtime * model.stretch(frequency, gamma);
        let start = earliest(duration)?;
        let placement = Placement { start, level, frequency, duration };
        (placement.end() <= deadline).then_some(placement)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::profile::Profile;

    fn t(secs: f64) -> SimTime {
        SimTime::new(secs).unwrap()
    }

    /// New York of Garg (2010) Table 6.3: levels 0.675, 0.956, 1.238, 1.519 and 1.8 GHz, f_opt 1.630.
    fn new_york() -> PowerModel {
        PowerModel::new(65.0, 7.5, 0.675, 1.8, 5).unwrap()
    }

    fn levels(policy: DvsPolicy, deadline: f64, profile: &Profile) -> Option<(usize, f64)> {
        let earliest = |d: f64| Some(profile.earliest_fit(SimTime::ZERO, 2, d));
        place(policy, &new_york(), 1000.0, 1.0, t(deadline), earliest).map(|p| (p.level, p.start.secs()))
    }

    #[test]
    fn each_policy_starts_at_its_level_and_scales_up_to_meet_the_deadline() {
        let free = Profile::new(4);
        // A loose deadline: each runs at its first level.
        assert_eq!(levels(DvsPolicy::Ours, 10_000.0, &free), Some((3, 0.0)));
        assert_eq!(levels(DvsPolicy::Previous, 10_000.0, &free), Some((0, 0.0)));
        assert_eq!(levels(DvsPolicy::None, 10_000.0, &free), Some((4, 0.0)));
        // 1,100 s: at 1.519 GHz the run takes 1,185 s, so OurDVS scales up to f_max; PrevDVS climbs all the way.
        assert_eq!(levels(DvsPolicy::Ours, 1100.0, &free), Some((4, 0.0)));
        assert_eq!(levels(DvsPolicy::Previous, 1100.0, &free), Some((4, 0.0)));
        // 2,000 s: PrevDVS stops at 0.956 GHz (1,882 s), the first level that makes it.
        assert_eq!(levels(DvsPolicy::Previous, 2000.0, &free), Some((1, 0.0)));
        // Below the runtime at f_max nothing can.
        assert_eq!(levels(DvsPolicy::Ours, 999.0, &free), None);
    }

    #[test]
    fn a_busy_data_centre_delays_the_slot_and_forces_a_higher_level() {
        let mut busy = Profile::new(4);
        busy.allocate(t(0.0), t(500.0), 3);
        // Free for 2 CPUs only from 500 s: at 1.519 GHz it ends at 1,685 s, past 1,600; at f_max at 1,500 s.
        assert_eq!(levels(DvsPolicy::Ours, 1600.0, &busy), Some((4, 500.0)));
        assert_eq!(levels(DvsPolicy::Ours, 1700.0, &busy), Some((3, 500.0)));
        // No slot at all (the data centre says none): it fails.
        let none = place(DvsPolicy::Ours, &new_york(), 10.0, 1.0, t(1e6), |_| None);
        assert_eq!(none, None);
    }
}
