//! User broker: replays a user's workload, submitting each job at its submission time, and records its life.
//!
//! Three modes ([`Submission`]):
//! - **direct**: every job goes to one provider or gateway as `Job::Submit`; the provider answers the owner with
//!   `Accepted`/`Rejected`, `Started` and `Completed` (gateways are transparent).
//! - **meta-brokered** (Garg 2010, §3.2): the broker registers with its meta-broker at start (`Market::RegisterUser`),
//!   sends each job as `Market::ResourceRequest`, submits it to the slot of the `Ticket` it gets back
//!   (`Job::SubmitReserved`) and pays the provider on completion (`Market::Payment`).
//! - **personalised** (Garg 2010, ch3, the baseline of the meta-broker): at every round the broker independently
//!   sends `Market::SlaRequest` for each pending job to the cheapest provider that is feasible for it (enough PEs,
//!   the deadline reachable if started now, the budget sufficient); a provider grants only claims it can start at
//!   once (`SlaAccept`; see `SlaRule` for whether it grants more than the first of an instant), others get
//!   `SlaFail` and retry next round; a job is dropped when no provider can meet its deadline any more. The
//!   thesis does not say when a broker first claims nor whether a refused broker retries the same provider
//!   ([`Claims`]): by default a job claims when submitted and a refused one moves on to the next cheapest provider
//!   that has not refused it; Garg (2010) §3.6 reads as claims at the ends of rounds ("the same situation with
//!   reduced users as compared to previous schedule") at the lowest price again.

mod exchange;
pub mod kind;
pub mod strategy;

pub use exchange::{AuctionChoice, ExchangeStrategy, Trade};
pub use strategy::{Choice, ProviderChoice};

pub use crate::protocol::UserJob;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::ProviderInfo;
use crate::protocol::{ExchangeMsg, JobId, JobMsg, JobSpec, LeaseMsg, MarketMsg, Msg, Ticket, TimerMsg};
use crate::report::{JobOutcome, JobRecord, Report};
use crate::sim::{Agent, AgentId, Ctx, Envelope, GridMarket, SimTime};

/// How the broker submits.
#[derive(Clone, Debug, PartialEq)]
pub enum Submission {
    /// Every job to one provider or gateway.
    Direct {
        /// The provider or gateway -- peer.
        to: AgentId,
    },
    /// Through a meta-broker (Garg 2010, §3.2): `ResourceRequest`, then the job goes to the slot of its `Ticket`.
    MetaBroker {
        /// The meta-broker -- peer.
        to: AgentId,
    },
    /// Cheapest feasible provider, claimed each round (Garg 2010, ch3).
    Personalised {
        /// The providers the broker knows.
        providers: Vec<ProviderInfo>,
        /// Round length \[s\] (the thesis's scheduling interval, 50 s).
        round: f64,
        /// When it claims, and where after a refusal.
        claims: Claims,
        /// How it chooses a provider by price.
        choice: Choice,
    },
    /// On a market exchange (Garg 2010 ch 8): discover, then lease at a posted price or bid in an auction, and
    /// submit to the reserved slot of the ticket.
    Exchange {
        /// The exchange -- peer.
        to: AgentId,
        /// How it trades.
        strategy: ExchangeStrategy,
    },
}

/// How a personalised broker claims (Garg 2010 ch3); the defaults are the simulator's first reading, the other
/// values Garg (2010) §3.5–3.6's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// When a job first claims.
    pub first: FirstClaim,
    /// Where a refused job claims next.
    pub refused: OnRefusal,
    /// Refusals after which a job is given up, dropped with the reason.
    pub max_refusals: u32,
}

impl Default for Claims {
    fn default() -> Self {
        Claims { first: FirstClaim::default(), refused: OnRefusal::default(), max_refusals: MAX_REFUSALS }
    }
}

/// When a personalised broker's job first claims a provider.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FirstClaim {
    /// When it is submitted; a refused one retries a round after the refusal.
    #[default]
    OnSubmit,
    /// At the end of the round it is submitted in (rounds end at multiples of the round length, like the
    /// meta-broker's scheduling intervals), as do the retries: the brokers' claims of a round meet at once.
    NextRound,
}

