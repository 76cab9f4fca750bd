//! The continuous double auction: an order book that matches every order as it arrives (Garg 2010, §2.4, the
//! continuous double auction of OCEAN in Table 2.1), for emergent pricing.

use std::cmp::Reverse;
use std::collections::{BTreeSet, HashMap};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Order, Trade};

/// The side of an order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Side {
    /// A buy order.
    Bid,
    /// A sell order.
    Ask,
}

/// Why the book refused an order.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum OrderError {
    /// The price is NaN, infinite or negative.
    #[error("order {id}: price {price} is not a finite non-negative number")]
    Price {
        /// The order's id.
        id: u64,
        /// Its price.
        price: f64,
    },
    /// An order with this id is already resting in the book.
    #[error("order {0} is already in the book")]
    Duplicate(u64),
}

/// A continuous double auction's order book. An incoming order trades with the best resting order of the other side
/// if their prices cross (the highest bid or the lowest ask, the earlier id among equals), at the resting order's
/// price, since that order was there first; otherwise it rests. Every order is for one unit, so an order trades at
/// most once.
///
/// Each operation is O(log n) in the number of resting orders. Prices must be finite and non-negative
/// ([`OrderBook::submit`] refuses others); the ids of resting orders must be unique, and a lower id is an earlier
/// order.
#[derive(Clone, Debug, Default)]
pub struct OrderBook {
    /// Resting bids by (price, id), best first: the highest price, then the lowest id.
    bids: BTreeSet<(Reverse<u64>, u64)>,
    /// Resting asks by (price, id), best first: the lowest price, then the lowest id.
    asks: BTreeSet<(u64, u64)>,
    /// Every resting order's side and price.
    resting: HashMap<u64, (Side, u64)>,
}

fn order(id: u64, bits: u64) -> Order {
    Order::new(id, f64::from_bits(bits))
}

impl OrderBook {
    /// An empty book.
    pub fn new() -> Self {
        Self::default()
    }

    /// Submits `order` on `side`: the trade if it crossed a resting order (which then leaves the book), or `None`
    /// if it now rests. Refuses an invalid price or an id already resting, leaving the book as it was.
    pub fn submit(&mut self, side: Side, order: Order) -> Result<Option<Trade>, OrderError> {
        let Some(Order { id, price }) = order.valid() else {
            return Err(OrderError::Price { id: order.id, price: order.price });
        };
        if self.resting.contains_key(&id) {
            return Err(OrderError::Duplicate(id));
        }
        // The bits of a valid price order as the numbers do, so the sets need no float compare.
        let key = price.to_bits();
        let trade = match side {
            Side::Bid => match self.asks.first() {
                Some(&(ask, ask_id)) if ask <= key => {
                    self.asks.pop_first();
                    Some(Trade::at(id, ask_id, f64::from_bits(ask)))
                }
                _ => {
                    self.bids.insert((Reverse(key), id));
                    None
                }
            },
            Side::Ask => match self.bids.first() {
                Some(&(Reverse(bid), bid_id)) if bid >= key => {
                    self.bids.pop_first();
                    Some(Trade::at(bid_id, id, f64::from_bits(bid)))
                }
                _ => {
                    self.asks.insert((key, id));
                    None
                }
            },
        };
        match trade {
            Some(t) => self.resting.remove(&if side == Side::Bid { t.ask } else { t.bid }),
            None => self.resting.insert(id, (side, key)),
        };
        Ok(trade)
    }

    /// Withdraws resting order `id`: its side and the order, or `None` if it is not resting (unknown, or traded).
    pub fn cancel(&mut self, id: u64) -> Option<(Side, Order)> {
        let (side, key) = self.resting.remove(&id)?;
        match side {
            Side::Bid => self.bids.remove(&(Reverse(key), id)),
            Side::Ask => self.asks.remove(&(key, id)),
        };
        Some((side, order(id, key)))
    }

