//! The genetic algorithm (GA) of thesis §4.2.2 and its seeded variants LPGA and HGA, on the genevo crate.
//!
//! - Encoding: the chromosome S = (s_1, …, s_n) gives the site index of each application; index `sites` is the
//!   dummy provider (unbounded capacity, apps on it are rolled over). Genes only take sites that meet the
//!   application's deadline and budget and have enough CPUs in total, or the dummy.
//! - Fitness (4.9), minimised: the cost of every placed application plus the dummy penalty
//!   `C · (n + 1 − rank_j)` of every rolled-over one (see [`super::model`] for our reading and the QoS
//!   index (4.10)/(4.11) behind the ranks). A chromosome that overloads a site (4.2) is infeasible: it scores above
//!   every feasible one, more so the more CPUs it overbooks, which steers the search back to feasibility.
//! - Operators (our defaults where the thesis gives none): roulette-wheel selection (slices proportional to
//!   1 / (1 + F)), single-point crossover with probability 0.8, mutation re-assigning each gene with probability 0.05
//!   to a random feasible site (admissible and with the CPUs free given the other genes) or the dummy, elitism 1,
//!   population 50 (the seed plus random feasible chromosomes).
//! - Termination: no improvement of the best chromosome for 10 generations, or 1,000 generations.
//!
//! LPGA = linear-programming-based GA (Alg. 4.2): the GA seeded with MMC's schedule. HGA = heuristic GA: the GA
//! seeded with the greedy schedule. With elitism neither can end worse than its seed.
//!
//! Reproducibility: genevo draws from its own Xoshiro256+ (rand 0.8). Both its simulator seed and the seed of the
//! random initial chromosomes come from one PCG-64 stream seeded with the caller's `u64`; genevo's parallel parts
//! split that generator deterministically, so a seed fixes the run whatever the thread count.

use genevo::ga::State as GaState;
use genevo::genetic::{AsScalar, Children, Parents};
use genevo::operator::{CrossoverOp, GeneticOperator, MutationOp};
use genevo::prelude::{
    Algorithm, Fitness, FitnessFunction, Population, Rng, SimResult, Simulation, SimulationBuilder, genetic_algorithm,
    simulate,
};
use genevo::random::{Seed, SliceRandom, get_rng};
use genevo::reinsertion::elitist::ElitistReinserter;
use genevo::selection::proportionate::RouletteWheelSelector;
use genevo::simulation::State;
use genevo::termination::{StopFlag, Termination};
use rand::{Rng as _, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use super::model::{Assignment, Problem, Schedule};

/// GA parameters; the defaults are ours where the thesis gives none.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GaParams {
    /// Chromosomes per generation (at least 2 are used).
    pub population: usize,
    /// Probability that a pair of parents is crossed over (single point); otherwise they are copied.
    pub crossover_rate: f64,
    /// Probability that each gene is re-assigned to a random admissible site or the dummy.
    pub mutation_rate: f64,
    /// Best chromosomes carried over unchanged to the next generation (at least 1, so the best never gets lost).
    pub elitism: usize,
    /// Stop after this many generations without improvement of the best chromosome.
    pub stall_generations: u64,
    /// Stop after this many generations in any case.
    pub max_generations: u64,
}

impl Default for GaParams {
    fn default() -> Self {
        GaParams {
            population: 50,
            crossover_rate: 0.8,
            mutation_rate: 0.05,
            elitism: 1,
            stall_generations: 10,
            max_generations: 1000,
        }
    }
}

/// A chromosome: the site index of each application, `sites` meaning the dummy provider.
type Genome = Vec<usize>;

/// What the fitness and the operators look up.
#[derive(Debug)]
struct Tables {
    /// The dummy provider's index (= number of sites).
    dummy: usize,
    /// CPUs of each application.
    cpus: Vec<u32>,
    /// CPUs of each site.
    capacity: Vec<u32>,
    /// Per application: the sites it may go to whole, then the dummy.
    options: Vec<Vec<usize>>,
    /// Per application and gene value (row-major, `dummy + 1` columns): the application's term of (4.9).
    term: Vec<f64>,
    /// Above any feasible objective: the base score of infeasible chromosomes.
    infeasible: f64,
}

