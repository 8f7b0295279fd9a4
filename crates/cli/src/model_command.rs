//! `armctl model`: the MDH table, base and tool transforms and link inertials of a URDF.

use std::path::PathBuf;

use anyhow::{Context, Result};
use armctl_model::{urdf_file_to_robot, BranchPolicy, ChainOptions, Conversion};
use clap::Args;
use nalgebra::IsometryMatrix3;

use crate::model_json::ModelJson;

/// Arguments shared by every command that loads a URDF.
#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub(crate) struct UrdfArgs {
    /// The URDF file.
    pub(crate) urdf: PathBuf,
    /// Base link of the chain (default: the root link).
    #[arg(long)]
    pub(crate) base: Option<String>,
    /// Tip link of the chain (default: the only leaf reached through moving joints).
    #[arg(long)]
    pub(crate) tip: Option<String>,
    /// Drop moving joints off the chain (grippers, fingers) instead of locking them with
    /// their mass kept.
    #[arg(long)]
    pub(crate) drop_branches: bool,
    /// Lock an off-chain joint at a position (default 0, or the nearest limit): JOINT=VALUE.
    #[arg(long = "lock", value_name = "JOINT=VALUE", value_parser = parse_lock)]
    pub(crate) locks: Vec<(String, f64)>,
    /// Tolerance (rad, m) for parallel, intersecting and collinear axes.
    #[arg(long, default_value_t = 1e-9)]
    pub(crate) tolerance: f64,
    /// For a .xacro file: arguments for the xacro program, `name:=value` (repeatable).
    #[arg(long = "xacro-arg", value_name = "NAME:=VALUE")]
    pub(crate) xacro_args: Vec<String>,
}

fn parse_lock(text: &str) -> Result<(String, f64), String> {
    let (joint, value) = text
        .split_once('=')
        .ok_or_else(|| format!("expected JOINT=VALUE, got '{text}'"))?;
    let value: f64 = value
        .trim()
        .parse()
        .map_err(|e| format!("'{value}' is not a number: {e}"))?;
    Ok((joint.trim().to_string(), value))
}

impl UrdfArgs {
    pub(crate) fn options(&self) -> ChainOptions {
        ChainOptions {
            base_link: self.base.clone(),
            tip_link: self.tip.clone(),
            branches: if self.drop_branches {
                BranchPolicy::Drop
            } else {
                BranchPolicy::Lock
            },
            locked_positions: self.locks.iter().cloned().collect(),
            tolerance: self.tolerance,
            xacro_args: self.xacro_args.clone(),
        }
    }

    /// The conversion; its warnings are for the caller to show.
    pub(crate) fn load(&self) -> Result<Conversion> {
        urdf_file_to_robot(&self.urdf, &self.options())
            .with_context(|| format!("loading {}", self.urdf.display()))
    }

    /// The robot, the conversion's warnings printed to stderr.
    pub(crate) fn load_robot(&self) -> Result<armctl_model::Robot> {
        crate::robot_file::load_robot(&self.urdf, &self.options())
    }
}

/// `armctl model` arguments.
#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub(crate) struct ModelArgs {
    #[command(flatten)]
    urdf: UrdfArgs,
    /// Print JSON (schema in docs/cli.md) instead of tables.
    #[arg(long)]
    json: bool,
    /// Print the closed forms of M, C and G (arms of up to three joints), in the MDH
    /// parameters and link parameters, by the Lagrange-Euler route.
    #[arg(long, conflicts_with = "json")]
    closed_form: bool,
}

pub(crate) fn run(args: &ModelArgs) -> Result<()> {
    let conversion = args.urdf.load()?;
    if args.closed_form {
        let form = armctl_dynamics::ClosedForm::new(&conversion.robot)?;
        print!("{}", form.render(&conversion.robot));
        return Ok(());
    }
    if args.json {
        let json = ModelJson::new(&conversion, args.urdf.options().branches);
        println!("{}", serde_json::to_string_pretty(&json)?);
        // In the JSON's `warnings` too; said on stderr, where a reader piping the JSON sees them.
        for warning in &conversion.report.warnings {
            eprintln!("warning: {warning}");
        }
    } else {
        print!("{}", render(&conversion, args.urdf.options().branches));
    }
    Ok(())
}

