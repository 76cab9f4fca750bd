//! The gateway kind: `[gateways.<group>]` in a scenario, InterGrid gateways over a grid of providers.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Dispatch, Gateway};
use crate::provider::kind::KIND as PROVIDER;
use crate::registry::values::GroupSize;
use crate::registry::{
    AgentKind, BuildCx, CheckCx, GroupSpec, Invalid, Member, Members, Metric, ParseError, Policy, RawGroup, Unit,
};
use crate::sim::BoxedAgent;

/// The kind's name in the directory.
pub const KIND: &str = "gateway";

/// The InterGrid gateway kind.
pub struct GatewayKind;

impl AgentKind for GatewayKind {
    fn name(&self) -> &'static str {
        KIND
    }

    fn table(&self) -> &'static str {
        "gateways"
    }

    fn about(&self) -> &'static str {
        "an InterGrid gateway: dispatches its grid's external requests and finds destinations for migrating leases"
    }

    fn policies(&self) -> Vec<Policy> {
        vec![Policy::of("dispatch", &[Dispatch::RoundRobin], "Amini Salehi (2012) ch4")]
    }

    fn metrics(&self) -> &'static [Metric] {
        const METRICS: &[Metric] = &[
            Metric::new("forwarded", Unit::Count, "requests forwarded to a provider"),
            Metric::new("rejected", Unit::Count, "requests no provider would take"),
            Metric::new("migrated", Unit::Count, "preempted leases moved to another provider"),
            Metric::new("migrations_refused", Unit::Count, "preempted leases no other provider would take"),
        ];
        METRICS
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<RawGateway>()
    }

    fn parse(&self, group: toml::Value) -> Result<Box<dyn RawGroup>, ParseError> {
        Ok(Box::new(crate::registry::parse::<RawGateway>(group)?))
    }
}

/// A group of InterGrid gateways.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawGateway {
    /// How many gateways (each over the same providers; at most 100,000 agents per scenario).
    #[serde(default = "GroupSize::one")]
    pub count: GroupSize,
    /// The provider groups (or members) of this gateway's grid.
    pub providers: Vec<String>,
    /// Dispatch policy: "round-robin" (default).
    #[serde(default)]
    #[schemars(with = "String")]
    pub dispatch: Dispatch,
}

impl RawGroup for RawGateway {
    fn count(&self) -> usize {
        self.count.0 as usize
    }

    fn check(&self, cx: &CheckCx<'_>) -> Result<Box<dyn GroupSpec>, Invalid> {
        if self.providers.is_empty() {
            return Err(Invalid::at("providers", "expected at least one provider"));
        }
        let mut providers = Vec::new();
        for (i, p) in self.providers.iter().enumerate() {
            providers.push(cx.resolve(&format!("providers.{i}"), p, &[PROVIDER])?);
        }
        Ok(Box::new(GatewaySpec { providers, dispatch: self.dispatch }))
    }
}

/// A checked gateway group.
#[derive(Clone, Debug, PartialEq)]
pub struct GatewaySpec {
    /// Its grid's providers.
    pub providers: Vec<Members>,
    /// Dispatch policy.
    pub dispatch: Dispatch,
}

impl GroupSpec for GatewaySpec {
    fn build(&self, _: &Member<'_>, cx: &mut BuildCx) -> Result<BoxedAgent, String> {
        let providers = self.providers.iter().flat_map(Members::names).map(|p| cx.provider(&p));
        let providers = providers.collect::<Result<_, _>>()?;
        Ok(Box::new(Gateway::new(providers, self.dispatch)))
    }
}
