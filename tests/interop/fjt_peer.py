"""An independent ROS 2 action client for armctl's controller_node, written with Eclipse Cyclone
DDS (the `cyclonedds` package): it plays MoveIt's moveit_simple_controller_manager sending
control_msgs/action/FollowJointTrajectory goals, speaking the ROS 2 action wire conventions by
hand: the services `rq<action>/_action/{send_goal,cancel_goal,get_result}Request` and
`rr<action>/_action/...Reply` (in the --mapping of the server's middleware), the topics
`rt<action>/_action/feedback` and `rt<action>/_action/status`.

The arm is a separate simulator (armctl's sim_node) publishing rt/joint_states, which the peer
reads to see the motion. --scenario picks one of succeed, unknown_joint, cancel, preempt,
goal_tolerance, bad_tolerance (the functions of those names say what each checks), or `all` of
them in that order. One line per check on stdout (`PASS ...` / `FAIL ...`), then a JSON line
{"checks": N, "failed": [...]}; exit status 0 when every check passes. --timeout bounds the run.

Run by crates/ros/tests/follow_joint_trajectory.rs, with controller_node and sim_node on the
same DDS domain."""

import argparse
import json
import math
import random
import sys
import time
import uuid

from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration

from quintic import builders
from ros_msgs import (
    UUID, CancelGoalRequest, CancelGoalResponse, CycloneCancelGoalRequest, CycloneCancelGoalResponse,
    CycloneFollowJointTrajectoryGetResultRequest, CycloneFollowJointTrajectoryGetResultResponse,
    CycloneFollowJointTrajectorySendGoalRequest, CycloneFollowJointTrajectorySendGoalResponse, Duration,
    FollowJointTrajectoryFeedbackMessage, FollowJointTrajectoryGetResultRequest,
    FollowJointTrajectoryGetResultResponse, FollowJointTrajectoryGoal, FollowJointTrajectorySendGoalRequest,
    FollowJointTrajectorySendGoalResponse, GoalInfo, GoalStatusArray, JointState, JointTolerance,
    JointTrajectory, JointTrajectoryControllerStateHumble, JointTrajectoryControllerStateJazzy, JointTrajectoryPoint,
)

# action_msgs/GoalStatus
UNKNOWN, EXECUTING, SUCCEEDED, CANCELED, ABORTED = 0, 2, 4, 5, 6
# action_msgs/srv/CancelGoal return codes
ERROR_NONE, ERROR_UNKNOWN_GOAL_ID, ERROR_GOAL_TERMINATED = 0, 2, 3
# control_msgs/action/FollowJointTrajectory result error codes
SUCCESSFUL, INVALID_GOAL, INVALID_JOINTS, GOAL_TOLERANCE_VIOLATED = 0, -1, -2, -5

RELIABLE = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepLast(10))
LATCHED = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.Durability.TransientLocal,
              Policy.History.KeepLast(1))
# Best effort matches the simulator's joint states whichever reliability it publishes them with.
SENSOR = Qos(Policy.Reliability.BestEffort, Policy.History.KeepLast(10))

DISCOVERY_SECONDS = 30.0
REPLY_SECONDS = 5.0


class Timeout(Exception):
    """The overall --timeout ran out."""


def valid(reader, n=100):
    """The samples with data that `reader` holds, taken (not the writer-gone notices)."""
    return [s for s in reader.take(N=n) if s.sample_info.valid_data]


def max_distance(a, b):
    return max(abs(x - y) for x, y in zip(a, b))


trajectory, to_duration = builders(JointTrajectory, JointTrajectoryPoint, Duration)


