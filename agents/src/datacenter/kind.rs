//! The data centre kind: `[datacentres.<group>]` in a scenario, data centres of Garg (2010) ch6 with their CPUs'
//! power model, cooling, carbon rate and prices; COP, carbon rate and prices may be drawn per member and
//! replication (the thesis's random COP and its sensitivity experiments).

use std::collections::BTreeMap;

use rand::RngExt;
use schemars::JsonSchema;
use serde::Deserialize;

use super::dvs::DvsPolicy;
use super::meter::IdlePower;
use super::power::{PowerModel, Site, cop_of_efficiency};
use super::{DataCentre, DataCentreConfig};
use crate::model::Service;
use crate::registry::limits::short;
use crate::registry::values::{GroupSize, NonNegative, Positive, PositiveInt, Speed};
use crate::registry::{
    AgentKind, BuildCx, CheckCx, GroupSpec, Invalid, Member, Metric, ParseError, Policy, RawGroup, Registry, Unit,
};
use crate::sim::{BoxedAgent, rng};

/// The kind's name in the directory: energy-aware meta-brokers find data centres by it.
pub const KIND: &str = "datacentre";

/// Most frequency levels of a data centre's CPUs.
pub const MAX_LEVELS: u32 = 64;

/// Draws of a normal tried before a parameter whose range the normal hardly reaches is refused.
const MAX_TRIES: u32 = 100_000;

/// The data centre kind.
pub struct DataCentreKind;

/// The metrics each data centre reports; the run sums the ones in [`SUMMED`].
const METRICS: &[Metric] = &[
    Metric::new("pes", Unit::Count, "CPUs of the data centre"),
    Metric::new("utilisation", Unit::Share, "CPU-seconds running applications over CPU-seconds available"),
    Metric::new("assigned", Unit::Count, "applications a meta-broker assigned it and it held a slot for"),
    Metric::new("refused", Unit::Count, "assignments it refused (no slot by the deadline, too wide)"),
    Metric::new("completed", Unit::Count, "applications that ran to completion"),
    Metric::new("scaled_up", Unit::Count, "applications run above the frequency level their DVS policy tried first"),
    Metric::new("workload", Unit::CpuHours, "workload executed: CPUs × runtime at f_max of completed applications"),
    Metric::new("mean_frequency", Unit::Share, "frequency over f_max, weighted by the workload executed"),
    Metric::new("cpu_energy", Unit::Energy, "energy of the CPUs, running and idle, before cooling"),
    Metric::new("idle_energy", Unit::Energy, "energy of idle CPUs before cooling (none under `idle-power = \"off\"`)"),
    Metric::new("cooling_energy", Unit::Energy, "energy of the cooling: CPU energy / COP"),
    Metric::new("energy", Unit::Energy, "energy with cooling, (COP + 1) / COP × CPU energy"),
    Metric::new("power", Unit::Power, "mean power drawn over the run, with cooling"),
    Metric::new("carbon", Unit::Carbon, "carbon dioxide emitted: energy with cooling × carbon emission rate"),
    Metric::new("energy_cost", Unit::Dollars, "what its energy cost: energy with cooling × electricity price"),
    Metric::new(
        "earnings",
        Unit::Dollars,
        "revenue: what users paid, CPUs × runtime at f_max × CPU price, and their data",
    ),
    Metric::new("data_cost", Unit::Dollars, "what moving the applications' data cost it"),
    Metric::new("profit", Unit::Dollars, "earnings − energy cost − data cost"),
    Metric::new("cop", Unit::Count, "coefficient of performance of its cooling, as drawn for the run"),
    Metric::new("carbon_rate", Unit::CarbonRate, "carbon emission rate, as drawn for the run"),
    Metric::new("electricity_price", Unit::EnergyPrice, "electricity price, as drawn for the run"),
];

/// Metrics summed over all data centres into run-wide ones of the same name.
const SUMMED: &[&str] =
    &["workload", "cpu_energy", "idle_energy", "energy", "carbon", "energy_cost", "earnings", "data_cost", "profit"];

