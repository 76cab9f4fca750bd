//! One-sided sealed-bid auctions: first price (FPSB, the thesis's "First Bid Sealed Auction") and Vickrey's second
//! price (Garg 2010, §2.4 and ch 8; Vickrey 1961, "Counterspeculation, auctions, and competitive sealed tenders").
//!
//! One side holds the auction and states its units' limit prices, the other side competes:
//! - Forward ([`Form::Forward`]): a seller auctions a time slot. The asks are its units, each at its reserve price
//!   (a slot of c CPUs at one reserve is c asks at that price; units may also differ); the bids compete, the highest
//!   win.
//! - Reverse ([`Form::Reverse`]): a buyer auctions an application. The bids are its tasks' units, each at its
//!   maximum price; the asks compete, the lowest win.
//!
//! Either way the q efficient trades happen (see [`mechanism`](super)): the i-th highest bid with the i-th lowest
//! ask; only the price differs. Where the holder's units have different limit prices, the competitor ranked i-th
//! takes the holder's i-th best unit.

use super::{Clearing, Mechanism, Order, Ranked};
use crate::model::Form;

/// First-price sealed bid (FPSB): each winner is paid or pays its own offer, i.e. forward, each winning bid pays its
/// bid; reverse, each winning ask is paid its ask. Not truthful: a competitor gains by shading its offer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FirstPrice {
    /// Who holds the auction.
    pub form: Form,
}

impl Mechanism for FirstPrice {
    fn name(&self) -> &'static str {
        "first-price"
    }

    fn clear(&self, bids: &[Order], asks: &[Order]) -> Clearing {
        let r = Ranked::new(bids, asks);
        r.pairs(r.q, |i| {
            let price = match self.form {
                Form::Forward => r.bids[i].price,
                Form::Reverse => r.asks[i].price,
            };
            (price, price)
        })
    }
}

/// Vickrey's sealed second-price auction, for k identical units the uniform (k+1)-th price rule: every winner trades
/// at the best losing competitor's offer, or at the holder's marginal limit price if that is stricter. Forward, each
/// of the q winning bids pays max(b_{q+1}, a_q), the highest losing bid or the reserve of the dearest unit sold (with
/// one reserve, the reserve); reverse, each of the q winning asks is paid min(a_{q+1}, b_q), the lowest losing ask
/// or the lowest maximum price among the units bought. A missing b_{q+1} or a_{q+1} leaves the holder's price.
///
/// Truthful for the competitors (the price is the VCG payment of each unit-demand competitor): no competitor gains
/// by offering anything but its value. The holder's limit prices are taken as given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Vickrey {
    /// Who holds the auction.
    pub form: Form,
}

impl Mechanism for Vickrey {
    fn name(&self) -> &'static str {
        "vickrey"
    }

    fn clear(&self, bids: &[Order], asks: &[Order]) -> Clearing {
        let r = Ranked::new(bids, asks);
        let Some(last) = r.q.checked_sub(1) else { return Clearing::default() };
        let price = match self.form {
            Form::Forward => r.bids.get(r.q).map_or(0.0, |b| b.price).max(r.asks[last].price),
            Form::Reverse => r.asks.get(r.q).map_or(f64::INFINITY, |a| a.price).min(r.bids[last].price),
        };
        r.pairs(r.q, |_| (price, price))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exchange::mechanism::Trade;

    /// Three bidders for one unit at reserve 2: bids 5 (id 1), 7 (id 2), 6 (id 3).
    fn three_bidders() -> ([Order; 3], [Order; 1]) {
        ([Order::new(1, 5.0), Order::new(2, 7.0), Order::new(3, 6.0)], [Order::new(10, 2.0)])
    }

    #[test]
    fn fpsb_highest_bid_wins_and_pays_its_bid() {
        let (bids, asks) = three_bidders();
        let clearing = FirstPrice::default().clear(&bids, &asks);
        assert_eq!(clearing.trades, vec![Trade::at(2, 10, 7.0)]);
    }

    #[test]
    fn vickrey_highest_bid_wins_and_pays_the_second_bid() {
        let (bids, asks) = three_bidders();
        assert_eq!(Vickrey::default().clear(&bids, &asks).trades, vec![Trade::at(2, 10, 6.0)]);
    }

    #[test]
    fn equal_bids_go_to_the_earlier_one() {
        let bids = [Order::new(4, 7.0), Order::new(2, 7.0)];
        let asks = [Order::new(10, 2.0)];
        assert_eq!(FirstPrice::default().clear(&bids, &asks).trades, vec![Trade::at(2, 10, 7.0)]);
        assert_eq!(Vickrey::default().clear(&bids, &asks).trades, vec![Trade::at(2, 10, 7.0)]);
    }

    #[test]
    fn vickrey_k_units_all_pay_the_highest_losing_bid_or_the_reserve() {
        let (bids, _) = three_bidders();
        let slot = |reserve| [Order::new(10, reserve), Order::new(11, reserve)];
        let clearing = Vickrey::default().clear(&bids, &slot(2.0));
        assert_eq!(clearing.trades, vec![Trade::at(2, 10, 5.0), Trade::at(3, 11, 5.0)]);
        let clearing = Vickrey::default().clear(&bids, &slot(5.5));
        assert_eq!(clearing.trades, vec![Trade::at(2, 10, 5.5), Trade::at(3, 11, 5.5)]);
        // A lone bidder pays the reserve; none above the reserve, no sale.
        assert_eq!(Vickrey::default().clear(&bids[..1], &slot(2.0)).trades, vec![Trade::at(1, 10, 2.0)]);
        assert!(Vickrey::default().clear(&bids, &slot(8.0)).trades.is_empty());
    }

    #[test]
    fn units_with_different_reserves_go_best_to_best() {
        let (bids, _) = three_bidders();
        let asks = [Order::new(11, 6.5), Order::new(10, 1.0)];
        // Bid 7 takes the unit at reserve 1; bid 6 cannot meet reserve 6.5, so one unit sells.
        assert_eq!(FirstPrice::default().clear(&bids, &asks).trades, vec![Trade::at(2, 10, 7.0)]);
        assert_eq!(Vickrey::default().clear(&bids, &asks).trades, vec![Trade::at(2, 10, 6.0)]);
    }

    #[test]
    fn reverse_lowest_asks_win() {
        // An application of two tasks at most 10 each; sellers ask 6, 4 and 9.
        let bids = [Order::new(1, 10.0), Order::new(2, 10.0)];
        let asks = [Order::new(3, 6.0), Order::new(4, 4.0), Order::new(5, 9.0)];
        let reverse = Form::Reverse;
        let fpsb = FirstPrice { form: reverse }.clear(&bids, &asks);
        assert_eq!(fpsb.trades, vec![Trade::at(1, 4, 4.0), Trade::at(2, 3, 6.0)]);
        let vickrey = Vickrey { form: reverse }.clear(&bids, &asks);
        assert_eq!(vickrey.trades, vec![Trade::at(1, 4, 9.0), Trade::at(2, 3, 9.0)]);
        // Without a losing ask, the winners are paid the buyer's maximum.
        let vickrey = Vickrey { form: reverse }.clear(&bids, &asks[..2]);
        assert_eq!(vickrey.trades, vec![Trade::at(1, 4, 10.0), Trade::at(2, 3, 10.0)]);
    }
}