    /// The best resting bid: the highest, the earliest among equals.
    pub fn best_bid(&self) -> Option<Order> {
        self.bids.first().map(|&(Reverse(key), id)| order(id, key))
    }

    /// The best resting ask: the lowest, the earliest among equals.
    pub fn best_ask(&self) -> Option<Order> {
        self.asks.first().map(|&(key, id)| order(id, key))
    }

    /// How many orders rest on `side`.
    pub fn depth(&self, side: Side) -> usize {
        match side {
            Side::Bid => self.bids.len(),
            Side::Ask => self.asks.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_trade_with_the_best_resting_order_at_its_price() {
        let mut book = OrderBook::new();
        let mut submit = |side, id, price| book.submit(side, Order::new(id, price)).unwrap();
        assert_eq!(submit(Side::Ask, 1, 10.0), None);
        assert_eq!(submit(Side::Ask, 2, 9.0), None);
        assert_eq!(submit(Side::Bid, 3, 8.0), None);
        // Bid 9.5 crosses the best ask, 9, and pays 9; bid 12 then takes ask 10 at 10.
        assert_eq!(submit(Side::Bid, 4, 9.5), Some(Trade::at(4, 2, 9.0)));
        assert_eq!(submit(Side::Bid, 5, 12.0), Some(Trade::at(5, 1, 10.0)));
        // Ask 7 crosses the resting bid 8 and receives 8.
        assert_eq!(submit(Side::Ask, 6, 7.0), Some(Trade::at(3, 6, 8.0)));
        // Equal asks: the earlier one trades first.
        assert_eq!(submit(Side::Ask, 8, 5.0), None);
        assert_eq!(submit(Side::Ask, 7, 5.0), None);
        assert_eq!(submit(Side::Bid, 9, 6.0), Some(Trade::at(9, 7, 5.0)));
        assert_eq!(submit(Side::Bid, 10, 4.0), None);
        assert_eq!((book.best_bid(), book.best_ask()), (Some(Order::new(10, 4.0)), Some(Order::new(8, 5.0))));
        assert_eq!((book.depth(Side::Bid), book.depth(Side::Ask)), (1, 1));
    }

    #[test]
    fn cancel_withdraws_a_resting_order_only() {
        let mut book = OrderBook::new();
        book.submit(Side::Bid, Order::new(1, 3.0)).unwrap();
        book.submit(Side::Bid, Order::new(2, 4.0)).unwrap();
        assert_eq!(book.cancel(2), Some((Side::Bid, Order::new(2, 4.0))));
        assert_eq!(book.cancel(2), None);
        assert_eq!(book.best_bid(), Some(Order::new(1, 3.0)));
        // Ask 3 trades with bid 1, which can then no longer be cancelled.
        assert_eq!(book.submit(Side::Ask, Order::new(3, 3.0)), Ok(Some(Trade::at(1, 3, 3.0))));
        assert_eq!(book.cancel(1), None);
        assert_eq!((book.depth(Side::Bid), book.depth(Side::Ask)), (0, 0));
    }

    #[test]
    fn invalid_prices_and_resting_ids_are_refused() {
        let mut book = OrderBook::new();
        for price in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0] {
            assert!(matches!(book.submit(Side::Bid, Order::new(1, price)), Err(OrderError::Price { id: 1, .. })));
        }
        book.submit(Side::Ask, Order::new(1, 2.0)).unwrap();
        assert_eq!(book.submit(Side::Bid, Order::new(1, 1.0)), Err(OrderError::Duplicate(1)));
        assert_eq!((book.depth(Side::Bid), book.depth(Side::Ask)), (0, 1));
        // −0 is 0: it crosses an ask at 0.
        book.submit(Side::Ask, Order::new(2, 0.0)).unwrap();
        assert_eq!(book.submit(Side::Bid, Order::new(3, -0.0)), Ok(Some(Trade::at(3, 2, 0.0))));
    }
}
