//! Property tests of the mechanisms against theory, over random markets of up to 30 bids and 30 asks with distinct
//! prices (ties are the tie-break's business, tested by hand in each module).

use proptest::collection::vec;
use proptest::prelude::*;

use super::*;

/// Up to 30 bids and 30 asks, prices distinct across both sides, ids a random permutation (so arrival order and
/// price are unrelated).
fn market() -> impl Strategy<Value = (Vec<Order>, Vec<Order>)> {
    (vec(1u32..1_000_000, 0..=30), vec(1u32..1_000_000, 0..=30))
        .prop_filter("distinct prices", |(bids, asks)| {
            let mut all: Vec<u32> = bids.iter().chain(asks).copied().collect();
            all.sort_unstable();
            all.windows(2).all(|w| w[0] != w[1])
        })
        .prop_flat_map(|(bids, asks)| {
            let ids: Vec<u64> = (0..(bids.len() + asks.len()) as u64).collect();
            (Just(bids), Just(asks), Just(ids).prop_shuffle())
        })
        .prop_map(|(bids, asks, ids)| {
            let orders = |prices: &[u32], ids: &[u64]| {
                prices.iter().zip(ids).map(|(&p, &id)| Order::new(id, f64::from(p) / 100.0)).collect::<Vec<_>>()
            };
            (orders(&bids, &ids), orders(&asks, &ids[bids.len()..]))
        })
}

/// Every batch mechanism, the one-sided ones in both forms.
fn all_mechanisms() -> Vec<Box<dyn Mechanism>> {
    let mut all: Vec<Box<dyn Mechanism>> = vec![Box::new(PostedPrice), Box::new(KDouble::default()), Box::new(McAfee)];
    for form in [Form::Forward, Form::Reverse] {
        all.push(Box::new(FirstPrice { form }));
        all.push(Box::new(Vickrey { form }));
    }
    all
}

/// The largest gains from trade any allocation achieves, computed apart from [`Ranked`]: pair the ranked bids and
/// asks and take the best prefix.
fn max_surplus(bids: &[Order], asks: &[Order]) -> f64 {
    let mut values: Vec<f64> = bids.iter().map(|o| o.price).collect();
    let mut costs: Vec<f64> = asks.iter().map(|o| o.price).collect();
    values.sort_by(|x, y| y.total_cmp(x));
    costs.sort_by(f64::total_cmp);
    let mut sum = 0.0;
    values.iter().zip(&costs).map(|(v, c)| v - c).fold(0.0, |best: f64, gain| {
        sum += gain;
        best.max(sum)
    })
}

fn close(x: f64, y: f64) -> bool {
    (x - y).abs() <= 1e-6 * (1.0 + x.abs().max(y.abs()))
}

/// Misreports of a trader whose value is `value`: far and near, and onto or just past each order at the margin of
/// the truthful market (where winning and losing change places).
fn misreports(value: f64, r: &Ranked) -> Vec<f64> {
    let mut prices = vec![0.0, 0.5 * value, 0.99 * value, 1.01 * value, 2.0 * value, 20_000.0];
    for i in [r.q.saturating_sub(1), r.q] {
        for order in [r.bids.get(i), r.asks.get(i)].into_iter().flatten() {
            prices.extend([order.price - 0.001, order.price, order.price + 0.001]);
        }
    }
    prices.retain(|&p| p >= 0.0 && p != value);
    prices
}

/// A buyer's utility in `clearing`: value − price if bid `id` trades, else 0.
fn buyer_utility(clearing: &Clearing, id: u64, value: f64) -> f64 {
    clearing.bought(id).map_or(0.0, |t| value - t.buyer_pays)
}

/// A seller's utility in `clearing`: price − cost if ask `id` trades, else 0.
fn seller_utility(clearing: &Clearing, id: u64, cost: f64) -> f64 {
    clearing.sold(id).map_or(0.0, |t| t.seller_gets - cost)
}

/// No bidder gains by bidding anything but its value, the others bidding theirs.
fn assert_truthful_for_buyers(mechanism: &dyn Mechanism, bids: &[Order], asks: &[Order]) -> Result<(), TestCaseError> {
    let truthful = mechanism.clear(bids, asks);
    let ranked = Ranked::new(bids, asks);
    for (i, bid) in bids.iter().enumerate() {
        let honest = buyer_utility(&truthful, bid.id, bid.price);
        for lie in misreports(bid.price, &ranked) {
            let mut lied = bids.to_vec();
            lied[i].price = lie;
            let gained = buyer_utility(&mechanism.clear(&lied, asks), bid.id, bid.price);
            prop_assert!(
                gained <= honest + 1e-9,
                "bid {} of {}: bidding {lie} gains {gained} > {honest}",
                bid.id,
                bid.price
            );
        }
    }
    Ok(())
}

