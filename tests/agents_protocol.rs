//! Message-level tests of the provider, user broker and gateway on the test bed: the job life cycle, refusals,
//! round-robin dispatch and the personalised brokers' SLA claims (Garg 2010, ch3).

use agents::broker::{Claims, FirstClaim, OnRefusal, Submission, UserBroker, UserJob};
use agents::gateway::{Dispatch, Gateway};
use agents::ledger::{Account, Reason};
use agents::protocol::{JobMsg, JobSpec, LeaseMsg, MarketMsg, Msg};
use agents::provider::overhead::OverheadModel;
use agents::provider::preemption::PreemptionPolicy;
use agents::provider::scheduler::{Partitioning, SchedulerPolicy};
use agents::provider::{CancelledLeases, Provider, ProviderConfig, ProviderInfo, SlaRule};
use agents::report::JobOutcome;
use agents::sim::{AgentId, Runtime, SimTime};
use agents::testbed::{TestBed, expect};

fn provider(pes: u32, speed: f64, price: f64) -> Provider {
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

fn t(secs: f64) -> SimTime {
    SimTime::new(secs).unwrap()
}

fn job(id: u64, owner: AgentId, pes: u32, runtime: f64) -> JobSpec {
    JobSpec::new(id, owner, pes, runtime)
}

/// Two 4-PE providers, "cheap" at 1 G$ and "dear" at 2 G$ per PE-second, as brokers see them.
fn cheap_and_dear(tb: &mut TestBed) -> Vec<ProviderInfo> {
    [("cheap", 1.0), ("dear", 2.0)]
        .map(|(name, price)| ProviderInfo {
            id: tb.agent(name, "provider", provider(4, 1.0, price)),
            pes: 4,
            speed: 1.0,
            price,
        })
        .to_vec()
}

fn submit(j: JobSpec) -> Msg {
    Msg::Job(JobMsg::Submit(Box::new(j)))
}

#[test]
fn test_provider_runs_queues_and_charges() {
    for rt in [Runtime::Inline, Runtime::Actix { threads: 1 }] {
        let mut tb = TestBed::new(1);
        tb.runtime(rt);
        tb.agent("site", "provider", provider(4, 2.0, 0.5));
        let user = tb.probe("user");
        // Two 4-PE jobs: the second waits for the first. Speed 2 halves the 100 s runtime.
        tb.inject(1.0, "user", "site", submit(job(1, user, 4, 100.0)));
        tb.inject(2.0, "user", "site", submit(job(2, user, 4, 100.0)));
        tb.run_to_quiescence().unwrap();
        tb.assert_exact(&[
            expect("job.submit").at(1.0),
            expect("job.accepted").to("user").at(1.0),
            expect("job.started").msg(Msg::Job(JobMsg::Started { job: 1 })).at(1.0),
            expect("job.submit").at(2.0),
            expect("job.accepted").at(2.0),
            // EASY planned job 2 for t=51 (job 1's estimated end) and asked to be woken then; job 1's end, first in
            // that instant, starts job 2 and cancels the wake-up, which is therefore not delivered.
            expect("timer.job_end").to("site").at(51.0),
            // 0.5 G$/PE-s × 4 PEs × 50 s
            expect("job.completed").msg(Msg::Job(JobMsg::Completed { job: 1, cost: 100.0 })).at(51.0),
            expect("job.started").msg(Msg::Job(JobMsg::Started { job: 2 })).at(51.0),
            expect("timer.job_end").at(101.0),
            expect("job.completed").at(101.0),
        ]);
    }
}

#[test]
fn test_provider_rejects_a_job_wider_than_the_cluster() {
    let mut tb = TestBed::new(1);
    tb.agent("site", "provider", provider(4, 1.0, 0.0));
    let user = tb.probe("user");
    tb.inject(0.0, "user", "site", submit(job(9, user, 8, 10.0)));
    tb.run_to_quiescence().unwrap();
    let d = tb.deliveries();
    assert_eq!(d.len(), 2);
    let Msg::Job(JobMsg::Rejected { job, reason }) = &d[1].msg else { panic!("{:?}", d[1]) };
    assert_eq!(*job, 9);
    assert_eq!(reason, "request needs 8 PEs but at most 4 can serve it");
}

#[test]
fn test_gateway_dispatches_round_robin_and_skips_small_sites() {
    let mut tb = TestBed::new(1);
    let a = tb.agent("a", "provider", provider(2, 1.0, 0.0));
    let b = tb.agent("b", "provider", provider(8, 1.0, 0.0));
    let info = |id, pes| ProviderInfo { id, pes, speed: 1.0, price: 0.0 };
    tb.agent("igg", "gateway", Gateway::new(vec![info(a, 2), info(b, 8)], Dispatch::RoundRobin));
    let user = tb.probe("user");
    for (i, pes) in [(1, 1), (2, 1), (3, 1), (4, 4), (5, 16)] {
        tb.inject(f64::from(i as u32), "user", "igg", submit(job(i, user, pes, 0.5)));
    }
    tb.run_to_quiescence().unwrap();
    let forwarded: Vec<(u64, String)> = tb
        .deliveries()
        .into_iter()
        .filter(|d| d.from == "igg")
        .filter_map(|d| match d.msg {
            Msg::Job(JobMsg::Submit(j)) => Some((j.id, d.to)),
            Msg::Job(JobMsg::Rejected { job, .. }) => Some((job, d.to)),
            _ => None,
        })
        .collect();
    let expected = [(1, "a"), (2, "b"), (3, "a"), (4, "b"), (5, "user")];
    assert_eq!(forwarded, expected.map(|(j, s)| (j, s.to_string())), "job 4 needs 4 PEs: only b; job 5 fits nowhere");
    // Providers answer the owner directly: the gateway is transparent.
    tb.assert_in_order(&[expect("job.started").from("b").to("user").msg(Msg::Job(JobMsg::Started { job: 4 }))]);
}

#[test]
fn test_personalised_brokers_contend_for_the_cheapest_provider() {
    for rt in [Runtime::Inline, Runtime::Actix { threads: 2 }] {
        let mut tb = TestBed::new(1);
        tb.runtime(rt);
        let infos = cheap_and_dear(&mut tb);
        // Three users submit a 4-PE job of 100 s at t=0 with a deadline of 250 s.
        for u in 0..3u64 {
            let j = JobSpec { deadline: Some(t(250.0)), ..job(u + 1, AgentId::ENV, 4, 100.0) };
            let broker = UserBroker::new(
                vec![UserJob { submit: t(0.0), spec: j }],
                Submission::Personalised {
                    providers: infos.clone(),
                    round: 50.0,
                    claims: Default::default(),
                    choice: Default::default(),
                },
            );
            tb.agent(&format!("user-{u}"), "broker", broker);
        }
        tb.run_to_quiescence().unwrap();
        // Everyone claims the cheapest first; it grants only the first claim.
        tb.assert_in_order(&[
            expect("market.sla_request").from("user-0").to("cheap").at(0.0),
            expect("market.sla_request").from("user-1").to("cheap").at(0.0),
            expect("market.sla_request").from("user-2").to("cheap").at(0.0),
            expect("market.sla_accept").to("user-0").at(0.0),
            expect("market.sla_fail").to("user-1").at(0.0),
            expect("market.sla_fail").to("user-2").at(0.0),
            // Next round (t=50) both refused users move on to the dearer provider: again one wins.
            expect("market.sla_request").from("user-1").to("dear").at(50.0),
            expect("market.sla_request").from("user-2").to("dear").at(50.0),
            expect("market.sla_accept").from("dear").to("user-1").at(50.0),
            expect("market.sla_fail").from("dear").to("user-2").at(50.0),
            expect("job.completed").from("cheap").to("user-0").at(100.0),
            // t=100: user-2 claims the cheap provider again, now free, and finishes at 200 <= 250.
            expect("market.sla_request").from("user-2").to("cheap").at(100.0),
            expect("market.sla_accept").to("user-2").at(100.0),
            expect("job.completed").to("user-2").at(200.0),
        ]);
        // The completion carries the bill: 4 PEs × 100 s at 1 G$, booked by the provider.
        tb.assert_in_order(&[expect("job.completed")
            .msg(Msg::Job(JobMsg::Completed { job: 1, cost: 400.0 }))
            .from("cheap")
            .to("user-0")]);
    }
}

#[test]
fn test_personalised_brokers_as_garg_ch3_reads() {
    for rt in [Runtime::Inline, Runtime::Actix { threads: 2 }] {
        let mut tb = TestBed::new(1);
        tb.runtime(rt);
        // Two 8-PE providers that grant only the first claim of an instant (Garg 2010 §3.6).
        let infos: Vec<ProviderInfo> = [("cheap", 1.0), ("dear", 2.0)]
            .map(|(name, price)| {
                let id = tb.agent(name, "provider", provider(8, 1.0, price).with_sla(SlaRule::First));
                ProviderInfo { id, pes: 8, speed: 1.0, price }
            })
            .to_vec();
        // Three users submit a 2-PE job of 100 s at t = 5, 10, 15; they claim at the ends of 50 s rounds, and a
        // refused one claims the lowest price again.
        let claims = Claims { first: FirstClaim::NextRound, refused: OnRefusal::Cheapest, ..Claims::default() };
        for u in 0..3u64 {
            let j = JobSpec { deadline: Some(t(1000.0)), ..job(u + 1, AgentId::ENV, 2, 100.0) };
            let submission =
                Submission::Personalised { providers: infos.clone(), round: 50.0, claims, choice: Default::default() };
            let broker = UserBroker::new(vec![UserJob { submit: t(5.0 * (u + 1) as f64), spec: j }], submission);
            tb.agent(&format!("user-{u}"), "broker", broker);
        }
        tb.run_to_quiescence().unwrap();
        // Each round the cheap provider grants one claim though PEs are left; nobody moves to the dear one.
        tb.assert_in_order(&[
            expect("market.sla_request").from("user-0").to("cheap").at(50.0),
            expect("market.sla_request").from("user-1").to("cheap").at(50.0),
            expect("market.sla_request").from("user-2").to("cheap").at(50.0),
            expect("market.sla_accept").from("cheap").to("user-0").at(50.0),
            expect("market.sla_fail").from("cheap").to("user-1").at(50.0),
            expect("market.sla_fail").from("cheap").to("user-2").at(50.0),
            expect("market.sla_request").from("user-1").to("cheap").at(100.0),
            expect("market.sla_request").from("user-2").to("cheap").at(100.0),
            expect("market.sla_accept").from("cheap").to("user-1").at(100.0),
            expect("market.sla_fail").from("cheap").to("user-2").at(100.0),
            expect("market.sla_request").from("user-2").to("cheap").at(150.0),
            expect("market.sla_accept").from("cheap").to("user-2").at(150.0),
            expect("job.completed").from("cheap").to("user-2").at(250.0),
        ]);
        tb.assert_none(&expect("market.sla_request").to("dear"));
    }
}

#[test]
fn test_personalised_broker_drops_a_job_whose_deadline_cannot_be_met() {
    let mut tb = TestBed::new(1);
    let only = tb.agent("only", "provider", provider(4, 1.0, 1.0));
    let infos = vec![ProviderInfo { id: only, pes: 4, speed: 1.0, price: 1.0 }];
    let mut users = Vec::new();
    for u in 0..2u64 {
        let j = JobSpec { deadline: Some(t(120.0)), ..job(u + 1, AgentId::ENV, 4, 100.0) };
        let b = UserBroker::new(
            vec![UserJob { submit: t(0.0), spec: j }],
            Submission::Personalised {
                providers: infos.clone(),
                round: 50.0,
                claims: Default::default(),
                choice: Default::default(),
            },
        );
        users.push(tb.agent(&format!("user-{u}"), "broker", b));
    }
    tb.run_to_quiescence().unwrap();
    // user-1 is refused at t=0; at t=50 the job would end at 150 > 120: dropped, no further claim.
    tb.assert_exact(&[
        expect("timer.submit").to("user-0").at(0.0),
        expect("timer.submit").to("user-1").at(0.0),
        expect("market.sla_request").from("user-0"),
        expect("market.sla_request").from("user-1"),
        expect("market.sla_accept").to("user-0"),
        expect("market.sla_fail").to("user-1"),
        // The provider's one queue pass of the instant starts the job once every claim is in.
        expect("job.started").to("user-0"),
        expect("timer.round").to("user-1").at(50.0),
        expect("timer.job_end").to("only").at(100.0),
        expect("job.completed").to("user-0").at(100.0),
    ]);
    let outcome =
        |tb: &mut TestBed, id| tb.sim().report(id).unwrap().jobs.iter().map(|j| (j.outcome, j.end)).collect::<Vec<_>>();
    assert_eq!(outcome(&mut tb, users[0]), vec![(JobOutcome::Completed, Some(100.0))]);
    assert_eq!(outcome(&mut tb, users[1]), vec![(JobOutcome::Dropped, Some(50.0))]);
}

#[test]
fn test_cancel_a_queued_and_a_running_job() {
    let mut tb = TestBed::new(1);
    tb.agent("site", "provider", provider(4, 1.0, 1.0));
    let user = tb.probe("user");
    tb.inject(0.0, "user", "site", submit(job(1, user, 4, 100.0)));
    tb.inject(1.0, "user", "site", submit(job(2, user, 4, 100.0)));
    tb.inject(5.0, "user", "site", Msg::Job(JobMsg::Cancel { job: 2 }));
    tb.inject(10.0, "user", "site", Msg::Job(JobMsg::Cancel { job: 1 }));
    let out = tb.run_to_quiescence().unwrap();
    tb.assert_in_order(&[
        // The queued job computed nothing; the running one is billed 4 PEs × 10 s × 1 G$.
        expect("lease.cancelled").to("user").msg(Msg::Lease(LeaseMsg::Cancelled { lease: 2, cost: 0.0 })).at(5.0),
        expect("lease.cancelled").to("user").msg(Msg::Lease(LeaseMsg::Cancelled { lease: 1, cost: 40.0 })).at(10.0),
    ]);
    // Job 1's end timer was cancelled with it, and job 2 never started.
    tb.assert_none(&expect("timer.job_end"));
    tb.assert_none(&expect("job.started").msg(Msg::Job(JobMsg::Started { job: 2 })));
    assert_eq!(out.now.secs(), 10.0);
    let report = tb.sim().report(AgentId(0)).unwrap();
    // One transfer in the provider's book: the same 40 G$ the cancellation told the user.
    let t: Vec<_> = report.transfers.iter().map(|t| (t.payer, t.payee, t.amount, t.reason, t.job)).collect();
    assert_eq!(t, vec![(Account::Agent(user), Account::Agent(AgentId(0)), 40.0, Reason::Usage, Some(1))]);
}

#[test]
fn test_advance_reservation_and_free_slots() {
    let mut tb = TestBed::new(1);
    tb.agent("site", "provider", provider(4, 1.0, 0.0));
    let user = tb.probe("user");
    let reserve =
        |request, start, end, pes| Msg::Lease(LeaseMsg::Reserve { request, start: t(start), end: t(end), pes });
    tb.inject(0.0, "user", "site", reserve(1, 10.0, 20.0, 3));
    tb.inject(0.0, "user", "site", reserve(2, 15.0, 30.0, 2)); // only 1 PE left over [15, 20)
    tb.inject(1.0, "user", "site", Msg::Market(MarketMsg::SlotsQuery { horizon: 100.0 }));
    // A 2-PE job of 12 s submitted at 2 would overlap the reservation: it must wait until 20.
    tb.inject(2.0, "user", "site", submit(job(7, user, 2, 12.0)));
    tb.run_to_quiescence().unwrap();
    let d = tb.deliveries();
    let answers: Vec<&Msg> = d.iter().filter(|d| d.to == "user").map(|d| &d.msg).collect();
    assert_eq!(answers[0], &Msg::Lease(LeaseMsg::Reserved { request: 1, reservation: 0 }));
    assert!(
        matches!(answers[1], Msg::Lease(LeaseMsg::ReserveRefused { request: 2, reason }) if reason.contains("not enough free PEs")),
        "{:?}",
        answers[1]
    );
    let Msg::Market(MarketMsg::ResourceUpdate(update)) = answers[2] else { panic!("{:?}", answers[2]) };
    assert_eq!((update.cpus, update.speed), (4, 1.0));
    let slots = &update.slots;
    assert!(slots.contains(&(t(1.0), t(10.0), 4)) && slots.iter().any(|s| s.0 == t(1.0) && s.2 == 1), "{slots:?}");
    tb.assert_in_order(&[expect("job.started").msg(Msg::Job(JobMsg::Started { job: 7 })).at(20.0)]);
}

#[test]
fn test_metabroker_round_reserves_slots_and_issues_tickets() {
    use agents::metabroker::SchedulingPolicy;
    use agents::metabroker::agent::MetaBroker;
    for rt in [Runtime::Inline, Runtime::Actix { threads: 1 }] {
        let mut tb = TestBed::new(1);
        tb.runtime(rt);
        let infos = cheap_and_dear(&mut tb);
        let members = infos.iter().map(|p| p.id);
        let mb = tb.agent("mb", "metabroker", MetaBroker::new(SchedulingPolicy::Greedy, 50.0, members));
        // Three users, each a 4-CPU job of 100 s submitted at t=10, deadline 300: two fit the round at 50 (cheap
        // first); the third rolls over until a site frees at 150.
        for u in 0..3u64 {
            let j = JobSpec { deadline: Some(t(300.0)), ..job(u + 1, AgentId::ENV, 4, 100.0) };
            let broker = UserBroker::new(vec![UserJob { submit: t(10.0), spec: j }], Submission::MetaBroker { to: mb });
            tb.agent(&format!("user-{u}"), "broker", broker);
        }
        tb.run_to_quiescence().unwrap();
        tb.assert_in_order(&[
            expect("market.register_provider").from("cheap").to("mb").at(0.0),
            expect("market.register_provider").from("dear").to("mb").at(0.0),
            expect("market.register_user").from("user-0").to("mb").at(0.0),
            expect("market.registered").from("mb").to("cheap").at(0.0),
            expect("market.registered").from("mb").to("dear").at(0.0),
            expect("market.registered").from("mb").to("user-0").at(0.0),
            expect("market.resource_request").from("user-0").to("mb").at(10.0),
            expect("timer.round").to("mb").at(50.0),
            expect("market.slots_query").to("cheap").at(50.0),
            expect("market.resource_update").from("cheap").to("mb").at(50.0),
            expect("lease.reserve").from("mb").to("cheap").at(50.0),
            expect("lease.reserved").from("cheap").to("mb").at(50.0),
            expect("market.ticket").from("mb").to("user-0").at(50.0),
            expect("job.submit_reserved").from("user-0").to("cheap").at(50.0),
            expect("job.started").from("cheap").to("user-0").at(50.0),
            expect("job.completed").from("cheap").to("user-0").at(150.0),
        ]);
        tb.assert_in_order(&[expect("market.ticket").from("mb").to("user-1").at(50.0)]);
        tb.assert_in_order(&[
            expect("job.started").from("dear").to("user-1").at(50.0),
            // Round at 100: both sites busy until 150. At 150 the job would end at 250 <= 300: it gets a slot.
            expect("market.ticket").to("user-2").at(150.0),
            expect("job.completed").to("user-2").at(250.0),
        ]);
        let spent = tb.sim().report(mb).unwrap().metrics;
        let get = |k: &str| spent.iter().find(|m| m.0 == k).map(|m| m.1);
        assert_eq!(get("tickets"), Some(3.0));
        // The tickets quoted 4 CPUs × 100 s at 1 G$ (twice, user-0 and user-2 on the cheap site) and at 2 G$
        // (user-1).
        assert_eq!(get("spending"), Some(400.0 + 800.0 + 400.0));
        // The providers billed as much (runtimes equal estimates here), and each user recorded its bill: one
        // transfer per job, the same number in the ledger and in the user's record.
        let mut ledger = Vec::new();
        for p in [infos[0].id, infos[1].id] {
            ledger.extend(tb.sim().report(p).unwrap().transfers);
        }
        let user = |u: u64| tb.sim().directory().lookup(&format!("user-{u}")).unwrap();
        let users: Vec<AgentId> = (0..3).map(user).collect();
        for (&u, bill) in users.iter().zip([400.0, 800.0, 400.0]) {
            let paid: Vec<f64> = ledger.iter().filter(|t| t.payer == Account::Agent(u)).map(|t| t.amount).collect();
            assert_eq!(paid, vec![bill]);
            assert_eq!(tb.sim().report(u).unwrap().jobs[0].cost, bill);
        }
        let earned = |p: AgentId| ledger.iter().filter(|t| t.payee == Account::Agent(p)).map(|t| t.amount).sum();
        assert_eq!((earned(infos[0].id), earned(infos[1].id)), (800.0, 800.0));
    }
}

#[test]
fn test_metabroker_places_a_job_longer_than_a_day() {
    use agents::metabroker::SchedulingPolicy;
    use agents::metabroker::agent::MetaBroker;
    let mut tb = TestBed::new(1);
    let id = tb.agent("slow", "provider", provider(4, 0.5, 1.0));
    let mb = tb.agent("mb", "metabroker", MetaBroker::new(SchedulingPolicy::Greedy, 50.0, [id]));
    // 100,000 s of work at half speed: 200,000 s on the site, more than twice the default offer horizon of a day.
    let broker = UserBroker::new(
        vec![UserJob { submit: t(10.0), spec: job(1, AgentId::ENV, 2, 100_000.0) }],
        Submission::MetaBroker { to: mb },
    );
    tb.agent("user", "broker", broker);
    // Bounded: a job that never fits keeps the meta-broker's rounds going for ever.
    tb.run_until(300_000.0).unwrap();
    tb.assert_in_order(&[
        expect("market.ticket").from("mb").to("user").at(50.0),
        expect("job.started").from("slow").to("user").at(50.0),
        expect("job.completed").from("slow").to("user").at(200_050.0),
    ]);
}

#[test]
fn test_metabroker_refuses_providers_outside_its_market_and_requests_of_unregistered_users() {
    use agents::metabroker::SchedulingPolicy;
    use agents::metabroker::agent::MetaBroker;
    let mut tb = TestBed::new(1);
    let infos = cheap_and_dear(&mut tb);
    let mb = tb.agent("mb", "metabroker", MetaBroker::new(SchedulingPolicy::Greedy, 50.0, [infos[0].id]));
    let stranger = tb.probe("stranger");
    let request = JobSpec { deadline: Some(t(300.0)), ..job(1, stranger, 4, 100.0) };
    tb.inject(10.0, "stranger", "mb", Msg::Market(MarketMsg::ResourceRequest(Box::new(request))));
    // A registered user whose job cannot finish by its deadline once the first round comes (50 + 100 > 120).
    let late = JobSpec { deadline: Some(t(120.0)), ..job(2, AgentId::ENV, 4, 100.0) };
    let broker = UserBroker::new(vec![UserJob { submit: t(10.0), spec: late }], Submission::MetaBroker { to: mb });
    let user = tb.agent("user", "broker", broker);
    tb.run_to_quiescence().unwrap();
    let unregistered = "the user is not registered with the meta-broker".to_string();
    tb.assert_in_order(&[
        expect("market.registered").from("mb").to("cheap").at(0.0),
        expect("market.register_refused").from("mb").to("dear").at(0.0),
        expect("market.request_dropped")
            .to("stranger")
            .at(10.0)
            .msg(Msg::Market(MarketMsg::RequestDropped { job: 1, reason: unregistered })),
        expect("market.request_dropped").to("user").at(50.0),
    ]);
    tb.assert_none(&expect("market.slots_query"));
    // The broker's job record says why.
    let record = &tb.sim().report(user).unwrap().jobs[0];
    assert_eq!(record.outcome, JobOutcome::Dropped);
    let reason = record.reason.as_deref().unwrap_or_default();
    assert!(reason.contains("would finish at 150 > deadline 120"), "{reason}");
}

#[test]
fn test_lp_policy_splits_a_bag_of_tasks_into_one_ticket_per_part() {
    use agents::metabroker::SchedulingPolicy;
    use agents::metabroker::agent::MetaBroker;
    use agents::protocol::Ticket;
    let mut tb = TestBed::new(1);
    let infos = cheap_and_dear(&mut tb);
    let members = infos.iter().map(|p| p.id);
    let mb = tb.agent("mb", "metabroker", MetaBroker::new(SchedulingPolicy::Lp, 50.0, members));
    // Six 100-s tasks; each provider has 4 PEs: the cheap one takes 4 tasks, the dear one the other 2.
    let bag = JobSpec { deadline: Some(t(300.0)), ..job(1, AgentId::ENV, 6, 100.0) };
    let user = tb.agent(
        "user",
        "broker",
        UserBroker::new(vec![UserJob { submit: t(10.0), spec: bag }], Submission::MetaBroker { to: mb }),
    );
    tb.run_to_quiescence().unwrap();
    let part = Ticket::FIRST_PART_ID;
    tb.assert_in_order(&[
        expect("lease.reserve").from("mb").to("cheap").at(50.0),
        expect("lease.reserve").from("mb").to("dear").at(50.0),
        expect("market.ticket").from("mb").to("user").at(50.0),
        expect("market.ticket").from("mb").to("user").at(50.0),
        expect("job.submit_reserved").from("user").to("cheap").at(50.0),
        expect("job.submit_reserved").from("user").to("dear").at(50.0),
        expect("job.completed")
            .from("cheap")
            .to("user")
            .at(150.0)
            .msg(Msg::Job(JobMsg::Completed { job: 1, cost: 400.0 })),
        expect("job.completed")
            .from("dear")
            .to("user")
            .at(150.0)
            .msg(Msg::Job(JobMsg::Completed { job: part, cost: 400.0 })),
    ]);
    let tickets: Vec<(u64, u32)> = tb
        .deliveries()
        .iter()
        .filter_map(|d| match &d.msg {
            Msg::Market(MarketMsg::Ticket(t)) => Some((t.part, t.cpus)),
            _ => None,
        })
        .collect();
    assert_eq!(tickets, [(1, 4), (part, 2)]);
    // One job in the broker's records: complete when both parts are, billed for both, under the part ids the
    // providers billed.
    let record = &tb.sim().report(user).unwrap().jobs[0];
    assert_eq!(
        (record.outcome, record.start, record.end, record.cost, record.parts.clone()),
        (JobOutcome::Completed, Some(50.0), Some(150.0), 800.0, vec![1, part])
    );
    let quoted = tb.sim().report(mb).unwrap().metrics.into_iter().find(|m| m.0 == "spending");
    assert_eq!(quoted, Some(("spending", 800.0)));
}

#[test]
fn test_provider_schedules_an_instant_in_one_pass() {
    // Two 2-PE jobs end at t=10, 10 s before their estimates; a 4-PE job W (job 3) waits ahead of a 2-PE job S
    // (job 4). One pass after both ends starts W at 10; a pass after each end would have backfilled S at 10 and
    // started W only when S ended, at 15.
    for rt in [Runtime::Inline, Runtime::Actix { threads: 1 }] {
        let mut tb = TestBed::new(1);
        tb.runtime(rt);
        tb.agent("site", "provider", provider(4, 1.0, 0.0));
        let user = tb.probe("user");
        for id in [1, 2] {
            tb.inject(0.0, "user", "site", submit(JobSpec { estimate: 20.0, ..job(id, user, 2, 10.0) }));
        }
        tb.inject(1.0, "user", "site", submit(job(3, user, 4, 10.0)));
        tb.inject(2.0, "user", "site", submit(job(4, user, 2, 5.0)));
        tb.run_to_quiescence().unwrap();
        let started = |job| Msg::Job(JobMsg::Started { job });
        tb.assert_in_order(&[
            expect("job.completed").msg(Msg::Job(JobMsg::Completed { job: 1, cost: 0.0 })).at(10.0),
            expect("job.completed").msg(Msg::Job(JobMsg::Completed { job: 2, cost: 0.0 })).at(10.0),
            expect("job.started").msg(started(3)).at(10.0),
            expect("job.started").msg(started(4)).at(20.0),
        ]);
    }
}

/// The round routine of every meta-broker (`metabroker::round`): a provider registering while a query is out was not
/// asked and does not hold the round up, and a round that comes while the query is out asks nothing more.
#[test]
fn test_metabroker_round_waits_only_for_the_providers_it_asked() {
    use agents::metabroker::SchedulingPolicy;
    use agents::metabroker::agent::MetaBroker;
    use agents::protocol::ResourceUpdate;
    let mut tb = TestBed::new(1);
    let (a, b, user) = (tb.probe("A"), tb.probe("B"), tb.probe("user"));
    tb.agent("mb", "metabroker", MetaBroker::new(SchedulingPolicy::Greedy, 50.0, [a, b]));
    let offer = |slots| Box::new(ResourceUpdate { cpus: 4, speed: 1.0, price: 1.0, slots });
    let request = |id| Msg::Market(MarketMsg::ResourceRequest(Box::new(job(id, user, 2, 10.0))));
    tb.inject(0.0, "A", "mb", Msg::Market(MarketMsg::RegisterProvider(offer(Vec::new()))));
    tb.inject(0.0, "user", "mb", Msg::Market(MarketMsg::RegisterUser));
    tb.inject(10.0, "user", "mb", request(1));
    // The round at 50 asks A; B registers at 55, while A's answer is out.
    tb.inject(55.0, "B", "mb", Msg::Market(MarketMsg::RegisterProvider(offer(Vec::new()))));
    // A request at 70 arms the round at 100, which comes before A answers.
    tb.inject(70.0, "user", "mb", request(2));
    tb.inject(120.0, "A", "mb", Msg::Market(MarketMsg::ResourceUpdate(offer(vec![(t(120.0), t(1e5), 4)]))));
    tb.run_until(140.0).unwrap();
    let queries: Vec<(f64, String)> =
        tb.deliveries().into_iter().filter(|d| d.msg.kind() == "market.slots_query").map(|d| (d.at, d.to)).collect();
    assert_eq!(queries, [(50.0, "A".to_string())]);
    let reserve = |request| {
        expect("lease.reserve").from("mb").to("A").at(120.0).msg(Msg::Lease(LeaseMsg::Reserve {
            request,
            start: t(120.0),
            end: t(130.0),
            pes: 2,
        }))
    };
    tb.assert_in_order(&[expect("market.registered").from("mb").to("B").at(55.0), reserve(0), reserve(1)]);
}
