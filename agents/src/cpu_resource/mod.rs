//! A resource with one CPU and a non-preemptive timetable (Melendez 2010 §2): registers with its directory, shows
//! its timetable to brokers, inserts what they assign with its local policy (modified EDF or ESF), takes on-demand
//! requests straight from the source, and runs every request in its planned slot.
//!
//! It checks its own guarantees and reports any breach as a violation, which fails the run: a request it accepted
//! that missed its deadline or started before its earliest start, and a request a broker's test accepted that its
//! insertion then refused.

pub mod kind;

use crate::matchmaking::timetable::Timetable;
use crate::matchmaking::{EPSILON, EdfPlacement, LocalPolicy};
use crate::protocol::{MatchMsg, Msg, TimerMsg};
use crate::report::Report;
use crate::sim::{Agent, AgentId, Ctx, Envelope, GridMarket, SimTime, TimerId};

/// A single-CPU resource.
#[derive(Debug)]
pub struct CpuResource {
    directory: AgentId,
    /// Known to brokers (transparent pool) or not (opaque pool).
    transparent: bool,
    timetable: Timetable,
    wakeup: Option<TimerId>,
    busy: f64,
    completed: u64,
    on_demand: u64,
    deadline_misses: u64,
    refused_after_acceptance: u64,
    violations: Vec<(f64, String)>,
}

impl CpuResource {
    /// A resource of `policy` registering with `directory`, in the transparent pool or the opaque one.
    pub fn new(directory: AgentId, policy: LocalPolicy, transparent: bool) -> CpuResource {
        CpuResource {
            directory,
            transparent,
            timetable: Timetable::new(policy),
            wakeup: None,
            busy: 0.0,
            completed: 0,
            on_demand: 0,
            deadline_misses: 0,
            refused_after_acceptance: 0,
            violations: Vec::new(),
        }
    }

    /// The same, its modified EDF accepting by `placement` (brokers' copies of its timetable too).
    pub fn with_edf_placement(mut self, placement: EdfPlacement) -> CpuResource {
        self.timetable = self.timetable.with_placement(placement);
        self
    }

    /// Completes what has ended by now and starts what is due, telling sources of completions.
    fn advance(&mut self, ctx: &mut Ctx) {
        let now = ctx.now().secs();
        for slot in self.timetable.advance(now) {
            let r = slot.request;
            self.completed += 1;
            self.busy += r.service;
            if slot.end() > r.deadline + EPSILON || slot.start < r.start - EPSILON {
                self.deadline_misses += 1;
                self.violations.push((
                    now,
                    format!(
                        "request {} ran in [{}, {}) outside its window [{}, {}]",
                        r.id,
                        slot.start,
                        slot.end(),
                        r.start,
                        r.deadline
                    ),
                ));
            }
            ctx.send(r.source, MatchMsg::Completed { request: r.id });
        }
    }

    /// Sets the wake-up for the next end or start.
    fn rearm(&mut self, ctx: &mut Ctx) {
        if let Some(t) = self.wakeup.take() {
            ctx.cancel(t);
        }
        if let Some(at) = self.timetable.next_event() {
            let delay = (at - ctx.now().secs()).max(0.0);
            self.wakeup = Some(ctx.wake_in(delay, TimerMsg::Wakeup));
        }
    }
}

impl Agent<GridMarket> for CpuResource {
    fn start(&mut self, ctx: &mut Ctx) {
        let policy = self.transparent.then(|| self.timetable.policy());
        ctx.send(self.directory, MatchMsg::Register { policy });
    }

    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx) {
        let now = ctx.now().secs();
        self.advance(ctx);
        match &env.msg {
            Msg::Timer(TimerMsg::Wakeup) => self.wakeup = None,
            Msg::Match(MatchMsg::GetState) => {
                ctx.send(env.from(), MatchMsg::State(Box::new(self.timetable.clone())));
            }
            Msg::Match(MatchMsg::Assign(request)) => match self.timetable.insert(now, **request) {
                Ok(slot) => ctx.send(env.from(), MatchMsg::Scheduled(Box::new(slot))),
                Err(why) => {
                    self.refused_after_acceptance += 1;
                    self.violations.push((now, format!("a broker's test accepted what the timetable refused: {why}")));
                    ctx.send(env.from(), MatchMsg::Refused { request: request.id });
                }
            },
            Msg::Match(MatchMsg::SubmitOnDemand(request)) => {
                self.on_demand += 1;
                let slot = self.timetable.insert_on_demand(now, **request);
                ctx.send(request.source, MatchMsg::Scheduled(Box::new(slot)));
            }
            _ => return,
        }
        // A request due now starts now.
        self.advance(ctx);
        self.rearm(ctx);
    }

    fn report(&self, now: SimTime, out: &mut Report) {
        let now = now.secs();
        let running = self.timetable.running().map_or(0.0, |s| (now - s.start).clamp(0.0, s.request.service));
        out.metrics.push(("completed", self.completed as f64));
        out.metrics.push(("on_demand", self.on_demand as f64));
        if now > 0.0 {
            out.metrics.push(("utilisation", (self.busy + running) / now));
        }
        out.metrics.push(("deadline_misses", self.deadline_misses as f64));
        out.metrics.push(("refused_after_acceptance", self.refused_after_acceptance as f64));
        out.violations.extend(self.violations.iter().cloned());
    }
}
