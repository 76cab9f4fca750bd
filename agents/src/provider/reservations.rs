//! Capacity claimed ahead: SLA claims of personalised brokers, advance reservations and the jobs submitted into
//! reserved slots, and the meta-brokers' free-slot queries.

use std::collections::{BTreeMap, BTreeSet};

use super::scheduler::{ReservationId, ReservationRequest, Started};
use super::{LocalJob, Provider, ProviderConfig, SlaRule};
use crate::model::JobId;
use crate::model::Service;
use crate::protocol::{
    JobMsg, JobSpec, LeaseMsg, MarketMsg, Msg, QueueMatch, QueueReport, QueueState, ResourceUpdate, TimerMsg,
};
use crate::sim::{AgentId, Ctx, SimTime};

/// What the provider agreed ahead of running: which SLA claims it grants and when it last granted one, and the
/// terms of the reservations others made (paid already, or at a matched price).
#[derive(Debug, Default)]
pub(super) struct Claims {
    /// Which SLA claims it grants.
    pub(super) sla: SlaRule,
    /// When it last granted one.
    sla_granted: Option<SimTime>,
    /// Reservations an exchange made: their contracts were paid when reserved, so their jobs are not billed.
    prepaid: BTreeSet<u64>,
    /// Reservations a meta-broker matched at a price of its own [G$ per PE-second], by reservation id.
    matched_prices: BTreeMap<u64, f64>,
}

impl Claims {
    /// Whether a claim at `now` may be granted by the rule: under [`SlaRule::First`], only the first of an instant.
    fn may_grant(&self, now: SimTime) -> bool {
        self.sla == SlaRule::Capacity || self.sla_granted != Some(now)
    }

    /// The terms of `reservation`, whose job has come: whether it was paid already, and its matched price.
    fn settle(&mut self, reservation: u64) -> (bool, Option<f64>) {
        (self.prepaid.remove(&reservation), self.matched_prices.remove(&reservation))
    }
}

impl Provider {
    /// Personalised-broker claim (Garg 2010, ch3): granted only if the job can start right now, so the first
    /// claim on free capacity wins and later ones get `SlaFail`; under [`SlaRule::First`], only the first claim of
    /// the instant may be granted.
    pub(super) fn on_sla_request(&mut self, job: JobSpec, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        let estimate = self.config.planned_duration(&job);
        let can_start_now = self.claims.may_grant(now)
            && self.scheduler.earliest_start(now, job.pes, estimate, None).is_ok_and(|s| s <= now);
        let (id, owner) = (job.id, job.owner);
        match can_start_now.then(|| self.admit(job, ctx.now())) {
            Some(Ok(started)) => {
                self.accepted += 1;
                self.claims.sla_granted = Some(now);
                ctx.send(owner, Msg::Market(MarketMsg::SlaAccept { job: id, price: self.config.price }));
                self.start(started, ctx);
            }
            _ => {
                self.pricing.refused();
                ctx.send(owner, Msg::Market(MarketMsg::SlaFail { job: id }))
            }
        }
        self.after_event(ctx);
    }

    /// A job with a ticket (a meta-broker's, Garg (2010) §3.2 step 8, or an exchange's): it runs in its reserved slot,
    /// from the slot's start; the reservation already holds its PEs, and must hold them long enough.
    pub(super) fn on_submit_reserved(&mut self, job: JobSpec, reservation: u64, start: SimTime, ctx: &mut Ctx<'_>) {
        let (prepaid, price) = self.claims.settle(reservation);
        let (id, owner) = (job.id, job.owner);
        let window = self.scheduler.reservations().find(|(r, _)| r.0 == reservation).map(|(_, w)| w);
        let refusal = match window {
            None => Some(format!("no reservation {reservation} here")),
            // A relative hair of tolerance: the requester computed the window's end in its own order of operations.
            Some(w) if w.pes < job.pes || (start + self.config.scaled(job.runtime)) - w.end > 1e-9 * w.end.secs() => {
                Some(format!("does not fit its reservation {reservation} ({} PEs until {})", w.pes, w.end))
            }
            Some(_) => None,
        };
        if let Some(reason) = refusal {
            self.rejected += 1;
            ctx.send(owner, Msg::Job(JobMsg::Rejected { job: id, reason }));
            return;
        }
        ctx.send(owner, Msg::Job(JobMsg::Accepted { job: id }));
        self.accepted += 1;
        self.waiting_now += 1;
        let runtime = self.config.scaled(job.runtime);
        let reservation = Some(ReservationId(reservation));
        self.jobs.insert(id, LocalJob { prepaid, price, ..LocalJob::new(job, runtime, reservation) });
        ctx.wake_in((start - ctx.now()).max(0.0), TimerMsg::SlotStart { job: id });
        self.after_event(ctx);
    }

