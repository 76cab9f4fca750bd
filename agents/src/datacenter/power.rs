//! The energy model of a data centre, Garg (2010) §6.2, as pure functions: the CPU power P(f) = β + α f³, its
//! discrete frequency levels, the runtime stretch T(f) (6.2), cooling by the coefficient of performance (COP), and
//! what running an application costs and earns, Eqs (6.3)–(6.9).
//!
//! Units: frequencies in GHz, power in W per CPU, runtimes in seconds, energy in kWh, carbon in kg, money in US
//! dollars. The CPU price p^c is per CPU-hour of the runtime at f_max: the user pays n·e·p^c whatever the frequency
//! the application ran at (6.7).

use serde::{Deserialize, Serialize};

pub use crate::model::{PowerModel, Site};

/// Joules in a kWh.
pub const JOULES_PER_KWH: f64 = 3.6e6;

/// Seconds in an hour.
const HOUR: f64 = 3600.0;

/// Why a power model or a site's parameters are refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// A parameter is out of its range: which one, and what was expected and found.
    #[error("{name}: expected {expected}, found {found}")]
    Invalid {
        /// The parameter, as scenarios name it.
        name: &'static str,
        /// What it must be.
        expected: &'static str,
        /// What it is.
        found: f64,
    },
    /// The lowest frequency is above the highest.
    #[error("f-min ({f_min} GHz) is above f-max ({f_max} GHz)")]
    FrequencyRange {
        /// The lowest frequency \[GHz\].
        f_min: f64,
        /// The highest frequency \[GHz\].
        f_max: f64,
    },
}

fn check(name: &'static str, value: f64, ok: bool, expected: &'static str) -> Result<f64, ModelError> {
    if ok && value.is_finite() { Ok(value) } else { Err(ModelError::Invalid { name, expected, found: value }) }
}

impl PowerModel {
    /// The model with `levels` equally spaced frequencies from `f_min` to `f_max` (Garg (2010) §6.4 gives "5 levels"
    /// and f_min = 37.5% of f_max, not their spacing; equal spacing is our reading). One level runs at f_max only.
    pub fn new(beta: f64, alpha: f64, f_min: f64, f_max: f64, levels: u32) -> Result<PowerModel, ModelError> {
        check("beta", beta, beta >= 0.0, "a non-negative static power [W]")?;
        check("alpha", alpha, alpha >= 0.0, "a non-negative dynamic power factor [W/GHz³]")?;
        check("f-max", f_max, f_max > 0.0, "a positive frequency [GHz]")?;
        check("f-min", f_min, f_min > 0.0, "a positive frequency [GHz]")?;
        if f_min > f_max {
            return Err(ModelError::FrequencyRange { f_min, f_max });
        }
        if levels == 0 {
            return Err(ModelError::Invalid { name: "levels", expected: "at least 1", found: 0.0 });
        }
        let step = if levels > 1 { (f_max - f_min) / f64::from(levels - 1) } else { 0.0 };
        let mut levels: Vec<f64> = (0..levels).map(|k| f_min + f64::from(k) * step).collect();
        // The top level is f_max exactly, whatever the rounding of the steps.
        if let Some(top) = levels.last_mut() {
            *top = f_max;
        }
        if levels.len() == 1 {
            levels[0] = f_max;
        }
        Ok(PowerModel { beta, alpha, levels })
    }

    /// The highest frequency \[GHz\].
    pub fn f_max(&self) -> f64 {
        self.levels[self.levels.len() - 1]
    }

    /// The lowest frequency \[GHz\].
    pub fn f_min(&self) -> f64 {
        self.levels[0]
    }

    /// Power of one running CPU at `f` \[W\].
    pub fn power(&self, f: f64) -> f64 {
        self.beta + self.alpha * f * f * f
    }

    /// The frequency that minimises the energy of a fully CPU-bound application, ∛(β / 2α) \[GHz\], before clamping:
    /// the energy per unit of work (β + α f³)/f has its minimum there. Infinite without dynamic power.
    pub fn f_opt_unclamped(&self) -> f64 {
        if self.alpha == 0.0 { f64::INFINITY } else { (self.beta / (2.0 * self.alpha)).cbrt() }
    }

    /// f_opt clamped to [f_min, f_max] (Garg 2010 §6.3.2).
    pub fn f_opt(&self) -> f64 {
        self.f_opt_unclamped().clamp(self.f_min(), self.f_max())
    }

    /// The level nearest to `f` (the higher of two equally near).
    pub fn nearest_level(&self, f: f64) -> usize {
        let mut best = 0;
        for (k, level) in self.levels.iter().enumerate() {
            if (level - f).abs() <= (self.levels[best] - f).abs() {
                best = k;
            }
        }
        best
    }

