//! Pricing strategies: how a provider's posted price [G$ per PE-second] moves by its own rule, so that prices emerge
//! from what the agents do instead of being constants.
//!
//! A strategy is one [`PriceRule`]: from what the provider saw over the last repricing interval (an
//! [`Observation`]) it proposes the next price. The provider clamps the proposal to the rule's bounds, posts it
//! (its `price` from then on: new claims and submissions are accepted at it, jobs already accepted keep the price
//! they were accepted at), and announces a change to every user broker as `Market::PriceChange`, so that brokers
//! that choose by price react. The rules ([`Rule`]):
//!
//! - **fixed**: the configured price, for ever (the default).
//! - **utilisation**: p' = p · (1 + g · (x − x*)), where x is the utilisation over the last interval (busy
//!   PE-seconds over PE-seconds; `signal = "queue"`: the mean number of jobs waiting per PE), x* the target and g
//!   the gain. The price rises when the provider is busier than its target and falls when it is idler.
//! - **demand**: the same update with x = D / S, the PE-seconds requested over the last interval (claims,
//!   submissions and reservations, granted or not, each its PEs × estimate) over the PE-seconds it had to offer
//!   (PEs × interval); the target x* defaults to 1, demand meeting supply.
//! - **auction-cleared**: the price the exchange's last call market cleared at, whenever the provider hears of one
//!   (`Exchange::Cleared`, for providers that ask in the exchange's call markets).
//! - **time-of-day**: p' = p0 · f(h), where p0 is the configured price and f the factor of the schedule's entry in
//!   force at hour h of the day (peak and off-peak tariffs).
//!
//! Every rule a scenario names is a [`NamedPriceRule`] in the registry, the built-in ones (`price_rules`) as one's
//! own (`Registry::with_price_rule`): it says when it revises the price ([`Revision`]), declares its own keys beside
//! `rule`, `interval` and `bounds`, checks them, and builds each provider's [`PriceRule`]. [`RawPricing::check`] is
//! the one path from a `pricing` table to a [`PricingConfig`].
//!
//! Bounds: every price is clamped to `[low, high]` (`bounds`; by default [p0 / 10, 10 · p0] for the feedback rules,
//! [0, 10^6] for the others). A proposal that is not a finite non-negative number (a gain so high that the factor
//! turns negative, say) is clamped too, NaN keeping the price as it was, and the first such proposal of a provider is
//! reported as a warning; `price_clamped` counts every clamp.
//!
//! Stability of the feedback rules (the cobweb theorem in the form of a discrete tâtonnement): if the brokers' demand
//! answers the price posted for an interval, x(p) near the price p* where x(p*) = x* is x* − k (p − p*) with k =
//! −dx/dp > 0, so the deviation e = p − p* evolves as e' = (1 − g η) e with η = k p* (the elasticity of the signal to
//! the price at p*). The price converges monotonically when g η < 1, in damped oscillations when 1 < g η < 2, and
//! oscillates with a growing amplitude, until the bounds hold it, when g η > 2.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::{Provider, ProviderConfig};
use crate::model::JobId;
use crate::model::Service;
use crate::protocol::{JobMsg, JobSpec, LeaseMsg, MarketMsg, Msg, TimerMsg};
use crate::registry::limits::{MAX_PRICE, short};
use crate::registry::values::Interval;
use crate::registry::words::Worded;
use crate::registry::{self, Invalid, Metric, Registry, Unit, did_you_mean};
use crate::report::{Report, Series};
use crate::sim::{Ctx, SimTime};

/// What a provider saw over its last repricing interval, the input of a [`PriceRule`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Observation {
    /// Now \[s\].
    pub now: f64,
    /// The price posted over the interval [G$ per PE-second].
    pub price: f64,
    /// The configured price p0 [G$ per PE-second].
    pub base: f64,
    /// Busy PE-seconds over PE-seconds, over the interval (0 to 1).
    pub utilisation: f64,
    /// Mean number of jobs waiting per PE over the interval.
    pub queue: f64,
    /// PE-seconds requested over the interval over the PE-seconds the provider had (PEs × interval).
    pub demand: f64,
    /// The last clearing price the exchange announced to the provider, if any [G$ per CPU-second].
    pub cleared: Option<f64>,
}

/// A pricing strategy: the next price from what the provider saw. The provider clamps what it proposes (see the
/// module's doc).
pub trait PriceRule: fmt::Debug + Send {
    /// The price to post from now on, before clamping.
    fn next(&mut self, seen: &Observation) -> f64;
    /// For a rule revised at changes of its own ([`Revision::AtChanges`]): how long after `now` \[s\] the price next
    /// changes; none, never again.
    fn next_change(&self, _now: f64) -> Option<f64> {
        None
    }
}

/// When a rule revises the price it posts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Revision {
    /// Never: the configured price for ever.
    Never,
    /// Every `interval` seconds (a key only these rules take).
    Interval,
    /// Whenever the exchange announces a clearing price (the provider must ask in its call markets).
    OnClearing,
    /// At the start and at the changes its strategy names ([`PriceRule::next_change`]).
    AtChanges,
}

