//! The message protocol: one [`Msg`] enum, grouped by sub-protocol.
//!
//! Every variant says who sends it to whom and when. Names follow the sources where they exist (Garg's (2010)
//! `SLARequest`/`SLAAccept`/`SLAFail`, Amini Salehi's (2012) lease `Suspend`/`Resume`), so that a reader of a thesis
//! recognises them. Payloads are named structs deriving `Serialize`, so the message trace can dump them. Large payloads
//! are boxed to keep [`Msg`] small: envelopes are moved through the event queue many times.
//!
//! Instants of simulated time are [`SimTime`]s; durations, amounts and rates are plain `f64` with their unit in the
//! field's doc. A `SimTime` serialises as the plain number an `f64` would, so traces read the same either way.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::model::{DvsPolicy, MechanismKind, MechanismParams, PowerModel, Site};
pub use crate::model::{JobId, LeaseType, PreemptionKind};
use gridmarket_kernel::{AgentId, SimTime};

/// Every message agents exchange.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "proto", content = "msg", rename_all = "snake_case")]
pub enum Msg {
    /// Job submission, execution and completion.
    Job(JobMsg),
    /// Leases of resources and their preemption.
    Lease(LeaseMsg),
    /// Market registration, advertisement, bidding, clearing and payment.
    Market(MarketMsg),
    /// The market exchange: accounts, advertisement, discovery, commodity leases and auctions.
    Exchange(ExchangeMsg),
    /// Node power states and frequencies.
    Energy(EnergyMsg),
    /// A public computing utility's manager and its dedicated and public nodes.
    Utility(UtilityMsg),
    /// Timers an agent sets for itself (`Ctx::wake_in`).
    Timer(TimerMsg),
    /// Matchmaking of reservations on single-CPU resources (Melendez 2010).
    Match(MatchMsg),
    /// Scripted test-bed and benchmark traffic, not part of any market protocol.
    Probe(ProbeMsg),
}

impl gridmarket_kernel::Message for Msg {
    /// The message kind as written in the trace, `"sub_protocol.variant"` (e.g. `"job.submit"`).
    fn kind(&self) -> &'static str {
        match self {
            Msg::Job(m) => m.kind(),
            Msg::Lease(m) => m.kind(),
            Msg::Market(m) => m.kind(),
            Msg::Exchange(m) => m.kind(),
            Msg::Energy(m) => m.kind(),
            Msg::Utility(m) => m.kind(),
            Msg::Timer(m) => m.kind(),
            Msg::Match(m) => m.kind(),
            Msg::Probe(m) => m.kind(),
        }
    }
}

impl Msg {
    /// The message kind as written in the trace, `"sub_protocol.variant"` (e.g. `"job.submit"`).
    pub fn kind(&self) -> &'static str {
        gridmarket_kernel::Message::kind(self)
    }
}

/// Each sub-protocol's messages are messages: `ctx.send(to, JobMsg::Accepted { job })`.
macro_rules! sub_protocols {
    ($($variant:ident($ty:ty)),* $(,)?) => {
        $(impl From<$ty> for Msg {
            fn from(m: $ty) -> Msg {
                Msg::$variant(m)
            }
        })*
    };
}

sub_protocols!(
    Job(JobMsg),
    Lease(LeaseMsg),
    Market(MarketMsg),
    Exchange(ExchangeMsg),
    Energy(EnergyMsg),
    Utility(UtilityMsg),
    Timer(TimerMsg),
    Match(MatchMsg),
    Probe(ProbeMsg),
);

/// A job as it travels between user broker, gateway, meta-broker and provider.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobSpec {
    /// Run-wide identifier.
    pub id: JobId,
    /// The user broker that owns the job -- peer.
    pub owner: AgentId,
    /// Processing elements needed at once.
    pub pes: u32,
    /// Actual runtime on a reference PE \[s\]; known to the simulator, not to schedulers.
    pub runtime: f64,
    /// The user's runtime estimate \[s\], what schedulers plan with.
    pub estimate: f64,
    /// Absolute deadline, if the job has one.
    pub deadline: Option<SimTime>,
    /// Budget [G$], if the job has one.
    pub budget: Option<f64>,
    /// Lease type (Amini Salehi 2012, ch3): a local request must start at once, or at its `start` (preempting
    /// external leases if the provider's policy allows), external leases queue and may be preempted by their type.
    /// `None`: a plain job.
    pub lease: Option<LeaseType>,
    /// Memory of each VM \[MB\], for preemption overheads; the provider's default when absent.
    pub memory_mb: Option<f64>,
    /// Priority class, 0 the highest (see the provider's `preemptive_priority`).
    pub priority: u8,
    /// Data moved in and out \[GB\], which a data centre charges for (Garg 2010, ch6's DT_j), if any.
    pub data: Option<f64>,
    /// When a request made ahead must start (an advance reservation): a local request with a start later than its
    /// submission holds its window from the submission on if the provider can place it then (else it is placed,
    /// and answered, at its start). `None`: from the submission.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<SimTime>,
}

/// One job of the user a broker stands for: the job and when the user submits it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UserJob {
    /// Submission time.
    pub submit: SimTime,
    /// The job (its `owner` is filled in by the broker).
    pub spec: JobSpec,
}

impl JobSpec {
    /// A plain job: the estimate equals the runtime, no deadline, budget, lease type or priority.
    pub fn new(id: JobId, owner: AgentId, pes: u32, runtime: f64) -> JobSpec {
        JobSpec {
            id,
            owner,
            pes,
            runtime,
            estimate: runtime,
            deadline: None,
            budget: None,
            lease: None,
            memory_mb: None,
            priority: 0,
            data: None,
            start: None,
        }
    }
}

