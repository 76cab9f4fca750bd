//! The DAS-2 model, `model = "das2"`: the requests of Table 4.2 of Amini Salehi (2012), *Contention-aware Resource
//! Provisioning in Interconnected Grid Computing Systems* (PhD thesis, The University of Melbourne), external ("Grid")
//! or of one of its clusters.

use std::sync::Arc;

use agents::registry::values::{Positive, Seconds};
use agents::sim::rng::SimRng;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;

use super::registry::{self, Arrivals, CheckCx, Extent, ModelSpec, RawModel, WorkloadModel};
use crate::workload::dist::Dist;
use crate::workload::models::{Das2Model, InterGridCluster, InterarrivalUnit};
use crate::workload::{Limit, Workload};

/// The DAS-2 model.
pub struct Das2;

impl WorkloadModel for Das2 {
    fn name(&self) -> &'static str {
        "das2"
    }

    fn about(&self) -> &'static str {
        "DAS-2 model of Amini Salehi (2012) Table 4.2 (`cluster` absent: the external \"Grid\" rows; else that \
         cluster's rows)."
    }

    fn keys(&self) -> &'static [&'static str] {
        registry::key_names::<RawDas2>()
    }

    fn schema(&self, generator: &mut SchemaGenerator) -> Schema {
        RawDas2::json_schema(generator)
    }

    fn parse(&self, keys: toml::Value) -> Result<Box<dyn RawModel>, agents::registry::ParseError> {
        registry::parse::<RawDas2>(keys)
    }

    fn extent(&self) -> Extent {
        Extent::JobsOrUntil
    }
}

/// The DAS-2 model's keys.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawDas2 {
    /// DAS-2: move the split m of the two-stage log-uniform size so that the mean is this (ch4's external sweep of
    /// the number of VMs).
    pub mean_nodes: Option<Positive>,
    /// DAS-2: the log-normal's location a for this mean, b kept.
    pub mean_runtime: Option<Seconds>,
    /// DAS-2: the Weibull scale for this mean, the shape kept.
    pub mean_interarrival: Option<Seconds>,
    /// DAS-2 and bag-of-tasks: the local rows of cluster "C64", "C128" or "C256" instead of the external ones.
    pub cluster: Option<String>,
    /// DAS-2: the time unit of Table 4.2's Weibull inter-arrival scales, which the table leaves unstated: "seconds"
    /// (default; the DAS-2 model's unit, each cluster's local requests alone offering 3–7 times its capacity) or
    /// "minutes" (gaps 60 times longer: local loads of 5–11%, external requests 1% of the grid). `mean-interarrival`
    /// is in seconds either way.
    pub interarrival_unit: Option<InterarrivalUnit>,
}

impl RawModel for RawDas2 {
    fn check(&self, _: &mut CheckCx<'_>) -> Result<Arc<dyn ModelSpec>, (String, String)> {
        Ok(Arc::new(Das2Spec(self.model()?)))
    }
}

impl RawDas2 {
    /// The DAS-2 model of `cluster` (the external rows without one), with the means of `mean-nodes`, `mean-runtime` and
    /// `mean-interarrival`; errors name the key.
    fn model(&self) -> Result<Das2Model, (String, String)> {
        let mut model = match cluster(self.cluster.as_deref()).map_err(|m| ("cluster".to_string(), m))? {
            Some(c) => Das2Model::local_default(c),
            None => Das2Model::external_default().map_err(|e| ("cluster".to_string(), e.to_string()))?,
        }
        .in_unit(self.interarrival_unit.unwrap_or_default());
        if let Some(m) = self.mean_nodes {
            model.size = model.size.with_mean(m.0).map_err(|e| ("mean-nodes".to_string(), e.to_string()))?;
        }
        if let Some(m) = self.mean_runtime {
            model.duration = Dist::lognormal_with_mean(m.0, Das2Model::DURATION_SIGMA);
        }
        if let Some(m) = self.mean_interarrival
            && let Dist::Weibull { shape, .. } = model.interarrival
        {
            model.interarrival = Dist::weibull_with_mean(m.0, shape);
        }
        Ok(model)
    }
}

