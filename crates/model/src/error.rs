//! The one error type of the model crate.

use thiserror::Error;

/// Everything that can go wrong while loading a URDF, converting it, or calling a
/// kinematics function with inputs of the wrong size. Every variant names the item at fault.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The URDF file could not be read.
    #[error("cannot read URDF file '{path}': {reason}")]
    Io {
        /// The path given.
        path: String,
        /// The operating system's reason.
        reason: String,
    },
    /// The description is larger than any arm armctl controls (it would exhaust the stack or
    /// memory of the algorithms that follow).
    #[error("the URDF has {count} {what}; at most {limit} are accepted")]
    TooLarge {
        /// "links" or "moving joints in the chain".
        what: &'static str,
        /// How many it has.
        count: usize,
        /// The most accepted.
        limit: usize,
    },
    /// The text is not a well-formed URDF document: bad XML, or an element urdf-rs cannot read.
    /// Usually wrapped in [`ModelError::Located`].
    #[error("malformed URDF in {element}: {reason}")]
    Malformed {
        /// The element at fault, such as "joint 'elbow'" or "<robot>".
        element: String,
        /// The parser's message, shortened.
        reason: String,
    },
    /// The file is a xacro file: it still holds a `${...}` or `$(...)` expression or a
    /// `<xacro:...>` element. Usually wrapped in [`ModelError::Located`].
    #[error("{element} holds the unexpanded xacro `{expression}`: give the .xacro file itself (expanded with the xacro program: pip install xacro) or expand it first (`xacro robot.urdf.xacro > robot.urdf`)")]
    Xacro {
        /// The element holding it, such as "link 'upper_arm'".
        element: String,
        /// The expression, shortened.
        expression: String,
    },
    /// A `.xacro` file could not be expanded: no `xacro` program, or it failed.
    #[error("cannot expand xacro file '{path}': {reason}")]
    XacroExpansion {
        /// The path given.
        path: String,
        /// Why.
        reason: String,
    },
    /// An error found at a line of the URDF text (1-based): where the element at fault starts,
    /// or where the XML goes wrong.
    #[error("line {line}: {error}")]
    Located {
        /// The line.
        line: usize,
        /// What is wrong there.
        error: Box<ModelError>,
    },
    /// Two links or two joints share a name.
    #[error("duplicate {kind} name '{name}'")]
    DuplicateName {
        /// "link" or "joint".
        kind: &'static str,
        /// The repeated name.
        name: String,
    },
    /// A link or joint name, or a reference to one, longer than any identifier needs.
    #[error("{element}: a name of {bytes} bytes ('{start}...'); at most {limit} are accepted")]
    NameTooLong {
        /// Whose name: "link", "joint", or "joint 'elbow' parent link".
        element: String,
        /// Its length.
        bytes: usize,
        /// Its first characters.
        start: String,
        /// The most accepted.
        limit: usize,
    },
    /// A joint refers to a link that does not exist.
    #[error("joint '{joint}': {role} link '{link}' does not exist")]
    MissingLink {
        /// The joint.
        joint: String,
        /// "parent" or "child".
        role: &'static str,
        /// The missing link name.
        link: String,
    },
    /// A link is the child of more than one joint, so the links do not form a tree.
    #[error("link '{link}' is the child of several joints ({joints}): a URDF must be a tree")]
    MultipleParents {
        /// The link.
        link: String,
        /// The joints naming it as child, comma-separated.
        joints: String,
    },
    /// The joints form a closed loop.
    #[error("the joints form a cycle through link(s) {links}")]
    Cycle {
        /// The links on or below the cycle, comma-separated.
        links: String,
    },
    /// The URDF has no unique root link.
    #[error("the URDF must have exactly one root link, found {roots}")]
    Roots {
        /// The root links found, comma-separated (or "none").
        roots: String,
    },
    /// A number is NaN or infinite where a finite value is required.
    #[error("{element}: {field} is not a finite number ({value})")]
    NonFinite {
        /// The element, such as "joint 'elbow'" or "link 'upper_arm' inertial".
        element: String,
        /// The attribute, such as "origin xyz".
        field: &'static str,
        /// The offending text of the value.
        value: String,
    },
    /// A link has a negative mass.
    #[error("link '{link}': negative mass {mass}")]
    NegativeMass {
        /// The link.
        link: String,
        /// Its mass.
        mass: f64,
    },
    /// A link's inertia tensor has a negative principal moment.
    #[error("link '{link}': inertia is not positive semi-definite (smallest principal moment {eigenvalue:e})")]
    InertiaNotPositive {
        /// The link.
        link: String,
        /// The smallest eigenvalue of the tensor.
        eigenvalue: f64,
    },
    /// A joint has a zero axis vector.
    #[error("joint '{joint}': axis has zero length")]
    ZeroAxis {
        /// The joint.
        joint: String,
    },
    /// A joint type that a serial arm model cannot hold.
    #[error("joint '{joint}': type '{kind}' is not supported (only revolute, continuous, prismatic and fixed)")]
    UnsupportedJoint {
        /// The joint.
        joint: String,
        /// The URDF type.
        kind: String,
    },
    /// A mimic joint lies on the controlled chain.
    #[error("joint '{joint}' mimics '{mimicked}': mimic joints on the chain are not supported; choose a tip that leaves it off the chain (it is then locked)")]
    MimicOnChain {
        /// The mimic joint.
        joint: String,
        /// The joint it follows.
        mimicked: String,
    },
    /// A chain joint's `<limit>` is missing or invalid.
    #[error("joint '{joint}': invalid <limit>: {reason}")]
    InvalidLimit {
        /// The joint.
        joint: String,
        /// What is wrong.
        reason: String,
    },
    /// A base or tip link name that the URDF does not have.
    #[error("unknown {role} link '{link}'")]
    UnknownLink {
        /// "base" or "tip".
        role: &'static str,
        /// The name given.
        link: String,
    },
    /// The tip is not a descendant of the base.
    #[error("tip link '{tip}' is not below base link '{base}'")]
    TipNotBelowBase {
        /// The base link.
        base: String,
        /// The tip link.
        tip: String,
    },
    /// No tip was given and several leaves can be reached through moving joints.
    #[error("several tip links are possible ({candidates}); choose one with --tip / tip_link")]
    AmbiguousTip {
        /// The candidate leaves, comma-separated.
        candidates: String,
    },
    /// The chain from base to tip has no moving joint.
    #[error("no moving joint between base link '{base}' and tip link '{tip}'")]
    NoMovingJoint {
        /// The base link.
        base: String,
        /// The tip link.
        tip: String,
    },
    /// A lock position names a joint that is not an off-chain moving joint.
    #[error("cannot lock joint '{joint}': {reason}")]
    InvalidLock {
        /// The joint.
        joint: String,
        /// Why.
        reason: String,
    },
    /// A hand-built model is inconsistent.
    #[error("invalid model: {reason}")]
    InvalidModel {
        /// What is wrong.
        reason: String,
    },
    /// An input has the wrong size.
    #[error("{what}: expected length {expected}, got {got}")]
    Dimension {
        /// The input.
        what: &'static str,
        /// The model's size.
        expected: usize,
        /// The size given.
        got: usize,
    },
}

