//! Example: a pricing study of one's own from the command line, with a pricing rule added in one file and one line.
//!
//! This example demonstrates in particular:
//! - a pricing rule of one's own (`dead_band.rs`, a `NamedPriceRule`), which providers select with
//!   `pricing = { rule = "dead-band" }`;
//! - the whole `gridmarket` command line over a registry holding it (`gridmarket::cli::main`): `run`, `validate`,
//!   `list` and `schema` know the rule by name, and "did you mean" suggests it;
//! - a study swept over labelled pricing tables (`study.toml`): fixed prices, the demand rule and the dead band, on the
//!   same users and sites, with the report `run` writes (summary, paired differences, price and load as mean ± CI
//!   bands over the replications).
//!
//! Run: `cargo run --release --example pricing_study -- run examples/pricing_study/study.toml`

use std::process::ExitCode;

use agents::registry::Registry;
use gridmarket::scenario::Plugins;

mod dead_band;

fn main() -> ExitCode {
    // ANCHOR: registry
    let registry = Registry::standard().with_price_rule(&dead_band::DeadBand);
    // ANCHOR_END: registry
    gridmarket::cli::main(Plugins { registry, ..Plugins::default() })
}
