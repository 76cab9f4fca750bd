//! gridmarket, the application: scenario files, workloads, the runner (replications, sweeps), statistics, outputs
//! and reports. The agents and the simulated clock live in the `agents` crate.

pub mod analytic;
pub mod charts;
pub mod cli;
pub mod folder;
pub mod lock;
pub mod output;
#[cfg(feature = "parquet")]
pub mod parquet;
pub mod plot;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod schema;
pub mod slurm;
pub mod stats;
pub mod workload;
