//! Runtimes: every agent an actix actor, or all agents inline on one thread.
//!
//! Both run the same [`Engine`] batch by batch, so they deliver the same envelopes in the same order and write
//! byte-identical traces; a test checks it. The actix runtime is the default; the inline runtime needs no actor
//! system, which makes it the tool for unit tests of agents and for very large sweeps.
//!
//! In the actix runtime the clock is not an actor of its own: it is state shared by the agent actors. The runner
//! lends it the engine and sends out the first batch; the agent actor that finishes the last delivery of a batch
//! merges the effects and sends out the next one, each agent its share as one actix message. So a delivery costs
//! one actix message, not a round trip through a clock actor (2.6 M deliveries/s instead of 1.7 M on the kernel
//! benchmark).

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use actix::prelude::*;
use tokio::sync::oneshot;

use super::Message as _;
use super::ctx::{AgentState, Effects};
use super::engine::Step;
use super::trace::TraceSink;
use super::{Agent, AgentId, Ctx, Delay, Directory, End, Engine, Envelope, Outcome, SimError, SimTime, World};

/// How agents are executed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runtime {
    /// Every agent an actix actor, spread over `threads` arbiters (1: all on the clock's thread). More arbiters
    /// pay off only when batches hold many envelopes (many events at one instant): with one envelope per batch,
    /// every delivery crosses threads (the kernel benchmark's ring: 0.28 M deliveries/s on 2 arbiters, 2.6 M on 1).
    Actix {
        /// Arbiter threads, at least 1.
        threads: usize,
    },
    /// Every agent called directly on the calling thread: no actor system.
    Inline,
}

impl Default for Runtime {
    fn default() -> Runtime {
        Runtime::Actix { threads: 1 }
    }
}

/// An agent of world `W`, boxed.
pub type BoxedAgent<W> = Box<dyn Agent<W>>;

/// Assembles a simulation: agents with names and kinds, latencies, trace, runtime.
pub struct SimBuilder<W: World> {
    seed: u64,
    dir: Directory,
    agents: Vec<BoxedAgent<W>>,
    trace: Option<TraceSink>,
    runtime: Runtime,
    record: bool,
    interrupt: Option<Arc<AtomicBool>>,
    clock: Option<Arc<AtomicU64>>,
    max_rounds: u32,
}

impl<W: World> SimBuilder<W> {
    /// A simulation whose random streams all derive from `seed`.
    pub fn new(seed: u64) -> SimBuilder<W> {
        SimBuilder {
            seed,
            dir: Directory::default(),
            agents: Vec::new(),
            trace: None,
            runtime: Runtime::default(),
            record: false,
            interrupt: None,
            clock: None,
            max_rounds: super::engine::MAX_ROUNDS,
        }
    }

    /// Registers an agent under a unique `name`, with its `kind` (`"provider"`, `"broker"`...).
    pub fn add(&mut self, name: &str, kind: &str, agent: impl Agent<W>) -> Result<AgentId, SimError> {
        self.add_boxed(name, kind, Box::new(agent))
    }

    /// Registers an already boxed agent.
    pub fn add_boxed(&mut self, name: &str, kind: &str, agent: BoxedAgent<W>) -> Result<AgentId, SimError> {
        self.add_offering(name, kind, &W::services(kind), agent)
    }

