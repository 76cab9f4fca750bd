//! The request source kind: `[sources.<group>]` in a scenario.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{RequestSource, Service, SourceConfig};
use crate::model;
use crate::registry::values::{Delay, Fraction, JobCount, Positive};
use crate::registry::{
    AgentKind, BuildCx, CheckCx, GroupSpec, Invalid, Member, Members, Metric, ParseError, RawGroup, SummaryRows, Unit,
};
use crate::sim::BoxedAgent;

/// The kind's name in the directory.
pub const KIND: &str = "source";

/// What a source's `target` may be: an opaque or a transparent broker, or a splitter between them.
const TARGETS: &[model::Service] =
    &[model::Service::MatchesByAnySchedulability, model::Service::MatchesOnTimetables, model::Service::SplitsRequests];

/// The request source kind.
pub struct SourceKind;

impl AgentKind for SourceKind {
    /// Melendez (2010)'s statistics, for the first four sources.
    fn summary_rows(&self) -> SummaryRows {
        SummaryRows {
            metrics: &[("blocking", "blocking B"), ("revenue_rate", "revenue R")],
            members: 4,
            only_if_all: false,
        }
    }

    fn name(&self) -> &'static str {
        KIND
    }

    fn table(&self) -> &'static str {
        "sources"
    }

    fn about(&self) -> &'static str {
        "a Poisson source of advance reservations (to a matchmaker) and on-demand requests (to single-CPU resources), with the statistics of Melendez (2010)"
    }

    fn metrics(&self) -> &'static [Metric] {
        const METRICS: &[Metric] = &[
            Metric::new("arrived", Unit::Count, "requests generated (AR and OD)"),
            Metric::new("accepted", Unit::Count, "requests accepted (placed by a broker, or scheduled on demand)"),
            Metric::new("rejected", Unit::Count, "requests rejected"),
            Metric::new(
                "unanswered",
                Unit::Count,
                "requests with no answer when the run ended (must be 0 in a drained run)",
            ),
            Metric::new("on_demand", Unit::Count, "on-demand (OD) requests generated"),
            Metric::new(
                "on_demand_rejected",
                Unit::Count,
                "OD requests rejected (0: a resource always schedules them)",
            ),
            Metric::new("late", Unit::Count, "accepted ARs completed after their deadline (must be 0)"),
            Metric::new(
                "blocking",
                Unit::Share,
                "blocking ratio B (Melendez 2010 §5): rejected over arrived, ODs included; the system's B under the Combined strategy (rejected by the last broker over all arrivals) and under the Independent one (x·B_T + (1 − x)·B_O with realised shares)",
            ),
            Metric::new("ar_blocking", Unit::Share, "blocking ratio of the advance reservations alone"),
            Metric::new("acceptance", Unit::Share, "acceptance ratio 1 − B"),
            Metric::new("throughput", Unit::PerSecond, "rate of accepted requests A = λ(1 − B)"),
            Metric::new(
                "revenue_rate",
                Unit::Ratio,
                "revenue rate R: service time of the accepted requests over the simulation time (to the later of the last arrival and the last completion) [cunits/s, one cunit a resource-second]",
            ),
            Metric::new(
                "response_time",
                Unit::Seconds,
                "mean response time W of the completed requests (completion − arrival)",
            ),
            Metric::new(
                "in_system",
                Unit::Count,
                "mean number N of accepted requests in the system: their response times over the simulation time",
            ),
            Metric::new(
                "littles_law",
                Unit::Relative,
                "Little's-law check over the whole run: the throughput N/W against the accepted arrival rate measured \
                 over the same simulated time, X = accepted / T, as (N/W)/X − 1; 0 when every accepted request \
                 completes (the drain after the last arrival is inside T on both sides, where λ(1 − B) would miss it)",
            ),
        ];
        METRICS
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<RawSource>()
    }

    fn parse(&self, group: toml::Value) -> Result<Box<dyn RawGroup>, ParseError> {
        Ok(Box::new(crate::registry::parse::<RawSource>(group)?))
    }
}

/// Service times: `{ uniform = [lo, hi] }` or `{ hyper-exponential = { mean = m, cv = c } }` \[s\].
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub enum RawService {
    /// Uniform between two positive bounds \[s\].
    Uniform([Positive; 2]),
    /// Two-phase hyper-exponential (balanced means) with this mean \[s\] and coefficient of variation (at least 1).
    HyperExponential {
        /// Mean \[s\].
        mean: Positive,
        /// Coefficient of variation (1: exponential).
        cv: Positive,
    },
}

