//! The LP/IP models of thesis chapter 4: the MGN relaxation (§4.2.1) and the SGN assignment IP (4.1)–(4.8).
//!
//! MGN = multi-grid-node (bag-of-tasks) applications, whose tasks may run on different sites; SGN = single-grid-node
//! (rigid parallel) applications, which need all their CPUs on one site.
//!
//! The MGN model drops the assignment constraints (4.4)/(4.5): r_ij tasks of application j run on site i,
//! `sum_j r_ij <= n_i`, `sum_i r_ij = m_j`, and pairs that miss the deadline or budget are excluded (see
//! [`super::model`] for the budget reading). A dummy provider with unbounded capacity takes the tasks no real site
//! can, at `penalty_j / m_j` per task (the (4.9) penalty spread over the tasks), so the model is always feasible
//! and an SGN schedule rolling application j over pays exactly its penalty: the relaxation's objective is a lower
//! bound on every SGN schedule's. The thesis solves it with Coin-OR's simplex; here it is a transportation problem,
//! solved exactly by [`MgnSolver::Transportation`] (a network simplex) or, for comparison, as an LP through good_lp
//! by microlp. Both return integral optima (transportation polytopes have integral vertices).
//!
//! [`sgn_ip`] solves the 0-1 assignment IP itself with microlp's branch and bound: exponential in the worst case,
//! meant for reference optima on small instances.

use good_lp::{
    Constraint, Expression, ProblemVariables, ResolutionError, Solution, Solver, SolverModel, Variable, microlp,
    variable,
};
use serde::{Deserialize, Serialize};

use super::model::{Assignment, Problem, Schedule};
use super::transport::transport;

/// Which solver computes the MGN relaxation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MgnSolver {
    /// The compact exact transportation solver (network simplex): fast, the default.
    #[default]
    Transportation,
    /// The general LP solver microlp through good_lp: seconds at 200 × 100, tens of seconds at 500 × 200.
    Microlp,
}

/// The MGN relaxation of `problem` as a schedule: applications may be split across sites, and tasks no site takes
/// stay on the dummy provider (`rolled_over`). Only the microlp solver can fail.
pub fn mgn_relaxation(problem: &Problem, solver: MgnSolver) -> Result<Schedule, ResolutionError> {
    match solver {
        MgnSolver::Transportation => Ok(mgn_transportation(problem)),
        MgnSolver::Microlp => mgn_lp(problem, microlp),
    }
}

/// Per-task price of the dummy provider for `app`: its penalty spread over its tasks.
fn dummy_task_cost(problem: &Problem, app: usize) -> f64 {
    problem.penalty(app) / f64::from(problem.cpus(app))
}

/// The MGN relaxation solved exactly as a transportation problem (network simplex).
pub fn mgn_transportation(problem: &Problem) -> Schedule {
    let supply: Vec<u32> = (0..problem.apps())
        .map(|app| if problem.site_options(app).is_empty() { 0 } else { problem.cpus(app) })
        .collect();
    let arcs: Vec<Vec<(usize, f64)>> = (0..problem.apps())
        .map(|app| problem.site_options(app).iter().map(|c| (c.site, c.task_cost)).collect())
        .collect();
    let overflow: Vec<f64> =
        (0..problem.apps()).map(|app| if supply[app] == 0 { 0.0 } else { dummy_task_cost(problem, app) }).collect();
    let capacity: Vec<u32> = (0..problem.sites()).map(|site| problem.capacity(site)).collect();
    let (flows, _) = transport(&supply, &capacity, &arcs, &overflow);
    let tasks = arcs
        .iter()
        .zip(&flows)
        .map(|(arcs, flows)| arcs.iter().zip(flows).map(|(&(site, _), &tasks)| (site, tasks)).collect())
        .collect();
    mgn_schedule(problem, tasks)
}

/// The schedule placing `tasks[app]` = `(site, tasks)` pairs; the rest of each application is rolled over.
fn mgn_schedule(problem: &Problem, tasks: Vec<Vec<(usize, u32)>>) -> Schedule {
    let assignments = tasks
        .into_iter()
        .enumerate()
        .map(|(app, mut list)| {
            list.retain(|&(_, count)| count > 0);
            list.sort_unstable();
            let parts: Vec<_> = list
                .iter()
                .filter_map(|&(site, count)| problem.site_option(app, site).map(|c| c.part(count)))
                .collect();
            let placed: u32 = parts.iter().map(|part| part.cpus).sum();
            Assignment { parts, rolled_over: problem.cpus(app).saturating_sub(placed) }
        })
        .collect();
    problem.schedule(assignments, None)
}