class ServiceClient:
    """One ROS 2 service client: a request writer and a reply reader, one request outstanding at
    a time. With the cyclone mapping a reply is the outstanding request's by its (client guid,
    sequence number); with the enhanced mapping it is the next reply on the service."""

    def __init__(self, dp, name, request_type, reply_type, cyclone, guid):
        self.name = name.rsplit("/", 1)[-1]
        self.request_type = request_type
        self.requests = DataWriter(dp, Topic(dp, f"rq{name}Request", request_type), qos=RELIABLE)
        self.replies = DataReader(dp, Topic(dp, f"rr{name}Reply", reply_type), qos=RELIABLE)
        self.cyclone = cyclone
        self.guid = guid
        self.sequence = 0
        self.pending = False
        self.reply = None
        self.reply_time = None

    def matched(self):
        return bool(self.requests.get_matched_subscriptions()) and bool(self.replies.get_matched_publications())

    def forget(self):
        """Drops the outstanding request, if any, and the last reply."""
        self.pending, self.reply, self.reply_time = False, None, None

    def send(self, **fields):
        self.forget()
        self.sequence += 1
        if self.cyclone:
            fields.update(client_guid=self.guid, sequence_number=self.sequence)
        self.pending = True
        self.requests.write(self.request_type(**fields))

    def poll(self):
        for reply in valid(self.replies, 10):
            ours = not self.cyclone or (reply.client_guid, reply.sequence_number) == (self.guid, self.sequence)
            if self.pending and ours:
                self.pending, self.reply, self.reply_time = False, reply, time.monotonic()


