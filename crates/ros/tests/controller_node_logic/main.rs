//! controller_node's logic on a scripted in-memory transport (no middleware): what arrives is a
//! fixed list of messages, ticks and pauses; the efforts the node publishes are recorded.
//! The scripted transport is here; the tests in one file per concern.

use std::collections::VecDeque;
use std::time::Duration;

use armctl_nodes::follow_joint_trajectory::{
    ActionOutput, ActionRequest, ActionResponse, ActionResult, CancelCode, Goal, GoalId, GoalInfo,
    GoalStatus, JointTolerance,
};
use armctl_nodes::msgs::{
    Clock, DiagnosticArray, DiagnosticStatus, Float64MultiArray, Header, JointState,
    JointTrajectoryPoint, PoseStamped, Time, WrenchStamped,
};
use armctl_nodes::nodes::controller_node::ControllerNode;
use armctl_nodes::parameter_services::ParameterRequest;
use armctl_nodes::parameter_services::ParameterResponse;
use armctl_nodes::transport::{Incoming, LogLevel, NodeLogic, Outgoing, Topic, Transport};
use armctl_runtime::ros_args::RosArgs;

mod control_loop;
mod trajectory_action;

/// One scripted event (as large as an `Incoming`: a copy per event is nothing in a test).
#[allow(clippy::large_enum_variant)]
enum Step {
    Deliver(Incoming),
    /// The node's thread is late by this long (a stall: the ticker merges missed ticks).
    Pause(Duration),
}

#[derive(Default)]
struct Scripted {
    script: VecDeque<Step>,
    commands: Vec<Vec<f64>>,
    states: Vec<Float64MultiArray>,
    logs: std::sync::Mutex<Vec<String>>,
    diagnostics: Vec<DiagnosticArray>,
    /// Answers to action requests, by request id, with the number of commands sent before.
    answers: Vec<(u64, ActionResponse, usize)>,
    /// Feedback messages sent: goal id and the joints' position errors.
    feedback: Vec<(GoalId, Vec<f64>)>,
    /// Status lists published, each as (goal id's first byte, status).
    statuses: Vec<Vec<(u8, GoalStatus)>>,
    /// Values announced on `/parameter_events` beside a set's own.
    announced: Vec<(String, armctl_control::ParameterValue)>,
}

impl Transport for Scripted {
    async fn next(&mut self) -> Option<Incoming> {
        loop {
            match self.script.pop_front()? {
                Step::Deliver(incoming) => return Some(incoming),
                Step::Pause(pause) => std::thread::sleep(pause),
            }
        }
    }

    fn publish(&mut self, msg: Outgoing<'_>) {
        match msg {
            Outgoing::Commands(Float64MultiArray { data, .. }) => self.commands.push(data.clone()),
            Outgoing::State(state) => self.states.push(state.clone()),
            Outgoing::Diagnostics(d) => self.diagnostics.push(d.clone()),
            _ => {}
        }
    }

    fn publish_on(&mut self, _slot: usize, msg: Outgoing<'_>) {
        self.publish(msg);
    }

    fn received_on(&self) -> usize {
        0
    }

    fn subscriber_count(&self, _topic: Topic) -> usize {
        1
    }

    fn respond(&mut self, _id: u64, _response: ParameterResponse) {}

    fn announce_parameters(&mut self, changed: &[(String, armctl_control::ParameterValue)]) {
        self.announced.extend_from_slice(changed);
    }

    fn respond_action(&mut self, id: u64, response: ActionResponse) {
        self.answers.push((id, response, self.commands.len()));
    }

    fn publish_action(&mut self, output: ActionOutput<'_>) {
        match output {
            ActionOutput::Feedback(id, f) => self.feedback.push((id, f.error.positions.clone())),
            ActionOutput::Status(list) => self
                .statuses
                .push(list.iter().map(|(i, s)| (i.goal_id[0], *s)).collect()),
        }
    }

    fn log(&self, _level: LogLevel, text: &str) {
        self.logs.lock().unwrap().push(text.to_string());
    }
}

