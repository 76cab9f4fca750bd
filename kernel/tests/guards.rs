//! The kernel's guards, on a world of its own (no market types): zero-delay loops end with an error, timer ids
//! are never reused, a panic in the clock is an error on both runtimes, and both runtimes see one agent's stop or
//! failure exactly alike.

use std::io::Write;

use gridmarket_kernel::trace::{TraceFilter, TraceSink};
use gridmarket_kernel::{
    Agent, AgentId, Ctx, End, EndReason, Envelope, Message, Runtime, SimBuilder, SimError, SimTime, World,
};
use serde::{Serialize, Serializer};

/// The messages of this test world.
#[derive(Clone, Debug, PartialEq)]
enum Msg {
    Ping,
    Tick,
    /// Serialising it panics: a fault inside the clock (the trace writer) rather than inside an agent.
    Poison,
}

impl Serialize for Msg {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Msg::Poison => panic!("poisoned message"),
            other => s.serialize_str(other.kind()),
        }
    }
}

impl Message for Msg {
    fn kind(&self) -> &'static str {
        match self {
            Msg::Ping => "ping",
            Msg::Tick => "tick",
            Msg::Poison => "poison",
        }
    }
}

struct Test;

impl World for Test {
    type Msg = Msg;
    type Report = Vec<String>;
}

const RUNTIMES: [Runtime; 3] = [Runtime::Inline, Runtime::Actix { threads: 1 }, Runtime::Actix { threads: 2 }];

fn t(s: f64) -> SimTime {
    SimTime::new(s).unwrap()
}

/// Answers every ping with a ping to `peer`, without delay: two of them loop forever at one instant.
struct Echo {
    peer: AgentId,
}

impl Agent<Test> for Echo {
    fn handle(&mut self, _: &Envelope<Msg>, ctx: &mut Ctx<'_, Msg>) {
        ctx.send(self.peer, Msg::Ping);
    }
}

#[test]
fn a_zero_delay_loop_is_an_error_naming_the_agents() {
    for rt in RUNTIMES {
        let mut b = SimBuilder::<Test>::new(1);
        b.runtime(rt).max_rounds(1_000);
        let a = b.add("alice", "echo", Echo { peer: AgentId(1) }).unwrap();
        b.add("bob", "echo", Echo { peer: AgentId(0) }).unwrap();
        b.add("carol", "echo", Echo { peer: AgentId(2) }).unwrap();
        let mut sim = b.build().unwrap();
        sim.inject(t(5.0), None, a, Msg::Ping).unwrap();
        let e = sim.run(End::Quiescence).unwrap_err();
        assert_eq!(
            e,
            SimError::ZeroDelayLoop { at: t(5.0), rounds: 1_000, agents: vec!["alice".into(), "bob".into()] },
            "{rt:?}"
        );
        assert!(e.to_string().contains("more than 1000 rounds"), "{e}");
    }
}

#[test]
fn the_default_cap_stops_a_loop_too() {
    let mut b = SimBuilder::<Test>::new(1);
    b.runtime(Runtime::Inline);
    let a = b.add("alice", "echo", Echo { peer: AgentId(0) }).unwrap();
    let mut sim = b.build().unwrap();
    sim.inject(t(0.0), None, a, Msg::Ping).unwrap();
    assert!(matches!(sim.run(End::Quiescence), Err(SimError::ZeroDelayLoop { rounds: 100_000, .. })));
}

/// Sets two timers, the first with a bad delay.
struct Timers;

impl Agent<Test> for Timers {
    fn start(&mut self, ctx: &mut Ctx<'_, Msg>) {
        // The very first send of an agent fails: its id must still be a fresh one (it used to be `seq - 1`).
        let bad = ctx.wake_in(f64::NAN, Msg::Tick);
        let good = ctx.wake_in(1.0, Msg::Tick);
        assert_ne!(bad, good);
        ctx.cancel(bad);
    }

    fn handle(&mut self, _: &Envelope<Msg>, _: &mut Ctx<'_, Msg>) {}
}

#[test]
fn a_refused_timer_gets_an_id_of_its_own() {
    for rt in RUNTIMES {
        let mut b = SimBuilder::<Test>::new(1);
        b.runtime(rt);
        b.add("timers", "t", Timers).unwrap();
        let e = b.build().unwrap().run(End::Quiescence).unwrap_err();
        assert!(matches!(e, SimError::BadDelay { .. }), "{rt:?}: {e}");
    }
}

/// Sets a timer at start and cancels it at once, then sets one and cancels it after it fired, `n` times.
struct Churn {
    n: u32,
    last: Option<gridmarket_kernel::TimerId>,
}

impl Agent<Test> for Churn {
    fn start(&mut self, ctx: &mut Ctx<'_, Msg>) {
        let far = ctx.wake_in(1e9, Msg::Tick);
        ctx.cancel(far);
        self.last = Some(ctx.wake_in(1.0, Msg::Tick));
    }

