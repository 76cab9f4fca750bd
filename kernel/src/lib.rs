//! gridmarket's simulated clock on actix: agents, envelopes, the event queue and the runtimes that drive them.
//!
//! An agent is plain Rust ([`Agent::handle`]) that reacts to one [`Envelope`] at a time and writes what it sends
//! into a [`Ctx`]. The [`Engine`] keeps the future-event list ordered by a deterministic [`EventKey`]; a
//! [`Simulation`] drives it either on actix (every agent an actor, the clock state they share) or inline on the
//! calling thread. Both deliver the same envelopes in the same order, so a run is a pure function of (agents, seed).
//!
//! The kernel knows no market: what agents exchange and report is a [`World`] of the user's choosing (gridmarket's
//! own is `agents::sim::GridMarket`). It depends on no domain crate, so the clock cannot grow domain rules.
//!
//! # A first simulation
//!
//! A world of two messages, an agent that answers each `Ping` with a `Pong` one second later, and one that pings
//! three times and counts the answers; the run is the same on both runtimes.
//!
//! ```
//! use gridmarket_kernel::{Agent, AgentId, Ctx, End, Envelope, Message, Runtime, SimBuilder, SimTime, World};
//! use serde::Serialize;
//!
//! // The messages, each naming its kind for the trace.
//! #[derive(Clone, Debug, Serialize)]
//! enum Msg {
//!     Ping,
//!     Pong,
//! }
//!
//! impl Message for Msg {
//!     fn kind(&self) -> &'static str {
//!         match self {
//!             Msg::Ping => "ping",
//!             Msg::Pong => "pong",
//!         }
//!     }
//! }
//!
//! // The world: its messages, and what agents report (here, how many pongs and when the last came).
//! struct Tutorial;
//!
//! impl World for Tutorial {
//!     type Msg = Msg;
//!     type Report = (u32, f64);
//! }
//!
//! struct Echo;
//!
//! impl Agent<Tutorial> for Echo {
//!     fn handle(&mut self, env: &Envelope<Msg>, ctx: &mut Ctx<'_, Msg>) {
//!         if let Msg::Ping = env.msg {
//!             ctx.send_in(1.0, env.from(), Msg::Pong);
//!         }
//!     }
//! }
//!
//! struct Pinger {
//!     echo: AgentId,
//!     pongs: u32,
//!     last: f64,
//! }
//!
//! impl Agent<Tutorial> for Pinger {
//!     fn start(&mut self, ctx: &mut Ctx<'_, Msg>) {
//!         for at in [0.0, 10.0, 20.0] {
//!             ctx.send_in(at, self.echo, Msg::Ping);
//!         }
//!     }
//!
//!     fn handle(&mut self, _env: &Envelope<Msg>, ctx: &mut Ctx<'_, Msg>) {
//!         self.pongs += 1;
//!         self.last = ctx.now().secs();
//!     }
//!
//!     fn report(&self, _now: SimTime, out: &mut (u32, f64)) {
//!         *out = (self.pongs, self.last);
//!     }
//! }
//!
//! for runtime in [Runtime::Inline, Runtime::Actix { threads: 2 }] {
//!     let mut builder = SimBuilder::<Tutorial>::new(42);
//!     let echo = builder.add("echo", "echo", Echo).unwrap();
//!     let pinger = builder.add("pinger", "pinger", Pinger { echo, pongs: 0, last: 0.0 }).unwrap();
//!     builder.runtime(runtime);
//!     let mut sim = builder.build().unwrap();
//!     sim.run(End::Quiescence).unwrap();
//!     assert_eq!(sim.report(pinger), Some((3, 21.0)));
//! }
//! ```
#![warn(missing_docs)]

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
pub use engine::{End, EndReason, Engine, MAX_ROUNDS, Outcome};
pub use envelope::{Envelope, EventKey};
pub use error::SimError;
pub use runtime::{BoxedAgent, Runtime, SimBuilder, Simulation};
pub use time::{Delay, SimTime, TimeError};

use serde::{Deserialize, Serialize};

/// A message agents exchange: any serialisable value that names its kind for the trace and for errors.
pub trait Message: Clone + std::fmt::Debug + Send + Unpin + Serialize + 'static {
    /// The kind as written in the trace (e.g. `"job.submit"`): a `"sub_protocol.variant"` name that trace filters
    /// match by prefix.
    fn kind(&self) -> &'static str;
}

/// What the agents of one simulation exchange and what they report: the one type parameter of a simulation.
pub trait World: 'static {
    /// The messages.
    type Msg: Message;
    /// What an agent reports between and after runs ([`Agent::report`], [`Simulation::report`]).
    type Report: Default + Send + 'static;

    /// The services an agent of `kind` offers, by which its peers find it ([`Ctx::offering`]) without naming its
    /// kind; none by default.
    fn services(_kind: &str) -> Vec<&'static str> {
        Vec::new()
    }
}

/// Identifies an agent within one simulation: its index in the [`Directory`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AgentId(pub u32);

impl AgentId {
    /// The outside world: the sender of messages injected into a running simulation by the test bed or the
    /// runner (never a registered agent).
    pub const ENV: AgentId = AgentId(u32::MAX);

    /// Index into per-agent tables.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The behaviour of one agent: plain Rust, unit-testable without a runtime.
///
/// The runtime wraps it into an actix actor. Everything the agent learns arrives as an [`Envelope`]; everything it
/// does leaves through the [`Ctx`] (messages, timers, random numbers, stop). It shares no state with other agents.
pub trait Agent<W: World>: Any + Send {
    /// Called once at time 0 before any message is delivered; schedule the first events here.
    fn start(&mut self, _ctx: &mut Ctx<'_, W::Msg>) {}

    /// Reacts to one delivered message.
    fn handle(&mut self, env: &Envelope<W::Msg>, ctx: &mut Ctx<'_, W::Msg>);

    /// Called once the current instant has no message left to deliver, when the agent asked for it in this instant
    /// ([`Ctx::at_end_of_instant`]): the place for work that must see every event of an instant, such as one
    /// scheduling pass after all the jobs that end at one time. Messages it sends without delay are delivered at the
    /// same instant, in later rounds (and may lead to another end of the instant).
    fn end_of_instant(&mut self, _ctx: &mut Ctx<'_, W::Msg>) {}

    /// Reports what the agent measured (jobs, metrics, series...) at `now`, the end of a run or between runs.
    fn report(&self, _now: SimTime, _out: &mut W::Report) {}
}