/// A request source.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawSource {
    /// Where advance reservations go: a broker (AS-based or transparent) or a splitter.
    pub target: String,
    /// Arrival rate λ [requests per second].
    pub rate: Positive,
    /// Requests to generate (the thesis: about 5,000 per λ point).
    pub requests: JobCount,
    /// Service-time distribution (default `{ uniform = [600, 5400] }`, U(10, 90) minutes).
    pub service: Option<RawService>,
    /// Earliest start time S = arrival + U(0, this) \[s\] (default 43,200, 12 h).
    pub start_spread: Option<Delay>,
    /// Laxity L = D − S − E as a multiple of the mean service time, the same for every request (default 2.0, 200%).
    pub laxity: Option<Positive>,
    /// Probability that an arrival is an on-demand request (default 0; the mixed workload: 0.2).
    pub on_demand: Option<Fraction>,
    /// The resources (groups or members) taking on-demand requests, in turn; needed when `on-demand` > 0.
    #[serde(default)]
    pub on_demand_resources: Vec<String>,
    /// An on-demand request's initial window: D = arrival + E + this \[s\] (default 12 h + 100 × the mean service time).
    pub on_demand_window: Option<Positive>,
    /// An on-demand request's laxity once scheduled, as a multiple of the mean service time (default 2.0).
    pub on_demand_laxity: Option<Positive>,
}

impl RawGroup for RawSource {
    fn count(&self) -> usize {
        1
    }

    fn check(&self, cx: &CheckCx<'_>) -> Result<Box<dyn GroupSpec>, Invalid> {
        let target = cx.resolve_one("target", &self.target, TARGETS)?;
        let service = match self.service {
            None => Service::Uniform(600.0, 5400.0),
            Some(RawService::Uniform([lo, hi])) if lo.0 > hi.0 => {
                return Err(Invalid::at("service.uniform", format!("expected lo ≤ hi, found [{}, {}]", lo.0, hi.0)));
            }
            Some(RawService::Uniform([lo, hi])) => Service::Uniform(lo.0, hi.0),
            Some(RawService::HyperExponential { cv, .. }) if cv.0 < 1.0 => {
                return Err(Invalid::at(
                    "service.hyper-exponential.cv",
                    format!("expected a coefficient of variation of at least 1, found {}", cv.0),
                ));
            }
            Some(RawService::HyperExponential { mean, cv }) => Service::HyperExponential { mean: mean.0, cv: cv.0 },
        };
        let on_demand = self.on_demand.map_or(0.0, |f| f.0);
        if on_demand > 0.0 && self.on_demand_resources.is_empty() {
            return Err(Invalid::at("on-demand-resources", "on-demand > 0 needs the resources that take them"));
        }
        let on_demand_resources =
            cx.resolve_all("on-demand-resources", &self.on_demand_resources, &[model::Service::RunsRequests])?;
        let mean = service.mean();
        Ok(Box::new(SourceSpec {
            target,
            on_demand_resources,
            rate: self.rate.0,
            requests: self.requests.0,
            service,
            start_spread: self.start_spread.map_or(43_200.0, |d| d.0),
            laxity: self.laxity.map_or(2.0, |l| l.0),
            on_demand,
            on_demand_window: self.on_demand_window.map_or(43_200.0 + 100.0 * mean, |w| w.0),
            on_demand_laxity: self.on_demand_laxity.map_or(2.0, |l| l.0),
        }))
    }
}

/// A checked source.
#[derive(Clone, Debug)]
pub struct SourceSpec {
    target: Members,
    on_demand_resources: Vec<Members>,
    rate: f64,
    requests: u64,
    service: Service,
    start_spread: f64,
    laxity: f64,
    on_demand: f64,
    on_demand_window: f64,
    on_demand_laxity: f64,
}

impl GroupSpec for SourceSpec {
    fn build(&self, member: &Member<'_>, cx: &mut BuildCx) -> Result<BoxedAgent, String> {
        let on_demand_resources =
            self.on_demand_resources.iter().flat_map(Members::names).map(|n| cx.id(&n)).collect::<Result<_, _>>()?;
        let config = SourceConfig {
            target: cx.single(&self.target)?,
            rate: self.rate,
            requests: self.requests,
            service: self.service,
            start_spread: self.start_spread,
            laxity: self.laxity,
            on_demand: self.on_demand,
            on_demand_resources,
            on_demand_window: self.on_demand_window,
            on_demand_laxity: self.on_demand_laxity,
        };
        Ok(Box::new(RequestSource::new(config, u64::from(member.id.0) << 40)))
    }
}
