//! PEMP, the preemption-aware energy management policy of Amini Salehi (2012) ch6, as pure functions.
//!
//! PEMP (Preemption-aware Energy Management Policy) decides, for each arriving local request and periodically,
//! how many of the nodes the request needs come from switching nodes on and how many from preempting external
//! leases, or whether to consolidate (suspend the leases of lightly used nodes and switch those off). A fuzzy
//! controller (§6.3.1) maps two inputs, the violation risk V (Eq 6.2) and the utilisation of the switched-on nodes C
//! (Eq 6.5), through the 20 rules of Table 6.1 with product inference and a centre-average defuzzifier (Eq 6.9) to
//! f; Algorithm 5 turns f into the decision. The baselines GESP (Greedy Energy Saver Policy) and SESP
//! (Starvation-aware Energy Saving Policy) of §6.4 decide without the controller.
//!
//! The thesis draws the membership functions (Fig 6.2) without numbers. Ours, treated as calibration parameters:
//! C's five triangles are centred at 0, 0.25, 0.5, 0.75 and 1 (shoulders at both ends); V's four at 0, 0.5, 1 and
//! 1.5 (VHR a right shoulder rising from V = 1 to full at V = 1.5); the output centres are NP = −1, QP = 0.25,
//! HP = 0.5, 3QP = 0.75, AP = 1, LC = 1.25, MC = 1.5 and HC = 2. With HC at 2, f never exceeds 2, so Algorithm 5's
//! f > 2 branch is never taken: high consolidation consolidates the whole request.

use serde::{Deserialize, Serialize};

/// Which policy manages a provider's node power (Amini Salehi 2012, ch6); deserialises from "pemp", "gesp", "sesp".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EnergyPolicy {
    /// Preemption-aware Energy Management Policy: the fuzzy controller and Algorithm 5.
    #[default]
    Pemp,
    /// Greedy Energy Saver Policy: switch on only what local requests need; external requests use what is left.
    Gesp,
    /// Starvation-aware Energy Saving Policy: when V ≥ 1 switch on as many nodes as the request needs (a local
    /// one on arrival, the waiting external one at the periodic check); below, a local request preempts external
    /// leases and nodes are switched on only for what preemption cannot free.
    Sesp,
}

/// Universe of C, the utilisation of the switched-on nodes (a ratio).
pub const UTILISATION_UNIVERSE: (f64, f64) = (0.0, 1.0);
/// Universe of V, the violation risk: beyond 1.5 every membership is that of 1.5 (VHR full), so larger values are
/// clamped without changing f.
pub const RISK_UNIVERSE: (f64, f64) = (0.0, 1.5);

/// The output sets of Eq 6.7 by their centres ȳ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// No preemption: switch on all the request needs.
    Np,
    /// A quarter by preemption, the rest by switching on.
    Qp,
    /// Half by preemption.
    Hp,
    /// Three quarters by preemption.
    Tqp,
    /// All by preemption: switch on none.
    Ap,
    /// Low consolidation.
    Lc,
    /// Medium consolidation.
    Mc,
    /// High consolidation.
    Hc,
}

impl Output {
    /// The set's centre ȳ.
    pub fn centre(self) -> f64 {
        match self {
            Output::Np => -1.0,
            Output::Qp => 0.25,
            Output::Hp => 0.5,
            Output::Tqp => 0.75,
            Output::Ap => 1.0,
            Output::Lc => 1.25,
            Output::Mc => 1.5,
            Output::Hc => 2.0,
        }
    }
}

/// Table 6.1: rows are V in LR, MR, HR, VHR; columns C in VL, L, M, H, VH.
pub const RULES: [[Output; 5]; 4] = {
    use Output::*;
    [[Hc, Hc, Mc, Lc, Ap], [Mc, Lc, Lc, Hp, Tqp], [Hp, Hp, Qp, Qp, Np], [Qp, Qp, Np, Np, Np]]
};

/// A triangle rising from `a` to full at `b` and falling to nothing at `c`; `a == b` or `b == c` makes a shoulder
/// (full on that side of `b`).
fn triangle(x: f64, a: f64, b: f64, c: f64) -> f64 {
    if x < b {
        if a == b { 1.0 } else { ((x - a) / (b - a)).max(0.0) }
    } else if b == c {
        1.0
    } else {
        ((c - x) / (c - b)).max(0.0)
    }
}