/// A pricing rule scenarios name (`pricing = { rule = "<name>", ... }`), held by the registry: the built-in ones
/// (`price_rules`) and those added with `Registry::with_price_rule`, checked by the same code.
pub trait NamedPriceRule: Send + Sync {
    /// Its name in scenario files, in kebab-case.
    fn name(&self) -> &'static str;
    /// One line for `gridmarket list`.
    fn about(&self) -> &'static str;
    /// When it revises the price: by default every `interval`.
    fn revision(&self) -> Revision {
        Revision::Interval
    }
    /// Its bounds for a provider whose configured price is `base` when `bounds` is not given: by default [0, 1e6].
    fn default_bounds(&self, _base: f64) -> (f64, f64) {
        (0.0, MAX_PRICE)
    }
    /// Whether the configured price must lie within the bounds (by default it must; a tariff multiplies it).
    fn bounds_hold_the_price(&self) -> bool {
        true
    }
    /// Its own keys beside `rule`, `interval` and `bounds`, kebab-case (`registry::key_names` gives a struct's):
    /// none by default.
    fn keys(&self) -> &'static [&'static str] {
        &[]
    }
    /// The JSON schema of its own keys, for `gridmarket schema`: none by default.
    fn schema(&self, _generator: &mut SchemaGenerator) -> Option<Schema> {
        None
    }
    /// Checks its own keys (those of [`keys`](Self::keys) that are given) for a provider whose configured price is
    /// `base`; an error names one of them.
    fn check(&self, keys: RuleKeys, base: f64) -> Result<Box<dyn RuleSettings>, Invalid>;
}

/// A rule's own keys as written in `pricing`.
#[derive(Clone, Debug, Default)]
pub struct RuleKeys(toml::Table);

impl From<toml::Table> for RuleKeys {
    fn from(keys: toml::Table) -> RuleKeys {
        RuleKeys(keys)
    }
}

impl RuleKeys {
    /// Reads them as the struct `T` (serde; `#[serde(rename_all = "kebab-case")]` for the keys' spelling), an
    /// error naming the key.
    pub fn parse<T: DeserializeOwned>(self) -> Result<T, Invalid> {
        read(self.0)
    }
}

crate::registry::by_name!(dyn NamedPriceRule);

/// A rule's settings, checked: what each provider's strategy is built from.
pub trait RuleSettings: fmt::Debug + Send + Sync {
    /// A fresh strategy for a provider whose configured price is `base` [G$ per PE-second].
    fn build(&self, base: f64) -> Box<dyn PriceRule>;
    /// Whether the demand signal counts each job once per interval, however often it asks (by default every
    /// request counts).
    fn counts_jobs(&self) -> bool {
        false
    }
}

impl Registry {
    /// Adds `rule`, which scenarios then name in a provider's `pricing.rule`.
    ///
    /// # Panics
    /// If its name is another rule's.
    pub fn with_price_rule(self, rule: &'static dyn NamedPriceRule) -> Registry {
        let name = rule.name();
        assert!(self.policy::<dyn NamedPriceRule>(name).is_none(), "the pricing rule name `{name}` is taken");
        self.with_policy(name, rule.about(), rule)
    }
}

/// A checked pricing rule: its name, when it revises the price, and its settings.
#[derive(Clone, Debug)]
pub struct Rule {
    /// Its name in scenario files.
    pub name: &'static str,
    /// When it revises the price.
    pub revision: Revision,
    /// What builds each provider's strategy.
    pub settings: Arc<dyn RuleSettings>,
}

impl Rule {
    /// The rule called `name`, revised as `revision` says, by `settings`.
    pub fn new(name: &'static str, revision: Revision, settings: impl RuleSettings + 'static) -> Rule {
        Rule { name, revision, settings: Arc::new(settings) }
    }
}

/// A provider's pricing strategy, checked: the rule, when it reprices and its bounds.
#[derive(Clone, Debug)]
pub struct PricingConfig {
    /// The rule.
    pub rule: Rule,
    /// Repricing interval \[s\] (a rule revised every interval).
    pub interval: f64,
    /// [low, high] [G$ per PE-second].
    pub bounds: (f64, f64),
}

/// Default repricing interval [s]: an hour.
pub(super) const DEFAULT_INTERVAL: f64 = 3_600.0;

/// A provider's `pricing` table as written, e.g. `{ rule = "utilisation", gain = 0.5, target = 0.7 }`: the keys
/// every rule shares (`rule`, `interval`, `bounds`) and the named rule's own, checked by [`RawPricing::check`].
#[derive(Clone, Debug, Deserialize)]
#[serde(transparent)]
pub struct RawPricing(toml::Table);

/// The keys of `pricing` every rule shares.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawShared {
    /// The rule: "fixed" (the configured price; default), "utilisation" (p' = p · (1 + gain · (x − target)), x the
    /// utilisation over the last interval, or with `signal = "queue"` the mean jobs waiting per PE), "demand" (the
    /// same with x = PE-seconds requested over PE-seconds offered in the last interval), "auction-cleared" (the
    /// exchange's last clearing price) or "time-of-day" (`price` × the factor of the hour, from `schedule`); or the
    /// name of a rule added to the registry (see docs/writing-a-policy.md). The other keys are the rule's.
    rule: String,
    /// Rules revised every interval (utilisation, demand and, unless they say otherwise, those added to the
    /// registry): how often the price is revised \[s\] (default 3,600).
    interval: Option<Interval>,
    /// The lowest and highest price [G$ per PE-second] (default [price / 10, 10 × price] for utilisation and demand,
    /// [0, 1e6] for the others); the configured price must lie within, unless the rule multiplies it (time-of-day).
    bounds: Option<[f64; 2]>,
}