/// Job sub-protocol: submission, acceptance, start and completion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobMsg {
    /// User broker (or gateway, meta-broker) → resource provider: run this job. Answered by `Accepted` or
    /// `Rejected`, later `Started` and `Completed`.
    Submit(Box<JobSpec>),
    /// Resource provider → submitter: the job is queued or running.
    Accepted {
        /// The job.
        job: JobId,
    },
    /// Resource provider → submitter: the job will not run here.
    Rejected {
        /// The job.
        job: JobId,
        /// Why, in a few words (e.g. "too many PEs", "deadline cannot be met").
        reason: String,
    },
    /// Resource provider → the gateway that forwarded the job: its admission control refused it (Amini Salehi,
    /// Javadi & Buyya). The gateway records the refusal and answers the owner `Rejected`, or offers the job to another
    /// provider of its grid when it re-routes.
    Refused {
        /// The job, as the gateway forwarded it.
        job: Box<JobSpec>,
        /// Why, in a few words (boxed: the message stays small).
        reason: Box<str>,
    },
    /// Gateway → resource provider: a job another provider's admission control refused (`Refused`), offered here
    /// when the gateway re-routes. Answered like `Submit`, and `Accepted` or `Rejected` go to the gateway too, so that
    /// it forgets which providers refused the job.
    Reoffer(Box<JobSpec>),
    /// Resource provider → submitter: the job started at the delivery time.
    Started {
        /// The job.
        job: JobId,
    },
    /// User broker → resource provider: run this job in the slot the meta-broker reserved for it (`Market::Ticket`).
    /// Answered like `Submit`; the job starts at the reservation's start.
    SubmitReserved {
        /// The job.
        job: Box<JobSpec>,
        /// The provider's reservation id, from the ticket.
        reservation: u64,
        /// When the reserved slot starts.
        start: SimTime,
    },
    /// Owner → resource provider: withdraw the job. A queued job leaves the queue; a running one stops and is
    /// charged for the time it ran. Answered by `Lease::Cancelled` (or nothing if the job already ended).
    Cancel {
        /// The job.
        job: JobId,
    },
    /// Resource provider → submitter: the job finished at the delivery time.
    Completed {
        /// The job.
        job: JobId,
        /// What the owner is billed for the computation done here [G$] (a transfer of the run's ledger).
        cost: f64,
    },
}

impl JobMsg {
    fn kind(&self) -> &'static str {
        match self {
            JobMsg::Submit(_) => "job.submit",
            JobMsg::Accepted { .. } => "job.accepted",
            JobMsg::Rejected { .. } => "job.rejected",
            JobMsg::Refused { .. } => "job.refused",
            JobMsg::Reoffer(_) => "job.reoffer",
            JobMsg::Started { .. } => "job.started",
            JobMsg::Cancel { .. } => "job.cancel",
            JobMsg::SubmitReserved { .. } => "job.submit_reserved",
            JobMsg::Completed { .. } => "job.completed",
        }
    }
}

/// Lease sub-protocol: advance reservations, and (Amini Salehi 2012, ch3) the provider's preemption of external leases.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeaseMsg {
    /// Resource provider → lease owner: the lease was preempted for a local request, at a cost of `overhead`
    /// seconds on its VMs. A cancelled lease restarts from scratch in the queue (or is rejected, by the provider's
    /// configuration); a suspended or migrated one resumes later with its remaining work (`Resumed`).
    Preempted {
        /// The lease.
        lease: JobId,
        /// What was done to its VMs.
        kind: PreemptionKind,
        /// Preemption overhead h(L) \[s\].
        overhead: f64,
    },
    /// Broker, gateway or meta-broker → resource provider: reserve `pes` PEs over `[start, end)`. Answered by
    /// `Reserved` or `ReserveRefused` with the same `request`.
    Reserve {
        /// The requester's own number for this request.
        request: u64,
        /// Window start.
        start: SimTime,
        /// Window end.
        end: SimTime,
        /// PEs.
        pes: u32,
    },
    /// Resource provider → requester: the window is held; `reservation` names it from now on.
    Reserved {
        /// The requester's number.
        request: u64,
        /// The provider's reservation id.
        reservation: u64,
    },
    /// Resource provider → requester: the window cannot be held (not enough free PEs throughout, too wide, past).
    ReserveRefused {
        /// The requester's number.
        request: u64,
        /// Why.
        reason: String,
    },
    /// Holder → resource provider: give a reservation back (or end it early).
    Release {
        /// The provider's reservation id.
        reservation: u64,
    },
    /// Resource provider → lease owner: the preempted lease runs again (instead of a second `Job::Started`).
    Resumed {
        /// The lease.
        lease: JobId,
    },
    /// Resource provider → lease owner: the lease was withdrawn at its owner's request (`Job::Cancel`).
    Cancelled {
        /// The lease.
        lease: JobId,
        /// What the owner is billed for the computation done here [G$] (a transfer of the run's ledger).
        cost: f64,
    },
    /// Find a destination for a suspended migratable lease (Amini Salehi 2012, §3.3 step 4, the cold migration of
    /// §2.5). Resource provider → the gateway the lease came through, right after `Preempted{kind: Migrate}`; then
    /// gateway → one candidate provider of its grid at a time, which answers `Migrated` or `MigrateRefused`.
    Migrate(Box<Migration>),
    /// Candidate provider → gateway: the migrating lease cannot run here (in time for its deadline).
    MigrateRefused {
        /// The lease.
        lease: JobId,
    },
    /// Destination provider → gateway, then gateway → source provider: the lease now runs at `to` (which sends the
    /// owner `Resumed` when it starts there); the source forgets it.
    Migrated {
        /// The lease.
        lease: JobId,
        /// Its new provider.
        to: AgentId,
    },
    /// Lease owner → resource provider: suspend this running or queued lease until `Resume` (answered by
    /// `Preempted{kind: Suspend}`, with the overhead its VMs will spend).
    Suspend {
        /// The lease.
        lease: JobId,
    },
    /// Resume a parked lease at its provider: gateway → source provider when no provider of the grid takes a
    /// migrating lease, or lease owner → resource provider for a lease it suspended. The lease is queued again;
    /// `Resumed` follows when it runs.
    Resume {
        /// The lease.
        lease: JobId,
    },
    /// Resource provider → lease owner: after a preemption, the deadline-constrained lease's new plan ends after
    /// its deadline. It still runs; the owner may cancel it.
    DeadlineMissed {
        /// The lease.
        lease: JobId,
        /// Planned completion.
        expected_end: SimTime,
    },
}

