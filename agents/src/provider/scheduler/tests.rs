//! Unit tests of the local scheduler: hand-worked schedules per policy, and random workloads against invariants
//! and a naive conservative backfilling.

use super::*;
use SchedulerPolicy::{Conservative, Easy, Fcfs, MultiPartitionEasy};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

/// The tests write times in seconds.
fn t(secs: f64) -> SimTime {
    SimTime::new(secs).unwrap()
}

/// A test job: the scheduler's view plus the actual runtime (at most the estimate).
#[derive(Clone, Copy, Debug)]
struct Spec {
    id: JobId,
    submit: f64,
    pes: u32,
    estimate: f64,
    runtime: f64,
    partition: Option<usize>,
}

fn job(id: JobId, submit: f64, pes: u32, estimate: f64, runtime: f64) -> Spec {
    assert!(runtime <= estimate);
    Spec { id, submit, pes, estimate, runtime, partition: None }
}

impl Spec {
    fn queued(&self) -> QueuedJob {
        QueuedJob {
            id: self.id,
            submit: t(self.submit),
            pes: self.pes,
            estimate: self.estimate,
            partition: self.partition,
            priority: 0,
        }
    }
}

fn at(start: f64, ids: &[JobId]) -> Vec<Started> {
    ids.iter().map(|&id| Started { id, start: t(start) }).collect()
}

fn window(start: f64, end: f64, pes: u32) -> ReservationRequest {
    ReservationRequest { start: t(start), end: t(end), pes, partition: None }
}

/// What the driver needs, so that the naive reference runs through the same driver. Times in seconds.
trait Driven {
    fn pes(&self) -> u32;
    fn never_delays(&self) -> bool;
    fn submit(&mut self, now: f64, job: QueuedJob) -> Vec<Started>;
    fn complete(&mut self, now: f64, id: JobId) -> Vec<Started>;
    fn tick(&mut self, now: f64) -> Vec<Started>;
    fn reserve(&mut self, now: f64, request: ReservationRequest) -> bool;
    fn next_wakeup(&self) -> Option<f64>;
    fn planned_start(&self, id: JobId) -> Option<f64>;
    fn head(&self) -> Option<JobId>;
    fn idle(&self) -> bool;
}

impl Driven for LocalScheduler {
    fn pes(&self) -> u32 {
        LocalScheduler::pes(self)
    }
    fn never_delays(&self) -> bool {
        self.policy() == Conservative
    }
    fn submit(&mut self, now: f64, job: QueuedJob) -> Vec<Started> {
        LocalScheduler::submit(self, t(now), job).unwrap()
    }
    fn complete(&mut self, now: f64, id: JobId) -> Vec<Started> {
        LocalScheduler::complete(self, t(now), id).unwrap()
    }
    fn tick(&mut self, now: f64) -> Vec<Started> {
        LocalScheduler::tick(self, t(now))
    }
    fn reserve(&mut self, now: f64, request: ReservationRequest) -> bool {
        LocalScheduler::reserve(self, t(now), request).is_ok()
    }
    fn next_wakeup(&self) -> Option<f64> {
        LocalScheduler::next_wakeup(self).map(SimTime::secs)
    }
    fn planned_start(&self, id: JobId) -> Option<f64> {
        LocalScheduler::planned_start(self, id).map(SimTime::secs)
    }
    fn head(&self) -> Option<JobId> {
        // Another order may put a later arrival ahead of the head, which then starts before it: no guarantee to check.
        if self.queue_order().is_some() {
            return None;
        }
        self.waiting().next().map(|job| job.id)
    }
    fn idle(&self) -> bool {
        self.running().next().is_none() && self.waiting().next().is_none()
    }
}

#[derive(Debug, Default)]
struct Outcome {
    starts: BTreeMap<JobId, f64>,
    accepted: Vec<bool>,
}

/// Runs a workload in time order (at equal times: completions, reservation requests,
/// arrivals, then the scheduler's wake-up; ties by id) and checks the invariants: each
/// start is reported once at the time of its event, every job ends exactly once, no PE is
/// ever oversubscribed (jobs and accepted reservations), the reservation of the queue head
/// (EASY's shadow time) never moves later, and under conservative backfilling no job starts
/// later than its first reservation.
fn run(s: &mut impl Driven, jobs: &[Spec], requests: &[(f64, ReservationRequest)]) -> Outcome {
    type Completions = BTreeSet<(SimTime, JobId)>;
    let spec: BTreeMap<JobId, Spec> = jobs.iter().map(|j| (j.id, *j)).collect();
    let record = |started: Vec<Started>, now: f64, out: &mut Outcome, ends: &mut Completions| {
        for s in started {
            assert_eq!(s.start, t(now), "job {} reported off its event", s.id);
            assert!(out.starts.insert(s.id, now).is_none(), "job {} started twice", s.id);
            ends.insert((t(now + spec[&s.id].runtime), s.id));
        }
    };
    let mut arrivals: Vec<Spec> = jobs.to_vec();
    arrivals.sort_by(|a, b| a.submit.total_cmp(&b.submit).then(a.id.cmp(&b.id)));
    let mut arrivals = arrivals.into_iter().peekable();
    let mut requests = requests.iter().peekable();
    let mut out = Outcome::default();
    let mut first_plan = BTreeMap::new();
    let mut completions = Completions::new();
    let mut ended = BTreeSet::new();
    let mut held = Vec::new();
    let mut head = None;
    for _ in 0..100_000 {
        let head_now = s.head().and_then(|id| Some((id, s.planned_start(id)?)));
        if let (Some((id, before)), Some((now_id, after))) = (head, head_now)
            && id == now_id
        {
            assert!(after <= before, "head {id} delayed from {before} to {after}");
        }
        head = head_now;
        let candidates = [
            completions.first().map(|&(end, _)| end.secs()),
            requests.peek().map(|r| r.0),
            arrivals.peek().map(|j| j.submit),
            s.next_wakeup(),
        ];
        let Some(now) = candidates.iter().flatten().copied().min_by(f64::total_cmp) else {
            break;
        };
        if candidates[0] == Some(now) {
            let (_, id) = completions.pop_first().unwrap();
            assert!(ended.insert(id), "job {id} ended twice");
            let started = s.complete(now, id);
            record(started, now, &mut out, &mut completions);
        } else if candidates[1] == Some(now) {
            let &(_, request) = requests.next().unwrap();
            let accepted = s.reserve(now, request);
            if accepted {
                held.push((request.start.secs(), request.end.secs(), request.pes));
            }
            out.accepted.push(accepted);
        } else if candidates[2] == Some(now) {
            let job = arrivals.next().unwrap();
            let started = s.submit(now, job.queued());
            let plan = s.planned_start(job.id).unwrap_or(now);
            first_plan.insert(job.id, plan);
            record(started, now, &mut out, &mut completions);
        } else {
            let started = s.tick(now);
            record(started, now, &mut out, &mut completions);
        }
    }
    assert_eq!(out.starts.len(), jobs.len(), "every job starts");
    assert_eq!(ended.len(), jobs.len(), "every job ends");
    assert!(s.idle(), "nothing left behind");
    if s.never_delays() {
        for (id, start) in &out.starts {
            assert!(*start <= first_plan[id], "job {id} delayed past its reservation");
        }
    }
    // Sweep over all holdings; at equal times ends (-) come before starts (+).
    let mut edges: Vec<(f64, i64)> = held
        .iter()
        .map(|&(a, b, n)| (a, b, n))
        .chain(out.starts.iter().map(|(id, &t)| {
            let j = spec[id];
            (t, t + j.runtime, j.pes)
        }))
        .flat_map(|(a, b, n)| [(a, i64::from(n)), (b, -i64::from(n))])
        .collect();
    edges.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    let mut busy = 0;
    for (t, delta) in edges {
        busy += delta;
        assert!(busy <= i64::from(s.pes()), "{busy} PEs busy at {t}");
    }
    out
}

