//! The MuJoCo peer's process: one JSON request per line on its input, one reply per line.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{json, Value};

/// The MuJoCo peer (`tests/mujoco/peer.py`), one process per run.
pub(crate) struct Peer {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    pub(crate) hello: Value,
}

impl Peer {
    pub(crate) fn start(setup: &Value) -> Self {
        let python =
            armctl_e2e::interop_python::interop_python(Path::new(env!("CARGO_TARGET_TMPDIR")));
        let mut child = Command::new(python)
            .arg(armctl_e2e::workspace_dir().join("tests/mujoco/peer.py"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starting tests/mujoco/peer.py");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut peer = Self {
            child,
            stdin,
            stdout,
            hello: Value::Null,
        };
        peer.hello = peer.exchange(setup);
        peer
    }

    fn exchange(&mut self, request: &Value) -> Value {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        assert!(
            !line.is_empty(),
            "the MuJoCo peer ended (its error is above)"
        );
        serde_json::from_str(&line).unwrap()
    }

    /// One step under `tau`; the state after it (and the contact force, if `report`).
    pub(crate) fn step(&mut self, tau: &[f64], report: bool) -> Value {
        self.exchange(&json!({ "tau": tau, "report": report }))
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        drop(self.stdin.take()); // end of input ends the peer
        let _ = self.child.wait();
    }
}
