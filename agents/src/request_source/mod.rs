//! The request source of Melendez (2010) §2: one Poisson stream of rate λ, each arrival an advance reservation
//! (AR) sent to a broker (or the Independent strategy's splitter) or, with the mixed workload's probability, an
//! on-demand (OD) request sent straight to a resource (round robin). It stops after a fixed number of requests and
//! collects the statistics of §5: blocking ratio B, rate of accepted requests A = λ(1 − B), revenue rate R and the
//! Little's-law check.
//!
//! An AR has earliest start S = a + U(0, spread), a service time E from the service distribution and the deadline
//! D = S + E + L, the laxity L the same for every request: a multiple of the *mean* service time. An OD request has
//! S = a and a very large deadline D = a + E + window; the resource rewrites its window once it is scheduled.

pub mod kind;

use rand::RngExt;
use rand_distr::{Distribution, Exp};

use crate::matchmaking::Request;
use crate::protocol::{MatchMsg, Msg, TimerMsg};
use crate::report::Report;
use crate::sim::{Agent, AgentId, Ctx, Envelope, GridMarket, SimTime};

/// The distribution of service times E \[s\].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Service {
    /// Uniform on [lo, hi] (the thesis's variability-factor form U((1 − vf)m, (1 + vf)m)).
    Uniform(f64, f64),
    /// Two-phase hyper-exponential with this mean and coefficient of variation ≥ 1, balanced means (CV 1 is the
    /// exponential).
    HyperExponential {
        /// Mean \[s\].
        mean: f64,
        /// Coefficient of variation, standard deviation over mean.
        cv: f64,
    },
}

impl Service {
    /// The mean \[s\].
    pub fn mean(self) -> f64 {
        match self {
            Service::Uniform(lo, hi) => (lo + hi) / 2.0,
            Service::HyperExponential { mean, .. } => mean,
        }
    }

    /// One draw \[s\].
    pub fn draw(self, rng: &mut impl rand::Rng) -> f64 {
        match self {
            Service::Uniform(lo, hi) => lo + (hi - lo) * rng.random::<f64>(),
            Service::HyperExponential { mean, cv } => {
                // Balanced means: p1/μ1 = p2/μ2 (Melendez 2010 gives no parameterisation).
                let c2 = cv * cv;
                let p1 = 0.5 * (1.0 + ((c2 - 1.0) / (c2 + 1.0)).sqrt());
                let p = if rng.random::<f64>() < p1 { p1 } else { 1.0 - p1 };
                let rate = 2.0 * p / mean;
                // E > 0: an exponential draw is 0 with probability 0, but a zero would be refused as malformed.
                Exp::new(rate).map_or(mean, |e| e.sample(rng)).max(f64::MIN_POSITIVE)
            }
        }
    }
}

/// What the source generates.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceConfig {
    /// Where ARs go: a broker or a splitter.
    pub target: AgentId,
    /// Arrival rate λ [1/s].
    pub rate: f64,
    /// Requests to generate.
    pub requests: u64,
    /// Service times.
    pub service: Service,
    /// S = a + U(0, spread) \[s\].
    pub start_spread: f64,
    /// L = this × mean service time.
    pub laxity: f64,
    /// Probability that an arrival is an OD request.
    pub on_demand: f64,
    /// Resources that take OD requests, in turn.
    pub on_demand_resources: Vec<AgentId>,
    /// An OD request's initial deadline is a + E + this \[s\].
    pub on_demand_window: f64,
    /// An OD request's laxity once scheduled, × mean service time.
    pub on_demand_laxity: f64,
}

/// Where a request stands.
#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    Waiting,
    Accepted,
    Rejected,
    Completed(f64),
}

#[derive(Clone, Copy, Debug)]
struct Track {
    request: Request,
    state: State,
}

/// A request source.
#[derive(Debug)]
pub struct RequestSource {
    config: SourceConfig,
    /// Added to the request number to make run-wide ids.
    id_base: u64,
    sent: Vec<Track>,
    next_od: usize,
    late: u64,
}

impl RequestSource {
    /// A source numbering its requests from `id_base`.
    pub fn new(config: SourceConfig, id_base: u64) -> RequestSource {
        RequestSource { config, id_base, sent: Vec::new(), next_od: 0, late: 0 }
    }

    fn schedule_next(&mut self, ctx: &mut Ctx) {
        if (self.sent.len() as u64) < self.config.requests {
            let gap = Exp::new(self.config.rate).map_or(f64::INFINITY, |e| e.sample(ctx.rng()));
            ctx.wake_in(gap, TimerMsg::Submit);
        }
    }