impl RawPricing {
    /// The strategy for a provider whose configured price is `base`, by a rule of `registry`; errors name the key
    /// under `pricing.`.
    pub fn check(&self, base: f64, registry: &Registry) -> Result<PricingConfig, Invalid> {
        let at = |key: &str, message: String| Invalid::at(format!("pricing.{key}"), message);
        let shared_keys = registry::key_names::<RawShared>();
        let (shared, own): (toml::Table, toml::Table) =
            self.0.clone().into_iter().partition(|(key, _)| shared_keys.contains(&key.as_str()));
        let shared: RawShared = read(shared).map_err(|e| Invalid { key: format!("pricing.{}", e.key), ..e })?;
        let rules = || registry.policies::<dyn NamedPriceRule>().map(|(.., rule)| rule);
        let rule = registry.policy_at::<dyn NamedPriceRule>("pricing.rule", &shared.rule)?;
        // A key of other rules, or of none.
        let not_its = |key: &str, takers: Vec<&str>| match takers.as_slice() {
            [] => {
                let shared = shared_keys.iter().filter(|&&k| k != "interval" || rule.revision() == Revision::Interval);
                let known: Vec<&str> = shared.chain(rule.keys()).copied().collect();
                let list: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
                let problem = at(key, format!("unknown key `{key}`, expected one of {}", list.join(", ")));
                match did_you_mean(key, known) {
                    Some(m) => problem.hint(format!("did you mean `{m}`?")),
                    None => problem,
                }
            }
            [.., last] => {
                let names = match takers.len() {
                    1 => last.to_string(),
                    n => format!("{} and {last}", takers[..n - 1].join(", ")),
                };
                let s = if takers.len() > 1 { "s" } else { "" };
                at(key, format!("a key of the {names} rule{s}, not of \"{}\"", rule.name()))
            }
        };
        if shared.interval.is_some() && rule.revision() != Revision::Interval {
            let takers = rules().filter(|r| r.revision() == Revision::Interval).map(|r| r.name()).collect();
            return Err(not_its("interval", takers));
        }
        if let Some(key) = own.keys().find(|k| !rule.keys().contains(&k.as_str())) {
            return Err(not_its(key, rules().filter(|r| r.keys().contains(&key.as_str())).map(|r| r.name()).collect()));
        }
        let bounds = bounds(&shared, rule.default_bounds(base), rule.bounds_hold_the_price().then_some(base))?;
        let settings =
            rule.check(RuleKeys(own), base).map_err(|e| Invalid { key: format!("pricing.{}", e.key), ..e })?;
        let interval = shared.interval.map_or(DEFAULT_INTERVAL, |i| i.0);
        let rule = Rule { name: rule.name(), revision: rule.revision(), settings: Arc::from(settings) };
        Ok(PricingConfig { rule, interval, bounds })
    }
}

/// Reads `table` as the struct `T`, an error in a scenario's words ([`Worded`]).
fn read<T: DeserializeOwned>(table: toml::Table) -> Result<T, Invalid> {
    let parsed = registry::parse(toml::Value::Table(table.clone()));
    parsed.map_err(|e| Worded::new(&e.path, &e.message, &table).into())
}

/// `bounds`, or `default`: within [0, 1e6] and, when given, holding the configured price `base`.
fn bounds(shared: &RawShared, default: (f64, f64), base: Option<f64>) -> Result<(f64, f64), Invalid> {
    let (lo, hi) = shared.bounds.map_or(default, |[lo, hi]| (lo, hi));
    let at = |message: String| Err(Invalid::at("pricing.bounds", message));
    if !(0.0 <= lo && lo <= hi && hi <= MAX_PRICE) {
        let (max, lo, hi) = (short(MAX_PRICE), short(lo), short(hi));
        return at(format!("expected [low, high] with 0 <= low <= high <= {max}, found [{lo}, {hi}]"));
    }
    if let Some(base) = base.filter(|b| !(lo <= *b && *b <= hi)) {
        return at(format!("the price ({}) lies outside [{}, {}]", short(base), short(lo), short(hi)));
    }
    Ok((lo, hi))
}

/// A provider's pricing and what it saw: the strategy, the requests of the current interval, the posted prices.
#[derive(Debug)]
pub(super) struct Pricing {
    rule: Box<dyn PriceRule>,
    revision: Revision,
    /// The repricing interval \[s\] of a rule revised every interval.
    interval: f64,
    /// [low, high] [G$ per PE-second].
    bounds: (f64, f64),
    /// Whether the demand signal counts each job once per interval.
    by_job: bool,
    /// The configured price p0.
    base: f64,
    /// When the current interval began.
    since: SimTime,
    /// PE-seconds requested in the current interval.
    demand: f64,
    /// The jobs whose requests the current interval counted (a demand rule that counts jobs).
    asked: BTreeSet<JobId>,
    /// The last clearing price heard of.
    cleared: Option<f64>,
    /// Requests received and refused, over the run.
    requests: u64,
    refused: u64,
    /// Requests received, as a running count (for requests per interval).
    requests_seen: Series,
    /// The posted price over time.
    posted: Series,
    /// The price after each repricing, with when.
    history: Vec<(f64, f64)>,
    /// Proposals clamped, and whether a bad one (negative, NaN, infinite) was reported.
    clamped: u64,
    reported: bool,
    /// The price each job was accepted at, while the price may move.
    agreed: BTreeMap<JobId, f64>,
    /// The span [from, to] \[s\] the price metrics are measured over (the scenario's `market-window`), if not the
    /// whole run.
    window: Option<(f64, f64)>,
}