/// Conservative backfilling done the obvious way (every query scans every holding, every
/// compression re-places every waiting job): the reference for the pruned compression.
struct Naive {
    pes: u32,
    now: f64,
    reservations: Vec<(f64, f64, u32)>,
    running: BTreeMap<JobId, (f64, f64, u32)>,
    /// (id, pes, estimate, planned start), in queue order.
    queue: Vec<(JobId, u32, f64, f64)>,
    /// Capacity was given back, or a job moved, since the last compression.
    dirty: bool,
}

impl Naive {
    fn new(pes: u32) -> Self {
        Self { pes, now: 0.0, reservations: Vec::new(), running: BTreeMap::new(), queue: Vec::new(), dirty: false }
    }

    fn holdings(&self, skip: Option<JobId>) -> Vec<(f64, f64, u32)> {
        let queued = self.queue.iter().filter(|q| Some(q.0) != skip).map(|&(_, n, d, t)| (t, t + d, n));
        self.reservations.iter().copied().chain(self.running.values().copied()).chain(queued).collect()
    }

    fn fits(&self, start: f64, end: f64, pes: u32, skip: Option<JobId>) -> bool {
        let holdings = self.holdings(skip);
        let probes = std::iter::once(start).chain(holdings.iter().map(|h| h.0).filter(|&t| t > start && t < end));
        probes.into_iter().all(|t| {
            let used: u32 = holdings.iter().filter(|h| h.0 <= t && t < h.1).map(|h| h.2).sum();
            used + pes <= self.pes
        })
    }

    fn earliest(&self, after: f64, pes: u32, duration: f64, skip: Option<JobId>) -> f64 {
        let mut candidates: Vec<f64> = self.holdings(skip).iter().map(|h| h.1).filter(|&t| t > after).collect();
        candidates.push(after);
        candidates.sort_by(f64::total_cmp);
        candidates.into_iter().find(|&t| self.fits(t, t + duration, pes, skip)).unwrap()
    }

    fn pass(&mut self, now: f64) -> Vec<Started> {
        self.now = now;
        if std::mem::take(&mut self.dirty) {
            for i in 0..self.queue.len() {
                let (id, pes, estimate, old) = self.queue[i];
                let new = self.earliest(now, pes, estimate, Some(id));
                assert!(new <= old);
                self.dirty |= new < old;
                self.queue[i].3 = new;
            }
        }
        let (due, rest) = self.queue.iter().partition(|q| q.3 <= now);
        self.queue = rest;
        due.into_iter()
            .map(|(id, pes, estimate, start)| {
                self.running.insert(id, (start, start + estimate, pes));
                Started { id, start: t(start) }
            })
            .collect::<Vec<_>>()
    }
}

impl Driven for Naive {
    fn pes(&self) -> u32 {
        self.pes
    }
    fn never_delays(&self) -> bool {
        true
    }
    fn submit(&mut self, now: f64, job: QueuedJob) -> Vec<Started> {
        let start = self.earliest(now, job.pes, job.estimate, None);
        self.queue.push((job.id, job.pes, job.estimate, start));
        self.pass(now)
    }
    fn complete(&mut self, now: f64, id: JobId) -> Vec<Started> {
        let (_, end, _) = self.running.remove(&id).unwrap();
        self.dirty |= now < end;
        self.pass(now)
    }
    fn tick(&mut self, now: f64) -> Vec<Started> {
        self.pass(now)
    }
    fn reserve(&mut self, now: f64, r: ReservationRequest) -> bool {
        self.now = now;
        let (start, end) = (r.start.secs(), r.end.secs());
        let ok = start >= now && r.pes <= self.pes && self.fits(start, end, r.pes, None);
        if ok {
            self.reservations.push((start, end, r.pes));
        }
        ok
    }
    fn next_wakeup(&self) -> Option<f64> {
        let starts = self.queue.iter().map(|q| q.3);
        let ends = self.reservations.iter().map(|r| r.1).filter(|&t| t > self.now);
        starts.chain(ends).min_by(f64::total_cmp)
    }
    fn planned_start(&self, id: JobId) -> Option<f64> {
        self.queue.iter().find(|q| q.0 == id).map(|q| q.3)
    }
    fn head(&self) -> Option<JobId> {
        self.queue.first().map(|q| q.0)
    }
    fn idle(&self) -> bool {
        self.running.is_empty() && self.queue.is_empty()
    }
}

#[test]
fn fcfs_head_blocks_where_easy_backfills() {
    // 4 PEs.       id submit pes est  run
    let jobs =
        [job(1, 0.0, 2, 10.0, 10.0), job(2, 1.0, 4, 5.0, 5.0), job(3, 2.0, 1, 3.0, 3.0), job(4, 3.0, 2, 4.0, 2.0)];
    // FCFS: J1 runs [0,10); J2 needs all 4 PEs and blocks J3 and J4 although 2 PEs idle
    // until 10. J2 runs [10,15); then J3 [15,18) and J4 [15,17) together.
    let mut s = LocalScheduler::new(Fcfs, 4);
    assert_eq!(s.submit(t(0.0), jobs[0].queued()), Ok(at(0.0, &[1])));
    for j in &jobs[1..] {
        assert_eq!(s.submit(t(j.submit), j.queued()), Ok(vec![]));
    }
    assert_eq!(s.complete(t(10.0), 1), Ok(at(10.0, &[2])));
    assert_eq!(s.complete(t(15.0), 2), Ok(at(15.0, &[3, 4])));
    let fcfs = run(&mut LocalScheduler::new(Fcfs, 4), &jobs, &[]);
    assert_eq!(fcfs.starts, BTreeMap::from([(1, 0.0), (2, 10.0), (3, 15.0), (4, 15.0)]));
    // EASY: J2 reserves [10,15); J3 backfills at 2 (ends 5 <= 10); J4 fits at 5 when J3
    // ends ([5,9) ends before the shadow time 10).
    let easy = run(&mut LocalScheduler::new(Easy, 4), &jobs, &[]);
    assert_eq!(easy.starts, BTreeMap::from([(1, 0.0), (2, 10.0), (3, 2.0), (4, 5.0)]));
}

