//! A configured controller as every runner uses it (controller_node on DDS or rcl, `armctl sim`,
//! the C ABI of the ros2_control plugin): the node parameters gathered and checked, the robot
//! (with an identified model when given), the controller with its gains, the command order,
//! and the [`ControllerCore`]. Parameter changes go through [`ControllerRuntime::set_parameter`],
//! so every runner validates and applies them the same way.

use armctl_control::{
    controller_by_name, ControlError, Controller, Cooperative, ParameterSet, ParameterValue,
};
use armctl_model::Robot;

use crate::controller_core::ControllerCore;
use crate::declarations::{controller_node_declarations, ControllerNodeSettings, LiveSettings};
use crate::error::{invalid, not_held};
use crate::frames::ChainFrames;
use crate::model_parameters::identified_model;
use crate::node_configuration::{in_command_order, NodeConfiguration};
use crate::node_parameters::ParameterStore;
use crate::startup::{load_conversion, NodeStart};
use crate::RuntimeError;

/// The law over two arms (`controller: cooperative`), run by [`crate::pair_runtime`].
pub const COOPERATIVE: &str = Cooperative::NAME;

/// Every declaration, the controller's included, with the start values applied; the robot
/// (with the identified model, if the values hold one) and the controller with its gains.
pub fn controller_node_parameters(
    start: &NodeStart,
) -> Result<(ParameterStore, Box<dyn Controller>, Robot), RuntimeError> {
    let configured = configure(start, None)?;
    let store = configured
        .store
        .with_values_of(configured.controller.parameters());
    Ok((store, configured.controller, configured.robot))
}

/// A law the node parameters configure: its parameters, set by name.
pub(crate) trait Tunable {
    fn parameters(&self) -> &ParameterSet;
    fn parameters_mut(&mut self) -> &mut ParameterSet;
    fn set_parameter(&mut self, name: &str, value: ParameterValue) -> Result<(), ControlError>;
}

impl Tunable for Box<dyn Controller> {
    fn parameters(&self) -> &ParameterSet {
        self.as_ref().parameters()
    }
    fn parameters_mut(&mut self) -> &mut ParameterSet {
        self.as_mut().parameters_mut()
    }
    fn set_parameter(&mut self, name: &str, value: ParameterValue) -> Result<(), ControlError> {
        self.as_mut().set_parameter(name, value)
    }
}

impl Tunable for Cooperative {
    fn parameters(&self) -> &ParameterSet {
        Cooperative::parameters(self)
    }
    fn parameters_mut(&mut self) -> &mut ParameterSet {
        Cooperative::parameters_mut(self)
    }
    fn set_parameter(&mut self, name: &str, value: ParameterValue) -> Result<(), ControlError> {
        Cooperative::set_parameter(self, name, value)
    }
}

/// What configuring produced.
pub(crate) struct Configured<L> {
    pub(crate) store: ParameterStore,
    pub(crate) settings: ControllerNodeSettings,
    pub(crate) controller: L,
    pub(crate) robot: Robot,
    /// What the URDF conversion noticed.
    pub(crate) warnings: Vec<String>,
    /// The URDF links fixed to the chain's bodies (none for a model given directly).
    pub(crate) link_frames: Vec<armctl_model::LinkFrame>,
    /// Per joint, the friction the model leaves out, `[coulomb, viscous]` (the URDF's, when
    /// not compensated): the collision thresholds allow for it.
    pub(crate) friction_allowance: Vec<[f64; 2]>,
}

/// As [`controller_node_parameters`], on `robot` when given (else the one the parameters
/// describe).
fn configure(
    start: &NodeStart,
    robot: Option<Robot>,
) -> Result<Configured<Box<dyn Controller>>, RuntimeError> {
    configure_law(start, robot, |name, robot| {
        if name == COOPERATIVE {
            return Err(invalid(
                "controller",
                format!("'{COOPERATIVE}' moves two arms holding one object: it needs a pair scene (scene_file, or --scene in armctl sim; see config/scenes/two_pandas_carry.yaml)"),
            ));
        }
        controller_by_name(name, robot).map_err(|e| invalid("controller", e.to_string()))
    })
}

