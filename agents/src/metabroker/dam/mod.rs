//! DAM, the double-auction-inspired meta-scheduling of Garg (2010) ch7, and the five policies the thesis compares it
//! with: SJF, FCFS, EDF-FQ, HVFQ and FairShare. Every policy is a pure function of a [`Market`], the meta-broker's
//! view at the end of a scheduling interval; the actor that collects the view and acts on the matches is
//! [`agent::AuctionMetaBroker`].
//!
//! DAM (§7.3): the meta-broker turns every queue into an ask (7.1) and every pending application into a bid (7.2),
//! sorts asks ascending and bids descending, and matches each bid, highest first, to the lowest ask whose queue meets
//! its deadline and has its processors (Alg 7.1); the queue's slots and ask are updated after each match, a bid is
//! matched at most once a cycle, and what is not matched waits for the next interval and is valued again.
//!
//! The baselines (§7.4.1), each ordering the applications and choosing a queue among those with room:
//! - SJF (shortest job first): by estimated runtime; the first queue with room.
//! - FCFS (first come, first served): by submission; "assigned to the first available queue" (as GridWay).
//! - EDF-FQ (earliest deadline first to the fastest queue): by deadline; the queue slot with the least waiting time.
//! - HVFQ (highest valuation to the fastest queue): by valuation; the queue slot with the least waiting time.
//! - FairShare (proportional share, as REXEC): each application's share of the processors free as the round begins is
//!   its valuation over all valuations, ⌊v_i / Σv · free⌋, and it runs only within it (an application wider than its
//!   share waits); the largest valuation per processor first, the first queue with room. [`FairShareRule`] keeps the
//!   simulator's first reading, the order without the cap.
//!
//! Our reading where the thesis is silent (each a default, some configurable in [`DamParams`]):
//! - An application's initial valuation v_i is its budget (§7.4.1 calls the same numbers valuations and budgets); a
//!   missing or negative one counts as 0. A queue's initial valuation c_k is its provider's posted price.
//! - Demand is the processors the pending applications ask for, Supply the processors free now at all queues (at
//!   least 1, so that a full grid still gives a finite ratio).
//! - O_k = H_i = 1. Asks and bids live on different scales, so the `b_i > a_j` test of Alg 7.1 would depend on those
//!   constants: by default it always passes (priority-ordered matching), [`BidTest::Literal`] applies it.
//! - The deadline test is Alg 7.1's line 11 as printed, t + w_j + e_i < d_i with the queue's advertised waiting
//!   time w_j ([`DeadlineTest::QueueWait`]); [`DeadlineTest::Slot`] tests the slot found instead (its start plus
//!   e_i), which is what the application would get.
//! - Slots are immediate (the processors free now, for the application's estimated runtime at the queue's speed);
//!   [`SlotGeneration::Packaged`] offers the queue's free slots over a horizon instead.
//! - The thesis defines no payment: a match pays the provider's posted price, or with
//!   [`Payment::KDoubleAuction`] a k-double-auction price between the posted price and the user's valuation per
//!   processor-second, booked through the ledger by the provider's bill.
//! - The baselines that name no queue rule (SJF, FairShare) take FCFS's first available queue, and no baseline
//!   checks an application's deadline against the queue it picks (the thesis faults FCFS and HVFQ for not
//!   considering deadlines). Every policy drops an application once no queue can finish it by its deadline even if
//!   it started now ("if u < 0 for an application then the application will not be scheduled"), and refuses one
//!   wider than every queue.

pub mod agent;
mod matching;
#[cfg(test)]
mod tests;
mod valuation;

use serde::{Deserialize, Serialize};

use crate::model::JobId;

pub use matching::{Placement, QueueView, Queues, Round, match_each, match_round};
pub use valuation::{asks, bids, demand_supply};

/// The policies of Garg (2010) ch7.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AuctionPolicy {
    /// DAM: double-auction-inspired matching of bids (7.2) to asks (7.1), Alg 7.1.
    Dam,
    /// SJF (shortest job first): shortest estimated runtime first, to the first queue with room.
    Sjf,
    /// FCFS (first come, first served): earliest submission first, to the first queue with room.
    Fcfs,
    /// EDF-FQ (earliest deadline first, fastest queue): earliest deadline first, to the queue slot with the least
    /// waiting time.
    EdfFq,
    /// HVFQ (highest valuation, fastest queue): highest valuation first, to the queue slot with the least waiting
    /// time.
    Hvfq,
    /// FairShare (proportional share): each application may take at most its valuation's share of the processors
    /// free in the round ([`FairShareRule`]), largest valuation per processor first, to the first queue with room.
    FairShare,
}

