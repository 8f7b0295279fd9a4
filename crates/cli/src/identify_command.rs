//! `armctl identify`: the base inertial parameters (and with `--friction` viscous and Coulomb
//! friction, with `--friction-position-harmonics K` its ripple over each joint's position) of an arm from a log of its motion: CSV (`armctl sim` and `armctl demo` write
//! `run.csv`) or a rosbag2 recording of sensor_msgs/JointState (bag directory, .db3 or .mcap). Writes the identified model
//! as a parameter file controller_node and `armctl sim --params` load, with plots of the
//! held-out part of the log beside it.

use std::path::PathBuf;

use anyhow::{Context, Result};
use armctl_ident::{identify, identify_with_instruments, IdentifyOptions, JointLog, Method};
use armctl_model::ChainOptions;
use clap::Args;
use serde::Serialize;

pub(crate) mod held_out_plots;

/// `armctl identify` arguments.
#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub(crate) struct IdentifyArgs {
    /// The URDF file (its geometry; its inertials are what is replaced).
    urdf: PathBuf,
    /// Tip link of the chain (default: the only leaf reached through moving joints).
    #[arg(long)]
    tip: Option<String>,
    /// The log: .csv (t, q_*, qd_*, qdd_*, effort_*), or a rosbag2 recording of
    /// sensor_msgs/JointState: a bag directory (with its metadata.yaml), a .db3 (SQLite) or an
    /// .mcap file.
    #[arg(long)]
    log: PathBuf,
    /// Topic of the joint states in a rosbag2 log (default /joint_states); a CSV log has none.
    #[arg(long)]
    topic: Option<String>,
    /// Identify viscous and Coulomb friction per joint too.
    #[arg(long)]
    friction: bool,
    /// Identify by instrumental variables (IDIM-IV): a CSV of the same run simulated on a
    /// previous estimate (positions and velocities, timed from its start as the log is from
    /// its own), as `armctl commission` writes `excite.instruments.csv`.
    #[arg(long)]
    instruments: Option<PathBuf>,
    /// With --friction: also this many harmonics of the Coulomb friction over each joint's
    /// position (a geared joint's eccentricity), at most 4.
    #[arg(long, default_value_t = 0)]
    friction_position_harmonics: usize,
    /// With --friction: also each joint's friction offset, the Coulomb level's asymmetry
    /// (sliding positively meets Coulomb + offset, negatively Coulomb - offset).
    #[arg(long)]
    friction_offset: bool,
    /// The estimate written: `consistent`, weighted least squares over bodies that exist
    /// (every link's mass positive, its pseudo-inertia positive semidefinite); or
    /// `least-squares`, unconstrained, kept for comparison and refused when no set of bodies
    /// has its values.
    #[arg(long, value_enum, default_value_t = MethodArg::Consistent)]
    method: MethodArg,
    /// Fraction of the log, at its end, kept out of the fit to check the model.
    #[arg(long, default_value_t = 0.2)]
    holdout: f64,
    /// Low-pass cutoff before differentiating, Hz.
    #[arg(long, default_value_t = 10.0)]
    cutoff: f64,
    /// Estimate a payload at the tip (mass and centre of mass) from the poses at rest in the
    /// log (`armctl excite --payload`), instead of the arm's own parameters: what the URDF's
    /// gravity and friction leave unexplained there.
    #[arg(long)]
    payload: bool,
    /// Parameter file to write (controller_node's `model_*` parameters; with --payload its
    /// `payload_*` ones).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print the results as JSON.
    #[arg(long)]
    json: bool,
}

/// `--method`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum MethodArg {
    Consistent,
    LeastSquares,
}

impl From<MethodArg> for Method {
    fn from(m: MethodArg) -> Self {
        match m {
            MethodArg::Consistent => Method::Consistent,
            MethodArg::LeastSquares => Method::LeastSquares,
        }
    }
}

#[derive(Debug, Serialize)]
struct Estimate {
    name: String,
    value: f64,
    std: f64,
    /// The unconstrained least-squares value.
    least_squares: f64,
}

/// How far the consistent estimate is from least squares.
#[derive(Debug, Serialize)]
struct Consistency {
    largest_parameter: String,
    largest_sigmas: f64,
    residual_increase: f64,
    least_squares_is_bodies: bool,
    evaluations: usize,
}