impl ModelError {
    /// The error without the line it was found at (to match on the kind of error).
    pub fn unlocated(&self) -> &ModelError {
        match self {
            ModelError::Located { error, .. } => error.unlocated(),
            other => other,
        }
    }

    /// The 1-based line of the URDF text the error was found at, when known.
    pub fn line(&self) -> Option<usize> {
        match self {
            ModelError::Located { line, .. } => Some(*line),
            _ => None,
        }
    }

    /// The error placed at `line`.
    pub(crate) fn at_line(self, line: usize) -> Self {
        ModelError::Located {
            line,
            error: Box::new(self),
        }
    }
}

/// Most characters of an input quoted in an error: a name or value from a 64 MiB file is
/// shortened, not echoed.
const MAX_QUOTED_CHARS: usize = 200;

/// `text`, shortened to [`MAX_QUOTED_CHARS`] characters (marked with "...").
pub(crate) fn clipped(text: &str) -> String {
    match text.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.to_string(),
    }
}

/// Most names listed in one error; the others are counted.
const MAX_LISTED_NAMES: usize = 10;

/// `names` comma-separated, at most [`MAX_LISTED_NAMES`] of them: "a, b, and 990 more".
pub(crate) fn name_list<'a>(names: impl ExactSizeIterator<Item = &'a str>) -> String {
    let more = names.len().saturating_sub(MAX_LISTED_NAMES);
    let mut list = names.take(MAX_LISTED_NAMES).collect::<Vec<_>>().join(", ");
    if more > 0 {
        list += &format!(", and {more} more");
    }
    list
}

/// A slice or matrix of the wrong size, named: what [`check_length`] returns. Every crate of
/// the workspace turns it into its own `Dimension` error (`?` converts it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("{what}: expected length {expected}, got {got}")]
pub struct LengthMismatch {
    /// The input or output.
    pub what: &'static str,
    /// The size the model needs.
    pub expected: usize,
    /// The size given.
    pub got: usize,
}

/// Checks that `got` equals `expected`, naming `what` otherwise: the one length check of the
/// workspace.
pub fn check_length(what: &'static str, expected: usize, got: usize) -> Result<(), LengthMismatch> {
    if expected == got {
        Ok(())
    } else {
        Err(LengthMismatch {
            what,
            expected,
            got,
        })
    }
}

impl From<LengthMismatch> for ModelError {
    fn from(e: LengthMismatch) -> Self {
        ModelError::Dimension {
            what: e.what,
            expected: e.expected,
            got: e.got,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lists_and_texts_are_shortened() {
        let names: Vec<String> = (0..12).map(|i| format!("l{i}")).collect();
        assert_eq!(
            name_list(names.iter().map(String::as_str)),
            "l0, l1, l2, l3, l4, l5, l6, l7, l8, l9, and 2 more"
        );
        assert_eq!(name_list(["a", "b"].into_iter()), "a, b");
        assert_eq!(clipped(&"\u{e9}".repeat(300)).chars().count(), 203);
    }

    #[test]
    fn check_length_names_the_item() {
        assert_eq!(check_length("q", 3, 3), Ok(()));
        let e = check_length("q", 3, 2).unwrap_err();
        assert_eq!(e.to_string(), "q: expected length 3, got 2");
        assert_eq!(
            ModelError::from(e),
            ModelError::Dimension {
                what: "q",
                expected: 3,
                got: 2
            }
        );
    }
}
