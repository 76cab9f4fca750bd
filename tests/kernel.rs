//! Kernel guarantees: the same seed gives byte-identical traces on every runtime and thread count, and bad input
//! (unknown receivers, invalid delays, timers after a stop, panicking agents) gives errors, not panics.

use std::io::Write;
use std::sync::{Arc, Mutex};

use agents::protocol::{Msg, ProbeMsg, TimerMsg};
use agents::sim::trace::{self, TraceFilter, TraceSink};
use agents::sim::{
    Agent, AgentId, Ctx, End, EndReason, Envelope, GridMarket, Runtime, SimBuilder, SimError, SimTime, TimerId,
    TraceRecord,
};
use rand::RngExt;

/// An in-memory trace destination shared with the test.
#[derive(Clone, Default)]
struct Buf(Arc<Mutex<Vec<u8>>>);

impl Write for Buf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A busy random agent: forwards tokens to random peers with random (sometimes zero) delays, sets and cancels
/// timers, so that same-instant rounds, cancellations and cross-agent ties all occur.
struct Chaos {
    timer: Option<TimerId>,
}

impl Agent<GridMarket> for Chaos {
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        let n = ctx.directory().len() as u32;
        for id in 0..3 {
            let to = AgentId(ctx.rng().random_range(0..n));
            let d = ctx.rng().random_range(0.0..2.0);
            ctx.send_in(d, to, Msg::Probe(ProbeMsg::Token { id, hops: 0 }));
        }
    }

    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>) {
        let Msg::Probe(ProbeMsg::Token { id, hops: 0 }) = env.msg else { return };
        let n = ctx.directory().len() as u32;
        let to = AgentId(ctx.rng().random_range(0..n));
        // Delays on a coarse grid so that many events tie in time; a third are zero-delay.
        let d = f64::from(ctx.rng().random_range(0..4u32)) * 0.5;
        ctx.send_in(d, to, Msg::Probe(ProbeMsg::Token { id, hops: 0 }));
        if ctx.rng_stream(1).random_bool(0.3) {
            if let Some(t) = self.timer.take() {
                ctx.cancel(t);
            }
            self.timer = Some(ctx.wake_in(1.0, TimerMsg::Timeout { id: u64::from(id) }));
        }
    }
}

fn chaos_trace(seed: u64, rt: Runtime) -> (Vec<u8>, u64) {
    let buf = Buf::default();
    let mut b = SimBuilder::new(seed);
    for i in 0..40 {
        b.add(&format!("agent-{i}"), if i % 2 == 0 { "even" } else { "odd" }, Chaos { timer: None }).unwrap();
    }
    b.latency_kinds("even", "odd", 0.25).unwrap();
    b.trace(TraceSink::new(Box::new(buf.clone()), TraceFilter::default()));
    b.runtime(rt);
    let mut sim = b.build().unwrap();
    let out = sim.run(End::Until(SimTime::new(60.0).unwrap())).unwrap();
    let bytes = buf.0.lock().unwrap().clone();
    (bytes, out.delivered)
}

#[test]
fn test_same_seed_same_trace_on_every_runtime_and_thread_count() {
    let (reference, delivered) = chaos_trace(11, Runtime::Inline);
    assert!(delivered > 5_000, "the model must be busy enough to mean something: {delivered}");
    let records: Vec<TraceRecord> = trace::read(&reference[..]).unwrap();
    assert_eq!(records.len() as u64, delivered);
    assert!(records.iter().any(|r| r.round >= 2), "zero-delay cascades occur");
    assert!(records.iter().any(|r| r.kind == "timer.timeout"), "timers fire");
    for rt in
        [Runtime::Inline, Runtime::Actix { threads: 1 }, Runtime::Actix { threads: 2 }, Runtime::Actix { threads: 4 }]
    {
        let (bytes, _) = chaos_trace(11, rt);
        assert!(bytes == reference, "{rt:?} wrote a different trace");
    }
    assert!(chaos_trace(12, Runtime::Inline).0 != reference, "another seed gives another run");
}

/// Sets two timers due at the same instant; the first, firing, cancels the second.
struct Twins {
    second: Option<TimerId>,
    third: Option<TimerId>,
}

