//! The broker kinds of Melendez (2010): `[as-brokers.<group>]` (AS-based, over the opaque pool) and
//! `[transparent-brokers.<group>]` (EDF/ESF simulation, over the transparent pool).

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Matchmaker, Test};
use crate::matchmaking::{Allocation, Pool};
use crate::model::Service;
use crate::registry::{
    AgentKind, BuildCx, CheckCx, GroupSpec, Invalid, Member, Members, Metric, ParseError, Policy, RawGroup, Registry,
    Unit,
};
use crate::sim::BoxedAgent;

/// The AS-based broker kind's name.
pub const AS_BROKER: &str = "as-broker";
/// The transparent broker kind's name.
pub const TRANSPARENT_BROKER: &str = "transparent-broker";

const METRICS: &[Metric] = &[
    Metric::new("arrivals", Unit::Count, "requests submitted to the broker (by the source, a splitter or a broker)"),
    Metric::new("accepted", Unit::Count, "requests placed on a resource"),
    Metric::new("rejected", Unit::Count, "requests rejected (no resource passed the test, or malformed)"),
    Metric::new("forwarded", Unit::Count, "requests passed on to the next broker (Combined strategy)"),
    Metric::new("malformed", Unit::Count, "requests refused for their values (laxity ≤ 0, zero service time...)"),
    Metric::new("tests", Unit::Count, "schedulability tests run (one per resource tried)"),
    Metric::new("blocking", Unit::Share, "the broker's own blocking ratio: rejected or forwarded over its arrivals"),
];

/// The AS-based (opaque) broker kind.
pub struct AsBrokerKind;

/// The transparent broker kind.
pub struct TransparentBrokerKind;

impl AgentKind for AsBrokerKind {
    fn services(&self) -> &'static [Service] {
        &[Service::MatchesByAnySchedulability]
    }

    fn name(&self) -> &'static str {
        AS_BROKER
    }

    fn table(&self) -> &'static str {
        "as-brokers"
    }

    fn about(&self) -> &'static str {
        "an AS-based matchmaker: places reservations on opaque single-CPU resources by the Any Schedulability criterion (Melendez 2010)"
    }

    fn policies(&self, _: &Registry) -> Vec<Policy> {
        vec![
            Policy::of("allocation", &[Allocation::FirstFit, Allocation::NextFit], "Melendez (2010) §3.5"),
            Policy {
                key: "test",
                values: vec!["full".into(), "incremental".into()],
                source: "Melendez (2010) §3.1",
                about: Vec::new(),
            },
        ]
    }

    fn metrics(&self) -> &'static [Metric] {
        METRICS
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<RawAsBroker>()
    }

    fn parse(&self, group: toml::Value) -> Result<Box<dyn RawGroup>, ParseError> {
        Ok(Box::new(crate::registry::parse::<RawAsBroker>(group)?))
    }
}

impl AgentKind for TransparentBrokerKind {
    fn services(&self) -> &'static [Service] {
        &[Service::MatchesOnTimetables]
    }

    fn name(&self) -> &'static str {
        TRANSPARENT_BROKER
    }

    fn table(&self) -> &'static str {
        "transparent-brokers"
    }

    fn about(&self) -> &'static str {
        "a transparent matchmaker: places reservations on transparent single-CPU resources by simulating their EDF or ESF timetable (Melendez 2010)"
    }

    fn policies(&self, _: &Registry) -> Vec<Policy> {
        vec![Policy::of("allocation", &[Allocation::FirstFit, Allocation::NextFit], "Melendez (2010) §3.5")]
    }

    fn metrics(&self) -> &'static [Metric] {
        METRICS
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<RawTransparentBroker>()
    }

    fn parse(&self, group: toml::Value) -> Result<Box<dyn RawGroup>, ParseError> {
        Ok(Box::new(crate::registry::parse::<RawTransparentBroker>(group)?))
    }
}

