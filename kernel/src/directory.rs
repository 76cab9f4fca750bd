//! The registry of agents (names and kinds) and the latency table; fixed once the simulation is built.

use std::collections::{BTreeMap, HashMap};

use super::{AgentId, Delay, SimError};

/// Who is in the simulation: every agent's name and kind, and the latencies between them.
///
/// Built before the run and then only read (shared by all actors behind an `Arc`), so agents can look peers up by
/// name or by the services they offer without sharing any mutable state.
#[derive(Debug, Default)]
pub struct Directory {
    names: Vec<String>,
    kinds: Vec<u16>,
    kind_names: Vec<String>,
    by_name: HashMap<String, AgentId>,
    by_service: BTreeMap<&'static str, Vec<AgentId>>,
    latency: Latency,
}

impl Directory {
    /// Registers an agent offering `services`; names must be unique.
    pub(crate) fn add(&mut self, name: &str, kind: &str, services: &[&'static str]) -> Result<AgentId, SimError> {
        if self.by_name.contains_key(name) {
            return Err(SimError::DuplicateName { name: name.to_string() });
        }
        let id = AgentId(self.names.len() as u32);
        let kind_ix = match self.kind_names.iter().position(|k| k == kind) {
            Some(i) => i,
            None => {
                self.kind_names.push(kind.to_string());
                self.kind_names.len() - 1
            }
        };
        self.names.push(name.to_string());
        self.kinds.push(kind_ix as u16);
        self.by_name.insert(name.to_string(), id);
        for &service in services {
            self.by_service.entry(service).or_default().push(id);
        }
        Ok(id)
    }

    /// Number of agents.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether no agent is registered.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Whether `id` is a registered agent.
    #[inline]
    pub fn contains(&self, id: AgentId) -> bool {
        id.index() < self.names.len()
    }

    /// The agent called `name`.
    pub fn lookup(&self, name: &str) -> Option<AgentId> {
        self.by_name.get(name).copied()
    }

    /// The agents offering `service` ([`World::services`](crate::World::services)), in registration order.
    pub fn offering(&self, service: &str) -> &[AgentId] {
        self.by_service.get(service).map_or(&[], Vec::as_slice)
    }

    /// Whether agent `id` offers `service`.
    pub fn offers(&self, id: AgentId, service: &str) -> bool {
        self.offering(service).binary_search(&id).is_ok()
    }

    /// The name of `id`.
    pub fn name(&self, id: AgentId) -> Option<&str> {
        self.names.get(id.index()).map(String::as_str)
    }

    /// The kind of `id`.
    pub fn kind(&self, id: AgentId) -> Option<&str> {
        self.kinds.get(id.index()).map(|&k| self.kind_names[k as usize].as_str())
    }

    /// The latency table.
    pub fn latency(&self) -> &Latency {
        &self.latency
    }

    pub(crate) fn latency_mut(&mut self) -> &mut Latency {
        &mut self.latency
    }

    /// Network latency from `from` to `to` (both registered).
    #[inline]
    pub(crate) fn latency_between(&self, from: AgentId, to: AgentId) -> f64 {
        if self.latency.is_zero() || from == to {
            return 0.0;
        }
        let kinds = (self.kinds[from.index()], self.kinds[to.index()]);
        self.latency.between(from, to, kinds)
    }

    pub(crate) fn kind_index(&self, kind: &str) -> Option<u16> {
        self.kind_names.iter().position(|k| k == kind).map(|i| i as u16)
    }
}

/// Message latency between agents: zero unless configured, per pair of kinds, overridden per pair of agents.
/// A message from an agent to itself (a timer) has no latency.
#[derive(Debug, Default, Clone)]
pub struct Latency {
    default: f64,
    by_kind: HashMap<(u16, u16), f64>,
    by_pair: HashMap<(AgentId, AgentId), f64>,
    /// Some latency is set (not zero): kept so that every send need not look at three fields.
    any: bool,
}

impl Latency {
    /// Whether every latency is zero (the fast path, and the papers' assumption).
    #[inline]
    pub fn is_zero(&self) -> bool {
        !self.any
    }

    pub(crate) fn set_default(&mut self, d: Delay) {
        self.default = d.secs();
        self.any = self.default != 0.0 || !self.by_kind.is_empty() || !self.by_pair.is_empty();
    }

    pub(crate) fn set_kinds(&mut self, from: u16, to: u16, d: Delay) {
        self.by_kind.insert((from, to), d.secs());
        self.any = true;
    }

    pub(crate) fn set_pair(&mut self, from: AgentId, to: AgentId, d: Delay) {
        self.by_pair.insert((from, to), d.secs());
        self.any = true;
    }

    fn between(&self, from: AgentId, to: AgentId, kinds: (u16, u16)) -> f64 {
        if let Some(&l) = self.by_pair.get(&(from, to)) {
            return l;
        }
        self.by_kind.get(&kinds).copied().unwrap_or(self.default)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_are_found_by_service_in_registration_order() {
        let mut dir = Directory::default();
        let a = dir.add("a", "seller", &["sells"]).unwrap();
        let b = dir.add("b", "buyer", &["buys"]).unwrap();
        let c = dir.add("c", "trader", &["buys", "sells"]).unwrap();
        assert_eq!(dir.offering("sells"), [a, c]);
        assert_eq!(dir.offering("buys"), [b, c]);
        assert!(dir.offering("clears").is_empty());
        assert!(dir.offers(c, "buys") && !dir.offers(a, "buys"));
    }
}
