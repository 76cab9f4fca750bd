//! Strategies plugged in by name: a trader strategy (a market's traders, a broker's bids, a provider's asks), a
//! personalised broker's choice of provider and meta-broker policies of whole rounds, added to the registry and named
//! in scenario files. A registered strategy that does what a built-in one does gives the very same run; `list` and
//! `schema` show them.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use agents::broker::ProviderChoice;
use agents::exchange::mechanism::Side;
use agents::exchange::traders::{Limits, NamedTraderStrategy, RngLike, TraderStrategy, Unit};
use agents::metabroker::dam::{AuctionPolicy, QueueView, Queues, Round, match_round};
use agents::metabroker::{
    App, Candidate, MetaPolicy, Policy, Problem, Schedule, SlotView, Slots, mgn_transportation, modified_min_cost,
};
use agents::model::ProviderInfo;
use agents::protocol::JobSpec;
use agents::registry::Registry;
use agents::sim::AgentId;
use gridmarket::runner::run::run;
use gridmarket::scenario::{LoadOptions, Plugins, Study};
use gridmarket::schema;
use rand::Rng;

/// Shouts its limit price, as the built-in `truthful` does.
struct AtLimit;

#[derive(Debug)]
struct AtLimitTrader;

impl TraderStrategy for AtLimitTrader {
    fn shout(&mut self, _side: Side, unit: Unit, _rng: &mut dyn RngLike) -> f64 {
        unit.limit
    }
}

impl NamedTraderStrategy for AtLimit {
    fn name(&self) -> &'static str {
        "at-limit"
    }

    fn about(&self) -> &'static str {
        "its limit price"
    }

    fn build(&self, _: Limits, _: Side, _: usize, _: &mut dyn RngLike) -> Box<dyn TraderStrategy> {
        Box::new(AtLimitTrader)
    }
}

/// The cheapest feasible provider, ties to the lower id, as the built-in `cheapest-feasible` does.
struct Thrifty;

impl ProviderChoice for Thrifty {
    fn name(&self) -> &'static str {
        "thrifty"
    }

    fn about(&self) -> &'static str {
        "the cheapest feasible provider"
    }

    fn pick(
        &self,
        _job: &JobSpec,
        candidates: &[&ProviderInfo],
        feasible: &dyn Fn(&ProviderInfo) -> bool,
        _k: u32,
        _rng: &mut dyn Rng,
    ) -> Option<AgentId> {
        let feasible = candidates.iter().filter(|p| feasible(p));
        feasible.min_by(|a, b| a.price.total_cmp(&b.price).then(a.id.cmp(&b.id))).map(|p| p.id)
    }
}

// ANCHOR: round-policy
/// MMC (Garg 2010, Alg. 4.1) written from the library's parts: the MGN relaxation by the transportation solver, made
/// a single-site schedule; the built-in `mmc` with its default solver.
#[derive(Debug)]
struct MinCostAgain;

impl Policy<Slots> for MinCostAgain {
    fn place(&self, view: SlotView<'_>) -> Schedule {
        let problem = Problem::new(view.snapshot, view.params.qos);
        modified_min_cost(&problem, &mgn_transportation(&problem))
    }
}
// ANCHOR_END: round-policy

/// DAM's matching (Garg 2010, Alg. 7.1), as a registered policy of the queues' family.
#[derive(Debug)]
struct DamAgain;

impl Policy<Queues> for DamAgain {
    fn place(&self, view: QueueView<'_>) -> Round {
        match_round(AuctionPolicy::Dam, view.params, view.market)
    }
}

fn registry() -> Registry {
    let registry = Registry::standard().with_trader_strategy(&AtLimit).with_provider_choice(&Thrifty);
    // ANCHOR: round-registration
    let registry = registry.with_round_policy::<Slots>("mmc-again", "MMC from the library's parts", &MinCostAgain);
    // ANCHOR_END: round-registration
    registry.with_round_policy::<Queues>("dam-again", "DAM's matching", &DamAgain)
}

