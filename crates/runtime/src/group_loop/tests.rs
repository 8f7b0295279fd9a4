use super::*;
use crate::node_configuration::command_order;
use armctl_control::ParameterValue;

#[test]
fn command_order_follows_joints_and_names_bad_ones() {
    let chain: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
    let joints = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(command_order(&[], &chain).unwrap(), vec![0, 1, 2]);
    assert_eq!(
        command_order(&joints(&["c", "a", "b"]), &chain).unwrap(),
        vec![2, 0, 1]
    );
    assert!(command_order(&joints(&["a", "b", "x"]), &chain)
        .unwrap_err()
        .to_string()
        .contains("'x'"));
    assert!(command_order(&joints(&["a", "b"]), &chain)
        .unwrap_err()
        .to_string()
        .contains("'c' is missing"));
    assert!(command_order(&joints(&["a", "a", "b", "c"]), &chain)
        .unwrap_err()
        .to_string()
        .contains("'a' is listed twice"));
}

/// A value the declaration check accepts is never refused later by the runtime, and every
/// refusal is made by that check: so the rcl backend, whose parameter hook runs only the
/// check before r2r answers, refuses with the reason as the DDS backend does (no
/// "accepted, then restored").
#[test]
fn the_declaration_check_is_the_whole_check_for_every_controller() {
    let urdf = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/panda.urdf");
    for controller in armctl_control::CONTROLLERS {
        let start = NodeStart {
            name: "controller_node".into(),
            namespace: "/".into(),
            remaps: vec![],
            values: vec![
                ("urdf_path".into(), ParameterValue::String(urdf.into())),
                (
                    "controller".into(),
                    ParameterValue::String(controller.into()),
                ),
            ],
        };
        let mut runtime = GroupLoop::lone(&start).unwrap();
        let declarations = runtime.parameters().declarations().to_vec();
        for d in declarations.iter().filter(|d| !d.read_only) {
            let mut candidates = vec![d.default.clone()];
            if let Some((lo, hi)) = d.range {
                for v in [lo - 1.0, hi + 1.0, f64::NAN, lo, hi] {
                    candidates.push(match &d.default {
                        ParameterValue::DoubleArray(a) => {
                            ParameterValue::DoubleArray(vec![v; a.len()])
                        }
                        _ => ParameterValue::Double(v),
                    });
                }
            }
            if let ParameterValue::DoubleArray(a) = &d.default {
                candidates.push(ParameterValue::DoubleArray(vec![1.0; a.len() + 1]));
            }
            candidates.push(ParameterValue::String("x".into()));
            for value in candidates {
                let checked = runtime.validate_parameter(&d.name, &value);
                let applied = runtime.set_parameter(&d.name, &value);
                assert_eq!(
                    checked.is_ok(),
                    applied.is_ok(),
                    "{controller}: {} = {value:?}: check {checked:?}, runtime {applied:?}",
                    d.name
                );
            }
        }
    }
}

/// A gain design writes kp and kd: the store shows them, at start and when changed live;
/// kp set by hand while designed is refused and the store keeps the designed value; given
/// together at start, the design and kp are refused, naming kp.
#[test]
fn designed_gains_are_what_a_parameter_query_shows() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/planar_2link.urdf");
    let values = vec![
        ("urdf_path".to_string(), ParameterValue::String(path.into())),
        (
            "controller".to_string(),
            ParameterValue::String("computed_torque".into()),
        ),
        (
            "poles".to_string(),
            ParameterValue::DoubleArray(vec![-5.0, -6.0, -7.0, -8.0]),
        ),
        (
            "gain_design".to_string(),
            ParameterValue::String("poles".into()),
        ),
    ];
    let start = NodeStart {
        name: "controller_node".into(),
        namespace: "/".into(),
        remaps: vec![],
        values,
    };
    let mut runtime = GroupLoop::lone(&start).unwrap();
    let kp = |r: &GroupLoop| r.parameters().get("kp").cloned();
    assert_eq!(
        kp(&runtime),
        Some(ParameterValue::DoubleArray(vec![30.0, 56.0]))
    );
    let poles = ParameterValue::DoubleArray(vec![-1.0, -2.0, -3.0, -4.0]);
    runtime.set_parameter("poles", &poles).unwrap();
    assert_eq!(
        kp(&runtime),
        Some(ParameterValue::DoubleArray(vec![2.0, 12.0]))
    );
    // What the set implied, for /parameter_events: kp and kd, once.
    let implied = runtime.take_implied_changes(&["poles"]);
    let names: Vec<&str> = implied.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["kp", "kd"]);
    assert_eq!(implied[0].1, ParameterValue::DoubleArray(vec![2.0, 12.0]));
    assert!(runtime.take_implied_changes(&["poles"]).is_empty());
    let by_hand = ParameterValue::DoubleArray(vec![9.0, 9.0]);
    let e = runtime.set_parameter("kp", &by_hand).unwrap_err();
    assert!(e.contains("gain_design"), "{e}");
    // A law's parameter is checked once, by the law's declaration, in the node's words.
    let short = ParameterValue::DoubleArray(vec![1.0]);
    let e = runtime.set_parameter("poles", &short).unwrap_err();
    assert!(e.starts_with("parameter 'poles': needs 4 values"), "{e}");
    assert_eq!(e.matches("poles").count(), 1, "{e}");
    assert_eq!(
        kp(&runtime),
        Some(ParameterValue::DoubleArray(vec![2.0, 12.0]))
    );
}

