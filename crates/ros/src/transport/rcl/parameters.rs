//! The ROS 2 parameter services and the trigger services on rcl: the services r2r generates,
//! carrying requests to the one implementation ([`crate::services::parameters`]) and its
//! replies back, converted between r2r's types and armctl's wire structs. r2r's own parameter
//! handler is not used: every request reaches the node, which answers it from its own store.

use futures::stream::{select_all, BoxStream, StreamExt};
use r2r::rcl_interfaces::msg as wire;
use r2r::rcl_interfaces::srv;
use r2r::{QosProfile, ServiceRequest};

use super::convert::{text, texts, time_in, time_out};
use super::{rcl, Pump, RclMessage};
use crate::parameter_services::{ParameterRequest, ParameterResponse};
use crate::services::parameter_msgs as ours;
use crate::services::parameters::{Answer, ParameterCall, ParameterReply, ParameterServices};
use crate::RosError;

/// A request as r2r holds it until the reply goes back on it.
pub(super) enum Handle {
    List(ServiceRequest<srv::ListParameters::Service>),
    Get(ServiceRequest<srv::GetParameters::Service>),
    GetTypes(ServiceRequest<srv::GetParameterTypes::Service>),
    Describe(ServiceRequest<srv::DescribeParameters::Service>),
    Set(ServiceRequest<srv::SetParameters::Service>),
    SetAtomically(ServiceRequest<srv::SetParametersAtomically::Service>),
    #[cfg(ros_std_srvs)]
    Trigger(ServiceRequest<r2r::std_srvs::srv::Trigger::Service>),
}

/// The six parameter services of one node and its trigger services.
pub(super) struct ParameterServers {
    requests: BoxStream<'static, (Handle, ParameterCall)>,
    services: ParameterServices<Handle>,
}

