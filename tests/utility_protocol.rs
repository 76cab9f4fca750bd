//! Message-level tests of a public computing utility (Asaduzzaman & Maheswaran): jobs go to the dedicated node or as
//! replicas to public nodes after their state crosses the links; a public node whose owner takes it back goes silent,
//! the manager notices it two epochs later and replenishes the replica; under dynamic priorities a job that waited
//! on public nodes is live-migrated into the dedicated node and the job it displaces out, each frozen only for the
//! residual's copy; replicas go only to public nodes their owners have not taken back; a job on two replicas loses
//! one, has it replenished, migrates into the dedicated node in two phases and is completed and credited once.

use agents::node::{Availability, Node, NodeConfig};
use agents::protocol::{JobMsg, JobSpec, Msg, Run, TimerMsg, UtilityMsg};
use agents::sim::AgentId;
use agents::testbed::{TestBed, expect};
use agents::utility::sla::SlaTerms;
use agents::utility::{Utility, UtilityConfig, UtilityPolicy};

const EPOCH: f64 = 10.0;

/// A utility "rm" (epoch 10 s, footprint 1 MB, 100 Mb/s links) with one dedicated node "d" and `public` public
/// nodes "p0", "p1"… at half a dedicated node's speed on 1 Mb/s links with 0.1 s latency, whose owners never
/// come back on their own (the tests take them back by hand).
fn bed(policy: UtilityPolicy, replicas: u32, public: usize) -> (TestBed, AgentId, AgentId) {
    let mut tb = TestBed::new(1);
    let rm = tb.agent(
        "rm",
        "utility",
        Utility::new(UtilityConfig {
            policy,
            epoch: EPOCH,
            replicas,
            uplink: 100e6,
            downlink: 100e6,
            footprint: 1e6,
            migration_factor: 1.0,
            residual: 0.1,
            timeout: 2.0 * EPOCH,
            hold_down: EPOCH,
            sla: SlaTerms { ratio: 1.0, window: 1e4, max_elongation: 100.0 },
            max_load: (1.0, 1.0),
            warm_up: 0.0,
            dedicated_only: false,
            seed: 1,
        }),
    );
    let node = |speed, availability| NodeConfig { utility: rm, speed, bandwidth: 1e6, latency: 0.1, availability };
    tb.agent("d", "node", Node::new(node(1.0, None)));
    let always = Some(Availability { up: 1e15, down: 1e-3 });
    for i in 0..public {
        tb.agent(&format!("p{i}"), "node", Node::new(node(0.5, always)));
    }
    let user = tb.probe("user");
    (tb, user, rm)
}

fn submit(tb: &mut TestBed, user: AgentId, id: u64, at: f64, runtime: f64) {
    let job = JobSpec::new(id, user, 1, runtime);
    tb.inject(at, "user", "rm", Msg::Job(JobMsg::Submit(Box::new(job))));
}

/// The public nodes that were sent a `Run` of `job`, with the time.
fn runs(tb: &TestBed, job: u64) -> Vec<(String, f64)> {
    tb.deliveries()
        .into_iter()
        .filter(|d| matches!(&d.msg, Msg::Utility(UtilityMsg::Run(r)) if r.job == job))
        .map(|d| (d.to, d.at))
        .collect()
}