    /// Registers an already boxed agent offering `services` (in place of [`World::services`] of its kind: a kind
    /// the world does not know, such as an application's plug-in).
    pub fn add_offering(
        &mut self,
        name: &str,
        kind: &str,
        services: &[&'static str],
        agent: BoxedAgent<W>,
    ) -> Result<AgentId, SimError> {
        let id = self.dir.add(name, kind, services)?;
        self.agents.push(agent);
        Ok(id)
    }

    /// Latency of every message between two different agents, unless a kind or pair latency says otherwise.
    pub fn latency_default(&mut self, secs: f64) -> Result<&mut Self, SimError> {
        let d = delay_of("*", "*", secs)?;
        self.dir.latency_mut().set_default(d);
        Ok(self)
    }

    /// Latency of messages from agents of kind `from` to agents of kind `to`.
    pub fn latency_kinds(&mut self, from: &str, to: &str, secs: f64) -> Result<&mut Self, SimError> {
        let d = delay_of(from, to, secs)?;
        let no_kind = |k: &str| SimError::NoSuchName { name: format!("kind {k}") };
        let f = self.dir.kind_index(from).ok_or_else(|| no_kind(from))?;
        let t = self.dir.kind_index(to).ok_or_else(|| no_kind(to))?;
        self.dir.latency_mut().set_kinds(f, t, d);
        Ok(self)
    }

    /// Latency of messages from agent `from` to agent `to` (overrides the kinds' latency).
    pub fn latency_pair(&mut self, from: &str, to: &str, secs: f64) -> Result<&mut Self, SimError> {
        let d = delay_of(from, to, secs)?;
        let id = |n: &str| self.dir.lookup(n).ok_or_else(|| SimError::NoSuchName { name: n.to_string() });
        let (f, t) = (id(from)?, id(to)?);
        self.dir.latency_mut().set_pair(f, t, d);
        Ok(self)
    }

    /// Writes the message trace to `sink`.
    pub fn trace(&mut self, sink: TraceSink) -> &mut Self {
        self.trace = Some(sink);
        self
    }

    /// Chooses the runtime (default: actix on one thread).
    pub fn runtime(&mut self, runtime: Runtime) -> &mut Self {
        self.runtime = runtime;
        self
    }

    /// Ends the run with [`SimError::Interrupted`] once `flag` is set (checked before every batch).
    pub fn interrupt(&mut self, flag: Arc<AtomicBool>) -> &mut Self {
        self.interrupt = Some(flag);
        self
    }

    /// Publishes the simulated clock into `clock` (its seconds as `f64` bits) before every batch, for a progress
    /// report read from another thread.
    pub fn clock(&mut self, clock: Arc<AtomicU64>) -> &mut Self {
        self.clock = Some(clock);
        self
    }

    /// Keeps every delivered envelope in memory, for test beds ([`Simulation::deliveries`]).
    pub fn record(&mut self) -> &mut Self {
        self.record = true;
        self
    }

    /// Stops the run with [`SimError::ZeroDelayLoop`] past `rounds` zero-delay rounds at one instant (default
    /// 100,000).
    pub fn max_rounds(&mut self, rounds: u32) -> &mut Self {
        self.max_rounds = rounds;
        self
    }

    /// The registry as built so far.
    pub fn directory(&self) -> &Directory {
        &self.dir
    }

    /// Builds the simulation; actors (if any) are started, agents' `start` runs at the first `run`.
    pub fn build(self) -> Result<Simulation<W>, SimError> {
        let SimBuilder { seed, dir, agents, mut trace, runtime, record, interrupt, clock, max_rounds } = self;
        if let Some(t) = &mut trace {
            t.resolve(&dir)?;
        }
        let dir = Arc::new(dir);
        let states = (0..agents.len()).map(|i| AgentState::new(AgentId(i as u32), seed)).collect();
        let mut engine = Engine::new(dir.clone(), trace);
        engine.set_max_rounds(max_rounds);
        if record {
            engine.record_deliveries();
        }
        if let Some(flag) = interrupt {
            engine.set_interrupt(flag);
        }
        if let Some(clock) = clock {
            engine.set_clock(clock);
        }
        let exec = match runtime {
            Runtime::Inline => Exec::Inline(Inline { agents, states }),
            Runtime::Actix { threads } => Exec::Actix(ActixExec::start(dir, agents, states, threads.max(1))),
        };
        Ok(Simulation { engine: Some(engine), exec, started: false })
    }
}

fn delay_of(from: &str, to: &str, secs: f64) -> Result<Delay, SimError> {
    Delay::new(secs).map_err(|_| SimError::BadLatency { from: from.into(), to: to.into(), value: secs })
}

/// A built simulation: run it to a time or to quiescence, inject messages between runs, take the agents back.
pub struct Simulation<W: World> {
    // Lent to the clock during an actix run; always present between runs.
    engine: Option<Engine<W::Msg>>,
    exec: Exec<W>,
    started: bool,
}

enum Exec<W: World> {
    Inline(Inline<W>),
    Actix(ActixExec<W>),
}

impl<W: World> Simulation<W> {
    fn engine(&self) -> &Engine<W::Msg> {
        self.engine.as_ref().expect("the engine is only lent out during a run")
    }