/// EASY on 8 PEs. Free PEs are written `[a,b):n`.
///
/// | t  | event            | profile after / decision                                         |
/// |----|------------------|-------------------------------------------------------------------|
/// | 0  | J1 4×20 (run 12) | starts; [0,20):4                                                  |
/// | 1  | J2 2×10          | starts; [1,11):2 [11,20):4                                        |
/// | 2  | J3 6×5  (head)   | 2 free: waits; shadow 20 (J1's end), extra PEs 8-6 = 2            |
/// | 3  | J4 2×30          | fits now; over [20,25) only 2 PEs: the extras → backfills at 3    |
/// | 4–6| J5 2×10 (run 3), J6 1×4, J7 3×3 | nothing free                                  |
/// | 11 | J2 ends          | 2 free. J5 [11,21) would take [20,21) from J3 → refused;          |
/// |    |                  | J6 [11,15) ends before 20 → starts; J7 3 > 1 free                 |
/// | 12 | J1 ends early    | [12,15):5 [15,33):6 → shadow advances 20 → 15. J5 [12,22) still   |
/// |    |                  | hits J3 → refused; J7 [12,15) ends exactly at 15 → starts         |
/// | 15 | J6, J7 end       | J3 starts; J5 becomes head, shadow 20                             |
/// | 20 | J3 ends          | J5 starts                                                         |
#[test]
fn easy_hand_worked() {
    let jobs = [
        job(1, 0.0, 4, 20.0, 12.0),
        job(2, 1.0, 2, 10.0, 10.0),
        job(3, 2.0, 6, 5.0, 5.0),
        job(4, 3.0, 2, 30.0, 30.0),
        job(5, 4.0, 2, 10.0, 3.0),
        job(6, 5.0, 1, 4.0, 4.0),
        job(7, 6.0, 3, 3.0, 3.0),
    ];
    let mut s = LocalScheduler::new(Easy, 8);
    assert_eq!(s.submit(t(0.0), jobs[0].queued()), Ok(at(0.0, &[1])));
    assert_eq!(s.submit(t(1.0), jobs[1].queued()), Ok(at(1.0, &[2])));
    assert_eq!(s.submit(t(2.0), jobs[2].queued()), Ok(vec![]));
    assert_eq!(s.planned_start(3), Some(t(20.0)), "shadow time");
    assert_eq!(s.submit(t(3.0), jobs[3].queued()), Ok(at(3.0, &[4])), "extra PEs");
    for j in &jobs[4..] {
        assert_eq!(s.submit(t(j.submit), j.queued()), Ok(vec![]));
    }
    assert_eq!(s.complete(t(11.0), 2), Ok(at(11.0, &[6])), "J5 refused");
    assert_eq!(s.planned_start(5), None, "only the head holds a reservation");
    assert_eq!(s.complete(t(12.0), 1), Ok(at(12.0, &[7])), "J5 refused again");
    assert_eq!(s.planned_start(3), Some(t(15.0)), "shadow advanced");
    assert_eq!(s.complete(t(15.0), 6), Ok(at(15.0, &[3])));
    assert_eq!(s.planned_start(5), Some(t(20.0)));
    assert_eq!(s.complete(t(15.0), 7), Ok(vec![]));
    assert_eq!(s.complete(t(20.0), 3), Ok(at(20.0, &[5])));
    assert_eq!(s.complete(t(23.0), 5), Ok(vec![]));
    assert_eq!(s.complete(t(33.0), 4), Ok(vec![]));

    let out = run(&mut LocalScheduler::new(Easy, 8), &jobs, &[]);
    let starts = [(1, 0.0), (2, 1.0), (3, 15.0), (4, 3.0), (5, 20.0), (6, 11.0), (7, 12.0)];
    assert_eq!(out.starts, BTreeMap::from(starts));
}

/// Conservative backfilling on 8 PEs; `Jn@t` is a reservation, `[a,b):n` free PEs.
///
/// | t | event             | reservation (earliest fit in the profile)                       |
/// |---|-------------------|------------------------------------------------------------------|
/// | 0 | J1 4×10 (run 6)   | starts; [0,10):4                                                 |
/// | 1 | J2 6×5            | J2@10 (4 free until 10)                                          |
/// | 2 | J3 4×6            | [2,8) has 4 free and ends before J2@10: starts (backfill)         |
/// | 3 | J4 2×10           | [3,8):0 [8,10):4 [10,15):2 [15,..):8 → J4@8                       |
/// | 4 | J5 8×4            | [8,10):2 [10,15):0 [15,18):6 → J5@18                              |
/// | 5 | J6 2×3            | [8,10) too short before J2; J6@15 (6 free on [15,18))             |
/// | 6 | J1 ends early     | compress in queue order: J2@10 → 8 ([8,15):6 once freed);        |
/// |   |                   | J4@8 → 6, starts now; J5 stays @18 ([16,18):6 < 8 while J6 sits  |
/// |   |                   | on [15,18)); J6@15 → 13                                          |
/// | 7 | J7 2×3            | [7,8):2 but J2@8 holds [8,13): J7@13. J5 sees J6's move → @16    |
/// | 8 | J3 ends           | J2 starts                                                        |
/// |13 | J2 ends           | J6, J7 start                                                     |
/// |16 | J4 ends           | J5 starts                                                        |
#[test]
fn conservative_hand_worked() {
    let jobs = [
        job(1, 0.0, 4, 10.0, 6.0),
        job(2, 1.0, 6, 5.0, 5.0),
        job(3, 2.0, 4, 6.0, 6.0),
        job(4, 3.0, 2, 10.0, 10.0),
        job(5, 4.0, 8, 4.0, 4.0),
        job(6, 5.0, 2, 3.0, 3.0),
        job(7, 7.0, 2, 3.0, 3.0),
    ];
    let mut s = LocalScheduler::new(Conservative, 8);
    let planned = |s: &LocalScheduler, ids: &[JobId]| -> Vec<Option<f64>> {
        ids.iter().map(|&id| s.planned_start(id).map(SimTime::secs)).collect()
    };
    assert_eq!(s.submit(t(0.0), jobs[0].queued()), Ok(at(0.0, &[1])));
    assert_eq!(s.submit(t(1.0), jobs[1].queued()), Ok(vec![]));
    assert_eq!(s.submit(t(2.0), jobs[2].queued()), Ok(at(2.0, &[3])));
    for j in &jobs[3..6] {
        assert_eq!(s.submit(t(j.submit), j.queued()), Ok(vec![]));
    }
    assert_eq!(planned(&s, &[2, 4, 5, 6]), [Some(10.0), Some(8.0), Some(18.0), Some(15.0)]);
    assert_eq!(s.complete(t(6.0), 1), Ok(at(6.0, &[4])), "compression starts J4");
    assert_eq!(planned(&s, &[2, 5, 6]), [Some(8.0), Some(18.0), Some(13.0)]);
    assert_eq!(s.submit(t(7.0), jobs[6].queued()), Ok(vec![]));
    assert_eq!(planned(&s, &[2, 5, 6, 7]), [Some(8.0), Some(16.0), Some(13.0), Some(13.0)]);
    assert_eq!(s.complete(t(8.0), 3), Ok(at(8.0, &[2])));
    assert_eq!(s.complete(t(13.0), 2), Ok(at(13.0, &[6, 7])));
    assert_eq!(s.complete(t(16.0), 4), Ok(at(16.0, &[5])));
    for id in [6, 7] {
        assert_eq!(s.complete(t(16.0), id), Ok(vec![]));
    }
    assert_eq!(s.complete(t(20.0), 5), Ok(vec![]));

    let starts = [(1, 0.0), (2, 8.0), (3, 2.0), (4, 6.0), (5, 16.0), (6, 13.0), (7, 13.0)];
    let out = run(&mut LocalScheduler::new(Conservative, 8), &jobs, &[]);
    assert_eq!(out.starts, BTreeMap::from(starts));
    assert_eq!(run(&mut Naive::new(8), &jobs, &[]).starts, out.starts);
}

