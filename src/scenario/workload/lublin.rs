//! The Lublin model, `model = "lublin"`: rigid parallel jobs of Lublin & Feitelson (2003), "The workload on
//! parallel supercomputers: modeling the characteristics of rigid jobs", from one of its presets, rescaled.

use std::sync::Arc;

use agents::registry::limits::{MAX_TIME, approx, short};
use agents::registry::values::{Positive, PositiveInt, Seconds};
use agents::sim::rng::SimRng;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;

use super::MAX_NODES;
use super::registry::{self, Arrivals, CheckCx, Extent, ModelSpec, RawModel, WorkloadModel};
use crate::workload::lublin::LublinParams;
use crate::workload::{Limit, Workload};

/// The Lublin model.
pub struct Lublin;

impl WorkloadModel for Lublin {
    fn name(&self) -> &'static str {
        "lublin"
    }

    fn about(&self) -> &'static str {
        "Lublin & Feitelson (2003) rigid parallel jobs (`preset`: typed, typeless, garg-ch5, salehi-ch3, thunder, \
         thunder-table)."
    }

    fn keys(&self) -> &'static [&'static str] {
        registry::key_names::<RawLublin>()
    }

    fn schema(&self, generator: &mut SchemaGenerator) -> Schema {
        RawLublin::json_schema(generator)
    }

    fn parse(&self, keys: toml::Value) -> Result<Box<dyn RawModel>, agents::registry::ParseError> {
        registry::parse::<RawLublin>(keys)
    }

    fn extent(&self) -> Extent {
        Extent::JobsOrUntil
    }
}

/// The Lublin model's keys.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawLublin {
    /// Lublin: "typed" (batch and interactive streams; default), "typeless", "garg-ch5", "salehi-ch3", "thunder" (the
    /// LLNL Thunder log's jobs as Garg (2010) Table 7.1 gives them: mean 44 CPUs, runtimes of mean 2328.911 s and
    /// standard deviation 7790.11 s; arriving so that they keep Thunder's 4,096 CPUs 88% busy, a mean gap of 124.8 s
    /// before any `time-scale`) or "thunder-table" (the same jobs every 16.176 s on average, as the table states,
    /// which is 7.7 weeks of that machine's work per week: see docs/workloads.md).
    pub preset: Option<String>,
    /// Lublin: largest job \[PEs\] (default: the preset's; at most 2^20).
    pub max_nodes: Option<PositiveInt>,
    /// Lublin: UHI, log2 of the largest size (Garg (2010) ch5: log2(p); at most 20); applied after `max-nodes`.
    pub u_hi: Option<f64>,
    /// Lublin: UMED, the split of the two-stage uniform (Garg 2010, ch5: UHI − 2.5); applied after `max-nodes`.
    pub u_med: Option<f64>,
    /// Lublin: scale sizes to this mean \[PEs\] (Amini Salehi 2012, ch3 uses 4 VMs).
    pub mean_nodes: Option<Positive>,
    /// Lublin: scale runtimes to this mean \[s\] (Amini Salehi 2012, ch3 uses 2 h); the longest runtime, about 50
    /// times the mean, must stay within 1e12 s.
    pub mean_runtime: Option<Seconds>,
    /// Lublin: scale inter-arrival times to this mean \[s\]; the last arrival must stay within 1e12 s on average.
    pub mean_interarrival: Option<Seconds>,
}

impl RawModel for RawLublin {
    fn check(&self, _: &mut CheckCx<'_>) -> Result<Arc<dyn ModelSpec>, (String, String)> {
        let params = self.params()?;
        let longest = params.runtime_scale * crate::workload::lublin::TOO_MUCH_TIME.exp();
        if longest > MAX_TIME {
            let m = format!("makes the longest runtime {} s, more than {} s", approx(longest), short(MAX_TIME));
            return Err(("mean-runtime".into(), m));
        }
        let gap = params.mean_interarrival().map_err(|e| ("mean-interarrival".to_string(), e.to_string()))?;
        Ok(Arc::new(LublinSpec { params, gap }))
    }
}

impl RawLublin {
    /// The Lublin parameters the keys give; an error is (the key at fault, why).
    fn params(&self) -> Result<LublinParams, (String, String)> {
        fn at(key: &'static str) -> impl Fn(crate::workload::WorkloadError) -> (String, String) {
            move |e| (key.to_string(), e.to_string())
        }
        let mut p = match self.preset.as_deref().unwrap_or("typed") {
            "typed" => LublinParams::typed(),
            "typeless" => LublinParams::typeless(),
            "garg-ch5" => LublinParams::garg_ch5(),
            "salehi-ch3" => LublinParams::amini_salehi_ch3().map_err(at("preset"))?,
            "thunder" => LublinParams::thunder().map_err(at("preset"))?,
            "thunder-table" => LublinParams::thunder_table().map_err(at("preset"))?,
            other => {
                let m = format!(
                    "expected \"typed\", \"typeless\", \"garg-ch5\", \"salehi-ch3\", \"thunder\" or \"thunder-table\", \
                     found \"{other}\""
                );
                return Err(("preset".into(), m));
            }
        };
        if let Some(n) = self.max_nodes {
            if n.0 > MAX_NODES {
                return Err((
                    "max-nodes".into(),
                    format!("expected a positive integer up to {MAX_NODES} (2^20), found {}", n.0),
                ));
            }
            p = p.with_max_nodes(n.0);
        }
        for (key, value) in [("u-hi", self.u_hi), ("u-med", self.u_med)] {
            if let Some(v) = value
                && !(0.0..=20.0).contains(&v)
            {
                return Err((
                    key.into(),
                    format!("expected a number from 0 to 20 (log2 of 2^20 PEs), found {}", short(v)),
                ));
            }
        }
        for s in &mut p.streams {
            if let Some(h) = self.u_hi {
                s.class.size.u_hi = h;
            }
            if let Some(m) = self.u_med {
                s.class.size.u_med = m;
            }
            // What was set last is at fault: `u-hi` or `u-med` against each other or the preset's ULOW.
            let key = if self.u_med.is_some() {
                "u-med"
            } else if self.u_hi.is_some() {
                "u-hi"
            } else {
                "preset"
            };
            s.class.size.validate().map_err(at(key))?;
        }
        if let Some(m) = self.mean_nodes {
            p = p.fit_mean_nodes(m.0).map_err(at("mean-nodes"))?;
        }
        if let Some(m) = self.mean_runtime {
            p = p.scale_runtime_to_mean(m.0).map_err(at("mean-runtime"))?;
        }
        if let Some(m) = self.mean_interarrival {
            p = p.scale_interarrival_to_mean(m.0).map_err(at("mean-interarrival"))?;
        }
        p.validate().map_err(at("preset"))?;
        Ok(p)
    }
}

/// The Lublin parameters the keys give, and their mean inter-arrival time.
#[derive(Debug)]
struct LublinSpec {
    params: LublinParams,
    /// Mean gap between arrivals [s].
    gap: f64,
}

impl ModelSpec for LublinSpec {
    fn generate(&self, limit: Limit, rng: &mut SimRng) -> Result<Arc<Workload>, String> {
        Ok(Arc::new(self.params.generate(limit, rng).map_err(|e| e.to_string())?))
    }

    fn arrivals(&self) -> Option<Arrivals> {
        Some(Arrivals { gap: self.gap, per_arrival: 1.0, key: "mean-interarrival" })
    }
}
