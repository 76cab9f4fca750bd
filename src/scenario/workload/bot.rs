//! The bag-of-tasks model, `model = "bot"`: the Grid Workloads Archive bags of tasks of Amini Salehi (2012),
//! *Contention-aware Resource Provisioning in Interconnected Grid Computing Systems* (PhD thesis, The University of
//! Melbourne), Table 5.2, and of Amini Salehi, Javadi & Buyya, *Preemption-aware Admission Control in a Virtualized
//! Grid Federation*, Table II.

use std::sync::Arc;

use agents::registry::values::Positive;
use agents::sim::rng::SimRng;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;

use super::das2::cluster;
use super::registry::{self, Arrivals, CheckCx, Extent, ModelSpec, RawModel, WorkloadModel};
use crate::workload::models::BotModel;
use crate::workload::{Limit, Workload};

/// The bag-of-tasks model.
pub struct Bot;

impl WorkloadModel for Bot {
    fn name(&self) -> &'static str {
        "bot"
    }

    fn about(&self) -> &'static str {
        "GWA bag-of-tasks model of Amini Salehi (2012) ch5 / Amini Salehi, Javadi & Buyya."
    }

    fn keys(&self) -> &'static [&'static str] {
        registry::key_names::<RawBot>()
    }

    fn schema(&self, generator: &mut SchemaGenerator) -> Schema {
        RawBot::json_schema(generator)
    }

    fn parse(&self, keys: toml::Value) -> Result<Box<dyn RawModel>, agents::registry::ParseError> {
        registry::parse::<RawBot>(keys)
    }

    fn extent(&self) -> Extent {
        Extent::JobsOrUntil
    }
}

/// The bag-of-tasks model's keys.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawBot {
    /// DAS-2 and bag-of-tasks: the local rows of cluster "C64", "C128" or "C256" instead of the external ones.
    pub cluster: Option<String>,
    /// Bag-of-tasks: the Weibull scale of the gaps between bags, α_e or α_l \[s\] (default 1.7 external, 4 local; shape
    /// 7.86). With `cluster`, the value for C128: C64 uses α_l + 1 and C256 α_l − 1.
    pub scale: Option<Positive>,
    /// Bag-of-tasks: the mean task duration M_e or M_l \[s\] (default 90; normal, standard deviation 6.1). With
    /// `cluster`, the value for C128: C64 uses M_l − 1 and C256 M_l + 1.
    pub task_duration: Option<Positive>,
    /// Bag-of-tasks: each bag is one request of as many PEs as it has tasks, for the mean of their durations (its
    /// work the sum of theirs), rather than one single-PE job per task; with `urgency-ratios`, its deadline is submit
    /// + ratio × that duration (a moldable provider rescales it to the duration it runs for).
    #[serde(default)]
    pub bags: bool,
    /// Bag-of-tasks: the urgency classes of external bags (Amini Salehi, Javadi & Buyya): half of high urgency with a
    /// deadline ratio N(2, 1), half of low urgency with N(4, 1), the ratio truncated at 1, when true; with `bags`.
    #[serde(default)]
    pub urgency_ratios: bool,
}

impl RawModel for RawBot {
    fn check(&self, _: &mut CheckCx<'_>) -> Result<Arc<dyn ModelSpec>, (String, String)> {
        if self.urgency_ratios && !self.bags {
            let m = "gives each bag's deadline: a key of `bags = true` only";
            return Err(("urgency-ratios".into(), m.into()));
        }
        Ok(Arc::new(BotSpec(self.model().map_err(|m| ("cluster".to_string(), m))?)))
    }
}

impl RawBot {
    /// The bag-of-tasks model of `cluster`, with the tables' defaults (Amini Salehi 2012, Table 5.2): α_e 1.7, α_l 4, M 90
    /// s.
    fn model(&self) -> Result<BotModel, String> {
        let m = self.task_duration.map_or(90.0, |m| m.0);
        let mut model = match cluster(self.cluster.as_deref())? {
            Some(c) => BotModel::local(self.scale.map_or(4.0, |a| a.0), m, c),
            None => BotModel::external(self.scale.map_or(1.7, |a| a.0), m),
        };
        model.whole_bags = self.bags;
        if self.bags && !self.urgency_ratios {
            model.urgency = None;
        }
        Ok(model)
    }
}

/// The bag-of-tasks model the keys give.
#[derive(Debug)]
struct BotSpec(BotModel);

impl ModelSpec for BotSpec {
    fn generate(&self, limit: Limit, rng: &mut SimRng) -> Result<Arc<Workload>, String> {
        Ok(Arc::new(self.0.generate(limit, rng).map_err(|e| e.to_string())?))
    }

    fn arrivals(&self) -> Option<Arrivals> {
        Some(Arrivals { gap: self.0.interarrival.mean(), per_arrival: self.0.tasks.mean(), key: "jobs" })
    }
}
