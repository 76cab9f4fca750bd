//! The registry of agent kinds: a kind the application has never heard of (the echo market of
//! `examples/echo_market`) is added with one line and appears in `list`, `schema`, validation and metrics.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use agents::registry::Registry;
use gridmarket::runner::{RunOptions, run_study};
use gridmarket::scenario::{LoadOptions, Plugins, Study};
use gridmarket::schema;

#[path = "../examples/echo_market/echo.rs"]
mod echo;

fn registry() -> Registry {
    Registry::standard().with(&echo::KIND)
}

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_new_kind_is_listed_and_documented() {
    let list = schema::kinds_text(&registry());
    assert!(list.contains("echo [echoes.<name>]: a toy market"), "{list}");
    assert!(list.contains("answer: always, never"), "{list}");
    let keys = schema::markdown(&Plugins { registry: registry(), ..Plugins::default() });
    for key in
        ["| `echoes` |", "| `echoes.<name>.peers` |", "| `echoes.<name>.profile` |", "| `providers.<name>.pes` |"]
    {
        assert!(keys.contains(key), "missing {key}");
    }
    assert!(!schema::markdown(&Plugins::default()).contains("echoes"));
}

#[test]
fn a_new_kind_is_validated_with_located_errors() {
    let dir = std::env::temp_dir().join(format!("gridmarket-registry-{}", std::process::id()));
    let load = |text: &str| {
        let path = write(&dir, "echo.toml", text);
        Study::load(&path, &LoadOptions { registry: registry(), ..LoadOptions::default() }).map(|_| ())
    };
    let ok = "horizon = 10\n[echoes.a]\npeers = \"a\"\ninterval = 1\n";
    load(ok).unwrap();
    let e = load("horizon = 10\n[echoes.a]\npeers = \"b\"\ninterval = 1\n").unwrap_err().to_string();
    assert!(e.ends_with("echo.toml:3:9: echoes.a.peers: no echo named `b`\n  hint: did you mean `a`?"), "{e}");
    let e = load("horizon = 10\n[echoes.a]\npeers = \"a\"\ninterval = 1\nanswer = \"sometimes\"\n").unwrap_err();
    assert!(e.to_string().contains("echoes.a.answer: unknown value `sometimes`, expected `always` or `never`"), "{e}");
    let e = load("horizon = 10\n[echos.a]\npeers = \"a\"\ninterval = 1\n").unwrap_err();
    assert_eq!(e.hint.as_deref(), Some("did you mean `echoes`?"), "{e}");
    // Without the kind in the registry the table is unknown.
    let path = write(&dir, "plain.toml", ok);
    let e = Study::load(&path, &LoadOptions::default()).unwrap_err();
    assert!(e.to_string().contains("unknown key `echoes`"), "{e}");
}

#[test]
fn a_new_kind_runs_and_reports_metrics() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/echo_market/echo_market.toml");
    let study = Study::load(&file, &LoadOptions { registry: registry(), ..LoadOptions::default() }).unwrap();
    let out = std::env::temp_dir().join(format!("gridmarket-registry-run-{}", std::process::id()));
    let opts = RunOptions::quiet(out, 1);
    let result = run_study(&study, &opts, &Arc::new(AtomicBool::new(false))).unwrap();
    let m = &result.runs[0].metrics;
    assert_eq!(m["echoes.chatty-2.asked"], 20.0);
    assert_eq!(m["echoes.chatty-0.answers"], 0.0, "the quiet ones never answer");
    assert_eq!(m["echoes.quiet-0.answers"], 4.0);
    assert_eq!(m["answers"], 8.0, "summed over the kind's members");
}
