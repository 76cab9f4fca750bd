//! The meta-broker jobs, `model = "metabroker"`: the applications of Garg (2010), *Meta Scheduling for
//! Market-Oriented Grid and Utility Computing* (PhD thesis, The University of Melbourne), ch3–4.

use std::sync::Arc;

use agents::sim::rng::SimRng;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;

use super::registry::{self, CheckCx, Extent, ModelSpec, RawModel, WorkloadModel};
use crate::workload::models::MetaBrokerJobModel;
use crate::workload::qos::DeadlineSlack;
use crate::workload::{Limit, Workload};

/// The meta-broker jobs.
pub struct Metabroker;

impl WorkloadModel for Metabroker {
    fn name(&self) -> &'static str {
        "metabroker"
    }

    fn about(&self) -> &'static str {
        "Garg (2010) ch3–4 jobs: tasks of 1 CPU, runtimes 400 s ± 20%, submitted in the first 20 s, deadlines by \
         `slack`."
    }

    fn keys(&self) -> &'static [&'static str] {
        registry::key_names::<RawMetabroker>()
    }

    fn schema(&self, generator: &mut SchemaGenerator) -> Schema {
        RawMetabroker::json_schema(generator)
    }

    fn parse(&self, keys: toml::Value) -> Result<Box<dyn RawModel>, agents::registry::ParseError> {
        registry::parse::<RawMetabroker>(keys)
    }

    fn extent(&self) -> Extent {
        Extent::Jobs
    }

    /// `deadline = "tight"`, `"medium"` or `"relaxed"` is the slack the model draws each job's deadline with.
    fn own_slack_deadlines(&self) -> bool {
        true
    }
}

/// The meta-broker jobs' keys.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawMetabroker {
    /// Metabroker: the variation of the number of tasks, its standard deviation over its mean 5: a fraction in
    /// (0, 1], or `[low, high]` to draw each job's own uniformly from that range (Garg 2010 §3.5 and §4.3.1: "10-50%
    /// variations in the number of tasks (using Gaussian distribution)", i.e. `[0.1, 0.5]`). Default 0.3.
    #[schemars(with = "Option<serde_json::Value>")]
    pub task_variation: Option<toml::Value>,
}

impl RawModel for RawMetabroker {
    fn check(&self, cx: &mut CheckCx<'_>) -> Result<Arc<dyn ModelSpec>, (String, String)> {
        let variation = match &self.task_variation {
            Some(v) => task_variation(v).map_err(|m| ("task-variation".to_string(), m))?,
            None => [0.3, 0.3],
        };
        let slack = match cx.shared.deadline.as_ref().and_then(toml::Value::as_str) {
            Some("medium") => DeadlineSlack::Medium,
            Some("relaxed") => DeadlineSlack::Relaxed,
            _ => DeadlineSlack::Tight,
        };
        Ok(Arc::new(MetabrokerSpec { slack, variation }))
    }
}

/// The range of task-count variations `task-variation` gives: a fraction, or `[low, high]`, within (0, 1].
fn task_variation(v: &toml::Value) -> Result<[f64; 2], String> {
    let number = |v: &toml::Value| v.as_float().or_else(|| v.as_integer().map(|i| i as f64));
    let fraction = |x: f64| 0.0 < x && x <= 1.0;
    let range = match v {
        toml::Value::Array(a) if a.len() == 2 => number(&a[0]).zip(number(&a[1])).map(|(lo, hi)| [lo, hi]),
        other => number(other).map(|x| [x, x]),
    };
    match range {
        Some([lo, hi]) if fraction(lo) && fraction(hi) && lo <= hi => Ok([lo, hi]),
        _ => Err(format!("expected a fraction in (0, 1] or [low, high] with 0 < low <= high <= 1, found {v}")),
    }
}

/// The deadlines' slack and the variation of the number of tasks.
#[derive(Debug)]
struct MetabrokerSpec {
    slack: DeadlineSlack,
    variation: [f64; 2],
}

impl ModelSpec for MetabrokerSpec {
    fn generate(&self, limit: Limit, rng: &mut SimRng) -> Result<Arc<Workload>, String> {
        let mut model = MetaBrokerJobModel::new(self.slack, self.variation);
        if let Limit::Jobs(n) | Limit::JobsUntil(n, _) = limit {
            model.jobs = n;
        }
        Ok(Arc::new(model.generate(rng).map_err(|e| e.to_string())?))
    }
}
