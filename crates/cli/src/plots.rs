//! Line charts of a run, as PNG and SVG (plotters, with an embedded DejaVu font so that no
//! system font is needed). The legend has a strip of its own beside the charts, so it hides
//! no curve; dashed curves (references) are drawn last, in a darker shade, so that a measured
//! curve on top of its reference does not bury it.

use std::path::{Path, PathBuf};
use std::sync::Once;

use anyhow::{anyhow, Result};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontStyle;

/// Points drawn per series at most (longer runs are thinned evenly).
const MAX_POINTS: usize = 2000;
/// Figure width, px.
const WIDTH: u32 = 1280;
/// Height of a figure of one row of charts, px; more rows get `ROW_HEIGHT` each.
const HEIGHT: u32 = 720;
const ROW_HEIGHT: u32 = 320;
/// Dash and gap of dashed curves, px (the legend's samples use the same).
const DASH: (u32, u32) = (8, 5);
const LEGEND_FONT_SIZE: u32 = 14;
const LEGEND_ROW: u32 = 22;
/// Length of a legend entry's line sample, px: long enough for three dashes.
const LEGEND_SAMPLE: i32 = 40;
/// Space around the legend's entries and between sample and label, px.
const LEGEND_PAD: u32 = 10;

/// Tableau 10: distinct on white (Palette99's yellow and cyan were hard to see).
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// One curve; a value that is not finite (NaN) leaves a gap.
#[derive(Clone)]
pub(crate) struct Series<'a> {
    pub(crate) label: String,
    pub(crate) values: &'a [f64],
    /// Colour index (the same joint gets the same colour in every chart).
    pub(crate) color: usize,
    /// Drawn dashed (references).
    pub(crate) dashed: bool,
}

/// One chart of a figure, with its own y axis.
pub(crate) struct Panel<'a> {
    /// Above the chart (may be empty).
    pub(crate) title: String,
    pub(crate) y_label: String,
    pub(crate) series: Vec<Series<'a>>,
}

fn register_font() {
    static FONT: Once = Once::new();
    FONT.call_once(|| {
        // Registering the embedded font cannot fail for a valid TTF; a failure only loses text.
        let _ = register_font_file();
    });
}

fn register_font_file() -> Result<(), String> {
    plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
        .map_err(|_| "invalid font".to_string())
}

