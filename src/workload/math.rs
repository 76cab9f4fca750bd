//! Special functions for the analytic means of the workload models.
//!
//! `std` has no stable `ln_gamma`/`erf`, and the reference code (`m_lublin99.c`) needs the
//! gamma CDF for its daily arrival cycle, so the classic Numerical Recipes forms are used.

use std::f64::consts::PI;

/// Iteration cap of the incomplete-gamma series and continued fraction. Larger than the
/// model's own ITER_MAX (1000) because the runtime gamma of batch jobs has shape 639.1,
/// where the series needs O(sqrt(shape)) terms with a large constant.
const ITER_MAX: usize = 10_000;
/// Relative accuracy of the incomplete-gamma evaluation (`EPS` of `m_lublin99.c`).
const EPS: f64 = 1e-14;
/// Smallest magnitude kept in Lentz's continued fraction.
const FPMIN: f64 = 1e-300;

/// ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9; relative error below 1e-13).
pub(crate) fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection keeps the approximation in its accurate range.
        (PI / (PI * x).sin()).ln() - ln_gamma(1.0 - x)
    } else {
        let x = x - 1.0;
        let t = x + 7.5;
        let a = C[1..].iter().enumerate().fold(C[0], |acc, (i, c)| acc + c / (x + i as f64 + 1.0));
        0.5 * (2.0 * PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
    }
}

/// Γ(x) for x > 0.
pub(crate) fn gamma_fn(x: f64) -> f64 {
    ln_gamma(x).exp()
}

/// Regularised lower incomplete gamma P(a, x), a > 0 (Numerical Recipes gser/gcf).
pub(crate) fn gamma_p(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    let prefactor = (-x + a * x.ln() - ln_gamma(a)).exp();
    if x < a + 1.0 {
        let mut ap = a;
        let mut term = 1.0 / a;
        let mut sum = term;
        for _ in 0..ITER_MAX {
            ap += 1.0;
            term *= x / ap;
            sum += term;
            if term.abs() < sum.abs() * EPS {
                break;
            }
        }
        (sum * prefactor).min(1.0)
    } else {
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / FPMIN;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..=ITER_MAX {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < FPMIN {
                d = FPMIN;
            }
            c = b + an / c;
            if c.abs() < FPMIN {
                c = FPMIN;
            }
            d = 1.0 / d;
            let delta = d * c;
            h *= delta;
            if (delta - 1.0).abs() < EPS {
                break;
            }
        }
        (1.0 - prefactor * h).max(0.0)
    }
}

/// CDF of Gamma(shape `a`, scale `b`) at `x` (`gamcdf` of `m_lublin99.c`).
pub(crate) fn gamma_cdf(x: f64, a: f64, b: f64) -> f64 {
    gamma_p(a, x / b)
}

/// Complementary error function (Numerical Recipes `erfcc`, relative error < 1.2e-7).
pub(crate) fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98 + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// Standard normal CDF Φ(x).
pub(crate) fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// Standard normal density φ(x).
pub(crate) fn normal_pdf(x: f64) -> f64 {
    (-0.5 * x * x).exp() / (2.0 * PI).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gamma_function_matches_factorials() {
        assert!((gamma_fn(5.0) - 24.0).abs() < 1e-10);
        assert!((gamma_fn(0.5) - PI.sqrt()).abs() < 1e-12);
        assert!((ln_gamma(639.1) - 3_487.213_983_073_563).abs() < 1e-9); // Python math.lgamma
    }

    #[test]
    fn incomplete_gamma_known_values() {
        // P(1, x) = 1 - exp(-x).
        for x in [0.1, 1.0, 2.5, 10.0] {
            assert!((gamma_p(1.0, x) - (1.0 - (-x).exp())).abs() < 1e-12);
        }
        // Median of Gamma(shape n large) ~ mean; P(639.1, 639.1) close to 0.5.
        let p = gamma_p(639.1, 639.1);
        assert!((p - 0.5).abs() < 0.02, "{p}");
        assert_eq!(gamma_p(3.0, 0.0), 0.0);
    }

    #[test]
    fn normal_cdf_values() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(1.96) - 0.975).abs() < 1e-4);
        assert!((normal_cdf(-1.0) - 0.158_655_25).abs() < 1e-6);
    }
}
