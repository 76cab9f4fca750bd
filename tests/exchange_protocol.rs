//! The market exchange (Mandi, Garg 2010 ch 8), message by message on the test bed: accounts and sessions, the
//! service catalogue, commodity leases end to end, sealed-bid auctions, the rules of §8.2, retried reservations,
//! call markets with asks in lots and bidders that discover once per round.

use agents::broker::{AuctionChoice, ExchangeStrategy, Submission, Trade, UserBroker, UserJob};
use agents::exchange::agent::{Exchange, ExchangeConfig, Markets};
use agents::exchange::mechanism::{MechanismKind, MechanismParams};
use agents::exchange::traders::Strategy;
use agents::ledger::{Account, Reason};
use agents::protocol::{
    Advertisement, AuctionRequest, BidRequest, ExchangeMsg, Item, JobMsg, JobSpec, LeaseMsg, MarketMsg, Msg, Quote,
    Refusal, Ticket, Trading,
};
use agents::provider::overhead::OverheadModel;
use agents::provider::preemption::PreemptionPolicy;
use agents::provider::scheduler::{Partitioning, SchedulerPolicy};
use agents::provider::{CancelledLeases, ExchangeTrading, Provider, ProviderConfig, Sell};
use agents::report::JobOutcome;
use agents::sim::{AgentId, SimTime};
use agents::testbed::{Delivery, TestBed, expect};

fn t(secs: f64) -> SimTime {
    SimTime::new(secs).unwrap()
}

fn exchange(retries: u32) -> Exchange {
    Exchange::new(ExchangeConfig { cycle: 10.0, retries, markets: None })
}

fn provider(pes: u32, price: f64) -> Provider {
    Provider::new(ProviderConfig {
        pes,
        speed: 1.0,
        price,
        scheduler: SchedulerPolicy::Conservative,
        partitioning: Partitioning::default(),
        preemption: PreemptionPolicy::Nop,
        overhead: OverheadModel::default(),
        vm_memory_mb: 1024.0,
        cancelled: CancelledLeases::Restart,
        preemptive_priority: false,
    })
}

fn ex(m: ExchangeMsg) -> Msg {
    Msg::Exchange(m)
}

/// Registers `name` and logs it in at `at`; returns its session token once the bed has run to `at + 1`.
fn session(tb: &mut TestBed, name: &str, at: f64) -> u64 {
    tb.inject(at, name, "mandi", ex(ExchangeMsg::Register { login: name.into() }));
    tb.inject(at + 0.5, name, "mandi", ex(ExchangeMsg::Login { login: name.into() }));
    tb.run_until(at + 1.0).unwrap();
    let tokens: Vec<u64> = tb
        .deliveries()
        .iter()
        .filter(|d| d.to == name)
        .filter_map(|d| match d.msg {
            Msg::Exchange(ExchangeMsg::Session { token }) => Some(token),
            _ => None,
        })
        .collect();
    *tokens.last().unwrap_or_else(|| panic!("{name} got no session"))
}

fn refusals(d: &[Delivery], to: &str) -> Vec<Refusal> {
    d.iter()
        .filter(|d| d.to == to)
        .filter_map(|d| match &d.msg {
            Msg::Exchange(ExchangeMsg::Refused(r)) => Some((**r).clone()),
            _ => None,
        })
        .collect()
}

fn metric(tb: &mut TestBed, agent: &str, key: &str) -> f64 {
    let id = tb.sim().directory().lookup(agent).unwrap();
    tb.sim().report(id).unwrap().metric(key).unwrap_or(f64::NAN)
}

fn advertise(token: u64, request: u64, cpus: u32, trading: Trading) -> Msg {
    let ad = Advertisement { token, request, cpus, start: t(0.0), duration: 10_000.0, speed: 1.0, trading };
    ex(ExchangeMsg::Advertise(Box::new(ad)))
}

fn hold(token: u64, mechanism: MechanismKind, item: Item, reserve: f64, end: f64) -> Msg {
    let params = MechanismParams::default();
    let req = AuctionRequest { token, request: 7, mechanism, params, item, reserve, end: t(end), lease: 100.0 };
    ex(ExchangeMsg::HoldAuction(Box::new(req)))
}

