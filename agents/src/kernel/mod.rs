//! The simulated clock on actix: agents, envelopes, the event queue and the runtimes that drive them.
//!
//! An agent is plain Rust ([`Agent::handle`]) that reacts to one [`Envelope`] at a time and writes what it sends
//! into a [`Ctx`]. The [`Engine`] keeps the future-event list ordered by a deterministic [`EventKey`]; a
//! [`Simulation`] drives it either on actix (every agent an actor, the clock state they share) or inline on the
//! calling thread. Both deliver the same envelopes in the same order, so a run is a pure function of (agents, seed).

mod ctx;
mod directory;
mod engine;
mod envelope;
mod error;
pub mod rng;
mod runtime;
mod time;
pub mod trace;

use std::any::Any;

pub use ctx::{Ctx, TimerId};
pub use directory::{Directory, Latency};
pub use engine::{End, EndReason, Engine, Outcome};
pub use envelope::{Envelope, EventKey};
pub use error::SimError;
pub use runtime::{Runtime, SimBuilder, Simulation};
pub use time::{Delay, SimTime, TimeError};

use serde::{Deserialize, Serialize};

/// Identifies an agent within one simulation: its index in the [`Directory`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AgentId(pub u32);

impl AgentId {
    /// The outside world: the sender of messages injected into a running simulation by the test bed or the
    /// runner (never a registered agent).
    pub const ENV: AgentId = AgentId(u32::MAX);

    /// Index into per-agent tables.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The behaviour of one agent: plain Rust, unit-testable without a runtime.
///
/// The runtime wraps it into an actix actor. Everything the agent learns arrives as an [`Envelope`]; everything it
/// does leaves through the [`Ctx`] (messages, timers, random numbers, stop). It shares no state with other agents.
pub trait Agent: Any + Send {
    /// Called once at time 0 before any message is delivered; schedule the first events here.
    fn start(&mut self, _ctx: &mut Ctx<'_>) {}

    /// Reacts to one delivered message.
    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>);

    /// Reports jobs, metrics and series at the end of a run that ended at `now`.
    fn report(&self, _now: SimTime, _out: &mut crate::report::Report) {}
}
