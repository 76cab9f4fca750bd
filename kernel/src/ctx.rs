//! What a handler can do: read the clock, send, set timers, draw random numbers, stop the run.

use super::directory::Directory;
use super::rng::{self, SimRng};
use super::{AgentId, Envelope, EventKey, Message, SimError, SimTime};

/// Handle to a timer, for [`Ctx::cancel`]: the agent's own sequence number of the timer's envelope.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimerId(pub(crate) u64);

/// What an agent keeps between deliveries on behalf of the kernel: its message counter and random streams.
#[derive(Debug)]
pub(crate) struct AgentState {
    pub(crate) id: AgentId,
    seed: u64,
    seq: u64,
    /// Stream 0, the one most agents draw from on every delivery: kept in place, not behind the list's pointer.
    main: Option<SimRng>,
    /// The other streams, in the order first used.
    rngs: Vec<(u64, SimRng)>,
}

impl AgentState {
    pub(crate) fn new(id: AgentId, seed: u64) -> AgentState {
        AgentState { id, seed, seq: 0, main: None, rngs: Vec::new() }
    }
}

/// What the handlers of one delivery batch produced, merged into the event queue by the clock.
#[derive(Debug)]
pub struct Effects<M> {
    pub(crate) sent: Vec<Envelope<M>>,
    pub(crate) cancelled: Vec<(AgentId, u64)>,
    /// Timers of this batch cancelled before their turn came: taken off the event list with the batch, they are
    /// not delivered (see [`Ctx::cancel`]).
    pub(crate) skipped: Vec<(AgentId, u64)>,
    pub(crate) stop: Option<(AgentId, String)>,
    pub(crate) error: Option<(AgentId, SimError)>,
    /// Agents that asked for [`Agent::end_of_instant`](super::Agent::end_of_instant).
    pub(crate) end_of_instant: Vec<AgentId>,
}

impl<M> Default for Effects<M> {
    fn default() -> Self {
        Effects {
            sent: Vec::new(),
            cancelled: Vec::new(),
            skipped: Vec::new(),
            stop: None,
            error: None,
            end_of_instant: Vec::new(),
        }
    }
}

impl<M> Effects<M> {
    /// Whether the handlers did nothing but send (what nearly every delivery does): nothing else to merge.
    #[inline]
    pub(crate) fn only_sent(&self) -> bool {
        self.cancelled.is_empty()
            && self.skipped.is_empty()
            && self.end_of_instant.is_empty()
            && self.stop.is_none()
            && self.error.is_none()
    }

    pub(crate) fn fail(&mut self, by: AgentId, e: SimError) {
        // Keep the first error only: later ones are usually consequences.
        self.error.get_or_insert((by, e));
    }
}

/// The context of one delivery: the agent's window on the simulation.
pub struct Ctx<'a, M> {
    now: SimTime,
    round: u32,
    dir: &'a Directory,
    state: &'a mut AgentState,
    fx: &'a mut Effects<M>,
}

impl<'a, M: Message> Ctx<'a, M> {
    pub(crate) fn new(
        now: SimTime,
        round: u32,
        dir: &'a Directory,
        state: &'a mut AgentState,
        fx: &'a mut Effects<M>,
    ) -> Ctx<'a, M> {
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

    /// The agents offering `service`, in registration order ([`Directory::offering`]).
    pub fn offering(&self, service: &str) -> &[AgentId] {
        self.dir.offering(service)
    }

    /// Sends `msg` to `to`, delivered after the link latency (zero by default: in the next round of this instant).
    pub fn send(&mut self, to: AgentId, msg: impl Into<M>) {
        self.push(0.0, to, msg.into());
    }

    /// Sends `msg` to `to`, delivered `delay` seconds from now plus the link latency. `delay` must be finite and
    /// non-negative; otherwise the run stops with [`SimError::BadDelay`].
    pub fn send_in(&mut self, delay: f64, to: AgentId, msg: impl Into<M>) {
        self.push(delay, to, msg.into());
    }

