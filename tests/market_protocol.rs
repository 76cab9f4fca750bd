//! Message-level tests of emergent pricing: a provider's pricing strategy moves its posted price, announces each
//! change to the user brokers (`Market::PriceChange`), bills accepted jobs at the price they were accepted at, and
//! personalised brokers choose by the prices announced.

use agents::broker::{Choice, Submission, UserBroker, UserJob};
use agents::protocol::{JobMsg, JobSpec, MarketMsg, Msg};
use agents::provider::overhead::OverheadModel;
use agents::provider::preemption::PreemptionPolicy;
use agents::provider::pricing::{Feedback, FeedbackSignal, PricingConfig, Rule};
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
    let rule = Rule::Feedback(Feedback { signal: FeedbackSignal::Utilisation, gain: 1.0, target: 0.5 });
    PricingConfig { rule, interval: 100.0, bounds: (0.5, 10.0) }
}

fn user_job(id: u64, submit: f64, pes: u32, runtime: f64) -> UserJob {
    UserJob { submit: SimTime::new(submit).unwrap(), spec: JobSpec::new(id, AgentId::ENV, pes, runtime) }
}

fn personalised(providers: Vec<ProviderInfo>) -> Submission {
    Submission::Personalised { providers, round: 50.0, claims: Default::default(), choice: Choice::CheapestFeasible }
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
    let rule = Rule::Feedback(Feedback { signal: FeedbackSignal::Utilisation, gain: 100.0, target: 0.5 });
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
