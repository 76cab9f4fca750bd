//! DAM's valuation stage (Garg 2010 §7.3.1): the asks of queues (7.1) and the bids of applications (7.2), products
//! of normalised attributes.
//!
//! Every value is finite and non-negative, whatever the inputs (the thesis's 0/0 and d_i = t cases included):
//! - a ratio x / x_max whose maximum is 0 counts as 1 (nothing tells the values apart), and negative attributes
//!   count as 0;
//! - times to a deadline below 1 s count as 1 s (the second the age factor adds to waiting times), so d_i = t gives
//!   the most urgent bid, not a division by zero; an application without a deadline is as urgent as the most
//!   relaxed one (a factor of 1);
//! - Supply counts at least one processor.

use super::{Application, MarketQueue};

/// x / max, with 0/0 = 1 and negative x as 0.
fn ratio(x: f64, max: f64) -> f64 {
    if max > 0.0 { x.max(0.0) / max } else { 1.0 }
}

/// Demand / Supply: the PEs the applications ask for over the PEs free now at every queue (at least 1).
pub fn demand_supply(apps: &[Application], queues: &[MarketQueue]) -> f64 {
    let demand: f64 = apps.iter().map(|a| f64::from(a.pes)).sum();
    let supply: f64 = queues.iter().map(|q| f64::from(q.free)).sum();
    demand / supply.max(1.0)
}

/// The ask of every queue (7.1): a_k = O_k × w_k × (c_k / c_max) × (l_k / l_max) × Demand/Supply, with `scale` =
/// O_k and `market` = Demand/Supply. The least loaded, least waiting, cheapest queue asks least.
pub fn asks(queues: &[MarketQueue], market: f64, scale: f64) -> Vec<f64> {
    let c_max = queues.iter().map(|q| q.valuation).fold(0.0, f64::max);
    let l_max = queues.iter().map(|q| q.load).fold(0.0, f64::max);
    queues.iter().map(|q| ask((q.wait, q.valuation, q.load), (c_max, l_max), market, scale)).collect()
}

/// The ask of a queue of waiting time, valuation and load `(w, c, l)` against the market's `(c_max, l_max)`.
pub(super) fn ask((w, c, l): (f64, f64, f64), (c_max, l_max): (f64, f64), market: f64, scale: f64) -> f64 {
    scale * w.max(0.0) * ratio(c, c_max) * ratio(l, l_max) * market
}

/// The bid of every application at `now` (7.2): b_i = H_i × (v_i / v_max) × ((d_max − t) / (d_i − t)) ×
/// Demand/Supply × ((t − st_i) / u + 1) / ((t − st_min) / u + 1), with `scale` = H_i, `market` = Demand/Supply and
/// the age counted in units of `age_unit` seconds (u; 1 counts seconds); d_max and st_min over the pending
/// applications. Urgent, valuable and long-waiting applications bid most.
pub fn bids(apps: &[Application], now: f64, market: f64, scale: f64, age_unit: f64) -> Vec<f64> {
    let v_max = apps.iter().map(|a| a.valuation).fold(0.0, f64::max);
    let d_max = apps.iter().map(|a| a.deadline).filter(|d| d.is_finite()).fold(f64::NEG_INFINITY, f64::max);
    let st_min = apps.iter().map(|a| a.submit).fold(f64::INFINITY, f64::min);
    let age_of = |submit: f64| ((now - submit) / age_unit + 1.0).max(1.0);
    let oldest = age_of(st_min);
    apps.iter()
        .map(|a| {
            let urgency =
                if a.deadline.is_finite() { (d_max - now).max(1.0) / (a.deadline - now).max(1.0) } else { 1.0 };
            let age = age_of(a.submit) / oldest;
            scale * ratio(a.valuation, v_max) * urgency * market * age
        })
        .collect()
}
