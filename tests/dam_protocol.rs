//! Message-level tests of the double-auction-inspired meta-broker (Garg 2010 ch7) on the test bed: the collection of
//! queue reports, the asks and bids, the matching order, the notifications to providers and users, the pending
//! application valued again, and the refusals.

use agents::broker::{Submission, UserBroker, UserJob};
use agents::ledger::Account;
use agents::metabroker::dam::agent::AuctionMetaBroker;
use agents::metabroker::dam::{AuctionPolicy, DamParams};
use agents::protocol::{JobMsg, JobSpec, MarketMsg, Msg, QueueMatch, QueueState};
use agents::provider::overhead::OverheadModel;
use agents::provider::preemption::PreemptionPolicy;
use agents::provider::scheduler::{Partitioning, SchedulerPolicy};
use agents::provider::{CancelledLeases, Provider, ProviderConfig};
use agents::report::JobOutcome;
use agents::sim::{AgentId, Runtime, SimTime};
use agents::testbed::{TestBed, expect};

fn t(secs: f64) -> SimTime {
    SimTime::new(secs).unwrap()
}

/// A site of 12 PEs in three queues of 2, 4 and 6 PEs (Garg 2010 §7.4.1's ratio 1:2:3), multi-partition EASY.
fn site(speed: f64, price: f64) -> Provider {
    Provider::new(ProviderConfig {
        pes: 12,
        speed,
        price,
        scheduler: SchedulerPolicy::MultiPartitionEasy,
        partitioning: Partitioning::default(),
        preemption: PreemptionPolicy::Nop,
        overhead: OverheadModel::default(),
        vm_memory_mb: 1024.0,
        cancelled: CancelledLeases::Restart,
        preemptive_priority: false,
    })
}

/// A user broker submitting one application at t = 10 through the meta-broker.
fn user(tb: &mut TestBed, n: u64, mb: AgentId, (pes, runtime, deadline, budget): (u32, f64, f64, f64)) -> AgentId {
    let spec =
        JobSpec { deadline: Some(t(deadline)), budget: Some(budget), ..JobSpec::new(n, AgentId::ENV, pes, runtime) };
    let broker = UserBroker::new(vec![UserJob { submit: t(10.0), spec }], Submission::MetaBroker { to: mb });
    tb.agent(&format!("u{n}"), "broker", broker)
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{a} != {b}");
}

/// The matches the meta-broker sent, in order: (provider, job, queue, start, end, bid, ask).
fn matches(tb: &TestBed) -> Vec<(String, QueueMatch)> {
    tb.deliveries()
        .into_iter()
        .filter_map(|d| match d.msg {
            Msg::Market(MarketMsg::Matched(m)) => Some((d.to, *m)),
            _ => None,
        })
        .collect()
}