fn bid(token: u64, auction: u64, job: JobSpec, price: f64) -> Msg {
    ex(ExchangeMsg::Bid(Box::new(BidRequest { token, auction, quote: Quote::Buy { job, price } })))
}

#[test]
fn test_registration_refuses_a_taken_login_and_requests_without_a_session() {
    let mut tb = TestBed::new(1);
    tb.agent("mandi", "exchange", exchange(3));
    let (alice, _) = (tb.probe("alice"), tb.probe("mallory"));
    let token = session(&mut tb, "alice", 0.0);
    tb.inject(2.0, "mallory", "mandi", ex(ExchangeMsg::Register { login: "alice".into() }));
    // Mallory logs in as Alice, then uses Alice's token: both refused and counted.
    tb.inject(3.0, "mallory", "mandi", ex(ExchangeMsg::Login { login: "alice".into() }));
    tb.inject(4.0, "mallory", "mandi", advertise(token, 1, 4, Trading::Commodity { price: 1.0 }));
    tb.inject(5.0, "mallory", "mandi", bid(42, 1, JobSpec::new(1, AgentId(2), 1, 10.0), 1.0));
    tb.run_to_quiescence().unwrap();
    tb.assert_in_order(&[
        expect("exchange.registered").to("alice").at(0.0),
        expect("exchange.session").to("alice").at(0.5),
        expect("exchange.refused").to("mallory").at(2.0),
    ]);
    let why: Vec<(String, String)> =
        refusals(&tb.deliveries(), "mallory").into_iter().map(|r| (r.what, r.reason)).collect();
    assert_eq!(why[0], ("exchange.register".into(), "the login `alice` is taken".into()));
    assert_eq!(why[1].1, "no account `alice` of this agent");
    assert!(why[2..].iter().all(|w| w.1.starts_with("no session")), "{why:?}");
    assert_eq!(metric(&mut tb, "mandi", "refused_unauthenticated"), 3.0);
    assert_eq!(metric(&mut tb, "mandi", "registered"), 1.0);
    assert_eq!(alice, AgentId(1));
}

/// A 4-PE provider at `price` selling on the exchange by `sell`, and brokers trading there with `trade`.
fn market(sell: Sell, trade: Trade, users: &[(u32, f64, f64)]) -> TestBed {
    let mut tb = TestBed::new(1);
    let mandi = tb.agent("mandi", "exchange", exchange(3));
    let trading = ExchangeTrading { exchange: mandi, sell, interval: 50.0, horizon: 10_000.0, lease: 100.0 };
    tb.agent("site", "provider", provider(4, 1.0).selling_on(trading));
    for (i, &(pes, runtime, valuation)) in users.iter().enumerate() {
        let strategy = ExchangeStrategy {
            trade,
            choice: AuctionChoice::Earliest,
            valuation,
            shade: 1.0,
            bidding: Strategy::TRUTHFUL,
            ceiling: f64::INFINITY,
            attempts: 1,
            retry: 60.0,
        };
        let job = UserJob { submit: t(5.0), spec: JobSpec::new(i as u64 + 1, AgentId::ENV, pes, runtime) };
        tb.agent(
            &format!("user-{i}"),
            "broker",
            UserBroker::new(vec![job], Submission::Exchange { to: mandi, strategy }),
        );
    }
    tb
}

#[test]
fn test_a_commodity_lease_end_to_end() {
    let mut tb = market(Sell::Lease, Trade::Lease, &[(2, 50.0, 1.0)]);
    // The provider advertises every 50 s for ever: run for a while.
    tb.run_until(200.0).unwrap();
    tb.assert_in_order(&[
        expect("exchange.advertise").from("site").at(0.0),
        expect("exchange.advertised").to("site"),
        expect("exchange.discover").from("user-0").at(5.0),
        expect("exchange.offers").to("user-0").at(5.0),
        expect("exchange.lease").from("user-0").at(5.0),
        // The reservation monitor's next cycle.
        expect("lease.reserve").from("mandi").to("site").at(10.0),
        expect("lease.reserved").from("site").to("mandi").at(10.0),
        expect("market.ticket").from("mandi").to("user-0").at(10.0),
        expect("job.submit_reserved").from("user-0").to("site").at(10.0),
        expect("job.started").to("user-0").at(10.0),
        expect("job.completed").msg(Msg::Job(JobMsg::Completed { job: 1, cost: 0.0 })).at(60.0),
    ]);
    // The contract, paid when reserved: 2 CPUs × 50 s at the posted 1 G$, from the user to the provider.
    let ledger = tb.sim().report(AgentId(0)).unwrap().transfers;
    let paid: Vec<_> = ledger.iter().map(|t| (t.payer, t.payee, t.amount, t.reason, t.job)).collect();
    assert_eq!(paid, [(Account::Agent(AgentId(2)), Account::Agent(AgentId(1)), 100.0, Reason::Lease, Some(1))]);
    let record = tb.sim().report(AgentId(2)).unwrap().jobs[0].clone();
    assert_eq!((record.outcome, record.cost, record.end), (JobOutcome::Completed, 100.0, Some(60.0)));
}

