//! The single-CPU resource kind: `[cpu-resources.<group>]` in a scenario.

use schemars::JsonSchema;
use serde::Deserialize;

use super::CpuResource;
use crate::matchmaking::{EdfPlacement, LocalPolicy, Pool};
use crate::model::Service;
use crate::registry::values::GroupSize;
use crate::registry::{
    AgentKind, BuildCx, CheckCx, GroupSpec, Invalid, Member, Members, Metric, ParseError, Policy, RawGroup, Registry,
    Unit,
};
use crate::sim::BoxedAgent;

/// The kind's name in the directory.
pub const KIND: &str = "cpu-resource";

/// The single-CPU resource kind.
pub struct CpuResourceKind;

impl AgentKind for CpuResourceKind {
    fn services(&self) -> &'static [Service] {
        &[Service::RunsRequests]
    }

    fn name(&self) -> &'static str {
        KIND
    }

    fn table(&self) -> &'static str {
        "cpu-resources"
    }

    fn about(&self) -> &'static str {
        "a resource with one CPU and a non-preemptive EDF or ESF timetable, in a transparent or opaque pool (Melendez 2010)"
    }

    fn policies(&self, _: &Registry) -> Vec<Policy> {
        vec![
            Policy::of("policy", &[LocalPolicy::Edf, LocalPolicy::Esf], "Melendez (2010) §3.2"),
            Policy::of("edf-placement", &[EdfPlacement::Literal, EdfPlacement::Either], "Melendez (2010) §3.2.1"),
        ]
    }

    fn metrics(&self) -> &'static [Metric] {
        const METRICS: &[Metric] = &[
            Metric::new("completed", Unit::Count, "requests run to completion"),
            Metric::new("on_demand", Unit::Count, "on-demand requests taken"),
            Metric::new("utilisation", Unit::Share, "busy time of the CPU over the run"),
            Metric::new("deadline_misses", Unit::Count, "accepted requests run outside their window (must be 0)"),
            Metric::new(
                "refused_after_acceptance",
                Unit::Count,
                "requests a broker's test accepted that the timetable then refused (must be 0)",
            ),
        ];
        METRICS
    }

    fn summed_metrics(&self) -> &'static [&'static str] {
        &["deadline_misses", "refused_after_acceptance"]
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<RawCpuResource>()
    }

    fn parse(&self, group: toml::Value) -> Result<Box<dyn RawGroup>, ParseError> {
        Ok(Box::new(crate::registry::parse::<RawCpuResource>(group)?))
    }
}

/// A group of single-CPU resources.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawCpuResource {
    /// How many resources (Nr).
    #[serde(default = "GroupSize::one")]
    pub count: GroupSize,
    /// The resource directory they register with.
    pub directory: String,
    /// "transparent" (the policy is published) or "opaque" (it is not).
    pub pool: Pool,
    /// Local scheduling policy: "edf" (modified Earliest Deadline First with gap filling; default) or "esf"
    /// (Earliest Start time First).
    #[serde(default)]
    pub policy: LocalPolicy,
    /// When modified EDF accepts a request, which the thesis leaves open: "literal" (as printed: the deadline order
    /// with it must be feasible before an earlier idle slot is tried; default) or "either" (accepted when the
    /// deadline order or an earlier idle slot holds it). EDF only.
    pub edf_placement: Option<EdfPlacement>,
}

impl RawGroup for RawCpuResource {
    fn count(&self) -> usize {
        self.count.0 as usize
    }

    fn check(&self, cx: &CheckCx<'_>) -> Result<Box<dyn GroupSpec>, Invalid> {
        let directory = cx.resolve_one("directory", &self.directory, &[Service::ListsResources])?;
        if self.edf_placement.is_some() && self.policy != LocalPolicy::Edf {
            return Err(Invalid::at("edf-placement", "applies to the \"edf\" policy only, not \"esf\"")
                .hint("drop `edf-placement`, or set `policy = \"edf\"`"));
        }
        let (transparent, policy) = (self.pool == Pool::Transparent, self.policy);
        let placement = self.edf_placement.unwrap_or_default();
        Ok(Box::new(CpuResourceSpec { directory, transparent, policy, placement }))
    }
}

/// A checked resource group.
#[derive(Clone, Debug)]
pub struct CpuResourceSpec {
    directory: Members,
    transparent: bool,
    policy: LocalPolicy,
    placement: EdfPlacement,
}

impl GroupSpec for CpuResourceSpec {
    fn build(&self, _: &Member<'_>, cx: &mut BuildCx) -> Result<BoxedAgent, String> {
        let directory = cx.single(&self.directory)?;
        Ok(Box::new(CpuResource::new(directory, self.policy, self.transparent).with_edf_placement(self.placement)))
    }
}
