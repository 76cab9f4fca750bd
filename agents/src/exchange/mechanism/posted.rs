//! The commodity market: providers post prices, consumers buy at them (Garg 2010, §2.4 "commodity market" and
//! "posted price"; Mandi's commodity leasing, ch 8).

use super::{Clearing, Mechanism, Order, Ranked, Trade};

/// The commodity market: every ask is a unit on offer at its own (posted) price; the bids, in arrival order (by id),
/// each take the cheapest unit left whose price is at most the bid, at that unit's price. A bid that cannot afford
/// the cheapest unit left buys nothing; a later, higher bid still may.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PostedPrice;

impl Mechanism for PostedPrice {
    fn name(&self) -> &'static str {
        "posted-price"
    }

    fn clear(&self, bids: &[Order], asks: &[Order]) -> Clearing {
        let Ranked { mut bids, asks, .. } = Ranked::new(bids, asks);
        bids.sort_by_key(|b| b.id);
        // Units sell cheapest first, so the units left are always a suffix of the ranked asks.
        let mut next = asks.iter().peekable();
        let trades = bids
            .iter()
            .filter_map(|bid| {
                next.next_if(|ask| ask.price <= bid.price).map(|ask| Trade::at(bid.id, ask.id, ask.price))
            })
            .collect();
        Clearing { trades }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bids_in_arrival_order_take_the_cheapest_affordable_unit_at_its_price() {
        let asks = [Order::new(1, 5.0), Order::new(2, 3.0), Order::new(3, 8.0)];
        // Bid 5 arrives before bid 6 although listed later, and cannot afford 5 once 3 is sold; bid 7 cannot afford 8.
        let bids = [Order::new(4, 4.0), Order::new(6, 10.0), Order::new(5, 4.0), Order::new(7, 7.0)];
        let clearing = PostedPrice.clear(&bids, &asks);
        assert_eq!(clearing.trades, vec![Trade::at(4, 2, 3.0), Trade::at(6, 1, 5.0)]);
        assert_eq!(clearing.auctioneer_revenue(), 0.0);
    }

    #[test]
    fn equal_posted_prices_sell_the_earlier_ask_first() {
        let asks = [Order::new(9, 2.0), Order::new(3, 2.0)];
        assert_eq!(PostedPrice.clear(&[Order::new(10, 2.0)], &asks).trades, vec![Trade::at(10, 3, 2.0)]);
    }
}
