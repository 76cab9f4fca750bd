//! What a handler can do: read the clock, send, set timers, draw random numbers, stop the run.

use super::directory::Directory;
use super::rng::{self, SimRng};
use super::{AgentId, Envelope, EventKey, SimError, SimTime};
use crate::protocol::{Msg, TimerMsg};

/// Handle to a pending timer, for [`Ctx::cancel`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimerId(pub(crate) u64);

/// What an agent keeps between deliveries on behalf of the kernel: its message counter and random streams.
#[derive(Debug)]
pub(crate) struct AgentState {
    pub(crate) id: AgentId,
    seed: u64,
    seq: u64,
    rngs: Vec<(u64, SimRng)>,
}

impl AgentState {
    pub(crate) fn new(id: AgentId, seed: u64) -> AgentState {
        AgentState { id, seed, seq: 0, rngs: Vec::new() }
    }
}

/// What the handlers of one delivery batch produced, merged into the event queue by the clock.
#[derive(Debug, Default)]
pub struct Effects {
    pub(crate) sent: Vec<Envelope>,
    pub(crate) cancelled: Vec<(AgentId, u64)>,
    pub(crate) stop: Option<(AgentId, String)>,
    pub(crate) error: Option<(AgentId, SimError)>,
}

impl Effects {
    pub(crate) fn fail(&mut self, by: AgentId, e: SimError) {
        // Keep the first error only: later ones are usually consequences.
        self.error.get_or_insert((by, e));
    }
}

/// The context of one delivery: the agent's window on the simulation.
pub struct Ctx<'a> {
    now: SimTime,
    round: u32,
    dir: &'a Directory,
    state: &'a mut AgentState,
    fx: &'a mut Effects,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(
        now: SimTime,
        round: u32,
        dir: &'a Directory,
        state: &'a mut AgentState,
        fx: &'a mut Effects,
    ) -> Ctx<'a> {
        Ctx { now, round, dir, state, fx }
    }

    /// Current simulated time.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// This agent.
    pub fn me(&self) -> AgentId {
        self.state.id
    }

    /// This agent's name.
    pub fn name(&self) -> &str {
        self.dir.name(self.state.id).unwrap_or("?")
    }

    /// Who is in the simulation.
    pub fn directory(&self) -> &Directory {
        self.dir
    }

    /// The agent called `name`.
    pub fn lookup(&self, name: &str) -> Option<AgentId> {
        self.dir.lookup(name)
    }

    /// The agents of `kind`, in registration order.
    pub fn of_kind(&self, kind: &str) -> &[AgentId] {
        self.dir.of_kind(kind)
    }

    /// Sends `msg` to `to`, delivered after the link latency (zero by default: in the next round of this instant).
    pub fn send(&mut self, to: AgentId, msg: Msg) {
        self.push(0.0, to, msg);
    }

    /// Sends `msg` to `to`, delivered `delay` seconds from now plus the link latency. `delay` must be finite and
    /// non-negative; otherwise the run stops with [`SimError::BadDelay`].
    pub fn send_in(&mut self, delay: f64, to: AgentId, msg: Msg) {
        self.push(delay, to, msg);
    }

    /// Sets a timer: `timer` comes back to this agent `delay` seconds from now, unless cancelled.
    pub fn wake_in(&mut self, delay: f64, timer: TimerMsg) -> TimerId {
        let msg = Msg::Timer(timer);
        if self.fx.stop.is_some() {
            let e = SimError::Stopped { sender: self.name().to_string(), at: self.now, kind: msg.kind() };
            self.fx.fail(self.state.id, e);
        }
        let me = self.state.id;
        self.push(delay, me, msg);
        TimerId(self.state.seq - 1)
    }

    /// Cancels a pending timer; cancelling one that already fired (or was cancelled) does nothing.
    pub fn cancel(&mut self, timer: TimerId) {
        self.fx.cancelled.push((self.state.id, timer.0));
    }

    /// This agent's main random stream.
    pub fn rng(&mut self) -> &mut SimRng {
        self.rng_stream(0)
    }

    /// This agent's random stream number `stream`: one per purpose (arrivals, runtimes...) so that changing how
    /// many numbers one purpose draws leaves the others unchanged.
    pub fn rng_stream(&mut self, stream: u64) -> &mut SimRng {
        let pos = match self.state.rngs.iter().position(|(s, _)| *s == stream) {
            Some(p) => p,
            None => {
                let name = self.dir.name(self.state.id).unwrap_or("");
                self.state.rngs.push((stream, rng::stream(self.state.seed, name, stream)));
                self.state.rngs.len() - 1
            }
        };
        &mut self.state.rngs[pos].1
    }

    /// Asks the simulation to stop once the current instant's round is delivered.
    pub fn stop(&mut self, reason: impl Into<String>) {
        self.fx.stop.get_or_insert((self.state.id, reason.into()));
    }

    fn push(&mut self, delay: f64, to: AgentId, msg: Msg) {
        let me = self.state.id;
        if !(delay.is_finite() && delay >= 0.0) {
            let e = SimError::BadDelay { sender: self.name().to_string(), at: self.now, kind: msg.kind(), delay };
            return self.fx.fail(self.state.id, e);
        }
        if !self.dir.contains(to) {
            let e =
                SimError::UnknownAgent { sender: self.name().to_string(), at: self.now, kind: msg.kind(), to: to.0 };
            return self.fx.fail(self.state.id, e);
        }
        let total = delay + self.dir.latency_between(me, to);
        // Finite and >= 0 (checked above), so only overflow could leave the valid range: saturate.
        let at = SimTime::new((self.now.secs() + total).min(f64::MAX)).unwrap_or(SimTime::MAX);
        // A delay too small to move the clock (rounding) is a zero-delay message: next round, same instant.
        let round = if at == self.now { self.round + 1 } else { 0 };
        let seq = self.state.seq;
        self.state.seq += 1;
        self.fx.sent.push(Envelope { key: EventKey { at, round, from: me, seq }, to, msg });
    }
}
