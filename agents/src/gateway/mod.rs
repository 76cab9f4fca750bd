//! InterGrid gateway (Amini Salehi 2012): holds its grid's providers (clusters) and dispatches the external requests
//! it receives among them. Local users submit straight to their provider. Providers answer the job's owner directly,
//! so the gateway only forwards `Job::Submit`, or answers `Job::Rejected` when no provider of its grid can ever run
//! the job.
//!
//! Dispatch is a policy layer of three parts (ch4, §4.3): statistics of each cluster (configured in the scenario, or
//! the external side estimated online from the requests the gateway sees), an allocation that turns them into the
//! fraction of requests each cluster gets (RR, LRF, BCF or PAP, [`dispatch::Allocation`], [`pap`]) and a dispatcher
//! that turns the fractions into a sequence of clusters (RND or RTDP, [`dispatch::Dispatch`]). The plain round robin
//! (each request to the next provider in turn) is the default.
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

pub mod dispatch;
pub mod kind;
pub mod pap;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::LeaseType;
use crate::model::ProviderInfo;
use crate::protocol::{JobId, JobMsg, JobSpec, LeaseMsg, Migration, Msg};
use crate::report::Report;
use crate::sim::{Agent, AgentId, Ctx, Envelope, GridMarket, SimTime};
use dispatch::Billiard;
pub use dispatch::{Allocation, Dispatch};
use pap::ClusterLoad;

/// Where the gateway's statistics of its clusters come from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Statistics {
    /// As configured in the scenario.
    #[default]
    Configured,
    /// The external rate, mean VMs and mean duration estimated from the requests the gateway has received (the
    /// configured values until [`REESTIMATE`] have arrived); the local side stays as configured, as local requests
    /// never pass through the gateway.
    Online,
}

/// Requests between two estimates of the online statistics.
pub const REESTIMATE: u64 = 100;

/// Mean size and duration of a class of requests, and its arrival rate.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RequestStats {
    /// Arrival rate [1/s].
    pub rate: f64,
    /// Mean number of VMs (PEs).
    pub vms: f64,
    /// Mean duration on a reference PE \[s\].
    pub duration: f64,
}

/// How service times are normalised (Amini Salehi 2012, Eqs 4.16–4.17).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ServiceUnits {
    /// A request's work spread over the whole cluster, in seconds: θ_j = v̄ d̄ / (M_j s_j), s_j the PEs' speed
    /// relative to the reference PE, so that ρ_j is the cluster's real utilisation by local requests.
    Seconds,
    /// The thesis's formula as printed: θ_j = v̄ d̄ / (M_j Σ_i s_ij) with speeds in MIPS (the PEs' relative speed
    /// times this reference speed), which makes ρ_j tiny.
    Thesis {
        /// MIPS of the reference PE.
        reference_mips: f64,
    },
}

/// What the gateway knows of its clusters' workloads, for PAP and LRF.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueueModel {
    /// The external requests arriving at the gateway.
    pub external: RequestStats,
    /// Each cluster's local requests, in the providers' order.
    pub locals: Vec<RequestStats>,
    /// Coefficient of variation of external service times (α_j, Eq 4.18).
    pub external_cv: f64,
    /// Coefficient of variation of local service times (β_j, Eq 4.19).
    pub local_cv: f64,
    /// Normalisation of service times.
    pub units: ServiceUnits,
}

impl QueueModel {
    /// The clusters as PAP sees them, with `external` for the external side.
    pub fn clusters(&self, providers: &[ProviderInfo], external: &RequestStats) -> Vec<ClusterLoad> {
        providers
            .iter()
            .zip(&self.locals)
            .map(|(p, local)| {
                let pes = f64::from(p.pes);
                let power = match self.units {
                    ServiceUnits::Seconds => pes * p.speed,
                    ServiceUnits::Thesis { reference_mips } => pes * pes * p.speed * reference_mips,
                };
                let theta = external.vms * external.duration / power;
                let tau = local.vms * local.duration / power;
                ClusterLoad::with_cvs(theta, local.rate, tau, self.external_cv, self.local_cv)
            })
            .collect()
    }
}

/// A gateway's dispatch policy.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GatewayPolicy {
    /// The fractions.
    pub allocation: Allocation,
    /// The sequence.
    pub dispatch: Dispatch,
    /// Where the statistics come from.
    pub statistics: Statistics,
    /// The statistics (needed by PAP and LRF).
    pub model: Option<QueueModel>,
}

/// What the gateway has seen of external requests, for the online statistics.
#[derive(Clone, Debug, Default)]
struct Observed {
    first: Option<SimTime>,
    last: SimTime,
    count: u64,
    vms: f64,
    duration: f64,
}

