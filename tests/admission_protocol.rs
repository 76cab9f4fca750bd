//! Message-level tests of admission control (Amini Salehi, Javadi & Buyya): a provider under PACP with K = 2 refuses
//! a third external request, which goes back to the gateway; the gateway rejects it for good, or re-routes it to the
//! next cluster.

use agents::gateway::{Dispatch, Gateway};
use agents::protocol::{JobMsg, JobSpec, Msg};
use agents::provider::admission::{AdmissionConfig, AdmissionPolicy};
use agents::provider::overhead::OverheadModel;
use agents::provider::preemption::PreemptionPolicy;
use agents::provider::scheduler::{Partitioning, SchedulerPolicy};
use agents::provider::{CancelledLeases, MoldedDeadline, Provider, ProviderConfig, ProviderInfo};
use agents::sim::AgentId;
use agents::testbed::{TestBed, expect};

fn provider(pes: u32) -> Provider {
    Provider::new(ProviderConfig {
        pes,
        speed: 1.0,
        price: 0.0,
        scheduler: SchedulerPolicy::Fcfs,
        partitioning: Partitioning::default(),
        preemption: PreemptionPolicy::Nop,
        overhead: OverheadModel::default(),
        vm_memory_mb: 1024.0,
        cancelled: CancelledLeases::Restart,
        preemptive_priority: true,
    })
}

fn metric(tb: &mut TestBed, id: AgentId, key: &str) -> f64 {
    tb.sim().report(id).unwrap().metric(key).unwrap_or_else(|| panic!("no metric {key}"))
}

/// Cluster "a" (PACP, K = 2) and "b" (CACP) behind gateway "igg"; the gateway forwards three external requests of
/// 100 s to "a" at t = 1, 2, 3 (injected as its sends, so that round robin does not spread them).
fn prepare(reroute: bool) -> (TestBed, [AgentId; 4]) {
    let mut tb = TestBed::new(1);
    let pacp = AdmissionConfig { capacity: Some(2), ..AdmissionConfig::new(AdmissionPolicy::Pacp) };
    let a = tb.agent("a", "provider", provider(4).with_admission(pacp).moldable(MoldedDeadline::Scaled));
    let b = tb.agent("b", "provider", provider(4).with_admission(AdmissionConfig::new(AdmissionPolicy::Cacp)));
    let info = |id| ProviderInfo { id, pes: 4, speed: 1.0, price: 0.0 };
    let gateway = Gateway::new(vec![info(a), info(b)], Dispatch::RoundRobin);
    let igg = tb.agent("igg", "gateway", if reroute { gateway.rerouting() } else { gateway });
    let user = tb.probe("user");
    for id in 1..=3u64 {
        let job = JobSpec::new(id, user, 1, 100.0);
        tb.inject(id as f64, "igg", "a", Msg::Job(JobMsg::Submit(Box::new(job))));
    }
    tb.run_to_quiescence().unwrap();
    (tb, [a, b, igg, user])
}

#[test]
fn test_pacp_refuses_the_third_request_and_the_gateway_rejects_it() {
    let (mut tb, [a, _, igg, user]) = prepare(false);
    let reason = "admission control (PACP): 2 external requests held, K = 2";
    tb.assert_in_order(&[
        expect("job.accepted").from("a").to("user").at(1.0),
        expect("job.accepted").from("a").to("user").at(2.0),
        // Back to the gateway as it was submitted (1 PE, not molded to the cluster's 4), with the reason.
        expect("job.refused")
            .from("a")
            .to("igg")
            .at(3.0)
            .msg(Msg::Job(JobMsg::Refused { job: Box::new(JobSpec::new(3, user, 1, 100.0)), reason: reason.into() })),
        expect("job.rejected")
            .from("igg")
            .to("user")
            .at(3.0)
            .msg(Msg::Job(JobMsg::Rejected { job: 3, reason: reason.into() })),
    ]);
    tb.assert_none(&expect("job.reoffer").from("igg").to("b"));
    assert_eq!(metric(&mut tb, igg, "admission_refusals"), 1.0);
    assert_eq!(metric(&mut tb, igg, "admission_rejected"), 1.0);
    assert_eq!(metric(&mut tb, igg, "reroutes_open"), 0.0);
    assert_eq!(metric(&mut tb, a, "external_requests"), 3.0);
    assert_eq!(metric(&mut tb, a, "external_refused"), 1.0);
    // Molded to the 4 PEs, each of the two runs 25 s: both complete, by no deadline.
    assert_eq!(metric(&mut tb, a, "external_completed"), 2.0);
    assert_eq!(metric(&mut tb, a, "admission_capacity"), 2.0);
}

