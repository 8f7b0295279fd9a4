//! A configured group of arms as every runner steps it (controller_node on DDS or rcl,
//! `armctl sim`, the C ABI of the ros2_control plugin), through [`crate::arm_loop::ArmLoop`]:
//! one arm under its own law, or two arms under one law over both ([`Law::Pair`]); each arm
//! keeps its own [`ControllerCore`] (joint states by name, state checks, the safety layer, hold
//! and resume). Parameter changes go through [`ArmGroup::set_parameter`], checked once and
//! applied alike for one arm and a pair.

use armctl_control::{Controller, Cooperative, ParameterValue};
use armctl_model::Robot;
use armctl_sim::scene_file::PairSetup;

use crate::configure::{configure_one, configure_pair, core_from, Configured, COOPERATIVE};
use crate::controller_core::{ControllerCore, StepReport};
use crate::declarations::{controller_node_declarations, ControllerNodeSettings};
use crate::error::{law_refusal, not_held};
use crate::frames::ChainFrames;
use crate::node_configuration::{in_command_order, NodeConfiguration};
use crate::node_parameters::ParameterStore;
use crate::pair_law::{ArmOfPair, PairLaw};
use crate::startup::NodeStart;
use crate::RuntimeError;

/// Where a step's efforts come from.
enum Law {
    /// The lone arm's core runs its own law.
    One,
    /// One law over both arms.
    Pair(Box<PairLaw>),
    /// A lone arm's core built by hand: its parameters are its own, not the node's.
    HandBuilt,
}

/// Arms stepped together, configured from node parameters.
pub struct ArmGroup {
    cores: Vec<ControllerCore>,
    /// The arms' names (their topics' namespaces; empty for a lone arm).
    arms: Vec<String>,
    law: Law,
    configuration: NodeConfiguration,
    frames: ChainFrames,
}

impl std::fmt::Debug for ArmGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArmGroup")
            .field("arms", &self.arms)
            .field("cores", &self.cores)
            .field("order", &self.configuration.command_order())
            .finish()
    }
}

impl ArmGroup {
    /// A lone arm configured from a node's start values (parameter files and overrides).
    pub fn lone(start: &NodeStart) -> Result<Self, RuntimeError> {
        Self::configured_lone(configure_one(start, None)?)
    }

    /// A lone arm on `robot` (a model the runner built) from the start values; the robot
    /// parameters (`robot_description`, `urdf_path`, links) are not read.
    pub fn lone_on(start: &NodeStart, robot: Robot) -> Result<Self, RuntimeError> {
        Self::configured_lone(configure_one(start, Some(robot))?)
    }

    /// A pair from a node's start values: `controller: cooperative` and a `scene_file` with
    /// a pair; `scene_file` relative paths are the process's.
    pub fn pair(start: &NodeStart) -> Result<Self, RuntimeError> {
        Self::configured_pair(start, None, None)
    }

    /// A pair on `robot` with `setup` (a runner that read the scene already).
    pub fn pair_on(
        start: &NodeStart,
        robot: Robot,
        setup: &PairSetup,
    ) -> Result<Self, RuntimeError> {
        Self::configured_pair(start, Some(robot), Some(setup))
    }

    /// A lone arm around a core built by hand (a test, a tool): the node's parameters are
    /// not its parameters, so setting one is refused; the command order is the chain's.
    pub fn of_core(core: ControllerCore) -> Result<Self, RuntimeError> {
        let store = ParameterStore::new(controller_node_declarations());
        let settings = ControllerNodeSettings::from_store(&store);
        let chain = core.joints().to_vec();
        let frames = ChainFrames::new(core.robot(), vec![]);
        Ok(Self {
            configuration: NodeConfiguration::new(store, settings, vec![], &chain)?,
            cores: vec![core],
            arms: vec![String::new()],
            law: Law::HandBuilt,
            frames,
        })
    }

    fn configured_lone(configured: Configured<Box<dyn Controller>>) -> Result<Self, RuntimeError> {
        let Configured {
            store,
            settings,
            controller,
            robot,
            warnings,
            link_frames,
            friction_allowance,
        } = configured;
        let frames = ChainFrames::new(&robot, link_frames);
        let chain: Vec<String> = robot.joint_names().map(str::to_string).collect();
        let core = core_from(&settings.live, robot, controller, &friction_allowance)?;
        let mut configuration = NodeConfiguration::new(store, settings, warnings, &chain)?;
        configuration.take_law_values(core.controller().parameters(), None);
        Ok(Self {
            cores: vec![core],
            arms: vec![String::new()],
            law: Law::One,
            configuration,
            frames,
        })
    }

