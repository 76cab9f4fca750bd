//! The `gridmarket` command line over gridmarket's own kinds, policies and workload models ([`gridmarket::cli`]).

use std::process::ExitCode;

use gridmarket::scenario::Plugins;

fn main() -> ExitCode {
    gridmarket::cli::main(Plugins::default())
}
