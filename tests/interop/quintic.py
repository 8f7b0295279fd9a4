"""The points of a joint trajectory as MoveIt sends one, shared by the action peers (Cyclone DDS
and rclpy), which wrap them in their own message types."""


def quintic_points(q0, q1, seconds, points=10):
    """Up to `points` points on a quintic time law from q0 (not itself a point: the first comes
    at 0.1 s or later) to q1, as (positions, velocities, accelerations, time from start in s);
    the last at q1, at rest."""
    n = max(1, min(points, int(seconds / 0.1)))
    out = []
    for i in range(1, n + 1):
        tau = i / n
        s = 10 * tau**3 - 15 * tau**4 + 6 * tau**5
        ds = (30 * tau**2 - 60 * tau**3 + 30 * tau**4) / seconds
        dds = (60 * tau - 180 * tau**2 + 120 * tau**3) / seconds**2
        out.append((
            [(1 - s) * a + s * b for a, b in zip(q0, q1)],
            [ds * (b - a) for a, b in zip(q0, q1)],
            [dds * (b - a) for a, b in zip(q0, q1)],
            seconds * tau,
        ))
    return out


def builders(trajectory_type, point_type, duration_type):
    """`(trajectory, to_duration)` over one library's message types (Cyclone DDS's or rclpy's):
    trajectory(joints, q0, q1, seconds, points=10) as MoveIt sends one (header stamp zero: start
    now, the points of quintic_points), and to_duration(seconds)."""
    def to_duration(seconds):
        ns = round(seconds * 1e9)
        return duration_type(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)

    def trajectory(joints, q0, q1, seconds, points=10):
        out = [point_type(positions=p, velocities=v, accelerations=a, time_from_start=to_duration(t))
               for p, v, a, t in quintic_points(q0, q1, seconds, points)]
        return trajectory_type(joint_names=list(joints), points=out)

    return trajectory, to_duration
