//! Market outputs and measures of a run: the induced-value markets' periods and trades (`periods.csv`,
//! `trades.csv`, `prices.svg`), and for runs of providers and brokers the run-wide market metrics (`market.*`:
//! the contention index, prices, revenue, surplus, welfare, Gini coefficients, SLA violations).
//!
//! The contention index of a sample interval (t − period, t] is the requests (claims, submissions, reservations)
//! the k cheapest providers received in it over their free PEs (their PEs less the busy PE-seconds of the interval
//! over its length), the providers ranked by the price they posted at the interval's start, and at least one free
//! PE counted: requests per free slot at the cheapest, where price-driven brokers crowd (k is the scenario's
//! `contention-k`, default 1).

use std::collections::BTreeMap;
use std::path::Path;

use agents::market::MarketRecord;
use agents::market::measures::gini;
use agents::registry::{Metric, Unit};
use agents::report::{JobOutcome, Report, Series};

use crate::output::{Csv, Field};
use crate::plot::{self, Band, Chart, TimeSeries};

/// Run-wide market metrics, under `market.`, in runs with providers.
pub const MARKET_METRICS: [Metric; 12] = [
    Metric::new(
        "contention",
        Unit::Count,
        "the contention index: requests per free PE at the `contention-k` cheapest providers per sample interval, \
         mean over the intervals",
    ),
    Metric::new("contention_peak", Unit::Count, "the contention index of the most contended sample interval"),
    Metric::new(
        "price",
        Unit::Price,
        "the providers' posted prices averaged over time, then over the providers weighted by their PEs",
    ),
    Metric::new(
        "price_volatility",
        Unit::Ratio,
        "per provider, the standard deviation of the relative changes of its posted price between samples; mean \
         over the providers",
    ),
    Metric::new("revenue", Unit::Money, "what providers received, over the ledger"),
    Metric::new(
        "user_surplus",
        Unit::Money,
        "Σ over completed jobs with a budget of (budget − cost): what the users valued the jobs at, less what they paid",
    ),
    Metric::new("welfare", Unit::Money, "user_surplus + revenue (providers' costs are not modelled)"),
    Metric::new(
        "gini_load",
        Unit::Share,
        "Gini coefficient of the busy PE-seconds per PE across providers: 0 when every provider is as loaded, near 1 \
         when one takes everything",
    ),
    Metric::new("gini_surplus", Unit::Share, "Gini coefficient of the users' surplus per user broker"),
    Metric::new(
        "sla_violations",
        Unit::Count,
        "jobs with a deadline that were accepted (started) but did not complete by it",
    ),
    Metric::new(
        "cheapest_share",
        Unit::Share,
        "the share of all busy PE-seconds served by the k cheapest providers at t = 0",
    ),
    Metric::new(
        "refused_cheapest",
        Unit::Count,
        "claims, submissions and reservations the k cheapest providers at t = 0 refused",
    ),
];

/// One provider's series, as its report gives them.
pub struct Site<'a> {
    /// Its PEs.
    pub pes: f64,
    /// Busy PEs over time.
    pub busy: &'a Series,
    /// Posted price over time.
    pub price: Option<&'a Series>,
    /// Requests received so far, over time.
    pub requests: Option<&'a Series>,
    /// Requests it refused over the run.
    pub refused: f64,
}

