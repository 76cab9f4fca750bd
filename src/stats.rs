//! Statistics over independent replications of one experiment.
//!
//! A replication set is a slice of per-seed results. [`Summary::of`] reduces it to the mean, the sample standard
//! deviation and a two-sided 95% Student-t confidence half-width, the figures every report prints. Comparing two
//! policies run on the same seeds is done with [`paired_difference`] (common random numbers make the per-seed
//! differences far less noisy than two independent intervals), [`relative_paired_difference`] and
//! [`relative_difference`].
//!
//! Everything is pure and panic-free: undefined quantities (the mean of nothing, the spread of one value) are NaN
//! rather than errors, so a sweep with a failed cell still produces a report. Means and variances use Welford's
//! single-pass update, which stays accurate when the values share a large offset (e.g. timestamps).

use std::fmt;

use serde::Serialize;

/// Mean, spread and 95% confidence interval of a set of replication results.
///
/// Undefined fields are NaN (serialized as `null` by `serde_json`, shown as `n/a` by [`Display`](fmt::Display)):
/// with `n = 0` every float field is NaN; with `n = 1`, `std` and `ci95` are NaN because one value says nothing
/// about the spread. A NaN among the values propagates to `mean`, `std`, `ci95`, `min` and `max`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (divisor `n - 1`).
    pub std: f64,
    /// Half-width of the two-sided 95% Student-t confidence interval of the mean.
    pub ci95: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

impl Summary {
    /// Summarizes `values` in one numerically stable pass.
    pub fn of(values: &[f64]) -> Summary {
        let acc = Welford::over(values);
        // f64::min/max would silently skip NaN; a NaN among the values must stay visible in min/max too.
        let (min, max) = if values.is_empty() || values.iter().any(|x| x.is_nan()) {
            (f64::NAN, f64::NAN)
        } else {
            values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)))
        };
        let (n, mean) = (acc.n, acc.mean());
        let std = acc.sample_variance().sqrt();
        let ci95 = if n < 2 { f64::NAN } else { student_t_975(n - 1) * std / (n as f64).sqrt() };
        Summary { n, mean, std, ci95, min, max }
    }

    /// Lower bound of the 95% confidence interval (`mean - ci95`).
    pub fn lo(&self) -> f64 {
        self.mean - self.ci95
    }

    /// Upper bound of the 95% confidence interval (`mean + ci95`).
    pub fn hi(&self) -> f64 {
        self.mean + self.ci95
    }

    /// Whether `x` lies in the closed 95% confidence interval; false whenever the interval or `x` is NaN.
    pub fn contains(&self, x: f64) -> bool {
        self.lo() <= x && x <= self.hi()
    }
}

/// Formats as `mean ± ci95 (n=N)`, e.g. `1.2346 ± 0.0123 (n=10)`; NaN shows as `n/a`.
///
/// The formatter's precision sets the number of decimals (`{:.2}`); the default is 4.
impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let decimals = f.precision().unwrap_or(4);
        let show = |x: f64| if x.is_nan() { "n/a".to_owned() } else { format!("{x:.decimals$}") };
        write!(f, "{} ± {} (n={})", show(self.mean), show(self.ci95), self.n)
    }
}

/// Two slices that should pair up element by element have different lengths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LengthMismatch {
    /// Length of the first slice.
    pub left: usize,
    /// Length of the second slice.
    pub right: usize,
}

impl fmt::Display for LengthMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "paired samples differ in length: {} vs {}", self.left, self.right)
    }
}

impl std::error::Error for LengthMismatch {}

/// Summary of the per-seed differences `a[i] - b[i]` of two runs on the same seeds.
///
/// Its `ci95` is the paired-t interval: when it excludes zero the two configurations differ at the 5% level.
///
/// # Errors
///
/// [`LengthMismatch`] if the slices differ in length, since then seeds cannot be matched.
pub fn paired_difference(a: &[f64], b: &[f64]) -> Result<Summary, LengthMismatch> {
    if a.len() != b.len() {
        return Err(LengthMismatch { left: a.len(), right: b.len() });
    }
    let diffs: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    Ok(Summary::of(&diffs))
}

