"""An independent ROS 2 peer for armctl's controller_node, written with Eclipse Cyclone DDS
(the `cyclonedds` package), speaking the ROS 2 wire conventions by hand: topics `rt/...`,
services `rq/...Request` / `rr/...Reply`, types `<pkg>::msg::dds_::<Type>_`.

It publishes sensor_msgs/JointState (joints shuffled, plus a gripper joint), checks the
std_msgs/Float64MultiArray efforts against the expected values, sets the `kd` gain through
`set_parameters` and sees it used, sees an invalid value rejected with a reason, and reads
`~/state`. Exit status 0 when every check passes; one line per check on stdout.

Run by tests/ros_interop.rs (see there for the expected values it is given)."""

import argparse
import json
import random
import sys
import time
from dataclasses import dataclass, field

from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.types import float64, int64, sequence, uint8, uint64
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration

from ros_msgs import Float64MultiArray, JointState


@dataclass
class ParameterValue(IdlStruct, typename="rcl_interfaces::msg::dds_::ParameterValue_"):
    type: uint8 = 0
    bool_value: bool = False
    integer_value: int64 = 0
    double_value: float64 = 0.0
    string_value: str = ""
    byte_array_value: sequence[uint8] = field(default_factory=list)
    bool_array_value: sequence[bool] = field(default_factory=list)
    integer_array_value: sequence[int64] = field(default_factory=list)
    double_array_value: sequence[float64] = field(default_factory=list)
    string_array_value: sequence[str] = field(default_factory=list)


@dataclass
class Parameter(IdlStruct, typename="rcl_interfaces::msg::dds_::Parameter_"):
    name: str = ""
    value: ParameterValue = field(default_factory=ParameterValue)


@dataclass
class SetParametersResult(IdlStruct, typename="rcl_interfaces::msg::dds_::SetParametersResult_"):
    successful: bool = False
    reason: str = ""


# Fast DDS style ("enhanced" RPC mapping): the payload is the request itself.
@dataclass
class SetParametersRequest(IdlStruct, typename="rcl_interfaces::srv::dds_::SetParameters_Request_"):
    parameters: sequence[Parameter] = field(default_factory=list)


@dataclass
class SetParametersResponse(IdlStruct, typename="rcl_interfaces::srv::dds_::SetParameters_Response_"):
    results: sequence[SetParametersResult] = field(default_factory=list)