/// Three users bid for the 4 CPUs of the provider's slot, each job needing all 4, at 3, 5 and 4 G$.
fn sealed(mechanism: MechanismKind) -> TestBed {
    let mut tb = market(Sell::Auction(mechanism), Trade::Bid, &[(4, 50.0, 3.0), (4, 50.0, 5.0), (4, 50.0, 4.0)]);
    tb.run_until(200.0).unwrap();
    tb
}

fn ticket(d: &[Delivery]) -> Ticket {
    d.iter()
        .find_map(|d| match &d.msg {
            Msg::Market(MarketMsg::Ticket(t)) => Some((**t).clone()),
            _ => None,
        })
        .expect("a ticket")
}

#[test]
fn test_first_price_sealed_bid_with_three_bidders() {
    let mut tb = sealed(MechanismKind::FirstPrice);
    tb.assert_in_order(&[
        expect("exchange.hold_auction").from("site").at(0.0),
        expect("exchange.bid").from("user-0").at(5.0),
        expect("timer.clear").to("mandi").at(50.0),
        expect("exchange.lost").to("user-0").at(50.0),
        expect("exchange.lost").to("user-2").at(50.0),
        // The reservation monitor's next cycle.
        expect("lease.reserve").from("mandi").to("site").at(60.0),
        expect("market.ticket").to("user-1").at(60.0),
        expect("job.completed").to("user-1").at(110.0),
    ]);
    // The highest bid wins and pays itself: 5 G$ × 4 CPUs × the 100 s lease.
    let ticket = ticket(&tb.deliveries());
    assert_eq!((ticket.job, ticket.cpus, ticket.cost, ticket.prepaid), (2, 4, 2000.0, true));
    let ledger = tb.sim().report(AgentId(0)).unwrap().transfers;
    let paid: Vec<_> = ledger.iter().map(|t| (t.payer, t.payee, t.amount, t.reason)).collect();
    assert_eq!(paid, [(Account::Agent(AgentId(3)), Account::Agent(AgentId(1)), 2000.0, Reason::Auction)]);
    assert_eq!(metric(&mut tb, "mandi", "lost"), 2.0);
}

#[test]
fn test_vickrey_price_is_the_second_bid() {
    let tb = sealed(MechanismKind::Vickrey);
    assert_eq!(ticket(&tb.deliveries()).cost, 4.0 * 4.0 * 100.0);
}

