//! Workload models, each declared once in its own file beside this one: its name, its keys (read with serde), the
//! checks that turn them into a spec, and the spec drawing each run's jobs.
//!
//! A `[workloads.<name>]` table is flat: `model = "<name>"` selects the model, whose own keys sit beside the keys
//! every model takes ([`RawShared`]). [`RawWorkload::parse`](super::RawWorkload::parse) splits the table between
//! them, [`RawModel::check`] turns the model's keys into a [`ModelSpec`], and the spec draws each run's jobs, which
//! the shared keys then transform ([`WorkloadPlan`](super::WorkloadPlan)). A new model is its own file plus one line
//! in [`WorkloadRegistry::standard`] (`standard.rs`, the one
//! module that names every model).

use std::fmt;
use std::path::Path;
use std::sync::Arc;

pub use agents::registry::key_names;
use agents::registry::{self, ParseError};
use agents::sim::rng::SimRng;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::{RawShared, TraceCache};
use crate::workload::{Limit, Workload};

/// What the `model` key is, for `gridmarket schema`.
const MODEL_DOC: &str = "The model or trace format.";

/// One workload model, as scenarios name it with `model = "<name>"`.
pub trait WorkloadModel: Send + Sync {
    /// Its name in `model = "<name>"`.
    fn name(&self) -> &'static str;
    /// What it draws and where it comes from, in a line.
    fn about(&self) -> &'static str;
    /// Its own keys (kebab-case): those of the struct [`parse`](Self::parse) reads, as [`key_names`] gives them.
    fn keys(&self) -> &'static [&'static str];
    /// The JSON schema of its own keys (the struct itself, not a reference to it), for `gridmarket schema`.
    fn schema(&self, generator: &mut SchemaGenerator) -> Schema;
    /// Reads its own keys as written (unknown keys refused).
    fn parse(&self, keys: toml::Value) -> Result<Box<dyn RawModel>, ParseError>;
    /// Which of the shared keys `jobs` and `until` it reads.
    fn extent(&self) -> Extent;
    /// Whether it gives its jobs the deadlines of `deadline = "tight"`, `"medium"` or `"relaxed"` as it draws them;
    /// otherwise they are drawn for every job after it (`deadline = [low, high]` always is).
    fn own_slack_deadlines(&self) -> bool {
        false
    }
}

impl fmt::Debug for dyn WorkloadModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a model is told how many jobs to draw: which of the shared keys `jobs` and `until` it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extent {
    /// Arrivals until `jobs` of them, or until the time `until`, or whichever comes first; one of them is required.
    JobsOrUntil,
    /// `jobs` only, optional (the model has a default).
    Jobs,
    /// `until` only, a horizon the model requires.
    Until,
    /// Neither: the jobs are a file's.
    Neither,
}

impl Extent {
    /// Whether a model of this extent reads the shared key `key`: `jobs` and `until` only where it says so, every
    /// other shared key always.
    pub fn reads(self, key: &str) -> bool {
        match key {
            "jobs" => matches!(self, Extent::JobsOrUntil | Extent::Jobs),
            "until" => matches!(self, Extent::JobsOrUntil | Extent::Until),
            _ => true,
        }
    }
}

/// A model's own keys as written.
pub trait RawModel: fmt::Debug {
    /// Checks them, with the shared keys of `cx`, into the spec that draws each run's jobs; an error is (the key at
    /// fault, relative to the workload's table; what is wrong).
    fn check(&self, cx: &mut CheckCx<'_>) -> Result<Arc<dyn ModelSpec>, (String, String)>;
}

/// What a model's check may read beside its own keys.
pub struct CheckCx<'a> {
    /// The workload's shared keys.
    pub shared: &'a RawShared,
    /// The scenario file's folder, which file names are relative to.
    pub base: &'a Path,
    /// The trace files of the study read so far (each is checked once).
    pub traces: &'a mut TraceCache,
}

/// A checked model: what draws the jobs of each run.
pub trait ModelSpec: fmt::Debug + Send + Sync {
    /// The jobs of one run, drawn with `rng` (the workload's own stream) within `limit` (from the shared `jobs` and
    /// `until`), before the shared keys transform them.
    fn generate(&self, limit: Limit, rng: &mut SimRng) -> Result<Arc<Workload>, String>;
    /// How far apart its arrivals are, for the checks of `jobs`, `until` and `time-scale` against the limits: none for
    /// a model that bounds its jobs itself.
    fn arrivals(&self) -> Option<Arrivals> {
        None
    }
    /// What the user should know although the workload is valid (records of a trace left out).
    fn note(&self) -> Option<String> {
        None
    }
}

/// A model's arrivals on average.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Arrivals {
    /// The mean gap between arrivals \[s\].
    pub gap: f64,
    /// Jobs per arrival (tasks per bag).
    pub per_arrival: f64,
    /// The key that sets the gap, blamed when the arrivals go on too long.
    pub key: &'static str,
}

