//! Node power states of a provider (Amini Salehi 2012, ch6): each node is off, booting, on or shutting down, and
//! draws its power (117 W in the thesis, from SPECpower) whenever it is not off.
//!
//! The thesis computes energy as the nodes' switched-on time × 117 W with no idle/busy distinction; a booting or
//! shutting-down node is switched on, so it draws too. The data centre's [`EnergyMeter`] integrates the draw: a
//! powered node is one of its running CPUs and an off node an idle one drawing nothing.
//!
//! Per-lease energy. A lease is charged its VMs × the node power for every second it holds nodes: its runs, and the
//! preemption overhead its VMs spend suspending and resuming (the overhead's energy is the preempted lease's,
//! whichever lease caused the preemption). It is charged nothing while suspended or queued; a cancelled lease keeps
//! what its lost runs drew. What powered nodes draw while no lease holds them (idle, booting, shutting down) is
//! the provider's idle energy, so the leases' energy plus the idle energy is the meter's total.

use serde::{Deserialize, Serialize};

use crate::datacenter::EnergyMeter;
use crate::sim::SimTime;

/// The thesis's power of a switched-on node \[W\].
pub const THESIS_NODE_WATTS: f64 = 117.0;

/// How a provider's nodes draw power and change state.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PowerConfig {
    /// Power of a switched-on node \[W\].
    pub watts: f64,
    /// Seconds from switching a node on until it can host VMs.
    pub boot: f64,
    /// Seconds from switching a node off until it draws nothing.
    pub shutdown: f64,
}

impl Default for PowerConfig {
    fn default() -> PowerConfig {
        PowerConfig { watts: THESIS_NODE_WATTS, boot: 0.0, shutdown: 0.0 }
    }
}

impl PowerConfig {
    /// Refuses negative or non-finite wattages and delays, with the offending key.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        for (key, v) in [("node-watts", self.watts), ("boot-delay", self.boot), ("shutdown-delay", self.shutdown)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err((key, format!("expected a finite number >= 0, found {v}")));
            }
        }
        Ok(())
    }
}

/// A node's power state.
///
/// The transitions: off → booting → on → shutting down → off, and two for a change of mind. Switching off a booting
/// node aborts its boot: it shuts down from then, for the shutdown delay. Switching on a node that is shutting down
/// waits for the shutdown to end and then boots it: a shutdown once begun runs to its end, as a machine's halt does;
/// the node draws throughout. A node changes state only by these, and each draws whenever it is not off.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NodeState {
    /// Draws nothing, hosts nothing.
    Off,
    /// Switched on, ready at the given time.
    Booting(SimTime),
    /// Hosts VMs.
    On,
    /// Switched off, drawing until the given time.
    ShuttingDown(SimTime),
}

/// Why a power change was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PowerError {
    /// A provider needs at least one node.
    #[error("a provider with power states needs at least one node")]
    NoNodes,
    /// More nodes were to be switched off than are on or booting.
    #[error("{asked} nodes would be switched off, with {on} on or booting")]
    NotOn {
        /// Nodes asked for.
        asked: u32,
        /// Nodes on or booting.
        on: u32,
    },
}

/// The nodes of a provider with their power states, and the energy they drew. Node `i` is the `i`-th of
/// [`Nodes::states`]; the counted operations pick nodes by a fixed rule, so the same calls give the same nodes.
#[derive(Clone, Debug)]
pub struct Nodes {
    config: PowerConfig,
    states: Vec<NodeState>,
    meter: EnergyMeter,
    /// Joules the leases were charged, for the idle energy.
    charged: f64,
}

impl Nodes {
    /// `count` nodes, all off at t = 0 (the thesis: "initially all nodes are off").
    pub fn new(count: u32, config: PowerConfig) -> Result<Nodes, PowerError> {
        if count == 0 {
            return Err(PowerError::NoNodes);
        }
        let states = vec![NodeState::Off; count as usize];
        Ok(Nodes { config, states, meter: EnergyMeter::new(count, 0.0), charged: 0.0 })
    }

    /// The configuration.
    pub fn config(&self) -> PowerConfig {
        self.config
    }

    /// Every node's state, node `i` at index `i`.
    pub fn states(&self) -> &[NodeState] {
        &self.states
    }

