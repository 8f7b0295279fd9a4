//! `armctl identify --payload`: a tool's mass and centre of mass (tip frame) from a log of the
//! arm resting in a few poses (`armctl excite --payload` gives them), with the uncertainty the
//! fit achieved; `--out` writes them as controller_node's `payload_*` parameters.

use std::path::Path;

use anyhow::{Context, Result};
use armctl_ident::{estimate_payload, rest_samples, JointLog, PayloadEstimate};
use armctl_model::Robot;
use serde::Serialize;

#[derive(Debug, Serialize)]
struct PayloadReport {
    robot: String,
    poses: usize,
    mass: f64,
    mass_std: f64,
    com: [f64; 3],
    com_std: [f64; 3],
    residual_rms: f64,
}

/// Estimates the payload from `log`, prints it (JSON with `json`) and writes the parameter
/// file `out`.
pub(crate) fn run(
    robot: &Robot,
    log: &JointLog,
    source: &Path,
    out: Option<&Path>,
    json: bool,
) -> Result<()> {
    let samples = rest_samples(robot, log)?;
    let found = estimate_payload(robot, &samples)?;
    if let Some(out) = out {
        let comment = format!(
            "Payload estimated by armctl identify --payload from {} ({} poses at rest)",
            source.display(),
            found.poses
        );
        std::fs::write(out, parameter_file(&found, &comment))
            .with_context(|| format!("writing {}", out.display()))?;
    }
    let report = PayloadReport {
        robot: robot.name().to_string(),
        poses: found.poses,
        mass: found.payload.mass,
        mass_std: found.mass_std,
        com: found.payload.com.into(),
        com_std: found.com_std.into(),
        residual_rms: found.residual_rms,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "{}: payload from {} poses at rest\n  mass {:.4} kg (std {:.2e})\n  centre of mass in the tip frame [{:.4}, {:.4}, {:.4}] m (std [{:.1e}, {:.1e}, {:.1e}])\n  torque left unexplained: RMS {:.2e} N m",
        report.robot,
        report.poses,
        report.mass,
        report.mass_std,
        report.com[0],
        report.com[1],
        report.com[2],
        report.com_std[0],
        report.com_std[1],
        report.com_std[2],
        report.residual_rms
    );
    if let Some(out) = out {
        println!("wrote {}", out.display());
    }
    Ok(())
}

/// controller_node's `payload_mass` and `payload_com` (the inertia does not act at rest and is
/// left to the user), as a ROS 2 parameter file for any node name (`/**:`, as `armctl identify`
/// writes its model).
fn parameter_file(found: &PayloadEstimate, comment: &str) -> String {
    let c = found.payload.com;
    format!(
        "# {comment}\n# mass std {:.3e} kg, centre of mass std [{:.3e}, {:.3e}, {:.3e}] m\n/**:\n  ros__parameters:\n    payload_mass: {:?}\n    payload_com: [{:?}, {:?}, {:?}]\n",
        found.mass_std, found.com_std.x, found.com_std.y, found.com_std.z, found.payload.mass, c.x, c.y, c.z
    )
}
