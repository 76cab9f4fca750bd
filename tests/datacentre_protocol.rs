//! Message-level tests of the data centres and the energy-aware meta-broker of Garg (2010) ch6 on the test bed: two
//! data centres, three applications, one scheduling cycle; the advertisements, the mapping, the frequencies the DVS
//! policy chooses (one scaled up to meet its deadline), and the energy, carbon and money each application books.

use agents::broker::{Submission, UserBroker, UserJob};
use agents::datacenter::{DataCentre, DataCentreConfig, DvsPolicy, IdlePower, PowerModel, Site};
use agents::ledger::{Account, Currency, External, Reason};
use agents::metabroker::energy::EnergyMetaBroker;
use agents::metabroker::energy::mapping::MappingPolicy;
use agents::protocol::{EnergyMsg, JobMsg, JobSpec, Msg};
use agents::report::{JobOutcome, Report};
use agents::sim::{AgentId, Runtime, SimTime};
use agents::testbed::{TestBed, expect};

fn t(secs: f64) -> SimTime {
    SimTime::new(secs).unwrap()
}

/// New York's CPUs of Garg (2010) Table 6.3 (β 65 W, α 7.5, 0.675–1.8 GHz in 5 levels; OurDVS starts at 1.51875
/// GHz, the level nearest f_opt = 1.630), 4 of them, at COP 1.
fn data_centre(carbon_rate: f64, electricity_price: f64) -> DataCentre {
    DataCentre::new(DataCentreConfig {
        cpus: 4,
        speed: 1.0,
        power: PowerModel::new(65.0, 7.5, 0.675, 1.8, 5).unwrap(),
        site: Site { cop: 1.0, carbon_rate, electricity_price, transfer_price: 0.0, cpu_price: 0.4, data_price: 0.17 },
        dvs: DvsPolicy::Ours,
        idle: IdlePower::Off,
    })
}

fn app(id: u64, pes: u32, runtime: f64, deadline: f64) -> UserJob {
    UserJob {
        submit: t(0.0),
        spec: JobSpec { deadline: Some(t(deadline)), ..JobSpec::new(id, AgentId::ENV, pes, runtime) },
    }
}

