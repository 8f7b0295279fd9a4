//! The ROS 2 parameter services and the trigger services, written once for every backend. A
//! backend receives a request ([`ParameterCall`]) with a token of its own (what it needs to
//! reply on), hands it here and gets the number and the [`ParameterRequest`] the node answers;
//! the node's [`ParameterResponse`] comes back as the [`ParameterReply`] to send on that token
//! and the changes to announce on `/parameter_events`. Every request is kept until the node
//! answers it, so each reply matches what was asked.

use super::parameter_msgs::{
    DescribeParametersResponse, FloatingPointRange, GetParameterTypesResponse,
    GetParametersResponse, IntegerRange, ListParametersRequest, ListParametersResponse,
    ListParametersResult, NamesRequest, Parameter, ParameterDescriptor, ParameterEvent,
    ParameterValue, SetParametersAtomicallyResponse, SetParametersRequest, SetParametersResponse,
    SetParametersResult, TriggerResponse,
};
use super::pending::PendingRequests;
use crate::msgs::Time;
use crate::parameter_services::{self, ParameterRequest, ParameterResponse};
use armctl_control::{Declaration, ParameterValue as Value};

/// A parameter service request as received.
#[derive(Debug, Clone, PartialEq)]
pub enum ParameterCall {
    /// `~/list_parameters`.
    List(ListParametersRequest),
    /// `~/get_parameters`.
    Get(NamesRequest),
    /// `~/get_parameter_types`.
    GetTypes(NamesRequest),
    /// `~/describe_parameters`.
    Describe(NamesRequest),
    /// `~/set_parameters`.
    Set(SetParametersRequest),
    /// `~/set_parameters_atomically`.
    SetAtomically(SetParametersRequest),
    /// The std_srvs/Trigger service `~/<name>` of the trigger parameter `name`: a call sets it
    /// true.
    Trigger(String),
}

/// The reply to a [`ParameterCall`] of the same name.
#[derive(Debug, Clone, PartialEq)]
pub enum ParameterReply {
    /// `~/list_parameters`.
    List(ListParametersResponse),
    /// `~/get_parameters`.
    Get(GetParametersResponse),
    /// `~/get_parameter_types`.
    GetTypes(GetParameterTypesResponse),
    /// `~/describe_parameters`.
    Describe(DescribeParametersResponse),
    /// `~/set_parameters`.
    Set(SetParametersResponse),
    /// `~/set_parameters_atomically`.
    SetAtomically(SetParametersAtomicallyResponse),
    /// A trigger service.
    Trigger(TriggerResponse),
}

impl ParameterReply {
    /// The service it answers (a trigger: `trigger`; its name is the answer's).
    pub fn service(&self) -> &'static str {
        match self {
            ParameterReply::List(_) => "list_parameters",
            ParameterReply::Get(_) => "get_parameters",
            ParameterReply::GetTypes(_) => "get_parameter_types",
            ParameterReply::Describe(_) => "describe_parameters",
            ParameterReply::Set(_) => "set_parameters",
            ParameterReply::SetAtomically(_) => "set_parameters_atomically",
            ParameterReply::Trigger(_) => "trigger",
        }
    }
}

/// The node's answer as the backend sends it.
#[derive(Debug)]
pub struct Answer<T> {
    /// The backend's token of the request.
    pub token: T,
    /// What goes back.
    pub reply: ParameterReply,
    /// The names the request asked about, in order (a trigger: its parameter).
    pub names: Vec<String>,
    /// Values the request changed, as stored (typed as declared), for `/parameter_events`.
    pub changed: Vec<(String, Value)>,
}

/// Which service a waiting request came on, and the names it asked about.
#[derive(Debug)]
struct Asked {
    call: Kind,
    names: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    List,
    Get,
    GetTypes,
    Describe,
    Set,
    SetAtomically,
    Trigger,
}

/// Requests waiting for the node's answer, at most.
const MAX_PENDING: usize = 64;

