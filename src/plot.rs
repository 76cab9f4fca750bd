//! SVG charts: line charts of a metric over a numeric parameter sweep and grouped bar charts over named
//! configurations (e.g. the policies NOP, MOV, MLIP, MOML), both with 95% confidence error bars and the targets on
//! the metric drawn as labelled bands, and step charts of quantities sampled over a run (a provider's utilisation,
//! its queue length).
//!
//! Hand-written rather than drawn with the `plotters` crate (SVG backend only): measured, it would replace the tick,
//! axis, marker and text code here (nice numbers, escaping: about a quarter of these lines) for three more crates
//! (under 2 s of a clean build), while grouped bars, clipped whiskers, target bands, legends wrapped beside the plot,
//! gaps at NaN and M4 reduction would still be written against its primitives. Writing the few elements needed
//! directly keeps the output small and byte-identical for identical input: every coordinate is printed with two
//! decimals and every tick label with a precision derived from the tick step. Text uses the generic `sans-serif` family, so producing a chart needs
//! no fonts; text widths are estimated from character counts to reserve room, and long titles and legend labels are
//! wrapped to it.
//!
//! Charts never panic: NaN or infinite points are skipped (a line breaks at them), a NaN or non-positive
//! half-width draws no error bar, and empty input gives empty axes.

use std::fmt::{self, Write};

/// One line of a [`line_chart`]: a label for the legend and the points in drawing order.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// `(x, mean, ci95 half-width)`; the half-width is NaN when there is no interval to draw.
    pub points: Vec<(f64, f64, f64)>,
}

/// One group member of a [`bar_chart`]: a label for the legend and one bar per category.
#[derive(Debug, Clone, PartialEq)]
pub struct BarSeries {
    /// Legend text.
    pub label: String,
    /// `(mean, ci95 half-width)` for the category of the same index; missing or NaN means draw no bar, and entries
    /// beyond the last category are ignored.
    pub values: Vec<(f64, f64)>,
}

/// One line of a [`time_chart`]: a named quantity sampled over time, drawn as a step function (each sample's value
/// holds until the next sample, as the simulated state does).
#[derive(Debug, Clone, PartialEq)]
pub struct TimeSeries {
    /// Legend text.
    pub label: String,
    /// `(t, value)` in time order.
    pub points: Vec<(f64, f64)>,
}

/// A target drawn on a chart: a shaded band from `lo` to `hi` with a dashed line at `value` (or at both edges when
/// there is none), and its label beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    /// Text drawn at the band ("target 2 ± 0.06").
    pub label: String,
    /// Lower edge (may be -∞: open).
    pub lo: f64,
    /// Upper edge (may be +∞: open).
    pub hi: f64,
    /// The claimed value, when the target is a value with a tolerance.
    pub value: Option<f64>,
    /// Where it applies: an x value of a line chart, a category's index in a bar chart; `None`: everywhere.
    pub at: Option<f64>,
}

/// What every chart has: its text, the range the plotted quantity can take, and the targets on it.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart<'a> {
    /// Title, wrapped when it is too long for one line.
    pub title: &'a str,
    /// Horizontal axis label, with its unit.
    pub x_label: &'a str,
    /// Vertical axis label, with its unit.
    pub y_label: &'a str,
    /// The values the quantity can take: error bars are clipped to them (a time or a count is never below 0), and a
    /// [`time_chart`]'s axis shows their finite ends.
    pub y_bounds: (f64, f64),
    /// Targets to draw.
    pub bands: &'a [Band],
}

impl<'a> Chart<'a> {
    /// A chart of an unbounded quantity with no targets.
    pub fn new(title: &'a str, x_label: &'a str, y_label: &'a str) -> Chart<'a> {
        Chart { title, x_label, y_label, y_bounds: (f64::NEG_INFINITY, f64::INFINITY), bands: &[] }
    }
}

/// A standalone SVG document plotting each series as a polyline with markers and error bars, over "nice" numeric
/// axes, with title, axis labels, legend and target bands.
pub fn line_chart(chart: &Chart, series: &[Series]) -> String {
    let mut svg = String::new();
    // Writing into a String cannot fail.
    let _ = write_line_chart(&mut svg, chart, series);
    svg
}

/// A standalone SVG document with one group of bars per category (one bar per series, from zero to the mean) and
/// error bars, for sweeps over non-numeric values.
pub fn bar_chart(chart: &Chart, categories: &[String], series: &[BarSeries]) -> String {
    let mut svg = String::new();
    // Writing into a String cannot fail.
    let _ = write_bar_chart(&mut svg, chart, categories, series);
    svg
}

/// A standalone SVG document plotting each series as a step line over time, without markers; a series with more
/// points than the plot has pixels is reduced per pixel column to its first, lowest, highest and last point (M4:
/// Jugel et al. 2014, "M4: A Visualization-Oriented Time Series Data Aggregation"), which draws the same picture.
pub fn time_chart(chart: &Chart, series: &[TimeSeries]) -> String {
    let mut svg = String::new();
    // Writing into a String cannot fail.
    let _ = write_time_chart(&mut svg, chart, series);
    svg
}

/// A standalone SVG document plotting each series over time as its mean, a line through `(t, mean)`, inside a shaded
/// band from `mean − ci95` to `mean + ci95` (clipped to the quantity's bounds): a quantity sampled over time, averaged
/// across replications.
pub fn band_chart(chart: &Chart, series: &[Series]) -> String {
    let mut svg = String::new();
    // Writing into a String cannot fail.
    let _ = write_band_chart(&mut svg, chart, series);
    svg
}

/// The unit to show a run of `end` seconds in: `(seconds per unit, symbol)`, days or hours once there are at least
/// two of them, so that the time axis reads "4 d" rather than "345600".
pub fn time_unit(end: f64) -> (f64, &'static str) {
    const DAY: f64 = 86_400.0;
    const HOUR: f64 = 3_600.0;
    if end >= 2.0 * DAY {
        (DAY, "d")
    } else if end >= 2.0 * HOUR {
        (HOUR, "h")
    } else {
        (1.0, "s")
    }
}

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 440.0;
/// Rough advance of one 12px sans-serif character, used only to reserve room for text.
const CHAR_WIDTH: f64 = 7.0;
/// Rough advance of one 16px bold title character.
const TITLE_CHAR_WIDTH: f64 = 9.5;
const TITLE_LINE: f64 = 20.0;
const TEXT_LINE: f64 = 14.0;
const LEGEND_GAP: f64 = 4.0;
/// Rough advance of one 10px character of a target's label, and its line height.
const BAND_CHAR_WIDTH: f64 = 5.8;
const BAND_LINE: f64 = 12.0;
const LEGEND_MAX_WIDTH: f64 = 240.0;
/// Room left of a legend label for its key.
const LEGEND_KEY: f64 = 32.0;
const TOP: f64 = 44.0;
const BOTTOM_MARGIN: f64 = 52.0;
const TARGET_TICKS: f64 = 6.0;
/// Okabe-Ito colours (without yellow, too faint on white): distinguishable with common colour-vision deficiencies.
const COLORS: [&str; 7] = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"];
/// Dash patterns of the time chart's lines, cycling with the series, so series stay apart in greyscale too.
const DASHES: [&str; 4] = ["", "7 3", "2 3", "9 3 2 3"];
const MARKERS: usize = 4;
const INK: &str = "#333";
const GRID: &str = "#e0e0e0";
const TARGET_INK: &str = "#555";

fn color(i: usize) -> &'static str {
    COLORS[i % COLORS.len()]
}

/// The finite range of some values; empty (min > max) when there are none.
#[derive(Debug, Clone, Copy)]
struct Extent {
    min: f64,
    max: f64,
}

impl Extent {
    fn over(values: impl Iterator<Item = f64>) -> Extent {
        let init = Extent { min: f64::INFINITY, max: f64::NEG_INFINITY };
        values.filter(|v| v.is_finite()).fold(init, |e, v| Extent { min: e.min.min(v), max: e.max.max(v) })
    }

    fn is_empty(self) -> bool {
        self.min > self.max
    }

