//! Unit tests of DAM's valuation and matching and of the baselines, on hand-worked markets.

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

use super::*;

fn queue(site: usize, pes: u32, free: u32, load: f64, wait: f64, speed: f64) -> MarketQueue {
    MarketQueue { site, queue: 0, pes, free, load, wait, valuation: 5.0, speed, slots: Vec::new() }
}

fn app(id: JobId, pes: u32, runtime: f64, deadline: f64, valuation: f64, submit: f64) -> Application {
    Application { id, pes, runtime, deadline, valuation, submit }
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{a} != {b}");
}

#[test]
fn asks_rank_the_least_loaded_fastest_cheapest_queue_first() {
    // c_max = 10, l_max = 0.5, Demand/Supply = 2, O = 1:
    // a0 = 100 · (5/10) · (0.5/0.5) · 2 = 100; a1 = 50 · 1 · (0.25/0.5) · 2 = 50; a2 = 0 (idle).
    let q = [
        MarketQueue { valuation: 5.0, ..queue(0, 8, 4, 0.5, 100.0, 1.0) },
        MarketQueue { valuation: 10.0, ..queue(0, 8, 6, 0.25, 50.0, 1.0) },
        MarketQueue { valuation: 8.0, ..queue(1, 8, 8, 0.0, 0.0, 1.0) },
    ];
    let a = asks(&q, 2.0, 1.0);
    close(a[0], 100.0);
    close(a[1], 50.0);
    close(a[2], 0.0);
    // O scales every ask.
    close(asks(&q, 2.0, 3.0)[1], 150.0);
    // All idle and free of charge: 0/0 ratios count as 1, every ask is finite (0 here, no work committed).
    let idle = vec![MarketQueue { valuation: 0.0, ..queue(0, 4, 4, 0.0, 0.0, 1.0) }; 2];
    assert_eq!(asks(&idle, 1.0, 1.0), [0.0, 0.0]);
    // A queue whose load is 0 while others' are not asks 0; more load, more ask.
    let lighter = [queue(0, 8, 8, 0.25, 40.0, 1.0), queue(0, 8, 8, 0.5, 40.0, 1.0)];
    let a = asks(&lighter, 1.0, 1.0);
    assert!(a[0] < a[1], "{a:?}");
}

#[test]
fn bids_favour_urgent_valuable_and_old_applications() {
    // t = 100, v_max = 200, d_max = 500, st_min = 0, Demand/Supply = 2, H = 1.
    // A: v 100, d 300, st 0: 0.5 · (400/200) · 2 · (101/101) = 2.
    // B: v 50, d 150, st 50: 0.25 · (400/50) · 2 · (51/101) = 4 · 51/101.
    // C: v 200, d 500, st 100: 1 · 1 · 2 · (1/101).
    let apps =
        [app(1, 1, 10.0, 300.0, 100.0, 0.0), app(2, 1, 10.0, 150.0, 50.0, 50.0), app(3, 1, 10.0, 500.0, 200.0, 100.0)];
    let b = bids(&apps, 100.0, 2.0, 1.0, 1.0);
    close(b[0], 2.0);
    close(b[1], 4.0 * 51.0 / 101.0);
    close(b[2], 2.0 / 101.0);
    // Of two applications alike but for their submission, the older bids more: (101 − 0)/101 against
    // (101 − 90)/101, so 101/11 times more. The age factor prevents starvation.
    let twins = [app(1, 1, 10.0, 300.0, 100.0, 0.0), app(2, 1, 10.0, 300.0, 100.0, 90.0)];
    let b = bids(&twins, 100.0, 1.0, 1.0, 1.0);
    close(b[0] / b[1], 101.0 / 11.0);
    // In scheduling cycles of 50 s: ages 100/50 + 1 = 3 and 10/50 + 1 = 1.2 cycles, 2.5 times more.
    let b = bids(&twins, 100.0, 1.0, 1.0, 50.0);
    close(b[0] / b[1], 3.0 / 1.2);
    // H scales every bid.
    close(bids(&apps, 100.0, 2.0, 10.0, 1.0)[0], 20.0);
}

