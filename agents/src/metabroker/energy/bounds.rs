//! The lower bound of the average carbon emission and the upper bound of the average profit, Garg (2010) §6.3.3.
//!
//! Three relaxations make them unreachable: (1) energy is counted at the optimal frequency f_opt although
//! feasibility is judged at f_max; (2) applications are moldable, their runtime shrinking linearly with more CPUs,
//! so each fills its data centre without fragmentation (a data centre is a pool of CPU-seconds); (3) every
//! application is known in one cycle, from the first submission on. The steps:
//! 1. applications by deadline, earliest first; data centres by r^CO2 · (COP + 1)/COP · P(f_max) ascending (for
//!    profit, by p^e · (COP + 1)/COP · P(f_max));
//! 2. each application to the first data centre whose pool, filled so far, finishes it by its deadline at f_max;
//!    one with none is left out;
//! 3. TWL += n_j e_ji; TCE += r^CO2 (COP + 1)/COP · P(f_opt) · n_j · T_j(f_opt); TP += n_j e_ji p^c − p^e (COP +
//!    1)/COP · P(f_opt) · n_j · T_j(f_opt).
//!
//! The bounds are TCE / TWL and TP / TWL, per CPU-hour of workload. Step 7 of the thesis is garbled in print; we
//! read its profit as Eq 6.7 at f_opt: the revenue the user pays whatever the frequency, n·e·p^c, less the energy
//! cost at f_opt. f_opt is the continuous optimum clamped to [f_min, f_max], not a level.

use crate::datacenter::power::{PowerModel, Site, carbon_key, energy_cost_key};

/// An application, as the bounds see it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoundApp {
    /// CPUs.
    pub pes: u32,
    /// Runtime on the reference CPU at f_max \[s\].
    pub runtime: f64,
    /// Deadline \[s\].
    pub deadline: f64,
}

/// A data centre, as the bounds see it.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundSite {
    /// CPUs.
    pub cpus: u32,
    /// Speed at f_max relative to the reference CPU.
    pub speed: f64,
    /// Power model.
    pub power: PowerModel,
    /// COP, carbon rate, prices.
    pub site: Site,
}

/// A bound: the workload it placed and the total it reached.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Bound {
    /// TWL [CPU·h].
    pub workload: f64,
    /// TCE \[kg\] or TP [$].
    pub total: f64,
}

impl Bound {
    /// Per CPU-hour of workload (0 for no workload).
    pub fn average(&self) -> f64 {
        if self.workload > 0.0 { self.total / self.workload } else { 0.0 }
    }
}

/// Which bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Objective {
    /// The lower bound of the average carbon emission.
    Carbon,
    /// The upper bound of the average profit.
    Profit,
}

/// The bound of `objective` for `apps` on `sites`, every application available from `start` \[s\].
pub fn bound(objective: Objective, apps: &[BoundApp], sites: &[BoundSite], start: f64) -> Bound {
    let key = match objective {
        Objective::Carbon => carbon_key,
        Objective::Profit => energy_cost_key,
    };
    let mut order: Vec<usize> = (0..sites.len()).collect();
    order.sort_by(|&a, &b| {
        let k = |i: usize| key(&sites[i].power, &sites[i].site);
        k(a).total_cmp(&k(b)).then(a.cmp(&b))
    });
    let mut edf: Vec<usize> = (0..apps.len()).collect();
    edf.sort_by(|&a, &b| apps[a].deadline.total_cmp(&apps[b].deadline).then(a.cmp(&b)));
    // Until when each data centre's pool of CPUs is filled.
    let mut filled = vec![start; sites.len()];
    let mut out = Bound::default();
    for &j in &edf {
        let app = &apps[j];
        let fits = |i: usize| {
            let work = f64::from(app.pes) * app.runtime / sites[i].speed;
            filled[i] + work / f64::from(sites[i].cpus) <= app.deadline
        };
        let Some(i) = order.iter().copied().find(|&i| sites[i].cpus > 0 && fits(i)) else { continue };
        let s = &sites[i];
        let work = f64::from(app.pes) * app.runtime / s.speed;
        filled[i] += work / f64::from(s.cpus);
        let f_opt = s.power.f_opt();
        // kWh of the application at f_opt, with cooling: P(f_opt) · n · T(f_opt).
        let energy = s.site.cooling_factor() * s.power.power(f_opt) * work * s.power.stretch(f_opt, 1.0) / 3.6e6;
        out.workload += work / 3600.0;
        out.total += match objective {
            Objective::Carbon => s.site.carbon_rate * energy,
            Objective::Profit => work / 3600.0 * s.site.cpu_price - s.site.electricity_price * energy,
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(cpus: u32, carbon_rate: f64, electricity_price: f64) -> BoundSite {
        BoundSite {
            cpus,
            speed: 1.0,
            // ∛(β/2α) = 1: f_opt = 1 GHz, P(f_opt) = 3 W, T doubles against f_max = 2.
            power: PowerModel::new(2.0, 1.0, 0.5, 2.0, 4).unwrap(),
            site: Site {
                cop: 1.0,
                carbon_rate,
                electricity_price,
                transfer_price: 0.0,
                cpu_price: 0.4,
                data_price: 0.0,
            },
        }
    }

    #[test]
    fn the_cleanest_data_centre_fills_first_and_counts_energy_at_f_opt() {
        let sites = [site(10, 0.9, 0.1), site(10, 0.1, 0.3)];
        // 10 CPUs × 3,600 s each: the clean data centre's pool takes one by t = 3,600, the next goes to the other.
        let apps = [
            BoundApp { pes: 10, runtime: 3600.0, deadline: 4000.0 },
            BoundApp { pes: 10, runtime: 3600.0, deadline: 5000.0 },
            BoundApp { pes: 1, runtime: 1e6, deadline: 100.0 },
        ];
        let carbon = bound(Objective::Carbon, &apps, &sites, 0.0);
        assert_eq!(carbon.workload, 20.0);
        // Per CPU-hour at f_max: 3 W × 2 h × 2 (cooling) = 12 Wh = 0.012 kWh; 10 at 0.1 kg/kWh, 10 at 0.9.
        assert!((carbon.total - (10.0 * 0.012 * 0.1 + 10.0 * 0.012 * 0.9)).abs() < 1e-12);
        // Molding: two 5-CPU applications of an hour both fit by 3,600 s in one 10-CPU pool.
        let halves = [BoundApp { pes: 5, runtime: 3600.0, deadline: 3600.0 }; 2];
        let b = bound(Objective::Carbon, &halves, &sites[1..], 0.0);
        assert_eq!(b.workload, 10.0);
        assert!((b.average() - 0.012 * 0.1).abs() < 1e-15);
    }

    #[test]
    fn the_profit_bound_orders_by_energy_cost_and_earns_the_revenue_of_eq_6_7() {
        let sites = [site(10, 0.9, 0.1), site(10, 0.1, 0.3)];
        let apps = [BoundApp { pes: 10, runtime: 3600.0, deadline: 4000.0 }];
        let profit = bound(Objective::Profit, &apps, &sites, 0.0);
        // To the cheap data centre: 10 CPU-hours × $0.40 − 0.12 kWh × $0.1.
        assert!((profit.total - (4.0 - 0.012)).abs() < 1e-12);
        assert!((profit.average() - 0.3988).abs() < 1e-12);
        assert_eq!(bound(Objective::Profit, &[], &sites, 0.0).average(), 0.0);
    }
}
