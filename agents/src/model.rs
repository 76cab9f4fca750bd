//! The small vocabulary the protocol and the agents share: job identifiers, and the lease types and preemption kinds
//! of Amini Salehi (2012), ch 3 §3.2.1.
//!
//! [`protocol`](crate::protocol) re-exports these types, so messages and agents name them the same way.

use serde::{Deserialize, Serialize};

/// Identifies a job (or a lease, or a request) across agents; unique within a run.
pub type JobId = u64;

/// Lease type `τ(L)` (thesis Ch 3 §3.2.1); deserialises from "local", "cancellable", "suspendable", "migratable" and
/// "non-preemptable".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LeaseType {
    /// localNonPreemptable: a local request; it has absolute priority and is never preempted.
    Local,
    /// extCancellable: best-effort external lease with no duration guarantee (like an EC2 spot instance).
    Cancellable,
    /// extSuspendable: best-effort external lease whose duration is guaranteed but not its start.
    Suspendable,
    /// extMigratable: deadline-constrained external lease; it may move to another resource provider.
    Migratable,
    /// extNonPreemptable: deadline-constrained external lease that is never preempted.
    NonPreemptable,
}

impl LeaseType {
    /// What preempting a running lease of this type does; `None` if the type is never preempted.
    pub fn preemption(self) -> Option<PreemptionKind> {
        match self {
            LeaseType::Cancellable => Some(PreemptionKind::Cancel),
            LeaseType::Suspendable => Some(PreemptionKind::Suspend),
            LeaseType::Migratable => Some(PreemptionKind::Migrate),
            LeaseType::Local | LeaseType::NonPreemptable => None,
        }
    }
}

/// What preempting a lease does to its VMs (thesis Ch 3 §3.2.1 and the VM life cycle of Fig 2.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PreemptionKind {
    /// Stop the VMs and drop their state; the thesis takes the time as negligible.
    Cancel,
    /// Pause and suspend the VMs to shared storage, reschedule the lease, later resume and unpause them.
    Suspend,
    /// Suspend the VMs, copy their memory images to another resource provider and resume them there.
    Migrate,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lease_type_names_and_preemption() {
        let types: Vec<LeaseType> =
            serde_json::from_str(r#"["local", "cancellable", "suspendable", "migratable", "non-preemptable"]"#)
                .unwrap();
        let kinds: Vec<Option<PreemptionKind>> = types.iter().map(|t| t.preemption()).collect();
        assert_eq!(
            kinds,
            [None, Some(PreemptionKind::Cancel), Some(PreemptionKind::Suspend), Some(PreemptionKind::Migrate), None]
        );
    }
}
