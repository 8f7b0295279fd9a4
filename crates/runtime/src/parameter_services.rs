//! The ROS 2 parameter services (`~/list_parameters`, `~/get_parameters`,
//! `~/get_parameter_types`, `~/describe_parameters`, `~/set_parameters`,
//! `~/set_parameters_atomically`) as plain requests and responses, answered in the runtime
//! from a [`ParameterStore`] (a controller node's by its loop:
//! [`crate::group_loop::GroupLoop::answer_parameters`]), so a change is checked by the same
//! code whatever the middleware, including the controller's own checks, and a rejection
//! carries the reason. The transports turn the services' messages into these.

use crate::node_parameters::ParameterStore;
use armctl_control::{Declaration, ParameterType, ParameterValue};

/// A parameter service request.
#[derive(Debug, Clone, PartialEq)]
pub enum ParameterRequest {
    /// `list_parameters`: names under `prefixes` (all when empty), `depth` levels of `.`
    /// (0: any depth).
    List {
        /// Prefixes.
        prefixes: Vec<String>,
        /// Depth.
        depth: u64,
    },
    /// `get_parameters`.
    Get(Vec<String>),
    /// `get_parameter_types`.
    GetTypes(Vec<String>),
    /// `describe_parameters`.
    Describe(Vec<String>),
    /// `set_parameters`: each change on its own.
    Set(Vec<(String, ParameterValue)>),
    /// `set_parameters_atomically`: all or none.
    SetAtomically(Vec<(String, ParameterValue)>),
}

/// The answer to a [`ParameterRequest`], in the request's order.
#[derive(Debug, Clone, PartialEq)]
pub enum ParameterResponse {
    /// Names.
    List(Vec<String>),
    /// Values (`None`: not declared, "not set" on the wire).
    Get(Vec<Option<ParameterValue>>),
    /// Types (`None`: not declared).
    GetTypes(Vec<Option<ParameterType>>),
    /// Declarations (`None`: not declared).
    Describe(Vec<Option<Declaration>>),
    /// One result per change: the value as stored (an integer for a double widened), or
    /// `Err(reason)` when rejected.
    Set(Vec<Result<ParameterValue, String>>),
    /// One result for all: the values as stored, in the order of the changes.
    SetAtomically(Result<Vec<ParameterValue>, String>),
}

/// The `prefixes` of a `list_parameters` result, as rclcpp and rclpy give them: for each
/// listed name with a `.`, the part before its last `.`, once, in the order met.
pub fn prefixes_of(names: &[String]) -> Vec<String> {
    let mut prefixes: Vec<String> = Vec::new();
    for name in names {
        if let Some((prefix, _)) = name.rsplit_once('.') {
            if !prefixes.iter().any(|p| p == prefix) {
                prefixes.push(prefix.to_string());
            }
        }
    }
    prefixes
}

/// rcl_interfaces/ParameterType's number for a declared type (`None`: not set).
pub fn type_id(kind: Option<ParameterType>) -> u8 {
    match kind {
        None => 0,
        Some(ParameterType::Bool) => 1,
        Some(ParameterType::Integer) => 2,
        Some(ParameterType::Double) => 3,
        Some(ParameterType::String) => 4,
        Some(ParameterType::DoubleArray) => 8,
        Some(ParameterType::StringArray) => 9,
    }
}

/// rcl_interfaces/ParameterDescriptor's fields, whatever the middleware's type for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Descriptor {
    /// Name.
    pub name: String,
    /// [`type_id`].
    pub type_id: u8,
    /// Description.
    pub description: String,
    /// The choices, or that each element of an array is within the range.
    pub additional_constraints: String,
    /// Read-only.
    pub read_only: bool,
    /// The range of a double or double-array parameter.
    pub floating_point_range: Option<(f64, f64)>,
    /// The range of an integer parameter.
    pub integer_range: Option<(i64, i64)>,
}

/// How `describe_parameters` answers for `name` (`None`: not declared, described read-only).
pub fn descriptor(name: &str, declaration: Option<&Declaration>) -> Descriptor {
    let Some(d) = declaration else {
        return Descriptor {
            name: name.into(),
            type_id: 0,
            description: "not declared by this node".into(),
            additional_constraints: String::new(),
            read_only: true,
            floating_point_range: None,
            integer_range: None,
        };
    };
    let integer = d.kind == ParameterType::Integer;
    let additional_constraints = match (&d.choices, d.kind) {
        (Some(choices), _) => format!("one of: {}", choices.join(", ")),
        (None, ParameterType::DoubleArray) if d.range.is_some() => {
            "each element within the range".into()
        }
        _ => String::new(),
    };
    Descriptor {
        name: d.name.clone(),
        type_id: type_id(Some(d.kind)),
        description: d.description.clone(),
        additional_constraints,
        read_only: d.read_only,
        floating_point_range: d.range.filter(|_| !integer),
        integer_range: d
            .range
            .filter(|_| integer)
            .map(|(lo, hi)| (lo as i64, hi as i64)),
    }
}