type Served = (BoxStream<'static, (Handle, ParameterCall)>, Pump);

/// Serves the parameter service `service` under the node's name, with rclcpp's parameter QoS
/// (rmw_qos_profile_parameters: reliable, volatile, keep last 1000), so a burst of requests and
/// their replies is kept, not cut at 10.
fn serve_parameter<S, F>(node: &mut r2r::Node, service: &str, wrap: F) -> Result<Served, RosError>
where
    S: r2r::WrappedServiceTypeSupport + 'static,
    F: Fn(ServiceRequest<S>) -> (Handle, ParameterCall) + Send + 'static,
{
    let name = format!("{}/{service}", node.fully_qualified_name().map_err(rcl)?);
    super::serve(node, &name, QosProfile::parameters(), wrap)
}

fn names(names: &[String]) -> ours::NamesRequest {
    ours::NamesRequest {
        names: names.to_vec(),
    }
}

fn set_request(parameters: &[wire::Parameter]) -> ours::SetParametersRequest {
    ours::SetParametersRequest {
        parameters: parameters.iter().map(parameter_in).collect(),
    }
}

fn list(r: ServiceRequest<srv::ListParameters::Service>) -> (Handle, ParameterCall) {
    let request = ours::ListParametersRequest {
        prefixes: r.message.prefixes.clone(),
        depth: r.message.depth,
    };
    (Handle::List(r), ParameterCall::List(request))
}

fn get(r: ServiceRequest<srv::GetParameters::Service>) -> (Handle, ParameterCall) {
    let call = ParameterCall::Get(names(&r.message.names));
    (Handle::Get(r), call)
}

fn get_types(r: ServiceRequest<srv::GetParameterTypes::Service>) -> (Handle, ParameterCall) {
    let call = ParameterCall::GetTypes(names(&r.message.names));
    (Handle::GetTypes(r), call)
}

fn describe(r: ServiceRequest<srv::DescribeParameters::Service>) -> (Handle, ParameterCall) {
    let call = ParameterCall::Describe(names(&r.message.names));
    (Handle::Describe(r), call)
}

fn set(r: ServiceRequest<srv::SetParameters::Service>) -> (Handle, ParameterCall) {
    let call = ParameterCall::Set(set_request(&r.message.parameters));
    (Handle::Set(r), call)
}

fn set_atomically(
    r: ServiceRequest<srv::SetParametersAtomically::Service>,
) -> (Handle, ParameterCall) {
    let call = ParameterCall::SetAtomically(set_request(&r.message.parameters));
    (Handle::SetAtomically(r), call)
}

/// The six parameter services.
fn parameter_services(node: &mut r2r::Node) -> Result<Vec<Served>, RosError> {
    Ok(vec![
        serve_parameter(node, "list_parameters", list)?,
        serve_parameter(node, "get_parameters", get)?,
        serve_parameter(node, "get_parameter_types", get_types)?,
        serve_parameter(node, "describe_parameters", describe)?,
        serve_parameter(node, "set_parameters", set)?,
        serve_parameter(node, "set_parameters_atomically", set_atomically)?,
    ])
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
        let mut services = parameter_services(node)?;
        #[cfg(ros_std_srvs)]
        for name in triggers {
            let parameter = name.clone();
            services.push(serve_parameter(node, name, move |r| {
                (
                    Handle::Trigger(r),
                    ParameterCall::Trigger(parameter.clone()),
                )
            })?);
        }
        #[cfg(not(ros_std_srvs))]
        let _ = triggers;
        let (services, pumps): (Vec<_>, Vec<_>) = services.into_iter().unzip();
        let servers = Self {
            requests: select_all(services).boxed(),
            services: ParameterServices::default(),
        };
        Ok((servers, pumps))
    }

    /// The next request, numbered for [`ParameterServers::respond`] (`None`: the services
    /// ended with the node).
    pub(super) async fn next(&mut self) -> Option<(u64, ParameterRequest)> {
        let (handle, call) = self.requests.next().await?;
        Some(self.services.receive(handle, call))
    }

    /// The reply to request `id` from the node's `response`, to send with [`send`] after its
    /// changes are announced.
    pub(super) fn answer(
        &mut self,
        id: u64,
        response: ParameterResponse,
    ) -> Option<Answer<Handle>> {
        self.services.answer(id, response)
    }
}

/// Sends `answer` on the request it answers.
pub(super) fn send_answer(answer: Answer<Handle>) {
    if let Err(e) = send(answer.token, answer.reply) {
        eprintln!("parameter services: response not sent: {e}");
    }
}

/// Sends `reply` on the request it answers.
fn send(handle: Handle, reply: ParameterReply) -> Result<(), String> {
    let sent = match (handle, reply) {
        (Handle::List(r), ParameterReply::List(m)) => {
            let result = wire::ListParametersResult {
                names: texts(&m.result.names),
                prefixes: texts(&m.result.prefixes),
            };
            r.respond(srv::ListParameters::Response { result })
        }
        (Handle::Get(r), ParameterReply::Get(m)) => {
            let values = m.values.iter().map(value_out).collect();
            r.respond(srv::GetParameters::Response { values })
        }
        (Handle::GetTypes(r), ParameterReply::GetTypes(m)) => {
            r.respond(srv::GetParameterTypes::Response { types: m.types })
        }
        (Handle::Describe(r), ParameterReply::Describe(m)) => {
            let descriptors = m.descriptors.iter().map(descriptor_out).collect();
            r.respond(srv::DescribeParameters::Response { descriptors })
        }
        (Handle::Set(r), ParameterReply::Set(m)) => {
            let results = m.results.iter().map(result_out).collect();
            r.respond(srv::SetParameters::Response { results })
        }
        (Handle::SetAtomically(r), ParameterReply::SetAtomically(m)) => {
            let result = result_out(&m.result);
            r.respond(srv::SetParametersAtomically::Response { result })
        }
        #[cfg(ros_std_srvs)]
        (Handle::Trigger(r), ParameterReply::Trigger(m)) => {
            r.respond(r2r::std_srvs::srv::Trigger::Response {
                success: m.success,
                message: text(&m.message),
            })
        }
        (_, reply) => return Err(format!("{reply:?} answers another service")),
    };
    sent.map_err(|e| e.to_string())
}

