//! The resource directory kind: `[directories.<group>]` in a scenario.

use schemars::JsonSchema;
use serde::Deserialize;

use super::ResourceDirectory;
use crate::model::Service;
use crate::registry::{AgentKind, BuildCx, CheckCx, GroupSpec, Invalid, Member, Metric, ParseError, RawGroup, Unit};
use crate::sim::BoxedAgent;

/// The kind's name in the directory.
pub const KIND: &str = "directory";

/// The resource directory kind.
pub struct DirectoryKind;

impl AgentKind for DirectoryKind {
    fn services(&self) -> &'static [Service] {
        &[Service::ListsResources]
    }

    fn name(&self) -> &'static str {
        KIND
    }

    fn table(&self) -> &'static str {
        "directories"
    }

    fn about(&self) -> &'static str {
        "a resource directory (the GIS of Melendez 2010): single-CPU resources register, matchmakers list their pool"
    }

    fn metrics(&self) -> &'static [Metric] {
        const METRICS: &[Metric] = &[
            Metric::new("registered", Unit::Count, "resources registered"),
            Metric::new("queries", Unit::Count, "resource lists handed to brokers"),
        ];
        METRICS
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<RawDirectory>()
    }

    fn parse(&self, group: toml::Value) -> Result<Box<dyn RawGroup>, ParseError> {
        Ok(Box::new(crate::registry::parse::<RawDirectory>(group)?))
    }
}

/// A resource directory: no keys (there is one per group).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawDirectory {}

impl RawGroup for RawDirectory {
    fn count(&self) -> usize {
        1
    }

    fn check(&self, _: &CheckCx<'_>) -> Result<Box<dyn GroupSpec>, Invalid> {
        Ok(Box::new(DirectorySpec))
    }
}

/// A checked directory group.
#[derive(Clone, Copy, Debug)]
pub struct DirectorySpec;

impl GroupSpec for DirectorySpec {
    fn build(&self, _: &Member<'_>, _: &mut BuildCx) -> Result<BoxedAgent, String> {
        Ok(Box::new(ResourceDirectory::default()))
    }
}