fn listed(name: &str, prefixes: &[String], depth: u64) -> bool {
    let levels = |rest: &str| rest.split('.').filter(|s| !s.is_empty()).count() as u64;
    if prefixes.is_empty() {
        return depth == 0 || levels(name) <= depth;
    }
    prefixes.iter().any(|p| {
        name.strip_prefix(p.as_str())
            .and_then(|rest| rest.strip_prefix('.'))
            .is_some_and(|rest| depth == 0 || levels(rest) <= depth)
            || name == p
    })
}

/// Answers the read-only requests from `store`; `None` for the setting ones, which the node
/// answers (see [`set_each`] and [`set_atomically`]).
pub fn answer_query(
    store: &ParameterStore,
    request: &ParameterRequest,
) -> Option<ParameterResponse> {
    let declared = |name: &String| store.declaration(name);
    Some(match request {
        // The tunable ones first, each kind in declaration order: a reply cut to fit a
        // transport's limit (the DDS backend's, docs/ros2.md) keeps what a user tunes, and
        // `ros2 param list` sorts the names anyway.
        ParameterRequest::List { prefixes, depth } => ParameterResponse::List({
            let (tunable, read_only): (Vec<_>, Vec<_>) =
                store.declarations().iter().partition(|d| !d.read_only);
            tunable
                .into_iter()
                .chain(read_only)
                .map(|d| d.name.clone())
                .filter(|n| listed(n, prefixes, *depth))
                .collect()
        }),
        ParameterRequest::Get(names) => {
            ParameterResponse::Get(names.iter().map(|n| store.get(n).cloned()).collect())
        }
        ParameterRequest::GetTypes(names) => {
            ParameterResponse::GetTypes(names.iter().map(|n| declared(n).map(|d| d.kind)).collect())
        }
        ParameterRequest::Describe(names) => {
            ParameterResponse::Describe(names.iter().map(|n| declared(n).cloned()).collect())
        }
        ParameterRequest::Set(_) | ParameterRequest::SetAtomically(_) => return None,
    })
}

/// `set_parameters`: `apply` each change on its own (it validates, applies and stores, or
/// returns the reason and changes nothing); an accepted value is answered as `apply` stored
/// it (an integer for a double widened; a trigger reads false again).
pub fn set_each(
    changes: &[(String, ParameterValue)],
    mut apply: impl FnMut(&str, &ParameterValue) -> Result<ParameterValue, String>,
) -> ParameterResponse {
    ParameterResponse::Set(changes.iter().map(|(n, v)| apply(n, v)).collect())
}

/// What answers a node's parameter requests: its parameters as they are now, and the one
/// place a change is checked and applied.
pub trait ParameterTarget {
    /// The declarations and current values.
    fn store(&self) -> &ParameterStore;
    /// Checks and applies one change (it validates, applies and stores, or returns the reason
    /// and changes nothing); returns the value as stored.
    fn apply(&mut self, name: &str, value: &ParameterValue) -> Result<ParameterValue, String>;
}

/// A store a set does not change by itself, with the function that applies a change (a
/// node whose parameters are all read-only, a test).
pub struct Fixed<'a, F> {
    /// The store.
    pub store: &'a ParameterStore,
    /// Applies a change.
    pub apply: F,
}

impl<F> ParameterTarget for Fixed<'_, F>
where
    F: FnMut(&str, &ParameterValue) -> Result<ParameterValue, String>,
{
    fn store(&self) -> &ParameterStore {
        self.store
    }
    fn apply(&mut self, name: &str, value: &ParameterValue) -> Result<ParameterValue, String> {
        (self.apply)(name, value)
    }
}