/// The InterGrid cluster `cluster` names, if any (Amini Salehi 2012: C64, C128 and C256).
pub(super) fn cluster(name: Option<&str>) -> Result<Option<InterGridCluster>, String> {
    match name {
        None => Ok(None),
        Some("C64") => Ok(Some(InterGridCluster::C64)),
        Some("C128") => Ok(Some(InterGridCluster::C128)),
        Some("C256") => Ok(Some(InterGridCluster::C256)),
        Some(other) => Err(format!("expected \"C64\", \"C128\" or \"C256\", found \"{other}\"")),
    }
}

/// The DAS-2 model the keys give.
#[derive(Debug)]
struct Das2Spec(Das2Model);

impl ModelSpec for Das2Spec {
    fn generate(&self, limit: Limit, rng: &mut SimRng) -> Result<Arc<Workload>, String> {
        Ok(Arc::new(self.0.generate(limit, rng).map_err(|e| e.to_string())?))
    }

    fn arrivals(&self) -> Option<Arrivals> {
        Some(Arrivals { gap: self.0.interarrival.mean(), per_arrival: 1.0, key: "jobs" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::workload::tests::{generate, parse};

    #[test]
    fn the_das2_replay_offers_the_utilisation_it_is_calibrated_to() {
        // scenarios/pcu/das2.toml calibrates its arrival rate to 15% of DAS-2's 400 CPUs, at full and quick size.
        let doc: toml::Table = toml::from_str(include_str!("../../../scenarios/pcu/das2.toml")).unwrap();
        let full = doc["workloads"]["jobs"].as_table().unwrap().clone();
        let mut quick = full.clone();
        for (key, value) in doc["quick"].as_table().unwrap() {
            if let Some(key) = key.strip_prefix("workloads.jobs.") {
                quick.insert(key.to_string(), value.clone());
            }
        }
        for table in [&full, &quick] {
            // The model's own keys, and the shared `runtime-scale`.
            let own: toml::Table = table
                .iter()
                .filter(|(k, _)| Das2.keys().contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let model = toml::Value::Table(own).try_into::<RawDas2>().unwrap().model().unwrap();
            let number = |v: &toml::Value| v.as_float().or(v.as_integer().map(|i| i as f64));
            let scale = table.get("runtime-scale").and_then(number).unwrap_or(1.0);
            // Arrival rate × mean CPUs × mean runtime over the CPUs.
            let offered = model.offered_load(model.size.mean(), 400.0, 1.0) * scale;
            assert!((offered - 0.15).abs() < 0.001, "{offered}");
        }
        // On draws, split per CPU: every job has one PE and the work offered is 15% of the CPUs' time.
        let mut drawn = full.clone();
        drawn.remove("until");
        drawn.insert("jobs".into(), toml::Value::Integer(200_000));
        let w = generate(&toml::to_string(&drawn).unwrap());
        assert!(w.jobs.iter().all(|j| j.pes == 1));
        let span = w.jobs.iter().map(|j| j.submit).fold(0.0, f64::max);
        let offered = w.jobs.iter().map(|j| j.runtime).sum::<f64>() / (400.0 * span);
        assert!((offered - 0.15).abs() < 0.15 * 0.05, "{offered}");
    }

    #[test]
    fn das2_gaps_in_minutes_are_sixty_times_those_in_seconds() {
        let table =
            |unit: &str| format!("model = \"das2\"\ncluster = \"C64\"\njobs = 20\ninterarrival-unit = \"{unit}\"");
        let (s, min) = (generate(&table("seconds")), generate(&table("minutes")));
        assert_eq!(s, generate("model = \"das2\"\ncluster = \"C64\"\njobs = 20"), "seconds is the default");
        for (a, b) in s.jobs.iter().zip(&min.jobs) {
            assert!((b.submit - 60.0 * a.submit).abs() < 1e-6 * b.submit, "{} vs {}", b.submit, a.submit);
            assert_eq!((a.pes, a.runtime), (b.pes, b.runtime));
        }
        // `mean-interarrival` stays in seconds.
        let fixed = |unit: &str| generate(&format!("{}\nmean-interarrival = 30", table(unit)));
        assert_eq!(fixed("seconds"), fixed("minutes"));
        let (key, _) = parse("model = \"lublin\"\ninterarrival-unit = \"minutes\"").unwrap_err();
        assert_eq!(key, "interarrival-unit");
        assert_eq!(
            parse("model = \"das2\"\njobs = 5\ninterarrival-unit = \"hours\"").unwrap_err().0,
            "interarrival-unit"
        );
    }
}