impl AuctionPolicy {
    /// Every policy, DAM first.
    pub const ALL: [AuctionPolicy; 6] = [
        AuctionPolicy::Dam,
        AuctionPolicy::Sjf,
        AuctionPolicy::Fcfs,
        AuctionPolicy::EdfFq,
        AuctionPolicy::Hvfq,
        AuctionPolicy::FairShare,
    ];
}

/// How the meta-broker cuts queues into slots (Garg 2010 §7.3.2, Fig 7.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SlotGeneration {
    /// The processors free now, for the application's estimated runtime.
    #[default]
    Immediate,
    /// The queue's free slots over a horizon: an application takes the earliest slot wide and long enough.
    Packaged,
}

/// The `b_i > a_j` test of Alg 7.1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BidTest {
    /// Always passes: bids meet asks in priority order (asks and bids live on different scales).
    #[default]
    Always,
    /// A bid meets only asks below it.
    Literal,
}

/// How FairShare shares the processors (Garg 2010 §7.4: "each application is assigned queue slots proportional to
/// the ratio of its valuation to the combined valuation of all the applications", as REXEC does).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FairShareRule {
    /// As the thesis states: an application takes at most ⌊v_i / Σv · free⌋ of the processors free when the round
    /// begins (Σv over the round's applications); one wider than its share waits for a later round.
    #[default]
    Proportional,
    /// The simulator's first reading: no cap, only the order by valuation per processor, each application taking
    /// any room (a work-conserving narrowest-value-first scheduler, much stronger than a share).
    ValuationPerPe,
}

/// The unit of the age factor of DAM's bids (Eq 7.2), (t − st_i) / (t − st_min): the thesis states none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AgeUnit {
    /// Seconds: during an arrival burst, seconds of age weigh heavily and DAM serves the earliest arrivals first.
    #[default]
    Seconds,
    /// Scheduling cycles (the meta-broker's interval): applications of one cycle are as old as each other.
    Cycles,
}

/// DAM's deadline test (Alg 7.1, line 11).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeadlineTest {
    /// As printed, `QueueWaitingTime(j) + ExecTime(i) < Deadline(i)`: now plus the queue's waiting-time estimate w_j
    /// plus the run there ends before the deadline; the thesis checks it before the processors' availability.
    #[default]
    QueueWait,
    /// The slot found ends before the deadline (its start plus the run): with immediate slots the start is now, so
    /// the queue's backlog, which the free processors do not wait for, is not counted. A valid reading of what the
    /// application would get, kept as an option: the simulator's first.
    Slot,
}

/// What a match pays (the thesis defines none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Payment {
    /// The provider's posted price c_k.
    #[default]
    Posted,
    /// c_k + k·max(0, u_i − c_k), u_i the user's valuation per processor-second on the queue, v_i / (pes × runtime
    /// there): the price of the bilateral k-double auction of the user's bid u_i and the provider's ask c_k
    /// ([`KDouble::bilateral`](crate::exchange::mechanism::KDouble::bilateral), the exchange's mechanism), never
    /// below the provider's posted price.
    KDoubleAuction,
}

/// DAM's settings; the baselines read only `slots`, `horizon` and the payment.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DamParams {
    /// Immediate or packaged slots.
    pub slots: SlotGeneration,
    /// Packaged slots: how far ahead queues offer them, T_H \[s\].
    pub horizon: f64,
    /// O_k, the asks' proportionality constant.
    pub ask_scale: f64,
    /// H_i, the bids' proportionality constant.
    pub bid_scale: f64,
    /// Whether a bid must exceed the ask it meets.
    pub bid_test: BidTest,
    /// What a match pays.
    pub payment: Payment,
    /// k of the k-double-auction price, in [0, 1].
    pub k: f64,
    /// FairShare's rule.
    pub fair_share: FairShareRule,
    /// DAM's deadline test.
    pub deadline_test: DeadlineTest,
    /// Seconds in one unit of the bids' age factor: 1 for [`AgeUnit::Seconds`], the interval for cycles.
    pub age_unit: f64,
}

