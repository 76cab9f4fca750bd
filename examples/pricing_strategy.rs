//! Example: a pricing strategy of your own, in one type, against the utilisation rule in a cobweb market.
//!
//! This example demonstrates in particular:
//! * writing a pricing strategy: one type implementing `PriceRule`, given to a provider with `with_price_rule`,
//! * price-driven users: personalised brokers that claim the provider only while its price is within their budget,
//!   and hear every price change (`Market::PriceChange`),
//! * reading what emerged: the provider's `price_settled` and `price_swing` over the second half of the run.
//!
//! ```text
//!   10 personalised brokers  --SlaRequest-->  provider (20 PEs, its price revised every 1,800 s)
//!   (jobs of 1 PE, 60 s,      <--PriceChange--
//!    valued U[0, 10] G$/PE·s)
//! ```
//!
//! The market of `scenarios/market/cobweb.toml`: the price p* = 5 G$ makes the utilisation 0.6. The dead-band rule
//! below moves the price by a fixed step only when the utilisation leaves [0.55, 0.65], so it comes to rest near p*;
//! the utilisation rule p' = p (1 + g (u − 0.6)) with g = 5 is past the cobweb's stability boundary (g η = 3 > 2) and
//! oscillates.
//!
//! Run: `cargo run --release --example pricing_strategy`

use agents::broker::{Choice, Submission, UserBroker, UserJob};
use agents::protocol::JobSpec;
use agents::provider::overhead::OverheadModel;
use agents::provider::preemption::PreemptionPolicy;
use agents::provider::price_rules::{Feedback, FeedbackSignal};
use agents::provider::pricing::{Observation, PriceRule, PricingConfig};
use agents::provider::scheduler::{Partitioning, SchedulerPolicy};
use agents::provider::{CancelledLeases, Provider, ProviderConfig, ProviderInfo};
use agents::report::Report;
use agents::sim::{AgentId, End, Runtime, SimBuilder, SimTime, rng};
use rand::RngExt;

/// The strategy: a step up when busier than the band, a step down when idler, else no change.
#[derive(Debug)]
struct DeadBand {
    /// The band of utilisation the price is left alone in.
    band: (f64, f64),
    /// The step [G$ per PE-second].
    step: f64,
}

impl PriceRule for DeadBand {
    fn next(&mut self, seen: &Observation) -> f64 {
        if seen.utilisation > self.band.1 {
            seen.price + self.step
        } else if seen.utilisation < self.band.0 {
            seen.price - self.step
        } else {
            seen.price
        }
    }
}

const INTERVAL: f64 = 1_800.0;
const HORIZON: f64 = 60.0 * INTERVAL;

/// Users arriving at 0.4 per second for the whole run, dealt among 10 brokers: jobs of one PE for 60 s, each valued at
/// v × 60 G$ with v uniform in [0, 10], due within one to four runtimes.
fn users(seed: u64) -> Vec<Vec<UserJob>> {
    let mut r = rng::stream(seed, "example:users", 0);
    let mut brokers = vec![Vec::new(); 10];
    let (mut t, mut id) = (0.0, 1);
    while t < HORIZON {
        t += -(1.0 - r.random::<f64>()).ln() / 0.4;
        let mut spec = JobSpec::new(id, AgentId::ENV, 1, 60.0);
        spec.budget = Some(10.0 * r.random::<f64>() * 60.0);
        spec.deadline = Some(SimTime::new(t + (1.0 + 3.0 * r.random::<f64>()) * 60.0).expect("a time"));
        brokers[id as usize % 10].push(UserJob { submit: SimTime::new(t).expect("a time"), spec });
        id += 1;
    }
    brokers
}

/// Runs the market with `provider` and returns the provider's metrics.
fn run(provider: Provider, seed: u64) -> Vec<(&'static str, f64)> {
    let mut b = SimBuilder::new(seed);
    b.runtime(Runtime::Inline);
    let site = b.add("site", "provider", provider).expect("a unique name");
    let info = ProviderInfo { id: site, pes: 20, speed: 1.0, price: 3.0 };
    for (i, jobs) in users(seed).into_iter().enumerate() {
        let submission = Submission::Personalised {
            providers: vec![info],
            round: 30.0,
            claims: Default::default(),
            choice: Choice::default(),
        };
        b.add(&format!("user-{i}"), "broker", UserBroker::new(jobs, submission)).expect("a unique name");
    }
    let mut sim = b.build().expect("a valid simulation");
    let outcome = sim.run(End::Until(SimTime::new(HORIZON).expect("a time"))).expect("a run");
    let mut report = Report::default();
    sim.into_agents()[site.index()].report(outcome.now, &mut report);
    report.metrics
}

fn provider() -> Provider {
    Provider::new(ProviderConfig {
        pes: 20,
        speed: 1.0,
        price: 3.0,
        scheduler: SchedulerPolicy::Easy,
        partitioning: Partitioning::default(),
        preemption: PreemptionPolicy::Nop,
        overhead: OverheadModel::default(),
        vm_memory_mb: 1024.0,
        cancelled: CancelledLeases::Restart,
        preemptive_priority: false,
    })
}

fn main() {
    let metric = |m: &[(&str, f64)], name: &str| m.iter().find(|(k, _)| *k == name).map_or(f64::NAN, |(_, v)| *v);
    let dead_band = Box::new(DeadBand { band: (0.55, 0.65), step: 0.25 });
    let ours = run(provider().with_price_rule(dead_band, INTERVAL, (0.3, 30.0)), 7);
    let rule = Feedback { signal: FeedbackSignal::Utilisation, gain: 5.0, target: 0.6 }.into();
    let theirs = run(provider().with_pricing(PricingConfig { rule, interval: INTERVAL, bounds: (0.3, 30.0) }), 7);
    for (name, m) in [("dead band", &ours), ("utilisation, g = 5", &theirs)] {
        println!(
            "{name:>18}: settled at {:.2} G$/PE·s, swing {:.3}, {} price changes",
            metric(m, "price_settled"),
            metric(m, "price_swing"),
            metric(m, "price_changes")
        );
    }
    // The dead band holds utilisation in [0.55, 0.65], i.e. the price in about [4.6, 5.4].
    let settled = metric(&ours, "price_settled");
    assert!((4.3..=5.7).contains(&settled), "the dead-band price settles near p* = 5, not at {settled}");
    assert!(metric(&ours, "price_swing") < 0.05, "and stays there");
    assert!(metric(&theirs, "price_swing") > 0.3, "the utilisation rule past the stability boundary oscillates");
}