    fn handle(&mut self, _: &Envelope<Msg>, ctx: &mut Ctx<'_, Msg>) {
        // Cancelling a timer that already fired does nothing.
        if let Some(fired) = self.last.take() {
            ctx.cancel(fired);
        }
        if self.n > 0 {
            self.n -= 1;
            self.last = Some(ctx.wake_in(1.0, Msg::Tick));
        }
    }
}

#[test]
fn cancelled_timers_leave_nothing_pending() {
    for rt in RUNTIMES {
        let mut b = SimBuilder::<Test>::new(1);
        b.runtime(rt);
        b.add("churn", "c", Churn { n: 1_000, last: None }).unwrap();
        let out = b.build().unwrap().run(End::Quiescence).unwrap();
        // The far timer was cancelled: the run is quiescent at the last tick, not at 1e9 s.
        assert_eq!((out.reason, out.now, out.delivered, out.pending), (EndReason::Quiescent, t(1001.0), 1001, 0));
    }
}

/// Sends a message that cannot be written to the trace.
struct Poisoner;

impl Agent<Test> for Poisoner {
    fn start(&mut self, ctx: &mut Ctx<'_, Msg>) {
        ctx.send_in(1.0, ctx.me(), Msg::Poison);
    }

    fn handle(&mut self, _: &Envelope<Msg>, _: &mut Ctx<'_, Msg>) {}
}

#[test]
fn a_panic_in_the_clock_is_an_error_not_a_hang() {
    for rt in RUNTIMES {
        let mut b = SimBuilder::<Test>::new(1);
        b.runtime(rt);
        b.add("poisoner", "p", Poisoner).unwrap();
        b.trace(TraceSink::new(Box::new(std::io::sink()) as Box<dyn Write + Send>, TraceFilter::default()));
        let e = b.build().unwrap().run(End::Quiescence).unwrap_err();
        assert_eq!(e, SimError::Runtime("the clock panicked: poisoned message".into()), "{rt:?}");
    }
}

/// At its first message: stops the run, or sets a timer, or fails with a bad delay.
enum Act {
    Stop,
    SetTimer,
    Fail,
}

impl Agent<Test> for Act {
    fn handle(&mut self, _: &Envelope<Msg>, ctx: &mut Ctx<'_, Msg>) {
        match self {
            Act::Stop => ctx.stop("enough"),
            Act::SetTimer => {
                ctx.wake_in(1.0, Msg::Tick);
            }
            Act::Fail => ctx.send_in(-1.0, ctx.me(), Msg::Tick),
        }
    }
}

/// Builds `agents`, injects one message to each at t=1 in reverse order (the last agent's message first in key
/// order), and runs.
fn same_instant(rt: Runtime, agents: Vec<Act>) -> Result<EndReason, SimError> {
    let mut b = SimBuilder::<Test>::new(1);
    b.runtime(rt);
    let ids: Vec<AgentId> =
        agents.into_iter().enumerate().map(|(i, a)| b.add(&format!("a{i}"), "x", a).unwrap()).collect();
    let mut sim = b.build().unwrap();
    for &id in ids.iter().rev() {
        sim.inject(t(1.0), None, id, Msg::Ping).unwrap();
    }
    sim.run(End::Quiescence).map(|o| o.reason)
}

#[test]
fn one_agents_stop_is_not_seen_by_another_agent_of_the_same_batch() {
    for rt in RUNTIMES {
        let out = same_instant(rt, vec![Act::Stop, Act::SetTimer]);
        assert_eq!(out, Ok(EndReason::Stopped { by: "a0".into(), reason: "enough".into() }), "{rt:?}");
    }
}

#[test]
fn of_two_failures_in_one_batch_the_lowest_agent_is_reported() {
    for rt in RUNTIMES {
        let e = same_instant(rt, vec![Act::SetTimer, Act::Fail, Act::Fail]).unwrap_err();
        assert!(matches!(&e, SimError::BadDelay { sender, .. } if sender == "a1"), "{rt:?}: {e}");
    }
}