/// Memberships of C in VL, L, M, H, VH.
pub fn utilisation_memberships(c: f64) -> [f64; 5] {
    [
        triangle(c, 0.0, 0.0, 0.25),
        triangle(c, 0.0, 0.25, 0.5),
        triangle(c, 0.25, 0.5, 0.75),
        triangle(c, 0.5, 0.75, 1.0),
        triangle(c, 0.75, 1.0, 1.0),
    ]
}

/// Memberships of V in LR, MR, HR, VHR.
pub fn risk_memberships(v: f64) -> [f64; 4] {
    [triangle(v, 0.0, 0.0, 0.5), triangle(v, 0.0, 0.5, 1.0), triangle(v, 0.5, 1.0, 1.5), triangle(v, 1.0, 1.5, 1.5)]
}

/// `x` inside `universe`, and whether it had to be moved there (a NaN is taken as the lower end).
pub fn clamp(x: f64, universe: (f64, f64)) -> (f64, bool) {
    if x.is_nan() {
        return (universe.0, true);
    }
    let y = x.clamp(universe.0, universe.1);
    (y, y != x)
}

/// The controller's output f (Eq 6.9): singleton fuzzifier, product inference over the 20 rules, centre-average
/// defuzzifier. The inputs must be in their universes (see [`clamp`]).
pub fn fuzzy_reasoning(risk: f64, utilisation: f64) -> f64 {
    let (mc, mv) = (utilisation_memberships(utilisation), risk_memberships(risk));
    let (mut num, mut den) = (0.0, 0.0);
    for (v, row) in RULES.iter().enumerate() {
        for (c, out) in row.iter().enumerate() {
            let w = mv[v] * mc[c];
            num += w * out.centre();
            den += w;
        }
    }
    // The triangles cover each universe, so some rule always fires; guard anyway.
    if den > 0.0 { num / den } else { 0.0 }
}

/// The violation risk V = τ/(α·E) (Eq 6.2-6.4) of the waiting external requests, each given as (VMs n_i, duration
/// d_i \[s\], waited so far w_i \[s\]); 0 when none waits.
pub fn violation_risk(waiting: &[(u32, f64, f64)], alpha: f64) -> f64 {
    let vms: f64 = waiting.iter().map(|&(n, _, _)| f64::from(n)).sum();
    if vms == 0.0 {
        return 0.0;
    }
    let mean_duration = waiting.iter().map(|&(n, d, _)| f64::from(n) * d).sum::<f64>() / vms;
    let mean_wait = waiting.iter().map(|&(n, _, w)| f64::from(n) * w).sum::<f64>() / vms;
    if mean_duration <= 0.0 { 0.0 } else { mean_wait / (alpha * mean_duration) }
}

/// The utilisation of the switched-on nodes C = L / Σ T_j (Eq 6.5): `load` [VM-s] over the sum of each switched-on
/// node's horizon \[s\]; 0 when no node has anything ahead.
pub fn utilisation(load: f64, horizons: impl IntoIterator<Item = f64>) -> f64 {
    let total: f64 = horizons.into_iter().sum();
    if total > 0.0 { load / total } else { 0.0 }
}

/// What Algorithm 5 decides for a request of `nodes` nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Switch on `switch_on` nodes and preempt external leases for `preempt` more.
    Provide {
        /// Nodes to switch on.
        switch_on: u32,
        /// Nodes to free by preemption.
        preempt: u32,
    },
    /// Consolidate this many nodes' worth of leases (if the local leases then scheduled leave room).
    Consolidate(u32),
}

