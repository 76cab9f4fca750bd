//! The utility kind: `[utilities.<group>]` in a scenario, the resource manager of a public computing utility.

use schemars::JsonSchema;
use serde::Deserialize;

use super::sla::SlaTerms;
use super::{Utility, UtilityConfig, UtilityPolicy};
use crate::model::Service;
use crate::registry::values::{Delay, Fraction, GroupSize, Interval, NonNegative, Positive, PositiveInt, Seconds};
use crate::registry::{
    AgentKind, BuildCx, CheckCx, GroupSpec, Invalid, Member, Metric, ParseError, Policy, RawGroup, Registry, Unit,
};
use crate::sim::BoxedAgent;

/// The kind's name in the directory.
pub const KIND: &str = "utility";

/// The utility manager kind.
pub struct UtilityKind;

const SOURCE: &str = "Asaduzzaman & Maheswaran";

impl AgentKind for UtilityKind {
    fn services(&self) -> &'static [Service] {
        &[Service::RunsJobs, Service::ManagesNodes]
    }

    fn name(&self) -> &'static str {
        KIND
    }

    fn table(&self) -> &'static str {
        "utilities"
    }

    fn about(&self) -> &'static str {
        "the resource manager of a public computing utility: dedicated nodes plus replicas on opportunistic public nodes"
    }

    fn policies(&self, _: &Registry) -> Vec<Policy> {
        let policies =
            [UtilityPolicy::Dynamic, UtilityPolicy::Static, UtilityPolicy::Greedy, UtilityPolicy::RoundRobin];
        vec![Policy::of("policy", &policies, SOURCE)]
    }

    fn metrics(&self) -> &'static [Metric] {
        const METRICS: &[Metric] = &[
            Metric::new("submitted", Unit::Count, "jobs submitted"),
            Metric::new("completed", Unit::Count, "jobs completed"),
            Metric::new(
                "dropped",
                Unit::Count,
                "jobs dropped from the queue as hopeless before their first start (they could no longer finish within \
                 e_max)",
            ),
            Metric::new("offered_load", Unit::Ratio, "work submitted per second over the run, in dedicated nodes"),
            Metric::new(
                "carried_load",
                Unit::Ratio,
                "work completed per second after the warm-up, in dedicated nodes: the throughput that Erlang's loss \
                 formula predicts",
            ),
            Metric::new("throughput", Unit::PerSecond, "jobs completed per second after the warm-up"),
            Metric::new(
                "goodput",
                Unit::Ratio,
                "work per second of the jobs completed within e_max after the warm-up, in dedicated nodes",
            ),
            Metric::new(
                "elongation",
                Unit::Ratio,
                "mean elongation (T − T0) / T0 of the jobs completed, T from arrival",
            ),
            Metric::new(
                "response_time",
                Unit::Seconds,
                "mean time from arrival to completion of the jobs completed (the runtime a user sees, queueing and \
                 epochs included)",
            ),
            Metric::new(
                "failure_downtime",
                Unit::Seconds,
                "mean time per completed job with no instance running after all its replicas failed (from the last report)",
            ),
            Metric::new(
                "migration_downtime",
                Unit::Seconds,
                "mean time per completed job frozen in live migrations (the residual's copy)",
            ),
            Metric::new("replica_failures", Unit::Count, "public replicas found gone"),
            Metric::new(
                "restarts",
                Unit::Count,
                "jobs restarted from their checkpoint after all their replicas failed",
            ),
            Metric::new("migrations", Unit::Count, "live migrations started, in and out"),
            Metric::new("migrations_per_epoch", Unit::Ratio, "live migrations started per epoch"),
            Metric::new("migration_time", Unit::Seconds, "mean time of a live migration, bulk and residual"),
            Metric::new(
                "spawn_time",
                Unit::Seconds,
                "mean time to send a replica's state to a public node (grows without bound once the uplink saturates)",
            ),
            Metric::new("dedicated_utilisation", Unit::Share, "busy time of the dedicated nodes over theirs"),
            Metric::new(
                "public_work_share",
                Unit::Share,
                "share of the completed jobs' work done on public nodes (the forerunner's progress that counted)",
            ),
            Metric::new("uplink_mb", Unit::Count, "megabytes sent over the cluster's uplink"),
            Metric::new("downlink_mb", Unit::Count, "megabytes received over the cluster's downlink"),
            Metric::new(
                "replica_availability",
                Unit::Share,
                "share of the time jobs spent on public nodes after the warm-up with at least one replica really \
                 running, P(X ≥ 1) of the replica model (from the first replica's start until the job leaves them)",
            ),
            Metric::new(
                "replica_uptime",
                Unit::Share,
                "mean replicas of a job on public nodes really running, over k: the p = μ / (λ + μ) of the replica model",
            ),
            Metric::new(
                "uplink_load",
                Unit::Ratio,
                "bits asked of the cluster's uplink per second after the warm-up (spawns, replenishments, migrations \
                 out), over its bandwidth: the λ_b / B_up of the bottleneck bound (0 for free transfers)",
            ),
            Metric::new(
                "backlog_growth",
                Unit::PerSecond,
                "least-squares slope of the jobs waiting for their first start (queued, or their state on its way), \
                 sampled every epoch after the warm-up: about 0 while the uplink keeps up, positive once it cannot",
            ),
            Metric::new(
                "sla_correlation",
                Unit::Relative,
                "Pearson's r across users of goodput V against min(V_0, B) over the run: the service differentiation",
            ),
        ];
        METRICS
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<RawUtility>()
    }

    fn parse(&self, group: toml::Value) -> Result<Box<dyn RawGroup>, ParseError> {
        Ok(Box::new(crate::registry::parse::<RawUtility>(group)?))
    }
}

