//! The charts a scenario asks for (`[[chart]]`) in the report of `gridmarket reproduce`, beside the chart of each
//! target's metric: grouped bars over several metrics (success ratios by group and policy), a metric against a swept
//! key with reference values (a simulation against its analytic model), and the spread of the providers' load over
//! time, read back from the runs' `timeseries.csv`.

use std::collections::BTreeMap;
use std::path::Path;

use toml::Value;

use agents::registry::Unit;

use crate::output::{Csv, Field};
use crate::plot::{self, BarSeries, Chart as Frame, Series, TimeSeries};
use crate::runner::metrics::{axis_label, unit_of};
use crate::runner::{StudyResult, run_dir};
use crate::scenario::Study;
use crate::scenario::plan::{Chart, ChartKind, Point, show};
use crate::stats::Summary;

/// Every `[[chart]]` of `study` as `(file name, SVG)`; `runs` is the folder of its runs (`p<i>/r<j>/`).
pub fn scenario_charts(study: &Study, result: &StudyResult, runs: &Path) -> Vec<(String, String)> {
    study
        .charts
        .iter()
        .map(|chart| {
            let svg = match &chart.kind {
                ChartKind::Bars { metrics } => bars(study, result, chart, metrics),
                ChartKind::Lines { metric, x, reference, reference_label } => {
                    lines(study, result, chart, metric, x, (reference, reference_label))
                }
                ChartKind::LoadDeviation => load_deviation(study, chart, runs),
            };
            (format!("{}-{}.svg", study.name, slug(&chart.title)), svg)
        })
        .collect()
}

/// The title as a file name: lower-case letters and digits, other runs of characters as one `-`.
fn slug(title: &str) -> String {
    let mut out = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// The points the chart shows, each with the label of its values of the swept keys that vary among them but
/// `except`.
fn shown<'a>(study: &'a Study, chart: &Chart, except: &str) -> Vec<(&'a Point, String)> {
    study
        .points
        .iter()
        .filter(|p| chart.at.iter().all(|(k, v)| p.assignments.iter().any(|(pk, pv)| pk == k && pv == v)))
        .map(|p| {
            let varying = |k: &String| k != except && !chart.at.contains_key(k);
            let rest: Vec<String> =
                p.assignments.iter().filter(|(k, _)| varying(k)).map(|(k, v)| format!("{k}={}", show(v))).collect();
            (p, rest.join(", "))
        })
        .collect()
}

/// The value of the first swept key at `p`.
fn first_value(study: &Study, p: &Point) -> String {
    let key = study.sweep.first().map(|(k, _)| k.as_str()).unwrap_or_default();
    p.assignments.iter().find(|(k, _)| k == key).map(|(_, v)| show(v)).unwrap_or_default()
}

fn stat(result: &StudyResult, point: usize, metric: &str) -> (f64, f64) {
    result.summaries.get(point).and_then(|s| s.get(metric)).map_or((f64::NAN, f64::NAN), |s| (s.mean, s.ci95))
}

/// The unit of `metric` in `study`'s registry, unbounded when undeclared.
fn bounds(study: &Study, metric: &str) -> (f64, f64) {
    let registry = &study.points[0].plan.registry;
    unit_of(registry, metric).map_or((f64::NEG_INFINITY, f64::INFINITY), Unit::bounds)
}

fn bars(study: &Study, result: &StudyResult, chart: &Chart, metrics: &[(String, String)]) -> String {
    let categories: Vec<String> = metrics.iter().map(|(_, label)| label.clone()).collect();
    // The groups share a unit (they are one quantity of different groups): the first metric's.
    let first = metrics.first().map_or("", |(m, _)| m.as_str());
    let unit = unit_of(&study.points[0].plan.registry, first);
    let y_label = unit.map_or_else(String::new, |u| u.axis());
    let series: Vec<BarSeries> = shown(study, chart, "")
        .into_iter()
        .map(|(p, label)| BarSeries {
            label: if study.sweep.len() == 1 { first_value(study, p) } else { label },
            values: metrics.iter().map(|(m, _)| stat(result, p.index, m)).collect(),
        })
        .collect();
    let frame = Frame { y_bounds: bounds(study, first), ..Frame::new(&chart.title, "", &y_label) };
    plot::bar_chart(&frame, &categories, &series)
}