/// Where a refused job of a personalised broker claims next.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnRefusal {
    /// The cheapest feasible provider that has not refused it yet (all of them again once each has).
    #[default]
    NextCheapest,
    /// The cheapest feasible provider again, refused or not: "each of the brokers tries to schedule an application
    /// on a resource provider with the lowest price" (Garg 2010 §3.5), and failed claims are "re-submitted by the
    /// personalised broker that would result in the same situation with reduced users" (§3.6).
    Cheapest,
}

/// A job as the broker tracks it: the job as dealt and what happened to it so far, borrowed from the broker's two
/// lists (the dealt jobs are kept as they came, not copied into a record). Its [`JobRecord`] is built from these
/// when reported.
pub(super) struct Tracked<'a> {
    job: &'a mut UserJob,
    life: &'a mut Life,
}

/// What happened to a job so far: the parts of its [`JobRecord`] that are not in its spec, and what only some modes
/// need (boxed, so that a plain job costs one pointer for them).
#[derive(Clone, Debug)]
struct Life {
    start: Option<f64>,
    end: Option<f64>,
    site: Option<AgentId>,
    outcome: JobOutcome,
    cost: f64,
    reason: Option<String>,
    more: Option<Box<More>>,
}

/// Refusals after which a personalised broker gives a job up by default (`max-refusals`), dropped with the reason: a
/// job every provider
/// refuses for ever (one it cannot run, whatever it is offered) would otherwise claim again every round until the
/// run's horizon, or for ever without one. Far above what contention alone brings: no job of the shipped families
/// reaches it (their locks are the same with and without the bound).
pub const MAX_REFUSALS: u32 = 1_000;

/// The state of a job only some modes keep.
#[derive(Clone, Debug, Default)]
struct More {
    /// Providers that refused it (personalised mode).
    refused: Vec<AgentId>,
    /// Waiting for an SLA answer (personalised mode).
    claiming: bool,
    /// Meta-brokered mode: the parts of the job the tickets placed, as (id submitted under, tasks, finished).
    parts: Vec<(JobId, u32, bool)>,
    /// Exchange mode: leases and bids tried so far; personalised mode: refusals so far.
    attempts: u32,
}

impl Tracked<'_> {
    fn more(&mut self) -> &mut More {
        self.life.more.get_or_insert_with(Box::default)
    }
}

impl Life {
    fn record(&self, job: &UserJob) -> JobRecord {
        JobRecord {
            id: job.spec.id,
            submit: job.submit.secs(),
            start: self.start,
            end: self.end,
            site: self.site,
            pes: job.spec.pes,
            runtime: job.spec.runtime,
            deadline: job.spec.deadline.map(SimTime::secs),
            budget: job.spec.budget,
            lease: job.spec.lease,
            priority: job.spec.priority,
            outcome: self.outcome,
            cost: self.cost,
            reason: self.reason.clone(),
            parts: self.more.as_ref().map_or_else(Vec::new, |m| m.parts.iter().map(|p| p.0).collect()),
        }
    }
}

/// The user broker agent.
pub struct UserBroker {
    submission: Submission,
    /// The jobs as dealt, sorted by submission time.
    jobs: Vec<UserJob>,
    /// What happened to each, by position in `jobs`.
    lives: Vec<Life>,
    /// Position in `jobs` of each job id.
    index: BTreeMap<JobId, usize>,
    /// Index of the next job to submit (jobs are sorted by submission time).
    next: usize,
    round_pending: bool,
    /// Rules found broken (a job that ends twice), with when.
    violations: Vec<(f64, String)>,
    /// Exchange mode: the session token, once logged in, and the jobs due before it.
    session: Option<u64>,
    unsent: Vec<JobId>,
    /// Exchange mode, bidding: the open auctions it last discovered.
    known: exchange::Known,
    /// Exchange mode, bidding: how it prices its bids.
    bidder: exchange::Bidder,
}

impl UserBroker {
    /// A broker for `jobs` (sorted here by submission time, stably).
    pub fn new(mut jobs: Vec<UserJob>, submission: Submission) -> UserBroker {
        // A sorted workload (a trace in submission order) is kept as it is: a stable sort would take a copy's room.
        if !jobs.is_sorted_by_key(|job| job.submit) {
            jobs.sort_by_key(|job| job.submit);
        }
        let life = Life {
            start: None,
            end: None,
            site: None,
            outcome: JobOutcome::Pending,
            cost: 0.0,
            reason: None,
            more: None,
        };
        let lives = vec![life; jobs.len()];
        let index = jobs.iter().enumerate().map(|(i, job)| (job.spec.id, i)).collect();
        UserBroker {
            submission,
            jobs,
            lives,
            index,
            next: 0,
            round_pending: false,
            violations: Vec::new(),
            session: None,
            unsent: Vec::new(),
            known: None,
            bidder: exchange::Bidder::default(),
        }
    }

