//! The meta-broker's snapshot at the end of a scheduling interval (SI), and the schedule it computes.
//!
//! Source: Garg (2010), *Meta Scheduling for Market-Oriented Grid and Utility Computing*, chapter 4, §4.1. At the
//! scheduling instant T site i offers P_i(n_i, c_i, v_i) (free CPUs, price per CPU-second, CPU speed) and user j asks
//! Q_j = (b_j, d_j, M_j, m_j) (budget, deadline, task length, CPUs). Running app j on site i costs
//! c_i · m_j · M_j / v_i, the summand of the objective (4.1).
//!
//! [`Problem`] pre-computes what every policy shares: which (application, site) pairs meet the deadline (4.7) and the
//! budget (4.6), what each pair costs, the priority order given by the QoS index (4.10)/(4.11), and the penalty an
//! application pays on the dummy provider of (4.9), i.e. for being rolled over to the next SI.
//!
//! Interpretation notes (where the thesis is silent or ambiguous, resolved here once for every policy):
//! - Deadlines are absolute, so (4.7) reads `start + runtime / speed <= d_j` with `start = max(T, window start)`.
//! - Budgets are checked for the whole application on one site: `m_j · task_cost <= b_j`. For bag-of-tasks (MGN)
//!   applications a task may only go where the whole application would be affordable, so any split respects (4.6)
//!   and the MGN relaxation stays a transportation problem.
//! - The QoS index uses t_j = the runtime estimate on a reference CPU and slack `d_j − (T + t_j)`; (4.11) takes
//!   a = [`QOS_SLACK_FLOOR`] = 1 s. Ties go to the earlier submission, then the lower id, then the lower index.
//! - The dummy penalty of (4.9) applies only to rolled-over applications: `penalty_j = C · (n + 1 − rank_j)` with
//!   rank 1 the highest priority and C larger than the most any real schedule can cost, so a lower-priority
//!   application on a real site always scores better than a higher-priority one on the dummy. An MGN application
//!   pays it pro rata for the tasks it leaves on the dummy; an application no site can take pays nothing, since
//!   every schedule rolls it over.
//! - The dummy provider is always there (Alg. 4.2 adds it only when demand exceeds supply): unused, it costs nothing.
//! - Prices are per site, c_i; the per-user prices c_ij the model allows are not used by the chapter 4 experiments.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Identifier of an application (one user's request) in the meta-broker's queue.
pub type AppId = u64;

/// Identifier of a resource site (one provider's offer).
pub type SiteId = u64;

/// The slack floor `a` of the fair-market QoS index (4.11) \[s\] (our default; the thesis gives none).
pub const QOS_SLACK_FLOOR: f64 = 1.0;

/// An application waiting for the meta-broker: Q_j = (b_j, d_j, M_j, m_j) of §4.1.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct App {
    /// Identifier, echoed in tickets.
    pub id: AppId,
    /// CPUs m_j: the tasks of a bag-of-tasks (MGN) application, or the processes of a rigid parallel (SGN) one.
    pub cpus: u32,
    /// Runtime estimate of one task on a reference CPU \[s\] (M_j over the reference MIPS).
    pub runtime: f64,
    /// Budget b_j for the whole application [G$], if any.
    pub budget: Option<f64>,
    /// Absolute deadline d_j \[s\], if any.
    pub deadline: Option<f64>,
    /// Submission time \[s\]; breaks priority ties (earlier first).
    pub submit: f64,
}

impl App {
    /// A user's request as a meta-broker's policies see it, submitted at `submit` \[s\]: the runtime is the larger of
    /// the estimate and the runtime given.
    pub fn of_request(spec: &crate::protocol::JobSpec, submit: f64) -> App {
        App {
            id: spec.id,
            cpus: spec.pes,
            runtime: spec.estimate.max(spec.runtime),
            budget: spec.budget,
            deadline: spec.deadline.map(crate::sim::SimTime::secs),
            submit,
        }
    }

