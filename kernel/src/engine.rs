//! The future-event list and the rules of delivery, shared by every runtime.

use std::collections::{BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

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
    /// Where the clock is published (its seconds' bits) for who watches the run's progress.
    clock: Option<Arc<AtomicU64>>,
    /// Timers of the current batch that their agent cancelled before their turn (so not delivered).
    skipped: Vec<(AgentId, u64)>,
    /// The slab slots of the batch being delivered, in key order: its envelopes stay where they were stored when
    /// sent, are handed to the handlers by reference, and are dropped when the next batch is taken.
    batch: Vec<u32>,
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
            clock: None,
            skipped: Vec::new(),
            batch: Vec::new(),
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

    /// Publishes the clock into `clock` (as `f64` seconds' bits) before every batch.
    pub(crate) fn set_clock(&mut self, clock: Arc<AtomicU64>) {
        self.clock = Some(clock);
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

    /// What comes next: the next `(time, round)` group of envelopes dated at or before `limit` (the
    /// [`batch`](Self::batch), in key order; cancelled timers are gone already), or, once the current instant has no
    /// envelope left, the end of the instant for the agents that asked for it (a round of its own). [`Step::Done`]
    /// when there is nothing left (or the run is stopped). The previous batch's envelopes are dropped here.
    #[inline(always)]
    pub(crate) fn next_step(&mut self, limit: SimTime) -> Result<Step, SimError> {
        self.release_batch();
        if self.stopped.is_some() || self.failed.is_some() {
            return Ok(Step::Done);
        }
        if self.interrupt.as_ref().is_some_and(|f| f.load(Ordering::Relaxed)) {
            return Err(SimError::Interrupted { at: self.now });
        }
        if let Some(clock) = &self.clock {
            clock.store(self.now.secs().to_bits(), Ordering::Relaxed);
        }
        if !self.end_of_instant.is_empty() && self.fel.peek().is_none_or(|(at, _)| at != self.now || at > limit) {
            self.round = self.round.saturating_add(1);
            if self.round > self.max_rounds {
                let agents = self.end_of_instant.iter().map(|&id| SimError::name_of(&self.dir, id)).collect();
                return Err(SimError::ZeroDelayLoop { at: self.now, rounds: self.max_rounds, agents });
            }
            return Ok(Step::EndOfInstant(std::mem::take(&mut self.end_of_instant).into_iter().collect()));
        }
        Ok(if self.next_batch(limit)? { Step::Deliver } else { Step::Done })
    }

    /// The slots of the batch being delivered, in key order (see [`envelope`](Self::envelope)).
    #[inline]
    pub(crate) fn batch(&self) -> &[u32] {
        &self.batch
    }

    /// The envelope in `slot` of the batch being delivered.
    #[inline]
    pub(crate) fn envelope(&self, slot: u32) -> &Envelope<M> {
        self.fel.slab[slot as usize].as_ref().expect("an envelope of the batch being delivered")
    }

    /// Moves the batch's envelopes into `out`, in key order, for a runtime that sends them away.
    pub(crate) fn take_batch(&mut self, out: &mut Vec<Envelope<M>>) {
        let slab = &mut self.fel.slab;
        out.extend(self.batch.iter().map(|&slot| slab[slot as usize].take().expect("an envelope of the batch")));
    }

    /// Drops the delivered batch's envelopes (unless taken) and frees their slots.
    #[inline]
    fn release_batch(&mut self) {
        for slot in self.batch.drain(..) {
            drop(self.fel.slab[slot as usize].take());
            self.fel.free.push(slot);
        }
    }

    /// Fills the batch with the next `(time, round)` group dated at or before `limit`.
    #[inline]
    fn next_batch(&mut self, limit: SimTime) -> Result<bool, SimError> {
        let Some((at, round)) = self.fel.peek() else { return Ok(false) };
        if at > limit {
            return Ok(false);
        }
        if round > self.max_rounds {
            return Err(self.zero_delay_loop(at, round));
        }
        (self.now, self.round) = (at, round);
        loop {
            let slot = self.fel.pop_slot().expect("peeked");
            let env = self.fel.slab[slot as usize].as_ref().expect("a live envelope");
            if let Some(t) = &mut self.trace {
                t.record(&self.dir, env)?;
            }
            if let Some(r) = &mut self.record {
                r.push(env.clone());
            }
            self.batch.push(slot);
            if self.fel.peek() != Some((at, round)) {
                break;
            }
        }
        self.delivered += self.batch.len() as u64;
        Ok(true)
    }

    /// The error for a cascade of zero-delay messages that does not end: the agents of the batch past the cap.
    #[cold]
    fn zero_delay_loop(&self, at: SimTime, round: u32) -> SimError {
        let mut agents = BTreeSet::new();
        for env in self.fel.batch_at(at, round) {
            agents.insert(env.from());
            agents.insert(env.to);
        }
        let agents = agents.into_iter().map(|id| SimError::name_of(&self.dir, id)).collect();
        SimError::ZeroDelayLoop { at, rounds: self.max_rounds, agents }
    }

    /// Merges what one or more handlers produced. Call [`end_batch`](Self::end_batch) once the whole batch is in.
    #[inline]
    pub(crate) fn absorb(&mut self, fx: &mut Effects<M>) {
        for env in fx.sent.drain(..) {
            self.fel.push(env);
        }
        if fx.only_sent() {
            return;
        }
        for (agent, seq) in fx.cancelled.drain(..) {
            self.fel.cancel(agent, seq);
        }
        if !fx.skipped.is_empty() {
            self.skipped.append(&mut fx.skipped);
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

    /// Ends a batch: its deliveries go to the trace, but for the timers skipped; the first error stops the run.
    #[inline(always)]
    pub(crate) fn end_batch(&mut self) -> Result<(), SimError> {
        if self.skipped.is_empty() && self.trace.is_none() && self.failed.is_none() {
            return Ok(());
        }
        self.end_traced_batch()
    }

    /// The rest of [`end_batch`](Self::end_batch), out of line: most batches skip nothing, trace nothing, fail not.
    #[inline(never)]
    fn end_traced_batch(&mut self) -> Result<(), SimError> {
        let skipped = std::mem::take(&mut self.skipped);
        if !skipped.is_empty() {
            self.delivered -= skipped.len() as u64;
            if let Some(r) = &mut self.record {
                r.retain(|e| !skipped.contains(&(e.key.from, e.key.seq)));
            }
        }
        if let Some(t) = &mut self.trace {
            t.commit(&skipped)?;
        }
        match &self.failed {
            Some((_, e)) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Closes a run: sets the clock to the horizon if one was reached, flushes the trace, reports.
    pub(crate) fn finish(&mut self, end: End) -> Result<Outcome, SimError> {
        let ended = self.end_batch();
        if let Some(t) = &mut self.trace {
            t.flush()?;
        }
        ended?;
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

/// The future-event list: a binary min-heap of 16-byte entries over a slab of envelopes.
///
/// An entry holds the time's bits, which decide almost every comparison with one integer compare, the round and the
/// envelope's slot; the rest of the key (sender, sequence number) waits per slot in `ties` and is read only when two
/// entries share their time. The two children of a node fill one aligned [`Pair`], so a level of a pop reads a
/// single cache line. (On the kernel benchmark, 32-byte entries carrying the whole key, a 4-ary heap and a radix
/// heap on the time's bits were all slower.)
///
/// An agent may cancel what it sent itself (timers): `own` finds such an envelope's slot by (agent, sequence
/// number), and cancelling drops the envelope at once. Its heap entry stays until it reaches the top (or a sweep
/// when most entries are dead), where the empty slot says to skip it; only then is the slot reused. Nothing is
/// kept for a timer that already fired.
struct Fel<M> {
    /// Heap entry `i` (root 0, children of `i` at `2i + 1` and `2i + 2`) is lane `(i + 1) % 2` of pair
    /// `(i + 1) / 2`: the children of node `i` are pair `i + 1`. A lane past the last entry holds [`LATEST`].
    pairs: Vec<Pair>,
    /// Heap entries, cancelled ones included.
    entries: usize,
    slab: Vec<Option<Envelope<M>>>,
    /// (sender, sequence number) of each slot's envelope: the key's tie-break after `(time, round)`.
    ties: Vec<(u32, u64)>,
    free: Vec<u32>,
    own: HashMap<(AgentId, u64), u32, BuildHasherDefault<OwnHasher>>,
    /// Heap entries whose envelope was cancelled.
    dead: usize,
}

impl<M> Default for Fel<M> {
    fn default() -> Self {
        Fel {
            pairs: Vec::new(),
            entries: 0,
            slab: Vec::new(),
            ties: Vec::new(),
            free: Vec::new(),
            own: HashMap::default(),
            dead: 0,
        }
    }
}

/// The hash of `own`'s keys: one multiply per word (the Fx hash of Firefox and rustc). Every message an agent sends
/// itself is inserted and removed, so SipHash was an eighth of a large grid run; the keys are the kernel's own
/// numbers, not an adversary's, so a keyed hash buys nothing. Iteration order never matters: `own` is only looked up.
#[derive(Default)]
struct OwnHasher(u64);

impl OwnHasher {
    #[inline(always)]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for OwnHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// The head of an [`EventKey`] and where its envelope waits.
#[derive(Clone, Copy, Debug)]
struct FelEntry {
    /// The time's bits: for finite non-negative floats (the only times there are) integer order is float order.
    at: u64,
    round: u32,
    slot: u32,
}

/// The two children of one heap node, never split across cache lines.
#[derive(Clone, Copy)]
#[repr(align(32))]
struct Pair([FelEntry; 2]);

/// Fills the lane past the last entry: later than any entry (no time has these bits), so a node's children
/// compare without a bounds check.
const LATEST: FelEntry = FelEntry { at: u64::MAX, round: u32::MAX, slot: u32::MAX };

/// Whether entry `a` comes before entry `b` in the event order.
#[inline(always)]
fn before(ties: &[(u32, u64)], a: FelEntry, b: FelEntry) -> bool {
    // Times rarely tie: a well-predicted branch, and the result itself a value, not a branch. ([`LATEST`] has no
    // slot, and ties with nothing that is compared with it.)
    if a.at != b.at {
        return a.at < b.at;
    }
    (a.round, ties.get(a.slot as usize)) < (b.round, ties.get(b.slot as usize))
}

impl<M> Fel<M> {
    #[inline(always)]
    fn entry(&self, i: usize) -> FelEntry {
        let lane = i + 1; // counting from the empty lane before the root
        self.pairs[lane / 2].0[lane % 2]
    }

    #[inline(always)]
    fn set_entry(&mut self, i: usize, e: FelEntry) {
        let lane = i + 1;
        self.pairs[lane / 2].0[lane % 2] = e;
    }

    #[inline]
    fn push(&mut self, env: Envelope<M>) {
        let k = env.key;
        let own = env.is_own();
        // `+ 0.0` turns a negative zero into the zero it equals.
        let at = (k.at.secs() + 0.0).to_bits();
        let tie = (k.from.0, k.seq);
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slab[slot as usize] = Some(env);
                self.ties[slot as usize] = tie;
                slot
            }
            None => {
                self.slab.push(Some(env));
                self.ties.push(tie);
                (self.slab.len() - 1) as u32
            }
        };
        if own {
            self.own.insert((k.from, k.seq), slot);
        }
        self.push_entry(FelEntry { at, round: k.round, slot });
    }

    fn push_entry(&mut self, e: FelEntry) {
        if self.entries.div_ceil(2) == self.pairs.len() {
            self.pairs.push(Pair([LATEST; 2]));
        }
        self.entries += 1;
        self.sift_up(self.entries - 1, e);
    }

    /// Puts `e` at `pos` or above, where it belongs.
    #[inline]
    fn sift_up(&mut self, mut pos: usize, e: FelEntry) {
        while pos > 0 {
            let parent = (pos - 1) / 2;
            let p = self.entry(parent);
            if !before(&self.ties, e, p) {
                break;
            }
            self.set_entry(pos, p);
            pos = parent;
        }
        self.set_entry(pos, e);
    }

    /// Removes the earliest entry: the hole it leaves goes down along the earlier children to a leaf, where the
    /// last entry fills it and moves up (it is usually late, so this takes fewer comparisons than sifting it down).
    /// The earlier child is picked by arithmetic, not a branch: which one it is, is a coin toss no predictor
    /// guesses.
    #[inline]
    fn pop_entry(&mut self) -> Option<FelEntry> {
        if self.entries == 0 {
            return None;
        }
        self.entries -= 1;
        let last = self.entry(self.entries);
        self.set_entry(self.entries, LATEST);
        if self.entries == 0 {
            return Some(last);
        }
        let top = self.entry(0);
        let mut pos = 0;
        while 2 * pos + 1 < self.entries {
            let (children, ties) = (&self.pairs[pos + 1].0, &self.ties);
            let lane = usize::from(before(ties, children[1], children[0]));
            self.set_entry(pos, children[lane]);
            pos = 2 * pos + 1 + lane;
        }
        self.sift_up(pos, last);
        Some(top)
    }

    /// Drops `agent`'s own pending envelope number `seq`, if it is still pending.
    fn cancel(&mut self, agent: AgentId, seq: u64) {
        if let Some(slot) = self.own.remove(&(agent, seq)) {
            self.slab[slot as usize] = None;
            self.dead += 1;
            // Far-future timers cancelled over and over would pile up: sweep when most entries are dead.
            if self.dead > 1024 && self.dead > self.entries / 2 {
                self.sweep();
            }
        }
    }

    /// Rebuilds the heap from its live entries, freeing the slots of the cancelled ones.
    fn sweep(&mut self) {
        let mut live: Vec<FelEntry> = (0..self.entries).map(|i| self.entry(i)).collect();
        let (slab, free) = (&self.slab, &mut self.free);
        live.retain(|e| {
            let keep = slab[e.slot as usize].is_some();
            if !keep {
                free.push(e.slot);
            }
            keep
        });
        // Pushed in order, no entry moves up.
        let ties = &self.ties;
        live.sort_unstable_by_key(|e| (e.at, e.round, ties[e.slot as usize]));
        (self.pairs, self.entries, self.dead) = (Vec::new(), 0, 0);
        for e in live {
            self.push_entry(e);
        }
    }

    /// The time and round of the earliest pending envelope (removing cancelled entries that reached the top).
    #[inline]
    fn peek(&mut self) -> Option<(SimTime, u32)> {
        loop {
            if self.entries == 0 {
                return None;
            }
            let head = self.entry(0);
            // Reading the slot here, a delivery ahead of taking the envelope, lets its cache line arrive meanwhile.
            if self.slab[head.slot as usize].is_some() {
                return Some((SimTime::from_bits(head.at), head.round));
            }
            self.pop_entry();
            self.free.push(head.slot);
            self.dead -= 1;
        }
    }

    /// Takes the earliest entry off the heap and returns its slot, whose envelope stays in the slab until the
    /// caller frees the slot; call after [`peek`](Self::peek), which leaves a live one on top.
    #[inline]
    fn pop_slot(&mut self) -> Option<u32> {
        let head = self.pop_entry()?;
        let env = self.slab[head.slot as usize].as_ref()?;
        if env.is_own() {
            let key = (env.key.from, env.key.seq);
            self.own.remove(&key);
        }
        Some(head.slot)
    }

    /// Takes the earliest envelope out; call after [`peek`](Self::peek).
    #[cfg(test)]
    fn pop(&mut self) -> Option<Envelope<M>> {
        let slot = self.pop_slot()?;
        self.free.push(slot);
        self.slab[slot as usize].take()
    }

    /// The pending envelopes of one `(time, round)`, in no particular order (for error reports).
    fn batch_at(&self, at: SimTime, round: u32) -> impl Iterator<Item = &Envelope<M>> {
        self.slab.iter().flatten().filter(move |e| (e.key.at, e.key.round) == (at, round))
    }

    fn len(&self) -> usize {
        self.entries - self.dead
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
        assert!(fel.entries <= 2 * 1_025, "{} heap entries", fel.entries);
        assert_eq!(fel.peek(), None);
        assert_eq!((fel.entries, fel.dead, fel.free.len()), (0, 0, fel.slab.len()));
    }

    #[test]
    fn pops_in_key_order_with_ties_and_cancellations() {
        use rand::{Rng, SeedableRng};
        // Against a sorted set of keys: few distinct times and rounds, so ties on (time, round) are common and the
        // sender and sequence number decide; a quarter of the pushes are timers, half of them cancelled later.
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
        let mut fel = Fel::default();
        let mut expected = BTreeSet::new();
        let mut timers = Vec::new();
        let (mut now, mut seq) = (0u64, 0u64);
        for step in 0..20_000 {
            for _ in 0..rng.next_u32() % 3 {
                let (from, to) = (rng.next_u32() % 5, rng.next_u32() % 5);
                let at = (now + u64::from(rng.next_u32() % 4)) as f64 * 0.5;
                let round = rng.next_u32() % 2;
                let key = EventKey { at: SimTime::new(at).unwrap(), round, from: AgentId(from), seq };
                seq += 1;
                fel.push(Envelope { key, to: AgentId(to), msg: () });
                expected.insert(key);
                if from == to && rng.next_u32() % 2 == 0 {
                    timers.push(key);
                }
            }
            if step % 3 == 0
                && let Some(key) = timers.pop()
            {
                fel.cancel(key.from, key.seq);
                expected.remove(&key);
            }
            assert_eq!(fel.len(), expected.len());
            // Looking without taking, as a run that reaches its horizon does.
            let head = fel.peek();
            assert_eq!(head, expected.first().map(|k| (k.at, k.round)));
            if head.is_some() && rng.next_u32() % 2 == 0 {
                let key = fel.pop().unwrap().key;
                assert_eq!(Some(key), expected.pop_first());
                now = (key.at.secs() * 2.0) as u64;
            }
        }
        while fel.peek().is_some() {
            assert_eq!(fel.pop().map(|e| e.key), expected.pop_first());
        }
        assert!(expected.is_empty());
    }

    #[derive(Clone, Debug, serde::Serialize)]
    struct Ping;

    impl Message for Ping {
        fn kind(&self) -> &'static str {
            "ping"
        }
    }

    #[test]
    fn a_batch_is_read_where_it_lies_and_its_slots_freed_at_the_next_step() {
        let mut dir = Directory::default();
        dir.add("a", "k", &[]).unwrap();
        let mut engine = Engine::new(Arc::new(dir), None);
        let at = |t| SimTime::new(t).unwrap();
        for t in [1.0, 1.0, 1.0, 2.0] {
            engine.inject(at(t), AgentId::ENV, AgentId(0), Ping).unwrap();
        }
        assert!(matches!(engine.next_step(SimTime::MAX), Ok(Step::Deliver)));
        let first = engine.batch().to_vec();
        assert_eq!(first.len(), 3);
        let seqs: Vec<u64> = first.iter().map(|&slot| engine.envelope(slot).key.seq).collect();
        assert_eq!(seqs, [INJECTED_SEQ, INJECTED_SEQ + 1, INJECTED_SEQ + 2]);
        assert!(engine.fel.free.is_empty(), "held while the batch is delivered");
        assert!(matches!(engine.next_step(SimTime::MAX), Ok(Step::Deliver)));
        assert_eq!(engine.batch().len(), 1);
        assert!(first.iter().all(|&slot| engine.fel.slab[slot as usize].is_none()));
        assert_eq!(engine.fel.free.len(), 3);
        // Taken away (the actix runtime) rather than read in place: the slot is freed all the same.
        let mut taken = Vec::new();
        engine.take_batch(&mut taken);
        assert_eq!(taken.len(), 1);
        assert!(matches!(engine.next_step(SimTime::MAX), Ok(Step::Done)));
        assert_eq!((engine.fel.free.len(), engine.fel.slab.len()), (4, 4));
        assert_eq!(engine.delivered, 4);
    }

    #[test]
    fn only_own_messages_can_be_cancelled() {
        let mut fel = Fel::default();
        fel.push(env(1.0, 0, 1, 7));
        fel.cancel(AgentId(0), 7);
        fel.cancel(AgentId(1), 7);
        assert_eq!(fel.len(), 1);
        assert_eq!(fel.pop().map(|e| e.key.seq), Some(7));
    }
}