fn value_in(v: &wire::ParameterValue) -> ours::ParameterValue {
    ours::ParameterValue {
        type_: v.type_,
        bool_value: v.bool_value,
        integer_value: v.integer_value,
        double_value: v.double_value,
        string_value: v.string_value.clone(),
        byte_array_value: v.byte_array_value.clone(),
        bool_array_value: v.bool_array_value.clone(),
        integer_array_value: v.integer_array_value.clone(),
        double_array_value: v.double_array_value.clone(),
        string_array_value: v.string_array_value.clone(),
    }
}

fn value_out(v: &ours::ParameterValue) -> wire::ParameterValue {
    wire::ParameterValue {
        type_: v.type_,
        bool_value: v.bool_value,
        integer_value: v.integer_value,
        double_value: v.double_value,
        string_value: text(&v.string_value),
        byte_array_value: v.byte_array_value.clone(),
        bool_array_value: v.bool_array_value.clone(),
        integer_array_value: v.integer_array_value.clone(),
        double_array_value: v.double_array_value.clone(),
        string_array_value: texts(&v.string_array_value),
    }
}

fn parameter_in(p: &wire::Parameter) -> ours::Parameter {
    ours::Parameter {
        name: p.name.clone(),
        value: value_in(&p.value),
    }
}

fn parameter_out(p: &ours::Parameter) -> wire::Parameter {
    wire::Parameter {
        name: text(&p.name),
        value: value_out(&p.value),
    }
}

fn descriptor_out(d: &ours::ParameterDescriptor) -> wire::ParameterDescriptor {
    let floating = |r: &ours::FloatingPointRange| wire::FloatingPointRange {
        from_value: r.from_value,
        to_value: r.to_value,
        step: r.step,
    };
    let integer = |r: &ours::IntegerRange| wire::IntegerRange {
        from_value: r.from_value,
        to_value: r.to_value,
        step: r.step,
    };
    wire::ParameterDescriptor {
        name: text(&d.name),
        type_: d.type_,
        description: text(&d.description),
        additional_constraints: text(&d.additional_constraints),
        read_only: d.read_only,
        dynamic_typing: d.dynamic_typing,
        floating_point_range: d.floating_point_range.iter().map(floating).collect(),
        integer_range: d.integer_range.iter().map(integer).collect(),
    }
}

fn result_out(r: &ours::SetParametersResult) -> wire::SetParametersResult {
    wire::SetParametersResult {
        successful: r.successful,
        reason: text(&r.reason),
    }
}

/// `/parameter_events`, as the topic table carries it.
impl RclMessage for ours::ParameterEvent {
    type Rcl = wire::ParameterEvent;

    fn from_rcl(m: Self::Rcl) -> Self {
        let parameters = |list: &[wire::Parameter]| list.iter().map(parameter_in).collect();
        Self {
            stamp: time_in(&m.stamp),
            node: m.node.clone(),
            new_parameters: parameters(&m.new_parameters),
            changed_parameters: parameters(&m.changed_parameters),
            deleted_parameters: parameters(&m.deleted_parameters),
        }
    }

    fn to_rcl(&self) -> Self::Rcl {
        let parameters = |list: &[ours::Parameter]| list.iter().map(parameter_out).collect();
        wire::ParameterEvent {
            stamp: time_out(&self.stamp),
            node: text(&self.node),
            new_parameters: parameters(&self.new_parameters),
            changed_parameters: parameters(&self.changed_parameters),
            deleted_parameters: parameters(&self.deleted_parameters),
        }
    }
}
