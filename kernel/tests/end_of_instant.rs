//! The end of an instant: an agent that asks for it is called once every message of the instant is delivered,
//! on both runtimes alike.

use gridmarket_kernel::{Agent, AgentId, Ctx, End, Envelope, Message, Runtime, SimBuilder, SimError, SimTime, World};
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize)]
enum Msg {
    /// Forward to the other agent without delay, `hops` more times.
    Relay {
        hops: u32,
    },
    Hello,
}

impl Message for Msg {
    fn kind(&self) -> &'static str {
        match self {
            Msg::Relay { .. } => "relay",
            Msg::Hello => "hello",
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

/// Logs what it sees; at every message asks for the end of the instant; at the end of an instant greets its peer
/// once (which may lead to another end of the instant), or asks again forever when `greedy`.
struct Logger {
    peer: AgentId,
    log: Vec<String>,
    greeted: bool,
    greedy: bool,
}

impl Agent<Test> for Logger {
    fn handle(&mut self, env: &Envelope<Msg>, ctx: &mut Ctx<'_, Msg>) {
        self.log.push(format!("t={} r{} {}", ctx.now(), env.key.round, env.msg.kind()));
        if let Msg::Relay { hops } = env.msg
            && hops > 0
        {
            ctx.send(self.peer, Msg::Relay { hops: hops - 1 });
        }
        ctx.at_end_of_instant();
        ctx.at_end_of_instant();
    }

    fn end_of_instant(&mut self, ctx: &mut Ctx<'_, Msg>) {
        self.log.push(format!("t={} end", ctx.now()));
        if self.greedy {
            ctx.at_end_of_instant();
        } else if !self.greeted {
            self.greeted = true;
            ctx.send(self.peer, Msg::Hello);
        }
    }

    fn report(&self, _: SimTime, out: &mut Vec<String>) {
        out.extend(self.log.iter().cloned());
    }
}

fn logger(peer: u32, greedy: bool) -> Logger {
    Logger { peer: AgentId(peer), log: Vec::new(), greeted: false, greedy }
}

#[test]
fn an_agent_is_called_once_after_the_last_message_of_the_instant() {
    for rt in RUNTIMES {
        let mut b = SimBuilder::<Test>::new(1);
        b.runtime(rt);
        let a = b.add("a", "x", logger(1, false)).unwrap();
        b.add("b", "x", logger(0, false)).unwrap();
        let mut sim = b.build().unwrap();
        // A relay of 3 zero-delay hops between a and b at t=5, and a message for a at t=7.
        sim.inject(t(5.0), None, a, Msg::Relay { hops: 3 }).unwrap();
        sim.inject(t(7.0), None, a, Msg::Relay { hops: 0 }).unwrap();
        sim.run(End::Quiescence).unwrap();
        let log_a = sim.report(a).unwrap();
        let log_b = sim.report(AgentId(1)).unwrap();
        // Each is called once at t=5, after the relay; its greeting makes the other's instant end again.
        assert_eq!(
            log_a,
            ["t=5 r0 relay", "t=5 r2 relay", "t=5 end", "t=5 r5 hello", "t=5 end", "t=7 r0 relay", "t=7 end"],
            "{rt:?}"
        );
        assert_eq!(log_b, ["t=5 r1 relay", "t=5 r3 relay", "t=5 end", "t=5 r5 hello", "t=5 end"], "{rt:?}");
    }
}

#[test]
fn an_end_of_instant_that_always_asks_again_is_a_loop() {
    for rt in RUNTIMES {
        let mut b = SimBuilder::<Test>::new(1);
        b.runtime(rt).max_rounds(50);
        let a = b.add("a", "x", logger(0, true)).unwrap();
        let mut sim = b.build().unwrap();
        sim.inject(t(1.0), None, a, Msg::Hello).unwrap();
        let e = sim.run(End::Quiescence).unwrap_err();
        assert_eq!(e, SimError::ZeroDelayLoop { at: t(1.0), rounds: 50, agents: vec!["a".into()] }, "{rt:?}");
    }
}
