//! Starting nodes: one per process (the `controller_node` and `sim_node` binaries, on rcl when
//! the `r2r` feature is on, else on DDS) or several in one process on DDS (`armctl demo`, the
//! end-to-end tests), each with its own DDS participant, exactly as separate processes would be.

use std::process::ExitCode;

#[cfg(feature = "dds")]
use crate::transport::dds::{DdsOptions, DdsTransport};
use tokio::signal::unix::{signal, Signal, SignalKind};

use crate::follow_joint_trajectory::{ActionOutput, ActionResponse};
use crate::parameter_services::ParameterResponse;
use crate::realtime::RealtimeSettings;
use crate::transport::{Incoming, LogLevel, NodeLogic, Outgoing, Topic, Transport};
use crate::RosError;
use armctl_runtime::names::resolve;
use armctl_runtime::ros_args::parse_ros_args;
use armctl_runtime::startup::NodeStart;

#[cfg(feature = "dds")]
/// A node running as a task of the current tokio runtime; dropping it stops the node.
#[derive(Debug)]
pub struct RunningNode {
    name: String,
    task: tokio::task::JoinHandle<()>,
}

#[cfg(feature = "dds")]
impl RunningNode {
    /// The node's fully qualified name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the node stopped (its middleware went away or the simulation failed).
    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }
}