#[derive(Debug, Serialize)]
struct Report {
    robot: String,
    /// `consistent` or `least-squares`: the estimate written.
    method: &'static str,
    /// `idim-iv` (instrumental variables) or `wls` (on the measured regressor).
    estimator: &'static str,
    consistency: Consistency,
    /// The consistent fit's bodies, per link `[XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M]`.
    consistent_links: Vec<[f64; 10]>,
    samples: usize,
    condition_number: f64,
    base_parameters: Vec<Estimate>,
    viscous: Vec<f64>,
    coulomb: Vec<f64>,
    /// Per joint `[c_1, s_1, c_2, s_2, ..]` (empty without harmonics).
    friction_ripple: Vec<Vec<f64>>,
    /// Joints whose harmonics the log could not tell (left at zero).
    ripple_left_out: Vec<String>,
    /// Joints whose harmonics were scaled down to their Coulomb level.
    ripple_limited: Vec<String>,
    /// Per joint, the Coulomb level's asymmetry (empty without --friction-offset).
    friction_offset: Vec<f64>,
    /// Joints whose offset was cut to their Coulomb level less the harmonics.
    offset_limited: Vec<String>,
    /// Friction coefficients that came out negative within the noise, written as zero.
    friction_at_zero: Vec<String>,
    joint_noise: Vec<f64>,
    holdout_rms: Vec<f64>,
    holdout_relative: Vec<f64>,
    holdout_overall: f64,
    /// What was written: the parameter file, then the held-out plots beside it.
    files: Vec<PathBuf>,
}

fn read_log(args: &IdentifyArgs) -> Result<JointLog> {
    let extension = args
        .log
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default();
    let bag = args.log.is_dir()
        || ["mcap", "db3"]
            .iter()
            .any(|e| extension.eq_ignore_ascii_case(e));
    if bag {
        let topic = args.topic.as_deref().unwrap_or("/joint_states");
        return Ok(armctl_nodes::bag::read_joint_states(&args.log, topic)?);
    }
    if let Some(topic) = &args.topic {
        anyhow::bail!(
            "--topic {topic}: {} is a CSV log, which has no topics (--topic picks the joint states of a rosbag2 log)",
            args.log.display()
        );
    }
    Ok(JointLog::read_csv(&args.log)?)
}

pub(crate) fn run(args: &IdentifyArgs) -> Result<()> {
    if args.friction_position_harmonics > 0 && !args.friction {
        anyhow::bail!("--friction-position-harmonics needs --friction");
    }
    if args.friction_offset && !args.friction {
        anyhow::bail!("--friction-offset needs --friction");
    }
    let options = ChainOptions {
        tip_link: args.tip.clone(),
        ..ChainOptions::default()
    };
    let robot = crate::robot_file::load_robot(&args.urdf, &options)?;
    let log = read_log(args)?;
    if args.payload {
        let out = args.out.as_deref();
        return crate::payload_identify::run(&robot, &log, &args.log, out, args.json);
    }
    let options = IdentifyOptions {
        friction: args.friction,
        friction_harmonics: args.friction_position_harmonics,
        friction_offset: args.friction_offset,
        holdout: args.holdout,
        cutoff: args.cutoff,
        method: args.method.into(),
        ..IdentifyOptions::default()
    };
    let found = match &args.instruments {
        Some(path) => {
            identify_with_instruments(&robot, &log, &JointLog::read_csv(path)?, &options)?
        }
        None => identify(&robot, &log, &options)?,
    };
    let mut files = Vec::new();
    if let Some(out) = &args.out {
        let model = found.model();
        let comment = format!(
            "Identified by armctl identify ({}) from {} for {}",
            found.method.name(),
            args.log.display(),
            args.urdf.display()
        );
        // What controller_node would load: checked before it is written.
        model
            .apply(&robot)
            .context("the identified model does not apply to the URDF")?;
        std::fs::write(out, model.to_ros_parameters(&comment))
            .with_context(|| format!("writing {}", out.display()))?;
        files.push(out.clone());
        let names: Vec<String> = robot.joint_names().map(str::to_string).collect();
        let series = &found.holdout_series;
        let plots = held_out_plots::write_held_out_plots(out, &names, series, &options)?;
        files.extend(plots);
    }
    let gap = &found.consistency_gap;
    let report = Report {
        robot: robot.name().to_string(),
        method: found.method.name(),
        estimator: if found.instrumental_variables {
            "idim-iv"
        } else {
            "wls"
        },
        consistency: Consistency {
            largest_parameter: gap.largest_parameter.clone(),
            largest_sigmas: gap.largest_sigmas,
            residual_increase: gap.residual_increase,
            least_squares_is_bodies: gap.least_squares_is_bodies,
            evaluations: gap.evaluations,
        },
        consistent_links: found.consistent_links.clone(),
        samples: found.samples,
        condition_number: found.condition_number,
        base_parameters: found
            .base_names
            .iter()
            .zip(&found.base_values)
            .zip(&found.base_std)
            .zip(&found.least_squares_values)
            .map(|(((n, v), s), ls)| Estimate {
                name: n.clone(),
                value: *v,
                std: *s,
                least_squares: *ls,
            })
            .collect(),
        viscous: found.viscous,
        coulomb: found.coulomb,
        friction_ripple: found.friction_ripple,
        ripple_left_out: found.ripple_left_out,
        ripple_limited: found.ripple_limited,
        friction_offset: found.friction_offset,
        offset_limited: found.offset_limited,
        friction_at_zero: found
            .friction_at_zero
            .iter()
            .map(ToString::to_string)
            .collect(),
        joint_noise: found.joint_noise,
        holdout_rms: found.holdout_rms,
        holdout_relative: found.holdout_relative,
        holdout_overall: found.holdout_overall,
        files,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", render(&report));
        if !report.files.is_empty() {
            let files: Vec<String> = report
                .files
                .iter()
                .map(|f| f.display().to_string())
                .collect();
            println!("wrote: {}", files.join(", "));
        }
    }
    Ok(())
}