/// `set_parameters_atomically`: every change is checked against the target's declarations
/// first; then applied, the triggers ([`ParameterStore::is_trigger`]) after every other
/// change succeeded, and if the target still rejects one, the ones already applied are put
/// back.
pub fn set_atomically(
    target: &mut impl ParameterTarget,
    changes: &[(String, ParameterValue)],
) -> ParameterResponse {
    // The values before, to put back: the names only, not the whole store.
    let before: Vec<Option<ParameterValue>> = changes
        .iter()
        .map(|(name, _)| target.store().get(name).cloned())
        .collect();
    for ((name, value), old) in changes.iter().zip(&before) {
        if let Err(e) = target.store().validate(name, value, false) {
            // The refusal goes through `apply` too, so the node logs and counts it as any
            // other; `apply` refuses what the declaration refuses (should it not, the value
            // before is put back).
            let reason = match target.apply(name, value) {
                Err(reason) => reason,
                Ok(_) => {
                    if let Some(old) = old {
                        let _ = target.apply(name, old);
                    }
                    e.to_string()
                }
            };
            return ParameterResponse::SetAtomically(Err(reason));
        }
    }
    let mut order: Vec<usize> = (0..changes.len()).collect();
    order.sort_by_key(|&k| target.store().is_trigger(&changes[k].0));
    let mut stored: Vec<Option<ParameterValue>> = vec![None; changes.len()];
    for (done, &k) in order.iter().enumerate() {
        let (name, value) = &changes[k];
        match target.apply(name, value) {
            Ok(value) => stored[k] = Some(value),
            Err(reason) => {
                undo(target, changes, &before, &order[..done]);
                return ParameterResponse::SetAtomically(Err(reason));
            }
        }
    }
    ParameterResponse::SetAtomically(Ok(stored.into_iter().flatten().collect()))
}

/// Puts back, newest first, the values `before` of `applied` (indices into `changes`).
fn undo(
    target: &mut impl ParameterTarget,
    changes: &[(String, ParameterValue)],
    before: &[Option<ParameterValue>],
    applied: &[usize],
) {
    for &k in applied.iter().rev() {
        if let Some(old) = &before[k] {
            let _ = target.apply(&changes[k].0, old);
        }
    }
}

