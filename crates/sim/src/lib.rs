//! armctl_sim: not implemented yet; see the project's issues.