/// Multi-partition EASY on 12 PEs: partitions of 2, 4 and 6 PEs (1:2:3); by default a job
/// goes to the smallest partition it fits (≤2 → P0, 3–4 → P1, 5–6 → P2).
///
/// With borrowing:
/// | t | event          | decision                                                          |
/// |---|----------------|-------------------------------------------------------------------|
/// | 0 | J1 6×20 → P2   | starts on P2                                                      |
/// | 1 | J2 2×10 → P0   | starts on P0                                                      |
/// | 2 | J3 2×5 → P0    | P0 full; P1 idle → starts on 2 borrowed P1 PEs, [2,7)             |
/// | 3 | J4 4×10 → P1   | 2 free: head of P1, reserved @7 on P1 (own partition on ties)     |
/// | 4 | J5 1×3 → P0    | [4,7) on a P1 PE ends by J4@7 → starts                            |
/// | 5 | J6 1×4 → P0    | [5,9) would hit J4@7 → head of P0, reserved @11 (J2's end)        |
/// | 7 | J3, J5 end     | J4 starts                                                         |
/// |11 | J2 ends        | J6 starts                                                         |
///
/// Without borrowing J4 starts at once on idle P1, while P0's jobs queue for P0: J3 @11,
/// then J5 and J6 @16.
#[test]
fn multi_partition_easy() {
    let jobs = [
        job(1, 0.0, 6, 20.0, 20.0),
        job(2, 1.0, 2, 10.0, 10.0),
        job(3, 2.0, 2, 5.0, 5.0),
        job(4, 3.0, 4, 10.0, 10.0),
        job(5, 4.0, 1, 3.0, 3.0),
        job(6, 5.0, 1, 4.0, 4.0),
    ];
    assert_eq!(Partitioning::default().sizes(12), [2, 4, 6]);
    assert_eq!(Partitioning::default().sizes(1024), [170, 341, 513]);
    let mut s = LocalScheduler::new(MultiPartitionEasy, 12);
    assert_eq!(s.partitions(), [2, 4, 6]);
    assert_eq!(s.submit(t(0.0), jobs[0].queued()), Ok(at(0.0, &[1])));
    assert_eq!(s.submit(t(1.0), jobs[1].queued()), Ok(at(1.0, &[2])));
    assert_eq!(s.submit(t(2.0), jobs[2].queued()), Ok(at(2.0, &[3])));
    assert_eq!(s.load(t(2.0), Some(1)), Ok(0.5), "two P1 PEs lent to J3");
    assert_eq!(s.submit(t(3.0), jobs[3].queued()), Ok(vec![]));
    assert_eq!(s.planned_start(4), Some(t(7.0)));
    assert_eq!(s.submit(t(4.0), jobs[4].queued()), Ok(at(4.0, &[5])));
    assert_eq!(s.submit(t(5.0), jobs[5].queued()), Ok(vec![]));
    assert_eq!(s.planned_start(6), Some(t(11.0)));
    assert_eq!((s.queue_len(Some(0)), s.queue_len(Some(1))), (1, 1));
    assert_eq!(s.complete(t(7.0), 3), Ok(at(7.0, &[4])));
    assert_eq!(s.complete(t(7.0), 5), Ok(vec![]));
    assert_eq!(s.complete(t(11.0), 2), Ok(at(11.0, &[6])));

    let borrowing = run(&mut LocalScheduler::new(MultiPartitionEasy, 12), &jobs, &[]);
    let starts = [(1, 0.0), (2, 1.0), (3, 2.0), (4, 7.0), (5, 4.0), (6, 11.0)];
    assert_eq!(borrowing.starts, BTreeMap::from(starts));

    let strict = Partitioning { borrowing: false, ..Partitioning::default() };
    let out = run(&mut LocalScheduler::multi_partition(12, &strict), &jobs, &[]);
    let starts = [(1, 0.0), (2, 1.0), (3, 11.0), (4, 3.0), (5, 16.0), (6, 16.0)];
    assert_eq!(out.starts, BTreeMap::from(starts));

    // A 7-PE job exceeds every partition: it borrows, or is refused without borrowing.
    let wide = job(9, 0.0, 7, 1.0, 1.0).queued();
    let mut s = LocalScheduler::multi_partition(12, &strict);
    assert_eq!(s.submit(t(0.0), wide.clone()), Err(Rejected::TooWide { pes: 7, max: 6 }));
    let mut s = LocalScheduler::new(MultiPartitionEasy, 12);
    assert_eq!(s.submit(t(0.0), wide), Ok(at(0.0, &[9])));
    // A meta-broker may pick the queue (Garg's DAM matches applications to queues).
    let pinned = QueuedJob { id: 10, partition: Some(1), ..job(10, 0.0, 1, 1.0, 1.0).queued() };
    assert_eq!(s.submit(t(0.0), pinned), Ok(at(0.0, &[10])));
    assert_eq!(s.load(t(0.0), Some(1)), Ok(0.25));
    let lost = QueuedJob { partition: Some(3), ..job(11, 0.0, 1, 1.0, 1.0).queued() };
    assert_eq!(s.submit(t(0.0), lost), Err(Rejected::NoSuchPartition(3)));
}

/// What a queue tells a meta-broker (Garg 2010 ch7), at t = 3 of the schedule above: P0 (2 PEs) runs J2 over [1,
/// 11): backlog 2·8/2 = 8 s, no PE free. P1 (4 PEs) lends 2 PEs to J3 over [2, 7) and holds 4 for J4 over [7, 17):
/// backlog (2·4 + 4·10)/4 = 12 s, 2 PEs free. P2 (6 PEs) runs J1 over [0, 20): 6·17/6 = 17 s. The cluster: (16 + 48
/// + 102)/12.
#[test]
fn queue_state_for_a_meta_broker() {
    let jobs = [job(1, 0.0, 6, 20.0, 20.0), job(2, 1.0, 2, 10.0, 10.0), job(3, 2.0, 2, 5.0, 5.0)];
    let mut s = LocalScheduler::new(MultiPartitionEasy, 12);
    for j in &jobs {
        s.submit(t(j.submit), j.queued()).unwrap();
    }
    s.submit(t(3.0), job(4, 3.0, 4, 10.0, 10.0).queued()).unwrap();
    let now = t(3.0);
    let free: Vec<u32> = (0..3).map(|p| s.free_pes(now, Some(p)).unwrap()).collect();
    assert_eq!(free, [0, 2, 0]);
    let backlog: Vec<f64> = (0..3).map(|p| s.backlog(now, Some(p)).unwrap()).collect();
    assert_eq!(backlog, [8.0, 12.0, 17.0]);
    assert_eq!(s.backlog(now, None), Ok((16.0 + 48.0 + 102.0) / 12.0));
    // The same in one view, with loads and, over a horizon, the slots.
    let states = s.partition_states(now, 10.0);
    let seen: Vec<(u32, u32, f64)> = states.iter().map(|p| (p.pes, p.free, p.backlog)).collect();
    assert_eq!(seen, [(2, 0, 8.0), (4, 2, 12.0), (6, 0, 17.0)]);
    assert_eq!(states[1].load, 0.5);
    // P1 over [3, 13): 2 PEs free until J4 holds all 4 from 7: one free rectangle, [3, 7) × 2.
    assert_eq!(states[1].slots, [Slot { start: t(3.0), end: t(7.0), pes: 2 }]);
    assert!(s.partition_states(now, 0.0).iter().all(|p| p.slots.is_empty()));
    assert_eq!(s.backlog(now, Some(3)), Err(Rejected::NoSuchPartition(3)));
    let idle = LocalScheduler::new(MultiPartitionEasy, 12);
    assert_eq!(idle.backlog(now, Some(2)), Ok(0.0));
    // A waiting job that holds no window (FCFS) counts by its estimate: 2 PEs, J1 2×10 runs, J2 1×5 waits:
    // (2·10 + 1·5)/2 = 12.5 s.
    let mut f = LocalScheduler::new(Fcfs, 2);
    f.submit(t(0.0), job(1, 0.0, 2, 10.0, 10.0).queued()).unwrap();
    f.submit(t(0.0), job(2, 0.0, 1, 5.0, 5.0).queued()).unwrap();
    assert_eq!(f.backlog(t(0.0), None), Ok(12.5));
}

