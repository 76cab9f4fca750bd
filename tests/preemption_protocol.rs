//! Lease preemption inside the provider, message by message: the prototype example of Amini Salehi (2012) ch7 (Table
//! 7.1: six suspendable leases fill a 12-PE cluster; at 00:12:00 a local request for 5 VMs over one hour arrives).

use std::collections::BTreeMap;

use agents::gateway::{Dispatch, Gateway};
use agents::ledger::Account;
use agents::protocol::{JobMsg, JobSpec, LeaseMsg, LeaseType, MarketMsg, Msg, PreemptionKind};
use agents::provider::kind::ProviderKind;
use agents::provider::overhead::{OverheadModel, SharedStorage};
use agents::provider::preemption::{PROTOTYPE_LEASES, PreemptionPolicy};
use agents::provider::scheduler::{Partitioning, SchedulerPolicy};
use agents::provider::{CancelledLeases, Provider, ProviderConfig, ProviderInfo};
use agents::registry::AgentKind;
use agents::sim::{AgentId, Runtime, SimTime};
use agents::testbed::{Delivery, TestBed, expect};

fn lease(id: u64, vms: u32, memory_mb: f64, duration: f64, lease: LeaseType) -> Msg {
    let spec =
        JobSpec { lease: Some(lease), memory_mb: Some(memory_mb), ..JobSpec::new(id, AgentId(1), vms, duration) };
    Msg::Job(JobMsg::Submit(Box::new(spec)))
}

/// A local request of `vms` 1,024 MB VMs over `duration` seconds from the provider's own user, `AgentId(2)`.
fn local_request(id: u64, vms: u32, duration: f64) -> Msg {
    let spec = JobSpec {
        lease: Some(LeaseType::Local),
        memory_mb: Some(1024.0),
        ..JobSpec::new(id, AgentId(2), vms, duration)
    };
    Msg::Job(JobMsg::Submit(Box::new(spec)))
}

/// A conservative-backfilling cluster of `pes` single-VM nodes with 1,024 MB VMs.
fn cluster(pes: u32, preemption: PreemptionPolicy, overhead: OverheadModel) -> ProviderConfig {
    ProviderConfig {
        pes,
        speed: 1.0,
        price: 0.0,
        scheduler: SchedulerPolicy::Conservative,
        partitioning: Partitioning::default(),
        preemption,
        overhead,
        vm_memory_mb: 1024.0,
        cancelled: CancelledLeases::Restart,
        preemptive_priority: false,
    }
}

