//! InterGrid gateway (seeds 000/001), basic form: holds its grid's providers and dispatches the external requests
//! it receives among them round robin, skipping providers too small for a request. Local users submit straight to
//! their provider. Providers answer the job's owner directly, so the gateway only forwards `Job::Submit`, or answers
//! `Job::Rejected` when no provider of its grid can ever run the job.
//!
//! A provider whose admission control refuses an external request sends it back as `Job::Refused` (Amini Salehi,
//! Javadi & Buyya). The gateway records the refusal; the rejection is final by default (the paper does not re-route):
//! it answers the owner `Job::Rejected`. With re-routing, it offers the request to the next provider of its grid in
//! round-robin order that has not refused it, and rejects it once every provider able to hold it has.
//!
//! It also finds destinations for migrating leases (Amini Salehi 2012, §3.3 step 4): a provider that preempts a
//! migratable lease sends `Lease::Migrate`; the gateway offers it to the other providers of its grid one at a time, in
//! its round-robin order, until one answers `Lease::Migrated`, which the gateway passes on to the source; when every
//! one answers `Lease::MigrateRefused`, it tells the source to `Lease::Resume` the lease itself.

pub mod kind;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::protocol::{JobId, JobMsg, JobSpec, LeaseMsg, Migration, Msg};
use crate::provider::ProviderInfo;
use crate::report::Report;
use crate::sim::{Agent, AgentId, Ctx, Envelope, GridMarket, SimTime};

/// How the gateway picks a provider for each request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dispatch {
    /// Each request to the next provider in turn (RR of Amini Salehi (2012) ch4).
    #[default]
    RoundRobin,
}

/// A migration in search of a destination: the offer, and the providers still to ask (the next one last).
struct Search {
    migration: Migration,
    candidates: Vec<AgentId>,
}

/// The gateway agent.
pub struct Gateway {
    providers: Vec<ProviderInfo>,
    dispatch: Dispatch,
    next: usize,
    forwarded: u64,
    rejected: u64,
    searches: BTreeMap<JobId, Search>,
    migrated: u64,
    migrations_refused: u64,
    /// Offer a refused request to the next provider -- config.
    reroute: bool,
    /// Providers that refused each request being re-routed -- internal state. An entry stays once another
    /// provider accepts (the gateway is not told), so it grows with the re-routed requests only.
    refused_by: BTreeMap<JobId, Vec<AgentId>>,
    refusals: u64,
    rerouted: u64,
    admission_rejected: u64,
}

impl Gateway {
    /// A gateway over `providers`.
    pub fn new(providers: Vec<ProviderInfo>, dispatch: Dispatch) -> Gateway {
        Gateway {
            providers,
            dispatch,
            next: 0,
            forwarded: 0,
            rejected: 0,
            searches: BTreeMap::new(),
            migrated: 0,
            migrations_refused: 0,
            reroute: false,
            refused_by: BTreeMap::new(),
            refusals: 0,
            rerouted: 0,
            admission_rejected: 0,
        }
    }

    /// A gateway that offers a request a provider refused to the next provider (default: the refusal is final).
    pub fn rerouting(mut self) -> Gateway {
        self.reroute = true;
        self
    }

