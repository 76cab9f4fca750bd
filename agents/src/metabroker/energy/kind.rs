//! The energy-aware meta-broker kind: `[energy-metabrokers.<name>]` in a scenario, one meta-broker (Garg 2010 ch6)
//! mapping applications to its data centres every interval to cut carbon or raise profit.

use std::collections::BTreeMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use super::EnergyMetaBroker;
use super::mapping::{DataCentres, MappingPolicy};
use crate::metabroker::{self, MetaPolicy};
use crate::model::Service;
use crate::registry::values::Interval;
use crate::registry::{
    AgentKind, BuildCx, CheckCx, GroupSpec, Invalid, Member, Members, Metric, ParseError, Policy, RawGroup, Registry,
    Unit, serde_name, unknown_name,
};
use crate::sim::BoxedAgent;

/// The kind's name in the directory: data centres find energy-aware meta-brokers by it to register.
pub const KIND: &str = "energy-metabroker";

/// The energy-aware meta-broker kind.
pub struct EnergyMetaBrokerKind;

const METRICS: &[Metric] = &[
    Metric::new("rounds", Unit::Count, "scheduling rounds run"),
    Metric::new("requests", Unit::Count, "applications received"),
    Metric::new("assigned", Unit::Count, "applications assigned to a data centre (tickets issued)"),
    Metric::new("rejected", Unit::Count, "applications rejected: no data centre could finish them by their deadline"),
    Metric::new("quoted", Unit::Dollars, "what the tickets quoted, summed: the users' payments as planned"),
    Metric::new("datacentres", Unit::Count, "data centres registered"),
    Metric::new(
        "carbon_bound",
        Unit::CarbonPerWork,
        "lower bound of the average carbon emission over every application received (Garg 2010 §6.3.3)",
    ),
    Metric::new("carbon_bound_workload", Unit::CpuHours, "the workload the carbon bound placed"),
    Metric::new(
        "profit_bound",
        Unit::DollarsPerWork,
        "upper bound of the average profit over every application received (Garg 2010 §6.3.3)",
    ),
    Metric::new("profit_bound_workload", Unit::CpuHours, "the workload the profit bound placed"),
];

const DERIVED: &[Metric] = &[
    Metric::new(
        "carbon_bound_gap",
        Unit::Relative,
        "average carbon over its lower bound, minus 1 (with one energy-aware meta-broker)",
    ),
    Metric::new(
        "profit_bound_gap",
        Unit::Relative,
        "1 minus average profit over its upper bound (with one energy-aware meta-broker)",
    ),
];

impl AgentKind for EnergyMetaBrokerKind {
    fn services(&self) -> &'static [Service] {
        &[Service::PlacesOnDataCentres]
    }

    fn name(&self) -> &'static str {
        KIND
    }

    fn table(&self) -> &'static str {
        "energy-metabrokers"
    }

    fn about(&self) -> &'static str {
        "an energy-aware meta-broker: maps applications to data centres every interval for less carbon or more profit"
    }

    fn policies(&self, registry: &Registry) -> Vec<Policy> {
        let registered =
            Policy::registered::<dyn MetaPolicy>("policy", &[], "registered, one application at a time", registry);
        let family = Policy::registered::<dyn metabroker::Policy<DataCentres>>("policy", &[], "registered", registry);
        vec![Policy::of("policy", &MappingPolicy::ALL, "Garg (2010) §6.3.1"), registered, family]
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<RawEnergyMetaBroker>()
    }

    fn parse(&self, group: toml::Value) -> Result<Box<dyn RawGroup>, ParseError> {
        Ok(Box::new(crate::registry::parse::<RawEnergyMetaBroker>(group)?))
    }

    fn metrics(&self) -> &'static [Metric] {
        METRICS
    }

    fn derived_metrics(&self) -> &'static [Metric] {
        DERIVED
    }

    /// The gaps to the bounds of the run's one energy-aware meta-broker, from the data centres' averages.
    fn derive_metrics(&self, metrics: &mut BTreeMap<String, f64>) {
        let bound = |suffix: &str| {
            let mut of = metrics
                .iter()
                .filter(|(k, _)| k.starts_with("energy-metabrokers.") && k.ends_with(suffix))
                .map(|(_, v)| *v);
            match (of.next(), of.next()) {
                (Some(v), None) => Some(v),
                _ => None,
            }
        };
        let (carbon, profit) = (bound(".carbon_bound"), bound(".profit_bound"));
        if let (Some(b), Some(&avg)) = (carbon, metrics.get("average_carbon"))
            && b > 0.0
        {
            metrics.insert("carbon_bound_gap".into(), avg / b - 1.0);
        }
        if let (Some(b), Some(&avg)) = (profit, metrics.get("average_profit"))
            && b > 0.0
        {
            metrics.insert("profit_bound_gap".into(), 1.0 - avg / b);
        }
    }
}

