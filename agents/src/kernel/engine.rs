//! The future-event list and the rules of delivery, shared by every runtime.

use std::cmp::Ordering as CmpOrdering;
use std::collections::{BinaryHeap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::ctx::Effects;
use super::trace::TraceSink;
use super::{AgentId, Directory, Envelope, EventKey, SimError, SimTime};
use crate::protocol::Msg;

/// When a run ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum End {
    /// Deliver every event dated at or before this time, then set the clock to it.
    Until(SimTime),
    /// Deliver until no event is pending (or an agent stops the run).
    Quiescence,
}

/// Why a run ended.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// The horizon was reached with events still pending.
    Horizon,
    /// No event was pending.
    Quiescent,
    /// An agent asked to stop.
    Stopped {
        /// The agent's name.
        by: String,
        /// Its reason.
        reason: String,
    },
}

/// The state of the clock after a run.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Outcome {
    /// The clock.
    pub now: SimTime,
    /// Why the run ended.
    pub reason: EndReason,
    /// Envelopes delivered since the simulation was built.
    pub delivered: u64,
    /// Envelopes still pending (cancelled timers not yet reached included).
    pub pending: usize,
}

/// The future-event list and everything delivery depends on: the clock, cancelled timers, the trace.
///
/// A runtime asks for the next batch (every envelope of the earliest `(time, round)`), delivers it, hands back
/// what the handlers produced, and asks for the next. Because a batch never contains two causally related
/// envelopes, the runtime may deliver it in any order or in parallel.
pub struct Engine {
    dir: Arc<Directory>,
    fel: Fel,
    now: SimTime,
    round: u32,
    cancelled: HashSet<(AgentId, u64)>,
    delivered: u64,
    injected: u64,
    stopped: Option<(AgentId, String)>,
    failed: Option<(AgentId, SimError)>,
    trace: Option<TraceSink>,
    record: Option<Vec<Envelope>>,
    interrupt: Option<Arc<AtomicBool>>,
}

/// Injected messages count from here, above any agent's own counter, so their keys never collide.
const INJECTED_SEQ: u64 = 1 << 63;

impl Engine {
    pub(crate) fn new(dir: Arc<Directory>, trace: Option<TraceSink>) -> Engine {
        Engine {
            dir,
            fel: Fel::default(),
            now: SimTime::ZERO,
            round: 0,
            cancelled: HashSet::new(),
            delivered: 0,
            injected: 0,
            stopped: None,
            failed: None,
            trace,
            record: None,
            interrupt: None,
        }
    }

    /// Who is in the simulation.
    pub fn directory(&self) -> &Arc<Directory> {
        &self.dir
    }

    /// The clock.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// The zero-delay round being delivered at [`now`](Self::now).
    pub fn round(&self) -> u32 {
        self.round
    }

    /// Stops the run with [`SimError::Interrupted`] at the next batch once `flag` is set (e.g. by Ctrl-C).
    pub(crate) fn set_interrupt(&mut self, flag: Arc<AtomicBool>) {
        self.interrupt = Some(flag);
    }

    /// Keeps a copy of every delivered envelope, for the test bed.
    pub(crate) fn record_deliveries(&mut self) {
        self.record.get_or_insert_with(Vec::new);
    }

    /// The recorded deliveries, in delivery order.
    pub(crate) fn deliveries(&self) -> &[Envelope] {
        self.record.as_deref().unwrap_or(&[])
    }

    /// Puts a message from outside (`from` may be [`AgentId::ENV`] or any agent) on the event list.
    pub fn inject(&mut self, at: SimTime, from: AgentId, to: AgentId, msg: Msg) -> Result<(), SimError> {
        let sender = SimError::name_of(&self.dir, from);
        if self.stopped.is_some() || self.failed.is_some() {
            return Err(SimError::Stopped { sender, at: self.now, kind: msg.kind() });
        }
        if at < self.now {
            return Err(SimError::InThePast { sender, now: self.now, at, kind: msg.kind() });
        }
        if !self.dir.contains(to) {
            return Err(SimError::UnknownAgent { sender, at: self.now, kind: msg.kind(), to: to.0 });
        }
        // Injected into the current instant: after the round being delivered.
        let round = if at == self.now && self.delivered > 0 { self.round + 1 } else { 0 };
        let seq = INJECTED_SEQ + self.injected;
        self.injected += 1;
        self.fel.push(Envelope { key: EventKey { at, round, from, seq }, to, msg });
        Ok(())
    }

