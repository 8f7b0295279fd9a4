//! Line charts of a run, as PNG and SVG (plotters, with an embedded DejaVu font so that no
//! system font is needed).

use std::path::{Path, PathBuf};
use std::sync::Once;

use anyhow::{anyhow, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;

/// Points drawn per series at most (longer runs are thinned evenly).
const MAX_POINTS: usize = 2000;

/// One curve.
pub(crate) struct Series<'a> {
    pub(crate) label: String,
    pub(crate) values: &'a [f64],
    /// Colour index (the same joint gets the same colour in every chart).
    pub(crate) color: usize,
    /// Drawn dashed (references).
    pub(crate) dashed: bool,
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

/// Writes `<stem>.png` and `<stem>.svg`; returns both paths.
pub(crate) fn line_chart(
    stem: &Path,
    title: &str,
    y_label: &str,
    time: &[f64],
    series: &[Series<'_>],
) -> Result<[PathBuf; 2]> {
    register_font();
    let png = stem.with_extension("png");
    let svg = stem.with_extension("svg");
    draw(
        BitMapBackend::new(&png, (1280, 720)).into_drawing_area(),
        title,
        y_label,
        time,
        series,
    )
    .map_err(|e| anyhow!("drawing {}: {e}", png.display()))?;
    draw(
        SVGBackend::new(&svg, (1280, 720)).into_drawing_area(),
        title,
        y_label,
        time,
        series,
    )
    .map_err(|e| anyhow!("drawing {}: {e}", svg.display()))?;
    Ok([png, svg])
}

/// Tick labels with enough digits for the span: plain decimals down to 0.01, else scientific
/// (plotters' default prints 2e-5 as "0.0").
fn tick_format(span: f64) -> impl Fn(f64) -> String {
    move |v: f64| {
        // A tick at zero computed as 1e-21 reads as zero.
        let v = if v.abs() < span * 1e-9 { 0.0 } else { v };
        if span >= 10.0 {
            format!("{v:.0}")
        } else if span >= 0.01 {
            let digits = (2.0 - span.log10().floor()).clamp(1.0, 4.0) as usize;
            format!("{v:.digits$}")
        } else {
            format!("{v:.1e}")
        }
    }
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    y_label: &str,
    time: &[f64],
    series: &[Series<'_>],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let step = time.len().div_ceil(MAX_POINTS).max(1);
    let (t0, t1) = (
        time.first().copied().unwrap_or(0.0),
        time.last().copied().unwrap_or(1.0),
    );
    let (mut lo, mut hi) = series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !lo.is_finite() {
        (lo, hi) = (-1.0, 1.0);
    }
    let pad = ((hi - lo) * 0.05).max(1e-12);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 26))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(90)
        .build_cartesian_2d(t0..t1.max(t0 + 1e-9), (lo - pad)..(hi + pad))?;
    let y_format = tick_format(hi - lo);
    chart
        .configure_mesh()
        .x_desc("time [s]")
        .y_desc(y_label)
        .y_label_formatter(&|v| y_format(*v))
        .label_style(("sans-serif", 15))
        .draw()?;
    for s in series {
        let color = Palette99::pick(s.color).mix(0.9);
        let points: Vec<(f64, f64)> = time
            .iter()
            .zip(s.values)
            .step_by(step)
            .map(|(&t, &v)| (t, v))
            .collect();
        let style = color.stroke_width(2);
        let drawn = if s.dashed {
            chart.draw_series(DashedLineSeries::new(points, 8, 5, style))?
        } else {
            // Segment by segment: a thick polyline joins its segments with mitres, and a
            // chattering signal (an effort flipping between its limits every step) turns
            // them into spikes far outside the axes.
            chart.draw_series(
                points
                    .windows(2)
                    .map(|w| PathElement::new(vec![w[0], w[1]], style)),
            )?
        };
        drawn.label(&s.label).legend(move |(x, y)| {
            PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
        });
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    root.present()
}

#[cfg(test)]
mod tests {
    use super::{draw, register_font, tick_format, Series};
    use plotters::prelude::*;

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
            draw(root, "efforts", "effort", &time, &series).unwrap();
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
        assert_eq!(tick_format(6e-5)(2e-5), "2.0e-5");
        assert_eq!(tick_format(0.5)(0.25), "0.250");
        assert_eq!(tick_format(30.0)(12.4), "12");
        assert_eq!(tick_format(6e-5)(-3.4e-21), "0.0e0");
    }
}