    /// Whether the request can be scheduled at all: at least one CPU, a positive finite runtime, and no NaN.
    pub fn is_valid(&self) -> bool {
        self.cpus > 0
            && self.runtime.is_finite()
            && self.runtime > 0.0
            && !self.budget.is_some_and(f64::is_nan)
            && !self.deadline.is_some_and(f64::is_nan)
    }
}

/// A resource site's offer for this round: P_i(n_i, c_i, v_i) of §4.1, as a free window of CPUs.
///
/// Every site is an independent pool of CPUs: two overlapping free slots of one provider must not both appear.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Site {
    /// Identifier, used in reservations.
    pub id: SiteId,
    /// Free CPUs n_i over the window.
    pub cpus: u32,
    /// Speed of one CPU relative to the reference CPU (v_i over the reference MIPS).
    pub speed: f64,
    /// Price c_i [G$ per CPU-second].
    pub price: f64,
    /// Start of the free window \[s\]; anything before the snapshot's `now` means now.
    pub from: f64,
    /// End of the free window \[s\], if bounded: jobs placed here must finish by then.
    pub until: Option<f64>,
}

impl Site {
    /// Whether the offer is usable: at least one CPU, a positive finite speed, a finite non-negative price, a finite
    /// window start and no NaN window end.
    pub fn is_valid(&self) -> bool {
        self.cpus > 0
            && self.speed.is_finite()
            && self.speed > 0.0
            && self.price.is_finite()
            && self.price >= 0.0
            && self.from.is_finite()
            && !self.until.is_some_and(f64::is_nan)
    }
}

/// What the meta-broker knows when a scheduling interval ends: the queued requests and the current offers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The scheduling instant T \[s\].
    pub now: f64,
    /// Queued applications, in any order; schedules refer to them by index.
    pub apps: Vec<App>,
    /// Current site offers; schedules refer to them by index.
    pub sites: Vec<Site>,
}

/// Which QoS index ranks applications for the dummy-provider penalty (§4.2.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QosIndex {
    /// (4.11), "fair market", the one the thesis uses: α_j = 1 / max(a, d_j − (T + t_j)) while the deadline can be
    /// met on a reference CPU, else 0. Tighter slack means higher priority; no deadline means lowest.
    #[default]
    FairMarket,
    /// (4.10), incentive: p_j = b_j / max(1, d_j − (T + t_j)). Larger budgets and tighter slack mean higher
    /// priority; no budget counts as an infinite one, no deadline as priority 0.
    Incentive,
}

/// A site admissible for one task of an application: deadline and window met, whole-application budget met.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SiteOption {
    /// Index of the site in [`Snapshot::sites`].
    pub site: usize,
    /// Cost of one task there [G$]: c_i · runtime / v_i.
    pub task_cost: f64,
    /// When the task starts there \[s\].
    pub start: f64,
    /// When it finishes \[s\].
    pub finish: f64,
}

impl SiteOption {
    /// The part placing `cpus` CPUs (tasks) of the application here.
    pub(crate) fn part(&self, cpus: u32) -> Part {
        Part { site: self.site, cpus, start: self.start, finish: self.finish, cost: f64::from(cpus) * self.task_cost }
    }
}

/// Part of an application placed on one site: the whole application for SGN policies, some tasks for MGN.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Part {
    /// Index of the site in [`Snapshot::sites`].
    pub site: usize,
    /// CPUs (tasks) reserved there.
    pub cpus: u32,
    /// Start of the reservation \[s\].
    pub start: f64,
    /// End of the reservation \[s\].
    pub finish: f64,
    /// What the user pays for this part [G$]: cpus · c_i · runtime / v_i.
    pub cost: f64,
}

/// Where one application goes: its parts on real sites, and what stays on the dummy provider.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Assignment {
    /// Parts on real sites, in ascending site index.
    pub parts: Vec<Part>,
    /// CPUs (tasks) left on the dummy provider, i.e. rolled over to the next scheduling interval.
    pub rolled_over: u32,
}