#[test]
fn test_with_rerouting_the_next_cluster_accepts_it() {
    let (mut tb, [_, b, igg, _]) = prepare(true);
    tb.assert_in_order(&[
        expect("job.refused").from("a").to("igg").at(3.0),
        expect("job.reoffer").from("igg").to("b").at(3.0),
        expect("job.accepted").from("b").to("user").at(3.0),
        expect("job.completed").from("b").to("user").at(103.0),
    ]);
    // The gateway hears of the acceptance too, and forgets that "a" refused the request.
    tb.assert_in_order(&[expect("job.accepted").from("b").to("igg").at(3.0)]);
    tb.assert_none(&expect("job.rejected"));
    assert_eq!(metric(&mut tb, igg, "rerouted"), 1.0);
    assert_eq!(metric(&mut tb, igg, "reroutes_open"), 0.0);
    assert_eq!(metric(&mut tb, igg, "admission_rejected"), 0.0);
    assert_eq!(metric(&mut tb, b, "external_completed"), 1.0);
}

#[test]
fn test_a_freed_place_admits_again() {
    // The first two end at 26 s and 51 s (molded to 25 s each, one after the other): a fourth request at 60 s fits.
    let (mut tb, [a, _, _, user]) = prepare(false);
    tb.inject(60.0, "igg", "a", Msg::Job(JobMsg::Submit(Box::new(JobSpec::new(4, user, 1, 100.0)))));
    tb.run_to_quiescence().unwrap();
    tb.assert_in_order(&[expect("job.accepted").from("a").to("user").at(60.0)]);
    assert_eq!(metric(&mut tb, a, "external_refused"), 1.0);
}

#[test]
fn test_a_request_every_cluster_refuses_is_rejected_and_forgotten() {
    // Both clusters hold two requests under K = 2; a third, re-routed from "a" to "b", is refused there too.
    let mut tb = TestBed::new(1);
    let pacp = AdmissionConfig { capacity: Some(2), ..AdmissionConfig::new(AdmissionPolicy::Pacp) };
    let a = tb.agent("a", "provider", provider(4).with_admission(pacp));
    let b = tb.agent("b", "provider", provider(4).with_admission(pacp));
    let info = |id| ProviderInfo { id, pes: 4, speed: 1.0, price: 0.0 };
    let igg = tb.agent("igg", "gateway", Gateway::new(vec![info(a), info(b)], Dispatch::RoundRobin).rerouting());
    let user = tb.probe("user");
    for (id, to) in [(1, "a"), (2, "a"), (3, "b"), (4, "b"), (5, "a")] {
        tb.inject(id as f64, "igg", to, Msg::Job(JobMsg::Submit(Box::new(JobSpec::new(id, user, 1, 100.0)))));
    }
    tb.run_to_quiescence().unwrap();
    tb.assert_in_order(&[
        expect("job.refused").from("a").to("igg").at(5.0),
        expect("job.reoffer").from("igg").to("b").at(5.0),
        expect("job.refused").from("b").to("igg").at(5.0),
        expect("job.rejected").from("igg").to("user").at(5.0),
    ]);
    assert_eq!(metric(&mut tb, igg, "admission_refusals"), 2.0);
    assert_eq!(metric(&mut tb, igg, "admission_rejected"), 1.0);
    assert_eq!(metric(&mut tb, igg, "reroutes_open"), 0.0);
}

/// A 4-PE moldable cluster runs a 4-PE request over [1, 101), then a 1-PE request of 100 s submitted at 2 with its
/// deadline at 202 (twice its runtime), molded to 4 PEs for 25 s over [101, 126). Scaled with the molded runtime the
/// deadline is 2 + 200 / 4 = 52, missed; kept as submitted, 202, met (the first, with no deadline, counts as met).
#[test]
fn test_a_molded_request_keeps_its_submitted_deadline_when_asked() {
    for (deadline, met) in [(MoldedDeadline::Scaled, 1.0), (MoldedDeadline::Submitted, 2.0)] {
        let mut tb = TestBed::new(1);
        let a = tb.agent("a", "provider", provider(4).moldable(deadline));
        tb.agent(
            "igg",
            "gateway",
            Gateway::new(vec![ProviderInfo { id: a, pes: 4, speed: 1.0, price: 0.0 }], Dispatch::RoundRobin),
        );
        let user = tb.probe("user");
        let wide = JobSpec::new(1, user, 4, 100.0);
        let due =
            JobSpec { deadline: Some(agents::sim::SimTime::new(202.0).unwrap()), ..JobSpec::new(2, user, 1, 100.0) };
        tb.inject(1.0, "igg", "a", Msg::Job(JobMsg::Submit(Box::new(wide))));
        tb.inject(2.0, "igg", "a", Msg::Job(JobMsg::Submit(Box::new(due))));
        tb.run_to_quiescence().unwrap();
        tb.assert_in_order(&[expect("job.completed").from("a").to("user").at(126.0)]);
        assert_eq!(metric(&mut tb, a, "external_completed"), 2.0, "{deadline:?}");
        assert_eq!(metric(&mut tb, a, "external_met"), met, "{deadline:?}");
    }
}
