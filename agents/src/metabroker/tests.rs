//! Instances shared by the meta-broker tests, the feasibility check, and the cross-policy tests.

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::model::{App, Assignment, Problem, Schedule, Site, Snapshot};
use super::{Params, SchedulingPolicy, lp, schedule, schedule_with};

const POLICIES: [SchedulingPolicy; 6] = [
    SchedulingPolicy::Greedy,
    SchedulingPolicy::Lp,
    SchedulingPolicy::Mmc,
    SchedulingPolicy::Ga,
    SchedulingPolicy::Lpga,
    SchedulingPolicy::Hga,
];

/// An application with no budget.
pub(crate) fn app(id: u64, cpus: u32, runtime: f64, deadline: Option<f64>, submit: f64) -> App {
    App { id, cpus, runtime, budget: None, deadline, submit }
}

/// A reference-speed site free from time 0, without end.
pub(crate) fn site(id: u64, cpus: u32, price: f64) -> Site {
    Site { id, cpus, speed: 1.0, price, from: 0.0, until: None }
}

/// The hand-worked instance: S0 (4 CPUs at 1 G$/CPU-s), S1 (4 CPUs at 2), all at reference speed, T = 0;
/// A0 (3 CPUs, 10 s, deadline 100), A1 (2 CPUs, 20 s, deadline 50), A2 (3 CPUs, 30 s, deadline 200), submitted
/// in that order.
///
/// Per-task costs on S0/S1: A0 10/20, A1 20/40, A2 30/60. QoS index (4.11): slacks 90, 30, 170 rank A1, A0, A2;
/// C = 1 + 60 + 80 + 180 = 321, so the dummy penalties are A1 963, A0 642, A2 321.
pub(crate) fn hand_snapshot() -> Snapshot {
    Snapshot {
        now: 0.0,
        apps: vec![
            app(0, 3, 10.0, Some(100.0), 0.0),
            app(1, 2, 20.0, Some(50.0), 1.0),
            app(2, 3, 30.0, Some(200.0), 2.0),
        ],
        sites: vec![site(0, 4, 1.0), site(1, 4, 2.0)],
    }
}

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut Pcg64Mcg) -> f64 {
    let radius = (-2.0 * (1.0 - rng.random::<f64>()).ln()).sqrt();
    radius * (std::f64::consts::TAU * rng.random::<f64>()).cos()
}

/// A chapter 4 round (§4.3.1): `apps` applications of about 5 CPUs (Gaussian), 400 s ± 20%, submitted in the
/// first 20 s, budget twice the average cost; `sites` sites of 4–12 CPUs at 4–5 G$ (Gaussian, mean 4.5), speeds
/// U[1, 1.33] (the EDG MIPS range over 1,000); scheduled at T = 50 s (end of the first SI). `deadline` 0, 1, 2 =
/// tight, medium, relaxed: runtime + 50, 250, 500 s (± 20%) after submission. Some sites open later or close
/// early, to exercise the free windows.
pub(crate) fn ch4_snapshot(seed: u64, apps: usize, sites: usize, deadline: u64) -> Snapshot {
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let extra = [50.0, 250.0, 500.0][deadline as usize % 3];
    let apps = (0..apps as u64)
        .map(|id| {
            let runtime = 400.0 * (1.0 + 0.1 * normal(&mut rng)).clamp(0.8, 1.2);
            let submit = 20.0 * rng.random::<f64>();
            App {
                id,
                cpus: (5.0 + 1.5 * normal(&mut rng)).round().clamp(1.0, 12.0) as u32,
                runtime,
                budget: Some(2.0 * 4.5 * 400.0 * 5.0),
                deadline: Some(submit + runtime + extra * (1.0 + 0.1 * normal(&mut rng)).clamp(0.8, 1.2)),
                submit,
            }
        })
        .collect();
    let sites = (0..sites as u64)
        .map(|id| {
            let window = rng.random::<f64>();
            Site {
                id,
                cpus: rng.random_range(4..=12),
                speed: rng.random_range(1.0..1.33),
                price: (4.5 + 0.25 * normal(&mut rng)).clamp(4.0, 5.0),
                from: if window < 0.1 { 150.0 } else { 0.0 },
                until: (window > 0.9).then_some(500.0),
            }
        })
        .collect();
    Snapshot { now: 50.0, apps, sites }
}

