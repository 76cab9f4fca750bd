//! The resource manager of a public computing utility (PCU; Asaduzzaman & Maheswaran, *Strategies to Create Platforms
//! for Differentiated Services from Dedicated and Opportunistic Resources*): a small cluster of dedicated nodes plus
//! many opportunistic public nodes, scheduled in epochs.
//!
//! Users submit single-resource jobs (`Job::Submit`). Every epoch of δ seconds the manager runs the paper's
//! Algorithm 1: it drains its input queue (a job that can no longer finish within e_max is dropped; the next goes to
//! a free dedicated node, or as k replicas to free public nodes, or waits), finds the public replicas whose progress
//! reports stopped (their owners took the machines back), ranks the running jobs by priority and live-migrates the
//! top N_d onto the dedicated nodes and those they displace out to public nodes, then replenishes replicas.
//! A job whose replicas all failed starts again from its last checkpoint, which exists only if it ran on a dedicated
//! node. The first replica to finish completes the job; the others are stopped.
//!
//! The manager knows no runtimes when it schedules (only the user's estimate, for the elongation) and no public
//! node's state but what the node said: its announcements (`Utility::Available`), its withdrawals when its owner
//! takes it back (`Utility::Withdrawn`), and its progress reports. Withdrawals only keep the node out of the free
//! pool (Algorithm 1 queries for k *free* public resources, so replicas go only to nodes available when spawned); a
//! replica lost with its node is found failed from the missing reports, as the paper detects failures. State moves
//! over the cluster's Internet links ([`link`]): spawning or replenishing a replica sends the job's footprint up;
//! a live migration copies the bulk while the job runs, then freezes it and copies the residual, so the job is down
//! only for the residual.
//!
//! Choices where the paper is silent (its digest's defaults): replicas are replenished from the last cluster
//! checkpoint; "too old" means hopeless, the projected elongation ((t − a) + (W − w)) / W − 1 above e_max with W the
//! user's estimate and w the progress, and applies only to jobs that never started (a job whose replicas all failed
//! is re-spawned, as Section 4.5 has it, and only de-prioritised once hopeless); a failure is noticed when no report came for two epochs; a job that migrated
//! is not moved again for one epoch after; the residual of a live migration is 10% of what the bulk copies.

pub mod kind;
pub mod link;
pub mod sla;

use std::collections::{BTreeMap, VecDeque};

use rand::RngExt;
use serde::{Deserialize, Serialize};

use crate::protocol::{JobId, JobMsg, JobSpec, Msg, Run, TimerMsg, UtilityMsg};
use crate::report::{Report, Series};
use crate::sim::{Agent, AgentId, Ctx, Envelope, GridMarket, SimTime, TimerId, rng};
use link::{Direction, Links, TransferId};
use sla::{SlaTerms, User, pearson};

/// How the manager shares the dedicated nodes (Section 4.2 and 5.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UtilityPolicy {
    /// Periodic dynamic priorities (SLA deviation plus elongation) with preemptive migration: the paper's choice.
    #[default]
    Dynamic,
    /// Static, non-preemptive allocation: the queue is drained taking the jobs of the users with the highest SLA
    /// deviation first, and no job ever changes pool.
    Static,
    /// Throughput-greedy: the queue in arrival order to the dedicated nodes while any is free, the rest to public
    /// nodes for life.
    Greedy,
    /// Round-robin rotation: the dedicated nodes go every epoch to the running jobs that have had them least.
    RoundRobin,
}

impl UtilityPolicy {
    fn migrates(self) -> bool {
        matches!(self, UtilityPolicy::Dynamic | UtilityPolicy::RoundRobin)
    }
}

/// A utility manager's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct UtilityConfig {
    /// Sharing of the dedicated nodes.
    pub policy: UtilityPolicy,
    /// Epoch δ \[s\].
    pub epoch: f64,
    /// Replicas k of a job on public nodes.
    pub replicas: u32,
    /// Uplink B_up and downlink B_down of the cluster [bit/s]; infinite for transfers that cost nothing.
    pub uplink: f64,
    /// See `uplink`.
    pub downlink: f64,
    /// Memory footprint of a job without one of its own \[bytes\].
    pub footprint: f64,
    /// What a migration copies, as a multiple of the footprint (the paper's DAS-2 runs: 3).
    pub migration_factor: f64,
    /// The share of a migration's data copied after the freeze.
    pub residual: f64,
    /// A public replica without a report for this long has failed \[s\].
    pub timeout: f64,
    /// A job is not migrated again within this long after a migration ends \[s\].
    pub hold_down: f64,
    /// The SLA every user signs.
    pub sla: SlaTerms,
    /// Each user's V_0 is drawn uniformly from this range [dedicated nodes].
    pub max_load: (f64, f64),
    /// Completions before this time are left out of the loads and rates (a warm-up) \[s\].
    pub warm_up: f64,
    /// The dedicated nodes alone: public nodes are never given work (the dedicated-only baseline).
    pub dedicated_only: bool,
    /// The replication's seed, for the users' V_0.
    pub seed: u64,
}

/// One of the cluster's dedicated nodes.
#[derive(Clone, Debug)]
struct Dedicated {
    id: AgentId,
    job: Option<JobId>,
    /// A job migrating in, and, once its state has arrived, the work it has done.
    incoming: Option<(JobId, Option<f64>)>,
    busy_since: f64,
}

/// A public node as the manager knows it.
#[derive(Clone, Copy, Debug)]
struct Public {
    bandwidth: f64,
    latency: f64,
    /// The job whose replica it holds (or is being sent); `None` while it is in the free pool or unknown.
    job: Option<JobId>,
    /// Its index in the free pool, while in it.
    slot: Option<usize>,
    /// Withdrawn by its owner since its last announcement: not free, whatever it holds.
    away: bool,
    /// Its session, from its last announcement.
    session: u32,
}

/// A replica on a public node.
#[derive(Clone, Copy, Debug)]
struct Replica {
    /// The transfer of its state, while in flight.
    transfer: Option<TransferId>,
    /// Its last sign of life (the `Run`, then each report) [s].
    seen: f64,
    /// Its last reported progress.
    done: f64,
}

/// A live migration in progress.
#[derive(Clone, Debug)]
enum Migration {
    /// From a public replica (the forerunner) into a dedicated node.
    In { from: AgentId, to: usize, step: Step },
    /// From a dedicated node out to fresh public nodes.
    Out { from: usize, to: Vec<AgentId>, step: Step },
}