/// A lease leaving its provider (Amini Salehi 2012, §3.2.2): what is left of it and what moving it costs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Migration {
    /// The lease, with `runtime` and `estimate` cut to the work left [reference-PE seconds].
    pub lease: JobSpec,
    /// The provider it was suspended at.
    pub source: AgentId,
    /// Migration overhead h(L) \[s\], spent on its VMs at the destination (copy and resume).
    pub overhead: f64,
}

impl LeaseMsg {
    fn kind(&self) -> &'static str {
        match self {
            LeaseMsg::Reserve { .. } => "lease.reserve",
            LeaseMsg::Reserved { .. } => "lease.reserved",
            LeaseMsg::ReserveRefused { .. } => "lease.reserve_refused",
            LeaseMsg::Release { .. } => "lease.release",
            LeaseMsg::Preempted { .. } => "lease.preempted",
            LeaseMsg::Resumed { .. } => "lease.resumed",
            LeaseMsg::Cancelled { .. } => "lease.cancelled",
            LeaseMsg::Migrate(_) => "lease.migrate",
            LeaseMsg::MigrateRefused { .. } => "lease.migrate_refused",
            LeaseMsg::Migrated { .. } => "lease.migrated",
            LeaseMsg::Suspend { .. } => "lease.suspend",
            LeaseMsg::Resume { .. } => "lease.resume",
            LeaseMsg::DeadlineMissed { .. } => "lease.deadline_missed",
        }
    }
}

/// A meta-broker's ticket (Garg 2010, §3.2): where and when a request runs, and at what cost.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ticket {
    /// The job.
    pub job: JobId,
    /// The id to submit this part under: the job's own id for its first ticket; a bag of tasks split across sites
    /// (the `lp` policy) gets one ticket per part, the later ones with fresh ids from [`Ticket::FIRST_PART_ID`] up.
    pub part: JobId,
    /// Tasks (CPUs) of the job this ticket covers.
    pub cpus: u32,
    /// The provider holding the slot.
    pub provider: AgentId,
    /// The provider's reservation id.
    pub reservation: u64,
    /// Slot start.
    pub start: SimTime,
    /// What the user will pay [G$].
    pub cost: f64,
    /// The cost was paid when the slot was reserved (an exchange's contract): the provider bills nothing more.
    pub prepaid: bool,
    /// The runtime on the reference PE to submit this part with \[s\], when the meta-broker knows the application's
    /// time on this provider (an ETC matrix, Garg 2010 ch5); none: the job's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<f64>,
}

impl Ticket {
    /// Ids of the extra parts of split jobs start here, far above any workload's job ids.
    pub const FIRST_PART_ID: JobId = 1 << 62;
}

/// What a provider tells a meta-broker about itself (Garg 2010, §3.2: free slots, CPUs, MIPS, price per CPU-second).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResourceUpdate {
    /// PEs of the cluster.
    pub cpus: u32,
    /// Speed of one PE relative to the reference PE (the thesis's MIPS rating, normalised).
    pub speed: f64,
    /// Price [G$ per PE-second].
    pub price: f64,
    /// Free slots, maximal free rectangles `(start, end, pes)` in time order (empty at registration).
    pub slots: Vec<(SimTime, SimTime, u32)>,
}

/// One queue of a provider, as a double-auction-inspired meta-broker values it (Garg 2010 §7.2: "available slots,
/// load and waiting times of each queue" and "an initial valuation for running an application in a queue").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueueState {
    /// The queue's number at its provider, from 0 (a partition of multi-partition EASY backfilling).
    pub queue: u32,
    /// PEs of the queue.
    pub pes: u32,
    /// PEs of the queue free now, the immediate slots of §7.3.2 (a later reservation may still take some).
    pub free: u32,
    /// Load l_{k,t}: the queue's busy PEs (reservations and PEs lent to other queues included) over its PEs.
    pub load: f64,
    /// Waiting-time estimate w_{k,t} \[s\]: the work committed to the queue from now on (running jobs' remaining
    /// estimates, held windows, queued jobs) per PE, the wait of a job needing the whole queue.
    pub wait: f64,
    /// Initial valuation c_{k,t} [G$ per PE-second]: the provider's posted price.
    pub valuation: f64,
    /// Free slots over the horizon asked for, maximal free rectangles `(start, end, pes)` in time order (the packaged
    /// slots of §7.3.2; empty for a horizon of 0).
    pub slots: Vec<(SimTime, SimTime, u32)>,
}

/// A provider's report of its queues (Garg 2010 §7.2, the collection stage).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueueReport {
    /// Speed of one PE relative to the reference PE.
    pub speed: f64,
    /// Every queue, in queue order.
    pub queues: Vec<QueueState>,
}

/// A meta-broker's match of an application to a provider's queue (Garg 2010 Alg 7.1, "schedule the application i
/// to the resource j"): hold `pes` PEs of `queue` over `[start, end)` for `job`, billed at `price`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueueMatch {
    /// The meta-broker's number for this request, echoed in the answer.
    pub request: u64,
    /// The application.
    pub job: JobId,
    /// The queue.
    pub queue: u32,
    /// Window start.
    pub start: SimTime,
    /// Window end.
    pub end: SimTime,
    /// PEs.
    pub pes: u32,
    /// What the job's computation costs here [G$ per PE-second]: the provider's price, or the clearing price of the
    /// meta-broker's payment rule.
    pub price: f64,
    /// DAM's bid of the application when it was matched (7.2; none for policies without bids), for traces.
    pub bid: Option<f64>,
    /// DAM's ask of the queue when it was matched (7.1), for traces.
    pub ask: Option<f64>,
}

