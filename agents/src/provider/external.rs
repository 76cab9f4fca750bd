//! The admission capability: external requests (forwarded by a gateway) pass the provider's admission control, if
//! it has one (Amini Salehi, Javadi & Buyya: PACP and its baselines, see [`super::admission`]), and are counted for
//! the violation rate (Eq 14): received, refused, completed, completed by their deadline.

use std::collections::BTreeSet;

use super::admission::Admission;
use super::admission::model::Capacity;
use crate::model::JobId;
use crate::registry::{Metric, Unit};
use crate::report::Report;
use crate::sim::SimTime;

/// The external requests a provider holds, its admission control, and what became of the requests.
#[derive(Debug, Default)]
pub(super) struct ExternalRequests {
    /// Admission control of external requests, if any.
    pub(super) admission: Option<Admission>,
    /// External requests held here, queued, running or preempted.
    held: BTreeSet<JobId>,
    requests: u64,
    refused: u64,
    completed: u64,
    met: u64,
}

impl ExternalRequests {
    /// A request of `runtime` seconds here arrives at `now`: an external one passes the admission control (`Err`
    /// with the reason when refused); a local one feeds its estimates. `here` says whether a held request is still
    /// at the provider (requests that left other than by completing leave the count when it matters).
    pub(super) fn control(
        &mut self,
        runtime: f64,
        external: bool,
        now: SimTime,
        here: impl Fn(JobId) -> bool,
    ) -> Result<(), String> {
        self.requests += u64::from(external);
        let Some(admission) = self.admission.as_mut() else { return Ok(()) };
        if !external {
            admission.local_arrived(runtime);
            return Ok(());
        }
        if let Capacity::Finite(k) = admission.capacity()
            && self.held.len() >= k
        {
            self.held.retain(|&id| here(id));
        }
        let decision = admission.admit(runtime, now.secs(), self.held.len());
        self.refused += u64::from(decision.is_err());
        decision
    }

    /// An external request was admitted and is held here.
    pub(super) fn hold(&mut self, id: JobId) {
        self.held.insert(id);
    }

    /// An external request completed, by its deadline or not.
    pub(super) fn completed(&mut self, id: JobId, met: bool) {
        self.held.remove(&id);
        self.completed += 1;
        self.met += u64::from(met);
    }

    /// The current K of the admission control (NaN: none, or unbounded).
    pub(super) fn capacity(&self) -> f64 {
        match self.admission.as_ref().map(|a| a.capacity()) {
            Some(Capacity::Finite(k)) => k as f64,
            _ => f64::NAN,
        }
    }

    /// The external requests' metrics.
    pub(super) fn report(&self, out: &mut Report) {
        out.metrics.extend([
            ("external_requests", self.requests as f64),
            ("external_refused", self.refused as f64),
            ("external_completed", self.completed as f64),
            ("external_met", self.met as f64),
            ("admission_capacity", self.capacity()),
            ("admission_fallbacks", self.admission.as_ref().map_or(0.0, |a| a.fallbacks as f64)),
        ]);
    }
}

/// The admission capability's metrics (the violation rate of Amini Salehi, Javadi & Buyya, Eq 14).
pub(super) const METRICS: &[Metric] = &[
    Metric::new("external_requests", Unit::Count, "external requests (forwarded by a gateway) that arrived"),
    Metric::new("external_refused", Unit::Count, "external requests the admission control refused"),
    Metric::new("external_completed", Unit::Count, "external requests that ran to completion"),
    Metric::new(
        "external_met",
        Unit::Count,
        "external requests completed by their deadline (for a moldable provider, the deadline as `molded-deadline` says)",
    ),
    Metric::new(
        "admission_capacity",
        Unit::Count,
        "K of the admission control at the end of the run: the most external requests held (undefined when \
             unbounded or without admission control)",
    ),
    Metric::substitution(
        "admission_fallbacks",
        "estimates of K the model refused (a local load of 1 or more), each answered with K = 1",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::admission::{AdmissionConfig, AdmissionPolicy};

    #[test]
    fn requests_are_counted_and_a_full_provider_recounts_the_ones_still_here() {
        let t = |s: f64| SimTime::new(s).unwrap();
        // Without admission control every request passes and is counted.
        let mut open = ExternalRequests::default();
        assert_eq!(open.control(10.0, true, t(0.0), |_| true), Ok(()));
        assert_eq!(open.control(10.0, false, t(0.0), |_| true), Ok(()));
        assert!(open.capacity().is_nan());
        // One external request at a time (AACP): the second is refused while the first is here, admitted once it
        // has left.
        let config = AdmissionConfig::new(AdmissionPolicy::Aacp);
        let mut one = ExternalRequests { admission: Some(Admission::new(config)), ..ExternalRequests::default() };
        assert_eq!(one.control(10.0, true, t(0.0), |_| true), Ok(()));
        one.hold(1);
        assert!(one.control(10.0, true, t(1.0), |_| true).is_err());
        assert_eq!(one.control(10.0, true, t(2.0), |id| id != 1), Ok(()));
        one.hold(2);
        one.completed(2, true);
        let mut out = Report::default();
        one.report(&mut out);
        let get = |k| out.metric(k).unwrap();
        assert_eq!((get("external_requests"), get("external_refused")), (3.0, 1.0));
        assert_eq!((get("external_completed"), get("external_met"), get("admission_capacity")), (1.0, 1.0, 1.0));
    }
}
