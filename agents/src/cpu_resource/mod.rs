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
use crate::report::{Capacity, Holds, Report, Series};
use crate::sim::{Agent, AgentId, Ctx, Envelope, GridMarket, SimTime, TimerId};

/// How many of `windows` [start, end) hold the CPU over time: ends before starts at one instant.
fn in_use(windows: impl Iterator<Item = (f64, f64)>) -> Series {
    let mut changes: Vec<(f64, f64)> = windows.flat_map(|(start, end)| [(start, 1.0), (end, -1.0)]).collect();
    changes.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut series = Series::default();
    let mut held = 0.0;
    for (t, change) in changes {
        held += change;
        if let Ok(t) = SimTime::new(t) {
            series.set(t, held);
        }
    }
    series
}

/// A single-CPU resource.
#[derive(Debug)]
pub struct CpuResource {
    directory: AgentId,
    /// Known to brokers (transparent pool) or not (opaque pool).
    transparent: bool,
    timetable: Timetable,
    wakeup: Option<TimerId>,
    busy: f64,
    /// The windows [start, end) of the requests it ran, in the order they ended: what the over-subscription
    /// invariant counts (two that overlap double-book the CPU).
    ran: Vec<(f64, f64)>,
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
            ran: Vec::new(),
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
            self.ran.push((slot.start, slot.end()));
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
            other => return crate::sim::unhandled(ctx, other.kind()),
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
        let running = self.timetable.running().map(|s| (s.start, s.end().min(now)));
        out.series.push(("running", in_use(self.ran.iter().copied().chain(running))));
        out.capacity = Some(Capacity { units: 1.0, in_use: "running", holds: Holds::Other });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_in_use_count_the_cpu_held_and_a_double_booking_shows() {
        // Back to back: never more than the one CPU (an end and a start at one instant do not overlap).
        let back_to_back = in_use([(0.0, 10.0), (10.0, 15.0)].into_iter());
        assert_eq!(back_to_back.points(), &[(0.0, 1.0), (10.0, 1.0), (15.0, 0.0)]);
        // Overlapping: two at once, which the run's invariant refuses.
        let overlapping = in_use([(0.0, 10.0), (5.0, 12.0)].into_iter());
        assert_eq!(overlapping.points(), &[(0.0, 1.0), (5.0, 2.0), (10.0, 1.0), (12.0, 0.0)]);
    }
}