/// Market sub-protocol (Garg 2010): registration, SLA negotiation, resource updates, tickets and invoices.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MarketMsg {
    /// Resource provider → every meta-broker (at its start, Garg (2010) §3.2 step 1): join the market with this
    /// description. Answered by `Registered` or `RegisterRefused`.
    RegisterProvider(Box<ResourceUpdate>),
    /// User broker → its meta-broker (at its start, step 2): join the market as a user. Answered by `Registered`.
    RegisterUser,
    /// Meta-broker → provider or user: registered; the provider is now in the resource catalogue.
    Registered,
    /// Meta-broker → provider or user: not a member of this market.
    RegisterRefused {
        /// Why.
        reason: String,
    },
    /// User broker → resource provider: claim capacity for a job at the advertised price. Answered by
    /// `SlaAccept` (the first claim on the capacity) or `SlaFail`.
    SlaRequest(Box<JobSpec>),
    /// Resource provider → user broker: the claim is granted.
    SlaAccept {
        /// The job.
        job: JobId,
        /// Agreed price [G$ per PE-second].
        price: f64,
    },
    /// Resource provider → user broker: the capacity was taken; try again next round.
    SlaFail {
        /// The job.
        job: JobId,
    },
    /// User broker → meta-broker (Garg 2010, §3.2 step 3): schedule this request in a coming scheduling round.
    ResourceRequest(Box<JobSpec>),
    /// Meta-broker → user broker (step 6): the request has a reserved slot; submit it there with
    /// `Job::SubmitReserved`.
    Ticket(Box<Ticket>),
    /// Meta-broker → user broker: the request was dropped (its deadline can no longer be met, or the user is not
    /// registered).
    RequestDropped {
        /// The job.
        job: JobId,
        /// Why.
        reason: String,
    },
    /// Meta-broker → registered resource provider, at the end of every scheduling interval: report your free
    /// capacity over the next `horizon` seconds. Answered by `ResourceUpdate`.
    SlotsQuery {
        /// Look-ahead \[s\].
        horizon: f64,
    },
    /// Resource provider → meta-broker (step 4): the periodic update of the resource catalogue.
    ResourceUpdate(Box<ResourceUpdate>),
    /// Double-auction-inspired meta-broker → registered resource provider, at the end of every scheduling interval
    /// (Garg 2010 §7.2, collection): report your queues, with their free slots over the next `horizon` seconds.
    /// Answered by `QueueInfo`.
    QueueQuery {
        /// Look-ahead of the slots \[s\] (0: none, the immediate slots only).
        horizon: f64,
    },
    /// Resource provider → meta-broker: the state of each of its queues, its asks' inputs.
    QueueInfo(Box<QueueReport>),
    /// Double-auction-inspired meta-broker → resource provider (Alg 7.1, the matching stage): hold this window of a
    /// queue for an application. Answered by `Lease::Reserved` or `Lease::ReserveRefused` with the same `request`;
    /// the user then gets the `Ticket`.
    Matched(Box<QueueMatch>),
    /// Resource provider → job owner: a bill for the computation done here on a lease that leaves for another
    /// provider (the destination bills the rest at completion). A transfer of the run's ledger, settled at once.
    Invoice {
        /// The lease.
        job: JobId,
        /// Amount [G$].
        amount: f64,
    },
    /// Resource provider → every user broker, when its pricing strategy moves its posted price: claims and
    /// submissions from now on are accepted at `price`; jobs already accepted keep the price they were accepted at.
    PriceChange {
        /// The new price [G$ per PE-second].
        price: f64,
    },
}

impl MarketMsg {
    fn kind(&self) -> &'static str {
        match self {
            MarketMsg::RegisterProvider(_) => "market.register_provider",
            MarketMsg::RegisterUser => "market.register_user",
            MarketMsg::Registered => "market.registered",
            MarketMsg::RegisterRefused { .. } => "market.register_refused",
            MarketMsg::SlaRequest(_) => "market.sla_request",
            MarketMsg::SlaAccept { .. } => "market.sla_accept",
            MarketMsg::SlaFail { .. } => "market.sla_fail",
            MarketMsg::ResourceRequest(_) => "market.resource_request",
            MarketMsg::Ticket(_) => "market.ticket",
            MarketMsg::RequestDropped { .. } => "market.request_dropped",
            MarketMsg::SlotsQuery { .. } => "market.slots_query",
            MarketMsg::ResourceUpdate(_) => "market.resource_update",
            MarketMsg::QueueQuery { .. } => "market.queue_query",
            MarketMsg::QueueInfo(_) => "market.queue_info",
            MarketMsg::Matched(_) => "market.matched",
            MarketMsg::Invoice { .. } => "market.invoice",
            MarketMsg::PriceChange { .. } => "market.price_change",
        }
    }
}

/// How a time slot on the exchange is traded.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Trading {
    /// Leased at a posted price [G$ per CPU-second] (the commodity market).
    Commodity {
        /// The price.
        price: f64,
    },
    /// Sold in auctions, at no less than a reserve price [G$ per CPU-second].
    Auction {
        /// The reserve price.
        reserve: f64,
    },
}

/// A provider's time slot as it advertises it: CPUs free from `start` for `duration` seconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Advertisement {
    /// The provider's session token.
    pub token: u64,
    /// The provider's number for this request.
    pub request: u64,
    /// CPUs.
    pub cpus: u32,
    /// When they are free from.
    pub start: SimTime,
    /// For how long \[s\].
    pub duration: f64,
    /// The CPUs' speed relative to the reference PE.
    pub speed: f64,
    /// How they are traded.
    pub trading: Trading,
}

/// One slot of the exchange's service catalogue, as discovery shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Offer {
    /// The slot's id.
    pub slot: u64,
    /// The provider.
    pub provider: AgentId,
    /// CPUs free.
    pub cpus: u32,
    /// From.
    pub start: SimTime,
    /// For how long \[s\].
    pub duration: f64,
    /// The provider's CPU speed relative to the reference PE.
    pub speed: f64,
    /// How it is traded.
    pub trading: Trading,
    /// The auction it is in, if any.
    pub auction: Option<u64>,
}

