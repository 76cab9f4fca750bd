//! Call-market double auctions: many buyers and many sellers, cleared at once (Garg 2010, §2.4 "double auction" and
//! Mandi's double auction, ch 8, whose clearing rule the thesis does not give).
//!
//! Both rank the bids b_1 ≥ b_2 ≥ … and the asks a_1 ≤ a_2 ≤ … and find q, the number of efficient trades (the
//! largest q with b_q ≥ a_q); they differ in the price and in how many of the q trades happen. No double auction is at
//! once truthful, efficient, individually rational and budget balanced (Myerson & Satterthwaite 1983, "Efficient
//! mechanisms for bilateral trading"): [`KDouble`] gives up truthfulness, [`McAfee`] gives up one trade and strong budget balance.

use super::{Clearing, Mechanism, MechanismError, Order, Ranked};

/// The k-double auction: the q efficient trades all happen at one price, p = k·b_q + (1 − k)·a_q, between the
/// marginal (q-th) bid and ask; k ∈ [0, 1], 0.5 by default. Efficient, individually rational and strongly budget
/// balanced; not truthful (buyers gain by shading bids, sellers by raising asks, less so as the market grows).
///
/// Our choice, since the thesis defines no clearing rule: the price interval [a_q, b_q] of the bilateral k-double
/// auction (Satterthwaite & Williams 1989, "Bilateral trade with the sealed bid k-double auction: existence and
/// efficiency", Journal of Economic Theory), applied to the marginal pair. The price may therefore lie outside
/// [b_{q+1}, a_{q+1}]: the best losing bid may exceed p (it would have bought at p), or the best losing ask lie
/// below it. Every trader who trades still gains, which is what the exchange needs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KDouble {
    k: f64,
}

impl KDouble {
    /// k = 0.5: the price halfway between the marginal bid and ask.
    pub const DEFAULT_K: f64 = 0.5;

    /// The k-double auction with weight `k` on the marginal bid; refuses k outside [0, 1] (or NaN).
    pub fn new(k: f64) -> Result<Self, MechanismError> {
        if (0.0..=1.0).contains(&k) { Ok(Self { k }) } else { Err(MechanismError::K(k)) }
    }

    /// The weight on the marginal bid.
    pub fn k(&self) -> f64 {
        self.k
    }

    /// The price of one bid and one ask, a + k·(b − a) within [a, b], or `None` when the bid is below the ask (no
    /// trade): the bilateral auction of Satterthwaite & Williams, which [`clear`](Mechanism::clear) applies to the
    /// marginal pair.
    pub fn bilateral(&self, bid: f64, ask: f64) -> Option<f64> {
        // a + k(b − a) cannot overflow for non-negative prices; the clamp keeps rounding inside [a, b].
        (bid >= ask).then(|| (ask + self.k * (bid - ask)).clamp(ask, bid))
    }
}

impl Default for KDouble {
    fn default() -> Self {
        Self { k: Self::DEFAULT_K }
    }
}

impl Mechanism for KDouble {
    fn name(&self) -> &'static str {
        "k-double"
    }

    fn clear(&self, bids: &[Order], asks: &[Order]) -> Clearing {
        let r = Ranked::new(bids, asks);
        let Some(last) = r.q.checked_sub(1) else { return Clearing::default() };
        let (b, a) = (r.bids[last].price, r.asks[last].price);
        // The q-th bid is at least the q-th ask: q efficient pairs trade.
        let price = self.bilateral(b, a).unwrap_or(a);
        r.pairs(r.q, |_| (price, price))
    }
}

/// McAfee's trade-reduction double auction (McAfee 1992, "A dominant strategy double auction", Journal of Economic
/// Theory). With p0 = (b_{q+1} + a_{q+1}) / 2: if a_q ≤ p0 ≤ b_q, all q efficient trades happen at p0; otherwise
/// the least valuable one (the q-th bid and ask) is dropped, the other q − 1 buyers pay b_q and the q − 1 sellers
/// receive a_q, and the auctioneer keeps (q − 1)(b_q − a_q).
///
/// Truthful for buyers and sellers (no trader gains by misstating its value), individually rational, weakly budget
/// balanced (the auctioneer never pays), and it loses at most the least valuable efficient trade, b_q − a_q.
///
/// Where there is no (q+1)-th bid or ask, McAfee pads the market with the ends of the value ranges: here, prices in
/// [0, ∞), a missing b_{q+1} counts as 0 and a missing a_{q+1} as +∞ (so p0 = +∞ and the trade is reduced).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct McAfee;

