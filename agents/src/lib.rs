//! gridmarket's agents: the simulated clock on actix, the message protocol, and one module per actor.
//!
//! Every user broker, resource provider, data center, gateway, meta-broker and market exchange is an actor that
//! exchanges [`protocol::Msg`] envelopes on a simulated clock (the `gridmarket-kernel` crate, specialised in
//! [`sim`]). Policies live inside the agent that owns
//! them. This crate never reads files, parses arguments or prints reports: that is the `gridmarket` application.
#![warn(missing_docs)]

pub mod broker;
pub mod gateway;
pub mod metabroker;
pub mod protocol;
pub mod provider;
pub mod registry;
pub mod report;
pub mod sim;
pub mod testbed;