#[derive(Clone, Debug)]
enum Step {
    /// Copying the bulk while the job runs.
    Bulk(Vec<TransferId>),
    /// Waiting for the source's `Frozen`.
    Freezing,
    /// Copying the residual of a frozen job that had done `done`, frozen at `since`.
    Residual { transfers: Vec<TransferId>, done: f64, since: f64 },
}

impl Migration {
    fn step(&mut self) -> &mut Step {
        match self {
            Migration::In { step, .. } | Migration::Out { step, .. } => step,
        }
    }
}

/// A job in the job table.
#[derive(Clone, Debug)]
struct Job {
    spec: JobSpec,
    arrival: f64,
    /// The last checkpoint, stored in the cluster [s of work].
    checkpoint: f64,
    dedicated: Option<usize>,
    replicas: BTreeMap<AgentId, Replica>,
    migration: Option<(Migration, f64)>,
    /// Queued (new, or all its replicas failed).
    queued: bool,
    started: bool,
    /// End of its last migration [s].
    migrated: f64,
    /// Time spent on dedicated nodes [s].
    dedicated_time: f64,
    /// Progress when its current stint on public nodes began.
    public_from: f64,
    /// Work done on public nodes that counted.
    public_work: f64,
    /// Since when no instance of it runs after a failure.
    down_since: Option<f64>,
    failure_downtime: f64,
    migration_downtime: f64,
    /// The public nodes really running a replica of it (the scheduler's `replicas` include those lost unnoticed),
    /// with when it started there (the `Run`'s arrival), for the replica availability only.
    held: BTreeMap<AgentId, f64>,
    /// While it is on public nodes (from its first replica's start until it leaves them): when its coverage was
    /// last counted.
    exposed_since: Option<f64>,
}

impl Job {
    fn work(&self) -> f64 {
        self.spec.runtime
    }

    /// The best progress known: the dedicated node's checkpoint or the forerunner's report.
    fn progress(&self) -> f64 {
        self.replicas.values().map(|r| r.done).fold(self.checkpoint, f64::max)
    }

    /// Projected elongation at `now` if it ran at a dedicated node's rate from here, by the user's estimate.
    fn projected_elongation(&self, now: f64) -> f64 {
        let estimate = self.spec.estimate.max(f64::MIN_POSITIVE);
        ((now - self.arrival) + (estimate - self.progress()).max(0.0)) / estimate - 1.0
    }

    fn live(&self) -> usize {
        self.replicas.len()
    }
}

/// What a transfer carries.
#[derive(Clone, Copy, Debug)]
enum Carries {
    /// A replica's state to a public node, from the checkpoint, since `since`.
    Spawn { job: JobId, node: AgentId, since: f64 },
    /// Part of a migration of the job.
    Migration { job: JobId },
}

/// The utility's resource manager.
#[derive(Debug)]
pub struct Utility {
    config: UtilityConfig,
    dedicated: Vec<Dedicated>,
    dedicated_index: BTreeMap<AgentId, usize>,
    public: BTreeMap<AgentId, Public>,
    /// Public nodes believed free, in the order they announced themselves.
    pool: Vec<AgentId>,
    jobs: BTreeMap<JobId, Job>,
    queue: VecDeque<JobId>,
    users: BTreeMap<AgentId, User>,
    links: Links,
    transfers: BTreeMap<TransferId, Carries>,
    transfer_timer: Option<TimerId>,
    epoch_armed: bool,
    epochs: u64,
    stats: Stats,
}

/// What the manager counts for its report.
#[derive(Clone, Debug, Default)]
struct Stats {
    submitted: u64,
    offered_work: f64,
    completed: u64,
    completed_work: f64,
    dropped: u64,
    elongation: f64,
    /// Time from arrival to completion, summed over the completed jobs [s].
    response: f64,
    public_work: f64,
    failure_downtime: f64,
    migration_downtime: f64,
    failures: u64,
    restarts: u64,
    migrations: u64,
    migration_time: f64,
    migrations_done: u64,
    spawns: u64,
    spawn_time: f64,
    /// Completions after the warm-up: jobs, their work, and the work within e_max.
    measured: u64,
    measured_work: f64,
    measured_goodput: f64,
    dedicated_busy: f64,
    coverage: Coverage,
    /// Bits asked of the uplink after the warm-up (spawns, replenishments and migrations out).
    uplink_offered: f64,
    /// Jobs started for the first time (only jobs never started are dropped).
    started: u64,
    backlog: Slope,
    queued: Series,
    on_public: Series,
    transfers: Series,
}

/// The least-squares slope of samples (t, y) [y per second].
#[derive(Clone, Copy, Debug, Default)]
struct Slope {
    n: f64,
    t: f64,
    y: f64,
    tt: f64,
    ty: f64,
}

impl Slope {
    fn add(&mut self, t: f64, y: f64) {
        self.n += 1.0;
        self.t += t;
        self.y += y;
        self.tt += t * t;
        self.ty += t * y;
    }

    fn slope(&self) -> Option<f64> {
        let var = self.n * self.tt - self.t * self.t;
        (self.n >= 2.0 && var > 0.0).then(|| (self.n * self.ty - self.t * self.y) / var)
    }
}

/// Time jobs spent on public nodes after the warm-up, and how much of it they had live replicas: the replica
/// availability of Section 4.6, P(X ≥ 1) with X the live replicas of a job on public nodes.
#[derive(Clone, Copy, Debug, Default)]
struct Coverage {
    /// Job-seconds on public nodes.
    exposed: f64,
    /// Of which with at least one live replica.
    held: f64,
    /// Replica-seconds live (at most k a job).
    replicas: f64,
}

impl Coverage {
    /// Counts a job with `held` live replicas from `since` to `now`.
    fn add(&mut self, since: f64, now: f64, held: usize, warm_up: f64, k: usize) {
        let dt = now.max(warm_up) - since.max(warm_up);
        if dt > 0.0 {
            self.exposed += dt;
            if held > 0 {
                self.held += dt;
            }
            self.replicas += held.min(k) as f64 * dt;
        }
    }

    /// Counts a job from `since` to `now` whose live replicas started on their nodes at `starts`: a replica counts
    /// from its start there, which may fall within the span (its `Run` still on its way when the span began).
    fn span(&mut self, since: f64, now: f64, starts: &[f64], warm_up: f64, k: usize) {
        let mut cuts: Vec<f64> = starts.iter().copied().filter(|&s| since < s && s < now).collect();
        cuts.sort_by(f64::total_cmp);
        let mut from = since;
        for to in cuts.into_iter().chain([now]) {
            let live = starts.iter().filter(|&&s| s <= from).count();
            self.add(from, to, live, warm_up, k);
            from = to;
        }
    }