#[test]
fn test_the_rules_of_negotiation() {
    let mut tb = TestBed::new(1);
    tb.agent("mandi", "exchange", exchange(3));
    // The provider holds every reservation it is asked for.
    tb.scripted("site", |env, ctx| {
        if let Msg::Lease(LeaseMsg::Reserve { request, .. }) = env.msg {
            ctx.send(env.from(), LeaseMsg::Reserved { request, reservation: 77 });
        }
    });
    let user = tb.probe("user");
    let seller = session(&mut tb, "site", 0.0);
    let buyer = session(&mut tb, "user", 1.0);
    tb.inject(3.0, "site", "mandi", advertise(seller, 1, 4, Trading::Auction { reserve: 1.0 }));
    // Slot 1 into two auctions: the second is refused.
    tb.inject(4.0, "site", "mandi", hold(seller, MechanismKind::FirstPrice, Item::Slot(1), 1.0, 100.0));
    tb.inject(5.0, "site", "mandi", hold(seller, MechanismKind::Vickrey, Item::Slot(1), 1.0, 100.0));
    // A call market, and one application bidding in auction 1 then in the market: the second bid is refused.
    tb.inject(6.0, "user", "mandi", hold(buyer, MechanismKind::KDouble, Item::Market, 0.0, 100.0));
    let job = JobSpec::new(9, user, 2, 50.0);
    tb.inject(7.0, "user", "mandi", bid(buyer, 1, job.clone(), 2.0));
    tb.inject(8.0, "user", "mandi", bid(buyer, 2, job.clone(), 2.0));
    // A better bid replaces the first in auction 1; a bid after an end time is refused with a reason.
    tb.inject(9.0, "user", "mandi", bid(buyer, 1, job.clone(), 3.0));
    tb.inject(8.0, "user", "mandi", hold(buyer, MechanismKind::KDouble, Item::Market, 0.0, 20.0));
    tb.inject(30.0, "user", "mandi", bid(buyer, 3, JobSpec::new(10, user, 1, 5.0), 2.0));
    // Bids that are not numbers, and an auction that ended before it was held.
    tb.inject(31.0, "user", "mandi", bid(buyer, 2, JobSpec::new(11, user, 1, 5.0), f64::NAN));
    tb.inject(32.0, "user", "mandi", hold(buyer, MechanismKind::KDouble, Item::Market, 0.0, 10.0));
    tb.inject(33.0, "user", "mandi", bid(buyer, 99, JobSpec::new(12, user, 1, 5.0), 1.0));
    tb.run_to_quiescence().unwrap();
    let why: Vec<String> = refusals(&tb.deliveries(), "site").into_iter().map(|r| r.reason).collect();
    assert_eq!(why, ["slot 1 is already in an auction"]);
    let why: Vec<String> = refusals(&tb.deliveries(), "user").into_iter().map(|r| r.reason).collect();
    assert_eq!(
        why,
        [
            "application 9 is already in auction 1",
            "auction 3 closed at 20",
            "expected a finite, non-negative price, found NaN",
            "the end time 10 is not after now (32)",
            "no auction 99",
        ]
    );
    // Auction 1 clears at 100 with the replaced bid: 2 CPUs at 3 G$ (first price) for its 100 s lease.
    let ticket = ticket(&tb.deliveries());
    assert_eq!((ticket.job, ticket.cpus, ticket.cost), (9, 2, 600.0));
}

#[test]
fn test_an_application_is_reserved_only_when_all_its_tasks_match() {
    let mut tb = TestBed::new(1);
    tb.agent("mandi", "exchange", exchange(3));
    tb.probe("site");
    let user = tb.probe("user");
    let seller = session(&mut tb, "site", 0.0);
    let buyer = session(&mut tb, "user", 1.0);
    // A call market with 3 CPUs on offer; one application of 2 tasks and one of 2 tasks bidding less: only 3 units
    // can trade, so the second application would get 1 of its 2 and gets none.
    tb.inject(3.0, "site", "mandi", advertise(seller, 1, 3, Trading::Auction { reserve: 1.0 }));
    tb.inject(4.0, "user", "mandi", hold(buyer, MechanismKind::KDouble, Item::Market, 0.0, 50.0));
    let sell = BidRequest { token: seller, auction: 1, quote: Quote::Sell { slot: 1, price: 1.0 } };
    tb.inject(5.0, "site", "mandi", ex(ExchangeMsg::Bid(Box::new(sell))));
    tb.inject(6.0, "user", "mandi", bid(buyer, 1, JobSpec::new(1, user, 2, 50.0), 4.0));
    tb.inject(7.0, "user", "mandi", bid(buyer, 1, JobSpec::new(2, user, 2, 50.0), 3.0));
    tb.run_until(60.0).unwrap();
    tb.assert_in_order(&[
        expect("exchange.lost").to("user").msg(ex(ExchangeMsg::Lost { auction: 1, job: 2 })).at(50.0),
        expect("lease.reserve").from("mandi").to("site").msg(Msg::Lease(LeaseMsg::Reserve {
            request: 0,
            start: t(60.0),
            end: t(160.0),
            pes: 2,
        })),
    ]);
    let reserves = tb.deliveries().iter().filter(|d| d.msg.kind() == "lease.reserve").count();
    assert_eq!(reserves, 1, "only the application matched whole is reserved");
}

