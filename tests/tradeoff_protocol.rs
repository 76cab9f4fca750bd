//! Message-level tests of the time/cost trade-off meta-broker (Garg 2010 ch5) on the test bed: the slot queries at
//! the end of the interval, MinCTT's allocation order on the providers' free profiles, one reservation and one
//! ticket per application, the job run for its ETC and billed at the provider's price, the refusal of an application
//! wider than every site, and the bounds beside the run.

use agents::broker::{Submission, UserBroker, UserJob};
use agents::metabroker::tradeoff::etc::EtcModel;
use agents::metabroker::tradeoff::heuristics::Heuristic;
use agents::metabroker::tradeoff::{Delta, TradeoffMetaBroker, TradeoffParams};
use agents::protocol::{JobMsg, JobSpec, LeaseMsg, MarketMsg, Msg};
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

/// A 4-PE EASY-backfilling site.
fn site(speed: f64, price: f64) -> Provider {
    site_of(4, speed, price)
}

/// An EASY-backfilling site of `pes` PEs.
fn site_of(pes: u32, speed: f64, price: f64) -> Provider {
    Provider::new(ProviderConfig {
        pes,
        speed,
        price,
        scheduler: SchedulerPolicy::Easy,
        partitioning: Partitioning::default(),
        preemption: PreemptionPolicy::Nop,
        overhead: OverheadModel::default(),
        vm_memory_mb: 1024.0,
        cancelled: CancelledLeases::Restart,
        preemptive_priority: false,
    })
}

/// A user broker submitting one application at t = 10 through the meta-broker.
fn user(tb: &mut TestBed, n: u64, mb: AgentId, pes: u32, runtime: f64) -> AgentId {
    let spec = JobSpec::new(n, AgentId::ENV, pes, runtime);
    let broker = UserBroker::new(vec![UserJob { submit: t(10.0), spec }], Submission::MetaBroker { to: mb });
    tb.agent(&format!("u{n}"), "broker", broker)
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{a} != {b}");
}

