//! Trading mechanisms: who trades with whom and at what price, as pure functions of the orders.
//!
//! The exchange trades homogeneous unit goods: an application of m tasks bids for m units (one CPU each for the lease
//! duration), a provider's time slot of c CPUs offers c units, so every [`Order`] is for one unit. A batch
//! [`Mechanism`] clears a set of bids and asks at once into a [`Clearing`]; the continuous double auction is an
//! [`OrderBook`] that matches each order as it arrives.
//!
//! Mechanisms ([`MechanismKind`]), from Garg (2010) *Meta Scheduling for Market-Oriented Grid and Utility
//! Computing*, PhD thesis, University of Melbourne: the market models of §2.4 and the Mandi exchange's "commodity
//! market, First Bid Sealed Auction (FPSB) and double auction" of chapter 8:
//! - [`PostedPrice`], the commodity market: each ask at its own price, bids served in arrival order.
//! - [`FirstPrice`] (FPSB) and [`Vickrey`] (Vickrey 1961, "Counterspeculation, auctions, and competitive sealed
//!   tenders"), one-sided, held by a seller ([`Form::Forward`]) or by a buyer ([`Form::Reverse`]).
//! - [`KDouble`], the call-market double auction with one k-price for all trades (after Satterthwaite & Williams
//!   1989's k-double auction). The thesis defines no double-auction clearing rule; this one is our choice.
//! - [`McAfee`], McAfee (1992) "A dominant strategy double auction", Journal of Economic Theory: trade reduction,
//!   truthful for both sides and weakly budget balanced.
//! - [`OrderBook`], the continuous double auction.
//!
//! Rules common to all (the thesis leaves them open):
//! - Ties go to the earlier order, i.e. the lower [`Order::id`] ("earlier arrival, then lower id").
//! - A price must be finite and non-negative. [`Mechanism::clear`] ignores any other order, as if it had not been
//!   sent (refusing it, with a reason, is the caller's job); [`OrderBook::submit`] refuses it with an [`OrderError`].
//! - Ranked bids b_1 ≥ b_2 ≥ … and asks a_1 ≤ a_2 ≤ …; q, the number of efficient trades, is the largest q with
//!   b_q ≥ a_q (trading at equal prices is allowed). Every batch mechanism but [`PostedPrice`] trades some of the
//!   q highest bids with the q lowest asks, the i-th bid with the i-th ask, so the trades are the same whatever the
//!   order of the input slices.
//! - Every mechanism is deterministic, O(n log n) in the number of orders, and never panics.

mod book;
mod double;
mod posted;
mod sealed;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::fmt::Debug;

use serde::{Deserialize, Serialize};

pub use book::{OrderBook, OrderError, Side};
pub use double::{KDouble, McAfee};
pub use posted::PostedPrice;
pub use sealed::{FirstPrice, Vickrey};

pub use crate::model::{Form, MechanismKind, MechanismParams};

/// One order for one unit: a bid (a buyer's maximum price) or an ask (a seller's minimum price).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Order {
    /// Identifies the order and orders arrival: lower is earlier, the tie-break everywhere.
    pub id: u64,
    /// Price per unit; valid if finite and non-negative.
    pub price: f64,
}

impl Order {
    /// An order of `id` at `price`.
    pub fn new(id: u64, price: f64) -> Self {
        Self { id, price }
    }

    /// The order if its price is valid, with −0 read as 0 (so that ranking by `total_cmp` or by bits agrees with `<`).
    fn valid(self) -> Option<Self> {
        (self.price.is_finite() && self.price >= 0.0).then_some(Self { price: self.price + 0.0, ..self })
    }
}

/// One unit traded.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trade {
    /// The bid's id.
    pub bid: u64,
    /// The ask's id.
    pub ask: u64,
    /// What the buyer pays.
    pub buyer_pays: f64,
    /// What the seller receives: the buyer's payment except where the mechanism keeps a surplus (McAfee's reduced
    /// trade).
    pub seller_gets: f64,
}

impl Trade {
    /// A trade at one price for both sides.
    pub fn at(bid: u64, ask: u64, price: f64) -> Self {
        Self { bid, ask, buyer_pays: price, seller_gets: price }
    }
}

/// The outcome of one call: the units traded, in rank order (the highest bid's trade first), or for [`PostedPrice`]
/// in the order of the bids' arrival.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Clearing {
    /// The trades; an order not in any of them did not trade.
    pub trades: Vec<Trade>,
}

impl Clearing {
    /// The trade of bid `id`, if it traded (a linear search).
    pub fn bought(&self, id: u64) -> Option<&Trade> {
        self.trades.iter().find(|t| t.bid == id)
    }

    /// The trade of ask `id`, if it traded (a linear search).
    pub fn sold(&self, id: u64) -> Option<&Trade> {
        self.trades.iter().find(|t| t.ask == id)
    }

    /// What the buyers pay in all.
    pub fn paid(&self) -> f64 {
        self.trades.iter().map(|t| t.buyer_pays).sum()
    }

    /// What the sellers receive in all.
    pub fn received(&self) -> f64 {
        self.trades.iter().map(|t| t.seller_gets).sum()
    }

    /// What the auctioneer keeps: paid − received, trade by trade (zero for a strongly budget-balanced mechanism).
    pub fn auctioneer_revenue(&self) -> f64 {
        self.trades.iter().map(|t| t.buyer_pays - t.seller_gets).sum()
    }