fn node(overrides: &[(&str, &str)]) -> ControllerNode {
    let urdf = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/planar_2link.urdf");
    // The scripts' states do not follow the efforts (to the external torque estimate, an arm
    // held by the world): no collision detection, which has tests of its own.
    let mut all = vec![
        ("urdf_path".to_string(), urdf.to_string()),
        ("collision_detection".to_string(), "off".to_string()),
    ];
    all.extend(
        overrides
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    let args = RosArgs {
        overrides: all,
        ..RosArgs::default()
    };
    ControllerNode::new(&args).expect("node configures")
}

fn state(q: [f64; 2]) -> Incoming {
    Incoming::JointStates(JointState {
        name: vec!["joint1".into(), "joint2".into()],
        position: q.to_vec(),
        velocity: vec![0.0, 0.0],
        ..JointState::default()
    })
}

fn pose_in(frame: &str, x: f64) -> Incoming {
    let mut msg = PoseStamped {
        header: Header {
            frame_id: frame.into(),
            ..Header::default()
        },
        ..PoseStamped::default()
    };
    msg.pose.position.x = x;
    msg.pose.orientation.w = 1.0;
    Incoming::TargetPose(msg)
}

fn wrench_in(frame: &str) -> Incoming {
    let mut msg = WrenchStamped {
        header: Header {
            frame_id: frame.into(),
            ..Header::default()
        },
        ..WrenchStamped::default()
    };
    msg.wrench.force.x = 1.0;
    Incoming::ExternalWrench(msg)
}

/// A node running `controller` on simulated time (states stale after 0.5 s).
fn on_sim_time(controller: &str) -> ControllerNode {
    node(&[
        ("controller", controller),
        ("use_sim_time", "true"),
        ("state_timeout", "0.5"),
    ])
}

/// The node run through `script`, and what it sent.
async fn run(node: ControllerNode, script: VecDeque<Step>) -> Scripted {
    let mut transport = Scripted {
        script,
        ..Scripted::default()
    };
    node.run(&mut transport).await.unwrap();
    transport
}

/// On simulated time: the clock at `t` and a joint state stamped `t`.
fn at(t: f64, q: [f64; 2], qd: [f64; 2]) -> [Step; 2] {
    let stamp = Time::from_seconds(t);
    [
        Step::Deliver(Incoming::Clock(Clock { clock: stamp })),
        Step::Deliver(Incoming::JointStates(JointState {
            header: Header {
                stamp,
                ..Header::default()
            },
            name: vec!["joint1".into(), "joint2".into()],
            position: q.to_vec(),
            velocity: qd.to_vec(),
            ..JointState::default()
        })),
    ]
}

/// A goal to `to` over `duration` s from now, in `joints`' order (one point: the core starts
/// it from the reference in effect).
fn goal(joints: [&str; 2], to: [f64; 2], duration: f64) -> Goal {
    let mut goal = Goal::default();
    goal.trajectory.joint_names = joints.iter().map(|j| j.to_string()).collect();
    goal.trajectory.points = vec![JointTrajectoryPoint {
        positions: to.to_vec(),
        velocities: vec![0.0, 0.0],
        time_from_start: Time::from_seconds(duration),
        ..JointTrajectoryPoint::default()
    }];
    goal
}

fn send(request: u64, id: u8, goal: Goal) -> Step {
    Step::Deliver(Incoming::Action(
        request,
        ActionRequest::SendGoal([id; 16], Box::new(goal)),
    ))
}

fn ask(request: u64, id: u8) -> Step {
    Step::Deliver(Incoming::Action(
        request,
        ActionRequest::GetResult([id; 16]),
    ))
}

fn answer(transport: &Scripted, request: u64) -> &ActionResponse {
    let found = transport.answers.iter().find(|(r, _, _)| *r == request);
    &found
        .unwrap_or_else(|| panic!("no answer to request {request}: {:?}", transport.answers))
        .1
}

fn result(transport: &Scripted, request: u64) -> (GoalStatus, ActionResult) {
    match answer(transport, request) {
        ActionResponse::Result { status, result } => (*status, result.clone()),
        other => panic!("request {request}: {other:?}"),
    }
}

fn accepted(transport: &Scripted, request: u64) -> bool {
    matches!(
        answer(transport, request),
        ActionResponse::Goal { accepted: true, .. }
    )
}
