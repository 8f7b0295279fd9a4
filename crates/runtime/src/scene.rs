//! A simulator scene as the nodes take it: the file parsed and checked by
//! `armctl_sim::scene_file`, and a pair's arm names checked against ROS's name rules, since each
//! prefixes its arm's topics.

use armctl_model::Robot;
use armctl_sim::scene_file::{PairSetup, SceneFile};

use crate::RuntimeError;

/// The pair `scene` describes for `robot` (none without a `pair:`), each arm's name a valid
/// relative ROS name.
pub fn pair_of(scene: &SceneFile, robot: &Robot) -> Result<Option<PairSetup>, RuntimeError> {
    let Some(pair) = scene.pair(robot)? else {
        return Ok(None);
    };
    for (name, _, _) in &pair.arms {
        if let Some(problem) = crate::names::relative_name_problem(name) {
            return Err(RuntimeError::Scene {
                reason: format!("pair arm '{name}': the name prefixes its topics, and {problem}"),
            });
        }
    }
    Ok(Some(pair))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pair_arm_names_must_be_relative_ros_names() {
        let robot = armctl_model::test_support::bundled_robot("panda.urdf");
        let scene = |first: &str| -> SceneFile {
            let arm = |name: &str| {
                format!("{{name: {name}, base: {{xyz: [0, 0, 0]}}, q0: [0, 0, 0, -2, 0, 2, 0]}}")
            };
            let text = format!(
                "pair: {{arms: [{}, {}], object: {{mass: 1.0, size: [0.1, 0.1, 0.1]}}}}",
                arm(first),
                arm("b")
            );
            serde_yaml::from_str(&text).unwrap()
        };
        for (first, named) in [
            (
                "/left",
                "pair arm '/left': the name prefixes its topics, and it must be relative",
            ),
            ("'a b'", "pair arm 'a b'"),
        ] {
            let e = pair_of(&scene(first), &robot).unwrap_err().to_string();
            assert!(e.contains(named), "{first}: {e}");
        }
        assert!(pair_of(&scene("a"), &robot).unwrap().is_some());
    }
}