fn render(r: &Report) -> String {
    let mut out = format!(
        "{}: {} base parameters from {} samples, condition number {:.1}, {} fit{}\n\n{:>4}  {:<56} {:>13} {:>11} {:>8} {:>13}\n",
        r.robot,
        r.base_parameters.len(),
        r.samples,
        r.condition_number,
        r.method,
        if r.estimator == "idim-iv" {
            " by instrumental variables (IDIM-IV)"
        } else {
            ""
        },
        "#",
        "base parameter",
        "value",
        "std",
        "std %",
        "least squares"
    );
    for (k, e) in r.base_parameters.iter().enumerate() {
        let percent = 100.0 * e.std / e.value.abs().max(1e-300);
        out += &format!(
            "{:>4}  {:<56} {:>13.5e} {:>11.2e} {:>7.1}% {:>13.5e}\n",
            k + 1,
            e.name,
            e.value,
            e.std,
            percent,
            e.least_squares
        );
    }
    out += &consistency_line(&r.consistency);
    if !r.viscous.is_empty() {
        out += &format!(
            "\nviscous friction: {:?}\nCoulomb friction: {:?}\n",
            rounded(&r.viscous),
            rounded(&r.coulomb)
        );
    }
    for fixed in &r.friction_at_zero {
        out += &format!("{fixed}\n");
    }
    if !r.ripple_limited.is_empty() {
        out += &format!(
            "Coulomb harmonics scaled down to the Coulomb level for {} (the friction may push nowhere)\n",
            r.ripple_limited.join(", ")
        );
    }
    if !r.ripple_left_out.is_empty() {
        out += &format!(
            "Coulomb harmonics left out (zero) for {}: the log does not sweep enough of their range to tell them from the mean\n",
            r.ripple_left_out.join(", ")
        );
    }
    for (j, ripple) in r.friction_ripple.iter().enumerate() {
        out += &format!(
            "Coulomb harmonics of joint {} (cos, sin of 1q, 2q, ..): {:?}\n",
            j + 1,
            rounded(ripple)
        );
    }
    if !r.friction_offset.is_empty() {
        out += &format!(
            "friction offset (positive: sliding positively meets more): {:?}\n",
            rounded(&r.friction_offset)
        );
    }
    if !r.offset_limited.is_empty() {
        out += &format!(
            "friction offset cut to the Coulomb level less its harmonics for {} (the friction may push neither way)\n",
            r.offset_limited.join(", ")
        );
    }
    out += &format!("\nnoise per joint: {:?}\n", rounded(&r.joint_noise));
    if r.holdout_rms.is_empty() {
        out += "no held-out data (--holdout 0): the model is not checked on unseen samples\n";
    } else {
        out += &format!(
            "held-out effort error: {:.2}% overall; per joint RMS {:?}, relative {:?}\n",
            100.0 * r.holdout_overall,
            rounded(&r.holdout_rms),
            r.holdout_relative
                .iter()
                .map(|v| format!("{:.1}%", 100.0 * v))
                .collect::<Vec<_>>()
        );
    }
    out
}

/// What the consistent fit changed, in a line.
fn consistency_line(c: &Consistency) -> String {
    if c.least_squares_is_bodies {
        return "\nphysically consistent: every link a body that exists (mass positive, pseudo-inertia positive semidefinite), as least squares' values are\n".to_string();
    }
    format!(
        "\nphysically consistent: every link a body that exists (mass positive, pseudo-inertia positive semidefinite); least squares' values are not: the consistent fit moves {} by {:.1} std and leaves {:.2e} more of the weighted residual\n",
        c.largest_parameter, c.largest_sigmas, c.residual_increase
    )
}

fn rounded(v: &[f64]) -> Vec<String> {
    v.iter().map(|x| format!("{x:.4}")).collect()
}
