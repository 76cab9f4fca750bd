//! How a gateway shares its external requests among its clusters (Amini Salehi 2012, ch4): an *allocation* gives each
//! cluster a fraction P_j of the requests (PAP, [`super::pap`], or the baselines RR, LRF and BCF of §4.4.1), and a
//! *dispatcher* turns the fractions into a sequence of clusters: RND draws each request's cluster at random with the
//! probabilities P_j, RTDP follows a billiard sequence per request type (Algorithm 3).

use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};

/// Workload allocation: the fraction of the external requests each cluster receives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Allocation {
    /// RR, round robin: Λ/N to each of the N clusters (Eq 4.25).
    #[default]
    Rr,
    /// LRF, Least Rate First: more to clusters with fewer local requests, p_j = (1 − λ_j/Σλ)/(N − 1) (Eq 4.26
    /// normalised: as printed its rates sum to (N − 1)Λ).
    Lrf,
    /// BCF, Biggest Cluster First: in proportion to the cluster's computing power Σ_i s_ij (Eq 4.27).
    Bcf,
    /// PAP, Preemption-aware workload Allocation Policy: the rates of the queueing model ([`super::pap::pap`]).
    Pap,
}

/// Dispatch: which cluster each request goes to, given the fractions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dispatch {
    /// Each request to the next provider in turn, skipping providers too small for it (with the RR allocation only).
    #[default]
    RoundRobin,
    /// RND: each request to a cluster drawn with the probabilities P_j (memoryless).
    Rnd,
    /// RTDP, Request Type Dispatch Policy (Amini Salehi 2012, Algorithm 3): one billiard sequence
    /// (Hordijk & van der Laan) per request type, so that every cluster receives a mixture of types.
    Rtdp,
}

/// RR's fractions: 1/N each.
pub fn round_robin(n: usize) -> Vec<f64> {
    vec![1.0 / n as f64; n]
}

/// LRF's fractions from the clusters' local arrival rates λ_j: (1 − λ_j/Σλ)/(N − 1), which sum to 1; equal shares
/// when no cluster has local requests, everything to the only cluster when there is one.
pub fn least_rate_first(local_rates: &[f64]) -> Vec<f64> {
    let n = local_rates.len();
    let total: f64 = local_rates.iter().sum();
    if n == 1 {
        return vec![1.0];
    }
    if total <= 0.0 {
        return round_robin(n);
    }
    local_rates.iter().map(|l| (1.0 - l / total) / (n - 1) as f64).collect()
}

/// BCF's fractions from the clusters' computing powers (PEs × speed): each its share of the total.
pub fn biggest_cluster_first(power: &[f64]) -> Vec<f64> {
    let total: f64 = power.iter().sum();
    power.iter().map(|p| p / total).collect()
}

/// A billiard sequence over the clusters (Hordijk & van der Laan; Amini Salehi 2012 Eq 4.20): the next request goes
/// to argmin_j (X_j + Y_j)/P_j, Y_j counting the requests sent to j so far and X_j 1 for the fastest cluster, 0
/// for the others (as Algorithm 3 prints it, after Anselmi & Gaujal); ties go to the lowest index (strict <).
#[derive(Clone, Debug, PartialEq)]
pub struct Billiard {
    x: Vec<f64>,
    y: Vec<u64>,
}

impl Billiard {
    /// A sequence over clusters of which `fastest` has X = 1.
    pub fn new(n: usize, fastest: usize) -> Billiard {
        let mut x = vec![0.0; n];
        x[fastest] = 1.0;
        Billiard { x, y: vec![0; n] }
    }

    /// The next cluster for fractions `p` among those `eligible` (a request too wide for a cluster skips it); `None`
    /// when no eligible cluster has a positive fraction.
    pub fn next(&mut self, p: &[f64], eligible: impl Fn(usize) -> bool) -> Option<usize> {
        let mut best: Option<(usize, f64)> = None;
        for (j, &pj) in p.iter().enumerate() {
            if pj > 0.0 && eligible(j) {
                let d = (self.x[j] + self.y[j] as f64) / pj;
                if best.is_none_or(|(_, min)| d < min) {
                    best = Some((j, d));
                }
            }
        }
        let (j, _) = best?;
        self.y[j] += 1;
        Some(j)
    }