    /// Counts `job`'s time on public nodes from its last count to `now` (nothing before its first replica started).
    fn count(&mut self, job: &mut Job, now: f64, warm_up: f64, k: usize) {
        if let Some(since) = job.exposed_since.filter(|&since| since < now) {
            let starts: Vec<f64> = job.held.values().copied().collect();
            self.span(since, now, &starts, warm_up, k);
            job.exposed_since = Some(now);
        }
    }
}

impl Utility {
    /// A manager with no nodes yet: they announce themselves.
    pub fn new(config: UtilityConfig) -> Utility {
        let links = Links::new(config.uplink, config.downlink);
        Utility {
            config,
            dedicated: Vec::new(),
            dedicated_index: BTreeMap::new(),
            public: BTreeMap::new(),
            pool: Vec::new(),
            jobs: BTreeMap::new(),
            queue: VecDeque::new(),
            users: BTreeMap::new(),
            links,
            transfers: BTreeMap::new(),
            transfer_timer: None,
            epoch_armed: false,
            epochs: 0,
            stats: Stats::default(),
        }
    }

    fn user(&mut self, owner: AgentId) -> &mut User {
        let (seed, (lo, hi)) = (self.config.seed, self.config.max_load);
        self.users.entry(owner).or_insert_with(|| {
            // Drawn from the user's own stream, so that it does not depend on who submits first.
            let v0 = if hi > lo {
                rng::stream(seed, &format!("utility-user:{}", owner.0), 0).random_range(lo..=hi)
            } else {
                lo
            };
            User::new(v0)
        })
    }

    fn footprint(&self, job: &JobSpec) -> f64 {
        job.memory_mb.map_or(self.config.footprint, |mb| mb * 1e6)
    }

    fn arm_epoch(&mut self, ctx: &mut Ctx<'_>) {
        if !self.epoch_armed {
            self.epoch_armed = true;
            let now = ctx.now().secs();
            // Epochs fall on multiples of δ.
            let next = (now / self.config.epoch).floor() * self.config.epoch + self.config.epoch;
            ctx.wake_in(next - now, TimerMsg::Round { n: self.epochs });
        }
    }

    fn on_submit(&mut self, spec: &JobSpec, ctx: &mut Ctx<'_>) {
        let now = ctx.now().secs();
        if spec.pes != 1 {
            let reason = format!("a utility runs one-resource jobs; this one needs {} PEs", spec.pes);
            ctx.send(spec.owner, JobMsg::Rejected { job: spec.id, reason });
            return;
        }
        self.stats.submitted += 1;
        self.stats.offered_work += spec.runtime;
        self.user(spec.owner).offered(now, spec.runtime);
        ctx.send(spec.owner, JobMsg::Accepted { job: spec.id });
        self.jobs.insert(
            spec.id,
            Job {
                spec: spec.clone(),
                arrival: now,
                checkpoint: 0.0,
                dedicated: None,
                replicas: BTreeMap::new(),
                migration: None,
                queued: true,
                started: false,
                migrated: f64::NEG_INFINITY,
                dedicated_time: 0.0,
                public_from: 0.0,
                public_work: 0.0,
                down_since: None,
                failure_downtime: 0.0,
                migration_downtime: 0.0,
                held: BTreeMap::new(),
                exposed_since: None,
            },
        );
        self.queue.push_back(spec.id);
        self.stats.queued.set(ctx.now(), self.queue.len() as f64);
        self.arm_epoch(ctx);
    }

    fn on_available(
        &mut self,
        node: AgentId,
        dedicated: bool,
        bandwidth: f64,
        latency: f64,
        session: u32,
        ctx: &mut Ctx<'_>,
    ) {
        if dedicated {
            if !self.dedicated_index.contains_key(&node) {
                self.dedicated_index.insert(node, self.dedicated.len());
                self.dedicated.push(Dedicated { id: node, job: None, incoming: None, busy_since: 0.0 });
            }
            return;
        }
        if self.config.dedicated_only {
            return;
        }
        // A node that announces itself holds nothing: what it was given is gone (its owner took it back).
        if let Some(job) = self.public.get(&node).and_then(|p| p.job) {
            let target = matches!(self.jobs.get(&job).and_then(|j| j.migration.as_ref()),
                Some((Migration::Out { to, .. }, _)) if to.contains(&node));
            if target {
                self.abandon_migration(job, ctx);
            } else {
                self.replica_failed(job, node, ctx);
            }
        }
        let p = self.public.entry(node).or_insert(Public {
            bandwidth,
            latency,
            job: None,
            slot: None,
            away: false,
            session,
        });
        (p.bandwidth, p.latency, p.session, p.away) = (bandwidth, latency, session, false);
        self.release(node);
    }

    /// Takes a free public node at random from the pool for `job`.
    fn take_public(&mut self, job: JobId, ctx: &mut Ctx<'_>) -> Option<AgentId> {
        if self.pool.is_empty() {
            return None;
        }
        let node = self.pool[ctx.rng().random_range(0..self.pool.len())];
        self.unpool(node);
        if let Some(p) = self.public.get_mut(&node) {
            p.job = Some(job);
        }
        Some(node)
    }

    /// Takes `node` out of the free pool, if it is there.
    fn unpool(&mut self, node: AgentId) {
        let Some(slot) = self.public.get_mut(&node).and_then(|p| p.slot.take()) else { return };
        self.pool.swap_remove(slot);
        if let Some(p) = self.pool.get(slot).and_then(|moved| self.public.get_mut(moved)) {
            p.slot = Some(slot);
        }
    }

    /// A public node holds nothing any more: back to the pool, unless its owner has it.
    fn release(&mut self, node: AgentId) {
        if let Some(p) = self.public.get_mut(&node) {
            p.job = None;
            if p.slot.is_none() && !p.away {
                p.slot = Some(self.pool.len());
                self.pool.push(node);
            }
        }
    }

    /// A public node found gone holds nothing, and is not free until it announces itself again.
    fn forget(&mut self, node: AgentId) {
        if let Some(p) = self.public.get_mut(&node)
            && p.slot.is_none()
        {
            p.job = None;
        }
    }