#[test]
fn test_a_node_taken_back_loses_its_replica_which_is_replenished() {
    let (mut tb, user, rm) = bed(UtilityPolicy::Greedy, 2, 3);
    submit(&mut tb, user, 1, 1.0, 100.0);
    submit(&mut tb, user, 2, 2.0, 100.0);
    tb.run_until(20.0).unwrap();
    // Job 1 takes the dedicated node at the first epoch; job 2 goes as two replicas, whose 1 MB crosses each node's
    // 1 Mb/s link in 8 s, plus 0.1 s of latency.
    assert_eq!(runs(&tb, 1), vec![("d".to_string(), 10.0)]);
    let replicas = runs(&tb, 2);
    assert_eq!(replicas.len(), 2);
    assert!(replicas.iter().all(|(node, at)| node.starts_with('p') && (at - 18.1).abs() < 1e-9), "{replicas:?}");
    // The owner of the first replica's node takes it back at 25 s and leaves it idle again moments later: the node
    // announces itself empty, so the replica is gone, and the epoch at 30 s replenishes it from the checkpoint (none:
    // the job never ran on a dedicated node).
    let (lost, survivor) = (replicas[0].0.clone(), replicas[1].0.clone());
    tb.inject_env(25.0, &lost, Msg::Timer(TimerMsg::Availability));
    tb.run_until(300.0).unwrap();
    let again = runs(&tb, 2);
    assert_eq!(again.len(), 3);
    let (third, at) = again[2].clone();
    assert!((at - 38.1).abs() < 1e-9 && third != survivor, "{again:?}");
    tb.assert_in_order(&[
        expect("utility.available").from(&lost).to("rm"),
        expect("utility.progress").from(&survivor).to("rm").at(28.1),
        expect("job.completed").from("rm").to("user").at(110.0),
        // The surviving replica finishes first: 100 s of work at half speed from 18.1 s; the third one is stopped.
        expect("utility.done").from(&survivor).at(218.1),
        expect("job.completed").from("rm").to("user").at(218.1),
        expect("utility.stop").from("rm").to(&third).at(218.2), // over the node's latency
    ]);
    let report = tb.sim().report(rm).unwrap();
    let get = |k: &str| report.metric(k).unwrap();
    assert_eq!(get("completed"), 2.0);
    assert_eq!(get("replica_failures"), 1.0);
    assert_eq!(get("restarts"), 0.0, "one replica survived");
    assert_eq!(get("migrations"), 0.0, "greedy never migrates");
}

#[test]
fn test_a_silent_replica_is_noticed_two_epochs_later_and_its_job_restarts() {
    // No real public node: "ghost" and "late" are probes that announce themselves; the ghost never reports.
    let (mut tb, user, rm) = bed(UtilityPolicy::Greedy, 1, 0);
    tb.probe("ghost");
    tb.probe("late");
    let available =
        || Msg::Utility(UtilityMsg::Available { dedicated: false, bandwidth: 1e6, latency: 0.1, session: 0 });
    tb.inject(0.0, "ghost", "rm", available());
    tb.inject(35.0, "late", "rm", available());
    submit(&mut tb, user, 1, 1.0, 100.0);
    submit(&mut tb, user, 2, 2.0, 100.0);
    // (Until 75 s: the late node is a probe that never reports either, found gone at 80 s.)
    tb.run_until(75.0).unwrap();
    // The ghost's last sign of life is the run at 18.1 s; the epoch at 40 s is the first more than two epochs (20 s)
    // later: every replica failed, so job 2 goes back to the head of the queue and leaves it at the next epoch, for
    // the node that announced itself at 35 s.
    tb.assert_in_order(&[
        expect("utility.run").from("rm").to("ghost").at(18.1),
        expect("utility.run").from("rm").to("late").at(58.1).msg(Msg::Utility(UtilityMsg::Run(Box::new(Run {
            job: 2,
            work: 100.0,
            done: 0.0,
            report: EPOCH,
            session: 0,
        })))),
    ]);
    let report = tb.sim().report(rm).unwrap();
    let get = |k: &str| report.metric(k).unwrap();
    assert_eq!((get("replica_failures"), get("restarts")), (1.0, 1.0));
}

