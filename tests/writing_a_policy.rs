//! The guide `docs/writing-a-policy.md` and its example `examples/custom_policy/`: the guide shows the example's
//! files as they are, the example's policies pass their own unit tests (compiled here), and a registry that holds
//! them lists them, suggests them for a misspelt name and refuses a queue order under conservative backfilling.

use std::path::{Path, PathBuf};

use agents::registry::Registry;
use gridmarket::scenario::workload::WorkloadRegistry;
use gridmarket::scenario::{LoadOptions, Study};
use gridmarket::schema;

#[path = "../examples/custom_policy/diurnal.rs"]
mod diurnal;
#[path = "../examples/custom_policy/earliest_finish.rs"]
mod earliest_finish;
#[path = "../examples/custom_policy/smallest_area_first.rs"]
mod smallest_area_first;
#[path = "../examples/custom_policy/surge.rs"]
mod surge;

const GUIDE: &str = "docs/writing-a-policy.md";
const EXAMPLE: &str = "examples/custom_policy";

fn registry() -> Registry {
    Registry::standard()
        .with_queue_order(&smallest_area_first::SmallestAreaFirst)
        .with_price_rule(&surge::Surge)
        .with_meta_policy(&earliest_finish::EarliestFinish)
}

fn read(path: impl AsRef<Path>) -> String {
    let path = path.as_ref();
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The lines between `// ANCHOR: name` and `// ANCHOR_END: name` in `source`, without their common indentation.
fn region(source: &str, name: &str) -> String {
    let (start, end) = (format!("// ANCHOR: {name}"), format!("// ANCHOR_END: {name}"));
    let lines: Vec<&str> =
        source.lines().skip_while(|l| l.trim() != start).skip(1).take_while(|l| l.trim() != end).collect();
    assert!(!lines.is_empty(), "no region `{name}`");
    let indent = lines.iter().filter(|l| !l.trim().is_empty()).map(|l| l.len() - l.trim_start().len()).min();
    let indent = indent.unwrap_or(0);
    lines.iter().map(|l| format!("{}\n", l.get(indent..).unwrap_or(""))).collect()
}

/// Each `<!-- file: path -->` or `<!-- region: path name -->` marker of the guide with the code block after it.
fn shown(guide: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = guide.lines();
    while let Some(line) = lines.next() {
        let Some(marker) = line.strip_prefix("<!-- ").and_then(|l| l.strip_suffix(" -->")) else { continue };
        let fence = lines.next().unwrap_or_default();
        assert!(fence.starts_with("```"), "{GUIDE}: `{line}` is not followed by a code block");
        let block: String = lines.by_ref().take_while(|l| *l != "```").map(|l| format!("{l}\n")).collect();
        out.push((marker.to_string(), block));
    }
    out
}

#[test]
fn test_the_guide_shows_the_example_as_it_is() {
    let guide = read(GUIDE);
    let blocks = shown(&guide);
    let mut files = Vec::new();
    for (marker, block) in &blocks {
        let expected = if let Some(file) = marker.strip_prefix("file: ") {
            files.push(PathBuf::from(file));
            read(file)
        } else if let Some((file, name)) = marker.strip_prefix("region: ").and_then(|r| r.split_once(' ')) {
            region(&read(file), name)
        } else {
            panic!("{GUIDE}: unknown marker `{marker}`");
        };
        assert!(*block == expected, "{GUIDE}: the block after `{marker}` differs from the example; copy it again");
    }
    // Every file of the example but its `main` is shown whole.
    let mut example: Vec<PathBuf> = std::fs::read_dir(EXAMPLE).unwrap().map(|e| e.unwrap().path()).collect();
    example.retain(|p| p.file_name().is_some_and(|n| n != "main.rs"));
    example.sort();
    files.sort();
    assert_eq!(files, example, "{GUIDE} should show every file of {EXAMPLE} but main.rs");
    assert!(blocks.iter().any(|(m, _)| m.starts_with("region: ")), "the registration line is shown");
}

#[test]
fn test_registered_policies_are_listed() {
    let list = schema::kinds_text(&registry());
    let lines = [
        "      queue-order: arrival, shortest-job-first, smallest-area-first (of the FCFS and EASY queues)\n",
        "          smallest-area-first: the fewest PE-seconds (PEs × runtime estimate) first\n",
        "      policy: earliest-finish (registered, one application at a time)\n",
        "          earliest-finish: each job on the site where it finishes first, whatever the price\n",
        "      pricing.rule: fixed, utilisation, demand, auction-cleared, time-of-day, surge (how the posted price moves; \
         see docs/market.md)\n",
        "          surge: the configured price times one plus the jobs waiting per PE\n",
    ];
    for line in lines {
        assert!(list.contains(line), "missing {line:?} in\n{list}");
    }
    // What the guide quotes of the standard list.
    let standard = schema::kinds_text(&Registry::standard());
    let guide = read(GUIDE);
    for line in standard.lines().filter(|l| l.contains("queue-order") || l.contains("shortest-job-first:")) {
        assert!(guide.contains(line), "{GUIDE} should quote `{line}`");
    }
}

#[test]
fn test_unknown_and_refused_names_get_clear_errors() {
    let dir = std::env::temp_dir().join(format!("gridmarket-writing-a-policy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let load = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let workloads = WorkloadRegistry::standard().with(&diurnal::Diurnal);
        let opts = LoadOptions { registry: registry(), workloads, ..LoadOptions::default() };
        Study::load(&path, &opts).map(|study| study.points.len()).map_err(|e| e.to_string())
    };
    let queue = read(format!("{EXAMPLE}/queue_order.toml"));
    let market = read(format!("{EXAMPLE}/meta_policy.toml"));
    assert_eq!(load("queue_order.toml", queue.clone()), Ok(2));
    assert_eq!(load("meta_policy.toml", market.clone()), Ok(2));
    let tradeoff = read(format!("{EXAMPLE}/tradeoff_policy.toml"));
    assert_eq!(load("tradeoff_policy.toml", tradeoff.clone()), Ok(2));
    assert_eq!(load("queue_policy.toml", read(format!("{EXAMPLE}/queue_policy.toml"))), Ok(2));
    // The pricing rule takes `interval` and `bounds`, no key of the other rules; a misspelt name gets a hint.
    let surge = read(format!("{EXAMPLE}/surge.toml"));
    assert_eq!(load("surge.toml", surge.clone()), Ok(2));
    let surge = surge.split("[sweep]").next().unwrap();
    let e = load("surge.toml", surge.replace("{ rule = \"surge\" }", "{ rule = \"surge\", gain = 1 }")).unwrap_err();
    assert!(
        e.contains("providers.cluster.pricing.gain: a key of the utilisation and demand rules, not of \"surge\""),
        "{e}"
    );
    let e = load("surge.toml", surge.replace("{ rule = \"surge\" }", "{ rule = \"surge\", bounds = [0.02, 1] }"));
    assert!(e.unwrap_err().contains("pricing.bounds: the price (0.01) lies outside [0.02, 1]"));
    let e = load("surge.toml", surge.replace("\"surge\"", "\"surdge\"")).unwrap_err();
    assert!(e.contains("unknown value `surdge`") && e.contains("did you mean `surge`?"), "{e}");
    // The workload model's own check, with the file, the line and the key path.
    let diurnal = read(format!("{EXAMPLE}/diurnal.toml"));
    assert_eq!(load("diurnal.toml", diurnal.clone()), Ok(2));
    let swing = diurnal.split("[sweep]").next().unwrap().replace("amplitude = 0.9", "amplitude = 1.5");
    let e = load("diurnal.toml", swing).unwrap_err();
    assert!(e.contains("workloads.users.amplitude: expected a number in [0, 1), found 1.5"), "{e}");
    // A policy of the thesis reads only its own offers; a registered one reads the ch5 keys only on profiles.
    let min_ctt = tradeoff.split("[sweep]").next().unwrap().replace("\"earliest-finish\"", "\"min-ctt\"");
    let e = load("tradeoff_policy.toml", min_ctt.replace("\"profiles\"", "\"slots\"")).unwrap_err();
    assert!(e.contains("metabrokers.mb.offers: the policy \"min-ctt\" of the thesis reads \"profiles\""), "{e}");
    let on_slots = tradeoff.split("[sweep]").next().unwrap().replace("offers = \"profiles\"\n", "");
    let e = load("tradeoff_policy.toml", on_slots).unwrap_err();
    assert!(e.contains("metabrokers.mb.delta: a key of the time/cost trade-off policies"), "{e}");

    // Without the sweep, which would set the key at every point.
    let (queue, market) = (queue.split("[sweep]").next().unwrap(), market.split("[sweep]").next().unwrap());
    // A misspelt name: every name the registry knows, and the closest (the guide quotes this one).
    let misspelt = queue.replace("queue-order = \"smallest-area-first\"", "queue-order = \"smallest-aera-first\"");
    let e = load("queue_order.toml", misspelt).unwrap_err();
    let expected = "queue_order.toml:15:15: providers.cluster.queue-order: unknown value `smallest-aera-first`, expected one \
                    of `arrival`, `shortest-job-first`, `smallest-area-first`\n  hint: did you mean \
                    `smallest-area-first`?";
    assert!(e.ends_with(expected), "{e}");
    assert!(read(GUIDE).contains(&format!("error: {expected}")), "{GUIDE} should quote the error");
    let e = load("meta_policy.toml", market.replace("\"earliest-finish\"\n", "\"earliest-finnish\"\n")).unwrap_err();
    assert!(
        e.contains(
            "metabrokers.mb.policy: unknown value `earliest-finnish`, expected one of `greedy`, `mmc`, `ga`, `lpga`, \
             `hga`, `lp`, `dam`, `sjf`, `fcfs`, `edf-fq`, `hvfq`, `fair-share`, `min-ctt`, `max-ctt`, `suff-ctt`, \
             `greedy-ctt`, `earliest-finish`\n  hint: did you \
             mean `earliest-finish`?"
        ),
        "{e}"
    );

    // Conservative backfilling keeps arrival order, whoever registered the order.
    let conservative = queue.replace("scheduler = \"easy\"", "scheduler = \"conservative\"");
    let e = load("queue_order.toml", conservative).unwrap_err();
    assert!(e.contains("providers.cluster.queue-order: \"smallest-area-first\" applies to the \"fcfs\""), "{e}");
    assert!(e.ends_with("hint: set `scheduler = \"easy\"` or remove `queue-order`"), "{e}");
    // Without the registration the names are unknown.
    let path = dir.join("queue_order.toml");
    std::fs::write(&path, queue).unwrap();
    let e = Study::load(&path, &LoadOptions::default()).unwrap_err().to_string();
    assert!(e.contains("unknown value `smallest-area-first`, expected one of `arrival`, `shortest-job-first`"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[should_panic(expected = "the pricing rule name `demand` is taken")]
fn test_a_pricing_rule_takes_no_built_in_name() {
    struct Demand;
    impl agents::provider::pricing::NamedPriceRule for Demand {
        fn name(&self) -> &'static str {
            "demand"
        }
        fn about(&self) -> &'static str {
            "a clash"
        }
        fn check(
            &self,
            _: agents::provider::pricing::RuleKeys,
            _: f64,
        ) -> Result<Box<dyn agents::provider::pricing::RuleSettings>, agents::registry::Invalid> {
            Ok(Box::new(surge::Surge))
        }
    }
    let _ = Registry::standard().with_price_rule(&Demand);
}

#[test]
#[should_panic(expected = "the queue order name `smallest-area-first` is taken")]
fn test_a_queue_order_name_registers_once() {
    let _ = registry().with_queue_order(&smallest_area_first::SmallestAreaFirst);
}

/// Named like one of Garg's policies.
struct Greedy;

impl agents::metabroker::MetaPolicy for Greedy {
    fn name(&self) -> &'static str {
        "greedy"
    }
    fn about(&self) -> &'static str {
        "a clash"
    }
    fn choose<'c>(
        &self,
        _: &agents::metabroker::App,
        candidates: &'c [agents::metabroker::Candidate],
    ) -> Option<&'c agents::metabroker::Candidate> {
        candidates.first()
    }
}

