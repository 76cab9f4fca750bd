//! Energy management at the provider (Amini Salehi 2012, ch6): node power states under the scheduler, the decisions
//! of PEMP, GESP or SESP on local arrivals and periodically, consolidation, and the energy of nodes and leases.
//!
//! The scheduler plans only on switched-on nodes: every node that is off (or shutting down) is held by a one-PE
//! reservation, and a booting node by one until it is ready. Switching a node off is holding it; switching one on
//! on demand cancels its hold, and conservative backfilling moves the queued leases onto it at the instant's pass.
//! All nodes start off, held to the end of time. The scheduler plans before that end only (see
//! [`LocalScheduler::plan_before`](super::scheduler::LocalScheduler::plan_before)): a request the switched-on nodes
//! cannot take waits without a reservation until nodes are switched on.
//!
//! When a node is switched off ([`SwitchOff`]; the thesis, §6.3.2: "when there is not any scheduled request on a
//! resource, the resource is switched off"). By default (`"idle"`) a node is switched off after the instant's pass
//! when nothing runs on it now and its next planned use is at least its shutdown and boot delays plus a break-even
//! time ahead; it is held until that use and booted so that it is ready for it, so the planned start is never
//! delayed. This is the reading the thesis's consolidation implies: consolidation switches off nodes whose
//! suspended leases are rescheduled, and so planned again, on the switched-on nodes (§6.3.2), so a node with a
//! later planned lease is not "required" until then. Under the thesis's power model (a node draws 117 W whenever it
//! is switched on, booting and shutting down included) switching off for a gap g saves (g − boot − shutdown) ×
//! 117 W, so the break-even time beyond the delays is 0 (the default). With `"unscheduled"` a node is switched off
//! only when nothing is planned on it for the rest of the schedule (a hold to the end of time): the literal reading
//! where a node with any later reservation counts as scheduled; under conservative backfilling, which plans every
//! waiting request ahead, such nodes stay on, idle, until their reservations come.
//!
//! SESP switches nodes on for a request only when V ≥ 1 (§6.4.1: "whenever the violation risk is high (V ≥ 1), the
//! policy switches on resources based on the number of resources required by the request"); below, it keeps the
//! energy-aware Haizea's base rule, which switches nodes on only when the switched-on ones are "not adequate to serve
//! local requests" (§6.3.2), so a local request preempts the external leases on them first.
//!
//! GESP switches nodes on for a local request's window only (they go off at its planned end, whatever external
//! request is planned after it), so external requests run only in the fragments the local leases leave; under SESP
//! and PEMP a node goes off only by the switch-off rule above.
//!
//! Triggers (Algorithm 5): a local request's arrival, and a periodic check (the thesis gives no period) that takes
//! the waiting external request at the head of the queue as its request. On a local arrival the decision splits the
//! nodes the request lacks (beyond the free switched-on ones) between switching on and preemption; if preemption
//! cannot cover its share (too few external VMs run that may be preempted: a migratable lease with a deadline and
//! no gateway to move it is counted out), the rest is switched on too. Consolidation first switches off the nodes
//! the rule of [`SwitchOff`] allows, then takes external leases off nodes and switches those off; the thesis
//! (§6.3.3): "Consolidate(Num) includes handling affected leases (i.e., preempting and rescheduling them)", on the
//! nodes "that have the fewest number of leases scheduled on them" (§6.3.2); the scheduler then "just considers
//! switched on resources". Under `"idle"` it suspends the running external leases with the fewest VMs whose own
//! windows let their nodes go off (with one VM per node, every busy node hosts one lease: the fewest leases are on
//! the nodes of the smallest leases); the leases are rescheduled like any preempted lease, and the planned ones
//! need not move, since a node is held off only until its next use. Under `"unscheduled"` a node with any later
//! reservation stays on, so consolidation holds its nodes off to the end of time and takes off them, besides the
//! running external leases (suspended), the planned ones (taken out and planned anew on the switched-on nodes,
//! later if they no longer fit: a preemption of a reservation, not a delay by backfilling). One decision never both
//! consolidates and switches on: with f > 1 the request is served by preemption alone, so consolidation happens only
//! when the external leases left after it cover what the request lacks (the thesis is silent; the alternative
//! suspends leases only to switch their nodes back on at once).
//!
//! A local request made ahead (an advance reservation, [`JobSpec::start`](crate::protocol::JobSpec::start); the
//! injection files distributed with the Haizea lease manager for the thesis's setting make them a day ahead) is
//! decided on when it is made, for its window: what the window lacks beyond the switched-on nodes free throughout
//! it, the external leases planned in it as what preemption can cover (running ones are not preempted ahead of
//! time), and, once its window is held, consolidation bounded by the local leases scheduled at its start (Algorithm
//! 5's Required(req.startTime)). The nodes it switches on stay off until the window and boot to be ready for it: a
//! node switched on a day early would idle, or under GESP run the external requests the policy leaves to the
//! fragments of local leases. If even every off node would not let it hold its window, the request is decided on
//! and placed at its start, as if made then. Whatever a request lacks at the worst instant of its window even with
//! every candidate preempted (later holds: a request made ahead, the nodes of one booting, GESP's closing holds) is
//! switched on whatever the policy's split.
//!
//! The violation rate is the share of external requests whose wait before their first start exceeds α × the mean
//! duration of the external requests (§6.4.1, α = 5); requests still waiting at the end count by their wait so far.

use std::collections::BTreeMap;

use super::pemp::{self, Decision, EnergyPolicy, RISK_UNIVERSE, UTILISATION_UNIVERSE};
use super::power::{Nodes, PowerConfig, PowerError};
use super::preempting::Victims;
use super::scheduler::{LocalScheduler, QueuedJob, ReservationId, ReservationRequest};
use super::{LocalJob, Provider};
use crate::model::{JobId, LeaseType, PreemptionKind};
use crate::protocol::TimerMsg;
use crate::registry::{Metric, Unit};
use crate::report::{Metered, Report, Series};
use crate::sim::{Ctx, SimTime, TimerId};

/// Joules in a kWh.
const JOULES_PER_KWH: f64 = 3.6e6;

/// How a provider manages its nodes' power.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EnergyConfig {
    /// The policy.
    pub policy: EnergyPolicy,
    /// Node power and transition delays.
    pub power: PowerConfig,
    /// Waiting factor α of the violation threshold and risk (Eq 6.2; 5 in the thesis).
    pub alpha: f64,
    /// Period of the periodic check \[s\].
    pub period: f64,
    /// When a node is switched off.
    pub switch_off: SwitchOff,
    /// Seconds beyond its shutdown and boot delays a node must be able to stay off to be switched off (rule
    /// [`SwitchOff::Idle`]).
    pub break_even: f64,
    /// End of the window over which `node_energy_window` is measured \[s from the start\]; `None`: the whole run.
    pub window: Option<f64>,
}

