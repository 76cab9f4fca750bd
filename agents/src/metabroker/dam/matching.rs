//! The matching stage: DAM's Alg 7.1 (Garg 2010 §7.3.2) and the baselines' orders and queue rules (§7.4.1).

use std::cmp::Ordering;
use std::sync::Arc;

use super::valuation::{ask, asks, bids, demand_supply};
use super::{
    Application, AuctionPolicy, BidTest, DamParams, DeadlineTest, FairShareRule, Market, Payment, SlotGeneration,
};
use crate::exchange::mechanism::KDouble;
use crate::metabroker::{App, Candidate, Family, MetaPolicy, OneAtATime, Policy};

/// A match: application `app` runs in queue `queue` over `[start, end)` \[s\] at `price`.
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    /// Index into the market's applications.
    pub app: usize,
    /// Index into the market's queues.
    pub queue: usize,
    /// Slot start \[s\].
    pub start: f64,
    /// Slot end: the start plus the estimated runtime at the queue's speed \[s\].
    pub end: f64,
    /// What the computation costs [G$ per PE-second].
    pub price: f64,
    /// DAM: the application's bid and the queue's ask when they met (none for the baselines).
    pub scores: Option<(f64, f64)>,
}

/// What one interval's matching did.
#[derive(Clone, Debug, PartialEq)]
pub struct Round {
    /// The matches, in the order they were made.
    pub placements: Vec<Placement>,
    /// DAM: every application's bid (by index), the others' empty.
    pub bids: Vec<f64>,
    /// DAM: every queue's ask before the first match (by index), the others' empty.
    pub asks: Vec<f64>,
}

/// A queue's state as matches change it within the interval.
#[derive(Clone, Debug)]
struct Live {
    free: u32,
    load: f64,
    wait: f64,
    slots: Vec<(f64, f64, u32)>,
}

/// The market as the matches of one interval change it.
struct Book<'a> {
    market: &'a Market,
    params: &'a DamParams,
    live: Vec<Live>,
}

impl<'a> Book<'a> {
    fn new(market: &'a Market, params: &'a DamParams) -> Book<'a> {
        let live = market
            .queues
            .iter()
            .map(|q| Live { free: q.free, load: q.load, wait: q.wait, slots: q.slots.clone() })
            .collect();
        Book { market, params, live }
    }

    /// Where `app` could start in queue `j`, and its runtime there: immediate slots need its PEs free now; packaged
    /// ones the earliest slot wide and long enough (a slot reaching the horizon is open at its end: what lies beyond
    /// is not for sale yet, not taken).
    fn fit(&self, app: &Application, j: usize) -> Option<(f64, f64)> {
        let q = &self.market.queues[j];
        if app.pes > q.pes || q.speed.is_nan() || q.speed <= 0.0 {
            return None;
        }
        let now = self.market.now;
        let exec = app.runtime / q.speed;
        let live = &self.live[j];
        match self.params.slots {
            SlotGeneration::Immediate => (live.free >= app.pes).then_some((now, exec)),
            SlotGeneration::Packaged => {
                let horizon = now + self.params.horizon;
                let fits = |s: &&(f64, f64, u32)| s.2 >= app.pes && (s.1 - s.0 >= exec || s.1 >= horizon);
                live.slots.iter().filter(fits).map(|s| s.0.max(now)).min_by(f64::total_cmp).map(|start| (start, exec))
            }
        }
    }

    /// Books `app` into queue `j` from `start` for `exec` seconds: its PEs leave the slots they overlap (and the
    /// free PEs, starting now), its load and committed work grow.
    fn take(&mut self, app: &Application, j: usize, start: f64, exec: f64) {
        let q = &self.market.queues[j];
        let live = &mut self.live[j];
        let end = start + exec;
        let pes = f64::from(app.pes);
        let capacity = f64::from(q.pes.max(1));
        if start <= self.market.now {
            live.free = live.free.saturating_sub(app.pes);
            live.load += pes / capacity;
        }
        live.wait += pes * exec / capacity;
        for s in live.slots.iter_mut().filter(|s| s.0 < end && start < s.1) {
            s.2 = s.2.saturating_sub(app.pes);
        }
    }

    /// What the match of `app` to queue `j` for `exec` seconds costs per PE-second.
    fn price(&self, app: &Application, j: usize, exec: f64) -> f64 {
        let posted = self.market.queues[j].valuation.max(0.0);
        match self.params.payment {
            Payment::Posted => posted,
            Payment::KDoubleAuction => {
                // The user bids its value per PE-second, the provider asks its posted price; a bid below the ask
                // still pays the posted price.
                let value = app.valuation.max(0.0) / (f64::from(app.pes) * exec).max(f64::MIN_POSITIVE);
                KDouble::new(self.params.k).ok().and_then(|m| m.bilateral(value, posted)).unwrap_or(posted)
            }
        }
    }

    fn placement(&mut self, i: usize, j: usize, (start, exec): (f64, f64), scores: Option<(f64, f64)>) -> Placement {
        let app = &self.market.apps[i];
        let price = self.price(app, j, exec);
        self.take(app, j, start, exec);
        Placement { app: i, queue: j, start, end: start + exec, price, scores }
    }

    fn any_room(&self) -> bool {
        match self.params.slots {
            SlotGeneration::Immediate => self.live.iter().any(|l| l.free > 0),
            SlotGeneration::Packaged => self.live.iter().any(|l| l.slots.iter().any(|s| s.2 > 0)),
        }
    }
}