/// Site A (speed 1, 2 G$ per PE-second) and site B (speed 2, 4 G$) report their queues at the end of the interval,
/// t = 50. A runs a 5-PE job of 100 s since t = 0 in its 6-PE queue: 1 PE free, load 5/6, 5·50/6 s of work per PE
/// left. Four applications arrived at 10 (PEs × runtime, deadline, budget): 1: 2 × 100, 400, 1000; 2: 4 × 200,
/// 300, 1000; 3: 6 × 100, 1000, 500; 4: 6 × 300, 2010, 2000; a fifth, 13 PEs, fits no queue.
///
/// Valuation at t = 50: Demand 18 PEs, Supply 19 free PEs; v_max = 2000, d_max = 2010, every application equally
/// old. Bids (7.2): b1 = 0.5 · 1960/350 · 18/19, b2 = 0.5 · 1960/250 · 18/19, b3 = 0.25 · 1960/950 · 18/19, b4 =
/// 18/19. Asks (7.1): every idle queue 0; A's 6-PE queue (41.67 s) · (2/4) · 1 · 18/19 = 19.74.
///
/// Matching, bids highest first (2, 1, 4, 3) against asks lowest first (A0, A1, B0, B1, B2, A2): 2 (4 PEs) skips A0
/// (2 PEs) for A1, done at 250 < 300; 1 takes A0; 4 skips B0 and B1 for B2 (speed 2: 150 s); 3 finds no queue with
/// 6 PEs free and stays pending. At t = 100 A's job has ended: 3 is valued again, alone: Demand 6 over Supply 12
/// (A2's 6, B0's 2, B1's 4): b3 = 0.5, higher than at 50, and A2, idle (ask 0) and first of the idle queues, takes it.
#[test]
fn test_dam_interval_values_matches_notifies_and_revalues_the_pending_application() {
    for rt in [Runtime::Inline, Runtime::Actix { threads: 1 }] {
        let mut tb = TestBed::new(1);
        tb.runtime(rt);
        let a = tb.agent("A", "provider", site(1.0, 2.0));
        let b = tb.agent("B", "provider", site(2.0, 4.0));
        let mb = AuctionMetaBroker::new(AuctionPolicy::Dam, DamParams::default(), 50.0, [a, b]);
        let mb = tb.agent("mb", "metabroker", mb);
        let local = tb.probe("local");
        let preload = JobSpec::new(100, local, 5, 100.0);
        tb.inject(0.0, "local", "A", Msg::Job(JobMsg::Submit(Box::new(preload))));
        let apps = [
            (2, 100.0, 400.0, 1000.0),
            (4, 200.0, 300.0, 1000.0),
            (6, 100.0, 1000.0, 500.0),
            (6, 300.0, 2010.0, 2000.0),
            (13, 10.0, 5000.0, 1000.0),
        ];
        let users: Vec<AgentId> = apps.iter().zip(1..).map(|(&app, n)| user(&mut tb, n, mb, app)).collect();
        tb.run_to_quiescence().unwrap();

        tb.assert_in_order(&[
            expect("market.resource_request").from("u1").to("mb").at(10.0),
            expect("timer.round").to("mb").at(50.0),
            expect("market.queue_query").from("mb").to("A").at(50.0),
            expect("market.queue_query").from("mb").to("B").at(50.0),
            expect("market.queue_info").from("A").to("mb").at(50.0),
            expect("market.queue_info").from("B").to("mb").at(50.0),
            expect("market.request_dropped").from("mb").to("u5").at(50.0),
            expect("market.matched").from("mb").to("A").at(50.0),
            expect("market.matched").from("mb").to("A").at(50.0),
            expect("market.matched").from("mb").to("B").at(50.0),
            expect("lease.reserved").from("A").to("mb").at(50.0),
            expect("market.ticket").from("mb").to("u2").at(50.0),
            expect("market.ticket").from("mb").to("u1").at(50.0),
            expect("market.ticket").from("mb").to("u4").at(50.0),
            expect("job.started").from("A").to("u2").at(50.0),
            expect("timer.round").to("mb").at(100.0),
            expect("market.matched").from("mb").to("A").at(100.0),
            expect("market.ticket").from("mb").to("u3").at(100.0),
            expect("job.started").from("A").to("u3").at(100.0),
            expect("job.completed").from("A").to("u3").at(200.0),
        ]);

        // A's report at t = 50: its 6-PE queue is the loaded one.
        let report = tb
            .deliveries()
            .into_iter()
            .find_map(|d| match d.msg {
                Msg::Market(MarketMsg::QueueInfo(r)) if d.from == "A" && d.at == 50.0 => Some(*r),
                _ => None,
            })
            .unwrap();
        let q2: &QueueState = &report.queues[2];
        assert_eq!((report.speed, report.queues.len(), q2.pes, q2.free), (1.0, 3, 6, 1));
        close(q2.load, 5.0 / 6.0);
        close(q2.wait, 5.0 * 50.0 / 6.0);
        assert_eq!(q2.valuation, 2.0);

        let m = matches(&tb);
        let summary: Vec<(&str, u64, u32, f64, f64)> =
            m.iter().map(|(to, q)| (to.as_str(), q.job, q.queue, q.start.secs(), q.end.secs())).collect();
        assert_eq!(
            summary,
            [("A", 2, 1, 50.0, 250.0), ("A", 1, 0, 50.0, 150.0), ("B", 4, 2, 50.0, 200.0), ("A", 3, 2, 100.0, 200.0)]
        );
        let ratio = 18.0 / 19.0;
        close(m[0].1.bid.unwrap(), 0.5 * 1960.0 / 250.0 * ratio);
        close(m[1].1.bid.unwrap(), 0.5 * 1960.0 / 350.0 * ratio);
        close(m[2].1.bid.unwrap(), ratio);
        assert_eq!((m[0].1.ask, m[1].1.ask, m[2].1.ask), (Some(0.0), Some(0.0), Some(0.0)));
        // The pending application bid 0.25 · 1960/950 · 18/19 = 0.4886 at 50 (unmatched), 0.5 at 100.
        let before = 0.25 * 1960.0 / 950.0 * ratio;
        close(m[3].1.bid.unwrap(), 0.5);
        assert!(m[3].1.bid.unwrap() > before);
        assert_eq!(m.iter().map(|(_, q)| q.price).collect::<Vec<_>>(), [2.0, 2.0, 4.0, 2.0]);

        // Users: four completed by their deadlines, billed the matched price; the fifth refused with the reason.
        for (u, (pes, runtime, _, _)) in users.iter().zip(apps).take(4) {
            let record = &tb.sim().report(*u).unwrap().jobs[0];
            assert_eq!(record.outcome, JobOutcome::Completed);
            assert!(record.end.unwrap() <= record.deadline.unwrap());
            let price = if record.id == 4 { 4.0 } else { 2.0 };
            let speed = if record.id == 4 { 2.0 } else { 1.0 };
            close(record.cost, price * f64::from(pes) * runtime / speed);
        }
        let refused = &tb.sim().report(users[4]).unwrap().jobs[0];
        assert_eq!(refused.outcome, JobOutcome::Dropped);
        let reason = refused.reason.as_deref().unwrap_or_default();
        assert!(reason.contains("needs 13 PEs, more than any queue has (the largest has 6)"), "{reason}");
        // What user 3 paid A is in A's book.
        let ledger = tb.sim().report(a).unwrap().transfers;
        let paid: f64 = ledger.iter().filter(|t| t.payer == Account::Agent(users[2])).map(|t| t.amount).sum();
        close(paid, 2.0 * 6.0 * 100.0);
        let report = tb.sim().report(mb).unwrap();
        let get = |k: &str| report.metric(k);
        assert_eq!(
            (get("tickets"), get("dropped"), get("too_wide"), get("pending")),
            (Some(4.0), Some(1.0), Some(1.0), Some(0.0))
        );
    }
}

