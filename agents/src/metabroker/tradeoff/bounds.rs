//! The lower bounds of Garg (2010) §5.3.1 on the overall cost (5.2) and makespan (5.3): each application alone
//! on the grid, started at its arrival on the site j* that minimises φ(i, j, arr(i)).
//!
//! Alone and started at arrival, α(i, j) = ETC(i, j), so j* minimises δ · c(i, j) / γ_i + (1 − δ) · ETC(i, j) / β_i
//! among the sites wide enough (ties: the lower index). Our reading of (5.3), garbled in the thesis ("max(max_i
//! (arr(i) + ETC(i, j))), + Σ_i ETC(i, j) / m)"): the larger of the latest lone finish and the first arrival plus
//! the work Σ_i p_i · ETC(i, j*) spread over all m CPUs of the grid, both valid lower bounds of the last finish
//! given the j*. Neither bound need be achievable.

use super::heuristics::{Request, Resource, phi};

/// The two bounds, over the applications some site is wide enough for.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Bounds {
    /// Lower bound of the overall cost Σ_i c(i, j*) (5.2) [G$].
    pub cost: f64,
    /// Lower bound of the last finish (5.3) [s, absolute].
    pub finish: f64,
    /// The first arrival \[s\], from which a makespan is measured.
    pub first_arrival: f64,
    /// Applications counted.
    pub apps: usize,
}

impl Bounds {
    /// The makespan bound: the last-finish bound from the first arrival \[s\].
    pub fn makespan(&self) -> f64 {
        self.finish - self.first_arrival
    }
}

/// The bounds of `requests` on `resources` (their prices and CPUs; slots are ignored: each application is alone).
pub fn lower_bounds(requests: &[Request], resources: &[Resource]) -> Bounds {
    let m = resources.len() as f64;
    let cpus: f64 = resources.iter().map(|r| f64::from(r.cpus)).sum();
    let mut b = Bounds { first_arrival: f64::INFINITY, ..Bounds::default() };
    let mut latest = f64::NEG_INFINITY;
    let mut work = 0.0;
    for q in requests {
        if q.etc.len() != resources.len() {
            continue;
        }
        let cost: Vec<f64> = resources.iter().zip(&q.etc).map(|(r, e)| r.price * f64::from(q.cpus) * e).collect();
        let avg_cost = cost.iter().sum::<f64>() / m;
        let avg_time = q.etc.iter().sum::<f64>() / m;
        let best = (0..resources.len())
            .filter(|&j| resources[j].cpus >= q.cpus)
            .map(|j| (j, phi(q.delta, cost[j], avg_cost, q.etc[j], avg_time)))
            .fold(None, |acc: Option<(usize, f64)>, (j, f)| match acc {
                Some((_, g)) if f.total_cmp(&g).is_ge() => acc,
                _ => Some((j, f)),
            });
        let Some((j, _)) = best else { continue };
        b.apps += 1;
        b.cost += cost[j];
        b.first_arrival = b.first_arrival.min(q.arrival);
        latest = latest.max(q.arrival + q.etc[j]);
        work += f64::from(q.cpus) * q.etc[j];
    }
    if b.apps == 0 {
        return Bounds::default();
    }
    b.finish = latest.max(b.first_arrival + work / cpus);
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metabroker::tradeoff::heuristics::Segment;

    fn site(cpus: u32, price: f64) -> Resource {
        Resource { cpus, price, free: vec![Segment { start: 0.0, end: 1e9, free: cpus }], transfer: 0.0 }
    }

    #[test]
    fn bounds_worked_by_hand() {
        // Sites: 4 CPUs at 1 G$/CPU·s, 2 CPUs at 0.5. Six CPUs in all.
        // App 0: 2 CPUs at 0, ETC (10, 30), δ = 1. Costs (20, 30): site 0. Alone it finishes at 10.
        // App 1: 4 CPUs at 5, ETC (20, 5), δ = 0: only site 0 is wide enough; cost 80, finishes at 25.
        // App 2: 1 CPU at 6, ETC (100, 120), δ = 0.5. Costs (100, 60), γ 80; β 110.
        //   site 0: 0.5·100/80 + 0.5·100/110 = 1.0795; site 1: 0.5·60/80 + 0.5·120/110 = 0.9205 → site 1, cost 60,
        //   finishes at 126.
        // Cost bound 20 + 80 + 60 = 160. Work 2·10 + 4·20 + 1·120 = 220 over 6 CPUs = 36.67 from 0; latest lone
        // finish 126 → finish bound 126, makespan 126.
        let resources = vec![site(4, 1.0), site(2, 0.5)];
        let requests = vec![
            Request { arrival: 0.0, cpus: 2, etc: vec![10.0, 30.0], delta: 1.0 },
            Request { arrival: 5.0, cpus: 4, etc: vec![20.0, 5.0], delta: 0.0 },
            Request { arrival: 6.0, cpus: 1, etc: vec![100.0, 120.0], delta: 0.5 },
        ];
        let b = lower_bounds(&requests, &resources);
        assert_eq!(b.apps, 3);
        assert!((b.cost - 160.0).abs() < 1e-9, "{b:?}");
        assert!((b.makespan() - 126.0).abs() < 1e-9, "{b:?}");
        // Many short applications at once: the work term binds. Ten 6-CPU-wide... on one 6-CPU site of price 1:
        // ten applications of 6 CPUs × 10 s at 0 → work 600 / 6 = 100 > 10.
        let one = vec![site(6, 1.0)];
        let many: Vec<Request> =
            (0..10).map(|_| Request { arrival: 0.0, cpus: 6, etc: vec![10.0], delta: 0.5 }).collect();
        let b = lower_bounds(&many, &one);
        assert!((b.makespan() - 100.0).abs() < 1e-9, "{b:?}");
        assert!((b.cost - 600.0).abs() < 1e-9, "{b:?}");
        // An application no site is wide enough for is left out.
        let wide = [Request { arrival: 0.0, cpus: 7, etc: vec![10.0], delta: 0.5 }];
        assert_eq!(lower_bounds(&wide, &one).apps, 0);
    }
}
