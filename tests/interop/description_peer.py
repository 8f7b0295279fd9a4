"""Plays robot_state_publisher and the arm for controller_node, with Eclipse Cyclone DDS (the
`cyclonedds` package): publishes a URDF file on rt/robot_description as std_msgs/String,
reliable and transient local (a node that subscribes later still gets it), then joint states,
until the node's first effort command arrives on the given topic, then until its first OK
report on /diagnostics (diagnostic_msgs/DiagnosticArray). Prints `published` once the URDF is
written, `command [...]` for the command and `diagnostics NAME | HARDWARE | MESSAGE | LAW`;
exit status 0 when both arrive (the command with one finite value per joint) in time.

Run by crates/ros/tests/robot_description_topic.rs."""

import argparse
import math
import sys
import time
from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration

from ros_msgs import DiagnosticArray, Float64MultiArray, JointState, String


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", type=int, required=True)
    parser.add_argument("--urdf", required=True, help="the URDF file to publish")
    parser.add_argument("--joints", required=True, help="comma-separated joint names")
    parser.add_argument("--positions", required=True, help="comma-separated positions")
    parser.add_argument("--command-topic", required=True)
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args()
    joints = args.joints.split(",")
    q = [float(v) for v in args.positions.split(",")]
    dp = DomainParticipant(args.domain)
    latched = Qos(Policy.Reliability.Reliable(duration(seconds=1)),
                  Policy.Durability.TransientLocal, Policy.History.KeepLast(1))
    qos = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepLast(10))
    description = DataWriter(dp, Topic(dp, "rt/robot_description", String), qos=latched)
    states = DataWriter(dp, Topic(dp, "rt/joint_states", JointState), qos=qos)
    commands = DataReader(dp, Topic(dp, "rt" + args.command_topic, Float64MultiArray), qos=qos)
    diagnostics = DataReader(dp, Topic(dp, "rt/diagnostics", DiagnosticArray), qos=qos)
    with open(args.urdf) as f:
        description.write(String(data=f.read()))
    print("published", flush=True)
    end = time.monotonic() + args.timeout
    command = None
    while time.monotonic() < end and command is None:
        states.write(JointState(name=joints, position=q, velocity=[0.0] * len(q)))
        for c in commands.take(N=10):
            command = list(c.data)
            print("command", command, flush=True)
        time.sleep(0.01)
    if command is None or len(command) != len(q) or not all(math.isfinite(v) for v in command):
        print("no valid command within the timeout", flush=True)
        return 1
    # The node's /diagnostics, once a second: the first one while it controls.
    end = time.monotonic() + 5.0
    while time.monotonic() < end:
        states.write(JointState(name=joints, position=q, velocity=[0.0] * len(q)))
        for d in diagnostics.take(N=10):
            for s in d.status:
                if s.level == 0:
                    values = {kv.key: kv.value for kv in s.values}
                    print("diagnostics", s.name, "|", s.hardware_id, "|", s.message, "|", values.get("controller"), flush=True)
                    return 0
        time.sleep(0.01)
    print("no OK diagnostics within 5 s", flush=True)
    return 1


if __name__ == "__main__":
    sys.exit(main())
