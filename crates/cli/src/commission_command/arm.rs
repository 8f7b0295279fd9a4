//! The arm being commissioned, as the commissioning sees any arm: joint states in (names,
//! positions, velocities, measured efforts), efforts out, one control period at a time. The
//! embedded simulator stands in for it here; over ROS 2 it is the arm's topics.

use anyhow::{Context, Result};
use armctl_model::Robot;
use armctl_sim::{SimConfig, Simulator};

/// One joint state of the arm, in the arm's own joint order.
#[derive(Debug, Clone, Default)]
pub(crate) struct ArmState {
    /// Time of the state, s.
    pub(crate) time: f64,
    pub(crate) position: Vec<f64>,
    pub(crate) velocity: Vec<f64>,
}

/// What the commissioning drives.
pub(crate) trait Arm {
    /// The joints its states name, in its order.
    fn joint_names(&self) -> &[String];
    /// The control period, s.
    fn period(&self) -> f64;
    /// The newest state.
    fn measure(&mut self, state: &mut ArmState) -> Result<()>;
    /// Sends efforts (the arm's joint order) for one period and gives the efforts the arm
    /// measured while applying them (its joint torque sensors, or the drives' currents).
    fn apply(&mut self, effort: &[f64], measured: &mut [f64]) -> Result<()>;
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

    fn period(&self) -> f64 {
        self.sim.config().dt
    }

    fn measure(&mut self, state: &mut ArmState) -> Result<()> {
        let n = self.names.len();
        state.position.resize(n, 0.0);
        state.velocity.resize(n, 0.0);
        state.time = self.sim.time();
        self.sim.measure(&mut state.position, &mut state.velocity)?;
        Ok(())
    }

    fn apply(&mut self, effort: &[f64], measured: &mut [f64]) -> Result<()> {
        self.sim.step(effort)?;
        measured.copy_from_slice(self.sim.applied_effort());
        Ok(())
    }

    fn describe(&self) -> String {
        self.label.clone()
    }
}