/// When an energy-managed provider switches a node off (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SwitchOff {
    /// Nothing runs on it now and its next planned use is far enough ahead; booted to be ready for that use.
    #[default]
    Idle,
    /// Nothing is planned on it for the rest of the schedule.
    Unscheduled,
}

impl Default for EnergyConfig {
    fn default() -> EnergyConfig {
        EnergyConfig {
            policy: EnergyPolicy::Pemp,
            power: PowerConfig::default(),
            alpha: 5.0,
            period: 600.0,
            switch_off: SwitchOff::Idle,
            break_even: 0.0,
            window: None,
        }
    }
}

/// The energy manager: the nodes' power states, their holds in the core's plan, and what it counted. Its hook into
/// the core is the plan alone (a node that is off is a one-PE hold there, see the module's doc; it reads the free
/// capacity and the queue, and asks for holds and their release) and the figures the provider hands it (the
/// running leases' load, the external arrivals and starts); consolidation, which moves leases, it sizes and the
/// provider carries out ([`Provider::consolidate`]). Unit-testable on a scheduler alone.
#[derive(Clone, Debug)]
pub(super) struct Energy {
    config: EnergyConfig,
    nodes: Nodes,
    /// The holds of the nodes that are off or shutting down, one PE each.
    holds: Vec<OffHold>,
    /// GESP: holds from the planned end of a local request of the nodes switched on for it, one PE each; the node
    /// goes off when its hold begins.
    closing: Vec<(SimTime, ReservationId)>,
    /// The periodic check's timer.
    timer: Option<TimerId>,
    /// External requests not started yet: arrival and planned duration [s].
    arrived: BTreeMap<JobId, (SimTime, f64)>,
    /// External requests started: wait before the first start and planned duration [s].
    waits: Vec<(f64, f64)>,
    /// Controller inputs outside their universe, clamped.
    clamped: u64,
    switched_on: u64,
    consolidated: u64,
    /// The nodes' energy at the end of the window \[J\], once a run passes it.
    window_joules: Option<f64>,
    /// Planned external leases consolidation took off their nodes and planned anew.
    replanned: u64,
    powered: Series,
    metered: Vec<Metered>,
}

/// The hold of a node that is off or shutting down.
#[derive(Clone, Copy, Debug)]
struct OffHold {
    id: ReservationId,
    /// When the node's shutdown ends.
    off: SimTime,
    /// When the node boots to be ready at the hold's end (its next planned use); `None` for a hold to the end of
    /// time.
    boot: Option<SimTime>,
}

/// Boots the nodes held until their next planned use whose boot is due by `now`, each at its own time (the hold
/// covers the boot, so the node is ready for that use), and drops their holds; returns how many. Every change to
/// the nodes comes after this, so the meter sees the boots in time order.
fn boot_due(nodes: &mut Nodes, holds: &mut Vec<OffHold>, now: SimTime) -> u64 {
    let mut booted = 0;
    while let Some((i, at)) = holds
        .iter()
        .enumerate()
        .filter_map(|(i, h)| h.boot.filter(|&b| b <= now).map(|b| (i, b)))
        .min_by_key(|&(i, b)| (b, i))
    {
        holds.remove(i);
        nodes.advance(at);
        booted += nodes.switch_on(at, 1).len() as u64;
    }
    booted
}

/// The energy the nodes drew from the start to `t` \[J\], with nothing changed since their last update but the boots
/// due by `t`.
fn joules_at(nodes: &Nodes, holds: &[OffHold], t: SimTime) -> f64 {
    let mut nodes = nodes.clone();
    boot_due(&mut nodes, &mut holds.to_vec(), t);
    nodes.advance(t);
    nodes.joules(t)
}

/// `off`, indices of `holds`, in the order their nodes are switched on: those held to the end of time first, then
/// those whose next planned use is latest (a node held until a use gives nothing from then on).
fn switch_on_order(holds: &[OffHold], mut off: Vec<usize>) -> Vec<usize> {
    off.sort_by_key(|&i| (std::cmp::Reverse(holds[i].boot.is_none()), std::cmp::Reverse(holds[i].boot), i));
    off
}

/// The end of every hold: far beyond any run.
fn forever() -> SimTime {
    SimTime::new(4.0 * crate::registry::limits::MAX_TIME).expect("a finite time")
}

impl Energy {
    /// `pes` nodes with power states managed by `config`, all off at t = 0: each held in `plan` to the end of time,
    /// which then plans before that end only; refused for bad delays or wattages.
    pub(super) fn new(config: EnergyConfig, pes: u32, plan: &mut LocalScheduler) -> Result<Energy, String> {
        config.power.validate().map_err(|(key, m)| format!("{key}: {m}"))?;
        let nodes = Nodes::new(pes, config.power).map_err(|e: PowerError| e.to_string())?;
        let mut holds = Vec::with_capacity(pes as usize);
        for _ in 0..pes {
            let request = ReservationRequest { start: SimTime::ZERO, end: forever(), pes: 1, partition: None };
            let id = plan.reserve(SimTime::ZERO, request).map_err(|e| e.to_string())?;
            holds.push(OffHold { id, off: SimTime::ZERO, boot: None });
        }
        plan.plan_before(forever());
        Ok(Energy {
            config,
            nodes,
            holds,
            closing: Vec::new(),
            timer: None,
            arrived: BTreeMap::new(),
            waits: Vec::new(),
            clamped: 0,
            switched_on: 0,
            consolidated: 0,
            window_joules: None,
            replanned: 0,
            powered: Series::default(),
            metered: Vec::new(),
        })
    }

    /// The policy that manages the nodes.
    pub(super) fn policy(&self) -> EnergyPolicy {
        self.config.policy
    }

    /// The end of the energy window, if one is set.
    fn window_end(&self) -> Option<SimTime> {
        self.config.window.and_then(|w| SimTime::new(w).ok())
    }

    /// Whether `t` is the end of the holds of switched-off nodes: a time past any run, which wakes nothing.
    pub(super) fn is_horizon(t: SimTime) -> bool {
        t >= forever()
    }

    /// An external request arrived: its wait starts.
    pub(super) fn note_arrival(&mut self, id: JobId, now: SimTime, duration: f64) {
        self.arrived.entry(id).or_insert((now, duration));
    }

    /// A lease started: an external one's first start ends its wait.
    pub(super) fn note_start(&mut self, id: JobId, now: SimTime) {
        if let Some((at, duration)) = self.arrived.remove(&id) {
            self.waits.push((now - at, duration));
        }
    }

    /// A lease completed: it is charged the node power × its VMs × every second it held nodes (see
    /// [`super::power`]).
    pub(super) fn charge(&mut self, job: &LocalJob, now: SimTime) {
        let this_run = job.start.map_or(0.0, |s| now - s);
        let joules = self.nodes.charge(job.spec.pes, job.held + this_run);
        self.metered.push(Metered { job: job.spec.id, energy: joules / JOULES_PER_KWH, carbon: 0.0 });
    }