#[test]
fn test_dynamic_priorities_swap_jobs_by_live_migration() {
    let (mut tb, user, _) = bed(UtilityPolicy::Dynamic, 1, 2);
    // A long job takes the dedicated node; a short one, on a public node at half speed, falls behind its nominal time
    // and outranks it at the epoch of 20 s: both bulks (1 MB over 1 Mb/s) end at 28 s, both jobs freeze (the public
    // one when the order arrives, 0.1 s later), and the residuals (0.1 MB) take 0.8 s more.
    submit(&mut tb, user, 1, 1.0, 1000.0);
    submit(&mut tb, user, 2, 2.0, 100.0);
    tb.run_until(200.0).unwrap();
    let public = runs(&tb, 2)[0].0.clone();
    let other = if public == "p0" { "p1" } else { "p0" };
    tb.assert_in_order(&[
        expect("utility.run").from("rm").to("d").at(10.0),
        expect("utility.run").from("rm").to(&public).at(18.1),
        expect("utility.freeze").from("rm").to("d").at(28.0),
        expect("utility.frozen")
            .from("d")
            .to("rm")
            .at(28.0)
            .msg(Msg::Utility(UtilityMsg::Frozen { job: 1, done: 18.0 })),
    ]);
    tb.assert_in_order(&[
        expect("utility.freeze").from("rm").to(&public).at(28.1),
        expect("utility.frozen").from(&public).at(28.1),
        expect("utility.run").from("rm").to("d").at(28.9),
        // The 95 s of work left (5 done at half speed from 18.1 to 28.1 s) at full speed.
        expect("job.completed").from("rm").to("user").at(28.9 + 95.0),
    ]);
    // The displaced job resumes from where it froze on the other public node, after the residual and the latency.
    let resumed = tb
        .deliveries()
        .into_iter()
        .find(|d| d.to == other && matches!(&d.msg, Msg::Utility(UtilityMsg::Run(r)) if r.job == 1 && r.done == 18.0));
    let at = resumed.map(|d| d.at).unwrap();
    assert!((at - 28.9).abs() < 1e-9, "{at}");
}

#[test]
fn test_replicas_go_only_to_public_nodes_whose_owners_have_not_taken_them_back() {
    let (mut tb, user, rm) = bed(UtilityPolicy::Greedy, 2, 0);
    // Three public nodes whose owners, once they take them back (by hand here), keep them for good.
    let gone_for_good = Some(Availability { up: 1e15, down: 1e9 });
    for name in ["p0", "p1", "p2"] {
        let config = NodeConfig { utility: rm, speed: 0.5, bandwidth: 1e6, latency: 0.1, availability: gone_for_good };
        tb.agent(name, "node", Node::new(config));
    }
    // p0 is taken back while free; job 1 takes the dedicated node and job 2 the two free public nodes left.
    tb.inject_env(0.5, "p0", Msg::Timer(TimerMsg::Availability));
    submit(&mut tb, user, 1, 1.0, 100.0);
    submit(&mut tb, user, 2, 2.0, 10.0);
    // p1 is taken back while it runs job 2; p2 finishes job 2 at 38.1 s (10 s of work at half speed from 18.1 s),
    // before p1's silence is noticed, so p1's replica is stopped, not found failed. Job 3 then finds one free node.
    tb.inject_env(25.0, "p1", Msg::Timer(TimerMsg::Availability));
    submit(&mut tb, user, 3, 26.0, 10.0);
    tb.run_until(60.0).unwrap();
    let mut two = runs(&tb, 2);
    two.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(two, vec![("p1".to_string(), 18.1), ("p2".to_string(), 18.1)]);
    tb.assert_in_order(&[
        expect("utility.withdrawn").from("p0").to("rm").at(0.5),
        expect("utility.withdrawn").from("p1").to("rm").at(25.0),
        expect("utility.done").from("p2").to("rm").at(38.1),
        expect("utility.stop").from("rm").to("p1").at(38.2),
    ]);
    // At the epoch of 40 s the query finds only p2: one replica, not two on nodes whose owners have them.
    assert_eq!(runs(&tb, 3), vec![("p2".to_string(), 48.1)]);
    assert!(runs(&tb, 1).iter().all(|(node, _)| node == "d"));
    let report = tb.sim().report(rm).unwrap();
    let get = |k: &str| report.metric(k).unwrap();
    assert_eq!((get("replica_failures"), get("restarts")), (0.0, 0.0));
}