/// An open auction, as discovery shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuctionInfo {
    /// Its id.
    pub auction: u64,
    /// How it clears.
    pub mechanism: MechanismKind,
    /// What is sold.
    pub item: Item,
    /// CPUs on sale: those of a forward auction's slot (0 for a call market or a reverse auction).
    pub cpus: u32,
    /// The reserve (forward: the lowest unit price; reverse: the highest).
    pub reserve: f64,
    /// When it clears.
    pub end: SimTime,
    /// How long the leases it trades last \[s\].
    pub lease: f64,
}

/// What a consumer looks for in the catalogue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Discovery {
    /// The consumer's session token.
    pub token: u64,
    /// The consumer's number for this request.
    pub request: u64,
    /// CPUs wanted (0: no slot, only the open auctions).
    pub cpus: u32,
    /// Lease time wanted \[s\].
    pub duration: f64,
}

/// The answer to `Discover`: the matching slots and the open auctions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Offers {
    /// The consumer's number of its `Discover`.
    pub request: u64,
    /// Slots with enough CPUs for long enough, in id order.
    pub slots: Vec<Offer>,
    /// Open auctions, in id order: one list, shared by every answer until an auction opens or the first ends.
    pub auctions: Arc<[AuctionInfo]>,
    /// When the first of them ends (`SimTime::MAX` if none).
    pub until: SimTime,
}

/// A consumer's lease of CPUs of a commodity slot at its posted price.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LeaseRequest {
    /// The consumer's session token.
    pub token: u64,
    /// The slot.
    pub slot: u64,
    /// The job to run there (`pes` CPUs are leased).
    pub job: JobSpec,
    /// The lease's length \[s\].
    pub duration: f64,
}

/// What an auction sells.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Item {
    /// The CPUs of the holder's time slot: consumers bid (a forward auction).
    Slot(u64),
    /// The holder's application: providers offer their slots (a reverse auction).
    Application(Box<JobSpec>),
    /// Neither side is the holder's: providers' asks meet consumers' bids (a call market, double auction).
    Market,
}

/// A request to hold an auction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuctionRequest {
    /// The holder's session token.
    pub token: u64,
    /// The holder's number for this request.
    pub request: u64,
    /// How it clears.
    pub mechanism: MechanismKind,
    /// Parameters of the mechanism (form, k).
    pub params: MechanismParams,
    /// What is sold.
    pub item: Item,
    /// The reserve price [G$ per CPU-second]: the lowest in a forward auction, the highest in a reverse one.
    pub reserve: f64,
    /// When it clears.
    pub end: SimTime,
    /// How long the leases it trades last \[s\].
    pub lease: f64,
}

/// An order joining an auction: a consumer's bid for its job's CPUs, or a provider's ask with CPUs of its slot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Quote {
    /// Buy `job.pes` CPUs at up to `price` each per second.
    Buy {
        /// The job.
        job: JobSpec,
        /// Per CPU-second [G$].
        price: f64,
    },
    /// Sell the slot's CPUs at no less than `price` each per second.
    Sell {
        /// The slot.
        slot: u64,
        /// Per CPU-second [G$].
        price: f64,
    },
}

/// A request to join (or re-bid in) an auction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BidRequest {
    /// The bidder's session token.
    pub token: u64,
    /// The auction.
    pub auction: u64,
    /// The order.
    pub quote: Quote,
}

/// Why the exchange refused a request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Refusal {
    /// The requester's number for the request (its job id for a lease or a bid, 0 where the request has none).
    pub request: u64,
    /// The request's kind, e.g. `"exchange.bid"`.
    pub what: String,
    /// Why.
    pub reason: String,
}

/// Exchange sub-protocol: the market exchange (Mandi, Garg 2010 ch 8 §8.4), message by message. Every request but
/// `Register` and `Login` carries the session token `Login` gave; the exchange answers what it cannot serve with
/// `Refused`. Leases and auctions end, through the provider's advance reservation, in a `Market::Ticket` to the
/// consumer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExchangeMsg {
    /// Any agent → exchange (phase 1): open an account under a login no one has. Answered by `Registered` or
    /// `Refused`. Any user may then act as consumer and as provider.
    Register {
        /// The login.
        login: Box<str>,
    },
    /// Exchange → agent: the account is open.
    Registered,
    /// Agent → exchange (phase 2): log in to its account. Answered by `Session` or `Refused`.
    Login {
        /// The login.
        login: Box<str>,
    },
    /// Exchange → agent: the token its later requests carry.
    Session {
        /// The token.
        token: u64,
    },
    /// Exchange → requester: the request cannot be served.
    Refused(Box<Refusal>),
    /// Provider → exchange (phase 3): put a time slot in the service catalogue. Answered by `Advertised` or
    /// `Refused`.
    Advertise(Box<Advertisement>),
    /// Exchange → provider: the slot is in the catalogue under `slot`.
    Advertised {
        /// The provider's number of its `Advertise`.
        request: u64,
        /// The slot's id.
        slot: u64,
    },
    /// Provider → exchange: take a slot that is in no negotiation back out of the catalogue.
    Withdraw {
        /// The provider's session token.
        token: u64,
        /// The slot.
        slot: u64,
    },
    /// Consumer → exchange (phase 4): the slots of at least `cpus` CPUs for at least `duration` seconds (none for
    /// `cpus = 0`), and the open auctions. Answered by `Offers`.
    Discover(Box<Discovery>),
    /// Exchange → consumer: what `Discover` found.
    Offers(Box<Offers>),
    /// Consumer → exchange (phase 5): lease CPUs of a commodity slot at its posted price. The exchange reserves them
    /// with the provider and answers `Market::Ticket` (or `Refused`).
    Lease(Box<LeaseRequest>),
    /// Any agent → exchange (phase 6): hold an auction. Answered by `AuctionHeld` or `Refused`; it clears at its end
    /// time.
    HoldAuction(Box<AuctionRequest>),
    /// Exchange → holder: the auction is open under `auction`.
    AuctionHeld {
        /// The holder's number of its `HoldAuction`.
        request: u64,
        /// The auction's id.
        auction: u64,
    },
    /// Consumer or provider → exchange (phase 7): join an auction with an order, or replace its earlier one (a
    /// consumer's for the same job, a provider's for the same slot) while the auction is open.
    Bid(Box<BidRequest>),
    /// Exchange → consumer (phase 8): the auction cleared without its job (not all of its CPUs matched, or its bid
    /// lost).
    Lost {
        /// The auction.
        auction: u64,
        /// The job.
        job: JobId,
    },
    /// Exchange → every provider that asked and every consumer that bid in a call market, when it clears with trades:
    /// the mean price per CPU-second its sellers received (what an auction-cleared provider posts, and what adaptive
    /// traders learn from).
    Cleared {
        /// The auction.
        auction: u64,
        /// Mean price per CPU-second [G$].
        price: f64,
    },
}