use armctl_model::{urdf_to_robot, ChainOptions};

/// With `gravity_compensation: false` every law commands what it commands with gravity,
/// less exactly G(q) (a law at its reference, first step: no integral or adaptation yet),
/// and the safe command is zero.
#[test]
fn without_gravity_compensation_every_law_commands_without_g() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/panda.urdf");
    let urdf = std::fs::read_to_string(path).unwrap();
    let joints: Vec<String> = (1..=7).map(|i| format!("panda_joint{i}")).collect();
    let q = [0.1, -0.4, 0.2, -2.0, 0.3, 1.6, 0.5];
    let command = |law: &str, compensate: bool| {
        let start = NodeStart {
            name: "controller_node".into(),
            namespace: "/".into(),
            remaps: vec![],
            values: vec![
                (
                    "robot_description".into(),
                    ParameterValue::String(urdf.clone()),
                ),
                ("controller".into(), ParameterValue::String(law.into())),
                (
                    "gravity_compensation".into(),
                    ParameterValue::Bool(compensate),
                ),
                // The first command whole, not its first rate-limited step from G.
                ("effort_rise_time".into(), ParameterValue::Double(0.0)),
            ],
        };
        let mut runtime = GroupLoop::lone(&start).unwrap();
        runtime.record_state(0, &joints, &q, &[0.0; 7], 0.0);
        runtime.step(0.0, 1e-3);
        let effort = runtime.output().arms[0].efforts.clone();
        let mut safe = vec![0.0; 7];
        let what = runtime.core_mut().safe_command(&mut safe);
        (effort, safe, what)
    };
    let robot = urdf_to_robot(&urdf, &ChainOptions::default())
        .unwrap()
        .robot;
    let mut g = vec![0.0; 7];
    let mut ws = armctl_dynamics::DynamicsWorkspace::new(&robot);
    armctl_dynamics::gravity_torques(&robot, &mut ws, &q, &mut g).unwrap();
    let mut model_free = vec![];
    for law in armctl_control::CONTROLLERS {
        let (with, safe_with, _) = command(law, true);
        let (without, safe, what) = command(law, false);
        let removed: Vec<f64> = with.iter().zip(&without).map(|(a, b)| a - b).collect();
        if removed.iter().all(|r| *r == 0.0) {
            model_free.push(law);
        } else {
            for (j, (r, g)) in removed.iter().zip(&g).enumerate() {
                let close = (r - g).abs() < 1e-9 * (1.0 + g.abs());
                assert!(close, "{law} joint {j}: {r} removed, G = {g}");
            }
        }
        for (j, (s, g)) in safe_with.iter().zip(&g).enumerate() {
            assert!(
                (s - g).abs() < 1e-9 && safe[j] == 0.0,
                "{law}: safe command"
            );
        }
        assert!(what.contains("gravity_compensation is false"), "{what}");
    }
    // The laws without a model have no G to remove.
    assert_eq!(model_free, ["independent_pd"]);
}