/// Run-wide metrics per unit of workload (Garg 2010 §6.5, the averages the bounds of §6.4 are about).
const DERIVED: &[Metric] = &[
    Metric::new("average_energy", Unit::EnergyPerWork, "energy over workload executed, over all data centres"),
    Metric::new("average_carbon", Unit::CarbonPerWork, "carbon over workload executed, over all data centres"),
    Metric::new("average_profit", Unit::DollarsPerWork, "profit over workload executed, over all data centres"),
];

impl AgentKind for DataCentreKind {
    fn services(&self) -> &'static [Service] {
        &[Service::HostsApplications]
    }

    fn bills_in_dollars(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        KIND
    }

    fn table(&self) -> &'static str {
        "datacentres"
    }

    fn about(&self) -> &'static str {
        "a data centre: CPUs with DVS, cooling, a carbon rate and prices; energy, carbon and profit per application"
    }

    fn policies(&self, _: &Registry) -> Vec<Policy> {
        vec![
            Policy::of("dvs", &DvsPolicy::ALL, "frequency selection, Garg (2010) §6.3.2"),
            Policy::of("idle-power", &[IdlePower::Off, IdlePower::Static], "what idle CPUs draw"),
        ]
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<RawDataCentre>()
    }

    fn parse(&self, group: toml::Value) -> Result<Box<dyn RawGroup>, ParseError> {
        Ok(Box::new(crate::registry::parse::<RawDataCentre>(group)?))
    }

    fn metrics(&self) -> &'static [Metric] {
        METRICS
    }

    fn summed_metrics(&self) -> &'static [&'static str] {
        SUMMED
    }

    fn derived_metrics(&self) -> &'static [Metric] {
        DERIVED
    }

    fn derive_metrics(&self, metrics: &mut BTreeMap<String, f64>) {
        let work = metrics.get("workload").copied().unwrap_or(0.0);
        if work > 0.0 {
            for (name, of) in [("average_energy", "energy"), ("average_carbon", "carbon"), ("average_profit", "profit")]
            {
                let total = metrics.get(of).copied().unwrap_or(0.0);
                metrics.insert(name.into(), total / work);
            }
        }
    }

    /// A data centre may run at a loss: its energy bills may exceed what its users paid (its owner covers it).
    fn credit(&self) -> bool {
        true
    }
}

/// A group of data centres (Garg 2010 Table 6.2): one with a count of 1, or several alike whose drawn parameters
/// differ.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawDataCentre {
    /// How many data centres (at most 100,000 agents per scenario); with more than one they are named `<group>-0`,
    /// `<group>-1`, ...
    #[serde(default = "GroupSize::one")]
    pub count: GroupSize,
    /// CPUs per data centre.
    pub cpus: PositiveInt,
    /// Speed of a CPU at f_max relative to the reference CPU that runtimes are given for, its MIPS rating normalised
    /// (default 1: an application runs its workload's runtime at f_max; Garg (2010) gives no ratings).
    pub speed: Option<Speed>,
    /// Static power β of a CPU \[W\]: P(f) = β + α f³.
    pub beta: NonNegative,
    /// Dynamic power factor α [W/GHz³].
    pub alpha: NonNegative,
    /// Highest frequency \[GHz\].
    pub f_max: Positive,
    /// Lowest frequency \[GHz\] (default 37.5% of `f-max`, Garg (2010) §6.4 after Wang and Lu); at most `f-max`.
    pub f_min: Option<Positive>,
    /// Frequency levels, equally spaced from `f-min` to `f-max` (default 5, Garg (2010) §6.4; at most 64).
    pub levels: Option<PositiveInt>,
    /// Frequency selection: "ours" (from the level nearest the optimal frequency ∛(β/2α) up; default), "previous"
    /// (from f_min up) or "none" (always f_max).
    #[serde(default)]
    #[schemars(with = "String")]
    pub dvs: DvsPolicy,
    /// What idle CPUs draw: "off" (nothing: only applications' energy counts, Garg (2010) Eq 6.3; default) or
    /// "static" (their static power β).
    #[serde(default)]
    #[schemars(with = "String")]
    pub idle_power: IdlePower,
    /// Coefficient of performance of the cooling, cooling energy = CPU energy / COP: a positive number, or `{ low,
    /// high }` drawn uniformly per member and replication (Garg (2010) §6.5: U[0.6, 3.5]). Or give `efficiency`.
    #[schemars(with = "Option<NumberOrTable>")]
    pub cop: Option<toml::Value>,
    /// Instead of `cop`, the data centre efficiency DCiE = COP / (COP + 1), in (0, 1): a number, or `{ mean, sd }`
    /// drawn from a normal per member and replication, redrawn until it lies in (0, 1) (Garg (2010) Fig 6.8: mean
    /// 0.4).
    #[schemars(with = "Option<NumberOrTable>")]
    pub efficiency: Option<toml::Value>,
    /// Carbon emission rate [kg/kWh]: a non-negative number, or `{ mean, sd }` drawn from a normal per member and
    /// replication, redrawn until positive (Garg (2010) Fig 6.6: mean 0.2).
    #[schemars(with = "NumberOrTable")]
    pub carbon_rate: toml::Value,
    /// Electricity price [$/kWh]: a non-negative number, or `{ mean, sd }` drawn as `carbon-rate` (Fig 6.7: mean 0.1).
    #[schemars(with = "NumberOrTable")]
    pub electricity_price: toml::Value,
    /// What the data centre pays to move a GB in or out [$/GB] (default 0): a non-negative number, or `{ mean, sd,
    /// low, high }` drawn from a normal until it lies in [low, high] (Garg (2010) Fig 6.9: mean 0.068 in [0, 0.17]).
    #[schemars(with = "Option<NumberOrTable>")]
    pub transfer_price: Option<toml::Value>,
    /// What users pay per CPU-hour at f_max [$] (default 0.40, Garg (2010) §6.5).
    pub cpu_price: Option<NonNegative>,
    /// What users pay per GB of data moved [$] (default 0.17, Garg (2010) §6.6.2).
    pub data_price: Option<NonNegative>,
}

