//! Matchmakers (brokers) of Melendez (2010) §3.2–3.3: each places advance reservations on the resources of its pool,
//! one request at a time, trying resources in First Fit or Next Fit order and assigning the request to the first
//! that passes its test:
//!
//! - the AS-based (opaque) broker applies the Any Schedulability criterion to the requests the resource holds, which
//!   needs no knowledge of the resource's policy;
//! - the transparent broker knows the policy and simulates the resource's insertion on a copy of its timetable.
//!
//! A broker that no resource accepts rejects the request, or, in the Combined strategy, forwards it to the next
//! broker. Latency is zero, so every exchange of a request happens at its arrival instant.

pub mod kind;

use std::collections::VecDeque;

use crate::matchmaking::timetable::Timetable;
use crate::matchmaking::{Allocation, LocalPolicy, Request, any_schedulability};
use crate::protocol::{MatchMsg, Msg};
use crate::report::Report;
use crate::sim::{Agent, AgentId, Ctx, Envelope, GridMarket, SimTime};

/// A broker's schedulability test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Test {
    /// The Any Schedulability criterion over the whole set (`incremental`: the candidate's inequality and the
    /// overlapping requests' only).
    AnySchedulability {
        /// Check only the inequalities the candidate can change.
        incremental: bool,
    },
    /// Simulate the resource's own insertion (its published policy).
    Transparent,
}

impl Test {
    /// Its name in reasons.
    fn name(self) -> &'static str {
        match self {
            Test::AnySchedulability { .. } => "Any Schedulability test",
            Test::Transparent => "simulation of its local policy",
        }
    }
}

/// Where a request being placed stands.
#[derive(Debug)]
struct Placing {
    request: Request,
    /// Indices into the resource list, in the order to try.
    order: Vec<usize>,
    /// The position in `order` being tried.
    at: usize,
}

/// A matchmaker.
#[derive(Debug)]
pub struct Matchmaker {
    test: Test,
    allocation: Allocation,
    directory: AgentId,
    /// Its pool: the transparent resources, else the opaque ones.
    transparent_pool: bool,
    /// The Combined strategy's next broker.
    forward: Option<AgentId>,
    resources: Option<Vec<(AgentId, Option<LocalPolicy>)>>,
    asked: bool,
    queue: VecDeque<Request>,
    placing: Option<Placing>,
    last: Option<usize>,
    arrivals: u64,
    accepted: u64,
    rejected: u64,
    forwarded: u64,
    malformed: u64,
    tests: u64,
    violations: Vec<(f64, String)>,
}

impl Matchmaker {
    /// A broker applying `test` in `allocation` order to the pool (transparent or opaque) `directory` lists,
    /// forwarding what it cannot place to `forward` if set. A transparent broker needs the transparent pool; an AS
    /// broker may use either, as it ignores resources' policies.
    pub fn new(
        test: Test,
        allocation: Allocation,
        (directory, transparent_pool): (AgentId, bool),
        forward: Option<AgentId>,
    ) -> Matchmaker {
        Matchmaker {
            test,
            allocation,
            directory,
            transparent_pool: transparent_pool || test == Test::Transparent,
            forward,
            resources: None,
            asked: false,
            queue: VecDeque::new(),
            placing: None,
            last: None,
            arrivals: 0,
            accepted: 0,
            rejected: 0,
            forwarded: 0,
            malformed: 0,
            tests: 0,
            violations: Vec::new(),
        }
    }

    /// Starts on the next queued request, if none is being placed.
    fn pump(&mut self, ctx: &mut Ctx) {
        while self.placing.is_none() {
            let Some(resources) = &self.resources else {
                if !self.asked {
                    self.asked = true;
                    ctx.send(self.directory, MatchMsg::ListResources { transparent: self.transparent_pool });
                }
                return;
            };
            let Some(request) = self.queue.pop_front() else { return };
            if let Some(why) = request.invalid() {
                self.malformed += 1;
                self.rejected += 1;
                ctx.send(request.source, MatchMsg::Rejected { request: request.id, reason: why.into() });
                continue;
            }
            let order = self.allocation.order(resources.len(), self.last).collect();
            self.placing = Some(Placing { request, order, at: 0 });
            self.try_next(ctx);
        }
    }