impl ExchangeMsg {
    /// The message kind as written in the trace (`"exchange.bid"`).
    pub fn kind(&self) -> &'static str {
        match self {
            ExchangeMsg::Register { .. } => "exchange.register",
            ExchangeMsg::Registered => "exchange.registered",
            ExchangeMsg::Login { .. } => "exchange.login",
            ExchangeMsg::Session { .. } => "exchange.session",
            ExchangeMsg::Refused(_) => "exchange.refused",
            ExchangeMsg::Advertise(_) => "exchange.advertise",
            ExchangeMsg::Advertised { .. } => "exchange.advertised",
            ExchangeMsg::Withdraw { .. } => "exchange.withdraw",
            ExchangeMsg::Discover(_) => "exchange.discover",
            ExchangeMsg::Offers(_) => "exchange.offers",
            ExchangeMsg::Lease(_) => "exchange.lease",
            ExchangeMsg::HoldAuction(_) => "exchange.hold_auction",
            ExchangeMsg::AuctionHeld { .. } => "exchange.auction_held",
            ExchangeMsg::Bid(_) => "exchange.bid",
            ExchangeMsg::Lost { .. } => "exchange.lost",
            ExchangeMsg::Cleared { .. } => "exchange.cleared",
        }
    }
}

/// What a data centre tells energy-aware meta-brokers about itself (Garg 2010 §6.1): its free time slots, carbon
/// emission rate, COP, electricity and data-transfer prices, CPU power model, MIPS at f_max and frequency range.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DataCentreAdvert {
    /// CPUs.
    pub cpus: u32,
    /// Speed of a CPU at f_max relative to the reference CPU that runtimes are given for (its MIPS rating,
    /// normalised).
    pub speed: f64,
    /// The CPUs' power model P(f) = β + α f³ and frequency levels (f_min to f_max).
    pub power: PowerModel,
    /// COP, carbon emission rate and prices.
    pub site: Site,
    /// How it chooses the frequency of an application.
    pub dvs: DvsPolicy,
    /// Its free CPUs from now up to the time asked for, as slots `(start, end, cpus)` in time order, each a maximal
    /// piece over which the count is constant (none at registration). After the last slot, every CPU is free.
    pub slots: Vec<(SimTime, SimTime, u32)>,
}

/// An energy-aware meta-broker's assignment of an application to a data centre (Garg 2010 §6.3, the mapping phase).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Assignment {
    /// The meta-broker's number for this request, echoed in the answer.
    pub request: u64,
    /// The application: its CPUs, its runtime at f_max on a reference CPU, its deadline and data.
    pub job: JobSpec,
}

/// A data centre's answer to an [`Assignment`]: the slot it holds for the application and the frequency its DVS
/// policy chose (Garg 2010 §6.3.2, the scheduling phase).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Assigned {
    /// The meta-broker's number of the request.
    pub request: u64,
    /// The data centre's reservation id: the user submits the application into it.
    pub reservation: u64,
    /// When the slot starts.
    pub start: SimTime,
    /// The CPUs' frequency while it runs \[GHz\].
    pub frequency: f64,
    /// Its runtime at that frequency \[s\].
    pub duration: f64,
}

/// Energy sub-protocol: node power management (Amini Salehi 2012, ch6) and the data centres of Garg (2010) ch6.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnergyMsg {
    /// Energy manager → resource provider: switch `nodes` nodes on (booting takes the profile's boot time).
    PowerOn {
        /// How many nodes.
        nodes: u32,
    },
    /// Energy manager → resource provider: switch `nodes` idle nodes off.
    PowerOff {
        /// How many nodes.
        nodes: u32,
    },
    /// Data centre → every energy-aware meta-broker at its start (registration, no slots), and → the asking
    /// meta-broker in answer to `Query`: what it is and its free slots.
    Advert(Box<DataCentreAdvert>),
    /// Energy-aware meta-broker → data centre, at the end of a scheduling interval with requests waiting: advertise
    /// your free slots up to `until`. Answered by `Advert`.
    Query {
        /// The latest deadline of the requests waiting: slots after it cannot serve them.
        until: SimTime,
    },
    /// Energy-aware meta-broker → data centre: hold a slot for this application, at the frequency the data centre's
    /// DVS policy chooses. Answered by `Assigned`, or `Lease::ReserveRefused` with the same request number.
    Assign(Box<Assignment>),
    /// Data centre → meta-broker: the slot is held; the user gets a `Market::Ticket` for it.
    Assigned(Box<Assigned>),
}

impl EnergyMsg {
    fn kind(&self) -> &'static str {
        match self {
            EnergyMsg::PowerOn { .. } => "energy.power_on",
            EnergyMsg::PowerOff { .. } => "energy.power_off",
            EnergyMsg::Advert(_) => "energy.advert",
            EnergyMsg::Query { .. } => "energy.query",
            EnergyMsg::Assign(_) => "energy.assign",
            EnergyMsg::Assigned(_) => "energy.assigned",
        }
    }
}