/// The node parameters gathered and checked, the robot, and the law `build` makes for the
/// `controller` parameter, with the law's parameters declared and the start values applied.
pub(crate) fn configure_law<L: Tunable>(
    start: &NodeStart,
    robot: Option<Robot>,
    build: impl FnOnce(&str, &Robot) -> Result<L, RuntimeError>,
) -> Result<Configured<L>, RuntimeError> {
    let mut store = ParameterStore::new(controller_node_declarations());
    let unknown = start.apply(&mut store)?;
    let settings = ControllerNodeSettings::from_store(&store);
    let (mut robot, mut warnings, link_frames) = match robot {
        Some(robot) => (robot, vec![], vec![]),
        None => {
            let conversion = load_conversion(&settings.robot)?;
            let report = conversion.report;
            (conversion.robot, report.warnings, report.link_frames)
        }
    };
    let identified = identified_model(|name| store.get(name))?;
    let identified_friction = identified
        .as_ref()
        .is_some_and(|m| !m.viscous.is_empty() || !m.coulomb.is_empty());
    if let Some(model) = identified {
        robot = model
            .apply(&robot)
            .map_err(|e| invalid("model_base_parameters", e.to_string()))?;
    }
    // URDF <dynamics damping friction> is usually a simulator's tuning, not a measurement:
    // compensated only when asked, or when an identified model measured it.
    let mut friction_allowance = vec![[0.0; 2]; robot.dof()];
    if !settings.friction_compensation && !identified_friction {
        for (allowance, joint) in friction_allowance.iter_mut().zip(robot.joints()) {
            let f = &joint.friction;
            *allowance = [f.coulomb.abs(), f.viscous.abs()];
        }
        let zero = vec![0.0; robot.dof()];
        robot = robot.with_friction(&zero, &zero)?;
    }
    // A robot that compensates its own gravity (libfranka does) must not get G twice: the
    // law, its model and the gravity hold all compute with no gravity.
    if !settings.gravity_compensation {
        robot = robot.with_gravity(nalgebra::Vector3::zeros())?;
    }
    if !settings.effort_limits.is_empty() {
        robot = robot
            .with_effort_limits(&settings.effort_limits)
            .map_err(|e| invalid("effort_limits", e.to_string()))?;
    }
    warnings.extend(crate::controller_core::sensitivity_warning(
        &robot,
        &friction_allowance,
        &settings.live.collision(),
        settings.live.external_torque_gain,
    ));
    let controller_name = settings.controller.clone();
    let mut controller = build(&controller_name, &robot)?;
    store.declare_controller(controller.parameters());
    for name in unknown {
        if store.declaration(&name).is_none() {
            return Err(invalid(
                &name,
                format!("not declared by controller_node with controller '{controller_name}'"),
            ));
        }
    }
    start.apply(&mut store)?;
    // Only the values given, in the law's declaration order: the others are the law's own
    // defaults already, and a law declares what governs others first (`gain_design` before the
    // gains it designs, which are then refused when also given).
    let names: Vec<String> = controller
        .parameters()
        .declarations()
        .iter()
        .map(|d| d.name.clone())
        .filter(|name| start.values.iter().any(|(given, _)| given == name))
        .collect();
    for name in names {
        if let Some(value) = store.get(&name) {
            controller
                .set_parameter(&name, value.clone())
                .map_err(|e| invalid(&name, e.to_string()))?;
        }
    }
    controller.parameters_mut().settle();
    Ok(Configured {
        store,
        settings,
        controller,
        robot,
        warnings,
        link_frames,
        friction_allowance,
    })
}

/// A core for `robot` under `controller`, with the safety and reference settings applied.
pub(crate) fn core_from(
    settings: &LiveSettings,
    robot: Robot,
    controller: Box<dyn Controller>,
    friction_allowance: &[[f64; 2]],
) -> Result<ControllerCore, RuntimeError> {
    let mut core = ControllerCore::new(
        robot,
        controller,
        settings.safe_mode,
        settings.state_timeout,
        None,
    )?;
    settings
        .apply_rate_limits(core.controller_mut().safety_mut())
        .map_err(|e| invalid("effort_rise_time", e.to_string()))?;
    core.set_plausibility(settings.plausibility());
    // On the arm from the start: the first command's hand-off carries it already.
    core.set_payload(settings.payload(), 0.0)
        .map_err(|reason| invalid("payload", reason))?;
    core.controller_mut()
        .limits_mut()
        .set_margin(settings.soft_limit_margin)
        .map_err(|e| invalid("soft_limit_margin", e.to_string()))?;
    core.set_external_torque_gain(settings.external_torque_gain);
    core.set_wrench_from_estimate(settings.wrench_from_estimate());
    core.set_collision(settings.collision());
    core.allow_for_friction(friction_allowance);
    core.set_max_points(usize::try_from(settings.max_reference_points).unwrap_or(0));
    if !settings.acceleration_limits.is_empty() {
        core.set_acceleration_limits(&settings.acceleration_limits)
            .map_err(|reason| invalid("acceleration_limits", reason))?;
    }
    Ok(core)
}

/// A controller configured from node parameters, ready to step.
pub struct ControllerRuntime {
    core: ControllerCore,
    configuration: NodeConfiguration,
    frames: ChainFrames,
}

