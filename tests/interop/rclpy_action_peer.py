"""MoveIt's side of controller_node's FollowJointTrajectory action, played by rclpy's own
ActionClient on Fast DDS (ROS 2 Jazzy's wheels, control_msgs from the test fixture), with the
arm a sim_node publishing /joint_states. Scenarios, in order: a goal followed to the end with
feedback; a goal naming an unknown joint rejected, its result INVALID_JOINTS; a cancelled goal;
a path tolerance too tight to keep, aborting the goal with PATH_TOLERANCE_VIOLATED; and
~/controller_state decoded by a subscriber. One line per check on stdout (`PASS ...` /
`FAIL ...`), then a JSON line {"checks": N, "failed": [...]}; exit status 0 when every check
passes.

Run by tests/rclpy_action.rs against the r2r nodes."""

import argparse
import json
import sys
import time

import rclpy
from action_msgs.msg import GoalStatus
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTolerance, JointTrajectoryControllerState
from rclpy.action import ActionClient
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from quintic import builders

SUCCESSFUL = FollowJointTrajectory.Result.SUCCESSFUL
INVALID_JOINTS = FollowJointTrajectory.Result.INVALID_JOINTS
PATH_TOLERANCE_VIOLATED = FollowJointTrajectory.Result.PATH_TOLERANCE_VIOLATED


trajectory = builders(JointTrajectory, JointTrajectoryPoint, Duration)[0]