    /// Sets a timer: `timer` comes back to this agent `delay` seconds from now, unless cancelled.
    ///
    /// The id always names this timer. If it cannot be set (a bad delay, or the agent stopped the run in this
    /// delivery), the run fails with that error and the id names a timer that never fires.
    pub fn wake_in(&mut self, delay: f64, timer: impl Into<M>) -> TimerId {
        let msg = timer.into();
        if self.fx.stop.is_some() {
            let e = SimError::Stopped { sender: self.name().to_string(), at: self.now, kind: msg.kind() };
            self.fx.fail(self.state.id, e);
        }
        let me = self.state.id;
        TimerId(self.push(delay, me, msg))
    }

    /// Cancels a pending timer; cancelling one that already fired (or was cancelled) does nothing.
    ///
    /// A timer due at this very `(time, round)`, whose turn has not come yet in this delivery, is pending too:
    /// it is not delivered (nor traced).
    pub fn cancel(&mut self, timer: TimerId) {
        self.fx.cancelled.push((self.state.id, timer.0));
    }

    /// Whether `env`, due now and not yet delivered, is a timer this agent cancelled in this delivery; if so it is
    /// noted as skipped. Only the agent's own share of a batch can hold such a timer, and its effects are merged
    /// after the share, so both runtimes skip the same envelopes.
    pub(crate) fn skip_cancelled(&mut self, env: &Envelope<M>) -> bool {
        let me = self.state.id;
        let hit = !self.fx.cancelled.is_empty()
            && env.key.from == me
            && env.to == me
            && self.fx.cancelled.contains(&(me, env.key.seq));
        if hit {
            self.fx.skipped.push((me, env.key.seq));
        }
        hit
    }

    /// This agent's main random stream (stream 0).
    #[inline]
    pub fn rng(&mut self) -> &mut SimRng {
        let (dir, state) = (self.dir, &mut *self.state);
        state.main.get_or_insert_with(|| rng::stream(state.seed, dir.name(state.id).unwrap_or(""), 0))
    }

    /// This agent's random stream number `stream`: one per purpose (arrivals, runtimes...) so that changing how
    /// many numbers one purpose draws leaves the others unchanged.
    pub fn rng_stream(&mut self, stream: u64) -> &mut SimRng {
        if stream == 0 {
            return self.rng();
        }
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

    /// Asks for a call of [`Agent::end_of_instant`](super::Agent::end_of_instant) once every message of the current
    /// instant is delivered (one call, however often it is asked for in the instant).
    pub fn at_end_of_instant(&mut self) {
        if self.fx.end_of_instant.last() != Some(&self.state.id) {
            self.fx.end_of_instant.push(self.state.id);
        }
    }

    /// Asks the simulation to stop once the current instant's round is delivered.
    pub fn stop(&mut self, reason: impl Into<String>) {
        self.fx.stop.get_or_insert((self.state.id, reason.into()));
    }

    /// Puts `msg` on its way and returns its sequence number (taken even when the message is refused, so that
    /// an id handed out never names another message).
    fn push(&mut self, delay: f64, to: AgentId, msg: M) -> u64 {
        let me = self.state.id;
        let seq = self.state.seq;
        self.state.seq += 1;
        if !(delay.is_finite() && delay >= 0.0) {
            let e = SimError::BadDelay { sender: self.name().to_string(), at: self.now, kind: msg.kind(), delay };
            self.fx.fail(self.state.id, e);
            return seq;
        }
        if !self.dir.contains(to) {
            let e =
                SimError::UnknownAgent { sender: self.name().to_string(), at: self.now, kind: msg.kind(), to: to.0 };
            self.fx.fail(self.state.id, e);
            return seq;
        }
        let total = delay + self.dir.latency_between(me, to);
        // Finite and >= 0 (checked above), so only overflow could leave the valid range: saturate.
        let at = SimTime::new((self.now.secs() + total).min(f64::MAX)).unwrap_or(SimTime::MAX);
        // A delay too small to move the clock (rounding) is a zero-delay message: next round, same instant.
        let round = if at == self.now { self.round.saturating_add(1) } else { 0 };
        self.fx.sent.push(Envelope { key: EventKey { at, round, from: me, seq }, to, msg });
        seq
    }
}
