"""armctl's CSV log (t, q_*, qd_*, effort_*) as the joint states a recording of a real system
would have: shared by the bag writers in this folder."""

import csv


def columns(header, prefix):
    return [(i, name[len(prefix):]) for i, name in enumerate(header) if name.startswith(prefix)]


def joint_states(csv_path):
    """Yields (k, stamp in ns, joint names, positions, velocities, efforts) per sample, the joints
    listed in reverse order every other sample (a reader must match them by name)."""
    with open(csv_path, newline="") as f:
        rows = list(csv.reader(f))
    header, rows = rows[0], rows[1:]
    position, velocity, effort = (columns(header, p) for p in ("q_", "qd_", "effort_"))
    position = [(i, n) for i, n in position if not n.startswith("ref_")]
    names = [n for _, n in position]
    for k, row in enumerate(rows):
        ns = round(float(row[0]) * 1e9)
        order = list(range(len(names))) if k % 2 == 0 else list(reversed(range(len(names))))
        pick = lambda cols: [float(row[cols[j][0]]) for j in order]
        yield k, ns, [names[j] for j in order], pick(position), pick(velocity), pick(effort)