class Peer:
    """The action client, the joint-state, feedback and status readers, and the checks made."""

    def __init__(self, args):
        self.args = args
        self.deadline = time.monotonic() + args.timeout
        self.scenario = "setup"
        self.checks = []
        dp = DomainParticipant(args.domain)
        cyclone = args.mapping == "cyclone"
        guid = random.getrandbits(64)
        action = args.action + "/_action/"
        if cyclone:
            send_goal = (CycloneFollowJointTrajectorySendGoalRequest, CycloneFollowJointTrajectorySendGoalResponse)
            get_result = (CycloneFollowJointTrajectoryGetResultRequest, CycloneFollowJointTrajectoryGetResultResponse)
            cancel_goal = (CycloneCancelGoalRequest, CycloneCancelGoalResponse)
        else:
            send_goal = (FollowJointTrajectorySendGoalRequest, FollowJointTrajectorySendGoalResponse)
            get_result = (FollowJointTrajectoryGetResultRequest, FollowJointTrajectoryGetResultResponse)
            cancel_goal = (CancelGoalRequest, CancelGoalResponse)
        self.send_goal = ServiceClient(dp, action + "send_goal", *send_goal, cyclone, guid)
        self.get_result = ServiceClient(dp, action + "get_result", *get_result, cyclone, guid)
        self.cancel_goal = ServiceClient(dp, action + "cancel_goal", *cancel_goal, cyclone, guid)
        self.services = (self.send_goal, self.get_result, self.cancel_goal)
        self.feedback_in = DataReader(
            dp, Topic(dp, f"rt{action}feedback", FollowJointTrajectoryFeedbackMessage), qos=RELIABLE)
        self.status_in = DataReader(dp, Topic(dp, f"rt{action}status", GoalStatusArray), qos=LATCHED)
        self.joint_states = DataReader(dp, Topic(dp, "rt/joint_states", JointState), qos=SENSOR)
        state_type = JointTrajectoryControllerStateHumble if args.state_layout == "humble" else JointTrajectoryControllerStateJazzy
        node = args.action.rsplit("/", 1)[0]
        self.controller_state_in = DataReader(dp, Topic(dp, f"rt{node}/controller_state", state_type), qos=RELIABLE)
        self.controller_states = []  # the last few ~/controller_state messages
        self.position, self.velocity = {}, {}
        self.feedback = {}  # goal id -> feedback messages received for it
        self.statuses = {}  # goal id -> the statuses the status array showed for it, in order

    def check(self, ok, what):
        self.checks.append((bool(ok), f"{self.scenario}: {what}"))
        print(("PASS " if ok else "FAIL ") + self.checks[-1][1], flush=True)
        return bool(ok)

    # Reading everything, all the time.

    def pump(self):
        for s in valid(self.joint_states):
            self.position.update(zip(s.name, s.position))
            self.velocity.update(zip(s.name, s.velocity))
        self.controller_states = (self.controller_states + valid(self.controller_state_in))[-20:]
        for f in valid(self.feedback_in):
            self.feedback.setdefault(bytes(f.goal_id.uuid), []).append(f.feedback)
        for a in valid(self.status_in, 10):
            for s in a.status_list:
                seen = self.statuses.setdefault(bytes(s.goal_info.goal_id.uuid), [])
                if not seen or seen[-1] != s.status:
                    seen.append(s.status)
        for service in self.services:
            service.poll()

    def wait_until(self, condition, seconds):
        """Pumps until `condition()` holds (True) or `seconds` pass (False). A wait cut short by
        the end of --timeout returns False (the caller's check fails); the next one raises Timeout."""
        if time.monotonic() >= self.deadline:
            raise Timeout
        end = min(time.monotonic() + seconds, self.deadline)
        while True:
            self.pump()
            if condition():
                return True
            if time.monotonic() >= end:
                return False
            time.sleep(0.005)

    def pause_until(self, when):
        self.wait_until(lambda: False, when - time.monotonic())

    def joints_now(self, table):
        """`table`'s latest values for the controller's joints, in --joints order; None if one lacks."""
        if not all(j in table for j in self.args.joints):
            return None
        return [table[j] for j in self.args.joints]

    def fresh_positions(self):
        """The positions in the next joint states received; None if none come within 1 s."""
        self.position.clear()
        self.wait_until(lambda: self.joints_now(self.position) is not None, 1.0)
        return self.joints_now(self.position)

    def server_ready(self):
        return (all(s.matched() for s in self.services) and bool(self.feedback_in.get_matched_publications())
                and bool(self.status_in.get_matched_publications()))

    # Service calls.

    def send(self, service, **fields):
        """Sends a request once both of the service's endpoints are matched (FAIL if not in 30 s)."""
        if not self.wait_until(service.matched, DISCOVERY_SECONDS):
            service.forget()
            return self.check(False, f"{service.name} server matched within {DISCOVERY_SECONDS} s")
        service.send(**fields)
        return True

    def wait_reply(self, service, seconds):
        """The reply to `service`'s outstanding request, None (and a FAIL) if not within `seconds`."""
        if self.wait_until(lambda: service.reply is not None, seconds):
            return service.reply
        self.check(False, f"{service.name} replied within {seconds:.1f} s")
        return None

    def call(self, service, seconds=REPLY_SECONDS, **fields):
        return self.wait_reply(service, seconds) if self.send(service, **fields) else None

    def goal(self, goal, what, ask_result=True):
        """Sends `goal` with a fresh random id, checks it `what` (accepted / rejected) and, unless
        told not to, asks for its result right away as rclcpp's client does; returns (goal id,
        accepted, time accepted)."""
        goal_id = uuid.uuid4().bytes
        reply = self.call(self.send_goal, goal_id=UUID(uuid=goal_id), goal=goal)
        accepted = reply is not None and reply.accepted
        if reply is not None:
            self.check(accepted == (what == "accepted"), f"goal {what}: accepted = {reply.accepted}")
        if accepted and ask_result:
            self.send(self.get_result, goal_id=UUID(uuid=goal_id))
        return goal_id, accepted, self.send_goal.reply_time

    def cancel(self, goal_id):
        return self.call(self.cancel_goal, goal_info=GoalInfo(goal_id=UUID(uuid=goal_id)))

    # Where to move.

    def here(self):
        q = self.joints_now(self.position)
        if q is None:
            self.check(False, "joint_states give the position of every joint")
        return q

    def other_end(self, q):
        """--start or --goal, whichever is farther from q."""
        a = self.args
        return a.start if max_distance(q, a.start) > max_distance(q, a.goal) else a.goal

    def move(self, q0, q1, seconds, **goal_fields):
        return FollowJointTrajectoryGoal(trajectory=trajectory(self.args.joints, q0, q1, seconds), **goal_fields)