impl Tables {
    fn new(problem: &Problem) -> Self {
        let dummy = problem.sites();
        let cpus: Vec<u32> = (0..problem.apps()).map(|app| problem.cpus(app)).collect();
        let capacity: Vec<u32> = (0..dummy).map(|site| problem.capacity(site)).collect();
        let mut options = Vec::with_capacity(problem.apps());
        let mut term = vec![f64::INFINITY; problem.apps() * (dummy + 1)];
        let mut worst = 0.0;
        for app in 0..problem.apps() {
            let row = &mut term[app * (dummy + 1)..(app + 1) * (dummy + 1)];
            let mut list = Vec::new();
            for c in problem.site_options(app).iter().filter(|c| cpus[app] <= capacity[c.site]) {
                // The same arithmetic as `Problem::term` on the decoded schedule, so scores are exact.
                row[c.site] = problem.term(app, &[c.part(cpus[app])], 0);
                list.push(c.site);
            }
            row[dummy] = problem.term(app, &[], cpus[app]);
            list.sort_unstable();
            list.push(dummy);
            worst += list.iter().map(|&gene| row[gene]).fold(0.0, f64::max);
            options.push(list);
        }
        Tables { dummy, cpus, capacity, options, term, infeasible: 2.0 * worst + 1.0 }
    }

    /// The objective of `genome`: (4.9) if it respects every capacity (4.2), else above every feasible value.
    fn objective(&self, genome: &[usize]) -> f64 {
        let mut load = vec![0u32; self.dummy];
        let mut objective: f64 = 0.0;
        for (app, &gene) in genome.iter().enumerate() {
            if gene < self.dummy {
                load[gene] = load[gene].saturating_add(self.cpus[app]);
            }
            let term = if gene <= self.dummy { self.term.get(app * (self.dummy + 1) + gene) } else { None };
            objective += term.copied().unwrap_or(f64::INFINITY);
        }
        let overbooked: u64 =
            load.iter().zip(&self.capacity).map(|(&load, &capacity)| u64::from(load.saturating_sub(capacity))).sum();
        if overbooked == 0 { objective } else { self.infeasible * (1.0 + overbooked as f64) }
    }

    /// A random feasible chromosome: applications in random order, each on a random site that still fits it.
    fn random_genome<R: Rng>(&self, rng: &mut R) -> Genome {
        let mut order: Vec<usize> = (0..self.cpus.len()).collect();
        order.shuffle(rng);
        let mut free = self.capacity.clone();
        let mut genome = vec![self.dummy; self.cpus.len()];
        for app in order {
            let fitting: Vec<usize> =
                self.options[app].iter().copied().filter(|&s| s < self.dummy && self.cpus[app] <= free[s]).collect();
            if let Some(&site) = fitting.choose(rng) {
                free[site] -= self.cpus[app];
                genome[app] = site;
            }
        }
        genome
    }
}

/// A chromosome's objective (4.9); genevo maximises fitness, so a lower objective compares greater.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Score(f64);

impl Eq for Score {}

impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Score {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.0.total_cmp(&self.0)
    }
}

impl Fitness for Score {
    fn zero() -> Self {
        Score(0.0)
    }

    fn abs_diff(&self, other: &Self) -> Self {
        Score((self.0 - other.0).abs())
    }
}

impl AsScalar for Score {
    /// The roulette wheel's weight: the smaller the objective, the larger the slice.
    fn as_scalar(&self) -> f64 {
        1.0 / (1.0 + self.0)
    }
}

/// The fitness function (4.9).
#[derive(Clone, Debug)]
struct Evaluator<'t>(&'t Tables);

impl FitnessFunction<Genome, Score> for Evaluator<'_> {
    fn fitness_of(&self, genome: &Genome) -> Score {
        Score(self.0.objective(genome))
    }

    fn average(&self, scores: &[Score]) -> Score {
        Score(scores.iter().map(|s| s.0).sum::<f64>() / scores.len().max(1) as f64)
    }

    fn highest_possible_fitness(&self) -> Score {
        Score(0.0)
    }

    fn lowest_possible_fitness(&self) -> Score {
        Score(f64::INFINITY)
    }
}

/// Single-point crossover applied with a probability (genevo's own always crosses and needs two genes).
#[derive(Clone, Debug)]
struct SinglePoint(f64);

impl GeneticOperator for SinglePoint {
    fn name() -> String {
        "Single-Point-Crossover-With-Rate".to_string()
    }
}

impl CrossoverOp<Genome> for SinglePoint {
    fn crossover<R: Rng + Sized>(&self, mut parents: Parents<Genome>, rng: &mut R) -> Children<Genome> {
        if let [a, b] = parents.as_mut_slice()
            && a.len() >= 2
            && a.len() == b.len()
            && rng.gen_bool(self.0)
        {
            let cut = rng.gen_range(1..a.len());
            a[cut..].swap_with_slice(&mut b[cut..]);
        }
        parents
    }
}