impl Observed {
    fn see(&mut self, now: SimTime, job: &JobSpec) {
        self.first.get_or_insert(now);
        self.last = now;
        self.count += 1;
        self.vms += f64::from(job.pes);
        self.duration += job.estimate;
    }

    /// The external statistics so far: a rate over the span between the first and the last arrival.
    fn stats(&self) -> Option<RequestStats> {
        let span = self.last.secs() - self.first?.secs();
        (self.count > 1 && span > 0.0).then(|| RequestStats {
            rate: (self.count - 1) as f64 / span,
            vms: self.vms / self.count as f64,
            duration: self.duration / self.count as f64,
        })
    }
}
/// A migration in search of a destination: the offer, and the providers still to ask (the next one last).
struct Search {
    migration: Migration,
    candidates: Vec<AgentId>,
}

/// Request types with a billiard sequence each under RTDP: the five lease types and plain jobs.
const TYPES: usize = 6;

fn type_index(lease: Option<LeaseType>) -> usize {
    match lease {
        None => 0,
        Some(LeaseType::Local) => 1,
        Some(LeaseType::Cancellable) => 2,
        Some(LeaseType::Suspendable) => 3,
        Some(LeaseType::Migratable) => 4,
        Some(LeaseType::NonPreemptable) => 5,
    }
}

/// The gateway agent.
pub struct Gateway {
    providers: Vec<ProviderInfo>,
    policy: GatewayPolicy,
    /// The fraction P_j of requests each provider receives.
    fractions: Vec<f64>,
    /// The fractions were computed (at the first request, when the trace can name the gateway).
    allocated: bool,
    /// RTDP's billiard sequences, by request type.
    billiards: Vec<Billiard>,
    observed: Observed,
    next: usize,
    forwarded: u64,
    rejected: u64,
    searches: BTreeMap<JobId, Search>,
    migrated: u64,
    migrations_refused: u64,
    pap_capped: u64,
    pap_refused: u64,
    /// Offer a refused request to the next provider -- config.
    reroute: bool,
    /// Providers that refused each request being re-routed -- internal state. An entry leaves when the request is
    /// rejected for good or a provider it was re-offered to answers `Accepted` or `Rejected`.
    refused_by: BTreeMap<JobId, Vec<AgentId>>,
    refusals: u64,
    rerouted: u64,
    admission_rejected: u64,
}

impl Gateway {
    /// A gateway over `providers` with `dispatch` over equal shares (the plain round robin by default).
    pub fn new(providers: Vec<ProviderInfo>, dispatch: Dispatch) -> Gateway {
        Gateway::with_policy(providers, GatewayPolicy { dispatch, ..GatewayPolicy::default() })
    }

