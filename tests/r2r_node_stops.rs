//! The r2r backend's `controller_node` and `sim_node` stopped 20 times each by SIGINT and
//! SIGTERM while controlling: every stop exits 0 with no rcl or rmw error, and each of the
//! controller's stops leaves its `safe_mode` command as the last one on the command topic.
//! (r2r's spin thread once outlived `main` into Fast DDS's teardown: 7 of 12 stops aborted or
//! segfaulted, without the last command.) A DDS-backend watcher reads the commands.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

use armctl_e2e::r2r_nodes::{r2r_nodes, NodeProcess, R2rNodes};
use armctl_nodes::transport::dds::{DdsOptions, DdsTransport};
use armctl_nodes::transport::{Incoming, NodeSpec, Topic, Transport};
use armctl_runtime::node_parameters::ParameterStore;

const DOMAIN: u16 = 219;
const STOPS: usize = 20;

fn workspace(relative: &str) -> String {
    armctl_e2e::workspace_dir()
        .join(relative)
        .display()
        .to_string()
}

/// A node whose stderr is read as it comes (a full pipe would stall it).
struct Started {
    process: NodeProcess,
    stderr: std::thread::JoinHandle<String>,
}

fn start(nodes: &R2rNodes, binary: &str, args: &[&str]) -> Started {
    let mut child = nodes
        .command(binary, DOMAIN)
        .arg("--ros-args")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the r2r node starts");
    let mut pipe = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    });
    Started {
        process: NodeProcess(child),
        stderr,
    }
}

fn signal(child: &Child, signal: &str) {
    let sent = std::process::Command::new("kill")
        .args([format!("-{signal}"), child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success(), "kill -{signal}");
}

/// Waits (bounded) for the exit, and gives its status and stderr.
fn exited(node: Started) -> (std::process::ExitStatus, String) {
    let Started {
        mut process,
        stderr,
    } = node;
    for _ in 0..1000 {
        if let Some(status) = process.0.try_wait().unwrap() {
            return (status, stderr.join().unwrap());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("no exit within 10 s");
}

fn assert_clean_stop(what: &str, status: std::process::ExitStatus, stderr: &str, sig: &str) {
    assert!(status.success(), "{what}: exit {status}:\n{stderr}");
    assert!(
        stderr.contains(&format!("stopping on SIG{sig}")),
        "{what}:\n{stderr}"
    );
    for crash in ["ERROR", "corrupted", "failed", "terminate called"] {
        assert!(!stderr.contains(crash), "{what}: '{crash}':\n{stderr}");
    }
}

fn watcher() -> DdsTransport {
    let spec = NodeSpec {
        action: None,
        name: "watcher".into(),
        namespace: "/".into(),
        subscriptions: vec![(Topic::Commands, "/pd_gravity/commands".into())],
        publications: vec![],
        tick_rate: None,
        parameters: ParameterStore::new(vec![]),
    };
    DdsTransport::start(&spec, &DdsOptions::loopback(DOMAIN)).unwrap()
}

/// Reads commands until one is not all zero (the controller controls).
async fn until_controlling(watcher: &mut DdsTransport) -> bool {
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            if let Some(Incoming::Commands(c)) = watcher.next().await {
                if c.data.iter().any(|e| *e != 0.0) {
                    return;
                }
            }
        }
    })
    .await
    .is_ok()
}

/// The last command sent until `child` exited (and a grace period after, for the last sample
/// on its way), or within 10 s.
async fn last_command(watcher: &mut DdsTransport, child: &mut Child) -> Option<Vec<f64>> {
    let mut last = None;
    let give_up = tokio::time::Instant::now() + Duration::from_secs(10);
    let mut deadline = give_up;
    loop {
        let window = deadline.min(tokio::time::Instant::now() + Duration::from_millis(20));
        match tokio::time::timeout_at(window, watcher.next()).await {
            Ok(Some(Incoming::Commands(c))) => last = Some(c.data),
            Ok(_) => {}
            Err(_) if tokio::time::Instant::now() >= deadline => return last,
            Err(_) => {}
        }
        if deadline == give_up && matches!(child.try_wait(), Ok(Some(_))) {
            deadline = tokio::time::Instant::now() + Duration::from_millis(300);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_stops_of_each_r2r_node_are_clean_and_leave_the_safe_command() {
    let nodes = r2r_nodes(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let urdf = format!("urdf_path:={}", workspace("urdf/panda.urdf"));
    let params = workspace("config/panda_pd_gravity.yaml");
    let mut watcher = watcher();
    for k in 0..STOPS {
        let (sim_sig, controller_sig) = if k % 2 == 0 {
            ("INT", "TERM")
        } else {
            ("TERM", "INT")
        };
        let sim_args = ["-p", &urdf, "-p", "command_topic:=pd_gravity/commands"];
        let sim = start(&nodes, "sim_node", &sim_args);
        let controller_args = [
            "--params-file",
            &params,
            "-p",
            &urdf,
            "-p",
            "safe_mode:=zero",
        ];
        let mut controller = start(&nodes, "controller_node", &controller_args);
        assert!(
            until_controlling(&mut watcher).await,
            "stop {k}: no control effort within 30 s"
        );
        signal(&controller.process.0, controller_sig);
        let last = last_command(&mut watcher, &mut controller.process.0).await;
        let (status, stderr) = exited(controller);
        assert_clean_stop(
            &format!("stop {k}: controller_node"),
            status,
            &stderr,
            controller_sig,
        );
        assert_eq!(last, Some(vec![0.0; 7]), "stop {k}: the last command");
        signal(&sim.process.0, sim_sig);
        let (status, stderr) = exited(sim);
        assert_clean_stop(&format!("stop {k}: sim_node"), status, &stderr, sim_sig);
    }
}
