//! The round routine every meta-broker of Garg (2010) shares, whatever its policy (ch3–4 placement on slots, ch5
//! time/cost trade-off, ch6 energy-aware mapping, ch7 queue matching): providers register into a catalogue and users
//! into the market; at the end of every scheduling interval (SI) with work waiting, every registered provider is
//! asked for its offer; once every answer is in, the meta-broker runs its policy; each placement is held with its
//! provider under a request number until the provider answers.
//!
//! What differs between the meta-brokers (the question asked, the policy, what a placement becomes) stays in each;
//! [`Rounds`] owns the state they all need and the rules they all follow:
//! - a query is answered once per provider; answers are counted, not searched for (a thousand sites answering one by
//!   one would make a search quadratic);
//! - a round that comes while a query is out asks nothing (the answers on their way serve the queued work);
//! - a provider that registers while a query is out was not asked: it counts as answered, and is asked next round.

use std::collections::{BTreeMap, BTreeSet};

use crate::protocol::{MarketMsg, Msg};
use crate::sim::{AgentId, Ctx};

/// The catalogue, the users, the interval's timer, the query out and the placements held (see the module
/// documentation). `Offer` is what a provider last reported; `Hold` what the meta-broker remembers of a placement
/// sent to a provider until it answers.
pub(crate) struct Rounds<Offer, Hold> {
    /// Scheduling interval SI \[s\].
    interval: f64,
    /// The providers of this market, which may register.
    members: BTreeSet<AgentId>,
    /// Each registered provider's last offer, and whether it answered the query out.
    catalogue: BTreeMap<AgentId, (Offer, bool)>,
    users: BTreeSet<AgentId>,
    armed: bool,
    asking: bool,
    /// Providers yet to answer the query out.
    awaiting: usize,
    /// Timer rounds, and the rounds that asked.
    ticks: u64,
    queries: u64,
    holds: BTreeMap<u64, Hold>,
    next_request: u64,
}

impl<Offer, Hold> Rounds<Offer, Hold> {
    /// The routine of a meta-broker over the providers `members`, with rounds every `interval` seconds.
    pub(crate) fn new(interval: f64, members: impl IntoIterator<Item = AgentId>) -> Rounds<Offer, Hold> {
        Rounds {
            interval,
            members: members.into_iter().collect(),
            catalogue: BTreeMap::new(),
            users: BTreeSet::new(),
            armed: false,
            asking: false,
            awaiting: 0,
            ticks: 0,
            queries: 0,
            holds: BTreeMap::new(),
            next_request: 0,
        }
    }

    /// Scheduling interval SI \[s\].
    pub(crate) fn interval(&self) -> f64 {
        self.interval
    }

    /// Whether `provider` belongs to this market.
    pub(crate) fn admits(&self, provider: AgentId) -> bool {
        self.members.contains(&provider)
    }

    /// Enters a member's first offer into the catalogue (see the module documentation for one registering while a
    /// query is out). Returns whether it was new.
    pub(crate) fn enter(&mut self, provider: AgentId, offer: Offer) -> bool {
        let new = !self.catalogue.contains_key(&provider);
        self.catalogue.insert(provider, (offer, self.asking));
        new
    }

    /// A provider's `Market::RegisterProvider`: a member enters the catalogue with `offer` and is answered
    /// `Registered`; another is refused.
    pub(crate) fn register_provider(&mut self, from: AgentId, offer: Offer, ctx: &mut Ctx<'_>) {
        let answer = if self.admits(from) {
            self.enter(from, offer);
            MarketMsg::Registered
        } else {
            MarketMsg::RegisterRefused { reason: format!("{} does not schedule on this provider", ctx.name()) }
        };
        ctx.send(from, Msg::Market(answer));
    }

    /// A user's `Market::RegisterUser`, answered `Registered`.
    pub(crate) fn register_user(&mut self, from: AgentId, ctx: &mut Ctx<'_>) {
        self.users.insert(from);
        ctx.send(from, Msg::Market(MarketMsg::Registered));
    }

    /// Whether `user` has registered.
    pub(crate) fn is_user(&self, user: AgentId) -> bool {
        self.users.contains(&user)
    }

    /// Wakes the meta-broker at the end of the current interval k·SI, unless a round is already armed.
    pub(crate) fn arm(&mut self, ctx: &mut Ctx<'_>) {
        if !self.armed {
            self.armed = true;
            let delay = crate::sim::until_next_multiple(ctx.now().secs(), self.interval);
            ctx.wake_in(delay, crate::protocol::TimerMsg::Round { n: self.ticks });
        }
    }

    /// The round's timer fired: a later round may be armed.
    pub(crate) fn tick(&mut self) {
        self.armed = false;
        self.ticks += 1;
    }

    /// Whether a query is out.
    pub(crate) fn asking(&self) -> bool {
        self.asking
    }

    /// Sends `query` to every registered provider, unless one is already out or none has registered; returns whether
    /// it was sent.
    pub(crate) fn ask(&mut self, query: impl Fn() -> Msg, ctx: &mut Ctx<'_>) -> bool {
        if self.asking || self.catalogue.is_empty() {
            return false;
        }
        self.asking = true;
        self.queries += 1;
        self.awaiting = self.catalogue.len();
        for (&provider, entry) in &mut self.catalogue {
            entry.1 = false;
            ctx.send(provider, query());
        }
        true
    }

    /// A registered provider's answer (or any later offer of its): kept as its offer. Returns whether it was the
    /// last answer the query out waited for, which ends the query.
    pub(crate) fn answer(&mut self, from: AgentId, offer: Offer) -> bool {
        let Some(entry) = self.catalogue.get_mut(&from) else { return false };
        let first = self.asking && !entry.1;
        *entry = (offer, true);
        if first {
            self.awaiting -= 1;
            if self.awaiting == 0 {
                self.asking = false;
                return true;
            }
        }
        false
    }

    /// Remembers `hold` until its provider answers; returns the request number to send it under.
    pub(crate) fn hold(&mut self, hold: Hold) -> u64 {
        let request = self.next_request;
        self.next_request += 1;
        self.holds.insert(request, hold);
        request
    }

    /// What was held under `request`, now answered (none if it was not, or was answered already).
    pub(crate) fn release(&mut self, request: u64) -> Option<Hold> {
        self.holds.remove(&request)
    }

    /// The placements awaiting their providers' answers.
    pub(crate) fn held(&self) -> impl Iterator<Item = &Hold> {
        self.holds.values()
    }

    /// The catalogue in provider order: who, and its last offer.
    pub(crate) fn offers(&self) -> impl ExactSizeIterator<Item = (AgentId, &Offer)> {
        self.catalogue.iter().map(|(&id, (offer, _))| (id, offer))
    }

    /// A registered provider's last offer.
    pub(crate) fn offer(&self, provider: AgentId) -> Option<&Offer> {
        self.catalogue.get(&provider).map(|e| &e.0)
    }

    /// The registered providers, in order.
    pub(crate) fn providers(&self) -> Vec<AgentId> {
        self.catalogue.keys().copied().collect()
    }

    /// Whether every member has registered.
    pub(crate) fn all_registered(&self) -> bool {
        self.catalogue.len() == self.members.len()
    }

    /// Registered providers.
    pub(crate) fn registered(&self) -> usize {
        self.catalogue.len()
    }

    /// Registered users.
    pub(crate) fn users(&self) -> usize {
        self.users.len()
    }

    /// Rounds whose timer fired.
    pub(crate) fn ticks(&self) -> u64 {
        self.ticks
    }

    /// Rounds that asked the providers.
    pub(crate) fn queries(&self) -> u64 {
        self.queries
    }
}