    /// A gateway over `providers` dispatching by `policy`. PAP and LRF need its model (the scenario checks that);
    /// without it they share equally.
    pub fn with_policy(providers: Vec<ProviderInfo>, policy: GatewayPolicy) -> Gateway {
        let n = providers.len();
        // X = 1 for the fastest cluster: the shortest external service time, the most computing power.
        let power = |p: &ProviderInfo| f64::from(p.pes) * p.speed;
        let fastest = (0..n).fold(0, |best, j| if power(&providers[j]) > power(&providers[best]) { j } else { best });
        Gateway {
            fractions: dispatch::round_robin(n),
            allocated: false,
            billiards: vec![Billiard::new(n, fastest); TYPES],
            providers,
            policy,
            observed: Observed::default(),
            next: 0,
            forwarded: 0,
            rejected: 0,
            searches: BTreeMap::new(),
            migrated: 0,
            migrations_refused: 0,
            pap_capped: 0,
            pap_refused: 0,
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

    /// Sets the fractions of the allocation for external requests described by `external` (the configured ones when
    /// `None`). When PAP caps the rate or refuses (the statistics are unusable, every cluster saturated), it says why
    /// in the trace and counts it; a refusal keeps the fractions it had. PAP and LRF without a model (which the
    /// scenario requires of them) keep the equal shares.
    fn allocate(&mut self, external: Option<RequestStats>, gateway: &str) {
        let power: Vec<f64> = self.providers.iter().map(|p| f64::from(p.pes) * p.speed).collect();
        let model = self.policy.model.as_ref();
        let fractions = match (self.policy.allocation, model) {
            (Allocation::Rr, _) | (Allocation::Lrf | Allocation::Pap, None) => {
                dispatch::round_robin(self.providers.len())
            }
            (Allocation::Bcf, _) => dispatch::biggest_cluster_first(&power),
            (Allocation::Lrf, Some(model)) => {
                dispatch::least_rate_first(&model.locals.iter().map(|l| l.rate).collect::<Vec<_>>())
            }
            (Allocation::Pap, Some(model)) => {
                let external = external.unwrap_or(model.external);
                match pap::pap(&model.clusters(&self.providers, &external), external.rate) {
                    Ok(a) => {
                        if let Some(why) = &a.capped {
                            self.pap_capped += 1;
                            // Once in the trace's warnings per gateway; every estimate after at debug level.
                            if self.pap_capped == 1 {
                                tracing::warn!(gateway, "PAP capped: {why}");
                            } else {
                                tracing::debug!(gateway, "PAP capped: {why}");
                            }
                        }
                        a.fractions()
                    }
                    Err(e) => {
                        self.pap_refused += 1;
                        if self.pap_refused == 1 {
                            tracing::warn!(gateway, "PAP refused, fractions kept: {e}");
                        } else {
                            tracing::debug!(gateway, "PAP refused, fractions kept: {e}");
                        }
                        return;
                    }
                }
            }
        };
        self.fractions = fractions;
    }

    /// The providers able to hold `pes` PEs, in dispatch order from the next one.
    fn in_turn(&self, pes: u32) -> impl Iterator<Item = usize> + '_ {
        let n = self.providers.len();
        (0..n).map(move |k| (self.next + k) % n).filter(move |&i| self.providers[i].pes >= pes)
    }

    fn on_submit(&mut self, job: &JobSpec, msg: &Msg, ctx: &mut Ctx<'_>) {
        if !self.allocated {
            self.allocated = true;
            let name = ctx.name().to_string();
            self.allocate(None, &name);
        }
        if self.policy.statistics == Statistics::Online {
            self.observed.see(ctx.now(), job);
            if self.observed.count.is_multiple_of(REESTIMATE)
                && let Some(external) = self.observed.stats()
            {
                let name = ctx.name().to_string();
                self.allocate(Some(external), &name);
            }
        }
        let providers = &self.providers;
        let fits = |j: usize| providers[j].pes >= job.pes;
        let pick = match self.policy.dispatch {
            Dispatch::RoundRobin => self.in_turn(job.pes).next(),
            Dispatch::Rnd => dispatch::random(&self.fractions, fits, ctx.rng()),
            Dispatch::Rtdp => self.billiards[type_index(job.lease)].next(&self.fractions, fits),
        };
        match pick {
            Some(i) => {
                self.next = (i + 1) % self.providers.len();
                self.forwarded += 1;
                ctx.send(self.providers[i].id, msg.clone());
            }
            None => {
                self.rejected += 1;
                let reason = format!("no provider of this grid with a share of its requests has {} PEs", job.pes);
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
                return ctx.send(to, Msg::Job(JobMsg::Reoffer(Box::new(job.clone()))));
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
            // A provider answers a re-offered request: it is settled there.
            Msg::Job(JobMsg::Accepted { job } | JobMsg::Rejected { job, .. }) => {
                self.refused_by.remove(job);
            }
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
            other => crate::sim::unhandled(ctx, other.kind()),
        }
    }

    fn report(&self, _now: SimTime, out: &mut Report) {
        out.metrics.extend([
            ("forwarded", self.forwarded as f64),
            ("rejected", self.rejected as f64),
            ("migrated", self.migrated as f64),
            ("migrations_refused", self.migrations_refused as f64),
            ("pap_capped", self.pap_capped as f64),
            ("pap_refused", self.pap_refused as f64),
            ("admission_refusals", self.refusals as f64),
            ("rerouted", self.rerouted as f64),
            ("admission_rejected", self.admission_rejected as f64),
            ("reroutes_open", self.refused_by.len() as f64),
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn online_statistics_estimate_the_rate_and_the_means() {
        let mut seen = Observed::default();
        let t = |s| SimTime::new(s).unwrap();
        assert_eq!(seen.stats(), None);
        // Four requests 10 s apart: three gaps over 30 s.
        for (i, (pes, estimate)) in [(1, 100.0), (3, 300.0), (4, 200.0), (4, 400.0)].into_iter().enumerate() {
            let job = JobSpec { estimate, ..JobSpec::new(i as u64 + 1, AgentId::ENV, pes, estimate) };
            seen.see(t(10.0 * i as f64 + 5.0), &job);
        }
        let stats = seen.stats().unwrap();
        assert!((stats.rate - 0.1).abs() < 1e-12);
        assert_eq!((stats.vms, stats.duration), (3.0, 250.0));
    }
}
