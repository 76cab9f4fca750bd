//! Backfilling throughput: 100,000 rigid jobs on a 1,024-PE cluster, replayed in time order
//! (arrivals, completions and the scheduler's wake-ups) through the provider's
//! `LocalScheduler`, under conservative and EASY backfilling.
//!
//! The workload comes from a seeded generator kept in this file: power-of-two-ish sizes up to
//! 256 PEs, lognormal runtimes, user estimates of runtime × U[1,3] and exponential
//! inter-arrival times scaled to an offered load of 90%.
//!
//! `conservative/queue-1k`: the first 1,000 of those jobs submitted at once to a 256-PE cluster, a queue a thousand
//! long that every early completion compresses; passes wait for the end of each event, after a query of the planned
//! start of the last queued job (what a provider checking a deadline asks).
//!
//! `profile/earliest-fit-1k`: the availability profile alone, the earliest fit of each of those 1,000 jobs searched in
//! their packed conservative plan.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;

use agents::model::JobId;
use agents::provider::profile::Profile;
use agents::provider::scheduler::{LocalScheduler, QueuedJob, SchedulerPolicy};
use agents::sim::SimTime;
use criterion::{Criterion, criterion_group, criterion_main};
use rand::RngExt;
use rand_distr::StandardNormal;

const PES: u32 = 1024;
const JOBS: usize = 100_000;
const OFFERED_LOAD: f64 = 0.9;
const SEED: u64 = 2001;

/// The jobs (in submission order) and their actual runtimes, indexed by job id.
fn workload() -> (Vec<QueuedJob>, Vec<f64>) {
    let mut rng = agents::sim::rng::stream(SEED, "backfill-bench", 0);
    let mut jobs = Vec::with_capacity(JOBS);
    let mut runtimes = Vec::with_capacity(JOBS);
    let mut work = 0.0;
    for id in 0..JOBS {
        // 2^k PEs, k uniform in 0..=8; a quarter of the jobs take any size in (2^(k-1), 2^k].
        let power = 1u32 << rng.random_range(0..9);
        let pes = if power > 1 && rng.random_range(0..4) == 0 {
            power / 2 + 1 + rng.random_range(0..u64::from(power / 2)) as u32
        } else {
            power
        };
        // Lognormal runtime, median 10 min, sigma 1.5; at least a second, at most two days.
        let runtime = (600.0 * (1.5 * rng.sample::<f64, _>(StandardNormal)).exp()).clamp(1.0, 172_800.0);
        work += f64::from(pes) * runtime;
        runtimes.push(runtime);
        jobs.push(QueuedJob {
            id: id as JobId,
            submit: SimTime::ZERO,
            pes,
            estimate: runtime * (1.0 + 2.0 * rng.random::<f64>()),
            partition: None,
            priority: 0,
        });
    }
    let mean_gap = work / (OFFERED_LOAD * f64::from(PES) * JOBS as f64);
    let mut now = SimTime::ZERO;
    for job in &mut jobs {
        now = now + -mean_gap * (1.0 - rng.random::<f64>()).ln();
        job.submit = now;
    }
    (jobs, runtimes)
}

/// The long-queue case: the first 1,000 jobs, all submitted at once to a 256-PE cluster (5,000 took two minutes an
/// iteration before the planner was made cheaper).
const LONG_QUEUE: usize = 1_000;
const LONG_QUEUE_PES: u32 = 256;

/// How the replay drives the scheduler.
#[derive(Clone, Copy)]
enum Drive {
    /// A pass after each event.
    Eager,
    /// Passes deferred to the end of each event, with the planned start of the last queued job asked first, as a
    /// provider checking a re-queued lease's deadline does.
    Deferred,
}

