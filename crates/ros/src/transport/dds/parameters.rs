//! The ROS 2 parameter services on DDS, served by us rather than by ros2-client, so that the
//! node checks every change itself (with the controller's own checks) and `ros2 param describe`
//! shows our descriptions, ranges and read-only flags. Accepted changes are announced on
//! `/parameter_events`.

use ros2_client::builtin_interfaces::Time;
use ros2_client::parameters::{raw, ParameterValue};
use ros2_client::qos::History;
use ros2_client::rcl_interfaces::{
    DescribeParametersRequest, DescribeParametersResponse, GetParameterTypesRequest,
    GetParameterTypesResponse, GetParametersRequest, GetParametersResponse, ListParametersRequest,
    ListParametersResponse, SetParametersAtomicallyResponse, SetParametersRequest,
    SetParametersResponse,
};
use ros2_client::service::RmwRequestId;
use ros2_client::{
    Message, MessageTypeName, Name, Node, Publisher, QosProfile, Server, ServiceMapping,
    ServiceTypeName,
};

use super::trigger::{TriggerRequest, TriggerResponse};
use crate::parameter_services::{ParameterRequest, ParameterResponse};
use crate::transport::pending::PendingRequests;
use crate::RosError;
use armctl_control::{Declaration, ParameterValue as RosValue};

mod reply_limit;
#[cfg(test)]
use reply_limit::{interface_mtus, NETWORK_REPLY_LIMIT, RUSTDDS_FALLBACK_BUDGET};
use reply_limit::{list_within_limit, reply_limit, shorten, shorten_descriptions, within_limit};

pub(super) fn transport(e: impl std::fmt::Debug) -> RosError {
    RosError::Transport {
        reason: format!("parameter services: {e:?}"),
    }
}

/// A parameter value from the wire (integer arrays widen to double arrays; byte arrays and
/// "not set" are not parameter values here).
pub(crate) fn to_ros(value: raw::ParameterValue) -> Option<RosValue> {
    Some(match ParameterValue::from(value) {
        ParameterValue::Boolean(b) => RosValue::Bool(b),
        ParameterValue::Integer(i) => RosValue::Integer(i),
        ParameterValue::Double(d) => RosValue::Double(d),
        ParameterValue::String(s) => RosValue::String(s),
        ParameterValue::DoubleArray(v) => RosValue::DoubleArray(v),
        ParameterValue::IntegerArray(v) => {
            RosValue::DoubleArray(v.into_iter().map(|i| i as f64).collect())
        }
        ParameterValue::StringArray(v) => RosValue::StringArray(v),
        ParameterValue::BooleanArray(v) => RosValue::BoolArray(v),
        ParameterValue::NotSet | ParameterValue::ByteArray(_) => return None,
    })
}

pub(super) fn from_ros(value: &RosValue) -> raw::ParameterValue {
    raw::ParameterValue::from(match value {
        RosValue::Bool(b) => ParameterValue::Boolean(*b),
        RosValue::Integer(i) => ParameterValue::Integer(*i),
        RosValue::Double(d) => ParameterValue::Double(*d),
        RosValue::String(s) => ParameterValue::String(s.clone()),
        RosValue::DoubleArray(v) => ParameterValue::DoubleArray(v.clone()),
        RosValue::StringArray(v) => ParameterValue::StringArray(v.clone()),
        RosValue::BoolArray(v) => ParameterValue::BooleanArray(v.clone()),
    })
}

fn descriptor(name: &str, declaration: Option<&Declaration>) -> raw::ParameterDescriptor {
    let d = crate::parameter_services::descriptor(name, declaration);
    raw::ParameterDescriptor {
        name: d.name,
        r#type: d.type_id,
        description: d.description,
        additional_constraints: d.additional_constraints,
        read_only: d.read_only,
        dynamic_typing: false,
        floating_point_range: d
            .floating_point_range
            .map(|(from_value, to_value)| raw::FloatingPointRange {
                from_value,
                to_value,
                step: 0.0,
            })
            .into_iter()
            .collect(),
        integer_range: d
            .integer_range
            .map(|(from_value, to_value)| raw::IntegerRange {
                from_value,
                to_value,
                step: 0,
            })
            .into_iter()
            .collect(),
    }
}

fn changes(parameters: Vec<raw::Parameter>) -> Vec<(String, RosValue)> {
    // Byte arrays and "not set" have no RosValue: such a change arrives as an empty string
    // array, which no declaration accepts, so the node refuses it with the expected type.
    parameters
        .into_iter()
        .map(|p| {
            let value = to_ros(p.value).unwrap_or(RosValue::StringArray(vec![]));
            (p.name, value)
        })
        .collect()
}