/// Minimises `objective` with `solver` under each site's capacity row (`per_site`, when the site is used) and
/// `rows`; shared by the MGN relaxation and the SGN IP.
fn solve_with_capacities<S: Solver>(
    solver: S,
    problem: &Problem,
    vars: ProblemVariables,
    objective: Expression,
    per_site: Vec<Option<Expression>>,
    rows: Vec<Constraint>,
) -> Result<impl Solution, ResolutionError>
where
    S::Model: SolverModel<Error = ResolutionError>,
{
    let mut model = vars.minimise(objective).using(solver);
    for (site, row) in per_site.into_iter().enumerate() {
        if let Some(row) = row {
            model.add_constraint(row.leq(f64::from(problem.capacity(site))));
        }
    }
    for row in rows {
        model.add_constraint(row);
    }
    model.solve()
}

/// The MGN relaxation solved as an LP by a good_lp `solver`.
fn mgn_lp<S: Solver>(problem: &Problem, solver: S) -> Result<Schedule, ResolutionError>
where
    S::Model: SolverModel<Error = ResolutionError>,
{
    if (0..problem.apps()).all(|app| problem.site_options(app).is_empty()) {
        return Ok(problem.all_dummy());
    }
    let mut vars = ProblemVariables::new();
    let mut objective = Expression::default();
    let mut per_site: Vec<Option<Expression>> = vec![None; problem.sites()];
    let mut demands = Vec::new();
    let mut columns: Vec<Vec<(usize, Variable)>> = Vec::with_capacity(problem.apps());
    for app in 0..problem.apps() {
        let list = problem.site_options(app);
        let mut column = Vec::with_capacity(list.len());
        if !list.is_empty() {
            let mut demand = Expression::default();
            for c in list {
                let r = vars.add(variable().min(0));
                objective.add_mul(c.task_cost, r);
                per_site[c.site].get_or_insert_with(Expression::default).add_mul(1.0, r);
                demand.add_mul(1.0, r);
                column.push((c.site, r));
            }
            let dummy = vars.add(variable().min(0));
            objective.add_mul(dummy_task_cost(problem, app), dummy);
            demand.add_mul(1.0, dummy);
            demands.push(demand.eq(f64::from(problem.cpus(app))));
        }
        columns.push(column);
    }
    let solution = solve_with_capacities(solver, problem, vars, objective, per_site, demands)?;
    // The optimum is a vertex, hence integral; rounding only removes solver noise, and the clamps keep
    // capacities and CPU counts exact whatever comes back.
    let mut room: Vec<u32> = (0..problem.sites()).map(|site| problem.capacity(site)).collect();
    let tasks = columns
        .iter()
        .enumerate()
        .map(|(app, column)| {
            let mut left = problem.cpus(app);
            column
                .iter()
                .map(|&(site, r)| {
                    let count = (solution.value(r).round().max(0.0) as u32).min(left).min(room[site]);
                    left -= count;
                    room[site] -= count;
                    (site, count)
                })
                .collect()
        })
        .collect();
    Ok(mgn_schedule(problem, tasks))
}

/// The SGN assignment IP (4.1)–(4.8) with the dummy provider, solved exactly by microlp's branch and bound.
///
/// Exponential in the worst case: a reference optimum for small instances, not a scheduling policy.
pub fn sgn_ip(problem: &Problem) -> Result<Schedule, ResolutionError> {
    sgn_ip_with(problem, microlp)
}