fn lines(
    study: &Study,
    result: &StudyResult,
    chart: &Chart,
    metric: &str,
    x: &str,
    (reference, reference_label): (&[f64], &str),
) -> String {
    let number = |v: &Value| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)).unwrap_or(f64::NAN);
    let xs: Vec<f64> =
        study.sweep.iter().find(|(k, _)| k == x).map(|(_, v)| v.iter().map(number).collect()).unwrap_or_default();
    let mut groups: Vec<Series> = Vec::new();
    for (p, label) in shown(study, chart, x) {
        let at_x = p.assignments.iter().find(|(k, _)| k == x).map_or(f64::NAN, |(_, v)| number(v));
        let (mean, ci) = stat(result, p.index, metric);
        let label = if label.is_empty() { "simulated".to_string() } else { label };
        match groups.iter_mut().find(|g| g.label == label) {
            Some(g) => g.points.push((at_x, mean, ci)),
            None => groups.push(Series { label, points: vec![(at_x, mean, ci)] }),
        }
    }
    if !reference.is_empty() {
        let points = xs.iter().zip(reference).map(|(&x, &r)| (x, r, f64::NAN)).collect();
        groups.push(Series { label: reference_label.to_string(), points });
    }
    let y_label = axis_label(&study.points[0].plan.registry, metric);
    let frame = Frame { y_bounds: bounds(study, metric), ..Frame::new(&chart.title, x, &y_label) };
    plot::line_chart(&frame, &groups)
}

/// One line per point: at each sample time up to the end of its shortest replication, the mean over the
/// replications of the standard deviation of the providers' utilisation (the mean of fewer runs after the first ends
/// would mix in another set of runs, so the line stops there).
fn load_deviation(study: &Study, chart: &Chart, runs: &Path) -> String {
    let series: Vec<TimeSeries> = shown(study, chart, "")
        .into_iter()
        .map(|(p, label)| {
            let replications: Vec<Vec<(f64, f64)>> = (0..p.plan.replications)
                .filter_map(|rep| std::fs::read_to_string(run_dir(runs, p.index, rep).join("timeseries.csv")).ok())
                .map(|text| spread(&text))
                .collect();
            let end = replications.iter().map(|r| r.last().map_or(0.0, |s| s.0)).fold(f64::INFINITY, f64::min);
            let mut by_time: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
            for (t, sd) in replications.iter().flatten().filter(|s| s.0 <= end) {
                by_time.entry(t.to_bits()).or_default().push(*sd);
            }
            let points = by_time.into_iter().map(|(t, sds)| (f64::from_bits(t), Summary::of(&sds).mean)).collect();
            TimeSeries { label: if study.sweep.len() == 1 { first_value(study, p) } else { label }, points }
        })
        .collect();
    // Times in the unit that suits the longest line (hours, days).
    let end = series.iter().filter_map(|s| s.points.last()).map(|p| p.0).fold(0.0, f64::max);
    let (scale, unit) = plot::time_unit(end);
    let series: Vec<TimeSeries> = series
        .into_iter()
        .map(|s| TimeSeries { points: s.points.into_iter().map(|(t, v)| (t / scale, v)).collect(), ..s })
        .collect();
    let title = format!("{} (mean over the replications)", chart.title);
    let x_label = format!("time [{unit}]");
    let y_label = format!("standard deviation of the providers' load {}", Unit::Share.axis());
    let frame = Frame { y_bounds: Unit::Share.bounds(), ..Frame::new(&title, &x_label, &y_label) };
    plot::time_chart(&frame, &series)
}

/// The standard deviation across agents of their utilisation, at each sample time of a `timeseries.csv` (columns
/// `t, agent, busy_pes, utilisation, queued`); rows that do not parse are skipped.
fn spread(csv: &str) -> Vec<(f64, f64)> {
    let mut at: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for line in csv.lines().skip(1) {
        let fields: Vec<&str> = line.split(',').collect();
        if let (Some(t), Some(u)) = (fields.first(), fields.get(3))
            && let (Ok(t), Ok(u)) = (t.parse::<f64>(), u.parse::<f64>())
        {
            at.entry(t.to_bits()).or_default().push(u);
        }
    }
    at.into_iter()
        .map(|(t, loads)| {
            let n = loads.len() as f64;
            let mean = loads.iter().sum::<f64>() / n;
            let var = loads.iter().map(|l| (l - mean) * (l - mean)).sum::<f64>() / n;
            (f64::from_bits(t), var.sqrt())
        })
        .collect()
}