impl Default for DamParams {
    fn default() -> DamParams {
        DamParams {
            slots: SlotGeneration::Immediate,
            horizon: 86_400.0,
            ask_scale: 1.0,
            bid_scale: 1.0,
            bid_test: BidTest::Always,
            payment: Payment::Posted,
            k: 0.5,
            fair_share: FairShareRule::Proportional,
            deadline_test: DeadlineTest::QueueWait,
            age_unit: 1.0,
        }
    }
}

/// One queue as the meta-broker sees it at the end of an interval (a provider's `QueueState`, times in seconds).
#[derive(Clone, Debug, PartialEq)]
pub struct MarketQueue {
    /// Index of its provider in the meta-broker's catalogue.
    pub site: usize,
    /// The queue's number at its provider.
    pub queue: u32,
    /// PEs of the queue.
    pub pes: u32,
    /// PEs free now.
    pub free: u32,
    /// Load l_k: busy PEs over PEs.
    pub load: f64,
    /// Waiting-time estimate w_k \[s\].
    pub wait: f64,
    /// Initial valuation c_k [G$ per PE-second].
    pub valuation: f64,
    /// Speed of its PEs relative to the reference PE.
    pub speed: f64,
    /// Free slots `(start, end, pes)` \[s\], for packaged slot generation.
    pub slots: Vec<(f64, f64, u32)>,
}

/// One pending application, a bidder.
#[derive(Clone, Debug, PartialEq)]
pub struct Application {
    /// The job.
    pub id: JobId,
    /// PEs it needs at once.
    pub pes: u32,
    /// Estimated runtime on a reference PE \[s\].
    pub runtime: f64,
    /// Absolute deadline d_i \[s\] (infinite: none).
    pub deadline: f64,
    /// Initial valuation v_i [G$].
    pub valuation: f64,
    /// Submission time st_i \[s\]: when the meta-broker received it.
    pub submit: f64,
}

/// The meta-broker's view at the end of an interval.
#[derive(Clone, Debug, PartialEq)]
pub struct Market {
    /// The time t \[s\].
    pub now: f64,
    /// Every queue of every provider, providers in catalogue order, each's queues in order.
    pub queues: Vec<MarketQueue>,
    /// The pending applications, in arrival order.
    pub apps: Vec<Application>,
}

/// Why an application leaves the market without a match.
#[derive(Clone, Debug, PartialEq)]
pub enum Refusal {
    /// It needs more PEs than any queue has.
    TooWide {
        /// PEs it needs.
        pes: u32,
        /// The most PEs a queue has.
        largest: u32,
    },
    /// No queue wide enough can finish it by its deadline, even starting now.
    Late {
        /// The earliest finish of any queue wide enough, starting now \[s\].
        finish: f64,
        /// Its deadline \[s\].
        deadline: f64,
    },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::TooWide { pes, largest } => {
                write!(f, "needs {pes} PEs, more than any queue has (the largest has {largest})")
            }
            Refusal::Late { finish, deadline } => {
                write!(
                    f,
                    "cannot meet its deadline {deadline} any more: the fastest queue with room would finish it at {finish}"
                )
            }
        }
    }
}

/// The applications of `market` no queue can ever serve, or no longer by their deadline, with why (indices into
/// `market.apps`). With no queue at all, nothing is refused: the catalogue is empty, not the market closed.
pub fn screen(market: &Market) -> Vec<(usize, Refusal)> {
    let Some(largest) = market.queues.iter().map(|q| q.pes).max() else { return Vec::new() };
    market
        .apps
        .iter()
        .enumerate()
        .filter_map(|(i, app)| {
            if app.pes > largest {
                return Some((i, Refusal::TooWide { pes: app.pes, largest }));
            }
            let speed = market.queues.iter().filter(|q| q.pes >= app.pes).map(|q| q.speed).fold(0.0, f64::max);
            let finish = market.now + app.runtime / speed;
            (finish >= app.deadline).then_some((i, Refusal::Late { finish, deadline: app.deadline }))
        })
        .collect()
}
