//! Message-level tests of emergent pricing: a provider's pricing strategy moves its posted price, announces each
//! change to the user brokers (`Market::PriceChange`), bills accepted jobs at the price they were accepted at, and
//! personalised brokers choose by the prices announced.

use agents::broker::{Choice, Submission, UserBroker, UserJob};
use agents::protocol::{JobMsg, JobSpec, MarketMsg, Msg};
use agents::provider::overhead::OverheadModel;
use agents::provider::preemption::PreemptionPolicy;
use agents::provider::price_rules::{AuctionCleared, Feedback, FeedbackSignal, Tariff};
use agents::provider::pricing::PricingConfig;
use agents::provider::scheduler::{Partitioning, SchedulerPolicy};
use agents::provider::{CancelledLeases, Provider, ProviderConfig, ProviderInfo};
use agents::sim::{AgentId, SimTime};
use agents::testbed::{TestBed, expect};

fn provider(pes: u32, price: f64) -> Provider {
    Provider::new(ProviderConfig {
        pes,
        speed: 1.0,
        price,
        scheduler: SchedulerPolicy::Easy,
        partitioning: Partitioning::default(),
        preemption: PreemptionPolicy::Nop,
        overhead: OverheadModel::default(),
        vm_memory_mb: 1024.0,
        cancelled: CancelledLeases::Restart,
        preemptive_priority: false,
    })
}

/// Utilisation pricing: p' = p (1 + (u − 0.5)) every 100 s, within [0.5, 10].
fn utilisation_pricing() -> PricingConfig {
    let rule = Feedback { signal: FeedbackSignal::Utilisation, gain: 1.0, target: 0.5 }.into();
    PricingConfig { rule, interval: 100.0, bounds: (0.5, 10.0) }
}

fn user_job(id: u64, submit: f64, pes: u32, runtime: f64) -> UserJob {
    UserJob { submit: SimTime::new(submit).unwrap(), spec: JobSpec::new(id, AgentId::ENV, pes, runtime) }
}

fn personalised(providers: Vec<ProviderInfo>) -> Submission {
    Submission::Personalised { providers, round: 50.0, claims: Default::default(), choice: Choice::default() }
}

#[test]
fn test_utilisation_pricing_announces_changes_and_brokers_follow_them() {
    let mut tb = TestBed::new(1);
    let cheap = tb.agent("cheap", "provider", provider(4, 2.0).with_pricing(utilisation_pricing()));
    let dear = tb.agent("dear", "provider", provider(4, 2.5));
    let infos = vec![
        ProviderInfo { id: cheap, pes: 4, speed: 1.0, price: 2.0 },
        ProviderInfo { id: dear, pes: 4, speed: 1.0, price: 2.5 },
    ];
    // Job 1 fills the cheap site over [0, 100): utilisation 1, so the price rises by half at t = 100, to 3. Job 2,
    // at t = 150, then goes to the dear site (2.5), and the idle cheap site halves its price at t = 200 (1.5).
    let jobs = vec![user_job(1, 0.0, 4, 100.0), user_job(2, 150.0, 1, 10.0)];
    tb.agent("user", "broker", UserBroker::new(jobs, personalised(infos)));
    tb.run_until(250.0).unwrap();
    tb.assert_in_order(&[
        expect("market.sla_request").from("user").to("cheap").at(0.0),
        expect("market.sla_accept").to("user").at(0.0),
        expect("market.price_change")
            .from("cheap")
            .to("user")
            .msg(Msg::Market(MarketMsg::PriceChange { price: 3.0 }))
            .at(100.0),
        // Billed at the price it was accepted at, 2 G$ × 4 PEs × 100 s, though the price moved first at that instant.
        expect("job.completed").msg(Msg::Job(JobMsg::Completed { job: 1, cost: 800.0 })).at(100.0),
        expect("market.sla_request").from("user").to("dear").at(150.0),
        expect("market.price_change").from("cheap").msg(Msg::Market(MarketMsg::PriceChange { price: 1.5 })).at(200.0),
    ]);
    tb.assert_none(&expect("market.price_change").from("dear"));
}