/// The market's state over time that `run`'s report draws, averaged across replications: its name, the column of
/// `timeseries.csv` it comes from, whether the providers' values are summed (else their mean is taken), its unit and
/// what it is.
const OVER_TIME: [(&str, bool, Unit, &str); 3] = [
    ("utilisation", false, Unit::Share, "the providers' mean utilisation"),
    ("queued", true, Unit::Count, "jobs queued at the providers"),
    ("price", false, Unit::Price, "the providers' mean posted price"),
];

/// A point's state over time: at each sample time, per quantity of [`OVER_TIME`], its summary over replications.
type Samples = Vec<(f64, Vec<Summary>)>;

/// What [`time_bands`] gives: the bytes of `series.csv` and the charts, `(file, svg)`.
pub type Bands = (Vec<u8>, Vec<(String, String)>);

/// Sample times of a point's band: from 0 to the end of its shortest replication, in this many steps.
const BAND_STEPS: u32 = 100;

/// Points beyond which a study's report draws no bands over time (they would not be told apart).
const MAX_BANDED_POINTS: usize = 8;

/// `run`'s mean ± 95% CI time series across replications: the rows of `series.csv` and, for studies of at most 8
/// points, one chart per quantity (the providers' mean utilisation, their queues summed, their mean posted price)
/// with a band per point. Each point is sampled
/// on its own grid, up to the end of its shortest replication (later, fewer runs would be averaged), each run's state
/// at a grid time being its last sample at or before it. Charts are `(file, svg)`, their prices labelled by
/// `currency`. `None` when no run wrote `timeseries.csv`.
pub fn time_bands(
    study: &Study,
    result: &StudyResult,
    runs: &Path,
    currency: impl Fn(&str) -> String,
) -> Option<Bands> {
    let mut bands: Vec<(&Point, Samples)> = Vec::new();
    for p in &study.points {
        let reps: Vec<Vec<(f64, Vec<f64>)>> = result
            .runs
            .iter()
            .filter(|r| r.point == p.index)
            .filter_map(|r| std::fs::read_to_string(run_dir(runs, p.index, r.rep).join("timeseries.csv")).ok())
            .map(|text| market_state(&text))
            .filter(|state| !state.is_empty())
            .collect();
        let Some(end) = reps.iter().filter_map(|r| r.last()).map(|s| s.0).reduce(f64::min) else { continue };
        let grid = (0..=BAND_STEPS).map(|k| end * f64::from(k) / f64::from(BAND_STEPS));
        let samples = grid
            .map(|t| {
                let states: Vec<&Vec<f64>> = reps
                    .iter()
                    .filter_map(|r| r.partition_point(|s| s.0 <= t).checked_sub(1).map(|i| &r[i].1))
                    .collect();
                let of = |q: usize| Summary::of(&states.iter().map(|s| s[q]).collect::<Vec<_>>());
                (t, (0..OVER_TIME.len()).map(of).collect())
            })
            .collect();
        bands.push((p, samples));
    }
    if bands.is_empty() {
        return None;
    }
    let swept: Vec<&str> = study.sweep.iter().map(|(k, _)| k.as_str()).collect();
    let tail = ["quantity", "t", "n", "mean", "ci95", "lo", "hi"];
    let mut csv = Csv::new(&["point"].into_iter().chain(swept.iter().copied()).chain(tail).collect::<Vec<_>>());
    for (p, samples) in &bands {
        let values: Vec<String> = p.assignments.iter().map(|(_, v)| show(v)).collect();
        for (q, (name, ..)) in OVER_TIME.iter().enumerate() {
            for (t, summaries) in samples {
                let s = &summaries[q];
                let lead = [Field::UInt(p.index as u64)].into_iter().chain(values.iter().map(|v| Field::Str(v)));
                let mut row: Vec<Field> = lead.collect();
                row.extend([Field::Str(name), Field::Num(*t), Field::UInt(s.n as u64), Field::Num(s.mean)]);
                row.extend([Field::Num(s.ci95), Field::Num(s.mean - s.ci95), Field::Num(s.mean + s.ci95)]);
                csv.row(&row);
            }
        }
    }
    let mut charts = Vec::new();
    if study.points.len() <= MAX_BANDED_POINTS {
        let end = bands.iter().filter_map(|b| b.1.last()).map(|s| s.0).fold(0.0, f64::max);
        let (scale, unit) = plot::time_unit(end);
        let x_label = format!("time [{unit}]");
        for (q, (name, _, of, about)) in OVER_TIME.iter().enumerate() {
            let series: Vec<Series> = bands
                .iter()
                .map(|(p, samples)| Series {
                    label: if study.sweep.len() == 1 { first_value(study, p) } else { p.label.clone() },
                    points: samples.iter().map(|(t, s)| (t / scale, s[q].mean, s[q].ci95)).collect(),
                })
                .collect();
            let title = format!("{} — {about}, mean ± 95% CI", study.name);
            let y_label = currency(&format!("{about} {}", of.axis()));
            let frame = Frame { y_bounds: of.bounds(), ..Frame::new(&title, &x_label, &y_label) };
            charts.push((format!("{}-{name}-over-time.svg", study.name), plot::band_chart(&frame, &series)));
        }
    }
    Some((csv.into_bytes(), charts))
}