fn metric(report: &Report, name: &str) -> f64 {
    report.metric(name).unwrap_or_else(|| panic!("no metric {name}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// The two data centres, the meta-broker (GMCE) and a user with three applications submitted at t = 0:
/// - job 2: 2 CPUs for 1,000 s, due at 1,150 s; EDF maps it first, to the clean data centre, where 1.51875 GHz
///   (1,185 s from the cycle at 50 s) misses the deadline, so it runs at f_max;
/// - job 3: 4 CPUs for 600 s, due at 4,000 s: the clean one, after job 2, at 1.51875 GHz;
/// - job 1: 4 CPUs for 3,600 s, due at 5,000 s: the clean one is busy until 1,761 s and even at f_max it would end
///   at 5,361 s, so it goes to the dirty one.
fn prepare(tb: &mut TestBed) -> (AgentId, AgentId, AgentId, AgentId) {
    let clean = tb.agent("clean", "datacentre", data_centre(0.1, 0.2));
    let dirty = tb.agent("dirty", "datacentre", data_centre(0.8, 0.05));
    let mb = tb.agent("mb", "energy-metabroker", EnergyMetaBroker::new(MappingPolicy::Gmce, 50.0, [clean, dirty]));
    let jobs = vec![app(1, 4, 3600.0, 5000.0), app(2, 2, 1000.0, 1150.0), app(3, 4, 600.0, 4000.0)];
    let user = tb.agent("user", "broker", UserBroker::new(jobs, Submission::MetaBroker { to: mb }));
    (clean, dirty, mb, user)
}

#[test]
fn test_one_cycle_maps_scales_up_and_books_energy_carbon_and_profit() {
    for rt in [Runtime::Inline, Runtime::Actix { threads: 1 }] {
        let mut tb = TestBed::new(1);
        tb.runtime(rt);
        let (clean, dirty, mb, user) = prepare(&mut tb);
        tb.run_to_quiescence().unwrap();
        let level3 = 0.675 + 3.0 * (1.8 - 0.675) / 4.0;
        tb.assert_in_order(&[
            // Registration: each data centre advertises itself (no slots yet).
            expect("energy.advert").from("clean").to("mb").at(0.0),
            expect("energy.advert").from("dirty").to("mb").at(0.0),
            expect("market.register_user").from("user").to("mb").at(0.0),
            expect("market.resource_request").from("user").to("mb").at(0.0),
            // The cycle: queries, the advertised slots, then the assignments in EDF order.
            expect("timer.round").to("mb").at(50.0),
            expect("energy.query").from("mb").to("clean").at(50.0),
            expect("energy.advert").from("clean").to("mb").at(50.0),
            expect("energy.advert").from("dirty").to("mb").at(50.0),
            expect("energy.assign").from("mb").to("clean").at(50.0),
            expect("energy.assign").from("mb").to("clean").at(50.0),
            expect("energy.assign").from("mb").to("dirty").at(50.0),
            expect("energy.assigned").from("clean").to("mb").at(50.0),
            expect("market.ticket").from("mb").to("user").at(50.0),
            expect("job.submit_reserved").from("user").to("clean").at(50.0),
            expect("job.started").msg(Msg::Job(JobMsg::Started { job: 2 })).at(50.0),
            expect("job.completed").from("clean").at(1050.0),
            expect("job.started").msg(Msg::Job(JobMsg::Started { job: 3 })).at(1050.0),
        ]);
        // The frequencies: job 2 scaled up to f_max, the others at OurDVS's first level.
        let assigned: Vec<(String, f64, f64, f64)> = tb
            .deliveries()
            .into_iter()
            .filter_map(|d| match d.msg {
                Msg::Energy(EnergyMsg::Assigned(a)) => Some((d.from, a.start.secs(), a.frequency, a.duration)),
                _ => None,
            })
            .collect();
        // T(f) = T(f_max) · (f_max / f − 1 + 1), Eq 6.2 with γ = 1, in the model's order of operations.
        let stretched = |runtime: f64| runtime * ((1.8 / level3 - 1.0) + 1.0);
        assert_eq!(assigned[0], ("clean".to_string(), 50.0, 1.8, 1000.0));
        assert_eq!(assigned[1], ("clean".to_string(), 1050.0, level3, stretched(600.0)));
        assert_eq!(assigned[2], ("dirty".to_string(), 50.0, level3, stretched(3600.0)));

        let (c, d) = (tb.sim().report(clean).unwrap(), tb.sim().report(dirty).unwrap());
        assert_eq!((metric(&c, "assigned"), metric(&c, "completed"), metric(&c, "scaled_up")), (2.0, 2.0, 1.0));
        assert_eq!((metric(&d, "completed"), metric(&d, "scaled_up")), (1.0, 0.0));
        // Energy (6.3)–(6.4): P(f) · n · T(f), doubled by cooling at COP 1 [kWh].
        let p = |f: f64| 65.0 + 7.5 * f * f * f;
        let kwh = |f: f64, n: f64, secs: f64| 2.0 * p(f) * n * secs / 3.6e6;
        let clean_kwh = kwh(1.8, 2.0, 1000.0) + kwh(level3, 4.0, stretched(600.0));
        let dirty_kwh = kwh(level3, 4.0, stretched(3600.0));
        assert!(close(metric(&c, "energy"), clean_kwh) && close(metric(&d, "energy"), dirty_kwh));
        assert!(close(metric(&c, "cooling_energy"), clean_kwh / 2.0));
        // Carbon (6.6) and energy cost (6.5).
        assert!(close(metric(&c, "carbon"), 0.1 * clean_kwh) && close(metric(&d, "carbon"), 0.8 * dirty_kwh));
        assert!(close(metric(&d, "energy_cost"), 0.05 * dirty_kwh));
        // Revenue: n · e at f_max · $0.40 per CPU-hour, whatever the frequency; profit (6.7).
        let revenue = 4.0 * 3600.0 / 3600.0 * 0.4;
        assert!(close(metric(&d, "earnings"), revenue));
        assert!(close(metric(&d, "profit"), revenue - 0.05 * dirty_kwh));
        assert!(close(metric(&d, "workload"), 4.0));

        // The ledger: the user pays each data centre, each pays the electricity supplier, in dollars, per job.
        let book =
            |r: &Report| r.transfers.iter().map(|t| (t.payer, t.payee, t.reason, t.job, t.amount)).collect::<Vec<_>>();
        let supplier = Account::External(External::ElectricitySupplier);
        let dirty_book = book(&d);
        assert_eq!(dirty_book.len(), 2);
        assert_eq!((dirty_book[0].0, dirty_book[0].1), (Account::Agent(user), Account::Agent(dirty)));
        assert_eq!((dirty_book[0].2, dirty_book[0].3), (Reason::Usage, Some(1)));
        assert!(close(dirty_book[0].4, revenue));
        assert_eq!(
            (dirty_book[1].0, dirty_book[1].1, dirty_book[1].2),
            (Account::Agent(dirty), supplier, Reason::Energy)
        );
        assert!(close(dirty_book[1].4, 0.05 * dirty_kwh));
        assert!(d.transfers.iter().all(|t| t.currency == Currency::Dollar));
        // The user's record of each job's cost is what the ledger bills it.
        let u = tb.sim().report(user).unwrap();
        assert!(u.jobs.iter().all(|j| j.outcome == JobOutcome::Completed));
        let job1 = u.jobs.iter().find(|j| j.id == 1).unwrap();
        assert!(close(job1.cost, revenue));
        // The meta-broker's prediction held and the bounds are reported.
        let m = tb.sim().report(mb).unwrap();
        assert!(m.violations.is_empty() && c.violations.is_empty() && d.violations.is_empty());
        assert_eq!((metric(&m, "assigned"), metric(&m, "rejected")), (3.0, 0.0));
        assert!(metric(&m, "carbon_bound") > 0.0 && metric(&m, "profit_bound") > 0.0);
    }
}

#[test]
fn test_an_application_no_data_centre_can_finish_in_time_or_hold_is_rejected_with_its_reason() {
    let mut tb = TestBed::new(1);
    let dc = tb.agent("dc", "datacentre", data_centre(0.1, 0.1));
    let mb = tb.agent("mb", "energy-metabroker", EnergyMetaBroker::new(MappingPolicy::MpMp, 50.0, [dc]));
    // Too wide; due before the first cycle can run it; due before it was submitted.
    let jobs = vec![app(1, 8, 10.0, 1e6), app(2, 1, 100.0, 120.0), UserJob { submit: t(10.0), ..app(3, 1, 10.0, 5.0) }];
    let user = tb.agent("user", "broker", UserBroker::new(jobs, Submission::MetaBroker { to: mb }));
    tb.run_to_quiescence().unwrap();
    let reasons: Vec<(u64, String)> = tb
        .sim()
        .report(user)
        .unwrap()
        .jobs
        .iter()
        .map(|j| (j.id, format!("{:?}: {}", j.outcome, j.reason.clone().unwrap_or_default())))
        .collect();
    assert_eq!(
        reasons,
        [
            (1, "Rejected: needs 8 CPUs, more than any data centre has (4)".to_string()),
            (2, "Rejected: no data centre can complete it by its deadline".to_string()),
            (3, "Rejected: its deadline 5 is before its submission at 10".to_string()),
        ]
    );
    tb.assert_none(&expect("energy.assign"));
}

/// Two identical data centres tie on every key: the application goes to the one the meta-broker lists first, here
/// the one added second (its agent id is the larger).
#[test]
fn test_ties_go_to_the_data_centre_listed_first() {
    for (listed, winner) in [([0, 1], "a"), ([1, 0], "b")] {
        let mut tb = TestBed::new(1);
        let ids =
            [tb.agent("a", "datacentre", data_centre(0.1, 0.1)), tb.agent("b", "datacentre", data_centre(0.1, 0.1))];
        let members = listed.map(|i| ids[i]);
        let mb = tb.agent("mb", "energy-metabroker", EnergyMetaBroker::new(MappingPolicy::MceMce, 50.0, members));
        let user = UserBroker::new(vec![app(1, 2, 100.0, 10_000.0)], Submission::MetaBroker { to: mb });
        tb.agent("user", "broker", user);
        tb.run_to_quiescence().unwrap();
        tb.assert_in_order(&[expect("energy.assign").from("mb").to(winner)]);
    }
}