/// The AS test's scope.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// Every request's inequality.
    #[default]
    Full,
    /// The candidate's and those of the requests it overlaps.
    Incremental,
}

/// A group of AS-based brokers.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawAsBroker {
    /// The resource directory listing the opaque pool.
    pub directory: String,
    /// "first-fit" (default) or "next-fit".
    #[serde(default)]
    pub allocation: Allocation,
    /// The pool it places on: "opaque" (default) or "transparent" (an AS broker ignores resources' policies, so it
    /// can use published ones too: the thesis compares AS and EDF brokers on the same resources).
    pub pool: Option<Pool>,
    /// "full" (every request's inequality; default) or "incremental" (the candidate's and the overlapping ones';
    /// the same decisions unless on-demand requests entered untested).
    #[serde(default)]
    pub test: Scope,
    /// A broker (AS-based or transparent) to forward what no resource accepts to, instead of rejecting it.
    pub forward: Option<String>,
}

/// A group of transparent brokers.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawTransparentBroker {
    /// The resource directory listing the transparent pool.
    pub directory: String,
    /// "first-fit" (default) or "next-fit".
    #[serde(default)]
    pub allocation: Allocation,
    /// A broker (AS-based or transparent) to forward what no resource accepts to, instead of rejecting it: the
    /// Combined strategy, a transparent broker forwarding to an AS-based one.
    pub forward: Option<String>,
}

/// Resolves `directory` and `forward`.
fn references(
    cx: &CheckCx<'_>,
    directory: &str,
    forward: Option<&String>,
) -> Result<(Members, Option<Members>), Invalid> {
    let directory = cx.resolve_one("directory", directory, &[Service::ListsResources])?;
    let forward = match forward {
        Some(f) if f == cx.group => return Err(Invalid::at("forward", "a broker cannot forward to itself")),
        Some(f) => {
            Some(cx.resolve_one("forward", f, &[Service::MatchesByAnySchedulability, Service::MatchesOnTimetables])?)
        }
        None => None,
    };
    Ok((directory, forward))
}

impl RawGroup for RawAsBroker {
    fn count(&self) -> usize {
        1
    }

    fn check(&self, cx: &CheckCx<'_>) -> Result<Box<dyn GroupSpec>, Invalid> {
        let (directory, forward) = references(cx, &self.directory, self.forward.as_ref())?;
        let test = Test::AnySchedulability { incremental: self.test == Scope::Incremental };
        let transparent_pool = self.pool == Some(Pool::Transparent);
        Ok(Box::new(BrokerSpec { test, allocation: self.allocation, directory, transparent_pool, forward }))
    }
}

impl RawGroup for RawTransparentBroker {
    fn count(&self) -> usize {
        1
    }

    fn check(&self, cx: &CheckCx<'_>) -> Result<Box<dyn GroupSpec>, Invalid> {
        let (directory, forward) = references(cx, &self.directory, self.forward.as_ref())?;
        let (test, allocation) = (Test::Transparent, self.allocation);
        Ok(Box::new(BrokerSpec { test, allocation, directory, transparent_pool: true, forward }))
    }
}

/// A checked broker group.
#[derive(Clone, Debug)]
pub struct BrokerSpec {
    test: Test,
    allocation: Allocation,
    directory: Members,
    transparent_pool: bool,
    forward: Option<Members>,
}

impl GroupSpec for BrokerSpec {
    fn build(&self, _: &Member<'_>, cx: &mut BuildCx) -> Result<BoxedAgent, String> {
        let directory = cx.single(&self.directory)?;
        let forward = self.forward.as_ref().map(|f| cx.single(f)).transpose()?;
        Ok(Box::new(Matchmaker::new(self.test, self.allocation, (directory, self.transparent_pool), forward)))
    }

    fn forwards_to(&self) -> Option<(&'static str, String)> {
        Some(("forward", self.forward.as_ref()?.names().next()?))
    }
}
