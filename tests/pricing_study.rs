//! The study of `examples/pricing_study/`: a pricing rule of one's own, added by one file and one line, known to the
//! whole command line (`gridmarket::cli`) and run from `run` alone into a report; `docs/market.md` shows it as it is.

use std::path::Path;
use std::process::ExitCode;

use agents::registry::Registry;
use gridmarket::scenario::{LoadOptions, Plugins, Study};

#[path = "../examples/pricing_study/dead_band.rs"]
mod dead_band;

const EXAMPLE: &str = "examples/pricing_study";

fn plugins() -> Plugins {
    Plugins { registry: Registry::standard().with_price_rule(&dead_band::DeadBand), ..Plugins::default() }
}

fn read(path: impl AsRef<Path>) -> String {
    let path = path.as_ref();
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

#[test]
fn test_run_alone_reports_the_study_of_a_rule_of_ones_own() {
    let out = std::env::temp_dir().join(format!("gridmarket-pricing-study-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let study = format!("{EXAMPLE}/study.toml");
    let args = ["gridmarket", "run", &study, "--quick", "--quiet", "--out", out.to_str().unwrap()];
    assert_eq!(gridmarket::cli::main_from(args, plugins()), ExitCode::SUCCESS);
    // Every point and replication is a row of runs.csv, under its label.
    let runs = read(out.join("runs.csv"));
    for label in ["fixed", "demand", "dead-band"] {
        let rows = runs.lines().filter(|l| l.split(',').nth(1) == Some(label) && l.contains(",market.price,"));
        assert_eq!(rows.count(), 3, "{label}: one row of market.price per replication in\n{runs}");
    }
    // The report holds the own hypothesis judged on paired seeds, the check, and the price over time in bands.
    let report = read(out.join("report.md"));
    assert!(report.contains("| market.gini_load: fixed > dead-band |"), "{report}");
    assert!(report.contains("| market.price_volatility in [0.01, 1] at providers.site.pricing=dead-band |"));
    assert!(report.contains("![pricing-study-price-over-time.svg]"), "{report}");
    assert!(read(out.join("pricing-study-price-over-time.svg")).contains("dead-band"));
    // The same command over the standard registry does not know the rule, and says so with the key.
    let code = gridmarket::cli::main_from(["gridmarket", "validate", &study], Plugins::default());
    assert_eq!(code, ExitCode::from(78));
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn test_a_misspelt_rule_or_a_bad_key_of_it_is_answered_at_its_key() {
    let dir = std::env::temp_dir().join(format!("gridmarket-pricing-study-typo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("study.toml");
    let profiles = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/profiles/");
    let text = read(format!("{EXAMPLE}/study.toml")).replace("../../scenarios/profiles/", profiles.to_str().unwrap());
    let opts = LoadOptions { registry: plugins().registry, ..LoadOptions::default() };
    let load = |text: String| {
        std::fs::write(&path, text).unwrap();
        Study::load(&path, &opts).map(|_| ()).unwrap_err().to_string()
    };
    let e = load(text.replace("rule = \"dead-band\"", "rule = \"dead-bnad\""));
    assert!(e.contains("unknown value `dead-bnad`") && e.contains("did you mean `dead-band`?"), "{e}");
    // The rule's own keys are checked by its own check, the error naming the key (in the swept table: the line is the
    // sweep's); a key of a built-in rule is refused with the rules that take it.
    let e = load(text.replace("band = [0.4, 0.8]", "band = [0.8, 0.4]"));
    let at = format!("{}:41:1: sweep.providers.site.pricing: band: expected 0 <= low <= high <= 1", path.display());
    assert!(e.contains(&at), "{e}");
    let e = load(text.replace("step = 0.1,", "step = 0.1, gain = 2,"));
    assert!(e.contains("pricing: gain: a key of the utilisation and demand rules, not of \"dead-band\""), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn test_the_guide_shows_the_rule_and_its_registration_line() {
    let guide = read("docs/market.md");
    let main = read(format!("{EXAMPLE}/main.rs"));
    let line = main.lines().find(|l| l.contains("with_price_rule")).expect("main.rs registers the rule").trim();
    assert!(guide.contains(line), "docs/market.md should show `{line}`");
    let rule = read(format!("{EXAMPLE}/dead_band.rs"));
    for quoted in ["\"dead-band\"", "key_names::<Keys>()", "let keys: Keys = keys.parse()?;"] {
        assert!(rule.contains(quoted) && guide.contains(quoted), "both should hold {quoted}");
    }
}