/// What the pricing capability reads of the provider's core.
pub(super) trait PricingView {
    /// The price posted now [G$ per PE-second].
    fn posted(&self) -> f64;
    /// The cluster's PEs.
    fn pes(&self) -> u32;
    /// Busy PE-seconds over `[from, to)` \[s\].
    fn busy_over(&self, from: f64, to: f64) -> f64;
    /// Waiting jobs integrated over `[from, to)` (job-seconds).
    fn queued_over(&self, from: f64, to: f64) -> f64;
    /// How long the provider plans `job` to run \[s\].
    fn planned_duration(&self, job: &JobSpec) -> f64;
}

impl Pricing {
    /// Pricing by `config` from the configured price `base`.
    pub(super) fn new(config: PricingConfig, base: f64) -> Pricing {
        let settings = &config.rule.settings;
        Pricing {
            rule: settings.build(base),
            revision: config.rule.revision,
            interval: config.interval,
            bounds: config.bounds,
            by_job: settings.counts_jobs(),
            base,
            since: SimTime::ZERO,
            demand: 0.0,
            asked: BTreeSet::new(),
            cleared: None,
            requests: 0,
            refused: 0,
            requests_seen: Series::default(),
            posted: Series::default(),
            history: Vec::new(),
            window: None,
            clamped: 0,
            reported: false,
            agreed: BTreeMap::new(),
        }
    }

    /// Pricing by `rule`, a strategy written in code, revised every `interval` seconds within `bounds`.
    pub(super) fn custom(rule: Box<dyn PriceRule>, interval: f64, bounds: (f64, f64), base: f64) -> Pricing {
        Pricing {
            rule,
            revision: Revision::Interval,
            interval,
            bounds,
            by_job: false,
            ..Pricing::new(PricingConfig::default(), base)
        }
    }

    /// Whether the price may move at all.
    fn dynamic(&self) -> bool {
        self.revision != Revision::Never
    }

    /// The price `job` was accepted at, if the price may have moved since.
    pub(super) fn agreed(&self, job: JobId) -> Option<f64> {
        self.agreed.get(&job).copied()
    }

    /// A claim was refused.
    pub(super) fn refused(&mut self) {
        self.refused += 1;
    }

    /// The price proposed, clamped to the bounds; a proposal that is no price at all is reported once.
    fn clamp(&mut self, proposed: f64, current: f64, provider: &str) -> f64 {
        let a_price = proposed.is_finite() && proposed >= 0.0;
        if !a_price && !self.reported {
            self.reported = true;
            tracing::warn!(
                provider,
                proposed,
                "the pricing rule proposed a price that is not a finite non-negative number: clamped to its bounds \
                 (reported once)"
            );
        }
        let (lo, hi) = self.bounds;
        let price = if proposed.is_nan() { current.clamp(lo, hi) } else { proposed.clamp(lo, hi) };
        if price != proposed {
            self.clamped += 1;
        }
        price
    }

    /// At start: the first price to post, if the tariff of the hour is not the configured price.
    pub(super) fn start(&mut self, core: &impl PricingView, now: SimTime, provider: &str) -> Option<f64> {
        let mut price = core.posted();
        if self.revision == Revision::AtChanges {
            let seen = Observation {
                now: now.secs(),
                price,
                base: self.base,
                utilisation: 0.0,
                queue: 0.0,
                demand: 0.0,
                cleared: None,
            };
            let opening = self.rule.next(&seen);
            price = self.clamp(opening, price, provider);
        }
        self.posted.set(now, price);
        self.history.push((now.secs(), price));
        (price != core.posted()).then_some(price)
    }

    /// Sets the next repricing, if the rule has one.
    pub(super) fn arm(&self, ctx: &mut Ctx<'_>) {
        let delay = match self.revision {
            Revision::Interval => self.interval,
            Revision::AtChanges => match self.rule.next_change(ctx.now().secs()) {
                Some(delay) => delay,
                None => return,
            },
            Revision::Never | Revision::OnClearing => return,
        };
        ctx.wake_in(delay, TimerMsg::Reprice);
    }