    /// Switches on up to `count` nodes that are off for a use over `[at, end)`: at once if `at` is now (or too close
    /// to boot by then), else each stays held off until then and boots to be ready at `at` (GESP "switches on
    /// resources just when they are required by the local requests", §6.4.2; and a node switched on a day ahead
    /// would be idle for a day, or run external requests GESP leaves to the fragments of local leases); returns how
    /// many and when they are ready (`at` if none).
    pub(super) fn switch_on_for(
        &mut self,
        plan: &mut LocalScheduler,
        count: u32,
        at: SimTime,
        end: SimTime,
        now: SimTime,
    ) -> (u32, SimTime) {
        let boot = self.config.power.boot;
        if at - now <= boot {
            return self.switch_on(plan, count, now).map_or((0, at), |(n, ready)| (n, ready.max(at)));
        }
        let boot_at = at + -boot;
        let mut off = self.off_through(at, end);
        off.truncate(count as usize);
        off.sort_unstable();
        let mut n = 0;
        for i in off.into_iter().rev() {
            let old = self.holds[i];
            let _ = plan.cancel_reservation(now, old.id);
            let request = ReservationRequest { start: now, end: at, pes: 1, partition: None };
            // Its own PE, just freed: the shorter hold fits.
            let id = plan.reserve(now, request).expect("the PE its hold freed");
            self.holds[i] = OffHold { id, boot: Some(boot_at), ..old };
            n += 1;
        }
        (n, at)
    }

    /// The nodes [`Self::switch_on_for`] may switch on for a use over `[at, end)` (later than a boot from now): off,
    /// or shutting down in time to boot for it, and held off through the window; those held to the end of time
    /// first, then those whose next planned use is latest (as `switch_on`). By index in the holds.
    fn off_through(&self, at: SimTime, end: SimTime) -> Vec<usize> {
        let boot = self.config.power.boot;
        let boot_at = at + -boot;
        let holds = &self.holds;
        let off =
            (0..holds.len()).filter(|&i| holds[i].off <= boot_at && holds[i].boot.is_none_or(|b| b + boot >= end));
        switch_on_order(holds, off.collect())
    }

    /// How many nodes could be switched on for a local request made ahead over `[at, end)`.
    pub(super) fn switchable_through(&self, at: SimTime, end: SimTime, now: SimTime) -> u32 {
        if at - now <= self.config.power.boot {
            self.nodes.count(super::power::NodeState::Off)
        } else {
            self.off_through(at, end).len() as u32
        }
    }

    /// Arms the periodic check while the provider is `busy` (has leases; so that an idle provider lets the run end).
    pub(super) fn arm_check(&mut self, busy: bool, ctx: &mut Ctx<'_>) {
        // GESP decides on local arrivals only.
        if self.timer.is_none() && busy && self.config.policy != EnergyPolicy::Gesp {
            self.timer = Some(ctx.wake_in(self.config.period, TimerMsg::PowerCheck));
        }
    }

    /// The periodic check came: the next is armed anew.
    pub(super) fn checked(&mut self) {
        self.timer = None;
    }

    /// After the instant's pass: switches off the switched-on nodes the rule of [`SwitchOff`] allows.
    pub(super) fn after_pass(&mut self, plan: &mut LocalScheduler, now: SimTime) {
        self.advance(now);
        self.switch_off_idle(plan, u32::MAX, now);
        self.powered.set(now, f64::from(self.nodes.powered()));
    }

    /// Boots the nodes due to be ready for their next planned use, completes due boots and shutdowns (in time
    /// order), and switches off the nodes whose GESP closing hold has begun.
    pub(super) fn advance(&mut self, now: SimTime) {
        // Every change to the nodes comes after this call in its instant: before it, they are as at the end of the
        // window if the window ended since the last change.
        if let Some(end) = self.window_end().filter(|&end| end <= now && self.window_joules.is_none()) {
            self.window_joules = Some(joules_at(&self.nodes, &self.holds, end));
        }
        self.switched_on += boot_due(&mut self.nodes, &mut self.holds, now);
        self.nodes.advance(now);
        let (due, later): (Vec<_>, Vec<_>) = self.closing.iter().partition(|c| c.0 <= now);
        self.closing = later;
        let n = (due.len() as u32).min(self.nodes.on());
        if n > 0 {
            self.nodes.switch_off(now, n).expect("n nodes are on");
        }
        let off = now + self.config.power.shutdown;
        self.holds.extend(due.into_iter().map(|c| OffHold { id: c.1, off, boot: None }));
    }

    /// GESP switches nodes on for a local request's window only: the `count` nodes just switched on for it are held
    /// from `end` on, so that external requests take them only in the fragments before (§6.4.1: "the external
    /// requests can be scheduled in the remaining time slots of local leases").
    pub(super) fn close_after(&mut self, plan: &mut LocalScheduler, count: u32, end: SimTime, now: SimTime) {
        for _ in 0..count {
            let request = ReservationRequest { start: end, end: forever(), pes: 1, partition: None };
            // Just switched on for the window, so free from its start on.
            let Ok(hold) = plan.reserve(now, request) else { break };
            self.closing.push((end, hold));
        }
    }

    /// Switches off up to `max` switched-on nodes by the rule of [`SwitchOff`], by holding them; returns how many.
    pub(super) fn switch_off_idle(&mut self, plan: &mut LocalScheduler, max: u32, now: SimTime) -> u32 {
        let power = self.config.power;
        let mut off = 0;
        while off < max && self.nodes.on() > 0 {
            // Each node held takes one PE from the profile: the next one's planned use is no later.
            let (end, boot) = match self.config.switch_off {
                SwitchOff::Unscheduled => (forever(), None),
                SwitchOff::Idle => match plan.free_until(now, 1) {
                    None => (forever(), None),
                    Some(use_at) if use_at - now > self.idle_gap() => (use_at, Some(use_at + -power.boot)),
                    Some(_) => break,
                },
            };
            let request = ReservationRequest { start: now, end, pes: 1, partition: None };
            let Ok(id) = plan.reserve(now, request) else { break };
            let done = self.nodes.switch_off(now, 1).expect("a node is on");
            self.holds.push(OffHold { id, off: done, boot });
            off += 1;
        }
        off
    }