/// The schema of a parameter given as a number or as a table of a distribution's parameters.
struct NumberOrTable;

impl JsonSchema for NumberOrTable {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NumberOrTable".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "anyOf": [{ "type": "number" }, { "type": "object" }] })
    }
}

/// A parameter fixed or drawn per member and replication.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Draw {
    /// This value.
    Fixed(f64),
    /// Uniform in [low, high].
    Uniform(f64, f64),
    /// Normal of this mean and standard deviation, redrawn until it lies in [low, high] (the bound excluded where
    /// the parameter excludes it).
    Normal {
        /// Mean.
        mean: f64,
        /// Standard deviation.
        sd: f64,
        /// Lowest value kept.
        low: f64,
        /// Highest value kept.
        high: f64,
        /// Whether `low` itself is refused (a rate that must be positive).
        open_low: bool,
    },
}

impl Draw {
    /// A value for one member and replication, from `stream`.
    pub fn draw(&self, stream: &mut rng::SimRng) -> Result<f64, String> {
        match *self {
            Draw::Fixed(x) => Ok(x),
            Draw::Uniform(lo, hi) => Ok(if lo == hi { lo } else { stream.random_range(lo..=hi) }),
            Draw::Normal { mean, sd, low, high, open_low } => {
                let normal = rand_distr::Normal::new(mean, sd).map_err(|e| e.to_string())?;
                let keep = |x: &f64| (*x > low || (!open_low && *x == low)) && *x <= high;
                (0..MAX_TRIES)
                    .map(|_| stream.sample(normal))
                    .find(keep)
                    .ok_or_else(|| format!("a normal of mean {mean} and sd {sd} hardly ever falls in [{low}, {high}]"))
            }
        }
    }
}

/// What a drawn parameter may be: its name, its valid range and whether a table may give `low` and `high`.
#[derive(Clone, Copy)]
struct Range {
    low: f64,
    high: f64,
    open_low: bool,
    open_high: bool,
    what: &'static str,
}

impl Range {
    fn contains(&self, x: f64) -> bool {
        x.is_finite()
            && (x > self.low || (!self.open_low && x == self.low))
            && (x < self.high || (!self.open_high && x == self.high))
    }
}

