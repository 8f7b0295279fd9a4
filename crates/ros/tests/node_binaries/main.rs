//! The `controller_node` and `sim_node` binaries as `ros2 run` / `ros2 launch` start them:
//! arguments after `--ros-args`, parameter files, remapped names and namespaces, clear
//! errors at start. DDS traffic stays on loopback (`ROS_LOCALHOST_ONLY=1`). The pair scenes
//! are in `pairs.rs`.

use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use armctl_nodes::msgs::{labelled_block, Float64MultiArray};
use armctl_nodes::transport::dds::{DdsOptions, DdsTransport};
use armctl_nodes::transport::{Incoming, NodeSpec, Outgoing, Topic, Transport};
use armctl_runtime::node_parameters::ParameterStore;

mod pairs;

fn workspace(relative: &str) -> String {
    format!("{}/../../{relative}", env!("CARGO_MANIFEST_DIR"))
}

fn node(binary: &str, domain: u16, args: &[&str]) -> Command {
    let mut command = Command::new(binary);
    command
        .args(args)
        .env("ROS_LOCALHOST_ONLY", "1")
        .env("ROS_DOMAIN_ID", domain.to_string());
    command
}

fn run(binary: &str, args: &[&str]) -> Output {
    node(binary, 90, args)
        .output()
        .expect("running the node binary")
}

struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn print_params_lists_the_declarations_with_descriptions() {
    let urdf = format!("urdf_path:={}", workspace("urdf/panda.urdf"));
    let out = run(
        env!("CARGO_BIN_EXE_controller_node"),
        &[
            "--print-params",
            "--ros-args",
            "-p",
            &urdf,
            "-p",
            "controller:=pd_gravity",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for expected in [
        "kp:",
        "kd:",
        "state_timeout:",
        "read_only: true",
        "description:",
    ] {
        assert!(
            text.contains(expected),
            "'{expected}' missing from:\n{text}"
        );
    }
    // The build's middleware and what it offers, as YAML comments before the declarations.
    assert!(
        text.starts_with("# middleware: DDS"),
        "the middleware is not named first:\n{text}"
    );
    assert!(
        text.contains("#   ~/follow_joint_trajectory (control_msgs/FollowJointTrajectory): yes"),
        "{text}"
    );
}

/// `--help` (or `-h`) prints the usage and exits 0, as every command-line program does (it
/// was refused as an unknown argument, exit 1).
#[test]
fn help_prints_the_usage_and_exits_0() {
    for binary in [
        env!("CARGO_BIN_EXE_controller_node"),
        env!("CARGO_BIN_EXE_sim_node"),
    ] {
        for flag in ["--help", "-h"] {
            let out = run(binary, &[flag]);
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{binary} {flag}: {:?}", out.status);
            assert!(
                text.contains("usage:") && text.contains("--ros-args"),
                "{text}"
            );
        }
    }
}

#[test]
fn bad_starts_fail_with_the_item_named() {
    let dir = std::env::temp_dir().join(format!("armctl-node-binaries-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad_file = dir.join("broken.yaml");
    std::fs::write(
        &bad_file,
        "controller_node:\n  ros__parameters:\n    kp: [1.0,\n",
    )
    .unwrap();
    let urdf = format!("urdf_path:={}", workspace("urdf/panda.urdf"));
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                "--params-file".into(),
                bad_file.display().to_string(),
                "-p".into(),
                urdf.clone(),
            ],
            "broken.yaml",
        ),
        (
            vec!["-p".into(), urdf.clone(), "-p".into(), "kq:=[1.0]".into()],
            "kq",
        ),
        (
            vec![
                "-p".into(),
                urdf.clone(),
                "-p".into(),
                "controller:=pid".into(),
            ],
            "pid",
        ),
        (
            vec!["-p".into(), "urdf_path:=/nonexistent/arm.urdf".into()],
            "/nonexistent/arm.urdf",
        ),
        (
            vec!["-p".into(), urdf, "-p".into(), "state_timeout:=-1.0".into()],
            "state_timeout",
        ),
    ];
    // sim_node with an arm started far outside its limits.
    let sim_urdf = format!("urdf_path:={}", workspace("urdf/panda.urdf"));
    let out = run(
        env!("CARGO_BIN_EXE_sim_node"),
        &[
            "--ros-args",
            "-p",
            &sim_urdf,
            "-p",
            "initial_positions:=[100.0, 0.0, 0.0, -2.0, 0.0, 1.5, 0.0]",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && stderr.contains("initial_positions")
            && stderr.contains("panda_joint1 = 100"),
        "{stderr}"
    );
    for (args, named) in cases {
        let mut all = vec!["--ros-args".to_string()];
        all.extend(args);
        let refs: Vec<&str> = all.iter().map(String::as_str).collect();
        let out = run(env!("CARGO_BIN_EXE_controller_node"), &refs);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{all:?} started");
        assert!(
            stderr.contains(named),
            "{all:?}: the error does not name '{named}': {stderr}"
        );
    }
    // Fast DDS told to leave UDPv4 (its large-data mode): no Fast DDS node could see this one.
    let mut large_data = Running(
        node(
            env!("CARGO_BIN_EXE_controller_node"),
            90,
            &["--ros-args", "-p", &sim_urdf],
        )
        .env("FASTDDS_BUILTIN_TRANSPORTS", "LARGE_DATA")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running the node binary"),
    );
    // Bounded: a node that started anyway is killed, not waited for.
    let status = exit_status(&mut large_data.0);
    let stderr = stderr_of(&mut large_data.0);
    assert!(
        !status.success() && stderr.contains("FASTDDS_BUILTIN_TRANSPORTS=LARGE_DATA"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A listener for `ns`'s controller_node `~/state`.
fn listener(domain: u16, state_topic: &str) -> DdsTransport {
    let spec = NodeSpec {
        action: None,
        name: "listener".into(),
        namespace: "/".into(),
        subscriptions: vec![(Topic::State, state_topic.into())],
        publications: vec![],
        tick_rate: None,
        parameters: ParameterStore::new(vec![]),
    };
    DdsTransport::start(&spec, &DdsOptions::loopback(domain)).unwrap()
}

/// Waits for a `~/state` saying the controller runs (not holding).
async fn controlling(listener: &mut DdsTransport, patience: Duration) -> bool {
    tokio::time::timeout(patience, async {
        loop {
            if let Some(Incoming::State(s)) = listener.next().await {
                if labelled_block(&s, "holding") == Some(&[0.0][..]) {
                    return;
                }
            }
        }
    })
    .await
    .is_ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_arms_in_namespaces_with_parameter_files_and_a_renamed_node() {
    let domain = 91;
    let urdf = format!("urdf_path:={}", workspace("urdf/panda.urdf"));
    let dir = std::env::temp_dir().join(format!("armctl-two-arms-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let wildcard = dir.join("any_node.yaml");
    std::fs::write(&wildcard, "/**:\n  ros__parameters:\n    controller: pd_gravity\n    kp: [600.0, 600.0, 600.0, 600.0, 250.0, 150.0, 50.0]\n    kd: [15.0, 15.0, 15.0, 15.0, 5.0, 3.0, 1.0]\n").unwrap();
    let arms = [
        (
            "/arm1",
            "controller_node",
            workspace("config/panda_pd_gravity.yaml"),
        ),
        ("/arm2", "left_controller", wildcard.display().to_string()),
    ];
    let mut nodes = vec![];
    for (ns, name, params) in &arms {
        let ns_arg = format!("__ns:={ns}");
        let name_arg = format!("__node:={name}");
        let sim = node(
            env!("CARGO_BIN_EXE_sim_node"),
            domain,
            &[
                "--ros-args",
                "-r",
                &ns_arg,
                "-p",
                &urdf,
                "-p",
                "command_topic:=pd_gravity/commands",
            ],
        );
        let ctrl = node(
            env!("CARGO_BIN_EXE_controller_node"),
            domain,
            &[
                "--ros-args",
                "-r",
                &ns_arg,
                "-r",
                &name_arg,
                "--params-file",
                params,
                "-p",
                &urdf,
            ],
        );
        for mut command in [sim, ctrl] {
            nodes.push(Running(
                command
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap(),
            ));
        }
    }
    for (ns, name, _) in &arms {
        let mut l = listener(domain, &format!("{ns}/{name}/state"));
        assert!(
            controlling(&mut l, Duration::from_secs(30)).await,
            "{ns}/{name} is not controlling"
        );
    }
    // Two seconds of control: a diverging simulation would end its sim_node.
    tokio::time::sleep(Duration::from_secs(2)).await;
    for Running(child) in &mut nodes {
        assert!(child.try_wait().unwrap().is_none(), "a node exited");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Starts `command` with its output discarded.
fn quiet(mut command: Command) -> Running {
    Running(
        command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

/// Sends `signal` (`TERM`, `INT`, `HUP`) to `child`.
fn signal(child: &Child, signal: &str) {
    let sent = Command::new("kill")
        .args([format!("-{signal}"), child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success(), "kill -{signal}");
}

/// Waits (bounded) for `child` to exit.
fn exit_status(child: &mut Child) -> std::process::ExitStatus {
    for _ in 0..500 {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("no exit within 5 s");
}

/// What an exited `child` wrote to its piped stderr.
fn stderr_of(child: &mut Child) -> String {
    use std::io::Read;
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    stderr
}

/// Sends `sig` to `child` and waits (bounded) for it to exit.
fn stop(child: &mut Child, sig: &str) -> std::process::ExitStatus {
    signal(child, sig);
    exit_status(child)
}

/// A stop signal ends both nodes with exit code 0, and controller_node's last command is its
/// `safe_mode` command, sent while the arm was being controlled: zero here, where the control
/// effort held the Panda against gravity (without a handler the process died and the effort
/// controller kept that last control effort).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_signal_leaves_the_safe_command_as_the_last_one() {
    let domain = 92;
    let urdf_arg = format!("urdf_path:={}", workspace("urdf/panda.urdf"));
    let spec = NodeSpec {
        action: None,
        name: "watcher".into(),
        namespace: "/".into(),
        subscriptions: vec![(Topic::Commands, "/pd_gravity/commands".into())],
        publications: vec![],
        tick_rate: None,
        parameters: ParameterStore::new(vec![]),
    };
    let mut watcher = DdsTransport::start(&spec, &DdsOptions::loopback(domain)).unwrap();
    let quiet = |mut c: Command| {
        c.stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let mut sim = Running(quiet(node(
        env!("CARGO_BIN_EXE_sim_node"),
        domain,
        &[
            "--ros-args",
            "-p",
            &urdf_arg,
            "-p",
            "command_topic:=pd_gravity/commands",
        ],
    )));
    let mut controller = Running(quiet(node(
        env!("CARGO_BIN_EXE_controller_node"),
        domain,
        &[
            "--ros-args",
            "--params-file",
            &workspace("config/panda_pd_gravity.yaml"),
            "-p",
            &urdf_arg,
            "-p",
            "safe_mode:=zero",
        ],
    )));
    let mut last_command = None;
    let controlling = tokio::time::timeout(Duration::from_secs(30), async {
        while last_command
            .iter()
            .all(|c: &Vec<f64>| c.iter().all(|e| *e == 0.0))
        {
            if let Some(Incoming::Commands(c)) = watcher.next().await {
                last_command = Some(c.data);
            }
        }
    });
    assert!(controlling.await.is_ok(), "no control effort within 30 s");
    // Stopped while controlling (read meanwhile: its last sample arrives while its writer
    // still lives).
    signal(&controller.0, "TERM");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
    while let Ok(incoming) = tokio::time::timeout_at(deadline, watcher.next()).await {
        if let Some(Incoming::Commands(c)) = incoming {
            last_command = Some(c.data);
        }
    }
    let status = exit_status(&mut controller.0);
    assert!(status.success(), "controller_node's exit code: {status}");
    assert_eq!(last_command, Some(vec![0.0; 7]), "the last command");
    assert!(stop(&mut sim.0, "INT").success(), "sim_node's exit code");
}

/// A node stopped before any joint state came sends nothing and exits 0 (SIGHUP, and SIGQUIT:
/// Ctrl-\\ is a stop like Ctrl-C, not a kill without a last command).
#[test]
fn a_node_stopped_before_any_state_exits_cleanly() {
    let urdf_arg = format!("urdf_path:={}", workspace("urdf/panda.urdf"));
    for name in ["HUP", "QUIT"] {
        let mut controller = Running(
            node(
                env!("CARGO_BIN_EXE_controller_node"),
                93,
                &["--ros-args", "-p", &urdf_arg],
            )
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
        );
        // Give it time to install its handlers (the log line of a running node comes after).
        std::thread::sleep(Duration::from_millis(1500));
        let status = stop(&mut controller.0, name);
        assert!(status.success(), "SIG{name}: exit code: {status}");
        let stderr = stderr_of(&mut controller.0);
        assert!(
            stderr.contains(&format!("stopping on SIG{name}")),
            "{stderr}"
        );
    }
}

/// The largest effort of the UR5e's wrist 3 on and on, through a real DDS command: its link is
/// so light (2.9e-4 kg m^2) that it passes 100 times its velocity limit (314 rad/s) within a
/// few milliseconds and long before its joint limit, which the simulator counts as diverged.
/// sim_node then stops, says when, which joint and how fast, and exits non-zero.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_diverging_simulation_ends_sim_node_with_a_failing_exit() {
    let domain = 152;
    let urdf_arg = format!("urdf_path:={}", workspace("urdf/ur5e.urdf"));
    let mut sim = Running(
        node(
            env!("CARGO_BIN_EXE_sim_node"),
            domain,
            &["--ros-args", "-p", &urdf_arg],
        )
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap(),
    );
    let spec = NodeSpec {
        action: None,
        name: "full_wrist_torque".into(),
        namespace: "/".into(),
        subscriptions: vec![],
        publications: vec![(Topic::Commands, "/computed_torque/commands".into())],
        tick_rate: None,
        parameters: ParameterStore::new(vec![]),
    };
    let mut publisher = DdsTransport::start(&spec, &DdsOptions::loopback(domain)).unwrap();
    let command = Float64MultiArray {
        data: vec![0.0, 0.0, 0.0, 0.0, 0.0, 28.0],
        ..Float64MultiArray::default()
    };
    // Sent until sim_node is gone (the first ones may go out before discovery).
    let mut status = None;
    for _ in 0..3000 {
        status = sim.0.try_wait().unwrap();
        if status.is_some() {
            break;
        }
        publisher.publish(Outgoing::Commands(&command));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let status = status.expect("sim_node still runs after 30 s");
    let stderr = stderr_of(&mut sim.0);
    assert_eq!(status.code(), Some(1), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("sim_node: simulation: the simulation diverged at t = "))
        .unwrap_or_else(|| panic!("no divergence line in:\n{stderr}"));
    let speed: f64 = line
        .split("moving at ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no speed in: {line}"));
    assert!(line.contains(": wrist_3_joint at "), "{line}");
    assert!(speed > 314.159, "{line}");
}
