//! Peer implementations of the kernel benchmark's "ring" model on two other
//! Rust discrete-event simulators, `simcore` 0.1 (formerly dslab-core) and
//! `nexosim` 1.0, so `benches/kernel.rs` can compare gridmarket against them.
//!
//! The model is the same on both (and must stay the same as gridmarket's):
//!
//! * `agents` agents in a ring; agent `i` forwards to agent `(i + 1) % agents`;
//! * `tokens` tokens; token `k` starts at agent `(k * agents / tokens) % agents`
//!   and is first delivered there after a delay drawn from that agent's RNG;
//! * on every delivery the receiving agent draws a delay uniform in
//!   `[1.0, 2.0)` seconds from its *own* RNG ([`agent_rng`]) and sends the
//!   token to the next agent with that delay;
//! * deliveries are counted in the handler, and the run stops once the count
//!   reaches `deliveries`; the count actually made is returned.
//!
//! Each peer is written the way its own documentation and examples write
//! models (simcore: one `EventHandler` per agent that `emit`s with a delay;
//! nexosim: one `Model` per agent whose `Output` port is connected to the next
//! model's input, with the delay done by `Context::schedule_event`), with no
//! logging or tracing enabled.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

/// The payload passed around the ring.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Token {
    pub id: u64,
}