    /// Counts a request (a claim, submission or reservation) and, while prices move, records the price its job is
    /// accepted at.
    pub(super) fn on_request_seen(&mut self, core: &impl PricingView, msg: &Msg, now: SimTime) {
        let (job, pe_seconds) = match msg {
            Msg::Job(JobMsg::Submit(job) | JobMsg::Reoffer(job)) | Msg::Market(MarketMsg::SlaRequest(job)) => {
                (Some(job.id), f64::from(job.pes) * core.planned_duration(job))
            }
            Msg::Job(JobMsg::SubmitReserved { job, .. }) => {
                if self.dynamic() {
                    self.agreed.insert(job.id, core.posted());
                }
                return;
            }
            Msg::Lease(LeaseMsg::Reserve { start, end, pes, .. }) => (None, f64::from(*pes) * (*end - *start)),
            _ => return,
        };
        self.requests += 1;
        self.requests_seen.set(now, self.requests as f64);
        // A job asking again in the interval, counted once by a rule that counts jobs.
        if !(self.by_job && job.is_some_and(|id| !self.asked.insert(id))) {
            self.demand += pe_seconds;
        }
        if let Some(job) = job
            && self.dynamic()
        {
            self.agreed.insert(job, core.posted());
        }
    }

    /// The exchange announced a clearing price: an auction-cleared provider posts it. Returns a new price to post.
    pub(super) fn on_cleared(
        &mut self,
        core: &impl PricingView,
        price: f64,
        now: SimTime,
        provider: &str,
    ) -> Option<f64> {
        self.cleared = Some(price);
        (self.revision == Revision::OnClearing).then(|| self.reprice(core, now, provider)).flatten()
    }

    /// Asks the rule for the next price from the interval since the last repricing; returns it if it changed.
    pub(super) fn reprice(&mut self, core: &impl PricingView, now: SimTime, provider: &str) -> Option<f64> {
        let (from, to) = (self.since.secs(), now.secs());
        let capacity = f64::from(core.pes()) * (to - from);
        let share = |x: f64, of: f64| if of > 0.0 { x / of } else { 0.0 };
        let current = core.posted();
        let seen = Observation {
            now: to,
            price: current,
            base: self.base,
            utilisation: share(core.busy_over(from, to), capacity),
            queue: share(core.queued_over(from, to), capacity),
            demand: share(self.demand, capacity),
            cleared: self.cleared,
        };
        let proposed = self.rule.next(&seen);
        let price = self.clamp(proposed, current, provider);
        self.since = now;
        self.demand = 0.0;
        self.asked.clear();
        self.history.push((to, price));
        if price == current {
            return None;
        }
        self.posted.set(now, price);
        Some(price)
    }

    /// The pricing metrics and series.
    pub(super) fn report(&self, core: &impl PricingView, now: SimTime, out: &mut Report) {
        let end = now.secs();
        let (from, to) = self.window.map_or((0.0, end), |(from, to)| (from.min(end), to.min(end)));
        let mean = match self.window {
            _ if to <= from => core.posted(),
            None => self.posted.integral(end) / end,
            Some(_) => self.posted.integral_over(from, to) / (to - from),
        };
        let within: Vec<(f64, f64)> = self.history.iter().copied().filter(|h| h.0 <= to).collect();
        let (swing, alternation, settled) = swings(&within, (from + to) / 2.0);
        out.metrics.extend([
            ("price", core.posted()),
            ("price_mean", mean),
            ("price_changes", self.posted.points().len().saturating_sub(1) as f64),
            ("price_settled", settled),
            ("price_swing", swing),
            ("price_alternation", alternation),
            ("price_clamped", self.clamped as f64),
            ("requests", self.requests as f64),
            ("refused", self.refused as f64),
        ]);
        out.series.push(("price", self.posted.clone()));
        out.series.push(("requests", self.requests_seen.clone()));
    }
}

/// The provider's core as pricing reads it: its configuration (price, PEs, speed) and its busy and waiting series.
pub(super) struct Core<'a> {
    pub(super) config: &'a ProviderConfig,
    pub(super) busy: &'a Series,
    pub(super) queued: &'a Series,
}

impl PricingView for Core<'_> {
    fn posted(&self) -> f64 {
        self.config.price
    }

    fn pes(&self) -> u32 {
        self.config.pes
    }

    fn busy_over(&self, from: f64, to: f64) -> f64 {
        self.busy.integral_over(from, to)
    }

    fn queued_over(&self, from: f64, to: f64) -> f64 {
        self.queued.integral_over(from, to)
    }

    fn planned_duration(&self, job: &JobSpec) -> f64 {
        self.config.planned_duration(job)
    }
}

/// The core as pricing reads it, while pricing itself is borrowed apart.
macro_rules! core {
    ($provider:expr) => {
        Core { config: &$provider.config, busy: &$provider.busy, queued: &$provider.queued }
    };
}

/// The pricing capability wired into the provider: its messages in, the prices it posts out.
impl Provider {
    /// Sets the pricing strategy (the default: the configured price, fixed).
    pub fn with_pricing(mut self, config: PricingConfig) -> Provider {
        self.pricing = Pricing::new(config, self.config.price);
        self
    }

    /// Measures the price metrics over `[from, to]` \[s\] (a scenario's `market-window`) instead of the whole run.
    pub fn with_market_window(mut self, (from, to): (f64, f64)) -> Provider {
        self.pricing.window = Some((from, to));
        self
    }

    /// Prices by `rule`, a strategy written in code, revised every `interval` seconds within `bounds`.
    pub fn with_price_rule(mut self, rule: Box<dyn PriceRule>, interval: f64, bounds: (f64, f64)) -> Provider {
        self.pricing = Pricing::custom(rule, interval, bounds, self.config.price);
        self
    }

