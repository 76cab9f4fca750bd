//! A node of a public computing utility (Asaduzzaman & Maheswaran): a virtual resource that runs one job at a time
//! for its utility manager. A dedicated node sits in the utility's cluster, is always there and its progress reports
//! are the job's checkpoints. A public node is someone else's machine lent while idle: its owner takes it back and
//! leaves it idle again after exponential times (the two-state AV/NA Markov model), and the replica it runs is lost,
//! silently, when that happens (a `Lost` goes to the manager's measurement of replica availability, never to its
//! scheduler); it reports progress as its life pulse. Each time its owner takes it back it also leaves the pool of
//! free nodes the manager queries (`Withdrawn`): the paper's manager queries for *free* public resources.

pub mod kind;

use rand::RngExt;
use rand_distr::{Distribution, Exp};

use crate::protocol::{JobId, Msg, Run, TimerMsg, UtilityMsg};
use crate::report::{Capacity, Holds, Report, Series};
use crate::sim::{Agent, AgentId, Ctx, Envelope, GridMarket, SimTime, TimerId};

/// How long a public node's owner leaves it idle and keeps it, on average (exponential times).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Availability {
    /// Mean of an available (AV) period \[s\].
    pub up: f64,
    /// Mean of a non-available (NA) period \[s\].
    pub down: f64,
}

impl Availability {
    /// The long-run share of time the node is available, P_av.
    pub fn share(self) -> f64 {
        self.up / (self.up + self.down)
    }
}

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NodeConfig {
    /// Its utility manager.
    pub utility: AgentId,
    /// Its speed relative to a dedicated node.
    pub speed: f64,
    /// Its access link [bit/s].
    pub bandwidth: f64,
    /// Its latency to the cluster \[s\].
    pub latency: f64,
    /// `None` for a dedicated node; a public node's owner's habits otherwise.
    pub availability: Option<Availability>,
}

/// The replica a node is running.
#[derive(Clone, Copy, Debug)]
struct Replica {
    job: JobId,
    /// Work done when it started here [s on a dedicated node].
    done: f64,
    since: SimTime,
    end: TimerId,
    report: TimerId,
    every: f64,
}

/// A dedicated or public node.
#[derive(Debug)]
pub struct Node {
    config: NodeConfig,
    available: bool,
    /// Announcements made so far.
    session: u32,
    running: Option<Replica>,
    /// 1 while it runs a replica, 0 otherwise: its capacity in use.
    busy: Series,
    /// Its manager asked it to run a job while it ran another (the replica it dropped), with the time.
    violations: Vec<(f64, String)>,
    /// Replicas lost when the owner took the machine back, and the work they had done here.
    lost: u64,
    lost_work: f64,
}

impl Node {
    /// A node as configured; a public one starts available with probability P_av.
    pub fn new(config: NodeConfig) -> Node {
        Node {
            config,
            available: true,
            session: 0,
            running: None,
            busy: Series::default(),
            violations: Vec::new(),
            lost: 0,
            lost_work: 0.0,
        }
    }

    fn done_now(&self, r: &Replica, now: SimTime) -> f64 {
        r.done + self.config.speed * (now - r.since)
    }

    fn announce(&mut self, ctx: &mut Ctx<'_>) {
        let c = self.config;
        let dedicated = c.availability.is_none();
        let session = self.session;
        self.session += 1;
        ctx.send(c.utility, UtilityMsg::Available { dedicated, bandwidth: c.bandwidth, latency: c.latency, session });
    }

    /// The next change of availability, an exponential time from now.
    fn flip_later(&mut self, a: Availability, ctx: &mut Ctx<'_>) {
        let mean = if self.available { a.up } else { a.down };
        let dt = Exp::new(1.0 / mean).map_or(mean, |e| e.sample(ctx.rng()));
        ctx.wake_in(dt, TimerMsg::Availability);
    }

    fn stop(&mut self, ctx: &mut Ctx<'_>) -> Option<Replica> {
        let r = self.running.take()?;
        self.busy.set(ctx.now(), 0.0);
        ctx.cancel(r.end);
        ctx.cancel(r.report);
        Some(r)
    }

    /// Tells the manager's measurement of replica availability (not its scheduler) that `job` is not running here.
    fn lost_to_measurement(&self, job: JobId, ctx: &mut Ctx<'_>) {
        if self.config.availability.is_some() {
            ctx.send(self.config.utility, UtilityMsg::Lost { job });
        }
    }

    fn run(&mut self, run: &Run, ctx: &mut Ctx<'_>) {
        let Run { job, work, done, report: every, session } = *run;
        // The owner has the machine, or took it back and gave it again since: the state arrived at nobody.
        if !self.available || session + 1 != self.session {
            self.lost_to_measurement(job, ctx);
            return;
        }
        // One job at a time: a second is its manager over-subscribing it, which fails the run.
        if let Some(r) = self.stop(ctx) {
            let what = format!("asked to run job {job} while running job {}, which it dropped", r.job);
            self.violations.push((ctx.now().secs(), what));
        }
        let end = ctx.wake_in(((work - done) / self.config.speed).max(0.0), TimerMsg::JobEnd { job });
        let report = ctx.wake_in(every, TimerMsg::Report);
        self.running = Some(Replica { job, done, since: ctx.now(), end, report, every });
        self.busy.set(ctx.now(), 1.0);
    }
}