/// Checks every invariant of a schedule: one assignment per application, all CPUs accounted for, parts only on
/// admissible sites with the right times and costs, deadlines, windows, budgets and capacities respected, rolled-
/// over CPUs on the dummy, totals consistent; with `sgn`, every application whole on one site or rolled over.
pub(crate) fn assert_feasible(problem: &Problem, schedule: &Schedule, sgn: bool) {
    let snapshot = problem.snapshot();
    assert_eq!(schedule.assignments.len(), snapshot.apps.len());
    let mut load = vec![0u32; snapshot.sites.len()];
    for (index, (app, assignment)) in snapshot.apps.iter().zip(&schedule.assignments).enumerate() {
        let placed: u32 = assignment.parts.iter().map(|part| part.cpus).sum();
        assert_eq!(placed + assignment.rolled_over, app.cpus, "app {index}: CPUs not accounted for");
        if sgn {
            assert!(assignment.parts.is_empty() || assignment.site().is_some(), "app {index} split: {assignment:?}");
        }
        for part in &assignment.parts {
            let site = &snapshot.sites[part.site];
            assert!(part.cpus > 0);
            assert!(problem.site_option(index, part.site).is_some(), "app {index} on inadmissible site {}", part.site);
            assert_eq!(part.start, snapshot.now.max(site.from));
            assert_eq!(part.finish, part.start + app.runtime / site.speed);
            assert!(app.deadline.is_none_or(|d| part.finish <= d), "app {index} misses its deadline");
            assert!(site.until.is_none_or(|u| part.finish <= u), "app {index} overruns the window");
            assert_eq!(part.cost, f64::from(part.cpus) * (site.price * app.runtime / site.speed));
            load[part.site] += part.cpus;
        }
        assert!(app.budget.is_none_or(|b| assignment.cost() <= b * (1.0 + 1e-12)), "app {index} over budget");
    }
    for (site, (&load, offer)) in load.iter().zip(&snapshot.sites).enumerate() {
        assert!(load <= problem.capacity(site) && load <= offer.cpus, "site {site} over capacity: {load}");
    }
    let cost: f64 = schedule.assignments.iter().map(Assignment::cost).sum();
    assert_eq!(schedule.cost, cost);
    let objective: f64 =
        schedule.assignments.iter().enumerate().map(|(app, a)| problem.term(app, &a.parts, a.rolled_over)).sum();
    assert_eq!(schedule.objective, objective);
}

#[test]
fn every_policy_is_feasible_deterministic_and_bounded_by_the_relaxation() {
    for seed in 0..9 {
        // From scarce (demand well above supply) to plentiful.
        let snapshot = ch4_snapshot(seed, 50, [5, 25, 60][seed as usize / 3], seed % 3);
        let problem = Problem::new(&snapshot, Default::default());
        let bound = lp::mgn_transportation(&problem).objective;
        for policy in POLICIES {
            let result = schedule(policy, &snapshot, seed);
            assert_feasible(&problem, &result, policy != SchedulingPolicy::Lp);
            assert_eq!(result, schedule(policy, &snapshot, seed), "{policy:?} not deterministic");
            assert!(bound <= result.objective * (1.0 + 1e-12), "{policy:?}: {} < relaxation {bound}", result.objective);
        }
    }
}

#[test]
fn relaxation_bounds_every_feasible_integer_schedule_of_a_small_instance() {
    // Every SGN schedule of 5 applications on 2 sites + dummy (3^5 = 243), feasible ones only.
    for seed in 0..4 {
        let snapshot = ch4_snapshot(40 + seed, 5, 2, 2);
        let problem = Problem::new(&snapshot, Default::default());
        let bound = lp::mgn_transportation(&problem).objective;
        let optimum = lp::sgn_ip(&problem).unwrap().objective;
        let mut best = f64::INFINITY;
        for code in 0..3usize.pow(5) {
            let choice: Vec<Option<usize>> =
                (0..5).map(|app| Some(code / 3usize.pow(app) % 3).filter(|&site| site < 2)).collect();
            let mut load = [0u32; 2];
            let admissible = choice.iter().enumerate().all(|(app, site)| {
                site.is_none_or(|site| {
                    load[site] += problem.cpus(app);
                    problem.site_option(app, site).is_some()
                })
            });
            if !admissible || (0..2).any(|site| load[site] > problem.capacity(site)) {
                continue;
            }
            let objective = problem.sgn_schedule(&choice, None).objective;
            assert!(bound <= objective * (1.0 + 1e-12), "seed {seed}: {objective} < relaxation {bound}");
            best = best.min(objective);
        }
        assert_eq!(best, optimum, "seed {seed}: the IP optimum is the enumeration's");
    }
}

#[test]
fn odd_snapshots_roll_everything_over_without_panicking() {
    let empty = Snapshot::default();
    let no_sites = Snapshot { now: 0.0, apps: vec![app(0, 2, 10.0, None, 0.0)], sites: vec![] };
    let odd_apps = Snapshot {
        now: 0.0,
        apps: vec![
            app(0, 0, 10.0, None, 0.0),
            app(1, 2, f64::NAN, None, 0.0),
            app(2, 2, 10.0, Some(f64::NAN), f64::NAN),
            app(3, 2, 10.0, Some(5.0), 0.0),
            App { budget: Some(1.0), ..app(4, 2, 10.0, None, 0.0) },
            app(5, 9, 10.0, None, 0.0),
        ],
        sites: vec![
            site(0, 4, 1.0),
            Site { speed: 0.0, ..site(1, 4, 1.0) },
            Site { price: f64::INFINITY, ..site(2, 4, 1.0) },
            Site { until: Some(f64::NAN), ..site(3, 4, 1.0) },
        ],
    };
    let no_clock = Snapshot { now: f64::NAN, ..hand_snapshot() };
    for snapshot in [empty, no_sites, odd_apps, no_clock] {
        let problem = Problem::new(&snapshot, Default::default());
        for policy in POLICIES {
            let result = schedule(policy, &snapshot, 3);
            assert_feasible(&problem, &result, policy != SchedulingPolicy::Lp);
            assert_eq!(result.placed(), 0, "{policy:?} on {snapshot:?}");
            // Only LP may split: 4 of app 5's 9 tasks on the one valid site, the other 5 rolled over.
            let expected = if policy == SchedulingPolicy::Lp && snapshot.apps.len() == 6 { 4 } else { 0 };
            assert_eq!(result.placed_cpus(), expected, "{policy:?} on {snapshot:?}");
        }
    }
}

