#!/bin/bash
# Compares two builds of `armctl` on a fixed set of `armctl sim` cases: run.csv bit for bit,
# and the printed summary (without the real-time factor and the output paths). For a change
# that must not change behaviour (a refactoring): build the old commit (one with `--set-at`)
# in a git worktree with its own target dir, then
#   bash tests/support/compare_sim_runs.sh OLD/armctl NEW/armctl
# Exits 1 when any case differs. Run from the repository root.
set -u
old=$1 new=$2 fail=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/live.yaml" <<'YAML'
controller_node:
  ros__parameters:
    rate_limit: 2000.0
    safe_mode: zero
    state_timeout: 0.05
    position_limit_margin: 0.2
    over_speed: 2.0
    kd: [20.0, 20.0, 20.0, 20.0, 5.0, 5.0, 2.0]
YAML
# Tight limits, and a command delay that destabilises the law: holds and resumptions.
cat > "$work/events.yaml" <<'YAML'
controller_node:
  ros__parameters:
    over_speed: 1.0
    position_limit_margin: 0.05
YAML
echo "command_delay_steps: 25" > "$work/unstable_sim.yaml"
# The same without collision detection: the unstable law ends in an over-speed brake.
cat > "$work/over_speed.yaml" <<'YAML'
controller_node:
  ros__parameters:
    over_speed: 1.0
    position_limit_margin: 0.05
    collision_detection: "off"
YAML

# Each case may name what its summary must show (`expect=TEXT run ...`): that the behaviour it
# is there for happened.
run() { # name, then the arguments of `armctl sim`
  local name=$1; shift
  for which in old new; do
    local bin=$old; [ "$which" = new ] && bin=$new
    mkdir -p "$work/$name/$which"
    "$bin" sim "$@" --out "$work/$name/$which" 2>&1 | grep -v "real-time factor" \
      | sed "s#$work/$name/$which#OUT#g" > "$work/$name/$which.log"
  done
  if ! cmp -s "$work/$name/old/run.csv" "$work/$name/new/run.csv"; then
    echo "DIFFERENT run.csv: $name"; fail=1
  elif ! cmp -s "$work/$name/old.log" "$work/$name/new.log"; then
    echo "DIFFERENT summary: $name"; diff "$work/$name/old.log" "$work/$name/new.log" | head -5; fail=1
  elif [ -n "${expect:-}" ] && ! grep -q -- "$expect" "$work/$name/new.log"; then
    echo "NOT SHOWN: $name does not show '$expect'"; fail=1
  else
    echo "same: $name ($(($(wc -l < "$work/$name/new/run.csv") - 1)) steps, $(grep -c "t = " "$work/$name/new.log") events)"
  fi
}
run computed_torque_wave --urdf urdf/panda.urdf --controller computed_torque --trajectory file:config/trajectories/panda_wave.yaml --duration 3
run pd_gravity_realistic --urdf urdf/panda.urdf --controller pd_gravity --params config/panda_pd_gravity.yaml --sim-config config/sim_realistic.yaml --trajectory sine:0.3:0.5 --duration 3
run live_parameters --urdf urdf/panda.urdf --controller pd_gravity --params "$work/live.yaml" --trajectory quintic:0.5,0,0,-1.5,0,1.5,0:1 --duration 2
run impedance_table --urdf urdf/panda.urdf --controller joint_impedance --scene config/scenes/panda_table.yaml --duration 3
run adaptive_ur5e --urdf urdf/ur5e.urdf --controller slotine_li_adaptive --trajectory sine:0.2:0.5 --duration 3
run cooperative_box --urdf urdf/panda.urdf --controller cooperative --scene config/scenes/two_pandas_box.yaml --duration 3
run separate_pair --urdf urdf/panda.urdf --controller pd_gravity --scene config/scenes/two_pandas_box.yaml --duration 2
run cooperative_move --urdf urdf/panda.urdf --controller cooperative --scene config/scenes/two_pandas_carry.yaml --object-move 0.05,0,0 --duration 2
run holds_one_arm --urdf urdf/panda.urdf --controller computed_torque --params "$work/events.yaml" --sim-config "$work/unstable_sim.yaml" --trajectory sine:0.3:0.5 --duration 3
run holds_pair --urdf urdf/panda.urdf --controller cooperative --params "$work/events.yaml" --scene config/scenes/two_pandas_carry.yaml --object-move 0.3,0,0 --duration 2
# A model 30 % off the plant reads as a contact (docs/getting-started.md without
# config/unidentified_model.yaml).
expect="collision" run collision --urdf urdf/panda.urdf --controller pd_gravity --params config/panda_pd_gravity.yaml --sim-config config/sim_realistic.yaml --trajectory file:config/trajectories/panda_wave.yaml --duration 3
# A set point at joint 1's upper limit: the joint-limit guard acts.
expect="soft joint limit: [1-9]" run soft_limit --urdf urdf/panda.urdf --controller pd_gravity --params config/panda_pd_gravity.yaml --trajectory setpoint:2.8973,-0.5,0.2,-2.0,0.4,1.5,0.6 --duration 6
expect="over-speed" run over_speed --urdf urdf/panda.urdf --controller computed_torque --params "$work/over_speed.yaml" --sim-config "$work/unstable_sim.yaml" --trajectory sine:0.3:0.5 --duration 3
# Set during the run (--set-at): a gain, and the online payload estimate from the rests of
# `armctl excite --payload` with a 1 kg tool the model lacks.
expect="parameter kp set" run gain_change --urdf urdf/panda.urdf --params config/panda_pd_gravity.yaml --trajectory sine:0.2:0.5 --duration 2 --set-at "1:kp:=[900, 900, 900, 900, 375, 225, 75]"
"$new" excite --payload urdf/panda.urdf --out "$work/poses.yaml" > /dev/null
echo "payload: {mass: 1.0, com: [0.04, -0.03, 0.08], inertia: [[0.003, 0, 0], [0, 0.003, 0], [0, 0, 0.002]]}" > "$work/tool.yaml"
echo "collision_force: 100.0" > "$work/estimating.yaml"
expect="payload estimate from 8 poses" run payload_estimate --urdf urdf/panda.urdf --controller pd_gravity --trajectory "file:$work/poses.yaml" --sim-config "$work/tool.yaml" --params "$work/estimating.yaml" --duration 50 --set-at 49.5:estimate_payload:=true
exit $fail