    fn submit(&mut self, ctx: &mut Ctx) {
        let c = &self.config;
        let od_to = c.on_demand_resources.get(self.next_od % c.on_demand_resources.len().max(1)).copied();
        let now = ctx.now().secs();
        let mean = c.service.mean();
        let me = ctx.me();
        let rng = ctx.rng();
        let on_demand = c.on_demand > 0.0 && rng.random::<f64>() < c.on_demand;
        let service = c.service.draw(rng);
        let id = self.id_base + self.sent.len() as u64;
        let mut request = Request {
            id,
            source: me,
            on_demand,
            arrival: now,
            start: now,
            service,
            deadline: now + service + c.on_demand_window,
            rewrite_laxity: c.on_demand_laxity * mean,
        };
        if let (true, Some(to)) = (on_demand, od_to) {
            ctx.send(to, MatchMsg::SubmitOnDemand(Box::new(request)));
            self.next_od += 1;
        } else {
            request.start = now + c.start_spread * ctx.rng().random::<f64>();
            request.deadline = request.start + service + c.laxity * mean;
            request.rewrite_laxity = 0.0;
            ctx.send(c.target, MatchMsg::Submit(Box::new(request)));
        }
        self.sent.push(Track { request, state: State::Waiting });
        self.schedule_next(ctx);
    }

    fn track(&mut self, request: u64) -> Option<&mut Track> {
        let k = request.checked_sub(self.id_base)?;
        self.sent.get_mut(usize::try_from(k).ok()?)
    }
}

impl Agent<GridMarket> for RequestSource {
    fn start(&mut self, ctx: &mut Ctx) {
        self.schedule_next(ctx);
    }

    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx) {
        let now = ctx.now().secs();
        match &env.msg {
            Msg::Timer(TimerMsg::Submit) => self.submit(ctx),
            Msg::Match(MatchMsg::Accepted { request, .. }) => {
                if let Some(t) = self.track(*request) {
                    t.state = State::Accepted;
                }
            }
            Msg::Match(MatchMsg::Scheduled(slot)) => {
                if let Some(t) = self.track(slot.request.id) {
                    t.state = State::Accepted;
                }
            }
            Msg::Match(MatchMsg::Rejected { request, .. }) => {
                if let Some(t) = self.track(*request) {
                    t.state = State::Rejected;
                }
            }
            Msg::Match(MatchMsg::Completed { request }) => {
                let mut late = false;
                if let Some(t) = self.track(*request) {
                    t.state = State::Completed(now);
                    late = !t.request.on_demand && now > t.request.deadline + crate::matchmaking::EPSILON;
                }
                self.late += u64::from(late);
            }
            other => crate::sim::unhandled(ctx, other.kind()),
        }
    }

    fn report(&self, now: SimTime, out: &mut Report) {
        let t_sim = now.secs();
        let arrived = self.sent.len() as f64;
        let count = |f: &dyn Fn(&Track) -> bool| self.sent.iter().filter(|t| f(t)).count() as f64;
        let rejected = count(&|t| t.state == State::Rejected);
        let on_demand = count(&|t| t.request.on_demand);
        let od_rejected = count(&|t| t.request.on_demand && t.state == State::Rejected);
        let accepted: Vec<&Track> =
            self.sent.iter().filter(|t| matches!(t.state, State::Completed(_) | State::Accepted)).collect();
        let responses: Vec<f64> = self
            .sent
            .iter()
            .filter_map(|t| match t.state {
                State::Completed(end) => Some(end - t.request.arrival),
                _ => None,
            })
            .collect();
        let m = &mut out.metrics;
        m.push(("arrived", arrived));
        m.push(("accepted", accepted.len() as f64));
        m.push(("rejected", rejected));
        m.push(("unanswered", count(&|t| t.state == State::Waiting)));
        m.push(("on_demand", on_demand));
        m.push(("on_demand_rejected", od_rejected));
        m.push(("late", self.late as f64));
        if arrived > 0.0 {
            let b = rejected / arrived;
            m.push(("blocking", b));
            m.push(("acceptance", 1.0 - b));
            m.push(("throughput", self.config.rate * (1.0 - b)));
            if arrived > on_demand {
                m.push(("ar_blocking", (rejected - od_rejected) / (arrived - on_demand)));
            }
        }
        if t_sim > 0.0 {
            let work: f64 = accepted.iter().map(|t| t.request.service).sum();
            m.push(("revenue_rate", work / t_sim));
        }
        if !responses.is_empty() && t_sim > 0.0 && arrived > rejected {
            let total: f64 = responses.iter().sum();
            let w = total / responses.len() as f64;
            let n = total / t_sim;
            m.push(("response_time", w));
            m.push(("in_system", n));
            // Little's law N = X·W over the whole run, drained: X the accepted arrivals over the same time (λ(1 − B)
            // would count the drain after the last arrival as missing throughput).
            let x = accepted.len() as f64 / t_sim;
            m.push(("littles_law", (n / w) / x - 1.0));
        }
    }
}