    /// Asks the next resource in order for its state, or gives up on the request.
    fn try_next(&mut self, ctx: &mut Ctx) {
        let Some(p) = &self.placing else { return };
        let resources = self.resources.as_deref().unwrap_or_default();
        if let Some(&k) = p.order.get(p.at) {
            ctx.send(resources[k].0, MatchMsg::GetState);
            return;
        }
        let request = p.request;
        self.placing = None;
        match self.forward {
            Some(next) => {
                self.forwarded += 1;
                ctx.send(next, MatchMsg::Submit(Box::new(request)));
            }
            None => {
                self.rejected += 1;
                let reason = format!("no resource of the pool passed the {}", self.test.name());
                ctx.send(request.source, MatchMsg::Rejected { request: request.id, reason: reason.into() });
            }
        }
    }

    /// Whether `request` passes the test on a resource whose timetable is `timetable`.
    fn passes(&mut self, now: f64, timetable: &Timetable, request: &Request) -> bool {
        self.tests += 1;
        match self.test {
            Test::AnySchedulability { incremental: false } => {
                any_schedulability::schedulable(&timetable.requests(), request)
            }
            Test::AnySchedulability { incremental: true } => {
                any_schedulability::schedulable_incremental(&timetable.requests(), request)
            }
            Test::Transparent => timetable.clone().insert(now, *request).is_ok(),
        }
    }

    fn on_state(&mut self, from: AgentId, timetable: &Timetable, ctx: &mut Ctx) {
        let now = ctx.now().secs();
        let Some(p) = self.placing.as_ref() else { return };
        let request = p.request;
        let resources = self.resources.as_deref().unwrap_or_default();
        if resources.get(p.order[p.at]).map(|r| r.0) != Some(from) {
            return;
        }
        if self.passes(now, timetable, &request) {
            ctx.send(from, MatchMsg::Assign(Box::new(request)));
        } else if let Some(p) = self.placing.as_mut() {
            p.at += 1;
            self.try_next(ctx);
        }
    }
}

impl Agent<GridMarket> for Matchmaker {
    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx) {
        let Msg::Match(m) = &env.msg else { return crate::sim::unhandled(ctx, env.msg.kind()) };
        match m {
            MatchMsg::Submit(request) => {
                self.arrivals += 1;
                self.queue.push_back(**request);
                self.pump(ctx);
            }
            MatchMsg::ResourceList(list) => {
                self.resources = Some((**list).clone());
                self.pump(ctx);
            }
            MatchMsg::State(timetable) => self.on_state(env.from(), timetable, ctx),
            MatchMsg::Scheduled(slot) => {
                let Some(p) = self.placing.take() else { return };
                self.accepted += 1;
                self.last = Some(p.order[p.at]);
                ctx.send(p.request.source, MatchMsg::Accepted { request: slot.request.id, resource: env.from() });
                self.pump(ctx);
            }
            MatchMsg::Refused { request } => {
                self.violations.push((ctx.now().secs(), format!("request {request} passed the test and was refused")));
                if let Some(p) = self.placing.as_mut() {
                    p.at += 1;
                }
                self.try_next(ctx);
                self.pump(ctx);
            }
            _ => crate::sim::unhandled(ctx, env.msg.kind()),
        }
    }

    fn report(&self, _: SimTime, out: &mut Report) {
        out.metrics.push(("arrivals", self.arrivals as f64));
        out.metrics.push(("accepted", self.accepted as f64));
        out.metrics.push(("rejected", self.rejected as f64));
        out.metrics.push(("forwarded", self.forwarded as f64));
        out.metrics.push(("malformed", self.malformed as f64));
        out.metrics.push(("tests", self.tests as f64));
        if self.arrivals > 0 {
            out.metrics.push(("blocking", (self.rejected + self.forwarded) as f64 / self.arrivals as f64));
        }
        out.violations.extend(self.violations.iter().cloned());
    }
}
