//! The splitter kind: `[splitters.<group>]` in a scenario.

use schemars::JsonSchema;
use serde::Deserialize;

use super::Splitter;
use crate::model::Service;
use crate::registry::values::Fraction;
use crate::registry::{
    AgentKind, BuildCx, CheckCx, GroupSpec, Invalid, Member, Members, Metric, ParseError, RawGroup, Unit,
};
use crate::sim::BoxedAgent;

/// The kind's name in the directory.
pub const KIND: &str = "splitter";

/// The splitter kind (the Independent strategy).
pub struct SplitterKind;

impl AgentKind for SplitterKind {
    fn services(&self) -> &'static [Service] {
        &[Service::SplitsRequests]
    }

    fn name(&self) -> &'static str {
        KIND
    }

    fn table(&self) -> &'static str {
        "splitters"
    }

    fn about(&self) -> &'static str {
        "the Independent strategy's splitter: each request to the transparent broker with probability x, else to the AS-based one (Melendez 2010)"
    }

    fn metrics(&self) -> &'static [Metric] {
        const METRICS: &[Metric] = &[
            Metric::new("to_transparent", Unit::Count, "requests sent to the transparent broker"),
            Metric::new("to_opaque", Unit::Count, "requests sent to the AS-based broker"),
        ];
        METRICS
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<RawSplitter>()
    }

    fn parse(&self, group: toml::Value) -> Result<Box<dyn RawGroup>, ParseError> {
        Ok(Box::new(crate::registry::parse::<RawSplitter>(group)?))
    }
}

/// A splitter.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawSplitter {
    /// The transparent broker.
    pub transparent: String,
    /// The AS-based broker.
    pub opaque: String,
    /// The probability x of sending a request to the transparent broker.
    pub x: Fraction,
}

impl RawGroup for RawSplitter {
    fn count(&self) -> usize {
        1
    }

    fn check(&self, cx: &CheckCx<'_>) -> Result<Box<dyn GroupSpec>, Invalid> {
        let transparent = cx.resolve_one("transparent", &self.transparent, &[Service::MatchesOnTimetables])?;
        let opaque = cx.resolve_one("opaque", &self.opaque, &[Service::MatchesByAnySchedulability])?;
        Ok(Box::new(SplitterSpec { transparent, opaque, x: self.x.0 }))
    }
}

/// A checked splitter.
#[derive(Clone, Debug)]
pub struct SplitterSpec {
    transparent: Members,
    opaque: Members,
    x: f64,
}

impl GroupSpec for SplitterSpec {
    fn build(&self, _: &Member<'_>, cx: &mut BuildCx) -> Result<BoxedAgent, String> {
        Ok(Box::new(Splitter::new(cx.single(&self.transparent)?, cx.single(&self.opaque)?, self.x)))
    }
}