    /// At start: the first price posted (announced if the tariff of the hour is not the configured price), and the
    /// first repricing set.
    pub(super) fn start_pricing(&mut self, ctx: &mut Ctx<'_>) {
        let posted = self.pricing.start(&core!(self), ctx.now(), ctx.name());
        self.post(posted, ctx);
        self.pricing.arm(ctx);
    }

    /// Counts a request for the demand signal and the prices agreed.
    pub(super) fn on_request_seen(&mut self, msg: &Msg, now: SimTime) {
        self.pricing.on_request_seen(&core!(self), msg, now);
    }

    /// The exchange announced a clearing price.
    pub(super) fn on_cleared(&mut self, price: f64, ctx: &mut Ctx<'_>) {
        let posted = self.pricing.on_cleared(&core!(self), price, ctx.now(), ctx.name());
        self.post(posted, ctx);
    }

    /// The repricing timer: a new price from the last interval, and the next repricing.
    pub(super) fn on_reprice(&mut self, ctx: &mut Ctx<'_>) {
        let posted = self.pricing.reprice(&core!(self), ctx.now(), ctx.name());
        self.post(posted, ctx);
        self.pricing.arm(ctx);
    }

    /// Posts `price`, if any, and tells every user broker.
    fn post(&mut self, price: Option<f64>, ctx: &mut Ctx<'_>) {
        let Some(price) = price else { return };
        self.config.price = price;
        for &broker in ctx.offering(Service::BuysCompute.name()).to_vec().iter() {
            ctx.send(broker, MarketMsg::PriceChange { price });
        }
    }

    /// The pricing metrics and series.
    pub(super) fn report_pricing(&self, now: SimTime, out: &mut Report) {
        self.pricing.report(&core!(self), now, out);
    }
}

/// Of the prices after each repricing from `from` on: the mean absolute change over the mean price (its swing), the
/// share of successive changes that reverse the one before (1 in a price that goes up and down at every
/// repricing), and the mean price. NaN when there are too few.
pub fn swings(history: &[(f64, f64)], from: f64) -> (f64, f64, f64) {
    let prices: Vec<f64> = history.iter().filter(|h| h.0 >= from).map(|h| h.1).collect();
    let changes: Vec<f64> = prices.windows(2).map(|w| w[1] - w[0]).collect();
    let mean_price = prices.iter().sum::<f64>() / prices.len() as f64;
    let swing = if changes.is_empty() || mean_price <= 0.0 {
        f64::NAN
    } else {
        changes.iter().map(|c| c.abs()).sum::<f64>() / changes.len() as f64 / mean_price
    };
    let moves: Vec<f64> = changes.into_iter().filter(|c| *c != 0.0).collect();
    let alternation = if moves.len() < 2 {
        f64::NAN
    } else {
        moves.windows(2).filter(|w| w[0] * w[1] < 0.0).count() as f64 / (moves.len() - 1) as f64
    };
    (swing, alternation, mean_price)
}