/// Every metric of every run of the scenario `text`, by point and replication (as text: NaN is a value here).
fn metrics(name: &str, text: &str) -> Vec<String> {
    let opts = LoadOptions { registry: registry(), ..LoadOptions::default() };
    let study = Study::load(&write(name, text), &opts).unwrap_or_else(|e| panic!("{e}"));
    let interrupt = Arc::new(AtomicBool::new(false));
    let mut out = Vec::new();
    for point in &study.points {
        for rep in 0..point.plan.replications {
            let metrics: BTreeMap<String, f64> = run(&point.plan, rep, &interrupt, None).unwrap().measured.metrics;
            out.push(format!("{metrics:?}"));
        }
    }
    out
}

/// `text` written as the scenario file `name` of this test process.
fn write(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("gridmarket-plugins-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// `text` with `from` replaced by `to`, which must be there.
fn edit(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "no {from:?} in the scenario");
    text.replace(from, to)
}

fn scenario(path: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn test_a_registered_trader_strategy_trades_as_the_built_in_it_copies() {
    let market = "seed = 1\nreplications = 2\n[markets.floor]\nschedule = \"symmetric\"\nstrategy = \"truthful\"\n";
    let built_in = metrics("market.toml", market);
    assert!(built_in[0].contains("\"markets.floor.trades\": 14.8"), "{}", built_in[0]);
    assert_eq!(metrics("market.toml", &market.replace("\"truthful\"", "\"at-limit\"")), built_in);
    // Brokers bidding and providers asking in the exchange's call markets, at a tenth of garg-ch8/mandi's size.
    let mandi = scenario("scenarios/garg-ch8/mandi.toml");
    let mandi = mandi.split("[sweep]").next().unwrap().replace("jobs = 50000", "jobs = 2000");
    let mandi = mandi.replace("count = 1000", "count = 20").replace("replications = 3", "replications = 1");
    let mandi = mandi.replace("ask-cpus = 8", "ask-cpus = 8\nasking = \"truthful\"");
    let mandi = mandi.replace("choice = \"random\"", "choice = \"random\"\nbidding = \"truthful\"");
    let built_in = metrics("mandi.toml", &mandi);
    assert!(!built_in[0].contains("\"jobs.completed\": 0.0"), "{}", built_in[0]);
    assert_eq!(metrics("mandi.toml", &mandi.replace("\"truthful\"", "\"at-limit\"")), built_in);
}

#[test]
fn test_a_registered_provider_choice_claims_as_the_built_in_it_copies() {
    let herding = scenario("scenarios/market/herding-pricing.toml").split("[[expect]]").next().unwrap().to_string();
    let herding = herding.replace("../profiles/", &format!("{}/scenarios/profiles/", env!("CARGO_MANIFEST_DIR")));
    let herding = herding.replace("replications = 10", "replications = 2").replace("count = 50", "count = 10");
    let built_in =
        metrics("herding.toml", &herding.replace("round = 50", "round = 50\nchoose = \"cheapest-feasible\""));
    assert!(!built_in[0].contains("\"jobs.completed\": 0.0"), "{}", built_in[0]);
    assert_eq!(metrics("herding.toml", &herding.replace("round = 50", "round = 50\nchoose = \"thrifty\"")), built_in);
}

#[test]
fn test_a_registered_round_policy_schedules_as_the_built_in_it_copies() {
    let ch4 = scenario("scenarios/garg-ch4/metabroker.toml").split("[sweep]").next().unwrap().to_string();
    let ch4 = edit(&ch4, "../profiles/", &format!("{}/scenarios/profiles/", env!("CARGO_MANIFEST_DIR")));
    let ch4 = edit(&ch4, "count = 50\n\n[metabrokers", "count = 25\n\n[metabrokers");
    let ch4 = edit(&edit(&ch4, "replications = 10", "replications = 2"), "\"tight\"", "\"medium\"");
    let built_in = metrics("ch4.toml", &edit(&ch4, "\"greedy\"\ngreedy", "\"mmc\"\ngreedy"));
    assert!(built_in[0].contains("\"metabrokers.mb.tickets\": 41.0"), "MMC placed 41 of the 50 applications");
    assert_ne!(metrics("ch4.toml", &ch4), built_in, "greedy places otherwise than MMC");
    assert_eq!(metrics("ch4.toml", &edit(&ch4, "\"greedy\"\ngreedy", "\"mmc-again\"\ngreedy")), built_in);
    // Chapter 7's queues, over a third of a day of the Thunder-like workload.
    let dam = scenario("scenarios/garg-ch7/dam.toml").split("[[expect]]").next().unwrap().to_string();
    let dam = edit(&edit(&dam, "604800", "28800"), "replications = 10", "replications = 1");
    let sweep = "\"metabrokers.mb.policy\" = [\"dam\", \"sjf\", \"fcfs\", \"edf-fq\", \"hvfq\", \"fair-share\"]";
    let dam = edit(&dam, sweep, "");
    let built_in = metrics("dam.toml", &dam);
    assert!(!built_in[0].contains("\"metabrokers.mb.tickets\": 0.0"), "DAM matched nothing");
    assert_ne!(
        metrics("dam.toml", &edit(&dam, "policy = \"dam\"", "policy = \"fcfs\"")),
        built_in,
        "FCFS matches otherwise than DAM"
    );
    let again = edit(&dam, "policy = \"dam\"", "policy = \"dam-again\"\noffers = \"queues\"");
    assert_eq!(metrics("dam.toml", &again), built_in);
    // Without `offers`, the meta-broker reads slots, which the policy does not.
    let path = write("dam-slots.toml", &edit(&dam, "policy = \"dam\"", "policy = \"dam-again\""));
    let opts = LoadOptions { registry: registry(), ..LoadOptions::default() };
    let Err(error) = Study::load(&path, &opts) else { panic!("a policy of another family was accepted") };
    let error = error.to_string();
    assert!(error.contains("metabrokers.mb.offers: the registered policy \"dam-again\" reads \"queues\""), "{error}");
}

#[test]
#[should_panic(expected = "the meta-broker policy name `mmc-again` is taken")]
fn test_a_meta_policy_may_not_take_a_round_policy_name() {
    struct Again;
    impl MetaPolicy for Again {
        fn name(&self) -> &'static str {
            "mmc-again"
        }
        fn about(&self) -> &'static str {
            "the cheapest candidate"
        }
        fn choose<'c>(&self, _: &App, candidates: &'c [Candidate]) -> Option<&'c Candidate> {
            candidates.first()
        }
    }
    let _ = registry().with_meta_policy(&Again);
}