impl Mechanism for McAfee {
    fn name(&self) -> &'static str {
        "mcafee"
    }

    fn clear(&self, bids: &[Order], asks: &[Order]) -> Clearing {
        let r = Ranked::new(bids, asks);
        let Some(last) = r.q.checked_sub(1) else { return Clearing::default() };
        let (b, a) = (r.bids[last].price, r.asks[last].price);
        let next_bid = r.bids.get(r.q).map_or(0.0, |o| o.price);
        let next_ask = r.asks.get(r.q).map_or(f64::INFINITY, |o| o.price);
        // Halves first: the sum of two large prices could overflow.
        let p0 = 0.5 * next_bid + 0.5 * next_ask;
        if a <= p0 && p0 <= b { r.pairs(r.q, |_| (p0, p0)) } else { r.pairs(last, |_| (b, a)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exchange::mechanism::Trade;

    fn orders(first_id: u64, prices: &[f64]) -> Vec<Order> {
        prices.iter().zip(first_id..).map(|(&price, id)| Order::new(id, price)).collect()
    }

    #[test]
    fn the_bilateral_k_price_is_the_clearing_price_of_one_bid_and_one_ask() {
        let m = KDouble::new(0.25).unwrap();
        assert_eq!(m.bilateral(10.0, 2.0), Some(4.0));
        assert_eq!(m.bilateral(2.0, 2.0), Some(2.0));
        assert_eq!(m.bilateral(1.0, 2.0), None);
        let cleared = m.clear(&orders(0, &[10.0]), &orders(100, &[2.0]));
        assert_eq!(cleared.trades.iter().map(|t| t.buyer_pays).collect::<Vec<_>>(), [4.0]);
    }

    #[test]
    fn k_double_trades_the_efficient_pairs_at_the_marginal_k_price() {
        // 10 ≥ 2 and 8 ≥ 5 trade, 6 < 7 does not: q = 2, p = 0.5·8 + 0.5·5.
        let bids = orders(1, &[10.0, 8.0, 6.0, 3.0]);
        let asks = orders(11, &[2.0, 5.0, 7.0, 9.0]);
        let clearing = KDouble::default().clear(&bids, &asks);
        assert_eq!(clearing.trades, vec![Trade::at(1, 11, 6.5), Trade::at(2, 12, 6.5)]);
        assert_eq!(clearing.surplus(&bids, &asks), 11.0);
        assert_eq!(KDouble::new(1.0).unwrap().clear(&bids, &asks).trades[0].buyer_pays, 8.0);
        assert_eq!(KDouble::new(0.0).unwrap().clear(&bids, &asks).trades[0].buyer_pays, 5.0);
    }

    #[test]
    fn k_outside_the_unit_interval_is_refused() {
        for k in [-0.1, 1.5, f64::NAN, f64::INFINITY] {
            assert!(KDouble::new(k).is_err(), "{k}");
        }
    }

    #[test]
    fn mcafee_trades_all_at_p0_when_it_lies_between_the_marginal_prices() {
        // q = 2; p0 = (6 + 7) / 2 = 6.5 ∈ [5, 8].
        let bids = orders(1, &[10.0, 8.0, 6.0]);
        let asks = orders(11, &[2.0, 5.0, 7.0]);
        let clearing = McAfee.clear(&bids, &asks);
        assert_eq!(clearing.trades, vec![Trade::at(1, 11, 6.5), Trade::at(2, 12, 6.5)]);
        assert_eq!(clearing.auctioneer_revenue(), 0.0);
    }

    #[test]
    fn mcafee_reduces_the_least_valuable_trade_otherwise() {
        // q = 2; p0 = (1 + 20) / 2 = 10.5 > 8: the pair (8, 5) drops out, bid 10 pays 8, ask 2 receives 5.
        let bids = orders(1, &[10.0, 8.0, 1.0]);
        let asks = orders(11, &[2.0, 5.0, 20.0]);
        let clearing = McAfee.clear(&bids, &asks);
        assert_eq!(clearing.trades, vec![Trade { bid: 1, ask: 11, buyer_pays: 8.0, seller_gets: 5.0 }]);
        assert_eq!(clearing.auctioneer_revenue(), 3.0);
        // No losing ask: a_{q+1} = +∞, so the trade is reduced; a single efficient pair then trades nothing.
        assert_eq!(McAfee.clear(&bids, &asks[..2]).trades.len(), 1);
        assert!(McAfee.clear(&bids[..1], &asks[..1]).trades.is_empty());
        // No losing bid but a losing ask at 14: b_{q+1} = 0, p0 = 14 / 2 = 7 ∈ [5, 8], so both trade at 7.
        let clearing = McAfee.clear(&bids[..2], &orders(11, &[2.0, 5.0, 14.0]));
        assert_eq!(clearing.trades, vec![Trade::at(1, 11, 7.0), Trade::at(2, 12, 7.0)]);
    }
}