#[test]
fn test_a_price_rule_gone_wild_is_clamped_to_its_bounds() {
    let mut tb = TestBed::new(1);
    // A gain of 100 on an idle site proposes p (1 − 50) < 0: the lower bound, 0.5, and no lower.
    let rule = Feedback { signal: FeedbackSignal::Utilisation, gain: 100.0, target: 0.5 }.into();
    let config = PricingConfig { rule, interval: 100.0, bounds: (0.5, 10.0) };
    tb.agent("site", "provider", provider(4, 2.0).with_pricing(config));
    tb.agent("user", "broker", UserBroker::new(vec![], personalised(vec![])));
    tb.run_until(350.0).unwrap();
    tb.assert_exact(&[
        expect("timer.reprice").at(100.0),
        expect("market.price_change").msg(Msg::Market(MarketMsg::PriceChange { price: 0.5 })).at(100.0),
        expect("timer.reprice").at(200.0),
        expect("timer.reprice").at(300.0),
    ]);
}

/// Prices of the orders `from` sent, in order: a consumer's bids or a provider's asks.
fn quotes(tb: &TestBed, from: &str) -> Vec<f64> {
    use agents::protocol::{ExchangeMsg, Quote};
    tb.deliveries()
        .iter()
        .filter(|d| d.from == from)
        .filter_map(|d| match &d.msg {
            Msg::Exchange(ExchangeMsg::Bid(b)) => match &b.quote {
                Quote::Buy { price, .. } | Quote::Sell { price, .. } => Some(*price),
            },
            _ => None,
        })
        .collect()
}

#[test]
fn test_traders_on_the_exchange_price_their_orders_by_their_strategies_and_hear_the_clearing_price() {
    use agents::broker::{AuctionChoice, ExchangeStrategy, Trade};
    use agents::exchange::agent::{Exchange, ExchangeConfig, Markets};
    use agents::exchange::mechanism::{MechanismKind, MechanismParams};
    use agents::exchange::traders::Strategy;
    use agents::provider::{ExchangeTrading, Sell};

    let mut tb = TestBed::new(3);
    // One call market at a time, each clearing 100 s after it opens, from 0 to 1,000 s.
    let (params, from, until) = (MechanismParams::default(), SimTime::ZERO, SimTime::new(1_000.0).unwrap());
    let markets =
        Markets { mechanism: MechanismKind::KDouble, params, count: 1, period: 100.0, lease: 100.0, from, until };
    let mandi = tb.agent(
        "mandi",
        "exchange",
        Exchange::new(ExchangeConfig { cycle: 10.0, retries: 3, markets: Some(markets) }),
    );
    // A provider of 8 CPUs priced 1 G$ asks ZI-C (uniform in [1, 3]) for lots of 1 CPU, re-advertising every 100 s.
    let trading = ExchangeTrading {
        exchange: mandi,
        sell: Sell::Market(Some(1)),
        interval: 100.0,
        horizon: 10_000.0,
        lease: 100.0,
    };
    tb.agent("site", "provider", provider(8, 1.0).selling_on(trading).asking(Strategy::ZI_C, 3.0));
    // A user values a CPU-second at 2 G$ and bids ZIP: never above 2, and learning from each clearing.
    let strategy = ExchangeStrategy {
        trade: Trade::Bid,
        choice: AuctionChoice::Earliest,
        valuation: 2.0,
        shade: 1.0,
        bidding: Strategy::ZIP,
        ceiling: f64::INFINITY,
        attempts: 1,
        retry: 60.0,
    };
    let jobs = (0..8).map(|i| user_job(i + 1, 5.0 + 100.0 * i as f64, 1, 50.0)).collect();
    tb.agent("user", "broker", UserBroker::new(jobs, Submission::Exchange { to: mandi, strategy }));
    tb.run_until(1_000.0).unwrap();
    let (asks, bids) = (quotes(&tb, "site"), quotes(&tb, "user"));
    assert!(!asks.is_empty() && asks.iter().all(|p| (1.0..=3.0).contains(p)), "ZI-C asks in [cost, ceiling]: {asks:?}");
    assert!(asks.iter().any(|p| *p != asks[0]), "drawn, not posted: {asks:?}");
    assert_eq!(bids.len(), 8);
    assert!(bids.iter().all(|p| *p <= 2.0), "ZIP never bids above its value: {bids:?}");
    // Every market that traded told both sides its price; the bidder's next bid moved.
    let cleared =
        |to: &str| tb.deliveries().iter().filter(|d| d.to == to && d.msg.kind() == "exchange.cleared").count();
    assert!(cleared("user") > 0 && cleared("user") == cleared("site"), "{} {}", cleared("user"), cleared("site"));
    assert!(bids.windows(2).any(|w| w[0] != w[1]), "ZIP adapts its bids: {bids:?}");
}

