//! The arm being commissioned, as the commissioning sees any arm: joint states in (names,
//! positions, velocities, measured efforts, a time), efforts out, one control period at a
//! time. The embedded simulator stands in for it ([`SimulatedArm`]), or a running arm over
//! ROS 2 ([`super::ros_arm::RosArm`]).

use anyhow::{Context, Result};
use armctl_model::Robot;
use armctl_sim::{SimConfig, Simulator};

/// One joint state of the arm, in the order of its [`Arm::joint_names`].
#[derive(Debug, Clone, Default)]
pub(crate) struct ArmState {
    /// Time of the state, s (the arm's clock).
    pub(crate) time: f64,
    pub(crate) position: Vec<f64>,
    pub(crate) velocity: Vec<f64>,
    /// The efforts the arm measured (its joint torque sensors or drive currents) over the
    /// period that led to this state.
    pub(crate) effort: Vec<f64>,
    /// Whether it is a state the arm sent since the last: false when none came within a
    /// period of waiting (the last one again, its time moved on by the wait, so that the
    /// controller's state timeout holds the arm in its safe mode).
    pub(crate) fresh: bool,
}

/// What the commissioning drives.
pub(crate) trait Arm {
    /// The joints its states name, in their order.
    fn joint_names(&self) -> &[String];
    /// The joints its effort command carries, in their order.
    fn command_joints(&self) -> &[String];
    /// The control period, s.
    fn period(&self) -> f64;
    /// The newest state.
    fn measure(&mut self, state: &mut ArmState) -> Result<()>;
    /// Sends efforts, in the order of [`Arm::command_joints`], for the next period.
    fn apply(&mut self, effort: &[f64]) -> Result<()>;
    /// Whether its time runs on while the commissioning computes (a real arm's does, the
    /// embedded simulator's stands still): it must then be held meanwhile.
    fn time_runs_on(&self) -> bool {
        false
    }
    /// Why the user wants it stopped, if they do (Ctrl-C).
    fn interrupted(&self) -> Option<String> {
        None
    }
    /// Where the arm is called in messages.
    fn describe(&self) -> String;
}

/// The embedded simulator as the arm: its own robot (which may differ from the URDF the
/// commissioning is given) and settings (friction, noise, delay, payload, masses).
pub(crate) struct SimulatedArm {
    sim: Simulator,
    names: Vec<String>,
    label: String,
}

impl SimulatedArm {
    /// The simulated `plant` at rest at `q0`.
    pub(crate) fn new(plant: &Robot, q0: &[f64], config: SimConfig, label: String) -> Result<Self> {
        let sim = Simulator::new(plant, q0, config).context("starting the simulated arm")?;
        Ok(Self {
            sim,
            names: plant.joint_names().map(str::to_string).collect(),
            label,
        })
    }
}

impl Arm for SimulatedArm {
    fn joint_names(&self) -> &[String] {
        &self.names
    }

    /// The simulated arm is driven whole.
    fn command_joints(&self) -> &[String] {
        &self.names
    }

    fn period(&self) -> f64 {
        self.sim.config().dt
    }

    fn measure(&mut self, state: &mut ArmState) -> Result<()> {
        let n = self.names.len();
        state.position.resize(n, 0.0);
        state.velocity.resize(n, 0.0);
        state.time = self.sim.time();
        self.sim.measure(&mut state.position, &mut state.velocity)?;
        state.effort.clear();
        state.effort.extend_from_slice(self.sim.applied_effort());
        state.fresh = true;
        Ok(())
    }

    fn apply(&mut self, effort: &[f64]) -> Result<()> {
        self.sim.step(effort)?;
        Ok(())
    }

    fn describe(&self) -> String {
        self.label.clone()
    }
}
