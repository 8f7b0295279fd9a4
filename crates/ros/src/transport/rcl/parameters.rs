//! The ROS 2 parameter services on rcl, served by us rather than by r2r's parameter handler,
//! as on DDS: every request reaches the node, which answers it from its own store with the
//! controller's checks, so both backends list, describe (with ranges and read-only flags),
//! refuse (with the node's reason, logged and counted) and announce on `/parameter_events`
//! alike.

use futures::stream::{select_all, BoxStream, StreamExt};
use r2r::rcl_interfaces::msg as wire;
use r2r::rcl_interfaces::srv;
use r2r::{QosProfile, ServiceRequest};

use super::convert::{text, texts, time_out, wall_clock};
use super::{rcl, Pump};
use crate::parameter_services::{ParameterRequest, ParameterResponse};
use crate::transport::pending::PendingRequests;
use crate::RosError;
use armctl_control::{Declaration, ParameterValue as RosValue};

/// A parameter value from the wire (integer arrays widen to double arrays; byte arrays and
/// "not set" are not parameter values here).
fn to_ros(v: wire::ParameterValue) -> Option<RosValue> {
    Some(match v.type_ {
        1 => RosValue::Bool(v.bool_value),
        2 => RosValue::Integer(v.integer_value),
        3 => RosValue::Double(v.double_value),
        4 => RosValue::String(v.string_value),
        6 => RosValue::BoolArray(v.bool_array_value),
        7 => RosValue::DoubleArray(v.integer_array_value.iter().map(|i| *i as f64).collect()),
        8 => RosValue::DoubleArray(v.double_array_value),
        9 => RosValue::StringArray(v.string_array_value),
        _ => return None,
    })
}

fn from_ros(value: &RosValue) -> wire::ParameterValue {
    let mut v = wire::ParameterValue::default();
    match value {
        RosValue::Bool(b) => (v.type_, v.bool_value) = (1, *b),
        RosValue::Integer(i) => (v.type_, v.integer_value) = (2, *i),
        RosValue::Double(d) => (v.type_, v.double_value) = (3, *d),
        RosValue::String(s) => (v.type_, v.string_value) = (4, text(s)),
        RosValue::BoolArray(b) => (v.type_, v.bool_array_value) = (6, b.clone()),
        RosValue::DoubleArray(d) => (v.type_, v.double_array_value) = (8, d.clone()),
        RosValue::StringArray(s) => (v.type_, v.string_array_value) = (9, texts(s)),
    }
    v
}

fn descriptor(name: &str, declaration: Option<&Declaration>) -> wire::ParameterDescriptor {
    let d = crate::parameter_services::descriptor(name, declaration);
    wire::ParameterDescriptor {
        name: text(&d.name),
        type_: d.type_id,
        description: text(&d.description),
        additional_constraints: text(&d.additional_constraints),
        read_only: d.read_only,
        dynamic_typing: false,
        floating_point_range: d
            .floating_point_range
            .map(|(from_value, to_value)| wire::FloatingPointRange {
                from_value,
                to_value,
                step: 0.0,
            })
            .into_iter()
            .collect(),
        integer_range: d
            .integer_range
            .map(|(from_value, to_value)| wire::IntegerRange {
                from_value,
                to_value,
                step: 0,
            })
            .into_iter()
            .collect(),
    }
}

fn changes(parameters: &[wire::Parameter]) -> Vec<(String, RosValue)> {
    // Byte arrays and "not set" have no RosValue: such a change arrives as an empty string
    // array, which no declaration accepts, so the node refuses it with the expected type.
    parameters
        .iter()
        .map(|p| {
            let value = to_ros(p.value.clone()).unwrap_or(RosValue::StringArray(vec![]));
            (p.name.clone(), value)
        })
        .collect()
}

/// A request waiting for the node's answer (it answers itself when responded to).
enum Pending {
    List(ServiceRequest<srv::ListParameters::Service>),
    Get(ServiceRequest<srv::GetParameters::Service>),
    GetTypes(ServiceRequest<srv::GetParameterTypes::Service>),
    Describe(ServiceRequest<srv::DescribeParameters::Service>),
    Set(ServiceRequest<srv::SetParameters::Service>),
    SetAtomically(ServiceRequest<srv::SetParametersAtomically::Service>),
    /// A call of the trigger service of the parameter named: setting it true.
    #[cfg(ros_std_srvs)]
    Trigger(String, ServiceRequest<r2r::std_srvs::srv::Trigger::Service>),
}

