//! The reproduction family of Garg (2010) ch5, `scenarios/garg-ch5/`: every file loads with its targets and sanity
//! checks, and its `--quick` size runs end to end with every sanity check met.

mod family;

use std::path::Path;

use gridmarket::scenario::{LoadOptions, Study};

const FAMILY: &str = "scenarios/garg-ch5";
const FILES: [&str; 5] = ["case1.toml", "case2.toml", "interval.toml", "sample-size.toml", "data-transfer.toml"];

#[test]
fn test_family_runs_at_quick_size() {
    for file in FILES {
        let study =
            Study::load(&Path::new(FAMILY).join(file), &LoadOptions { quick: true, ..LoadOptions::default() }).unwrap();
        assert!(!study.targets.is_empty(), "{file}: the chapter's claims as targets");
        let result = family::run(&study, file);
        assert!(!result.checks.is_empty(), "{file}");
        for check in &result.checks {
            assert_eq!(check.outcome.label(), "pass", "{file}: {} measured {}", check.target, check.measured);
        }
        // Every application is ticketed or refused as wider than every site, once.
        for s in &result.summaries {
            let (tickets, wide) = (s["metabrokers.mb.tickets"].mean, s["metabrokers.mb.too_wide"].mean);
            assert!(tickets > 0.0, "{file}");
            assert_eq!(tickets + wide, s["jobs.total"].mean, "{file}");
            assert_eq!(tickets, s["jobs.completed"].mean, "{file}");
        }
    }
}