    fn engine_mut(&mut self) -> &mut Engine<W::Msg> {
        self.engine.as_mut().expect("the engine is only lent out during a run")
    }

    /// The clock.
    pub fn now(&self) -> SimTime {
        self.engine().now()
    }

    /// Who is in the simulation.
    pub fn directory(&self) -> &Arc<Directory> {
        self.engine().directory()
    }

    /// Envelopes delivered so far, when the builder asked to [`record`](SimBuilder::record) them.
    pub fn deliveries(&self) -> &[Envelope<W::Msg>] {
        self.engine().deliveries()
    }

    /// Puts a message on the event list from outside: `from` is an agent name or `None` for the environment.
    pub fn inject(
        &mut self,
        at: SimTime,
        from: Option<AgentId>,
        to: AgentId,
        msg: impl Into<W::Msg>,
    ) -> Result<(), SimError> {
        self.engine_mut().inject(at, from.unwrap_or(AgentId::ENV), to, msg.into())
    }

    /// Runs until `end`, an agent's stop request, or the first error.
    pub fn run(&mut self, end: End) -> Result<Outcome, SimError> {
        let mut engine = self.engine.take().expect("the engine is only lent out during a run");
        let start = !std::mem::replace(&mut self.started, true);
        let result = match &mut self.exec {
            // Handlers' panics are caught per delivery; one that gets here happened in the clock itself (the
            // trace writer, say) and is reported as the actix runtime reports it.
            Exec::Inline(inline) => catch_unwind(AssertUnwindSafe(|| inline.run(&mut engine, start, end.limit())))
                .unwrap_or_else(|p| Err(clock_panicked(&p))),
            Exec::Actix(actix) => actix.run(&mut engine, start, end.limit()),
        };
        let outcome = result.and_then(|()| engine.finish(end));
        self.engine = Some(engine);
        outcome
    }

    /// Looks at an agent's state between runs (`None` if `id` is not an agent of type `A`).
    pub fn inspect<A: Agent<W>, R: Send + 'static>(
        &mut self,
        id: AgentId,
        f: impl FnOnce(&A) -> R + Send + 'static,
    ) -> Option<R> {
        self.visit(id, move |agent| {
            let agent: &dyn Any = agent;
            agent.downcast_ref::<A>().map(f)
        })
        .flatten()
    }

    /// What agent `id` reports at the current time ([`Agent::report`]), between runs.
    pub fn report(&mut self, id: AgentId) -> Option<W::Report> {
        let now = self.now();
        self.visit(id, move |agent| {
            let mut report = W::Report::default();
            agent.report(now, &mut report);
            report
        })
    }

    fn visit<R: Send + 'static>(
        &mut self,
        id: AgentId,
        f: impl FnOnce(&dyn Agent<W>) -> R + Send + 'static,
    ) -> Option<R> {
        match &mut self.exec {
            Exec::Inline(inline) => Some(f(&**inline.agents.get(id.index())?)),
            Exec::Actix(actix) => actix.visit(id, f),
        }
    }

    /// Ends the simulation and hands the agents back, in registration order.
    pub fn into_agents(mut self) -> Vec<BoxedAgent<W>> {
        match &mut self.exec {
            Exec::Inline(inline) => std::mem::take(&mut inline.agents),
            Exec::Actix(actix) => actix.take_agents(),
        }
    }
}

