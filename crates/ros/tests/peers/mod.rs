//! What the tests driven by the Python Cyclone DDS peers of `tests/interop/` share: the peers'
//! virtual environment, loopback-only Cyclone DDS settings, processes that are killed with the
//! test, and a node's stderr read line by line.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStderr, Command};
use std::sync::mpsc;
use std::time::Duration;

/// Loopback only, no multicast (docs/conventions.md).
pub(crate) const CYCLONEDDS_URI: &str = "<CycloneDDS><Domain><General><Interfaces><NetworkInterface name=\"lo\"/></Interfaces><AllowMulticast>false</AllowMulticast></General><Discovery><ParticipantIndex>auto</ParticipantIndex><Peers><Peer address=\"127.0.0.1\"/></Peers></Discovery></Domain></CycloneDDS>";

/// A path in the workspace.
pub(crate) fn workspace(relative: &str) -> String {
    format!("{}/../../{relative}", env!("CARGO_MANIFEST_DIR"))
}

/// The interop venv's python (created on first use, shared with the other interop tests).
pub(crate) fn python() -> String {
    let venv = format!("{}/cyclonedds-venv", env!("CARGO_TARGET_TMPDIR"));
    let out = Command::new("sh")
        .args([workspace("tests/interop/setup_venv.sh"), venv])
        .output()
        .expect("running setup_venv.sh");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A child process, killed when dropped.
pub(crate) struct Killed(pub(crate) Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The lines of `stderr`, as they come (echoed with `who` in front).
pub(crate) fn lines(who: &'static str, stderr: ChildStderr) -> mpsc::Receiver<String> {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            eprintln!("{who}: {line}");
            if send.send(line).is_err() {
                break;
            }
        }
    });
    receive
}

/// Waits (bounded) for a line containing `text`.
pub(crate) fn wait_for(lines: &mpsc::Receiver<String>, text: &str) -> String {
    loop {
        match lines.recv_timeout(Duration::from_secs(60)) {
            Ok(line) if line.contains(text) => return line,
            Ok(_) => {}
            Err(e) => panic!("no line with '{text}': {e}"),
        }
    }
}
