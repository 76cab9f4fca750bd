//! Message-level protocol tests of the kernel on the test bed: a request/reply protocol with a processing timer
//! and a cancellable client timeout, on both runtimes.

use agents::protocol::{Msg, ProbeMsg, TimerMsg};
use agents::sim::{Agent, AgentId, Ctx, EndReason, Envelope, GridMarket, Runtime, SimError};
use agents::testbed::{TestBed, expect};

/// Answers `Request { id }` with `Reply { id }` after `service` seconds of processing (a timer).
struct Server {
    service: f64,
    waiting: Vec<(u64, AgentId)>,
}

impl Agent<GridMarket> for Server {
    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>) {
        match env.msg {
            Msg::Probe(ProbeMsg::Request { id }) => {
                self.waiting.push((id, env.from()));
                ctx.wake_in(self.service, TimerMsg::JobEnd { job: id });
            }
            Msg::Timer(TimerMsg::JobEnd { job }) => {
                if let Some(p) = self.waiting.iter().position(|(id, _)| *id == job) {
                    let (id, to) = self.waiting.remove(p);
                    ctx.send(to, Msg::Probe(ProbeMsg::Reply { id }));
                }
            }
            _ => {}
        }
    }
}

/// Sends one request at start and gives up after `timeout` seconds; a reply cancels the timeout.
struct Client {
    server: &'static str,
    timeout: f64,
    timer: Option<agents::sim::TimerId>,
    answered: Option<f64>,
    timed_out: Option<f64>,
}

impl Client {
    fn new(server: &'static str, timeout: f64) -> Client {
        Client { server, timeout, timer: None, answered: None, timed_out: None }
    }
}

impl Agent<GridMarket> for Client {
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        let server = ctx.lookup(self.server).expect("server registered");
        ctx.send(server, Msg::Probe(ProbeMsg::Request { id: 1 }));
        self.timer = Some(ctx.wake_in(self.timeout, TimerMsg::Timeout { id: 1 }));
    }

    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>) {
        match env.msg {
            Msg::Probe(ProbeMsg::Reply { .. }) if self.timed_out.is_none() => {
                self.answered = Some(ctx.now().secs());
                if let Some(t) = self.timer.take() {
                    ctx.cancel(t);
                }
            }
            Msg::Timer(TimerMsg::Timeout { .. }) => self.timed_out = Some(ctx.now().secs()),
            _ => {}
        }
    }
}

fn runtimes() -> [Runtime; 3] {
    [Runtime::Inline, Runtime::Actix { threads: 1 }, Runtime::Actix { threads: 2 }]
}

#[test]
fn test_reply_before_timeout_cancels_the_timer() {
    for rt in runtimes() {
        let mut tb = TestBed::new(1);
        tb.runtime(rt);
        let client = tb.agent("client", "broker", Client::new("server", 5.0));
        tb.agent("server", "provider", Server { service: 2.0, waiting: vec![] });
        let out = tb.run_to_quiescence().unwrap();
        tb.assert_exact(&[
            expect("probe.request").from("client").to("server").at(0.0),
            expect("timer.job_end").from("server").to("server").at(2.0),
            expect("probe.reply").from("server").to("client").at(2.0),
        ]);
        tb.assert_none(&expect("timer.timeout"));
        // The cancelled timeout (t=5) never moves the clock.
        assert_eq!(out.now.secs(), 2.0, "{rt:?}");
        assert_eq!(out.reason, EndReason::Quiescent);
        let seen = tb.sim().inspect(client, |c: &Client| (c.answered, c.timed_out)).unwrap();
        assert_eq!(seen, (Some(2.0), None), "{rt:?}");
    }
}

#[test]
fn test_timeout_fires_when_the_server_is_slow() {
    for rt in runtimes() {
        let mut tb = TestBed::new(1);
        tb.runtime(rt);
        let client = tb.agent("client", "broker", Client::new("server", 5.0));
        tb.agent("server", "provider", Server { service: 10.0, waiting: vec![] });
        tb.run_to_quiescence().unwrap();
        tb.assert_exact(&[
            expect("probe.request").at(0.0),
            expect("timer.timeout").from("client").to("client").at(5.0),
            expect("timer.job_end").at(10.0),
            expect("probe.reply").to("client").at(10.0),
        ]);
        let seen = tb.sim().inspect(client, |c: &Client| (c.answered, c.timed_out)).unwrap();
        assert_eq!(seen, (None, Some(5.0)), "{rt:?}");
    }
}

#[test]
fn test_scripted_probe_and_injection() {
    let mut tb = TestBed::new(3);
    // A probe standing in for a server: replies 1.5 s after each request.
    tb.scripted("fake-server", |env, ctx| {
        if let Msg::Probe(ProbeMsg::Request { id }) = env.msg {
            ctx.send_in(1.5, env.from(), Msg::Probe(ProbeMsg::Reply { id }));
        }
    });
    tb.probe("user");
    tb.inject(3.0, "user", "fake-server", Msg::Probe(ProbeMsg::Request { id: 7 }));
    tb.inject(1.0, "user", "fake-server", Msg::Probe(ProbeMsg::Request { id: 6 }));
    let out = tb.run_until(4.0).unwrap();
    assert_eq!(out.now.secs(), 4.0);
    assert_eq!(out.reason, EndReason::Horizon);
    tb.assert_exact(&[
        expect("probe.request").at(1.0).msg(Msg::Probe(ProbeMsg::Request { id: 6 })),
        expect("probe.reply").to("user").at(2.5),
        expect("probe.request").at(3.0),
    ]);
    // Resuming delivers the rest.
    tb.run_to_quiescence().unwrap();
    tb.assert_in_order(&[expect("probe.reply").msg(Msg::Probe(ProbeMsg::Reply { id: 7 })).at(4.5)]);
}

#[test]
fn test_latency_per_kind_and_pair() {
    for rt in runtimes() {
        let mut b = agents::sim::SimBuilder::new(1);
        b.runtime(rt);
        b.add("client", "broker", Client::new("server", 5.0)).unwrap();
        b.add("server", "provider", Server { service: 2.0, waiting: vec![] }).unwrap();
        b.latency_kinds("broker", "provider", 0.5).unwrap();
        b.latency_pair("server", "client", 0.25).unwrap();
        let mut sim = b.build().unwrap();
        let out = sim.run(agents::sim::End::Quiescence).unwrap();
        // request 0.5 s, processing 2 s (timers have no latency), reply 0.25 s.
        assert_eq!(out.now.secs(), 2.75, "{rt:?}");
    }
    let mut b = agents::sim::SimBuilder::new(1);
    assert!(matches!(b.latency_default(f64::NAN), Err(SimError::BadLatency { .. })));
    assert!(matches!(b.latency_pair("a", "b", 1.0), Err(SimError::NoSuchName { .. })));
}

#[test]
fn test_failed_expectation_shows_the_trace_around_the_mismatch() {
    let mut tb = TestBed::new(1);
    tb.agent("client", "broker", Client::new("server", 5.0));
    tb.agent("server", "provider", Server { service: 2.0, waiting: vec![] });
    tb.run_to_quiescence().unwrap();
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        tb.assert_exact(&[expect("probe.request"), expect("probe.reply").at(2.0)]);
    }))
    .unwrap_err();
    let text = err.downcast_ref::<String>().unwrap();
    assert!(text.contains("delivery 1 does not match: expected probe.reply at t=2"), "{text}");
    assert!(text.contains(">>>   1  t=2"), "{text}");
    assert!(text.contains("server -> server  timer.job_end"), "{text}");
}
