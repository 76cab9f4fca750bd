//! Example: a new agent kind, the toy "echo market" (`echo.rs`), added to the registry with one line, then listed,
//! documented, validated, run and measured by the application like gridmarket's own kinds.
//!
//! Run: `cargo run --example echo_market`

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use agents::registry::Registry;
use gridmarket::runner::{RunOptions, run_study};
use gridmarket::scenario::{LoadOptions, Plugins, Study};
use gridmarket::schema;

mod echo;

fn main() -> anyhow::Result<()> {
    let registry = Registry::standard().with(&echo::KIND);
    print!("{}", schema::kinds_text(&registry));
    let plugins = Plugins { registry, ..Plugins::default() };
    let keys = schema::markdown(&plugins);
    println!("{} scenario keys, of which the echo kind's:", keys.lines().count());
    for line in keys.lines().filter(|l| l.starts_with("| `echoes")) {
        println!("  {line}");
    }

    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/echo_market/echo_market.toml");
    let study = Study::load(&file, &LoadOptions { registry: plugins.registry, ..LoadOptions::default() })?;
    // A folder of its own: another checkout's run of this example is another scenario file.
    let out = std::env::temp_dir().join(format!("gridmarket-echo-market-{}", std::process::id()));
    let opts = RunOptions::quiet(out.clone(), 1);
    let result = run_study(&study, &opts, &Arc::new(AtomicBool::new(false)))?;
    let metrics = &result.runs[0].metrics;
    for (k, v) in metrics.iter().filter(|(k, _)| k.starts_with("echoes.") || *k == "answers") {
        println!("{k} = {v}");
    }
    // 3 chatty members ask the 2 quiet ones at t = 10, 20 ... 100 (which never answer); the 2 quiet ones ask
    // chatty-0 at t = 25, 50, 75, 100 and get every answer.
    assert_eq!(metrics["echoes.chatty-0.asked"], 20.0);
    assert_eq!(metrics["echoes.quiet-1.answers"], 4.0);
    assert_eq!(metrics["answers"], 8.0);
    println!("outputs: {}", out.display());
    Ok(())
}