/// Per-agent RNG, seeded from `(seed, agent)`.
///
/// simcore's own `ctx.gen_range` is *not* per component (it draws from one
/// simulation-wide `Pcg64`), and nexosim has no RNG facility, so both peers
/// use this per-agent generator to keep the model identical across simulators.
pub fn agent_rng(seed: u64, agent: usize) -> Pcg64Mcg {
    // Spread the agent index over all 64 bits before mixing it into the seed
    // (seed_from_u64 then expands the result through PCG32).
    Pcg64Mcg::seed_from_u64(seed ^ (agent as u64).wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Delay until the next delivery, uniform in [1.0, 2.0) seconds.
fn draw_delay(rng: &mut Pcg64Mcg) -> f64 {
    rng.random_range(1.0..2.0)
}

/// Initial tokens of each agent, in token order: token k starts at agent
/// (k * agents / tokens) % agents.
fn initial_tokens(agents: usize, tokens: usize) -> Vec<Vec<Token>> {
    let mut by_agent = vec![Vec::new(); agents];
    for k in 0..tokens {
        let start = ((k as u128 * agents as u128 / tokens as u128) % agents as u128) as usize;
        by_agent[start].push(Token { id: k as u64 });
    }
    by_agent
}

// ---------------------------------------------------------------------------
// simcore
// ---------------------------------------------------------------------------

struct SimcoreAgent {
    ctx: simcore::SimulationContext,
    next: simcore::Id,
    rng: Pcg64Mcg,
    delivered: Rc<Cell<u64>>,
}

impl simcore::EventHandler for SimcoreAgent {
    fn on(&mut self, event: simcore::Event) {
        simcore::cast!(match event.data {
            Token { id } => {
                self.delivered.set(self.delivered.get() + 1);
                let delay = draw_delay(&mut self.rng);
                self.ctx.emit(Token { id }, self.next, delay);
            }
        })
    }
}

/// Runs the ring on simcore; returns the number of deliveries made.
pub fn ring_simcore(agents: usize, tokens: usize, deliveries: u64, seed: u64) -> u64 {
    if agents == 0 || tokens == 0 {
        return 0;
    }
    // simcore's own RNG is unused (see `agent_rng`), so its seed is irrelevant.
    let mut sim = simcore::Simulation::new(seed);
    let delivered = Rc::new(Cell::new(0u64));

    // Contexts get ids 0, 1, 2, ... in creation order, so agent i has id i;
    // create them all first so each agent knows its successor's id.
    let ctxs: Vec<_> = (0..agents).map(|i| sim.create_context(format!("agent{i}"))).collect();
    let ids: Vec<simcore::Id> = ctxs.iter().map(|c| c.id()).collect();
    let starts = initial_tokens(agents, tokens);

    for (i, (ctx, start)) in ctxs.into_iter().zip(starts).enumerate() {
        let mut rng = agent_rng(seed, i);
        for tok in start {
            // Delivery of the token to its starting agent (i itself).
            ctx.emit_self(tok, draw_delay(&mut rng));
        }
        let agent = SimcoreAgent { ctx, next: ids[(i + 1) % agents], rng, delivered: delivered.clone() };
        sim.add_handler(format!("agent{i}"), Rc::new(RefCell::new(agent)));
    }

    // One `step` delivers exactly one event; stop as soon as the handler count
    // reaches the target (the ring never runs dry, the `step()` guard is for safety).
    while delivered.get() < deliveries && sim.step() {}
    delivered.get()
}

// ---------------------------------------------------------------------------
// nexosim
// ---------------------------------------------------------------------------

mod nx {
    use super::*;
    use nexosim::model::{BuildContext, Context, Model, ProtoModel, schedulable};
    use nexosim::ports::Output;

    /// Model state. nexosim requires models to be (de)serialisable for
    /// save/restore, hence serde on the model and rand_pcg's `serde` feature.
    #[derive(Serialize, Deserialize)]
    pub struct Agent {
        /// Connected to the next agent's `deliver` input.
        out: Output<Token>,
        rng: Pcg64Mcg,
        /// Tokens this agent starts with; consumed by `init`.
        initial: Vec<Token>,
    }

    /// Non-serialised part of the model: the shared delivery counter the
    /// driver polls between steps.
    pub struct AgentEnv {
        delivered: Arc<AtomicU64>,
    }

    #[Model(type Env = AgentEnv)]
    impl Agent {
        /// Schedules this agent's initial tokens (their first delivery is to
        /// this agent itself).
        #[nexosim(init)]
        async fn init(&mut self, cx: &Context<Self>) {
            for tok in std::mem::take(&mut self.initial) {
                let delay = Duration::from_secs_f64(draw_delay(&mut self.rng));
                cx.schedule_event(delay, schedulable!(Self::deliver), tok).unwrap();
            }
        }

        /// Input port: a token is delivered to this agent. nexosim can only
        /// schedule onto the model itself, so the delayed hop to the next agent
        /// is "schedule `forward` after the delay, which sends on `out`".
        #[nexosim(schedulable)]
        pub fn deliver(&mut self, tok: Token, cx: &Context<Self>, env: &mut AgentEnv) {
            env.delivered.fetch_add(1, Ordering::Relaxed);
            let delay = Duration::from_secs_f64(draw_delay(&mut self.rng));
            cx.schedule_event(delay, schedulable!(Self::forward), tok).unwrap();
        }

        #[nexosim(schedulable)]
        async fn forward(&mut self, tok: Token) {
            self.out.send(tok).await;
        }
    }

    /// Builder carrying the non-serialisable environment into the model.
    pub struct ProtoAgent {
        pub out: Output<Token>,
        pub rng: Pcg64Mcg,
        pub initial: Vec<Token>,
        pub delivered: Arc<AtomicU64>,
    }

    impl ProtoModel for ProtoAgent {
        type Model = Agent;

        fn build(self, _: &mut BuildContext<Self>) -> (Agent, AgentEnv) {
            let agent = Agent { out: self.out, rng: self.rng, initial: self.initial };
            (agent, AgentEnv { delivered: self.delivered })
        }
    }
}

/// Runs the ring on nexosim; returns the number of deliveries made.
///
/// `threads: None` uses `SimInit::new()`, nexosim's default multi-threaded
/// executor with one worker per logical CPU; `Some(1)` selects its
/// single-threaded executor (`SimInit::with_num_threads(1)`).
pub fn ring_nexosim(agents: usize, tokens: usize, deliveries: u64, seed: u64, threads: Option<usize>) -> u64 {
    use nexosim::simulation::{Mailbox, SimInit};
    use nexosim::time::MonotonicTime;

    if agents == 0 || tokens == 0 {
        return 0;
    }
    let delivered = Arc::new(AtomicU64::new(0));
    let mailboxes: Vec<Mailbox<nx::Agent>> = (0..agents).map(|_| Mailbox::new()).collect();
    // Addresses first: `add_model` consumes the mailboxes.
    let addresses: Vec<_> = mailboxes.iter().map(Mailbox::address).collect();
    let starts = initial_tokens(agents, tokens);

    let mut bench = match threads {
        Some(n) => SimInit::with_num_threads(n),
        None => SimInit::new(),
    };
    for (i, (mbox, start)) in mailboxes.into_iter().zip(starts).enumerate() {
        let mut out = nexosim::ports::Output::new();
        out.connect(nx::Agent::deliver, addresses[(i + 1) % agents].clone());
        let proto = nx::ProtoAgent { out, rng: agent_rng(seed, i), initial: start, delivered: delivered.clone() };
        bench = bench.add_model(proto, mbox, &format!("agent{i}"));
    }
    let mut simu = bench.init(MonotonicTime::EPOCH).expect("nexosim init failed");

    // Each `step` advances to the next event time and runs everything due then
    // (normally one scheduled `forward` plus the resulting `deliver`); stop
    // stepping as soon as the handler count reaches the target.
    while delivered.load(Ordering::Relaxed) < deliveries {
        simu.step().expect("nexosim step failed");
    }
    delivered.load(Ordering::Relaxed)
}