    /// Requests sent to each cluster so far.
    pub fn counts(&self) -> &[u64] {
        &self.y
    }
}

/// RND: a cluster drawn with probabilities `p` among those `eligible`, renormalised; `None` when none has a positive
/// fraction.
pub fn random<R: Rng + ?Sized>(p: &[f64], eligible: impl Fn(usize) -> bool, rng: &mut R) -> Option<usize> {
    let total: f64 = p.iter().enumerate().filter(|&(j, &pj)| pj > 0.0 && eligible(j)).map(|(_, pj)| pj).sum();
    if total <= 0.0 {
        return None;
    }
    let mut u = rng.random::<f64>() * total;
    let mut last = None;
    for (j, &pj) in p.iter().enumerate().filter(|&(j, &pj)| pj > 0.0 && eligible(j)) {
        if u < pj {
            return Some(j);
        }
        u -= pj;
        last = Some(j);
    }
    last
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_pcg::Pcg64;

    use super::*;

    #[test]
    fn billiard_fractions_stay_within_n_over_n_of_p() {
        for p in [vec![0.5, 0.3, 0.2], vec![0.17, 0.31, 0.52], vec![0.6, 0.0, 0.4]] {
            let mut b = Billiard::new(p.len(), 2);
            for n in 1..=1000u64 {
                b.next(&p, |_| true).unwrap();
                for (j, &c) in b.counts().iter().enumerate() {
                    let share = c as f64 / n as f64;
                    assert!((share - p[j]).abs() <= p.len() as f64 / n as f64, "{p:?} after {n}: {:?}", b.counts());
                }
            }
            assert_eq!(b.counts()[1] == 0, p[1] == 0.0);
        }
    }

    #[test]
    fn billiard_order_as_printed() {
        // X = 1 for the fastest (index 0) delays it on the first dispatch; ties go to the lowest index.
        let mut b = Billiard::new(3, 0);
        let p = [0.5, 0.25, 0.25];
        let order: Vec<usize> = (0..8).map(|_| b.next(&p, |_| true).unwrap()).collect();
        // D after each step: (1/0.5, 0, 0) → 1; (2, 4, 0) → 2; (2, 4, 4) → 0; (4, 4, 4) → 0; (6, 4, 4) → 1 ...
        assert_eq!(order, [1, 2, 0, 0, 1, 2, 0, 0]);
        // A cluster a request cannot use is skipped.
        assert_eq!(b.next(&p, |j| j != 0), Some(1));
    }

    #[test]
    fn baseline_fractions_sum_to_one() {
        let lrf = least_rate_first(&[0.1, 0.12, 0.17]);
        assert!((lrf.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(lrf[0] > lrf[1] && lrf[1] > lrf[2], "{lrf:?}");
        assert_eq!(least_rate_first(&[0.0, 0.0]), [0.5, 0.5]);
        assert_eq!(least_rate_first(&[0.3]), [1.0]);
        let bcf = biggest_cluster_first(&[64.0 * 2000.0, 128.0 * 3000.0, 256.0 * 2100.0]);
        assert!((bcf.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((bcf[2] - 537_600.0 / 1_049_600.0).abs() < 1e-12);
        assert_eq!(round_robin(4), [0.25; 4]);
    }

    #[test]
    fn random_dispatch_follows_the_fractions() {
        let p = [0.5, 0.3, 0.2];
        let mut rng = Pcg64::seed_from_u64(3);
        let mut counts = [0u32; 3];
        for _ in 0..30_000 {
            counts[random(&p, |_| true, &mut rng).unwrap()] += 1;
        }
        for (c, want) in counts.iter().zip(p) {
            // SE ≤ 0.003: a band of 4 SE.
            assert!((f64::from(*c) / 30_000.0 - want).abs() < 0.012, "{counts:?}");
        }
        assert_eq!(random(&p, |j| j == 2, &mut rng), Some(2));
        assert_eq!(random(&[0.0, 0.0], |_| true, &mut rng), None);
    }
}
