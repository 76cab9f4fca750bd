//! SVG charts for experiment reports: line charts of a metric over a numeric parameter sweep and grouped bar charts
//! over named configurations (e.g. the policies NOP, MOV, MLIP, MOML), both with 95% confidence error bars.
//!
//! The SVG is written by hand with [`std::fmt::Write`] rather than with the `plotters` crate. Plotters' SVG backend
//! does work without a font feature (it then guesses text extents and emits plain `<text>`), but writing the few
//! elements needed here directly gives full control over number formatting, grouped bars and NaN handling, adds no
//! dependency, and keeps the output byte-identical for identical input: every coordinate is printed with two
//! decimals and every tick label with a precision derived from the tick step. Text uses the generic `sans-serif`
//! family, so producing a chart needs no fonts; label widths are estimated from character counts to reserve room.
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

/// A standalone SVG document plotting each series as a polyline with markers and error bars, over "nice" numeric
/// axes, with title, axis labels and legend.
pub fn line_chart(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> String {
    let mut svg = String::new();
    // Writing into a String cannot fail.
    let _ = write_line_chart(&mut svg, title, x_label, y_label, series);
    svg
}

/// A standalone SVG document with one group of bars per category (one bar per series, from zero to the mean) and
/// error bars, for sweeps over non-numeric values.
pub fn bar_chart(title: &str, y_label: &str, categories: &[String], series: &[BarSeries]) -> String {
    let mut svg = String::new();
    // Writing into a String cannot fail.
    let _ = write_bar_chart(&mut svg, title, y_label, categories, series);
    svg
}

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 440.0;
/// Rough advance of one 12px sans-serif character, used only to reserve room for text.
const CHAR_WIDTH: f64 = 7.0;
const LEGEND_ROW: f64 = 18.0;
const LEGEND_MAX_WIDTH: f64 = 220.0;
const TARGET_TICKS: f64 = 6.0;
/// Okabe-Ito colours (without yellow, too faint on white): distinguishable with common colour-vision deficiencies.
const COLORS: [&str; 7] = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"];
const MARKERS: usize = 4;
const INK: &str = "#333";
const GRID: &str = "#e0e0e0";

fn color(i: usize) -> &'static str {
    COLORS[i % COLORS.len()]
}

/// The mean and, when the half-width is usable, the ends of its error bar: what the value axis must show.
fn bar_ends(mean: f64, ci: f64) -> Vec<f64> {
    // The mean is listed too because an end may overflow to infinity and be left out of the axis range.
    if ci.is_finite() && ci > 0.0 { vec![mean, mean - ci, mean + ci] } else { vec![mean] }
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
}

/// A linear axis from `lo` to `hi` with tick positions and their label format.
#[derive(Debug, Clone, PartialEq)]
struct Scale {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
    /// Decimals for tick labels; `None` for scientific notation (huge or tiny values).
    decimals: Option<usize>,
}

impl Scale {
    /// "Nice numbers" (Heckbert): a step of 1, 2 or 5 times a power of ten giving about [`TARGET_TICKS`] ticks, with
    /// the bounds rounded out to whole steps.
    fn new(extent: Extent) -> Scale {
        let (min, max) = match extent {
            Extent { min, max } if min < max => (min, max),
            Extent { min, .. } if min.is_finite() => {
                // Zero, or too close to it for half of it to be a usable margin.
                let pad = if min.abs() < 1e-300 { 1.0 } else { min.abs() * 0.5 };
                ((min - pad).max(-f64::MAX), (min + pad).min(f64::MAX))
            }
            _ => (0.0, 1.0),
        };
        let step = nice((max - min) / (TARGET_TICKS - 1.0));
        let (lo, hi) = ((min / step).floor() * step, (max / step).ceil() * step);
        let count = ((hi - lo) / step).round();
        // Fails only near the limits of f64 (overflowing range, subnormal step); then label just the ends.
        if !(lo.is_finite() && hi.is_finite() && step > 0.0 && (1.0..=20.0).contains(&count)) {
            return Scale { lo: min, hi: max, ticks: vec![min, max], decimals: None };
        }
        let ticks = (0..=count as usize).map(|i| lo + i as f64 * step).collect();
        let magnitude = lo.abs().max(hi.abs());
        // The 1e-9 keeps log10(0.01) = -1.9999999999999996 from asking for a third decimal.
        let decimals = (step >= 1e-4 && magnitude < 1e7).then(|| (-step.log10() - 1e-9).ceil().max(0.0) as usize);
        Scale { lo, hi, ticks, decimals }
    }