/// Calls one handler, turning a panic into an error that names the agent, the time and the message.
fn deliver<W: World>(
    agent: &mut dyn Agent<W>,
    env: &Envelope<W::Msg>,
    ctx: &mut Ctx<'_, W::Msg>,
    fx_fail: &mut Option<SimError>,
) {
    if let Err(p) = catch_unwind(AssertUnwindSafe(|| agent.handle(env, ctx))) {
        let what = panic_text(&p);
        *fx_fail = Some(SimError::Runtime(format!(
            "agent {} panicked at t={} handling `{}`: {what}",
            ctx.name(),
            env.at(),
            env.msg.kind()
        )));
    }
}

/// Calls `agent`'s start or end of the instant, turning a panic into an error that names the agent and the call.
fn call<W: World>(agent: &mut dyn Agent<W>, call: Call, ctx: &mut Ctx<'_, W::Msg>) -> Option<SimError> {
    let result = match call {
        Call::Start => catch_unwind(AssertUnwindSafe(|| agent.start(ctx))),
        Call::EndOfInstant => catch_unwind(AssertUnwindSafe(|| agent.end_of_instant(ctx))),
    };
    result.err().map(|p| {
        let when = match call {
            Call::Start => "at start".to_string(),
            Call::EndOfInstant => format!("at the end of the instant t={}", ctx.now()),
        };
        SimError::Runtime(format!("agent {} panicked {when}: {}", ctx.name(), panic_text(&p)))
    })
}

fn clock_panicked(p: &Box<dyn Any + Send>) -> SimError {
    SimError::Runtime(format!("the clock panicked: {}", panic_text(p)))
}

fn panic_text(p: &Box<dyn Any + Send>) -> String {
    p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned()).unwrap_or_default()
}

/// What the runtime asks of an agent besides deliveries.
#[derive(Clone, Copy)]
enum Call {
    /// Its start, before the first delivery.
    Start,
    /// Its end of the instant.
    EndOfInstant,
}

/// Runs one agent's start or end of the instant, collecting effects.
fn run_agent<W: World>(
    agent: &mut dyn Agent<W>,
    state: &mut AgentState,
    dir: &Directory,
    (now, round): (SimTime, u32),
    what: Call,
    fx: &mut Effects<W::Msg>,
) {
    let panicked = call(agent, what, &mut Ctx::new(now, round, dir, state, fx));
    if let Some(e) = panicked {
        fx.fail(state.id, e);
    }
}