/// Summary of the per-seed differences `a[i] - b[i]` over `|mean(b)|`: a relative effect on common seeds.
///
/// Its `ci95` is the paired-t interval scaled by the baseline; the baseline mean's own uncertainty is not carried
/// into it (a second-order term while the baseline is far from zero). NaN or infinite when the baseline mean is 0.
///
/// # Errors
///
/// [`LengthMismatch`] if the slices differ in length, since then seeds cannot be matched.
pub fn relative_paired_difference(a: &[f64], b: &[f64]) -> Result<Summary, LengthMismatch> {
    if a.len() != b.len() {
        return Err(LengthMismatch { left: a.len(), right: b.len() });
    }
    let base = Welford::over(b).mean().abs();
    let diffs: Vec<f64> = a.iter().zip(b).map(|(x, y)| (x - y) / base).collect();
    Ok(Summary::of(&diffs))
}

/// Relative difference of the means, `(mean(a) - mean(b)) / |mean(b)|`, with `b` as the baseline.
///
/// The slices need not have the same length. NaN if either is empty or both means are zero; ±infinity if only the
/// baseline mean is zero.
pub fn relative_difference(a: &[f64], b: &[f64]) -> f64 {
    let (ma, mb) = (Welford::over(a).mean(), Welford::over(b).mean());
    (ma - mb) / mb.abs()
}

/// Difference of the means of two independent samples, `mean(a) - mean(b)`, with Welch's 95% interval: for
/// comparing two sets of values that cannot be paired (e.g. one value per sweep point of two different sweeps).
///
/// `n` is the number of values in both, `std` the standard error of the difference, `sqrt(s_a²/n_a + s_b²/n_b)`,
/// and `ci95` that error times the t quantile at the Welch–Satterthwaite degrees of freedom, rounded down (a wider,
/// conservative interval); 0 when both samples are constant. NaN (an undefined interval) when either sample has
/// fewer than 2 values. `min` and `max` are NaN: a difference of means has no values of its own.
pub fn welch_difference(a: &[f64], b: &[f64]) -> Summary {
    let (x, y) = (Welford::over(a), Welford::over(b));
    let (va, vb) = (x.sample_variance() / x.n as f64, y.sample_variance() / y.n as f64);
    let se = (va + vb).sqrt();
    let ci95 = if x.n < 2 || y.n < 2 {
        f64::NAN
    } else if se == 0.0 {
        0.0
    } else {
        // At least min(n_a, n_b) - 1 >= 1.
        let df = (va + vb).powi(2) / (va * va / (x.n - 1) as f64 + vb * vb / (y.n - 1) as f64);
        student_t_975(df.floor().max(1.0) as usize) * se
    };
    Summary { n: x.n + y.n, mean: x.mean() - y.mean(), std: se, ci95, min: f64::NAN, max: f64::NAN }
}

/// The 0.975 quantile of Student's t distribution with `df` degrees of freedom, the factor of a two-sided 95%
/// confidence interval; e.g. 12.706205 for `df = 1`, tending to 1.959964 as `df` grows. NaN for `df = 0`.
///
/// Accurate to about 1e-12 for every `df >= 1`: up to `df = 1000` the exact finite series of the t
/// distribution function is inverted by bisection; above it the Cornish-Fisher expansion in `1/df` is used, whose
/// first omitted term is below 1e-15 there.
pub fn student_t_975(df: usize) -> f64 {
    match df {
        0 => f64::NAN,
        1..=SERIES_MAX_DF => t_975_by_series(df),
        _ => t_975_by_expansion(df as f64),
    }
}

/// Largest `df` for which [`student_t_975`] inverts the exact series (cost grows linearly with `df`).
const SERIES_MAX_DF: usize = 1000;

/// Φ⁻¹(0.975), the standard normal 0.975 quantile and the limit of [`student_t_975`].
const Z_975: f64 = 1.959_963_984_540_054;