    /// Switches on up to `count` nodes that are off; returns how many and when they are ready (`None` if none was
    /// off).
    pub(super) fn switch_on(&mut self, plan: &mut LocalScheduler, count: u32, now: SimTime) -> Option<(u32, SimTime)> {
        // A node still shutting down is not switched on again: only off nodes.
        let holds = &self.holds;
        let off = switch_on_order(holds, (0..holds.len()).filter(|&i| holds[i].off <= now).collect());
        let n = count.min(off.len() as u32).min(self.nodes.count(super::power::NodeState::Off));
        if n == 0 {
            return None;
        }
        // Only off nodes, so all are ready at once.
        let ready = self.nodes.switch_on(now, n);
        let (n, ready) = (ready.len() as u32, ready.last().copied().unwrap_or(now));
        self.switched_on += u64::from(n);
        let mut chosen: Vec<usize> = off[..n as usize].to_vec();
        chosen.sort_unstable();
        for i in chosen.into_iter().rev() {
            let hold = self.holds.remove(i);
            // Cancelling a hold starts nothing: the scheduler's pass is deferred to the end of the instant.
            let _ = plan.cancel_reservation(now, hold.id);
        }
        if ready > now {
            let request = ReservationRequest { start: now, end: ready, pes: n, partition: None };
            // Just freed: the boot hold fits.
            let _ = plan.reserve(now, request);
        }
        Some((n, ready))
    }

    /// Nodes switched on.
    pub(super) fn nodes_on(&self) -> u32 {
        self.nodes.on()
    }

    /// When a node is switched off.
    pub(super) fn switch_off_rule(&self) -> SwitchOff {
        self.config.switch_off
    }

    /// The idle time beyond which switching a node off pays: its shutdown and boot delays and the break-even time.
    pub(super) fn idle_gap(&self) -> f64 {
        self.config.power.shutdown + self.config.power.boot + self.config.break_even
    }

    /// Consolidation took a lease off its nodes: suspended if it was `running`, else planned anew.
    pub(super) fn count_moved(&mut self, running: bool) {
        if running {
            self.consolidated += 1;
        } else {
            self.replanned += 1;
        }
    }

    /// The controller's output f for the state now, its inputs clamped to their universes: the violation risk of
    /// `plan`'s queue and the utilisation of the switched-on nodes by the `running` leases (VMs, seconds left).
    pub(super) fn controller(&mut self, plan: &LocalScheduler, running: &[(u32, f64)], now: SimTime) -> f64 {
        let (v, v_out) = pemp::clamp(self.risk(plan, now), RISK_UNIVERSE);
        let (c, c_out) = pemp::clamp(self.utilisation_on(running), UTILISATION_UNIVERSE);
        self.clamped += u64::from(v_out) + u64::from(c_out);
        pemp::fuzzy_reasoning(v, c)
    }

    /// The violation risk V (Eq 6.2) of the external requests waiting in `plan`.
    pub(super) fn risk(&self, plan: &LocalScheduler, now: SimTime) -> f64 {
        let waiting: Vec<(u32, f64, f64)> = plan
            .waiting()
            .map(|q| {
                let since = self.arrived.get(&q.id).map_or(q.submit, |a| a.0);
                (q.pes, q.estimate, now - since)
            })
            .collect();
        pemp::violation_risk(&waiting, self.config.alpha)
    }

    /// The utilisation of the switched-on nodes C: the remaining VM-seconds of the `running` leases over the nodes
    /// on × the horizon to the latest completion (Algorithm 5's L/(P·T); the scheduler does not track which node a
    /// VM is on, so the horizons T_j of Eq 6.5 are taken as the common one).
    fn utilisation_on(&self, running: &[(u32, f64)]) -> f64 {
        let load: f64 = running.iter().map(|&(n, r)| f64::from(n) * r).sum();
        let horizon = running.iter().map(|r| r.1).fold(0.0, f64::max);
        pemp::utilisation(load, std::iter::repeat_n(horizon, self.nodes.on() as usize))
    }

    /// The energy metrics, the powered-nodes series and each lease's energy.
    pub(super) fn report(&self, now: SimTime, out: &mut Report) {
        let mut nodes = self.nodes.clone();
        boot_due(&mut nodes, &mut self.holds.clone(), now);
        nodes.advance(now);
        let window = match self.window_end() {
            Some(end) if end < now => self.window_joules.unwrap_or_else(|| joules_at(&self.nodes, &self.holds, end)),
            _ => nodes.joules(now),
        };
        let unstarted = self.arrived.values().map(|&(at, d)| (now - at, d));
        let all: Vec<(f64, f64)> = self.waits.iter().copied().chain(unstarted).collect();
        let mean = all.iter().map(|w| w.1).sum::<f64>() / all.len().max(1) as f64;
        let violated = all.iter().filter(|w| w.0 > self.config.alpha * mean).count();
        out.metrics.extend([
            ("node_energy", nodes.joules(now) / JOULES_PER_KWH),
            ("node_idle_energy", nodes.idle_joules(now) / JOULES_PER_KWH),
            ("node_energy_window", window / JOULES_PER_KWH),
            ("violation_rate", if all.is_empty() { 0.0 } else { violated as f64 / all.len() as f64 }),
            ("nodes_switched_on", self.switched_on as f64),
            ("consolidated_leases", self.consolidated as f64),
            ("consolidation_replanned", self.replanned as f64),
            ("controller_clamped", self.clamped as f64),
        ]);
        out.series.push(("powered_nodes", self.powered.clone()));
        out.metered.extend(self.metered.iter().cloned());
    }
}

/// Where energy meets the leases: the provider hands the energy manager its plan and the figures it reads, and carries
/// out the consolidations it sizes.
impl Provider {
    /// A provider whose nodes have power states managed by `config` (all off at t = 0); refused for bad delays or
    /// wattages.
    pub fn with_energy(mut self, config: EnergyConfig) -> Result<Provider, String> {
        let energy = Energy::new(config, self.config.pes, &mut self.scheduler)?;
        self.energy = Some(Box::new(energy));
        Ok(self)
    }

    /// An external request arrived: its wait starts.
    pub(super) fn note_arrival(&mut self, id: JobId, now: SimTime, duration: f64) {
        if let Some(e) = self.energy.as_deref_mut() {
            e.note_arrival(id, now, duration);
        }
    }

    /// A lease started: an external one's first start ends its wait.
    pub(super) fn note_start(&mut self, id: JobId, now: SimTime) {
        if let Some(e) = self.energy.as_deref_mut() {
            e.note_start(id, now);
        }
    }

    /// A lease completed: its energy is metered.
    pub(super) fn charge_lease(&mut self, job: &LocalJob, now: SimTime) {
        if let Some(e) = self.energy.as_deref_mut() {
            e.charge(job, now);
        }
    }