#[test]
fn test_a_replicated_job_loses_a_replica_is_replenished_and_migrates_in_to_complete_once() {
    let (mut tb, user, rm) = bed(UtilityPolicy::Dynamic, 2, 3);
    // Job 1 (95 s) takes the dedicated node at 10 s; job 2 (1000 s) goes as two replicas at 18.1 s and, at half
    // speed, does not outrank job 1 (elongation 0.09) before the dedicated node frees at 105 s.
    submit(&mut tb, user, 1, 1.0, 95.0);
    submit(&mut tb, user, 2, 2.0, 1000.0);
    tb.run_until(20.0).unwrap();
    let replicas = runs(&tb, 2);
    assert_eq!(replicas.len(), 2);
    assert!(replicas.iter().all(|(node, at)| node.starts_with('p') && (at - 18.1).abs() < 1e-9), "{replicas:?}");
    // The owner of the first replica's node takes it back at 25 s and returns it idle at once: the replica is gone
    // and the epoch at 30 s replenishes it (the job never ran on the dedicated node: from the start).
    let (lost, survivor) = (replicas[0].0.clone(), replicas[1].0.clone());
    tb.inject_env(25.0, &lost, Msg::Timer(TimerMsg::Availability));
    tb.run_until(3000.0).unwrap();
    let all = runs(&tb, 2);
    assert_eq!(all.len(), 4, "two replicas, the replenished one, and the run on the dedicated node: {all:?}");
    assert!((all[2].1 - 38.1).abs() < 1e-9 && all[2].0.starts_with('p'), "{all:?}");
    let replenished = all[2].0.clone();
    // Job 1 ends at 105 s; at the epoch of 110 s job 2 migrates in from its forerunner, the survivor (50 s of work
    // done against none on the replenished replica): the bulk (1 MB over 1 Mb/s) runs to 118 s while the job runs,
    // the replica freezes when the order arrives, the residual (0.1 MB) takes 0.8 s, the dedicated node resumes it
    // from 50 and the other replica is stopped. The 950 s left end at 1068.9 s.
    tb.assert_in_order(&[
        expect("utility.withdrawn").from(&lost).to("rm").at(25.0),
        expect("job.completed").from("rm").to("user").at(105.0),
        expect("utility.freeze").from("rm").to(&survivor).at(118.1),
        expect("utility.frozen")
            .from(&survivor)
            .to("rm")
            .at(118.1)
            .msg(Msg::Utility(UtilityMsg::Frozen { job: 2, done: 50.0 })),
        expect("utility.run").from("rm").to("d").at(118.9),
        expect("utility.stop").from("rm").to(&replenished).at(119.0),
        expect("utility.done").from("d").to("rm").at(1068.9),
        expect("job.completed").from("rm").to("user").at(1068.9),
    ]);
    let resumed = tb
        .deliveries()
        .into_iter()
        .find(|d| d.at > 100.0 && matches!(&d.msg, Msg::Utility(UtilityMsg::Run(r)) if r.job == 2 && r.done == 50.0));
    assert!(resumed.is_some(), "the dedicated node resumes from the frozen replica's progress");
    // Completed once, and the user's account credited once with the job's work.
    let completions = tb
        .deliveries()
        .into_iter()
        .filter(|d| d.to == "user" && matches!(&d.msg, Msg::Job(JobMsg::Completed { job: 2, .. })))
        .count();
    assert_eq!(completions, 1);
    let report = tb.sim().report(rm).unwrap();
    let get = |k: &str| report.metric(k).unwrap();
    assert_eq!((get("completed"), get("replica_failures"), get("restarts"), get("migrations")), (2.0, 1.0, 0.0, 1.0));
    assert!((get("goodput") * 3000.0 - 1095.0).abs() < 1e-6, "goodput {}", get("goodput"));
}
