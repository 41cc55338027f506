//! Figures: a [`Plot`] is data (named series of points, axis labels), serialized with the
//! results and drawn as SVG with `plotters` (SVG backend only: no fonts or system
//! libraries; text is left to the viewer).

use std::path::Path;

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use serde::{Deserialize, Serialize};

/// A line chart of one or more series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plot {
    /// The SVG's file name, beside the report (`goodput-vs-rtt.svg`).
    pub file: String,
    /// The caption.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// A logarithmic x axis (buffer sizes, loss rates); points with x <= 0 are dropped.
    pub log_x: bool,
    /// The lines.
    pub series: Vec<Series>,
}

/// One named line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// `(x, y)` in drawing order.
    pub points: Vec<(f64, f64)>,
}

const SIZE: (u32, u32) = (800, 480);

impl Plot {
    /// Draws the chart into `path` as SVG.
    pub fn render(&self, path: &Path) -> anyhow::Result<()> {
        let root = SVGBackend::new(path, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(to_anyhow)?;
        let (x0, x1, y1) = self.bounds();
        let mut builder = ChartBuilder::on(&root);
        builder
            .caption(&self.title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60);
        if self.log_x {
            self.draw_chart(&mut builder, (x0..x1).log_scale(), y1)?;
        } else {
            self.draw_chart(&mut builder, x0..x1, y1)?;
        }
        root.present().map_err(to_anyhow)?;
        Ok(())
    }

    /// The axes (x as `x_spec` gives it: linear or logarithmic), the mesh and the series.
    /// Generic because the two x axes are different types.
    fn draw_chart<'p, XS>(
        &self,
        builder: &mut ChartBuilder<'_, '_, SVGBackend<'p>>,
        x_spec: XS,
        y1: f64,
    ) -> anyhow::Result<()>
    where
        XS: AsRangedCoord<Value = f64>,
        XS::CoordDescType: ValueFormatter<f64>,
    {
        let mut chart = builder
            .build_cartesian_2d(x_spec, 0.0..y1)
            .map_err(to_anyhow)?;
        chart
            .configure_mesh()
            .x_desc(&self.x_label)
            .y_desc(&self.y_label)
            .draw()
            .map_err(to_anyhow)?;
        self.draw_series(&mut chart)
    }

    fn draw_series<'a, X>(
        &self,
        chart: &mut ChartContext<
            'a,
            SVGBackend<'a>,
            Cartesian2d<X, plotters::coord::types::RangedCoordf64>,
        >,
    ) -> anyhow::Result<()>
    where
        X: Ranged<ValueType = f64>,
    {
        for (i, s) in self.series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let points: Vec<(f64, f64)> = s
                .points
                .iter()
                .copied()
                .filter(|(x, y)| x.is_finite() && y.is_finite() && (!self.log_x || *x > 0.0))
                .collect();
            chart
                .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
                .map_err(to_anyhow)?
                .label(&s.name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
            chart
                .draw_series(
                    points
                        .into_iter()
                        .map(|p| Circle::new(p, 3, color.filled())),
                )
                .map_err(to_anyhow)?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(to_anyhow)?;
        Ok(())
    }

    /// `(x min, x max, y max)` over all points, never empty ranges.
    fn bounds(&self) -> (f64, f64, f64) {
        let points = self.series.iter().flat_map(|s| s.points.iter());
        let usable =
            points.filter(|(x, y)| x.is_finite() && y.is_finite() && (!self.log_x || *x > 0.0));
        let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
        for (x, y) in usable {
            x0 = x0.min(*x);
            x1 = x1.max(*x);
            y1 = y1.max(*y);
        }
        if !x0.is_finite() {
            (x0, x1) = (1.0, 2.0);
        }
        if x1 <= x0 {
            x1 = if self.log_x { x0 * 10.0 } else { x0 + 1.0 };
        }
        (x0, x1, if y1 > 0.0 { y1 * 1.1 } else { 1.0 })
    }
}

fn to_anyhow<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow::anyhow!("plotting: {e:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_svg_linear_and_log() {
        let dir = std::env::temp_dir().join(format!("udt-lab-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for log_x in [false, true] {
            let plot = Plot {
                file: "p.svg".into(),
                title: "goodput".into(),
                x_label: "RTT (ms)".into(),
                y_label: "Mbit/s".into(),
                log_x,
                series: vec![
                    Series {
                        name: "a".into(),
                        points: vec![(0.0, 1.0), (10.0, 5.0), (100.0, 3.0)],
                    },
                    Series {
                        name: "empty".into(),
                        points: vec![],
                    },
                ],
            };
            let path = dir.join("p.svg");
            plot.render(&path).unwrap();
            let svg = std::fs::read_to_string(&path).unwrap();
            assert!(svg.starts_with("<svg") && svg.contains("RTT (ms)"));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