/// Timers: an agent → itself, set with `Ctx::wake_in` and cancellable with `Ctx::cancel`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimerMsg {
    /// A job's runtime elapsed: the provider completes it.
    JobEnd {
        /// The job.
        job: JobId,
    },
    /// The start of a periodic round (scheduling interval, sampling period).
    Round {
        /// Round number, from 0.
        n: u64,
    },
    /// A request waited too long for its answer.
    Timeout {
        /// What timed out.
        id: u64,
    },
    /// The local scheduler asked to be woken (a planned start or a reservation's end is due).
    Wakeup,
    /// A user broker's next job is due for submission.
    Submit,
    /// The exchange opens its call markets of the period.
    OpenMarkets,
    /// A provider advertises its free slots on its exchange again.
    Advertise,
    /// An auction's end time: the exchange clears it.
    Clear {
        /// The auction.
        auction: u64,
    },
    /// A job's reserved slot begins: the provider starts it.
    SlotStart {
        /// The job.
        job: JobId,
    },
    /// A provider revises its price (its pricing strategy's interval, or a change of tariff).
    Reprice,
    /// A public node's owner takes the machine back or leaves it idle again.
    Availability,
    /// A node's progress report is due.
    Report,
    /// The utility manager's earliest transfer on its links completes.
    Transfer,
    /// A provider with power states checks its nodes (Amini Salehi 2012, ch6's periodic trigger of PEMP).
    PowerCheck,
}

impl TimerMsg {
    fn kind(&self) -> &'static str {
        match self {
            TimerMsg::JobEnd { .. } => "timer.job_end",
            TimerMsg::Round { .. } => "timer.round",
            TimerMsg::Timeout { .. } => "timer.timeout",
            TimerMsg::Wakeup => "timer.wakeup",
            TimerMsg::Submit => "timer.submit",
            TimerMsg::SlotStart { .. } => "timer.slot_start",
            TimerMsg::Clear { .. } => "timer.clear",
            TimerMsg::OpenMarkets => "timer.open_markets",
            TimerMsg::Advertise => "timer.advertise",
            TimerMsg::Reprice => "timer.reprice",
            TimerMsg::Availability => "timer.availability",
            TimerMsg::Report => "timer.report",
            TimerMsg::Transfer => "timer.transfer",
            TimerMsg::PowerCheck => "timer.power_check",
        }
    }
}

/// Utility sub-protocol (Asaduzzaman & Maheswaran): the resource manager of a public computing utility runs jobs on
/// its dedicated nodes and on replicas on opportunistic public nodes, which it finds through their announcements and
/// watches through their progress reports. Work is in seconds on a dedicated node (the reference PE).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UtilityMsg {
    /// Node → utility manager: the node can take a job. A dedicated node says so once, at the start; a public node
    /// each time its owner leaves the machine idle (at the start if it is idle then). A public node that its owner
    /// takes back while it runs a replica says nothing to the scheduler (only `Lost`, to its measurements): the
    /// manager learns it from the missing progress reports.
    Available {
        /// A dedicated node (reliable, inside the cluster), or a public one.
        dedicated: bool,
        /// Its access link [bit/s] (a dedicated node's transfers stay inside the cluster).
        bandwidth: f64,
        /// Its latency to the cluster \[s\].
        latency: f64,
        /// How many times it has announced itself before: a `Run` meant for an earlier session (sent before the
        /// owner took the machine back) is dropped.
        session: u32,
    },
    /// Utility manager → node: run this job (a replica of it on a public node), its state having arrived. A public
    /// node its owner has taken back, or has taken back since the session the run was meant for, drops it silently.
    Run(Box<Run>),
    /// Node → utility manager, every `report` seconds while running: the work done so far. From a public node it is
    /// the life pulse; from a dedicated node it is stored as the job's checkpoint.
    Progress {
        /// The job.
        job: JobId,
        /// Work done [s on a dedicated node].
        done: f64,
    },
    /// Node → utility manager: the job (this node's replica of it) finished.
    Done {
        /// The job.
        job: JobId,
    },
    /// Utility manager → node: stop running the job (another replica finished, or it was found failed).
    Stop {
        /// The job.
        job: JobId,
    },
    /// Utility manager → node: the bulk of a live migration has been copied; freeze the job and send its state,
    /// answered by `Frozen` (or nothing, if the owner took the public node back).
    Freeze {
        /// The job.
        job: JobId,
    },
    /// Node → utility manager: the job is frozen and stopped here, with this much work done.
    Frozen {
        /// The job.
        job: JobId,
        /// Work done [s on a dedicated node].
        done: f64,
    },
    /// Public node → utility manager, for the measurement of replica availability only: the replica of the job is
    /// not running here from this instant (the owner took the machine back, or the state arrived while the owner had
    /// it). The manager never schedules on it: it learns of failures from the missing reports.
    Lost {
        /// The job.
        job: JobId,
    },
    /// Public node → utility manager: its owner took it back, so it is not free until it announces itself again. This
    /// answers the manager's query for free public nodes (Algorithm 1, line 9) only: a replica lost with it is still
    /// found failed from its missing progress reports.
    Withdrawn,
}

/// A job for a node to run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// The job.
    pub job: JobId,
    /// Its work [s on a dedicated node].
    pub work: f64,
    /// The work already done, from a checkpoint or a migrated state [s on a dedicated node].
    pub done: f64,
    /// Seconds between progress reports.
    pub report: f64,
    /// The node's session it is meant for (see `Available`).
    pub session: u32,
}

impl UtilityMsg {
    fn kind(&self) -> &'static str {
        match self {
            UtilityMsg::Available { .. } => "utility.available",
            UtilityMsg::Run(_) => "utility.run",
            UtilityMsg::Progress { .. } => "utility.progress",
            UtilityMsg::Done { .. } => "utility.done",
            UtilityMsg::Stop { .. } => "utility.stop",
            UtilityMsg::Freeze { .. } => "utility.freeze",
            UtilityMsg::Frozen { .. } => "utility.frozen",
            UtilityMsg::Lost { .. } => "utility.lost",
            UtilityMsg::Withdrawn => "utility.withdrawn",
        }
    }
}

