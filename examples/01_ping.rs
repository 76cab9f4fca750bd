//! Example: a user broker asks a provider to run a job and waits for its completion.
//!
//! This example demonstrates in particular:
//! * agents as plain Rust (`Agent::handle`) run as actix actors on the simulated clock,
//! * a request/reply exchange, a timer (the job's runtime), and the message trace.
//!
//! ```text
//! ┌────────┐ job.submit   ┌──────────┐
//! │ broker │─────────────►│ provider │──┐ timer.job_end (after the runtime)
//! │        │◄─────────────│          │◄─┘
//! └────────┘ job.accepted, job.completed
//! ```
//!
//! Run: `cargo run --example 01_ping`

use agents::protocol::{JobMsg, JobSpec, Msg, TimerMsg};
use agents::sim::trace::{TraceFilter, TraceSink};
use agents::sim::{Agent, Ctx, End, Envelope, GridMarket, SimBuilder, SimTime};

/// Submits one 4-PE job of 120 s at start and records when it completes.
struct Broker {
    done_at: Option<f64>,
}

impl Agent<GridMarket> for Broker {
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        let provider = ctx.lookup("provider").expect("provider registered");
        let job = JobSpec { estimate: 150.0, ..JobSpec::new(1, ctx.me(), 4, 120.0) };
        ctx.send(provider, Msg::Job(JobMsg::Submit(Box::new(job))));
    }

    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>) {
        if let Msg::Job(JobMsg::Completed { .. }) = env.msg {
            self.done_at = Some(ctx.now().secs());
        }
    }
}

/// Accepts every job, runs it for its runtime, and charges 0.01 G$ per PE-second.
struct Provider {
    running: Vec<JobSpec>,
}

impl Agent<GridMarket> for Provider {
    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>) {
        match &env.msg {
            Msg::Job(JobMsg::Submit(job)) => {
                ctx.send(job.owner, Msg::Job(JobMsg::Accepted { job: job.id }));
                ctx.wake_in(job.runtime, TimerMsg::JobEnd { job: job.id });
                self.running.push((**job).clone());
            }
            Msg::Timer(TimerMsg::JobEnd { job }) => {
                if let Some(p) = self.running.iter().position(|j| j.id == *job) {
                    let j = self.running.remove(p);
                    let cost = 0.01 * f64::from(j.pes) * j.runtime;
                    ctx.send(j.owner, Msg::Job(JobMsg::Completed { job: j.id, cost }));
                }
            }
            _ => {}
        }
    }
}

fn main() {
    let mut b = SimBuilder::new(1);
    let broker = b.add("broker", "user-broker", Broker { done_at: None }).expect("unique name");
    b.add("provider", "provider", Provider { running: Vec::new() }).expect("unique name");
    b.latency_kinds("user-broker", "provider", 0.5).expect("known kinds");
    b.latency_kinds("provider", "user-broker", 0.5).expect("known kinds");
    b.trace(TraceSink::new(Box::new(std::io::stdout()), TraceFilter::default()));
    let mut sim = b.build().expect("valid simulation");
    let out = sim.run(End::Until(SimTime::new(3600.0).expect("valid time"))).expect("run");
    let done = sim.inspect(broker, |b: &Broker| b.done_at).flatten();
    println!("ended at t={} ({:?}), {} deliveries; job 1 completed at t={done:?}", out.now, out.reason, out.delivered);
    // Submit reaches the provider after 0.5 s, the job runs 120 s, the completion takes 0.5 s back.
    assert_eq!(done, Some(121.0));
}
