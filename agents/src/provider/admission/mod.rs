//! Admission control of external requests in the local resource manager.

pub mod model;