impl Assignment {
    /// Whether every CPU of the application is placed on a real site.
    pub fn is_placed(&self) -> bool {
        self.rolled_over == 0 && !self.parts.is_empty()
    }

    /// The single site of an application placed whole on one site (every SGN placement).
    pub fn site(&self) -> Option<usize> {
        match self.parts.as_slice() {
            [part] if self.rolled_over == 0 => Some(part.site),
            _ => None,
        }
    }

    /// What the user pays [G$].
    pub fn cost(&self) -> f64 {
        self.parts.iter().map(|part| part.cost).sum()
    }
}

/// The outcome of one scheduling round.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    /// One assignment per application, aligned with [`Snapshot::apps`].
    pub assignments: Vec<Assignment>,
    /// Combined user spending on real sites [G$], the objective (4.1).
    pub cost: f64,
    /// The quantity every policy minimises: `cost` plus the dummy penalty of each rolled-over application (4.9),
    /// pro rata for partly rolled-over MGN applications.
    pub objective: f64,
    /// GA generations run (thesis Fig. 4.4), for the GA-based policies.
    pub generations: Option<u64>,
    /// Why the configured MGN solver's answer was not used: it failed and the transportation solver stood in.
    pub fallback: Option<String>,
}

impl Schedule {
    /// How many applications are placed whole.
    pub fn placed(&self) -> usize {
        self.assignments.iter().filter(|assignment| assignment.is_placed()).count()
    }

    /// The site of each application placed whole on one site, `None` for the others (see [`Assignment::site`]).
    pub fn sites(&self) -> Vec<Option<usize>> {
        self.assignments.iter().map(Assignment::site).collect()
    }

    /// How many CPUs (tasks) are placed on real sites.
    pub fn placed_cpus(&self) -> u64 {
        self.assignments.iter().flat_map(|assignment| &assignment.parts).map(|part| u64::from(part.cpus)).sum()
    }
}

/// A snapshot pre-processed for the scheduling policies: admissible pairs, costs, priorities and dummy penalties.
#[derive(Clone, Debug)]
pub struct Problem<'a> {
    snapshot: &'a Snapshot,
    /// Usable CPUs per site: 0 for an invalid offer.
    capacity: Vec<u32>,
    /// The usable sites grouped by (price, speed): an application costs the same on every site of a class, so
    /// its sites in cost order are its classes in cost order, each in index order, with no sort over all sites
    /// (a thousand sites sorted for every queued job every round was most of a large run's meta-broker).
    classes: Vec<SiteClass>,
    /// Per application: admissible sites, cheapest first (ties: lower site index), listed when first asked for.
    /// The greedy policy never asks: it walks the classes.
    options: Vec<OnceCell<Vec<SiteOption>>>,
    /// Application indices, highest priority first.
    order: Vec<usize>,
    /// Per application: the dummy penalty of (4.9); 0 for applications no site can take.
    penalty: Vec<f64>,
}

