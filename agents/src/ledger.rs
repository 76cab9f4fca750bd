//! Money: every transfer of a run is one [`Transfer`] in one ledger.
//!
//! The agent that decides a transfer books it ([`Book::book`]) and tells the other party in the message that
//! carries the news (a provider's bill rides on `Job::Completed`, `Lease::Cancelled` and `Market::Invoice`), so the
//! amount the provider bills, the amount the user records and the ledger's entry are one number. Settlement is
//! immediate, as on a utility's account: the thesis's separate `Payment` step (Garg 2010, §3.2 step 9) is that
//! transfer. Each agent reports what it booked; the runner merges the books into the run's ledger (`ledger.csv`),
//! checks it ([`check`]) and sums it into `summary.json`.
//!
//! Accounts are agents, or external accounts for money that leaves the market (an electricity supplier, a penalty
//! sink, the market operator's fees).
//!
//! The billing rules, which the source documents leave open except where cited:
//! - A provider bills a job's owner its price × PEs × the seconds its PEs *computed* the job there, at the
//!   provider's own speed: the actual runtime, not the estimate ("the user … pays for actual usage", Garg 2010
//!   §3.2). A meta-broker's ticket quotes a cost from the estimate; the quote is not money.
//! - Preemption overhead (suspending, resuming, migrating VMs) is not computation (Salehi 2012, Eq 3.10) and is not
//!   billed: the provider preempted for its own local users and bears it, whoever asked.
//! - A lease suspended and resumed at one provider is billed once, when it ends there, for all its computation.
//! - Work lost when a cancellable lease is cancelled by preemption is not billed; its restart is billed in full.
//! - A lease that migrates is billed by each provider for the computation done there: by the source when the
//!   lease leaves (`Market::Invoice`), by the destination when it ends.
//! - A job cancelled by its owner while running is billed for the computation done (`Lease::Cancelled`); a queued
//!   or suspended one costs nothing more.
//! - A bag of tasks split over sites (the meta-broker's `lp` policy) is billed part by part, each by its site.
//! - A trade-off meta-broker's data-transfer cost (Garg 2010 §5.4) is booked by the meta-broker, from the user to
//!   the network carrier under the job, when it issues the ticket (`Market::Invoice` carries it).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::JobId;
use gridmarket_kernel::{AgentId, SimTime};

/// Whose money: an agent of the simulation, or an account outside the market.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Account {
    /// An agent.
    Agent(AgentId),
    /// Outside the market.
    External(External),
}

/// Accounts outside the market.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum External {
    /// The electricity supplier data centres pay their energy to.
    ElectricitySupplier,
    /// Where SLA penalties go that no agent receives.
    PenaltySink,
    /// The market operator's fees.
    Operator,
    /// The network carrier data centres pay their data transfers to.
    NetworkCarrier,
}

impl External {
    /// The account's name in the ledger.
    pub fn name(self) -> &'static str {
        match self {
            External::ElectricitySupplier => "electricity-supplier",
            External::PenaltySink => "penalty-sink",
            External::Operator => "operator",
            External::NetworkCarrier => "network-carrier",
        }
    }
}

/// The currency of an amount: grid dollars (the meta-brokering studies) or US dollars (cloud data centres).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Currency {
    /// G$.
    #[default]
    GridDollar,
    /// US$.
    Dollar,
}

impl Currency {
    /// The symbol written in the ledger.
    pub fn symbol(self) -> &'static str {
        match self {
            Currency::GridDollar => "G$",
            Currency::Dollar => "USD",
        }
    }
}

/// Why money moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Computation bought from a provider.
    Usage,
    /// Money given back.
    Refund,
    /// An SLA penalty.
    Penalty,
    /// What an auction's winner pays (and what the auctioneer keeps of it).
    Auction,
    /// A lease bought at a posted price.
    Lease,
    /// An energy bill.
    Energy,
    /// A market fee.
    Fee,
    /// Data moved in or out of a data centre.
    DataTransfer,
}

impl Reason {
    /// Every reason.
    pub const ALL: [Reason; 8] = [
        Reason::Usage,
        Reason::Refund,
        Reason::Penalty,
        Reason::Auction,
        Reason::Lease,
        Reason::Energy,
        Reason::Fee,
        Reason::DataTransfer,
    ];