    /// Fills `batch` with the next `(time, round)` group dated at or before `limit`, in key order, skipping
    /// cancelled timers. Returns `false` when there is none (or the run is stopped).
    pub(crate) fn next_batch(&mut self, limit: SimTime, batch: &mut Vec<Envelope>) -> Result<bool, SimError> {
        batch.clear();
        if self.stopped.is_some() || self.failed.is_some() {
            return Ok(false);
        }
        if self.interrupt.as_ref().is_some_and(|f| f.load(Ordering::Relaxed)) {
            return Err(SimError::Interrupted { at: self.now });
        }
        while let Some(key) = self.fel.peek() {
            if key.at > limit {
                break;
            }
            if !batch.is_empty() && (key.at, key.round) != (self.now, self.round) {
                break;
            }
            let env = self.fel.pop().expect("peeked");
            if !self.cancelled.is_empty() && env.is_timer() && self.cancelled.remove(&(env.to, key.seq)) {
                continue;
            }
            if batch.is_empty() {
                self.now = key.at;
                self.round = key.round;
            }
            if let Some(t) = &mut self.trace {
                t.record(&self.dir, &env)?;
            }
            if let Some(r) = &mut self.record {
                r.push(env.clone());
            }
            batch.push(env);
        }
        self.delivered += batch.len() as u64;
        Ok(!batch.is_empty())
    }

    /// Merges what one or more handlers produced. Call [`end_batch`](Self::end_batch) once the whole batch is in.
    pub(crate) fn absorb(&mut self, fx: &mut Effects) {
        for env in fx.sent.drain(..) {
            self.fel.push(env);
        }
        self.cancelled.extend(fx.cancelled.drain(..));
        // Several agents of one batch may stop or fail: keep the lowest id so the outcome never depends on the
        // order in which their effects arrived.
        if let Some(stop) = fx.stop.take()
            && self.stopped.as_ref().is_none_or(|s| stop.0 < s.0)
        {
            self.stopped = Some(stop);
        }
        if let Some(fail) = fx.error.take()
            && self.failed.as_ref().is_none_or(|f| fail.0 < f.0)
        {
            self.failed = Some(fail);
        }
    }

    /// Ends a batch: the first error stops the run.
    pub(crate) fn end_batch(&mut self) -> Result<(), SimError> {
        match &self.failed {
            Some((_, e)) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Closes a run: sets the clock to the horizon if one was reached, flushes the trace, reports.
    pub(crate) fn finish(&mut self, end: End) -> Result<Outcome, SimError> {
        if let Some(t) = &mut self.trace {
            t.flush()?;
        }
        self.end_batch()?;
        let reason = if let Some((by, reason)) = &self.stopped {
            EndReason::Stopped { by: SimError::name_of(&self.dir, *by), reason: reason.clone() }
        } else if self.fel.is_empty() {
            EndReason::Quiescent
        } else {
            EndReason::Horizon
        };
        if let (End::Until(t), EndReason::Horizon | EndReason::Quiescent) = (end, &reason)
            && t > self.now
        {
            self.now = t;
            self.round = 0;
        }
        Ok(Outcome { now: self.now, reason, delivered: self.delivered, pending: self.fel.len() })
    }
}

impl End {
    pub(crate) fn limit(self) -> SimTime {
        match self {
            End::Until(t) => t,
            End::Quiescence => SimTime::MAX,
        }
    }
}

/// The future-event list: a binary heap of compact keys over a slab of envelopes. Sifting moves 32-byte entries,
/// not whole envelopes, and compares three integers, not a float and three fields.
#[derive(Default)]
struct Fel {
    heap: BinaryHeap<FelEntry>,
    slab: Vec<Option<Envelope>>,
    free: Vec<u32>,
}

/// An [`EventKey`] packed into integers that order the same way, and where its envelope waits.
#[derive(PartialEq, Eq)]
struct FelEntry {
    /// The time's bits: for finite non-negative floats (the only times there are) integer order is float order.
    at: u64,
    round_from: u64,
    seq: u64,
    slot: u32,
}

// A max-heap: entries order by *reversed* key, so the earliest pops first.
impl Ord for FelEntry {
    fn cmp(&self, other: &Self) -> CmpOrdering {
        (other.at, other.round_from, other.seq).cmp(&(self.at, self.round_from, self.seq))
    }
}

impl PartialOrd for FelEntry {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}

impl Fel {
    fn push(&mut self, env: Envelope) {
        let k = env.key;
        // `+ 0.0` turns a negative zero into the zero it equals.
        let at = (k.at.secs() + 0.0).to_bits();
        let round_from = u64::from(k.round) << 32 | u64::from(k.from.0);
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slab[slot as usize] = Some(env);
                slot
            }
            None => {
                self.slab.push(Some(env));
                (self.slab.len() - 1) as u32
            }
        };
        self.heap.push(FelEntry { at, round_from, seq: k.seq, slot });
    }

    fn peek(&self) -> Option<EventKey> {
        let head = self.heap.peek()?;
        self.slab[head.slot as usize].as_ref().map(|env| env.key)
    }

    fn pop(&mut self) -> Option<Envelope> {
        let head = self.heap.pop()?;
        self.free.push(head.slot);
        self.slab[head.slot as usize].take()
    }

    fn len(&self) -> usize {
        self.heap.len()
    }

    fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}
