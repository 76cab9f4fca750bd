//! Matchmaking under limited knowledge of resources (Melendez 2010, "Matchmaking on Distributed Systems with
//! Limited Knowledge of Resources"): what the request source, the resource directory, the brokers, the splitter and
//! the single-CPU resources share.
//!
//! - [`Request`]: an advance reservation (AR) or on-demand (OD) request, with its earliest start time S, execution
//!   (service) time E and deadline D; its laxity is L = D − S − E.
//! - [`any_schedulability`]: the Any Schedulability (AS) criterion of Majumdar (2009), the opaque broker's test.
//! - [`timetable`]: a resource's non-preemptive single-CPU timetable, modified EDF (Earliest Deadline First, with
//!   gap filling) or ESF (Earliest Start time First), which the transparent broker simulates.
//! - [`Allocation`]: First Fit (FF) or Next Fit (NF) over the broker's resource list.

pub mod any_schedulability;
pub mod timetable;

use serde::{Deserialize, Serialize};

use gridmarket_kernel::AgentId;

/// Which brokers may use a resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Pool {
    /// Its policy is known: a transparent broker simulates it.
    Transparent,
    /// Its policy is unknown: an AS-based broker uses it.
    Opaque,
}

/// Slack for comparing instants computed as sums of durations \[s\].
pub const EPSILON: f64 = 1e-6;

/// A request (a GridSim "gridlet" in the thesis). Times are absolute instants \[s\]; `service` is a duration \[s\].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Run-wide id, the source's numbering.
    pub id: u64,
    /// The request source, which gets the answer and the completion.
    pub source: AgentId,
    /// On demand (OD: best effort, sent straight to a resource) rather than an advance reservation (AR).
    pub on_demand: bool,
    /// Arrival time a \[s\].
    pub arrival: f64,
    /// Earliest start time S \[s\].
    pub start: f64,
    /// Execution (service) time E \[s\].
    pub service: f64,
    /// Deadline D \[s\].
    pub deadline: f64,
    /// For an OD request, the laxity it gets once scheduled \[s\]: S := its planned start, D := S + E + this.
    pub rewrite_laxity: f64,
}

impl Request {
    /// L = D − S − E \[s\].
    pub fn laxity(&self) -> f64 {
        self.deadline - self.start - self.service
    }

    /// Why the request cannot be served at all, if it cannot: a zero service time, an earliest start after the
    /// deadline, a laxity of zero or less (Melendez 2010 requires L > 0), a start before its arrival.
    pub fn invalid(&self) -> Option<String> {
        let finite = [self.arrival, self.start, self.service, self.deadline].iter().all(|x| x.is_finite());
        if !finite {
            return Some(format!("request {}: a time that is not a finite number", self.id));
        }
        if self.service <= 0.0 {
            return Some(format!("request {}: service time {} s, expected more than 0", self.id, self.service));
        }
        if self.start > self.deadline {
            return Some(format!(
                "request {}: earliest start {} s after its deadline {} s",
                self.id, self.start, self.deadline
            ));
        }
        if self.laxity() <= 0.0 {
            return Some(format!("request {}: laxity D − S − E = {} s, expected more than 0", self.id, self.laxity()));
        }
        if self.start < self.arrival {
            return Some(format!(
                "request {}: earliest start {} s before its arrival {} s",
                self.id, self.start, self.arrival
            ));
        }
        None
    }
}

/// A resource's local scheduling policy, non-preemptive and work-conserving (Melendez 2010 §3.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LocalPolicy {
    /// Modified EDF: Earliest Deadline First, with an earlier idle slot filled when one holds the request.
    #[default]
    Edf,
    /// ESF: Earliest Start time First.
    Esf,
}

/// When modified EDF accepts a request (Melendez 2010 §3.2.1), which the thesis's text leaves open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EdfPlacement {
    /// As printed: the deadline order with the request must be feasible, and only then is an earlier idle slot
    /// tried; a request an idle slot would hold is refused when the deadline order is not feasible.
    #[default]
    Literal,
    /// Accepted when either placement holds it: the deadline order, or an earlier idle slot of the current plan.
    Either,
}

/// How a broker goes through its resources (Melendez 2010 §3.5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Allocation {
    /// First Fit: from the first resource of the list every time.
    #[default]
    FirstFit,
    /// Next Fit: from the resource after the last one assigned, wrapping round (the first scan from the first).
    NextFit,
}

impl Allocation {
    /// The order in which to try `n` resources, given the index of the last one assigned.
    pub fn order(self, n: usize, last: Option<usize>) -> impl Iterator<Item = usize> {
        let first = match (self, last) {
            (Allocation::NextFit, Some(l)) => l + 1,
            _ => 0,
        };
        (0..n).map(move |k| (first + k) % n.max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(start: f64, service: f64, deadline: f64) -> Request {
        Request {
            id: 1,
            source: AgentId(0),
            on_demand: false,
            arrival: 0.0,
            start,
            service,
            deadline,
            rewrite_laxity: 0.0,
        }
    }

    #[test]
    fn bad_requests_are_refused_with_a_reason() {
        assert_eq!(req(0.0, 50.0, 150.0).invalid(), None);
        assert!(req(0.0, 0.0, 150.0).invalid().unwrap().contains("service time 0"));
        assert!(req(200.0, 50.0, 150.0).invalid().unwrap().contains("after its deadline"));
        assert!(req(0.0, 150.0, 150.0).invalid().unwrap().contains("laxity"));
        assert!(req(0.0, 100.0, 90.0).invalid().unwrap().contains("laxity"));
    }

    #[test]
    fn next_fit_starts_after_the_last_resource_assigned() {
        let order = |a: Allocation, last| a.order(4, last).collect::<Vec<_>>();
        assert_eq!(order(Allocation::FirstFit, Some(2)), [0, 1, 2, 3]);
        assert_eq!(order(Allocation::NextFit, None), [0, 1, 2, 3]);
        assert_eq!(order(Allocation::NextFit, Some(2)), [3, 0, 1, 2]);
        assert_eq!(order(Allocation::NextFit, Some(3)), [0, 1, 2, 3]);
    }
}
