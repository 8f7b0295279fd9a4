//! armctl_dynamics: not implemented yet; see the project's issues.
