//! A client of another node's parameter services on DDS, as `ros2 param set` / `get` /
//! `describe` use them.

use ros2_client::qos::History;
use ros2_client::{Client, Message, Name, Node, QosProfile, ServiceMapping, ServiceTypeName};

use super::parameters::transport;
use crate::services::parameter_msgs::{
    DescribeParametersResponse, GetParametersResponse, NamesRequest, Parameter, ParameterValue,
    SetParametersRequest, SetParametersResponse,
};
use crate::RosError;
use armctl_control::ParameterValue as RosValue;

fn client<Req: Message + Clone + 'static, Resp: Message + 'static>(
    node: &mut Node,
    mapping: ServiceMapping,
    target: &str,
    service: &str,
    type_name: &str,
) -> Result<Client<Req, Resp>, RosError> {
    let qos = QosProfile::publisher_default().history(History::KeepLast { depth: 10 });
    let name = Name::new(target, service).map_err(transport)?;
    node.create_client(
        mapping,
        &name,
        &ServiceTypeName::new("rcl_interfaces", type_name),
        qos.clone(),
        qos,
    )
    .map_err(transport)
}

/// Sets and reads another node's parameters through its parameter services, as
/// `ros2 param set` / `get` / `describe` do. A request sent before discovery has matched the
/// client with the service is lost, as with any DDS client: call with a timeout and repeat.
pub struct ParameterClient {
    set: Client<SetParametersRequest, SetParametersResponse>,
    get: Client<NamesRequest, GetParametersResponse>,
    describe: Client<NamesRequest, DescribeParametersResponse>,
}

impl std::fmt::Debug for ParameterClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParameterClient").finish_non_exhaustive()
    }
}

impl ParameterClient {
    /// A client of the node `target` (fully qualified, e.g. `/arm1/controller_node`).
    pub(crate) fn new(
        node: &mut Node,
        mapping: ServiceMapping,
        target: &str,
    ) -> Result<Self, RosError> {
        Ok(Self {
            set: client(node, mapping, target, "set_parameters", "SetParameters")?,
            get: client(node, mapping, target, "get_parameters", "GetParameters")?,
            describe: client(
                node,
                mapping,
                target,
                "describe_parameters",
                "DescribeParameters",
            )?,
        })
    }

    /// Sets one parameter: `Ok(Err(reason))` when the node rejects the value.
    pub async fn set(&self, name: &str, value: &RosValue) -> Result<Result<(), String>, RosError> {
        let request = SetParametersRequest {
            parameters: vec![Parameter {
                name: name.into(),
                value: ParameterValue::from_value(value),
            }],
        };
        let response = self
            .set
            .async_call_service(request)
            .await
            .map_err(transport)?;
        let result = response
            .results
            .into_iter()
            .next()
            .ok_or_else(|| transport("empty set_parameters response"))?;
        Ok(if result.successful {
            Ok(())
        } else {
            Err(result.reason)
        })
    }

    /// One parameter's value (`None`: not declared).
    pub async fn get(&self, name: &str) -> Result<Option<RosValue>, RosError> {
        let response = self
            .get
            .async_call_service(NamesRequest {
                names: vec![name.into()],
            })
            .await
            .map_err(transport)?;
        Ok(response.values.first().and_then(ParameterValue::to_value))
    }

    /// One parameter's description, read-only flag and range, as text.
    pub async fn describe(&self, name: &str) -> Result<String, RosError> {
        let request = NamesRequest {
            names: vec![name.into()],
        };
        let response = self
            .describe
            .async_call_service(request)
            .await
            .map_err(transport)?;
        let d = response
            .descriptors
            .into_iter()
            .next()
            .ok_or_else(|| transport("empty describe_parameters response"))?;
        let range = d
            .floating_point_range
            .first()
            .map(|r| format!(" range [{}, {}]", r.from_value, r.to_value))
            .unwrap_or_default();
        Ok(format!(
            "{}: {} (type {}, read_only {}{range})",
            d.name, d.description, d.type_, d.read_only
        ))
    }
}