    /// The providers able to hold `pes` PEs, in dispatch order from the next one.
    fn in_turn(&self, pes: u32) -> impl Iterator<Item = usize> + '_ {
        let n = self.providers.len();
        (0..n).map(move |k| (self.next + k) % n).filter(move |&i| self.providers[i].pes >= pes)
    }

    fn on_submit(&mut self, job: &JobSpec, msg: &Msg, ctx: &mut Ctx<'_>) {
        let Dispatch::RoundRobin = self.dispatch;
        let pick = self.in_turn(job.pes).next();
        match pick {
            Some(i) => {
                self.next = (i + 1) % self.providers.len();
                self.forwarded += 1;
                ctx.send(self.providers[i].id, msg.clone());
            }
            None => {
                self.rejected += 1;
                let reason = format!("no provider of this grid has {} PEs", job.pes);
                ctx.send(job.owner, Msg::Job(JobMsg::Rejected { job: job.id, reason }));
            }
        }
    }

    /// A provider's admission control refused `job`: re-route it, or reject it for good.
    fn on_refused(&mut self, job: &JobSpec, reason: &str, from: AgentId, ctx: &mut Ctx<'_>) {
        self.refusals += 1;
        if self.reroute {
            let refused = self.refused_by.entry(job.id).or_default();
            refused.push(from);
            let n = self.providers.len();
            let after = self.providers.iter().position(|p| p.id == from).map_or(0, |i| i + 1);
            let next = (0..n)
                .map(|k| &self.providers[(after + k) % n])
                .find(|p| p.pes >= job.pes && !refused.contains(&p.id))
                .map(|p| p.id);
            if let Some(to) = next {
                self.rerouted += 1;
                return ctx.send(to, Msg::Job(JobMsg::Submit(Box::new(job.clone()))));
            }
            self.refused_by.remove(&job.id);
        }
        self.admission_rejected += 1;
        ctx.send(job.owner, Msg::Job(JobMsg::Rejected { job: job.id, reason: reason.to_string() }));
    }

    /// A provider asks for a destination for a lease it suspended.
    fn on_migrate(&mut self, migration: &Migration, ctx: &mut Ctx<'_>) {
        let source = migration.source;
        let mut candidates: Vec<AgentId> =
            self.in_turn(migration.lease.pes).map(|i| self.providers[i].id).filter(|&p| p != source).collect();
        candidates.reverse();
        let search = Search { migration: migration.clone(), candidates };
        self.offer_next(search, ctx);
    }

    /// Offers the lease to the next candidate, or sends it back to its source when there is none left.
    fn offer_next(&mut self, mut search: Search, ctx: &mut Ctx<'_>) {
        let lease = search.migration.lease.id;
        match search.candidates.pop() {
            Some(to) => {
                ctx.send(to, Msg::Lease(LeaseMsg::Migrate(Box::new(search.migration.clone()))));
                self.searches.insert(lease, search);
            }
            None => {
                self.migrations_refused += 1;
                ctx.send(search.migration.source, Msg::Lease(LeaseMsg::Resume { lease }));
            }
        }
    }
}

impl Agent<GridMarket> for Gateway {
    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>) {
        match &env.msg {
            Msg::Job(JobMsg::Submit(job)) => self.on_submit(job, &env.msg, ctx),
            Msg::Job(JobMsg::Refused { job, reason }) => self.on_refused(job, reason, env.from(), ctx),
            Msg::Lease(LeaseMsg::Migrate(m)) => self.on_migrate(m, ctx),
            Msg::Lease(LeaseMsg::MigrateRefused { lease }) => {
                if let Some(search) = self.searches.remove(lease) {
                    self.offer_next(search, ctx);
                }
            }
            Msg::Lease(LeaseMsg::Migrated { lease, to }) => {
                if let Some(search) = self.searches.remove(lease) {
                    self.migrated += 1;
                    ctx.send(search.migration.source, Msg::Lease(LeaseMsg::Migrated { lease: *lease, to: *to }));
                }
            }
            other => tracing::error!(gateway = ctx.name(), kind = other.kind(), "unhandled message"),
        }
    }

    fn report(&self, _now: SimTime, out: &mut Report) {
        out.metrics.extend([
            ("forwarded", self.forwarded as f64),
            ("rejected", self.rejected as f64),
            ("migrated", self.migrated as f64),
            ("migrations_refused", self.migrations_refused as f64),
            ("admission_refusals", self.refusals as f64),
            ("rerouted", self.rerouted as f64),
            ("admission_rejected", self.admission_rejected as f64),
        ]);
    }
}
