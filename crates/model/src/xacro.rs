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
    // stderr is drained by a thread of its own: a xacro that writes much to it while we read
    // stdout would otherwise wait on us forever.
    let stderr = child.stderr.take().map(|mut e| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = (&mut e).take(MAX_MESSAGE_BYTES).read_to_string(&mut text);
            // The rest is read and dropped, so xacro is never blocked on a full pipe.
            let _ = std::io::copy(&mut e, &mut std::io::sink());
            text
        })
    });
    let mut text = String::new();
    let read = match child.stdout.take() {
        Some(stdout) => stdout.take(MAX_URDF_BYTES + 1).read_to_string(&mut text),
        None => Ok(0),
    };
    let too_long = text.len() as u64 > MAX_URDF_BYTES;
    if too_long {
        let _ = child.kill();
    }
    let status = child.wait().map_err(|e| refuse(e.to_string()))?;
    let stderr = stderr.and_then(|t| t.join().ok()).unwrap_or_default();
    if too_long {
        return Err(refuse(format!(
            "the expanded URDF is larger than the {MAX_URDF_BYTES} bytes accepted"
        )));
    }
    if !status.success() {
        return Err(refuse(format!(
            "xacro failed ({status}): {}",
            cause(&stderr)
        )));
    }
    read.map_err(|e| refuse(format!("reading xacro's output: {e}")))?;
    Ok(text)
}

/// Most bytes of xacro's messages kept.
const MAX_MESSAGE_BYTES: u64 = 64 << 10;

/// What xacro said first (its cause; the lines after it say where it was processing), up to
/// three lines, shortened.
fn cause(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(3)
        .collect();
    if lines.is_empty() {
        return "no message".into();
    }
    crate::files::short_message(&lines.join("; "))
}