    /// What the transfers of this reason are, for the glossary.
    pub fn about(self) -> &'static str {
        match self {
            Reason::Usage => "computation bought from a provider",
            Reason::Refund => "money given back",
            Reason::Penalty => "SLA penalties",
            Reason::Auction => "what auctions' winners paid (the seller's share and what the auctioneer kept)",
            Reason::Lease => "leases bought at a posted price",
            Reason::Energy => "energy bills",
            Reason::Fee => "market fees",
            Reason::DataTransfer => "data transfers, paid by users to data centres and by data centres to the carrier",
        }
    }

    /// The name written in the ledger and in metric names.
    pub fn name(self) -> &'static str {
        match self {
            Reason::Usage => "usage",
            Reason::Refund => "refund",
            Reason::Penalty => "penalty",
            Reason::Auction => "auction",
            Reason::Lease => "lease",
            Reason::Energy => "energy",
            Reason::Fee => "fee",
            Reason::DataTransfer => "data_transfer",
        }
    }
}

/// One transfer of money.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Transfer {
    /// When \[s\].
    pub at: SimTime,
    /// Who pays.
    pub payer: Account,
    /// Who receives.
    pub payee: Account,
    /// How much (finite, non-negative).
    pub amount: f64,
    /// In what.
    pub currency: Currency,
    /// Why.
    pub reason: Reason,
    /// The job (or lease, or part of a split job) it is for.
    pub job: Option<JobId>,
    /// The agent that booked it.
    pub booked_by: AgentId,
}

impl Transfer {
    /// A provider's bill for computation: `owner` pays `provider` `amount` G$ for `job`, booked by the provider.
    pub fn usage(at: SimTime, provider: AgentId, owner: AgentId, amount: f64, job: JobId) -> Transfer {
        Transfer {
            at,
            payer: Account::Agent(owner),
            payee: Account::Agent(provider),
            amount,
            currency: Currency::GridDollar,
            reason: Reason::Usage,
            job: Some(job),
            booked_by: provider,
        }
    }
}

/// What one agent booked, in booking order.
#[derive(Clone, Debug, Default)]
pub struct Book {
    transfers: Vec<Transfer>,
}

impl Book {
    /// Books `transfer`; returns its amount.
    pub fn book(&mut self, transfer: Transfer) -> f64 {
        let amount = transfer.amount;
        self.transfers.push(transfer);
        amount
    }

    /// Every transfer booked, in order.
    pub fn transfers(&self) -> &[Transfer] {
        &self.transfers
    }
}

/// A broken rule of money: the transfer at fault, who booked it and when, and what is wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct Breach {
    /// In words.
    pub what: String,
}

/// Checks a run's ledger (in time order): amounts finite and non-negative; every transfer booked by one of its
/// parties (a clearing agent, `clears`, may book between two others); no account's balance below zero at any time
/// unless `credit` allows it. Money is conserved by construction: each transfer takes from one account what it
/// gives another, so what can go wrong is an amount, a booking or a balance.
pub fn check(
    ledger: &[Transfer],
    name: &dyn Fn(Account) -> String,
    credit: &dyn Fn(Account) -> bool,
    clears: &dyn Fn(AgentId) -> bool,
) -> Result<(), Breach> {
    let mut balances: BTreeMap<(Account, Currency), f64> = BTreeMap::new();
    for t in ledger {
        let described = || {
            format!(
                "{} at t={}: {} of {} {} from {} to {}",
                name(Account::Agent(t.booked_by)),
                t.at,
                t.reason.name(),
                t.amount,
                t.currency.symbol(),
                name(t.payer),
                name(t.payee)
            )
        };
        if !(t.amount.is_finite() && t.amount >= 0.0) {
            return Err(Breach { what: format!("{}: an amount must be finite and non-negative", described()) });
        }
        if ![t.payer, t.payee].contains(&Account::Agent(t.booked_by)) && !clears(t.booked_by) {
            return Err(Breach { what: format!("{}: booked by an agent that is neither party", described()) });
        }
        *balances.entry((t.payee, t.currency)).or_default() += t.amount;
        let left = balances.entry((t.payer, t.currency)).or_default();
        *left -= t.amount;
        // Sums of many amounts round: a balance a hair below zero is zero.
        if *left < -1e-9 * t.amount.max(1.0) && !credit(t.payer) {
            let what = format!("{}: leaves {} with {left} {}", described(), name(t.payer), t.currency.symbol());
            return Err(Breach { what });
        }
    }
    Ok(())
}