#[test]
fn bad_valuations_and_deadlines_give_documented_bids_never_nan() {
    // d_i = t: the time to the deadline counts as 1 s, the most urgent bid. Zero and negative valuations count
    // as 0; when every valuation is 0, v/v_max counts as 1. No deadline: a factor of 1.
    let t = 100.0;
    let apps =
        [app(1, 1, 10.0, t, 100.0, 0.0), app(2, 1, 10.0, 600.0, -5.0, 0.0), app(3, 1, 10.0, f64::INFINITY, 100.0, 0.0)];
    let b = bids(&apps, t, 1.0, 1.0, 1.0);
    close(b[0], 500.0); // (600 − 100) / max(0, 1)
    close(b[1], 0.0);
    close(b[2], 1.0);
    let broke = [app(1, 1, 10.0, 200.0, 0.0, 0.0), app(2, 1, 10.0, 300.0, 0.0, 0.0)];
    let b = bids(&broke, t, 1.0, 1.0, 1.0);
    close(b[0], 2.0);
    close(b[1], 1.0);
    // Past deadlines and an empty market too.
    let late = [app(1, 1, 10.0, 50.0, 1.0, 0.0)];
    assert!(bids(&late, t, 1.0, 1.0, 1.0).iter().all(|b| b.is_finite()));
    assert!(bids(&[], t, 1.0, 1.0, 1.0).is_empty());
    // No free processor anywhere: Supply counts as 1.
    let full = [queue(0, 4, 0, 1.0, 10.0, 1.0)];
    close(demand_supply(&broke, &full), 2.0);
}

/// The hand-worked market of Alg 7.1 at t = 100 (valuations c = 5 everywhere):
/// Q0 (site 0, speed 1): 4 PEs, all free, idle; Q1 (site 0, speed 1): 8 PEs, all free, idle;
/// Q2 (site 1, speed 2): 8 PEs, 4 free, load 0.5, 200 s of work per PE.
/// X: 4 PEs × 100 s, deadline 400, v 1000; Y: 2 PEs × 300 s, deadline 300, v 1000; Z: 6 PEs × 50 s, deadline
/// 1000, v 1800; all submitted at 100.
fn hand_market() -> Market {
    Market {
        now: 100.0,
        queues: vec![
            queue(0, 4, 4, 0.0, 0.0, 1.0),
            MarketQueue { queue: 1, ..queue(0, 8, 8, 0.0, 0.0, 1.0) },
            queue(1, 8, 4, 0.5, 200.0, 2.0),
        ],
        apps: vec![
            app(1, 4, 100.0, 400.0, 1000.0, 100.0),
            app(2, 2, 300.0, 300.0, 1000.0, 100.0),
            app(3, 6, 50.0, 1000.0, 1800.0, 100.0),
        ],
    }
}

/// `apps` at t = 0 before one idle queue of 8 PEs.
fn one_free_queue(apps: Vec<Application>) -> Market {
    Market { now: 0.0, queues: vec![queue(0, 8, 8, 0.0, 0.0, 1.0)], apps }
}

fn placed(round: &Round) -> Vec<(usize, usize, f64, f64)> {
    round.placements.iter().map(|p| (p.app, p.queue, p.start, p.end)).collect()
}

#[test]
fn dam_matches_highest_bids_to_lowest_feasible_asks() {
    // Demand/Supply = 12/16 = 0.75. Bids (d_max = 1000): X = (1000/1800)·(900/300)·0.75 = 1.25,
    // Y = (1000/1800)·(900/200)·0.75 = 1.875, Z = 1·(900/900)·0.75 = 0.75. Asks: Q0 = Q1 = 0 (idle), Q2 =
    // 200·1·(0.5/0.5)·0.75 = 150.
    // Y first: Q0 and Q1 (speed 1) would finish it at 400 > 300: the next ask, Q2, finishes at 250. Q2 then has 2
    // PEs free, load 0.75 and 200 + 2·150/8 = 237.5 s of work. X: Q0 (ask 0) finishes it at 200. Q0's load is
    // now 1 = l_max, its ask 100·1·1·0.75 = 75. Z: Q1, still asking 0.
    // (This is the slot's deadline test; the printed one, with Q2's 200 s of waiting, is below.)
    let m = hand_market();
    let slot = DamParams { deadline_test: DeadlineTest::Slot, ..DamParams::default() };
    let r = match_round(AuctionPolicy::Dam, &slot, &m);
    close(r.bids[0], 1.25);
    close(r.bids[1], 1.875);
    close(r.bids[2], 0.75);
    assert_eq!(r.asks, [0.0, 0.0, 150.0]);
    assert_eq!(placed(&r), [(1, 2, 100.0, 250.0), (0, 0, 100.0, 200.0), (2, 1, 100.0, 150.0)]);
    let scores: Vec<(f64, f64)> = r.placements.iter().map(|p| p.scores.unwrap()).collect();
    assert_eq!(scores, [(1.875, 150.0), (1.25, 0.0), (0.75, 0.0)]);
    assert!(r.placements.iter().all(|p| p.price == 5.0));

    // Alg 7.1's line 11 as printed: now + w_j + e_i < d_i. Y at Q2 would end at 100 + 200 + 150 = 450 > 300, at Q0
    // and Q1 at 100 + 0 + 300 = 400: Y waits; X and Z go where they went (no wait at Q0 and Q1).
    let printed = match_round(AuctionPolicy::Dam, &DamParams::default(), &m);
    assert_eq!(placed(&printed), [(0, 0, 100.0, 200.0), (2, 1, 100.0, 150.0)]);

    // The literal test: Y's 1.875 meets only asks below it, and Q2's is 150: Y waits; X and Z bid above 0.
    let literal = DamParams { bid_test: BidTest::Literal, ..slot };
    let r = match_round(AuctionPolicy::Dam, &literal, &m);
    assert_eq!(placed(&r), [(0, 0, 100.0, 200.0), (2, 1, 100.0, 150.0)]);
    // With H = 1000 Y's bid (1875) clears Q2's ask.
    let scaled = DamParams { bid_scale: 1000.0, ..literal };
    assert_eq!(match_round(AuctionPolicy::Dam, &scaled, &m).placements.len(), 3);
}

