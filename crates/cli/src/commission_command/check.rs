//! Step 1, the check: the URDF and the arm agree (the same joints, the arm inside the URDF's
//! limits) and the arm holds still under gravity compensation with the URDF's model, which
//! the excitation will run on. Each refusal names the joint.

use anyhow::Result;
use armctl_model::Robot;

use super::arm::{Arm, ArmState};
use super::drive::{drive, Guard, Recording};
use super::plan::Plan;
use super::{Gate, Settings};

/// Every URDF joint is in the arm's states, and the arm's command carries no joint the URDF's
/// chain lacks (the simulated arm is driven whole: a joint left without effort would fall).
pub(crate) fn check_joints(robot: &Robot, arm: &dyn Arm) -> Result<(), Gate> {
    let arm_joints = arm.joint_names();
    let urdf: Vec<&str> = robot.joint_names().collect();
    if let Some(missing) = urdf.iter().find(|j| !arm_joints.iter().any(|a| a == *j)) {
        return Err(Gate::check(format!(
            "joint '{missing}' of the URDF is not in the joint states of {} (they name {}): the URDF is not this arm's, or its joints are named otherwise; the arm was not moved",
            arm.describe(),
            arm_joints.join(", ")
        )));
    }
    let commanded = arm.command_joints();
    if let Some(extra) = commanded.iter().find(|a| !urdf.contains(&a.as_str())) {
        return Err(Gate::check(format!(
            "joint '{extra}' of {} is not in the URDF's chain ({}): it would be left without a command; the arm was not moved",
            arm.describe(),
            urdf.join(", ")
        )));
    }
    Ok(())
}

/// Every joint has the finite effort and velocity limits the plan, the collision thresholds
/// and the over-speed protection are sized from (a continuous joint without `<limit>` has
/// none).
pub(crate) fn check_limits(robot: &Robot) -> Result<(), Gate> {
    for joint in robot.joints() {
        let limits = &joint.limits;
        let usable = |v: f64| v.is_finite() && v > 0.0;
        if !(usable(limits.effort) && usable(limits.velocity)) {
            return Err(Gate::check(format!(
                "joint '{}' has effort limit {} and velocity limit {} in the URDF: commissioning sizes the plan, the collision thresholds and the over-speed check from them; give the joint a <limit effort velocity> (a continuous joint may have one); the arm was not moved",
                joint.name, limits.effort, limits.velocity
            )));
        }
    }
    Ok(())
}

/// The arm's measured position is inside each joint's URDF limits.
pub(crate) fn check_positions(robot: &Robot, arm: &mut dyn Arm) -> Result<()> {
    let mut state = ArmState::default();
    arm.measure(&mut state)?;
    for joint in robot.joints() {
        let Some(a) = arm.joint_names().iter().position(|n| *n == joint.name) else {
            continue;
        };
        let (q, lower, upper) = (state.position[a], joint.limits.lower, joint.limits.upper);
        if !(lower..=upper).contains(&q) {
            return Err(Gate::check(format!(
                "joint '{}' is at {q:.4}, outside its URDF limits [{lower}, {upper}]: the URDF's limits are not this arm's, or the arm must first be moved inside them; the arm was not moved",
                joint.name
            ))
            .into());
        }
    }
    Ok(())
}

/// The arm held under gravity compensation with the URDF's model for the settings' hold time;
/// refused when a joint drifts beyond the tolerance or the protections hold it.
pub(crate) fn check_hold(
    robot: &Robot,
    arm: &mut dyn Arm,
    settings: &Settings,
    plan: &Plan,
) -> Result<Recording> {
    let mut runtime = settings.excitation_controller(robot, plan)?;
    let guard = Guard {
        tracking: f64::INFINITY,
        slow_down: false,
    };
    let held = drive(
        arm,
        &mut runtime,
        None,
        settings.hold_seconds,
        guard,
        "holding",
    )?;
    if let Some(stop) = &held.stop {
        return Err(Gate::check(format!(
            "the arm does not hold under gravity compensation with the URDF's model: {stop}; {}",
            super::braked(held.braked, "the arm")
        ))
        .into());
    }
    check_period(arm, &held)?;
    let Some(start) = held.log.position.first() else {
        anyhow::bail!("the hold recorded no sample");
    };
    let (mut worst, mut drift) = (0, 0.0);
    for q in held.log.position.iter().take(held.tracked) {
        for (j, (a, b)) in q.iter().zip(start).enumerate() {
            if (a - b).abs() > drift {
                (worst, drift) = (j, (a - b).abs());
            }
        }
    }
    if drift > settings.hold_tolerance {
        return Err(Gate::check(format!(
            "the arm does not hold still under gravity compensation with the URDF's model: joint '{}' drifted {drift:.4} in {} s (at most {}): the model is too far off to excite safely; the arm is held where it came to (largest speed {:.4} at the end)",
            held.log.joint_names[worst], settings.hold_seconds, settings.hold_tolerance, last_speed(&held)
        ))
        .into());
    }
    Ok(held)
}

/// The largest joint speed of a recording's last sample.
fn last_speed(recording: &Recording) -> f64 {
    let last = recording.log.velocity.as_ref().and_then(|v| v.last());
    last.map_or(0.0, |v| v.iter().fold(0.0_f64, |m, x| m.max(x.abs())))
}

/// The arm's states come at the rate the commissioning was told (`--rate`; the embedded
/// simulator's own step): the controller's gains and observer are sized for that period.
fn check_period(arm: &dyn Arm, held: &Recording) -> Result<()> {
    let times = &held.log.time[..held.tracked.min(held.log.time.len())];
    let mut steps: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    if steps.len() < 10 {
        anyhow::bail!(
            "the hold recorded {} states: too few to tell the arm's rate",
            steps.len() + 1
        );
    }
    steps.sort_by(f64::total_cmp);
    let median = steps[steps.len() / 2];
    let period = arm.period();
    if (median - period).abs() > 0.25 * period {
        return Err(Gate::check(format!(
            "{}'s joint states come every {median:.5} s, not every {period:.5} s: give its rate (--rate {:.0}); the arm is held",
            arm.describe(),
            1.0 / median
        ))
        .into());
    }
    Ok(())
}
