//! The meta-broker kind: `[metabrokers.<name>]` in a scenario, one meta-broker (Garg 2010, ch3–4) scheduling the
//! queued requests on its providers at the end of every interval.

use schemars::JsonSchema;
use serde::Deserialize;

use super::agent::MetaBroker;
use super::{GreedyRank, MgnSolver, RoundPolicy, SchedulingPolicy};
use crate::provider::kind::KIND as PROVIDER;
use crate::registry::values::Interval;
use crate::registry::{
    AgentKind, BuildCx, CheckCx, GroupSpec, Invalid, Member, Members, Metric, ParseError, Policy, RawGroup, Unit,
    serde_name, unknown_name,
};
use crate::sim::BoxedAgent;

/// The kind's name in the directory: providers find meta-brokers by it to register.
pub const KIND: &str = "metabroker";

/// The meta-broker kind.
pub struct MetaBrokerKind;

impl AgentKind for MetaBrokerKind {
    fn name(&self) -> &'static str {
        KIND
    }

    fn table(&self) -> &'static str {
        "metabrokers"
    }

    fn about(&self) -> &'static str {
        "a market-oriented meta-broker: batches users' requests and reserves slots for them every interval"
    }

    fn policies(&self) -> Vec<Policy> {
        let solvers = [
            MgnSolver::Transportation,
            MgnSolver::Microlp,
            #[cfg(feature = "highs")]
            MgnSolver::Highs,
        ];
        vec![
            Policy::of("policy", &SchedulingPolicy::ALL, "Garg (2010) ch4"),
            Policy::of("solver", &solvers, "of the MGN relaxation"),
            Policy::of("greedy", &[GreedyRank::Cost, GreedyRank::Price], "what greedy ranks sites by"),
        ]
    }

    fn metrics(&self) -> &'static [Metric] {
        const METRICS: &[Metric] = &[
            Metric::new("rounds", Unit::Count, "scheduling rounds run"),
            Metric::new(
                "tickets",
                Unit::Count,
                "tickets issued: a job (or a part of a split job) placed on a provider",
            ),
            Metric::new("dropped", Unit::Count, "jobs dropped: no feasible placement before their deadline"),
            Metric::new("spending", Unit::Money, "what the tickets quoted, summed: the users' spending as planned"),
            Metric::new("providers", Unit::Count, "providers in the catalogue at the end of the run"),
            Metric::new("users", Unit::Count, "users registered"),
            Metric::new("generations", Unit::Count, "genetic-algorithm generations run, summed over rounds"),
            Metric::new(
                "solver_fallbacks",
                Unit::Count,
                "rounds where the configured LP solver failed and the transportation solver stood in",
            ),
            Metric::new(
                "generations_per_round",
                Unit::Count,
                "generations over the rounds that ran the genetic algorithm",
            ),
        ];
        METRICS
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<RawMetaBroker>()
    }

    fn parse(&self, group: toml::Value) -> Result<Box<dyn RawGroup>, ParseError> {
        Ok(Box::new(crate::registry::parse::<RawMetaBroker>(group)?))
    }
}

/// A meta-broker (Garg 2010, ch3–4): schedules the queued requests at the end of every interval.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawMetaBroker {
    /// Scheduling policy: "greedy" (default), "mmc", "ga", "lpga", "hga" (each job whole on one site), or "lp" (the
    /// MGN relaxation: a job's tasks may be split over several sites, one ticket per part); or the name of a policy
    /// added to the registry, which places one job at a time (see docs/writing-a-policy.md).
    #[serde(default = "greedy")]
    pub policy: String,
    /// Scheduling interval SI [s] (default 50; from 0.001 s, so that rounds advance the clock).
    pub interval: Option<Interval>,
    /// Solver of the MGN relaxation (policies lp, mmc, lpga): "transportation" (exact network simplex; default),
    /// "microlp", or "highs" (only in a build with `--features highs`).
    #[serde(default)]
    #[schemars(with = "String")]
    pub solver: MgnSolver,
    /// What the greedy policy (and HGA's seed) ranks sites by: "cost" (the application's cost there, price ×
    /// runtime / speed; default) or "price" (the price per CPU-second, as Garg 2010 §3.5 words it: "a resource
    /// provider with the lowest price"). They differ only between sites of different speeds.
    #[serde(default)]
    #[schemars(with = "String")]
    pub greedy: GreedyRank,
    /// The provider groups (or members) it schedules on; `["*"]` means every provider.
    pub providers: Vec<String>,
}

fn greedy() -> String {
    serde_name(&SchedulingPolicy::Greedy)
}

impl RawMetaBroker {
    /// The policy named by `policy`: one of the thesis's, or one of the registry's.
    fn round_policy(&self, cx: &CheckCx<'_>) -> Result<RoundPolicy, Invalid> {
        let name = self.policy.as_str();
        if let Some(&policy) = SchedulingPolicy::ALL.iter().find(|p| serde_name(*p) == name) {
            return Ok(RoundPolicy::Thesis(policy));
        }
        if let Some(policy) = cx.registry.meta_policy(name) {
            return Ok(RoundPolicy::Each(policy));
        }
        let thesis = SchedulingPolicy::ALL.iter().map(serde_name);
        let known: Vec<String> = thesis.chain(cx.registry.meta_policies().iter().map(|p| p.name().into())).collect();
        Err(unknown_name("policy", name, known.iter().map(String::as_str)))
    }
}

impl RawGroup for RawMetaBroker {
    fn count(&self) -> usize {
        1
    }

    fn check(&self, cx: &CheckCx<'_>) -> Result<Box<dyn GroupSpec>, Invalid> {
        let providers = cx.resolve_all("providers", &self.providers, &[PROVIDER])?;
        if providers.is_empty() {
            return Err(Invalid::at("providers", "expected at least one provider"));
        }
        let policy = self.round_policy(cx)?;
        let interval = self.interval.map_or(50.0, |i| i.0);
        let (solver, greedy) = (self.solver, self.greedy);
        Ok(Box::new(MetaBrokerSpec { providers, policy, interval, solver, greedy }))
    }
}

/// A checked meta-broker.
#[derive(Clone, Debug, PartialEq)]
pub struct MetaBrokerSpec {
    /// The providers of its market.
    pub providers: Vec<Members>,
    /// Scheduling policy.
    pub policy: RoundPolicy,
    /// Scheduling interval [s].
    pub interval: f64,
    /// Solver of the MGN relaxation.
    pub solver: MgnSolver,
    /// What greedy ranks sites by.
    pub greedy: GreedyRank,
}

impl GroupSpec for MetaBrokerSpec {
    fn build(&self, _: &Member<'_>, cx: &mut BuildCx) -> Result<BoxedAgent, String> {
        let members = self.providers.iter().flat_map(Members::names).map(|p| cx.id(&p));
        let members = members.collect::<Result<Vec<_>, _>>()?;
        Ok(Box::new(
            MetaBroker::new(self.policy, self.interval, members).with_solver(self.solver).with_greedy_rank(self.greedy),
        ))
    }
}