#[test]
fn baselines_order_applications_and_choose_queues_by_their_rules() {
    let m = hand_market();
    let run = |p| placed(&match_round(p, &DamParams::default(), &m));
    // FCFS: X, Y, Z by id (same submit time), each to the first queue with room: X → Q0; Y → Q1 (its deadline is
    // not checked: it will finish at 400 > 300); Z → Q1.
    assert_eq!(run(AuctionPolicy::Fcfs), [(0, 0, 100.0, 200.0), (1, 1, 100.0, 400.0), (2, 1, 100.0, 150.0)]);
    // SJF: Z (50 s), X (100 s), Y (300 s): Z → Q1 (Q0 has 4 PEs), X → Q0, Y → Q1.
    assert_eq!(run(AuctionPolicy::Sjf), [(2, 1, 100.0, 150.0), (0, 0, 100.0, 200.0), (1, 1, 100.0, 400.0)]);
    // EDF-FQ: Y (300), X (400), Z (1000), each to the least waiting queue with room: Y → Q0 (0 s, the first of the
    // two idle queues; 2·300/4 = 150 s of work after), X → Q1 (Q0 has 2 PEs left), Z: 6 PEs free nowhere.
    assert_eq!(run(AuctionPolicy::EdfFq), [(1, 0, 100.0, 400.0), (0, 1, 100.0, 200.0)]);
    // HVFQ: Z (1800) first, then X and Y (1000, by id): Z → Q1 (the only idle queue with 6 PEs; 37.5 s after);
    // X → Q0 (0 s); Y → Q1 (37.5 s, against Q2's 200).
    assert_eq!(run(AuctionPolicy::Hvfq), [(2, 1, 100.0, 150.0), (0, 0, 100.0, 200.0), (1, 1, 100.0, 400.0)]);
    // FairShare: valuation per PE, Y 500, Z 300, X 250: Y → Q0, Z → Q1, X → Q2 (Q0 has 2 PEs, Q1 has 2). Each is
    // within its share of the 16 free PEs (X and Y ⌊1000/3800 · 16⌋ = 4, Z ⌊1800/3800 · 16⌋ = 7), so both rules agree.
    let per_pe = DamParams { fair_share: FairShareRule::ValuationPerPe, ..DamParams::default() };
    for params in [DamParams::default(), per_pe] {
        let r = placed(&match_round(AuctionPolicy::FairShare, &params, &m));
        assert_eq!(r, [(1, 0, 100.0, 400.0), (2, 1, 100.0, 150.0), (0, 2, 100.0, 150.0)]);
    }
    // The baselines have no bids or asks.
    let r = match_round(AuctionPolicy::Fcfs, &DamParams::default(), &m);
    assert!(r.bids.is_empty() && r.asks.is_empty() && r.placements.iter().all(|p| p.scores.is_none()));
}