impl<'a> Problem<'a> {
    /// Pre-processes `snapshot`, ranking applications by `qos`.
    pub fn new(snapshot: &'a Snapshot, qos: QosIndex) -> Self {
        let now = snapshot.now;
        let usable = |site: &Site| now.is_finite() && site.is_valid();
        let capacity: Vec<u32> = snapshot.sites.iter().map(|site| if usable(site) { site.cpus } else { 0 }).collect();
        let classes = SiteClass::group(now, &snapshot.sites);
        let options = vec![OnceCell::new(); snapshot.apps.len()];
        let mut problem = Problem { snapshot, capacity, classes, options, order: Vec::new(), penalty: Vec::new() };
        // Per application, the cost of one task on its dearest admissible site (none: no site can take it).
        let dearest: Vec<Option<f64>> = (0..snapshot.apps.len()).map(|app| problem.dearest_task(app)).collect();

        let alpha: Vec<f64> = snapshot
            .apps
            .iter()
            .map(|app| {
                if !app.is_valid() {
                    return -1.0;
                }
                let Some(deadline) = app.deadline else { return 0.0 };
                let slack = deadline - (now + app.runtime);
                match qos {
                    QosIndex::FairMarket if slack > 0.0 => 1.0 / slack.max(QOS_SLACK_FLOOR),
                    QosIndex::FairMarket => 0.0,
                    QosIndex::Incentive => app.budget.unwrap_or(f64::INFINITY) / slack.max(1.0),
                }
            })
            .collect();
        let mut order: Vec<usize> = (0..snapshot.apps.len()).collect();
        order.sort_by(|&a, &b| {
            let (x, y) = (&snapshot.apps[a], &snapshot.apps[b]);
            alpha[b].total_cmp(&alpha[a]).then(x.submit.total_cmp(&y.submit)).then(x.id.cmp(&y.id)).then(a.cmp(&b))
        });

        // C exceeds the dearest real schedule: every application on its dearest admissible site.
        let most: f64 = snapshot
            .apps
            .iter()
            .zip(&dearest)
            .filter_map(|(app, task)| task.map(|task_cost| f64::from(app.cpus) * task_cost))
            .sum();
        let big_c = (1.0 + most).min(f64::MAX);
        let n = snapshot.apps.len();
        let mut penalty = vec![0.0; n];
        for (position, &app) in order.iter().enumerate() {
            if dearest[app].is_some() {
                penalty[app] = big_c * (n - position) as f64;
            }
        }
        (problem.order, problem.penalty) = (order, penalty);
        problem
    }

    /// Whether application `app` can be placed at all at this instant (a valid request, a finite instant).
    fn schedulable(&self, app: usize) -> bool {
        self.snapshot.now.is_finite() && self.snapshot.apps[app].is_valid()
    }