/// An energy-aware meta-broker (Garg 2010 ch6).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawEnergyMetaBroker {
    /// Mapping policy: "gmce", "mce-mce", "gmp", "mp-mp", "mce-mp" or "edf-est" (Garg 2010 §6.3.1), or the name of a
    /// policy added to the registry, which places one application at a time among the data centres where it meets
    /// its deadline, or maps the whole cycle (see docs/writing-a-policy.md). Whether it runs with DVS is each data
    /// centre's `dvs`.
    pub policy: String,
    /// Scheduling interval \[s\] (default 50, Garg (2010) §6.5; from 0.001 s).
    pub interval: Option<Interval>,
    /// The data centre groups (or members) it maps onto; `["*"]` means every data centre.
    pub datacentres: Vec<String>,
}

impl RawGroup for RawEnergyMetaBroker {
    fn count(&self) -> usize {
        1
    }

    fn check(&self, cx: &CheckCx<'_>) -> Result<Box<dyn GroupSpec>, Invalid> {
        let datacentres = cx.resolve_all("datacentres", &self.datacentres, &[Service::HostsApplications])?;
        if datacentres.is_empty() {
            return Err(Invalid::at("datacentres", "expected at least one data centre"));
        }
        let interval = self.interval.map_or(50.0, |i| i.0);
        let name = self.policy.as_str();
        let policy: Arc<dyn metabroker::Policy<DataCentres>> =
            match MappingPolicy::ALL.iter().find(|p| serde_name(*p) == name) {
                Some(&policy) => Arc::new(policy),
                None => match cx.registry.round_policy::<DataCentres>(name) {
                    Some(policy) => policy,
                    None if !cx.registry.round_policy_families(name).is_empty() => {
                        let message = format!("the registered policy \"{name}\" reads the offers of meta-brokers");
                        return Err(Invalid::at("policy", message).hint("name it in a `[metabrokers]` group"));
                    }
                    None => {
                        let thesis = MappingPolicy::ALL.iter().map(serde_name);
                        let registered = cx.registry.policies::<dyn MetaPolicy>().map(|(name, ..)| name);
                        let family = cx.registry.policies::<dyn metabroker::Policy<DataCentres>>();
                        let registered = registered.chain(family.map(|(name, ..)| name)).map(String::from);
                        let known: Vec<String> = thesis.chain(registered).collect();
                        return Err(unknown_name("policy", name, known.iter().map(String::as_str)));
                    }
                },
            };
        Ok(Box::new(EnergyMetaBrokerSpec { datacentres, policy, interval }))
    }
}

/// A checked energy-aware meta-broker.
#[derive(Clone, Debug)]
pub struct EnergyMetaBrokerSpec {
    /// Its data centres.
    pub datacentres: Vec<Members>,
    /// Mapping policy.
    pub policy: Arc<dyn metabroker::Policy<DataCentres>>,
    /// Scheduling interval \[s\].
    pub interval: f64,
}

impl GroupSpec for EnergyMetaBrokerSpec {
    fn periods(&self) -> Vec<(&'static str, f64)> {
        vec![("interval", self.interval)]
    }

    fn build(&self, _: &Member<'_>, cx: &mut BuildCx) -> Result<BoxedAgent, String> {
        let members = self.datacentres.iter().flat_map(Members::names).map(|p| cx.id(&p));
        let members = members.collect::<Result<Vec<_>, _>>()?;
        Ok(Box::new(EnergyMetaBroker::new(self.policy.clone(), self.interval, members)))
    }
}