/// URDF friction is compensated only when asked; identified friction without the base
/// parameters it was fitted with is refused, naming it.
#[test]
fn urdf_friction_is_compensated_only_when_asked() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/planar_2link.urdf");
    let urdf = std::fs::read_to_string(path).unwrap().replace(
        "<axis",
        "<dynamics damping=\"2.0\" friction=\"1.5\"/>\n    <axis",
    );
    let start = |extra: Vec<(&str, ParameterValue)>| {
        let mut values = vec![
            (
                "robot_description".to_string(),
                ParameterValue::String(urdf.clone()),
            ),
            (
                "controller".to_string(),
                ParameterValue::String("computed_torque".into()),
            ),
        ];
        values.extend(extra.into_iter().map(|(n, v)| (n.to_string(), v)));
        NodeStart {
            name: "controller_node".into(),
            namespace: "/".into(),
            remaps: vec![],
            values,
        }
    };
    let viscous = |runtime: &GroupLoop| runtime.core().robot().joints()[0].friction.viscous;
    let plain = GroupLoop::lone(&start(vec![])).unwrap();
    assert_eq!(viscous(&plain), 0.0);
    let asked = GroupLoop::lone(&start(vec![(
        "friction_compensation",
        ParameterValue::Bool(true),
    )]))
    .unwrap();
    assert_eq!(viscous(&asked), 2.0);
    let e = GroupLoop::lone(&start(vec![(
        "model_viscous",
        ParameterValue::DoubleArray(vec![0.1, 0.1]),
    )]))
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("model_viscous") && e.contains("without model_base_parameters"),
        "{e}"
    );
}

/// An inertia no real body has is told to the operator at start (it was noticed by the
/// conversion and then dropped on the way to the node).
#[test]
fn what_the_conversion_noticed_reaches_the_runner() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/planar_2link.urdf");
    let urdf = std::fs::read_to_string(path).unwrap();
    let start_of = |urdf: String| NodeStart {
        name: "controller_node".into(),
        namespace: "/".into(),
        remaps: vec![],
        values: vec![("robot_description".into(), ParameterValue::String(urdf))],
    };
    let plain = GroupLoop::lone(&start_of(urdf.clone())).unwrap();
    // What collision detection can sense is told too; the conversion noticed nothing.
    assert!(
        plain
            .model_warnings()
            .iter()
            .all(|w| w.starts_with("collision_force")),
        "{:?}",
        plain.model_warnings()
    );
    // The first link's tensor made impossible: ixx = iyy = 1, izz = 5.
    let first = urdf.find("<inertia ").unwrap();
    let end = first + urdf[first..].find("/>").unwrap() + 2;
    let bad = format!(
        "{}<inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"5\"/>{}",
        &urdf[..first],
        &urdf[end..]
    );
    let warned = GroupLoop::lone(&start_of(bad)).unwrap();
    let warnings = warned.model_warnings().join("\n");
    assert!(
        warnings.contains("joint1") && warnings.contains("triangle inequality"),
        "{warnings}"
    );
}

/// `soft_limit_margin` moves the soft limits at start and while running; a margin out of its
/// range is refused by name and changes nothing.
/// A core and law a test built are not configured from node parameters: no parameter is set
/// through the loop (not the law's either: the store does not declare them), each refused
/// naming it, and the law keeps its value.
#[test]
fn a_hand_built_loop_refuses_every_parameter_naming_it() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/planar_2link.urdf");
    let robot = Robot::from_urdf_file(path, &armctl_model::ChainOptions::default()).unwrap();
    let law = armctl_control::controller_by_name("pd_gravity", &robot).unwrap();
    let kp = law.parameters().get("kp").cloned().unwrap();
    let core = ControllerCore::new(robot, crate::controller_core::SafeMode::Gravity, 0.1, None);
    let mut group = GroupLoop::of_core(core.unwrap(), law).unwrap();
    for (name, value) in [
        ("kp", ParameterValue::DoubleArray(vec![1.0, 1.0])),
        ("state_timeout", ParameterValue::Double(0.2)),
    ] {
        let e = group.set_parameter(name, &value).unwrap_err();
        assert!(
            e.contains(&format!("'{name}'")) && e.contains("by hand"),
            "{e}"
        );
    }
    assert_eq!(group.law().unwrap().parameters().get("kp"), Some(&kp));
}