    /// This extent grown to show the targets too, but not a bound more than ten times the data's span away from it
    /// (an open-ended claim such as "≥ 0" written as a huge bound): that band is drawn clipped at the axis.
    fn with_bands(self, bands: &[Band]) -> Extent {
        let ends = bands.iter().flat_map(|b| [b.lo, b.hi].into_iter().chain(b.value));
        if self.is_empty() {
            return Extent::over(ends);
        }
        let span = (self.max - self.min).max(self.max.abs().max(self.min.abs()) * 0.1);
        let near = |v: &f64| self.min - 10.0 * span <= *v && *v <= self.max + 10.0 * span;
        Extent::over([self.min, self.max].into_iter().chain(ends.filter(near)))
    }
}

/// An error bar clipped to the values the quantity can take: its ends, and whether each was clipped (a clipped
/// end has no cap, which shows that the interval goes on beyond the possible values).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Whisker {
    lo: f64,
    hi: f64,
    lo_clipped: bool,
    hi_clipped: bool,
}

impl Whisker {
    /// The bar of `mean ± ci` within `bounds`, if the half-width is usable.
    fn new(mean: f64, ci: f64, (min, max): (f64, f64)) -> Option<Whisker> {
        if !(mean.is_finite() && ci.is_finite() && ci > 0.0) {
            return None;
        }
        let (lo, hi) = (mean - ci, mean + ci);
        Some(Whisker { lo: lo.max(min), hi: hi.min(max), lo_clipped: lo < min, hi_clipped: hi > max })
    }
}

/// The mean and, when the half-width is usable, the (clipped) ends of its error bar: what the value axis must show.
fn bar_ends(mean: f64, ci: f64, bounds: (f64, f64)) -> Vec<f64> {
    // The mean is listed too because an end may overflow to infinity and be left out of the axis range.
    match Whisker::new(mean, ci, bounds) {
        Some(w) => vec![mean, w.lo, w.hi],
        None => vec![mean],
    }
}

/// An axis from `lo` to `hi` with tick positions and their label format.
#[derive(Debug, Clone, PartialEq)]
struct Scale {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
    /// Decimals for tick labels; `None` for scientific notation (huge or tiny values).
    decimals: Option<usize>,
    /// Logarithmic: equal ratios take equal lengths.
    log: bool,
}

impl Scale {
    /// "Nice numbers" (Heckbert): a step of 1, 2 or 5 times a power of ten giving about [`TARGET_TICKS`] ticks, with
    /// the bounds rounded out to whole steps.
    fn new(extent: Extent) -> Scale {
        let (min, max) = match extent {
            Extent { min, max } if min < max => (min, max),
            Extent { min, .. } if min.is_finite() => ((min - pad(min)).max(-f64::MAX), (min + pad(min)).min(f64::MAX)),
            _ => (0.0, 1.0),
        };
        let step = nice((max - min) / (TARGET_TICKS - 1.0));
        let (lo, hi) = ((min / step).floor() * step, (max / step).ceil() * step);
        let count = ((hi - lo) / step).round();
        // Fails only near the limits of f64 (overflowing range, subnormal step); then label just the ends.
        if !(lo.is_finite() && hi.is_finite() && step > 0.0 && (1.0..=20.0).contains(&count)) {
            return Scale { lo: min, hi: max, ticks: vec![min, max], decimals: None, log: false };
        }
        let ticks = (0..=count as usize).map(|i| lo + i as f64 * step).collect();
        let magnitude = lo.abs().max(hi.abs());
        // The 1e-9 keeps log10(0.01) = -1.9999999999999996 from asking for a third decimal.
        let decimals = (step >= 1e-4 && magnitude < 1e7).then(|| (-step.log10() - 1e-9).ceil().max(0.0) as usize);
        Scale { lo, hi, ticks, decimals, log: false }
    }

    /// A logarithmic axis ticked at `values`, when they are a geometric sweep (10, 100, 1,000, 10,000; 0.1, 0.01 …):
    /// at least three distinct positive values whose successive ratios are equal, within 1%, spanning two decades or
    /// more. On a linear axis such a sweep crowds all but its largest values into one corner.
    fn geometric(values: &[f64]) -> Option<Scale> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        v.sort_by(f64::total_cmp);
        v.dedup();
        if v.len() < 3 || v[0] <= 0.0 {
            return None;
        }
        let ratio = v[1] / v[0];
        let even = v.windows(2).all(|w| ((w[1] / w[0]) / ratio - 1.0).abs() < 0.01);
        if !(even && ratio > 1.0 && v[v.len() - 1] / v[0] >= 100.0) {
            return None;
        }
        // Half a step of margin at each end, as a linear axis leaves room around its outer points.
        let margin = ratio.sqrt();
        let (lo, hi) = (v[0] / margin, v[v.len() - 1] * margin);
        Some(Scale { lo, hi, ticks: v, decimals: None, log: true })
    }

    /// A value axis for `extent` that does not pad a lone value past the values the quantity can take: a count that
    /// is always 0 gets the axis 0 to 1, not -1 to 1.
    fn bounded(extent: Extent, (min, max): (f64, f64)) -> Scale {
        let v = extent.min;
        if v == extent.max && v.is_finite() {
            let (lo, hi) = ((v - pad(v)).max(min), (v + pad(v)).min(max));
            if lo < hi {
                return Scale::new(Extent { min: lo, max: hi });
            }
        }
        Scale::new(extent)
    }

    /// Maps `v` linearly (or its logarithm, on a log axis) so that `lo` goes to `from` and `hi` to `to`.
    fn map(&self, v: f64, from: f64, to: f64) -> f64 {
        if self.log {
            return from + (v / self.lo).ln() / (self.hi / self.lo).ln() * (to - from);
        }
        let span = self.hi - self.lo;
        let t = if span.is_finite() {
            (v - self.lo) / span
        } else {
            // Bounds near ±f64::MAX: halving them (exact at that size) keeps every difference finite.
            (v * 0.5 - self.lo * 0.5) / (self.hi * 0.5 - self.lo * 0.5)
        };
        from + t * (to - from)
    }

    fn label(&self, v: f64) -> String {
        if self.log {
            // A swept value as written: the shortest decimal that reads back as it.
            return format!("{v}");
        }
        let text = match self.decimals {
            Some(d) => format!("{v:.d$}"),
            None => format!("{v:.2e}"),
        };
        // Rounding can leave "-0.0"; a zero tick reads better unsigned.
        match text.strip_prefix('-') {
            Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_owned(),
            _ => text,
        }
    }
}

/// The margin around a lone value `v` on an axis: half of it, or 1 for zero or a value too close to it for half of
/// it to be a usable margin.
fn pad(v: f64) -> f64 {
    if v.abs() < 1e-300 { 1.0 } else { v.abs() * 0.5 }
}

/// The value of the form 1, 2, 5 or 10 times a power of ten nearest to `x`.
fn nice(x: f64) -> f64 {
    let power = 10f64.powf(x.log10().floor());
    let f = x / power;
    let nf = if f < 1.5 {
        1.0
    } else if f < 3.0 {
        2.0
    } else if f < 7.0 {
        5.0
    } else {
        10.0
    };
    nf * power
}

/// `text` in lines of at most `max` characters, broken after a space, comma, `=`, `.`, `/` or `-` where it can be,
/// else within a word.
fn wrap(text: &str, max: usize) -> Vec<String> {
    let max = max.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    // Pieces that end at a break opportunity.
    let mut pieces = text.split_inclusive([' ', ',', '=', '.', '/', '-']).peekable();
    while let Some(piece) = pieces.next() {
        let mut piece = piece;
        if line.chars().count() + piece.trim_end().chars().count() > max && !line.is_empty() {
            lines.push(line.trim_end().to_owned());
            line.clear();
            piece = piece.trim_start();
        }
        // A piece longer than a whole line is cut.
        while piece.chars().count() > max {
            let cut = piece.char_indices().nth(max).map_or(piece.len(), |(i, _)| i);
            lines.push(piece[..cut].to_owned());
            piece = &piece[cut..];
        }
        line.push_str(piece);
        if pieces.peek().is_none() && !line.trim().is_empty() {
            lines.push(line.trim_end().to_owned());
        }
    }
    lines
}

/// Width of `line` in 12px characters, as estimated for layout.
fn text_width(line: &str, char_width: f64) -> f64 {
    line.chars().count() as f64 * char_width
}