#[cfg(feature = "dds")]
impl Drop for RunningNode {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[cfg(feature = "dds")]
/// Starts `node` on DDS as a task (call inside a tokio runtime).
pub fn spawn<N: NodeLogic>(node: N, dds: &DdsOptions) -> Result<RunningNode, RosError> {
    let spec = node.spec();
    let name = match spec.namespace.as_str() {
        "/" => format!("/{}", spec.name),
        ns => format!("{ns}/{}", spec.name),
    };
    let mut transport = DdsTransport::start(spec, dds)?;
    let task = tokio::spawn(async move {
        // The node has said why on rosout; the task just ends.
        let _ = node.run(&mut transport).await;
    });
    Ok(RunningNode { name, task })
}

/// A node's transport, with the process's stop signals delivered first as
/// [`Incoming::Shutdown`].
struct StopOnSignal<T> {
    inner: T,
    signals: [(Signal, &'static str); 4],
}

impl<T> StopOnSignal<T> {
    /// Installs handlers for SIGINT, SIGTERM, SIGHUP and SIGQUIT (Ctrl-\\). Explicitly: a node
    /// started in the background of a script inherits an ignored SIGINT, and the default
    /// action of the others would end the process without a last command.
    fn new(inner: T) -> Result<Self, RosError> {
        let install = |kind: SignalKind| {
            signal(kind).map_err(|e| RosError::Transport {
                reason: format!("installing a signal handler: {e}"),
            })
        };
        Ok(Self {
            inner,
            signals: [
                (install(SignalKind::interrupt())?, "SIGINT"),
                (install(SignalKind::terminate())?, "SIGTERM"),
                (install(SignalKind::hangup())?, "SIGHUP"),
                (install(SignalKind::quit())?, "SIGQUIT"),
            ],
        })
    }
}

/// The first of the signals to arrive.
fn poll_signals(
    signals: &mut [(Signal, &'static str)],
    cx: &mut std::task::Context<'_>,
) -> std::task::Poll<&'static str> {
    for (signal, name) in signals.iter_mut() {
        if signal.poll_recv(cx).is_ready() {
            return std::task::Poll::Ready(*name);
        }
    }
    std::task::Poll::Pending
}

impl<T: Transport + Send> Transport for StopOnSignal<T> {
    async fn next(&mut self) -> Option<Incoming> {
        let signals = &mut self.signals;
        tokio::select! {
            biased;
            name = std::future::poll_fn(|cx| poll_signals(signals, cx)) => Some(Incoming::Shutdown(name)),
            incoming = self.inner.next() => incoming,
        }
    }

    fn publish(&mut self, msg: Outgoing<'_>) {
        self.inner.publish(msg);
    }

    fn publish_on(&mut self, slot: usize, msg: Outgoing<'_>) {
        self.inner.publish_on(slot, msg);
    }

    fn received_on(&self) -> usize {
        self.inner.received_on()
    }

    fn subscriber_count(&self, topic: Topic) -> usize {
        self.inner.subscriber_count(topic)
    }

    fn respond(&mut self, id: u64, response: ParameterResponse) {
        self.inner.respond(id, response);
    }

    fn announce_parameters(&mut self, changed: &[(String, armctl_control::ParameterValue)]) {
        self.inner.announce_parameters(changed);
    }

    fn respond_action(&mut self, id: u64, response: ActionResponse) {
        self.inner.respond_action(id, response);
    }

    fn publish_action(&mut self, output: ActionOutput<'_>) {
        self.inner.publish_action(output);
    }

    #[track_caller]
    fn log(&self, level: LogLevel, text: &str) {
        self.inner.log(level, text);
    }

    fn flush(&mut self) -> impl std::future::Future<Output = ()> + Send {
        self.inner.flush()
    }
}

/// The URDF from the `robot_description` topic (resolved in the node's namespace, remappable):
/// robot_state_publisher publishes it there, reliable and transient local, and ros2_control's
/// controller manager reads it the same way since Jazzy. Waits, saying so every 10 s.
async fn robot_description_from_topic(start: &NodeStart) -> Result<String, RosError> {
    let topic = resolve(
        "robot_description",
        &start.namespace,
        &start.name,
        &start.remaps,
    );
    let node = match start.namespace.as_str() {
        "/" => format!("/{}", start.name),
        ns => format!("{ns}/{}", start.name),
    };
    eprintln!("[INFO] {node}: neither robot_description nor urdf_path is set: waiting for the URDF on {topic} (std_msgs/String, transient local, as robot_state_publisher publishes it)");
    let reader = format!("{}_robot_description_reader", start.name);
    #[cfg(feature = "r2r")]
    let receive = crate::transport::rcl::receive_latched_string(&reader, &start.namespace, &topic);
    #[cfg(not(feature = "r2r"))]
    let dds = DdsOptions::from_env()?;
    #[cfg(not(feature = "r2r"))]
    let receive =
        crate::transport::dds::receive_latched_string(&reader, &start.namespace, &topic, &dds);
    let mut receive = std::pin::pin!(receive);
    let urdf = loop {
        match tokio::time::timeout(std::time::Duration::from_secs(10), &mut receive).await {
            Ok(received) => break received?,
            Err(_) => eprintln!("[WARN] {node}: still waiting for the URDF on {topic} (start robot_state_publisher, or set urdf_path or robot_description)"),
        }
    };
    if urdf.trim().is_empty() {
        return Err(RosError::Transport {
            reason: format!("the URDF received on {topic} is empty"),
        });
    }
    eprintln!(
        "[INFO] {node}: URDF received on {topic} ({} bytes)",
        urdf.len()
    );
    Ok(urdf)
}

/// What `--help` prints.
fn usage(program: &str) -> String {
    format!(
        "{program}: an armctl ROS 2 node (docs/ros2.md: its topics, services and parameters)\n\
         \n\
         usage: {program} [--print-params] [--ros-args [-p NAME:=VALUE] [--params-file FILE] [-r FROM:=TO] ...]\n\
         \n\
         \x20 --print-params  print the parameter declarations as a YAML parameter file and exit\n\
         \x20                 (with urdf_path or robot_description given, the controller's too)\n\
         \x20 -h, --help      print this and exit\n\
         \x20 --ros-args      ROS 2 arguments: parameters (-p, --params-file), remaps (-r), the\n\
         \x20                 node's name and namespace (-r __node:=NAME, -r __ns:=/NS)\n"
    )
}

/// The `main` of a node binary: ROS arguments, `--help`, `--print-params`, then the node until the
/// process is stopped: on rcl with the `r2r` feature, else on DDS (domain, discovery range and
/// service form from ROS's environment). SIGINT, SIGTERM, SIGHUP and SIGQUIT stop the node cleanly
/// (controller_node sends its `safe_mode` command last) and the process exits 0.
///
/// With neither `robot_description` nor `urdf_path` given, the node first waits for the URDF on
/// the `robot_description` topic ([`robot_description_from_topic`]). The node runs on the main
/// thread, made real-time by `realtime_priority` and `cpu_affinity` ([`RealtimeSettings`]).
pub fn node_main<N: NodeLogic>(
    program: &str,
    build: fn(&NodeStart) -> Result<N, RosError>,
) -> ExitCode {
    let result = (|| -> Result<(), RosError> {
        let args = parse_ros_args(std::env::args().skip(1))?;
        if args.other.iter().any(|a| a == "--help" || a == "-h") {
            print!("{}", usage(program));
            return Ok(());
        }
        let print_params = args.other.iter().any(|a| a == "--print-params");
        if let Some(unknown) = args.other.iter().find(|a| *a != "--print-params") {
            return Err(armctl_runtime::RuntimeError::Arguments {
                reason: format!("unknown argument '{unknown}' (node options go after --ros-args; --print-params lists the parameters)"),
            }
            .into());
        }
        let mut start = NodeStart::new(&args, program)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| RosError::Transport {
                reason: e.to_string(),
            })?;
        if !print_params && !start.names_a_robot() {
            let urdf = runtime.block_on(robot_description_from_topic(&start))?;
            let value = armctl_control::ParameterValue::String(urdf);
            start.values.push(("robot_description".into(), value));
        }
        let node = build(&start)?;
        if print_params {
            for line in crate::transport::backend::describe(node.spec()) {
                println!("# {line}");
            }
            print!("{}", node.describe_parameters());
            return Ok(());
        }
        runtime.block_on(async {
            #[cfg(feature = "r2r")]
            let transport = crate::transport::rcl::RclTransport::start(node.spec())?;
            #[cfg(not(feature = "r2r"))]
            let transport = DdsTransport::start(node.spec(), &DdsOptions::from_env()?)?;
            let mut transport = StopOnSignal::new(transport)?;
            transport.log(
                LogLevel::Info,
                &crate::transport::backend::describe(node.spec()).join("\n"),
            );
            // After the middleware's threads are started: they keep the normal scheduler.
            let realtime = RealtimeSettings::from_parameters(&node.spec().parameters);
            if let Some(done) = realtime.apply_to_this_thread()? {
                transport.log(LogLevel::Info, &done);
            }
            node.run(&mut transport).await
        })
    })();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{program}: {e}");
            ExitCode::FAILURE
        }
    }
}