/// A run's state at each of its sample times, from its `timeseries.csv`: per quantity of [`OVER_TIME`], the
/// providers' values summed or averaged. Rows that do not parse are skipped; a file without the columns gives none.
fn market_state(csv: &str) -> Vec<(f64, Vec<f64>)> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let columns: Option<Vec<usize>> =
        OVER_TIME.iter().map(|(name, ..)| header.iter().position(|h| h == name)).collect();
    let Some(columns) = columns else { return Vec::new() };
    let mut at: BTreeMap<u64, (f64, Vec<f64>)> = BTreeMap::new();
    for line in lines {
        let fields: Vec<&str> = line.split(',').collect();
        let Some(Ok(t)) = fields.first().map(|t| t.parse::<f64>()) else { continue };
        let Some(values) = columns.iter().map(|&c| fields.get(c)?.parse::<f64>().ok()).collect::<Option<Vec<f64>>>()
        else {
            continue;
        };
        let (n, sums) = at.entry(t.to_bits()).or_insert_with(|| (0.0, vec![0.0; OVER_TIME.len()]));
        *n += 1.0;
        sums.iter_mut().zip(values).for_each(|(s, v)| *s += v);
    }
    let combine = |(n, sums): (f64, Vec<f64>)| -> Vec<f64> {
        sums.into_iter().zip(OVER_TIME).map(|(s, (_, summed, ..))| if summed { s } else { s / n }).collect()
    };
    at.into_iter().map(|(t, state)| (f64::from_bits(t), combine(state))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runs_market_state_sums_the_queues_and_averages_load_and_price() {
        let csv = "t,agent,busy_pes,utilisation,queued,price\n0,a,4,1,2,0.5\n0,b,0,0,3,1.5\n10,a,2,0.5,0,1\nx,y\n";
        assert_eq!(market_state(csv), [(0.0, vec![0.5, 5.0, 1.0]), (10.0, vec![0.5, 0.0, 1.0])]);
        assert!(market_state("t,agent,busy_pes\n0,a,1\n").is_empty(), "no such columns, no state");
    }

    #[test]
    fn spread_is_the_population_sd_per_sample_time() {
        // t = 0: loads 1 and 0 (sd 0.5); t = 10: 0.5 and 0.5 (sd 0); a malformed row is skipped.
        let csv = "t,agent,busy_pes,utilisation,queued\n0,a,4,1,0\n0,b,0,0,0\n10,a,2,0.5,0\n10,b,2,0.5,1\nx,y\n";
        assert_eq!(spread(csv), [(0.0, 0.5), (10.0, 0.0)]);
    }

    #[test]
    fn slugs_are_file_names() {
        assert_eq!(slug("Success ratio by urgency (Fig 7.6(a))"), "success-ratio-by-urgency-fig-7-6-a");
    }
}
