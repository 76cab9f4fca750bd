//! Envelopes and the deterministic order of the future-event list.

use serde::Serialize;

use super::{AgentId, SimTime};

/// The total order of events: time, then round, then sender, then the sender's sequence number.
///
/// *Round* numbers the zero-delay cascades within one instant: a message sent with no delay while handling an
/// event of round `r` is delivered in round `r + 1` of the same instant. All events of one `(time, round)` are
/// independent of each other, which is what lets the actix runtime hand them to several actors at once and still
/// produce exactly the order of the inline runtime. Every field depends only on the simulation, never on thread
/// timing, so the same seed gives the same order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct EventKey {
    /// Delivery time.
    pub at: SimTime,
    /// Zero-delay cascade depth within `at`.
    pub round: u32,
    /// Sender.
    pub from: AgentId,
    /// The sender's own message counter (injected messages count in a separate, upper range).
    pub seq: u64,
}

/// One message on its way: who sends it to whom, when it is delivered, and its key in the event order.
#[derive(Clone, Debug)]
pub struct Envelope<M> {
    /// Delivery time, round, sender and sequence number.
    pub key: EventKey,
    /// Receiver.
    pub to: AgentId,
    /// Payload.
    pub msg: M,
}

impl<M> Envelope<M> {
    /// Delivery time.
    pub fn at(&self) -> SimTime {
        self.key.at
    }

    /// Sender.
    pub fn from(&self) -> AgentId {
        self.key.from
    }

    /// Whether an agent sent this to itself (a timer, or a message to itself), which it may cancel.
    pub fn is_own(&self) -> bool {
        self.key.from == self.to
    }
}
