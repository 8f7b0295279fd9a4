//! Loading the robot of a command's URDF, with what the conversion noticed said on stderr:
//! every command that reads a URDF warns the same way (a link whose inertia no real body has,
//! nearly parallel axes), naming the link or joint.

use std::path::Path;

use anyhow::{Context, Result};
use armctl_model::{urdf_file_to_robot, ChainOptions, Conversion, Robot};

/// The conversion of `path`, its warnings printed to stderr.
pub(crate) fn load_conversion(path: &Path, options: &ChainOptions) -> Result<Conversion> {
    let conversion =
        urdf_file_to_robot(path, options).with_context(|| format!("loading {}", path.display()))?;
    for warning in &conversion.report.warnings {
        eprintln!("warning: {}: {warning}", path.display());
    }
    Ok(conversion)
}

/// The robot of `path`, the conversion's warnings printed to stderr.
pub(crate) fn load_robot(path: &Path, options: &ChainOptions) -> Result<Robot> {
    Ok(load_conversion(path, options)?.robot)
}