/// Any request: queries from the target's store, changes through its `apply`.
pub fn handle_request(
    target: &mut impl ParameterTarget,
    request: &ParameterRequest,
) -> ParameterResponse {
    match request {
        ParameterRequest::Set(changes) => {
            set_each(changes, |name, value| target.apply(name, value))
        }
        ParameterRequest::SetAtomically(changes) => set_atomically(target, changes),
        query => answer_query(target.store(), query).unwrap_or(ParameterResponse::List(vec![])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An atomic set on `store`, applied by `apply`.
    fn atomically(
        store: &ParameterStore,
        changes: &[(String, ParameterValue)],
        apply: impl FnMut(&str, &ParameterValue) -> Result<ParameterValue, String>,
    ) -> ParameterResponse {
        set_atomically(&mut Fixed { store, apply }, changes)
    }

    fn store() -> ParameterStore {
        ParameterStore::new(vec![
            Declaration::double("kp", 1.0, "gain").range(0.0, 10.0),
            Declaration::double("limits.upper", 1.0, "upper"),
            Declaration::string("robot", "a", "robot").read_only(),
        ])
    }

    /// A trigger acts at once and cannot be put back: it is applied after every other change
    /// of an atomic set succeeded, and answered as it reads then.
    #[test]
    fn an_atomic_set_applies_its_triggers_last() {
        let store = ParameterStore::new(vec![
            Declaration::double("kp", 1.0, "gain"),
            Declaration::double("limits.upper", 1.0, "upper"),
            Declaration::bool("reset_collision", false, "a trigger").trigger(),
        ]);
        let mut applied: Vec<String> = vec![];
        let mut apply = |name: &str, value: &ParameterValue| {
            if name == "limits.upper" && *value == ParameterValue::Double(-1.0) {
                return Err("below the lower limit".to_string());
            }
            applied.push(name.into());
            Ok(match name {
                "reset_collision" => ParameterValue::Bool(false),
                _ => value.clone(),
            })
        };
        let reset = ("reset_collision".to_string(), ParameterValue::Bool(true));
        let refused = [
            reset.clone(),
            ("limits.upper".to_string(), ParameterValue::Double(-1.0)),
        ];
        let response = atomically(&store, &refused, &mut apply);
        assert!(matches!(response, ParameterResponse::SetAtomically(Err(_))));
        let accepted = [reset, ("kp".to_string(), ParameterValue::Double(3.0))];
        let response = atomically(&store, &accepted, &mut apply);
        assert_eq!(
            response,
            ParameterResponse::SetAtomically(Ok(vec![
                ParameterValue::Bool(false),
                ParameterValue::Double(3.0)
            ]))
        );
        assert_eq!(applied, ["kp", "reset_collision"]);
    }

    /// An integer set on a double is answered (and so announced on /parameter_events) as the
    /// double it is stored as, one by one and atomically.
    #[test]
    fn accepted_values_are_answered_as_stored() {
        let store = store();
        let changes = vec![("kp".to_string(), ParameterValue::Integer(2))];
        let accept = |name: &str, value: &ParameterValue| {
            store
                .validate(name, value, false)
                .map_err(|e| e.to_string())
        };
        assert_eq!(
            set_each(&changes, accept),
            ParameterResponse::Set(vec![Ok(ParameterValue::Double(2.0))])
        );
        assert_eq!(
            atomically(&store, &changes, accept),
            ParameterResponse::SetAtomically(Ok(vec![ParameterValue::Double(2.0)]))
        );
    }

    #[test]
    fn listed_names_give_their_prefixes_as_rclcpp_does() {
        let names: Vec<String> = ["kp", "constraints.goal_time", "constraints.j1.goal", "a.b"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(prefixes_of(&names), ["constraints", "constraints.j1", "a"]);
        assert!(prefixes_of(&["kp".to_string()]).is_empty());
    }

    #[test]
    fn queries_answer_from_the_declarations() {
        let store = store();
        let list = |prefixes: &[&str], depth| {
            answer_query(
                &store,
                &ParameterRequest::List {
                    prefixes: prefixes.iter().map(|p| p.to_string()).collect(),
                    depth,
                },
            )
        };
        assert_eq!(
            list(&[], 0),
            Some(ParameterResponse::List(vec![
                "kp".into(),
                "limits.upper".into(),
                "robot".into()
            ]))
        );
        assert_eq!(
            list(&[], 1),
            Some(ParameterResponse::List(vec!["kp".into(), "robot".into()]))
        );
        assert_eq!(
            list(&["limits"], 0),
            Some(ParameterResponse::List(vec!["limits.upper".into()]))
        );
        let get = answer_query(
            &store,
            &ParameterRequest::Get(vec!["kp".into(), "nope".into()]),
        );
        assert_eq!(
            get,
            Some(ParameterResponse::Get(vec![
                Some(ParameterValue::Double(1.0)),
                None
            ]))
        );
        let Some(ParameterResponse::Describe(d)) =
            answer_query(&store, &ParameterRequest::Describe(vec!["kp".into()]))
        else {
            panic!("describe")
        };
        assert_eq!(
            d[0].as_ref().map(|d| (d.description.as_str(), d.range)),
            Some(("gain", Some((0.0, 10.0))))
        );
        assert_eq!(answer_query(&store, &ParameterRequest::Set(vec![])), None);
    }

    #[test]
    fn an_atomic_set_refused_by_a_declaration_is_refused_through_apply_and_changes_nothing() {
        let store = store();
        let mut calls: Vec<(String, ParameterValue)> = vec![];
        let response = atomically(
            &store,
            &[
                ("kp".into(), ParameterValue::Double(2.0)),
                ("kp".into(), ParameterValue::Double(20.0)),
            ],
            |name, value| {
                calls.push((name.into(), value.clone()));
                store
                    .validate(name, value, false)
                    .map_err(|e| e.to_string())
            },
        );
        assert!(
            matches!(&response, ParameterResponse::SetAtomically(Err(reason)) if reason.contains("outside")),
            "{response:?}"
        );
        // Only the refused change reaches the node (which logs and counts the refusal).
        assert_eq!(calls, vec![("kp".into(), ParameterValue::Double(20.0))]);
    }

    #[test]
    fn atomic_sets_check_everything_first_and_undo_on_a_late_rejection() {
        let mut store = store();
        let bad = atomically(
            &store,
            &[
                ("kp".into(), ParameterValue::Double(2.0)),
                ("kp".into(), ParameterValue::Double(20.0)),
            ],
            |_, value| Ok(value.clone()),
        );
        assert!(
            matches!(bad, ParameterResponse::SetAtomically(Err(reason)) if reason.contains("outside"))
        );
        let read_only = atomically(
            &store,
            &[("robot".into(), ParameterValue::String("b".into()))],
            |_, value| Ok(value.clone()),
        );
        assert!(
            matches!(read_only, ParameterResponse::SetAtomically(Err(reason)) if reason.contains("read-only"))
        );
        // The second change passes the declaration but the node rejects it: the first is undone.
        let snapshot = store.clone();
        let mut applied: Vec<(String, ParameterValue)> = vec![];
        let changes = [
            ("kp".to_string(), ParameterValue::Double(3.0)),
            ("limits.upper".to_string(), ParameterValue::Double(-1.0)),
        ];
        let response = atomically(&snapshot, &changes, |name, value| {
            if name == "limits.upper" && *value == ParameterValue::Double(-1.0) {
                return Err("below the lower limit".into());
            }
            store.set(name, value, false).map_err(|e| e.to_string())?;
            applied.push((name.into(), value.clone()));
            Ok(value.clone())
        });
        assert_eq!(
            response,
            ParameterResponse::SetAtomically(Err("below the lower limit".into()))
        );
        assert_eq!(
            applied,
            vec![
                ("kp".into(), ParameterValue::Double(3.0)),
                ("kp".into(), ParameterValue::Double(1.0))
            ]
        );
        assert_eq!(store.get("kp"), Some(&ParameterValue::Double(1.0)));
    }
}