impl Agent<GridMarket> for Node {
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        if let Some(a) = self.config.availability {
            self.available = ctx.rng().random_bool(a.share().clamp(0.0, 1.0));
            self.flip_later(a, ctx);
        }
        if self.available {
            self.announce(ctx);
        }
    }

    fn handle(&mut self, env: &Envelope, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        match &env.msg {
            Msg::Utility(UtilityMsg::Run(run)) => self.run(run, ctx),
            Msg::Utility(UtilityMsg::Stop { job }) => {
                if self.running.is_some_and(|r| r.job == *job) {
                    self.stop(ctx);
                }
            }
            Msg::Utility(UtilityMsg::Freeze { job }) => {
                if let Some(r) = self.running.filter(|r| r.job == *job) {
                    let done = self.done_now(&r, now);
                    self.stop(ctx);
                    ctx.send(self.config.utility, UtilityMsg::Frozen { job: *job, done });
                }
            }
            Msg::Timer(TimerMsg::JobEnd { job }) => {
                if self.running.is_some_and(|r| r.job == *job) {
                    self.running = None;
                    self.busy.set(now, 0.0);
                    ctx.send(self.config.utility, UtilityMsg::Done { job: *job });
                }
            }
            Msg::Timer(TimerMsg::Report) => {
                if let Some(r) = self.running.as_mut() {
                    r.report = ctx.wake_in(r.every, TimerMsg::Report);
                    let r = *r;
                    let done = self.done_now(&r, now);
                    ctx.send(self.config.utility, UtilityMsg::Progress { job: r.job, done });
                }
            }
            Msg::Timer(TimerMsg::Availability) => {
                let Some(a) = self.config.availability else { return };
                self.available = !self.available;
                if self.available {
                    self.announce(ctx);
                } else {
                    if let Some(r) = self.stop(ctx) {
                        self.lost += 1;
                        self.lost_work += self.config.speed * (now - r.since);
                        self.lost_to_measurement(r.job, ctx);
                    }
                    ctx.send(self.config.utility, UtilityMsg::Withdrawn);
                }
                self.flip_later(a, ctx);
            }
            other => crate::sim::unhandled(ctx, other.kind()),
        }
    }

    fn report(&self, _now: SimTime, out: &mut Report) {
        if self.config.availability.is_some() {
            out.metrics.extend([("replicas_lost", self.lost as f64), ("work_lost", self.lost_work)]);
        }
        out.violations.extend(self.violations.iter().cloned());
        out.series.push(("busy", self.busy.clone()));
        out.capacity = Some(Capacity { units: 1.0, in_use: "busy", holds: Holds::Other });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testbed::{TestBed, expect};

    fn node(bed: &mut TestBed, availability: Option<Availability>) {
        let utility = bed.probe("rm");
        let config = NodeConfig { utility, speed: 2.0, bandwidth: 1e6, latency: 0.1, availability };
        bed.agent("n", kind::KIND, Node::new(config));
    }

    fn run(job: u64, work: f64, done: f64) -> Msg {
        Msg::Utility(UtilityMsg::Run(Box::new(Run { job, work, done, report: 10.0, session: 0 })))
    }

    fn to_rm(kind: &str) -> crate::testbed::Expect {
        expect(kind).from("n").to("rm")
    }

    #[test]
    fn a_dedicated_node_runs_reports_and_finishes() {
        let mut bed = TestBed::new(1);
        node(&mut bed, None);
        bed.inject(0.0, "rm", "n", run(7, 100.0, 20.0));
        bed.run_to_quiescence().unwrap();
        // 80 s of work at speed 2: reports at 10, 20 and 30 s, done at 40 s.
        let progress = |t: f64| {
            to_rm("utility.progress").at(t).msg(Msg::Utility(UtilityMsg::Progress { job: 7, done: 20.0 + 2.0 * t }))
        };
        bed.assert_in_order(&[
            to_rm("utility.available").at(0.0),
            progress(10.0),
            progress(20.0),
            progress(30.0),
            to_rm("utility.done").at(40.0),
        ]);
    }

    #[test]
    fn a_second_job_while_one_runs_is_over_subscription_and_breaks_the_run() {
        let mut bed = TestBed::new(1);
        node(&mut bed, None);
        bed.inject(0.0, "rm", "n", run(7, 100.0, 0.0));
        bed.inject(15.0, "rm", "n", run(8, 10.0, 0.0));
        bed.run_to_quiescence().unwrap();
        // The second replaces the first, which never finishes; the run's invariant sees the breach.
        bed.assert_in_order(&[to_rm("utility.done").at(20.0).msg(Msg::Utility(UtilityMsg::Done { job: 8 }))]);
        bed.assert_none(&to_rm("utility.done").msg(Msg::Utility(UtilityMsg::Done { job: 7 })));
        let id = bed.sim().directory().lookup("n").unwrap();
        let report = bed.sim().report(id).unwrap();
        assert_eq!(report.violations, [(15.0, "asked to run job 8 while running job 7, which it dropped".to_string())]);
        assert_eq!(report.capacity, Some(Capacity { units: 1.0, in_use: "busy", holds: Holds::Other }));
        let busy = &report.series.iter().find(|(k, _)| *k == "busy").unwrap().1;
        assert_eq!(busy.points(), &[(0.0, 1.0), (15.0, 1.0), (20.0, 0.0)], "one job at a time, the second from 15 s");
    }

    #[test]
    fn a_frozen_job_sends_its_state_and_stops() {
        let mut bed = TestBed::new(1);
        node(&mut bed, None);
        bed.inject(0.0, "rm", "n", run(7, 100.0, 0.0));
        bed.inject(15.0, "rm", "n", Msg::Utility(UtilityMsg::Freeze { job: 7 }));
        bed.run_to_quiescence().unwrap();
        bed.assert_in_order(&[
            to_rm("utility.progress").at(10.0),
            to_rm("utility.frozen").at(15.0).msg(Msg::Utility(UtilityMsg::Frozen { job: 7, done: 30.0 })),
        ]);
        bed.assert_none(&to_rm("utility.done"));
        bed.assert_none(&to_rm("utility.progress").at(20.0));
    }

    #[test]
    fn a_public_node_taken_back_leaves_the_free_pool() {
        // The owner takes the machine back at 5 s while it is idle, and at 20 s while it runs a replica; each time
        // the owner leaves it idle again a moment later.
        let mut bed = TestBed::new(1);
        node(&mut bed, Some(Availability { up: 1e15, down: 1e-3 }));
        bed.inject_env(5.0, "n", Msg::Timer(TimerMsg::Availability));
        bed.inject(
            10.0,
            "rm",
            "n",
            Msg::Utility(UtilityMsg::Run(Box::new(Run { job: 7, work: 100.0, done: 0.0, report: 10.0, session: 1 }))),
        );
        bed.inject_env(20.0, "n", Msg::Timer(TimerMsg::Availability));
        bed.run_until(30.0).unwrap();
        bed.assert_in_order(&[
            to_rm("utility.available").at(0.0),
            to_rm("utility.withdrawn").at(5.0),
            to_rm("utility.available"),
            to_rm("utility.progress").at(20.0),
            to_rm("utility.lost").at(20.0),
            to_rm("utility.withdrawn").at(20.0),
            to_rm("utility.available"),
        ]);
        bed.assert_none(&to_rm("utility.progress").at(30.0));
    }

    #[test]
    fn a_public_node_loses_its_replica_silently_when_its_owner_returns() {
        // Short periods, so that the owner comes and goes many times; the manager gives the node a long job each
        // time it announces itself, and once more for a session that has passed.
        let mut bed = TestBed::new(3);
        let mut jobs = 0;
        let rm = bed.scripted("rm", move |env, ctx| {
            if let Msg::Utility(UtilityMsg::Available { session, .. }) = env.msg {
                jobs += 1;
                let run = |session| Run { job: jobs, work: 1e6, done: 0.0, report: 10.0, session };
                ctx.send(env.from(), UtilityMsg::Run(Box::new(run(session))));
                if session > 0 {
                    ctx.send(env.from(), UtilityMsg::Run(Box::new(run(session - 1))));
                }
            }
        });
        let config = NodeConfig { utility: rm, speed: 2.0, bandwidth: 1e6, latency: 0.1, availability: None };
        let availability = Some(Availability { up: 50.0, down: 20.0 });
        let n = bed.agent("n", kind::KIND, Node::new(NodeConfig { availability, ..config }));
        bed.run_until(4_000.0).unwrap();
        let d = bed.deliveries();
        let announced = d.iter().filter(|d| d.to == "rm" && d.msg.kind() == "utility.available").count();
        assert!(announced > 10, "{announced} announcements");
        // Every report is of the job given for the current session: the stale runs were dropped.
        let mut current = 0;
        for d in d.iter().filter(|d| d.to == "rm") {
            match d.msg {
                Msg::Utility(UtilityMsg::Available { .. }) => current += 1,
                Msg::Utility(UtilityMsg::Progress { job, .. }) => assert_eq!(job, current, "at {}", d.at),
                _ => {}
            }
        }
        bed.assert_none(&to_rm("utility.done"));
        let lost = bed.sim().inspect(n, |node: &Node| node.lost).unwrap();
        assert!(lost > 5, "{lost} replicas lost");
        // The measurement hears of each replica lost and of each stale run dropped (one per later announcement).
        let told = d.iter().filter(|d| d.to == "rm" && d.msg.kind() == "utility.lost").count();
        assert_eq!(told as u64, lost + announced as u64 - 1);
    }
}
