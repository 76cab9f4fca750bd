//! Message-level tests of matchmaking under limited knowledge (Melendez 2010): the Combined strategy, where the
//! transparent broker refuses a request, forwards it, and the AS-based broker places it on an opaque resource where
//! it completes before its deadline; Next Fit; malformed requests.

use agents::cpu_resource::CpuResource;
use agents::directory::ResourceDirectory;
use agents::matchmaker::{Matchmaker, Test};
use agents::matchmaking::{Allocation, LocalPolicy, Request};
use agents::protocol::{MatchMsg, Msg};
use agents::sim::AgentId;
use agents::testbed::{TestBed, expect};

fn metric(tb: &mut TestBed, id: AgentId, key: &str) -> f64 {
    tb.sim().report(id).unwrap().metric(key).unwrap_or_else(|| panic!("no metric {key}"))
}

/// An AR arriving at `a` with earliest start `a`, service `e` and deadline `d`.
fn ar(id: u64, source: AgentId, a: f64, e: f64, d: f64) -> Msg {
    let r =
        Request { id, source, on_demand: false, arrival: a, start: a, service: e, deadline: d, rewrite_laxity: 0.0 };
    Msg::Match(MatchMsg::Submit(Box::new(r)))
}

#[test]
fn combined_strategy_the_transparent_broker_refuses_the_opaque_broker_places() {
    let mut tb = TestBed::new(1);
    let gis = tb.agent("gis", "directory", ResourceDirectory::default());
    let t = tb.agent("t", "cpu-resource", CpuResource::new(gis, LocalPolicy::Edf, true));
    let o = tb.agent("o", "cpu-resource", CpuResource::new(gis, LocalPolicy::Edf, false));
    let ob = tb.agent(
        "ob",
        "as-broker",
        Matchmaker::new(Test::AnySchedulability { incremental: false }, Allocation::FirstFit, (gis, false), None),
    );
    let tr = tb.agent(
        "tb",
        "transparent-broker",
        Matchmaker::new(Test::Transparent, Allocation::FirstFit, (gis, true), Some(ob)),
    );
    let user = tb.probe("user");
    // R1 takes t over [1, 101); R2 (D = 150) cannot follow it there, but fits the idle opaque resource.
    tb.inject(1.0, "user", "tb", ar(1, user, 1.0, 100.0, 160.0));
    tb.inject(2.0, "user", "tb", ar(2, user, 2.0, 100.0, 150.0));
    tb.run_to_quiescence().unwrap();
    tb.assert_in_order(&[
        expect("match.register").from("t").to("gis").at(0.0),
        expect("match.register").from("o").to("gis").at(0.0),
        expect("match.list_resources").from("tb").to("gis").at(1.0),
        expect("match.get_state").from("tb").to("t").at(1.0),
        expect("match.assign").from("tb").to("t").at(1.0),
        expect("match.accepted").from("tb").to("user").at(1.0),
        expect("match.get_state").from("tb").to("t").at(2.0),
        expect("match.state").from("t").to("tb").at(2.0),
        expect("match.submit").from("tb").to("ob").at(2.0),
        expect("match.list_resources").from("ob").to("gis").at(2.0),
        expect("match.get_state").from("ob").to("o").at(2.0),
        expect("match.assign").from("ob").to("o").at(2.0),
        expect("match.scheduled").from("o").to("ob").at(2.0),
        expect("match.accepted")
            .from("ob")
            .to("user")
            .at(2.0)
            .msg(Msg::Match(MatchMsg::Accepted { request: 2, resource: o })),
        expect("match.completed").from("t").to("user").at(101.0),
        expect("match.completed").from("o").to("user").at(102.0),
    ]);
    tb.assert_none(&expect("match.assign").from("tb").to("o"));
    tb.assert_none(&expect("match.rejected"));
    assert_eq!(metric(&mut tb, tr, "forwarded"), 1.0);
    assert_eq!(metric(&mut tb, tr, "blocking"), 0.5);
    assert_eq!(metric(&mut tb, ob, "accepted"), 1.0);
    assert_eq!(metric(&mut tb, t, "deadline_misses"), 0.0);
    assert_eq!(metric(&mut tb, o, "deadline_misses"), 0.0);
    assert_eq!(metric(&mut tb, o, "refused_after_acceptance"), 0.0);
}

#[test]
fn next_fit_starts_after_the_resource_last_assigned_and_first_fit_does_not() {
    for (allocation, second) in [(Allocation::FirstFit, "r-0"), (Allocation::NextFit, "r-1")] {
        let mut tb = TestBed::new(1);
        let gis = tb.agent("gis", "directory", ResourceDirectory::default());
        tb.agent("r-0", "cpu-resource", CpuResource::new(gis, LocalPolicy::Edf, false));
        tb.agent("r-1", "cpu-resource", CpuResource::new(gis, LocalPolicy::Edf, false));
        tb.agent(
            "as",
            "as-broker",
            Matchmaker::new(Test::AnySchedulability { incremental: true }, allocation, (gis, false), None),
        );
        let user = tb.probe("user");
        // Two short requests with wide windows: both fit r-0.
        tb.inject(1.0, "user", "as", ar(1, user, 1.0, 10.0, 1000.0));
        tb.inject(2.0, "user", "as", ar(2, user, 500.0, 10.0, 1000.0));
        tb.run_to_quiescence().unwrap();
        tb.assert_in_order(&[
            expect("match.assign").from("as").to("r-0").at(1.0),
            expect("match.assign").from("as").to(second).at(2.0),
        ]);
    }
}

#[test]
fn a_malformed_request_is_rejected_without_asking_any_resource() {
    let mut tb = TestBed::new(1);
    let gis = tb.agent("gis", "directory", ResourceDirectory::default());
    tb.agent("r", "cpu-resource", CpuResource::new(gis, LocalPolicy::Edf, false));
    let b = tb.agent(
        "as",
        "as-broker",
        Matchmaker::new(Test::AnySchedulability { incremental: false }, Allocation::FirstFit, (gis, false), None),
    );
    let user = tb.probe("user");
    tb.inject(1.0, "user", "as", ar(1, user, 1.0, 100.0, 101.0)); // laxity 0
    tb.inject(2.0, "user", "as", ar(2, user, 2.0, 0.0, 50.0)); // no service time
    tb.run_to_quiescence().unwrap();
    tb.assert_in_order(&[
        expect("match.rejected").from("as").to("user").at(1.0).msg(Msg::Match(MatchMsg::Rejected {
            request: 1,
            reason: "request 1: laxity D − S − E = 0 s, expected more than 0".into(),
        })),
        expect("match.rejected").from("as").to("user").at(2.0).msg(Msg::Match(MatchMsg::Rejected {
            request: 2,
            reason: "request 2: service time 0 s, expected more than 0".into(),
        })),
    ]);
    tb.assert_none(&expect("match.get_state"));
    assert_eq!(metric(&mut tb, b, "malformed"), 2.0);
}
