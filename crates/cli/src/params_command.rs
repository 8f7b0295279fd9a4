//! `armctl params`: the inertial parameters of a robot, all 10 per link or (`--base`) the base
//! parameters: their number, each as a combination of link parameters, and its value for the
//! URDF's inertials.

use std::path::PathBuf;

use anyhow::Result;
use armctl_dynamics::{numeric_base_parameters, regrouped_base_parameters, PARAMETER_NAMES};
use armctl_model::{ChainOptions, Robot, PARAMS_PER_LINK};
use clap::Args;
use serde::Serialize;

/// `armctl params` arguments.
#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub(crate) struct ParamsArgs {
    /// The URDF file.
    urdf: PathBuf,
    /// Base link of the chain (default: the root link).
    #[arg(long)]
    base_link: Option<String>,
    /// Tip link of the chain (default: the only leaf reached through moving joints).
    #[arg(long)]
    tip: Option<String>,
    /// The base (minimal) parameters instead of all of them.
    #[arg(long)]
    base: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Serialize)]
struct Parameter {
    name: String,
    value: f64,
}

#[derive(Debug, Serialize)]
struct Report {
    robot: String,
    joints: Vec<String>,
    count: usize,
    full_count: usize,
    method: String,
    parameters: Vec<Parameter>,
}

fn full(robot: &Robot) -> Vec<Parameter> {
    robot
        .parameter_vector()
        .into_iter()
        .enumerate()
        .map(|(k, value)| Parameter {
            name: format!(
                "{}{}",
                PARAMETER_NAMES[k % PARAMS_PER_LINK],
                k / PARAMS_PER_LINK + 1
            ),
            value,
        })
        .collect()
}

fn base(robot: &Robot) -> Result<(Vec<Parameter>, String)> {
    let numeric = numeric_base_parameters(robot)?;
    let method = match regrouped_base_parameters(robot) {
        Ok(rules) if rules.map() == numeric.map() || (rules.map() - numeric.map()).amax() < 1e-8 => {
            "regrouping rules for MDH frames; the numerical method (QR of the stacked regressor) agrees".to_string()
        }
        Ok(_) => "numerical method (the regrouping rules give another set)".to_string(),
        Err(reason) => format!("numerical method ({reason})"),
    };
    let values = numeric.values(&robot.parameter_vector())?;
    let parameters = numeric
        .names()
        .into_iter()
        .zip(values.iter())
        .map(|(name, &value)| Parameter { name, value })
        .collect();
    Ok((parameters, method))
}

pub(crate) fn run(args: &ParamsArgs) -> Result<()> {
    let options = ChainOptions {
        base_link: args.base_link.clone(),
        tip_link: args.tip.clone(),
        ..ChainOptions::default()
    };
    let robot = crate::robot_file::load_robot(&args.urdf, &options)?;
    let full_count = PARAMS_PER_LINK * robot.dof();
    let (parameters, method) = if args.base {
        base(&robot)?
    } else {
        (
            full(&robot),
            "all ten parameters per link, about the MDH frame origins".to_string(),
        )
    };
    let report = Report {
        robot: robot.name().to_string(),
        joints: robot.joint_names().map(str::to_string).collect(),
        count: parameters.len(),
        full_count,
        method,
        parameters,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "{}: {} {}parameters of {} ({})",
        report.robot,
        report.count,
        if args.base { "base " } else { "" },
        full_count,
        report.method
    );
    for (k, p) in report.parameters.iter().enumerate() {
        println!("{:>4}  {:<60} {:>14.6e}", k + 1, p.name, p.value);
    }
    Ok(())
}
