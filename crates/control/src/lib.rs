//! armctl_control: not implemented yet; see the project's issues.