/// Runs the prototype example under `policy`; returns the deliveries and the provider's metrics.
fn prototype(policy: PreemptionPolicy, rt: Runtime) -> (Vec<Delivery>, Vec<(&'static str, f64)>) {
    let mut tb = TestBed::new(1);
    tb.runtime(rt);
    let config = cluster(12, policy, OverheadModel::SharedStorage(SharedStorage::PROTOTYPE));
    let site = tb.agent("site", "provider", Provider::new(config));
    tb.probe("igg"); // AgentId(1): the gateway that owns the external leases
    tb.probe("local-user");
    for (id, at, vms, mb, duration) in PROTOTYPE_LEASES {
        tb.inject(at, "igg", "site", lease(id, vms, mb, duration, LeaseType::Suspendable));
    }
    tb.inject(720.0, "local-user", "site", local_request(7, 5, 3600.0));
    tb.run_to_quiescence().unwrap();
    let metrics = tb.sim().report(site).unwrap().metrics;
    (tb.deliveries(), metrics)
}

fn preempted(d: &[Delivery]) -> Vec<(u64, f64)> {
    d.iter()
        .filter_map(|d| match d.msg {
            Msg::Lease(LeaseMsg::Preempted { lease, kind: PreemptionKind::Suspend, overhead }) => {
                Some((lease, (overhead * 10.0).round() / 10.0))
            }
            _ => None,
        })
        .collect()
}

fn metric(m: &[(&str, f64)], k: &str) -> f64 {
    m.iter().find(|x| x.0 == k).map_or(f64::NAN, |x| x.1)
}

/// The time of the last delivery (the last lease's completion).
fn makespan(d: &[Delivery]) -> f64 {
    d.iter().filter(|d| d.msg.kind() == "job.completed").map(|d| d.at).fold(0.0, f64::max)
}

#[test]
fn test_nop_rejects_the_local_request() {
    let (d, m) = prototype(PreemptionPolicy::Nop, Runtime::Inline);
    assert!(preempted(&d).is_empty());
    let to_local: Vec<&Delivery> = d.iter().filter(|d| d.to == "local-user").collect();
    assert_eq!(to_local.len(), 1);
    assert!(matches!(to_local[0].msg, Msg::Job(JobMsg::Rejected { job: 7, .. })), "{:?}", to_local[0]);
    assert_eq!((metric(&m, "local_rejected"), metric(&m, "preempted_leases")), (1.0, 0.0));
}

#[test]
fn test_moml_suspends_leases_5_and_6_then_serves_the_local_request() {
    for rt in [Runtime::Inline, Runtime::Actix { threads: 1 }] {
        let (d, m) = prototype(PreemptionPolicy::Moml, rt);
        assert_eq!(preempted(&d), [(5, 6.4), (6, 19.2)]);
        let mut tb_order = d.iter().skip_while(|d| d.at < 720.0).map(|d| (d.msg.kind(), d.to.as_str()));
        // The owners hear of the preemptions before the local request is accepted and started.
        assert_eq!(tb_order.next(), Some(("job.submit", "site")));
        assert_eq!(tb_order.next(), Some(("lease.preempted", "igg")));
        assert_eq!(tb_order.next(), Some(("lease.preempted", "igg")));
        assert_eq!(tb_order.next(), Some(("job.accepted", "local-user")));
        assert_eq!(tb_order.next(), Some(("job.started", "local-user")));
        assert_eq!(metric(&m, "preemption_overhead"), 25.6);
        assert_eq!(metric(&m, "preempted_vms"), 5.0);
        let span = makespan(&d);
        assert!((7700.0..=7900.0).contains(&span), "makespan {span} (thesis: about 7,800 s)");
    }
}

#[test]
fn test_mov_and_mlip_choices() {
    let (d, m) = prototype(PreemptionPolicy::Mov, Runtime::Inline);
    assert_eq!(preempted(&d), [(2, 6.4), (3, 12.8), (5, 6.4)]);
    assert_eq!(metric(&m, "preemption_overhead"), 25.6);
    // The prototype's MLIP preempts the largest leases first: {1, 6}, 57.6 s (Table 7.2).
    let (d, m) = prototype(PreemptionPolicy::GreedyMlip, Runtime::Inline);
    assert_eq!(preempted(&d), [(1, 38.4), (6, 19.2)]);
    assert!((metric(&m, "preemption_overhead") - 57.6).abs() < 1e-9);
    let span = makespan(&d);
    assert!((7700.0..=7900.0).contains(&span), "makespan {span} (thesis: about 7,800 s)");
}

#[test]
fn test_preempted_leases_resume_with_their_remaining_work_plus_overhead() {
    let (d, _) = prototype(PreemptionPolicy::Moml, Runtime::Inline);
    // Lease 5 ran 190 s of 2,400 before 720; it resumes later and ends 2,210 s + 6.4 s after it resumes.
    let resumed = d.iter().find(|d| matches!(d.msg, Msg::Lease(LeaseMsg::Resumed { lease: 5 }))).unwrap();
    let done = d.iter().find(|d| matches!(d.msg, Msg::Job(JobMsg::Completed { job: 5, .. }))).unwrap();
    assert!((done.at - resumed.at - 2216.4).abs() < 1e-6, "resumed {} completed {}", resumed.at, done.at);
    // Every lease gets one `Started`; a preempted one then gets `Resumed`, not a second `Started`.
    for id in 1..=7 {
        let starts = d.iter().filter(|x| x.msg == Msg::Job(JobMsg::Started { job: id })).count();
        assert_eq!(starts, 1, "lease {id}");
    }
}

/// Two 4-PE clusters behind a gateway; the user's migratable lease 1 (4 VMs, 1,000 s) runs on `rp-a` when a local
/// request for the whole of `rp-a` arrives at t = 100 s. `busy_b` first fills `rp-b` with a non-preemptable lease.
fn migration(deadline: f64, busy_b: bool) -> (TestBed, f64) {
    migration_at(Sites { speeds: [1.0, 1.0], prices: [0.0, 0.0] }, 1000.0, deadline, busy_b)
}

/// The speeds and prices of `rp-a` and `rp-b`.
struct Sites {
    speeds: [f64; 2],
    prices: [f64; 2],
}

/// [`migration`] with `rp-a` and `rp-b` as `sites` say and lease 1 of `work` seconds on a reference PE.
fn migration_at(sites: Sites, work: f64, deadline: f64, busy_b: bool) -> (TestBed, f64) {
    let mut tb = TestBed::new(1);
    let config = cluster(4, PreemptionPolicy::Mov, OverheadModel::default());
    let Sites { speeds, prices } = sites;
    let site = |i: usize| Provider::new(ProviderConfig { speed: speeds[i], price: prices[i], ..config.clone() });
    let a = tb.agent("rp-a", "provider", site(0));
    let b = tb.agent("rp-b", "provider", site(1));
    let info = |id, i: usize| ProviderInfo { id, pes: 4, speed: speeds[i], price: prices[i] };
    tb.agent("igg", "gateway", Gateway::new(vec![info(a, 0), info(b, 1)], Dispatch::RoundRobin));
    let user = tb.probe("user");
    tb.probe("local-user");
    let external = |id, runtime, deadline, lease| {
        let deadline = Some(SimTime::new(deadline).unwrap());
        let spec = JobSpec { lease: Some(lease), deadline, ..JobSpec::new(id, user, 4, runtime) };
        Msg::Job(JobMsg::Submit(Box::new(spec)))
    };
    tb.inject(0.0, "user", "igg", external(1, work, deadline, LeaseType::Migratable));
    if busy_b {
        tb.inject(0.0, "user", "igg", external(2, 5000.0, 10_000.0, LeaseType::NonPreemptable));
    }
    let local = JobSpec { lease: Some(LeaseType::Local), ..JobSpec::new(3, AgentId(4), 4, 500.0) };
    tb.inject(100.0, "local-user", "rp-a", Msg::Job(JobMsg::Submit(Box::new(local))));
    tb.run_to_quiescence().unwrap();
    // Eq 3.7 for four VMs of 1,024 MB (the overhead unit tests check the value).
    let h = config.overhead.overhead(PreemptionKind::Migrate, 4, 1024.0);
    (tb, h)
}

fn provider_metric(tb: &mut TestBed, name: &str, key: &'static str) -> f64 {
    let id = tb.sim().directory().lookup(name).unwrap();
    metric(&tb.sim().report(id).unwrap().metrics, key)
}

#[test]
fn test_a_migratable_lease_moves_through_the_gateway_to_a_free_provider() {
    let (mut tb, h) = migration(20_000.0, false);
    let preempted = Msg::Lease(LeaseMsg::Preempted { lease: 1, kind: PreemptionKind::Migrate, overhead: h });
    tb.assert_in_order(&[
        expect("job.submit").from("igg").to("rp-a").at(0.0),
        expect("job.started").from("rp-a").to("user"),
        expect("job.submit").from("local-user").to("rp-a").at(100.0),
        expect("lease.preempted").from("rp-a").to("user").msg(preempted),
        expect("lease.migrate").from("rp-a").to("igg"),
        expect("job.started").from("rp-a").to("local-user").at(100.0),
        expect("lease.migrate").from("igg").to("rp-b").at(100.0),
        expect("lease.migrated")
            .from("rp-b")
            .to("igg")
            .msg(Msg::Lease(LeaseMsg::Migrated { lease: 1, to: AgentId(1) })),
        expect("lease.migrated").from("igg").to("rp-a"),
        // The destination's one queue pass of the instant starts it.
        expect("lease.resumed").from("rp-b").to("user").at(100.0),
        // The 900 s of work left plus the migration overhead, on the destination's PEs.
        expect("job.completed").from("rp-b").to("user").at(100.0 + 900.0 + h),
    ]);
    tb.assert_none(&expect("lease.resume").msg(Msg::Lease(LeaseMsg::Resume { lease: 1 })));
    tb.assert_none(&expect("lease.deadline_missed"));
    let migrated_in = provider_metric(&mut tb, "rp-b", "migrated_in");
    let overhead_b = provider_metric(&mut tb, "rp-b", "overhead_pe_seconds");
    assert_eq!((provider_metric(&mut tb, "rp-a", "migrated_out"), migrated_in), (1.0, 1.0));
    // The overhead is spent, and counted, where the lease resumes.
    assert_eq!((provider_metric(&mut tb, "rp-a", "overhead_pe_seconds"), overhead_b), (0.0, 4.0 * h));
}

/// At a speed other than 1 the destination rounds the lease's runtime and its scheduler's estimate differently: here
/// `left / 1.07 + h` exceeds `(left + h·1.07) / 1.07` by an ulp (`left`, the reference-PE work left). The lease must
/// still end by its planned end, which the scheduler checks (an overrun fails the run).
#[test]
fn test_a_lease_migrated_between_providers_of_other_speeds_ends_within_its_plan() {
    let (mut tb, h) = migration_at(Sites { speeds: [1.33, 1.07], prices: [0.0, 0.0] }, 2000.0, 20_000.0, false);
    let left = (2000.0 / 1.33 - 100.0) * 1.33;
    tb.assert_in_order(&[
        expect("lease.migrate").from("igg").to("rp-b").at(100.0),
        expect("lease.migrated").from("igg").to("rp-a"),
        expect("lease.resumed").from("rp-b").to("user").at(100.0),
        expect("job.completed").from("rp-b").to("user").at(100.0 + left / 1.07 + h),
    ]);
    assert_eq!(provider_metric(&mut tb, "rp-b", "completed"), 1.0);
}

#[test]
fn test_without_a_destination_the_lease_resumes_at_its_source_and_a_missed_deadline_is_reported() {
    let (mut tb, h) = migration(2000.0, true);
    let expected_end = 600.0 + 900.0 + h;
    tb.assert_in_order(&[
        expect("lease.preempted").from("rp-a").to("user").at(100.0),
        expect("lease.migrate").from("rp-a").to("igg"),
        expect("lease.migrate").from("igg").to("rp-b"),
        // rp-b is busy until 5,000 s, past the deadline.
        expect("lease.migrate_refused").from("rp-b").to("igg"),
        expect("lease.resume").from("igg").to("rp-a").msg(Msg::Lease(LeaseMsg::Resume { lease: 1 })),
        expect("lease.deadline_missed")
            .from("rp-a")
            .to("user")
            .msg(Msg::Lease(LeaseMsg::DeadlineMissed { lease: 1, expected_end: SimTime::new(expected_end).unwrap() })),
        expect("lease.resumed").from("rp-a").to("user").at(600.0),
        expect("job.completed").from("rp-a").to("user").at(expected_end),
    ]);
    tb.assert_none(&expect("lease.migrated"));
    assert_eq!(provider_metric(&mut tb, "rp-a", "preempted_migratable"), 1.0);
    assert_eq!(provider_metric(&mut tb, "rp-a", "migrated_out"), 0.0);
    assert_eq!(provider_metric(&mut tb, "rp-a", "deadline_missed"), 1.0);
}

#[test]
fn test_the_owner_suspends_resumes_and_cancels_its_leases() {
    let mut tb = TestBed::new(1);
    let config = cluster(4, PreemptionPolicy::Nop, OverheadModel::default());
    let h = config.overhead.overhead(PreemptionKind::Suspend, 2, 1024.0);
    tb.agent("rp", "provider", Provider::new(config));
    tb.probe("user");
    tb.probe("stranger");
    for id in [1, 2] {
        tb.inject(0.0, "user", "rp", lease(id, 2, 1024.0, 1000.0, LeaseType::Suspendable));
    }
    let lease_msg = |m| Msg::Lease(m);
    tb.inject(50.0, "stranger", "rp", lease_msg(LeaseMsg::Suspend { lease: 1 }));
    tb.inject(100.0, "user", "rp", lease_msg(LeaseMsg::Suspend { lease: 1 }));
    tb.inject(200.0, "user", "rp", lease_msg(LeaseMsg::Suspend { lease: 2 }));
    tb.inject(300.0, "user", "rp", Msg::Job(JobMsg::Cancel { job: 2 }));
    tb.inject(400.0, "stranger", "rp", lease_msg(LeaseMsg::Resume { lease: 1 }));
    tb.inject(500.0, "user", "rp", lease_msg(LeaseMsg::Resume { lease: 1 }));
    tb.run_to_quiescence().unwrap();
    let suspended = |lease, overhead| lease_msg(LeaseMsg::Preempted { lease, kind: PreemptionKind::Suspend, overhead });
    tb.assert_in_order(&[
        expect("lease.preempted").from("rp").to("user").at(100.0).msg(suspended(1, h)),
        expect("lease.preempted").from("rp").to("user").at(200.0).msg(suspended(2, h)),
        expect("lease.cancelled").from("rp").to("user").at(300.0),
        expect("lease.resumed").from("rp").to("user").at(500.0).msg(lease_msg(LeaseMsg::Resumed { lease: 1 })),
        // 900 s of work left, plus the suspend-and-resume overhead on its VMs.
        expect("job.completed").from("rp").to("user").at(500.0 + 900.0 + h),
    ]);
    // Neither the stranger's suspend nor its resume did anything, and the cancelled lease never completes.
    tb.assert_none(&expect("lease.preempted").at(50.0));
    tb.assert_none(&expect("lease.resumed").at(400.0));
    tb.assert_none(&expect("job.completed").msg(Msg::Job(JobMsg::Completed { job: 2, cost: 0.0 })));
}

#[test]
fn test_a_migrated_lease_is_billed_by_each_provider_for_its_computation_and_not_for_overhead() {
    // rp-a at 1 G$ per PE-second computes 100 s of lease 1 before the local request; rp-b at 2 G$ computes the
    // 900 s left after the migration overhead h, which neither bills.
    let sites = Sites { speeds: [1.0, 1.0], prices: [1.0, 2.0] };
    let (mut tb, h) = migration_at(sites, 1000.0, 20_000.0, false);
    let invoice = Msg::Market(MarketMsg::Invoice { job: 1, amount: 4.0 * 100.0 });
    let completed = Msg::Job(JobMsg::Completed { job: 1, cost: 4.0 * 900.0 * 2.0 });
    tb.assert_in_order(&[
        expect("market.invoice").from("rp-a").to("user").at(100.0).msg(invoice),
        expect("job.completed").from("rp-b").to("user").at(100.0 + 900.0 + h).msg(completed),
    ]);
    let mut ledger = Vec::new();
    for site in ["rp-a", "rp-b"] {
        let id = tb.sim().directory().lookup(site).unwrap();
        let bills = tb.sim().report(id).unwrap().transfers.into_iter().filter(|t| t.job == Some(1));
        ledger.extend(bills.map(|t| (t.payee, t.amount, t.job)));
    }
    assert_eq!(
        ledger,
        vec![(Account::Agent(AgentId(0)), 400.0, Some(1)), (Account::Agent(AgentId(1)), 7200.0, Some(1))]
    );
}

#[test]
fn test_a_suspended_lease_is_billed_once_for_its_computation_and_not_for_overhead() {
    // Lease 1 (4 VMs, 1,000 s, suspendable) at 1 G$ per PE-second is suspended at 100 for a 500-s local request,
    // resumes at 600 with the suspend-resume overhead on its VMs, and is billed 4 × 1,000 when it ends.
    let mut tb = TestBed::new(1);
    let site = tb.agent(
        "site",
        "provider",
        Provider::new(ProviderConfig { price: 1.0, ..cluster(4, PreemptionPolicy::Mov, OverheadModel::default()) }),
    );
    tb.probe("user");
    tb.probe("local-user");
    tb.inject(0.0, "user", "site", lease(1, 4, 1024.0, 1000.0, LeaseType::Suspendable));
    tb.inject(100.0, "local-user", "site", local_request(2, 4, 500.0));
    tb.run_to_quiescence().unwrap();
    let h = OverheadModel::default().overhead(PreemptionKind::Suspend, 4, 1024.0);
    tb.assert_in_order(&[
        expect("lease.resumed").to("user").at(600.0),
        expect("job.completed").to("user").at(600.0 + h + 900.0),
    ]);
    let bills: Vec<(Option<u64>, f64)> =
        tb.sim().report(site).unwrap().transfers.iter().map(|t| (t.job, t.amount)).collect();
    // The local request pays for its 500 s too.
    assert_eq!(bills, vec![(Some(2), 4.0 * 500.0), (Some(1), 4.0 * 1000.0)]);
}

/// A 4-PE cluster under MOV with the prototype's overheads: external lease 1 (4 VMs, `first` s) from 0 and lease 2
/// (4 VMs, 1,000 s) queued behind it; at 100 a local request for the 4 PEs over 500 s made ahead, to start at 1,200.
fn made_ahead(first: f64) -> (Vec<Delivery>, Vec<(&'static str, f64)>) {
    made_ahead_cancelled(first, None)
}

/// [`made_ahead`], the local request's owner cancelling it at `cancel`, if given.
fn made_ahead_cancelled(first: f64, cancel: Option<f64>) -> (Vec<Delivery>, Vec<(&'static str, f64)>) {
    let mut tb = TestBed::new(1);
    let config = cluster(4, PreemptionPolicy::Mov, OverheadModel::SharedStorage(SharedStorage::PROTOTYPE));
    let site = tb.agent("site", "provider", Provider::new(config));
    tb.probe("igg"); // AgentId(1)
    tb.probe("local-user"); // AgentId(2)
    tb.inject(0.0, "igg", "site", lease(1, 4, 1024.0, first, LeaseType::Suspendable));
    tb.inject(0.0, "igg", "site", lease(2, 4, 1024.0, 1000.0, LeaseType::Suspendable));
    let spec = JobSpec {
        lease: Some(LeaseType::Local),
        start: Some(SimTime::new(1200.0).unwrap()),
        ..JobSpec::new(3, AgentId(2), 4, 500.0)
    };
    tb.inject(100.0, "local-user", "site", Msg::Job(JobMsg::Submit(Box::new(spec))));
    if let Some(at) = cancel {
        tb.inject(at, "local-user", "site", Msg::Job(JobMsg::Cancel { job: 3 }));
    }
    tb.run_to_quiescence().unwrap();
    let metrics = tb.sim().report(site).unwrap().metrics;
    (tb.deliveries(), metrics)
}

fn job_event(d: &[Delivery], kind: &str, job: u64) -> Option<f64> {
    d.iter()
        .find(|d| {
            d.msg.kind() == kind
                && match &d.msg {
                    Msg::Job(
                        JobMsg::Accepted { job: j } | JobMsg::Started { job: j } | JobMsg::Completed { job: j, .. },
                    ) => *j == job,
                    _ => false,
                }
        })
        .map(|d| d.at)
}

#[test]
fn test_a_local_request_made_ahead_holds_its_window_at_once_and_replans_the_lease_planned_in_it() {
    // Lease 1 ends at 1,000, before the window: it is not touched. Lease 2, planned over [1,000, 2,000), is taken off
    // the window at 100 and planned anew after it; the local request is accepted at 100 and starts at 1,200.
    let (d, m) = made_ahead(1000.0);
    assert_eq!(job_event(&d, "job.accepted", 3), Some(100.0));
    assert_eq!(job_event(&d, "job.started", 3), Some(1200.0));
    assert_eq!(job_event(&d, "job.completed", 3), Some(1700.0));
    assert_eq!(job_event(&d, "job.completed", 1), Some(1000.0));
    assert_eq!(job_event(&d, "job.started", 2), Some(1700.0));
    assert!(preempted(&d).is_empty(), "a planned lease has no VMs to suspend");
    assert_eq!(metric(&m, "preempted_leases"), 1.0);
    assert_eq!(metric(&m, "local_requests"), 1.0);
}

#[test]
fn test_a_local_request_made_ahead_preempts_a_running_lease_only_at_its_start() {
    // Lease 1 runs to 2,000, across the window: the request cannot hold it at 100 without preempting a running
    // lease ahead of time, so it is placed at 1,200 like a request made then, suspending lease 1 then.
    let (d, m) = made_ahead(2000.0);
    assert_eq!(job_event(&d, "job.accepted", 3), Some(1200.0));
    assert_eq!(job_event(&d, "job.started", 3), Some(1200.0));
    let suspended = d.iter().find(|d| matches!(d.msg, Msg::Lease(LeaseMsg::Preempted { lease: 1, .. }))).unwrap();
    assert_eq!(suspended.at, 1200.0);
    assert_eq!(preempted(&d).len(), 1);
    assert_eq!(metric(&m, "local_requests"), 1.0, "counted once, when it was made");
    assert_eq!(metric(&m, "local_rejected"), 0.0);
}

#[test]
fn test_a_local_request_made_ahead_and_cancelled_before_its_start_never_runs() {
    // Waiting for its start (lease 1 holds the window): cancelled at 500, it is never placed and lease 1 runs on.
    let (d, m) = made_ahead_cancelled(2000.0, Some(500.0));
    let cancelled = d.iter().find(|d| matches!(d.msg, Msg::Lease(LeaseMsg::Cancelled { lease: 3, .. }))).unwrap();
    assert_eq!(cancelled.at, 500.0);
    assert_eq!(job_event(&d, "job.accepted", 3), None);
    assert_eq!(job_event(&d, "job.started", 3), None);
    assert!(preempted(&d).is_empty());
    assert_eq!(job_event(&d, "job.completed", 1), Some(2000.0));
    assert_eq!(metric(&m, "local_rejected"), 0.0);
    // Holding its window: cancelled at 500, the window is given back and lease 2 starts when lease 1 ends.
    let (d, _) = made_ahead_cancelled(1000.0, Some(500.0));
    assert_eq!(job_event(&d, "job.accepted", 3), Some(100.0));
    assert_eq!(job_event(&d, "job.started", 3), None);
    assert_eq!(job_event(&d, "job.started", 2), Some(1000.0));
}

#[test]
fn test_useful_work_charges_each_preempted_lease_its_overhead_once() {
    // Suspendable leases of 2 and 3 VMs (1,000 s) share a 6-PE cluster from t = 0; at 100 s a local request for all
    // 6 PEs over 200 s suspends both, and they resume at 300 s. Chapter 3's overhead, VMs one after another:
    // h(v) = v·(2·t_p + t_s + t_r) + δ = v·(0.01 + 1024/6.36 + 1024/8.12) + 2.3, so h(2) = 576.5493 s and
    // h(3) = 863.6740 s.
    let mut tb = TestBed::new(1);
    let site = tb.agent("site", "provider", Provider::new(cluster(6, PreemptionPolicy::Mov, OverheadModel::default())));
    tb.probe("user");
    tb.probe("local-user");
    tb.inject(0.0, "user", "site", lease(1, 2, 1024.0, 1000.0, LeaseType::Suspendable));
    tb.inject(0.0, "user", "site", lease(2, 3, 1024.0, 1000.0, LeaseType::Suspendable));
    tb.inject(100.0, "local-user", "site", local_request(3, 6, 200.0));
    tb.run_to_quiescence().unwrap();
    let h = |vms| OverheadModel::default().overhead(PreemptionKind::Suspend, vms, 1024.0);
    let (h2, h3) = (h(2), h(3));
    assert!((h2 - 576.5493274).abs() < 1e-6 && (h3 - 863.6739911).abs() < 1e-6, "h(2) = {h2}, h(3) = {h3}");
    tb.assert_in_order(&[
        expect("lease.resumed").to("user").at(300.0),
        expect("lease.resumed").to("user").at(300.0),
        expect("job.completed").to("user").at(300.0 + 900.0 + h2),
        expect("job.completed").to("user").at(300.0 + 900.0 + h3),
    ]);
    let report: BTreeMap<String, f64> =
        tb.sim().report(site).unwrap().metrics.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    let near =
        |key: &str, want: f64| assert!((report[key] - want).abs() < 1e-3, "{key}: {} against {want}", report[key]);
    near("preemption_overhead", h2 + h3);
    // The schedule holds every VM of a lease for its h(L): 2·h(2) + 3·h(3) PE-seconds.
    near("overhead_pe_seconds", 2.0 * h2 + 3.0 * h3);
    // Computed: 6 × 200 (local) + 2 × 1,000 + 3 × 1,000 VM-seconds (Eq 4.22).
    near("busy_pe_seconds", 6200.0 + 2.0 * h2 + 3.0 * h3);
    let mut metrics = report.clone();
    ProviderKind.derive_metrics(&mut metrics);
    // Eq 4.21: 1 − (h(2) + h(3)) / 6,200 = 0.7677; charging the PE-seconds instead gives 1 − 3,744.12 / 6,200 = 0.396.
    assert!((metrics["useful_work"] - 0.767706).abs() < 1e-6, "{}", metrics["useful_work"]);
}