/// Writes `<stem>.png` and `<stem>.svg` (one chart); returns both paths.
pub(crate) fn line_chart(
    stem: &Path,
    title: &str,
    y_label: &str,
    time: &[f64],
    series: &[Series<'_>],
) -> Result<[PathBuf; 2]> {
    let panel = Panel {
        title: String::new(),
        y_label: y_label.to_string(),
        series: series.to_vec(),
    };
    panel_chart(stem, title, time, &[panel])
}

/// Writes `<stem>.png` and `<stem>.svg`: the panels in a grid under `title`, one legend for
/// all beside them; returns both paths.
pub(crate) fn panel_chart(
    stem: &Path,
    title: &str,
    time: &[f64],
    panels: &[Panel<'_>],
) -> Result<[PathBuf; 2]> {
    register_font();
    let [png, svg] = ["png", "svg"].map(|extension| appended(stem, extension));
    let size = figure_size(panels.len());
    draw(
        BitMapBackend::new(&png, size).into_drawing_area(),
        title,
        time,
        panels,
    )
    .map_err(|e| anyhow!("drawing {}: {e}", png.display()))?;
    draw(
        SVGBackend::new(&svg, size).into_drawing_area(),
        title,
        time,
        panels,
    )
    .map_err(|e| anyhow!("drawing {}: {e}", svg.display()))?;
    Ok([png, svg])
}

/// `stem.extension`, keeping any dot already in the stem (`model.v2_torques.png`).
fn appended(stem: &Path, extension: &str) -> PathBuf {
    let mut name = stem.as_os_str().to_owned();
    name.push(".");
    name.push(extension);
    PathBuf::from(name)
}

/// Rows and columns of the grid: one column for up to two charts, else two.
fn grid(panels: usize) -> (usize, usize) {
    let columns = if panels <= 2 { 1 } else { 2 };
    (panels.div_ceil(columns).max(1), columns)
}

fn figure_size(panels: usize) -> (u32, u32) {
    let rows = grid(panels).0 as u32;
    (WIDTH, HEIGHT.max(60 + ROW_HEIGHT * rows))
}

/// Tick labels with enough digits for the axis `lo..hi`: plain decimals down to a span of
/// 0.01, and for a narrow span far from zero (a tip coordinate that moves by millimetres),
/// else scientific (plotters' default prints 2e-5 as "0.0").
fn tick_format(lo: f64, hi: f64) -> impl Fn(f64) -> String {
    let span = hi - lo;
    let offset = lo.abs().max(hi.abs()) >= 10.0 * span;
    move |v: f64| {
        // A tick at zero computed as 1e-21 reads as zero.
        let v = if v.abs() < span * 1e-9 { 0.0 } else { v };
        if span >= 10.0 {
            format!("{v:.0}")
        } else if span >= 0.01 || (offset && span >= 1e-7) {
            let digits = (2.0 - span.log10().floor()).clamp(1.0, 9.0) as usize;
            format!("{v:.digits$}")
        } else {
            format!("{v:.1e}")
        }
    }
}

fn hue(index: usize) -> RGBColor {
    PALETTE[index % PALETTE.len()]
}

fn darker(c: RGBColor) -> RGBColor {
    let shade = |v: u8| (f64::from(v) * 0.55) as u8;
    RGBColor(shade(c.0), shade(c.1), shade(c.2))
}

/// Measured curves wide in their hue; dashed ones narrower and darker, to show on top of them.
fn line_style(s: &Series<'_>) -> ShapeStyle {
    if s.dashed {
        darker(hue(s.color)).stroke_width(2)
    } else {
        hue(s.color).stroke_width(3)
    }
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    time: &[f64],
    panels: &[Panel<'_>],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let body = root.margin(8, 0, 0, 0).titled(title, ("sans-serif", 26))?;
    let entries = legend_entries(panels);
    let layout = legend_layout(&body, &entries)?;
    let (charts, strip) = body.split_horizontally(body.dim_in_pixel().0 - layout.width);
    for (area, panel) in charts.split_evenly(grid(panels.len())).iter().zip(panels) {
        draw_panel(area, panel, time)?;
    }
    draw_legend(&strip, &layout, &entries)?;
    root.present()
}

/// The distinct curves of the figure, in order: charts that share curves share entries.
fn legend_entries<'p, 'a>(panels: &'p [Panel<'a>]) -> Vec<&'p Series<'a>> {
    let mut entries: Vec<&Series<'a>> = Vec::new();
    for s in panels.iter().flat_map(|p| &p.series) {
        let same =
            |e: &&Series<'_>| e.label == s.label && e.color == s.color && e.dashed == s.dashed;
        if !entries.iter().any(same) {
            entries.push(s);
        }
    }
    entries
}

fn legend_font() -> TextStyle<'static> {
    TextStyle::from(("sans-serif", f64::from(LEGEND_FONT_SIZE)).into_font())
}

/// Where the legend's entries go: `rows` per column, columns side by side.
struct LegendLayout {
    rows: usize,
    column_width: u32,
    /// Of the whole strip (0 without entries).
    width: u32,
}

fn legend_layout<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[&Series<'_>],
) -> Result<LegendLayout, DrawingAreaErrorKind<DB::ErrorType>> {
    let font = legend_font();
    let mut text = 0;
    for e in entries {
        text = text.max(area.estimate_text_size(&e.label, &font)?.0);
    }
    let fitting = (area.dim_in_pixel().1.saturating_sub(3 * LEGEND_PAD) / LEGEND_ROW).max(1);
    let columns = entries.len().div_ceil(fitting as usize).max(1);
    let column_width = LEGEND_SAMPLE as u32 + 2 * LEGEND_PAD + text;
    let width = if entries.is_empty() {
        0
    } else {
        columns as u32 * column_width + 2 * LEGEND_PAD
    };
    Ok(LegendLayout {
        rows: entries.len().div_ceil(columns),
        column_width,
        width,
    })
}

/// A framed list of line samples and labels, level with the top of the charts.
fn draw_legend<DB: DrawingBackend>(
    strip: &DrawingArea<DB, Shift>,
    layout: &LegendLayout,
    entries: &[&Series<'_>],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    if entries.is_empty() {
        return Ok(());
    }
    let pad = LEGEND_PAD as i32;
    let (top, bottom) = (pad, 2 * pad + (layout.rows as u32 * LEGEND_ROW) as i32);
    let right = (layout.width - LEGEND_PAD) as i32;
    strip.draw(&Rectangle::new(
        [(0, top), (right, bottom)],
        BLACK.stroke_width(1),
    ))?;
    for (k, entry) in entries.iter().enumerate() {
        let (column, row) = (k / layout.rows, k % layout.rows);
        let x = pad + (column as u32 * layout.column_width) as i32;
        let y = top + pad / 2 + (row as u32 * LEGEND_ROW + LEGEND_ROW / 2) as i32;
        draw_sample(strip, entry, (x, y))?;
        let label = legend_font().pos(Pos::new(HPos::Left, VPos::Center));
        let label_x = x + LEGEND_SAMPLE + pad;
        strip.draw(&Text::new(entry.label.clone(), (label_x, y), label))?;
    }
    Ok(())
}

/// The curve's line as it is drawn in the charts, dashed or not.
fn draw_sample<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: &Series<'_>,
    (x, y): (i32, i32),
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let points = [(x, y), (x + LEGEND_SAMPLE, y)];
    if s.dashed {
        area.draw(&DashedPathElement::new(
            points,
            DASH.0,
            DASH.1,
            line_style(s),
        ))
    } else {
        area.draw(&PathElement::new(points, line_style(s)))
    }
}

