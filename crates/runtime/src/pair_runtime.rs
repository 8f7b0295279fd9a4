//! Two arms under one law over both ([`Cooperative`]), as `armctl sim` and controller_node
//! run `controller: cooperative`: each arm keeps its own [`ControllerCore`] (its joint states
//! by name, the state checks, the safety layer, hold and resume), and the law computes both
//! arms' efforts from both states. When either arm holds, both do: the law needs both states,
//! and the other arm holds with the reason; when both states are valid again the law starts
//! over, holding the object where it is.

use armctl_control::{
    ControlError, Controller, Cooperative, JointState, ParameterSet, ParameterValue, Step,
};
use armctl_model::Robot;

use crate::controller_core::{ControllerCore, StepReport};
use crate::controller_runtime::{configure_law, core_from, COOPERATIVE};
use crate::declarations::ControllerNodeSettings;
use crate::error::{invalid, law_refusal, not_held};
use crate::node_configuration::NodeConfiguration;
use crate::node_parameters::ParameterStore;
use crate::scene::pair_of as checked_pair;
use crate::startup::NodeStart;
use crate::RuntimeError;
use armctl_sim::scene_file::{self, PairSetup};

/// The law slot of an arm's core: the efforts come from the law over both arms through
/// [`ControllerCore::step_given`], so stepped on its own it refuses.
struct ArmOfPair {
    parameters: ParameterSet,
}

impl Controller for ArmOfPair {
    fn name(&self) -> &'static str {
        COOPERATIVE
    }
    fn parameters(&self) -> &ParameterSet {
        &self.parameters
    }
    fn parameters_mut(&mut self) -> &mut ParameterSet {
        &mut self.parameters
    }
    fn compute(&mut self, _step: Step<'_>) -> Result<(), ControlError> {
        Err(ControlError::InvalidReference {
            reason: "an arm of a cooperative pair is stepped with the other arm".into(),
        })
    }
}

/// Two arms holding one object under [`Cooperative`].
pub struct PairRuntime {
    law: Cooperative,
    cores: [ControllerCore; 2],
    arms: [String; 2],
    configuration: NodeConfiguration,
    /// The law's efforts of the step, per arm.
    efforts: [Vec<f64>; 2],
    /// Whether the law ran in the last step, and whether it ever did.
    controlling: bool,
    started: bool,
    /// What the last step changed in the object's reference, to tell the operator.
    notice: Option<String>,
}

impl std::fmt::Debug for PairRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PairRuntime")
            .field("arms", &self.arms)
            .field("controlling", &self.controlling)
            .finish()
    }
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

impl PairRuntime {
    /// Configures from a node's start values: `controller: cooperative` and a `scene_file`
    /// with a pair; `scene_file` relative paths are the process's.
    pub fn new(start: &NodeStart) -> Result<Self, RuntimeError> {
        Self::configured(start, None, None)
    }

    /// Configures on `robot` with `setup` (a runner that read the scene already).
    pub fn with_pair(
        start: &NodeStart,
        robot: Robot,
        setup: &PairSetup,
    ) -> Result<Self, RuntimeError> {
        Self::configured(start, Some(robot), Some(setup))
    }