/// The parameter requests of one node waiting for its answers, each with the backend's token.
#[derive(Debug)]
pub struct ParameterServices<T> {
    pending: PendingRequests<(T, Asked)>,
}

impl<T> Default for ParameterServices<T> {
    fn default() -> Self {
        Self {
            pending: PendingRequests::new(MAX_PENDING),
        }
    }
}

/// The changes a set request asks for. Byte arrays and "not set" have no armctl value: such a
/// change arrives as an empty string array, which no declaration accepts, so the node refuses
/// it with the expected type.
fn changes(request: SetParametersRequest) -> Vec<(String, Value)> {
    let change = |p: Parameter| {
        let value = p.value.to_value().unwrap_or(Value::StringArray(vec![]));
        (p.name, value)
    };
    request.parameters.into_iter().map(change).collect()
}

fn names_of(changes: &[(String, Value)]) -> Vec<String> {
    changes.iter().map(|(name, _)| name.clone()).collect()
}

/// What the node is asked, and what to keep of the call until it answers.
fn request_of(call: ParameterCall) -> (Asked, ParameterRequest) {
    let asked = |call, names| Asked { call, names };
    match call {
        ParameterCall::List(q) => (
            asked(Kind::List, vec![]),
            ParameterRequest::List {
                prefixes: q.prefixes,
                depth: q.depth,
            },
        ),
        ParameterCall::Get(q) => (
            asked(Kind::Get, q.names.clone()),
            ParameterRequest::Get(q.names),
        ),
        ParameterCall::GetTypes(q) => (
            asked(Kind::GetTypes, q.names.clone()),
            ParameterRequest::GetTypes(q.names),
        ),
        ParameterCall::Describe(q) => (
            asked(Kind::Describe, q.names.clone()),
            ParameterRequest::Describe(q.names),
        ),
        ParameterCall::Set(q) => {
            let c = changes(q);
            (asked(Kind::Set, names_of(&c)), ParameterRequest::Set(c))
        }
        ParameterCall::SetAtomically(q) => {
            let c = changes(q);
            let names = names_of(&c);
            (
                asked(Kind::SetAtomically, names),
                ParameterRequest::SetAtomically(c),
            )
        }
        ParameterCall::Trigger(name) => (
            asked(Kind::Trigger, vec![name.clone()]),
            ParameterRequest::Set(vec![(name, Value::Bool(true))]),
        ),
    }
}

impl<T> ParameterServices<T> {
    /// Keeps the request received on `token` and gives its number and what the node is asked.
    pub fn receive(&mut self, token: T, call: ParameterCall) -> (u64, ParameterRequest) {
        let (asked, request) = request_of(call);
        (self.pending.number((token, asked)), request)
    }

    /// The reply to request `id` from the node's `response` (`None`: no such request waits,
    /// or the response answers another service, which is said).
    pub fn answer(&mut self, id: u64, response: ParameterResponse) -> Option<Answer<T>> {
        let (token, asked) = self.pending.take(id)?;
        let Some((reply, changed)) = reply(&asked, response) else {
            eprintln!("parameter services: the node's response does not answer {asked:?}");
            return None;
        };
        Some(Answer {
            token,
            reply,
            names: asked.names,
            changed,
        })
    }
}

type Changed = Vec<(String, Value)>;

