//! std_srvs/Trigger on DDS: a client for another node's trigger service (as
//! `ros2 service call NAME std_srvs/srv/Trigger` is). The servers are the parameter servers'
//! (a call sets the trigger parameter of the same name).

use ros2_client::qos::History;
use ros2_client::{Client, Name, Node, QosProfile, ServiceMapping, ServiceTypeName};

use crate::services::parameter_msgs::{TriggerRequest, TriggerResponse};
use crate::RosError;

fn transport(e: impl std::fmt::Debug) -> RosError {
    RosError::Transport {
        reason: format!("trigger service: {e:?}"),
    }
}

/// Calls a std_srvs/Trigger service. A request sent before discovery has matched the client
/// with the service is lost, as with any DDS client: call with a timeout and repeat.
pub struct TriggerClient {
    client: Client<TriggerRequest, TriggerResponse>,
}

impl std::fmt::Debug for TriggerClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TriggerClient").finish_non_exhaustive()
    }
}

impl TriggerClient {
    /// A client of `service` (fully qualified, e.g. `/controller_node/reset_collision`).
    pub(crate) fn new(
        node: &mut Node,
        mapping: ServiceMapping,
        service: &str,
    ) -> Result<Self, RosError> {
        let (namespace, base) = service.rsplit_once('/').unwrap_or(("/", service));
        let namespace = if namespace.is_empty() { "/" } else { namespace };
        let name = Name::new(namespace, base).map_err(transport)?;
        let qos = QosProfile::publisher_default().history(History::KeepLast { depth: 10 });
        let client = node
            .create_client(
                mapping,
                &name,
                &ServiceTypeName::new("std_srvs", "Trigger"),
                qos.clone(),
                qos,
            )
            .map_err(transport)?;
        Ok(Self { client })
    }

    /// Calls the service: its `success` and `message`.
    pub async fn call(&self) -> Result<(bool, String), RosError> {
        let response = self
            .client
            .async_call_service(TriggerRequest::default())
            .await
            .map_err(transport)?;
        Ok((response.success, response.message))
    }
}