fn sgn_ip_with<S: Solver>(problem: &Problem, solver: S) -> Result<Schedule, ResolutionError>
where
    S::Model: SolverModel<Error = ResolutionError>,
{
    let mut vars = ProblemVariables::new();
    let mut objective = Expression::default();
    let mut per_site: Vec<Option<Expression>> = vec![None; problem.sites()];
    let mut rows = Vec::new();
    let mut columns: Vec<Vec<(usize, Variable)>> = Vec::with_capacity(problem.apps());
    for app in 0..problem.apps() {
        let cpus = problem.cpus(app);
        let mut column = Vec::new();
        let mut one_site = Expression::default();
        for c in problem.site_options(app).iter().filter(|c| problem.fits_whole(app, c.site)) {
            let x = vars.add(variable().binary());
            objective.add_mul(f64::from(cpus) * c.task_cost, x);
            per_site[c.site].get_or_insert_with(Expression::default).add_mul(f64::from(cpus), x);
            one_site.add_mul(1.0, x);
            column.push((c.site, x));
        }
        if !column.is_empty() {
            let dummy = vars.add(variable().binary());
            objective.add_mul(problem.penalty(app), dummy);
            one_site.add_mul(1.0, dummy);
            rows.push(one_site.eq(1.0));
        }
        columns.push(column);
    }
    if rows.is_empty() {
        return Ok(problem.all_dummy());
    }
    let solution = solve_with_capacities(solver, problem, vars, objective, per_site, rows)?;
    let mut room: Vec<u32> = (0..problem.sites()).map(|site| problem.capacity(site)).collect();
    let choice: Vec<Option<usize>> = columns
        .iter()
        .enumerate()
        .map(|(app, column)| {
            let cpus = problem.cpus(app);
            let site = column.iter().find(|&&(site, x)| solution.value(x) > 0.5 && cpus <= room[site])?.0;
            room[site] -= cpus;
            Some(site)
        })
        .collect();
    Ok(problem.sgn_schedule(&choice, None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metabroker::model::QosIndex;
    use crate::metabroker::tests::{assert_feasible, ch4_snapshot, hand_snapshot};

    #[test]
    fn hand_instance_relaxation_and_ip() {
        let snapshot = hand_snapshot();
        let problem = Problem::new(&snapshot, QosIndex::FairMarket);
        for solver in [MgnSolver::Transportation, MgnSolver::Microlp] {
            let lp = mgn_relaxation(&problem, solver).unwrap();
            // Per-task savings of the cheap site: A2 30 > A1 20 > A0 10, so S0 takes A2's 3 tasks and 1 of A1's.
            let split: Vec<Vec<(usize, u32)>> =
                lp.assignments.iter().map(|a| a.parts.iter().map(|p| (p.site, p.cpus)).collect()).collect();
            assert_eq!(split, vec![vec![(1, 3)], vec![(0, 1), (1, 1)], vec![(0, 3)]], "{solver:?}");
            assert_eq!(lp.cost, 210.0);
            assert_eq!(lp.objective, 210.0);
        }
        // IP: the sites hold one 3-CPU application each, so one application is rolled over: the lowest-priority
        // A2 (penalty C = 321), with A1 on S0 (40) and A0 on S1 (60).
        let ip = sgn_ip(&problem).unwrap();
        let sites = ip.sites();
        assert_eq!(sites, vec![Some(1), Some(0), None]);
        assert_eq!(ip.cost, 100.0);
        assert_eq!(ip.objective, 421.0);
    }

    #[test]
    fn transportation_matches_microlp_on_random_instances() {
        for seed in 0..12 {
            // Even seeds: demand far above supply (the dummy takes a lot); odd seeds: supply above demand.
            let apps = 30 + 5 * seed as usize;
            let sites = if seed % 2 == 0 { 6 + seed as usize } else { apps };
            let snapshot = ch4_snapshot(seed, apps, sites, seed % 3);
            let problem = Problem::new(&snapshot, QosIndex::FairMarket);
            let exact = mgn_relaxation(&problem, MgnSolver::Transportation).unwrap();
            let lp = mgn_relaxation(&problem, MgnSolver::Microlp).unwrap();
            assert_feasible(&problem, &exact, false);
            assert_feasible(&problem, &lp, false);
            let tolerance = 1e-9 * exact.objective.abs().max(1.0);
            assert!(
                (exact.objective - lp.objective).abs() <= tolerance,
                "seed {seed}: transportation {} vs microlp {}",
                exact.objective,
                lp.objective
            );
            assert_eq!(exact.placed_cpus(), lp.placed_cpus(), "seed {seed}");
        }
    }

    #[test]
    fn relaxation_bounds_the_ip() {
        for seed in 0..6 {
            let snapshot = ch4_snapshot(100 + seed, 10, 4, seed % 3);
            let problem = Problem::new(&snapshot, QosIndex::FairMarket);
            let lp = mgn_transportation(&problem);
            let ip = sgn_ip(&problem).unwrap();
            assert_feasible(&problem, &ip, true);
            assert!(lp.objective <= ip.objective + 1e-9 * ip.objective, "seed {seed}");
        }
    }
}