#[test]
#[should_panic(expected = "the meta-broker policy name `greedy` is taken")]
fn test_a_meta_policy_takes_no_name_of_the_thesis() {
    let _ = Registry::standard().with_meta_policy(&Greedy);
}

/// A registered policy maps on chapter 6's data centres too: the hand-made case (two applications that fit, one wider
/// than either data centre) with earliest finish instead of GMCE.
#[test]
fn test_a_registered_policy_maps_on_data_centres() {
    let set = vec![("energy-metabrokers.mb.policy".to_string(), "\"earliest-finish\"".to_string())];
    let opts = LoadOptions { registry: registry(), set, ..LoadOptions::default() };
    let study = Study::load(Path::new("scenarios/garg-ch6/hand-made.toml"), &opts).unwrap();
    let interrupt = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let metrics = gridmarket::runner::run::run(&study.points[0].plan, 0, &interrupt, None).unwrap().measured.metrics;
    let get = |k: &str| metrics.get(k).copied().unwrap_or_else(|| panic!("no {k}"));
    assert_eq!((get("jobs.completed"), get("jobs.rejected")), (2.0, 1.0));
    assert_eq!(get("energy-metabrokers.mb.assigned"), 2.0);
    // Unregistered, the name is unknown, with the thesis's names listed.
    let set = vec![("energy-metabrokers.mb.policy".to_string(), "\"earliest-finish\"".to_string())];
    let e = Study::load(Path::new("scenarios/garg-ch6/hand-made.toml"), &LoadOptions { set, ..LoadOptions::default() })
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown value `earliest-finish`, expected one of `gmce`, `mce-mce`"), "{e}");
}