/// Reads a parameter at `key`: a number in `range`, `{ low, high }` (uniform, with `uniform`), or `{ mean, sd }`
/// (normal, optionally with `low` and `high` within the range when `bounded`).
fn draw_of(key: &str, value: &toml::Value, range: &Range, uniform: bool, bounded: bool) -> Result<Draw, Invalid> {
    let number = |v: &toml::Value| v.as_float().or_else(|| v.as_integer().map(|i| i as f64));
    let forms = match (uniform, bounded) {
        (true, _) => "a number, `{ low, high }` or `{ mean, sd }`",
        (false, true) => "a number or `{ mean, sd }` (with `low` and `high` if you like)",
        (false, false) => "a number or `{ mean, sd }`",
    };
    let bad = |m: String| Invalid::at(key, m);
    match value {
        toml::Value::Table(t) => {
            let get = |k: &str| t.get(k).map(|v| number(v).ok_or_else(|| bad(format!("`{k}`: expected a number"))));
            let allowed: &[&str] = match (uniform, bounded) {
                (true, _) => &["low", "high", "mean", "sd"],
                (false, true) => &["mean", "sd", "low", "high"],
                (false, false) => &["mean", "sd"],
            };
            if let Some(k) = t.keys().find(|k| !allowed.contains(&k.as_str())) {
                return Err(bad(format!("unknown key `{k}`: expected {forms}")));
            }
            let (low, high) = (get("low").transpose()?, get("high").transpose()?);
            let (mean, sd) = (get("mean").transpose()?, get("sd").transpose()?);
            for (name, x) in [("low", low), ("high", high), ("mean", mean)] {
                if let Some(x) = x
                    && !range.contains(x)
                {
                    return Err(bad(format!("`{name}`: expected {}, found {}", range.what, short(x))));
                }
            }
            match (mean, sd) {
                (Some(mean), Some(sd)) => {
                    if !(sd.is_finite() && sd >= 0.0) {
                        return Err(bad(format!("`sd`: expected a non-negative number, found {}", short(sd))));
                    }
                    let (lo, hi) = (low.unwrap_or(range.low), high.unwrap_or(range.high));
                    if !(lo <= mean && mean <= hi) {
                        let m = format!(
                            "expected low <= mean <= high, found {} <= {} <= {}",
                            short(lo),
                            short(mean),
                            short(hi)
                        );
                        return Err(bad(m));
                    }
                    let open_low = low.is_none() && range.open_low;
                    let high = if high.is_none() && range.open_high { hi.next_down() } else { hi };
                    Ok(Draw::Normal { mean, sd, low: lo, high, open_low })
                }
                (None, None) if uniform => match (low, high) {
                    (Some(lo), Some(hi)) if lo <= hi => Ok(Draw::Uniform(lo, hi)),
                    (Some(lo), Some(hi)) => {
                        Err(bad(format!("expected low <= high, found [{}, {}]", short(lo), short(hi))))
                    }
                    _ => Err(bad(format!("expected {forms}"))),
                },
                _ => Err(bad(format!("expected {forms}"))),
            }
        }
        v => match number(v) {
            Some(x) if range.contains(x) => Ok(Draw::Fixed(x)),
            Some(x) => Err(bad(format!("expected {}, found {}", range.what, short(x)))),
            None => Err(bad(format!("expected {forms}"))),
        },
    }
}

const RATE: Range =
    Range { low: 0.0, high: f64::MAX, open_low: false, open_high: false, what: "a non-negative number" };

impl RawGroup for RawDataCentre {
    fn count(&self) -> usize {
        self.count.0 as usize
    }

    fn check(&self, _cx: &CheckCx<'_>) -> Result<Box<dyn GroupSpec>, Invalid> {
        Ok(Box::new(self.spec()?))
    }
}

