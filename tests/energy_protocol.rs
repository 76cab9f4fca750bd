//! Node power states and energy policies inside the provider, message by message (Amini Salehi 2012, ch6): a local
//! request on a cluster whose nodes are all off, and a starving external request under PEMP, SESP and GESP.

use agents::protocol::{JobMsg, JobSpec, LeaseType, Msg};
use agents::provider::overhead::OverheadModel;
use agents::provider::pemp::EnergyPolicy;
use agents::provider::power::PowerConfig;
use agents::provider::preemption::PreemptionPolicy;
use agents::provider::scheduler::{Partitioning, SchedulerPolicy};
use agents::provider::{CancelledLeases, EnergyConfig, Provider, ProviderConfig, SwitchOff};
use agents::sim::{AgentId, SimTime};
use agents::testbed::{Delivery, TestBed};

fn lease(id: u64, owner: u32, vms: u32, duration: f64, lease: LeaseType) -> Msg {
    let spec = JobSpec { lease: Some(lease), ..JobSpec::new(id, AgentId(owner), vms, duration) };
    Msg::Job(JobMsg::Submit(Box::new(spec)))
}

/// A local request made ahead, to start at `start`.
fn local_ahead(id: u64, owner: u32, vms: u32, duration: f64, start: f64) -> Msg {
    let spec = JobSpec {
        lease: Some(LeaseType::Local),
        start: Some(SimTime::new(start).unwrap()),
        ..JobSpec::new(id, AgentId(owner), vms, duration)
    };
    Msg::Job(JobMsg::Submit(Box::new(spec)))
}

/// A conservative-backfilling cluster of `pes` single-VM nodes under `policy`, nodes booting in `boot` seconds.
fn cluster(pes: u32, policy: EnergyPolicy, boot: f64) -> Provider {
    cluster_dropping(pes, policy, boot, CancelledLeases::Restart)
}

/// [`cluster`] with a rule for preempted cancellable leases.
fn cluster_dropping(pes: u32, policy: EnergyPolicy, boot: f64, cancelled: CancelledLeases) -> Provider {
    let power = PowerConfig { watts: 117.0, boot, shutdown: 0.0 };
    cluster_with(pes, EnergyConfig { policy, power, ..Default::default() }, cancelled)
}

/// A conservative-backfilling cluster of `pes` single-VM nodes whose power `energy` manages.
fn cluster_with(pes: u32, energy: EnergyConfig, cancelled: CancelledLeases) -> Provider {
    let config = ProviderConfig {
        pes,
        speed: 1.0,
        price: 0.0,
        scheduler: SchedulerPolicy::Conservative,
        partitioning: Partitioning::default(),
        preemption: PreemptionPolicy::Mov,
        overhead: OverheadModel::default(),
        vm_memory_mb: 1024.0,
        cancelled,
        preemptive_priority: false,
    };
    Provider::new(config).with_energy(energy).unwrap()
}

fn metric(m: &[(&str, f64)], k: &str) -> f64 {
    m.iter().find(|x| x.0 == k).map_or(f64::NAN, |x| x.1)
}

fn at(d: &[Delivery], kind: &str) -> Option<f64> {
    d.iter().find(|d| d.msg.kind() == kind).map(|d| d.at)
}

#[test]
fn test_a_local_request_on_a_switched_off_cluster_boots_nodes_then_starts() {
    let mut tb = TestBed::new(1);
    let site = tb.agent("site", "provider", cluster(8, EnergyPolicy::Pemp, 120.0));
    tb.probe("local-user"); // AgentId(1)
    tb.inject(100.0, "local-user", "site", lease(1, 1, 4, 3600.0, LeaseType::Local));
    tb.run_to_quiescence().unwrap();
    let d = tb.deliveries();
    // Nothing runs and nothing waits (V = 0, C = 0): the controller says consolidate, but nothing is on and nothing
    // can be preempted, so the four nodes the request lacks boot; the lease starts when they are ready.
    assert_eq!(at(&d, "job.accepted"), Some(100.0));
    assert_eq!(at(&d, "job.started"), Some(220.0));
    assert_eq!(at(&d, "job.completed"), Some(3820.0));
    let report = tb.sim().report(site).unwrap();
    let m = &report.metrics;
    assert_eq!(metric(m, "nodes_switched_on"), 4.0);
    // Four nodes drew from 100 (boot) to 3820 (switched off once nothing is scheduled on them).
    let kwh = |joules: f64| joules / 3.6e6;
    assert!((metric(m, "node_energy") - kwh(4.0 * 117.0 * 3720.0)).abs() < 1e-9);
    // The lease is booked its 4 VMs × 3600 s; the boot is idle energy.
    assert_eq!(report.metered.len(), 1);
    assert!((report.metered[0].energy - kwh(4.0 * 117.0 * 3600.0)).abs() < 1e-9);
    assert!((metric(m, "node_idle_energy") - kwh(4.0 * 117.0 * 120.0)).abs() < 1e-9);
}