    /// The classes that may hold options of `app`, in cost order, grouped in runs of equal cost: each run's
    /// sites, in index order, are the next stretch of its options (before the admissibility filter). Call for
    /// schedulable applications only.
    fn runs(&self, app: usize) -> Vec<Cow<'_, [usize]>> {
        let a = &self.snapshot.apps[app];
        let mut costs: Vec<(f64, usize)> = (self.classes.iter().enumerate())
            .filter(|(_, class)| !class.rules_out(a))
            .map(|(k, class)| (class.price * a.runtime / class.speed, k))
            .collect();
        costs.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        let mut runs: Vec<Cow<'_, [usize]>> = Vec::new();
        for (i, &(cost, k)) in costs.iter().enumerate() {
            let sites = &self.classes[k].sites;
            match runs.last_mut() {
                // Equal costs on two classes: their sites interleave by index, as in the one sort by (cost, index).
                Some(run) if costs[i - 1].0.total_cmp(&cost).is_eq() => {
                    let merged = run.to_mut();
                    merged.extend(sites);
                    merged.sort_unstable();
                }
                _ => runs.push(Cow::Borrowed(sites)),
            }
        }
        runs
    }

    /// The option of `app` on `site` if it is admissible (see [`admissible`]).
    fn option_on(&self, app: usize, site: usize) -> Option<SiteOption> {
        let (now, sites) = (self.snapshot.now, &self.snapshot.sites);
        if !self.schedulable(app) || !sites[site].is_valid() {
            return None;
        }
        option(now, &self.snapshot.apps[app], site, &sites[site])
    }

    /// What one task of `app` costs on its dearest admissible site, if it has one.
    fn dearest_task(&self, app: usize) -> Option<f64> {
        if !self.schedulable(app) {
            return None;
        }
        let runs = self.runs(app);
        runs.iter()
            .rev()
            .flat_map(|run| run.iter().rev())
            .find_map(|&site| self.option_on(app, site))
            .map(|c| c.task_cost)
    }

    /// The snapshot this problem was built from.
    pub fn snapshot(&self) -> &'a Snapshot {
        self.snapshot
    }

    /// Number of applications.
    pub fn apps(&self) -> usize {
        self.options.len()
    }

    /// Number of sites (the dummy provider excluded).
    pub fn sites(&self) -> usize {
        self.capacity.len()
    }

    /// CPUs m_j of application `app`.
    pub fn cpus(&self, app: usize) -> u32 {
        self.snapshot.apps[app].cpus
    }

    /// Usable CPUs n_i of site `site`: 0 for an invalid offer.
    pub fn capacity(&self, site: usize) -> u32 {
        self.capacity[site]
    }

    /// Sites admissible for the tasks of application `app`, cheapest first (ties: lower index).
    pub fn site_options(&self, app: usize) -> &[SiteOption] {
        self.options[app].get_or_init(|| {
            let now = self.snapshot.now;
            let app = &self.snapshot.apps[app];
            if now.is_finite() && app.is_valid() { admissible(now, app, &self.snapshot.sites) } else { Vec::new() }
        })
    }

    /// The option of application `app` on site `site`, if that site is admissible.
    pub fn site_option(&self, app: usize, site: usize) -> Option<SiteOption> {
        self.option_on(app, site)
    }

    /// Whether site `site` can take application `app` whole (SGN): admissible, and enough CPUs.
    pub fn fits_whole(&self, app: usize, site: usize) -> bool {
        self.cpus(app) <= self.capacity[site] && self.site_option(app, site).is_some()
    }

    /// Application indices, highest priority (QoS index) first.
    pub fn priority_order(&self) -> &[usize] {
        &self.order
    }

    /// Dummy-provider penalty of application `app` (4.9); 0 if no site can take it, as every schedule rolls it over.
    pub fn penalty(&self, app: usize) -> f64 {
        self.penalty[app]
    }

    /// The cheapest option of `app` whose site still has `free` CPUs for the whole application.
    pub(crate) fn cheapest_fit(&self, app: usize, free: &[u32]) -> Option<SiteOption> {
        if !self.schedulable(app) {
            return None;
        }
        let cpus = self.cpus(app);
        let runs = self.runs(app);
        runs.iter()
            .flat_map(|run| run.iter())
            .filter(|&&site| cpus <= free[site])
            .find_map(|&site| self.option_on(app, site))
    }

    /// What `app` contributes to the objective with `parts` placed and `rolled_over` CPUs on the dummy.
    ///
    /// The GA's fitness uses the same arithmetic, so a GA seeded with a schedule scores it exactly.
    pub(crate) fn term(&self, app: usize, parts: &[Part], rolled_over: u32) -> f64 {
        let real: f64 = parts.iter().map(|part| part.cost).sum();
        let cpus = self.cpus(app);
        let dummy = match rolled_over {
            0 => 0.0,
            r if r >= cpus => self.penalty[app],
            r => self.penalty[app] * f64::from(r) / f64::from(cpus),
        };
        real + dummy
    }

    /// The schedule made of `assignments` (one per application).
    pub(crate) fn schedule(&self, assignments: Vec<Assignment>, generations: Option<u64>) -> Schedule {
        let cost = assignments.iter().map(Assignment::cost).sum();
        let objective = assignments.iter().enumerate().map(|(app, a)| self.term(app, &a.parts, a.rolled_over)).sum();
        Schedule { assignments, cost, objective, generations, fallback: None }
    }

    /// The SGN schedule placing each application whole on `choice[app]` (a site index), or on the dummy for `None`.
    pub(crate) fn sgn_schedule(&self, choice: &[Option<usize>], generations: Option<u64>) -> Schedule {
        let assignments = choice
            .iter()
            .enumerate()
            .map(|(app, site)| match site.and_then(|site| self.option_on(app, site)) {
                Some(c) => Assignment { parts: vec![c.part(self.cpus(app))], rolled_over: 0 },
                None => self.rolled_over(app),
            })
            .collect();
        self.schedule(assignments, generations)
    }

    /// The assignment rolling `app` over whole.
    pub(crate) fn rolled_over(&self, app: usize) -> Assignment {
        Assignment { parts: Vec::new(), rolled_over: self.cpus(app) }
    }

    /// The schedule rolling every application over: what an empty or infeasible round yields.
    pub fn all_dummy(&self) -> Schedule {
        self.schedule((0..self.apps()).map(|app| self.rolled_over(app)).collect(), None)
    }
}

