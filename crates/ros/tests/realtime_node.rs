//! controller_node with `realtime_priority` and `cpu_affinity`, as ros2_control's controller
//! manager runs its loop: the node's main thread (the control loop) runs SCHED_FIFO at the
//! priority, pinned to the CPU, while the middleware's threads keep the normal scheduler.
//! Where the system does not allow it, the node refuses to start, naming the parameter and how
//! to allow it: here by dropping CAP_SYS_NICE or CAP_IPC_LOCK with util-linux's `setpriv`.

use std::process::{Command, Stdio};

mod peers;
use peers::{wait_for, workspace, Killed};

const DOMAIN: &str = "99";

fn controller_node(wrapper: &[&str], realtime: &[&str]) -> Command {
    let binary = env!("CARGO_BIN_EXE_controller_node");
    let mut command = match wrapper.split_first() {
        Some((program, args)) => {
            let mut c = Command::new(program);
            c.args(args).arg(binary);
            c
        }
        None => Command::new(binary),
    };
    let urdf = format!("urdf_path:={}", workspace("urdf/panda.urdf"));
    command
        .args(["--ros-args", "-p", &urdf])
        .args(realtime.iter().flat_map(|p| ["-p", p]))
        .env("ROS_LOCALHOST_ONLY", "1")
        .env("ROS_DOMAIN_ID", DOMAIN)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

/// The scheduling policy (0 normal, 1 FIFO) and real-time priority of each of `pid`'s
/// threads, by thread id (`/proc/<pid>/task/<tid>/stat`, fields 41 and 40).
fn thread_policies(pid: u32) -> Vec<(u32, u32, u32)> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).unwrap();
    let mut out = vec![];
    for task in tasks {
        let path = task.unwrap().path();
        let tid: u32 = path.file_name().unwrap().to_str().unwrap().parse().unwrap();
        let stat = std::fs::read_to_string(path.join("stat")).unwrap_or_default();
        // Fields after the command name (in parentheses) start at field 3.
        let rest: Vec<&str> = stat
            .rsplit_once(')')
            .map_or(vec![], |(_, r)| r.split_whitespace().collect());
        if rest.len() > 38 {
            out.push((
                tid,
                rest[41 - 3].parse().unwrap(),
                rest[40 - 3].parse().unwrap(),
            ));
        }
    }
    out
}

/// Whether this machine lets the test's user run SCHED_FIFO (root, or an rtprio limit).
fn fifo_allowed() -> bool {
    Command::new("chrt")
        .args(["-f", "1", "true"])
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn the_control_thread_runs_fifo_pinned_and_the_middleware_s_threads_do_not() {
    if !fifo_allowed() {
        eprintln!("skipped: this machine does not allow SCHED_FIFO (the refusal is tested below)");
        return;
    }
    let mut node = Killed(
        controller_node(&[], &["realtime_priority:=40", "cpu_affinity:=0"])
            .spawn()
            .unwrap(),
    );
    let lines = peers::lines("controller_node", node.0.stderr.take().unwrap());
    let applied = wait_for(&lines, "control thread:");
    assert!(
        applied.contains("SCHED_FIFO priority 40, memory locked, pinned to CPU 0"),
        "{applied}"
    );
    wait_for(&lines, "controlling panda_joint1");
    let pid = node.0.id();
    let threads = thread_policies(pid);
    let main = threads.iter().find(|(tid, _, _)| *tid == pid).unwrap();
    assert_eq!((main.1, main.2), (1, 40), "the main thread: {threads:?}");
    let others: Vec<_> = threads.iter().filter(|(tid, _, _)| *tid != pid).collect();
    assert!(
        !others.is_empty() && others.iter().all(|(_, policy, _)| *policy == 0),
        "{threads:?}"
    );
    let affinity = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/status")).unwrap();
    let allowed = affinity
        .lines()
        .find(|l| l.starts_with("Cpus_allowed_list:"))
        .unwrap();
    assert_eq!(allowed.split_whitespace().nth(1), Some("0"), "{allowed}");
}

/// Without CAP_SYS_NICE (or CAP_IPC_LOCK under a finite memlock limit) the node says which
/// parameter cannot be honoured and how to allow it, and exits 1 without commanding anything.
/// Whether the test runs as root (then `setpriv` can drop capabilities).
fn root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

#[test]
fn a_system_that_does_not_allow_it_makes_the_node_refuse_naming_the_parameter() {
    if !root() && fifo_allowed() {
        eprintln!("skipped: not root, and SCHED_FIFO is allowed: no refusal to provoke");
        return;
    }
    let drop_nice: &[&str] = if root() {
        &[
            "setpriv",
            "--bounding-set",
            "-sys_nice",
            "--inh-caps",
            "-sys_nice",
        ]
    } else {
        &[]
    };
    let out = controller_node(drop_nice, &["realtime_priority:=40"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("parameter 'realtime_priority'") && stderr.contains("rtprio"),
        "{stderr}"
    );
    let drop_lock = [
        "setpriv",
        "--bounding-set",
        "-ipc_lock",
        "--inh-caps",
        "-ipc_lock",
    ];
    let memlock_limited = Command::new("sh")
        .args(["-c", "test \"$(ulimit -l)\" != unlimited"])
        .status()
        .is_ok_and(|s| s.success());
    if memlock_limited && root() {
        let out = controller_node(&drop_lock, &["realtime_priority:=40"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("memlock limit"), "{stderr}");
    }
}