/// 4 PEs. Reservation R1 = 3 PEs over [10,20). J1 2×15 cannot run beside it before 20.
/// J2 1×5 and J3 1×20 fit beside everything (under EASY and conservative; FCFS keeps them
/// behind J1). At 3, [5,12)×2 collides with R1 (and J3) and is refused; [5,10)×2 is
/// accepted (R2). At 4 R1 is cancelled: J1 can start at 10 (at 4 under FCFS, where J2 and
/// J3 hold nothing), when R2 ends; nothing completes then, so the scheduler asks for a
/// wake-up.
#[test]
fn advance_reservations_accepted_refused_respected() {
    let jobs = [job(1, 0.0, 2, 15.0, 15.0), job(2, 1.0, 1, 5.0, 5.0), job(3, 2.0, 1, 20.0, 20.0)];
    for policy in [Easy, Conservative, Fcfs] {
        let mut s = LocalScheduler::new(policy, 4);
        let r1 = s.reserve(t(0.0), window(10.0, 20.0, 3)).unwrap();
        assert_eq!(s.reserve(t(0.0), window(2.0, 5.0, 5)), Err(Rejected::TooWide { pes: 5, max: 4 }));
        assert_eq!(s.reserve(t(0.0), window(12.0, 18.0, 2)), Err(Rejected::Unavailable));
        assert_eq!(s.submit(t(0.0), jobs[0].queued()), Ok(vec![]));
        let fcfs = policy == Fcfs;
        let expected = if fcfs { vec![] } else { at(1.0, &[2]) };
        assert_eq!(s.submit(t(1.0), jobs[1].queued()), Ok(expected));
        let expected = if fcfs { vec![] } else { at(2.0, &[3]) };
        assert_eq!(s.submit(t(2.0), jobs[2].queued()), Ok(expected));
        let past = Rejected::Invalid("the window must be finite, non-empty and not in the past");
        assert_eq!(s.reserve(t(3.0), window(2.0, 5.0, 1)), Err(past));
        assert_eq!(s.reserve(t(3.0), window(5.0, 12.0, 2)), Err(Rejected::Unavailable));
        assert!(s.reserve(t(3.0), window(5.0, 10.0, 2)).is_ok());
        assert_eq!(s.cancel_reservation(t(4.0), r1), Ok(if fcfs { at(4.0, &[1]) } else { vec![] }));
        if fcfs {
            assert_eq!(s.next_wakeup(), Some(t(10.0)), "R2 ends");
            assert_eq!(s.tick(t(10.0)), at(10.0, &[2, 3]));
            continue;
        }
        assert_eq!(s.planned_start(1), Some(t(10.0)));
        assert_eq!(s.complete(t(6.0), 2), Ok(vec![]));
        assert_eq!(s.next_wakeup(), Some(t(10.0)));
        assert_eq!(s.tick(t(10.0)), at(10.0, &[1]));
        assert_eq!(s.complete(t(22.0), 3), Ok(vec![]));
        assert_eq!(s.complete(t(25.0), 1), Ok(vec![]));
    }
    // The same workload through the checking driver, R1 kept: J1 waits for R1's end.
    let requests = [(0.0, window(10.0, 20.0, 3)), (3.0, window(5.0, 10.0, 2))];
    for policy in [Easy, Conservative, MultiPartitionEasy] {
        let out = run(&mut LocalScheduler::new(policy, 4), &jobs, &requests);
        assert_eq!(out.accepted, [true, true], "{policy:?}");
        assert_eq!(out.starts, BTreeMap::from([(1, 20.0), (2, 1.0), (3, 2.0)]), "{policy:?}");
    }
}

/// Conservative, 4 PEs: J1 4×10 runs; J2 and J3 2×5 are reserved at 10. Suspending J1 at 2
/// starts both; J1 resumes with its remaining 8 and is reserved at 7. A local request for
/// [3,6)×2 evicting J2 is accepted (×4 would also need J3's PEs and is refused, changing
/// nothing); J2 comes back with 4 left, @15. Withdrawing J1 lets J2 move to 6.
#[test]
fn preemption_hooks() {
    let mut s = LocalScheduler::new(Conservative, 4);
    assert_eq!(s.submit(t(0.0), job(1, 0.0, 4, 10.0, 10.0).queued()), Ok(at(0.0, &[1])));
    assert_eq!(s.submit(t(1.0), job(2, 1.0, 2, 5.0, 5.0).queued()), Ok(vec![]));
    assert_eq!(s.submit(t(1.0), job(3, 1.0, 2, 5.0, 5.0).queued()), Ok(vec![]));
    assert_eq!(s.suspend(t(2.0), 9), Err(Rejected::UnknownJob(9)));
    let (j1, started) = s.suspend(t(2.0), 1).unwrap();
    assert_eq!((j1.estimate, started), (8.0, at(2.0, &[2, 3])));
    assert_eq!(s.submit(t(2.0), j1), Ok(vec![]), "resumed into the next slot");
    assert_eq!(s.planned_start(1), Some(t(7.0)));

    assert_eq!(s.reserve_preempting(t(3.0), window(3.0, 6.0, 4), &[2]), Err(Rejected::Unavailable));
    assert_eq!(s.running().map(|l| l.id).collect::<Vec<_>>(), [2, 3], "rolled back");
    assert_eq!(s.planned_start(1), Some(t(7.0)));
    let preempted = s.reserve_preempting(t(3.0), window(3.0, 6.0, 2), &[2]).unwrap();
    assert_eq!(preempted.started, []);
    assert_eq!(preempted.evicted.len(), 1);
    let j2 = preempted.evicted[0].clone();
    assert_eq!((j2.id, j2.submit, j2.estimate), (2, t(1.0), 4.0));
    assert_eq!(s.submit(t(3.0), j2), Ok(vec![]));
    assert_eq!(s.planned_start(2), Some(t(15.0)));
    let (j1, started) = s.remove(t(4.0), 1).unwrap();
    assert_eq!((j1.id, started), (1, vec![]));
    assert_eq!(s.planned_start(2), Some(t(6.0)));
    assert_eq!(s.next_wakeup(), Some(t(6.0)));
    assert_eq!(s.tick(t(6.0)), at(6.0, &[2]));
    assert_eq!(s.complete(t(7.0), 3), Ok(vec![]));
    assert_eq!(s.complete(t(10.0), 2), Ok(vec![]));
    assert_eq!(s.remove(t(10.0), 2), Err(Rejected::UnknownJob(2)));
}

