//! A test bed for message-level protocol tests.
//!
//! Build a few agents plus scripted probes, inject messages at given times, run to a time or to quiescence, and
//! assert on the ordered deliveries. A failed assertion prints the deliveries around the mismatch:
//!
//! ```text
//! delivery 2 does not match: expected probe.reply client <- server at t=3
//!      0  t=1        r0  client -> server  probe.request  Probe(Request { id: 1 })
//!      1  t=1        r1  server -> server  timer.timeout  Timer(Timeout { id: 1 })
//! >>>  2  t=2        r0  server -> client  probe.reply    Probe(Reply { id: 1 })
//! ```

use std::fmt::Write as _;

use crate::protocol::Msg;
use crate::sim::{
    Agent, AgentId, Ctx, End, Envelope, GridMarket, Outcome, Runtime, SimBuilder, SimError, SimTime, Simulation,
};

/// A probe's scripted reaction to what it receives.
pub type Script = Box<dyn FnMut(&Envelope, &mut Ctx<'_>) + Send>;

/// A scripted stand-in for a peer: it does nothing but run its script (if any) on each delivery.
pub struct Probe {
    script: Option<Script>,
}

impl Agent<GridMarket> for Probe {
    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>) {
        if let Some(script) = &mut self.script {
            script(env, ctx);
        }
    }
}

/// One delivery, with names resolved, as the test bed shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Delivery {
    /// Delivery time \[s\].
    pub at: f64,
    /// Zero-delay round within the instant.
    pub round: u32,
    /// Sender (`env` for injected messages without a sender).
    pub from: String,
    /// Receiver.
    pub to: String,
    /// The message.
    pub msg: Msg,
}

/// What a delivery must look like; unset fields match anything.
#[derive(Clone, Debug)]
pub struct Expect {
    kind: String,
    from: Option<String>,
    to: Option<String>,
    at: Option<f64>,
    msg: Option<Msg>,
}

/// Expects a delivery whose kind is `kind` (a prefix such as `"job."` matches every job message).
pub fn expect(kind: &str) -> Expect {
    Expect { kind: kind.to_string(), from: None, to: None, at: None, msg: None }
}

impl Expect {
    /// ... sent by `name`.
    pub fn from(mut self, name: &str) -> Expect {
        self.from = Some(name.to_string());
        self
    }

    /// ... received by `name`.
    pub fn to(mut self, name: &str) -> Expect {
        self.to = Some(name.to_string());
        self
    }

    /// ... delivered at `t` (within 1e-9 s).
    pub fn at(mut self, t: f64) -> Expect {
        self.at = Some(t);
        self
    }

    /// ... carrying exactly `msg`.
    pub fn msg(mut self, msg: Msg) -> Expect {
        self.msg = Some(msg);
        self
    }

    /// Whether `d` matches.
    pub fn matches(&self, d: &Delivery) -> bool {
        d.msg.kind().starts_with(&self.kind)
            && self.from.as_ref().is_none_or(|f| *f == d.from)
            && self.to.as_ref().is_none_or(|t| *t == d.to)
            && self.at.is_none_or(|t| (t - d.at).abs() <= 1e-9)
            && self.msg.as_ref().is_none_or(|m| *m == d.msg)
    }

    fn describe(&self) -> String {
        let mut s = self.kind.clone();
        if let Some(t) = &self.to {
            write!(s, " {t}").unwrap();
            s.push_str(" <-");
        }
        if let Some(f) = &self.from {
            write!(s, " {f}").unwrap();
        }
        if let Some(t) = self.at {
            write!(s, " at t={t}").unwrap();
        }
        if let Some(m) = &self.msg {
            write!(s, " {m:?}").unwrap();
        }
        s
    }
}

/// Agents, probes and injections, run on the chosen runtime with every delivery recorded.
pub struct TestBed {
    builder: Option<SimBuilder>,
    sim: Option<Simulation>,
    pending: Vec<(f64, Option<String>, String, Msg)>,
}

impl TestBed {
    /// A test bed whose random streams derive from `seed`, on the default runtime (actix, one thread).
    pub fn new(seed: u64) -> TestBed {
        let mut builder = SimBuilder::new(seed);
        builder.record();
        TestBed { builder: Some(builder), sim: None, pending: Vec::new() }
    }

    fn builder(&mut self) -> &mut SimBuilder {
        self.builder.as_mut().expect("agents are added before the first run")
    }

    /// Chooses the runtime.
    pub fn runtime(&mut self, runtime: Runtime) -> &mut Self {
        self.builder().runtime(runtime);
        self
    }