/// Chapter 7's family: matches of applications to the providers' queues.
#[derive(Debug)]
pub struct Queues;

/// Chapter 7's round: the market of one interval (the applications [`super::screen`] has let through and the
/// providers' queues) and the meta-broker's settings.
#[derive(Clone, Copy, Debug)]
pub struct QueueView<'r> {
    /// The meta-broker's settings: slots, tests, payment rule.
    pub params: &'r DamParams,
    /// The applications and the queues.
    pub market: &'r Market,
}

impl Family for Queues {
    type View<'r> = QueueView<'r>;
    type Placements = Round;
}

impl Policy<Queues> for AuctionPolicy {
    fn place(&self, view: QueueView<'_>) -> Round {
        match_round(*self, view.params, view.market)
    }
}

impl Policy<Queues> for OneAtATime {
    fn place(&self, view: QueueView<'_>) -> Round {
        match_each(self.0, view.params, view.market)
    }
}

impl From<AuctionPolicy> for Arc<dyn Policy<Queues>> {
    fn from(policy: AuctionPolicy) -> Arc<dyn Policy<Queues>> {
        Arc::new(policy)
    }
}

/// Runs `policy` on `market` (whose applications [`super::screen`] has let through): the matches of one
/// interval. Deterministic: ties go to the earlier submission, then the lower job id; among queues to the lower
/// index (catalogue order, then queue order).
pub fn match_round(policy: AuctionPolicy, params: &DamParams, market: &Market) -> Round {
    match policy {
        AuctionPolicy::Dam => dam(params, market),
        baseline => baselines(baseline, params, market),
    }
}

/// A registered [`MetaPolicy`] on the providers' queues: the applications first come, first served (ties to the
/// lower job id), each in the queue the policy chooses among those with a slot for it that ends before its deadline,
/// or left pending. A queue's [`Candidate`] is the application's slot there, its `site` the queue's index among the
/// market's queues, its price what the payment rule makes the match pay; candidates come cheapest first, ties to the
/// lower index. The policy sees the application's valuation as its budget.
pub fn match_each(policy: &dyn MetaPolicy, params: &DamParams, market: &Market) -> Round {
    let mut order: Vec<usize> = (0..market.apps.len()).collect();
    order.sort_by(|&a, &b| arrival(&market.apps[a], &market.apps[b]));
    let mut book = Book::new(market, params);
    let mut placements = Vec::new();
    let mut candidates = Vec::new();
    for i in order {
        if !book.any_room() {
            break;
        }
        let app = &market.apps[i];
        candidates.clear();
        for (j, q) in market.queues.iter().enumerate() {
            let Some((start, exec)) = book.fit(app, j).filter(|(start, exec)| start + exec < app.deadline) else {
                continue;
            };
            let (free, price) = (book.live[j].free, book.price(app, j, exec));
            let (speed, finish, cost) = (q.speed, start + exec, price * f64::from(app.pes) * exec);
            candidates.push(Candidate { site: j, free, price, speed, start, finish, cost, footprint: None });
        }
        candidates.sort_by(|a, b| a.cost.total_cmp(&b.cost).then(a.site.cmp(&b.site)));
        let seen = App {
            id: app.id,
            cpus: app.pes,
            runtime: app.runtime,
            budget: (app.valuation > 0.0).then_some(app.valuation),
            deadline: app.deadline.is_finite().then_some(app.deadline),
            submit: app.submit,
        };
        let chosen = (!candidates.is_empty()).then(|| policy.choose(&seen, &candidates).map(|c| c.site)).flatten();
        if let Some(j) = chosen {
            let fit = book.fit(app, j).expect("a candidate has a slot");
            placements.push(book.placement(i, j, fit, None));
        }
    }
    Round { placements, bids: Vec::new(), asks: Vec::new() }
}