impl Agent<GridMarket> for Twins {
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        ctx.wake_in(1.0, TimerMsg::Timeout { id: 0 });
        self.second = Some(ctx.wake_in(1.0, TimerMsg::Timeout { id: 1 }));
        // A third one, cancelled by itself as it fires: too late, nothing to do.
        self.third = Some(ctx.wake_in(2.0, TimerMsg::Timeout { id: 2 }));
    }

    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>) {
        match env.msg {
            Msg::Timer(TimerMsg::Timeout { id: 0 }) => ctx.cancel(self.second.take().expect("set at start")),
            Msg::Timer(TimerMsg::Timeout { id: 1 }) => panic!("the cancelled timer was delivered"),
            _ => ctx.cancel(self.third.take().expect("set at start")),
        }
    }
}

#[test]
fn test_a_timer_cancelled_before_its_turn_in_the_batch_is_not_delivered() {
    // Both timers leave the event list together (same time, round, sender); the cancel comes between their
    // deliveries, which is still before the second "fired": it is neither delivered nor traced, on every runtime.
    for rt in [Runtime::Inline, Runtime::Actix { threads: 1 }, Runtime::Actix { threads: 2 }] {
        let buf = Buf::default();
        let mut b = SimBuilder::new(1);
        b.add("twins", "twins", Twins { second: None, third: None }).unwrap();
        b.trace(TraceSink::new(Box::new(buf.clone()), TraceFilter::default()));
        b.runtime(rt);
        let mut sim = b.build().unwrap();
        let out = sim.run(End::Quiescence).unwrap();
        assert_eq!(out.reason, EndReason::Quiescent, "{rt:?}");
        assert_eq!(out.delivered, 2, "{rt:?}");
        let records: Vec<TraceRecord> = trace::read(&buf.0.lock().unwrap()[..]).unwrap();
        let times: Vec<f64> = records.iter().map(|r| r.t).collect();
        assert_eq!(times, [1.0, 2.0], "{rt:?}");
    }
}

#[test]
fn test_trace_filter_by_agent_and_kind() {
    let buf = Buf::default();
    let mut b = SimBuilder::new(5);
    for i in 0..10 {
        b.add(&format!("agent-{i}"), "x", Chaos { timer: None }).unwrap();
    }
    let filter = TraceFilter { agents: vec!["agent-3".into()], kinds: vec!["probe.".into()] };
    b.trace(TraceSink::new(Box::new(buf.clone()), filter));
    let mut sim = b.build().unwrap();
    sim.run(End::Until(SimTime::new(20.0).unwrap())).unwrap();
    let records: Vec<TraceRecord> = trace::read(&buf.0.lock().unwrap()[..]).unwrap();
    assert!(!records.is_empty());
    assert!(records.iter().all(|r| (r.from == "agent-3" || r.to == "agent-3") && r.kind == "probe.token"));
}

/// Does one bad thing when it receives its first message.
enum Bad {
    UnknownReceiver,
    NanDelay,
    NegativeDelay,
    TimerAfterStop,
    Panic,
}

impl Agent<GridMarket> for Bad {
    fn handle(&mut self, _: &Envelope, ctx: &mut Ctx<'_>) {
        let msg = Msg::Probe(ProbeMsg::Reply { id: 1 });
        match self {
            Bad::UnknownReceiver => ctx.send(AgentId(99), msg),
            Bad::NanDelay => ctx.send_in(f64::NAN, ctx.me(), msg),
            Bad::NegativeDelay => ctx.send_in(-1.0, ctx.me(), msg),
            Bad::TimerAfterStop => {
                ctx.stop("done");
                ctx.wake_in(1.0, TimerMsg::Round { n: 0 });
            }
            Bad::Panic => panic!("boom"),
        }
    }
}

fn run_bad(bad: Bad, rt: Runtime) -> SimError {
    let mut b = SimBuilder::new(1);
    b.runtime(rt);
    let id = b.add("culprit", "bad", bad).unwrap();
    let mut sim = b.build().unwrap();
    sim.inject(SimTime::new(2.5).unwrap(), None, id, Msg::Probe(ProbeMsg::Request { id: 1 })).unwrap();
    sim.run(End::Quiescence).unwrap_err()
}

