//! Scenario files: loading, validation, sweeps, and the checked plan a run is built from.
//!
//! A scenario is one TOML file (see `gridmarket schema` for every key). Loading goes in two layers: the file as
//! written ([`raw::RawScenario`], with unknown keys refused) and the checked [`Plan`] with defaults filled in and
//! every name resolved. Nothing runs until every sweep point of the file has been checked.

mod document;
pub mod error;
pub mod plan;
pub mod raw;
pub mod workload;

pub use document::{Document, parse_value};
pub use error::ScenarioError;
pub use plan::{LoadOptions, MAX_CHARTED_POINTS, Plan, Plugins, Study};