fn reply(asked: &Asked, response: ParameterResponse) -> Option<(ParameterReply, Changed)> {
    let unchanged = |reply| Some((reply, vec![]));
    match (asked.call, response) {
        (Kind::List, ParameterResponse::List(names)) => {
            unchanged(ParameterReply::List(ListParametersResponse {
                result: ListParametersResult {
                    prefixes: parameter_services::prefixes_of(&names),
                    names,
                },
            }))
        }
        (Kind::Get, ParameterResponse::Get(values)) => {
            let value = |v: &Option<Value>| v.as_ref().map(ParameterValue::from_value);
            let values = values.iter().map(|v| value(v).unwrap_or_default());
            unchanged(ParameterReply::Get(GetParametersResponse {
                values: values.collect(),
            }))
        }
        (Kind::GetTypes, ParameterResponse::GetTypes(kinds)) => {
            let types = kinds.into_iter().map(parameter_services::type_id);
            unchanged(ParameterReply::GetTypes(GetParameterTypesResponse {
                types: types.collect(),
            }))
        }
        (Kind::Describe, ParameterResponse::Describe(found)) => {
            let described = asked.names.iter().zip(&found);
            let descriptors = described.map(|(n, d)| descriptor(n, d.as_ref())).collect();
            unchanged(ParameterReply::Describe(DescribeParametersResponse {
                descriptors,
            }))
        }
        (Kind::Set, ParameterResponse::Set(results)) => {
            let changed = accepted(&asked.names, &results);
            let results = results.iter().map(result).collect();
            Some((
                ParameterReply::Set(SetParametersResponse { results }),
                changed,
            ))
        }
        (Kind::SetAtomically, ParameterResponse::SetAtomically(stored)) => {
            let result = result(&stored);
            let changed = match stored {
                Ok(values) => asked.names.iter().cloned().zip(values).collect(),
                Err(_) => vec![],
            };
            let reply = SetParametersAtomicallyResponse { result };
            Some((ParameterReply::SetAtomically(reply), changed))
        }
        (Kind::Trigger, ParameterResponse::Set(results)) => {
            let name = asked.names.first().map_or("", String::as_str);
            Some(triggered(name, results))
        }
        _ => None,
    }
}

/// The changes the node made, as it stored them (which may be typed otherwise than sent).
fn accepted(names: &[String], results: &[Result<Value, String>]) -> Changed {
    let made = names.iter().zip(results);
    made.filter_map(|(name, r)| Some((name.clone(), r.as_ref().ok()?.clone())))
        .collect()
}

/// A trigger's reply: done, or the node's reason.
fn triggered(name: &str, results: Vec<Result<Value, String>>) -> (ParameterReply, Changed) {
    let (success, message, changed) = match results.into_iter().next() {
        Some(Ok(stored)) => (
            true,
            format!("{name} applied (/rosout says what it did)"),
            vec![(name.to_string(), stored)],
        ),
        Some(Err(reason)) => (false, reason, vec![]),
        None => (false, format!("{name}: no answer from the node"), vec![]),
    };
    let reply = TriggerResponse { success, message };
    (ParameterReply::Trigger(reply), changed)
}

/// The wire result of one change (or of an atomic set).
fn result<T>(r: &Result<T, String>) -> SetParametersResult {
    SetParametersResult {
        successful: r.is_ok(),
        reason: r.as_ref().err().cloned().unwrap_or_default(),
    }
}

/// How `describe_parameters` answers for `name` (`None`: not declared).
pub fn descriptor(name: &str, declaration: Option<&Declaration>) -> ParameterDescriptor {
    let d = parameter_services::descriptor(name, declaration);
    let floating = |(from_value, to_value)| FloatingPointRange {
        from_value,
        to_value,
        step: 0.0,
    };
    let integer = |(from_value, to_value)| IntegerRange {
        from_value,
        to_value,
        step: 0,
    };
    ParameterDescriptor {
        name: d.name,
        type_: d.type_id,
        description: d.description,
        additional_constraints: d.additional_constraints,
        read_only: d.read_only,
        dynamic_typing: false,
        floating_point_range: d.floating_point_range.map(floating).into_iter().collect(),
        integer_range: d.integer_range.map(integer).into_iter().collect(),
    }
}

/// The `/parameter_events` message announcing `changed` values of the node `node` (fully
/// qualified), stamped `stamp`; none for no change.
pub fn event(node: &str, stamp: Time, changed: &[(String, Value)]) -> Option<ParameterEvent> {
    if changed.is_empty() {
        return None;
    }
    let parameter = |(name, value): &(String, Value)| Parameter {
        name: name.clone(),
        value: ParameterValue::from_value(value),
    };
    Some(ParameterEvent {
        stamp,
        node: node.to_string(),
        changed_parameters: changed.iter().map(parameter).collect(),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests;