/// Matchmaking under limited knowledge of resources (Melendez 2010 §2): a request source, a resource directory (the
/// thesis's GIS), AS-based and transparent brokers, a splitter and single-CPU resources. Latency is zero, as in the
/// thesis, so a broker sees each resource as it is at the request's arrival.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchMsg {
    /// Resource → directory, at start: its pool, with its local policy if transparent (`None`: opaque).
    Register {
        /// The policy a transparent broker simulates; `None` for an opaque resource.
        policy: Option<crate::matchmaking::LocalPolicy>,
    },
    /// Broker → directory: the resources of its pool (transparent or opaque).
    ListResources {
        /// The transparent pool, else the opaque one.
        transparent: bool,
    },
    /// Directory → broker: the pool's resources in registration order, the order First and Next Fit use.
    ResourceList(Box<Vec<(AgentId, Option<crate::matchmaking::LocalPolicy>)>>),
    /// Source → broker or splitter, splitter → broker, broker → broker (the Combined strategy's forward): an
    /// advance reservation to place.
    Submit(Box<crate::matchmaking::Request>),
    /// Source → resource: an on-demand request, straight to the resource.
    SubmitOnDemand(Box<crate::matchmaking::Request>),
    /// Broker → resource: its current timetable, please.
    GetState,
    /// Resource → broker: its timetable (requests accepted and not completed, with their slots).
    State(Box<crate::matchmaking::timetable::Timetable>),
    /// Broker → resource: insert this request, which passed the broker's test.
    Assign(Box<crate::matchmaking::Request>),
    /// Resource → broker (and → source for an on-demand request): the request is in the timetable.
    Scheduled(Box<crate::matchmaking::timetable::Slot>),
    /// Resource → broker: the insertion failed (a broken guarantee the resource also reports).
    Refused {
        /// The request.
        request: u64,
    },
    /// Broker → source: the request was placed, on `resource`.
    Accepted {
        /// The request.
        request: u64,
        /// Where.
        resource: AgentId,
    },
    /// Broker → source (last broker of the chain): no resource passed the test, or the request was malformed.
    Rejected {
        /// The request.
        request: u64,
        /// Why.
        reason: Box<str>,
    },
    /// Resource → source: the request ran to completion.
    Completed {
        /// The request.
        request: u64,
    },
}

impl MatchMsg {
    fn kind(&self) -> &'static str {
        match self {
            MatchMsg::Register { .. } => "match.register",
            MatchMsg::ListResources { .. } => "match.list_resources",
            MatchMsg::ResourceList(_) => "match.resource_list",
            MatchMsg::Submit(_) => "match.submit",
            MatchMsg::SubmitOnDemand(_) => "match.submit_on_demand",
            MatchMsg::GetState => "match.get_state",
            MatchMsg::State(_) => "match.state",
            MatchMsg::Assign(_) => "match.assign",
            MatchMsg::Scheduled(_) => "match.scheduled",
            MatchMsg::Refused { .. } => "match.refused",
            MatchMsg::Accepted { .. } => "match.accepted",
            MatchMsg::Rejected { .. } => "match.rejected",
            MatchMsg::Completed { .. } => "match.completed",
        }
    }
}

/// Scripted test-bed and benchmark traffic.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeMsg {
    /// Any agent → any agent: a request numbered `id`, answered by `Reply` with the same id.
    Request {
        /// Request number.
        id: u64,
    },
    /// Any agent → the requester: the answer to `Request { id }`.
    Reply {
        /// Request number.
        id: u64,
    },
    /// Ring benchmark: a token passed from agent to agent.
    Token {
        /// Token number.
        id: u32,
        /// Hops left before the token is retired.
        hops: u32,
    },
}

impl ProbeMsg {
    fn kind(&self) -> &'static str {
        match self {
            ProbeMsg::Request { .. } => "probe.request",
            ProbeMsg::Reply { .. } => "probe.reply",
            ProbeMsg::Token { .. } => "probe.token",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn msg_stays_small() {
        // Envelopes are moved through the event queue many times; box big payloads to keep this.
        let sizes = [
            ("job", std::mem::size_of::<JobMsg>()),
            ("lease", std::mem::size_of::<LeaseMsg>()),
            ("market", std::mem::size_of::<MarketMsg>()),
            ("exchange", std::mem::size_of::<ExchangeMsg>()),
            ("timer", std::mem::size_of::<TimerMsg>()),
            ("match", std::mem::size_of::<MatchMsg>()),
        ];
        assert!(std::mem::size_of::<Msg>() <= 40, "Msg is {} bytes: {sizes:?}", std::mem::size_of::<Msg>());
    }

    #[test]
    fn serialises_with_kind_tags() {
        let m = Msg::Job(JobMsg::Accepted { job: 7 });
        assert_eq!(m.kind(), "job.accepted");
        let s = serde_json::to_string(&m).unwrap();
        assert_eq!(s, r#"{"proto":"job","msg":{"accepted":{"job":7}}}"#);
        assert_eq!(serde_json::from_str::<Msg>(&s).unwrap(), m);
    }

    #[test]
    fn times_serialise_as_plain_numbers() {
        let t = |secs| SimTime::new(secs).unwrap();
        let m = Msg::Lease(LeaseMsg::Reserve { request: 1, start: t(10.0), end: t(20.5), pes: 2 });
        let s = serde_json::to_string(&m).unwrap();
        assert_eq!(s, r#"{"proto":"lease","msg":{"reserve":{"request":1,"start":10.0,"end":20.5,"pes":2}}}"#);
        assert_eq!(serde_json::from_str::<Msg>(&s).unwrap(), m);
        // A negative instant is no time: reading it back fails instead of smuggling it in.
        assert!(serde_json::from_str::<Msg>(&s.replace("10.0", "-10.0")).is_err());
    }
}