impl Pending {
    fn request(&self) -> ParameterRequest {
        match self {
            Pending::List(r) => ParameterRequest::List {
                prefixes: r.message.prefixes.clone(),
                depth: r.message.depth,
            },
            Pending::Get(r) => ParameterRequest::Get(r.message.names.clone()),
            Pending::GetTypes(r) => ParameterRequest::GetTypes(r.message.names.clone()),
            Pending::Describe(r) => ParameterRequest::Describe(r.message.names.clone()),
            Pending::Set(r) => ParameterRequest::Set(changes(&r.message.parameters)),
            Pending::SetAtomically(r) => {
                ParameterRequest::SetAtomically(changes(&r.message.parameters))
            }
            #[cfg(ros_std_srvs)]
            Pending::Trigger(name, _) => {
                ParameterRequest::Set(vec![(name.clone(), RosValue::Bool(true))])
            }
        }
    }
}

/// Requests waiting for the node's answer, at most.
const MAX_PENDING: usize = 64;

/// The six parameter services of one node and its `/parameter_events` publisher.
pub(super) struct ParameterServers {
    requests: BoxStream<'static, Pending>,
    events: r2r::Publisher<wire::ParameterEvent>,
    node_name: String,
    pending: PendingRequests<Pending>,
}

/// Serves the parameter service `service` under the node's name, with rclcpp's parameter QoS
/// (rmw_qos_profile_parameters: reliable, volatile, keep last 1000), so a burst of requests and
/// their replies is kept, not cut at 10.
fn serve_parameter<S, F>(
    node: &mut r2r::Node,
    service: &str,
    wrap: F,
) -> Result<(BoxStream<'static, Pending>, Pump), RosError>
where
    S: r2r::WrappedServiceTypeSupport + 'static,
    F: Fn(ServiceRequest<S>) -> Pending + Send + 'static,
{
    let name = format!("{}/{service}", node.fully_qualified_name().map_err(rcl)?);
    super::serve(node, &name, QosProfile::parameters(), wrap)
}

impl ParameterServers {
    /// Creates the services under the node's name, and (when r2r was built with std_srvs,
    /// `ros_std_srvs`: see build.rs) a std_srvs/Trigger service `~/<name>` for each of
    /// `triggers` (parameters that act when set true).
    /// With the services' [`Pump`]s, for the spin thread.
    pub(super) fn new(
        node: &mut r2r::Node,
        triggers: &[String],
    ) -> Result<(Self, Vec<Pump>), RosError> {
        #[allow(unused_mut)]
        let mut services = vec![
            serve_parameter(node, "list_parameters", Pending::List)?,
            serve_parameter(node, "get_parameters", Pending::Get)?,
            serve_parameter(node, "get_parameter_types", Pending::GetTypes)?,
            serve_parameter(node, "describe_parameters", Pending::Describe)?,
            serve_parameter(node, "set_parameters", Pending::Set)?,
            serve_parameter(node, "set_parameters_atomically", Pending::SetAtomically)?,
        ];
        #[cfg(ros_std_srvs)]
        for name in triggers {
            let parameter = name.clone();
            services.push(serve_parameter(node, name, move |r| {
                Pending::Trigger(parameter.clone(), r)
            })?);
        }
        #[cfg(not(ros_std_srvs))]
        let _ = triggers;
        let (services, pumps): (Vec<_>, Vec<_>) = services.into_iter().unzip();
        let requests = select_all(services).boxed();
        // rcl's /parameter_events profile: reliable, volatile, keep last 1000.
        let events = node
            .create_publisher("/parameter_events", QosProfile::parameter_events())
            .map_err(rcl)?;
        let servers = Self {
            requests,
            events,
            node_name: node.fully_qualified_name().map_err(rcl)?,
            pending: PendingRequests::new(MAX_PENDING),
        };
        Ok((servers, pumps))
    }

    /// The next request, numbered for [`ParameterServers::respond`] (`None`: the services
    /// ended with the node).
    pub(super) async fn next(&mut self) -> Option<(u64, ParameterRequest)> {
        let pending = self.requests.next().await?;
        let request = pending.request();
        Some((self.pending.number(pending), request))
    }

    /// Sends the response to request `id`, and a parameter event for accepted changes.
    pub(super) fn respond(&mut self, id: u64, response: ParameterResponse) {
        let Some(pending) = self.pending.take(id) else {
            return;
        };
        let sent = match (pending, response) {
            (Pending::List(r), ParameterResponse::List(names)) => {
                let result = wire::ListParametersResult {
                    prefixes: texts(&crate::parameter_services::prefixes_of(&names)),
                    names: texts(&names),
                };
                r.respond(srv::ListParameters::Response { result })
            }
            (Pending::Get(r), ParameterResponse::Get(values)) => {
                let values = values
                    .iter()
                    .map(|v| v.as_ref().map_or_else(Default::default, from_ros))
                    .collect();
                r.respond(srv::GetParameters::Response { values })
            }
            (Pending::GetTypes(r), ParameterResponse::GetTypes(kinds)) => {
                let types = kinds
                    .into_iter()
                    .map(crate::parameter_services::type_id)
                    .collect();
                r.respond(srv::GetParameterTypes::Response { types })
            }
            (Pending::Describe(r), ParameterResponse::Describe(found)) => {
                let names = r.message.names.iter();
                let descriptors = names
                    .zip(&found)
                    .map(|(n, d)| descriptor(n, d.as_ref()))
                    .collect();
                r.respond(srv::DescribeParameters::Response { descriptors })
            }
            (Pending::Set(r), ParameterResponse::Set(results)) => {
                // The values as stored, which may be typed otherwise than sent.
                let accepted = r.message.parameters.iter().zip(&results);
                self.announce(accepted.filter_map(|(p, r)| Some((&p.name, r.as_ref().ok()?))));
                let results = results.iter().map(result).collect();
                r.respond(srv::SetParameters::Response { results })
            }
            (Pending::SetAtomically(r), ParameterResponse::SetAtomically(stored)) => {
                if let Ok(values) = &stored {
                    self.announce(r.message.parameters.iter().map(|p| &p.name).zip(values));
                }
                let result = result(&stored);
                r.respond(srv::SetParametersAtomically::Response { result })
            }
            #[cfg(ros_std_srvs)]
            (Pending::Trigger(name, r), ParameterResponse::Set(results)) => {
                let (success, message) = match results.first() {
                    Some(Ok(stored)) => {
                        self.announce([(&name, stored)].into_iter());
                        (true, format!("{name} applied (/rosout says what it did)"))
                    }
                    Some(Err(reason)) => (false, reason.clone()),
                    None => (false, format!("{name}: no answer from the node")),
                };
                r.respond(r2r::std_srvs::srv::Trigger::Response { success, message })
            }
            (_, response) => {
                eprintln!("parameter services: {response:?} answers another request");
                Ok(())
            }
        };
        if let Err(e) = sent {
            eprintln!("parameter services: response not sent: {e}");
        }
    }

    pub(super) fn announce<'a>(&self, accepted: impl Iterator<Item = (&'a String, &'a RosValue)>) {
        let changed_parameters: Vec<wire::Parameter> = accepted
            .map(|(name, value)| wire::Parameter {
                name: text(name),
                value: from_ros(value),
            })
            .collect();
        if changed_parameters.is_empty() {
            return;
        }
        let event = wire::ParameterEvent {
            stamp: time_out(&wall_clock()),
            node: self.node_name.clone(),
            new_parameters: vec![],
            changed_parameters,
            deleted_parameters: vec![],
        };
        if let Err(e) = self.events.publish(&event) {
            eprintln!("parameter events: {e}");
        }
    }
}

/// The wire result of one change (or of an atomic set).
fn result<T>(r: &Result<T, String>) -> wire::SetParametersResult {
    wire::SetParametersResult {
        successful: r.is_ok(),
        reason: text(r.as_ref().err().map_or("", String::as_str)),
    }
}