    pub(super) fn tracked(&mut self, id: JobId) -> Option<Tracked<'_>> {
        let i = *self.index.get(&id)?;
        Some(Tracked { job: self.jobs.get_mut(i)?, life: self.lives.get_mut(i)? })
    }

    fn schedule_next_submission(&self, ctx: &mut Ctx<'_>) {
        if let Some(job) = self.jobs.get(self.next) {
            ctx.wake_in((job.submit - ctx.now()).max(0.0), TimerMsg::Submit);
        }
    }

    /// Submits every job due now, then waits for the next one.
    fn on_submit_due(&mut self, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        let me = ctx.me();
        let first = self.next;
        while let Some(job) = self.jobs.get_mut(self.next) {
            if job.submit > now {
                break;
            }
            job.spec.owner = me;
            match self.submission {
                Submission::Direct { to } => ctx.send(to, Msg::Job(JobMsg::Submit(Box::new(job.spec.clone())))),
                Submission::MetaBroker { to } => {
                    ctx.send(to, Msg::Market(MarketMsg::ResourceRequest(Box::new(job.spec.clone()))))
                }
                Submission::Personalised { .. } => {}
                Submission::Exchange { .. } => self.unsent.push(job.spec.id),
            }
            self.next += 1;
        }
        self.discover_unsent(ctx);
        // Personalised mode: a new job claims at once, or at the end of the round; retries wait for the next round.
        if let Submission::Personalised { claims, .. } = self.submission {
            match claims.first {
                FirstClaim::OnSubmit => self.claim(first..self.next, ctx),
                FirstClaim::NextRound if first < self.next => self.arm_round(ctx),
                FirstClaim::NextRound => {}
            }
        }
        self.schedule_next_submission(ctx);
    }

    /// Personalised mode: wakes for the next round, unless already waiting for one: a round after now, or at the
    /// next multiple of the round length with [`FirstClaim::NextRound`].
    fn arm_round(&mut self, ctx: &mut Ctx<'_>) {
        let Submission::Personalised { round, claims, .. } = self.submission else { return };
        if self.round_pending {
            return;
        }
        self.round_pending = true;
        let delay = match claims.first {
            FirstClaim::OnSubmit => round,
            FirstClaim::NextRound => crate::sim::until_next_multiple(ctx.now().secs(), round),
        };
        ctx.wake_in(delay, TimerMsg::Round { n: 0 });
    }

    /// Personalised mode, at the start of a round: every pending job claims again.
    fn on_round(&mut self, ctx: &mut Ctx<'_>) {
        self.round_pending = false;
        self.claim(0..self.next, ctx);
    }

    /// Personalised mode: one claim per pending job of `range` at the provider its [`Choice`] picks among those that
    /// have not refused it (all of them again once each has refused); a job with no feasible provider left is
    /// dropped.
    fn claim(&mut self, range: std::ops::Range<usize>, ctx: &mut Ctx<'_>) {
        let Submission::Personalised { providers, claims, choice, .. } = &self.submission else { return };
        let now = ctx.now();
        for (job, life) in self.jobs[range.clone()].iter_mut().zip(&mut self.lives[range]) {
            let t = Tracked { job, life };
            if t.life.outcome != JobOutcome::Pending || t.life.more.as_ref().is_some_and(|m| m.claiming) {
                continue;
            }
            let spec = &t.job.spec;
            let feasible = |p: &&ProviderInfo| {
                let runtime = spec.runtime / p.speed;
                p.pes >= spec.pes
                    && spec.deadline.is_none_or(|d| now + runtime <= d)
                    && spec.budget.is_none_or(|b| p.price * f64::from(spec.pes) * runtime <= b)
            };
            if !providers.iter().any(|p| feasible(&p)) {
                t.life.outcome = JobOutcome::Dropped;
                t.life.end = Some(now.secs());
                let widest = providers.iter().map(|p| p.pes).max().unwrap_or(0);
                let why = match (spec.deadline, spec.budget) {
                    _ if spec.pes > widest => {
                        format!("{} PEs, wider than every provider (the widest has {widest})", spec.pes)
                    }
                    (Some(_), Some(_)) => "no provider can meet its deadline and budget any more".into(),
                    (Some(_), None) => "no provider can meet its deadline any more".into(),
                    (None, _) => "no provider can run it within its budget".into(),
                };
                t.life.reason = Some(why);
                continue;
            }
            let mut pick = |refused: &[AgentId]| {
                let candidates: Vec<&ProviderInfo> =
                    providers.iter().filter(|p| p.pes >= spec.pes && !refused.contains(&p.id)).collect();
                choice.pick(spec, &candidates, |p| feasible(&p), ctx.rng())
            };
            let choice = match claims.refused {
                OnRefusal::Cheapest => pick(&[]),
                // Every feasible provider refused once: start over with all of them.
                OnRefusal::NextCheapest => pick(t.life.more.as_ref().map_or(&[], |m| &m.refused)).or_else(|| {
                    if let Some(m) = &mut t.life.more {
                        m.refused.clear();
                    }
                    pick(&[])
                }),
            };
            if let Some(p) = choice {
                t.life.more.get_or_insert_with(Box::default).claiming = true;
                ctx.send(p, Msg::Market(MarketMsg::SlaRequest(Box::new(spec.clone()))));
            }
        }
    }

    fn on_job_msg(&mut self, from: AgentId, msg: &JobMsg, ctx: &mut Ctx<'_>) {
        let now = ctx.now().secs();
        match msg {
            JobMsg::Accepted { .. }
            | JobMsg::Submit(_)
            | JobMsg::Reoffer(_)
            | JobMsg::SubmitReserved { .. }
            | JobMsg::Cancel { .. } => {}
            // Only gateways receive it; a provider answers a user who submitted directly with `Rejected`.
            JobMsg::Refused { job, reason } => self.end(job.id, JobOutcome::Rejected, Some(&reason.to_string()), now),
            JobMsg::Rejected { job, reason } => self.end(*job, JobOutcome::Rejected, Some(reason), now),
            JobMsg::Started { job } => {
                if let Some(t) = self.tracked(*job)
                    && t.life.start.is_none()
                {
                    t.life.start = Some(now);
                    t.life.site = Some(from);
                    t.life.outcome = JobOutcome::Running;
                }
            }
            JobMsg::Completed { job, cost } => {
                let Some(t) = self.tracked(*job) else { return };
                t.life.cost += *cost;
                // A job split into parts is complete when all its tasks are.
                let parts = t.life.more.as_deref_mut().map_or(&mut [][..], |m| &mut m.parts[..]);
                let part_again =
                    parts.iter_mut().find(|p| p.0 == *job).is_some_and(|p| std::mem::replace(&mut p.2, true));
                let done: u32 = parts.iter().filter(|p| p.2).map(|p| p.1).sum();
                let whole = parts.is_empty();
                if part_again {
                    self.violations.push((now, format!("part {job} of a job completed twice")));
                } else if whole || done >= t.job.spec.pes {
                    self.end(*job, JobOutcome::Completed, None, now);
                }
            }
        }
    }

    /// Records how a job ended; a job that had already ended breaks the rule that every job ends once.
    pub(super) fn end(&mut self, id: JobId, outcome: JobOutcome, reason: Option<&String>, now: f64) {
        let Some(t) = self.tracked(id) else { return };
        let before = t.life.outcome;
        t.life.outcome = outcome;
        t.life.end = Some(now);
        t.life.reason = reason.cloned();
        if matches!(before, JobOutcome::Completed | JobOutcome::Rejected | JobOutcome::Dropped) {
            let what = format!("job {id} ended twice: {} after {}", outcome.as_str(), before.as_str());
            self.violations.push((now, what));
        }
    }

    /// The meta-broker reserved a slot for the job, or for some of its tasks: submit them there.
    fn on_ticket(&mut self, ticket: &Ticket, ctx: &mut Ctx<'_>) {
        let Some(&i) = self.index.get(&ticket.job) else { return };
        self.index.insert(ticket.part, i);
        let mut t = Tracked { job: &mut self.jobs[i], life: &mut self.lives[i] };
        t.more().parts.push((ticket.part, ticket.cpus, false));
        // An exchange's contract was paid when reserved; a meta-broker's ticket only quotes a cost.
        if ticket.prepaid {
            t.life.cost += ticket.cost;
        }
        let mut job = Box::new(JobSpec { id: ticket.part, pes: ticket.cpus, ..t.job.spec.clone() });
        // The meta-broker's ETC on this provider, as a reference-PE runtime (Garg 2010 ch5).
        if let Some(runtime) = ticket.runtime {
            (job.runtime, job.estimate) = (runtime, runtime);
        }
        let (reservation, start) = (ticket.reservation, ticket.start);
        ctx.send(ticket.provider, Msg::Job(JobMsg::SubmitReserved { job, reservation, start }));
    }

    fn on_sla_answer(&mut self, from: AgentId, job: JobId, granted: bool, ctx: &mut Ctx<'_>) {
        let Submission::Personalised { claims, .. } = self.submission else { return };
        let Some(mut t) = self.tracked(job) else { return };
        let more = t.more();
        more.claiming = false;
        if !granted {
            more.refused.push(from);
            more.attempts += 1;
            let most = claims.max_refusals;
            if more.attempts >= most {
                let why = format!("refused {most} times (`max-refusals`): no provider granted it");
                self.end(job, JobOutcome::Dropped, Some(&why), ctx.now().secs());
                return;
            }
            self.arm_round(ctx);
        }
    }
}