/// Requests waiting for the node's answer, at most.
const MAX_PENDING: usize = 64;

/// Which service a pending request came from.
#[derive(Debug)]
enum Pending {
    List,
    Get(Vec<String>),
    GetTypes,
    Describe(Vec<String>),
    Set(Vec<(String, RosValue)>),
    SetAtomically(Vec<(String, RosValue)>),
    /// A trigger service (its index): setting its parameter true.
    Trigger(usize),
}

/// The six parameter servers of one node.
pub(crate) struct ParameterServers {
    list: Server<ListParametersRequest, ListParametersResponse>,
    get: Server<GetParametersRequest, GetParametersResponse>,
    get_types: Server<GetParameterTypesRequest, GetParameterTypesResponse>,
    describe: Server<DescribeParametersRequest, DescribeParametersResponse>,
    set: Server<SetParametersRequest, SetParametersResponse>,
    set_atomically: Server<SetParametersRequest, SetParametersAtomicallyResponse>,
    /// `~/<name>` (std_srvs/Trigger) for each trigger parameter: a call sets it true.
    triggers: Vec<(String, Server<TriggerRequest, TriggerResponse>)>,
    events: Publisher<raw::ParameterEvent>,
    node_name: String,
    /// What a reply may take (see [`reply_limit`]); none with the Cyclone mapping.
    reply_limit: Option<usize>,
    pending: PendingRequests<(RmwRequestId, Pending)>,
}

fn server<Req: Message + Clone + 'static, Resp: Message + 'static>(
    node: &mut Node,
    mapping: ServiceMapping,
    service: &str,
    type_name: &str,
) -> Result<Server<Req, Resp>, RosError> {
    typed_server(node, mapping, service, ("rcl_interfaces", type_name))
}

fn typed_server<Req: Message + Clone + 'static, Resp: Message + 'static>(
    node: &mut Node,
    mapping: ServiceMapping,
    service: &str,
    (package, type_name): (&str, &str),
) -> Result<Server<Req, Resp>, RosError> {
    // What rmw_qos_profile_services_default is: reliable, volatile, keep last 10.
    let qos = QosProfile::publisher_default().history(History::KeepLast { depth: 10 });
    let name = Name::new(&node.fully_qualified_name(), service).map_err(transport)?;
    node.create_server(
        mapping,
        &name,
        &ServiceTypeName::new(package, type_name),
        qos.clone(),
        qos,
    )
    .map_err(transport)
}

/// One received request, before it is numbered.
enum Received {
    List(RmwRequestId, ListParametersRequest),
    Get(RmwRequestId, GetParametersRequest),
    GetTypes(RmwRequestId, GetParameterTypesRequest),
    Describe(RmwRequestId, DescribeParametersRequest),
    Set(RmwRequestId, SetParametersRequest),
    SetAtomically(RmwRequestId, SetParametersRequest),
    Trigger(usize, RmwRequestId),
}

impl ParameterServers {
    /// Creates the servers under the node's name, and a std_srvs/Trigger service `~/<name>`
    /// for each of `triggers` (parameters that act when set true).
    pub(crate) fn new(
        node: &mut Node,
        mapping: ServiceMapping,
        loopback_only: bool,
        triggers: &[String],
    ) -> Result<Self, RosError> {
        let limit = reply_limit(loopback_only);
        let events_topic = node
            .create_topic(
                &Name::new("/", "parameter_events").map_err(transport)?,
                MessageTypeName::new("rcl_interfaces", "ParameterEvent"),
                &QosProfile::publisher_default(),
            )
            .map_err(transport)?;
        Ok(Self {
            list: server(node, mapping, "list_parameters", "ListParameters")?,
            get: server(node, mapping, "get_parameters", "GetParameters")?,
            get_types: server(node, mapping, "get_parameter_types", "GetParameterTypes")?,
            describe: server(node, mapping, "describe_parameters", "DescribeParameters")?,
            set: server(node, mapping, "set_parameters", "SetParameters")?,
            set_atomically: server(
                node,
                mapping,
                "set_parameters_atomically",
                "SetParametersAtomically",
            )?,
            triggers: triggers
                .iter()
                .map(|name| {
                    let server = typed_server(node, mapping, name, ("std_srvs", "Trigger"))?;
                    Ok((name.clone(), server))
                })
                .collect::<Result<_, RosError>>()?,
            events: node
                .create_publisher(&events_topic, None)
                .map_err(transport)?,
            node_name: node.fully_qualified_name(),
            reply_limit: (mapping == ServiceMapping::Enhanced).then_some(limit),
            pending: PendingRequests::new(MAX_PENDING),
        })
    }