/// The smallest and largest finite value of the curves, padded by 5 % ([-1, 1] if none).
fn value_range(series: &[Series<'_>]) -> (f64, f64) {
    let (lo, hi) = series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !lo.is_finite() {
        return (-1.0, 1.0);
    }
    let pad = ((hi - lo) * 0.05).max(1e-12);
    (lo - pad, hi + pad)
}

type Chart<'c, DB> = ChartContext<'c, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel<'_>,
    time: &[f64],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (t0, t1) = (
        time.first().copied().unwrap_or(0.0),
        time.last().copied().unwrap_or(1.0),
    );
    let (lo, hi) = value_range(&panel.series);
    let mut builder = ChartBuilder::on(area);
    if !panel.title.is_empty() {
        builder.caption(&panel.title, ("sans-serif", 18));
    }
    let mut chart = builder
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(90)
        .build_cartesian_2d(t0..t1.max(t0 + 1e-9), lo..hi)?;
    let y_format = tick_format(lo, hi);
    chart
        .configure_mesh()
        .x_desc("time [s]")
        .y_desc(&panel.y_label)
        .y_label_formatter(&|v| y_format(*v))
        .label_style(("sans-serif", 15))
        .light_line_style(BLACK.mix(0.05))
        .draw()?;
    // References last: on top of the measured curves that follow them.
    let solid = panel.series.iter().filter(|s| !s.dashed);
    for s in solid.chain(panel.series.iter().filter(|s| s.dashed)) {
        draw_curve(&mut chart, s, time)?;
    }
    Ok(())
}

