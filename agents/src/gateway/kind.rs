//! The gateway kind: `[gateways.<group>]` in a scenario, InterGrid gateways over a grid of providers.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use super::pap::{EXTERNAL_CV, LOCAL_CV};
use super::{Allocation, Dispatch, Gateway, GatewayPolicy, QueueModel, RequestStats, ServiceUnits, Statistics};
use crate::model::Service;
use crate::registry::values::{GroupSize, NonNegative, Positive};
use crate::registry::{
    AgentKind, BuildCx, CheckCx, GroupSpec, Invalid, Member, Members, Metric, ParseError, Policy, RawGroup, Registry,
    Unit,
};
use crate::sim::BoxedAgent;

/// The kind's name in the directory.
pub const KIND: &str = "gateway";

/// The InterGrid gateway kind.
pub struct GatewayKind;

impl AgentKind for GatewayKind {
    fn services(&self) -> &'static [Service] {
        &[Service::RunsJobs]
    }

    fn name(&self) -> &'static str {
        KIND
    }

    fn table(&self) -> &'static str {
        "gateways"
    }

    fn about(&self) -> &'static str {
        "an InterGrid gateway: dispatches its grid's external requests and finds destinations for migrating leases"
    }

    fn policies(&self, _: &Registry) -> Vec<Policy> {
        let source = "Amini Salehi (2012) ch4";
        vec![
            Policy::of("allocation", &[Allocation::Rr, Allocation::Lrf, Allocation::Bcf, Allocation::Pap], source),
            Policy::of("dispatch", &[Dispatch::RoundRobin, Dispatch::Rnd, Dispatch::Rtdp], source),
            Policy::of("statistics", &[Statistics::Configured, Statistics::Online], source),
        ]
    }

    fn metrics(&self) -> &'static [Metric] {
        const METRICS: &[Metric] = &[
            Metric::new("forwarded", Unit::Count, "requests forwarded to a provider"),
            Metric::new("rejected", Unit::Count, "requests no provider would take"),
            Metric::new("migrated", Unit::Count, "preempted leases moved to another provider"),
            Metric::new("migrations_refused", Unit::Count, "preempted leases no other provider would take"),
            Metric::substitution(
                "pap_capped",
                "PAP allocations that capped the external rate at 99% of the clusters' spare capacity (the trace says why)",
            ),
            Metric::substitution(
                "pap_refused",
                "PAP allocations refused (unusable statistics, every cluster saturated), keeping the fractions before (the trace says why)",
            ),
            Metric::new("admission_refusals", Unit::Count, "requests a provider's admission control sent back"),
            Metric::new("rerouted", Unit::Count, "refused requests offered to another provider (with `reroute`)"),
            Metric::new("admission_rejected", Unit::Count, "refused requests rejected for good"),
            Metric::new(
                "reroutes_open",
                Unit::Count,
                "re-routed requests still awaiting a provider's answer at the end (0 once the run drains)",
            ),
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
    /// Allocation and dispatch in one key, as Amini Salehi (2012) ch4 names its policies: "pap-rtdp", "pap-rnd",
    /// "lrf-rnd", "bcf-rnd", any other `"<allocation>-<dispatch>"`, or "rr" (the plain round robin). Not with
    /// `allocation` or `dispatch`.
    pub policy: Option<String>,
    /// Workload allocation, the fraction of requests each provider gets (Amini Salehi 2012, ch4): "rr" (equal shares,
    /// default), "lrf" (least rate first: fewer local requests, more external ones; needs `locals`), "bcf" (biggest
    /// cluster first: by PEs × speed) or "pap" (the queueing model's; needs `external` and `locals`).
    #[schemars(with = "Option<String>")]
    pub allocation: Option<Allocation>,
    /// Dispatch: "round-robin" (each provider in turn; default, with `allocation = "rr"` only), "rnd" (each request to
    /// a provider drawn with the allocation's fractions) or "rtdp" (a billiard sequence per request type).
    #[schemars(with = "Option<String>")]
    pub dispatch: Option<Dispatch>,
    /// Where PAP's statistics come from: "configured" (`external` and `locals`, default) or "online" (the external
    /// rate, mean VMs and mean duration estimated from the requests received, every 100; the local side as
    /// configured, as local requests never reach the gateway). The other allocations read no external statistics.
    #[serde(default)]
    #[schemars(with = "String")]
    pub statistics: Statistics,
    /// The external requests: `{ rate = <per second>, vms = <mean>, duration = <mean seconds on a reference PE> }`.
    pub external: Option<RawRequestStats>,
    /// Each provider's local requests, in the order of `providers` (one table per member).
    pub locals: Option<Vec<RawRequestStats>>,
    /// Coefficient of variation of external service times (default 0.5, Amini Salehi 2012 §4.4).
    pub external_cv: Option<NonNegative>,
    /// Coefficient of variation of local service times (default 0.1).
    pub local_cv: Option<NonNegative>,
    /// Service-time normalisation: "seconds" (a request's work over the cluster's PEs × speed; default) or "thesis"
    /// (Eqs 4.16–4.17 as printed: over PEs × the sum of the PEs' MIPS).
    pub service_times: Option<String>,
    /// MIPS of the reference PE, with `service-times = "thesis"` (default 1000).
    pub reference_mips: Option<Positive>,
    /// Offer a request a provider's admission control refused to the next provider that has not refused it (default
    /// false: the rejection is final, as in Amini Salehi, Javadi & Buyya).
    #[serde(default)]
    pub reroute: bool,
}

/// Arrival rate, mean VMs and mean duration of a class of requests.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawRequestStats {
    /// Arrivals per second (more than 0 for external requests).
    pub rate: NonNegative,
    /// Mean number of VMs.
    pub vms: Positive,
    /// Mean duration on a reference PE \[s\].
    pub duration: Positive,
}