    async fn receive(&self) -> Received {
        loop {
            // A malformed request is skipped.
            let received = tokio::select! {
                r = self.list.async_receive_request() => r.map(|(id, q)| Received::List(id, q)).ok(),
                r = self.get.async_receive_request() => r.map(|(id, q)| Received::Get(id, q)).ok(),
                r = self.get_types.async_receive_request() => r.map(|(id, q)| Received::GetTypes(id, q)).ok(),
                r = self.describe.async_receive_request() => r.map(|(id, q)| Received::Describe(id, q)).ok(),
                r = self.set.async_receive_request() => r.map(|(id, q)| Received::Set(id, q)).ok(),
                r = self.set_atomically.async_receive_request() => r.map(|(id, q)| Received::SetAtomically(id, q)).ok(),
                r = self.next_trigger() => r,
            };
            if let Some(received) = received {
                return received;
            }
            tokio::task::yield_now().await;
        }
    }

    /// The next call of a trigger service (never, without one).
    async fn next_trigger(&self) -> Option<Received> {
        if self.triggers.is_empty() {
            return std::future::pending().await;
        }
        let calls = self.triggers.iter().enumerate().map(|(k, (_, server))| {
            Box::pin(async move {
                server
                    .async_receive_request()
                    .await
                    .map(|(id, _)| Received::Trigger(k, id))
                    .ok()
            })
        });
        futures::future::select_all(calls).await.0
    }

    /// The next request, numbered for [`ParameterServers::respond`].
    pub(crate) async fn next(&mut self) -> (u64, ParameterRequest) {
        let (rmw_id, pending, request) = match self.receive().await {
            Received::List(id, q) => (
                id,
                Pending::List,
                ParameterRequest::List {
                    prefixes: q.prefixes,
                    depth: q.depth,
                },
            ),
            Received::Get(id, q) => (
                id,
                Pending::Get(q.names.clone()),
                ParameterRequest::Get(q.names),
            ),
            Received::GetTypes(id, q) => {
                (id, Pending::GetTypes, ParameterRequest::GetTypes(q.names))
            }
            Received::Describe(id, q) => (
                id,
                Pending::Describe(q.names.clone()),
                ParameterRequest::Describe(q.names),
            ),
            Received::Set(id, q) => {
                let c = changes(q.parameter);
                (id, Pending::Set(c.clone()), ParameterRequest::Set(c))
            }
            Received::SetAtomically(id, q) => {
                let c = changes(q.parameter);
                (
                    id,
                    Pending::SetAtomically(c.clone()),
                    ParameterRequest::SetAtomically(c),
                )
            }
            Received::Trigger(k, id) => {
                let set = vec![(self.triggers[k].0.clone(), RosValue::Bool(true))];
                (id, Pending::Trigger(k), ParameterRequest::Set(set))
            }
        };
        (self.pending.number((rmw_id, pending)), request)
    }

    /// The largest reply sent (see [`reply_limit`]); none with the Cyclone mapping.
    pub(crate) fn reply_limit(&self) -> Option<usize> {
        self.reply_limit
    }