# The scenarios.

def succeed(peer, args):
    """start -> goal over --duration: feedback, EXECUTING then SUCCEEDED, the result on time, the arm there."""
    goal_id, accepted, t_accepted = peer.goal(peer.move(args.start, args.goal, args.duration), "accepted")
    if not accepted:
        return
    reply = peer.wait_reply(peer.get_result, args.duration + 6.0)
    if reply is not None:
        elapsed = peer.get_result.reply_time - t_accepted
        peer.check(reply.status == SUCCEEDED and reply.result.error_code == SUCCESSFUL,
                   f"result SUCCEEDED, SUCCESSFUL: status {reply.status}, {reply.result}")
        peer.check(args.duration - 0.2 <= elapsed <= args.duration + 5.0,
                   f"result {elapsed:.3f} s after acceptance (motion {args.duration} s)")
    feedback = peer.feedback.get(goal_id, [])
    good = [f for f in feedback if list(f.joint_names) == args.joints and len(f.actual.positions) == len(args.joints)]
    peer.check(good, f"feedback with the joints and their actual positions: {len(good)} of {len(feedback)}")
    peer.wait_until(lambda: SUCCEEDED in peer.statuses.get(goal_id, []), 1.0)
    seen = peer.statuses.get(goal_id, [])
    peer.check(EXECUTING in seen and SUCCEEDED in seen[seen.index(EXECUTING):],
               f"status showed EXECUTING then SUCCEEDED: {seen}")
    q = peer.fresh_positions()
    peer.check(q is not None and max_distance(q, args.goal) <= 0.01, f"the arm is at the goal: {q}")
    controller_state(peer, args)


def controller_state(peer, args):
    """~/controller_state (control_msgs/JointTrajectoryControllerState in --state-layout) as
    joint_trajectory_controller publishes it: the joints by name, the reference at the goal,
    error = reference - feedback, one effort per joint in the output."""
    peer.controller_states = []  # one published after the goal ended: the reference at rest
    peer.wait_until(lambda: peer.controller_states, 2.0)
    if not peer.check(peer.controller_states, f"reads ~/controller_state in the {args.state_layout} layout"):
        return
    s = peer.controller_states[-1]
    n = len(args.joints)
    peer.check(list(s.joint_names) == args.joints, f"~/controller_state names the joints: {list(s.joint_names)}")
    peer.check(max_distance(s.reference.positions, args.goal) <= 1e-9, f"~/controller_state reference at the goal: {list(s.reference.positions)}")
    error = [r - f for r, f in zip(s.reference.positions, s.feedback.positions)]
    peer.check(len(s.feedback.positions) == n and max_distance(error, s.error.positions) <= 1e-12,
               f"~/controller_state error = reference - feedback: {list(s.error.positions)}")
    peer.check(len(s.output.effort) == n and all(math.isfinite(e) for e in s.output.effort),
               f"~/controller_state output efforts: {list(s.output.effort)}")
    if args.state_layout == "humble":
        peer.check(list(s.desired.positions) == list(s.reference.positions) and list(s.actual.positions) == list(s.feedback.positions),
                   "~/controller_state (Humble) desired and actual repeat reference and feedback")
    else:
        peer.check(s.speed_scaling_factor == 1.0, f"~/controller_state (Jazzy) speed_scaling_factor: {s.speed_scaling_factor}")


def rejected(peer, goal, name):
    """Sends a goal that names `name` where a joint of the controller belongs: rejected, and its
    result (kept by the server) INVALID_JOINTS with a message naming it."""
    goal_id, accepted, _ = peer.goal(goal, "rejected")
    if accepted:
        peer.wait_reply(peer.get_result, peer.args.duration + 6.0)  # lets the accepted goal end first
        return
    reply = peer.call(peer.get_result, goal_id=UUID(uuid=goal_id))
    if reply is not None:
        peer.check(reply.status in (UNKNOWN, ABORTED), f"result status UNKNOWN or ABORTED: {reply.status}")
        peer.check(reply.result.error_code == INVALID_JOINTS and name in reply.result.error_string,
                   f"result INVALID_JOINTS naming {name}: {reply.result}")