#[test]
fn test_registered_strategies_are_listed_where_they_are_named() {
    let list = schema::kinds_text(&registry());
    for line in [
        "      choose: cheapest-feasible, cheapest, random-cheapest, thrifty (personalised)\n",
        "          thrifty: the cheapest feasible provider\n",
        "      bidding: truthful, shaded, zi-u, zi-c, zip, at-limit (on an exchange; Gode and Sunder (1993), Cliff (1997))\n",
        "      asking: truthful, shaded, zi-u, zi-c, zip, at-limit (asks in an exchange's call markets; Gode and Sunder \
         (1993), Cliff (1997))\n",
        "      strategy: truthful, shaded, zi-u, zi-c, zip, at-limit (Gode and Sunder (1993); Cliff (1997))\n",
        "          at-limit: its limit price\n",
        "      policy: mmc-again (registered, on slots)\n",
        "      policy: dam-again (registered, on queues)\n",
    ] {
        assert!(list.contains(line), "missing {line:?} in\n{list}");
    }
    // `schema` too, in its table of the keys that name a policy.
    let keys = schema::markdown(&Plugins { registry: registry(), ..Plugins::default() });
    let choose =
        "| `brokers.<name>.choose` | `cheapest-feasible`, `cheapest`, `random-cheapest`, `thrifty` | personalised |";
    assert!(keys.contains(choose), "{keys}");
    assert!(keys.contains("`zip`, `at-limit` | Gode and Sunder (1993); Cliff (1997) |"), "{keys}");
    assert!(!schema::markdown(&Plugins::default()).contains("at-limit"));
}
