//! The local requests of Amini Salehi (2012), *Contention-aware Resource Provisioning in Interconnected Grid
//! Computing Systems* (PhD thesis, The University of Melbourne), ch6, `model = "local-requests"`: the requests a
//! provider's own users make, interleaved with a trace, each a local lease.

use std::sync::Arc;

use agents::protocol::LeaseType;
use agents::registry::limits::{MAX_JOBS, short};
use agents::registry::values::{Delay, Fraction, PositiveInt, Seconds};
use agents::sim::rng::SimRng;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;

use super::registry::{self, CheckCx, Extent, ModelSpec, RawModel, WorkloadModel};
use crate::workload::models::{LocalRequestModel, LocalSize};
use crate::workload::{Limit, Workload};

/// The local requests.
pub struct LocalRequests;

impl WorkloadModel for LocalRequests {
    fn name(&self) -> &'static str {
        "local-requests"
    }

    fn about(&self) -> &'static str {
        "The local requests Amini Salehi (2012) ch6 interleaves with a trace (`rho`, `delta`, `theta`, `rp-nodes` over \
         `until`), each a local lease."
    }

    fn keys(&self) -> &'static [&'static str] {
        registry::key_names::<RawLocalRequests>()
    }

    fn schema(&self, generator: &mut SchemaGenerator) -> Schema {
        RawLocalRequests::json_schema(generator)
    }

    fn parse(&self, keys: toml::Value) -> Result<Box<dyn RawModel>, agents::registry::ParseError> {
        registry::parse::<RawLocalRequests>(keys)
    }

    fn extent(&self) -> Extent {
        Extent::Until
    }
}

/// The local requests' keys.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawLocalRequests {
    /// Local requests: ρ, the share of the provider's node-time they take (Amini Salehi 2012, ch6: 5% to 30%).
    pub rho: Option<Fraction>,
    /// Local requests: δ, their mean duration \[s\] (each drawn in δ ± 30 min; at least 1,800 s).
    pub delta: Option<Seconds>,
    /// Local requests: θ, their size range, "small" (1–24 nodes), "medium" (25–48) or "large" (49–72).
    pub theta: Option<String>,
    /// Local requests: the provider's nodes, which ρ is a share of.
    pub rp_nodes: Option<PositiveInt>,
    /// Local requests: how long before its start each is made \[s\] (an advance reservation; the injection files
    /// Haizea distributes for the thesis's setting make them 86,400 s, a day, ahead). Absent: when it starts.
    pub notice: Option<Delay>,
}

impl RawModel for RawLocalRequests {
    fn check(&self, cx: &mut CheckCx<'_>) -> Result<Arc<dyn ModelSpec>, (String, String)> {
        let bad = |key: &str, m: String| Err((key.to_string(), m));
        let given = [
            ("until", cx.shared.until.is_some()),
            ("rho", self.rho.is_some()),
            ("delta", self.delta.is_some()),
            ("theta", self.theta.is_some()),
            ("rp-nodes", self.rp_nodes.is_some()),
        ];
        if let Some((key, _)) = given.iter().find(|(_, given)| !given) {
            return bad(key, "required by the \"local-requests\" model".into());
        }
        let model = self.model(cx.shared.until.map_or(0.0, |u| u.0)).map_err(|m| ("theta".to_string(), m))?;
        if model.mean_duration < 1800.0 {
            return bad("delta", format!("expected at least 1800 s, found {}", short(model.mean_duration)));
        }
        if model.count() as u64 > MAX_JOBS {
            return bad("rho", format!("makes {} requests, more than the limit of {MAX_JOBS}", model.count()));
        }
        Ok(Arc::new(LocalRequestsSpec(model)))
    }
}

impl RawLocalRequests {
    /// The local-request interleaver the keys give over `horizon` [s]; an error says what is wrong with `theta`.
    fn model(&self, horizon: f64) -> Result<LocalRequestModel, String> {
        let theta = match self.theta.as_deref() {
            Some("small") => LocalSize::Small,
            Some("medium") | None => LocalSize::Medium,
            Some("large") => LocalSize::Large,
            Some(other) => return Err(format!("expected \"small\", \"medium\" or \"large\", found \"{other}\"")),
        };
        Ok(LocalRequestModel {
            rho: self.rho.map_or(0.0, |r| r.0),
            mean_duration: self.delta.map_or(0.0, |d| d.0),
            nodes: theta.range(),
            rp_nodes: self.rp_nodes.map_or(1, |n| n.0),
            horizon,
            notice: self.notice.map_or(0.0, |n| n.0),
        })
    }
}

/// The local-request interleaver the keys give.
#[derive(Debug)]
struct LocalRequestsSpec(LocalRequestModel);

impl ModelSpec for LocalRequestsSpec {
    /// The requests over the horizon, whatever `limit` (the horizon's): each a local lease.
    fn generate(&self, _: Limit, rng: &mut SimRng) -> Result<Arc<Workload>, String> {
        let mut w = self.0.generate(rng).map_err(|e| e.to_string())?;
        w.jobs.iter_mut().for_each(|j| j.lease = Some(LeaseType::Local));
        Ok(Arc::new(w))
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::workload::tests::{check, generate, parse};
    use agents::protocol::LeaseType;

    #[test]
    fn local_requests_are_local_leases_and_lease_type_types_every_job() {
        // n = ρ·nodes·horizon / (δ·θ̄) = 0.15 × 512 × 30 days / (3 h × 36.5) = 505 (Amini Salehi 2012, ch6).
        let w = generate(
            "model = \"local-requests\"\nuntil = 2592000.0\nrho = 0.15\ndelta = 10800.0\ntheta = \"medium\"\nrp-nodes = 512",
        );
        assert_eq!(w.jobs.len(), 505);
        assert!(w.jobs.iter().all(|j| j.lease == Some(LeaseType::Local) && (25..=48).contains(&j.pes)));
        // `notice`: the same requests, each made that long before its start.
        let ahead = generate(
            "model = \"local-requests\"\nuntil = 2592000.0\nrho = 0.15\ndelta = 10800.0\ntheta = \"medium\"\nrp-nodes = 512\nnotice = 86400.0",
        );
        assert_eq!(ahead.jobs.len(), w.jobs.len());
        for (a, s) in ahead.jobs.iter().zip(&w.jobs) {
            assert_eq!((a.earliest_start, a.submit), (Some(s.submit), (s.submit - 86_400.0).max(0.0)));
        }
        let w = generate("model = \"swf\"\nfile = \"small.swf\"\nlease-type = \"suspendable\"");
        assert!(!w.jobs.is_empty() && w.jobs.iter().all(|j| j.lease == Some(LeaseType::Suspendable)));
        let bad = |table: &str| check(table).unwrap_err();
        let e = bad(
            "model = \"local-requests\"\nuntil = 1000.0\nrho = 0.1\ndelta = 3600.0\ntheta = \"huge\"\nrp-nodes = 8",
        );
        assert_eq!(e.0, "theta");
        assert_eq!(bad("model = \"local-requests\"\nuntil = 1000.0").0, "rho");
        assert_eq!(bad("model = \"lublin\"\nnotice = 60.0").0, "notice", "a key only local requests read");
        assert_eq!(parse("model = \"local-requests\"\nnotice = -1.0").unwrap_err().0, "notice");
    }
}