class Peer:
    def __init__(self, args):
        self.args = args
        self.failed = []
        self.checks = 0
        self.node = Node("rclpy_action_peer")
        self.positions = {}
        self.states = []
        self.feedback = []
        self.node.create_subscription(JointState, "/joint_states", self.on_joint_state, qos_profile_sensor_data)
        self.node.create_subscription(JointTrajectoryControllerState, args.node + "/controller_state",
                                      self.states.append, 10)
        self.client = ActionClient(self.node, FollowJointTrajectory, args.node + "/follow_joint_trajectory")
        self.results = self.node.create_client(FollowJointTrajectory.Impl.GetResultService,
                                               args.node + "/follow_joint_trajectory/_action/get_result")

    def on_joint_state(self, msg):
        for name, q in zip(msg.name, msg.position):
            self.positions[name] = q

    def check(self, ok, what):
        self.checks += 1
        print(("PASS " if ok else "FAIL ") + what, flush=True)
        if not ok:
            self.failed.append(what)
        return ok

    def wait(self, future, seconds):
        """The future's result, or None when it is not done within `seconds`."""
        rclpy.spin_until_future_complete(self.node, future, timeout_sec=seconds)
        return future.result() if future.done() else None

    def spin_for(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            rclpy.spin_once(self.node, timeout_sec=0.05)

    def here(self):
        """The joints' positions in the newest joint states (None for a joint none named
        within 30 s)."""
        self.spin_for(0.2)
        deadline = time.monotonic() + 30.0
        while any(j not in self.positions for j in self.args.joints) and time.monotonic() < deadline:
            rclpy.spin_once(self.node, timeout_sec=0.1)
        return [self.positions.get(j) for j in self.args.joints]

    def send(self, goal, seconds=30.0):
        """The goal handle once the server answered, and the feedback it sends kept."""
        future = self.client.send_goal_async(goal, feedback_callback=lambda f: self.feedback.append(f.feedback))
        return self.wait(future, seconds)

    def result(self, handle, seconds):
        response = self.wait(handle.get_result_async(), seconds)
        return (response.status, response.result) if response is not None else (None, None)


def followed(peer, args):
    here = peer.here()
    if not peer.check(None not in here, f"joint states name every joint: {here}"):
        return
    handle = peer.send(FollowJointTrajectory.Goal(trajectory=trajectory(args.joints, here, args.goal, args.duration)))
    if not peer.check(handle is not None and handle.accepted, "a goal as MoveIt sends it is accepted"):
        return
    status, result = peer.result(handle, args.duration + 30.0)
    peer.check(status == GoalStatus.STATUS_SUCCEEDED and result.error_code == SUCCESSFUL,
               f"the goal succeeds: status {status}, {result}")
    good = [f for f in peer.feedback if list(f.joint_names) == args.joints and len(f.actual.positions) == len(args.joints)]
    peer.check(good, f"feedback with the joints and their actual positions: {len(good)} of {len(peer.feedback)}")
    q = peer.here()
    error = max(abs(a - b) for a, b in zip(q, args.goal)) if None not in q else None
    peer.check(error is not None and error <= 0.05, f"the arm at the goal (within the default goal tolerance 0.05 rad): {error}")


def rejected(peer, args):
    here = peer.here()
    joints = list(args.joints)
    joints[2] = "elbow_joint"
    handle = peer.send(FollowJointTrajectory.Goal(trajectory=trajectory(joints, here, here, 1.0)))
    if not peer.check(handle is not None and not handle.accepted, "a goal naming elbow_joint is rejected"):
        return
    # rclpy's goal handle gives no result for a rejected goal: get_result is asked directly, as
    # MoveIt's controller manager reads the reason of a rejection.
    peer.results.wait_for_service(timeout_sec=10.0)
    request = FollowJointTrajectory.Impl.GetResultService.Request(goal_id=handle.goal_id)
    response = peer.wait(peer.results.call_async(request), 10.0)
    peer.check(response is not None and response.result.error_code == INVALID_JOINTS and "elbow_joint" in response.result.error_string,
               f"its result is INVALID_JOINTS naming the joint: {response and response.result}")


def cancelled(peer, args):
    here = peer.here()
    handle = peer.send(FollowJointTrajectory.Goal(trajectory=trajectory(args.joints, here, args.start, 4.0)))
    if not peer.check(handle is not None and handle.accepted, "a slow goal is accepted"):
        return
    peer.spin_for(1.0)
    response = peer.wait(handle.cancel_goal_async(), 10.0)
    peer.check(response is not None and response.return_code == 0 and len(response.goals_canceling) == 1,
               f"the cancel is answered with the goal being cancelled: {response}")
    status, _ = peer.result(handle, 30.0)
    peer.check(status == GoalStatus.STATUS_CANCELED, f"the goal ends CANCELED: status {status}")
    q = peer.here()
    peer.check(None not in q and max(abs(a - b) for a, b in zip(q, args.start)) > 0.02,
               f"the arm stopped part way: {q}")


def path_tolerance(peer, args):
    here = peer.here()
    tight = [JointTolerance(name=j, position=1e-9) for j in args.joints]
    goal = FollowJointTrajectory.Goal(trajectory=trajectory(args.joints, here, args.goal, args.duration),
                                      path_tolerance=tight)
    handle = peer.send(goal)
    if not peer.check(handle is not None and handle.accepted, "a goal with a 1e-9 rad path tolerance is accepted"):
        return
    status, result = peer.result(handle, args.duration + 30.0)
    peer.check(status == GoalStatus.STATUS_ABORTED and result.error_code == PATH_TOLERANCE_VIOLATED
               and any(j in result.error_string for j in args.joints),
               f"it aborts with PATH_TOLERANCE_VIOLATED naming the joint: status {status}, {result}")


def controller_state(peer, args):
    peer.states.clear()
    deadline = time.monotonic() + 10.0
    while not peer.states and time.monotonic() < deadline:
        rclpy.spin_once(peer.node, timeout_sec=0.1)
    if not peer.check(peer.states, "~/controller_state received"):
        return
    s = peer.states[-1]
    n = len(args.joints)
    peer.check(list(s.joint_names) == args.joints and len(s.reference.positions) == n and len(s.feedback.positions) == n,
               f"~/controller_state names the joints with reference and feedback: {list(s.joint_names)}")
    error = [r - f for r, f in zip(s.reference.positions, s.feedback.positions)]
    peer.check(max(abs(a - b) for a, b in zip(error, s.error.positions)) <= 1e-12 and len(s.output.effort) == n,
               f"error = reference - feedback, and the efforts sent: {list(s.error.positions)}")
    peer.check(s.speed_scaling_factor == 1.0, f"Jazzy's layout, speed_scaling_factor 1: {s.speed_scaling_factor}")


SCENARIOS = [followed, rejected, cancelled, path_tolerance, controller_state]


def floats(text):
    return [float(x) for x in text.split(",")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--node", default="/controller_node")
    parser.add_argument("--joints", required=True)
    parser.add_argument("--start", type=floats, required=True)
    parser.add_argument("--goal", type=floats, required=True)
    parser.add_argument("--duration", type=float, default=2.0)
    args = parser.parse_args()
    args.joints = args.joints.split(",")
    rclpy.init()
    peer = Peer(args)
    if peer.check(peer.client.wait_for_server(timeout_sec=60.0), "the action server is discovered"):
        for scenario in SCENARIOS:
            print(f"== {scenario.__name__}", flush=True)
            scenario(peer, args)
    print(json.dumps({"checks": peer.checks, "failed": peer.failed}), flush=True)
    peer.node.destroy_node()
    rclpy.shutdown()
    sys.exit(0 if not peer.failed else 1)


if __name__ == "__main__":
    main()