    /// The gains from trade at the given values: Σ over the trades of the bid's value minus the ask's cost, both
    /// read by id from `values` and `costs` (usually the orders cleared, taken as truthful; the first order of an id
    /// counts, and a missing id counts 0).
    pub fn surplus(&self, values: &[Order], costs: &[Order]) -> f64 {
        let (values, costs) = (by_id(values), by_id(costs));
        self.trades
            .iter()
            .map(|t| values.get(&t.bid).copied().unwrap_or(0.0) - costs.get(&t.ask).copied().unwrap_or(0.0))
            .sum()
    }
}

fn by_id(orders: &[Order]) -> HashMap<u64, f64> {
    let mut prices = HashMap::with_capacity(orders.len());
    for order in orders {
        prices.entry(order.id).or_insert(order.price);
    }
    prices
}

/// A batch (call-market or sealed-bid) mechanism: winner determination and pricing in one call.
pub trait Mechanism: Debug + Send + Sync {
    /// The mechanism's name in scenario files (a [`MechanismKind`]'s serde name).
    fn name(&self) -> &'static str;

    /// Clears one call: which bids trade with which asks, and at what prices. Orders whose price is not finite and
    /// non-negative are ignored. Ids should be unique within each side; with duplicates the result is still
    /// deterministic, but a trade cannot say which of the duplicates it was.
    fn clear(&self, bids: &[Order], asks: &[Order]) -> Clearing;
}

/// Why a mechanism cannot be built.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MechanismError {
    /// k is NaN or outside [0, 1].
    #[error("k = {0} is not in [0, 1]")]
    K(f64),
    /// A parameter given to a mechanism that does not take it.
    #[error("{mechanism} takes no parameter `{param}`")]
    Unused {
        /// The mechanism's name.
        mechanism: &'static str,
        /// The parameter's name.
        param: &'static str,
    },
}

impl MechanismKind {
    /// Every kind, in the order above.
    pub const ALL: [MechanismKind; 5] = [
        MechanismKind::PostedPrice,
        MechanismKind::FirstPrice,
        MechanismKind::Vickrey,
        MechanismKind::KDouble,
        MechanismKind::McAfee,
    ];

    /// The kind's name in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            MechanismKind::PostedPrice => "posted-price",
            MechanismKind::FirstPrice => "first-price",
            MechanismKind::Vickrey => "vickrey",
            MechanismKind::KDouble => "k-double",
            MechanismKind::McAfee => "mcafee",
        }
    }

    /// The mechanism of this kind with `params`; refuses a k outside [0, 1] and a parameter the kind does not take.
    pub fn build(self, params: MechanismParams) -> Result<Box<dyn Mechanism>, MechanismError> {
        let unused = |param| Err(MechanismError::Unused { mechanism: self.name(), param });
        let form = params.form.unwrap_or_default();
        match self {
            MechanismKind::FirstPrice | MechanismKind::Vickrey if params.k.is_some() => unused("k"),
            MechanismKind::PostedPrice | MechanismKind::KDouble | MechanismKind::McAfee if params.form.is_some() => {
                unused("form")
            }
            MechanismKind::PostedPrice | MechanismKind::McAfee if params.k.is_some() => unused("k"),
            MechanismKind::PostedPrice => Ok(Box::new(PostedPrice)),
            MechanismKind::FirstPrice => Ok(Box::new(FirstPrice { form })),
            MechanismKind::Vickrey => Ok(Box::new(Vickrey { form })),
            MechanismKind::KDouble => Ok(Box::new(KDouble::new(params.k.unwrap_or(KDouble::DEFAULT_K))?)),
            MechanismKind::McAfee => Ok(Box::new(McAfee)),
        }
    }
}

/// The valid orders of one call ranked for matching (bids by descending price, asks by ascending price, ties to the
/// lower id), and q, the number of efficient trades: `bids[i].price >= asks[i].price` exactly for `i < q`.
struct Ranked {
    bids: Vec<Order>,
    asks: Vec<Order>,
    q: usize,
}

impl Ranked {
    fn new(bids: &[Order], asks: &[Order]) -> Self {
        let mut bids: Vec<Order> = bids.iter().filter_map(|o| o.valid()).collect();
        let mut asks: Vec<Order> = asks.iter().filter_map(|o| o.valid()).collect();
        bids.sort_by(|x, y| y.price.total_cmp(&x.price).then(x.id.cmp(&y.id)));
        asks.sort_by(|x, y| x.price.total_cmp(&y.price).then(x.id.cmp(&y.id)));
        // b_i − a_i does not increase with i, so the efficient pairs are a prefix.
        let q = bids.iter().zip(&asks).take_while(|(b, a)| b.price >= a.price).count();
        Self { bids, asks, q }
    }

    /// The i-th highest bid's trade with the i-th lowest ask, for i < n, at prices given by `price(i)`.
    fn pairs(&self, n: usize, price: impl Fn(usize) -> (f64, f64)) -> Clearing {
        let trades = (0..n)
            .map(|i| {
                let (buyer_pays, seller_gets) = price(i);
                Trade { bid: self.bids[i].id, ask: self.asks[i].id, buyer_pays, seller_gets }
            })
            .collect();
        Clearing { trades }
    }
}
