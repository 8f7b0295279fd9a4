//! The loop every runner drives, one per group of arms: controller_node (one arm or a pair,
//! on DDS or rcl), the C ABI of the ros2_control plugin, `armctl sim` and its two-arm runs.
//! It holds each arm's [`ControllerCore`] (joint states by name, state checks, the safety
//! layer, hold and resume), the law (one arm's own, or [`Law::Pair`] over both), the node
//! configuration, and the loop's own state: the timing policy ([`LoopTiming`]: per message or
//! on a timer, simulated time, the watchdog), which arms were commanded, the last step's
//! commands in command order and reports, clock jumps and the safe stop. A runner only
//! converts messages and publishes.
//!
//! Two ways to give time: a node hands states as they come and ticks of its timer
//! ([`GroupLoop::on_joint_state`], [`GroupLoop::on_tick`]) and the loop decides when to step; a
//! host with its own cycle (the plugin's `update`, the simulator) records states at its times
//! and steps by its period ([`GroupLoop::record_state`], [`GroupLoop::step`]). Stepping is in
//! `pacing.rs`, the last step's results in `output.rs`, parameters in `parameters.rs`, and what
//! a runner hands an arm besides its states in `crate::inputs`.

use armctl_control::{CheckedLaw, Controller, Cooperative};
use armctl_model::Robot;
use armctl_sim::scene_file::PairSetup;

use crate::configure::{configure_one, configure_pair, core_from, Configured, COOPERATIVE};
use crate::controller_core::ControllerCore;
use crate::declarations::{controller_node_declarations, ControllerNodeSettings};
use crate::frames::ChainFrames;
use crate::loop_timing::LoopTiming;
use crate::node_clock::NodeClock;
use crate::node_configuration::{in_command_order, NodeConfiguration};
use crate::node_parameters::ParameterStore;
use crate::startup::NodeStart;
use crate::RuntimeError;
use pair_law::PairLaw;

/// Where a step's efforts come from.
enum Law {
    /// The lone arm's law.
    One(Box<CheckedLaw>),
    /// One law over both arms.
    Pair(Box<PairLaw>),
    /// The law of a lone arm built by hand: its parameters are its own, not the node's.
    HandBuilt(Box<CheckedLaw>),
}

impl Law {
    /// The lone arm's law (none for a pair).
    fn lone(&self) -> Option<&CheckedLaw> {
        match self {
            Law::One(law) | Law::HandBuilt(law) => Some(law),
            Law::Pair(_) => None,
        }
    }

    /// The lone arm's law, to set its parameters and targets (none for a pair).
    fn lone_mut(&mut self) -> Option<&mut CheckedLaw> {
        match self {
            Law::One(law) | Law::HandBuilt(law) => Some(law),
            Law::Pair(_) => None,
        }
    }

    /// The law's parameters: the lone arm's law's or the pair's.
    fn parameters(&self) -> &armctl_control::ParameterSet {
        match self {
            Law::Pair(pair) => pair.law().parameters(),
            Law::One(law) | Law::HandBuilt(law) => law.parameters(),
        }
    }

    /// The law's online estimates (an adaptive law's; none for a pair).
    fn estimates(&self) -> &[f64] {
        self.lone().map_or(&[], |law| law.estimates())
    }
}

mod output;
mod pacing;
mod pair_law;
mod parameters;

pub use output::{ArmOutput, ArmState, ObjectOutput, StepOutput};
pub use pacing::Ticked;
pub use parameters::ParameterAnswer;

/// Arms stepped together, configured from node parameters, in their loop.
pub struct GroupLoop {
    cores: Vec<ControllerCore>,
    /// The arms' names (their topics' namespaces; empty for a lone arm).
    arms: Vec<String>,
    law: Law,
    configuration: NodeConfiguration,
    frames: ChainFrames,
    timing: LoopTiming,
    /// Which arms sent a state since the last step (per-message stepping waits for all).
    fresh: Vec<bool>,
    /// Which arms were sent a command since the start or the last restart (a stop sends them
    /// their safe command).
    commanded: Vec<bool>,
    /// Whether a node reads the state after its steps ([`Self::paced`]): only then is it
    /// due and the wrench in the tip's axes computed.
    publishes: bool,
    /// The last step's outcome.
    output: StepOutput,
}

impl std::fmt::Debug for GroupLoop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupLoop")
            .field("arms", &self.arms)
            .field("cores", &self.cores)
            .field("order", &self.configuration.command_order())
            .finish()
    }
}

impl GroupLoop {
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

