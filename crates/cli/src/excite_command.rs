//! `armctl excite`: an exciting trajectory for identification, a Fourier series per joint
//! within the arm's limits, chosen for a well-conditioned base regressor. Follow it with
//! `armctl sim --trajectory FILE` (or send it to controller_node) and log the motion.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use armctl_ident::{excitation, ExcitationLimits};
use armctl_model::{ChainOptions, Robot};
use clap::Args;

/// `armctl excite` arguments.
#[derive(Debug, Args)]
pub(crate) struct ExciteArgs {
    /// The URDF file.
    urdf: PathBuf,
    /// Tip link of the chain (default: the only leaf reached through moving joints).
    #[arg(long)]
    tip: Option<String>,
    /// How long to run it, s (several periods average the noise out).
    #[arg(long, default_value_t = 60.0)]
    duration: f64,
    /// Period of the series, s.
    #[arg(long, default_value_t = 10.0)]
    period: f64,
    /// Harmonics per joint.
    #[arg(long, default_value_t = 5)]
    harmonics: usize,
    /// Fraction of each joint's range used, about its middle.
    #[arg(long, default_value_t = 0.8)]
    range: f64,
    /// Fraction of each joint's velocity limit.
    #[arg(long, default_value_t = 0.8)]
    velocity: f64,
    /// Largest acceleration, rad/s^2 (m/s^2).
    #[arg(long, default_value_t = 6.0)]
    acceleration: f64,
    /// Seed of the search.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output file (YAML).
    #[arg(long, default_value = "out/excitation.yaml")]
    out: PathBuf,
}

pub(crate) fn run(args: &ExciteArgs) -> Result<()> {
    if !(args.duration > 0.0
        && args.period > 0.0
        && (0.0..=1.0).contains(&args.range)
        && (0.0..=1.0).contains(&args.velocity)
        && args.acceleration > 0.0)
    {
        bail!("--duration, --period and --acceleration must be positive, --range and --velocity within [0, 1]");
    }
    let options = ChainOptions {
        tip_link: args.tip.clone(),
        ..ChainOptions::default()
    };
    let robot = Robot::from_urdf_file(&args.urdf, &options)
        .with_context(|| format!("loading {}", args.urdf.display()))?;
    let limits = ExcitationLimits {
        range: args.range,
        velocity: args.velocity,
        acceleration: args.acceleration,
    };
    let found = excitation(&robot, 1.0 / args.period, args.harmonics, limits, args.seed)?;
    if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(&args.out, found.to_yaml(&robot, args.duration)?)
        .with_context(|| format!("writing {}", args.out.display()))?;
    println!(
        "{}: {} harmonics, period {} s, condition number of the base regressor {:.1} -> {}",
        robot.name(),
        args.harmonics,
        args.period,
        found.condition_number,
        args.out.display()
    );
    Ok(())
}