/// Delivers one agent's share of a batch, in key order, collecting effects.
#[inline]
fn run_share<'e, W: World>(
    agent: &mut dyn Agent<W>,
    state: &mut AgentState,
    dir: &Directory,
    (now, round): (SimTime, u32),
    share: impl IntoIterator<Item = &'e Envelope<W::Msg>>,
    fx: &mut Effects<W::Msg>,
) {
    let mut panicked = None;
    {
        let mut ctx = Ctx::new(now, round, dir, state, fx);
        for env in share {
            if ctx.skip_cancelled(env) {
                continue;
            }
            deliver(agent, env, &mut ctx, &mut panicked);
            if panicked.is_some() {
                break;
            }
        }
    }
    if let Some(e) = panicked {
        fx.fail(state.id, e);
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Inline runtime.

struct Inline<W: World> {
    agents: Vec<BoxedAgent<W>>,
    states: Vec<AgentState>,
}

impl<W: World> Inline<W> {
    /// Delivers batch by batch exactly as the actix runtime does: each agent gets its share of a batch (its
    /// envelopes in key order) with an effects buffer of its own, merged before the next agent runs, so one agent's
    /// stop or failure is never seen by another agent of the same batch.
    fn run(&mut self, engine: &mut Engine<W::Msg>, start: bool, limit: SimTime) -> Result<(), SimError> {
        let dir = engine.directory().clone();
        let mut fx = Effects::default();
        if start {
            for (agent, state) in self.agents.iter_mut().zip(&mut self.states) {
                run_agent(&mut **agent, state, &dir, (SimTime::ZERO, 0), Call::Start, &mut fx);
                engine.absorb(&mut fx);
            }
            engine.end_batch()?;
        }
        let mut shares = Vec::new();
        loop {
            let step = engine.next_step(limit)?;
            let stamp = (engine.now(), engine.round());
            match step {
                Step::Done => break,
                Step::EndOfInstant(agents) => {
                    for id in agents {
                        let (agent, state) = (&mut *self.agents[id.index()], &mut self.states[id.index()]);
                        run_agent(agent, state, &dir, stamp, Call::EndOfInstant, &mut fx);
                        engine.absorb(&mut fx);
                    }
                }
                // The common case, one envelope: handed over where it lies, no grouping.
                Step::Deliver if engine.batch().len() == 1 => {
                    let env = engine.envelope(engine.batch()[0]);
                    let i = env.to.index();
                    run_share(&mut *self.agents[i], &mut self.states[i], &dir, stamp, [env], &mut fx);
                    engine.absorb(&mut fx);
                }
                Step::Deliver => {
                    // Stable: each agent's share stays in key order.
                    shares.clear();
                    shares.extend(engine.batch().iter().map(|&slot| (engine.envelope(slot).to, slot)));
                    shares.sort_by_key(|&(to, _)| to);
                    for share in shares.chunk_by(|a, b| a.0 == b.0) {
                        let i = share[0].0.index();
                        let envs = share.iter().map(|&(_, slot)| engine.envelope(slot));
                        run_share(&mut *self.agents[i], &mut self.states[i], &dir, stamp, envs, &mut fx);
                        engine.absorb(&mut fx);
                    }
                }
            }
            engine.end_batch()?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Actix runtime: one actor per agent; the clock is shared state that the actors advance.

/// Clock → agent actor: deliver the agent's share of one `(time, round)` batch, in order (or start the agent).
struct Deliver<M> {
    now: SimTime,
    round: u32,
    share: Share<M>,
}

impl<M: 'static> actix::Message for Deliver<M> {
    type Result = ();
}

/// What one agent gets of a batch. Most batches hold a single envelope: it travels without a vector.
enum Share<M> {
    Start,
    One(Envelope<M>),
    Many(Vec<Envelope<M>>),
    EndOfInstant,
}

/// Runner → agent actor (out of band, between runs): look at the agent.
struct Inspect<W: World>(InspectFn<W>);

type InspectFn<W> = Box<dyn FnOnce(&dyn Agent<W>) + Send>;

impl<W: World> actix::Message for Inspect<W> {
    type Result = ();
}

/// Runner → agent actor (at the end): hand the agent back.
struct TakeAgent<W>(std::marker::PhantomData<fn() -> W>);

impl<W: World> actix::Message for TakeAgent<W> {
    type Result = Option<BoxedAgent<W>>;
}

/// The clock of an actix run: the engine, lent for the run, and how many deliveries of the current batch are
/// still out. The agent actor that finishes the last delivery of a batch merges its effects and sends the next
/// batch out, in place: one actix message per delivery, instead of a round trip through a clock actor.
struct Clock<W: World> {
    run: Option<ClockRun<W::Msg>>,
    outstanding: usize,
    batch: Vec<Envelope<W::Msg>>,
    agents: Vec<Addr<AgentActor<W>>>,
}

struct ClockRun<M> {
    engine: Engine<M>,
    limit: SimTime,
    done: oneshot::Sender<(Engine<M>, Result<(), SimError>)>,
}

type SharedClock<W> = Arc<Mutex<Clock<W>>>;

fn lock<W: World>(clock: &SharedClock<W>) -> MutexGuard<'_, Clock<W>> {
    // A panic while the lock is held is caught and reported (see `AgentActor::handle`); the state is still
    // consistent enough for that.
    clock.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<W: World> Clock<W> {
    /// Merges one delivery's effects; the last of a batch moves the clock on.
    fn delivered(&mut self, fx: &mut Effects<W::Msg>) {
        if let Some(run) = self.run.as_mut() {
            run.engine.absorb(fx);
        }
        self.outstanding -= 1;
        if self.outstanding == 0 {
            self.step();
        }
    }

    /// Sends out the next batch, each agent its share, or ends the run.
    fn step(&mut self) {
        let Some(run) = self.run.as_mut() else { return };
        let engine = &mut run.engine;
        let step = match engine.end_batch().and_then(|()| engine.next_step(run.limit)) {
            Ok(Step::Done) => return self.finish(Ok(())),
            Ok(step) => step,
            Err(e) => return self.finish(Err(e)),
        };
        engine.take_batch(&mut self.batch);
        let (now, round) = (engine.now(), engine.round());
        if let Step::EndOfInstant(agents) = step {
            self.outstanding = agents.len();
            for id in agents {
                self.agents[id.index()].do_send(Deliver { now, round, share: Share::EndOfInstant });
            }
            return;
        }
        // The common case, one envelope, skips the grouping.
        if self.batch.len() == 1 {
            let env = self.batch.pop().expect("one envelope");
            self.outstanding = 1;
            return self.agents[env.to.index()].do_send(Deliver { now, round, share: Share::One(env) });
        }
        // The batch is in key order; a stable sort by receiver keeps that order within each agent's share.
        self.batch.sort_by_key(|e| e.to);
        let mut envs = self.batch.drain(..).peekable();
        while let Some(first) = envs.next() {
            let to = first.to;
            let share = match envs.next_if(|e| e.to == to) {
                None => Share::One(first),
                Some(second) => {
                    let mut many = vec![first, second];
                    many.extend(std::iter::from_fn(|| envs.next_if(|e| e.to == to)));
                    Share::Many(many)
                }
            };
            self.agents[to.index()].do_send(Deliver { now, round, share });
            self.outstanding += 1;
        }
    }

    fn finish(&mut self, result: Result<(), SimError>) {
        if let Some(run) = self.run.take() {
            // The runner may have gone (dropped its future): then there is no one to tell.
            let _ = run.done.send((run.engine, result));
        }
    }
}

/// The actix wrapper of any agent: owns the agent and its kernel state, runs its handlers on `Deliver`.
struct AgentActor<W: World> {
    agent: Option<BoxedAgent<W>>,
    state: AgentState,
    dir: Arc<Directory>,
    clock: SharedClock<W>,
    /// What the handlers produced, kept between deliveries so that a delivery allocates nothing.
    fx: Effects<W::Msg>,
}

impl<W: World> Actor for AgentActor<W> {
    type Context = Context<Self>;
}

impl<W: World> Handler<Deliver<W::Msg>> for AgentActor<W> {
    type Result = ();
    fn handle(&mut self, msg: Deliver<W::Msg>, _: &mut Context<Self>) {
        if let Some(agent) = self.agent.as_deref_mut() {
            let (stamp, state, dir, fx) = ((msg.now, msg.round), &mut self.state, &self.dir, &mut self.fx);
            match &msg.share {
                Share::Start => run_agent(agent, state, dir, stamp, Call::Start, fx),
                Share::One(env) => run_share(agent, state, dir, stamp, [env], fx),
                Share::Many(envs) => run_share(agent, state, dir, stamp, envs, fx),
                Share::EndOfInstant => run_agent(agent, state, dir, stamp, Call::EndOfInstant, fx),
            }
        }
        // The clock's own work (merging, the next batch, the trace) runs here with the lock held: a panic in it
        // must end the run with an error, not leave the runner waiting for a batch that never comes.
        let fx = &mut self.fx;
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| lock(&self.clock).delivered(fx))) {
            lock(&self.clock).finish(Err(clock_panicked(&p)));
        }
    }
}

impl<W: World> Handler<Inspect<W>> for AgentActor<W> {
    type Result = ();
    fn handle(&mut self, Inspect(f): Inspect<W>, _: &mut Context<Self>) {
        if let Some(agent) = self.agent.as_deref() {
            f(agent);
        }
    }
}

impl<W: World> Handler<TakeAgent<W>> for AgentActor<W> {
    type Result = Option<BoxedAgent<W>>;
    fn handle(&mut self, _: TakeAgent<W>, ctx: &mut Context<Self>) -> Self::Result {
        ctx.stop();
        self.agent.take()
    }
}

struct ActixExec<W: World> {
    system: SystemRunner,
    clock: SharedClock<W>,
    agents: Vec<Addr<AgentActor<W>>>,
    arbiters: Vec<Arbiter>,
}

impl<W: World> ActixExec<W> {
    fn start(dir: Arc<Directory>, agents: Vec<BoxedAgent<W>>, states: Vec<AgentState>, threads: usize) -> Self {
        let system = System::new();
        let arbiters: Vec<Arbiter> = (1..threads).map(|_| Arbiter::new()).collect();
        let clock = Arc::new(Mutex::new(Clock { run: None, outstanding: 0, batch: Vec::new(), agents: Vec::new() }));
        let agents = system.block_on(async {
            let mut addrs = Vec::with_capacity(agents.len());
            for (i, (agent, state)) in agents.into_iter().zip(states).enumerate() {
                let actor = AgentActor {
                    agent: Some(agent),
                    state,
                    dir: dir.clone(),
                    clock: clock.clone(),
                    fx: Effects::default(),
                };
                // Agent i lives on arbiter i mod threads; arbiter 0 is the system's own thread.
                let addr = match i % threads {
                    0 => actor.start(),
                    k => AgentActor::start_in_arbiter(&arbiters[k - 1].handle(), move |_| actor),
                };
                addrs.push(addr);
            }
            addrs
        });
        lock(&clock).agents = agents.clone();
        ActixExec { system, clock, agents, arbiters }
    }

    fn run(&mut self, engine: &mut Engine<W::Msg>, start: bool, limit: SimTime) -> Result<(), SimError> {
        let dir = engine.directory().clone();
        let lent = std::mem::replace(engine, Engine::new(dir, None));
        let (done, rx) = oneshot::channel();
        {
            let mut clock = lock(&self.clock);
            clock.run = Some(ClockRun { engine: lent, limit, done });
            if start {
                let now = SimTime::ZERO;
                for agent in &clock.agents {
                    agent.do_send(Deliver { now, round: 0, share: Share::Start });
                }
                clock.outstanding = clock.agents.len();
            }
            if clock.outstanding == 0 {
                clock.step();
            }
        }
        let (back, result) = self
            .system
            .block_on(rx)
            .map_err(|_| SimError::Runtime("the agent actors stopped before the run ended".into()))?;
        *engine = back;
        result
    }

    fn visit<R: Send + 'static>(
        &mut self,
        id: AgentId,
        f: impl FnOnce(&dyn Agent<W>) -> R + Send + 'static,
    ) -> Option<R> {
        let addr = self.agents.get(id.index())?;
        let (tx, rx) = oneshot::channel();
        addr.do_send(Inspect(Box::new(move |agent: &dyn Agent<W>| {
            let _ = tx.send(f(agent));
        })));
        self.system.block_on(rx).ok()
    }

    fn take_agents(&mut self) -> Vec<BoxedAgent<W>> {
        let addrs = std::mem::take(&mut self.agents);
        // The clock holds addresses too: drop them so the actors can stop.
        lock(&self.clock).agents.clear();
        self.system.block_on(async move {
            let mut out = Vec::with_capacity(addrs.len());
            for addr in addrs {
                if let Ok(Some(agent)) = addr.send(TakeAgent(std::marker::PhantomData)).await {
                    out.push(agent);
                }
            }
            out
        })
    }
}

impl<W: World> Drop for ActixExec<W> {
    fn drop(&mut self) {
        // The actors hold the clock and the clock their addresses: break the cycle.
        lock(&self.clock).agents.clear();
        for arbiter in self.arbiters.drain(..) {
            arbiter.stop();
            let _ = arbiter.join();
        }
    }
}