    /// A reserved slot begins: its job starts; or a local request made ahead whose window could not be held then
    /// is placed now, as if made now.
    pub(super) fn on_slot_start(&mut self, id: JobId, ctx: &mut Ctx<'_>) {
        match self.ahead.remove(&id) {
            Some(job) => self.place_local(job, ctx),
            None => self.start(vec![Started { id, start: ctx.now() }], ctx),
        }
        self.after_event(ctx);
    }

    /// Holds an advance reservation if the PEs are free over the whole window (no queued job is delayed under
    /// conservative backfilling).
    pub(super) fn on_reserve(
        &mut self,
        from: AgentId,
        request: u64,
        (start, end, pes): (SimTime, SimTime, u32),
        ctx: &mut Ctx<'_>,
    ) {
        let req = ReservationRequest { start, end, pes, partition: None };
        let answer = match self.scheduler.reserve(ctx.now(), req) {
            Ok(r) => {
                // An exchange's reservation is a contract it settles itself (see `crate::ledger`).
                if ctx.directory().offers(from, Service::ClearsAuctions.name()) {
                    self.claims.prepaid.insert(r.0);
                }
                LeaseMsg::Reserved { request, reservation: r.0 }
            }
            Err(e) => {
                self.pricing.refused();
                LeaseMsg::ReserveRefused { request, reason: e.to_string() }
            }
        };
        ctx.send(from, Msg::Lease(answer));
        self.after_event(ctx);
    }

    /// The holder gives a reservation back (or ends it early).
    pub(super) fn on_release(&mut self, reservation: u64, ctx: &mut Ctx<'_>) {
        self.claims.matched_prices.remove(&reservation);
        match self.scheduler.cancel_reservation(ctx.now(), ReservationId(reservation)) {
            Ok(started) => self.start(started, ctx),
            Err(e) => tracing::warn!(provider = ctx.name(), reservation, "release refused: {e}"),
        }
        self.after_event(ctx);
    }

    /// What this provider is and offers; `slots` over the next `horizon` seconds (none for 0).
    pub(super) fn resource_update(&self, now: SimTime, horizon: f64) -> Box<ResourceUpdate> {
        let slots =
            if horizon > 0.0 { self.scheduler.free_slots(now, horizon, None).unwrap_or_default() } else { vec![] };
        let slots = slots.into_iter().map(|s| (s.start, s.end, s.pes)).collect();
        let ProviderConfig { pes: cpus, speed, price, .. } = self.config;
        Box::new(ResourceUpdate { cpus, speed, price, slots })
    }

    /// A double-auction-inspired meta-broker's collection (Garg 2010 §7.2): each queue's free PEs, load, waiting-time
    /// estimate and initial valuation (the price), and its free slots over `horizon`.
    pub(super) fn on_queue_query(&mut self, from: AgentId, horizon: f64, ctx: &mut Ctx<'_>) {
        let queues = self
            .scheduler
            .partition_states(ctx.now(), horizon)
            .into_iter()
            .enumerate()
            .map(|(k, p)| QueueState {
                queue: k as u32,
                pes: p.pes,
                free: p.free,
                load: p.load,
                wait: p.backlog,
                valuation: self.config.price,
                slots: p.slots.into_iter().map(|s| (s.start, s.end, s.pes)).collect(),
            })
            .collect();
        let report = QueueReport { speed: self.config.speed, queues };
        ctx.send(from, Msg::Market(MarketMsg::QueueInfo(Box::new(report))));
    }

    /// A meta-broker's match (Garg 2010 Alg 7.1): holds the window in the queue's PEs, as an advance reservation
    /// whose job is billed at the matched price; answers `Reserved` or `ReserveRefused`.
    pub(super) fn on_matched(&mut self, from: AgentId, m: &QueueMatch, ctx: &mut Ctx<'_>) {
        let req = ReservationRequest { start: m.start, end: m.end, pes: m.pes, partition: Some(m.queue as usize) };
        let answer = match self.scheduler.reserve(ctx.now(), req) {
            Ok(r) => {
                self.claims.matched_prices.insert(r.0, m.price);
                LeaseMsg::Reserved { request: m.request, reservation: r.0 }
            }
            Err(e) => LeaseMsg::ReserveRefused { request: m.request, reason: e.to_string() },
        };
        ctx.send(from, Msg::Lease(answer));
        self.after_event(ctx);
    }

    /// The meta-broker's periodic catalogue update: the maximal free rectangles of the availability profile.
    pub(super) fn on_slots_query(&mut self, from: AgentId, horizon: f64, ctx: &mut Ctx<'_>) {
        let update = self.resource_update(ctx.now(), horizon);
        ctx.send(from, Msg::Market(MarketMsg::ResourceUpdate(update)));
    }
}