/// One external request of 2 VMs and 1,000 s at t = 0 on a switched-off 4-node cluster; the deliveries until
/// 10,000 s and the metrics.
fn starving(policy: EnergyPolicy) -> (Vec<Delivery>, Vec<(&'static str, f64)>) {
    let mut tb = TestBed::new(1);
    let site = tb.agent("site", "provider", cluster(4, policy, 0.0));
    tb.probe("igg");
    tb.inject(0.0, "igg", "site", lease(1, 1, 2, 1000.0, LeaseType::Suspendable));
    tb.run_until(10_000.0).unwrap();
    (tb.deliveries(), tb.sim().report(site).unwrap().metrics)
}

#[test]
fn test_a_starving_external_request_is_served_by_pemp_before_sesp_and_never_by_gesp() {
    // SESP switches on when V = wait / (5 × 1000 s) reaches 1: at the check of 5,400 s.
    let (d, m) = starving(EnergyPolicy::Sesp);
    assert_eq!(at(&d, "job.started"), Some(5400.0));
    assert!((metric(&m, "node_energy") - 2.0 * 117.0 * 1000.0 / 3.6e6).abs() < 1e-9);
    assert_eq!(metric(&m, "violation_rate"), 1.0, "waited 5,400 s > 5 × 1,000 s");
    // PEMP at 4,200 s: V = 0.84 is MR 0.32 and HR 0.68, C = 0 is VL: f = 0.32 × 1.5 + 0.68 × 0.5 = 0.82, a split
    // with a switch-on share (at 3,600 s, V = 0.72 gives f = 1.06: consolidate).
    let (d, m) = starving(EnergyPolicy::Pemp);
    assert_eq!(at(&d, "job.started"), Some(4200.0));
    assert_eq!(metric(&m, "violation_rate"), 0.0);
    // GESP switches on only for local requests.
    let (d, m) = starving(EnergyPolicy::Gesp);
    assert_eq!(at(&d, "job.started"), None);
    assert_eq!(metric(&m, "node_energy"), 0.0);
    assert_eq!(metric(&m, "violation_rate"), 1.0);
}

/// An external request of 2 VMs and 1,000 s at t = 0, then a local one of 4 VMs and 3,600 s at 100, on a
/// switched-off 8-node cluster; the deliveries until 20,000 s and the metrics.
fn behind_a_local(policy: EnergyPolicy) -> (Vec<Delivery>, Vec<(&'static str, f64)>) {
    let mut tb = TestBed::new(1);
    let site = tb.agent("site", "provider", cluster(8, policy, 0.0));
    tb.probe("igg"); // AgentId(1)
    tb.probe("local-user"); // AgentId(2)
    tb.inject(0.0, "igg", "site", lease(1, 1, 2, 1000.0, LeaseType::Suspendable));
    tb.inject(100.0, "local-user", "site", lease(2, 2, 4, 3600.0, LeaseType::Local));
    tb.run_until(20_000.0).unwrap();
    (tb.deliveries(), tb.sim().report(site).unwrap().metrics)
}

#[test]
fn test_gesp_switches_nodes_on_for_the_local_window_only() {
    let started = |d: &[Delivery], job: u64| {
        d.iter().find(|d| matches!(d.msg, Msg::Job(JobMsg::Started { job: j }) if j == job)).map(|d| d.at)
    };
    // GESP: the four nodes the local request lacks are on from 100 to its end at 3,700, then off; the external
    // request finds no fragment before and waits.
    let (d, m) = behind_a_local(EnergyPolicy::Gesp);
    assert_eq!(started(&d, 2), Some(100.0));
    assert_eq!(started(&d, 1), None);
    assert!((metric(&m, "node_energy") - 4.0 * 117.0 * 3600.0 / 3.6e6).abs() < 1e-9);
    // SESP keeps a node on while anything is planned on it: the external request takes two of them at 3,700.
    let (d, m) = behind_a_local(EnergyPolicy::Sesp);
    assert_eq!(started(&d, 1), Some(3700.0));
    let joules = 4.0 * 117.0 * 3600.0 + 2.0 * 117.0 * 1000.0;
    assert!((metric(&m, "node_energy") - joules / 3.6e6).abs() < 1e-9);
}

#[test]
fn test_a_cancelled_lease_that_is_dropped_is_booked_the_energy_of_its_run() {
    let mut tb = TestBed::new(1);
    let site = tb.agent("site", "provider", cluster_dropping(2, EnergyPolicy::Sesp, 0.0, CancelledLeases::Drop));
    tb.probe("igg"); // AgentId(1)
    tb.probe("local-user"); // AgentId(2)
    // SESP switches on for the external lease at the check of 5,400 s (it waited 5 × its 1,000 s).
    tb.inject(0.0, "igg", "site", lease(1, 1, 2, 1000.0, LeaseType::Cancellable));
    tb.inject(5_900.0, "local-user", "site", lease(2, 2, 2, 1000.0, LeaseType::Local));
    tb.run_until(20_000.0).unwrap();
    let d = tb.deliveries();
    assert_eq!(at(&d, "job.started"), Some(5_400.0));
    assert!(d.iter().any(|d| matches!(d.msg, Msg::Job(JobMsg::Rejected { job: 1, .. }))), "dropped when preempted");
    let report = tb.sim().report(site).unwrap();
    let booked = |job: u64| report.metered.iter().find(|m| m.job == job).map(|m| m.energy);
    // Its 2 VMs ran from 5,400 s to the local request's arrival; the work is lost, the energy was spent.
    let kwh = 2.0 * 117.0 * 500.0 / 3.6e6;
    assert!((booked(1).expect("the dropped lease is booked") - kwh).abs() < 1e-9, "{:?}", booked(1));
    assert!((booked(2).unwrap() - 2.0 * 117.0 * 1000.0 / 3.6e6).abs() < 1e-9);
}

/// Two nodes booting in 120 s and shutting down in 30 s under SESP and `rule`. At t = 0 two local requests of one VM
/// switch both nodes on, one for 600 s and one for `first` s (both start when booted, at 120); at t = 1 an external
/// request of 2 VMs and 10,000 s is planned when the longer one ends, at 120 + `first` (it waits less than its
/// threshold of 5 × 10,000 s, so SESP switches nothing on for it). The second node is idle from 720 with its next
/// planned use at 120 + `first`. Returns the deliveries and the report.
fn idle_until_planned(first: f64, rule: SwitchOff) -> (Vec<Delivery>, agents::report::Report) {
    let power = PowerConfig { watts: 117.0, boot: 120.0, shutdown: 30.0 };
    let energy = EnergyConfig { policy: EnergyPolicy::Sesp, power, switch_off: rule, ..Default::default() };
    let mut tb = TestBed::new(1);
    let site = tb.agent("site", "provider", cluster_with(2, energy, CancelledLeases::Restart));
    tb.probe("igg"); // AgentId(1)
    tb.probe("local-user"); // AgentId(2)
    tb.inject(0.0, "local-user", "site", lease(1, 2, 1, first, LeaseType::Local));
    tb.inject(0.0, "local-user", "site", lease(2, 2, 1, 600.0, LeaseType::Local));
    tb.inject(1.0, "igg", "site", lease(3, 1, 2, 10_000.0, LeaseType::Suspendable));
    tb.run_until(60_000.0).unwrap();
    (tb.deliveries(), tb.sim().report(site).unwrap())
}

fn started(d: &[Delivery], job: u64) -> Option<f64> {
    d.iter().find(|d| matches!(d.msg, Msg::Job(JobMsg::Started { job: j }) if j == job)).map(|d| d.at)
}

#[test]
fn test_a_node_idle_until_a_use_ten_hours_ahead_is_switched_off_and_booted_for_it() {
    // The second node's next use is at 36,720, 10 h after it goes idle at 720: it shuts down 720..750, stays off,
    // boots from 36,600 (its boot of 120 s before the use) and the external request starts on time.
    let (d, report) = idle_until_planned(36_600.0, SwitchOff::Idle);
    assert_eq!(started(&d, 3), Some(36_720.0), "the planned start is not delayed");
    let m = &report.metrics;
    assert_eq!(metric(m, "nodes_switched_on"), 3.0, "two on demand, one booted for its planned use");
    // Both nodes draw until the external request ends at 46,720 and they shut down, 46,750; the second one not
    // from 750 to 36,600.
    let drawn = 117.0 * (46_750.0 + 750.0 + (46_750.0 - 36_600.0));
    assert!((metric(m, "node_energy") - drawn / 3.6e6).abs() < 1e-9, "{}", metric(m, "node_energy"));
    // The leases are booked their VM-seconds; the rest is idle energy.
    let booked: f64 = report.metered.iter().map(|l| l.energy).sum();
    let leases = 117.0 * (36_600.0 + 600.0 + 2.0 * 10_000.0);
    assert!((booked - leases / 3.6e6).abs() < 1e-9);
    assert!((metric(m, "node_idle_energy") - (drawn - leases) / 3.6e6).abs() < 1e-9);
    // Idle: 120 s of boot on each node at the start, 30 s of shutdown at 720, 120 s of boot at 36,600 and 30 s of
    // shutdown of each node at the end.
    assert!((drawn - leases - 117.0 * (2.0 * 120.0 + 30.0 + 120.0 + 2.0 * 30.0)).abs() < 1e-6);

    // Switched off only when nothing is planned on it for the rest of the schedule, it idles on until 36,720.
    let (d, report) = idle_until_planned(36_600.0, SwitchOff::Unscheduled);
    assert_eq!(started(&d, 3), Some(36_720.0));
    assert_eq!(metric(&report.metrics, "nodes_switched_on"), 2.0);
    assert!((metric(&report.metrics, "node_energy") - 117.0 * 2.0 * 46_750.0 / 3.6e6).abs() < 1e-9);
}

#[test]
fn test_a_node_idle_until_a_use_sixty_seconds_ahead_stays_on() {
    // The next use is at 780, 60 s after 720: less than the shutdown and boot delays (150 s), so the node stays on.
    // Both are switched off when the external request ends at 10,780 (not at the next periodic check, 10,800).
    let (d, report) = idle_until_planned(660.0, SwitchOff::Idle);
    assert_eq!(started(&d, 3), Some(780.0));
    assert_eq!(metric(&report.metrics, "nodes_switched_on"), 2.0);
    assert!((metric(&report.metrics, "node_energy") - 117.0 * 2.0 * 10_810.0 / 3.6e6).abs() < 1e-9);
}

/// One external request of 2 VMs and 1,000 s at t = 0 on a switched-off 4-node cluster (SESP switches two nodes on
/// for it at 5,400 s, when V reaches 1), then a local request of 2 VMs and 1,000 s at 6,000 s; the deliveries until
/// 30,000 s and the metrics.
fn local_after_a_starving_external(policy: EnergyPolicy) -> (Vec<Delivery>, Vec<(&'static str, f64)>) {
    let mut tb = TestBed::new(1);
    let site = tb.agent("site", "provider", cluster(4, policy, 0.0));
    tb.probe("igg"); // AgentId(1)
    tb.probe("local-user"); // AgentId(2)
    tb.inject(0.0, "igg", "site", lease(1, 1, 2, 1000.0, LeaseType::Suspendable));
    tb.inject(6000.0, "local-user", "site", lease(2, 2, 2, 1000.0, LeaseType::Local));
    tb.run_until(30_000.0).unwrap();
    (tb.deliveries(), tb.sim().report(site).unwrap().metrics)
}

#[test]
fn test_sesp_below_the_violation_threshold_preempts_for_a_local_request_instead_of_switching_on() {
    // At 6,000 s nothing waits (V = 0 < 1): SESP switches nodes on for a request only when V ≥ 1 (Amini Salehi
    // 2012, §6.4.1); otherwise the switched-on nodes are "adequate to serve" the local request by preempting the
    // external lease on them (§6.3.2), so no node is switched on beyond the two of 5,400 s.
    let (d, m) = local_after_a_starving_external(EnergyPolicy::Sesp);
    assert_eq!(started(&d, 1), Some(5400.0));
    assert_eq!(started(&d, 2), Some(6000.0));
    assert_eq!(at(&d, "lease.preempted"), Some(6000.0));
    assert_eq!(metric(&m, "nodes_switched_on"), 2.0);
    // GESP never preempts for it: it switches on the local request's two nodes (none for the external one, which only
    // uses what local requests leave switched on).
    let (d, m) = local_after_a_starving_external(EnergyPolicy::Gesp);
    assert_eq!(started(&d, 2), Some(6000.0));
    assert_eq!(at(&d, "lease.preempted"), None);
    assert_eq!(metric(&m, "nodes_switched_on"), 2.0);
}

/// Eight nodes under `policy` and `rule`: a local request of 8 VMs from 0 to 1,000 s switches them all on; external
/// leases A (4 VMs, 10,000 s) and B (2 VMs, 4,000 s) arrive at 1 and start at 1,000; W (4 VMs, 3,000 s) arrives at 2
/// and is planned when B ends, at 5,000, on B's two nodes and the two idle ones. The deliveries until 100,000 s and
/// the report.
fn reserved_on_idle_nodes(policy: EnergyPolicy, rule: SwitchOff) -> (Vec<Delivery>, agents::report::Report) {
    let energy = EnergyConfig { policy, switch_off: rule, ..Default::default() };
    let mut tb = TestBed::new(1);
    let site = tb.agent("site", "provider", cluster_with(8, energy, CancelledLeases::Restart));
    tb.probe("igg"); // AgentId(1)
    tb.probe("local-user"); // AgentId(2)
    tb.inject(0.0, "local-user", "site", lease(1, 2, 8, 1000.0, LeaseType::Local));
    tb.inject(1.0, "igg", "site", lease(2, 1, 4, 10_000.0, LeaseType::Suspendable));
    tb.inject(1.0, "igg", "site", lease(3, 1, 2, 4_000.0, LeaseType::Suspendable));
    tb.inject(2.0, "igg", "site", lease(4, 1, 4, 3_000.0, LeaseType::Suspendable));
    tb.run_until(100_000.0).unwrap();
    (tb.deliveries(), tb.sim().report(site).unwrap())
}

#[test]
fn test_consolidation_under_the_literal_rule_switches_off_nodes_with_a_future_reservation_and_replans_it() {
    let (d, report) = reserved_on_idle_nodes(EnergyPolicy::Pemp, SwitchOff::Unscheduled);
    let m = &report.metrics;
    let powered = &report.series.iter().find(|s| s.0 == "powered_nodes").expect("the powered series").1;
    // At the check of 1,200 s (V = 0.08, C = 0.61: consolidate) two idle nodes hold W's reservation from 5,000:
    // under "unscheduled" they may not go off, so consolidation takes W off them (planned anew behind A on the six
    // nodes left on) and switches them off, without suspending A or B.
    assert_eq!(powered.at(1_200.0), 6.0, "{powered:?}");
    assert_eq!(at(&d, "lease.preempted"), None, "a planned lease is not told: its VMs do not exist yet");
    assert_eq!(metric(m, "consolidated_leases"), 0.0);
    assert_eq!(metric(m, "consolidation_replanned"), 3.0, "W, taken out again at two later checks");
    assert_eq!(started(&d, 2), Some(1_000.0));
    assert_eq!(started(&d, 3), Some(1_000.0));
    // PEMP switches nodes back on as W's risk grows; W starts at 5,400 rather than 5,000: its reservation was
    // preempted, which the scheduler's guarantees allow (no violation of conservative backfilling).
    assert_eq!(started(&d, 4), Some(5_400.0));
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    // The nodes drew 70,800 node-seconds (8 × 1,200 + 6 × 1,800 + 8 × 600 + 6 × 600 + 8 × 600 + 6 × 200 + 4 × 400 +
    // 8 × 3,000 + 4 × 2,600), where SESP keeps all eight on until W ends at 8,000 (76,000 node-seconds); each lease
    // is booked its VM-seconds, the rest is idle.
    let kwh = |node_seconds: f64| 117.0 * node_seconds / 3.6e6;
    assert!((metric(m, "node_energy") - kwh(70_800.0)).abs() < 1e-9, "{}", metric(m, "node_energy"));
    let (_, sesp) = reserved_on_idle_nodes(EnergyPolicy::Sesp, SwitchOff::Unscheduled);
    assert!((metric(&sesp.metrics, "node_energy") - kwh(76_000.0)).abs() < 1e-9);
    let booked = |r: &agents::report::Report, job: u64| r.metered.iter().find(|l| l.job == job).map(|l| l.energy);
    for (job, vm_seconds) in [(1, 8_000.0), (2, 40_000.0), (3, 8_000.0), (4, 12_000.0)] {
        assert!((booked(&report, job).unwrap() - kwh(vm_seconds)).abs() < 1e-9, "lease {job}");
        assert_eq!(booked(&report, job), booked(&sesp, job));
    }
    assert!((metric(m, "node_idle_energy") - kwh(70_800.0 - 68_000.0)).abs() < 1e-9);
    // Under "idle" the two nodes are off until W's use anyway: nothing to re-plan.
    let (_, idle) = reserved_on_idle_nodes(EnergyPolicy::Pemp, SwitchOff::Idle);
    assert_eq!(metric(&idle.metrics, "consolidation_replanned"), 0.0);
}

#[test]
fn test_the_energy_window_counts_what_the_nodes_drew_before_its_end() {
    // A local request of 4 VMs and 3,600 s at 100 on a switched-off cluster, nodes booting in 120 s: four nodes draw
    // from 100 to 3,820.
    let window = |end: f64| {
        let power = PowerConfig { watts: 117.0, boot: 120.0, shutdown: 0.0 };
        let energy = EnergyConfig { power, window: Some(end), ..Default::default() };
        let mut tb = TestBed::new(1);
        let site = tb.agent("site", "provider", cluster_with(8, energy, CancelledLeases::Restart));
        tb.probe("local-user");
        tb.inject(100.0, "local-user", "site", lease(1, 1, 4, 3600.0, LeaseType::Local));
        tb.run_to_quiescence().unwrap();
        let m = tb.sim().report(site).unwrap().metrics;
        (metric(&m, "node_energy_window"), metric(&m, "node_energy"))
    };
    let kwh = |node_seconds: f64| 117.0 * node_seconds / 3.6e6;
    // Ended inside the run: from 100 to 2,000 (taken at the first event after it, a periodic check).
    let (inside, whole) = window(2_000.0);
    assert!((inside - kwh(4.0 * 1_900.0)).abs() < 1e-9, "{inside}");
    assert!((whole - kwh(4.0 * 3_720.0)).abs() < 1e-9);
    // Ending after the run: all of it.
    let (after, whole) = window(10_000.0);
    assert!((after - kwh(4.0 * 3_720.0)).abs() < 1e-9, "{after}");
    assert_eq!(after, whole);
}

/// Three nodes under PEMP and the literal rule: a local request of 3 VMs from 0 to 1,000 s switches them all on;
/// external leases S (1 VM, 10,000 s) and L (2 VMs, 400 s) start at 1,000; W (3 VMs, 3,000 s) waits, planned at
/// 11,000. The report at `until`.
fn one_lease_suffices(until: f64) -> agents::report::Report {
    let energy = EnergyConfig { policy: EnergyPolicy::Pemp, switch_off: SwitchOff::Unscheduled, ..Default::default() };
    let mut tb = TestBed::new(1);
    let site = tb.agent("site", "provider", cluster_with(3, energy, CancelledLeases::Restart));
    tb.probe("igg");
    tb.probe("local-user");
    tb.inject(0.0, "local-user", "site", lease(1, 2, 3, 1000.0, LeaseType::Local));
    tb.inject(1.0, "igg", "site", lease(2, 1, 1, 10_000.0, LeaseType::Suspendable));
    tb.inject(1.0, "igg", "site", lease(3, 1, 2, 400.0, LeaseType::Suspendable));
    tb.inject(2.0, "igg", "site", lease(4, 1, 3, 3_000.0, LeaseType::Suspendable));
    tb.run_until(until).unwrap();
    tb.sim().report(site).unwrap()
}

#[test]
fn test_consolidation_under_the_literal_rule_takes_out_only_the_leases_its_nodes_need() {
    // At the check of 1,200 s (V = 0.08, C = 0.35: consolidate 2 of W's 3 nodes) no node is free: S is taken out
    // first (fewest VMs), then L, then W (planned on every node from 11,000). Taking out L and W alone frees the two
    // nodes, so S keeps running; only L is suspended.
    let report = one_lease_suffices(1_300.0);
    let m = &report.metrics;
    let powered = &report.series.iter().find(|s| s.0 == "powered_nodes").expect("the powered series").1;
    assert_eq!(powered.at(1_200.0), 1.0, "{powered:?}");
    assert_eq!(metric(m, "consolidated_leases"), 1.0, "L only, not S");
    assert_eq!(metric(m, "consolidation_replanned"), 1.0, "W");
    assert!(report.violations.is_empty(), "{:?}", report.violations);
}

/// On a switched-off 6-node cluster under SESP with no gateway: a local request of 2 VMs and 500 s at 0, an external
/// migratable lease of 2 VMs and 100 s at 10 that must end by 750 s (planned on the local request's nodes at 500),
/// then a local request of 4 VMs and 1,000 s at 550.
fn local_beside_a_lease_with_a_deadline() -> (Vec<Delivery>, Vec<(&'static str, f64)>) {
    let mut tb = TestBed::new(1);
    let site = tb.agent("site", "provider", cluster(6, EnergyPolicy::Sesp, 0.0));
    tb.probe("igg"); // AgentId(1)
    tb.probe("local-user"); // AgentId(2)
    tb.inject(0.0, "local-user", "site", lease(1, 2, 2, 500.0, LeaseType::Local));
    let deadline = Some(SimTime::new(750.0).unwrap());
    let spec = JobSpec { lease: Some(LeaseType::Migratable), deadline, ..JobSpec::new(2, AgentId(1), 2, 100.0) };
    tb.inject(10.0, "igg", "site", Msg::Job(JobMsg::Submit(Box::new(spec))));
    tb.inject(550.0, "local-user", "site", lease(3, 2, 4, 1000.0, LeaseType::Local));
    tb.run_until(5_000.0).unwrap();
    (tb.deliveries(), tb.sim().report(site).unwrap().metrics)
}

#[test]
fn test_a_local_request_beside_a_lease_that_may_not_be_preempted_is_served_by_switching_nodes_on() {
    let (d, m) = local_beside_a_lease_with_a_deadline();
    // At 550 SESP (V = 0) would preempt external leases before switching nodes on, but the running lease may not be
    // preempted (it would miss its deadline, and no gateway can move it): the 4 nodes the request lacks are
    // switched on, not 2 on the assumption that preempting the lease frees the other 2 (which refused the request).
    assert_eq!(started(&d, 2), Some(500.0));
    assert_eq!(started(&d, 3), Some(550.0));
    assert!(!d.iter().any(|d| d.msg.kind() == "lease.preempted"));
    let completed = d.iter().find(|d| matches!(d.msg, Msg::Job(JobMsg::Completed { job: 2, .. }))).map(|d| d.at);
    assert_eq!(completed, Some(600.0), "the lease with the deadline completes in time");
    assert_eq!(metric(&m, "nodes_switched_on"), 6.0);
    assert_eq!(metric(&m, "local_rejected"), 0.0);
}

/// A local request of 4 VMs and 3,600 s made at 0 to start at 10,000 on a switched-off 8-node cluster under
/// `policy`, nodes booting in 120 s and switched off by `rule`, beside an external request of 2 VMs and 1,000 s
/// made at 0 if `external`; the deliveries and the metrics.
fn local_made_ahead(
    policy: EnergyPolicy,
    rule: SwitchOff,
    external: bool,
) -> (Vec<Delivery>, Vec<(&'static str, f64)>) {
    let mut tb = TestBed::new(1);
    let power = PowerConfig { watts: 117.0, boot: 120.0, shutdown: 0.0 };
    let energy = EnergyConfig { policy, power, switch_off: rule, ..Default::default() };
    let site = tb.agent("site", "provider", cluster_with(8, energy, CancelledLeases::Restart));
    tb.probe("local-user"); // AgentId(1)
    tb.probe("igg"); // AgentId(2)
    tb.inject(0.0, "local-user", "site", local_ahead(1, 1, 4, 3600.0, 10_000.0));
    if external {
        tb.inject(0.0, "igg", "site", lease(2, 2, 2, 1000.0, LeaseType::Suspendable));
    }
    tb.run_until(50_000.0).unwrap();
    (tb.deliveries(), tb.sim().report(site).unwrap().metrics)
}

#[test]
fn test_nodes_for_a_local_request_made_ahead_boot_to_be_ready_at_its_start() {
    let kwh = |node_seconds: f64| node_seconds * 117.0 / 3.6e6;
    // Nothing to preempt: PEMP decides when the request is made to switch on the four nodes its window lacks; they
    // stay off until 9,880 and boot to be ready at 10,000, by either rule (a node switched on at 0 would be idle, or
    // scheduled, for a day).
    for rule in [SwitchOff::Idle, SwitchOff::Unscheduled] {
        let (d, m) = local_made_ahead(EnergyPolicy::Pemp, rule, false);
        assert_eq!(at(&d, "job.accepted"), Some(0.0), "{rule:?}");
        assert_eq!(at(&d, "job.started"), Some(10_000.0), "{rule:?}");
        assert_eq!(at(&d, "job.completed"), Some(13_600.0), "{rule:?}");
        assert_eq!(metric(&m, "nodes_switched_on"), 4.0, "{rule:?}");
        assert!((metric(&m, "node_energy") - kwh(4.0 * 3720.0)).abs() < 1e-9, "{rule:?}");
        assert!((metric(&m, "node_idle_energy") - kwh(4.0 * 120.0)).abs() < 1e-9, "{rule:?}");
    }
}

#[test]
fn test_gesp_leaves_an_external_request_nothing_before_a_local_request_made_ahead() {
    // GESP switches on only the local request's four nodes, for its window: the external request waiting since 0
    // gets no node before 10,000, and none after (they go off at 13,600).
    let (d, m) = local_made_ahead(EnergyPolicy::Gesp, SwitchOff::Idle, true);
    assert_eq!(started(&d, 1), Some(10_000.0));
    assert_eq!(started(&d, 2), None);
    assert_eq!(metric(&m, "nodes_switched_on"), 4.0);
    // PEMP serves it once its wait makes the violation risk high (switching on two more nodes, at a periodic check).
    let (d, _) = local_made_ahead(EnergyPolicy::Pemp, SwitchOff::Idle, true);
    assert_eq!(started(&d, 1), Some(10_000.0));
    assert!(started(&d, 2).is_some_and(|t| t < 10_000.0), "{:?}", started(&d, 2));
}

#[test]
fn test_a_local_request_whose_free_nodes_are_reserved_later_in_its_window_switches_more_on() {
    // Literal rule, 8 nodes booting at once. Local 1 (4 VMs) runs over [0, 500); local 2, made at 0, reserves 4 VMs
    // from 1,000, on the nodes local 1 frees, which stay on, scheduled. Local 3 (4 VMs, 1,000 s) arrives at 600: the
    // 4 free nodes are taken from 1,000 and nothing can be preempted, so the 4 off nodes are switched on for it.
    let mut tb = TestBed::new(1);
    let power = PowerConfig { watts: 117.0, boot: 0.0, shutdown: 0.0 };
    let energy =
        EnergyConfig { policy: EnergyPolicy::Pemp, power, switch_off: SwitchOff::Unscheduled, ..Default::default() };
    let site = tb.agent("site", "provider", cluster_with(8, energy, CancelledLeases::Restart));
    tb.probe("local-user"); // AgentId(1)
    tb.inject(0.0, "local-user", "site", lease(1, 1, 4, 500.0, LeaseType::Local));
    tb.inject(0.0, "local-user", "site", local_ahead(2, 1, 4, 3600.0, 1000.0));
    tb.inject(600.0, "local-user", "site", lease(3, 1, 4, 1000.0, LeaseType::Local));
    tb.run_to_quiescence().unwrap();
    let d = tb.deliveries();
    assert_eq!(started(&d, 2), Some(1000.0));
    assert_eq!(started(&d, 3), Some(600.0));
    let m = tb.sim().report(site).unwrap().metrics;
    assert_eq!(metric(&m, "local_rejected"), 0.0);
    assert_eq!(metric(&m, "nodes_switched_on"), 8.0);
}