    /// Adds an agent under test. Panics on a duplicate name (a mistake in the test itself).
    pub fn agent(&mut self, name: &str, kind: &str, agent: impl Agent<GridMarket>) -> AgentId {
        self.builder().add(name, kind, agent).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Adds a silent probe of kind `probe`.
    pub fn probe(&mut self, name: &str) -> AgentId {
        self.agent(name, "probe", Probe { script: None })
    }

    /// Adds a probe that runs `script` on every delivery (e.g. to answer requests).
    pub fn scripted(&mut self, name: &str, script: impl FnMut(&Envelope, &mut Ctx<'_>) + Send + 'static) -> AgentId {
        self.agent(name, "probe", Probe { script: Some(Box::new(script)) })
    }

    /// Delivers `msg` from the agent `from` to `to` at time `at`.
    pub fn inject(&mut self, at: f64, from: &str, to: &str, msg: Msg) -> &mut Self {
        self.pending.push((at, Some(from.to_string()), to.to_string(), msg));
        self
    }

    /// Delivers `msg` from the outside world (`env`) to `to` at time `at`.
    pub fn inject_env(&mut self, at: f64, to: &str, msg: Msg) -> &mut Self {
        self.pending.push((at, None, to.to_string(), msg));
        self
    }

    /// Runs until every event dated at or before `t` is delivered.
    pub fn run_until(&mut self, t: f64) -> Result<Outcome, SimError> {
        let t = SimTime::new(t).map_err(|e| SimError::Runtime(format!("run_until: {e}")))?;
        self.run(End::Until(t))
    }

    /// Runs until nothing is pending (or an agent stops the run).
    pub fn run_to_quiescence(&mut self) -> Result<Outcome, SimError> {
        self.run(End::Quiescence)
    }

    fn run(&mut self, end: End) -> Result<Outcome, SimError> {
        if let Some(b) = self.builder.take() {
            self.sim = Some(b.build()?);
        }
        let sim = self.sim.as_mut().expect("built above");
        for (at, from, to, msg) in self.pending.drain(..) {
            let dir = sim.directory().clone();
            let id = |n: &str| dir.lookup(n).ok_or_else(|| SimError::NoSuchName { name: n.to_string() });
            let from = from.as_deref().map(id).transpose()?;
            let at = SimTime::new(at).map_err(|e| SimError::Runtime(format!("inject: {e}")))?;
            sim.inject(at, from, id(&to)?, msg)?;
        }
        sim.run(end)
    }

    /// The simulation, once run.
    pub fn sim(&mut self) -> &mut Simulation {
        self.sim.as_mut().expect("run the test bed first")
    }

    /// Every delivery so far, in order.
    pub fn deliveries(&self) -> Vec<Delivery> {
        let Some(sim) = &self.sim else { return Vec::new() };
        let dir = sim.directory();
        let name = |id: AgentId| dir.name(id).unwrap_or("env").to_string();
        sim.deliveries()
            .iter()
            .map(|e| Delivery {
                at: e.at().secs(),
                round: e.key.round,
                from: name(e.from()),
                to: name(e.to),
                msg: e.msg.clone(),
            })
            .collect()
    }

    /// Asserts that the deliveries are exactly `expected`, in order.
    #[track_caller]
    pub fn assert_exact(&self, expected: &[Expect]) {
        let got = self.deliveries();
        for (i, exp) in expected.iter().enumerate() {
            match got.get(i) {
                Some(d) if exp.matches(d) => {}
                Some(_) => panic!("delivery {i} does not match: expected {}\n{}", exp.describe(), window(&got, i)),
                None => panic!("only {} deliveries; expected {} next\n{}", got.len(), exp.describe(), window(&got, i)),
            }
        }
        if got.len() > expected.len() {
            panic!(
                "{} unexpected deliveries after the expected ones\n{}",
                got.len() - expected.len(),
                window(&got, expected.len())
            );
        }
    }

    /// Asserts that `expected` occur in this order among the deliveries (others may come between).
    #[track_caller]
    pub fn assert_in_order(&self, expected: &[Expect]) {
        let got = self.deliveries();
        let mut from = 0;
        for exp in expected {
            match got[from..].iter().position(|d| exp.matches(d)) {
                Some(p) => from += p + 1,
                None => panic!("no delivery at or after #{from} matches {}\n{}", exp.describe(), window(&got, from)),
            }
        }
    }

    /// Asserts that no delivery matches `unexpected`.
    #[track_caller]
    pub fn assert_none(&self, unexpected: &Expect) {
        let got = self.deliveries();
        if let Some(i) = got.iter().position(|d| unexpected.matches(d)) {
            panic!("delivery {i} should not happen: {}\n{}", unexpected.describe(), window(&got, i));
        }
    }
}

/// The deliveries within 6 of `i`, with `i` marked.
fn window(got: &[Delivery], i: usize) -> String {
    let mut s = String::new();
    let lo = i.saturating_sub(6);
    let hi = (i + 7).min(got.len());
    for (j, d) in got.iter().enumerate().take(hi).skip(lo) {
        let mark = if j == i { ">>>" } else { "   " };
        let _ = writeln!(
            s,
            "{mark} {j:>3}  t={:<9} r{}  {} -> {}  {}  {:?}",
            d.at,
            d.round,
            d.from,
            d.to,
            d.msg.kind(),
            d.msg
        );
    }
    if got.is_empty() {
        s.push_str("    (no deliveries)\n");
    }
    s
}
