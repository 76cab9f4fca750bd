//! The small vocabulary the protocol and the agents share: job identifiers, the lease types and preemption kinds of
//! Amini Salehi (2012), ch 3 §3.2.1, the power model, site and DVS policy of a data centre (Garg 2010 ch6) that its
//! adverts carry, and the auction mechanisms an exchange's messages name (Garg 2010 ch8). Only the types live here;
//! what they do is beside the agents that use them (`datacenter::power`, `datacenter::dvs`, `exchange::mechanism`),
//! so that the protocol imports no agent module.
//!
//! [`protocol`](crate::protocol) re-exports the job and lease types, so messages and agents name them the same way.

use gridmarket_kernel::AgentId;
use schemars::JsonSchema;
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

/// A data centre's DVS policy; deserialises from "ours", "previous" and "none".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DvsPolicy {
    /// OurDVS: from the level nearest f_opt up.
    #[default]
    Ours,
    /// PrevDVS: from f_min up.
    Previous,
    /// Without DVS: at f_max.
    None,
}

/// The power of one CPU against its frequency, P(f) = β + α f³, and the frequencies it runs at.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PowerModel {
    /// Static power β \[W\].
    pub beta: f64,
    /// Dynamic power factor α [W/GHz³].
    pub alpha: f64,
    /// The frequency levels \[GHz\], ascending; the last is f_max.
    pub levels: Vec<f64>,
}

/// What a data centre's location, cooling and prices add to its CPUs (Garg 2010 Table 6.2).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Site {
    /// Coefficient of performance of the cooling: cooling energy = CPU energy / COP.
    pub cop: f64,
    /// Carbon emission rate r^CO2 [kg/kWh].
    pub carbon_rate: f64,
    /// Electricity price p^e [$/kWh].
    pub electricity_price: f64,
    /// What the data centre pays to move a GB in or out, p^DT [$/GB].
    pub transfer_price: f64,
    /// What users pay per CPU-hour at f_max, p^c [$] (Garg 2010 §6.5: $0.40).
    pub cpu_price: f64,
    /// What users pay per GB moved, p^DTU [$] (Garg 2010 §6.6.2: Amazon's $0.17).
    pub data_price: f64,
}

/// Who holds a one-sided auction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Form {
    /// A seller auctions units (a time slot); asks are its reserve prices, bids compete.
    #[default]
    Forward,
    /// A buyer auctions demand (an application); bids are its maximum prices, asks compete.
    Reverse,
}

/// The batch mechanisms, as scenario files name them: "posted-price", "first-price", "vickrey", "k-double",
/// "mcafee". [`MechanismKind::build`] makes one from its [`MechanismParams`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum MechanismKind {
    /// The commodity market ([`PostedPrice`](crate::exchange::mechanism::PostedPrice)).
    PostedPrice,
    /// First-price sealed bid, FPSB ([`FirstPrice`](crate::exchange::mechanism::FirstPrice)); parameter `form`.
    FirstPrice,
    /// Vickrey, uniform second price ([`Vickrey`](crate::exchange::mechanism::Vickrey)); parameter `form`.
    Vickrey,
    /// The k-double auction ([`KDouble`](crate::exchange::mechanism::KDouble)); parameter `k`.
    KDouble,
    /// McAfee's trade-reduction double auction ([`McAfee`](crate::exchange::mechanism::McAfee)).
    #[serde(rename = "mcafee")]
    McAfee,
}

/// The parameters a [`MechanismKind`] may take; each is refused by the kinds it does not apply to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct MechanismParams {
    /// Who holds a one-sided auction, "forward" (a seller; the default) or "reverse" (a buyer): first-price and
    /// vickrey only.
    pub form: Option<Form>,
    /// The k of the k-double auction's price k·b_q + (1 − k)·a_q, in [0, 1] (default 0.5): k-double only.
    pub k: Option<f64>,
}

/// What an agent offers its peers: a scenario's reference to another group (`submit-to`, `providers`, `exchange`)
/// names agents of a kind offering the service its key asks for, and agents find their peers at run time in the
/// directory by the service ([`Ctx::offering`]), never by a kind's name.
///
/// [`Ctx::offering`]: gridmarket_kernel::Ctx::offering
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Service {
    /// Sells its PEs' time at posted prices, as jobs and leases: its prices feed the run's market metrics and its
    /// receipts the providers' revenue (a resource provider).
    SellsCompute,
    /// Runs the jobs users submit to it directly (a provider, an InterGrid gateway, a computing utility).
    RunsJobs,
    /// Buys compute at posted prices: hears every provider's price changes (a user broker).
    BuysCompute,
    /// Schedules users' applications on the providers that register with it (a meta-broker, Garg 2010 ch3–5, 7).
    SchedulesOnProviders,
    /// Places applications on the data centres that register with it (the energy-aware meta-broker, Garg 2010 ch6).
    PlacesOnDataCentres,
    /// Hosts the applications an energy-aware meta-broker places on it (a data centre, Garg 2010 ch6).
    HostsApplications,
    /// Clears auctions between sellers and buyers of compute (the market exchange, Garg 2010 ch8).
    ClearsAuctions,
    /// Manages the nodes that serve it, dedicated and public (a computing utility, the PCU paper).
    ManagesNodes,
    /// Lists resources and their local policies to the brokers that ask (a resource directory, Melendez 2010).
    ListsResources,
    /// Matches requests to resources it knows only through the Any-Schedulability test (the opaque broker,
    /// Melendez 2010).
    MatchesByAnySchedulability,
    /// Matches requests to resources whose timetables it sees (the transparent broker, Melendez 2010).
    MatchesOnTimetables,
    /// Splits requests between an opaque and a transparent broker (Melendez 2010).
    SplitsRequests,
    /// Runs the requests a broker assigns it on one CPU (a single-CPU resource, Melendez 2010).
    RunsRequests,
    /// A service a kind outside gridmarket defines, by its name (a plug-in kind's peers).
    Named(&'static str),
}

impl Service {
    /// The service's name in the directory.
    pub fn name(self) -> &'static str {
        match self {
            Service::SellsCompute => "sells-compute",
            Service::RunsJobs => "runs-jobs",
            Service::BuysCompute => "buys-compute",
            Service::SchedulesOnProviders => "schedules-on-providers",
            Service::PlacesOnDataCentres => "places-on-data-centres",
            Service::HostsApplications => "hosts-applications",
            Service::ClearsAuctions => "clears-auctions",
            Service::ManagesNodes => "manages-nodes",
            Service::ListsResources => "lists-resources",
            Service::MatchesByAnySchedulability => "matches-by-any-schedulability",
            Service::MatchesOnTimetables => "matches-on-timetables",
            Service::SplitsRequests => "splits-requests",
            Service::RunsRequests => "runs-requests",
            Service::Named(name) => name,
        }
    }
}

/// The PEs a provider has, for brokers and gateways that choose among providers.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProviderInfo {
    /// The provider -- peer.
    pub id: AgentId,
    /// PEs.
    pub pes: u32,
    /// Speed relative to the reference PE.
    pub speed: f64,
    /// Price [G$ per PE-second].
    pub price: f64,
}
