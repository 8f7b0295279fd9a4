//! A rosbag2 bag directory, as `ros2 bag record` leaves it: `metadata.yaml` names the storage
//! (`sqlite3` or `mcap`) and the files, relative to the directory, in recording order (a split
//! bag has several).

use std::path::{Component, Path};

use serde::Deserialize;

use super::{fail, mcap_samples, sqlite_samples, Samples};
use crate::RosError;

#[derive(Debug, Deserialize)]
struct Metadata {
    rosbag2_bagfile_information: BagInformation,
}

#[derive(Debug, Deserialize)]
struct BagInformation {
    storage_identifier: String,
    relative_file_paths: Vec<String>,
    #[serde(default)]
    compression_format: String,
    #[serde(default)]
    compression_mode: String,
}

/// The joint states on `topic` in every file of the bag directory `dir`, with their log times.
pub(crate) fn samples(dir: &Path, topic: &str) -> Result<Samples, RosError> {
    let metadata_path = dir.join("metadata.yaml");
    let text = armctl_model::files::read_text_bounded(
        &metadata_path,
        armctl_model::files::MAX_CONFIG_BYTES,
    )
    .map_err(|e| {
        fail(
            &metadata_path,
            format!("a bag directory needs its metadata.yaml: {e}"),
        )
    })?;
    let metadata: Metadata = serde_yaml::from_str(&text).map_err(|e| {
        let e = armctl_model::files::short_message(&e.to_string());
        fail(&metadata_path, format!("not rosbag2 metadata: {e}"))
    })?;
    let info = metadata.rosbag2_bagfile_information;
    if !info.compression_format.is_empty() || !info.compression_mode.is_empty() {
        let (format, mode) = (
            armctl_control::shown(&info.compression_format),
            armctl_control::shown(&info.compression_mode),
        );
        return Err(fail(
            &metadata_path,
            format!("a compressed bag ({format}, mode {mode}) is not read: decompress it first (ros2 bag convert with no compression)"),
        ));
    }
    let read: fn(&Path, &str) -> Result<Samples, RosError> = match info.storage_identifier.as_str()
    {
        "sqlite3" => sqlite_samples,
        "mcap" => mcap_samples,
        other => {
            let other = armctl_control::shown(other);
            return Err(fail(
                &metadata_path,
                format!("storage '{other}' is not sqlite3 or mcap"),
            ));
        }
    };
    if info.relative_file_paths.is_empty() {
        return Err(fail(&metadata_path, "relative_file_paths lists no file"));
    }
    let mut all = Vec::new();
    for file in &info.relative_file_paths {
        let inside = Path::new(file)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if !inside {
            let file = armctl_control::shown(file);
            return Err(fail(
                &metadata_path,
                format!("file '{file}' is not inside the bag directory"),
            ));
        }
        all.extend(read(&dir.join(file), topic)?);
    }
    Ok(all)
}