    /// The runtime at `f` over the runtime at f_max, γ (f_max / f − 1) + 1 (Eq 6.2, Hsu and Kremer), for a CPU-
    /// boundness γ in [0, 1].
    pub fn stretch(&self, f: f64, gamma: f64) -> f64 {
        gamma * (self.f_max() / f - 1.0) + 1.0
    }

    /// Energy of one CPU per hour of runtime at f_max when run at level `level` instead, fully CPU-bound \[Wh\]:
    /// P(f) · T(f) / T(f_max), before cooling.
    pub fn energy_per_fmax_hour(&self, level: usize) -> f64 {
        let f = self.levels[level];
        self.power(f) * self.stretch(f, 1.0)
    }
}

impl Site {
    /// Checks every parameter: a positive COP, non-negative rates and prices.
    pub fn check(&self) -> Result<(), ModelError> {
        check("cop", self.cop, self.cop > 0.0, "a positive coefficient of performance")?;
        check("carbon-rate", self.carbon_rate, self.carbon_rate >= 0.0, "a non-negative rate [kg/kWh]")?;
        let price = "a non-negative price";
        check("electricity-price", self.electricity_price, self.electricity_price >= 0.0, price)?;
        check("transfer-price", self.transfer_price, self.transfer_price >= 0.0, price)?;
        check("cpu-price", self.cpu_price, self.cpu_price >= 0.0, price)?;
        check("data-price", self.data_price, self.data_price >= 0.0, price)?;
        Ok(())
    }

    /// Total over CPU energy, (COP + 1) / COP: the CPUs' energy plus their cooling's.
    pub fn cooling_factor(&self) -> f64 {
        (self.cop + 1.0) / self.cop
    }

    /// Data centre infrastructure efficiency, DCiE = COP / (COP + 1).
    pub fn dcie(&self) -> f64 {
        dcie(self.cop)
    }
}

/// DCiE = COP / (COP + 1).
pub fn dcie(cop: f64) -> f64 {
    cop / (cop + 1.0)
}

/// The COP whose DCiE is `efficiency` (in (0, 1)): COP = DCiE / (1 − DCiE).
pub fn cop_of_efficiency(efficiency: f64) -> f64 {
    efficiency / (1.0 - efficiency)
}

/// The data centre order of GMCE and of the carbon bound: r^CO2 · (COP + 1)/COP · P(f_max), ascending [kg/h per
/// CPU × 1000].
pub fn carbon_key(model: &PowerModel, site: &Site) -> f64 {
    site.carbon_rate * site.cooling_factor() * model.power(model.f_max())
}

/// The data centre order of GMP and of the profit bound: p^e · (COP + 1)/COP · P(f_max), ascending [$/h per CPU ×
/// 1000].
pub fn energy_cost_key(model: &PowerModel, site: &Site) -> f64 {
    site.electricity_price * site.cooling_factor() * model.power(model.f_max())
}

/// What one application costs and earns on one data centre, Eqs (6.3)–(6.9).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Costs {
    /// E^c: energy of its CPUs \[kWh\] (6.3).
    pub cpu_energy: f64,
    /// E: with cooling \[kWh\] (6.4).
    pub energy: f64,
    /// C^e: energy cost [$] (6.5).
    pub energy_cost: f64,
    /// CO2E: carbon emitted \[kg\] (6.6).
    pub carbon: f64,
    /// n·e·p^c: what the user pays for its CPUs [$].
    pub revenue: f64,
    /// ProfExec = n·e·p^c − C^e [$] (6.7).
    pub exec_profit: f64,
    /// DT·p^DTU: what the user pays for its data [$].
    pub data_revenue: f64,
    /// DT·p^DT: what moving its data costs the data centre [$].
    pub data_cost: f64,
    /// Prof = ProfExec + ProfData [$] (6.9), ProfData = DT (p^DTU − p^DT) (6.8).
    pub profit: f64,
}

impl Costs {
    /// `pes` CPUs running for `runtime` seconds at `f` an application that takes `runtime_fmax` seconds at f_max
    /// and moves `data` GB, on `model`'s CPUs at `site`. The runtime is given, not derived, so that the caller
    /// charges the time it metered.
    pub fn of_run(
        model: &PowerModel,
        site: &Site,
        f: f64,
        pes: u32,
        runtime: f64,
        runtime_fmax: f64,
        data: f64,
    ) -> Costs {
        let n = f64::from(pes);
        let cpu_energy = model.power(f) * n * runtime / JOULES_PER_KWH;
        let energy = site.cooling_factor() * cpu_energy;
        let energy_cost = site.electricity_price * energy;
        let revenue = n * runtime_fmax / HOUR * site.cpu_price;
        let (data_revenue, data_cost) = (data * site.data_price, data * site.transfer_price);
        Costs {
            cpu_energy,
            energy,
            energy_cost,
            carbon: site.carbon_rate * energy,
            revenue,
            exec_profit: revenue - energy_cost,
            data_revenue,
            data_cost,
            profit: revenue - energy_cost + data_revenue - data_cost,
        }
    }