    /// The policy's decision for a local request of `pes` VMs and `duration` seconds arriving now, to start at
    /// `start` (now, or later for a request made ahead, which may take only planned leases off its window); returns
    /// when its lease can start (`start`, or when the nodes switched on for it are ready, if later) and, for a
    /// request made ahead, how many nodes to consolidate once its window is held (an immediate request's
    /// consolidation comes first, as in Algorithm 5).
    pub(super) fn power_for_local(
        &mut self,
        pes: u32,
        start: SimTime,
        duration: f64,
        ctx: &mut Ctx<'_>,
    ) -> (SimTime, u32) {
        let now = ctx.now();
        let Some(e) = self.energy.as_deref_mut() else { return (start, 0) };
        let policy = e.policy();
        e.advance(now);
        let window = duration.is_finite() && duration > 0.0;
        let end = if window { start + duration } else { start };
        // Counted in the plan as it stands, where the request is placed (not after a pending pass, which would give
        // the free nodes to queued leases the request displaces). A request made ahead needs its window.
        let mut free = if start > now {
            self.scheduler.min_free_as_planned(start, end)
        } else {
            self.scheduler.free_now_as_planned(now)
        };
        if policy == EnergyPolicy::Gesp && window {
            // Nodes switched on for other local requests go off when those end: free only if they stay on.
            free = free.min(self.scheduler.min_free_as_planned(start, end));
        }
        let lacking = pes.saturating_sub(free);
        // Preemption covers what is not switched on only as far as there are external leases to preempt: those
        // running now, or, for a request made ahead, those planned in its window. A lease with a deadline
        // here is counted out: it is preempted only if it can still meet its deadline after the request
        // (`Contention::from_scheduler`), so counting it risks switching on too few nodes and refusing the
        // request, while counting it out at worst switches on a node too many.
        let preemptable = self.preemptable_vms(start, end, now);
        let (switch_on, consolidate) = match policy {
            // GESP switches on what local requests need.
            EnergyPolicy::Gesp => (lacking, 0),
            // SESP switches on what the request lacks only when V ≥ 1 (§6.4.1); otherwise the energy-aware Haizea's
            // base: switch on only when the switched-on nodes are "not adequate to serve local requests" (§6.3.2),
            // preempting external leases first (below: what preemption cannot cover is switched on).
            EnergyPolicy::Sesp if self.risk(now) >= 1.0 => (lacking, 0),
            EnergyPolicy::Sesp => (0, 0),
            // Consolidation is sized on the request (Algorithm 5's nodes(req)); the split between switching on and
            // preemption on the nodes it lacks.
            EnergyPolicy::Pemp => {
                let f = self.controller(now);
                match (pemp::decide(f, pes), pemp::decide(f, lacking)) {
                    // f > 1 serves the request by preemption alone: consolidating nodes that the same decision
                    // would then switch on again (preemption falling short) only suspends leases, so it
                    // consolidates only when the leases left after it cover what the request lacks.
                    (Decision::Consolidate(n), _) if lacking + n <= preemptable => (0, n),
                    (Decision::Consolidate(_), _) => (0, 0),
                    (_, Decision::Provide { switch_on, .. }) => (switch_on, 0),
                    (_, Decision::Consolidate(_)) => (0, 0),
                }
            }
        };
        // Nor can preemption supply what later holds in the window take (a local request made ahead, the nodes of one
        // booting, GESP's closing holds): what the request lacks at its worst instant even with every candidate
        // preempted is switched on too.
        let ahead = start > now;
        let uncovered = if window {
            let request = ReservationRequest { start, end, pes, partition: None };
            let victims = if ahead { Victims::Planned } else { Victims::RunningOrPlanned };
            self.contention(&request, victims, now).uncovered()
        } else {
            0
        };
        let switch_on = switch_on.max(lacking.saturating_sub(preemptable)).max(uncovered);
        if consolidate > 0 && !ahead {
            self.consolidate(consolidate, start, pes, ctx);
        }
        let Some(e) = self.energy.as_deref_mut() else { return (start, 0) };
        let (switched, start) = e.switch_on_for(&mut self.scheduler, switch_on, start, end, now);
        if policy == EnergyPolicy::Gesp && window {
            e.close_after(&mut self.scheduler, switched, start + duration, now);
        }
        (start, if ahead { consolidate } else { 0 })
    }

    /// How many nodes could be switched on for a local request made ahead over `[at, end)` (none without power
    /// states).
    pub(super) fn switchable_through(&self, at: SimTime, end: SimTime, now: SimTime) -> u32 {
        self.energy.as_ref().map_or(0, |e| e.switchable_through(at, end, now))
    }

    /// VMs of the external leases a local request over `[start, end)` could preempt: those running now (`start` is
    /// now), or planned in the window (a request made ahead, which preempts no running lease ahead of time). Leases
    /// with a deadline here are counted out (see [`Self::power_for_local`]).
    fn preemptable_vms(&self, start: SimTime, end: SimTime, now: SimTime) -> u32 {
        let preemptable = |id: &JobId| {
            self.jobs
                .get(id)
                .is_some_and(|j| j.spec.lease.and_then(LeaseType::preemption).is_some() && j.deadline_here().is_none())
        };
        if start <= now {
            return self
                .jobs
                .iter()
                .filter(|(id, j)| j.start.is_some() && preemptable(id))
                .map(|(_, j)| j.spec.pes)
                .sum();
        }
        let planned = self.scheduler.waiting().filter_map(|q| {
            let at = self.scheduler.planned_start_as_planned(q.id)?;
            (at < end && start < at + q.estimate).then_some((q.id, q.pes))
        });
        planned.filter(|(id, _)| preemptable(id)).map(|(_, vms)| vms).sum()
    }

    /// The periodic check: the policy's decision for the waiting external request at the head of the queue.
    pub(super) fn on_power_check(&mut self, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        let Some(e) = self.energy.as_deref_mut() else { return };
        let policy = e.policy();
        e.advance(now);
        e.checked();
        let head = self.scheduler.waiting().next().map_or(0, |q| q.pes);
        // What the head request lacks beyond the free switched-on nodes (preempting externals for an external would
        // gain nothing, so a decision to provide switches all of it on).
        let lacking = head.saturating_sub(self.scheduler.free_pes(now, None).unwrap_or(0));
        match policy {
            EnergyPolicy::Gesp => {}
            EnergyPolicy::Sesp => {
                if lacking > 0 && self.risk(now) >= 1.0 {
                    self.switch_on(lacking, now);
                }
            }
            // A decision to provide with a share to switch on switches on all the head lacks: a part of it starts
            // nothing (the request needs all its nodes at once), and nodes nothing is planned on are switched off
            // again at the end of the instant; preempting externals for an external gains nothing.
            EnergyPolicy::Pemp => match pemp::decide(self.controller(now), head) {
                Decision::Provide { switch_on, .. } if switch_on > 0 => self.switch_on(lacking, now),
                Decision::Provide { .. } => {}
                Decision::Consolidate(n) => self.consolidate(n, now, 0, ctx),
            },
        }
        self.after_event(ctx);
    }

    /// Whether `t` is the end of the holds of switched-off nodes (with power states).
    pub(super) fn is_power_horizon(&self, t: SimTime) -> bool {
        self.energy.is_some() && Energy::is_horizon(t)
    }