#[test]
fn test_bad_sends_are_errors_naming_sender_time_and_kind() {
    for rt in [Runtime::Inline, Runtime::Actix { threads: 1 }] {
        let e = run_bad(Bad::UnknownReceiver, rt).to_string();
        assert_eq!(e, "at t=2.5: culprit sent `probe.reply` to unknown agent #99");
        let e = run_bad(Bad::NanDelay, rt).to_string();
        assert!(e.starts_with("at t=2.5: culprit sent `probe.reply` with an invalid delay"), "{e}");
        assert!(e.ends_with("found NaN"), "{e}");
        let e = run_bad(Bad::NegativeDelay, rt).to_string();
        assert!(e.ends_with("found -1"), "{e}");
        let e = run_bad(Bad::TimerAfterStop, rt).to_string();
        assert_eq!(e, "at t=2.5: culprit set `timer.round` on a stopped simulation");
        let e = run_bad(Bad::Panic, rt).to_string();
        assert_eq!(e, "runtime failure: agent culprit panicked at t=2.5 handling `probe.request`: boom");
    }
}

/// Stops the run when it receives anything.
struct Stopper;

impl Agent<GridMarket> for Stopper {
    fn handle(&mut self, _: &Envelope, ctx: &mut Ctx<'_>) {
        ctx.stop("enough");
    }
}

#[test]
fn test_stop_request_ends_the_run_and_refuses_later_injections() {
    for rt in [Runtime::Inline, Runtime::Actix { threads: 1 }] {
        let mut b = SimBuilder::new(1);
        b.runtime(rt);
        let id = b.add("stopper", "x", Stopper).unwrap();
        let mut sim = b.build().unwrap();
        let msg = || Msg::Probe(ProbeMsg::Request { id: 1 });
        sim.inject(SimTime::new(1.0).unwrap(), None, id, msg()).unwrap();
        sim.inject(SimTime::new(2.0).unwrap(), None, id, msg()).unwrap();
        let out = sim.run(End::Quiescence).unwrap();
        assert_eq!(out.reason, EndReason::Stopped { by: "stopper".into(), reason: "enough".into() });
        assert_eq!((out.now.secs(), out.delivered, out.pending), (1.0, 1, 1));
        let e = sim.inject(SimTime::new(3.0).unwrap(), None, id, msg()).unwrap_err();
        assert_eq!(e.to_string(), "at t=1: env set `probe.request` on a stopped simulation");
    }
}

#[test]
fn test_injection_errors() {
    let mut b = SimBuilder::new(1);
    let id = b.add("a", "x", Stopper).unwrap();
    assert!(matches!(b.add("a", "x", Stopper), Err(SimError::DuplicateName { .. })));
    let mut sim = b.build().unwrap();
    let msg = || Msg::Probe(ProbeMsg::Request { id: 1 });
    let e = sim.inject(SimTime::ZERO, None, AgentId(5), msg()).unwrap_err();
    assert_eq!(e.to_string(), "at t=0: env sent `probe.request` to unknown agent #5");
    sim.run(End::Until(SimTime::new(10.0).unwrap())).unwrap();
    let e = sim.inject(SimTime::new(3.0).unwrap(), Some(id), id, msg()).unwrap_err();
    assert_eq!(e.to_string(), "at t=10: `probe.request` from a is dated t=3, in the past");
}

/// Records, at start, how many agents offer its service.
struct Seeker(&'static str, Arc<Mutex<Vec<(&'static str, usize)>>>);

impl Agent<GridMarket> for Seeker {
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        self.1.lock().unwrap().push((self.0, ctx.offering(self.0).len()));
    }

    fn handle(&mut self, _: &Envelope, _: &mut Ctx<'_>) {}
}

#[test]
fn test_services_given_at_registration_reach_the_directory_beside_the_worlds() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut b = SimBuilder::new(1);
    // A kind the world does not know offers what it is registered with; a standard kind what the world says of it.
    b.add_offering("plug-in", "echo", &["echoes"], Box::new(Seeker("echoes", seen.clone()))).unwrap();
    b.add("unregistered", "echo", Seeker("echoes", seen.clone())).unwrap();
    b.add("mb", "metabroker", Seeker("schedules-on-providers", seen.clone())).unwrap();
    b.build().unwrap().run(End::Quiescence).unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen, [("echoes", 1), ("echoes", 1), ("schedules-on-providers", 1)]);
}