def unknown_joint(peer, args):
    """The goal of `succeed` with its last joint named elbow_joint."""
    goal = peer.move(args.start, args.goal, args.duration)
    goal.trajectory.joint_names[-1] = "elbow_joint"
    rejected(peer, goal, "elbow_joint")


def cancel(peer, args):
    """To the other end over 3 x --duration, canceled at 40 % of that: the arm stops part way and
    holds; canceling again or an unknown goal id is answered as such."""
    here = peer.here()
    if here is None:
        return
    there = peer.other_end(here)
    seconds = 3 * args.duration
    goal_id, accepted, t_accepted = peer.goal(peer.move(here, there, seconds), "accepted")
    if not accepted:
        return
    peer.pause_until(t_accepted + 0.4 * seconds)
    reply = peer.cancel(goal_id)
    if reply is None:
        return
    canceling = [bytes(g.goal_id.uuid) for g in reply.goals_canceling]
    peer.check(reply.return_code == ERROR_NONE and goal_id in canceling,
               f"cancel ERROR_NONE, the goal canceling: {reply.return_code}, {len(canceling)} goal(s)")
    peer.pause_until(peer.cancel_goal.reply_time + 1.0)
    q, qd = peer.joints_now(peer.position), peer.joints_now(peer.velocity)
    peer.check(qd is not None and max(abs(v) for v in qd) < 0.05, f"stopped 1 s after the cancel: velocity {qd}")
    peer.check(q is not None and min(max_distance(q, here), max_distance(q, there)) >= 0.05,
               f"stopped part way: {q}")
    peer.pause_until(time.monotonic() + 0.5)
    q2 = peer.joints_now(peer.position)
    peer.check(q is not None and q2 is not None and max_distance(q, q2) < 0.005, f"holds: {q} then {q2}")
    result = peer.wait_reply(peer.get_result, REPLY_SECONDS)
    if result is not None:
        peer.check(result.status == CANCELED, f"result CANCELED: status {result.status}, {result.result}")
    again = peer.cancel(goal_id)
    if again is not None:
        peer.check(again.return_code in (ERROR_GOAL_TERMINATED, ERROR_UNKNOWN_GOAL_ID),
                   f"cancel again: GOAL_TERMINATED or UNKNOWN_GOAL_ID: {again.return_code}")
    unknown = peer.cancel(uuid.uuid4().bytes)
    if unknown is not None:
        peer.check(unknown.return_code == ERROR_UNKNOWN_GOAL_ID and not unknown.goals_canceling,
                   f"cancel an unknown goal: UNKNOWN_GOAL_ID, none canceling: "
                   f"{unknown.return_code}, {len(unknown.goals_canceling)} goal(s)")


def preempt(peer, args):
    """Goal A to the other end over 3 x --duration, after 1 s goal B back over --duration: A
    CANCELED with INVALID_GOAL, B SUCCEEDED, the arm back where A started."""
    here = peer.here()
    if here is None:
        return
    a_id, a_accepted, t_accepted = peer.goal(peer.move(here, peer.other_end(here), 3 * args.duration), "accepted")
    if not a_accepted:
        return
    peer.pause_until(t_accepted + 1.0)
    now = peer.here()
    if now is None:
        return
    # B's result is asked for once A's is in (one get_result request outstanding at a time).
    b_id, b_accepted, _ = peer.goal(peer.move(now, here, args.duration), "accepted", ask_result=False)
    a_reply = peer.wait_reply(peer.get_result, REPLY_SECONDS)
    if a_reply is not None:
        peer.check(a_reply.status == CANCELED and a_reply.result.error_code == INVALID_GOAL
                   and a_reply.result.error_string,
                   f"A's result CANCELED, INVALID_GOAL with a message: status {a_reply.status}, {a_reply.result}")
    if not b_accepted:
        return
    peer.send(peer.get_result, goal_id=UUID(uuid=b_id))
    b_reply = peer.wait_reply(peer.get_result, args.duration + 6.0)
    if b_reply is not None:
        peer.check(b_reply.status == SUCCEEDED and b_reply.result.error_code == SUCCESSFUL,
                   f"B's result SUCCEEDED, SUCCESSFUL: status {b_reply.status}, {b_reply.result}")
    q = peer.fresh_positions()
    peer.check(q is not None and max_distance(q, here) <= 0.01, f"the arm is at B's end {here}: {q}")