/// The workload models scenarios may name.
#[derive(Clone)]
pub struct WorkloadRegistry {
    models: Vec<&'static dyn WorkloadModel>,
}

impl fmt::Debug for WorkloadRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(&self.models).finish()
    }
}

impl WorkloadRegistry {
    /// No model at all, to add one's own to.
    pub fn empty() -> WorkloadRegistry {
        WorkloadRegistry { models: Vec::new() }
    }

    /// Adds `model`, which replaces a model of the same name.
    pub fn with(mut self, model: &'static dyn WorkloadModel) -> WorkloadRegistry {
        self.models.retain(|m| m.name() != model.name());
        self.models.push(model);
        self
    }

    /// Every model, in the order added.
    pub fn models(&self) -> &[&'static dyn WorkloadModel] {
        &self.models
    }

    /// The model called `name`.
    pub fn model(&self, name: &str) -> Option<&'static dyn WorkloadModel> {
        self.models.iter().copied().find(|m| m.name() == name)
    }

    /// The JSON schema of a `[workloads.<name>]` table, for `gridmarket schema`: `model`, the shared keys and every
    /// model's own. A key several models read is documented once, with each of their docs (the same doc once).
    pub fn schema(&self, generator: &mut SchemaGenerator) -> Value {
        let names: Vec<Value> =
            self.models.iter().map(|m| json!({ "const": m.name(), "description": m.about() })).collect();
        let mut properties = Map::new();
        properties.insert("model".into(), json!({ "description": MODEL_DOC, "oneOf": names }));
        let shared = RawShared::json_schema(generator);
        let own: Vec<Schema> = self.models.iter().map(|m| m.schema(generator)).collect();
        for schema in std::iter::once(shared).chain(own) {
            registry::merge_keys(&mut properties, &schema);
        }
        json!({ "type": "object", "properties": properties })
    }
}