    fn start_transfer(
        &mut self,
        direction: Direction,
        bytes: f64,
        node: AgentId,
        carries: Carries,
        ctx: &mut Ctx<'_>,
    ) -> TransferId {
        // Transfers that cost nothing (infinite links) are not held back by the nodes' access links either.
        let link = if direction == Direction::Up { self.config.uplink } else { self.config.downlink };
        let cap = if link.is_infinite() { link } else { self.public.get(&node).map_or(f64::INFINITY, |p| p.bandwidth) };
        let now = ctx.now().secs();
        if direction == Direction::Up && now >= self.config.warm_up {
            self.stats.uplink_offered += bytes * 8.0;
        }
        let id = self.links.start(now, direction, bytes, cap);
        self.transfers.insert(id, carries);
        ctx.at_end_of_instant();
        id
    }

    /// Sets the timer for the next end of a transfer, once an instant (after all its transfers started and ended).
    fn rearm_transfers(&mut self, ctx: &mut Ctx<'_>) {
        if let Some(t) = self.transfer_timer.take() {
            ctx.cancel(t);
        }
        if let Some(end) = self.links.next_end() {
            self.transfer_timer = Some(ctx.wake_in((end - ctx.now().secs()).max(0.0), TimerMsg::Transfer));
        }
        self.stats.transfers.set(ctx.now(), self.links.active() as f64);
    }

    fn cancel_transfer(&mut self, id: TransferId, ctx: &mut Ctx<'_>) {
        self.links.cancel(ctx.now().secs(), id);
        self.transfers.remove(&id);
        ctx.at_end_of_instant();
    }

    /// A replica of `job` starts (`live`: sent now, running once the `Run` arrives, a node latency later) or stops
    /// really running on public node `node` (told by the node, at its own time); its first start puts the job on
    /// public nodes for the replica availability.
    fn hold(&mut self, job: JobId, node: AgentId, live: bool, now: f64) {
        let (warm_up, k) = (self.config.warm_up, self.config.replicas as usize);
        let start = now + self.latency(node);
        let Some(j) = self.jobs.get_mut(&job) else { return };
        if !live && !j.held.contains_key(&node) {
            return;
        }
        self.stats.coverage.count(j, now, warm_up, k);
        if live {
            j.held.insert(node, start);
            j.exposed_since.get_or_insert(start);
        } else {
            j.held.remove(&node);
        }
    }

    /// `job` leaves the public nodes (for a dedicated node, or for good).
    fn leave_public(&mut self, job: JobId, now: f64) {
        let (warm_up, k) = (self.config.warm_up, self.config.replicas as usize);
        let Some(j) = self.jobs.get_mut(&job) else { return };
        self.stats.coverage.count(j, now, warm_up, k);
        j.exposed_since = None;
        j.held.clear();
    }

    fn latency(&self, node: AgentId) -> f64 {
        self.public.get(&node).map_or(0.0, |p| p.latency)
    }

    /// Sends to a node over its latency, so that what the manager tells one node arrives in the order it was said.
    fn tell(&self, node: AgentId, msg: UtilityMsg, ctx: &mut Ctx<'_>) {
        ctx.send_in(self.latency(node), node, msg);
    }

    /// Sends the job to run on `node` from `done`.
    fn run_on(&mut self, job: JobId, node: AgentId, done: f64, ctx: &mut Ctx<'_>) {
        let now = ctx.now().secs();
        let Some(j) = self.jobs.get_mut(&job) else { return };
        let session = self.public.get(&node).map_or(0, |p| p.session);
        let run = Run { job, work: j.spec.runtime, done, report: self.config.epoch, session };
        if let Some(since) = j.down_since.take() {
            j.failure_downtime += now - since;
        }
        if !j.started {
            j.started = true;
            self.stats.started += 1;
            ctx.send(j.spec.owner, JobMsg::Started { job });
        }
        if self.public.contains_key(&node) {
            self.hold(job, node, true, now);
        }
        self.tell(node, UtilityMsg::Run(Box::new(run)), ctx);
    }

    /// Starts the job on dedicated node `index` from `done`; its public replicas, if any, stop.
    fn start_dedicated(&mut self, job: JobId, index: usize, done: f64, ctx: &mut Ctx<'_>) {
        let now = ctx.now().secs();
        let replicas: Vec<AgentId> =
            self.jobs.get(&job).map(|j| j.replicas.keys().copied().collect()).unwrap_or_default();
        for node in replicas {
            self.stop_replica(job, node, ctx);
        }
        self.leave_public(job, now);
        let d = &mut self.dedicated[index];
        d.job = Some(job);
        d.busy_since = now;
        let node = d.id;
        if let Some(j) = self.jobs.get_mut(&job) {
            j.dedicated = Some(index);
            j.checkpoint = done;
        }
        self.run_on(job, node, done, ctx);
    }

    /// Starts up to k replicas of a queued job from its checkpoint on free public nodes; false if none is free.
    fn spawn(&mut self, job: JobId, wanted: usize, ctx: &mut Ctx<'_>) -> bool {
        let footprint = match self.jobs.get(&job) {
            Some(j) => self.footprint(&j.spec),
            None => return false,
        };
        let mut any = false;
        for _ in 0..wanted {
            let Some(node) = self.take_public(job, ctx) else { break };
            let now = ctx.now().secs();
            let transfer =
                self.start_transfer(Direction::Up, footprint, node, Carries::Spawn { job, node, since: now }, ctx);
            if let Some(j) = self.jobs.get_mut(&job) {
                j.replicas.insert(node, Replica { transfer: Some(transfer), seen: now, done: j.checkpoint });
            }
            any = true;
        }
        any
    }

    fn drop_job(&mut self, job: JobId, ctx: &mut Ctx<'_>) {
        self.leave_public(job, ctx.now().secs());
        if let Some(j) = self.jobs.remove(&job) {
            self.stats.dropped += 1;
            let reason = "hopeless: it can no longer finish within the SLA's maximum elongation".to_string();
            ctx.send(j.spec.owner, JobMsg::Rejected { job, reason });
        }
    }

