//! The gateway kind: `[gateways.<group>]` in a scenario, InterGrid gateways over a grid of providers.

use std::collections::BTreeMap;

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
            Metric::new("admission_refusals", Unit::Count, "requests a provider's admission control sent back"),
            Metric::new("rerouted", Unit::Count, "refused requests offered to another provider (with `reroute`)"),
            Metric::new("admission_rejected", Unit::Count, "refused requests rejected for good"),
        ];
        METRICS
    }

    fn summed_metrics(&self) -> &'static [&'static str] {
        &["admission_rejected"]
    }

    fn derived_metrics(&self) -> &'static [Metric] {
        const DERIVED: &[Metric] = &[
            Metric::new(
                "violation_rate",
                Unit::Share,
                "deadline violation rate of the external requests (Amini Salehi, Javadi & Buyya, Eq 14): (a·v + r)/(a + \
                 r), a the requests the providers accepted, v the share of those not completed by their deadline, r \
                 those rejected for good; with gateways and providers that report external requests",
            ),
            Metric::new(
                "completed_share",
                Unit::Share,
                "external requests completed (by their deadline or not) over those submitted, a + r",
            ),
        ];
        DERIVED
    }

    fn derive_metrics(&self, metrics: &mut BTreeMap<String, f64>) {
        let get = |k: &str| metrics.get(k).copied().unwrap_or(0.0);
        // Every request a provider saw is accepted there or refused; a request re-routed is refused and seen again.
        let accepted = get("external_requests") - get("external_refused");
        let (rejected, met, completed) = (get("admission_rejected"), get("external_met"), get("external_completed"));
        let total = accepted + rejected;
        if total > 0.0 {
            metrics.insert("violation_rate".into(), (accepted - met + rejected) / total);
            metrics.insert("completed_share".into(), completed / total);
        }
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
    /// Offer a request a provider's admission control refused to the next provider that has not refused it (default
    /// false: the rejection is final, as in Amini Salehi, Javadi & Buyya).
    #[serde(default)]
    pub reroute: bool,
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
        Ok(Box::new(GatewaySpec { providers, dispatch: self.dispatch, reroute: self.reroute }))
    }
}

/// A checked gateway group.
#[derive(Clone, Debug, PartialEq)]
pub struct GatewaySpec {
    /// Its grid's providers.
    pub providers: Vec<Members>,
    /// Dispatch policy.
    pub dispatch: Dispatch,
    /// Re-route refused requests.
    pub reroute: bool,
}

impl GroupSpec for GatewaySpec {
    fn build(&self, _: &Member<'_>, cx: &mut BuildCx) -> Result<BoxedAgent, String> {
        let providers = self.providers.iter().flat_map(Members::names).map(|p| cx.provider(&p));
        let providers = providers.collect::<Result<_, _>>()?;
        let gateway = Gateway::new(providers, self.dispatch);
        Ok(Box::new(if self.reroute { gateway.rerouting() } else { gateway }))
    }
}