/// 4 PEs: J1 2×10 runs, J2 4×5 waits for 10, J3 1×20 cannot run beside J2's reservation.
#[test]
fn timetable_queries() {
    let jobs = [job(1, 0.0, 2, 10.0, 10.0), job(2, 0.0, 4, 5.0, 5.0), job(3, 0.0, 1, 20.0, 20.0)];
    let slot = |start, end, pes| Slot { start: t(start), end: t(end), pes };
    // Earliest start of a 1×5 and a 3×5 job. Conservative reserves J3 @15, EASY plans it
    // there, so 1×5 fits at once into [0,10) beside J1 and 3×5 beside J3 @15; FCFS cannot
    // start anything before J3.
    for (policy, small, wide) in [(Conservative, 0.0, 15.0), (Easy, 0.0, 15.0), (Fcfs, 15.0, 15.0)] {
        let mut s = LocalScheduler::new(policy, 4);
        assert_eq!(s.submit(t(0.0), jobs[0].queued()), Ok(at(0.0, &[1])));
        assert_eq!(s.submit(t(0.0), jobs[1].queued()), Ok(vec![]));
        assert_eq!(s.load(t(0.0), None), Ok(0.5));
        if policy != Fcfs {
            let slots = s.free_slots(t(0.0), 20.0, None).unwrap();
            assert_eq!(slots, [slot(0.0, 10.0, 2), slot(15.0, 20.0, 4)], "{policy:?}");
        }
        assert_eq!(s.submit(t(0.0), jobs[2].queued()), Ok(vec![]));
        assert_eq!(s.earliest_start(t(0.0), 1, 5.0, None), Ok(t(small)), "{policy:?}");
        assert_eq!(s.earliest_start(t(0.0), 3, 5.0, None), Ok(t(wide)), "{policy:?}");
        assert_eq!(s.earliest_start(t(0.0), 5, 5.0, None), Err(Rejected::TooWide { pes: 5, max: 4 }));
        // Not before 3: the small job still fits in the free PEs before 10 (not under FCFS, behind J3).
        let late = if policy == Fcfs { 15.0 } else { 3.0 };
        assert_eq!(s.earliest_start_after(t(0.0), t(3.0), 1, 5.0, None), Ok(t(late)), "{policy:?}");
    }
}

#[test]
fn late_wakeup_replans() {
    // The actor should tick at 10 (R ends); ticking at 12 instead starts J1 at 12.
    for policy in [Conservative, Easy, Fcfs, MultiPartitionEasy] {
        let mut s = LocalScheduler::new(policy, 6);
        s.reserve(t(0.0), window(0.0, 10.0, 6)).unwrap();
        assert_eq!(s.submit(t(1.0), job(1, 1.0, 6, 5.0, 5.0).queued()), Ok(vec![]));
        assert_eq!(s.next_wakeup(), Some(t(10.0)));
        assert_eq!(s.tick(t(12.0)), at(12.0, &[1]), "{policy:?}");
        assert_eq!(s.running().next().map(|l| l.end), Some(t(17.0)));
    }
}

#[test]
fn rejects_malformed_requests() {
    let mut s = LocalScheduler::new(Easy, 4);
    let bad = |pes, estimate| QueuedJob { pes, estimate, ..job(1, 0.0, 1, 1.0, 1.0).queued() };
    assert!(matches!(s.submit(t(0.0), bad(0, 1.0)), Err(Rejected::Invalid(_))));
    assert!(matches!(s.submit(t(0.0), bad(1, 0.0)), Err(Rejected::Invalid(_))));
    assert!(matches!(s.submit(t(0.0), bad(1, f64::INFINITY)), Err(Rejected::Invalid(_))));
    assert_eq!(s.submit(t(0.0), bad(5, 1.0)), Err(Rejected::TooWide { pes: 5, max: 4 }));
    assert_eq!(s.submit(t(0.0), bad(1, 1.0)), Ok(at(0.0, &[1])));
    assert_eq!(s.submit(t(0.0), bad(1, 1.0)), Err(Rejected::DuplicateJob(1)));
    assert_eq!(s.complete(t(0.5), 2), Err(Rejected::UnknownJob(2)));
    assert_eq!(s.cancel_reservation(t(0.5), ReservationId(7)), Err(Rejected::UnknownReservation(ReservationId(7))));
}

#[test]
fn policy_names() {
    for (name, policy) in
        [("fcfs", Fcfs), ("easy", Easy), ("conservative", Conservative), ("multi-partition-easy", MultiPartitionEasy)]
    {
        assert_eq!(serde_json::from_str::<SchedulerPolicy>(&format!("\"{name}\"")).unwrap(), policy);
    }
    let job: QueuedJob = serde_json::from_str(r#"{"id":1,"submit":0,"pes":2,"estimate":60}"#).unwrap();
    assert_eq!(job.partition, None);
}

/// A random workload on 16 PEs: integer times (so every policy sees exact arithmetic),
/// mostly small jobs, estimates up to 3× the runtime, a few reservation requests.
fn random_workload(seed: u64) -> (Vec<Spec>, Vec<(f64, ReservationRequest)>) {
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut t = 0.0;
    let jobs = (0..60)
        .map(|id| {
            t += f64::from(rng.random_range(0..4u32));
            let runtime = f64::from(rng.random_range(1..20u32));
            let estimate = runtime * f64::from(rng.random_range(1..=3u32));
            let pes = [1, 1, 2, 2, 3, 4, 4, 8, 12, 16][rng.random_range(0..10usize)];
            let partition = rng.random_bool(0.2).then(|| rng.random_range(0..3usize));
            Spec { partition, ..job(id, t, pes, estimate, runtime) }
        })
        .collect();
    let requests = (0..6)
        .map(|_| {
            let at = f64::from(rng.random_range(0..80u32));
            let start = at + f64::from(rng.random_range(0..30u32));
            let end = start + f64::from(rng.random_range(1..15u32));
            let pes = rng.random_range(1..=8u32);
            (at, window(start, end, pes))
        })
        .collect::<Vec<_>>();
    let mut requests = requests;
    requests.sort_by(|a, b| a.0.total_cmp(&b.0));
    (jobs, requests)
}

#[test]
fn randomized_invariants() {
    for seed in 0..60 {
        let (jobs, requests) = random_workload(seed);
        let single: Vec<Spec> = jobs.iter().map(|j| Spec { partition: None, ..*j }).collect();
        for policy in [Fcfs, Easy, Conservative] {
            run(&mut LocalScheduler::new(policy, 16), &single, &requests);
        }
        run(&mut LocalScheduler::new(MultiPartitionEasy, 16), &jobs, &requests);
        let strict = Partitioning { borrowing: false, ..Partitioning::default() };
        let fits: Vec<Spec> = single.iter().filter(|j| j.pes <= 9).copied().collect();
        run(&mut LocalScheduler::multi_partition(16, &strict), &fits, &requests);
    }
}

#[test]
fn pruned_compression_matches_naive() {
    for seed in 100..160 {
        let (jobs, requests) = random_workload(seed);
        let jobs: Vec<Spec> = jobs.iter().map(|j| Spec { partition: None, ..*j }).collect();
        let fast = run(&mut LocalScheduler::new(Conservative, 16), &jobs, &requests);
        let naive = run(&mut Naive::new(16), &jobs, &requests);
        assert_eq!(fast.accepted, naive.accepted, "seed {seed}");
        assert_eq!(fast.starts, naive.starts, "seed {seed}");
    }
}

/// A queue that only grows (arrivals every 0-1 s, each 2-39 s on 8 PEs, estimates up to 4× the runtime): every early
/// completion slides much of the queue a little earlier, the case where a move releases only the part of its old
/// window it left and most jobs see releases they cannot use.
#[test]
fn pruned_compression_matches_naive_on_a_saturated_queue() {
    for seed in 200..215 {
        let mut rng = Pcg64::seed_from_u64(seed);
        let mut now = 0.0;
        let jobs: Vec<Spec> = (0..45)
            .map(|id| {
                now += f64::from(rng.random_range(0..2u32));
                let runtime = f64::from(rng.random_range(2..40u32));
                let estimate = runtime * f64::from(rng.random_range(1..=4u32));
                job(id, now, [1, 1, 1, 2, 2, 3, 4, 8][rng.random_range(0..8usize)], estimate, runtime)
            })
            .collect();
        let fast = run(&mut LocalScheduler::new(Conservative, 8), &jobs, &[]);
        let naive = run(&mut Naive::new(8), &jobs, &[]);
        assert_eq!(fast.starts, naive.starts, "seed {seed}");
    }
}

/// Two 2-PE jobs end at t=10, 10 s before their estimates, on a 4-PE cluster where a wide job W (4 PEs) waits ahead
/// of a small one S (2 PEs, 5 s). A pass after the first end would backfill S into the 2 PEs it frees, and W could
/// then start only at 15, when S ends; one pass after both ends starts W at once.
#[test]
fn one_pass_per_instant_schedules_the_instant_as_a_whole() {
    for policy in [Fcfs, Easy, Conservative] {
        let run = |deferred: bool| {
            let mut s = LocalScheduler::new(policy, 4);
            if deferred {
                s.defer_passes();
            }
            let mut started = Vec::new();
            for spec in [job(1, 0.0, 2, 20.0, 10.0), job(2, 0.0, 2, 20.0, 10.0)] {
                started.extend(s.submit(t(0.0), spec.queued()).unwrap());
            }
            started.extend(s.pass(t(0.0)));
            started.extend(s.submit(t(1.0), job(3, 1.0, 4, 10.0, 10.0).queued()).unwrap());
            started.extend(s.submit(t(2.0), job(4, 2.0, 2, 5.0, 5.0).queued()).unwrap());
            started.extend(s.pass(t(2.0)));
            assert!(!s.pass_pending());
            started.extend(s.complete(t(10.0), 1).unwrap());
            if deferred && policy != Fcfs {
                // Queries answer as the pass would leave the schedule if the instant ended here: W keeps its place
                // at 20, S backfills at 10 until 15.
                assert_eq!(s.planned_start(3), Some(t(20.0)), "{policy:?}");
                assert_eq!(s.earliest_start(t(10.0), 1, 1.0, None), Ok(t(15.0)), "{policy:?}");
            }
            started.extend(s.complete(t(10.0), 2).unwrap());
            assert_eq!(s.pass_pending(), deferred);
            started.extend(s.pass(t(10.0)));
            started.retain(|s| s.start == t(10.0));
            started
        };
        assert_eq!(run(true), at(10.0, &[3]), "{policy:?}: W starts, S waits");
        // FCFS never backfills: both orders agree.
        let immediate = if policy == Fcfs { at(10.0, &[3]) } else { at(10.0, &[4]) };
        assert_eq!(run(false), immediate, "{policy:?}: a pass per event lets S take W's place");
    }
}

/// A queue order that ranks by the job's id, highest first, and gives job 99 a NaN rank.
struct HighestIdFirst;

impl QueueOrder for HighestIdFirst {
    fn name(&self) -> &'static str {
        "highest-id-first"
    }
    fn about(&self) -> &'static str {
        "for tests"
    }
    fn rank(&self, job: &QueuedJob, _now: SimTime) -> f64 {
        if job.id == 99 { f64::NAN } else { -(job.id as f64) }
    }
}

