//! With the `r2r` feature: which optional interface packages r2r generates bindings for, so
//! that the rcl backend serves every interface the ROS installation it is built against has.
//! r2r binds every package of the ROS prefixes (AMENT_PREFIX_PATH, CMAKE_PREFIX_PATH) that
//! registers interfaces in the ament index, less those IDL_PACKAGE_FILTER leaves out; this
//! script asks the same question of the same variables and sets `ros_<package>` for each
//! package found (`ros_std_srvs`: the Trigger services; `ros_control_msgs`: the
//! FollowJointTrajectory action and `~/controller_state`). Without ROS in the environment (r2r's
//! doc-only check, the DDS build) none is set.

use std::env;
use std::path::Path;

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
    for var in WATCHED {
        println!("cargo::rerun-if-env-changed={var}");
    }
    println!("cargo::rerun-if-changed=build.rs");
    if env::var_os("CARGO_FEATURE_R2R").is_none() {
        return;
    }
    for package in OPTIONAL_PACKAGES {
        if r2r_binds(package) {
            println!("cargo::rustc-cfg=ros_{package}");
        }
    }
}

/// Whether r2r's build generates bindings for `package`.
fn r2r_binds(package: &str) -> bool {
    if let Ok(dirs) = env::var("CMAKE_IDL_PACKAGES") {
        // r2r then binds only these packages (each given by its share/<package>/cmake folder).
        return dirs
            .split(':')
            .filter_map(|dir| Path::new(dir).parent())
            .any(|share| share.file_name().is_some_and(|name| name == package));
    }
    if let Ok(filter) = env::var("IDL_PACKAGE_FILTER") {
        if !filter.split(';').any(|name| name == package) {
            return false;
        }
    }
    ["AMENT_PREFIX_PATH", "CMAKE_PREFIX_PATH"]
        .iter()
        .filter_map(|var| env::var(var).ok())
        .flat_map(|paths| paths.split(':').map(str::to_owned).collect::<Vec<_>>())
        .any(|prefix| {
            Path::new(&prefix)
                .join("share/ament_index/resource_index/rosidl_interfaces")
                .join(package)
                .is_file()
        })
}