impl RawDataCentre {
    /// The checked group.
    pub fn spec(&self) -> Result<DataCentreSpec, Invalid> {
        let f_max = self.f_max.0;
        let f_min = self.f_min.map_or(0.375 * f_max, |f| f.0);
        if f_min > f_max {
            let m = format!("expected at most `f-max` ({} GHz), found {} GHz", short(f_max), short(f_min));
            return Err(Invalid::at("f-min", m));
        }
        let levels = self.levels.map_or(5, |l| l.0);
        if levels > MAX_LEVELS {
            return Err(Invalid::at("levels", format!("expected at most {MAX_LEVELS} levels, found {levels}")));
        }
        let power = PowerModel::new(self.beta.0, self.alpha.0, f_min, f_max, levels)
            .map_err(|e| Invalid::at("", e.to_string()))?;
        let cop = match (&self.cop, &self.efficiency) {
            (Some(v), None) => {
                let positive = Range { open_low: true, what: "a positive coefficient of performance", ..RATE };
                CopDraw::Cop(draw_of("cop", v, &positive, true, false)?)
            }
            (None, Some(v)) => {
                let share = Range { low: 0.0, high: 1.0, open_low: true, open_high: true, what: "a number in (0, 1)" };
                CopDraw::Efficiency(draw_of("efficiency", v, &share, false, false)?)
            }
            (Some(_), Some(_)) => return Err(Invalid::at("efficiency", "give `cop` or `efficiency`, not both")),
            (None, None) => {
                return Err(Invalid::at("cop", "required key is missing (or give `efficiency`)")
                    .hint("Garg (2010) §6.5 draws it: `cop = { low = 0.6, high = 3.5 }`"));
            }
        };
        let positive_rate = Range { open_low: true, ..RATE };
        let carbon = draw_of(
            "carbon-rate",
            &self.carbon_rate,
            &positive_or_fixed(&self.carbon_rate, positive_rate),
            false,
            false,
        )?;
        let price = draw_of(
            "electricity-price",
            &self.electricity_price,
            &positive_or_fixed(&self.electricity_price, positive_rate),
            false,
            false,
        )?;
        let transfer = match &self.transfer_price {
            Some(v) => draw_of("transfer-price", v, &RATE, false, true)?,
            None => Draw::Fixed(0.0),
        };
        let config = DataCentreConfig {
            cpus: self.cpus.0,
            speed: self.speed.map_or(1.0, |s| s.0),
            power,
            site: Site {
                cop: 1.0,
                carbon_rate: 0.0,
                electricity_price: 0.0,
                transfer_price: 0.0,
                cpu_price: self.cpu_price.map_or(0.40, |p| p.0),
                data_price: self.data_price.map_or(0.17, |p| p.0),
            },
            dvs: self.dvs,
            idle: self.idle_power,
        };
        Ok(DataCentreSpec { config, cop, carbon, price, transfer })
    }
}

/// A fixed rate may be 0 (no carbon, free electricity); a drawn one is redrawn until positive.
fn positive_or_fixed(value: &toml::Value, positive: Range) -> Range {
    if value.is_table() { positive } else { RATE }
}

/// The cooling's COP, or the efficiency it is drawn from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CopDraw {
    /// The COP.
    Cop(Draw),
    /// DCiE = COP / (COP + 1).
    Efficiency(Draw),
}

/// A checked data centre group: its configuration and what is drawn per member and replication.
#[derive(Clone, Debug, PartialEq)]
pub struct DataCentreSpec {
    /// The configuration, but for what is drawn.
    pub config: DataCentreConfig,
    /// COP.
    pub cop: CopDraw,
    /// Carbon emission rate.
    pub carbon: Draw,
    /// Electricity price.
    pub price: Draw,
    /// Data transfer price.
    pub transfer: Draw,
}

impl DataCentreSpec {
    /// A member's configuration for the replication of `seed`: each drawn parameter from a stream of its own, so
    /// that drawing one leaves the others as they were.
    pub fn draw(&self, seed: u64, name: &str) -> Result<DataCentreConfig, String> {
        let mut config = self.config.clone();
        let stream = |k: u64| rng::stream(seed, &format!("datacentre:{name}"), k);
        config.site.cop = match self.cop {
            CopDraw::Cop(d) => d.draw(&mut stream(0))?,
            CopDraw::Efficiency(d) => cop_of_efficiency(d.draw(&mut stream(0))?),
        };
        config.site.carbon_rate = self.carbon.draw(&mut stream(1))?;
        config.site.electricity_price = self.price.draw(&mut stream(2))?;
        config.site.transfer_price = self.transfer.draw(&mut stream(3))?;
        config.site.check().map_err(|e| e.to_string())?;
        Ok(config)
    }
}