/// The pricing capability's metrics.
pub(super) const METRICS: &[Metric] = &[
    Metric::new("price", Unit::Price, "the price posted at the end of the run"),
    Metric::new(
        "price_mean",
        Unit::Price,
        "the posted price averaged over time, from t = 0 to the end (over `market-window` when the scenario gives one)",
    ),
    Metric::new("price_changes", Unit::Count, "times the pricing strategy changed the posted price"),
    Metric::new(
        "price_settled",
        Unit::Price,
        "the mean price after the repricings of the second half of the run, or of `market-window` (undefined without \
         repricing)",
    ),
    Metric::new(
        "price_swing",
        Unit::Ratio,
        "over the repricings of the second half of the run (or of `market-window`), the mean absolute price change \
         over the mean price (0 for a settled price; undefined without repricing)",
    ),
    Metric::new(
        "price_alternation",
        Unit::Share,
        "over the price changes of the second half of the run (or of `market-window`), the share that reverse the \
         change before (near 1 for a price oscillating at every repricing)",
    ),
    Metric::new(
        "price_clamped",
        Unit::Count,
        "prices the pricing strategy proposed outside its bounds (or not a finite non-negative number), clamped",
    ),
    Metric::new(
        "requests",
        Unit::Count,
        "claims, submissions and reservations received, granted or not (what the contention index counts)",
    ),
    Metric::new("refused", Unit::Count, "claims, submissions and reservations refused"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::price_rules::{DemandCount, Feedback, FeedbackSignal};

    fn seen(price: f64, utilisation: f64) -> Observation {
        let (now, base, queue, demand, cleared) = (3600.0, 4.0, 0.0, 0.0, None);
        Observation { now, price, base, utilisation, queue, demand, cleared }
    }

    /// A core seen from pricing alone: a posted price, 4 PEs, all busy, one job waiting per PE, jobs of 100 s.
    struct Busy(f64);

    impl PricingView for Busy {
        fn posted(&self) -> f64 {
            self.0
        }
        fn pes(&self) -> u32 {
            4
        }
        fn busy_over(&self, from: f64, to: f64) -> f64 {
            4.0 * (to - from)
        }
        fn queued_over(&self, from: f64, to: f64) -> f64 {
            4.0 * (to - from)
        }
        fn planned_duration(&self, _: &JobSpec) -> f64 {
            100.0
        }
    }

    #[test]
    fn test_the_pricing_capability_works_without_a_provider() {
        // Demand feedback from 4: a 2-PE job of 100 s in the first hour is 200 of 14,400 PE-seconds, 1/72 of the
        // supply, against a target of 1: 4 · (1 + 0.5 · (1/72 − 1)) = 2.0278, clamped to [3, 8].
        let demand = Feedback { signal: FeedbackSignal::Demand(DemandCount::Requests), gain: 0.5, target: 1.0 };
        let config = PricingConfig { rule: demand.into(), interval: 3600.0, bounds: (3.0, 8.0) };
        let mut pricing = Pricing::new(config, 4.0);
        let t = |s: f64| SimTime::new(s).unwrap();
        assert_eq!(pricing.start(&Busy(4.0), t(0.0), "p"), None, "a feedback rule starts at the configured price");
        let job = JobSpec::new(7, crate::sim::AgentId::ENV, 2, 100.0);
        pricing.on_request_seen(&Busy(4.0), &Msg::Job(JobMsg::Submit(Box::new(job))), t(10.0));
        assert_eq!(pricing.agreed(7), Some(4.0), "the job keeps the price it was accepted at");
        assert_eq!(pricing.reprice(&Busy(4.0), t(3600.0), "p"), Some(3.0));
        // The queue signal of a full, queued core: one job waiting per PE against a target of 0.5 raises the price.
        let queue = Feedback { signal: FeedbackSignal::Queue, gain: 1.0, target: 0.5 };
        let config = PricingConfig { rule: queue.into(), interval: 3600.0, bounds: (0.0, 100.0) };
        let mut pricing = Pricing::new(config, 4.0);
        assert_eq!(pricing.reprice(&Busy(4.0), t(3600.0), "p"), Some(6.0));
        let mut out = Report::default();
        pricing.report(&Busy(6.0), t(3600.0), &mut out);
        assert_eq!(out.metric("price"), Some(6.0));
        assert_eq!(out.metric("price_clamped"), Some(0.0));
    }

    #[test]
    fn the_price_metrics_follow_the_market_window() {
        // The queue rule raises the price by half each hour: 4, 6, 9, 13.5 and 20.25 G$ from hours 0 to 4.
        let queue = Feedback { signal: FeedbackSignal::Queue, gain: 1.0, target: 0.5 };
        let config = PricingConfig { rule: queue.into(), interval: 3600.0, bounds: (0.0, 100.0) };
        let t = |s: f64| SimTime::new(s).unwrap();
        let metrics = |window| {
            let mut pricing = Pricing::new(config.clone(), 4.0);
            pricing.window = window;
            pricing.start(&Busy(4.0), t(0.0), "p");
            let mut price = 4.0;
            for hour in 1..=4 {
                price = pricing.reprice(&Busy(price), t(3600.0 * f64::from(hour)), "p").unwrap();
            }
            let mut out = Report::default();
            pricing.report(&Busy(price), t(14_400.0), &mut out);
            (out.metric("price_mean").unwrap(), out.metric("price_settled").unwrap())
        };
        // The whole run: the mean of the four hours; the repricings of its second half (hours 2 to 4).
        assert_eq!(metrics(None), (8.125, 14.25));
        // Hours 1 to 3: the mean of 6 and 9; the repricings of the window's second half (hours 2 and 3).
        assert_eq!(metrics(Some((3600.0, 10_800.0))), (7.5, 11.25));
    }

    fn raw(table: &str) -> RawPricing {
        toml::from_str(table).expect("a pricing table")
    }

    #[test]
    fn demand_counts_every_request_or_each_job_once_per_interval() {
        // Job 7 asks three times (a broker retrying a refused claim), job 8 once, then job 7 again in the next hour:
        // 4 or 2 requests of 2 PEs × 100 s in the first hour; the jobs count afresh in the second.
        let t = |s: f64| SimTime::new(s).unwrap();
        let submit = |id| Msg::Job(JobMsg::Submit(Box::new(JobSpec::new(id, crate::sim::AgentId::ENV, 2, 100.0))));
        let demand_seen = |counts: &str| {
            let table = format!("rule = \"demand\"\ngain = 1\ncounts = \"{counts}\"\nbounds = [0, 100]");
            let mut pricing = Pricing::new(raw(&table).check(4.0, &Registry::standard()).unwrap(), 4.0);
            for (id, at) in [(7, 10.0), (7, 20.0), (8, 30.0), (7, 40.0)] {
                pricing.on_request_seen(&Busy(4.0), &submit(id), t(at));
            }
            let first = pricing.reprice(&Busy(4.0), t(3600.0), "p");
            pricing.on_request_seen(&Busy(4.0), &submit(7), t(3700.0));
            let second = pricing.reprice(&Busy(4.0), t(7200.0), "p");
            // p' = 4 · (1 + (x − 1)) = 4x from the posted 4, x the PE-seconds asked over 14,400 offered.
            (first.map(|p| p / 4.0 * 14_400.0), second.map(|p| p / 4.0 * 14_400.0))
        };
        let close = |(a, b): (Option<f64>, Option<f64>), (x, y): (f64, f64)| {
            (a.unwrap() - x).abs() < 1e-9 && (b.unwrap() - y).abs() < 1e-9
        };
        assert!(close(demand_seen("requests"), (800.0, 200.0)), "{:?}", demand_seen("requests"));
        assert!(close(demand_seen("jobs"), (400.0, 200.0)), "{:?}", demand_seen("jobs"));
        let key = raw("rule = \"utilisation\"\ngain = 1\ncounts = \"jobs\"").check(4.0, &Registry::standard());
        assert_eq!(key.unwrap_err().key, "pricing.counts");
    }

    #[test]
    fn test_bad_proposals_are_clamped_and_counted() {
        let config =
            raw("rule = \"utilisation\"\ngain = 100\nbounds = [1, 8]").check(4.0, &Registry::standard()).unwrap();
        let mut p = Pricing::new(config, 4.0);
        assert_eq!(p.clamp(-3.0, 4.0, "rp"), 1.0);
        assert!(p.reported);
        assert_eq!(p.clamp(f64::INFINITY, 4.0, "rp"), 8.0);
        assert_eq!(p.clamp(f64::NAN, 4.0, "rp"), 4.0, "NaN keeps the price");
        assert_eq!(p.clamp(5.0, 4.0, "rp"), 5.0);
        assert_eq!(p.clamped, 3);
        // A gain of 100 on an idle provider proposes a negative price: the lower bound.
        let proposed = p.rule.next(&seen(4.0, 0.0));
        assert!(proposed < 0.0);
        assert_eq!(p.clamp(proposed, 4.0, "rp"), 1.0);
    }

    #[test]
    fn test_checks_name_the_key() {
        let key = |table: &str, base: f64| raw(table).check(base, &Registry::standard()).unwrap_err().key;
        assert_eq!(key("rule = \"utilisation\"", 4.0), "pricing.gain");
        assert_eq!(key("rule = \"utilisation\"\ngain = -1", 4.0), "pricing.gain");
        assert_eq!(key("rule = \"utilisation\"\ngain = 1\ntarget = 2", 4.0), "pricing.target");
        assert_eq!(key("rule = \"utilisation\"\ngain = 1", 0.0), "pricing.rule");
        assert_eq!(key("rule = \"fixed\"\ngain = 1", 4.0), "pricing.gain");
        assert_eq!(key("rule = \"demand\"\ngain = 1\nsignal = \"queue\"", 4.0), "pricing.signal");
        assert_eq!(key("rule = \"demand\"\ngain = 1\nbounds = [5, 9]", 4.0), "pricing.bounds");
        assert_eq!(key("rule = \"demand\"\ngain = 1\nbounds = [5, 1]", 4.0), "pricing.bounds");
        assert_eq!(key("rule = \"time-of-day\"", 4.0), "pricing.schedule");
        assert_eq!(key("rule = \"time-of-day\"\nschedule = [[1, 1]]", 4.0), "pricing.schedule");
        assert_eq!(key("rule = \"time-of-day\"\nschedule = [[0, 1], [0, 2]]", 4.0), "pricing.schedule");
        assert_eq!(key("rule = \"time-of-day\"\nschedule = [[0, -1]]", 4.0), "pricing.schedule");
        assert_eq!(key("rule = \"fixed\"\nspeed = 1", 4.0), "pricing.speed", "unknown keys are refused");
        assert_eq!(key("rule = \"fixed\"\ninterval = 60", 4.0), "pricing.interval");
        assert_eq!(key("rule = \"demand\"\ngain = \"high\"", 4.0), "pricing.gain");
        assert_eq!(key("rule = \"sticky\"", 4.0), "pricing.rule");
        assert_eq!(key("gain = 1", 4.0), "pricing.rule", "the rule is required");
        assert_eq!(key("rule = \"fixed\"\ninterval = 60\nsignal = \"queue\"", 4.0), "pricing.interval");
        let ok = raw("rule = \"demand\"\ngain = 0.5").check(4.0, &Registry::standard()).unwrap();
        assert_eq!((ok.rule.name, ok.rule.revision, ok.bounds), ("demand", Revision::Interval, (0.4, 40.0)));
        let demand = Feedback { signal: FeedbackSignal::Demand(DemandCount::Requests), gain: 0.5, target: 1.0 };
        assert_eq!(format!("{:?}", ok.rule.settings), format!("{demand:?}"));
    }

    #[test]
    fn test_swings_measure_oscillation() {
        let steady: Vec<(f64, f64)> = (0..10).map(|i| (f64::from(i), 4.0 + 0.01 * f64::from(i))).collect();
        let (swing, alternation, settled) = swings(&steady, 0.0);
        assert!(swing < 0.01 && alternation == 0.0, "{swing} {alternation}");
        assert!((settled - 4.045).abs() < 1e-12);
        let zigzag: Vec<(f64, f64)> = (0..10).map(|i| (f64::from(i), if i % 2 == 0 { 2.0 } else { 6.0 })).collect();
        let (swing, alternation, _) = swings(&zigzag, 0.0);
        // |change| 4 over a mean of 4.
        assert!((swing - 1.0).abs() < 0.15 && alternation == 1.0, "{swing} {alternation}");
        assert!(swings(&zigzag, 100.0).0.is_nan());
    }
}