/// Site A (speed 1, 1 G$ per PE-second) runs a local 4-PE job over [0, 100); site B (speed 2, 3 G$) is idle. Three
/// applications arrive at 10: 1 (4 PEs, 20 s on the reference PE), 2 (4 PEs, 40 s), 3 (8 PEs, wider than both).
/// ETC exact: 1 takes (20, 10) s on (A, B), 2 takes (40, 20). δ = 0.5.
///
/// At the round, t = 50: A is free from 100, B from 50. Costs c = price · 4 · ETC: 1 (80, 120), γ 100, β 15;
/// 2 (160, 240), γ 200, β 30. φ = 0.5 c/γ + 0.5 (finish − 10)/β:
/// 1 on A from 100: 0.4 + 0.5 · 110/15 = 4.067; on B from 50: 0.6 + 0.5 · 50/15 = 2.267 (best).
/// 2 on A from 100: 0.4 + 0.5 · 130/30 = 2.567; on B from 50: 0.6 + 0.5 · 60/30 = 1.6 (best).
/// MinCTT takes 2 (1.6) on B over [50, 70); 1 on B now starts at 70: 0.6 + 0.5 · 70/15 = 2.933 < A's 4.067, so
/// B over [70, 80). 3 is refused. Bounds: alone at arrival both go to B (φ 0.933 each): cost 120 + 240 = 360; the
/// latest lone finish 10 + 20 = 30 beats the work term 10 + (4 · 10 + 4 · 20) / 8 = 25: makespan bound 20, against
/// the makespan 80 − 10 = 70.
#[test]
fn test_min_ctt_round_reserves_tickets_and_bills_each_application_once() {
    for rt in [Runtime::Inline, Runtime::Actix { threads: 1 }] {
        let mut tb = TestBed::new(1);
        tb.runtime(rt);
        let a = tb.agent("A", "provider", site(1.0, 1.0));
        let b = tb.agent("B", "provider", site(2.0, 3.0));
        let params =
            TradeoffParams { delta: Delta::Fixed(0.5), etc: EtcModel::Exact, horizon: 1e6, data_transfer: None };
        let mb = tb.agent("mb", "metabroker", TradeoffMetaBroker::new(Heuristic::MinCtt, params, 50.0, [a, b]));
        let local = tb.probe("local");
        tb.inject(0.0, "local", "A", Msg::Job(JobMsg::Submit(Box::new(JobSpec::new(100, local, 4, 100.0)))));
        let users: Vec<AgentId> =
            [(4, 20.0), (4, 40.0), (8, 10.0)].iter().zip(1..).map(|(&(p, r), n)| user(&mut tb, n, mb, p, r)).collect();
        tb.run_to_quiescence().unwrap();

        tb.assert_in_order(&[
            expect("market.resource_request").from("u1").to("mb").at(10.0),
            expect("timer.round").to("mb").at(50.0),
            expect("market.slots_query").from("mb").to("A").at(50.0),
            expect("market.slots_query").from("mb").to("B").at(50.0),
            expect("market.resource_update").from("A").to("mb").at(50.0),
            expect("market.resource_update").from("B").to("mb").at(50.0),
            expect("lease.reserve").from("mb").to("B").at(50.0).msg(Msg::Lease(LeaseMsg::Reserve {
                request: 0,
                start: t(50.0),
                end: t(70.0),
                pes: 4,
            })),
            expect("lease.reserve").from("mb").to("B").at(50.0).msg(Msg::Lease(LeaseMsg::Reserve {
                request: 1,
                start: t(70.0),
                end: t(80.0),
                pes: 4,
            })),
            expect("job.rejected").from("mb").to("u3").at(50.0),
            expect("market.ticket").from("mb").to("u2").at(50.0),
            expect("market.ticket").from("mb").to("u1").at(50.0),
            expect("job.completed").from("B").to("u2").at(70.0),
            expect("job.completed").from("B").to("u1").at(80.0),
        ]);
        // One reservation and one ticket per application, none on A.
        let count = |kind: &str| tb.deliveries().iter().filter(|d| d.msg.kind() == kind).count();
        assert_eq!((count("lease.reserve"), count("market.ticket")), (2, 2));
        let tickets: Vec<(String, f64, Option<f64>)> = tb
            .deliveries()
            .into_iter()
            .filter_map(|d| match d.msg {
                Msg::Market(MarketMsg::Ticket(k)) => Some((d.to, k.cost, k.runtime)),
                _ => None,
            })
            .collect();
        // The runtime on the reference PE that lasts ETC on B: 20 · 2 and 10 · 2.
        assert_eq!(tickets, [("u2".into(), 240.0, Some(40.0)), ("u1".into(), 120.0, Some(20.0))]);

        for (u, cost) in users.iter().zip([120.0, 240.0]) {
            let record = &tb.sim().report(*u).unwrap().jobs[0];
            assert_eq!(record.outcome, JobOutcome::Completed);
            close(record.cost, cost);
        }
        let refused = &tb.sim().report(users[2]).unwrap().jobs[0];
        let reason = refused.reason.as_deref().unwrap_or_default();
        assert!(reason.contains("needs more CPUs than any site has (4)"), "{reason}");

        let report = tb.sim().report(mb).unwrap();
        let get = |k: &str| report.metric(k).unwrap();
        assert_eq!((get("tickets"), get("too_wide"), get("pending"), get("rolled_over")), (2.0, 1.0, 0.0, 0.0));
        close(get("spending"), 360.0);
        close(get("cost_bound"), 360.0);
        close(get("makespan"), 70.0);
        close(get("makespan_bound"), 20.0);
        close(get("makespan_bound_gap"), 2.5);
    }
}

/// Greedy on the same instance takes the applications in arrival order: 1 first on B over [50, 60), then 2 on B
/// from 60 (0.6 + 0.5 · 70/30 = 1.767 against A's 2.567) over [60, 80).
#[test]
fn test_greedy_ctt_allocates_in_arrival_order() {
    let mut tb = TestBed::new(1);
    let a = tb.agent("A", "provider", site(1.0, 1.0));
    let b = tb.agent("B", "provider", site(2.0, 3.0));
    let params = TradeoffParams { delta: Delta::Fixed(0.5), etc: EtcModel::Exact, horizon: 1e6, data_transfer: None };
    let mb = tb.agent("mb", "metabroker", TradeoffMetaBroker::new(Heuristic::Greedy, params, 50.0, [a, b]));
    let local = tb.probe("local");
    tb.inject(0.0, "local", "A", Msg::Job(JobMsg::Submit(Box::new(JobSpec::new(100, local, 4, 100.0)))));
    user(&mut tb, 1, mb, 4, 20.0);
    user(&mut tb, 2, mb, 4, 40.0);
    tb.run_to_quiescence().unwrap();
    let reserves: Vec<(f64, f64)> = tb
        .deliveries()
        .into_iter()
        .filter_map(|d| match d.msg {
            Msg::Lease(LeaseMsg::Reserve { start, end, .. }) => Some((start.secs(), end.secs())),
            _ => None,
        })
        .collect();
    assert_eq!(reserves, [(50.0, 60.0), (60.0, 80.0)]);
}

