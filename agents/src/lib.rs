//! gridmarket's agents: the simulated clock on actix, the message protocol, and one module per actor.
//!
//! Every user broker, resource provider, data center, gateway, meta-broker and market exchange is an actor that
//! exchanges [`protocol::Msg`] envelopes on a simulated clock (the `gridmarket-kernel` crate, specialised in
//! [`sim`]); the few types that messages and agents share (job ids, lease types, preemption kinds) live in
//! [`model`]. Policies live inside the agent that owns them. Each kind of agent declares itself to the
//! [`registry`]. This crate never reads files, parses arguments or prints reports: that is the `gridmarket`
//! application.
#![warn(missing_docs)]

pub mod broker;
pub mod cpu_resource;
pub mod datacenter;
pub mod directory;
pub mod exchange;
pub mod gateway;
pub mod ledger;
pub mod market;
pub mod matchmaker;
pub mod matchmaking;
pub mod metabroker;
pub mod model;
pub mod node;
pub mod protocol;
pub mod provider;
pub mod registry;
pub mod report;
pub mod request_source;
pub mod sim;
pub mod splitter;
pub mod standard;
pub mod testbed;
pub mod utility;
