"""rosbag2 bag directories in SQLite storage (a `.db3` file and `metadata.yaml`, the default of
`ros2 bag record` on Humble), written with the `rosbags` package, independent of armctl and of
ROS.

  db3_bag.py LOG.csv OUT_DIR   # armctl's CSV log (t, q_*, qd_*, effort_*) as /joint_states

The samples go on /joint_states with the joints listed in a different order every other
message, stamped with the sample time and logged 1 ms after it, with a std_msgs/String topic
interleaved, as a recording of a real system would have them.
"""

import sys

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

from csv_log import joint_states


def main(csv_path, out_dir):
    store = get_typestore(Stores.ROS2_HUMBLE)
    JointState = store.types["sensor_msgs/msg/JointState"]
    Header = store.types["std_msgs/msg/Header"]
    Time = store.types["builtin_interfaces/msg/Time"]
    String = store.types["std_msgs/msg/String"]
    with Writer(out_dir, version=8, storage_plugin=StoragePlugin.SQLITE3) as writer:
        states = writer.add_connection("/joint_states", JointState.__msgtype__, typestore=store)
        chatter = writer.add_connection("/chatter", String.__msgtype__, typestore=store)
        for k, ns, names, position, velocity, effort in joint_states(csv_path):
            array = lambda values: np.array(values, dtype=np.float64)
            message = JointState(
                header=Header(stamp=Time(sec=ns // 10**9, nanosec=ns % 10**9), frame_id=""),
                name=names,
                position=array(position),
                velocity=array(velocity),
                effort=array(effort),
            )
            writer.write(states, ns + 10**6, store.serialize_cdr(message, JointState.__msgtype__))
            if k % 100 == 0:
                text = String(data=f"sample {k}")
                writer.write(chatter, ns, store.serialize_cdr(text, String.__msgtype__))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
