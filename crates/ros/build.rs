//! With the `r2r` feature: which optional interface packages r2r generates bindings for, so
//! that the rcl backend serves every interface the ROS installation it is built against has.
//! r2r binds every package of the ROS prefixes (AMENT_PREFIX_PATH, CMAKE_PREFIX_PATH, or the
//! packages CMAKE_IDL_PACKAGES names) that registers interfaces, less those IDL_PACKAGE_FILTER
//! leaves out; this script asks the same question of the same variables and sets
//! `ros_<package>` for each package found: `ros_std_srvs` (the Trigger services),
//! `ros_control_msgs` (the FollowJointTrajectory action), and `ros_controller_state_jazzy` when
//! that control_msgs has Jazzy's JointTrajectoryControllerState (with `speed_scaling_factor`;
//! Humble's lacks it and keeps `desired` and `actual`). Without ROS in the environment, and
//! with the `doc-only` feature (r2r's bundled bindings, which have neither package), none is
//! set.

use std::env;
use std::path::{Path, PathBuf};

/// The optional interface packages the rcl backend uses when they are installed.
const OPTIONAL_PACKAGES: [&str; 2] = ["std_srvs", "control_msgs"];

const WATCHED: [&str; 4] = [
    "AMENT_PREFIX_PATH",
    "CMAKE_PREFIX_PATH",
    "CMAKE_IDL_PACKAGES",
    "IDL_PACKAGE_FILTER",
];

fn main() {
    for package in OPTIONAL_PACKAGES {
        println!("cargo::rustc-check-cfg=cfg(ros_{package})");
    }
    println!("cargo::rustc-check-cfg=cfg(ros_controller_state_jazzy)");
    for var in WATCHED {
        println!("cargo::rerun-if-env-changed={var}");
    }
    println!("cargo::rerun-if-changed=build.rs");
    if env::var_os("CARGO_FEATURE_R2R").is_none() || env::var_os("CARGO_FEATURE_DOC_ONLY").is_some()
    {
        return;
    }
    for package in OPTIONAL_PACKAGES {
        let Some(share) = r2r_binds(package) else {
            continue;
        };
        println!("cargo::rustc-cfg=ros_{package}");
        if package == "control_msgs" && has_jazzy_controller_state(&share) {
            println!("cargo::rustc-cfg=ros_controller_state_jazzy");
        }
    }
}

/// The `share/<package>` folder r2r's build generates bindings from, if it does.
fn r2r_binds(package: &str) -> Option<PathBuf> {
    if let Ok(filter) = env::var("IDL_PACKAGE_FILTER") {
        if !filter.split(';').any(|name| name == package) {
            return None;
        }
    }
    if let Ok(dirs) = env::var("CMAKE_IDL_PACKAGES") {
        // r2r then binds only these packages (each given by its share/<package>/cmake folder).
        return dirs
            .split(':')
            .filter_map(|dir| Path::new(dir).parent())
            .find(|share| share.file_name().is_some_and(|name| name == package))
            .map(Path::to_path_buf);
    }
    ["AMENT_PREFIX_PATH", "CMAKE_PREFIX_PATH"]
        .iter()
        .filter_map(|var| env::var(var).ok())
        .flat_map(|paths| paths.split(':').map(PathBuf::from).collect::<Vec<_>>())
        .find(|prefix| {
            prefix
                .join("share/ament_index/resource_index/rosidl_interfaces")
                .join(package)
                .is_file()
        })
        .map(|prefix| prefix.join("share").join(package))
}

/// Whether the installed JointTrajectoryControllerState is Jazzy's (its definition, as .msg
/// or .idl, has `speed_scaling_factor`).
fn has_jazzy_controller_state(share: &Path) -> bool {
    ["msg", "idl"].iter().any(|ext| {
        std::fs::read_to_string(share.join(format!("msg/JointTrajectoryControllerState.{ext}")))
            .is_ok_and(|text| text.contains("speed_scaling_factor"))
    })
}