/// With a data-transfer cost the user pays it through the ledger: the meta-broker books a transfer from the user to
/// the network carrier under the job and sends the bill, so the job's recorded cost is the provider's usage bill
/// plus its DTC, and both equal the ticket's quote (ETC exact). One site: the bandwidth factor only scales the DTC.
#[test]
fn test_data_transfer_cost_is_paid_to_the_carrier_through_the_ledger() {
    use agents::ledger::{Account, External, Reason};
    let mut tb = TestBed::new(7);
    let b = tb.agent("B", "provider", site(2.0, 3.0));
    let params =
        TradeoffParams { delta: Delta::Fixed(0.5), etc: EtcModel::Exact, horizon: 1e6, data_transfer: Some(0.1) };
    let mb = tb.agent("mb", "metabroker", TradeoffMetaBroker::new(Heuristic::MinCtt, params, 50.0, [b]));
    let u = user(&mut tb, 1, mb, 4, 20.0);
    tb.run_to_quiescence().unwrap();
    tb.assert_in_order(&[
        expect("market.ticket").from("mb").to("u1").at(50.0),
        expect("market.invoice").from("mb").to("u1").at(50.0),
        expect("job.completed").from("B").to("u1").at(60.0),
    ]);
    let report = tb.sim().report(mb).unwrap();
    let [dtc] = report.transfers.as_slice() else { panic!("one transfer: {:?}", report.transfers) };
    assert_eq!((dtc.payer, dtc.payee), (Account::Agent(u), Account::External(External::NetworkCarrier)));
    assert_eq!((dtc.reason, dtc.job, dtc.booked_by), (Reason::DataTransfer, Some(1), mb));
    // Execution 3 · 4 · 10 = 120 G$, its average over the one site; the DTC is 0.1 · 120 over a factor in (0, 1].
    assert!(dtc.amount >= 12.0, "{}", dtc.amount);
    let record = &tb.sim().report(u).unwrap().jobs[0];
    assert_eq!(record.outcome, JobOutcome::Completed);
    close(record.cost, 120.0 + dtc.amount);
    let get = |k: &str| report.metric(k).unwrap();
    close(get("data_transfer"), dtc.amount);
    close(get("spending"), record.cost);
}

/// Site W has 8 PEs, site A 4. Application 1 (8 PEs, 100 s) fits only W, application 2 (4 PEs, 20 s) either: both
/// arrive at 10 and are placed at the round at 50, application 2 finishing at 70 wherever it goes, application 1 at
/// 150 or 170. The makespan counts application 1; the shared makespan only application 2: 70 − 10.
#[test]
fn test_the_shared_makespan_leaves_out_what_only_the_widest_site_can_run() {
    let mut tb = TestBed::new(1);
    let a = tb.agent("A", "provider", site_of(4, 1.0, 1.0));
    let w = tb.agent("W", "provider", site_of(8, 1.0, 1.0));
    let params = TradeoffParams { delta: Delta::Fixed(0.5), etc: EtcModel::Exact, horizon: 1e6, data_transfer: None };
    let mb = tb.agent("mb", "metabroker", TradeoffMetaBroker::new(Heuristic::MinCtt, params, 50.0, [a, w]));
    user(&mut tb, 1, mb, 8, 100.0);
    user(&mut tb, 2, mb, 4, 20.0);
    tb.run_to_quiescence().unwrap();
    let report = tb.sim().report(mb).unwrap();
    let get = |k: &str| report.metric(k).unwrap();
    assert_eq!(get("tickets"), 2.0);
    close(get("makespan_shared"), 60.0);
    assert!(get("makespan") >= 140.0, "{}", get("makespan"));
}
