//! The standard workload models: the one module that names every model, so that the registry's types lie below
//! them all.

use super::registry::WorkloadRegistry;
use super::{bot, das2, local_requests, lublin, metabroker, poisson, trace};

impl WorkloadRegistry {
    /// gridmarket's own models and trace formats.
    pub fn standard() -> WorkloadRegistry {
        WorkloadRegistry::empty()
            .with(&lublin::Lublin)
            .with(&das2::Das2)
            .with(&bot::Bot)
            .with(&metabroker::Metabroker)
            .with(&poisson::Poisson)
            .with(&local_requests::LocalRequests)
            .with(&trace::SWF)
            .with(&trace::GWF)
            .with(&trace::CSV)
    }
}

/// The standard models.
impl Default for WorkloadRegistry {
    fn default() -> Self {
        WorkloadRegistry::standard()
    }
}
