//! Configuring a group from node parameters, the same for every runner: the parameters
//! gathered and checked once, the robot (with an identified model when given), the law with
//! its gains, and each arm's [`ControllerCore`] with the safety and reference settings. A pair
//! (`controller: cooperative`) takes its arms, their bases and the object from its scene.

use armctl_control::{
    controller_by_name, ControlError, Controller, Cooperative, ParameterSet, ParameterValue,
};
use armctl_model::Robot;
use armctl_sim::scene_file::{self, PairSetup};

use crate::controller_core::ControllerCore;
use crate::declarations::{controller_node_declarations, ControllerNodeSettings, LiveSettings};
use crate::error::invalid;
use crate::model_parameters::identified_model;
use crate::node_parameters::ParameterStore;
use crate::scene::pair_of as checked_pair;
use crate::startup::{load_conversion, NodeStart};
use crate::RuntimeError;

/// The law over two arms (`controller: cooperative`), run by [`crate::group_loop`].
pub const COOPERATIVE: &str = Cooperative::NAME;

/// Every declaration, the controller's included, with the start values applied; the robot
/// (with the identified model, if the values hold one) and the controller with its gains.
pub fn controller_node_parameters(
    start: &NodeStart,
) -> Result<(ParameterStore, Box<dyn Controller>, Robot), RuntimeError> {
    let configured = configure_one(start, None)?;
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
pub(crate) fn configure_one(
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
        robot = model.apply(&robot).map_err(|e| {
            let reason = e.to_string();
            // The parameter the refusal is about, where it names one.
            let named = [
                "model_link_parameters",
                "model_friction_ripple",
                "model_friction_offset",
            ];
            let name = named.into_iter().find(|n| reason.contains(n));
            invalid(name.unwrap_or("model_base_parameters"), reason)
        })?;
    }
    // URDF <dynamics damping friction> is usually a simulator's tuning, not a measurement:
    // compensated only when asked, or when an identified model measured it.
    let mut friction_allowance = vec![[0.0; 2]; robot.dof()];
    if !settings.friction_compensation && !identified_friction {
        for (allowance, joint) in friction_allowance.iter_mut().zip(robot.joints()) {
            let f = &joint.friction;
            *allowance = [f.peak(), f.viscous.abs()];
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

/// A core for `robot`, with the safety and reference settings applied.
pub(crate) fn core_from(
    settings: &LiveSettings,
    robot: Robot,
    friction_allowance: &[[f64; 2]],
) -> Result<ControllerCore, RuntimeError> {
    let (safe_mode, timeout) = (settings.safe_mode, settings.state_timeout);
    let mut core = ControllerCore::new(robot, safe_mode, timeout, None)?;
    settings
        .apply_rate_limits(core.layer_mut().safety_mut())
        .map_err(|e| invalid("effort_rise_time", e.to_string()))?;
    core.set_plausibility(settings.plausibility());
    // On the arm from the start: the first command's hand-off carries it already.
    core.set_payload(settings.payload(), 0.0)
        .map_err(|reason| invalid("payload", reason))?;
    core.layer_mut()
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

/// The pair of the `scene_file` parameter.
fn pair_of(store_scene: &str, robot: &Robot) -> Result<PairSetup, RuntimeError> {
    if store_scene.is_empty() {
        return Err(invalid(
            "scene_file",
            format!("controller '{COOPERATIVE}' needs a scene file with a pair (the arms' bases and the object)"),
        ));
    }
    let scene = scene_file::load(std::path::Path::new(store_scene))
        .map_err(|e| invalid("scene_file", format!("{store_scene}: {e}")))?;
    checked_pair(&scene, robot)
        .map_err(|e| invalid("scene_file", format!("{store_scene}: {e}")))?
        .ok_or_else(|| {
            invalid(
                "scene_file",
                format!("{store_scene} has no pair: '{COOPERATIVE}' controls two arms"),
            )
        })
}

/// The law for the pair: the bases from the scene, the object's mass and inertia as the
/// scene gives them (parameters given at start override them).
fn law_for(setup: &PairSetup, robot: &Robot) -> Result<Cooperative, RuntimeError> {
    let mut law = Cooperative::new(robot, [setup.arms[0].1, setup.arms[1].1])
        .map_err(|e| invalid("controller", e.to_string()))?;
    let inertia = setup.inertia.diagonal();
    for (name, value) in [
        ("object_mass", ParameterValue::Double(setup.mass)),
        (
            "object_inertia",
            ParameterValue::DoubleArray(inertia.iter().copied().collect()),
        ),
    ] {
        law.set_parameter(name, value)
            .map_err(|e| invalid(name, format!("from the scene: {e}")))?;
    }
    Ok(law)
}

/// A warning when the law carries another object than the scene describes (parameters given
/// at start override the scene's mass and inertia).
fn object_differs(
    law: &Cooperative,
    mass: f64,
    inertia: &nalgebra::Vector3<f64>,
) -> Option<String> {
    let given_mass = law.parameters().get("object_mass");
    let given_inertia = law.parameters().get("object_inertia");
    let same = given_mass == Some(&ParameterValue::Double(mass))
        && given_inertia
            == Some(&ParameterValue::DoubleArray(
                inertia.iter().copied().collect(),
            ));
    (!same).then(|| {
        format!(
            "the law carries object_mass {} and object_inertia {} as given, not the scene's {mass} kg and {:?}",
            given_mass.map_or("?".into(), ParameterValue::to_yaml),
            given_inertia.map_or("?".into(), ParameterValue::to_yaml),
            inertia.as_slice()
        )
    })
}

/// The `scene_file` start value (the last given).
fn start_scene(start: &NodeStart) -> String {
    match start.value("scene_file") {
        Some(ParameterValue::String(path)) => path.clone(),
        _ => String::new(),
    }
}

/// What configuring a pair produced: as for one arm, with the law over both arms and the
/// arms' names from the scene.
pub(crate) struct ConfiguredPair {
    pub(crate) configured: Configured<Cooperative>,
    pub(crate) arms: [String; 2],
}

/// The node parameters gathered and checked for `controller: cooperative`, on `robot` and
/// `setup` when given (a runner that read the scene already), else on those the parameters
/// describe (`scene_file` relative paths are the process's).
pub(crate) fn configure_pair(
    start: &NodeStart,
    robot: Option<Robot>,
    setup: Option<&PairSetup>,
) -> Result<ConfiguredPair, RuntimeError> {
    let mut arms = None;
    let mut scene_object = None;
    let mut configured = configure_law(start, robot, |name, robot| {
        if name != COOPERATIVE {
            return Err(invalid(
                "controller",
                format!("'{name}' controls one arm; a pair is run by '{COOPERATIVE}'"),
            ));
        }
        let read;
        let setup = match setup {
            Some(setup) => setup,
            None => {
                read = pair_of(&start_scene(start), robot)?;
                &read
            }
        };
        arms = Some([setup.arms[0].0.clone(), setup.arms[1].0.clone()]);
        scene_object = Some((setup.mass, setup.inertia.diagonal()));
        law_for(setup, robot)
    })?;
    if let Some((mass, inertia)) = scene_object {
        let differs = object_differs(&configured.controller, mass, &inertia);
        configured.warnings.extend(differs);
    }
    let arms = arms.ok_or_else(|| invalid("scene_file", "no pair".into()))?;
    Ok(ConfiguredPair { configured, arms })
}