/// A deadline that the interval's end already reaches (d_i = t, the 0 of 7.2's d_i − t) is refused with the reason,
/// never valued; zero and negative budgets are matched like any other, last.
#[test]
fn test_dam_refuses_late_applications_and_matches_worthless_ones() {
    let mut tb = TestBed::new(1);
    let a = tb.agent("A", "provider", site(1.0, 2.0));
    let mb = tb.agent("mb", "metabroker", AuctionMetaBroker::new(AuctionPolicy::Dam, DamParams::default(), 50.0, [a]));
    let late = user(&mut tb, 1, mb, (2, 10.0, 50.0, 1000.0));
    let zero = user(&mut tb, 2, mb, (2, 10.0, 1000.0, 0.0));
    let negative = user(&mut tb, 3, mb, (2, 10.0, 1000.0, -5.0));
    let rich = user(&mut tb, 4, mb, (2, 10.0, 1000.0, 1000.0));
    tb.run_to_quiescence().unwrap();
    let record = |u: AgentId, tb: &mut TestBed| tb.sim().report(u).unwrap().jobs[0].clone();
    let late = record(late, &mut tb);
    assert_eq!(late.outcome, JobOutcome::Dropped);
    let reason = late.reason.unwrap_or_default();
    assert!(reason.contains("cannot meet its deadline 50 any more"), "{reason}");
    for u in [zero, negative, rich] {
        assert_eq!(record(u, &mut tb).outcome, JobOutcome::Completed);
    }
    // The rich application bid first; the worthless ones bid 0.
    let m = matches(&tb);
    assert_eq!(m.iter().map(|(_, q)| q.job).collect::<Vec<_>>(), [4, 2, 3]);
    assert!(m.iter().all(|(_, q)| q.bid.is_some_and(f64::is_finite)));
    assert_eq!((m[1].1.bid, m[2].1.bid), (Some(0.0), Some(0.0)));
}
