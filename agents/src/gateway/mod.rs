//! InterGrid gateway (seeds 000/001), basic form: holds its grid's providers and dispatches the external requests
//! it receives among them round robin, skipping providers too small for a request. Local users submit straight to
//! their provider. Providers answer the job's owner directly, so the gateway only forwards `Job::Submit`, or answers
//! `Job::Rejected` when no provider of its grid can ever run the job.
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
        }
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
        ]);
    }
}