impl RawRequestStats {
    fn stats(self) -> RequestStats {
        RequestStats { rate: self.rate.0, vms: self.vms.0, duration: self.duration.0 }
    }
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
            providers.push(cx.resolve(&format!("providers.{i}"), p, &[Service::SellsCompute])?);
        }
        let members: usize = providers.iter().map(Members::len).sum();
        let policy = self.policy(members)?;
        Ok(Box::new(GatewaySpec { providers, policy, reroute: self.reroute }))
    }
}

impl RawGateway {
    /// Allocation and dispatch, from `policy` or from `allocation` and `dispatch`.
    fn allocation_and_dispatch(&self) -> Result<(Allocation, Dispatch), Invalid> {
        let Some(policy) = &self.policy else {
            return Ok((self.allocation.unwrap_or_default(), self.dispatch.unwrap_or_default()));
        };
        if self.allocation.is_some() || self.dispatch.is_some() {
            return Err(Invalid::at(
                "policy",
                "sets the allocation and the dispatch: leave out `allocation` and `dispatch`",
            ));
        }
        let parse = |allocation: &str, dispatch: &str| {
            let a = serde_json::from_value::<Allocation>(serde_json::Value::String(allocation.into())).ok()?;
            let d = serde_json::from_value::<Dispatch>(serde_json::Value::String(dispatch.into())).ok()?;
            Some((a, d))
        };
        let parsed = match policy.as_str() {
            "rr" => Some((Allocation::Rr, Dispatch::RoundRobin)),
            other => other.split_once('-').and_then(|(a, d)| parse(a, d)),
        };
        parsed.ok_or_else(|| {
            Invalid::at("policy", format!("expected \"rr\" or \"<allocation>-<dispatch>\" (e.g. \"pap-rtdp\", \"lrf-rnd\"), found \"{policy}\""))
        })
    }

    /// The dispatch policy, its keys checked together.
    fn policy(&self, members: usize) -> Result<GatewayPolicy, Invalid> {
        let name = crate::registry::serde_name;
        let (allocation, dispatch) = self.allocation_and_dispatch()?;
        if dispatch == Dispatch::RoundRobin && allocation != Allocation::Rr {
            return Err(Invalid::at(
                "dispatch",
                format!(
                    "\"round-robin\" sends to each provider in turn, ignoring allocation \"{}\"",
                    name(&allocation)
                ),
            )
            .hint("dispatch = \"rnd\" or \"rtdp\" follows the allocation's fractions"));
        }
        let needs = match allocation {
            Allocation::Pap => &["external", "locals"][..],
            Allocation::Lrf => &["locals"][..],
            Allocation::Rr | Allocation::Bcf => &[][..],
        };
        for key in needs {
            let given = if *key == "external" { self.external.is_some() } else { self.locals.is_some() };
            if !given {
                return Err(Invalid::at(*key, format!("allocation \"{}\" needs `{key}`", name(&allocation))));
            }
        }
        if let Some(external) = &self.external
            && external.rate.0 <= 0.0
        {
            return Err(Invalid::at("external.rate", "expected a positive rate of external requests, found 0"));
        }
        if let Some(locals) = &self.locals
            && locals.len() != members
        {
            return Err(Invalid::at(
                "locals",
                format!("expected one table per provider ({members}), found {}", locals.len()),
            ));
        }
        let units = match self.service_times.as_deref() {
            None | Some("seconds") => {
                if self.reference_mips.is_some() {
                    return Err(Invalid::at("reference-mips", "applies with service-times = \"thesis\" only"));
                }
                ServiceUnits::Seconds
            }
            Some("thesis") => ServiceUnits::Thesis { reference_mips: self.reference_mips.map_or(1000.0, |m| m.0) },
            Some(other) => {
                return Err(Invalid::at(
                    "service-times",
                    format!("expected \"seconds\" or \"thesis\", found \"{other}\""),
                ));
            }
        };
        let model = match (&self.external, &self.locals) {
            (None, None) => None,
            (external, locals) => Some(QueueModel {
                // LRF reads only the local rates.
                external: external.map_or(RequestStats { rate: 1.0, vms: 1.0, duration: 1.0 }, RawRequestStats::stats),
                locals: locals.iter().flatten().map(|l| l.stats()).collect(),
                external_cv: self.external_cv.map_or(EXTERNAL_CV, |c| c.0),
                local_cv: self.local_cv.map_or(LOCAL_CV, |c| c.0),
                units,
            }),
        };
        if let Some(m) = &model
            && m.locals.len() != members
        {
            return Err(Invalid::at("locals", format!("expected one table per provider ({members})")));
        }
        Ok(GatewayPolicy { allocation, dispatch, statistics: self.statistics, model })
    }
}

/// A checked gateway group.
#[derive(Clone, Debug, PartialEq)]
pub struct GatewaySpec {
    /// Its grid's providers.
    pub providers: Vec<Members>,
    /// Dispatch policy.
    pub policy: GatewayPolicy,
    /// Re-route refused requests.
    pub reroute: bool,
}

impl GroupSpec for GatewaySpec {
    fn build(&self, _: &Member<'_>, cx: &mut BuildCx) -> Result<BoxedAgent, String> {
        let providers = self.providers.iter().flat_map(Members::names).map(|p| cx.provider(&p));
        let providers = providers.collect::<Result<_, _>>()?;
        let gateway = Gateway::with_policy(providers, self.policy.clone());
        Ok(Box::new(if self.reroute { gateway.rerouting() } else { gateway }))
    }
}