/// The sites admissible for the tasks of valid application `app` at instant `now`, cheapest first (ties: lower
/// index): usable offers on which it finishes by its deadline (4.7) and the window's end, within its budget (4.6).
fn admissible(now: f64, app: &App, sites: &[Site]) -> Vec<SiteOption> {
    let mut list: Vec<SiteOption> = sites
        .iter()
        .enumerate()
        .filter(|(_, site)| site.is_valid())
        .filter_map(|(index, site)| option(now, app, index, site))
        .collect();
    list.sort_by(|a, b| a.task_cost.total_cmp(&b.task_cost).then(a.site.cmp(&b.site)));
    list
}

/// Valid application `app` on valid site `site` (number `index`) at instant `now`, if admissible: it finishes by its
/// deadline (4.7) and the window's end, within its budget (4.6).
fn option(now: f64, app: &App, index: usize, site: &Site) -> Option<SiteOption> {
    let start = now.max(site.from);
    let finish = start + app.runtime / site.speed;
    let task_cost = site.price * app.runtime / site.speed;
    let whole = f64::from(app.cpus) * task_cost;
    let in_time = app.deadline.is_none_or(|d| finish <= d) && site.until.is_none_or(|u| finish <= u);
    let affordable = app.budget.is_none_or(|b| whole <= b);
    (finish.is_finite() && whole.is_finite() && in_time && affordable).then_some(SiteOption {
        site: index,
        task_cost,
        start,
        finish,
    })
}

/// The valid sites of one price and speed, and what bounds their windows.
#[derive(Clone, Debug)]
struct SiteClass {
    price: f64,
    speed: f64,
    /// Site indices, ascending.
    sites: Vec<usize>,
    /// The earliest start any of them offers (`max(now, from)`).
    earliest: f64,
    /// The latest window end, `None` if some window is unbounded.
    latest: Option<f64>,
}

impl SiteClass {
    /// The valid sites grouped by (price, speed), to the bit (the same bits: the same costs and durations), classes
    /// in order of their lowest index.
    fn group(now: f64, sites: &[Site]) -> Vec<SiteClass> {
        let mut classes: Vec<SiteClass> = Vec::new();
        let mut by_bits: BTreeMap<(u64, u64), usize> = BTreeMap::new();
        for (index, site) in sites.iter().enumerate().filter(|(_, site)| now.is_finite() && site.is_valid()) {
            let start = now.max(site.from);
            let bits = (site.price.to_bits(), site.speed.to_bits());
            match by_bits.get(&bits).map(|&k: &usize| &mut classes[k]) {
                Some(c) => {
                    c.sites.push(index);
                    c.earliest = c.earliest.min(start);
                    c.latest = c.latest.zip(site.until).map(|(a, b)| a.max(b));
                }
                None => {
                    by_bits.insert(bits, classes.len());
                    classes.push(SiteClass {
                        price: site.price,
                        speed: site.speed,
                        sites: vec![index],
                        earliest: start,
                        latest: site.until,
                    })
                }
            }
        }
        classes
    }

    /// Whether no site of the class can be admissible for `app`: even its earliest start ends past the latest
    /// window end or the deadline (rounding is monotonic, so no site's finish is earlier).
    fn rules_out(&self, app: &App) -> bool {
        let finish = self.earliest + app.runtime / self.speed;
        self.latest.is_some_and(|u| finish > u) || app.deadline.is_some_and(|d| finish > d)
    }
}