/// Reads a model's keys as the struct `T` ([`WorkloadModel::parse`]).
pub fn parse<T: RawModel + DeserializeOwned + 'static>(keys: toml::Value) -> Result<Box<dyn RawModel>, ParseError> {
    Ok(Box::new(registry::parse::<T>(keys)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::workload::WorkloadPlan;
    use crate::scenario::{Document, LoadOptions, Study};
    use agents::registry::values::Positive;
    use serde::Deserialize;

    /// A model of this test only: one job of 2 PEs and 10 s every `every` seconds.
    struct Clock;

    impl WorkloadModel for Clock {
        fn name(&self) -> &'static str {
            "clock"
        }

        fn about(&self) -> &'static str {
            "One job of 2 PEs and 10 s every `every` seconds (a test's)."
        }

        fn keys(&self) -> &'static [&'static str] {
            key_names::<RawClock>()
        }

        fn schema(&self, generator: &mut SchemaGenerator) -> Schema {
            RawClock::json_schema(generator)
        }

        fn parse(&self, keys: toml::Value) -> Result<Box<dyn RawModel>, ParseError> {
            parse::<RawClock>(keys)
        }

        fn extent(&self) -> Extent {
            Extent::JobsOrUntil
        }
    }

    /// The clock's keys.
    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "kebab-case")]
    struct RawClock {
        /// Seconds between jobs (required; at most an hour).
        every: Option<Positive>,
    }

    impl RawModel for RawClock {
        fn check(&self, _: &mut CheckCx<'_>) -> Result<Arc<dyn ModelSpec>, (String, String)> {
            match self.every {
                None => Err(("every".into(), "required".into())),
                Some(e) if e.0 > 3600.0 => Err(("every".into(), format!("expected at most an hour, found {}", e.0))),
                Some(e) => Ok(Arc::new(ClockSpec(e.0))),
            }
        }
    }

    #[derive(Debug)]
    struct ClockSpec(f64);

    impl ModelSpec for ClockSpec {
        fn generate(&self, limit: Limit, _: &mut SimRng) -> Result<Arc<Workload>, String> {
            let mut jobs = Vec::new();
            while !limit.reached(jobs.len(), (jobs.len() + 1) as f64 * self.0) {
                let n = jobs.len() as u64 + 1;
                jobs.push(crate::workload::WorkloadJob::new(n, n as f64 * self.0, 10.0, 2));
            }
            Ok(Arc::new(Workload::new(jobs)))
        }

        fn arrivals(&self) -> Option<Arrivals> {
            Some(Arrivals { gap: self.0, per_arrival: 1.0, key: "every" })
        }
    }

    /// A scenario of one provider and one broker replaying workload `w`, of `keys`.
    fn scenario(keys: &str) -> String {
        format!(
            "[workloads.w]\n{keys}\n[providers.site]\npes = 4\n[brokers.user]\nworkload = \"w\"\nsubmit-to = \"site\"\n"
        )
    }

    /// `text` loaded with the workload models of `models`: its workload `w`, or the error's message.
    fn load(text: &str, models: &WorkloadRegistry) -> Result<WorkloadPlan, String> {
        let registry = agents::registry::Registry::standard();
        let doc = Document::parse(std::path::Path::new("clock.toml"), text, &registry).map_err(|e| e.to_string())?;
        let opts = LoadOptions { workloads: models.clone(), ..LoadOptions::default() };
        let mut study = Study::from_document(doc, &opts).map_err(|e| e.to_string())?;
        Ok(study.points.remove(0).plan.workloads.remove("w").expect("workload w"))
    }

    #[test]
    fn a_registered_model_is_read_from_a_scenario_and_draws_its_jobs() {
        let models = WorkloadRegistry::standard().with(&Clock);
        let plan = load(&scenario("model = \"clock\"\nevery = 30\njobs = 4\ntime-scale = 2"), &models).unwrap();
        let w = plan.generate(&mut agents::sim::rng::stream(1, "clock", 0)).unwrap();
        // Its jobs, 30 s apart, then the shared `time-scale` doubles the gaps.
        let got: Vec<(f64, u32)> = w.jobs.iter().map(|j| (j.submit, j.pes)).collect();
        assert_eq!(got, [(60.0, 2), (120.0, 2), (180.0, 2), (240.0, 2)]);
        // Its checks report its keys, where the scenario file has them.
        let e = load(&scenario("model = \"clock\"\nevery = 7200\njobs = 4"), &models).unwrap_err();
        assert_eq!(e, "clock.toml:3:9: workloads.w.every: expected at most an hour, found 7200");
        // The shared checks bound its arrivals: a jobs a second for 1e9 s is 1e9 jobs.
        let e = load(&scenario("model = \"clock\"\nevery = 1\nuntil = 1e9"), &models).unwrap_err();
        assert!(e.starts_with("clock.toml:4:9: workloads.w.until: about 1e9 arrivals"), "{e}");
        // Its key is not a key of another model, and another model's key is not its.
        let e = load(&scenario("model = \"lublin\"\njobs = 4\nevery = 30"), &models).unwrap_err();
        assert!(e.ends_with("workloads.w.every: not a key of the \"lublin\" model (only of \"clock\")"), "{e}");
        let e = load(&scenario("model = \"clock\"\nevery = 30\njobs = 4\nrate = 1"), &models).unwrap_err();
        assert!(e.ends_with("workloads.w.rate: not a key of the \"clock\" model (only of \"poisson\")"), "{e}");
    }

    #[test]
    fn an_unknown_model_is_refused_naming_the_known_ones() {
        let text = scenario("model = \"clock\"\nevery = 30\njobs = 4");
        let e = load(&text, &WorkloadRegistry::standard()).unwrap_err();
        let known = "`lublin`, `das2`, `bot`, `metabroker`, `poisson`, `local-requests`, `swf`, `gwf`, `csv`";
        assert_eq!(e, format!("clock.toml:2:9: workloads.w.model: unknown value `clock`, expected one of {known}"));
        let e = load(&scenario("model = \"clok\""), &WorkloadRegistry::standard().with(&Clock)).unwrap_err();
        assert!(e.contains(&format!("expected one of {known}, `clock`\n  hint: did you mean `clock`?")), "{e}");
        let only = WorkloadRegistry::empty().with(&Clock);
        let e = load(&scenario("model = \"poisson\""), &only).unwrap_err();
        assert!(e.ends_with("workloads.w.model: unknown value `poisson`, expected `clock`"), "{e}");
    }

    #[test]
    fn each_key_of_a_table_belongs_to_the_shared_keys_or_to_the_model() {
        let shared = key_names::<RawShared>();
        assert!(shared.len() > 20 && shared.contains(&"time-scale"), "{shared:?}");
        for model in WorkloadRegistry::standard().models() {
            let keys = model.keys();
            assert!(!keys.is_empty(), "{}", model.name());
            for key in keys {
                assert!(*key != "model" && !shared.contains(key), "{}: `{key}` is a shared key", model.name());
            }
            // The schema documents the keys the model reads.
            let schema = model.schema(&mut SchemaGenerator::default());
            let props: Vec<&String> = schema.get("properties").and_then(Value::as_object).unwrap().keys().collect();
            assert_eq!(props.len(), keys.len(), "{}", model.name());
            assert!(props.iter().all(|p| keys.contains(&p.as_str())), "{}", model.name());
        }
    }

    #[test]
    fn a_key_of_several_models_is_documented_with_each_model_s_doc() {
        let schema = WorkloadRegistry::standard().schema(&mut SchemaGenerator::default());
        let doc = |key: &str| schema["properties"][key]["description"].as_str().unwrap().to_string();
        let nodes = doc("mean-nodes");
        assert!(nodes.starts_with("Lublin: scale sizes") && nodes.contains(". DAS-2: move the split m"), "{nodes}");
        assert_eq!(doc("cluster").matches("C64").count(), 1, "one doc, the same for both models");
        assert_eq!(doc("file").matches("Swf/gwf/csv").count(), 1);
        assert_eq!(schema["properties"]["model"]["oneOf"].as_array().unwrap().len(), 9);
    }
}