/// Alg 7.1.
fn dam(params: &DamParams, market: &Market) -> Round {
    let ratio = demand_supply(&market.apps, &market.queues);
    let bids = bids(&market.apps, market.now, ratio, params.bid_scale, params.age_unit);
    let initial = asks(&market.queues, ratio, params.ask_scale);
    let mut order: Vec<usize> = (0..market.apps.len()).collect();
    order.sort_by(|&a, &b| bids[b].total_cmp(&bids[a]).then_with(|| arrival(&market.apps[a], &market.apps[b])));
    let mut book = Book::new(market, params);
    let mut current = initial.clone();
    let mut ranked = rank(&current);
    let c_max = market.queues.iter().map(|q| q.valuation).fold(0.0, f64::max);
    let mut placements = Vec::new();
    for i in order {
        if !book.any_room() {
            break;
        }
        let app = &market.apps[i];
        let mut chosen = None;
        for &j in &ranked {
            if params.bid_test == BidTest::Literal && bids[i] <= current[j] {
                // Asks only grow along the list: no later one is below this bid either.
                break;
            }
            let ends = |fit: (f64, f64)| match params.deadline_test {
                DeadlineTest::QueueWait => market.now + book.live[j].wait + fit.1,
                DeadlineTest::Slot => fit.0 + fit.1,
            };
            if let Some(fit) = book.fit(app, j)
                && ends(fit) < app.deadline
            {
                chosen = Some((j, fit));
                break;
            }
        }
        let Some((j, fit)) = chosen else { continue };
        placements.push(book.placement(i, j, fit, Some((bids[i], current[j]))));
        // The queue's slots changed, and with them its ask; the largest load may have too.
        let l_max = book.live.iter().map(|l| l.load).fold(0.0, f64::max);
        for ((a, q), live) in current.iter_mut().zip(&market.queues).zip(&book.live) {
            *a = ask((live.wait, q.valuation, live.load), (c_max, l_max), ratio, params.ask_scale);
        }
        ranked = rank(&current);
    }
    Round { placements, bids, asks: initial }
}

/// Queue indices by ask, lowest first, ties to the lower index.
fn rank(asks: &[f64]) -> Vec<usize> {
    let mut ranked: Vec<usize> = (0..asks.len()).collect();
    ranked.sort_by(|&a, &b| asks[a].total_cmp(&asks[b]).then(a.cmp(&b)));
    ranked
}

/// Earlier submission first, then the lower job id.
fn arrival(a: &Application, b: &Application) -> Ordering {
    a.submit.total_cmp(&b.submit).then(a.id.cmp(&b.id))
}

/// The five baselines: an order of the applications and a queue rule.
fn baselines(policy: AuctionPolicy, params: &DamParams, market: &Market) -> Round {
    let apps = &market.apps;
    let mut order: Vec<usize> = (0..apps.len()).collect();
    let per_pe = |a: &Application| a.valuation.max(0.0) / f64::from(a.pes.max(1));
    order.sort_by(|&x, &y| {
        let (a, b) = (&apps[x], &apps[y]);
        let first = match policy {
            AuctionPolicy::Sjf => a.runtime.total_cmp(&b.runtime),
            AuctionPolicy::EdfFq => a.deadline.total_cmp(&b.deadline),
            AuctionPolicy::Hvfq => b.valuation.total_cmp(&a.valuation),
            AuctionPolicy::FairShare => per_pe(b).total_cmp(&per_pe(a)),
            AuctionPolicy::Fcfs | AuctionPolicy::Dam => Ordering::Equal,
        };
        first.then_with(|| arrival(a, b))
    });
    let fastest = matches!(policy, AuctionPolicy::EdfFq | AuctionPolicy::Hvfq);
    // FairShare's cap: the application's valuation share of the processors free as the round begins.
    let share = (policy == AuctionPolicy::FairShare && params.fair_share == FairShareRule::Proportional).then(|| {
        let free: u32 = market.queues.iter().map(|q| q.free).sum();
        let total: f64 = apps.iter().map(|a| a.valuation.max(0.0)).sum();
        move |a: &Application| if total > 0.0 { (a.valuation.max(0.0) / total * f64::from(free)).floor() } else { 0.0 }
    });
    let mut book = Book::new(market, params);
    let mut placements = Vec::new();
    for i in order {
        if !book.any_room() {
            break;
        }
        let app = &apps[i];
        if share.as_ref().is_some_and(|share| f64::from(app.pes) > share(app)) {
            continue;
        }
        let candidates = (0..market.queues.len()).filter_map(|j| book.fit(app, j).map(|fit| (j, fit)));
        let chosen = if fastest {
            // The slot with the least waiting time: the earliest start, then the least committed work per PE.
            candidates.min_by(|a, b| a.1.0.total_cmp(&b.1.0).then(book.live[a.0].wait.total_cmp(&book.live[b.0].wait)))
        } else {
            candidates.min_by(|a, b| a.1.0.total_cmp(&b.1.0))
        };
        if let Some((j, fit)) = chosen {
            placements.push(book.placement(i, j, fit, None));
        }
    }
    Round { placements, bids: Vec::new(), asks: Vec::new() }
}