#[test]
fn test_an_auction_cleared_provider_posts_the_clearing_price() {
    use agents::broker::{AuctionChoice, ExchangeStrategy, Trade};
    use agents::exchange::agent::{Exchange, ExchangeConfig, Markets};
    use agents::exchange::mechanism::{MechanismKind, MechanismParams};
    use agents::exchange::traders::Strategy;
    use agents::protocol::ExchangeMsg;
    use agents::provider::{ExchangeTrading, Sell};

    let mut tb = TestBed::new(3);
    let (params, from, until) = (MechanismParams::default(), SimTime::ZERO, SimTime::new(200.0).unwrap());
    let markets =
        Markets { mechanism: MechanismKind::KDouble, params, count: 1, period: 100.0, lease: 100.0, from, until };
    let mandi = tb.agent(
        "mandi",
        "exchange",
        Exchange::new(ExchangeConfig { cycle: 10.0, retries: 3, markets: Some(markets) }),
    );
    // It asks at its price, 1 G$; the user bids its value, 2 G$: the k-double auction (k = 1/2) clears at 1.5.
    let trading =
        ExchangeTrading { exchange: mandi, sell: Sell::Market(None), interval: 100.0, horizon: 10_000.0, lease: 100.0 };
    let pricing = PricingConfig { rule: AuctionCleared.into(), interval: 3_600.0, bounds: (0.0, 1e6) };
    tb.agent("site", "provider", provider(1, 1.0).selling_on(trading).with_pricing(pricing));
    let strategy = ExchangeStrategy {
        trade: Trade::Bid,
        choice: AuctionChoice::Earliest,
        valuation: 2.0,
        shade: 1.0,
        bidding: Strategy::TRUTHFUL,
        ceiling: f64::INFINITY,
        attempts: 1,
        retry: 60.0,
    };
    let jobs = vec![user_job(1, 5.0, 1, 50.0)];
    tb.agent("user", "broker", UserBroker::new(jobs, Submission::Exchange { to: mandi, strategy }));
    tb.run_until(150.0).unwrap();
    tb.assert_in_order(&[
        expect("exchange.cleared")
            .to("site")
            .msg(Msg::Exchange(ExchangeMsg::Cleared { auction: 1, price: 1.5 }))
            .at(100.0),
        expect("market.price_change")
            .from("site")
            .to("user")
            .msg(Msg::Market(MarketMsg::PriceChange { price: 1.5 }))
            .at(100.0),
    ]);
    // Its next asks are at the posted price.
    assert_eq!(quotes(&tb, "site"), [1.0, 1.5]);
}

#[test]
fn test_a_time_of_day_tariff_changes_at_its_hours() {
    let mut tb = TestBed::new(1);
    // Off-peak half price from midnight, peak double price from noon, on a configured price of 2.
    let tariff = Tariff { schedule: vec![(0.0, 0.5), (12.0, 2.0)], day: 86_400.0 };
    let pricing = PricingConfig { rule: tariff.into(), interval: 3_600.0, bounds: (0.0, 1e6) };
    tb.agent("site", "provider", provider(4, 2.0).with_pricing(pricing));
    tb.agent("user", "broker", UserBroker::new(vec![], personalised(vec![])));
    tb.run_until(90_000.0).unwrap();
    let change = |price, at| expect("market.price_change").msg(Msg::Market(MarketMsg::PriceChange { price })).at(at);
    tb.assert_exact(&[
        change(1.0, 0.0),
        expect("timer.reprice").at(43_200.0),
        change(4.0, 43_200.0),
        expect("timer.reprice").at(86_400.0),
        change(1.0, 86_400.0),
    ]);
}