impl std::fmt::Debug for ControllerRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerRuntime")
            .field("core", &self.core)
            .field("order", &self.configuration.command_order())
            .finish()
    }
}

impl ControllerRuntime {
    /// Configures from a node's start values (parameter files and overrides).
    pub fn new(start: &NodeStart) -> Result<Self, RuntimeError> {
        Self::configured(configure(start, None)?)
    }

    /// Configures on `robot` (a model the runner built) from the start values; the robot
    /// parameters (`robot_description`, `urdf_path`, links) are not read.
    pub fn with_robot(start: &NodeStart, robot: Robot) -> Result<Self, RuntimeError> {
        Self::configured(configure(start, Some(robot))?)
    }

    fn configured(configured: Configured<Box<dyn Controller>>) -> Result<Self, RuntimeError> {
        let Configured {
            store: parameters,
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
        let mut configuration = NodeConfiguration::new(parameters, settings, warnings, &chain)?;
        configuration.take_law_values(core.controller().parameters(), None);
        Ok(Self {
            core,
            configuration,
            frames,
        })
    }

    /// A tip pose target given in `frame` (a link of the chain, placed at the newest valid
    /// state; empty or the base link: as it is) in the base link frame; refused naming the
    /// frame otherwise.
    pub fn target_in_base(
        &mut self,
        frame: &str,
        pose: nalgebra::IsometryMatrix3<f64>,
    ) -> Result<nalgebra::IsometryMatrix3<f64>, String> {
        let q = self.core.last_valid_q();
        self.frames.pose_in_base(self.core.robot(), frame, pose, q)
    }

    /// A measured wrench given in `frame` (its axes, the moment about its origin) as the
    /// wrench on the tip, base link axes, the moment about the tip (empty frame: as it is).
    pub fn wrench_at_tip(&mut self, frame: &str, wrench: [f64; 6]) -> Result<[f64; 6], String> {
        let q = self.core.last_valid_q();
        self.frames
            .wrench_at_tip(self.core.robot(), frame, wrench, q)
    }

    /// The estimated external wrench on the tip ([`ControllerCore::external_wrench`]) in the
    /// tip link's axes at the newest valid state (none before one).
    pub fn external_wrench_in_tip_axes(&mut self) -> Option<[f64; 6]> {
        let q = self.core.last_valid_q()?;
        let wrench = self.core.external_wrench();
        self.frames.in_tip_axes(self.core.robot(), wrench, q).ok()
    }

    /// What the URDF conversion noticed about the model (nearly parallel axes, an inertia no
    /// real body has): for the operator, once at start.
    pub fn model_warnings(&self) -> &[String] {
        self.configuration.model_warnings()
    }

    /// The controller core.
    pub fn core(&self) -> &ControllerCore {
        &self.core
    }

    /// The controller core, to hand it states, references and targets.
    pub fn core_mut(&mut self) -> &mut ControllerCore {
        &mut self.core
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

    /// Command index -> chain index (the `joints` parameter).
    pub fn command_order(&self) -> &[usize] {
        self.configuration.command_order()
    }

    /// Writes efforts in chain order (`effort`) into `command` in the command order.
    pub fn to_command_order(&self, effort: &[f64], command: &mut [f64]) {
        in_command_order(self.command_order(), effort, command);
    }

    /// Checks `value` against its declaration and, for the controller's and the safety
    /// parameters, against the controller; applies and stores it. On any refusal nothing
    /// changes. Returns the value as stored (integers widened to doubles), so the runner can
    /// act on parameters of its own (such as `state_publish_rate`).
    pub fn set_parameter(
        &mut self,
        name: &str,
        value: &ParameterValue,
    ) -> Result<ParameterValue, String> {
        let law_declares = self.core.controller().parameters().get(name).is_some();
        let set_law = |cores: &mut [ControllerCore], value| {
            cores[0]
                .set_parameter(name, value)
                .map_err(|e| e.to_string())?;
            let law = cores[0].controller().parameters();
            law.get(name).cloned().ok_or_else(|| not_held(name))
        };
        let cores = std::slice::from_mut(&mut self.core);
        let stored =
            self.configuration
                .set_parameter((name, value), law_declares, set_law, cores)?;
        if law_declares {
            let law = self.core.controller().parameters();
            self.configuration.take_law_values(law, Some(name));
        }
        Ok(stored)
    }

    /// See [`NodeConfiguration::take_implied_changes`].
    pub fn take_implied_changes(&mut self, set: &[&str]) -> Vec<(String, ParameterValue)> {
        self.configuration.take_implied_changes(set)
    }
}

#[cfg(test)]
mod tests;
