//! The `armctl` command.

mod model_command;
mod model_json;

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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Model(args) => model_command::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("armctl: {e:#}");
            ExitCode::FAILURE
        }
    }
}
