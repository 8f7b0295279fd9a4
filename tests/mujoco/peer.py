"""MuJoCo peer of tests/mujoco_agreement.rs: the same URDF in an independent engine.

A line protocol on stdin/stdout, one JSON object a line, so the Rust test can close a loop
around this plant step by step with the same law it closes around armctl's simulator.

First line, the set-up:
  {"urdf": path, "dt": s, "integrator": "rk4" | "euler", "q0": [rad], "gravity": [m/s^2],
   "armature": [kg m^2] | null, "tip_body": URDF link of the tool,
   "contact": null | {"plane_z": m, "radius": m, "friction": mu (0: frictionless),
                      "force": [N, base axes]}}
answered with what MuJoCo made of the URDF at q0 (joint names, damping and armature per
dof, the joint-space inertia matrix row-major, the bias force qfrc_bias at rest, that is
gravity, and the tip body's position).

Every further line, {"tau": [N m], "report": bool}: one step with these joint torques
(qfrc_applied, held over the step), answered with {"q", "qd"} after it, and with "report"
the contact force at that state: "normal" (sum of the normal forces, N) and "force" (the
total contact force on the arm, base axes). End of input ends the peer.

The model: MuJoCo's own URDF parser on a copy of the file with <visual>, <collision> and
<ros2_control> removed and a <mujoco><compiler> element that keeps every body (no fusing of
fixed joints: the tip body is needed) and the inertials exactly as written (no balancing or
bounding). Fixed base, joint limits disabled (as armctl's SimConfig::ideal()), no contact but
the scenario's sphere at the tip against a plane, gravity as given (base axes). Joint damping
is read from the URDF's <dynamics damping> by MuJoCo itself; armature, which URDF cannot say,
is set on the compiled model.
"""

import json
import re
import sys

import mujoco
import numpy as np

COMPILER = (
    '<mujoco><compiler discardvisual="true" fusestatic="false" balanceinertia="false" '
    'boundmass="0" boundinertia="0" angle="radian"/></mujoco>'
)


def urdf_for_mujoco(path):
    text = open(path, encoding="utf-8").read()
    for tag in ("visual", "collision", "ros2_control"):
        text = re.sub(rf"<{tag}\b.*?</{tag}>", "", text, flags=re.S)
        text = re.sub(rf"<{tag}\b[^>]*/>", "", text)
    return text.replace("</robot>", COMPILER + "</robot>")


def build(setup):
    spec = mujoco.MjSpec.from_string(urdf_for_mujoco(setup["urdf"]))
    contact = setup.get("contact")
    tip = spec.body(setup["tip_body"])
    if tip is None:
        raise SystemExit(f"no body {setup['tip_body']} in the URDF")
    if contact:
        condim = 3 if contact["friction"] > 0 else 1
        friction = [max(contact["friction"], 0.0), 0.005, 0.0001]
        # A massless sphere centred on the tip, touching a plane radius below armctl's: the
        # contact point of both is then on the tip's vertical through the same depth.
        tip.add_geom(
            name="tool",
            type=mujoco.mjtGeom.mjGEOM_SPHERE,
            size=[contact["radius"], 0, 0],
            density=0,
            condim=condim,
            friction=friction,
        )
        spec.worldbody.add_geom(
            name="plane",
            type=mujoco.mjtGeom.mjGEOM_PLANE,
            size=[2, 2, 0.1],
            pos=[0, 0, contact["plane_z"] - contact["radius"]],
            condim=condim,
            friction=friction,
        )
    model = spec.compile()
    model.opt.timestep = setup["dt"]
    model.opt.integrator = {
        "rk4": mujoco.mjtIntegrator.mjINT_RK4,
        "euler": mujoco.mjtIntegrator.mjINT_EULER,
    }[setup["integrator"]]
    model.opt.gravity[:] = setup["gravity"]
    if contact and contact["friction"] > 0:
        # MuJoCo's friction is a soft constraint: under a steady tangential load the contact
        # creeps at a speed proportional to it, and part of the load goes into moving the
        # arm. Its noslip post-processor (hard friction) removes that creep.
        model.opt.noslip_iterations = 10
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_LIMIT
    if not contact:
        model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    if setup.get("armature") is not None:
        model.dof_armature[:] = setup["armature"]
    if model.nq != model.nv or model.nv != len(setup["q0"]):
        raise SystemExit(f"expected {len(setup['q0'])} hinge joints, MuJoCo made nq={model.nq}")
    return model, contact


def contact_report(model, data, tool):
    """Sum of normal forces and total force on the arm's geom, base axes."""
    normal, total = 0.0, np.zeros(3)
    local = np.zeros(6)
    for i in range(data.ncon):
        c = data.contact[i]
        mujoco.mj_contactForce(model, data, i, local)
        # In the contact frame (rows: normal, tangents), the force geom1 puts on geom2.
        world = c.frame.reshape(3, 3).T @ local[:3]
        sign = 1.0 if c.geom2 == tool else -1.0
        normal += local[0]
        total += sign * world
    return normal, total


def main():
    setup = json.loads(sys.stdin.readline())
    model, contact = build(setup)
    data = mujoco.MjData(model)
    data.qpos[:] = setup["q0"]
    mujoco.mj_forward(model, data)
    tip = model.body(setup["tip_body"]).id
    full = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, full, data.qM)
    joints = [model.joint(j).name for j in range(model.njnt)]
    print(
        json.dumps(
            {
                "mujoco": mujoco.__version__,
                "joints": joints,
                "damping": model.dof_damping.tolist(),
                "armature": model.dof_armature.tolist(),
                "mass_matrix": full.flatten().tolist(),
                "bias": data.qfrc_bias.tolist(),
                "tip": data.xpos[tip].tolist(),
            }
        ),
        flush=True,
    )
    tool = model.geom("tool").id if contact else -1
    force = np.array(contact["force"], dtype=float) if contact else None
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        data.qfrc_applied[:] = request["tau"]
        if force is not None:
            # The force acts where the sphere touches the plane, radius below the tip (armctl's
            # point contact has both at the tip): applied at the tip's centre, it would make a
            # couple with the friction force that rolls the sphere. xfrc_applied acts at the
            # body's centre of mass: the moment moves it to that point (set each step from
            # the pose at the start of the step; constant once the arm is at rest).
            mujoco.mj_kinematics(model, data)
            at = data.xpos[tip] - np.array([0.0, 0.0, contact["radius"]])
            data.xfrc_applied[tip, :3] = force
            data.xfrc_applied[tip, 3:] = np.cross(at - data.xipos[tip], force)
        mujoco.mj_step(model, data)
        reply = {"q": data.qpos.tolist(), "qd": data.qvel.tolist()}
        if request.get("report") and contact:
            mujoco.mj_forward(model, data)
            normal, total = contact_report(model, data, tool)
            reply["normal"] = normal
            reply["force"] = total.tolist()
            reply["ncon"] = int(data.ncon)
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