    /// Lines 2–16 of Algorithm 1.
    fn drain_queue(&mut self, ctx: &mut Ctx<'_>) {
        let now = ctx.now().secs();
        if self.config.policy == UtilityPolicy::Static {
            // Highest SLA deviation first; arrival order within a user and between equals.
            let sla = self.config.sla;
            let mut keyed = Vec::with_capacity(self.queue.len());
            for &id in &self.queue {
                let owner = self.jobs.get(&id).map(|j| j.spec.owner);
                let d = owner.and_then(|o| self.users.get_mut(&o)).map_or(0.0, |u| u.deviation(now, &sla).0);
                keyed.push((d, id));
            }
            // A stable sort: arrival order within a user and between equals.
            keyed.sort_by(|a, b| b.0.total_cmp(&a.0));
            self.queue = keyed.into_iter().map(|(_, id)| id).collect();
        }
        while let Some(&job) = self.queue.front() {
            let Some(j) = self.jobs.get(&job) else {
                self.queue.pop_front();
                continue;
            };
            // Only a job that never started is too old: one whose replicas all failed is re-spawned from its
            // checkpoint (Section 4.5), however late.
            if !j.started && j.projected_elongation(now) > self.config.sla.max_elongation {
                self.queue.pop_front();
                self.drop_job(job, ctx);
                continue;
            }
            let checkpoint = j.checkpoint;
            if let Some(index) = self.dedicated.iter().position(|d| d.job.is_none() && d.incoming.is_none()) {
                self.queue.pop_front();
                if let Some(j) = self.jobs.get_mut(&job) {
                    j.queued = false;
                }
                self.start_dedicated(job, index, checkpoint, ctx);
                continue;
            }
            if !self.spawn(job, self.config.replicas as usize, ctx) {
                break;
            }
            self.queue.pop_front();
            if let Some(j) = self.jobs.get_mut(&job) {
                j.queued = false;
                j.public_from = checkpoint;
            }
        }
        self.stats.queued.set(ctx.now(), self.queue.len() as f64);
    }

    /// A replica is gone: its node stopped reporting, or came back empty.
    fn replica_failed(&mut self, job: JobId, node: AgentId, ctx: &mut Ctx<'_>) {
        self.forget(node);
        let now = ctx.now().secs();
        let Some(j) = self.jobs.get_mut(&job) else { return };
        let Some(replica) = j.replicas.remove(&node) else { return };
        self.stats.failures += 1;
        self.hold(job, node, false, now);
        if let Some(t) = replica.transfer {
            self.cancel_transfer(t, ctx);
        }
        let Some(j) = self.jobs.get_mut(&job) else { return };
        // A migration from this replica, or to it, is abandoned.
        let abandoned = match &j.migration {
            Some((Migration::In { from, .. }, _)) => *from == node,
            Some((Migration::Out { to, .. }, _)) => to.contains(&node),
            None => false,
        };
        if abandoned {
            self.abandon_migration(job, ctx);
        }
        let Some(j) = self.jobs.get_mut(&job) else { return };
        if j.replicas.is_empty() && j.dedicated.is_none() && j.migration.is_none() && !j.queued {
            // Every replica failed: start again from the checkpoint, first in the queue.
            let last = if replica.seen.is_finite() { replica.seen } else { now };
            j.down_since = Some(last.min(now));
            j.queued = true;
            self.stats.restarts += 1;
            self.queue.push_front(job);
            self.stats.queued.set(ctx.now(), self.queue.len() as f64);
        }
    }

    fn abandon_migration(&mut self, job: JobId, ctx: &mut Ctx<'_>) {
        let Some(j) = self.jobs.get_mut(&job) else { return };
        let Some((migration, _)) = j.migration.take() else { return };
        let mut cancel = Vec::new();
        match migration {
            Migration::In { to, step, .. } => {
                if let Step::Bulk(t) | Step::Residual { transfers: t, .. } = step {
                    cancel.extend(t);
                }
                self.dedicated[to].incoming = None;
            }
            Migration::Out { to, step, .. } => {
                if let Step::Bulk(t) | Step::Residual { transfers: t, .. } = step {
                    cancel.extend(t);
                }
                for node in to {
                    if self.public.get(&node).is_some_and(|p| p.job == Some(job)) {
                        self.release(node);
                    }
                }
            }
        }
        for t in cancel {
            self.cancel_transfer(t, ctx);
        }
    }

    /// Line 17 of Algorithm 1: replicas silent for longer than the timeout have failed.
    fn detect_failures(&mut self, ctx: &mut Ctx<'_>) {
        let now = ctx.now().secs();
        let mut failed = Vec::new();
        for (&id, j) in &self.jobs {
            for (&node, r) in &j.replicas {
                if r.transfer.is_none() && now - r.seen > self.config.timeout {
                    failed.push((id, node));
                }
            }
        }
        for (job, node) in failed {
            self.replica_failed(job, node, ctx);
        }
    }

    /// The priority of a running job: its user's SLA deviation (normalised by the rate promised) plus its projected
    /// elongation; a job that can no longer meet e_max comes last. Round robin ranks by time on dedicated nodes.
    fn priority(&mut self, job: JobId, now: f64) -> f64 {
        let sla = self.config.sla;
        let Some(j) = self.jobs.get(&job) else { return f64::NEG_INFINITY };
        if self.config.policy == UtilityPolicy::RoundRobin {
            return -j.dedicated_time - j.dedicated.map_or(0.0, |d| now - self.dedicated[d].busy_since);
        }
        let elongation = j.projected_elongation(now);
        if elongation > sla.max_elongation {
            return -1e12 + elongation;
        }
        let owner = j.spec.owner;
        let (deviation, promised) = self.users.get_mut(&owner).map_or((0.0, 0.0), |u| u.deviation(now, &sla));
        let normalised = if promised > 0.0 { deviation / promised } else { 0.0 };
        normalised + elongation
    }

    /// Lines 18–22 of Algorithm 1: the top N_d running jobs belong on the dedicated nodes.
    fn rebalance(&mut self, ctx: &mut Ctx<'_>) {
        if !self.config.policy.migrates() || self.dedicated.is_empty() {
            return;
        }
        let now = ctx.now().secs();
        let running: Vec<JobId> = self
            .jobs
            .iter()
            .filter(|(_, j)| !j.queued && (j.dedicated.is_some() || j.replicas.values().any(|r| r.transfer.is_none())))
            .map(|(&id, _)| id)
            .collect();
        let mut ranked: Vec<(f64, JobId)> = running.iter().map(|&id| (self.priority(id, now), id)).collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let n = self.dedicated.len();
        let movable = |j: &Job| j.migration.is_none() && now - j.migrated >= self.config.hold_down;
        let ins: Vec<JobId> = ranked[..n.min(ranked.len())]
            .iter()
            .map(|&(_, id)| id)
            .filter(|id| self.jobs.get(id).is_some_and(|j| j.dedicated.is_none() && movable(j)))
            .collect();
        let outs: Vec<JobId> = ranked[n.min(ranked.len())..]
            .iter()
            .rev()
            .map(|&(_, id)| id)
            .filter(|id| self.jobs.get(id).is_some_and(|j| j.dedicated.is_some() && movable(j)))
            .collect();
        let mut outs = outs.into_iter();
        for job in ins {
            let free = self.dedicated.iter().position(|d| d.job.is_none() && d.incoming.is_none());
            let target = match free {
                Some(index) => index,
                None => {
                    // Displace the lowest-ranked job on a dedicated node, if it can go out to public nodes.
                    let Some(out) = outs.next() else { break };
                    let Some(index) = self.migrate_out(out, ctx) else { break };
                    index
                }
            };
            self.migrate_in(job, target, ctx);
        }
    }