/// Pixel bounds of the plotting area and the canvas, sized around the title, the tick labels and the legend.
#[derive(Debug, Clone)]
struct Frame {
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    /// Canvas height: taller than [`HEIGHT`] when the legend needs it.
    height: f64,
    /// The title's lines.
    title: Vec<String>,
    /// Each legend entry's lines.
    legend: Vec<Vec<String>>,
}

impl Frame {
    fn new(title: &str, y: &Scale, legend: &[&str]) -> Frame {
        let title = wrap(title, ((WIDTH - 32.0) / TITLE_CHAR_WIDTH) as usize);
        let legend: Vec<Vec<String>> =
            legend.iter().map(|l| wrap(l, ((LEGEND_MAX_WIDTH - LEGEND_KEY) / CHAR_WIDTH) as usize)).collect();
        let widest_tick = y.ticks.iter().map(|&t| text_width(&y.label(t), CHAR_WIDTH)).fold(0.0, f64::max);
        let widest_label = legend.iter().flatten().map(|l| text_width(l, CHAR_WIDTH)).reduce(f64::max);
        let legend_width = widest_label.map_or(0.0, |w| LEGEND_KEY + w + 16.0);
        let legend_height: f64 = legend.iter().map(|l| l.len().max(1) as f64 * TEXT_LINE + LEGEND_GAP).sum();
        let top = TOP + title.len().saturating_sub(1) as f64 * TITLE_LINE;
        // The plot is as tall as the legend beside it, at least.
        let bottom = (top + HEIGHT - TOP - BOTTOM_MARGIN).max(top + legend_height + 8.0);
        Frame {
            left: 34.0 + widest_tick,
            right: WIDTH - 16.0 - legend_width,
            top,
            bottom,
            height: (bottom + BOTTOM_MARGIN).ceil(),
            title,
            legend,
        }
    }

    fn y(&self, scale: &Scale, v: f64) -> f64 {
        scale.map(v, self.bottom, self.top)
    }
}

/// Text with the five XML special characters escaped.
struct Escaped<'a>(&'a str);

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.0.chars() {
            match c {
                '&' => f.write_str("&amp;")?,
                '<' => f.write_str("&lt;")?,
                '>' => f.write_str("&gt;")?,
                '"' => f.write_str("&quot;")?,
                '\'' => f.write_str("&apos;")?,
                _ => f.write_char(c)?,
            }
        }
        Ok(())
    }
}