    /// Arms the periodic check while the provider has leases (so that an idle provider lets the run end).
    pub(super) fn arm_power_check(&mut self, ctx: &mut Ctx<'_>) {
        let busy = !self.jobs.is_empty();
        if let Some(e) = self.energy.as_deref_mut() {
            e.arm_check(busy, ctx);
        }
    }

    /// Nodes may have become idle (a lease ended, a hold ended): the rule of [`SwitchOff`] is applied after this
    /// instant's pass even if nothing else asks for one.
    pub(super) fn power_after_this_instant(&self, ctx: &mut Ctx<'_>) {
        if self.energy.is_some() {
            ctx.at_end_of_instant();
        }
    }

    /// After the instant's pass: switches off the switched-on nodes the rule of [`SwitchOff`] allows.
    pub(super) fn power_after_pass(&mut self, now: SimTime) {
        if let Some(e) = self.energy.as_deref_mut() {
            e.after_pass(&mut self.scheduler, now);
        }
    }

    /// Switches on up to `count` nodes that are off.
    fn switch_on(&mut self, count: u32, now: SimTime) {
        if let Some(e) = self.energy.as_deref_mut() {
            e.switch_on(&mut self.scheduler, count, now);
        }
    }

    /// Switches off up to `max` switched-on nodes by the rule of [`SwitchOff`]; returns how many.
    fn switch_off_idle(&mut self, max: u32, now: SimTime) -> u32 {
        self.energy.as_deref_mut().map_or(0, |e| e.switch_off_idle(&mut self.scheduler, max, now))
    }

    /// The violation risk V (Eq 6.2) of the waiting external requests.
    fn risk(&self, now: SimTime) -> f64 {
        self.energy.as_ref().map_or(0.0, |e| e.risk(&self.scheduler, now))
    }

    /// The PEMP controller's output f for the state now (see [`Energy::controller`]).
    fn controller(&mut self, now: SimTime) -> f64 {
        let remaining = |j: &LocalJob| j.start.map(|s| (j.spec.pes, (s + j.runtime - now).max(0.0)));
        let running: Vec<(u32, f64)> = self.jobs.values().filter_map(remaining).collect();
        self.energy.as_deref_mut().map_or(0.0, |e| e.controller(&self.scheduler, &running, now))
    }

    /// Algorithm 5's consolidation of `count` nodes, if the local leases scheduled at `at` (with a local request of
    /// `local` VMs to start then; Algorithm 5's Required(req.startTime)) leave room: switch off idle nodes, then
    /// take external leases off nodes and switch those off, by the rule of [`SwitchOff`] (see
    /// [`Self::suspend_for_idle`] and [`Self::clear_to_the_end`]).
    pub(super) fn consolidate(&mut self, count: u32, at: SimTime, local: u32, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        let Some(e) = self.energy.as_ref() else { return };
        let (on, rule) = (e.nodes_on(), e.switch_off_rule());
        let required = if at <= now {
            self.jobs.values().filter(|j| j.reservation.is_some() && j.start.is_some()).map(|j| j.spec.pes).sum()
        } else {
            let windows: BTreeMap<ReservationId, ReservationRequest> = self.scheduler.reservations().collect();
            self.jobs
                .values()
                .filter_map(|j| {
                    windows.get(&j.reservation?).filter(|w| w.start <= at && at < w.end).map(|_| j.spec.pes)
                })
                .sum::<u32>()
        };
        if required + local + count > on {
            return;
        }
        let off = self.switch_off_idle(count, now);
        if off < count {
            match rule {
                SwitchOff::Idle => self.suspend_for_idle(count - off, ctx),
                SwitchOff::Unscheduled => self.clear_to_the_end(count - off, ctx),
            }
        }
    }

    /// Consolidation under [`SwitchOff::Idle`]: suspends the running external leases with the fewest VMs and switches
    /// their nodes off, up to `count`; only leases with more than the nodes' shutdown, boot and break-even times left
    /// to run (a node is held off only until its next use, so a lease ending sooner frees nothing worth switching
    /// off, and it would pay its suspend overhead for nothing).
    fn suspend_for_idle(&mut self, count: u32, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        let Some(gap) = self.energy.as_ref().map(|e| e.idle_gap()) else { return };
        let ends: BTreeMap<JobId, SimTime> = self.scheduler.running().map(|r| (r.id, r.end)).collect();
        let mut victims: Vec<(u32, JobId)> = self
            .jobs
            .iter()
            .filter(|(_, j)| j.start.is_some() && j.spec.lease.and_then(LeaseType::preemption).is_some())
            .map(|(&id, j)| (j.spec.pes, id))
            .collect();
        victims.sort();
        let mut off = 0;
        for (_, id) in victims {
            if off >= count {
                break;
            }
            // Its own window frees its nodes until its end at least.
            let Some(&end) = ends.get(&id) else { continue };
            if end - now <= gap {
                continue;
            }
            let Ok((evicted, started)) = self.scheduler.suspend(now, id) else { continue };
            self.start(started, ctx);
            self.requeue_consolidated(evicted, ctx);
            off += self.switch_off_idle(count - off, now);
        }
    }