    /// Starts moving a job from its dedicated node out to k public nodes; the node it leaves, if it could start.
    fn migrate_out(&mut self, job: JobId, ctx: &mut Ctx<'_>) -> Option<usize> {
        let k = self.config.replicas as usize;
        if self.pool.len() < k {
            return None;
        }
        let (from, bytes) = {
            let j = self.jobs.get(&job)?;
            (j.dedicated?, self.footprint(&j.spec) * self.config.migration_factor)
        };
        let mut to = Vec::new();
        let mut transfers = Vec::new();
        for _ in 0..k {
            let node = self.take_public(job, ctx)?;
            transfers.push(self.start_transfer(Direction::Up, bytes, node, Carries::Migration { job }, ctx));
            to.push(node);
        }
        let now = ctx.now().secs();
        self.stats.migrations += 1;
        self.jobs.get_mut(&job)?.migration = Some((Migration::Out { from, to, step: Step::Bulk(transfers) }, now));
        Some(from)
    }

    /// Starts moving a job's forerunner replica into dedicated node `to`.
    fn migrate_in(&mut self, job: JobId, to: usize, ctx: &mut Ctx<'_>) {
        let Some(j) = self.jobs.get(&job) else { return };
        let forerunner = j
            .replicas
            .iter()
            .filter(|(_, r)| r.transfer.is_none())
            .max_by(|a, b| a.1.done.total_cmp(&b.1.done).then(b.0.cmp(a.0)))
            .map(|(&node, _)| node);
        let Some(from) = forerunner else { return };
        let bytes = self.footprint(&j.spec) * self.config.migration_factor;
        self.dedicated[to].incoming = Some((job, None));
        let transfer = self.start_transfer(Direction::Down, bytes, from, Carries::Migration { job }, ctx);
        let now = ctx.now().secs();
        self.stats.migrations += 1;
        if let Some(j) = self.jobs.get_mut(&job) {
            j.migration = Some((Migration::In { from, to, step: Step::Bulk(vec![transfer]) }, now));
        }
    }

    /// Line 23–25 of Algorithm 1: jobs on public nodes get back to k replicas.
    fn replenish(&mut self, ctx: &mut Ctx<'_>) {
        let k = self.config.replicas as usize;
        let short: Vec<(JobId, usize)> = self
            .jobs
            .iter()
            .filter(|(_, j)| !j.queued && j.dedicated.is_none() && j.migration.is_none() && j.live() < k)
            .map(|(&id, j)| (id, k - j.live()))
            .collect();
        for (job, wanted) in short {
            if !self.spawn(job, wanted, ctx) {
                break;
            }
        }
    }

    fn on_epoch(&mut self, ctx: &mut Ctx<'_>) {
        self.epochs += 1;
        self.epoch_armed = false;
        self.drain_queue(ctx);
        self.detect_failures(ctx);
        self.rebalance(ctx);
        self.replenish(ctx);
        let on_public = self.jobs.values().filter(|j| !j.queued && j.dedicated.is_none()).count();
        self.stats.on_public.set(ctx.now(), on_public as f64);
        let now = ctx.now().secs();
        if now >= self.config.warm_up {
            let s = &self.stats;
            self.stats.backlog.add(now, (s.submitted - s.started - s.dropped) as f64);
        }
        if !self.jobs.is_empty() {
            self.arm_epoch(ctx);
        }
    }

    fn on_transfers(&mut self, ctx: &mut Ctx<'_>) {
        self.transfer_timer = None;
        let ended = self.links.ended(ctx.now().secs());
        for id in ended {
            match self.transfers.remove(&id) {
                Some(Carries::Spawn { job, node, since }) => {
                    let now = ctx.now().secs();
                    self.stats.spawns += 1;
                    self.stats.spawn_time += now - since;
                    let seen = now + self.latency(node);
                    let Some(j) = self.jobs.get_mut(&job) else { continue };
                    let Some(r) = j.replicas.get_mut(&node) else { continue };
                    r.transfer = None;
                    r.seen = seen;
                    let done = r.done;
                    self.run_on(job, node, done, ctx);
                }
                Some(Carries::Migration { job }) => self.migration_transfer_done(job, id, ctx),
                None => {}
            }
        }
        ctx.at_end_of_instant();
    }

    fn migration_transfer_done(&mut self, job: JobId, transfer: TransferId, ctx: &mut Ctx<'_>) {
        let Some(j) = self.jobs.get_mut(&job) else { return };
        let Some((migration, _)) = j.migration.as_mut() else { return };
        let source = match migration {
            Migration::In { from, .. } => *from,
            Migration::Out { from, .. } => self.dedicated[*from].id,
        };
        let step = migration.step();
        match step {
            Step::Bulk(t) => {
                t.retain(|&x| x != transfer);
                if t.is_empty() {
                    *step = Step::Freezing;
                    self.tell(source, UtilityMsg::Freeze { job }, ctx);
                }
            }
            Step::Residual { transfers, .. } => {
                transfers.retain(|&x| x != transfer);
                if transfers.is_empty() {
                    self.finish_migration(job, ctx);
                }
            }
            Step::Freezing => {}
        }
    }