fn draw_curve<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    s: &Series<'_>,
    time: &[f64],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let step = time.len().div_ceil(MAX_POINTS).max(1);
    let points: Vec<(f64, f64)> = time
        .iter()
        .zip(s.values)
        .step_by(step)
        .map(|(&t, &v)| (t, v))
        .collect();
    let style = line_style(s);
    // A value that is not finite is a gap in the curve.
    let runs = points
        .split(|p| !p.1.is_finite())
        .filter(|run| run.len() > 1);
    for run in runs {
        if s.dashed {
            chart.draw_series(DashedLineSeries::new(run.to_vec(), DASH.0, DASH.1, style))?;
        } else {
            // Segment by segment: a thick polyline joins its segments with mitres, and a
            // chattering signal (an effort flipping between its limits every step) turns
            // them into spikes far outside the axes.
            chart.draw_series(
                run.windows(2)
                    .map(|w| PathElement::new(vec![w[0], w[1]], style)),
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{darker, draw, hue, register_font, tick_format, Panel, Series};
    use plotters::prelude::*;

    fn one_panel<'a>(series: &[Series<'a>]) -> [Panel<'a>; 1] {
        [Panel {
            title: String::new(),
            y_label: "value".into(),
            series: series.to_vec(),
        }]
    }

    fn svg_of(time: &[f64], panels: &[Panel<'_>]) -> String {
        register_font();
        let mut text = String::new();
        {
            let root = SVGBackend::with_string(&mut text, (1280, 720)).into_drawing_area();
            draw(root, "chart", time, panels).unwrap();
        }
        text
    }

    /// The value of attribute `name` in `tag`.
    fn attribute<'t>(tag: &'t str, name: &str) -> &'t str {
        let start = tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        let end = start + tag[start..].find('"').unwrap();
        &tag[start..end]
    }

    /// Each polyline's stroke colour and points, in drawing order.
    fn polylines(svg: &str) -> Vec<(String, Vec<(f64, f64)>)> {
        svg.split("<polyline")
            .skip(1)
            .map(|tag| {
                let points = attribute(tag, "points")
                    .split_whitespace()
                    .map(|p| {
                        let (x, y) = p.split_once(',').unwrap();
                        (x.parse().unwrap(), y.parse().unwrap())
                    })
                    .collect();
                (attribute(tag, "stroke").to_string(), points)
            })
            .collect()
    }

    /// Where the label `text` is drawn.
    fn text_position(svg: &str, text: &str) -> (f64, f64) {
        let end = svg.find(&format!(">\n{text}\n</text>")).unwrap();
        let tag = &svg[svg[..end].rfind("<text").unwrap()..end];
        let number = |name| attribute(tag, name).parse::<f64>().unwrap();
        (number("x"), number("y"))
    }

    fn hex(c: RGBColor) -> String {
        format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
    }

    fn sine() -> (Vec<f64>, Vec<f64>) {
        let time: Vec<f64> = (0..500).map(|k| f64::from(k) * 1e-2).collect();
        let values = time.iter().map(|t| t.sin()).collect();
        (time, values)
    }

    /// A reference listed before the measured curve that hides it is still drawn after it,
    /// dashed (many short pieces) and in a colour of its own.
    #[test]
    fn references_are_drawn_dashed_on_top_of_the_measured_curves() {
        let (time, values) = sine();
        let series = [
            Series {
                label: "q ref".into(),
                values: &values,
                color: 0,
                dashed: true,
            },
            Series {
                label: "q".into(),
                values: &values,
                color: 0,
                dashed: false,
            },
        ];
        let svg = svg_of(&time, &one_panel(&series));
        // The curves, not the legend's samples (drawn after them).
        let legend_left = text_position(&svg, "q").0 - 60.0;
        let lines: Vec<_> = polylines(&svg)
            .into_iter()
            .filter(|(_, points)| points.iter().all(|p| p.0 < legend_left))
            .collect();
        let (measured, reference) = (hex(hue(0)), hex(darker(hue(0))));
        assert_ne!(measured, reference);
        let last_measured = lines.iter().rposition(|(c, _)| *c == measured).unwrap();
        let first_reference = lines.iter().position(|(c, _)| *c == reference).unwrap();
        assert!(first_reference > last_measured);
        let dashes = lines.iter().filter(|(c, _)| *c == reference).count();
        assert!(dashes > 20, "{dashes} pieces of the dashed reference");
    }

    /// The legend's sample of a dashed curve is dashed (several pieces), a solid one's one line;
    /// each sample sits left of its label.
    #[test]
    fn the_legend_shows_dashed_curves_dashed() {
        let (time, values) = sine();
        let series = [
            Series {
                label: "measured".into(),
                values: &values,
                color: 0,
                dashed: false,
            },
            Series {
                label: "reference".into(),
                values: &values,
                color: 1,
                dashed: true,
            },
        ];
        let svg = svg_of(&time, &one_panel(&series));
        let lines = polylines(&svg);
        let sample_pieces = |label: &str, color: RGBColor| {
            let (x, y) = text_position(&svg, label);
            lines
                .iter()
                .filter(|(c, points)| {
                    *c == hex(color) && points.iter().all(|p| p.1 == y && p.0 < x && p.0 > x - 60.0)
                })
                .count()
        };
        assert_eq!(sample_pieces("measured", hue(0)), 1);
        assert!(sample_pieces("reference", darker(hue(1))) >= 3);
    }

    /// No curve enters the legend: every point right of the legend's left edge is a sample on
    /// a label's row.
    #[test]
    fn the_legend_hides_no_curve() {
        let time: Vec<f64> = (0..500).map(|k| f64::from(k) * 1e-2).collect();
        let rising: Vec<f64> = time.clone();
        let names: Vec<String> = (1..=7).map(|j| format!("joint{j}")).collect();
        let series: Vec<Series<'_>> = names
            .iter()
            .enumerate()
            .map(|(j, name)| Series {
                label: name.clone(),
                values: &rising,
                color: j,
                dashed: false,
            })
            .collect();
        let svg = svg_of(&time, &one_panel(&series));
        let labels: Vec<(f64, f64)> = names.iter().map(|n| text_position(&svg, n)).collect();
        let legend_left = labels.iter().map(|p| p.0).fold(f64::INFINITY, f64::min) - 60.0;
        let on_a_row = |y: f64| labels.iter().any(|l| l.1 == y);
        let mut curve_points = 0;
        for (_, points) in polylines(&svg) {
            for &(x, y) in &points {
                assert!(
                    x < legend_left || on_a_row(y),
                    "({x}, {y}) is under the legend"
                );
                curve_points += usize::from(x < legend_left);
            }
        }
        assert!(curve_points > 1000);
    }

    /// An effort that flips between its limits every step stays inside the axes: the image's
    /// outer margin stays white (mitred joins drew spikes to the image's edges).
    #[test]
    fn a_chattering_series_is_drawn_inside_the_axes() {
        register_font();
        let (width, height) = (640u32, 360u32);
        // Several points per pixel column, as a 1 kHz run of seconds has.
        let time: Vec<f64> = (0..2000).map(|k| f64::from(k) * 1e-3).collect();
        let chatter: Vec<f64> = (0..2000)
            .map(|k| if k % 2 == 0 { 87.0 } else { -87.0 })
            .collect();
        let series = [Series {
            label: "joint1".into(),
            values: &chatter,
            color: 0,
            dashed: false,
        }];
        let mut pixels = vec![0u8; (width * height * 3) as usize];
        {
            let root = BitMapBackend::with_buffer(&mut pixels, (width, height)).into_drawing_area();
            draw(root, "efforts", &time, &one_panel(&series)).unwrap();
        }
        let white_row = |y: u32| {
            let row = &pixels[(y * width * 3) as usize..((y + 1) * width * 3) as usize];
            row.iter().all(|&c| c == 255)
        };
        for y in (0..6).chain(height - 6..height) {
            assert!(white_row(y), "row {y} has ink outside the chart");
        }
    }

    #[test]
    fn tick_labels_keep_small_values_apart() {
        assert_eq!(tick_format(-3e-5, 3e-5)(2e-5), "2.0e-5");
        assert_eq!(tick_format(0.0, 0.5)(0.25), "0.250");
        assert_eq!(tick_format(0.0, 30.0)(12.4), "12");
        assert_eq!(tick_format(-3e-5, 3e-5)(-3.4e-21), "0.0e0");
        // A coordinate that moves by millimetres far from zero: the ticks differ.
        let narrow = tick_format(0.578, 0.583);
        assert_eq!(narrow(0.579), "0.57900");
        assert_ne!(narrow(0.579), narrow(0.580));
    }
}