    /// Consolidation under [`SwitchOff::Unscheduled`], where a node goes off only with nothing planned on it to the
    /// end: frees up to `count` nodes from now to the end of time by taking off them the external leases that hold
    /// them, running ones (suspended, with their overhead) and planned ones (taken out and planned anew on the
    /// switched-on nodes, later if they no longer fit: a preempted reservation), and switches them off. The thesis's
    /// consolidation "preempting and rescheduling" the affected leases (§6.3.3), with a scheduler that "just
    /// considers switched on resources" (§6.3.2). Leases with the fewest VMs go first, planned before running ones
    /// (re-planning costs no overhead), later starts first, each only if it holds capacity where fewer than `count`
    /// nodes would be free, and none that the others chosen make unneeded; holds other than external leases (local
    /// leases, nodes booting) are never moved, so only as many nodes as they leave are switched off.
    fn clear_to_the_end(&mut self, count: u32, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        let end = forever();
        let jobs = &self.jobs;
        let external =
            |id: &JobId| jobs.get(id).is_some_and(|j| j.spec.lease.and_then(LeaseType::preemption).is_some());
        // (VMs, running, latest start first, id, planned end)
        let running = self
            .scheduler
            .running()
            .filter(|r| external(&r.id) && r.end > now)
            .map(|r| (r.pes, true, r.start, r.id, r.end));
        let planned: Vec<_> = self
            .scheduler
            .waiting()
            .filter(|q| external(&q.id))
            .filter_map(|q| {
                let start = self.scheduler.planned_start_as_planned(q.id)?;
                Some((q.pes, false, start, q.id, start + q.estimate))
            })
            .collect();
        let mut candidates: Vec<(u32, bool, SimTime, JobId, SimTime)> = running.chain(planned).collect();
        candidates.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then(b.2.cmp(&a.2)).then(a.3.cmp(&b.3)));
        let take_out = |s: &mut LocalScheduler, running: bool, id: JobId| {
            if running { s.suspend(now, id).is_ok() } else { s.remove(now, id).is_ok() }
        };
        // Greedily, the leases that hold capacity where fewer than `count` nodes would be free.
        let mut trial = self.scheduler.clone();
        let mut victims = Vec::new();
        let mut free = trial.min_free_as_planned(now, end);
        for &(_, running, start, id, until) in &candidates {
            if free >= count {
                break;
            }
            if trial.min_free_as_planned(start.max(now), until) < count && take_out(&mut trial, running, id) {
                victims.push((running, id));
                free = trial.min_free_as_planned(now, end);
            }
        }
        // Only as many nodes as the other holds (local leases, nodes booting) leave.
        let count = count.min(free);
        if count == 0 {
            return;
        }
        // No lease is taken out that the others do not need for that many (a lease chosen early may have been
        // needed only for more nodes than are left): the latest chosen are dropped first.
        for i in (0..victims.len()).rev() {
            let mut trial = self.scheduler.clone();
            let rest: Vec<_> = victims.iter().enumerate().filter(|&(j, _)| j != i).map(|(_, &v)| v).collect();
            for &(running, id) in &rest {
                take_out(&mut trial, running, id);
            }
            if trial.min_free_as_planned(now, end) >= count {
                victims = rest;
            }
        }
        let victims: Vec<JobId> = victims.into_iter().map(|(_, id)| id).collect();
        let request = ReservationRequest { start: now, end, pes: count, partition: None };
        let Ok(preempted) = self.scheduler.reserve_preempting(now, request, &victims) else { return };
        // One hold per node (switched on one by one): the freed capacity is held again node by node just below,
        // before any pass.
        self.scheduler.cancel_reservation(now, preempted.reservation).expect("the reservation was just placed");
        let off = self.switch_off_idle(count, now);
        debug_assert_eq!(off, count, "the capacity freed to the end of time holds every node");
        self.start(preempted.started, ctx);
        for evicted in preempted.evicted {
            self.requeue_consolidated(evicted, ctx);
        }
    }

    /// A lease consolidation took off its nodes: a running one is suspended with the overhead of its VMs and counted;
    /// a planned one is planned anew.
    fn requeue_consolidated(&mut self, evicted: QueuedJob, ctx: &mut Ctx<'_>) {
        let Some(job) = self.jobs.get(&evicted.id) else { return };
        let running = job.start.is_some();
        let overhead = if running {
            let memory = job.spec.memory_mb.unwrap_or(self.config.vm_memory_mb);
            self.config.overhead.overhead(PreemptionKind::Suspend, job.spec.pes, memory)
        } else {
            0.0
        };
        if let Some(e) = self.energy.as_deref_mut() {
            e.count_moved(running);
        }
        self.requeue_preempted(evicted, overhead, ctx);
    }

    /// The energy metrics, the powered-nodes series and each lease's energy.
    pub(super) fn report_energy(&self, now: SimTime, out: &mut Report) {
        if let Some(e) = &self.energy {
            e.report(now, out);
        }
    }
}

/// `energy = { … }` of a provider group: node power states and the policy that manages them.
#[derive(Clone, Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawEnergy {
    /// "pemp" (the fuzzy controller of Amini Salehi (2012) ch6; default), "gesp" or "sesp" (its baselines).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub policy: EnergyPolicy,
    /// Power of a switched-on node \[W\] (default 117, the thesis's).
    pub node_watts: Option<f64>,
    /// Seconds a node takes to boot (default 0; the thesis gives none).
    pub boot_delay: Option<f64>,
    /// Seconds a node takes to shut down, drawing meanwhile (default 0; the thesis gives none).
    pub shutdown_delay: Option<f64>,
    /// Waiting factor α: an external request violates when it waits more than α × the mean external duration
    /// (default 5, the thesis's).
    pub waiting_factor: Option<f64>,
    /// Period of the policy's periodic check \[s\] (default 600; the thesis gives none).
    pub period: Option<f64>,
    /// When a node is switched off: "idle" (default: nothing runs on it now and its next planned use is at least
    /// its shutdown and boot delays plus `break-even` ahead; it is booted to be ready for that use) or
    /// "unscheduled" (only when nothing is planned on it for the rest of the schedule).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub switch_off: SwitchOff,
    /// Seconds beyond its shutdown and boot delays a node must be able to stay off for "idle" to switch it off
    /// (default 0: with a node drawing the same while booting, on or shutting down, switching off pays as soon as
    /// the gap exceeds the delays).
    pub break_even: Option<f64>,
    /// Seconds from the start over which `node_energy_window` is measured (default: the whole run); the thesis
    /// reports the energy of its 30-day trace.
    pub window: Option<f64>,
}

impl RawEnergy {
    /// The checked configuration; an error is (key, what is wrong).
    pub fn check(&self) -> Result<EnergyConfig, (&'static str, String)> {
        let d = EnergyConfig::default();
        let power = PowerConfig {
            watts: self.node_watts.unwrap_or(d.power.watts),
            boot: self.boot_delay.unwrap_or(d.power.boot),
            shutdown: self.shutdown_delay.unwrap_or(d.power.shutdown),
        };
        power.validate()?;
        let alpha = self.waiting_factor.unwrap_or(d.alpha);
        if !(alpha.is_finite() && alpha > 0.0) {
            return Err(("waiting-factor", format!("expected a finite number > 0, found {alpha}")));
        }
        let period = self.period.unwrap_or(d.period);
        if !(1.0..=crate::registry::limits::MAX_TIME).contains(&period) {
            return Err(("period", format!("expected a number of seconds from 1 to 1e12, found {period}")));
        }
        let break_even = self.break_even.unwrap_or(d.break_even);
        if !(break_even.is_finite() && break_even >= 0.0) {
            return Err(("break-even", format!("expected a finite number of seconds >= 0, found {break_even}")));
        }
        if let Some(w) = self.window
            && !(w > 0.0 && w <= crate::registry::limits::MAX_TIME)
        {
            return Err(("window", format!("expected a number of seconds > 0 and at most 1e12, found {w}")));
        }
        Ok(EnergyConfig {
            policy: self.policy,
            power,
            alpha,
            period,
            switch_off: self.switch_off,
            break_even,
            window: self.window,
        })
    }
}