/// No seller gains by asking anything but its cost, the others asking theirs.
fn assert_truthful_for_sellers(mechanism: &dyn Mechanism, bids: &[Order], asks: &[Order]) -> Result<(), TestCaseError> {
    let truthful = mechanism.clear(bids, asks);
    let ranked = Ranked::new(bids, asks);
    for (i, ask) in asks.iter().enumerate() {
        let honest = seller_utility(&truthful, ask.id, ask.price);
        for lie in misreports(ask.price, &ranked) {
            let mut lied = asks.to_vec();
            lied[i].price = lie;
            let gained = seller_utility(&mechanism.clear(bids, &lied), ask.id, ask.price);
            prop_assert!(
                gained <= honest + 1e-9,
                "ask {} of {}: asking {lie} gains {gained} > {honest}",
                ask.id,
                ask.price
            );
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn every_mechanism_is_individually_rational((bids, asks) in market()) {
        for mechanism in all_mechanisms() {
            let clearing = mechanism.clear(&bids, &asks);
            for trade in &clearing.trades {
                let bid = bids.iter().find(|o| o.id == trade.bid).expect("a trade's bid is a bid");
                let ask = asks.iter().find(|o| o.id == trade.ask).expect("a trade's ask is an ask");
                prop_assert!(trade.buyer_pays <= bid.price, "{}: {trade:?} pays over bid {}", mechanism.name(), bid.price);
                prop_assert!(trade.seller_gets >= ask.price, "{}: {trade:?} gets under ask {}", mechanism.name(), ask.price);
                prop_assert!(trade.buyer_pays >= trade.seller_gets, "{}: {trade:?} runs a deficit", mechanism.name());
            }
            let mut traded: Vec<(bool, u64)> = clearing.trades.iter().flat_map(|t| [(true, t.bid), (false, t.ask)]).collect();
            traded.sort_unstable();
            prop_assert!(traded.windows(2).all(|w| w[0] != w[1]), "{}: an order trades twice", mechanism.name());
        }
    }

    #[test]
    fn k_double_is_strongly_budget_balanced_and_efficient((bids, asks) in market(), k in 0.0..=1.0f64) {
        let clearing = KDouble::new(k).unwrap().clear(&bids, &asks);
        for trade in &clearing.trades {
            prop_assert_eq!(trade.buyer_pays, trade.seller_gets);
        }
        prop_assert!(close(clearing.surplus(&bids, &asks), max_surplus(&bids, &asks)));
    }

    #[test]
    fn one_sided_auctions_are_efficient((bids, asks) in market()) {
        for form in [Form::Forward, Form::Reverse] {
            let fpsb: &dyn Mechanism = &FirstPrice { form };
            for mechanism in [fpsb, &Vickrey { form }] {
                let surplus = mechanism.clear(&bids, &asks).surplus(&bids, &asks);
                prop_assert!(close(surplus, max_surplus(&bids, &asks)), "{} {form:?}", mechanism.name());
            }
        }
    }

    #[test]
    fn mcafee_is_weakly_budget_balanced_and_loses_at_most_the_least_valuable_trade((bids, asks) in market()) {
        let clearing = McAfee.clear(&bids, &asks);
        prop_assert!(clearing.trades.iter().all(|t| t.buyer_pays >= t.seller_gets));
        prop_assert!(clearing.auctioneer_revenue() >= 0.0);
        let r = Ranked::new(&bids, &asks);
        let least = r.q.checked_sub(1).map_or(0.0, |i| r.bids[i].price - r.asks[i].price);
        prop_assert!(clearing.surplus(&bids, &asks) >= max_surplus(&bids, &asks) - least - 1e-6);
    }

    #[test]
    fn vickrey_is_truthful_for_the_competitors((bids, asks) in market()) {
        assert_truthful_for_buyers(&Vickrey { form: Form::Forward }, &bids, &asks)?;
        assert_truthful_for_sellers(&Vickrey { form: Form::Reverse }, &bids, &asks)?;
    }

    #[test]
    fn mcafee_is_truthful_for_buyers_and_sellers((bids, asks) in market()) {
        assert_truthful_for_buyers(&McAfee, &bids, &asks)?;
        assert_truthful_for_sellers(&McAfee, &bids, &asks)?;
    }

    #[test]
    fn invalid_orders_and_input_order_change_nothing((bids, asks) in market(), junk_id in any::<u64>()) {
        let junk = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.01, -1e300].map(|price| Order::new(junk_id, price));
        let noisy = |orders: &[Order]| {
            let mut noisy: Vec<Order> = orders.iter().rev().copied().collect();
            noisy.splice(noisy.len() / 2..noisy.len() / 2, junk);
            noisy
        };
        for mechanism in all_mechanisms() {
            prop_assert_eq!(mechanism.clear(&noisy(&bids), &noisy(&asks)), mechanism.clear(&bids, &asks), "{}", mechanism.name());
        }
    }

    #[test]
    fn the_order_book_trades_best_first_at_the_resting_price_and_never_rests_crossed(
        ops in vec((any::<bool>(), 1u32..100, 0u64..200, any::<bool>()), 0..200)
    ) {
        let mut book = OrderBook::new();
        let mut resting: HashMap<u64, f64> = HashMap::new();
        for (id, (is_bid, price, target, cancel)) in (0u64..).zip(ops) {
            if cancel {
                prop_assert_eq!(book.cancel(target).map(|(_, o)| o.price), resting.remove(&target));
                continue;
            }
            let (side, order) = (if is_bid { Side::Bid } else { Side::Ask }, Order::new(id, f64::from(price)));
            let best = if is_bid { book.best_ask() } else { book.best_bid() };
            match book.submit(side, order).unwrap() {
                Some(trade) => {
                    let other = if is_bid { trade.ask } else { trade.bid };
                    prop_assert_eq!(best, Some(Order::new(other, trade.buyer_pays)));
                    prop_assert_eq!(resting.remove(&other), Some(trade.buyer_pays));
                    prop_assert_eq!(trade.buyer_pays, trade.seller_gets);
                }
                None => {
                    resting.insert(id, order.price);
                }
            }
            if let (Some(bid), Some(ask)) = (book.best_bid(), book.best_ask()) {
                prop_assert!(bid.price < ask.price, "crossed book: {bid:?} {ask:?}");
            }
            prop_assert_eq!(book.depth(Side::Bid) + book.depth(Side::Ask), resting.len());
        }
    }
}

#[test]
fn kinds_build_their_mechanisms_and_refuse_stray_parameters() {
    for kind in MechanismKind::ALL {
        let mechanism = kind.build(MechanismParams::default()).unwrap();
        assert_eq!(mechanism.name(), kind.name());
        assert_eq!(serde_json::to_value(kind).unwrap(), kind.name());
    }
    let k = |k| MechanismParams { k: Some(k), ..MechanismParams::default() };
    let reverse = MechanismParams { form: Some(Form::Reverse), ..MechanismParams::default() };
    assert!(MechanismKind::KDouble.build(k(0.3)).is_ok());
    assert_eq!(MechanismKind::KDouble.build(k(1.5)).unwrap_err(), MechanismError::K(1.5));
    assert!(MechanismKind::Vickrey.build(reverse).is_ok());
    assert_eq!(
        MechanismKind::McAfee.build(k(0.3)).unwrap_err(),
        MechanismError::Unused { mechanism: "mcafee", param: "k" }
    );
    assert!(MechanismKind::KDouble.build(reverse).is_err());
    assert!(MechanismKind::FirstPrice.build(k(0.5)).is_err());
}

#[test]
fn params_read_from_scenario_files() {
    let params: MechanismParams = toml::from_str("form = \"reverse\"").unwrap();
    assert_eq!(params.form, Some(Form::Reverse));
    assert!(toml::from_str::<MechanismParams>("price = 1").is_err());
    let kind: MechanismKind = serde_json::from_str("\"k-double\"").unwrap();
    assert_eq!(kind, MechanismKind::KDouble);
}

#[test]
fn extreme_prices_do_not_overflow() {
    let max = f64::MAX;
    let bids = [Order::new(1, max), Order::new(2, 0.9 * max), Order::new(3, 0.5 * max)];
    let asks = [Order::new(4, 0.0), Order::new(5, 0.6 * max), Order::new(6, 0.95 * max)];
    for mechanism in all_mechanisms() {
        for trade in mechanism.clear(&bids, &asks).trades {
            assert!(trade.buyer_pays.is_finite() && trade.seller_gets.is_finite(), "{}: {trade:?}", mechanism.name());
        }
    }
}

#[test]
fn the_truthfulness_check_catches_the_mechanisms_that_reward_lies() {
    // FPSB: bidder 2 wins at its value 7 and gains nothing; bidding just over 5 wins at 5.001.
    let (bids, asks) = ([Order::new(1, 5.0), Order::new(2, 7.0)], [Order::new(3, 2.0)]);
    assert!(assert_truthful_for_buyers(&FirstPrice::default(), &bids, &asks).is_err());
    // k-DA: the lone buyer pays 6 bidding 10, 5.95 bidding 9.9; the lone seller gets 6 asking 2, 6.01 asking 2.02.
    let (bids, asks) = ([Order::new(1, 10.0)], [Order::new(2, 2.0)]);
    assert!(assert_truthful_for_buyers(&KDouble::default(), &bids, &asks).is_err());
    assert!(assert_truthful_for_sellers(&KDouble::default(), &bids, &asks).is_err());
}