    fn configured(
        start: &NodeStart,
        robot: Option<Robot>,
        setup: Option<&PairSetup>,
    ) -> Result<Self, RuntimeError> {
        let mut arms = None;
        let mut scene_object = None;
        let configured = configure_law(start, robot, |name, robot| {
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
        let mut warnings = configured.warnings;
        if let Some((mass, inertia)) = scene_object {
            warnings.extend(object_differs(&configured.controller, mass, &inertia));
        }
        let arms = arms.ok_or_else(|| invalid("scene_file", "no pair".into()))?;
        let (store, settings, robot) = (configured.store, configured.settings, configured.robot);
        let friction_allowance = configured.friction_allowance;
        let chain: Vec<String> = robot.joint_names().map(str::to_string).collect();
        let n = robot.dof();
        let core = |robot: Robot| {
            let slot = Box::new(ArmOfPair {
                parameters: ParameterSet::new(n),
            });
            core_from(&settings.live, robot, slot, &friction_allowance)
        };
        let cores = [core(robot.clone())?, core(robot)?];
        let mut configuration = NodeConfiguration::new(store, settings, warnings, &chain)?;
        configuration.take_law_values(configured.controller.parameters(), None);
        Ok(Self {
            law: configured.controller,
            cores,
            arms,
            configuration,
            efforts: [vec![0.0; n], vec![0.0; n]],
            controlling: false,
            started: false,
            notice: None,
        })
    }

    /// The arms' names (their topics' namespaces).
    pub fn arms(&self) -> &[String; 2] {
        &self.arms
    }

    /// Arm `a`'s core.
    pub fn core(&self, a: usize) -> &ControllerCore {
        &self.cores[a]
    }

    /// Arm `a`'s core, to hand it joint states.
    pub fn core_mut(&mut self, a: usize) -> &mut ControllerCore {
        &mut self.cores[a]
    }

    /// The law.
    pub fn law(&self) -> &Cooperative {
        &self.law
    }

    /// The law, to set the object's target.
    pub fn law_mut(&mut self) -> &mut Cooperative {
        &mut self.law
    }

    /// The node parameters and the law's (as the law holds them), for a parameter query.
    pub fn parameters(&self) -> &ParameterStore {
        self.configuration.parameters()
    }

    /// The node's parameters and settings.
    pub fn configuration(&self) -> &NodeConfiguration {
        &self.configuration
    }

    /// The node's settings as the loop reads them.
    pub fn settings(&self) -> &ControllerNodeSettings {
        self.configuration.settings()
    }

    /// What the URDF conversion noticed.
    pub fn model_warnings(&self) -> &[String] {
        self.configuration.model_warnings()
    }

    /// Command index -> chain index (the `joints` parameter; the same on both arms).
    pub fn command_order(&self) -> &[usize] {
        self.configuration.command_order()
    }

    /// One step of both arms at `now`, `dt` after the last: efforts in chain order. Does not
    /// allocate while both arms are controlled.
    pub fn step(&mut self, now: f64, dt: f64, efforts: [&mut [f64]; 2]) -> [StepReport; 2] {
        let outcome = self.run_law(now, dt);
        self.controlling = outcome.is_ok();
        let [first, second] = efforts;
        let given = |a: usize| match &outcome {
            Ok(()) => Ok(self.efforts[a].as_slice()),
            Err(reason) => Err(reason.as_str()),
        };
        let (given_0, given_1) = (given(0), given(1));
        let [core_0, core_1] = &mut self.cores;
        [
            core_0.step_given(now, dt, first, given_0),
            core_1.step_given(now, dt, second, given_1),
        ]
    }

    /// What the last step changed in the object's reference (a move cancelled by a hold), to
    /// tell the operator once.
    pub fn take_notice(&mut self) -> Option<String> {
        self.notice.take()
    }

    /// The law on both arms' newest states, or why it cannot run.
    fn run_law(&mut self, now: f64, dt: f64) -> Result<(), String> {
        for a in 0..2 {
            if let Some(fault) = self.cores[a].holds_at(now) {
                return Err(format!("arm '{}' holds: {fault}", self.arms[a]));
            }
        }
        let measured = [self.cores[0].measured(), self.cores[1].measured()];
        let states = measured.map(|(q, qd)| JointState { q, qd });
        if !self.controlling {
            if self.started && self.law.moving() {
                self.notice = Some(
                    "control resumed after a hold: the object's move is cancelled, holding it where it is".into(),
                );
            }
            self.law
                .restart([&states[0], &states[1]])
                .map_err(|e| e.to_string())?;
            self.started = true;
        }
        let [first, second] = &mut self.efforts;
        let result = self
            .law
            .update([&states[0], &states[1]], dt, [first, second])
            .map_err(|e| e.to_string());
        if let Some((arm, sigma)) = self.law.take_reach_stop() {
            let margin = self.law.parameters().values("singularity_margin")[0];
            self.notice = Some(format!(
                "the object's move stopped where it was: arm '{}' nears the edge of its reach or a singularity (smallest singular value of its Jacobian {sigma:.3} < singularity_margin {margin})",
                self.arms[arm]
            ));
        }
        result
    }

    /// Checks `value` against its declaration and applies it (node parameters to both arms'
    /// cores, the law's to the law); on any refusal nothing changes. Returns it as stored.
    pub fn set_parameter(
        &mut self,
        name: &str,
        value: &ParameterValue,
    ) -> Result<ParameterValue, String> {
        let law_declares = self.law.parameters().get(name).is_some();
        let law = &mut self.law;
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
            let law = self.law.parameters();
            self.configuration.take_law_values(law, Some(name));
        }
        Ok(stored)
    }

    /// See [`NodeConfiguration::take_implied_changes`].
    pub fn take_implied_changes(&mut self, set: &[&str]) -> Vec<(String, ParameterValue)> {
        self.configuration.take_implied_changes(set)
    }
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
#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller_core::Fault;

    fn workspace(path: &str) -> String {
        format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))
    }

    fn start(extra: &[(&str, ParameterValue)]) -> NodeStart {
        let mut values = vec![
            (
                "controller".to_string(),
                ParameterValue::String(COOPERATIVE.into()),
            ),
            (
                "urdf_path".into(),
                ParameterValue::String(workspace("urdf/panda.urdf")),
            ),
            (
                "scene_file".into(),
                ParameterValue::String(workspace("config/scenes/two_pandas_carry.yaml")),
            ),
        ];
        values.extend(extra.iter().map(|(n, v)| (n.to_string(), v.clone())));
        NodeStart {
            name: "controller_node".into(),
            namespace: "/".into(),
            remaps: vec![],
            values,
        }
    }

    #[test]
    fn the_scene_gives_the_object_and_given_values_override_it() {
        let pair = PairRuntime::new(&start(&[])).unwrap();
        assert_eq!(pair.arms(), &["left".to_string(), "right".to_string()]);
        assert_eq!(
            pair.law().parameters().get("object_mass"),
            Some(&ParameterValue::Double(2.0))
        );
        let lighter = start(&[("object_mass", ParameterValue::Double(1.5))]);
        let pair = PairRuntime::new(&lighter).unwrap();
        assert_eq!(
            pair.law().parameters().get("object_mass"),
            Some(&ParameterValue::Double(1.5))
        );
        assert!(
            pair.model_warnings()
                .iter()
                .any(|w| w.contains("object_mass 1.5") && w.contains("not the scene's 2 kg")),
            "{:?}",
            pair.model_warnings()
        );
        let mut pair = pair;
        assert!(pair
            .set_parameter("object_mass", &ParameterValue::Double(-1.0))
            .is_err());
        pair.set_parameter("state_timeout", &ParameterValue::Double(0.05))
            .unwrap();
        assert_eq!(pair.settings().live.state_timeout, 0.05);
    }

    #[test]
    fn refusals_name_what_is_missing() {
        let error = |values: &[(&str, ParameterValue)]| {
            let mut s = start(&[]);
            s.values.retain(|(n, _)| n != "scene_file");
            s.values
                .extend(values.iter().map(|(n, v)| (n.to_string(), v.clone())));
            PairRuntime::new(&s).unwrap_err().to_string()
        };
        assert!(error(&[]).contains("needs a scene file with a pair"));
        let table = ParameterValue::String(workspace("config/scenes/panda_table.yaml"));
        assert!(error(&[("scene_file", table)]).contains("has no pair"));
        let carry = ParameterValue::String(workspace("config/scenes/two_pandas_carry.yaml"));
        let one_arm = [
            ("scene_file", carry),
            ("controller", ParameterValue::String("pd_gravity".into())),
        ];
        assert!(error(&one_arm).contains("'pd_gravity' controls one arm"));
    }

    /// When one arm's states stop, both arms hold (the other with the reason) and both come
    /// back when the states do.
    #[test]
    fn a_stale_arm_makes_both_hold_and_both_resume() {
        let mut pair = PairRuntime::new(&start(&[])).unwrap();
        let names: Vec<String> = pair.core(0).joints().to_vec();
        let q = [0.0, 0.3, 0.0, -2.0, 0.0, 2.3, 0.8];
        let qd = [0.0; 7];
        let mut efforts = [vec![0.0; 7], vec![0.0; 7]];
        let mut step = |pair: &mut PairRuntime, t: f64, arms: &[usize]| {
            for &a in arms {
                pair.core_mut(a).on_joint_state(&names, &q, &qd, t);
            }
            let [first, second] = &mut efforts;
            pair.step(t, 1e-3, [first, second])
        };
        let reports = step(&mut pair, 0.0, &[0, 1]);
        assert!(reports.iter().all(|r| r.fault.is_none()), "{reports:?}");
        let reports = step(&mut pair, 0.5, &[0]);
        assert!(matches!(reports[1].fault, Some(Fault::Stale(_))));
        match &reports[0].fault {
            Some(Fault::Controller(reason)) => {
                assert!(reason.contains("arm 'right' holds"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
        let reports = step(&mut pair, 0.501, &[0, 1]);
        assert!(reports.iter().all(|r| r.fault.is_none()), "{reports:?}");
    }
}
