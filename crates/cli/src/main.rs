//! The `armctl` command.

mod bench_command;
mod bench_states;
mod commission_command;
mod dds_runtime;
mod demo_command;
mod dynamics_command;
mod excite_command;
mod excite_publish;
mod identify_command;
mod input_file;
mod latency_command;
mod model_command;
mod model_json;
#[cfg(test)]
mod mutated_trajectory_files;
mod pair_run;
mod parameter_schedule;
mod params_command;
mod params_file;
mod payload_excite;
mod payload_identify;
mod plots;
mod robot_file;
mod run_files;
mod run_summary;
mod sim_command;
mod sim_config_file;
mod sim_targets;
mod trajectory_spec;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Model-based torque control for robot arms: inspect models, run controllers.
#[derive(Debug, Parser)]
#[command(name = "armctl", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Convert a URDF to a modified D-H (Craig) model and print it.
    Model(model_command::ModelArgs),
    /// Inverse and forward dynamics, M, C, G and the tip pose for states from a JSON file.
    Dynamics(dynamics_command::DynamicsArgs),
    /// The inertial parameters of a URDF, all of them or (--base) the base parameters.
    Params(params_command::ParamsArgs),
    /// An exciting trajectory for identification (Fourier series within the limits).
    Excite(excite_command::ExciteArgs),
    /// Identify the base inertial parameters (and friction) from a log of the arm's motion.
    Identify(identify_command::IdentifyArgs),
    /// Time the kinematics and dynamics algorithms on random states (ns per call).
    Bench(bench_command::BenchArgs),
    /// Run a controller against the embedded simulator (no ROS): summary, run.csv, plots.
    Sim(sim_command::SimArgs),
    /// sim_node and controller_node over ROS 2 DDS on loopback, one process: a controller
    /// follows a reference through the real message traffic; summary, run.csv, plots.
    Demo(demo_command::DemoArgs),
    /// Commission an arm in one command: check, excite and record, identify a physically
    /// consistent model, validate it on a held-out trajectory, size the gains, verify, deploy
    /// (parameter file and report); each step gated. The arm: the embedded simulator.
    Commission(commission_command::CommissionArgs),
    /// Benchmark the joint_states -> command latency of controller_node over DDS loopback.
    Latency(latency_command::LatencyArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Model(args) => model_command::run(&args),
        Command::Dynamics(args) => dynamics_command::run(&args),
        Command::Bench(args) => bench_command::run(&args),
        Command::Params(args) => params_command::run(&args),
        Command::Excite(args) => excite_command::run(&args),
        Command::Identify(args) => identify_command::run(&args),
        Command::Sim(args) => sim_command::run(&args),
        Command::Demo(args) => demo_command::run(&args),
        Command::Latency(args) => latency_command::run(&args),
        Command::Commission(args) => commission_command::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("armctl: {e:#}");
            match e.downcast_ref::<run_summary::ArmHeld>() {
                Some(_) => ExitCode::from(run_summary::ArmHeld::EXIT_CODE),
                None => ExitCode::FAILURE,
            }
        }
    }
}