    fn configured_pair(
        start: &NodeStart,
        robot: Option<Robot>,
        setup: Option<&PairSetup>,
    ) -> Result<Self, RuntimeError> {
        let pair = configure_pair(start, robot, setup)?;
        let Configured {
            store,
            settings,
            controller: law,
            robot,
            warnings,
            link_frames,
            friction_allowance,
        } = pair.configured;
        let chain: Vec<String> = robot.joint_names().map(str::to_string).collect();
        let n = robot.dof();
        let frames = ChainFrames::new(&robot, link_frames);
        let core = |robot: Robot| {
            let slot = Box::new(ArmOfPair::new(n));
            core_from(&settings.live, robot, slot, &friction_allowance)
        };
        let cores = vec![core(robot.clone())?, core(robot)?];
        let mut configuration = NodeConfiguration::new(store, settings, warnings, &chain)?;
        configuration.take_law_values(law.parameters(), None);
        Ok(Self {
            cores,
            arms: pair.arms.to_vec(),
            law: Law::Pair(Box::new(PairLaw::new(law, n))),
            configuration,
            frames,
        })
    }

    /// How many arms.
    pub fn arm_count(&self) -> usize {
        self.cores.len()
    }

    /// Arm `a`'s name, to say which arm an event is about (empty for a lone arm).
    pub fn arm_name(&self, a: usize) -> &str {
        &self.arms[a]
    }

    /// The arms' names (a pair's topics' namespaces).
    pub fn arms(&self) -> &[String] {
        &self.arms
    }

    /// The first (a lone) arm's core.
    pub fn core(&self) -> &ControllerCore {
        &self.cores[0]
    }

    /// The first (a lone) arm's core, to hand it states, references and targets.
    pub fn core_mut(&mut self) -> &mut ControllerCore {
        &mut self.cores[0]
    }

    /// Arm `a`'s core.
    pub fn arm(&self, a: usize) -> &ControllerCore {
        &self.cores[a]
    }

    /// Arm `a`'s core, to hand it joint states.
    pub fn arm_mut(&mut self, a: usize) -> &mut ControllerCore {
        &mut self.cores[a]
    }

    /// The law over both arms of a pair (none for a lone arm).
    pub fn pair_law(&self) -> Option<&Cooperative> {
        match &self.law {
            Law::Pair(pair) => Some(pair.law()),
            Law::One | Law::HandBuilt => None,
        }
    }

    /// The law over both arms of a pair, to set the object's target.
    pub fn pair_law_mut(&mut self) -> Option<&mut Cooperative> {
        match &mut self.law {
            Law::Pair(pair) => Some(pair.law_mut()),
            Law::One | Law::HandBuilt => None,
        }
    }

