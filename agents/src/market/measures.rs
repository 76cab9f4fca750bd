//! Market measures, pure functions of the induced values and the trades: the competitive equilibrium of a demand
//! and supply schedule, allocative efficiency, Smith's α, price volatility and the Gini coefficient.

pub use crate::report::Equilibrium;

impl Equilibrium {
    /// The equilibrium of `values` (buyers' units) and `costs` (sellers' units), in any order.
    pub fn of(values: &[f64], costs: &[f64]) -> Equilibrium {
        let mut v = values.to_vec();
        let mut c = costs.to_vec();
        v.sort_by(|a, b| b.total_cmp(a));
        c.sort_by(f64::total_cmp);
        let q = v.iter().zip(&c).take_while(|(v, c)| v >= c).count();
        if q == 0 {
            let (marginal_value, marginal_cost) = (f64::INFINITY, f64::NEG_INFINITY);
            let (low, high, price) = (f64::NAN, f64::NAN, f64::NAN);
            return Equilibrium { quantity: 0, low, high, price, surplus: 0.0, marginal_value, marginal_cost };
        }
        let low = c[q - 1].max(v.get(q).copied().unwrap_or(0.0));
        let high = v[q - 1].min(c.get(q).copied().unwrap_or(f64::INFINITY));
        let price = if high.is_finite() { (low + high) / 2.0 } else { low };
        let surplus = v.iter().zip(&c).take(q).map(|(v, c)| v - c).sum();
        let (marginal_value, marginal_cost) = (v[q - 1], c[q - 1]);
        Equilibrium { quantity: q as u32, low, high, price, surplus, marginal_value, marginal_cost }
    }
}

/// Smith's (1962) α: the root-mean-square deviation of the transaction prices from the equilibrium price, as a
/// percentage of it, 100 √(Σ (p − P*)² / n) / P*. NaN without trades or without a positive P*.
pub fn smiths_alpha(prices: &[f64], equilibrium: f64) -> f64 {
    if prices.is_empty() || equilibrium.is_nan() || equilibrium <= 0.0 {
        return f64::NAN;
    }
    let mean_square = prices.iter().map(|p| (p - equilibrium).powi(2)).sum::<f64>() / prices.len() as f64;
    100.0 * mean_square.sqrt() / equilibrium
}

/// Price volatility: the root mean square of the changes from one transaction price to the next, over the
/// equilibrium price. NaN with fewer than two trades.
pub fn volatility(prices: &[f64], equilibrium: f64) -> f64 {
    if prices.len() < 2 || equilibrium.is_nan() || equilibrium <= 0.0 {
        return f64::NAN;
    }
    let changes: Vec<f64> = prices.windows(2).map(|w| w[1] - w[0]).collect();
    (changes.iter().map(|d| d * d).sum::<f64>() / changes.len() as f64).sqrt() / equilibrium
}

/// The Gini coefficient of non-negative amounts, Σᵢ Σⱼ |xᵢ − xⱼ| / (2 n² x̄): 0 when all are equal, (n − 1) / n when
/// one holds everything. NaN when empty, when all are 0, or when one is negative (a trader that lost money).
pub fn gini(amounts: &[f64]) -> f64 {
    let n = amounts.len() as f64;
    let total: f64 = amounts.iter().sum();
    if amounts.is_empty() || total <= 0.0 || amounts.iter().any(|x| *x < 0.0 || !x.is_finite()) {
        return f64::NAN;
    }
    let mut sorted = amounts.to_vec();
    sorted.sort_by(f64::total_cmp);
    // Σᵢ Σⱼ |xᵢ − xⱼ| = 2 Σᵢ (2i − n + 1) x₍ᵢ₎ over the sorted amounts, i from 0.
    let weighted: f64 = sorted.iter().enumerate().map(|(i, x)| (2.0 * i as f64 - n + 1.0) * x).sum();
    weighted / (n * total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_equilibrium_of_a_small_schedule() {
        // Values 10, 8, 6, 4 against costs 3, 5, 7, 9: two units trade (8 ≥ 5, 6 < 7); prices from max(5, 6) = 6 to
        // min(8, 7) = 7 clear the market; the surplus is (10 − 3) + (8 − 5) = 10.
        let e = Equilibrium::of(&[4.0, 10.0, 6.0, 8.0], &[9.0, 3.0, 7.0, 5.0]);
        let (marginal_value, marginal_cost) = (8.0, 5.0);
        let expected =
            Equilibrium { quantity: 2, low: 6.0, high: 7.0, price: 6.5, surplus: 10.0, marginal_value, marginal_cost };
        assert_eq!(e, expected);
        // Equal at the margin: the third unit (6 against 6) trades, at 6 exactly.
        let e = Equilibrium::of(&[10.0, 8.0, 6.0], &[3.0, 5.0, 6.0]);
        assert_eq!((e.quantity, e.low, e.high, e.surplus), (3, 6.0, 6.0, 10.0));
        // Every buyer trades: the band is open above up to the next cost.
        let e = Equilibrium::of(&[10.0, 9.0], &[1.0, 2.0, 12.0]);
        assert_eq!((e.quantity, e.low, e.high, e.price), (2, 2.0, 9.0, 5.5));
        let e = Equilibrium::of(&[10.0], &[1.0]);
        assert_eq!((e.low, e.high, e.price), (1.0, 10.0, 5.5));
        // Valuations below every cost: nothing trades.
        let none = Equilibrium::of(&[1.0, 2.0], &[3.0]);
        assert_eq!((none.quantity, none.surplus), (0, 0.0));
        assert!(none.price.is_nan());
    }

    #[test]
    fn test_alpha_volatility_and_gini() {
        // Deviations −10 and +10 from 100: α = 10%.
        assert!((smiths_alpha(&[90.0, 110.0], 100.0) - 10.0).abs() < 1e-12);
        assert_eq!(smiths_alpha(&[100.0; 5], 100.0), 0.0);
        assert!(smiths_alpha(&[], 100.0).is_nan());
        // Changes +20 and −20 over 100.
        assert!((volatility(&[90.0, 110.0, 90.0], 100.0) - 0.2).abs() < 1e-12);
        assert!(volatility(&[90.0], 100.0).is_nan());
        assert_eq!(gini(&[3.0, 3.0, 3.0]), 0.0);
        assert!((gini(&[0.0, 0.0, 0.0, 8.0]) - 0.75).abs() < 1e-12);
        // Σ|xi − xj| over ordered pairs of (1, 2, 3) is 8; 8 / (2 · 9 · 2) = 2/9.
        assert!((gini(&[2.0, 3.0, 1.0]) - 2.0 / 9.0).abs() < 1e-12);
        assert!(gini(&[1.0, -1.0, 2.0]).is_nan());
    }
}
