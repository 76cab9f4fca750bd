//! The future-event list and the rules of delivery, shared by every runtime.

use std::cmp::Ordering as CmpOrdering;
use std::collections::{BTreeSet, BinaryHeap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::ctx::Effects;
use super::trace::TraceSink;
use super::{AgentId, Directory, Envelope, EventKey, Message, SimError, SimTime};

/// What a runtime does next.
pub(crate) enum Step {
    /// Deliver the batch of envelopes.
    Deliver,
    /// Call these agents' [`Agent::end_of_instant`](super::Agent::end_of_instant), in this order.
    EndOfInstant(Vec<AgentId>),
    /// Nothing is left to deliver before the limit, or the run is stopped.
    Done,
}

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
    /// Envelopes still pending.
    pub pending: usize,
}

/// The future-event list and everything delivery depends on: the clock, cancelled timers, the trace.
///
/// A runtime asks for the next batch (every envelope of the earliest `(time, round)`), delivers it, hands back
/// what the handlers produced, and asks for the next. Because a batch never contains two causally related
/// envelopes, the runtime may deliver it in any order or in parallel.
pub struct Engine<M> {
    dir: Arc<Directory>,
    fel: Fel<M>,
    now: SimTime,
    round: u32,
    max_rounds: u32,
    /// Agents to call at the end of the current instant, in id order.
    end_of_instant: BTreeSet<AgentId>,
    delivered: u64,
    injected: u64,
    stopped: Option<(AgentId, String)>,
    failed: Option<(AgentId, SimError)>,
    trace: Option<TraceSink>,
    record: Option<Vec<Envelope<M>>>,
    interrupt: Option<Arc<AtomicBool>>,
}

/// Injected messages count from here, above any agent's own counter, so their keys never collide.
const INJECTED_SEQ: u64 = 1 << 63;

/// Zero-delay rounds allowed at one instant before the run stops with [`SimError::ZeroDelayLoop`]: far more than
/// any protocol's cascade, few enough to stop a loop in well under a second.
pub const MAX_ROUNDS: u32 = 100_000;