    /// A lone arm around a core built by hand (a test, a tool) stepped by `law`: the node's
    /// parameters are not its parameters, so setting any parameter through the loop is refused
    /// (the law's are set before); the command order is the chain's.
    pub fn of_core(
        mut core: ControllerCore,
        law: Box<dyn Controller>,
    ) -> Result<Self, RuntimeError> {
        let law = Box::new(core.check_law(law));
        let store = ParameterStore::new(controller_node_declarations());
        let settings = ControllerNodeSettings::from_store(&store);
        let chain = core.joints().to_vec();
        let frames = ChainFrames::new(core.robot(), vec![]);
        let configuration = NodeConfiguration::new(store, settings, vec![], &chain)?;
        Ok(Self::of_parts(
            vec![core],
            vec![String::new()],
            Law::HandBuilt(law),
            configuration,
            frames,
        ))
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
        let mut core = core_from(&settings.live, robot, &friction_allowance)?;
        let law = Box::new(core.check_law(controller));
        let mut configuration = NodeConfiguration::new(store, settings, warnings, &chain)?;
        configuration.take_law_values(law.parameters(), None);
        Ok(Self::of_parts(
            vec![core],
            vec![String::new()],
            Law::One(law),
            configuration,
            frames,
        ))
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
            let mut core = core_from(&settings.live, robot, &friction_allowance)?;
            core.stepped_with_another();
            Ok::<_, RuntimeError>(core)
        };
        let cores = vec![core(robot.clone())?, core(robot)?];
        let mut configuration = NodeConfiguration::new(store, settings, warnings, &chain)?;
        configuration.take_law_values(law.parameters(), None);
        let law = Law::Pair(Box::new(PairLaw::new(law, n)));
        Ok(Self::of_parts(
            cores,
            pair.arms.to_vec(),
            law,
            configuration,
            frames,
        ))
    }

    /// The loop around configured arms, paced by its host until [`Self::paced`].
    fn of_parts(
        cores: Vec<ControllerCore>,
        arms: Vec<String>,
        law: Law,
        configuration: NodeConfiguration,
        frames: ChainFrames,
    ) -> Self {
        let count = cores.len();
        Self {
            output: StepOutput::new(&cores, law.estimates()),
            cores,
            arms,
            law,
            configuration,
            frames,
            timing: LoopTiming::new(NodeClock::new(false), 0.0, 0.0),
            fresh: vec![false; count],
            commanded: vec![false; count],
            publishes: false,
        }
    }

    /// Paced by `timing` (a node): it decides when to step. Without, its host gives every
    /// time ([`Self::record_state`], [`Self::step`]).
    pub fn paced(mut self, timing: LoopTiming) -> Self {
        self.timing = timing;
        self.publishes = true;
        self
    }

    /// The last step's outcome (before any: nothing sent).
    pub fn output(&self) -> &StepOutput {
        &self.output
    }

    /// Stops the lone arm's trajectory: it holds where it was last seen, and the last step's
    /// output shows that hold's reference (a goal aborted after a step publishes it so).
    pub fn cancel_trajectory(&mut self) {
        let core = &mut self.cores[0];
        core.cancel_trajectory();
        self.output.arms[0].state.take_reference(core.reference());
    }

    /// The last step's outcome, to take its events out.
    pub fn output_mut(&mut self) -> &mut StepOutput {
        &mut self.output
    }

    /// The node's timing.
    pub fn timing(&self) -> &LoopTiming {
        &self.timing
    }

    /// Now on the node's clock.
    pub fn now(&self) -> f64 {
        self.timing.now()
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
            Law::One(_) | Law::HandBuilt(_) => None,
        }
    }

    /// The law over both arms of a pair, to set the object's target.
    pub fn pair_law_mut(&mut self) -> Option<&mut Cooperative> {
        match &mut self.law {
            Law::Pair(pair) => Some(pair.law_mut()),
            Law::One(_) | Law::HandBuilt(_) => None,
        }
    }

    /// The lone arm's law (none for a pair).
    pub fn law(&self) -> Option<&CheckedLaw> {
        self.law.lone()
    }

    /// The lone arm's task-space law, to hand it a target or a sensed wrench (none for a
    /// joint-space law or a pair).
    pub fn task_space(&mut self) -> Option<&mut dyn armctl_control::TaskSpace> {
        self.law.lone_mut()?.task_space()
    }

    /// The law's online estimates (an adaptive law's; none for a pair).
    pub fn estimates(&self) -> &[f64] {
        self.law.estimates()
    }

    /// The control law's name.
    pub fn law_name(&self) -> &'static str {
        match &self.law {
            Law::Pair(_) => COOPERATIVE,
            Law::One(law) | Law::HandBuilt(law) => law.name(),
        }
    }

    /// What the URDF conversion noticed about the model (nearly parallel axes, an inertia no
    /// real body has): for the operator, once at start.
    pub fn model_warnings(&self) -> &[String] {
        self.configuration.model_warnings()
    }

    /// Command index -> chain index (the `joints` parameter; the same on every arm).
    pub fn command_order(&self) -> &[usize] {
        self.configuration.command_order()
    }

    /// Writes efforts in chain order (`effort`) into `command` in the command order.
    pub fn to_command_order(&self, effort: &[f64], command: &mut [f64]) {
        in_command_order(self.command_order(), effort, command);
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
mod pacing_tests;
#[cfg(test)]
mod tests;
