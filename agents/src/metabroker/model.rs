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
    /// Per application: admissible sites, cheapest first (ties: lower site index).
    options: Vec<Vec<SiteOption>>,
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
        let admissible_now =
            |app: &App| (now.is_finite() && app.is_valid()).then(|| admissible(now, app, &snapshot.sites));
        let options: Vec<Vec<SiteOption>> =
            snapshot.apps.iter().map(|app| admissible_now(app).unwrap_or_default()).collect();

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
        let dearest: f64 = snapshot
            .apps
            .iter()
            .zip(&options)
            .filter_map(|(app, list)| list.last().map(|c| f64::from(app.cpus) * c.task_cost))
            .sum();
        let big_c = (1.0 + dearest).min(f64::MAX);
        let n = snapshot.apps.len();
        let mut penalty = vec![0.0; n];
        for (position, &app) in order.iter().enumerate() {
            if !options[app].is_empty() {
                penalty[app] = big_c * (n - position) as f64;
            }
        }
        Problem { snapshot, capacity, options, order, penalty }
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
        &self.options[app]
    }

    /// The option of application `app` on site `site`, if that site is admissible.
    pub fn site_option(&self, app: usize, site: usize) -> Option<&SiteOption> {
        self.options[app].iter().find(|c| c.site == site)
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
        let cpus = self.cpus(app);
        self.options[app].iter().find(|c| cpus <= free[c.site]).copied()
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
            .map(|(app, site)| match site.and_then(|site| self.site_option(app, site)) {
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
        .filter_map(|(index, site)| {
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
        })
        .collect();
    list.sort_by(|a, b| a.task_cost.total_cmp(&b.task_cost).then(a.site.cmp(&b.site)));
    list
}