/// `soft_limit_margin` moves the soft limits at start and while running; a margin out of its
/// range is refused by name and changes nothing.
#[test]
fn the_soft_limit_margin_is_a_live_parameter() {
    let margin = ("soft_limit_margin", ParameterValue::Double(0.1));
    let mut runtime = GroupLoop::lone(&bundled_start("planar_2link", margin)).unwrap();
    let upper = runtime.core().robot().joints()[0].limits.upper;
    let soft = |r: &mut GroupLoop| {
        r.core_mut()
            .layer_mut()
            .limits_mut()
            .soft_limits(0)
            .unwrap()
            .1
    };
    assert!((soft(&mut runtime) - (upper - 0.1)).abs() < 1e-12);
    runtime
        .set_parameter("soft_limit_margin", &ParameterValue::Double(0.2))
        .unwrap();
    assert!((soft(&mut runtime) - (upper - 0.2)).abs() < 1e-12);
    let e = runtime
        .set_parameter("soft_limit_margin", &ParameterValue::Double(-0.1))
        .unwrap_err();
    assert!(e.contains("soft_limit_margin"), "{e}");
    assert!((soft(&mut runtime) - (upper - 0.2)).abs() < 1e-12);
}

/// controller_node's start on the bundled URDF `robot` with one parameter given.
fn bundled_start(robot: &str, (name, value): (&str, ParameterValue)) -> NodeStart {
    let path = format!("{}/../../urdf/{robot}.urdf", env!("CARGO_MANIFEST_DIR"));
    NodeStart {
        name: "controller_node".into(),
        namespace: "/".into(),
        remaps: vec![],
        values: vec![
            ("urdf_path".to_string(), ParameterValue::String(path)),
            (name.to_string(), value),
        ],
    }
}

/// A `kd` set by a parameter request reaches the law at once and is checked against the
/// sampled-data damping limit when the request is answered: the answer brings the warning
/// once, and a gentle `kd` takes it away.
#[test]
fn a_live_damping_is_checked_when_the_request_is_answered() {
    use crate::parameter_services::{ParameterRequest, ParameterResponse};
    let law = ("controller", ParameterValue::String("pd_gravity".into()));
    let start = bundled_start("panda", law);
    let mut group = GroupLoop::lone(&start).unwrap();
    assert!(
        group.law_warnings().is_empty(),
        "{:?}",
        group.law_warnings()
    );
    let mut set_kd = |kd: Vec<f64>| {
        let kd = ParameterValue::DoubleArray(kd);
        let request = ParameterRequest::Set(vec![("kd".to_string(), kd.clone())]);
        let answer = group.answer_parameters(&request);
        assert_eq!(
            answer.response,
            ParameterResponse::Set(vec![Ok(kd.clone())])
        );
        assert_eq!(group.law().unwrap().parameters().get("kd"), Some(&kd));
        assert_eq!(
            group.parameter("kd"),
            Some(&kd),
            "a query shows the law's value"
        );
        (answer.new_warnings, group.law_warnings().to_vec())
    };
    let (new, now) = set_kd(vec![30.0, 50.0, 20.0, 20.0, 60.0, 60.0, 60.0]);
    assert_eq!(new.len(), 1, "{new:?}");
    assert!(new[0].starts_with("controller: kd: at 1000 Hz"), "{new:?}");
    assert_eq!(now.len(), 1, "{now:?}");
    let (new, now) = set_kd(vec![1.0; 7]);
    assert!(new.is_empty() && now.is_empty(), "{new:?} {now:?}");
}

/// Two arms under one law over both.
mod pair {
    use super::super::*;
    use crate::configure::COOPERATIVE;
    use crate::controller_core::Fault;
    use armctl_control::ParameterValue;

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
        let pair = GroupLoop::pair(&start(&[])).unwrap();
        assert_eq!(pair.arms(), &["left".to_string(), "right".to_string()]);
        assert_eq!(
            pair.pair_law().unwrap().parameters().get("object_mass"),
            Some(&ParameterValue::Double(2.0))
        );
        let lighter = start(&[("object_mass", ParameterValue::Double(1.5))]);
        let pair = GroupLoop::pair(&lighter).unwrap();
        assert_eq!(
            pair.pair_law().unwrap().parameters().get("object_mass"),
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
            GroupLoop::pair(&s).unwrap_err().to_string()
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
        let mut pair = GroupLoop::pair(&start(&[])).unwrap();
        let names: Vec<String> = pair.arm(0).joints().to_vec();
        let q = [0.0, 0.3, 0.0, -2.0, 0.0, 2.3, 0.8];
        let qd = [0.0; 7];
        let step = |pair: &mut GroupLoop, t: f64, arms: &[usize]| {
            for &a in arms {
                pair.record_state(a, &names, &q, &qd, t);
            }
            pair.step(t, 1e-3);
            pair.output()
                .arms
                .iter()
                .map(|a| a.report.clone())
                .collect::<Vec<_>>()
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