#[test]
fn packaged_slots_start_in_the_earliest_slot_that_fits() {
    // At t = 0 a queue of 4 PEs has 1 PE free until 100, then 4 until the horizon (1000). A (1 PE × 50 s) takes the
    // first slot now; B (2 PEs × 50 s) starts at 100; C (4 PEs × 5000 s) would fit the last slot, which reaches the
    // horizon and so is open, but B took 2 of its PEs.
    let q = MarketQueue { slots: vec![(0.0, 100.0, 1), (100.0, 1000.0, 4)], ..queue(0, 4, 1, 0.75, 75.0, 1.0) };
    let apps = vec![app(1, 1, 50.0, 1e9, 1.0, 0.0), app(2, 2, 50.0, 1e9, 1.0, 0.0), app(3, 4, 5000.0, 1e9, 1.0, 0.0)];
    let m = Market { now: 0.0, queues: vec![q], apps };
    let packaged = DamParams { slots: SlotGeneration::Packaged, horizon: 1000.0, ..DamParams::default() };
    let r = match_round(AuctionPolicy::Fcfs, &packaged, &m);
    assert_eq!(placed(&r), [(0, 0, 0.0, 50.0), (1, 0, 100.0, 150.0)]);
    // C first: it takes the open slot from 100, and B no longer fits.
    let mut m2 = m.clone();
    m2.apps.swap(1, 2);
    m2.apps[1].id = 2;
    m2.apps[2].id = 3;
    let r = match_round(AuctionPolicy::Fcfs, &packaged, &m2);
    assert_eq!(placed(&r), [(0, 0, 0.0, 50.0), (1, 0, 100.0, 5100.0)]);
    // Immediate slots see only the PE free now: A alone.
    assert_eq!(placed(&match_round(AuctionPolicy::Fcfs, &DamParams::default(), &m)), [(0, 0, 0.0, 50.0)]);
}

#[test]
fn the_k_double_auction_price_lies_between_the_posted_price_and_the_users_value() {
    // Posted price 5. A values its 2 PEs × 100 s at 10,000: 50 per PE-second; k = 0.5 → 5 + 0.5·45 = 27.5. B values
    // 100: 0.5 per PE-second, below the posted price → 5.
    let m = one_free_queue(vec![app(1, 2, 100.0, 1e9, 10_000.0, 0.0), app(2, 2, 100.0, 1e9, 100.0, 0.0)]);
    let kda = DamParams { payment: Payment::KDoubleAuction, ..DamParams::default() };
    let prices: Vec<f64> = match_round(AuctionPolicy::Dam, &kda, &m).placements.iter().map(|p| p.price).collect();
    assert_eq!(prices, [27.5, 5.0]);
    let k1 = DamParams { k: 1.0, ..kda };
    assert_eq!(match_round(AuctionPolicy::Dam, &k1, &m).placements[0].price, 50.0);
}

#[test]
fn screen_refuses_applications_too_wide_or_too_late() {
    // Widest queue: 8 PEs. At t = 100 the fastest 8-PE queue (Q2, speed 2) would finish 8 PEs × 500 s at 350.
    let m = Market {
        apps: vec![
            app(1, 9, 10.0, 1e9, 1.0, 0.0),
            app(2, 8, 500.0, 300.0, 1.0, 0.0),
            app(3, 8, 500.0, 360.0, 1.0, 0.0),
        ],
        ..hand_market()
    };
    let refused = screen(&m);
    assert_eq!(
        refused,
        [(0, Refusal::TooWide { pes: 9, largest: 8 }), (1, Refusal::Late { finish: 350.0, deadline: 300.0 })]
    );
    assert_eq!(refused[0].1.to_string(), "needs 9 PEs, more than any queue has (the largest has 8)");
    // A finish exactly at the deadline misses it (Alg 7.1: waiting + execution < deadline).
    let m = Market { apps: vec![app(1, 8, 500.0, 350.0, 1.0, 0.0)], ..hand_market() };
    assert_eq!(screen(&m).len(), 1);
    // No catalogue yet: nothing is refused.
    assert!(screen(&Market { queues: Vec::new(), ..m }).is_empty());
}