/// Solves `P(|T| < t) = 0.95` for `t` by bisection on the angle θ = atan(t / √df), which maps the unbounded `t`
/// onto (0, π/2) where the series below is a smooth increasing function.
fn t_975_by_series(df: usize) -> f64 {
    let (mut lo, mut hi) = (0.0_f64, std::f64::consts::FRAC_PI_2);
    // 64 halvings take the bracket below one ulp of π/2; stop earlier once the midpoint no longer moves.
    for _ in 0..64 {
        let mid = lo.midpoint(hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if two_sided_cdf(mid, df) < 0.95 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (df as f64).sqrt() * lo.midpoint(hi).tan()
}

/// `P(|T| < √df · tan θ)` for integer `df >= 1`: the finite series of Abramowitz & Stegun 26.7.3 (odd `df`) and
/// 26.7.4 (even `df`).
fn two_sided_cdf(theta: f64, df: usize) -> f64 {
    let (s, c) = theta.sin_cos();
    let c2 = c * c;
    if df % 2 == 1 {
        // (2/π) [θ + sinθ (cosθ + (2/3) cos³θ + … + (2·4…(df−3))/(1·3…(df−2)) cos^(df−2)θ)]
        let mut sum = 0.0;
        let mut term = c;
        for k in 1..=(df - 1) / 2 {
            sum += term;
            term *= c2 * (2 * k) as f64 / (2 * k + 1) as f64;
        }
        std::f64::consts::FRAC_2_PI * (theta + s * sum)
    } else {
        // sinθ [1 + (1/2) cos²θ + (1·3)/(2·4) cos⁴θ + … + (1·3…(df−3))/(2·4…(df−2)) cos^(df−2)θ]
        let mut sum = 0.0;
        let mut term = 1.0;
        for k in 1..=df / 2 {
            sum += term;
            term *= c2 * (2 * k - 1) as f64 / (2 * k) as f64;
        }
        s * sum
    }
}

/// Cornish-Fisher expansion of the t quantile around the normal one (Abramowitz & Stegun 26.7.5), to `1/df⁵`.
fn t_975_by_expansion(df: f64) -> f64 {
    let z = Z_975;
    let z2 = z * z;
    // Each gₖ is z times a polynomial in z², evaluated by Horner's rule.
    let g1 = z * (z2 + 1.0) / 4.0;
    let g2 = z * ((5.0 * z2 + 16.0) * z2 + 3.0) / 96.0;
    let g3 = z * (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) / 384.0;
    let g4 = z * ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) / 92160.0;
    let g5 = z * (((((27.0 * z2 + 339.0) * z2 + 930.0) * z2 - 1782.0) * z2 - 765.0) * z2 + 17955.0) / 368640.0;
    z + (g1 + (g2 + (g3 + (g4 + g5 / df) / df) / df) / df) / df
}

/// Welford's running mean and sum of squared deviations, stable against catastrophic cancellation.
#[derive(Debug, Default, Clone, Copy)]
struct Welford {
    n: usize,
    mean: f64,
    m2: f64,
}

impl Welford {
    fn over(values: &[f64]) -> Welford {
        let mut acc = Welford::default();
        for &x in values {
            acc.push(x);
        }
        acc
    }

    fn push(&mut self, x: f64) {
        self.n += 1;
        let delta = x - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (x - self.mean);
    }

    fn mean(&self) -> f64 {
        if self.n == 0 { f64::NAN } else { self.mean }
    }

    fn sample_variance(&self) -> f64 {
        // Rounding can leave m2 a hair below zero for identical values; a variance is never negative.
        if self.n < 2 { f64::NAN } else { self.m2.max(0.0) / (self.n - 1) as f64 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn t_quantile_matches_printed_table() {
        let table = [
            (1, 12.706205),
            (2, 4.302653),
            (5, 2.570582),
            (10, 2.228139),
            (30, 2.042272),
            (100, 1.983972),
            (1000, 1.962339),
            (usize::MAX, 1.959964),
        ];
        for (df, expected) in table {
            let t = student_t_975(df);
            assert!(close(t, expected, 1e-6), "df {df}: {t} vs {expected}");
        }
    }

    #[test]
    fn t_quantile_matches_high_precision_reference() {
        // Inverse of the regularized incomplete beta at 40 significant digits (mpmath), rounded to 17.
        let reference = [
            (3, 3.1824463052837096),
            (4, 2.7764451051977944),
            (7, 2.3646242515927853),
            (29, 2.0452296421327043),
            (60, 2.0002978220142605),
            (200, 1.9718962236339094),
            (999, 1.96234146113345),
            (1001, 1.96233670528088),
            (5000, 1.960438551706508),
            (100_000, 1.9599877075346096),
            (1_000_000_000, 1.9599639869123255),
        ];
        for (df, expected) in reference {
            let t = student_t_975(df);
            assert!(close(t, expected, 1e-12), "df {df}: {t} vs {expected}");
        }
    }

    #[test]
    fn t_quantile_matches_closed_forms() {
        // df = 1 is Cauchy: tan(0.475 π). df = 2: t = sqrt(2 p² / (1 − p²)) with p = 0.95.
        assert!(close(student_t_975(1), (0.475 * std::f64::consts::PI).tan(), 1e-11));
        assert!(close(student_t_975(2), (2.0 * 0.9025 / 0.0975_f64).sqrt(), 1e-12));
        assert!(student_t_975(0).is_nan());
    }

    #[test]
    fn series_and_expansion_agree_where_both_apply() {
        for df in [60, 100, 200, 500, 1000] {
            let (s, e) = (t_975_by_series(df), t_975_by_expansion(df as f64));
            assert!(close(s, e, 1e-9), "df {df}: {s} vs {e}");
        }
    }

    #[test]
    fn t_quantile_decreases_with_df() {
        let ts: Vec<f64> = (1..=1200).map(student_t_975).collect();
        assert!(ts.windows(2).all(|w| w[1] < w[0]));
        assert!(ts.iter().all(|&t| t > Z_975));
    }

    #[test]
    fn summary_of_known_values() {
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(s.n, 8);
        assert!(close(s.mean, 5.0, 1e-15));
        assert!(close(s.std, (32.0_f64 / 7.0).sqrt(), 1e-14));
        assert!(close(s.ci95, 2.364624252 * s.std / 8.0_f64.sqrt(), 1e-8));
        assert_eq!((s.min, s.max), (2.0, 9.0));
        assert!(close(s.lo(), s.mean - s.ci95, 0.0) && close(s.hi(), s.mean + s.ci95, 0.0));
        assert!(s.contains(5.0) && s.contains(s.lo()) && !s.contains(s.hi() + 1e-9) && !s.contains(f64::NAN));
    }

    #[test]
    fn summary_edge_cases() {
        let empty = Summary::of(&[]);
        assert_eq!(empty.n, 0);
        assert!([empty.mean, empty.std, empty.ci95, empty.min, empty.max].iter().all(|x| x.is_nan()));
        assert!(!empty.contains(0.0));
        assert_eq!(empty.to_string(), "n/a ± n/a (n=0)");

        let one = Summary::of(&[3.5]);
        assert_eq!((one.n, one.mean, one.min, one.max), (1, 3.5, 3.5, 3.5));
        assert!(one.std.is_nan() && one.ci95.is_nan());
        assert_eq!(format!("{one:.1}"), "3.5 ± n/a (n=1)");

        let same = Summary::of(&[1.0; 5]);
        assert_eq!((same.std, same.ci95), (0.0, 0.0));
        assert_eq!(same.to_string(), "1.0000 ± 0.0000 (n=5)");

        let nan = Summary::of(&[1.0, f64::NAN, 3.0]);
        assert!(nan.mean.is_nan() && nan.min.is_nan() && nan.max.is_nan());
    }

    #[test]
    fn welford_survives_large_offset() {
        // The naive sum-of-squares formula loses every digit here.
        let values: Vec<f64> = [4.0, 7.0, 13.0, 16.0].iter().map(|x| x + 1e9).collect();
        let s = Summary::of(&values);
        assert!(close(s.mean, 1e9 + 10.0, 1e-6));
        assert!(close(s.std * s.std, 30.0, 1e-6));
    }

    #[test]
    fn summary_serializes_with_all_fields() {
        let json = serde_json::to_string(&Summary::of(&[1.0, 3.0])).expect("serializable");
        for key in ["\"n\":2", "\"mean\":2.0", "\"std\":", "\"ci95\":", "\"min\":1.0", "\"max\":3.0"] {
            assert!(json.contains(key), "{json} lacks {key}");
        }
        assert!(serde_json::to_string(&Summary::of(&[])).expect("serializable").contains("\"mean\":null"));
    }

    #[test]
    fn welch_difference_matches_a_worked_example() {
        // Means 20 and 14, variances 10 and 6 over 5 and 4 values: se² = 2 + 1.5 = 3.5, and the Welch-Satterthwaite
        // df = 3.5² / (2²/4 + 1.5²/3) = 12.25 / 1.75 = 7 exactly.
        let a = [16.0, 18.0, 20.0, 22.0, 24.0];
        let b = [11.0, 14.0, 14.0, 17.0];
        let d = welch_difference(&a, &b);
        assert_eq!((d.n, d.mean), (9, 6.0));
        assert!(close(d.std, 3.5f64.sqrt(), 1e-12));
        assert!(close(d.ci95, 2.364_624_251_592_785 * 3.5f64.sqrt(), 1e-9), "{d:?}");
        // Constant samples differ by exactly their means; one value says nothing about the spread.
        assert_eq!(welch_difference(&[3.0, 3.0], &[1.0, 1.0, 1.0]).ci95, 0.0);
        assert!(welch_difference(&[3.0], &[1.0, 2.0]).ci95.is_nan());
        assert!(welch_difference(&[], &[1.0, 2.0]).mean.is_nan());
    }

    #[test]
    fn paired_difference_uses_per_seed_differences() {
        let a = [10.0, 12.0, 14.0, 16.0];
        let b = [9.0, 11.5, 12.5, 15.0];
        let d = paired_difference(&a, &b).expect("same length");
        let direct = Summary::of(&[1.0, 0.5, 1.5, 1.0]);
        assert_eq!(d, direct);
        assert!(!d.contains(0.0), "a consistent per-seed gain is significant");
        assert_eq!(paired_difference(&a, &b[..2]), Err(LengthMismatch { left: 4, right: 2 }));
        assert_eq!(paired_difference(&[], &[]).map(|s| s.n), Ok(0));
    }

    #[test]
    fn relative_paired_difference_scales_the_paired_interval() {
        let a = [5.0, 6.0, 3.5, 8.0];
        let b = [10.0, 11.0, 9.0, 14.0];
        let d = paired_difference(&a, &b).expect("same length");
        let r = relative_paired_difference(&a, &b).expect("same length");
        assert_eq!(r.n, 4);
        assert!(close(r.mean, d.mean / 11.0, 1e-15) && close(r.ci95, d.ci95 / 11.0, 1e-15));
        assert!(close(r.mean, relative_difference(&a, &b), 1e-15), "the mean is the relative difference of the means");
        assert!(relative_paired_difference(&[1.0], &[0.0]).expect("same length").mean.is_infinite());
        assert_eq!(relative_paired_difference(&a, &b[..1]), Err(LengthMismatch { left: 4, right: 1 }));
    }

    #[test]
    fn relative_difference_against_baseline() {
        assert!(close(relative_difference(&[11.0, 13.0], &[10.0]), 0.2, 1e-15));
        assert!(close(relative_difference(&[-3.0], &[-2.0]), -0.5, 1e-15));
        assert_eq!(relative_difference(&[1.0], &[0.0]), f64::INFINITY);
        assert!(relative_difference(&[0.0], &[0.0]).is_nan());
        assert!(relative_difference(&[], &[1.0]).is_nan());
    }
}
