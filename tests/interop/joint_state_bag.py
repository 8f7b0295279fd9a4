"""rosbag2-style MCAP files of sensor_msgs/JointState, written and read with the MCAP
project's own ROS 2 support (mcap-ros2-support), independent of armctl.

  joint_state_bag.py write LOG.csv OUT.mcap   # armctl's CSV log (t, q_*, qd_*, effort_*)
  joint_state_bag.py read IN.mcap             # prints the /joint_states messages as JSON

`write` puts the samples on /joint_states with the joints listed in a different order every
other message, stamps them with the sample time, logs them 1 ms after it, and interleaves a
std_msgs/String topic, as a recording of a real system would.
"""

import json
import sys

from mcap_ros2.reader import read_ros2_messages
from mcap_ros2.writer import Writer

from csv_log import joint_states

JOINT_STATE = """std_msgs/Header header
string[] name
float64[] position
float64[] velocity
float64[] effort
================================================================================
MSG: std_msgs/Header
builtin_interfaces/Time stamp
string frame_id
================================================================================
MSG: builtin_interfaces/Time
int32 sec
uint32 nanosec
"""

STRING = "string data\n"


def write(csv_path, mcap_path):
    with open(mcap_path, "wb") as out:
        writer = Writer(out)
        joint_state = writer.register_msgdef("sensor_msgs/msg/JointState", JOINT_STATE)
        string = writer.register_msgdef("std_msgs/msg/String", STRING)
        for k, ns, names, position, velocity, effort in joint_states(csv_path):
            message = {
                "header": {"stamp": {"sec": ns // 10**9, "nanosec": ns % 10**9}, "frame_id": ""},
                "name": names,
                "position": position,
                "velocity": velocity,
                "effort": effort,
            }
            writer.write_message("/joint_states", joint_state, message, log_time=ns + 10**6, sequence=k)
            if k % 100 == 0:
                writer.write_message("/chatter", string, {"data": f"sample {k}"}, log_time=ns, sequence=k)
        writer.finish()


def read(mcap_path):
    messages = []
    for m in read_ros2_messages(mcap_path, topics=["/joint_states"]):
        s = m.ros_msg
        messages.append({
            "stamp": s.header.stamp.sec + 1e-9 * s.header.stamp.nanosec,
            "name": list(s.name),
            "position": list(s.position),
            "velocity": list(s.velocity),
            "effort": list(s.effort),
            "schema": m.schema.name,
        })
    json.dump(messages, sys.stdout)


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "read":
        read(sys.argv[2])
    else:
        sys.exit(__doc__)