/// A group of utility managers (its nodes name it in `[nodes.<group>]`, its users in `submit-to`).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawUtility {
    /// How many managers (each with the nodes that name it).
    #[serde(default = "GroupSize::one")]
    pub count: GroupSize,
    /// How the dedicated nodes are shared: "dynamic" (priorities from the SLA deviation and the elongation, with
    /// preemptive migration; default), "static" (non-preemptive, the users with the highest deviation first),
    /// "greedy" (arrival order, no migration) or "round-robin" (the dedicated nodes rotate among running jobs).
    #[serde(default)]
    #[schemars(with = "String")]
    pub policy: UtilityPolicy,
    /// Scheduling epoch δ [s; default 120]; public nodes report progress at this period.
    pub epoch: Option<Interval>,
    /// Replicas k of a job on public nodes (default 2).
    pub replicas: Option<PositiveInt>,
    /// The cluster's uplink B_up [bit/s; default 1e8].
    pub uplink: Option<Positive>,
    /// The cluster's downlink B_down [bit/s; default 1e8].
    pub downlink: Option<Positive>,
    /// Transfers take no time and load no link (the equivalent-capacity model's assumption); not with `uplink` or
    /// `downlink`.
    #[serde(default)]
    pub free_transfers: bool,
    /// A job's memory footprint when it has none of its own (a trace's jobs have their memory per processor) [MB;
    /// default 1].
    pub footprint: Option<Positive>,
    /// What a migration copies, in footprints (default 1; 3 for the paper's DAS-2 runs).
    pub migration_factor: Option<Positive>,
    /// The share of a migration's data copied after the job is frozen (default 0.1).
    pub residual: Option<Fraction>,
    /// A public replica silent this long has failed [s; default two epochs].
    pub timeout: Option<Seconds>,
    /// A migrated job stays put this long [s; default one epoch].
    pub hold_down: Option<Delay>,
    /// Completions before this time are left out of `carried-load`, `throughput` and `goodput` [s; default 0].
    pub warm_up: Option<Delay>,
    /// The dedicated nodes alone: public nodes are never given work (a dedicated-only baseline paired with the
    /// utility on the same jobs, e.g. the 400 CPUs of DAS-2 against a utility with 100).
    #[serde(default)]
    pub dedicated_only: bool,
    /// The SLA every user signs.
    #[serde(default)]
    pub sla: RawSla,
}

/// `sla = { … }`: the terms of Section 4.3.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawSla {
    /// Service ratio ρ (default 1).
    pub ratio: Option<Fraction>,
    /// Measurement window τ [s; default 86400].
    pub window: Option<Seconds>,
    /// The largest elongation e_max for which a job earns revenue (default 1).
    pub max_elongation: Option<NonNegative>,
    /// Each user's V_0, drawn uniformly per user [dedicated nodes; default [1, 10]]: `[low, high]`.
    pub max_load: Option<[f64; 2]>,
}

impl RawGroup for RawUtility {
    fn count(&self) -> usize {
        self.count.0 as usize
    }

    fn check(&self, _: &CheckCx<'_>) -> Result<Box<dyn GroupSpec>, Invalid> {
        if self.free_transfers && (self.uplink.is_some() || self.downlink.is_some()) {
            return Err(Invalid::at(
                "free-transfers",
                "transfers that take no time have no link speed: leave out `uplink` and `downlink`",
            ));
        }
        let ratio = self.sla.ratio.map_or(1.0, |r| r.0);
        if ratio <= 0.0 {
            return Err(Invalid::at("sla.ratio", "expected a service ratio in (0, 1], found 0"));
        }
        let max_load = match self.sla.max_load {
            None => (1.0, 10.0),
            Some([lo, hi]) if lo.is_finite() && hi.is_finite() && 0.0 < lo && lo <= hi => (lo, hi),
            Some([lo, hi]) => {
                return Err(Invalid::at(
                    "sla.max-load",
                    format!("expected [low, high] with 0 < low <= high, found [{lo}, {hi}]"),
                ));
            }
        };
        let epoch = self.epoch.map_or(120.0, |e| e.0);
        let link = |l: Option<Positive>| if self.free_transfers { f64::INFINITY } else { l.map_or(1e8, |b| b.0) };
        Ok(Box::new(UtilitySpec(UtilityConfig {
            policy: self.policy,
            epoch,
            replicas: self.replicas.map_or(2, |r| r.0),
            uplink: link(self.uplink),
            downlink: link(self.downlink),
            footprint: self.footprint.map_or(1.0, |f| f.0) * 1e6,
            migration_factor: self.migration_factor.map_or(1.0, |f| f.0),
            residual: self.residual.map_or(0.1, |r| r.0),
            timeout: self.timeout.map_or(2.0 * epoch, |t| t.0),
            hold_down: self.hold_down.map_or(epoch, |h| h.0),
            sla: SlaTerms {
                ratio,
                window: self.sla.window.map_or(86_400.0, |w| w.0),
                max_elongation: self.sla.max_elongation.map_or(1.0, |e| e.0),
            },
            max_load,
            warm_up: self.warm_up.map_or(0.0, |w| w.0),
            dedicated_only: self.dedicated_only,
            seed: 0,
        })))
    }
}

/// A checked utility group.
#[derive(Clone, Debug, PartialEq)]
pub struct UtilitySpec(UtilityConfig);

impl GroupSpec for UtilitySpec {
    fn periods(&self) -> Vec<(&'static str, f64)> {
        vec![("epoch", self.0.epoch)]
    }

    fn build(&self, _: &Member<'_>, cx: &mut BuildCx) -> Result<BoxedAgent, String> {
        Ok(Box::new(Utility::new(UtilityConfig { seed: cx.seed, ..self.0.clone() })))
    }
}
