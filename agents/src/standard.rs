//! The standard house: every kind of agent gridmarket ships and its standard policies ([`Registry::standard`]), and
//! the services a kind's agents offer in a simulation (gridmarket's [`World`]). The one module that names every
//! agent module: the registry's types lie below them all, so a kind uses them without a circle.

use std::sync::OnceLock;

use crate::protocol::Msg;
use crate::registry::Registry;
use crate::report::Report;
use crate::sim::{GridMarket, World};
use crate::{
    broker, cpu_resource, datacenter, directory, exchange, gateway, market, matchmaker, metabroker, node, provider,
    request_source, splitter, utility,
};

impl Registry {
    /// gridmarket's own kinds and policies. Providers come first: the others refer to them.
    pub fn standard() -> Registry {
        let registry = Registry::empty()
            .with(&provider::kind::ProviderKind)
            .with(&datacenter::kind::DataCentreKind)
            .with(&gateway::kind::GatewayKind)
            .with(&metabroker::kind::MetaBrokerKind)
            .with(&metabroker::energy::kind::EnergyMetaBrokerKind)
            .with(&exchange::kind::ExchangeKind)
            .with(&broker::kind::BrokerKind)
            .with(&market::kind::MarketKind)
            .with(&directory::kind::DirectoryKind)
            .with(&cpu_resource::kind::CpuResourceKind)
            .with(&matchmaker::kind::AsBrokerKind)
            .with(&matchmaker::kind::TransparentBrokerKind)
            .with(&splitter::kind::SplitterKind)
            .with(&request_source::kind::SourceKind)
            .with(&utility::kind::UtilityKind)
            .with(&node::kind::NodeKind)
            .with_queue_order(&provider::scheduler::order::ShortestJobFirst);
        let registry = provider::price_rules::BUILT_IN.into_iter().fold(registry, Registry::with_price_rule);
        let registry = exchange::traders::BUILT_IN.into_iter().fold(registry, |r, s| r.with_trader_strategy(s));
        broker::strategy::BUILT_IN.into_iter().fold(registry, Registry::with_provider_choice)
    }
}

/// The standard registry.
impl Default for Registry {
    fn default() -> Registry {
        Registry::standard()
    }
}

impl World for GridMarket {
    type Msg = Msg;
    type Report = Report;

    /// The services the standard kind called `kind` declares ([`AgentKind::services`]); none for a kind that is not
    /// standard (a test's probe).
    ///
    /// [`AgentKind::services`]: crate::registry::AgentKind::services
    fn services(kind: &str) -> Vec<&'static str> {
        static STANDARD: OnceLock<Registry> = OnceLock::new();
        let services = STANDARD.get_or_init(Registry::standard).kind(kind).map_or(&[][..], |k| k.services());
        services.iter().map(|s| s.name()).collect()
    }
}