impl GroupSpec for DataCentreSpec {
    fn build(&self, member: &Member<'_>, cx: &mut BuildCx) -> Result<BoxedAgent, String> {
        let config = self.draw(cx.seed, member.name).map_err(|e| format!("{}: {e}", member.name))?;
        Ok(Box::new(DataCentre::new(config)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Result<DataCentreSpec, Invalid> {
        let raw: RawDataCentre = toml::from_str(text).map_err(|e| Invalid::at("parse", e.to_string()))?;
        raw.spec()
    }

    const NEW_YORK: &str =
        "cpus = 2050\nbeta = 65\nalpha = 7.5\nf-max = 1.8\ncarbon-rate = 0.389\nelectricity-price = 0.15\n";

    #[test]
    fn a_table_6_3_data_centre_with_a_random_cop() {
        let spec = check(&format!("{NEW_YORK}cop = {{ low = 0.6, high = 3.5 }}")).unwrap();
        assert_eq!(spec.config.power.levels.len(), 5);
        assert_eq!(spec.config.power.f_min(), 0.675);
        let a = spec.draw(1, "ny").unwrap();
        assert!((0.6..=3.5).contains(&a.site.cop));
        assert_eq!((a.site.carbon_rate, a.site.electricity_price, a.site.cpu_price), (0.389, 0.15, 0.4));
        // Same seed and name, same draw; another replication, another.
        assert_eq!(spec.draw(1, "ny").unwrap(), a);
        assert_ne!(spec.draw(2, "ny").unwrap().site.cop, a.site.cop);
    }

    #[test]
    fn drawn_rates_stay_in_their_ranges() {
        let spec = check(
            "cpus = 4\nbeta = 1\nalpha = 1\nf-max = 2\nefficiency = { mean = 0.4, sd = 0.2 }\n\
             carbon-rate = { mean = 0.2, sd = 0.4 }\nelectricity-price = 0.1\n\
             transfer-price = { mean = 0.068, sd = 0.2, low = 0, high = 0.17 }",
        )
        .unwrap();
        for seed in 0..200 {
            let c = spec.draw(seed, "x").unwrap();
            assert!(c.site.cop > 0.0 && c.site.carbon_rate > 0.0, "{c:?}");
            assert!((0.0..=0.17).contains(&c.site.transfer_price), "{c:?}");
        }
    }

    #[test]
    fn bad_parameters_are_refused_with_their_key() {
        let err = |extra: &str| check(&format!("{NEW_YORK}{extra}")).unwrap_err();
        let e = err("cop = 0");
        assert_eq!(
            (e.key.as_str(), e.message.as_str()),
            ("cop", "expected a positive coefficient of performance, found 0")
        );
        assert_eq!(err("cop = -1.5").message, "expected a positive coefficient of performance, found -1.5");
        assert_eq!(err("cop = { low = 3.5, high = 0.6 }").message, "expected low <= high, found [3.5, 0.6]");
        assert_eq!(
            err("cop = { low = 0, high = 3 }").message,
            "`low`: expected a positive coefficient of performance, found 0"
        );
        assert_eq!(err("").key, "cop");
        let e = err("cop = 1\nf-min = 2");
        assert_eq!((e.key.as_str(), e.message.as_str()), ("f-min", "expected at most `f-max` (1.8 GHz), found 2 GHz"));
        assert_eq!(err("cop = 1\nefficiency = 0.5").key, "efficiency");
        assert_eq!(err("efficiency = 1").message, "expected a number in (0, 1), found 1");
        assert_eq!(err("cop = { mean = 1 }").message, "expected a number, `{ low, high }` or `{ mean, sd }`");
        // Negative β and α are refused when the table is read, with the line (serde's checked types).
        let e = toml::from_str::<RawDataCentre>(
            "cpus = 1\nbeta = -3\nalpha = 1\nf-max = 2\ncarbon-rate = 0\nelectricity-price = 0",
        )
        .unwrap_err();
        assert!(e.to_string().contains("expected a non-negative number, found -3"), "{e}");
        assert!(e.to_string().contains("line 2"), "{e}");
    }
}