# rmw_cyclonedds style: a (client guid, sequence number) header before the request.
@dataclass
class CycloneSetParametersRequest(IdlStruct, typename="rcl_interfaces::srv::dds_::SetParameters_Request_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    parameters: sequence[Parameter] = field(default_factory=list)


@dataclass
class CycloneSetParametersResponse(IdlStruct, typename="rcl_interfaces::srv::dds_::SetParameters_Response_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    results: sequence[SetParametersResult] = field(default_factory=list)


DOUBLE_ARRAY = 8
CHECKS = []


def check(ok, what):
    CHECKS.append((bool(ok), what))
    print(("PASS " if ok else "FAIL ") + what, flush=True)


def close(a, b, tol):
    return len(a) == len(b) and all(abs(x - y) <= tol for x, y in zip(a, b))


def blocks(msg):
    out, start = {}, msg.layout.data_offset
    for d in msg.layout.dim:
        out[d.label] = list(msg.data[start:start + d.size])
        start += d.size
    return out


class Peer:
    def __init__(self, args):
        self.args = args
        qos = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepLast(10))
        dp = DomainParticipant(args.domain)
        node = args.node
        cyclone = args.mapping == "cyclone"
        request_type = CycloneSetParametersRequest if cyclone else SetParametersRequest
        response_type = CycloneSetParametersResponse if cyclone else SetParametersResponse
        self.cyclone = cyclone
        self.states_out = DataWriter(dp, Topic(dp, "rt/joint_states", JointState), qos=qos)
        self.commands = DataReader(dp, Topic(dp, "rt" + args.command_topic, Float64MultiArray), qos=qos)
        self.state_in = DataReader(dp, Topic(dp, f"rt{node}/state", Float64MultiArray), qos=qos)
        self.requests = DataWriter(dp, Topic(dp, f"rq{node}/set_parametersRequest", request_type), qos=qos)
        self.replies = DataReader(dp, Topic(dp, f"rr{node}/set_parametersReply", response_type), qos=qos)
        self.request_type = request_type
        self.last_command = None
        self.last_state = None
        self.sequence = 0

    def publish_state(self, q, qd):
        # Joint order shuffled and a gripper joint added: the node maps joints by name.
        names = list(self.args.joints) + ["panda_finger_joint1"]
        order = list(range(len(names)))
        random.shuffle(order)
        q = list(q) + [0.04]
        qd = list(qd) + [0.0]
        self.states_out.write(JointState(
            name=[names[i] for i in order],
            position=[q[i] for i in order],
            velocity=[qd[i] for i in order],
        ))

    def pump(self):
        for c in self.commands.take(N=100):
            self.last_command = list(c.data)
        for s in self.state_in.take(N=100):
            self.last_state = s

    def run_for(self, seconds, q, qd, rate=250.0):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.publish_state(q, qd)
            self.pump()
            time.sleep(1.0 / rate)

    def set_double_array(self, name, values, patience=10.0):
        self.sequence += 1
        value = ParameterValue(type=DOUBLE_ARRAY, double_array_value=list(values))
        fields = dict(parameters=[Parameter(name=name, value=value)])
        if self.cyclone:
            fields.update(client_guid=0x0123456789ABCDEF, sequence_number=self.sequence)
        end = time.monotonic() + patience
        next_send = 0.0
        while time.monotonic() < end:
            if time.monotonic() >= next_send:
                # Repeated until answered: the first request may precede discovery.
                self.requests.write(self.request_type(**fields))
                next_send = time.monotonic() + 0.5
            for reply in self.replies.take(N=10):
                if self.cyclone and reply.sequence_number != self.sequence:
                    continue
                return reply.results[0]
            self.publish_state(self.args.q, self.args.qd)
            self.pump()
            time.sleep(0.004)
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", type=int, required=True)
    parser.add_argument("--mapping", choices=["enhanced", "cyclone"], default="enhanced")
    parser.add_argument("--expected", required=True, help="JSON: joints, q, qd, gravity, kd_old, kd_new, command_topic, node")
    args = parser.parse_args()
    expected = json.loads(args.expected)
    for key in ("joints", "q", "qd", "gravity", "kd_old", "kd_new", "command_topic", "node"):
        setattr(args, key, expected[key])
    peer = Peer(args)
    zero = [0.0] * len(args.q)
    tol = 1e-6

    # 1. Commands arrive, in the order of `joints`, with the gravity torques at rest.
    end = time.monotonic() + 30.0
    while peer.last_command is None and time.monotonic() < end:
        peer.run_for(0.05, args.q, zero)
    check(peer.last_command is not None, "commands arrive on rt" + args.command_topic)
    if peer.last_command is None:
        return 1
    peer.run_for(0.2, args.q, zero)
    check(close(peer.last_command, args.gravity, tol), f"effort at rest is the gravity torque: {peer.last_command}")

    # 2. Moving: effort = gravity - kd qd (PD with gravity compensation, at the reference).
    peer.run_for(0.3, args.q, args.qd)
    want = [g - k * v for g, k, v in zip(args.gravity, args.kd_old, args.qd)]
    check(close(peer.last_command, want, tol), f"effort moving with the start kd: {peer.last_command}")

    # 3. A new kd through set_parameters takes effect, blended in with the node's 50 ms time
    #    constant (one second is 20 of them).
    result = peer.set_double_array("kd", args.kd_new)
    check(result is not None and result.successful, f"set_parameters kd accepted: {result}")
    peer.run_for(1.0, args.q, args.qd)
    want = [g - k * v for g, k, v in zip(args.gravity, args.kd_new, args.qd)]
    check(close(peer.last_command, want, tol), f"effort uses the new kd: {peer.last_command}")

    # 4. An invalid kd is rejected with a reason; the new kd stays in use.
    result = peer.set_double_array("kd", [-1.0] * len(args.q))
    check(result is not None and not result.successful and result.reason, f"negative kd rejected: {result}")
    peer.run_for(0.2, args.q, args.qd)
    check(close(peer.last_command, want, tol), "effort still uses the accepted kd")

    # 5. ~/state carries the labelled blocks, its effort the command sent. A state published
    #    after the checks above is waited for: the last one read may be older than the last
    #    command (states go at 100 Hz, commands at every step), and a busy machine can stall
    #    this peer past state_timeout, after which the node holds for a while.
    peer.last_state = None
    matched, seen = False, None
    end = time.monotonic() + 10.0
    while not matched and time.monotonic() < end:
        peer.run_for(0.05, args.q, args.qd)
        if peer.last_state is not None:
            seen = blocks(peer.last_state)
            moving = seen.get("holding") == [0.0]
            matched = moving and close(seen.get("effort", []), want, tol)
    check(seen is not None, f"reads rt{args.node}/state")
    if seen is not None:
        check(all(k in seen for k in ("reference", "position", "error", "effort")), f"~/state blocks: {sorted(seen)}")
        check(close(seen.get("position", []), args.q, 1e-12), "~/state position is the published one")
        shown = {k: seen.get(k) for k in ("time", "holding", "effort")}
        check(matched, f"~/state effort is the command {want} (last state read: {shown})")
    failed = [w for ok, w in CHECKS if not ok]
    print(json.dumps({"checks": len(CHECKS), "failed": failed}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