    /// The control law's name.
    pub fn law_name(&self) -> &'static str {
        match &self.law {
            Law::Pair(_) => COOPERATIVE,
            Law::One | Law::HandBuilt => self.cores[0].controller().name(),
        }
    }

    /// What the law's claims need and its parameters do not give (gain conditions, a damping
    /// beyond the sampled-data limit), as last checked.
    pub fn law_warnings(&self) -> &[String] {
        match &self.law {
            Law::Pair(_) => &[],
            Law::One | Law::HandBuilt => self.cores[0].controller().warnings(),
        }
    }

    /// Checks the law's claims again after a parameter change.
    pub fn recheck_law(&mut self) {
        if !matches!(self.law, Law::Pair(_)) {
            self.cores[0].controller_mut().check_damping();
        }
    }

    /// One step of every arm at `now`, `dt` after the last: each arm's efforts in chain order
    /// into `efforts[a]`, its outcome into `reports[a]`. Allocates nothing while controlling.
    pub fn step(
        &mut self,
        now: f64,
        dt: f64,
        efforts: &mut [Vec<f64>],
        reports: &mut [StepReport],
    ) {
        match &mut self.law {
            Law::Pair(pair) => {
                let arms = (self.cores.as_mut_slice(), self.arms.as_slice());
                pair.step(arms, (now, dt), efforts, reports);
            }
            Law::One | Law::HandBuilt => {
                reports[0] = self.cores[0].step(now, dt, &mut efforts[0]);
            }
        }
    }

    /// What the last step changed beyond the arms' own events (a pair's cancelled move), to
    /// tell the operator once.
    pub fn take_notice(&mut self) -> Option<String> {
        match &mut self.law {
            Law::Pair(pair) => pair.take_notice(),
            Law::One | Law::HandBuilt => None,
        }
    }

    /// What the URDF conversion noticed about the model (nearly parallel axes, an inertia no
    /// real body has): for the operator, once at start.
    pub fn model_warnings(&self) -> &[String] {
        self.configuration.model_warnings()
    }

    /// The node's parameters and settings.
    pub fn configuration(&self) -> &NodeConfiguration {
        &self.configuration
    }

    /// The declared parameters and their current values (the law's as the law holds them:
    /// a gain design writes `kp` and `kd`), for a parameter query.
    pub fn parameters(&self) -> &ParameterStore {
        self.configuration.parameters()
    }

    /// Every declaration: the node's and the law's.
    pub fn declarations(&self) -> &[armctl_control::Declaration] {
        self.configuration.declarations()
    }

    /// The current value of `name` (the law's as the law holds it).
    pub fn parameter(&self, name: &str) -> Option<&ParameterValue> {
        self.configuration.parameter(name)
    }

    /// Checks `value` for `name` as [`Self::set_parameter`] does first, without applying it.
    pub fn validate_parameter(
        &self,
        name: &str,
        value: &ParameterValue,
    ) -> Result<ParameterValue, RuntimeError> {
        self.configuration.validate(name, value)
    }

    /// The node's settings as the loop reads them.
    pub fn settings(&self) -> &ControllerNodeSettings {
        self.configuration.settings()
    }

    /// Command index -> chain index (the `joints` parameter; the same on every arm).
    pub fn command_order(&self) -> &[usize] {
        self.configuration.command_order()
    }

    /// Writes efforts in chain order (`effort`) into `command` in the command order.
    pub fn to_command_order(&self, effort: &[f64], command: &mut [f64]) {
        in_command_order(self.command_order(), effort, command);
    }

    /// Checks `value` against its declaration and applies it: the law's parameters to the
    /// law (checked against the law as well), the node's to every arm's core. On any refusal
    /// nothing changes. Returns the value as stored (integers widened to doubles), so the
    /// runner can act on parameters of its own (such as `state_publish_rate`).
    pub fn set_parameter(
        &mut self,
        name: &str,
        value: &ParameterValue,
    ) -> Result<ParameterValue, String> {
        match &mut self.law {
            Law::HandBuilt => Err(format!(
                "parameter '{name}': this core was built by hand; set it on the core"
            )),
            Law::Pair(pair) => {
                let law = pair.law_mut();
                let law_declares = law.parameters().get(name).is_some();
                let set_law = |_: &mut [ControllerCore], value| {
                    law.set_parameter(name, value)
                        .map_err(|e| law_refusal(name, e).to_string())?;
                    law.parameters()
                        .get(name)
                        .cloned()
                        .ok_or_else(|| not_held(name))
                };
                let stored = self.configuration.set_parameter(
                    (name, value),
                    law_declares,
                    set_law,
                    &mut self.cores,
                )?;
                if law_declares {
                    let law = pair.law().parameters();
                    self.configuration.take_law_values(law, Some(name));
                }
                Ok(stored)
            }
            Law::One => {
                let law_declares = self.cores[0].controller().parameters().get(name).is_some();
                let set_law = |cores: &mut [ControllerCore], value| {
                    cores[0]
                        .set_parameter(name, value)
                        .map_err(|e| e.to_string())?;
                    let law = cores[0].controller().parameters();
                    law.get(name).cloned().ok_or_else(|| not_held(name))
                };
                let stored = self.configuration.set_parameter(
                    (name, value),
                    law_declares,
                    set_law,
                    &mut self.cores,
                )?;
                if law_declares {
                    let law = self.cores[0].controller().parameters();
                    self.configuration.take_law_values(law, Some(name));
                }
                Ok(stored)
            }
        }
    }

    /// See [`NodeConfiguration::take_implied_changes`].
    pub fn take_implied_changes(&mut self, set: &[&str]) -> Vec<(String, ParameterValue)> {
        self.configuration.take_implied_changes(set)
    }

    /// A tip pose target given in `frame` (a link of the chain, placed at the newest valid
    /// state; empty or the base link: as it is) in the base link frame; refused naming the
    /// frame otherwise.
    pub fn target_in_base(
        &mut self,
        frame: &str,
        pose: nalgebra::IsometryMatrix3<f64>,
    ) -> Result<nalgebra::IsometryMatrix3<f64>, String> {
        let core = &self.cores[0];
        let q = core.last_valid_q();
        self.frames.pose_in_base(core.robot(), frame, pose, q)
    }

    /// A measured wrench given in `frame` (its axes, the moment about its origin) as the
    /// wrench on the tip, base link axes, the moment about the tip (empty frame: as it is).
    pub fn wrench_at_tip(&mut self, frame: &str, wrench: [f64; 6]) -> Result<[f64; 6], String> {
        let core = &self.cores[0];
        let q = core.last_valid_q();
        self.frames.wrench_at_tip(core.robot(), frame, wrench, q)
    }

    /// The estimated external wrench on the tip ([`ControllerCore::external_wrench`]) in the
    /// tip link's axes at the newest valid state (none before one).
    pub fn external_wrench_in_tip_axes(&mut self) -> Option<[f64; 6]> {
        let core = &self.cores[0];
        let q = core.last_valid_q()?;
        let wrench = core.external_wrench();
        self.frames.in_tip_axes(core.robot(), wrench, q).ok()
    }
}

#[cfg(test)]
mod tests;