    /// Eqs (6.3)–(6.9) for an application of `pes` CPUs taking `runtime_fmax` seconds at f_max, with CPU-boundness
    /// `gamma`, run at `f`.
    pub fn at(model: &PowerModel, site: &Site, f: f64, pes: u32, runtime_fmax: f64, gamma: f64, data: f64) -> Costs {
        Costs::of_run(model, site, f, pes, runtime_fmax * model.stretch(f, gamma), runtime_fmax, data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Garg (2010) Table 6.3, with the OCR fixes (Pennsylvania α = 5, California α = 60): name, carbon rate, price,
    /// β, α, f_max, CPUs.
    pub(crate) const TABLE_6_3: [(&str, f64, f64, f64, f64, f64, u32); 8] = [
        ("New York", 0.389, 0.15, 65.0, 7.5, 1.8, 2050),
        ("Pennsylvania", 0.574, 0.09, 75.0, 5.0, 1.8, 2600),
        ("California", 0.275, 0.13, 60.0, 60.0, 2.4, 650),
        ("Ohio", 0.817, 0.09, 75.0, 5.2, 2.4, 540),
        ("North Carolina", 0.563, 0.07, 90.0, 4.5, 3.0, 600),
        ("Texas", 0.664, 0.1, 105.0, 6.5, 3.0, 350),
        ("France", 0.083, 0.17, 90.0, 4.0, 3.2, 200),
        ("Australia", 0.924, 0.11, 105.0, 4.4, 3.2, 250),
    ];

    fn models() -> Vec<(&'static str, PowerModel, Site)> {
        TABLE_6_3
            .iter()
            .map(|&(name, r, p, beta, alpha, f_max, _)| {
                let model = PowerModel::new(beta, alpha, 0.375 * f_max, f_max, 5).unwrap();
                let site = Site {
                    cop: 1.0,
                    carbon_rate: r,
                    electricity_price: p,
                    transfer_price: 0.0,
                    cpu_price: 0.4,
                    data_price: 0.0,
                };
                (name, model, site)
            })
            .collect()
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn f_opt_is_the_column_of_table_6_3() {
        // The thesis's f_opt column, California clamped to its f_min of 0.9 GHz (0.793701 unclamped).
        let column = [1.630324, 1.8, 0.9, 1.93201, 2.154435, 2.00639, 2.240702, 2.285084];
        for ((name, model, _), expected) in models().iter().zip(column) {
            assert!(close(model.f_opt(), expected, 5e-6), "{name}: {} against {expected}", model.f_opt());
        }
        let california = &models()[2].1;
        assert!(close(california.f_opt_unclamped(), 0.793701, 5e-7));
        // Pennsylvania's ∛(75/10) = 1.957 is above its f_max: clamped to 1.8.
        assert!(close(models()[1].1.f_opt_unclamped(), 1.957434, 5e-7));
    }

    #[test]
    fn power_at_f_max_and_the_mapping_keys() {
        let watts = [108.74, 104.16, 889.44, 146.88, 211.50, 280.50, 221.07, 249.18];
        let carbon = [42.30, 59.79, 244.60, 120.00, 119.07, 186.25, 18.35, 230.24];
        let cost = [16.31, 9.37, 115.63, 13.22, 14.81, 28.05, 37.58, 27.41];
        // With COP = 1 every key doubles: compare per unit of cooling factor.
        for (i, (name, model, site)) in models().iter().enumerate() {
            assert!(close(model.power(model.f_max()), watts[i], 0.005), "{name}: {}", model.power(model.f_max()));
            assert!(close(carbon_key(model, site) / 2.0, carbon[i], 0.005), "{name}");
            assert!(close(energy_cost_key(model, site) / 2.0, cost[i], 0.005), "{name}");
        }
    }

    /// Data centres by key, ascending, with every COP equal.
    fn order(key: fn(&PowerModel, &Site) -> f64) -> Vec<&'static str> {
        let mut m = models();
        m.sort_by(|a, b| key(&a.1, &a.2).total_cmp(&key(&b.1, &b.2)));
        m.into_iter().map(|(name, ..)| name).collect()
    }

    #[test]
    fn gmce_and_gmp_orders_for_a_fixed_cop() {
        let gmce = ["France", "New York", "Pennsylvania", "North Carolina", "Ohio", "Texas", "Australia", "California"];
        assert_eq!(order(carbon_key), gmce);
        let gmp = ["Pennsylvania", "Ohio", "North Carolina", "New York", "Australia", "Texas", "France", "California"];
        assert_eq!(order(energy_cost_key), gmp);
    }

    #[test]
    fn levels_and_energy_per_f_max_hour_at_the_level_nearest_f_opt() {
        // Level nearest f_opt, and Wh per f_max-CPU-hour there, from the derived table (equal spacing).
        let expected = [
            (1.519, 108.2),
            (1.8, 104.2),
            (0.9, 276.6),
            (2.025, 140.1),
            (2.062, 188.3),
            (2.062, 235.7),
            (2.2, 192.9),
            (2.2, 220.9),
        ];
        for ((name, model, _), (level, wh)) in models().iter().zip(expected) {
            assert_eq!(model.levels.len(), 5);
            let k = model.nearest_level(model.f_opt());
            assert!(close(model.levels[k], level, 1e-3), "{name}: level {}", model.levels[k]);
            assert!(close(model.energy_per_fmax_hour(k), wh, 0.05), "{name}: {}", model.energy_per_fmax_hour(k));
        }
        let ny = &models()[0].1;
        let levels = [0.675, 0.95625, 1.2375, 1.51875, 1.8];
        assert!(ny.levels.iter().zip(levels).all(|(a, b)| close(*a, b, 1e-12)), "{:?}", ny.levels);
    }

    #[test]
    fn runtime_stretch_and_cooling() {
        let model = PowerModel::new(10.0, 1.0, 1.0, 2.0, 2).unwrap();
        // Fully CPU-bound: half the frequency, twice the time; not CPU-bound: no change.
        assert_eq!(model.stretch(1.0, 1.0), 2.0);
        assert_eq!(model.stretch(1.0, 0.0), 1.0);
        assert_eq!(model.stretch(2.0, 1.0), 1.0);
        let site = Site {
            cop: 2.0,
            carbon_rate: 0.5,
            electricity_price: 0.1,
            transfer_price: 0.05,
            cpu_price: 0.4,
            data_price: 0.17,
        };
        assert_eq!(site.cooling_factor(), 1.5);
        assert!(close(site.dcie(), 2.0 / 3.0, 1e-15));
        assert!(close(cop_of_efficiency(site.dcie()), 2.0, 1e-12));
        // 4 CPUs for an hour at f_max (18 W): 72 Wh of CPU, 108 Wh with cooling. At f = 1 (11 W) for two hours:
        // 88 Wh, 132 Wh with cooling; the user pays 4 CPU-hours either way.
        let fast = Costs::at(&model, &site, 2.0, 4, 3600.0, 1.0, 10.0);
        assert!(close(fast.cpu_energy, 0.072, 1e-12) && close(fast.energy, 0.108, 1e-12));
        assert!(close(fast.energy_cost, 0.0108, 1e-12) && close(fast.carbon, 0.054, 1e-12));
        assert!(close(fast.revenue, 1.6, 1e-12) && close(fast.exec_profit, 1.6 - 0.0108, 1e-12));
        assert!(close(fast.profit, fast.exec_profit + 10.0 * (0.17 - 0.05), 1e-12));
        let slow = Costs::at(&model, &site, 1.0, 4, 3600.0, 1.0, 0.0);
        assert!(close(slow.energy, 0.132, 1e-12) && close(slow.revenue, 1.6, 1e-12));
    }

    #[test]
    fn bad_parameters_are_refused_and_never_give_nan() {
        assert!(matches!(PowerModel::new(-1.0, 1.0, 1.0, 2.0, 5), Err(ModelError::Invalid { name: "beta", .. })));
        assert!(matches!(PowerModel::new(1.0, -1.0, 1.0, 2.0, 5), Err(ModelError::Invalid { name: "alpha", .. })));
        assert_eq!(
            PowerModel::new(1.0, 1.0, 3.0, 2.0, 5).unwrap_err().to_string(),
            "f-min (3 GHz) is above f-max (2 GHz)"
        );
        assert!(PowerModel::new(1.0, 1.0, 1.0, f64::NAN, 5).is_err());
        assert!(PowerModel::new(1.0, 1.0, 1.0, 2.0, 0).is_err());
        let bad_cop = Site {
            cop: 0.0,
            carbon_rate: 0.5,
            electricity_price: 0.1,
            transfer_price: 0.0,
            cpu_price: 0.4,
            data_price: 0.0,
        };
        assert_eq!(
            bad_cop.check().unwrap_err().to_string(),
            "cop: expected a positive coefficient of performance, found 0"
        );
        // No power at all: f_opt is f_max, not 0/0.
        let idle = PowerModel::new(0.0, 0.0, 1.0, 2.0, 3).unwrap();
        assert_eq!(idle.f_opt(), 2.0);
        let no_static = PowerModel::new(0.0, 1.0, 1.0, 2.0, 3).unwrap();
        assert_eq!(no_static.f_opt(), 1.0);
        let one = PowerModel::new(1.0, 1.0, 1.0, 2.0, 1).unwrap();
        assert_eq!(one.levels, [2.0]);
    }
}