impl<M: Message> Engine<M> {
    pub(crate) fn new(dir: Arc<Directory>, trace: Option<TraceSink>) -> Engine<M> {
        Engine {
            dir,
            fel: Fel::default(),
            now: SimTime::ZERO,
            round: 0,
            max_rounds: MAX_ROUNDS,
            end_of_instant: BTreeSet::new(),
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

    /// Caps the zero-delay rounds at one instant (default [`MAX_ROUNDS`]).
    pub(crate) fn set_max_rounds(&mut self, rounds: u32) {
        self.max_rounds = rounds;
    }

    /// Keeps a copy of every delivered envelope, for the test bed.
    pub(crate) fn record_deliveries(&mut self) {
        self.record.get_or_insert_with(Vec::new);
    }

    /// The recorded deliveries, in delivery order.
    pub(crate) fn deliveries(&self) -> &[Envelope<M>] {
        self.record.as_deref().unwrap_or(&[])
    }

    /// Puts a message from outside (`from` may be [`AgentId::ENV`] or any agent) on the event list.
    pub fn inject(&mut self, at: SimTime, from: AgentId, to: AgentId, msg: M) -> Result<(), SimError> {
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

    /// What comes next: the next `(time, round)` group of envelopes dated at or before `limit` (into `batch`, in
    /// key order; cancelled timers are gone already), or, once the current instant has no envelope left, the end of
    /// the instant for the agents that asked for it (a round of its own). [`Step::Done`] when there is nothing left
    /// (or the run is stopped).
    pub(crate) fn next_step(&mut self, limit: SimTime, batch: &mut Vec<Envelope<M>>) -> Result<Step, SimError> {
        batch.clear();
        if self.stopped.is_some() || self.failed.is_some() {
            return Ok(Step::Done);
        }
        if self.interrupt.as_ref().is_some_and(|f| f.load(Ordering::Relaxed)) {
            return Err(SimError::Interrupted { at: self.now });
        }
        if !self.end_of_instant.is_empty() && self.fel.peek().is_none_or(|key| key.at != self.now || key.at > limit) {
            self.round = self.round.saturating_add(1);
            if self.round > self.max_rounds {
                let agents = self.end_of_instant.iter().map(|&id| SimError::name_of(&self.dir, id)).collect();
                return Err(SimError::ZeroDelayLoop { at: self.now, rounds: self.max_rounds, agents });
            }
            return Ok(Step::EndOfInstant(std::mem::take(&mut self.end_of_instant).into_iter().collect()));
        }
        Ok(if self.next_batch(limit, batch)? { Step::Deliver } else { Step::Done })
    }

    /// Fills `batch` with the next `(time, round)` group dated at or before `limit`.
    #[inline]
    fn next_batch(&mut self, limit: SimTime, batch: &mut Vec<Envelope<M>>) -> Result<bool, SimError> {
        while let Some(key) = self.fel.peek() {
            if key.at > limit {
                break;
            }
            if !batch.is_empty() && (key.at, key.round) != (self.now, self.round) {
                break;
            }
            if batch.is_empty() && key.round > self.max_rounds {
                return Err(self.zero_delay_loop(key));
            }
            let env = self.fel.pop().expect("peeked");
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

    /// The error for a cascade of zero-delay messages that does not end: the agents of the batch past the cap.
    fn zero_delay_loop(&self, key: EventKey) -> SimError {
        let mut agents = BTreeSet::new();
        for env in self.fel.batch_at(key) {
            agents.insert(env.from());
            agents.insert(env.to);
        }
        let agents = agents.into_iter().map(|id| SimError::name_of(&self.dir, id)).collect();
        SimError::ZeroDelayLoop { at: key.at, rounds: self.max_rounds, agents }
    }

    /// Merges what one or more handlers produced. Call [`end_batch`](Self::end_batch) once the whole batch is in.
    pub(crate) fn absorb(&mut self, fx: &mut Effects<M>) {
        for env in fx.sent.drain(..) {
            self.fel.push(env);
        }
        for (agent, seq) in fx.cancelled.drain(..) {
            self.fel.cancel(agent, seq);
        }
        if !fx.end_of_instant.is_empty() {
            self.end_of_instant.extend(fx.end_of_instant.drain(..));
        }
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
///
/// An agent may cancel what it sent itself (timers): `own` finds such an envelope's slot by (agent, sequence
/// number), and cancelling drops the envelope at once. Its heap entry stays until it reaches the top (or a sweep
/// when most entries are dead), where the empty slot says to skip it; only then is the slot reused. Nothing is
/// kept for a timer that already fired.
struct Fel<M> {
    heap: BinaryHeap<FelEntry>,
    slab: Vec<Option<Envelope<M>>>,
    free: Vec<u32>,
    own: HashMap<(AgentId, u64), u32>,
    /// Heap entries whose envelope was cancelled.
    dead: usize,
}

impl<M> Default for Fel<M> {
    fn default() -> Self {
        Fel { heap: BinaryHeap::new(), slab: Vec::new(), free: Vec::new(), own: HashMap::new(), dead: 0 }
    }
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

impl<M> Fel<M> {
    fn push(&mut self, env: Envelope<M>) {
        let k = env.key;
        let own = env.is_own();
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
        if own {
            self.own.insert((k.from, k.seq), slot);
        }
        self.heap.push(FelEntry { at, round_from, seq: k.seq, slot });
    }

    /// Drops `agent`'s own pending envelope number `seq`, if it is still pending.
    fn cancel(&mut self, agent: AgentId, seq: u64) {
        if let Some(slot) = self.own.remove(&(agent, seq)) {
            self.slab[slot as usize] = None;
            self.dead += 1;
            // Far-future timers cancelled over and over would pile up: sweep when most entries are dead.
            if self.dead > 1024 && self.dead > self.heap.len() / 2 {
                let (slab, free) = (&self.slab, &mut self.free);
                self.heap.retain(|e| {
                    let live = slab[e.slot as usize].is_some();
                    if !live {
                        free.push(e.slot);
                    }
                    live
                });
                self.dead = 0;
            }
        }
    }

    /// The earliest pending key (removing cancelled entries that reached the top).
    #[inline]
    fn peek(&mut self) -> Option<EventKey> {
        loop {
            let head = self.heap.peek()?;
            match &self.slab[head.slot as usize] {
                Some(env) => return Some(env.key),
                None => {
                    let slot = head.slot;
                    self.heap.pop();
                    self.free.push(slot);
                    self.dead -= 1;
                }
            }
        }
    }

    /// Takes the earliest envelope; call after [`peek`](Self::peek), which leaves a live one on top.
    #[inline]
    fn pop(&mut self) -> Option<Envelope<M>> {
        let head = self.heap.pop()?;
        self.free.push(head.slot);
        let env = self.slab[head.slot as usize].take()?;
        if env.is_own() {
            self.own.remove(&(env.key.from, env.key.seq));
        }
        Some(env)
    }

    /// The pending envelopes of the `(time, round)` of `key`, in no particular order (for error reports).
    fn batch_at(&self, key: EventKey) -> impl Iterator<Item = &Envelope<M>> {
        self.slab.iter().flatten().filter(move |e| (e.key.at, e.key.round) == (key.at, key.round))
    }

    fn len(&self) -> usize {
        self.heap.len() - self.dead
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(at: f64, from: u32, to: u32, seq: u64) -> Envelope<()> {
        let key = EventKey { at: SimTime::new(at).unwrap(), round: 0, from: AgentId(from), seq };
        Envelope { key, to: AgentId(to), msg: () }
    }

    #[test]
    fn cancelling_keeps_nothing_for_fired_or_cancelled_timers() {
        let mut fel = Fel::default();
        for seq in 0..5_000 {
            fel.push(env(seq as f64, 0, 0, seq)); // a timer
            fel.push(env(1e9, 0, 0, 100_000 + seq)); // a timer cancelled at once
            fel.cancel(AgentId(0), 100_000 + seq);
            fel.peek();
            let fired = fel.pop().unwrap();
            fel.cancel(AgentId(0), fired.key.seq); // cancelled after it fired: nothing to do
            assert!(fel.own.is_empty() && fel.is_empty());
        }
        // Dead heap entries go as they reach the top or in a sweep; their slots are reused only then.
        assert!(fel.heap.len() <= 2 * 1_025, "{} heap entries", fel.heap.len());
        assert_eq!(fel.peek(), None);
        assert_eq!((fel.heap.len(), fel.dead, fel.free.len()), (0, 0, fel.slab.len()));
    }

    #[test]
    fn only_own_messages_can_be_cancelled() {
        let mut fel = Fel::default();
        fel.push(env(1.0, 0, 1, 7));
        fel.cancel(AgentId(0), 7);
        fel.cancel(AgentId(1), 7);
        assert_eq!(fel.len(), 1);
        assert_eq!(fel.peek().map(|k| k.seq), Some(7));
    }
}