    /// Maps `v` linearly so that `lo` goes to `from` and `hi` to `to`.
    fn map(&self, v: f64, from: f64, to: f64) -> f64 {
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

/// Pixel bounds of the plotting area, sized around the tick labels and the legend.
#[derive(Debug, Clone, Copy)]
struct Frame {
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
}

impl Frame {
    fn new(y: &Scale, legend: &[&str]) -> Frame {
        let widest_tick = y.ticks.iter().map(|&t| y.label(t).chars().count()).max().unwrap_or(0);
        let widest_label = legend.iter().map(|l| l.chars().count()).max();
        let legend_width = widest_label.map_or(0.0, |w| (36.0 + w as f64 * CHAR_WIDTH).min(LEGEND_MAX_WIDTH) + 12.0);
        Frame {
            left: 34.0 + widest_tick as f64 * CHAR_WIDTH,
            right: WIDTH - 16.0 - legend_width,
            top: 44.0,
            bottom: HEIGHT - 52.0,
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

fn write_line_chart(svg: &mut String, title: &str, x_label: &str, y_label: &str, series: &[Series]) -> fmt::Result {
    let finite = |p: &&(f64, f64, f64)| p.0.is_finite() && p.1.is_finite();
    let all = || series.iter().flat_map(|s| s.points.iter().filter(finite));
    let x = Scale::new(Extent::over(all().map(|p| p.0)));
    let y = Scale::new(Extent::over(all().flat_map(|&(_, m, ci)| bar_ends(m, ci))));
    let labels: Vec<&str> = series.iter().map(|s| s.label.as_str()).collect();
    let f = Frame::new(&y, &labels);
    open(svg, &f, title, y_label, &y)?;
    for &t in &x.ticks {
        let px = x.map(t, f.left, f.right);
        line(svg, (px, f.top), (px, f.bottom), GRID)?;
        line(svg, (px, f.bottom), (px, f.bottom + 5.0), INK)?;
        text(svg, (px, f.bottom + 18.0), r#"text-anchor="middle""#, x.label(t))?;
    }
    if !x_label.is_empty() {
        text(svg, ((f.left + f.right) / 2.0, HEIGHT - 12.0), r#"text-anchor="middle""#, Escaped(x_label))?;
    }
    for (i, s) in series.iter().enumerate() {
        writeln!(svg, r#"<g stroke="{0}" fill="{0}">"#, color(i))?;
        let at = |&(px, m, _): &(f64, f64, f64)| (x.map(px, f.left, f.right), f.y(&y, m));
        // Runs of plottable points: the line breaks at a missing one rather than bridge it.
        let runs = s.points.split(|p| !finite(&p));
        for p in runs.clone().flatten() {
            error_bar(svg, at(p).0, f.y(&y, p.1 - p.2), f.y(&y, p.1 + p.2), p.2)?;
        }
        for run in runs.clone().filter(|run| run.len() > 1) {
            svg.push_str(r#"<polyline fill="none" stroke-width="2" points=""#);
            for (j, p) in run.iter().enumerate() {
                let (px, py) = at(p);
                write!(svg, "{}{px:.2},{py:.2}", if j == 0 { "" } else { " " })?;
            }
            svg.push_str("\"/>\n");
        }
        for p in runs.flatten() {
            marker(svg, i, at(p))?;
        }
        svg.push_str("</g>\n");
    }
    legend(svg, &f, &labels, |svg, i, (lx, ly)| {
        writeln!(svg, r#"<g stroke="{0}" fill="{0}">"#, color(i))?;
        writeln!(svg, r#"<path d="M{lx:.2} {ly:.2}h24" stroke-width="2"/>"#)?;
        marker(svg, i, (lx + 12.0, ly))?;
        svg.push_str("</g>\n");
        Ok(())
    })?;
    svg.push_str("</svg>\n");
    Ok(())
}

fn write_bar_chart(
    svg: &mut String,
    title: &str,
    y_label: &str,
    categories: &[String],
    series: &[BarSeries],
) -> fmt::Result {
    let values = |s: &BarSeries| s.values.iter().take(categories.len()).copied().collect::<Vec<_>>();
    let values: Vec<Vec<(f64, f64)>> = series.iter().map(values).collect();
    // Bars grow from zero, so zero must be on the axis.
    let ends = values.iter().flatten().filter(|v| v.0.is_finite()).flat_map(|&(m, ci)| bar_ends(m, ci));
    let y = Scale::new(Extent::over(ends.chain([0.0])));
    let labels: Vec<&str> = series.iter().map(|s| s.label.as_str()).collect();
    let f = Frame::new(&y, &labels);
    open(svg, &f, title, y_label, &y)?;
    let band = (f.right - f.left) / categories.len().max(1) as f64;
    // Each group fills 80% of its band, leaving a gap between categories.
    let bar = band * 0.8 / series.len().max(1) as f64;
    for (k, category) in categories.iter().enumerate() {
        text(svg, (f.left + (k as f64 + 0.5) * band, f.bottom + 18.0), r#"text-anchor="middle""#, Escaped(category))?;
    }
    let zero = f.y(&y, 0.0);
    for (i, values) in values.iter().enumerate() {
        writeln!(svg, r#"<g fill="{}" stroke="{INK}">"#, color(i))?;
        for (k, &(mean, ci)) in values.iter().enumerate().filter(|(_, v)| v.0.is_finite()) {
            let bx = f.left + k as f64 * band + band * 0.1 + i as f64 * bar;
            let top = f.y(&y, mean);
            let (y0, h) = (top.min(zero), (top - zero).abs());
            writeln!(svg, r#"<rect x="{bx:.2}" y="{y0:.2}" width="{bar:.2}" height="{h:.2}" stroke="none"/>"#)?;
            error_bar(svg, bx + bar / 2.0, f.y(&y, mean - ci), f.y(&y, mean + ci), ci)?;
        }
        svg.push_str("</g>\n");
    }
    // The zero line on top of the bars shows where positive and negative values part.
    line(svg, (f.left, zero), (f.right, zero), INK)?;
    legend(svg, &f, &labels, |svg, i, (lx, ly)| {
        writeln!(svg, r#"<rect x="{:.2}" y="{:.2}" width="12" height="12" fill="{}"/>"#, lx + 6.0, ly - 6.0, color(i))
    })?;
    svg.push_str("</svg>\n");
    Ok(())
}

/// Document header, background, title, y axis with grid and label, and the plot-area outline.
fn open(svg: &mut String, f: &Frame, title: &str, y_label: &str, y: &Scale) -> fmt::Result {
    writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
    )?;
    writeln!(svg, r#"<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#)?;
    text(svg, (WIDTH / 2.0, 26.0), r#"text-anchor="middle" font-size="16" font-weight="bold""#, Escaped(title))?;
    for &t in &y.ticks {
        let py = f.y(y, t);
        line(svg, (f.left, py), (f.right, py), GRID)?;
        line(svg, (f.left - 5.0, py), (f.left, py), INK)?;
        text(svg, (f.left - 8.0, py), r#"dy="0.35em" text-anchor="end""#, y.label(t))?;
    }
    let mid = (f.top + f.bottom) / 2.0;
    writeln!(
        svg,
        r#"<text transform="translate(16,{mid:.2}) rotate(-90)" dy="0.35em" text-anchor="middle">{}</text>"#,
        Escaped(y_label)
    )?;
    let (w, h) = (f.right - f.left, f.bottom - f.top);
    writeln!(
        svg,
        r#"<rect x="{:.2}" y="{:.2}" width="{w:.2}" height="{h:.2}" fill="none" stroke="{INK}"/>"#,
        f.left, f.top
    )
}

fn line(svg: &mut String, (x1, y1): (f64, f64), (x2, y2): (f64, f64), stroke: &str) -> fmt::Result {
    writeln!(svg, r#"<line x1="{x1:.2}" y1="{y1:.2}" x2="{x2:.2}" y2="{y2:.2}" stroke="{stroke}"/>"#)
}

/// A `<text>` element; `content` must already be escaped (numbers, or [`Escaped`]).
fn text(svg: &mut String, (x, y): (f64, f64), attributes: &str, content: impl fmt::Display) -> fmt::Result {
    writeln!(svg, r#"<text x="{x:.2}" y="{y:.2}" {attributes}>{content}</text>"#)
}

/// A vertical bar from `y_lo` to `y_hi` (pixels) with caps, if the half-width `ci` is usable.
fn error_bar(svg: &mut String, x: f64, y_lo: f64, y_hi: f64, ci: f64) -> fmt::Result {
    if !(ci.is_finite() && ci > 0.0 && y_lo.is_finite() && y_hi.is_finite()) {
        return Ok(());
    }
    let (l, r) = (x - 4.0, x + 4.0);
    writeln!(
        svg,
        r#"<path d="M{x:.2} {y_lo:.2}V{y_hi:.2}M{l:.2} {y_lo:.2}H{r:.2}M{l:.2} {y_hi:.2}H{r:.2}" fill="none"/>"#
    )
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

/// Legend rows to the right of the plot: a key drawn by `key` at the row's left end, then the label.
fn legend(
    svg: &mut String,
    f: &Frame,
    labels: &[&str],
    key: impl Fn(&mut String, usize, (f64, f64)) -> fmt::Result,
) -> fmt::Result {
    let lx = f.right + 16.0;
    for (i, label) in labels.iter().enumerate() {
        let ly = f.top + 8.0 + i as f64 * LEGEND_ROW;
        key(svg, i, (lx, ly))?;
        text(svg, (lx + 32.0, ly), r#"dy="0.35em""#, Escaped(label))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn error_bars(svg: &str) -> usize {
        svg.lines().filter(|l| l.starts_with("<path") && l.contains('V')).count()
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
        let svg = line_chart("Utilization vs. load", "offered load", "utilization", &sweep());
        well_formed(&svg);
        for text in
            [">Utilization vs. load<", ">offered load<", ">utilization<", ">MOV<", ">NOP &lt;base &amp; ref&gt;<"]
        {
            assert!(svg.contains(text), "missing {text}");
        }
        assert_eq!(svg.matches("<polyline").count(), 2);
        // Five error bars (vertical path segments): the third MOV point has none.
        assert_eq!(error_bars(&svg), 5);
        assert_eq!(line_chart("t", "x", "y", &sweep()), line_chart("t", "x", "y", &sweep()));

        let gap = Series {
            label: "gap".into(),
            points: vec![(0.0, 1.0, 0.1), (1.0, f64::NAN, 0.1), (2.0, 3.0, 0.1), (3.0, 2.0, 0.1)],
        };
        let svg = line_chart("t", "x", "y", &[gap]);
        assert_eq!((svg.matches("<polyline").count(), svg.matches("<circle").count(), error_bars(&svg)), (1, 4, 3));
    }

    #[test]
    fn bar_chart_groups_bars_per_category() {
        let categories: Vec<String> = ["NOP", "MOV", "MLIP", "MOML"].map(String::from).to_vec();
        let series = vec![
            BarSeries { label: "revenue".into(), values: vec![(3.0, 0.2), (4.5, 0.3), (-1.0, 0.4), (2.0, f64::NAN)] },
            BarSeries { label: "cost".into(), values: vec![(1.0, 0.1), (f64::NAN, 0.1)] },
        ];
        let svg = bar_chart("Policies", "money", &categories, &series);
        well_formed(&svg);
        for text in [">Policies<", ">money<", ">MLIP<", ">MOML<", ">revenue<", ">cost<"] {
            assert!(svg.contains(text), "missing {text}");
        }
        // Five bars plus the two legend swatches (background and frame rects carry no `stroke="none"`).
        assert_eq!(svg.matches(r#"stroke="none"/>"#).count(), 5);
        assert_eq!(error_bars(&svg), 4);
        assert_eq!(svg, bar_chart("Policies", "money", &categories, &series));
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
            well_formed(&line_chart("", "", "", &series));
        }
        let bars = |values: Vec<(f64, f64)>| vec![BarSeries { label: "b".into(), values }];
        well_formed(&bar_chart("empty", "y", &[], &bars(vec![(1.0, 1.0)])));
        well_formed(&bar_chart("none", "y", &["a".into()], &[]));
        well_formed(&bar_chart("neg", "y", &["a".into(), "b".into()], &bars(vec![(-3.0, 1.0), (-1.0, f64::NAN)])));
        well_formed(&bar_chart(
            "huge",
            "y",
            &["a".into(), "b".into()],
            &bars(vec![(f64::MAX, f64::MAX), (-f64::MAX, 1.0)]),
        ));
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
}