    /// The source froze the job: copy the residual.
    fn on_frozen(&mut self, node: AgentId, job: JobId, done: f64, ctx: &mut Ctx<'_>) {
        let now = ctx.now().secs();
        let Some(j) = self.jobs.get(&job) else { return };
        let Some((migration, _)) = &j.migration else { return };
        let residual = self.footprint(&j.spec) * self.config.migration_factor * self.config.residual;
        let mut transfers = Vec::new();
        match migration.clone() {
            Migration::In { from, .. } if from == node => {
                transfers.push(self.start_transfer(Direction::Down, residual, from, Carries::Migration { job }, ctx));
                self.release(from);
                self.hold(job, from, false, now);
                if let Some(j) = self.jobs.get_mut(&job) {
                    j.replicas.remove(&from);
                    // Counted now; a replica finishing later counts only what it adds.
                    j.public_work += (done - j.public_from).max(0.0);
                    j.public_from = j.public_from.max(done);
                }
            }
            Migration::Out { from, to, .. } if self.dedicated[from].id == node => {
                for node in to {
                    transfers.push(self.start_transfer(Direction::Up, residual, node, Carries::Migration { job }, ctx));
                }
                self.leave_dedicated(job, from, now, ctx);
                if let Some(j) = self.jobs.get_mut(&job) {
                    j.checkpoint = done;
                }
            }
            _ => return,
        }
        if let Some((m, _)) = self.jobs.get_mut(&job).and_then(|j| j.migration.as_mut()) {
            *m.step() = Step::Residual { transfers, done, since: now };
        }
    }

    /// A job leaves dedicated node `index`; a job migrating in whose state has arrived starts there.
    fn leave_dedicated(&mut self, job: JobId, index: usize, now: f64, ctx: &mut Ctx<'_>) {
        let d = &mut self.dedicated[index];
        if d.job != Some(job) {
            return;
        }
        d.job = None;
        let busy = now - d.busy_since;
        self.stats.dedicated_busy += busy;
        if let Some(j) = self.jobs.get_mut(&job) {
            j.dedicated = None;
            j.dedicated_time += busy;
        }
        if let Some((incoming, Some(done))) = self.dedicated[index].incoming {
            self.dedicated[index].incoming = None;
            self.start_dedicated(incoming, index, done, ctx);
        }
    }

    fn finish_migration(&mut self, job: JobId, ctx: &mut Ctx<'_>) {
        let now = ctx.now().secs();
        let Some(j) = self.jobs.get_mut(&job) else { return };
        let Some((mut migration, started)) = j.migration.take() else { return };
        let (done, since) = match migration.step() {
            Step::Residual { done, since, .. } => (*done, *since),
            _ => return,
        };
        j.migrated = now;
        j.migration_downtime += now - since;
        self.stats.migration_time += now - started;
        self.stats.migrations_done += 1;
        match migration {
            Migration::In { to, .. } => {
                // The other replicas run on until the dedicated node is free.
                if self.dedicated[to].job.is_none() {
                    self.dedicated[to].incoming = None;
                    self.start_dedicated(job, to, done, ctx);
                } else {
                    self.dedicated[to].incoming = Some((job, Some(done)));
                }
            }
            Migration::Out { to, .. } => {
                let seen: Vec<(AgentId, f64)> = to.iter().map(|&n| (n, now + self.latency(n))).collect();
                if let Some(j) = self.jobs.get_mut(&job) {
                    j.public_from = done;
                    for &(node, seen) in &seen {
                        j.replicas.insert(node, Replica { transfer: None, seen, done });
                    }
                }
                for (node, _) in seen {
                    self.run_on(job, node, done, ctx);
                }
            }
        }
    }

    fn stop_replica(&mut self, job: JobId, node: AgentId, ctx: &mut Ctx<'_>) {
        let Some(j) = self.jobs.get_mut(&job) else { return };
        let Some(r) = j.replicas.remove(&node) else { return };
        self.hold(job, node, false, ctx.now().secs());
        if let Some(t) = r.transfer {
            self.cancel_transfer(t, ctx);
        } else {
            self.tell(node, UtilityMsg::Stop { job }, ctx);
        }
        if self.public.get(&node).is_some_and(|p| p.job == Some(job)) {
            self.release(node);
        }
    }

    fn on_progress(&mut self, node: AgentId, job: JobId, done: f64, now: f64) {
        let Some(j) = self.jobs.get_mut(&job) else { return };
        if let Some(r) = j.replicas.get_mut(&node) {
            r.seen = now;
            r.done = done;
        } else if j.dedicated.is_some_and(|d| self.dedicated[d].id == node) {
            j.checkpoint = done;
        }
    }

    fn on_done(&mut self, node: AgentId, job: JobId, ctx: &mut Ctx<'_>) {
        let now = ctx.now().secs();
        let on_dedicated = self.jobs.get(&job).and_then(|j| j.dedicated).filter(|&d| self.dedicated[d].id == node);
        let on_public = self.jobs.get(&job).is_some_and(|j| j.replicas.contains_key(&node));
        if on_dedicated.is_none() && !on_public {
            return;
        }
        self.leave_public(job, now);
        if self.jobs.get(&job).is_some_and(|j| j.migration.is_some()) {
            self.abandon_migration(job, ctx);
        }
        // A dedicated node waiting for it is free for others.
        for d in &mut self.dedicated {
            if d.incoming.is_some_and(|(j, _)| j == job) {
                d.incoming = None;
            }
        }
        if let Some(index) = on_dedicated {
            self.leave_dedicated(job, index, now, ctx);
        } else if let Some(j) = self.jobs.get_mut(&job) {
            j.public_work += (j.work() - j.public_from).max(0.0);
        }
        let nodes: Vec<AgentId> = self.jobs.get(&job).map(|j| j.replicas.keys().copied().collect()).unwrap_or_default();
        for n in nodes {
            if n == node {
                if let Some(j) = self.jobs.get_mut(&job) {
                    j.replicas.remove(&n);
                }
                self.release(n);
            } else {
                self.stop_replica(job, n, ctx);
            }
        }
        let Some(j) = self.jobs.remove(&job) else { return };
        let elongation = (now - j.arrival) / j.work().max(f64::MIN_POSITIVE) - 1.0;
        self.stats.completed += 1;
        self.stats.completed_work += j.work();
        self.stats.elongation += elongation;
        self.stats.response += now - j.arrival;
        self.stats.public_work += j.public_work;
        self.stats.failure_downtime += j.failure_downtime;
        self.stats.migration_downtime += j.migration_downtime;
        let measured = now >= self.config.warm_up;
        if measured {
            self.stats.measured += 1;
            self.stats.measured_work += j.work();
        }
        if elongation <= self.config.sla.max_elongation {
            if measured {
                self.stats.measured_goodput += j.work();
            }
            self.user(j.spec.owner).delivered(now, j.work());
        }
        ctx.send(j.spec.owner, JobMsg::Completed { job, cost: 0.0 });
    }
}

