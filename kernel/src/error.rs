//! Errors of the kernel.

use super::{AgentId, SimTime};

/// What can go wrong while building or running a simulation. None of these is a panic: the run stops at the first
/// error and returns it, with what the agents sent up to then still in the trace.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// Occurs when an agent sends to an id that is not registered. The run stops.
    #[error("at t={at}: {sender} sent `{kind}` to unknown agent #{to}")]
    UnknownAgent {
        /// Sender's name.
        sender: String,
        /// When it sent.
        at: SimTime,
        /// Message kind.
        kind: &'static str,
        /// The missing id.
        to: u32,
    },
    /// Occurs when a delay is NaN, infinite or negative. The run stops.
    #[error(
        "at t={at}: {sender} sent `{kind}` with an invalid delay: expected a finite, non-negative number of seconds, found {delay}"
    )]
    BadDelay {
        /// Sender's name.
        sender: String,
        /// When it sent.
        at: SimTime,
        /// Message kind.
        kind: &'static str,
        /// The refused delay.
        delay: f64,
    },
    /// Occurs when a timer is set or a message injected after the simulation stopped (an agent asked it to stop,
    /// or an earlier error ended it). The simulation cannot continue.
    #[error("at t={at}: {sender} set `{kind}` on a stopped simulation")]
    Stopped {
        /// Who tried.
        sender: String,
        /// When.
        at: SimTime,
        /// Message kind.
        kind: &'static str,
    },
    /// Occurs when an injected message is dated before the current time.
    #[error("at t={now}: `{kind}` from {sender} is dated t={at}, in the past")]
    InThePast {
        /// Who injected it.
        sender: String,
        /// Current time.
        now: SimTime,
        /// The refused delivery time.
        at: SimTime,
        /// Message kind.
        kind: &'static str,
    },
    /// Occurs when two agents are registered under one name.
    #[error("two agents are named `{name}`")]
    DuplicateName {
        /// The name.
        name: String,
    },
    /// Occurs when a name given to the simulation (latency table, test bed) is not an agent.
    #[error("no agent is named `{name}`")]
    NoSuchName {
        /// The name.
        name: String,
    },
    /// Occurs when a latency is NaN, infinite or negative.
    #[error("latency {from} → {to}: expected a finite, non-negative number of seconds, found {value}")]
    BadLatency {
        /// Sending agent or kind.
        from: String,
        /// Receiving agent or kind.
        to: String,
        /// The refused value.
        value: f64,
    },
    /// Occurs when zero-delay messages keep answering each other at one instant: past `rounds` rounds the run
    /// stops, naming the agents of the last round. The run cannot continue.
    #[error("at t={at}: more than {rounds} rounds of zero-delay messages at one instant (a loop?) among {}", .agents.join(", "))]
    ZeroDelayLoop {
        /// The instant.
        at: SimTime,
        /// The cap.
        rounds: u32,
        /// Senders and receivers of the round past the cap, by name.
        agents: Vec<String>,
    },
    /// Occurs when the run was interrupted from outside (Ctrl-C). The run cannot continue.
    #[error("interrupted at t={at}")]
    Interrupted {
        /// The clock when interrupted.
        at: SimTime,
    },
    /// Occurs when writing the message trace fails (disk full, closed pipe). The run stops.
    #[error("writing the message trace: {0}")]
    Trace(String),
    /// Occurs when an agent's handler panicked or the actor runtime failed. The run cannot continue.
    #[error("runtime failure: {0}")]
    Runtime(String),
}

impl SimError {
    /// The id used in messages for the environment (injections).
    pub(crate) fn name_of(dir: &super::Directory, id: AgentId) -> String {
        dir.name(id).unwrap_or("env").to_string()
    }
}