fn write_line_chart(svg: &mut String, chart: &Chart, series: &[Series]) -> fmt::Result {
    let finite = |p: &&(f64, f64, f64)| p.0.is_finite() && p.1.is_finite();
    let all = || series.iter().flat_map(|s| s.points.iter().filter(finite));
    let bounds = chart.y_bounds;
    let xs: Vec<f64> = all().map(|p| p.0).collect();
    let x = Scale::geometric(&xs).unwrap_or_else(|| Scale::new(Extent::over(xs.into_iter())));
    let logged = format!("{} (log scale)", chart.x_label);
    let chart = &Chart { x_label: if x.log { &logged } else { chart.x_label }, ..chart.clone() };
    let y = Scale::bounded(
        Extent::over(all().flat_map(|&(_, m, ci)| bar_ends(m, ci, bounds))).with_bands(chart.bands),
        bounds,
    );
    let labels: Vec<&str> = series.iter().map(|s| s.label.as_str()).collect();
    let f = Frame::new(chart.title, &y, &labels);
    open(svg, &f, chart, &y)?;
    x_ticks(svg, &f, &x)?;
    // A target at one x covers a little on each side of it, less than half the gap to the next point.
    let mut distinct: Vec<f64> = all().map(|p| x.map(p.0, f.left, f.right)).collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    let gap = distinct.windows(2).map(|w| w[1] - w[0]).fold(f64::INFINITY, f64::min);
    let half = (0.4 * gap).min(24.0);
    let mut labels = String::new();
    bands(svg, &mut labels, &f, chart, &y, |at| match at {
        Some(v) => {
            let px = x.map(v, f.left, f.right);
            ((px - half).max(f.left), (px + half).min(f.right))
        }
        None => (f.left, f.right),
    })?;
    for (i, s) in series.iter().enumerate() {
        writeln!(svg, r#"<g stroke="{0}" fill="{0}">"#, color(i))?;
        let at = |&(px, m, _): &(f64, f64, f64)| (x.map(px, f.left, f.right), f.y(&y, m));
        // Runs of plottable points: the line breaks at a missing one rather than bridge it.
        let runs = s.points.split(|p| !finite(&p));
        for p in runs.clone().flatten() {
            error_bar(svg, &f, &y, at(p).0, p.1, p.2, bounds)?;
        }
        for run in runs.clone().filter(|run| run.len() > 1) {
            polyline(svg, run.iter().map(at), "")?;
        }
        for p in runs.flatten() {
            marker(svg, i, at(p))?;
        }
        svg.push_str("</g>\n");
    }
    svg.push_str(&labels);
    legend(svg, &f, |svg, i, (lx, ly)| {
        writeln!(svg, r#"<g stroke="{0}" fill="{0}">"#, color(i))?;
        writeln!(svg, r#"<path d="M{lx:.2} {ly:.2}h24" stroke-width="2"/>"#)?;
        marker(svg, i, (lx + 12.0, ly))?;
        svg.push_str("</g>\n");
        Ok(())
    })?;
    svg.push_str("</svg>\n");
    Ok(())
}

fn write_bar_chart(svg: &mut String, chart: &Chart, categories: &[String], series: &[BarSeries]) -> fmt::Result {
    let values = |s: &BarSeries| s.values.iter().take(categories.len()).copied().collect::<Vec<_>>();
    let values: Vec<Vec<(f64, f64)>> = series.iter().map(values).collect();
    let bounds = chart.y_bounds;
    // Bars grow from zero, so zero must be on the axis.
    let ends = values.iter().flatten().filter(|v| v.0.is_finite()).flat_map(|&(m, ci)| bar_ends(m, ci, bounds));
    let y = Scale::bounded(Extent::over(ends.chain([0.0])).with_bands(chart.bands), bounds);
    let labels: Vec<&str> = series.iter().map(|s| s.label.as_str()).collect();
    let f = Frame::new(chart.title, &y, &labels);
    open(svg, &f, chart, &y)?;
    let band = (f.right - f.left) / categories.len().max(1) as f64;
    // Each group fills 80% of its band, leaving a gap between categories.
    let bar = band * 0.8 / series.len().max(1) as f64;
    let per_line = ((band / CHAR_WIDTH) as usize).max(4);
    for (k, category) in categories.iter().enumerate() {
        let cx = f.left + (k as f64 + 0.5) * band;
        for (j, line) in wrap(category, per_line).iter().take(2).enumerate() {
            text(svg, (cx, f.bottom + 18.0 + j as f64 * TEXT_LINE), r#"text-anchor="middle""#, Escaped(line))?;
        }
    }
    let mut labels = String::new();
    bands(svg, &mut labels, &f, chart, &y, |at| match at {
        Some(k) if k >= 0.0 && (k as usize) < categories.len() => {
            let x0 = f.left + k.floor() * band + band * 0.1;
            (x0, x0 + band * 0.8)
        }
        _ => (f.left, f.right),
    })?;
    let zero = f.y(&y, 0.0);
    for (i, values) in values.iter().enumerate() {
        writeln!(svg, r#"<g fill="{}" stroke="{INK}">"#, color(i))?;
        for (k, &(mean, ci)) in values.iter().enumerate().filter(|(_, v)| v.0.is_finite()) {
            let bx = f.left + k as f64 * band + band * 0.1 + i as f64 * bar;
            let top = f.y(&y, mean);
            let (y0, h) = (top.min(zero), (top - zero).abs());
            writeln!(svg, r#"<rect x="{bx:.2}" y="{y0:.2}" width="{bar:.2}" height="{h:.2}" stroke="none"/>"#)?;
            error_bar(svg, &f, &y, bx + bar / 2.0, mean, ci, bounds)?;
        }
        svg.push_str("</g>\n");
    }
    // The zero line on top of the bars shows where positive and negative values part.
    line(svg, (f.left, zero), (f.right, zero), INK)?;
    svg.push_str(&labels);
    legend(svg, &f, |svg, i, (lx, ly)| {
        writeln!(svg, r#"<rect x="{:.2}" y="{:.2}" width="12" height="12" fill="{}"/>"#, lx + 6.0, ly - 6.0, color(i))
    })?;
    svg.push_str("</svg>\n");
    Ok(())
}

fn write_time_chart(svg: &mut String, chart: &Chart, series: &[TimeSeries]) -> fmt::Result {
    let finite = |p: &&(f64, f64)| p.0.is_finite() && p.1.is_finite();
    let all = || series.iter().flat_map(|s| s.points.iter().filter(finite));
    let (min, max) = chart.y_bounds;
    // Time from 0, and the whole range of a bounded quantity (utilisation from 0 to 1), so charts compare at a glance.
    let x = Scale::new(Extent::over(all().map(|p| p.0).chain([0.0])));
    let y = Scale::bounded(Extent::over(all().map(|p| p.1).chain([min, max])).with_bands(chart.bands), (min, max));
    let labels: Vec<&str> = series.iter().map(|s| s.label.as_str()).collect();
    let f = Frame::new(chart.title, &y, &labels);
    open(svg, &f, chart, &y)?;
    x_ticks(svg, &f, &x)?;
    let mut labels = String::new();
    bands(svg, &mut labels, &f, chart, &y, |at| match at {
        Some(v) => {
            let px = x.map(v, f.left, f.right);
            ((px - 12.0).max(f.left), (px + 12.0).min(f.right))
        }
        None => (f.left, f.right),
    })?;
    for (i, s) in series.iter().enumerate() {
        for run in s.points.split(|p| !finite(&p)).filter(|run| !run.is_empty()) {
            // Each value holds until the next sample: a horizontal then a vertical segment per sample.
            let mut steps = Vec::with_capacity(2 * run.len());
            for (j, &(t, v)) in run.iter().enumerate() {
                let py = f.y(&y, v);
                let px = x.map(t, f.left, f.right);
                if j > 0 {
                    steps.push((px, steps.last().map_or(py, |&(_, prev)| prev)));
                }
                steps.push((px, py));
            }
            let steps = m4(&steps);
            if steps.len() == 1 {
                // A lone sample: a dot, or it would not show.
                let (px, py) = steps[0];
                writeln!(svg, r#"<circle cx="{px:.2}" cy="{py:.2}" r="2" fill="{}"/>"#, color(i))?;
            } else {
                polyline(svg, steps.into_iter(), &line_style(i))?;
            }
        }
    }
    svg.push_str(&labels);
    legend(svg, &f, |svg, i, (lx, ly)| {
        writeln!(svg, r#"<path d="M{lx:.2} {ly:.2}h24" fill="none"{}/>"#, line_style(i))
    })?;
    svg.push_str("</svg>\n");
    Ok(())
}

fn write_band_chart(svg: &mut String, chart: &Chart, series: &[Series]) -> fmt::Result {
    let finite = |p: &&(f64, f64, f64)| p.0.is_finite() && p.1.is_finite();
    let (min, max) = chart.y_bounds;
    // A NaN half-width (a single replication) draws no band.
    let edges = |&(t, mean, ci): &(f64, f64, f64)| {
        let ci = if ci.is_finite() { ci.max(0.0) } else { 0.0 };
        (t, (mean - ci).clamp(min, max), (mean + ci).clamp(min, max))
    };
    let all = || series.iter().flat_map(|s| s.points.iter().filter(finite));
    let x = Scale::new(Extent::over(all().map(|p| p.0).chain([0.0])));
    let y_values = all().map(edges).flat_map(|(_, lo, hi)| [lo, hi]).chain([min, max]);
    let y = Scale::bounded(Extent::over(y_values).with_bands(chart.bands), (min, max));
    let labels: Vec<&str> = series.iter().map(|s| s.label.as_str()).collect();
    let f = Frame::new(chart.title, &y, &labels);
    open(svg, &f, chart, &y)?;
    x_ticks(svg, &f, &x)?;
    for (i, s) in series.iter().enumerate() {
        for run in s.points.split(|p| !finite(&p)).filter(|run| !run.is_empty()) {
            // The band: along its upper edge, then back along its lower edge.
            let upper = run.iter().map(edges).map(|(t, _, hi)| (t, hi));
            let lower = run.iter().rev().map(edges).map(|(t, lo, _)| (t, lo));
            write!(svg, r#"<path d=""#)?;
            for (j, (t, v)) in upper.chain(lower).enumerate() {
                let command = if j == 0 { 'M' } else { 'L' };
                write!(svg, "{command}{:.2} {:.2}", x.map(t, f.left, f.right), f.y(&y, v))?;
            }
            writeln!(svg, r#"Z" fill="{}" fill-opacity="0.2" stroke="none"/>"#, color(i))?;
            let mean = run.iter().map(|&(t, m, _)| (x.map(t, f.left, f.right), f.y(&y, m)));
            polyline(svg, mean, &line_style(i))?;
        }
    }
    legend(svg, &f, |svg, i, (lx, ly)| {
        writeln!(svg, r#"<path d="M{lx:.2} {ly:.2}h24" fill="none"{}/>"#, line_style(i))
    })?;
    svg.push_str("</svg>\n");
    Ok(())
}

/// Stroke attributes of the time chart's line `i`.
fn line_style(i: usize) -> String {
    let dash = DASHES[i % DASHES.len()];
    let dash = if dash.is_empty() { String::new() } else { format!(r#" stroke-dasharray="{dash}""#) };
    format!(r#" stroke="{}" stroke-width="1.5"{dash}"#, color(i))
}

/// M4 reduction of a polyline in pixels: per pixel column, the first, lowest, highest and last vertex in drawing
/// order, which rasterise to the same picture as all of them. Lines with few vertices are returned as they are.
fn m4(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    if points.len() <= 4 * WIDTH as usize {
        return points.to_vec();
    }
    let mut out = Vec::new();
    for column in points.chunk_by(|a, b| a.0.floor() == b.0.floor()) {
        let by_y = |a: &(usize, &(f64, f64)), b: &(usize, &(f64, f64))| a.1.1.total_cmp(&b.1.1);
        let top = column.iter().enumerate().min_by(by_y).map_or(0, |m| m.0);
        let bottom = column.iter().enumerate().max_by(by_y).map_or(0, |m| m.0);
        let mut keep = [0, top, bottom, column.len() - 1];
        keep.sort_unstable();
        let mut last = None;
        for k in keep {
            if last != Some(k) {
                out.push(column[k]);
                last = Some(k);
            }
        }
    }
    out
}

/// Document header, background, title, y axis with grid and label, x axis label, and the plot-area outline.
fn open(svg: &mut String, f: &Frame, chart: &Chart, y: &Scale) -> fmt::Result {
    let height = f.height;
    writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12">"#
    )?;
    writeln!(svg, r#"<rect width="{WIDTH}" height="{height}" fill="white"/>"#)?;
    for (i, line) in f.title.iter().enumerate() {
        let at = (WIDTH / 2.0, 26.0 + i as f64 * TITLE_LINE);
        text(svg, at, r#"text-anchor="middle" font-size="16" font-weight="bold""#, Escaped(line))?;
    }
    for &t in &y.ticks {
        let py = f.y(y, t);
        line(svg, (f.left, py), (f.right, py), GRID)?;
        line(svg, (f.left - 5.0, py), (f.left, py), INK)?;
        text(svg, (f.left - 8.0, py), r#"dy="0.35em" text-anchor="end""#, y.label(t))?;
    }
    let mid = (f.top + f.bottom) / 2.0;
    writeln!(
        svg,
        r#"<text transform="translate(16,{mid:.2}) rotate(-90)" dy="0.35em" text-anchor="middle"{}>{}</text>"#,
        fit(chart.y_label, f.bottom - f.top),
        Escaped(chart.y_label)
    )?;
    if !chart.x_label.is_empty() {
        let at = ((f.left + f.right) / 2.0, f.height - 12.0);
        let attributes = format!(r#"text-anchor="middle"{}"#, fit(chart.x_label, f.right - f.left));
        text(svg, at, &attributes, Escaped(chart.x_label))?;
    }
    let (w, h) = (f.right - f.left, f.bottom - f.top);
    writeln!(
        svg,
        r#"<rect x="{:.2}" y="{:.2}" width="{w:.2}" height="{h:.2}" fill="none" stroke="{INK}"/>"#,
        f.left, f.top
    )
}

/// A smaller font size for an axis label that would be longer than `room` pixels at 12px (no smaller than 8px).
fn fit(label: &str, room: f64) -> String {
    let width = text_width(label, CHAR_WIDTH);
    if width <= room { String::new() } else { format!(r#" font-size="{:.1}""#, (12.0 * room / width).max(8.0)) }
}

/// Vertical grid lines, ticks and tick labels of a numeric x axis.
fn x_ticks(svg: &mut String, f: &Frame, x: &Scale) -> fmt::Result {
    for &t in &x.ticks {
        let px = x.map(t, f.left, f.right);
        line(svg, (px, f.top), (px, f.bottom), GRID)?;
        line(svg, (px, f.bottom), (px, f.bottom + 5.0), INK)?;
        text(svg, (px, f.bottom + 18.0), r#"text-anchor="middle""#, x.label(t))?;
    }
    Ok(())
}

/// The chart's targets, behind the data: each band shaded over the pixels `span` gives for its `at`, clipped to the
/// plot, dashed at its value (or edges); its label, at its upper right, goes into `labels`, to be drawn over the
/// data. A band beyond the axis is drawn as a line at the edge it lies past, its label marked ↑ or ↓.
fn bands(
    svg: &mut String,
    labels: &mut String,
    f: &Frame,
    chart: &Chart,
    y: &Scale,
    span: impl Fn(Option<f64>) -> (f64, f64),
) -> fmt::Result {
    let clip = |v: f64| f.y(y, v).clamp(f.top, f.bottom);
    // Labels placed so far, `(left, right, baseline)`: a label that would overlap one moves down a line.
    let mut placed: Vec<(f64, f64, f64)> = Vec::new();
    // A band with a NaN edge (`lo <= hi` fails) is not drawn.
    for b in chart.bands.iter().filter(|b| b.lo <= b.hi) {
        let (x0, x1) = span(b.at);
        let (top, bottom) = (clip(b.hi), clip(b.lo));
        svg.push_str("<g class=\"target\">\n");
        if bottom > top {
            let (w, h) = (x1 - x0, bottom - top);
            writeln!(
                svg,
                r##"<rect x="{x0:.2}" y="{top:.2}" width="{w:.2}" height="{h:.2}" fill="#888" fill-opacity="0.18"/>"##
            )?;
        }
        let dashed: Vec<f64> = match b.value {
            Some(v) if v.is_finite() => vec![clip(v)],
            _ => [b.lo, b.hi].into_iter().filter(|v| v.is_finite()).map(clip).collect(),
        };
        for py in dashed {
            writeln!(
                svg,
                r#"<path d="M{x0:.2} {py:.2}H{x1:.2}" stroke="{TARGET_INK}" stroke-width="1.5" stroke-dasharray="6 4"/>"#
            )?;
        }
        let mark = if b.lo > y.hi {
            "↑ "
        } else if b.hi < y.lo {
            "↓ "
        } else {
            ""
        };
        let label = format!("{mark}{}", b.label);
        let width = text_width(&label, BAND_CHAR_WIDTH);
        let (lx, anchor, left) = match b.at {
            Some(_) => ((x0 + x1) / 2.0, "middle", (x0 + x1 - width) / 2.0),
            None => (x1 - 4.0, "end", x1 - 4.0 - width),
        };
        let mut ly = (top - 4.0).max(f.top + 10.0);
        while ly < f.bottom
            && placed.iter().any(|&(l, r, y)| l < left + width && left < r && (y - ly).abs() < BAND_LINE)
        {
            ly += BAND_LINE;
        }
        placed.push((left, left + width, ly));
        // A white halo keeps the label readable over the lines it crosses.
        let attributes = format!(
            r#"text-anchor="{anchor}" font-size="10" fill="{TARGET_INK}" stroke="white" stroke-width="3" paint-order="stroke""#
        );
        svg.push_str("</g>\n");
        text(labels, (lx, ly), &attributes, Escaped(&label))?;
    }
    Ok(())
}

fn line(svg: &mut String, (x1, y1): (f64, f64), (x2, y2): (f64, f64), stroke: &str) -> fmt::Result {
    writeln!(svg, r#"<line x1="{x1:.2}" y1="{y1:.2}" x2="{x2:.2}" y2="{y2:.2}" stroke="{stroke}"/>"#)
}

/// A `<polyline>` through `points` (pixels) with extra attributes `style`.
fn polyline(svg: &mut String, points: impl Iterator<Item = (f64, f64)>, style: &str) -> fmt::Result {
    let width = if style.is_empty() { r#" stroke-width="2""# } else { "" };
    write!(svg, r#"<polyline fill="none"{width}{style} points=""#)?;
    for (j, (px, py)) in points.enumerate() {
        write!(svg, "{}{px:.2},{py:.2}", if j == 0 { "" } else { " " })?;
    }
    svg.push_str("\"/>\n");
    Ok(())
}

/// A `<text>` element; `content` must already be escaped (numbers, or [`Escaped`]).
fn text(svg: &mut String, (x, y): (f64, f64), attributes: &str, content: impl fmt::Display) -> fmt::Result {
    writeln!(svg, r#"<text x="{x:.2}" y="{y:.2}" {attributes}>{content}</text>"#)
}

/// A vertical error bar at `x` for `mean ± ci`, clipped to `bounds`, with a cap at each end that was not clipped.
fn error_bar(svg: &mut String, f: &Frame, y: &Scale, x: f64, mean: f64, ci: f64, bounds: (f64, f64)) -> fmt::Result {
    let Some(w) = Whisker::new(mean, ci, bounds) else { return Ok(()) };
    let (y_lo, y_hi) = (f.y(y, w.lo), f.y(y, w.hi));
    if !(y_lo.is_finite() && y_hi.is_finite()) {
        return Ok(());
    }
    let (l, r) = (x - 4.0, x + 4.0);
    write!(svg, r#"<path d="M{x:.2} {y_lo:.2}V{y_hi:.2}"#)?;
    if !w.lo_clipped {
        write!(svg, "M{l:.2} {y_lo:.2}H{r:.2}")?;
    }
    if !w.hi_clipped {
        write!(svg, "M{l:.2} {y_hi:.2}H{r:.2}")?;
    }
    svg.push_str("\" fill=\"none\"/>\n");
    Ok(())
}

/// A marker whose shape cycles with the series index, so series stay apart in greyscale too.
fn marker(svg: &mut String, series: usize, (x, y): (f64, f64)) -> fmt::Result {
    match series % MARKERS {
        0 => writeln!(svg, r#"<circle cx="{x:.2}" cy="{y:.2}" r="3.5"/>"#),
        1 => writeln!(svg, r#"<rect x="{:.2}" y="{:.2}" width="7" height="7"/>"#, x - 3.5, y - 3.5),
        2 => writeln!(
            svg,
            r#"<polygon points="{x:.2},{:.2} {:.2},{:.2} {:.2},{:.2}"/>"#,
            y - 4.5,
            x + 4.5,
            y + 3.5,
            x - 4.5,
            y + 3.5
        ),
        _ => writeln!(
            svg,
            r#"<polygon points="{x:.2},{:.2} {:.2},{y:.2} {x:.2},{:.2} {:.2},{y:.2}"/>"#,
            y - 4.5,
            x + 4.5,
            y + 4.5,
            x - 4.5
        ),
    }
}

/// Legend entries to the right of the plot: a key drawn by `key` beside the entry's first line, then its lines.
fn legend(svg: &mut String, f: &Frame, key: impl Fn(&mut String, usize, (f64, f64)) -> fmt::Result) -> fmt::Result {
    let lx = f.right + 16.0;
    let mut ly = f.top + 8.0;
    for (i, lines) in f.legend.iter().enumerate() {
        key(svg, i, (lx, ly))?;
        for (j, line) in lines.iter().enumerate() {
            text(svg, (lx + LEGEND_KEY, ly + j as f64 * TEXT_LINE), r#"dy="0.35em""#, Escaped(line))?;
        }
        ly += lines.len().max(1) as f64 * TEXT_LINE + LEGEND_GAP;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_band_chart_shades_mean_plus_minus_ci_clipped_to_the_bounds_under_its_mean_line() {
        let series = [
            Series { label: "fixed".into(), points: vec![(0.0, 0.5, 0.1), (1.0, 0.9, 0.3), (2.0, f64::NAN, 0.1)] },
            Series { label: "one run".into(), points: vec![(0.0, 0.2, f64::NAN), (2.0, 0.4, f64::NAN)] },
        ];
        let chart = Chart { y_bounds: (0.0, 1.0), ..Chart::new("load", "time [h]", "utilisation (share)") };
        let svg = band_chart(&chart, &series);
        balanced(&svg).unwrap();
        assert_eq!(svg.matches(r#"fill-opacity="0.2""#).count(), 2, "a band per series");
        assert_eq!(svg.matches("<polyline").count(), 2, "a mean line per series");
        // The first band's top edge at t = 1 is clipped to 1, the top of the axis.
        let y = Scale::bounded(Extent::over([0.0, 1.0].into_iter()), (0.0, 1.0));
        let f = Frame::new("load", &y, &["fixed", "one run"]);
        let top = format!("{:.2}", f.y(&y, 1.0));
        let band = svg.split(r#"<path d="M"#).nth(1).unwrap();
        assert!(band.split('L').nth(1).unwrap().ends_with(&top), "{band}");
        assert!(svg.contains(">fixed<") && svg.contains(">one run<"));
    }

    /// Checks that every element is closed in order; returns the first problem found.
    fn balanced(svg: &str) -> Result<(), String> {
        let mut stack = Vec::new();
        let mut rest = svg;
        while let Some(start) = rest.find('<') {
            let end = rest[start..].find('>').ok_or("unterminated tag")? + start;
            let tag = &rest[start + 1..end];
            if let Some(name) = tag.strip_prefix('/') {
                if stack.pop() != Some(name.to_owned()) {
                    return Err(format!("unexpected </{name}>"));
                }
            } else if !tag.ends_with('/') {
                stack.push(tag.split_whitespace().next().unwrap_or_default().to_owned());
            }
            rest = &rest[end + 1..];
        }
        if stack.is_empty() { Ok(()) } else { Err(format!("unclosed {stack:?}")) }
    }

    fn well_formed(svg: &str) {
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""), "{svg}");
        assert!(svg.ends_with("</svg>\n"));
        assert_eq!(balanced(svg), Ok(()), "{svg}");
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "non-finite number leaked: {svg}");
    }

    fn error_bars(svg: &str) -> Vec<&str> {
        svg.lines().filter(|l| l.starts_with("<path d=\"M") && l.contains('V')).collect()
    }

    /// The value of attribute `name` in element line `line`.
    fn attr(line: &str, name: &str) -> f64 {
        let key = format!(" {name}=\"");
        let start = line.find(&key).unwrap_or_else(|| panic!("no {name} in {line}")) + key.len();
        line[start..].split('"').next().and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{name} in {line}"))
    }

    /// The plot area's outline: `(left, top, right, bottom)`.
    fn plot_area(svg: &str) -> (f64, f64, f64, f64) {
        let frame = svg.lines().find(|l| l.starts_with("<rect x=") && l.contains(r#"fill="none""#)).expect("frame");
        let (x, y) = (attr(frame, "x"), attr(frame, "y"));
        (x, y, x + attr(frame, "width"), y + attr(frame, "height"))
    }

    /// Every number in an SVG path's `d`, as (x, y) pairs of its M and V commands' ends.
    fn path_ys(d: &str) -> Vec<f64> {
        let mut ys = Vec::new();
        for part in d.split(['M', 'H']).filter(|p| !p.is_empty()) {
            let mut it = part.split('V');
            let first = it.next().unwrap_or_default();
            if let Some(y) = first.split(' ').nth(1) {
                ys.push(y.parse().unwrap());
            }
            ys.extend(it.map(|v| v.parse::<f64>().unwrap()));
        }
        ys
    }

    fn sweep() -> Vec<Series> {
        vec![
            Series { label: "MOV".into(), points: vec![(1.0, 0.5, 0.05), (2.0, 0.62, 0.04), (4.0, 0.71, f64::NAN)] },
            Series {
                label: "NOP <base & ref>".into(),
                points: vec![(1.0, 0.4, 0.1), (2.0, 0.45, 0.08), (4.0, 0.47, 0.07)],
            },
        ]
    }

    #[test]
    fn line_chart_has_title_labels_legend_and_lines() {
        let chart = Chart::new("Utilization vs. load", "offered load", "utilization");
        let svg = line_chart(&chart, &sweep());
        well_formed(&svg);
        for text in
            [">Utilization vs. load<", ">offered load<", ">utilization<", ">MOV<", ">NOP &lt;base &amp; ref&gt;<"]
        {
            assert!(svg.contains(text), "missing {text}");
        }
        assert_eq!(svg.matches("<polyline").count(), 2);
        // Five error bars: the third MOV point has none.
        assert_eq!(error_bars(&svg).len(), 5);
        assert_eq!(svg, line_chart(&chart, &sweep()));

        let gap = Series {
            label: "gap".into(),
            points: vec![(0.0, 1.0, 0.1), (1.0, f64::NAN, 0.1), (2.0, 3.0, 0.1), (3.0, 2.0, 0.1)],
        };
        let svg = line_chart(&Chart::new("t", "x", "y"), &[gap]);
        let counts = (svg.matches("<polyline").count(), svg.matches("<circle").count(), error_bars(&svg).len());
        assert_eq!(counts, (1, 4, 3));
    }

    #[test]
    fn bar_chart_groups_bars_per_category() {
        let categories: Vec<String> = ["NOP", "MOV", "MLIP", "MOML"].map(String::from).to_vec();
        let series = vec![
            BarSeries { label: "revenue".into(), values: vec![(3.0, 0.2), (4.5, 0.3), (-1.0, 0.4), (2.0, f64::NAN)] },
            BarSeries { label: "cost".into(), values: vec![(1.0, 0.1), (f64::NAN, 0.1)] },
        ];
        let chart = Chart::new("Policies", "policy", "money [G$]");
        let svg = bar_chart(&chart, &categories, &series);
        well_formed(&svg);
        for text in [">Policies<", ">policy<", ">money [G$]<", ">MLIP<", ">MOML<", ">revenue<", ">cost<"] {
            assert!(svg.contains(text), "missing {text}");
        }
        // Five bars (the two legend swatches, the background and the frame carry no `stroke="none"`).
        assert_eq!(svg.matches(r#"stroke="none"/>"#).count(), 5);
        assert_eq!(error_bars(&svg).len(), 4);
        assert_eq!(svg, bar_chart(&chart, &categories, &series));
    }

    #[test]
    fn a_whisker_is_clipped_at_the_axis_of_a_quantity_that_cannot_be_negative() {
        // Response times of 1 ± 5 s and 3 ± 0.5 s: the first interval would reach −4 s.
        let series = [Series { label: "r".into(), points: vec![(0.0, 1.0, 5.0), (1.0, 3.0, 0.5)] }];
        let chart = Chart { y_bounds: (0.0, f64::INFINITY), ..Chart::new("t", "x", "jobs.response [s]") };
        let svg = line_chart(&chart, &series);
        well_formed(&svg);
        let (_, top, _, bottom) = plot_area(&svg);
        let bars = error_bars(&svg);
        assert_eq!(bars.len(), 2, "clipped, not hidden");
        for bar in &bars {
            let d = bar.split('"').nth(1).unwrap();
            assert!(path_ys(d).iter().all(|&y| top <= y && y <= bottom), "{bar} leaves [{top}, {bottom}]");
        }
        // The clipped end has no cap: one horizontal stroke instead of two.
        assert_eq!(bars[0].matches('H').count(), 1, "{}", bars[0]);
        assert_eq!(bars[1].matches('H').count(), 2, "{}", bars[1]);
        // The axis starts at 0, the lowest tick.
        assert!(svg.contains(r#"text-anchor="end">0</text>"#), "{svg}");
        assert!(!svg.contains(">-"), "no negative tick: {svg}");
        // A count that is always 0 is drawn on 0 to 1, not on -1 to 1.
        let zero = [Series { label: "z".into(), points: vec![(0.0, 0.0, 0.0), (1.0, 0.0, 0.0)] }];
        let svg = line_chart(&chart, &zero);
        assert!(!svg.contains(">-") && svg.contains(r#"text-anchor="end">1.0</text>"#), "{svg}");
        let idle = [TimeSeries { label: "idle".into(), points: vec![(0.0, 0.0), (5.0, 0.0)] }];
        assert!(!time_chart(&chart, &idle).contains(">-"));
        // Unbounded, the same interval goes below zero.
        let svg = line_chart(&Chart::new("t", "x", "y"), &series);
        assert!(svg.contains(">-"), "{svg}");

        // A bar of a count, and a share clipped at both ends.
        let chart = Chart { y_bounds: (0.0, 1.0), ..Chart::new("t", "x", "utilisation (share, 0–1)") };
        let svg = bar_chart(&chart, &["a".into()], &[BarSeries { label: "s".into(), values: vec![(0.5, 0.7)] }]);
        let bar = error_bars(&svg)[0];
        assert_eq!(bar.matches('H').count(), 0, "{bar}");
        let (_, top, _, bottom) = plot_area(&svg);
        assert!(path_ys(bar.split('"').nth(1).unwrap()).iter().all(|&y| top <= y && y <= bottom), "{bar}");
    }

    #[test]
    fn a_target_is_drawn_as_a_labelled_band() {
        let bands = [
            Band { label: "target 0.6 ± 0.05".into(), lo: 0.55, hi: 0.65, value: Some(0.6), at: None },
            Band { label: "target in [0.3, 0.4]".into(), lo: 0.3, hi: 0.4, value: None, at: Some(2.0) },
        ];
        let chart = Chart { bands: &bands, ..Chart::new("t", "x", "y") };
        let svg = line_chart(&chart, &sweep());
        well_formed(&svg);
        assert_eq!(svg.matches(r#"<g class="target">"#).count(), 2);
        // A dashed line at the value, two at a range's edges.
        assert_eq!(svg.matches(r#"stroke-dasharray="6 4""#).count(), 3);
        assert!(svg.contains(">target 0.6 ± 0.05</text>") && svg.contains(">target in [0.3, 0.4]</text>"), "{svg}");
        let (left, _, right, _) = plot_area(&svg);
        let shade: Vec<&str> = svg.lines().filter(|l| l.contains(r#"fill-opacity="0.18""#)).collect();
        assert_eq!((attr(shade[0], "x"), attr(shade[0], "x") + attr(shade[0], "width")), (left, right));
        assert!(attr(shade[1], "width") < (right - left) / 4.0, "the band at x = 2 is narrow: {}", shade[1]);
        // Without targets, nothing of it.
        assert!(!line_chart(&Chart::new("t", "x", "y"), &sweep()).contains("dasharray"));

        // The axis grows to show a target out of the data's range, not one absurdly far away.
        let far = [Band { label: "far".into(), lo: 1e9, hi: 2e9, value: None, at: None }];
        let svg = line_chart(&Chart { bands: &far, ..Chart::new("t", "x", "y") }, &sweep());
        well_formed(&svg);
        assert!(svg.contains(">↑ far</text>"), "{svg}");
        let near = [Band { label: "near".into(), lo: 0.9, hi: 1.1, value: Some(1.0), at: None }];
        let svg = line_chart(&Chart { bands: &near, ..Chart::new("t", "x", "y") }, &sweep());
        assert!(svg.contains(r#"text-anchor="end">1.0</text>"#) && svg.contains(">near</text>"), "{svg}");

        let bar = [Band { label: "at fcfs".into(), lo: 0.2, hi: 1.0, value: Some(0.6), at: Some(1.0) }];
        let categories: Vec<String> = vec!["fcfs".into(), "easy".into()];
        let series = [BarSeries { label: "u".into(), values: vec![(0.5, 0.1), (0.6, 0.1)] }];
        let svg = bar_chart(&Chart { bands: &bar, ..Chart::new("t", "x", "y") }, &categories, &series);
        well_formed(&svg);
        let shade = svg.lines().find(|l| l.contains(r#"fill-opacity="0.18""#)).unwrap();
        let (left, _, right, _) = plot_area(&svg);
        assert!(attr(shade, "x") > (left + right) / 2.0, "over the second category: {shade}");
    }

    #[test]
    fn long_labels_are_wrapped_to_fit_the_canvas() {
        let long = "workloads.requests.best-effort-fraction=0.1, providers.rp.preemption=moml";
        let series: Vec<Series> = (0..3)
            .map(|i| Series { label: format!("{long} #{i}"), points: vec![(0.0, 1.0, 0.1), (1.0, 2.0, 0.1)] })
            .collect();
        let title =
            "a title long enough that it cannot fit on one line of a chart seven hundred and twenty pixels wide";
        let svg = line_chart(&Chart::new(title, "x", "y"), &series);
        well_formed(&svg);
        // Every left-aligned text (the legend) ends inside the canvas; a centred one (title) spans its width.
        for l in svg.lines().filter(|l| l.starts_with("<text x=")) {
            let content = l.split('>').nth(1).unwrap().trim_end_matches("</text");
            let width = text_width(content, if l.contains("font-size=\"16\"") { TITLE_CHAR_WIDTH } else { CHAR_WIDTH });
            let x = attr(l, "x");
            let (from, to) = if l.contains("\"middle\"") { (x - width / 2.0, x + width / 2.0) } else { (x, x + width) };
            if !l.contains("\"end\"") {
                assert!(from >= 0.0 && to <= WIDTH, "{l} runs off the canvas ({from}..{to})");
            }
        }
        // The legend box is as wide as its widest line: it starts right of the plot.
        let (_, _, right, _) = plot_area(&svg);
        let legend_x = svg.lines().filter(|l| l.contains(r#"dy="0.35em">workloads"#)).map(|l| attr(l, "x")).next();
        assert!(legend_x.is_some_and(|x| x > right), "{svg}");
        assert_eq!(svg.matches("font-weight=\"bold\"").count(), 2, "the title takes two lines");

        // So many entries that the legend is taller than the plot: the canvas grows to hold them.
        let many: Vec<Series> =
            (0..40).map(|i| Series { label: format!("series {i}"), points: vec![(0.0, i as f64, 0.0)] }).collect();
        let svg = line_chart(&Chart::new("t", "x", "y"), &many);
        well_formed(&svg);
        let height = attr(svg.lines().next().unwrap(), "height");
        let lowest = svg.lines().filter(|l| l.contains(">series 39<")).map(|l| attr(l, "y")).next().unwrap();
        assert!(height > HEIGHT && lowest < height, "{lowest} below {height}");
    }

    #[test]
    fn wrap_breaks_at_punctuation_and_cuts_long_words() {
        assert_eq!(wrap("providers.rp.preemption=nop", 26), ["providers.rp.preemption=", "nop"]);
        assert_eq!(wrap("a, b, c", 4), ["a,", "b, c"]);
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap("short", 26), ["short"]);
        assert_eq!(wrap("", 26), Vec::<String>::new());
    }

    #[test]
    fn time_chart_draws_steps_and_reduces_long_series() {
        let series = [
            TimeSeries { label: "big".into(), points: vec![(0.0, 0.0), (10.0, 0.5), (20.0, 1.0), (30.0, 0.25)] },
            TimeSeries { label: "small".into(), points: vec![(0.0, 1.0), (10.0, f64::NAN), (20.0, 0.0)] },
        ];
        let chart = Chart { y_bounds: (0.0, 1.0), ..Chart::new("utilisation", "time [s]", "utilisation") };
        let svg = time_chart(&chart, &series);
        well_formed(&svg);
        assert!(svg.contains(">big<") && svg.contains(">time [s]<"), "{svg}");
        // Four samples make a staircase of seven vertices; the second series breaks at NaN into two dots.
        let line = svg.lines().find(|l| l.starts_with("<polyline")).unwrap();
        assert_eq!(line.split('"').find(|p| p.contains(',')).unwrap().split(' ').count(), 7, "{line}");
        assert_eq!(svg.matches("<circle").count(), 2);
        assert!(svg.contains(r#"stroke-dasharray="7 3""#), "the second series is dashed");
        // The whole share axis, 0 to 1, whatever the data.
        let flat = [TimeSeries { label: "flat".into(), points: vec![(0.0, 0.4), (5.0, 0.45)] }];
        let svg = time_chart(&chart, &flat);
        assert!(svg.contains(r#"text-anchor="end">0.0</text>"#) && svg.contains(r#"text-anchor="end">1.0</text>"#));

        // A million samples: reduced per pixel column, the peaks kept.
        let points: Vec<(f64, f64)> =
            (0..1_000_000).map(|i| (i as f64, if i == 500_123 { 10.0 } else { (i % 7) as f64 })).collect();
        let svg = time_chart(&Chart::new("q", "t", "queued"), &[TimeSeries { label: "q".into(), points }]);
        well_formed(&svg);
        assert!(svg.len() < 200_000, "{} bytes", svg.len());
        let (_, top, _, _) = plot_area(&svg);
        let ys: Vec<f64> = svg
            .lines()
            .find(|l| l.starts_with("<polyline"))
            .unwrap()
            .split('"')
            .find(|p| p.contains(','))
            .unwrap()
            .split(' ')
            .map(|p| p.split(',').nth(1).unwrap().parse().unwrap())
            .collect();
        let peak = ys.iter().copied().fold(f64::INFINITY, f64::min);
        assert!((peak - top).abs() < 0.01, "the one sample of 10 is the top of the axis: {peak} vs {top}");
    }

    #[test]
    fn m4_keeps_first_extremes_and_last_per_column() {
        let few = vec![(0.0, 1.0), (0.5, 2.0)];
        assert_eq!(m4(&few), few);
        let many: Vec<(f64, f64)> = (0..10_000).map(|i| (i as f64 / 100.0, ((i * 37) % 101) as f64)).collect();
        let reduced = m4(&many);
        assert!(reduced.len() <= 4 * 100, "{}", reduced.len());
        let column: Vec<&(f64, f64)> = reduced.iter().filter(|p| p.0.floor() == 3.0).collect();
        assert_eq!(column.first().map(|p| p.0), Some(3.0));
        assert_eq!(column.last().map(|p| p.0), Some(3.99));
        assert_eq!(column.iter().map(|p| p.1).fold(f64::INFINITY, f64::min), 0.0);
        assert_eq!(column.iter().map(|p| p.1).fold(0.0, f64::max), 100.0);
    }

    #[test]
    fn time_units_follow_the_length_of_the_run() {
        assert_eq!(time_unit(600.0), (1.0, "s"));
        assert_eq!(time_unit(3.0 * 3600.0), (3600.0, "h"));
        assert_eq!(time_unit(14.0 * 86_400.0), (86_400.0, "d"));
    }

    #[test]
    fn degenerate_inputs_still_give_valid_documents() {
        let nan = Series { label: "nan".into(), points: vec![(f64::NAN, 1.0, 1.0), (1.0, f64::NAN, 1.0)] };
        let one = Series { label: "one".into(), points: vec![(3.0, -2.0, 0.5)] };
        let gap =
            Series { label: "gap".into(), points: vec![(0.0, -5.0, 1.0), (1.0, f64::NAN, 0.0), (2.0, -7.0, -1.0)] };
        let huge =
            Series { label: "huge".into(), points: vec![(-f64::MAX, f64::MAX, f64::MAX), (f64::MAX, -f64::MAX, 0.0)] };
        let tiny = Series { label: "tiny".into(), points: vec![(0.0, 5e-324, 0.0), (1.0, 1e-323, 0.0)] };
        let subnormal = Series { label: "subnormal".into(), points: vec![(5e-324, 5e-324, 5e-324)] };
        let inf = Series { label: "∞".into(), points: vec![(f64::INFINITY, 1.0, 0.0), (1.0, 2.0, f64::INFINITY)] };
        let nan_band = [
            Band { label: "nan".into(), lo: f64::NAN, hi: 1.0, value: None, at: None },
            Band { label: "nan value".into(), lo: 0.0, hi: 1.0, value: Some(f64::NAN), at: Some(f64::NAN) },
            Band { label: "open".into(), lo: f64::NEG_INFINITY, hi: f64::INFINITY, value: None, at: None },
        ];
        let bounded = Chart { y_bounds: (0.0, 1.0), bands: &nan_band, ..Chart::new("", "", "") };
        for series in [
            vec![],
            vec![Series { label: String::new(), points: vec![] }],
            vec![nan],
            vec![one],
            vec![gap],
            vec![huge],
            vec![tiny],
            vec![subnormal],
            vec![inf],
        ] {
            well_formed(&line_chart(&Chart::new("", "", ""), &series));
            well_formed(&line_chart(&bounded, &series));
            let timed: Vec<TimeSeries> = series
                .iter()
                .map(|s| TimeSeries { label: s.label.clone(), points: s.points.iter().map(|p| (p.0, p.1)).collect() })
                .collect();
            well_formed(&time_chart(&bounded, &timed));
        }
        let bars = |values: Vec<(f64, f64)>| vec![BarSeries { label: "b".into(), values }];
        let chart = Chart::new("", "", "y");
        well_formed(&bar_chart(&chart, &[], &bars(vec![(1.0, 1.0)])));
        well_formed(&bar_chart(&chart, &["a".into()], &[]));
        well_formed(&bar_chart(&bounded, &["a".into(), "b".into()], &bars(vec![(-3.0, 1.0), (-1.0, f64::NAN)])));
        well_formed(&bar_chart(&chart, &["a".into(), "b".into()], &bars(vec![(f64::MAX, f64::MAX), (-f64::MAX, 1.0)])));
    }

    #[test]
    fn scale_picks_nice_ticks() {
        let scale = |min, max| Scale::new(Extent { min, max });
        let s = scale(0.0, 9.3);
        assert_eq!(s.ticks, [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(s.ticks.iter().map(|&t| s.label(t)).collect::<Vec<_>>(), ["0", "2", "4", "6", "8", "10"]);
        let s = scale(-0.35, 0.72);
        assert_eq!((s.lo, s.hi), (-0.4, 0.8));
        assert_eq!(
            s.ticks.iter().map(|&t| s.label(t)).collect::<Vec<_>>(),
            ["-0.4", "-0.2", "0.0", "0.2", "0.4", "0.6", "0.8"]
        );
        let s = scale(0.013, 0.049);
        assert_eq!(s.label(s.ticks[1]), "0.02");
        let s = scale(2.0, 2.0);
        assert!(s.lo < 2.0 && 2.0 < s.hi);
        let s = scale(f64::INFINITY, f64::NEG_INFINITY);
        assert_eq!((s.lo, s.hi), (0.0, 1.0));
        assert_eq!(scale(0.0, 3e9).label(2e9), "2.00e9");
    }

    #[test]
    fn a_geometric_sweep_gets_a_log_axis_with_equal_steps() {
        let x = Scale::geometric(&[0.1, 0.0001, 0.01, 0.001, 0.01]).expect("a geometric sweep");
        let px: Vec<f64> = x.ticks.iter().map(|&t| x.map(t, 0.0, 700.0)).collect();
        assert_eq!(x.ticks, [0.0001, 0.001, 0.01, 0.1]);
        for w in px.windows(3) {
            assert!(((w[2] - w[1]) - (w[1] - w[0])).abs() < 1e-9, "{px:?}");
        }
        assert!(px[0] > 0.0 && px[3] < 700.0, "a margin at both ends: {px:?}");
        assert_eq!(x.label(0.0001), "0.0001");
        // Not a geometric sweep over two decades: too few values, uneven ratios, a short span, a value not positive.
        for values in [&[1.0, 10.0][..], &[1.0, 10.0, 50.0, 100.0], &[1.0, 2.0, 4.0], &[0.0, 1.0, 10.0, 100.0]] {
            assert_eq!(Scale::geometric(values), None, "{values:?}");
        }
        let series =
            [Series { label: "gmp".into(), points: vec![(10.0, 1.0, 0.1), (100.0, 2.0, 0.1), (1000.0, 3.0, 0.1)] }];
        let svg = line_chart(&Chart::new("t", "rate", "y"), &series);
        well_formed(&svg);
        assert!(svg.contains("rate (log scale)") && svg.contains(">1000<"), "{svg}");
    }
}