/// Rounding noise (below 1e-12) shown as zero, without a sign.
fn tidy(v: f64) -> f64 {
    if v.abs() < 1e-12 {
        0.0
    } else {
        v
    }
}

fn limit(v: f64) -> String {
    if v.is_finite() {
        format!("{v:9.4}")
    } else {
        format!("{:>9}", if v > 0.0 { "inf" } else { "-inf" })
    }
}

fn render_pose(name: &str, pose: &IsometryMatrix3<f64>) -> String {
    let m = pose.to_homogeneous();
    let mut out = format!("{name}:\n");
    for r in 0..4 {
        let row: Vec<String> = (0..4)
            .map(|c| format!("{:10.6}", tidy(m[(r, c)])))
            .collect();
        out += &format!("  [{}]\n", row.join(" "));
    }
    out
}

/// The human-readable report.
fn render(conversion: &Conversion, branches: BranchPolicy) -> String {
    let robot = &conversion.robot;
    let report = &conversion.report;
    let mut out = format!(
        "robot '{}': {} joints, base link '{}', tip link '{}'\n\
         modified D-H (Craig): T = RotX(alpha) TransX(a) RotZ(theta) TransZ(d); revolute angle = theta + q, prismatic offset = d + q\n\n",
        robot.name(),
        robot.dof(),
        robot.base_link(),
        robot.tip_link()
    );
    out += &format!(
        "{:>3} {:<22} {:<9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}  frame\n",
        "i", "joint", "type", "a", "alpha", "d", "theta", "lower", "upper", "velocity", "effort"
    );
    for (i, j) in robot.joints().iter().enumerate() {
        let m = &j.mdh;
        out += &format!(
            "{:>3} {:<22} {:<9} {:9.4} {:9.4} {:9.4} {:9.4} {} {} {:9.3} {:9.3}  {}\n",
            i + 1,
            j.name,
            j.kind.as_str(),
            m.a(),
            m.alpha(),
            m.d(),
            m.theta(),
            limit(j.limits.lower),
            limit(j.limits.upper),
            j.limits.velocity,
            j.limits.effort,
            if report.urdf_frame_kept[i + 1] {
                "urdf"
            } else {
                "default"
            },
        );
    }
    out += &format!(
        "\n{}{}",
        render_pose("base (base link -> frame {0})", robot.base()),
        render_pose("tool (frame {n} -> tip)", robot.tool())
    );
    out += &format!(
        "\n{:>3} {:<22} {:>9}  {:<32} inertia about COM [xx xy xz yy yz zz] (frame i)\n",
        "i", "link of joint", "mass", "com (frame i)"
    );
    for (i, (j, l)) in robot.joints().iter().zip(robot.links()).enumerate() {
        let c = l.com.map(tidy);
        let t = l.inertia_com.map(tidy);
        out += &format!(
            "{:>3} {:<22} {:9.4}  [{:9.5} {:9.5} {:9.5}]  [{:.4e} {:.4e} {:.4e} {:.4e} {:.4e} {:.4e}]\n",
            i + 1, j.name, l.mass, c.x, c.y, c.z, t[(0, 0)], t[(0, 1)], t[(0, 2)], t[(1, 1)], t[(1, 2)], t[(2, 2)]
        );
    }
    out += &format!("\noff-chain moving joints: {}\n", branches.as_str());
    for (joint, q) in &report.chain.locked {
        out += &format!("  locked {joint} at {q}\n");
    }
    if !report.chain.dropped.is_empty() {
        out += &format!("  dropped links: {}\n", report.chain.dropped.join(", "));
    }
    for (link, joint) in &report.chain.lumped {
        out += &format!("  lumped {link} into the link of {joint}\n");
    }
    out += &format!(
        "tip pose check against the URDF: max difference {:.1e}\n",
        report.fk_residual
    );
    for w in &report.warnings {
        out += &format!("warning: {w}\n");
    }
    out
}
