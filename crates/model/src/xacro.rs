//! `.xacro` robot descriptions, expanded by the `xacro` program (ROS's, or PyPI's `xacro`,
//! which runs without ROS) as `xacro FILE name:=value ...`. Its output is bounded like a URDF
//! file; a missing program or a failing expansion is refused with what to do.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::files::MAX_URDF_BYTES;
use crate::ModelError;

/// Whether `path` names a xacro file (`.xacro`, as in `robot.urdf.xacro`).
pub fn is_xacro(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "xacro")
}

/// The URDF text `xacro` makes of `path` with `args` (each `name:=value`).
pub fn expand(path: &Path, args: &[String]) -> Result<String, ModelError> {
    let refuse = |reason: String| ModelError::XacroExpansion {
        path: path.display().to_string(),
        reason,
    };
    if let Some(bad) = args.iter().find(|a| !a.contains(":=")) {
        return Err(refuse(format!("xacro argument '{bad}' is not name:=value")));
    }
    crate::files::check_regular_file(path, MAX_URDF_BYTES).map_err(&refuse)?;
    let mut child = Command::new("xacro")
        .arg(path)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => refuse(
                "the xacro program is not on PATH: install it (pip install xacro, or ROS's \
                 xacro package) or give the expanded URDF (xacro FILE > robot.urdf)"
                    .into(),
            ),
            _ => refuse(format!("starting xacro: {e}")),
        })?;
    let mut text = String::new();
    let read = match child.stdout.take() {
        Some(stdout) => stdout.take(MAX_URDF_BYTES + 1).read_to_string(&mut text),
        None => Ok(0),
    };
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut stderr);
    }
    let status = child.wait().map_err(|e| refuse(e.to_string()))?;
    if !status.success() {
        let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
        return Err(refuse(format!(
            "xacro failed ({status}): {}",
            crate::files::short_message(last.unwrap_or("no message"))
        )));
    }
    read.map_err(|e| refuse(format!("reading xacro's output: {e}")))?;
    if text.len() as u64 > MAX_URDF_BYTES {
        return Err(refuse(format!(
            "the expanded URDF is larger than the {MAX_URDF_BYTES} bytes accepted"
        )));
    }
    Ok(text)
}