/// Re-assigns each gene, with a probability, to a random feasible site of its application (admissible, with its CPUs
/// free given the other genes) or the dummy.
#[derive(Clone, Debug)]
struct Reassign<'t> {
    tables: &'t Tables,
    rate: f64,
}

impl GeneticOperator for Reassign<'_> {
    fn name() -> String {
        "Reassign-Gene-Mutation".to_string()
    }
}

impl MutationOp<Genome> for Reassign<'_> {
    fn mutate<R: Rng + Sized>(&self, mut genome: Genome, rng: &mut R) -> Genome {
        let tables = self.tables;
        let mut load = vec![0u32; tables.dummy];
        for (app, &gene) in genome.iter().enumerate() {
            if let Some(load) = load.get_mut(gene) {
                *load = load.saturating_add(tables.cpus[app]);
            }
        }
        for (app, options) in tables.options.iter().enumerate().take(genome.len()) {
            if !rng.gen_bool(self.rate) {
                continue;
            }
            let cpus = tables.cpus[app];
            if let Some(load) = load.get_mut(genome[app]) {
                *load = load.saturating_sub(cpus);
            }
            // Feasible given the rest of the chromosome: the dummy, or a site with the CPUs still free.
            let feasible: Vec<usize> = options
                .iter()
                .copied()
                .filter(|&site| site == tables.dummy || load[site].saturating_add(cpus) <= tables.capacity[site])
                .collect();
            if let Some(&site) = feasible.choose(rng) {
                genome[app] = site;
            }
            if let Some(load) = load.get_mut(genome[app]) {
                *load = load.saturating_add(cpus);
            }
        }
        genome
    }
}

/// Stops after `stall` generations without a better best chromosome, or after `max` generations.
#[derive(Clone, Debug)]
struct Convergence {
    stall: u64,
    max: u64,
    best: Option<Score>,
    stalled: u64,
}

impl<A: Algorithm<Output = GaState<Genome, Score>>> Termination<A> for Convergence {
    fn evaluate(&mut self, state: &State<A>) -> StopFlag {
        let fitness = state.result.best_solution.solution.fitness;
        match self.best {
            Some(best) if fitness <= best => self.stalled += 1,
            _ => {
                self.best = Some(fitness);
                self.stalled = 0;
            }
        }
        if self.stalled >= self.stall || state.iteration >= self.max {
            StopFlag::StopNow(format!("generation {}", state.iteration))
        } else {
            StopFlag::Continue
        }
    }
}

/// A probability from a parameter: NaN and negatives become 0, anything above 1 becomes 1.
fn probability(p: f64) -> f64 {
    if p > 0.0 { p.min(1.0) } else { 0.0 }
}