impl<'a> Site<'a> {
    /// The site of `report`, if it has PEs ([`Report::pes`]).
    pub fn of(report: &'a Report) -> Option<Site<'a>> {
        let pes = report.pes()?;
        let (price, requests) = (report.series_named("price"), report.series_named("requests"));
        Some(Site { pes: pes.count, busy: pes.busy, price, requests, refused: report.metric("refused").unwrap_or(0.0) })
    }

    /// Requests received in (a, b].
    pub fn requests_in(&self, a: f64, b: f64) -> f64 {
        self.requests.map_or(0.0, |r| r.at(b) - r.at(a))
    }

    /// Mean free PEs over [a, b).
    pub fn free_over(&self, a: f64, b: f64) -> f64 {
        if b <= a {
            return self.pes - self.busy.at(a);
        }
        self.pes - self.busy.integral_over(a, b) / (b - a)
    }

    /// Its own contention index over (a, b]: requests over mean free PEs (at least one).
    pub fn contention(&self, a: f64, b: f64) -> f64 {
        self.requests_in(a, b) / self.free_over(a, b).max(1.0)
    }

    fn price_at(&self, t: f64) -> f64 {
        self.price.map_or(f64::NAN, |p| p.at(t))
    }
}

/// The contention index of (a, b] at the `k` cheapest of `sites` (by the prices posted at `a`).
pub fn contention(sites: &[Site<'_>], k: usize, a: f64, b: f64) -> f64 {
    let mut ranked: Vec<&Site<'_>> = sites.iter().collect();
    ranked.sort_by(|x, y| x.price_at(a).total_cmp(&y.price_at(a)));
    let cheapest = &ranked[..k.min(ranked.len())];
    let requests: f64 = cheapest.iter().map(|s| s.requests_in(a, b)).sum();
    let free: f64 = cheapest.iter().map(|s| s.free_over(a, b)).sum();
    requests / free.max(1.0)
}

/// The run-wide market metrics of a run of `sites`, those of time over `window` = (from, to) (the whole run: from 0 to
/// its end), sampled every `period` from its start, with its jobs, the ledger's money received by providers and each
/// job's owner.
pub fn market_metrics(
    sites: &[Site<'_>],
    k: usize,
    period: f64,
    (from, to): (f64, f64),
    jobs: &[(&str, &super::metrics::JobRow)],
    revenue: f64,
    out: &mut BTreeMap<String, f64>,
) {
    if sites.is_empty() {
        return;
    }
    let mut put = |name: &str, v: f64| {
        out.insert(format!("market.{name}"), v);
    };
    let span = to - from;
    let intervals = if span > 0.0 && period > 0.0 { (span / period).ceil() as usize } else { 0 };
    // The i-th sample interval of the window.
    let interval = |i: usize| (from + i as f64 * period, (from + (i + 1) as f64 * period).min(to));
    let index: Vec<f64> = (0..intervals).map(interval).map(|(a, b)| contention(sites, k, a, b)).collect();
    let mean = |v: &[f64]| if v.is_empty() { f64::NAN } else { v.iter().sum::<f64>() / v.len() as f64 };
    put("contention", mean(&index));
    put("contention_peak", index.iter().copied().fold(f64::NAN, f64::max));
    let pes: f64 = sites.iter().map(|s| s.pes).sum();
    // Over the window; at its start when it is an instant.
    let over = |series: &Series| series.integral(to) - series.integral(from);
    let mean_price = |s: &Site<'_>| match s.price {
        Some(p) if span > 0.0 => over(p) / span,
        _ => s.price_at(from),
    };
    put("price", sites.iter().map(|s| s.pes * mean_price(s)).sum::<f64>() / pes);
    let volatility: Vec<f64> = sites
        .iter()
        .filter_map(|s| {
            let changes: Vec<f64> = (0..intervals)
                .map(|i| (s.price_at(interval(i).0), s.price_at(interval(i).1)))
                .filter(|(a, _)| *a > 0.0)
                .map(|(a, b)| (b - a) / a)
                .collect();
            (changes.len() >= 2).then(|| {
                let m = mean(&changes);
                (changes.iter().map(|c| (c - m).powi(2)).sum::<f64>() / (changes.len() - 1) as f64).sqrt()
            })
        })
        .collect();
    put("price_volatility", mean(&volatility));
    put("revenue", revenue);
    let mut by_owner: BTreeMap<&str, f64> = BTreeMap::new();
    let mut surplus = 0.0;
    for (owner, j) in jobs {
        let gain = match (j.outcome, j.budget) {
            (JobOutcome::Completed, Some(b)) => b - j.cost,
            _ => 0.0,
        };
        surplus += gain;
        *by_owner.entry(owner).or_default() += gain;
    }
    put("user_surplus", surplus);
    put("welfare", surplus + revenue);
    let load: Vec<f64> = sites.iter().map(|s| if s.pes > 0.0 { over(s.busy) / s.pes } else { 0.0 }).collect();
    put("gini_load", gini(&load));
    put("gini_surplus", gini(&by_owner.into_values().collect::<Vec<_>>()));
    let violations = jobs
        .iter()
        .filter(|(_, j)| {
            j.start.is_some()
                && j.deadline.is_some_and(|d| j.outcome != JobOutcome::Completed || j.end.is_some_and(|e| e > d))
        })
        .count();
    put("sla_violations", violations as f64);
    let mut ranked: Vec<&Site<'_>> = sites.iter().collect();
    ranked.sort_by(|x, y| x.price_at(from).total_cmp(&y.price_at(from)));
    let busy = |s: &&Site<'_>| over(s.busy);
    let total: f64 = ranked.iter().map(busy).sum();
    let cheapest: f64 = ranked.iter().take(k).map(busy).sum();
    put("cheapest_share", if total > 0.0 { cheapest / total } else { f64::NAN });
    put("refused_cheapest", ranked.iter().take(k).map(|s| s.refused).sum());
}

/// `periods.csv`'s rows: one per market and period.
pub fn periods_csv(header: &[&str], markets: &[(String, MarketRecord)]) -> Csv {
    let mut csv = Csv::new(header);
    for (name, m) in markets {
        for p in &m.periods {
            csv.row(&[
                Field::Str(name),
                Field::UInt(u64::from(p.period)),
                Field::Num(p.start),
                Field::Num(p.end),
                Field::UInt(u64::from(p.trades)),
                Field::Num(p.efficiency),
                Field::Num(p.mean_price),
                Field::Num(p.alpha),
                Field::Num(p.volatility),
                Field::Num(p.buyer_surplus),
                Field::Num(p.seller_surplus),
                Field::UInt(u64::from(p.extramarginal)),
                Field::Num(m.equilibrium.price),
            ]);
        }
    }
    csv
}

/// `trades.csv`'s rows: one per unit traded.
pub fn trades_csv(header: &[&str], markets: &[(String, MarketRecord)]) -> Csv {
    let mut csv = Csv::new(header);
    for (name, m) in markets {
        for t in &m.trades {
            csv.row(&[
                Field::Str(name),
                Field::UInt(u64::from(t.period)),
                Field::Num(t.t),
                Field::Num(t.price),
                Field::UInt(u64::from(t.buyer)),
                Field::UInt(u64::from(t.seller)),
                Field::Num(t.value),
                Field::Num(t.cost),
            ]);
        }
    }
    csv
}

/// `prices.svg`: each market's transaction prices over time, its equilibrium band drawn.
pub fn prices_chart(title: &str, markets: &[(String, MarketRecord)], dir: &Path) -> std::io::Result<()> {
    let end = markets.iter().filter_map(|(_, m)| m.periods.last().map(|p| p.end)).fold(0.0, f64::max);
    let (scale, unit) = plot::time_unit(end);
    let series: Vec<TimeSeries> = markets
        .iter()
        .map(|(name, m)| TimeSeries {
            label: format!("{name}: transaction prices"),
            points: m.trades.iter().map(|t| (t.t / scale, t.price)).collect(),
        })
        .collect();
    let bands: Vec<Band> = markets
        .iter()
        .filter(|(_, m)| m.equilibrium.quantity > 0)
        .map(|(name, m)| {
            let e = &m.equilibrium;
            let label = format!("{name}: equilibrium {} to {}", short(e.low), short(e.high));
            Band { label, lo: e.low, hi: e.high.min(1e300), value: Some(e.price), at: None }
        })
        .collect();
    let x_label = format!("time [{unit}]");
    let chart =
        Chart { y_bounds: (0.0, f64::INFINITY), bands: &bands, ..Chart::new(title, &x_label, "price per unit [G$]") };
    crate::output::write_atomic(&dir.join("prices.svg"), plot::time_chart(&chart, &series).as_bytes())
}

fn short(x: f64) -> String {
    agents::registry::limits::short(x)
}

#[cfg(test)]
mod tests {
    use agents::sim::SimTime;

    use super::*;

    fn series(points: &[(f64, f64)]) -> Series {
        let mut s = Series::default();
        for &(t, v) in points {
            s.set(SimTime::new(t).unwrap(), v);
        }
        s
    }

    #[test]
    fn test_contention_counts_requests_per_free_pe_at_the_cheapest() {
        // Two 10-PE sites over (0, 100]: "cheap" (price 1) receives 12 requests and is half busy, so 5 PEs free;
        // "dear" (price 2) receives 3 and is idle.
        let (busy_cheap, busy_dear) = (series(&[(0.0, 5.0)]), series(&[(0.0, 0.0)]));
        let (price_cheap, price_dear) = (series(&[(0.0, 1.0)]), series(&[(0.0, 2.0)]));
        let (req_cheap, req_dear) = (series(&[(10.0, 4.0), (50.0, 12.0)]), series(&[(20.0, 3.0)]));
        let site = |busy, price, requests| Site {
            pes: 10.0,
            busy,
            price: Some(price),
            requests: Some(requests),
            refused: 2.0,
        };
        let sites = [site(&busy_dear, &price_dear, &req_dear), site(&busy_cheap, &price_cheap, &req_cheap)];
        assert_eq!(contention(&sites, 1, 0.0, 100.0), 12.0 / 5.0);
        // Both: 15 requests over 15 free PEs.
        assert_eq!(contention(&sites, 2, 0.0, 100.0), 1.0);
        // Only the requests of the interval count.
        assert_eq!(contention(&sites, 1, 40.0, 100.0), 8.0 / 5.0);
        let mut out = BTreeMap::new();
        market_metrics(&sites, 1, 50.0, (0.0, 100.0), &[], 7.0, &mut out);
        // Intervals (0, 50] and (50, 100]: 12 / 5 and 0.
        assert_eq!(out["market.contention"], 1.2);
        assert_eq!(out["market.contention_peak"], 2.4);
        assert_eq!(out["market.price"], 1.5);
        assert_eq!(out["market.cheapest_share"], 1.0);
        assert_eq!(out["market.revenue"], 7.0);
        assert_eq!(out["market.refused_cheapest"], 2.0);
        assert_eq!(out["market.price_volatility"], 0.0, "fixed prices");
    }

    #[test]
    fn the_market_window_measures_prices_loads_and_the_cheapest_over_its_span_only() {
        // "a" idles at price 1 until 50 s, then is full at price 3; "b" is half busy at price 2 throughout.
        let (busy_a, busy_b) = (series(&[(0.0, 0.0), (50.0, 10.0)]), series(&[(0.0, 5.0)]));
        let (price_a, price_b) = (series(&[(0.0, 1.0), (50.0, 3.0)]), series(&[(0.0, 2.0)]));
        let site = |busy, price| Site { pes: 10.0, busy, price: Some(price), requests: None, refused: 0.0 };
        let sites = [site(&busy_a, &price_a), site(&busy_b, &price_b)];
        let measure = |window| {
            let mut out = BTreeMap::new();
            market_metrics(&sites, 1, 25.0, window, &[], 0.0, &mut out);
            out
        };
        let (whole, late) = (measure((0.0, 100.0)), measure((50.0, 100.0)));
        assert_eq!((whole["market.price"], late["market.price"]), (2.0, 2.5));
        assert_eq!((whole["market.gini_load"], late["market.gini_load"]), (0.0, gini(&[50.0, 25.0])));
        // The cheapest at the window's start: "a" at 0 s, "b" at 50 s.
        assert_eq!((whole["market.cheapest_share"], late["market.cheapest_share"]), (0.5, 250.0 / 750.0));
        // From 50 s on, no price moves.
        assert!(whole["market.price_volatility"] > 0.0 && late["market.price_volatility"] == 0.0);
    }
}
