//! The induced-value market against hand-computed cases: the efficiency of a hand-made trade sequence, the Gode–Sunder
//! rules (improvement, the price of the order that stood first, a cleared book), and the constraint of ZI-C.

use super::*;
use crate::exchange::traders::Truthful;
use crate::sim::{AgentId, End, Runtime, SimBuilder};

const LIMITS: Limits = Limits { floor: 1.0, ceiling: 200.0, shade: 1.0 };

fn config(buyers: Vec<Vec<f64>>, sellers: Vec<Vec<f64>>, strategy: Strategy) -> MarketConfig {
    let (buyer_strategy, seller_strategy) = (strategy, strategy);
    MarketConfig { buyers, sellers, buyer_strategy, seller_strategy, limits: LIMITS, periods: 3, steps: 200, step: 1.0 }
}

/// Runs a market to its end and returns what it reported.
fn run(config: MarketConfig, seed: u64) -> (Vec<(&'static str, f64)>, MarketRecord) {
    let mut b = SimBuilder::new(seed);
    b.runtime(Runtime::Inline);
    b.add("floor", kind::KIND, DoubleAuctionMarket::new(config)).unwrap();
    let mut sim = b.build().unwrap();
    let outcome = sim.run(End::Quiescence).unwrap();
    let agents = sim.into_agents();
    let mut report = Report::default();
    agents[AgentId(0).index()].report(outcome.now, &mut report);
    (report.metrics, *report.market.expect("a market record"))
}

fn metric(metrics: &[(&str, f64)], name: &str) -> f64 {
    metrics.iter().find(|m| m.0 == name).map(|m| m.1).unwrap_or_else(|| panic!("no metric {name}"))
}

#[test]
fn test_efficiency_of_a_hand_made_trade_sequence() {
    // Values 10, 8, 6, 4 and costs 3, 5, 7, 9: the equilibrium trades (10, 3) and (8, 5), surplus 10.
    let c = config(vec![vec![10.0, 6.0], vec![8.0, 4.0]], vec![vec![3.0, 7.0], vec![5.0, 9.0]], Strategy::TRUTHFUL);
    let mut m = DoubleAuctionMarket::new(c);
    for (side, limits) in [(Side::Bid, vec![10.0, 6.0]), (Side::Bid, vec![8.0, 4.0])]
        .into_iter()
        .chain([(Side::Ask, vec![3.0, 7.0]), (Side::Ask, vec![5.0, 9.0])])
    {
        m.traders.push(Trader { side, limits, next: 0, strategy: Box::new(Truthful), units: 0, surplus: 0.0 });
    }
    // Buyer 0's 10 with seller 1's 5 at 6, then buyer 1's 8 with seller 0's 3 at 4: all the surplus, 10.
    m.trade(0, 3, 6.0, 1.0);
    m.trade(1, 2, 4.0, 2.0);
    // Then an extra-marginal pair: buyer 0's second unit (6) with seller 0's second (7) at 6.5, a loss of 1.
    m.trade(0, 2, 6.5, 3.0);
    m.end_period(200.0);
    let p = m.periods[0];
    assert_eq!((p.trades, p.efficiency), (3, 0.9));
    assert_eq!(p.extramarginal, 1);
    // Buyers: (10 − 6) + (8 − 4) + (6 − 6.5); sellers: (6 − 5) + (4 − 3) + (6.5 − 7).
    assert_eq!((p.buyer_surplus, p.seller_surplus), (7.5, 1.5));
    assert_eq!(m.trades[2], TradeRecord { t: 3.0, period: 0, price: 6.5, buyer: 0, seller: 0, value: 6.0, cost: 7.0 });
    // The period's units start over.
    assert!(m.traders.iter().all(|t| t.next == 0));
}

#[test]
fn test_truthful_traders_trade_at_the_price_that_stood_first() {
    // One buyer (10) and one seller (4): whoever shouts first stands, the other crosses it and the unit trades at
    // the first one's price, 10 or 4, once per period.
    let mut prices = std::collections::BTreeSet::new();
    for seed in 0..20 {
        let (metrics, record) = run(config(vec![vec![10.0]], vec![vec![4.0]], Strategy::TRUTHFUL), seed);
        assert_eq!(record.trades.len(), 3, "one trade in each of the 3 periods");
        assert_eq!(metric(&metrics, "efficiency"), 1.0);
        for t in &record.trades {
            assert!(t.price == 10.0 || t.price == 4.0, "{t:?}");
            prices.insert(t.price.to_bits());
        }
    }
    assert_eq!(prices.len(), 2, "both orders stand first under some seed");
}

#[test]
fn test_zi_c_never_trades_at_a_loss_and_zi_u_does() {
    let symmetric = schedules::Schedule::Symmetric.traders();
    let (metrics, record) = run(config(symmetric.0.clone(), symmetric.1.clone(), Strategy::ZI_C), 7);
    assert!(record.trades.iter().all(|t| t.value >= t.price && t.price >= t.cost));
    let efficiency = metric(&metrics, "efficiency");
    assert!(efficiency > 0.8 && efficiency <= 1.0, "{efficiency}");
    assert_eq!(metric(&metrics, "ce_price"), 100.0);
    let (metrics, record) = run(config(symmetric.0, symmetric.1, Strategy::ZI_U), 7);
    assert!(record.trades.iter().any(|t| t.value < t.price || t.price < t.cost), "ZI-U trades at a loss");
    assert!(metric(&metrics, "efficiency") < efficiency);
    assert!(metric(&metrics, "gini_surplus").is_nan(), "a trader lost money: no Gini of surplus");
}

#[test]
fn test_traders_who_cannot_trade_are_named() {
    let quiet = quiet_traders(&[vec![10.0], vec![2.0, 1.0]], &[vec![3.0], vec![12.0]]);
    assert_eq!(quiet, ["buyer 1", "seller 1"]);
    // Nobody can trade: no trade, efficiency undefined.
    let (metrics, record) = run(config(vec![vec![1.0]], vec![vec![5.0]], Strategy::ZI_C), 1);
    assert!(record.trades.is_empty());
    assert_eq!(metric(&metrics, "quiet_traders"), 2.0);
    assert!(metric(&metrics, "efficiency").is_nan());
}