impl Agent<GridMarket> for Utility {
    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>) {
        let from = env.from();
        let now = ctx.now().secs();
        match &env.msg {
            Msg::Job(JobMsg::Submit(job)) => self.on_submit(job, ctx),
            Msg::Utility(UtilityMsg::Available { dedicated, bandwidth, latency, session }) => {
                self.on_available(from, *dedicated, *bandwidth, *latency, *session, ctx);
            }
            Msg::Utility(UtilityMsg::Progress { job, done }) => self.on_progress(from, *job, *done, now),
            Msg::Utility(UtilityMsg::Done { job }) => self.on_done(from, *job, ctx),
            Msg::Utility(UtilityMsg::Frozen { job, done }) => self.on_frozen(from, *job, *done, ctx),
            Msg::Utility(UtilityMsg::Lost { job }) => self.hold(*job, from, false, now),
            Msg::Utility(UtilityMsg::Withdrawn) => {
                if let Some(p) = self.public.get_mut(&from) {
                    p.away = true;
                }
                self.unpool(from);
            }
            Msg::Timer(TimerMsg::Round { .. }) => self.on_epoch(ctx),
            Msg::Timer(TimerMsg::Transfer) => self.on_transfers(ctx),
            other => crate::sim::unhandled(ctx, other.kind()),
        }
    }

    fn end_of_instant(&mut self, ctx: &mut Ctx<'_>) {
        self.rearm_transfers(ctx);
    }

    fn report(&self, now: SimTime, out: &mut Report) {
        let s = &self.stats;
        let horizon = now.secs().max(f64::MIN_POSITIVE);
        let measured = (now.secs() - self.config.warm_up).max(f64::MIN_POSITIVE);
        let busy_now: f64 = self.dedicated.iter().filter(|d| d.job.is_some()).map(|d| now.secs() - d.busy_since).sum();
        let per_job = |x: f64| if s.completed > 0 { x / s.completed as f64 } else { 0.0 };
        let pairs: Vec<(f64, f64)> = self.users.values().map(|u| u.over_run(horizon)).collect();
        out.metrics.extend([
            ("submitted", s.submitted as f64),
            ("completed", s.completed as f64),
            ("dropped", s.dropped as f64),
            ("offered_load", s.offered_work / horizon),
            ("carried_load", s.measured_work / measured),
            ("throughput", s.measured as f64 / measured),
            ("goodput", s.measured_goodput / measured),
            ("elongation", per_job(s.elongation)),
            ("response_time", per_job(s.response)),
            ("failure_downtime", per_job(s.failure_downtime)),
            ("migration_downtime", per_job(s.migration_downtime)),
            ("replica_failures", s.failures as f64),
            ("restarts", s.restarts as f64),
            ("migrations", s.migrations as f64),
            ("migrations_per_epoch", if self.epochs > 0 { s.migrations as f64 / self.epochs as f64 } else { 0.0 }),
            ("migration_time", if s.migrations_done > 0 { s.migration_time / s.migrations_done as f64 } else { 0.0 }),
            ("spawn_time", if s.spawns > 0 { s.spawn_time / s.spawns as f64 } else { 0.0 }),
            (
                "dedicated_utilisation",
                if self.dedicated.is_empty() {
                    0.0
                } else {
                    (s.dedicated_busy + busy_now) / (self.dedicated.len() as f64 * horizon)
                },
            ),
            ("public_work_share", if s.completed_work > 0.0 { s.public_work / s.completed_work } else { 0.0 }),
            ("uplink_mb", self.links.carried(Direction::Up) / 8e6),
            (
                "uplink_load",
                if self.config.uplink.is_finite() { s.uplink_offered / measured / self.config.uplink } else { 0.0 },
            ),
            ("downlink_mb", self.links.carried(Direction::Down) / 8e6),
        ]);
        if let Some(r) = pearson(&pairs) {
            out.metrics.push(("sla_correlation", r));
        }
        if let Some(slope) = s.backlog.slope() {
            out.metrics.push(("backlog_growth", slope));
        }
        // The jobs still on public nodes count up to now.
        let mut coverage = s.coverage;
        for j in self.jobs.values() {
            if let Some(since) = j.exposed_since.filter(|&since| since < now.secs()) {
                let starts: Vec<f64> = j.held.values().copied().collect();
                coverage.span(since, now.secs(), &starts, self.config.warm_up, self.config.replicas as usize);
            }
        }
        if coverage.exposed > 0.0 {
            out.metrics.extend([
                ("replica_availability", coverage.held / coverage.exposed),
                ("replica_uptime", coverage.replicas / (coverage.exposed * f64::from(self.config.replicas))),
            ]);
        }
        out.series.extend([
            ("queued", s.queued.clone()),
            ("on_public", s.on_public.clone()),
            ("transfers", s.transfers.clone()),
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backlog_slope_is_the_least_squares_one() {
        let mut s = Slope::default();
        assert_eq!(s.slope(), None);
        for (t, y) in [(0.0, 1.0), (10.0, 3.0), (20.0, 2.0), (30.0, 6.0)] {
            s.add(t, y);
        }
        // x̄ = 15, ȳ = 3: Σ(x − x̄)(y − ȳ) = 30 + 0 − 5 + 45 = 70 over Σ(x − x̄)² = 500.
        assert!((s.slope().unwrap() - 0.14).abs() < 1e-12, "{:?}", s.slope());
    }

    #[test]
    fn coverage_counts_after_the_warm_up_and_caps_replicas_at_k() {
        let mut c = Coverage::default();
        // 10 s before the warm-up at 100 s are left out; 30 s with 3 replicas count as k = 2.
        c.add(90.0, 130.0, 3, 100.0, 2);
        c.add(130.0, 140.0, 0, 100.0, 2);
        assert_eq!((c.exposed, c.held, c.replicas), (40.0, 30.0, 60.0));
    }

    #[test]
    fn a_replica_counts_from_its_start_on_the_node() {
        // Exposed from 100 s; one replica live from 100 s, another whose Run arrives at 100.5 s: 0.5 s with one,
        // 9.5 s with two.
        let mut c = Coverage::default();
        c.span(100.0, 110.0, &[100.0, 100.5], 0.0, 2);
        assert_eq!((c.exposed, c.held, c.replicas), (10.0, 10.0, 0.5 + 2.0 * 9.5));
        // Before the first Run arrives the job has no live replica.
        let mut c = Coverage::default();
        c.span(100.0, 110.0, &[100.1], 0.0, 2);
        assert!((c.held - 9.9).abs() < 1e-9 && c.exposed == 10.0, "{c:?}");
    }
}
