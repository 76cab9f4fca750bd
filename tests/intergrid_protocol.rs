//! Message-level tests of the InterGrid gateway's dispatch policies (Amini Salehi 2012, ch4) on the test bed: PAP
//! fractions with RTDP's billiard sequence per request type, and RND.

use agents::gateway::dispatch::Billiard;
use agents::gateway::pap;
use agents::gateway::{
    Allocation, Dispatch, Gateway, GatewayPolicy, QueueModel, RequestStats, ServiceUnits, Statistics,
};
use agents::protocol::{JobMsg, JobSpec, LeaseType, Msg};
use agents::provider::ProviderInfo;
use agents::testbed::TestBed;

/// The chapter's three clusters as the gateway sees them (64, 128 and 256 PEs at 2000, 3000 and 2100 MIPS, speeds
/// relative to 2000 MIPS), each a probe recording what it receives.
fn clusters(tb: &mut TestBed) -> Vec<ProviderInfo> {
    [("c64", 64, 1.0), ("c128", 128, 1.5), ("c256", 256, 1.05)]
        .map(|(name, pes, speed)| ProviderInfo { id: tb.probe(name), pes, speed, price: 0.0 })
        .to_vec()
}

fn model() -> QueueModel {
    let local = |rate, vms, duration| RequestStats { rate, vms, duration };
    QueueModel {
        external: RequestStats { rate: 0.15, vms: 5.0, duration: 420.0 },
        locals: vec![local(0.01, 3.08, 629.0), local(0.012, 5.65, 893.0), local(0.017, 10.71, 1038.0)],
        external_cv: pap::EXTERNAL_CV,
        local_cv: pap::LOCAL_CV,
        units: ServiceUnits::Seconds,
    }
}

const TYPES: [LeaseType; 4] =
    [LeaseType::Cancellable, LeaseType::Suspendable, LeaseType::Migratable, LeaseType::NonPreemptable];

/// Sends `n` external requests of one VM, their types in turn, one a second; returns (request, type, cluster).
fn dispatch(policy: GatewayPolicy, n: u64) -> (Vec<(u64, LeaseType, String)>, Vec<ProviderInfo>) {
    let mut tb = TestBed::new(7);
    let infos = clusters(&mut tb);
    tb.agent("igg", "gateway", Gateway::with_policy(infos.clone(), policy));
    let user = tb.probe("user");
    for i in 0..n {
        let spec = JobSpec { lease: Some(TYPES[i as usize % 4]), ..JobSpec::new(i + 1, user, 1, 100.0) };
        tb.inject(i as f64, "user", "igg", Msg::Job(JobMsg::Submit(Box::new(spec))));
    }
    tb.run_to_quiescence().unwrap();
    let sent = tb
        .deliveries()
        .into_iter()
        .filter(|d| d.from == "igg")
        .filter_map(|d| match d.msg {
            Msg::Job(JobMsg::Submit(j)) => Some((j.id, j.lease.unwrap(), d.to)),
            _ => None,
        })
        .collect();
    (sent, infos)
}

#[test]
fn test_pap_rtdp_follows_one_billiard_sequence_per_type_and_mixes_types() {
    let policy = GatewayPolicy {
        allocation: Allocation::Pap,
        dispatch: Dispatch::Rtdp,
        statistics: Statistics::Configured,
        model: Some(model()),
    };
    let (sent, infos) = dispatch(policy, 80);
    assert_eq!(sent.len(), 80);
    let loads = model().clusters(&infos, &model().external);
    let fractions = pap::pap(&loads, 0.15).unwrap().fractions();
    assert!(fractions.iter().all(|p| *p > 0.0), "{fractions:?}");
    let names = ["c64", "c128", "c256"];
    for ty in TYPES {
        // The fastest cluster (most PEs × speed: c256) starts with X = 1.
        let mut billiard = Billiard::new(3, 2);
        let got: Vec<&str> = sent.iter().filter(|s| s.1 == ty).map(|s| s.2.as_str()).collect();
        let want: Vec<&str> = (0..got.len()).map(|_| names[billiard.next(&fractions, |_| true).unwrap()]).collect();
        assert_eq!(got, want, "{ty:?}");
        assert_ne!(got[0], "c256", "X = 1 delays the fastest cluster");
    }
    // Every cluster receives a mixture of the four types.
    for name in names {
        let types: std::collections::BTreeSet<String> =
            sent.iter().filter(|s| s.2 == name).map(|s| format!("{:?}", s.1)).collect();
        assert_eq!(types.len(), 4, "{name} receives {types:?}");
    }
}

#[test]
fn test_rnd_draws_by_the_fractions_and_bcf_favours_the_biggest_cluster() {
    let policy = GatewayPolicy { allocation: Allocation::Bcf, dispatch: Dispatch::Rnd, ..GatewayPolicy::default() };
    let (sent, _) = dispatch(policy, 400);
    let share = |name: &str| sent.iter().filter(|s| s.2 == name).count() as f64 / 400.0;
    // BCF: 64 : 192 : 268.8 of the computing power, i.e. 0.122, 0.366, 0.512; SE ≤ 0.025, bands of 4 SE.
    assert!((share("c64") - 0.122).abs() < 0.1, "{}", share("c64"));
    assert!((share("c256") - 0.512).abs() < 0.1, "{}", share("c256"));
    // The same seed draws the same sequence.
    let again = GatewayPolicy { allocation: Allocation::Bcf, dispatch: Dispatch::Rnd, ..GatewayPolicy::default() };
    assert_eq!(dispatch(again, 400).0, sent);
}