    /// Sends the response to request `id`, and a parameter event for accepted changes; gives
    /// the names of values answered "not set" because they exceed the reply limit.
    pub(crate) fn respond(&mut self, id: u64, response: ParameterResponse) -> Vec<String> {
        let Some((rmw_id, pending)) = self.pending.take(id) else {
            return vec![];
        };
        let mut withheld = vec![];
        let sent = match (pending, response) {
            (Pending::List, ParameterResponse::List(names)) => {
                let reply = list_within_limit(self.reply_limit, names, &mut withheld);
                self.send(&self.list, rmw_id, reply, "list_parameters", &mut withheld)
            }
            (Pending::Get(names), ParameterResponse::Get(values)) => {
                let (values, unsent) = within_limit(self.reply_limit, &names, values);
                withheld = unsent;
                let reply = GetParametersResponse { values };
                self.send(&self.get, rmw_id, reply, "get_parameters", &mut withheld)
            }
            (Pending::GetTypes, ParameterResponse::GetTypes(kinds)) => {
                let values = kinds
                    .into_iter()
                    .map(crate::parameter_services::type_id)
                    .collect();
                let reply = GetParameterTypesResponse { values };
                let what = "get_parameter_types";
                self.send(&self.get_types, rmw_id, reply, what, &mut withheld)
            }
            (Pending::Describe(names), ParameterResponse::Describe(found)) => {
                let mut values: Vec<raw::ParameterDescriptor> = names
                    .iter()
                    .zip(&found)
                    .map(|(n, d)| descriptor(n, d.as_ref()))
                    .collect();
                if shorten_descriptions(self.reply_limit, &mut values) {
                    withheld.push("descriptions shortened".into());
                }
                let reply = DescribeParametersResponse { values };
                let what = "describe_parameters";
                self.send(&self.describe, rmw_id, reply, what, &mut withheld)
            }
            (Pending::Set(changes), ParameterResponse::Set(results)) => {
                // The values as stored, which may be typed otherwise than sent.
                let accepted: Vec<(String, RosValue)> = changes
                    .iter()
                    .zip(&results)
                    .filter_map(|((name, _), r)| Some((name.clone(), r.as_ref().ok()?.clone())))
                    .collect();
                self.announce(accepted.iter());
                // Each result's share of the reply.
                let limit = self.reply_limit.unwrap_or(usize::MAX);
                let room = (limit / results.len().max(1)).saturating_sub(16);
                let results = results.iter().map(|r| result(r, room)).collect();
                let reply = SetParametersResponse { results };
                self.send(&self.set, rmw_id, reply, "set_parameters", &mut withheld)
            }
            (Pending::SetAtomically(changes), ParameterResponse::SetAtomically(r)) => {
                if let Ok(values) = &r {
                    let names = changes.iter().map(|(name, _)| name.clone());
                    let stored: Vec<(String, RosValue)> = names.zip(values.clone()).collect();
                    self.announce(stored.iter());
                }
                let room = self.reply_limit.unwrap_or(usize::MAX).saturating_sub(16);
                let reply = SetParametersAtomicallyResponse {
                    result: result(&r, room),
                };
                let what = "set_parameters_atomically";
                self.send(&self.set_atomically, rmw_id, reply, what, &mut withheld)
            }
            (Pending::Trigger(k), ParameterResponse::Set(results)) => {
                let (name, server) = &self.triggers[k];
                let reply = match results.first() {
                    Some(Ok(stored)) => {
                        self.announce([(name.clone(), stored.clone())].iter());
                        TriggerResponse::new(
                            true,
                            format!("{name} applied (/rosout says what it did)"),
                        )
                    }
                    Some(Err(reason)) => TriggerResponse::new(false, reason.clone()),
                    None => TriggerResponse::new(false, format!("{name}: no answer from the node")),
                };
                self.send(server, rmw_id, reply, name, &mut withheld)
            }
            (pending, response) => {
                eprintln!("parameter services: {response:?} does not answer {pending:?}");
                Ok(())
            }
        };
        if let Err(e) = sent {
            eprintln!("parameter services: response not sent: {e}");
        }
        withheld
    }

    /// Sends `reply` unless its serialized size exceeds the reply limit (see
    /// [`reply_limit`]): a reply Fast DDS would drop is not sent, so that only this
    /// call goes unanswered and not every later one of the client; `notes` says so.
    fn send<Req: Message + 'static, Resp: Message + 'static>(
        &self,
        server: &Server<Req, Resp>,
        rmw_id: RmwRequestId,
        reply: Resp,
        service: &str,
        notes: &mut Vec<String>,
    ) -> Result<(), String> {
        if let Some(limit) = self.reply_limit {
            let size = cdr_encoding::to_vec::<Resp, byteorder::LittleEndian>(&reply)
                .map_or(usize::MAX, |bytes| bytes.len());
            if size > limit {
                notes.push(format!(
                    "the whole {service} reply ({size} bytes): not sent"
                ));
                return Ok(());
            }
        }
        server
            .send_response(rmw_id, reply)
            .map_err(|e| format!("{e:?}"))
    }

    pub(crate) fn announce<'a>(&self, accepted: impl Iterator<Item = &'a (String, RosValue)>) {
        let changed_parameters: Vec<raw::Parameter> = accepted
            .map(|(name, value)| raw::Parameter {
                name: name.clone(),
                value: from_ros(value),
            })
            .collect();
        if changed_parameters.is_empty() {
            return;
        }
        let event = raw::ParameterEvent {
            stamp: Time::now(),
            node: self.node_name.clone(),
            new_parameters: vec![],
            changed_parameters,
            deleted_parameters: vec![],
        };
        if let Err(e) = self.events.publish(event) {
            eprintln!("parameter events: {e:?}");
        }
    }
}

/// The wire result of one change (or of an atomic set), its reason cut to `room` bytes.
fn result<T>(r: &Result<T, String>, room: usize) -> raw::SetParametersResult {
    let mut reason = r.as_ref().err().cloned().unwrap_or_default();
    shorten(&mut reason, room);
    raw::SetParametersResult {
        successful: r.is_ok(),
        reason,
    }
}

#[cfg(test)]
mod tests;