/// The energy capability's metrics (Amini Salehi 2012, ch6).
pub(super) const METRICS: &[Metric] = &[
    Metric::new("node_energy", Unit::Energy, "energy the switched-on nodes drew (Amini Salehi 2012, ch6)"),
    Metric::new("node_idle_energy", Unit::Energy, "of node_energy, what no lease held (idle, booting, shutting down)"),
    Metric::new(
        "node_energy_window",
        Unit::Energy,
        "of node_energy, what the nodes drew before the end of the energy window (the whole run without one)",
    ),
    Metric::new(
        "violation_rate",
        Unit::Share,
        "external requests that waited more than the waiting factor × the mean external duration",
    ),
    Metric::new("nodes_switched_on", Unit::Count, "nodes the energy policy switched on"),
    Metric::new("consolidated_leases", Unit::Count, "external leases suspended to switch their nodes off"),
    Metric::new(
        "consolidation_replanned",
        Unit::Count,
        "planned external leases consolidation took off the nodes it switched off, planned anew",
    ),
    Metric::new("controller_clamped", Unit::Count, "PEMP controller inputs outside their universe, clamped"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::power::THESIS_NODE_WATTS;
    use crate::provider::scheduler::SchedulerPolicy;

    fn t(s: f64) -> SimTime {
        SimTime::new(s).unwrap()
    }

    /// An energy manager of `pes` nodes on a conservative-backfilling plan of its own, without a provider.
    fn cluster(pes: u32, power: PowerConfig) -> (Energy, LocalScheduler) {
        let mut plan = LocalScheduler::new(SchedulerPolicy::Conservative, pes);
        let energy = Energy::new(EnergyConfig { power, ..EnergyConfig::default() }, pes, &mut plan).unwrap();
        (energy, plan)
    }

    fn metric(out: &Report, name: &str) -> f64 {
        out.metrics.iter().find(|m| m.0 == name).unwrap().1
    }

    #[test]
    fn every_node_starts_off_held_in_the_plan() {
        let (energy, plan) = cluster(4, PowerConfig::default());
        assert_eq!(energy.nodes_on(), 0);
        assert_eq!(plan.free_now_as_planned(t(0.0)), 0);
        assert_eq!(plan.reservations().count(), 4);
        let bad =
            EnergyConfig { power: PowerConfig { boot: -1.0, ..PowerConfig::default() }, ..EnergyConfig::default() };
        let mut plan = LocalScheduler::new(SchedulerPolicy::Conservative, 4);
        assert!(Energy::new(bad, 4, &mut plan).unwrap_err().contains("boot-delay"));
    }

    #[test]
    fn a_node_switched_on_is_held_while_it_boots() {
        let (mut energy, mut plan) = cluster(4, PowerConfig { boot: 60.0, ..PowerConfig::default() });
        assert_eq!(energy.switch_on(&mut plan, 3, t(0.0)), Some((3, t(60.0))));
        assert_eq!(plan.free_now_as_planned(t(0.0)), 0, "booting nodes host nothing");
        assert_eq!(plan.min_free_as_planned(t(60.0), t(100.0)), 3);
        assert_eq!(energy.switch_on(&mut plan, 5, t(0.0)), Some((1, t(60.0))), "only the one left off");
        assert_eq!(energy.switch_on(&mut plan, 1, t(0.0)), None);
    }

    #[test]
    fn an_idle_node_goes_off_until_its_next_use_when_the_gap_pays_for_the_delays() {
        let (mut energy, mut plan) = cluster(2, PowerConfig { boot: 10.0, shutdown: 10.0, ..PowerConfig::default() });
        energy.switch_on(&mut plan, 2, t(0.0));
        energy.advance(t(10.0));
        let lease = ReservationRequest { start: t(25.0), end: t(1000.0), pes: 2, partition: None };
        let id = plan.reserve(t(10.0), lease).unwrap();
        assert_eq!(energy.switch_off_idle(&mut plan, u32::MAX, t(10.0)), 0, "15 s idle < 20 s of delays");
        plan.cancel_reservation(t(10.0), id).unwrap();
        let lease = ReservationRequest { start: t(40.0), end: t(1000.0), pes: 2, partition: None };
        plan.reserve(t(10.0), lease).unwrap();
        assert_eq!(energy.switch_off_idle(&mut plan, u32::MAX, t(10.0)), 2);
        assert_eq!(energy.nodes_on(), 0);
        energy.advance(t(30.0));
        assert_eq!(energy.switched_on, 4, "both booted at 30 s to be ready for the lease at 40 s");
        assert!(energy.holds.is_empty());
    }

    #[test]
    fn gesp_closes_the_nodes_it_switched_on_at_the_end_of_the_window() {
        let (mut energy, mut plan) = cluster(2, PowerConfig::default());
        assert_eq!(energy.switch_on_for(&mut plan, 1, t(0.0), t(100.0), t(0.0)), (1, t(0.0)));
        energy.close_after(&mut plan, 1, t(100.0), t(0.0));
        assert_eq!(plan.min_free_as_planned(t(0.0), t(100.0)), 1);
        assert_eq!(plan.min_free_as_planned(t(100.0), t(200.0)), 0);
        energy.advance(t(100.0));
        assert_eq!(energy.nodes_on(), 0);
        assert_eq!(energy.holds.len(), 2);
    }

    #[test]
    fn a_node_switched_on_ahead_stays_off_until_it_boots_for_its_window() {
        let (mut energy, mut plan) = cluster(2, PowerConfig { boot: 60.0, ..PowerConfig::default() });
        assert_eq!(energy.switchable_through(t(1000.0), t(2000.0), t(0.0)), 2);
        assert_eq!(energy.switch_on_for(&mut plan, 1, t(1000.0), t(2000.0), t(0.0)), (1, t(1000.0)));
        assert_eq!(energy.switchable_through(t(1000.0), t(2000.0), t(0.0)), 1);
        assert_eq!(plan.min_free_as_planned(t(0.0), t(1000.0)), 0);
        assert_eq!(plan.min_free_as_planned(t(1000.0), t(2000.0)), 1);
        energy.advance(t(939.0));
        assert_eq!(energy.switched_on, 0);
        energy.advance(t(940.0));
        assert_eq!(energy.switched_on, 1);
    }

    #[test]
    fn the_report_meters_the_nodes_and_counts_the_waits_beyond_alpha_times_the_mean() {
        let (mut energy, mut plan) = cluster(2, PowerConfig::default());
        energy.switch_on(&mut plan, 2, t(0.0));
        energy.note_arrival(1, t(0.0), 100.0);
        energy.note_start(1, t(600.0));
        energy.note_arrival(2, t(0.0), 100.0);
        energy.note_start(2, t(100.0));
        let mut out = Report::default();
        energy.report(t(1000.0), &mut out);
        assert!((metric(&out, "node_energy") - 2.0 * THESIS_NODE_WATTS * 1000.0 / JOULES_PER_KWH).abs() < 1e-12);
        assert_eq!(metric(&out, "violation_rate"), 0.5, "600 s > 5 × 100 s; 100 s is not");
        assert_eq!(metric(&out, "nodes_switched_on"), 2.0);
    }
}