#[test]
fn astronomical_prices_do_not_panic() {
    // Costs near f64::MAX make the dummy penalties infinite: schedules stay feasible, whatever they cost.
    let snapshot = Snapshot { sites: vec![site(0, 4, 1e306), site(1, 4, 1.0)], ..hand_snapshot() };
    let problem = Problem::new(&snapshot, Default::default());
    let microlp = Params { mgn_solver: lp::MgnSolver::Microlp, ..Params::default() };
    for policy in POLICIES {
        for params in [&Params::default(), &microlp] {
            assert_feasible(&problem, &schedule_with(policy, &snapshot, 5, params), policy != SchedulingPolicy::Lp);
        }
    }
}

#[test]
fn microlp_and_transportation_policies_agree() {
    let snapshot = ch4_snapshot(77, 30, 10, 1);
    let microlp = Params { mgn_solver: lp::MgnSolver::Microlp, ..Params::default() };
    for policy in [SchedulingPolicy::Lp, SchedulingPolicy::Mmc] {
        let a = schedule(policy, &snapshot, 0).objective;
        let b = schedule_with(policy, &snapshot, 0, &microlp).objective;
        assert!((a - b).abs() <= 1e-9 * a, "{policy:?}: {a} vs {b}");
    }
}

#[test]
fn policy_names_are_kebab_case() {
    let names: Vec<String> = POLICIES.iter().map(|p| serde_json::to_string(p).unwrap()).collect();
    assert_eq!(names, ["\"greedy\"", "\"lp\"", "\"mmc\"", "\"ga\"", "\"lpga\"", "\"hga\""]);
    for (policy, name) in POLICIES.iter().zip(&names) {
        assert_eq!(&serde_json::from_str::<SchedulingPolicy>(name).unwrap(), policy);
    }
}

#[test]
fn walking_site_classes_finds_what_the_sorted_options_find() {
    // Few prices and speeds, so classes are large and some cost the same (price 2 at speed 2 = price 1 at speed 1):
    // the greedy's walk over classes must meet the sorted list of options exactly, and so must the penalties.
    let mut rng = Pcg64Mcg::seed_from_u64(3);
    for round in 0..40 {
        let now = 100.0 * f64::from(round);
        let sites: Vec<Site> = (0..60)
            .map(|id| {
                let (price, speed) =
                    [(1.0, 1.0), (2.0, 2.0), (1.5, 1.0), (3.0, 2.0), (1.0, 1.25)][rng.random_range(0..5)];
                Site {
                    id,
                    cpus: rng.random_range(0..9),
                    speed,
                    price,
                    from: now + [0.0, -50.0, 30.0][rng.random_range(0..3)],
                    until: [None, Some(now + 200.0), Some(now + 900.0)][rng.random_range(0..3)],
                }
            })
            .collect();
        let apps: Vec<App> = (0..30)
            .map(|id| App {
                id,
                cpus: rng.random_range(1..6),
                runtime: rng.random_range(10.0..1_000.0),
                budget: rng.random_bool(0.3).then(|| rng.random_range(100.0..3_000.0)),
                deadline: rng.random_bool(0.3).then(|| now + rng.random_range(100.0..1_500.0)),
                submit: now - rng.random_range(0.0..100.0),
            })
            .collect();
        let snapshot = Snapshot { now, apps, sites };
        let problem = Problem::new(&snapshot, Default::default());
        let most: f64 = (0..problem.apps())
            .filter_map(|app| problem.site_options(app).last().map(|c| f64::from(problem.cpus(app)) * c.task_cost))
            .sum();
        let n = problem.apps();
        for (position, &app) in problem.priority_order().iter().enumerate() {
            let options = problem.site_options(app);
            let expected = if options.is_empty() { 0.0 } else { (1.0 + most) * (n - position) as f64 };
            assert_eq!(problem.penalty(app), expected, "round {round}, app {app}");
            for site in 0..snapshot.sites.len() {
                assert_eq!(problem.site_option(app, site), options.iter().find(|c| c.site == site).copied());
            }
            let free: Vec<u32> = (0..snapshot.sites.len()).map(|_| rng.random_range(0..6)).collect();
            let cpus = problem.cpus(app);
            assert_eq!(problem.cheapest_fit(app, &free), options.iter().find(|c| cpus <= free[c.site]).copied());
        }
    }
}