/// FCFS on 4 PEs, J1 running until 10, then J2 (4×100), J3 (4×20) and J4 (2×50) waiting: arrival order starts J2 at
/// 10; shortest-job-first starts J3 at 10, then J4 at 30 and J2 at 80. EASY with shortest-job-first makes J3 the
/// head at 10 and backfills nothing in front of it.
#[test]
fn shortest_job_first_orders_the_fcfs_and_easy_queues() {
    let jobs = [
        job(1, 0.0, 4, 10.0, 10.0),
        job(2, 1.0, 4, 100.0, 100.0),
        job(3, 2.0, 4, 20.0, 20.0),
        job(4, 3.0, 2, 50.0, 50.0),
    ];
    let arrival = run(&mut LocalScheduler::new(Fcfs, 4), &jobs, &[]);
    assert_eq!(arrival.starts, BTreeMap::from([(1, 0.0), (2, 10.0), (3, 110.0), (4, 130.0)]));
    for policy in [Fcfs, Easy] {
        let mut s = LocalScheduler::new(policy, 4);
        s.order_by(&order::ShortestJobFirst).unwrap();
        assert_eq!(s.queue_order().map(|o| o.name()), Some("shortest-job-first"));
        let sjf = run(&mut s, &jobs, &[]);
        assert_eq!(sjf.starts, BTreeMap::from([(1, 0.0), (2, 80.0), (3, 10.0), (4, 30.0)]), "{policy:?}");
    }
    // A new job's plan follows the same order: at 5, FCFS by shortest job first plans J3 (10–30), J4 (30–80) and
    // J2 (80–180) before it; by arrival J2 (10–110), J3 (110–130) and J4 (130–180).
    let mut s = LocalScheduler::new(Fcfs, 4);
    s.order_by(&order::ShortestJobFirst).unwrap();
    for j in &jobs {
        s.submit(t(j.submit), j.queued()).unwrap();
    }
    let mut arrival = LocalScheduler::new(Fcfs, 4);
    for j in &jobs {
        arrival.submit(t(j.submit), j.queued()).unwrap();
    }
    assert_eq!(arrival.earliest_start(t(5.0), 2, 1.0, None), Ok(t(130.0)), "after J4, last by arrival");
    assert_eq!(s.earliest_start(t(5.0), 2, 1.0, None), Ok(t(180.0)), "after J2, last by estimate");
}

#[test]
fn a_queue_order_keeps_classes_first_ties_by_arrival_and_nan_last() {
    // One PE busy until 10; four 1-PE jobs wait. Class 0 before class 1 whatever the rank; within a class the highest
    // id first; job 99's NaN rank after every number.
    let mut s = LocalScheduler::new(Fcfs, 1);
    s.order_by(&HighestIdFirst).unwrap();
    s.submit(t(0.0), job(1, 0.0, 1, 10.0, 10.0).queued()).unwrap();
    let low = QueuedJob { priority: 1, ..job(50, 1.0, 1, 1.0, 1.0).queued() };
    for q in
        [job(99, 1.0, 1, 1.0, 1.0).queued(), job(2, 1.0, 1, 1.0, 1.0).queued(), low, job(3, 1.0, 1, 1.0, 1.0).queued()]
    {
        assert_eq!(s.submit(t(1.0), q), Ok(vec![]));
    }
    let (mut order, mut now, mut running) = (Vec::new(), 10.0, 1);
    while let Ok(started) = s.complete(t(now), running) {
        let Some(next) = started.first() else { break };
        order.push(next.id);
        (now, running) = (now + 1.0, next.id);
    }
    assert_eq!(order, vec![3, 2, 99, 50]);
}

#[test]
fn conservative_backfilling_refuses_a_queue_order() {
    let mut s = LocalScheduler::new(Conservative, 4);
    assert!(matches!(s.order_by(&order::ShortestJobFirst), Err(Rejected::Invalid(m)) if m.contains("arrival order")));
    assert!(s.queue_order().is_none());
}

#[test]
fn randomized_invariants_under_shortest_job_first() {
    for seed in 200..240 {
        let (jobs, requests) = random_workload(seed);
        let single: Vec<Spec> = jobs.iter().map(|j| Spec { partition: None, ..*j }).collect();
        for policy in [Fcfs, Easy] {
            let mut s = LocalScheduler::new(policy, 16);
            s.order_by(&order::ShortestJobFirst).unwrap();
            run(&mut s, &single, &requests);
        }
        let mut s = LocalScheduler::new(MultiPartitionEasy, 16);
        s.order_by(&order::ShortestJobFirst).unwrap();
        run(&mut s, &jobs, &requests);
    }
}