/// Algorithm 5 from f: f ≤ 0 switches on all (the printed f < 0 branch sets Num and calls nothing, and f = 0 falls
/// through: both read as NP); 0 < f ≤ 1 switches on ⌈nodes·(1 − f)⌉ and preempts for the rest; f > 1
/// consolidates ⌊nodes·(f − 1)⌋, all of `nodes` past 2.
pub fn decide(f: f64, nodes: u32) -> Decision {
    let n = f64::from(nodes);
    if f <= 0.0 {
        Decision::Provide { switch_on: nodes, preempt: 0 }
    } else if f <= 1.0 {
        let switch_on = ((n * (1.0 - f)).ceil() as u32).min(nodes);
        Decision::Provide { switch_on, preempt: nodes - switch_on }
    } else if f > 2.0 {
        Decision::Consolidate(nodes)
    } else {
        Decision::Consolidate(((n * (f - 1.0)) + 1e-9).floor() as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn two_rules_firing_are_averaged_by_their_products() {
        // C = 0.5 is M only; V = 0.25 is LR 0.5 and MR 0.5: rule 3 (LR, M → MC 1.5) and rule 8 (MR, M → LC 1.25)
        // fire with 0.5 each: f = (0.5·1.5 + 0.5·1.25) / (0.5 + 0.5) = 1.375.
        assert!(close(fuzzy_reasoning(0.25, 0.5), 1.375));
        // C = 0.875 is H 0.5 and VH 0.5; V = 0 is LR: rule 4 (LC 1.25) and rule 5 (AP 1): f = 1.125.
        assert!(close(fuzzy_reasoning(0.0, 0.875), 1.125));
        // Unequal weights: C = 0.3 is VL 0 … L 0.8, M 0.2; V = 1.2 is HR 0.6, VHR 0.4. Rules 12 (HR, L → HP) 0.48,
        // 13 (HR, M → QP) 0.12, 17 (VHR, L → QP) 0.32, 18 (VHR, M → NP) 0.08:
        // f = 0.48·0.5 + 0.12·0.25 + 0.32·0.25 + 0.08·(−1) = 0.27 (the weights sum to 1).
        assert!(close(fuzzy_reasoning(1.2, 0.3), 0.27));
    }

    #[test]
    fn rule_centres_come_out_where_one_rule_fires() {
        // The example rule (Eq 6.8), "if V is M and C is H then D is HP": rule 9.
        assert!(close(fuzzy_reasoning(0.5, 0.75), 0.5));
        assert!(close(fuzzy_reasoning(0.0, 0.0), 2.0), "idle and no risk: high consolidation");
        assert!(close(fuzzy_reasoning(1.5, 1.0), -1.0), "busy and very high risk: no preemption");
        assert!(close(fuzzy_reasoning(0.0, 1.0), 1.0), "busy, no risk: all by preemption");
    }

    #[test]
    fn memberships_cover_each_universe() {
        for i in 0..=100 {
            let x = f64::from(i) / 100.0;
            assert!(close(utilisation_memberships(x).iter().sum(), 1.0), "C = {x}");
            assert!(close(risk_memberships(1.5 * x).iter().sum(), 1.0), "V = {}", 1.5 * x);
        }
    }

    #[test]
    fn inputs_outside_their_universe_are_clamped_and_flagged() {
        assert_eq!(clamp(1.2, UTILISATION_UNIVERSE), (1.0, true));
        assert_eq!(clamp(-0.1, RISK_UNIVERSE), (0.0, true));
        assert_eq!(clamp(f64::NAN, RISK_UNIVERSE), (0.0, true));
        assert_eq!(clamp(0.7, RISK_UNIVERSE), (0.7, false));
    }

    #[test]
    fn risk_and_utilisation_follow_eq_6_2_to_6_6() {
        // Two waiting requests: 2 VMs of 1 h that waited 2 h, 6 VMs of 3 h that waited 4 h.
        // E = (2·3600 + 6·10800)/8 = 9000 s; τ = (2·7200 + 6·14400)/8 = 12600 s; V = 12600/(5·9000) = 0.28.
        let v = violation_risk(&[(2, 3600.0, 7200.0), (6, 10800.0, 14400.0)], 5.0);
        assert!(close(v, 0.28));
        assert_eq!(violation_risk(&[], 5.0), 0.0);
        assert!(close(utilisation(300.0, [100.0, 200.0, 300.0]), 0.5));
        assert_eq!(utilisation(0.0, []), 0.0);
    }

    #[test]
    fn algorithm_5_splits_the_request() {
        assert_eq!(decide(-1.0, 10), Decision::Provide { switch_on: 10, preempt: 0 });
        assert_eq!(decide(0.0, 10), Decision::Provide { switch_on: 10, preempt: 0 });
        // HP: half and half; QP rounds the switch-on up.
        assert_eq!(decide(0.5, 10), Decision::Provide { switch_on: 5, preempt: 5 });
        assert_eq!(decide(0.25, 5), Decision::Provide { switch_on: 4, preempt: 1 });
        assert_eq!(decide(1.0, 10), Decision::Provide { switch_on: 0, preempt: 10 });
        assert_eq!(decide(1.375, 8), Decision::Consolidate(3));
        assert_eq!(decide(2.0, 8), Decision::Consolidate(8));
    }
}