#[test]
fn random_markets_never_oversubscribe_nor_match_twice() {
    let policies = [
        AuctionPolicy::Dam,
        AuctionPolicy::Sjf,
        AuctionPolicy::Fcfs,
        AuctionPolicy::EdfFq,
        AuctionPolicy::Hvfq,
        AuctionPolicy::FairShare,
    ];
    for seed in 0..40 {
        let mut rng = Pcg64::seed_from_u64(seed);
        let now = rng.random_range(0.0..1000.0);
        let queues: Vec<MarketQueue> = (0..rng.random_range(1..8))
            .map(|k| {
                let pes = rng.random_range(1..64u32);
                let free = rng.random_range(0..=pes);
                let load = f64::from(pes - free) / f64::from(pes);
                let mut q = queue(k / 3, pes, free, load, rng.random_range(0.0..500.0), rng.random_range(1.0..1.4));
                q.valuation = rng.random_range(-1.0..10.0);
                q
            })
            .collect();
        let apps: Vec<Application> = (0..rng.random_range(0..40u64))
            .map(|id| {
                let runtime = rng.random_range(1.0..500.0);
                let deadline = now + runtime * rng.random_range(-0.5..3.0);
                app(
                    id,
                    rng.random_range(1..70),
                    runtime,
                    deadline,
                    rng.random_range(-100.0..1e5),
                    rng.random_range(0.0..now),
                )
            })
            .collect();
        let market = Market { now, queues, apps };
        for policy in policies {
            for bid_test in [BidTest::Always, BidTest::Literal] {
                let params = DamParams { bid_test, ..DamParams::default() };
                let r = match_round(policy, &params, &market);
                assert!(r.bids.iter().chain(&r.asks).all(|v| v.is_finite() && *v >= 0.0), "{r:?}");
                let mut used = vec![0u32; market.queues.len()];
                let mut seen = std::collections::BTreeSet::new();
                for p in &r.placements {
                    assert!(seen.insert(p.app), "{policy:?} matched application {} twice", p.app);
                    let a = &market.apps[p.app];
                    used[p.queue] += a.pes;
                    assert!(p.price.is_finite() && p.end > p.start);
                    if policy == AuctionPolicy::Dam {
                        assert!(p.end < a.deadline, "DAM matched a late application");
                    }
                }
                for (u, q) in used.iter().zip(&market.queues) {
                    assert!(*u <= q.free, "{policy:?}: {u} PEs placed in a queue with {} free", q.free);
                }
            }
        }
    }
}

#[test]
fn fair_share_caps_each_application_at_its_valuations_share_of_the_free_processors() {
    // One queue of 8 free PEs. A: 4 PEs, valuation 1; B: 2 PEs, valuation 3. Shares: A ⌊1/4 · 8⌋ = 2 < 4 PEs, so
    // A waits; B ⌊3/4 · 8⌋ = 6. Without the cap both run (B first by valuation per PE, then A in the 6 PEs left).
    let m = one_free_queue(vec![app(1, 4, 100.0, 1000.0, 1.0, 0.0), app(2, 2, 100.0, 1000.0, 3.0, 0.0)]);
    let proportional = placed(&match_round(AuctionPolicy::FairShare, &DamParams::default(), &m));
    assert_eq!(proportional, [(1, 0, 0.0, 100.0)]);
    let per_pe = DamParams { fair_share: FairShareRule::ValuationPerPe, ..DamParams::default() };
    assert_eq!(placed(&match_round(AuctionPolicy::FairShare, &per_pe, &m)), [(1, 0, 0.0, 100.0), (0, 0, 0.0, 100.0)]);
}

/// A registered policy: the queue that finishes the application first, declining applications of 6 PEs.
struct FinishFirst;

impl crate::metabroker::MetaPolicy for FinishFirst {
    fn name(&self) -> &'static str {
        "finish-first"
    }
    fn about(&self) -> &'static str {
        "the queue that finishes first"
    }
    fn choose<'c>(
        &self,
        app: &crate::metabroker::App,
        candidates: &'c [crate::metabroker::Candidate],
    ) -> Option<&'c crate::metabroker::Candidate> {
        (app.cpus != 6).then(|| candidates.iter().min_by(|a, b| a.finish.total_cmp(&b.finish))).flatten()
    }
}

#[test]
fn a_registered_policy_chooses_among_the_queues_with_a_slot_in_time() {
    // The hand market, first come, first served (X, Y, Z by id). X's candidates: Q2 (speed 2, ends 150, costs
    // 5 · 4 · 50 = 1000), Q0 and Q1 (end 200, cost 2000): Q2. Y (deadline 300) would end at 400 on Q0 and Q1, and Q2
    // has no PE left: no candidate, it stays pending. Z (6 PEs) fits only Q1 (ends 150); with the policy declining
    // 6-PE applications, it stays pending too.
    let m = hand_market();
    let r = match_each(&FinishFirst, &DamParams::default(), &m);
    assert_eq!(placed(&r), [(0, 2, 100.0, 150.0)]);
    assert!(r.placements.iter().all(|p| p.price == 5.0 && p.scores.is_none()));
    // Z alone in the market: the policy declines it.
    let z = Market { apps: vec![m.apps[2].clone()], ..m.clone() };
    assert!(match_each(&FinishFirst, &DamParams::default(), &z).placements.is_empty());
    // The k-double-auction payment sets the candidates' prices: X values 1000 over 4 PEs × 50 s on Q2, 5 per
    // PE-second, the posted price: it pays 5; twice the valuation pays 5 + 0.5 · (10 − 5).
    let kda = DamParams { payment: Payment::KDoubleAuction, ..DamParams::default() };
    let mut rich = m.clone();
    rich.apps[0].valuation = 2000.0;
    assert_eq!(match_each(&FinishFirst, &kda, &rich).placements[0].price, 7.5);
}