#[test]
fn conservative_leaves_jobs_that_cannot_start_before_the_horizon_unplanned() {
    let mut s = LocalScheduler::new(Conservative, 4);
    s.defer_passes();
    s.plan_before(t(1000.0));
    // Three PEs held to the horizon (switched off); the fourth is free until a reservation from 100 on.
    let held = s.reserve(t(0.0), window(0.0, 1000.0, 3)).unwrap();
    s.reserve(t(0.0), window(100.0, 1000.0, 1)).unwrap();
    let jobs = [job(1, 0.0, 2, 50.0, 50.0), job(2, 0.0, 1, 500.0, 500.0), job(3, 0.0, 1, 80.0, 80.0)];
    for spec in jobs.iter().chain(&[job(4, 0.0, 3, 60.0, 60.0)]) {
        assert!(s.submit(t(0.0), spec.queued()).unwrap().is_empty());
    }
    // Job 1 is too wide, job 2 too long, job 4 wider and longer than job 1: they wait unplanned; job 3 fits.
    assert_eq!(s.pass(t(0.0)), at(0.0, &[3]));
    assert!([1, 2, 4].iter().all(|&id| s.planned_start(id).is_none()));
    // Switching the held PEs on plans them in queue order: 1 and 2 start, 4 when job 2 ends.
    s.cancel_reservation(t(10.0), held).unwrap();
    assert_eq!(s.pass(t(10.0)), at(10.0, &[1, 2]));
    assert_eq!(s.planned_start(4), Some(t(510.0)));
    assert!(s.violations().is_empty());
}

/// Queries before a deferred pass compute that pass once, share it, and the pass takes it: the schedule is the same
/// as without the queries, and an event after a query is not lost (the query's pass is dropped).
#[test]
fn queries_before_a_deferred_pass_leave_the_same_schedule() {
    let mut rng = Pcg64::seed_from_u64(7);
    let specs: Vec<Spec> = (0..80)
        .map(|id| {
            let estimate = rng.random_range(1.0..50.0);
            let runtime = estimate * rng.random_range(0.2..=1.0);
            job(id, (id / 3) as f64 * 4.0, rng.random_range(1..=8), estimate, runtime)
        })
        .collect();
    let replay = |asking: bool| {
        let mut s = LocalScheduler::new(Conservative, 8);
        s.defer_passes();
        let (mut ends, mut next) = (Vec::<(SimTime, JobId)>::new(), 0);
        let (mut started, mut planned) = (Vec::new(), Vec::new());
        let ask = |s: &LocalScheduler, id: JobId, now: SimTime| {
            if asking {
                std::hint::black_box(s.planned_start(id));
                assert!(s.earliest_start(now, 3, 10.0, None).is_ok_and(|start| start >= now));
            }
        };
        loop {
            let arrival = specs.get(next).map(|j| t(j.submit));
            let end = ends.iter().map(|&(e, _)| e).min();
            let Some(now) = [arrival, end, s.next_wakeup()].into_iter().flatten().min() else { break };
            while let Some(spec) = specs.get(next).filter(|j| t(j.submit) == now) {
                s.submit(now, spec.queued()).unwrap();
                ask(&s, spec.id, now);
                next += 1;
            }
            for &(_, id) in ends.iter().filter(|&&(e, _)| e == now) {
                s.complete(now, id).unwrap();
                ask(&s, id, now);
            }
            ends.retain(|&(e, _)| e != now);
            for st in s.pass(now) {
                ends.push((now + specs[st.id as usize].runtime, st.id));
                started.push(st);
            }
            planned.extend(s.waiting().map(|w| (w.id, s.planned_start(w.id))).collect::<Vec<_>>());
        }
        assert!(s.violations().is_empty());
        (started, planned)
    };
    let (asked, plain) = (replay(true), replay(false));
    assert_eq!(asked.0.len(), specs.len());
    assert_eq!(asked, plain);
}

/// A scheduler with deferred passes, driven one pass per event, that checks after every pass what the FCFS and EASY
/// passes rely on instead of walking the queue: the waiting jobs that hold windows are exactly those in `due` (EASY's
/// pivots; none under FCFS). Before each pass it checks that FCFS's `planned_start`, which answers without settling
/// the pending pass, agrees with the schedule that pass leaves.
struct Audited(LocalScheduler);

impl Audited {
    fn new(mut s: LocalScheduler) -> Self {
        s.defer_passes();
        Audited(s)
    }

    fn pass(&mut self, now: f64, mut started: Vec<Started>) -> Vec<Started> {
        let s = &mut self.0;
        assert!(started.is_empty(), "a deferred event starts nothing");
        if s.policy() == Fcfs {
            let (settled, _) = LocalScheduler::passed(s, t(now));
            for job in s.waiting() {
                let planned = settled.seq_of.get(&job.id).and_then(|seq| settled.queue[seq].hold.as_ref());
                assert_eq!(s.planned_start(job.id), planned.map(|hold| hold.start), "job {}", job.id);
            }
        }
        started = s.pass(t(now));
        let holding: BTreeSet<u64> = s.queue.iter().filter(|(_, w)| w.hold.is_some()).map(|(&seq, _)| seq).collect();
        let due: BTreeSet<u64> = s.due.iter().map(|&(_, seq)| seq).collect();
        assert_eq!(holding, due, "{:?} at {now}", s.policy());
        if s.policy() == Fcfs {
            assert!(due.is_empty(), "FCFS holds no window for a waiting job");
        }
        started
    }
}

impl Driven for Audited {
    fn pes(&self) -> u32 {
        self.0.pes()
    }
    fn never_delays(&self) -> bool {
        false
    }
    fn submit(&mut self, now: f64, job: QueuedJob) -> Vec<Started> {
        let started = self.0.submit(t(now), job).unwrap();
        self.pass(now, started)
    }
    fn complete(&mut self, now: f64, id: JobId) -> Vec<Started> {
        let started = self.0.complete(t(now), id).unwrap();
        self.pass(now, started)
    }
    fn tick(&mut self, now: f64) -> Vec<Started> {
        let started = self.0.tick(t(now));
        self.pass(now, started)
    }
    fn reserve(&mut self, now: f64, request: ReservationRequest) -> bool {
        // A reservation only takes capacity, and asks for no pass.
        self.0.reserve(t(now), request).is_ok()
    }
    fn next_wakeup(&self) -> Option<f64> {
        Driven::next_wakeup(&self.0)
    }
    fn planned_start(&self, id: JobId) -> Option<f64> {
        Driven::planned_start(&self.0, id)
    }
    fn head(&self) -> Option<JobId> {
        Driven::head(&self.0)
    }
    fn idle(&self) -> bool {
        Driven::idle(&self.0)
    }
}

#[test]
fn between_passes_only_due_jobs_hold_windows() {
    for seed in 200..240 {
        let (jobs, requests) = random_workload(seed);
        let single: Vec<Spec> = jobs.iter().map(|j| Spec { partition: None, ..*j }).collect();
        for policy in [Fcfs, Easy] {
            let audited = run(&mut Audited::new(LocalScheduler::new(policy, 16)), &single, &requests);
            let plain = run(&mut LocalScheduler::new(policy, 16), &single, &requests);
            assert_eq!(audited.starts, plain.starts, "seed {seed}, {policy:?}");
        }
        run(&mut Audited::new(LocalScheduler::new(MultiPartitionEasy, 16)), &jobs, &requests);
    }
}