/// Runs the GA on `problem` from `seed` (the LPGA/HGA seed schedule, if any) plus random feasible chromosomes.
///
/// A seed placement the GA's encoding cannot express (a split MGN application, an inadmissible site) becomes the
/// dummy. Deterministic for a given `rng_seed`; `generations` of the result counts the generations run.
pub fn genetic(problem: &Problem, seed: Option<&Schedule>, params: &GaParams, rng_seed: u64) -> Schedule {
    let tables = Tables::new(problem);
    let n = problem.apps();
    if n == 0 {
        return problem.schedule(Vec::new(), Some(0));
    }
    let mut stream = Pcg64Mcg::seed_from_u64(rng_seed);
    let mut population_seed: Seed = Default::default();
    let mut simulator_seed: Seed = Default::default();
    stream.fill_bytes(&mut population_seed);
    stream.fill_bytes(&mut simulator_seed);

    let size = params.population.max(2);
    let elitism = params.elitism.clamp(1, size - 1);
    let mut individuals: Vec<Genome> = Vec::with_capacity(size);
    if let Some(seed) = seed {
        individuals.push(
            (0..n)
                .map(|app| {
                    let placed = seed.assignments.get(app).and_then(Assignment::site);
                    placed.filter(|site| tables.options[app].contains(site)).unwrap_or(tables.dummy)
                })
                .collect(),
        );
    }
    let mut rng = get_rng(population_seed);
    while individuals.len() < size {
        individuals.push(tables.random_genome(&mut rng));
    }
    let fallback = individuals.iter().min_by(|a, b| tables.objective(a).total_cmp(&tables.objective(b))).cloned();

    let evaluator = Evaluator(&tables);
    let algorithm = genetic_algorithm()
        .with_evaluation(evaluator.clone())
        // ceil(size / 2) pairs of parents, two children each: at least a full generation of offspring.
        .with_selection(RouletteWheelSelector::new(0.5, 2))
        .with_crossover(SinglePoint(probability(params.crossover_rate)))
        .with_mutation(Reassign { tables: &tables, rate: probability(params.mutation_rate) })
        // The best `size - elitism` offspring replace the generation, whose `elitism` best chromosomes stay.
        .with_reinsertion(ElitistReinserter::new(evaluator, true, (size - elitism) as f64 / size as f64))
        .with_initial_population(Population::with_individuals(individuals))
        .with_min_population_size(1)
        .build();
    let convergence =
        Convergence { stall: params.stall_generations, max: params.max_generations, best: None, stalled: 0 };
    let mut simulation = simulate(algorithm).until(convergence).build_with_seed(simulator_seed);
    let (best, generations) = match simulation.run() {
        Ok(SimResult::Final(state, ..)) => (state.result.best_solution.solution.genome, state.iteration),
        _ => (fallback.unwrap_or_else(|| vec![tables.dummy; n]), 0),
    };
    let choice: Vec<Option<usize>> = best.iter().map(|&gene| (gene < tables.dummy).then_some(gene)).collect();
    problem.sgn_schedule(&choice, Some(generations))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metabroker::greedy::greedy;
    use crate::metabroker::lp::{mgn_transportation, sgn_ip};
    use crate::metabroker::mincost::modified_min_cost;
    use crate::metabroker::model::QosIndex;
    use crate::metabroker::tests::{assert_feasible, ch4_snapshot, hand_snapshot};

    #[test]
    fn same_seed_same_schedule() {
        let snapshot = ch4_snapshot(7, 50, 25, 0);
        let problem = Problem::new(&snapshot, QosIndex::FairMarket);
        let params = GaParams::default();
        let a = genetic(&problem, None, &params, 42);
        let b = genetic(&problem, None, &params, 42);
        assert_eq!(a, b);
        assert_feasible(&problem, &a, true);
        // Another seed explores differently (the generation count or the schedule differ).
        let others: Vec<Schedule> = (43..47).map(|seed| genetic(&problem, None, &params, seed)).collect();
        assert!(others.iter().any(|other| other != &a));
    }

    #[test]
    fn seeded_runs_never_end_worse_than_their_seed() {
        for seed in 0..8 {
            let snapshot = ch4_snapshot(500 + seed, 50, 10 + 5 * seed as usize, seed % 3);
            let problem = Problem::new(&snapshot, QosIndex::FairMarket);
            let mmc = modified_min_cost(&problem, &mgn_transportation(&problem));
            let lpga = genetic(&problem, Some(&mmc), &GaParams::default(), seed);
            assert!(lpga.objective <= mmc.objective, "seed {seed}: LPGA {} > MMC {}", lpga.objective, mmc.objective);
            let greedy = greedy(&problem);
            let hga = genetic(&problem, Some(&greedy), &GaParams::default(), seed);
            assert!(
                hga.objective <= greedy.objective,
                "seed {seed}: HGA {} > greedy {}",
                hga.objective,
                greedy.objective
            );
            assert_feasible(&problem, &lpga, true);
            assert_feasible(&problem, &hga, true);
            let generations = lpga.generations.unwrap();
            assert!((11..=1000).contains(&generations), "{generations}");
        }
    }

    #[test]
    fn lpga_finds_the_hand_optimum() {
        // MMC leaves the top-priority A1 on the dummy (objective 1113); the IP optimum rolls A2 over instead (421).
        let snapshot = hand_snapshot();
        let problem = Problem::new(&snapshot, QosIndex::FairMarket);
        let mmc = modified_min_cost(&problem, &mgn_transportation(&problem));
        let optimum = sgn_ip(&problem).unwrap();
        for seed in 0..4 {
            let lpga = genetic(&problem, Some(&mmc), &GaParams::default(), seed);
            assert_eq!(lpga.objective, optimum.objective, "seed {seed}");
            assert_eq!(lpga.assignments, optimum.assignments, "seed {seed}");
        }
    }

    #[test]
    fn degenerate_parameters_do_not_panic() {
        let snapshot = ch4_snapshot(11, 5, 2, 0);
        let problem = Problem::new(&snapshot, QosIndex::FairMarket);
        let params = GaParams {
            population: 0,
            crossover_rate: f64::NAN,
            mutation_rate: 7.0,
            elitism: 99,
            stall_generations: 0,
            max_generations: 0,
        };
        assert_feasible(&problem, &genetic(&problem, None, &params, 1), true);
    }
}