#[test]
fn test_a_refused_reservation_is_retried_next_cycle_then_fails() {
    let mut tb = TestBed::new(1);
    tb.agent("mandi", "exchange", exchange(1));
    // The provider is a probe that refuses every reservation.
    tb.scripted("site", |env, ctx| {
        if let Msg::Lease(LeaseMsg::Reserve { request, .. }) = env.msg {
            ctx.send(env.from(), LeaseMsg::ReserveRefused { request, reason: "busy".into() });
        }
    });
    let user = tb.probe("user");
    let seller = session(&mut tb, "site", 0.0);
    let buyer = session(&mut tb, "user", 1.0);
    tb.inject(3.0, "site", "mandi", advertise(seller, 1, 4, Trading::Commodity { price: 1.0 }));
    let lease =
        agents::protocol::LeaseRequest { token: buyer, slot: 1, job: JobSpec::new(1, user, 2, 50.0), duration: 50.0 };
    tb.inject(4.0, "user", "mandi", ex(ExchangeMsg::Lease(Box::new(lease))));
    tb.run_to_quiescence().unwrap();
    tb.assert_in_order(&[
        expect("lease.reserve").to("site").at(10.0),
        expect("lease.reserve_refused").to("mandi").at(10.0),
        expect("lease.reserve").to("site").at(20.0),
        expect("exchange.refused").to("user").at(20.0),
    ]);
    let r = refusals(&tb.deliveries(), "user").remove(0);
    assert_eq!(
        (r.what.as_str(), r.reason.as_str()),
        ("exchange.reserve", "the provider refused the reservation 2 times: busy")
    );
    assert_eq!((metric(&mut tb, "mandi", "failed"), metric(&mut tb, "mandi", "contracts")), (1.0, 0.0));
}

#[test]
fn test_a_bidder_discovers_once_while_the_markets_it_knows_are_open() {
    let mut tb = TestBed::new(1);
    // Three call markets at 0 and three more at 100, each clearing 100 s after it opens.
    let (params, from, until) = (MechanismParams::default(), t(0.0), t(100.0));
    let markets =
        Markets { mechanism: MechanismKind::KDouble, params, count: 3, period: 100.0, lease: 100.0, from, until };
    let mandi = tb.agent(
        "mandi",
        "exchange",
        Exchange::new(ExchangeConfig { cycle: 10.0, retries: 3, markets: Some(markets) }),
    );
    // A provider of 4 CPUs asks in lots of 2: two slots, two asks.
    let trading = ExchangeTrading {
        exchange: mandi,
        sell: Sell::Market(Some(2)),
        interval: 1_000.0,
        horizon: 10_000.0,
        lease: 100.0,
    };
    tb.agent("site", "provider", provider(4, 1.0).selling_on(trading));
    let strategy = ExchangeStrategy {
        trade: Trade::Bid,
        choice: AuctionChoice::Random,
        valuation: 2.0,
        shade: 1.0,
        bidding: Strategy::TRUTHFUL,
        ceiling: f64::INFINITY,
        attempts: 1,
        retry: 60.0,
    };
    let job = |id, at| UserJob { submit: t(at), spec: JobSpec::new(id, AgentId::ENV, 1, 50.0) };
    let jobs = vec![job(1, 5.0), job(2, 10.0), job(3, 20.0), job(4, 150.0)];
    tb.agent("user", "broker", UserBroker::new(jobs, Submission::Exchange { to: mandi, strategy }));
    tb.run_until(300.0).unwrap();
    let d = tb.deliveries();
    let lots: Vec<u32> = d
        .iter()
        .filter_map(|d| match &d.msg {
            Msg::Exchange(ExchangeMsg::Advertise(ad)) => Some(ad.cpus),
            _ => None,
        })
        .collect();
    assert_eq!(lots, [2, 2]);
    let asks = d.iter().filter(|d| d.from == "site" && d.msg.kind() == "exchange.bid").count();
    assert_eq!(asks, 2);
    // The list of 5 s serves the jobs of 10 and 20 s; the job of 150 s looks again, the first markets having ended.
    let from_user = |kind: &str| -> Vec<f64> {
        d.iter().filter(|d| d.from == "user" && d.msg.kind() == kind).map(|d| d.at).collect()
    };
    assert_eq!(from_user("exchange.discover"), [5.0, 150.0]);
    assert_eq!(from_user("exchange.bid"), [5.0, 10.0, 20.0, 150.0]);
}