impl Agent<GridMarket> for UserBroker {
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        match self.submission {
            Submission::MetaBroker { to } => ctx.send(to, Msg::Market(MarketMsg::RegisterUser)),
            Submission::Exchange { to, .. } => ctx.send(to, ExchangeMsg::Register { login: ctx.name().into() }),
            _ => {}
        }
        self.schedule_next_submission(ctx);
    }

    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>) {
        match &env.msg {
            Msg::Timer(TimerMsg::Submit) => self.on_submit_due(ctx),
            Msg::Timer(TimerMsg::Round { .. }) => self.on_round(ctx),
            Msg::Job(m) => self.on_job_msg(env.from(), m, ctx),
            Msg::Market(MarketMsg::SlaAccept { job, .. }) => self.on_sla_answer(env.from(), *job, true, ctx),
            Msg::Market(MarketMsg::SlaFail { job }) => self.on_sla_answer(env.from(), *job, false, ctx),
            Msg::Market(MarketMsg::Registered) => {}
            Msg::Market(MarketMsg::PriceChange { price }) => self.on_price_change(env.from(), *price),
            Msg::Market(MarketMsg::RegisterRefused { reason }) => {
                tracing::warn!(broker = ctx.name(), reason = reason.as_str(), "the meta-broker refused registration")
            }
            Msg::Market(MarketMsg::Ticket(t)) => self.on_ticket(t, ctx),
            Msg::Market(MarketMsg::RequestDropped { job, reason }) => {
                self.end(*job, JobOutcome::Dropped, Some(reason), ctx.now().secs())
            }
            // A migrated lease resumes at another provider, which now runs it.
            Msg::Lease(LeaseMsg::Resumed { lease }) => {
                if let Some(t) = self.tracked(*lease) {
                    t.life.site = Some(env.from());
                }
            }
            // Bills for work done at a provider the job left, or before the owner withdrew it.
            Msg::Market(MarketMsg::Invoice { job, amount })
            | Msg::Lease(LeaseMsg::Cancelled { lease: job, cost: amount }) => {
                if let Some(t) = self.tracked(*job) {
                    t.life.cost += *amount;
                }
            }
            // Preemptions and missed plans change nothing the broker records: the job's end does.
            Msg::Lease(LeaseMsg::Preempted { .. } | LeaseMsg::DeadlineMissed { .. }) => {}
            Msg::Exchange(m) => self.on_exchange(env.from(), m, ctx),
            Msg::Timer(TimerMsg::Timeout { id }) => self.try_again(*id, ctx),
            other => crate::sim::unhandled(ctx, other.kind()),
        }
    }

    fn report(&self, _now: SimTime, out: &mut Report) {
        out.jobs.extend(self.jobs.iter().zip(&self.lives).map(|(job, life)| life.record(job)));
        out.violations.extend(self.violations.iter().cloned());
    }
}
