//! The kernel ([`gridmarket_kernel`]) specialised to gridmarket: a simulation whose agents exchange the market
//! protocol's [`Msg`] and report a [`Report`].
//!
//! Agents implement `Agent<GridMarket>`; everything else here is the kernel's types with that world filled in.

pub use gridmarket_kernel::{
    Agent, AgentId, Delay, Directory, End, EndReason, MAX_ROUNDS, Outcome, Runtime, SimError, SimTime, TimerId, World,
    rng, trace,
};

use crate::protocol::Msg;
use crate::report::Report;

/// gridmarket's world: the market protocol and the agents' reports.
#[derive(Debug)]
pub struct GridMarket;

impl World for GridMarket {
    type Msg = Msg;
    type Report = Report;
}

/// A message on its way between two agents.
pub type Envelope = gridmarket_kernel::Envelope<Msg>;
/// What a handler can do: read the clock, send, set timers, draw random numbers, stop the run.
pub type Ctx<'a> = gridmarket_kernel::Ctx<'a, Msg>;
/// Assembles a simulation of gridmarket agents.
pub type SimBuilder = gridmarket_kernel::SimBuilder<GridMarket>;
/// A built simulation of gridmarket agents.
pub type Simulation = gridmarket_kernel::Simulation<GridMarket>;
/// Any gridmarket agent, boxed.
pub type BoxedAgent = gridmarket_kernel::BoxedAgent<GridMarket>;
/// One line of a message trace, as read back ([`trace::read`]).
pub type TraceRecord = trace::TraceRecord<Msg>;
