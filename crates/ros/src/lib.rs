//! armctl_ros: not implemented yet; see the project's issues.