    /// Completes the boots and shutdowns due by `now`, in time order; returns how many nodes came on.
    pub fn advance(&mut self, now: SimTime) -> u32 {
        let mut due: Vec<(SimTime, usize)> = self
            .states
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match *s {
                NodeState::Booting(t) | NodeState::ShuttingDown(t) if t <= now => Some((t, i)),
                _ => None,
            })
            .collect();
        due.sort_by_key(|&(t, i)| (t, i));
        let mut up = 0;
        for (t, i) in due {
            if let NodeState::ShuttingDown(_) = self.states[i] {
                // The meter integrates the node's draw up to its own end of shutdown.
                self.meter.stop(t, 1, self.config.watts).expect("a shutting-down node is metered as running");
                self.states[i] = NodeState::Off;
            } else {
                self.states[i] = NodeState::On;
                up += 1;
            }
        }
        up
    }

    /// Switches on up to `count` nodes at `now`: off nodes first, then those shutting down, soonest done first,
    /// which boot once down. Returns when each node switched on is ready, in that order.
    pub fn switch_on(&mut self, now: SimTime, count: u32) -> Vec<SimTime> {
        self.advance(now);
        let boot = self.config.boot;
        let mut chosen: Vec<(SimTime, usize)> = self
            .states
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match *s {
                NodeState::Off => Some((now, i)),
                NodeState::ShuttingDown(done) => Some((done, i)),
                _ => None,
            })
            .collect();
        chosen.sort_by_key(|&(from, i)| (from, i));
        chosen.truncate(count as usize);
        let off = chosen.iter().filter(|&&(_, i)| self.states[i] == NodeState::Off).count() as u32;
        if off > 0 {
            self.meter.run(now, off, self.config.watts).expect("only off nodes start drawing");
        }
        let ready: Vec<SimTime> = chosen
            .iter()
            .map(|&(from, i)| {
                self.states[i] = NodeState::Booting(from + boot);
                from + boot
            })
            .collect();
        self.advance(now);
        ready
    }

    /// Switches off `count` nodes at `now` (the caller has emptied them): nodes on first, then booting ones, the
    /// latest to be ready first, whose boot is aborted. They stop drawing after the shutdown delay; returns when.
    pub fn switch_off(&mut self, now: SimTime, count: u32) -> Result<SimTime, PowerError> {
        self.advance(now);
        let mut chosen: Vec<(u8, std::cmp::Reverse<SimTime>, usize)> = self
            .states
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match *s {
                NodeState::On => Some((0, std::cmp::Reverse(now), i)),
                NodeState::Booting(ready) => Some((1, std::cmp::Reverse(ready), i)),
                _ => None,
            })
            .collect();
        if count as usize > chosen.len() {
            return Err(PowerError::NotOn { asked: count, on: chosen.len() as u32 });
        }
        chosen.sort_unstable();
        let done = now + self.config.shutdown;
        for &(_, _, i) in &chosen[..count as usize] {
            self.states[i] = NodeState::ShuttingDown(done);
        }
        self.advance(now);
        Ok(done)
    }

    /// Nodes in `state`'s kind (the time of a transition is ignored).
    pub fn count(&self, state: NodeState) -> u32 {
        let same = |s: &NodeState| std::mem::discriminant(s) == std::mem::discriminant(&state);
        self.states.iter().filter(|s| same(s)).count() as u32
    }

    /// Nodes that host VMs or can.
    pub fn on(&self) -> u32 {
        self.count(NodeState::On)
    }

    /// Nodes switched on, whatever their state (they draw).
    pub fn powered(&self) -> u32 {
        self.meter.running()
    }

    /// The earliest pending transition.
    pub fn next_transition(&self) -> Option<SimTime> {
        self.states
            .iter()
            .filter_map(|s| match *s {
                NodeState::Booting(t) | NodeState::ShuttingDown(t) => Some(t),
                _ => None,
            })
            .min()
    }

    /// Charges a lease that held `vms` VMs for `seconds`; returns its energy \[J\].
    pub fn charge(&mut self, vms: u32, seconds: f64) -> f64 {
        let joules = f64::from(vms) * self.config.watts * seconds.max(0.0);
        self.charged += joules;
        joules
    }

    /// Energy the nodes drew from t = 0 to `now` \[J\].
    pub fn joules(&self, now: SimTime) -> f64 {
        self.meter.running_joules(now)
    }

    /// Of [`Nodes::joules`], what no lease was charged: idle, booting and shutting-down nodes \[J\].
    pub fn idle_joules(&self, now: SimTime) -> f64 {
        (self.joules(now) - self.charged).max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(secs: f64) -> SimTime {
        SimTime::new(secs).unwrap()
    }

    #[test]
    fn a_node_draws_over_a_boot_run_idle_shutdown_cycle() {
        let config = PowerConfig { watts: 100.0, boot: 60.0, shutdown: 30.0 };
        let mut nodes = Nodes::new(2, config).unwrap();
        // Switched on at 100: draws from 100; ready at 160.
        assert_eq!(nodes.switch_on(t(100.0), 1), [t(160.0)]);
        assert_eq!((nodes.on(), nodes.powered()), (0, 1));
        assert_eq!(nodes.next_transition(), Some(t(160.0)));
        assert_eq!(nodes.advance(t(160.0)), 1);
        // A one-VM lease runs 160..1160, then the node idles until 2000 and shuts down until 2030.
        assert_eq!(nodes.charge(1, 1000.0), 100_000.0);
        nodes.switch_off(t(2000.0), 1).unwrap();
        assert_eq!(nodes.powered(), 1, "still shutting down");
        nodes.advance(t(2030.0));
        assert_eq!((nodes.on(), nodes.powered(), nodes.count(NodeState::Off)), (0, 0, 2));
        // Drawn from 100 to 2030: 1930 s × 100 W; the lease's 1000 s, the rest idle (boot 60 + idle 840 + 30).
        assert_eq!(nodes.joules(t(5000.0)), 193_000.0);
        assert_eq!(nodes.idle_joules(t(5000.0)), 93_000.0);
    }

    #[test]
    fn a_suspended_lease_is_charged_its_runs_and_its_overhead_only() {
        let mut nodes = Nodes::new(4, PowerConfig::default()).unwrap();
        nodes.switch_on(t(0.0), 4);
        // Two VMs run 0..600, suspend for 150 s (still on their nodes), sit suspended 0 W, then resume: 120 s of
        // resume overhead and 400 s of the rest of their work.
        let first = nodes.charge(2, 600.0 + 150.0);
        let second = nodes.charge(2, 120.0 + 400.0);
        assert_eq!(first + second, 2.0 * 117.0 * (600.0 + 150.0 + 120.0 + 400.0));
        assert!(nodes.idle_joules(t(3000.0)) >= 0.0);
        assert_eq!(nodes.joules(t(3000.0)), 4.0 * 117.0 * 3000.0);
    }

    #[test]
    fn bad_input_is_refused() {
        assert_eq!(Nodes::new(0, PowerConfig::default()).unwrap_err(), PowerError::NoNodes);
        let bad = PowerConfig { boot: -1.0, ..PowerConfig::default() };
        assert_eq!(bad.validate().unwrap_err().0, "boot-delay");
        let bad = PowerConfig { watts: f64::NAN, ..PowerConfig::default() };
        assert_eq!(bad.validate().unwrap_err().0, "node-watts");
        let mut nodes = Nodes::new(2, PowerConfig::default()).unwrap();
        nodes.switch_on(t(0.0), 1);
        assert_eq!(
            nodes.switch_off(t(1.0), 2).unwrap_err().to_string(),
            "2 nodes would be switched off, with 1 on or booting"
        );
        // Switching on more than are off switches on what there is.
        assert_eq!(nodes.switch_on(t(2.0), 5).len(), 1);
    }

    const SLOW: PowerConfig = PowerConfig { watts: 100.0, boot: 60.0, shutdown: 30.0 };

    #[test]
    fn switching_off_a_booting_node_aborts_its_boot() {
        let mut nodes = Nodes::new(1, SLOW).unwrap();
        nodes.switch_on(t(0.0), 1);
        // At 20 s, 40 s before it is ready, it is switched off: it shuts down until 50 s and never comes on.
        assert_eq!(nodes.switch_off(t(20.0), 1), Ok(t(50.0)));
        assert_eq!(nodes.states(), [NodeState::ShuttingDown(t(50.0))]);
        assert_eq!(nodes.advance(t(100.0)), 0);
        assert_eq!(nodes.states(), [NodeState::Off]);
        // It drew from 0 to 50 s: 50 s × 100 W.
        assert_eq!(nodes.joules(t(1000.0)), 5_000.0);
    }

    #[test]
    fn switching_on_a_node_that_is_shutting_down_boots_it_once_down() {
        let mut nodes = Nodes::new(1, SLOW).unwrap();
        nodes.switch_on(t(0.0), 1);
        nodes.advance(t(60.0));
        assert_eq!(nodes.switch_off(t(100.0), 1), Ok(t(130.0)));
        // Switched on again at 110 s: down at 130 s, then a 60-s boot, ready at 190 s.
        assert_eq!(nodes.switch_on(t(110.0), 1), [t(190.0)]);
        assert_eq!(nodes.advance(t(130.0)), 0);
        assert_eq!(nodes.states(), [NodeState::Booting(t(190.0))]);
        assert_eq!(nodes.advance(t(190.0)), 1);
        nodes.switch_off(t(300.0), 1).unwrap();
        nodes.advance(t(330.0));
        // It drew without a break from 0 to 330 s.
        assert_eq!(nodes.joules(t(1000.0)), 33_000.0);
        assert_eq!(nodes.powered(), 0);
    }

    #[test]
    fn counted_switches_pick_the_nodes_soonest_ready_or_least_spent() {
        let mut nodes = Nodes::new(3, SLOW).unwrap();
        // Node 0 comes on at 60 s; the others are off.
        nodes.switch_on(t(0.0), 1);
        nodes.advance(t(60.0));
        let mut booting = nodes.clone();
        // Switching on three at 110 s while node 0 shuts down until 130 s: the off nodes at once, node 0 once down.
        nodes.switch_off(t(100.0), 1).unwrap();
        assert_eq!(nodes.switch_on(t(110.0), 3), [t(170.0), t(170.0), t(190.0)]);
        // Nodes 1 and 2 boot from 60 s and 70 s. Switching off two: the node on, then the boot due last (node 2's).
        booting.switch_on(t(60.0), 1);
        booting.switch_on(t(70.0), 1);
        booting.switch_off(t(80.0), 2).unwrap();
        assert_eq!(
            booting.states(),
            [NodeState::ShuttingDown(t(110.0)), NodeState::Booting(t(120.0)), NodeState::ShuttingDown(t(110.0))]
        );
    }
}