/// Replays the workload on `pes` PEs; returns the mean wait and the utilisation up to the last completion.
fn simulate(policy: SchedulerPolicy, pes: u32, drive: Drive, jobs: &[QueuedJob], runtimes: &[f64]) -> (f64, f64) {
    let mut scheduler = LocalScheduler::new(policy, pes);
    if let Drive::Deferred = drive {
        scheduler.defer_passes();
    }
    // Completion events (time, id), earliest first.
    let mut completions = BinaryHeap::new();
    let mut arrivals = jobs.iter();
    let mut next_arrival = arrivals.next();
    let (mut total_wait, mut busy, mut makespan) = (0.0, 0.0, SimTime::ZERO);
    loop {
        let completion = completions.peek().map(|&Reverse((end, _))| end);
        let arrival = next_arrival.map(|job| job.submit);
        let candidates = [completion, arrival, scheduler.next_wakeup()];
        let Some(now) = candidates.into_iter().flatten().min() else {
            break;
        };
        let started = if completion == Some(now) {
            let Reverse((_, id)) = completions.pop().expect("peeked");
            makespan = now;
            scheduler.complete(now, id)
        } else if let Some(job) = next_arrival.filter(|job| job.submit == now) {
            next_arrival = arrivals.next();
            scheduler.submit(now, job.clone())
        } else {
            Ok(scheduler.tick(now))
        }
        .expect("valid workload");
        let started = match drive {
            Drive::Eager => started,
            Drive::Deferred => {
                black_box(scheduler.waiting().last().and_then(|job| scheduler.planned_start(job.id)));
                scheduler.pass(now)
            }
        };
        for started in started {
            let index = started.id as usize;
            total_wait += now - jobs[index].submit;
            busy += f64::from(jobs[index].pes) * runtimes[index];
            completions.push(Reverse((now + runtimes[index], started.id)));
        }
    }
    let mean_wait = total_wait / jobs.len() as f64;
    (mean_wait, busy / (f64::from(pes) * (makespan - jobs[0].submit)))
}

fn backfill(c: &mut Criterion) {
    let (jobs, runtimes) = workload();
    let mut group = c.benchmark_group("backfill");
    group.sample_size(10);
    for (name, policy) in [("conservative/100k", SchedulerPolicy::Conservative), ("easy/100k", SchedulerPolicy::Easy)] {
        let (mean_wait, utilisation) = simulate(policy, PES, Drive::Eager, &jobs, &runtimes);
        eprintln!("{name}: mean wait {mean_wait:.0} s, utilisation {utilisation:.3}");
        group.bench_function(name, |b| {
            b.iter(|| simulate(policy, PES, Drive::Eager, black_box(&jobs), black_box(&runtimes)))
        });
    }
    // A queue thousands of jobs long: every early completion compresses all their reservations.
    let burst: Vec<QueuedJob> =
        jobs[..LONG_QUEUE].iter().map(|job| QueuedJob { submit: SimTime::ZERO, ..job.clone() }).collect();
    let runtimes = &runtimes[..LONG_QUEUE];
    let policy = SchedulerPolicy::Conservative;
    let (mean_wait, _) = simulate(policy, LONG_QUEUE_PES, Drive::Deferred, &burst, runtimes);
    eprintln!("conservative/queue-1k: mean wait {mean_wait:.0} s");
    group.bench_function("conservative/queue-1k", |b| {
        b.iter(|| simulate(policy, LONG_QUEUE_PES, Drive::Deferred, black_box(&burst), black_box(runtimes)))
    });
    // The searches alone: the earliest fit of each of those jobs from the start in their packed conservative plan, a
    // profile of about two thousand breakpoints (what a compression asks once per queued job).
    let mut plan = Profile::new(LONG_QUEUE_PES);
    for job in &burst {
        let start = plan.earliest_fit(SimTime::ZERO, job.pes, job.estimate);
        plan.allocate(start, start + job.estimate, job.pes);
    }
    group.bench_function("profile/earliest-fit-1k", |b| {
        b.iter(|| {
            burst.iter().fold(SimTime::ZERO, |last, job| {
                last.max(black_box(&plan).earliest_fit(SimTime::ZERO, job.pes, job.estimate))
            })
        })
    });
    group.finish();
}

criterion_group!(benches, backfill);
criterion_main!(benches);