def goal_tolerance(peer, args):
    """To the other end over --duration with a goal tolerance of 1e-12 rad on every joint, 0.1 s
    to reach it: ABORTED, GOAL_TOLERANCE_VIOLATED."""
    here = peer.here()
    if here is None:
        return
    tolerance = [JointTolerance(name=j, position=1e-12) for j in args.joints]
    goal = peer.move(here, peer.other_end(here), args.duration,
                     goal_tolerance=tolerance, goal_time_tolerance=to_duration(0.1))
    goal_id, accepted, _ = peer.goal(goal, "accepted")
    if not accepted:
        return
    reply = peer.wait_reply(peer.get_result, args.duration + 6.0)
    if reply is not None:
        peer.check(reply.status == ABORTED and reply.result.error_code == GOAL_TOLERANCE_VIOLATED
                   and reply.result.error_string,
                   f"result ABORTED, GOAL_TOLERANCE_VIOLATED with a message: status {reply.status}, {reply.result}")


def bad_tolerance(peer, args):
    """A goal whose path tolerance names no_such_joint."""
    here = peer.here()
    if here is None:
        return
    tolerance = [JointTolerance(name="no_such_joint", position=0.1)]
    rejected(peer, peer.move(here, peer.other_end(here), args.duration, path_tolerance=tolerance), "no_such_joint")


SCENARIOS = {f.__name__: f for f in (succeed, unknown_joint, cancel, preempt, goal_tolerance, bad_tolerance)}


def run(peer, names):
    peer.check(peer.wait_until(lambda: peer.joints_now(peer.position) is not None, DISCOVERY_SECONDS),
               "rt/joint_states give every joint")
    if not peer.check(peer.wait_until(peer.server_ready, DISCOVERY_SECONDS),
                      f"action server {peer.args.action} found (3 services, feedback, status)"):
        return
    for name in names:
        peer.scenario = name
        SCENARIOS[name](peer, peer.args)


def floats(text):
    return [float(v) for v in text.split(",")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", type=int, required=True)
    parser.add_argument("--mapping", choices=["enhanced", "cyclone"], default="enhanced")
    parser.add_argument("--action", default="/controller_node/follow_joint_trajectory")
    parser.add_argument("--joints", required=True, type=lambda t: t.split(","), help="comma-separated joint names")
    parser.add_argument("--start", required=True, type=floats, help="where the arm rests now, one value per joint")
    parser.add_argument("--goal", required=True, type=floats, help="a reachable target, one value per joint")
    parser.add_argument("--scenario", required=True, choices=list(SCENARIOS) + ["all"])
    parser.add_argument("--duration", type=float, default=2.0, help="seconds of the motion to the goal")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds for the whole run")
    parser.add_argument("--state-layout", choices=["humble", "jazzy"], default="jazzy",
                        help="the layout of control_msgs/JointTrajectoryControllerState the node publishes")
    args = parser.parse_args()
    if not len(args.joints) == len(args.start) == len(args.goal):
        parser.error("--joints, --start and --goal need one value per joint")
    peer = Peer(args)
    try:
        run(peer, list(SCENARIOS) if args.scenario == "all" else [args.scenario])
    except Timeout:
        peer.check(False, f"finished within --timeout {args.timeout} s")
    failed = [w for ok, w in peer.checks if not ok]
    print(json.dumps({"checks": len(peer.checks), "failed": failed}), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
