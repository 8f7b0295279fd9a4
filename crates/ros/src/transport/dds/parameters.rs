//! The ROS 2 parameter services and the trigger services on DDS: the servers, typed on
//! armctl's wire structs ([`crate::services::parameter_msgs`]), carrying requests to the one
//! implementation ([`crate::services::parameters`]) and its replies back, cut to what a Fast
//! DDS client can take from this backend ([`reply_limit`]).

use ros2_client::qos::History;
use ros2_client::service::RmwRequestId;
use ros2_client::{Message, Name, Node, QosProfile, Server, ServiceMapping, ServiceTypeName};

use crate::parameter_services::{ParameterRequest, ParameterResponse};
use crate::services::parameter_msgs::{
    DescribeParametersResponse, GetParameterTypesResponse, GetParametersResponse,
    ListParametersRequest, ListParametersResponse, NamesRequest, ParameterEvent,
    SetParametersAtomicallyResponse, SetParametersRequest, SetParametersResponse, TriggerRequest,
    TriggerResponse,
};
use crate::services::parameters::{Answer, ParameterCall, ParameterReply, ParameterServices};
use crate::RosError;

mod reply_limit;
use reply_limit::{fit, reply_limit};
#[cfg(test)]
use reply_limit::{interface_mtus, NETWORK_REPLY_LIMIT, RUSTDDS_FALLBACK_BUDGET};

macro_rules! dds_messages {
    ($($ty:ident),*) => { $(impl Message for $ty {})* };
}

dds_messages!(
    ListParametersRequest,
    ListParametersResponse,
    NamesRequest,
    GetParametersResponse,
    GetParameterTypesResponse,
    DescribeParametersResponse,
    SetParametersRequest,
    SetParametersResponse,
    SetParametersAtomicallyResponse,
    TriggerRequest,
    TriggerResponse,
    ParameterEvent
);

pub(super) fn transport(e: impl std::fmt::Debug) -> RosError {
    RosError::Transport {
        reason: format!("parameter services: {e:?}"),
    }
}

/// The six parameter servers of one node and its trigger servers.
pub(crate) struct ParameterServers {
    list: Server<ListParametersRequest, ListParametersResponse>,
    get: Server<NamesRequest, GetParametersResponse>,
    get_types: Server<NamesRequest, GetParameterTypesResponse>,
    describe: Server<NamesRequest, DescribeParametersResponse>,
    set: Server<SetParametersRequest, SetParametersResponse>,
    set_atomically: Server<SetParametersRequest, SetParametersAtomicallyResponse>,
    /// `~/<name>` (std_srvs/Trigger) for each trigger parameter: a call sets it true.
    triggers: Vec<(String, Server<TriggerRequest, TriggerResponse>)>,
    /// What a reply may take (see [`reply_limit`]); none with the Cyclone mapping.
    reply_limit: Option<usize>,
    services: ParameterServices<RmwRequestId>,
}

/// The server of `service` under the node's name, of the type `package`/`type_name`.
fn server<Req: Message + Clone + 'static, Resp: Message + 'static>(
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

impl ParameterServers {
    /// Creates the servers under the node's name, and a std_srvs/Trigger service `~/<name>`
    /// for each of `triggers` (parameters that act when set true).
    pub(crate) fn new(
        node: &mut Node,
        mapping: ServiceMapping,
        loopback_only: bool,
        triggers: &[String],
    ) -> Result<Self, RosError> {
        let ours = |name| ("rcl_interfaces", name);
        let trigger = |name: &String, node: &mut Node| {
            let server = server(node, mapping, name, ("std_srvs", "Trigger"))?;
            Ok((name.clone(), server))
        };
        Ok(Self {
            list: server(node, mapping, "list_parameters", ours("ListParameters"))?,
            get: server(node, mapping, "get_parameters", ours("GetParameters"))?,
            get_types: server(
                node,
                mapping,
                "get_parameter_types",
                ours("GetParameterTypes"),
            )?,
            describe: server(
                node,
                mapping,
                "describe_parameters",
                ours("DescribeParameters"),
            )?,
            set: server(node, mapping, "set_parameters", ours("SetParameters"))?,
            set_atomically: server(
                node,
                mapping,
                "set_parameters_atomically",
                ours("SetParametersAtomically"),
            )?,
            triggers: triggers
                .iter()
                .map(|name| trigger(name, node))
                .collect::<Result<_, RosError>>()?,
            reply_limit: (mapping == ServiceMapping::Enhanced).then(|| reply_limit(loopback_only)),
            services: ParameterServices::default(),
        })
    }

    async fn receive(&self) -> (RmwRequestId, ParameterCall) {
        loop {
            // A malformed request is skipped.
            let received = tokio::select! {
                r = self.list.async_receive_request() => r.map(|(id, q)| (id, ParameterCall::List(q))).ok(),
                r = self.get.async_receive_request() => r.map(|(id, q)| (id, ParameterCall::Get(q))).ok(),
                r = self.get_types.async_receive_request() => r.map(|(id, q)| (id, ParameterCall::GetTypes(q))).ok(),
                r = self.describe.async_receive_request() => r.map(|(id, q)| (id, ParameterCall::Describe(q))).ok(),
                r = self.set.async_receive_request() => r.map(|(id, q)| (id, ParameterCall::Set(q))).ok(),
                r = self.set_atomically.async_receive_request() => r.map(|(id, q)| (id, ParameterCall::SetAtomically(q))).ok(),
                r = self.next_trigger() => r,
            };
            if let Some(received) = received {
                return received;
            }
            tokio::task::yield_now().await;
        }
    }

    /// The next call of a trigger service (never, without one).
    async fn next_trigger(&self) -> Option<(RmwRequestId, ParameterCall)> {
        if self.triggers.is_empty() {
            return std::future::pending().await;
        }
        let calls = self.triggers.iter().map(|(name, server)| {
            Box::pin(async move {
                let (id, _) = server.async_receive_request().await.ok()?;
                Some((id, ParameterCall::Trigger(name.clone())))
            })
        });
        futures::future::select_all(calls).await.0
    }

    /// The next request, numbered for [`ParameterServers::respond`].
    pub(crate) async fn next(&mut self) -> (u64, ParameterRequest) {
        let (token, call) = self.receive().await;
        self.services.receive(token, call)
    }

    /// The largest reply sent (see [`reply_limit`]); none with the Cyclone mapping.
    pub(crate) fn reply_limit(&self) -> Option<usize> {
        self.reply_limit
    }

    /// The reply to request `id` from the node's `response`, to send with
    /// [`ParameterServers::send`] after its changes are announced.
    pub(crate) fn answer(
        &mut self,
        id: u64,
        response: ParameterResponse,
    ) -> Option<Answer<RmwRequestId>> {
        self.services.answer(id, response)
    }

    /// Sends `answer`, cut to the reply limit: what was left out of it.
    pub(crate) fn send(&self, answer: Answer<RmwRequestId>) -> Vec<String> {
        let Answer {
            token,
            mut reply,
            names,
            ..
        } = answer;
        let mut notes = fit(self.reply_limit, &mut reply, &names);
        if let Err(e) = self.send_reply(token, reply, &names, &mut notes) {
            eprintln!("parameter services: response not sent: {e}");
        }
        notes
    }

    /// Sends `reply` on the server it answers.
    fn send_reply(
        &self,
        token: RmwRequestId,
        reply: ParameterReply,
        names: &[String],
        notes: &mut Vec<String>,
    ) -> Result<(), String> {
        let service = match &reply {
            ParameterReply::Trigger(_) => names.first().map_or("", String::as_str),
            other => other.service(),
        };
        let to = Limited {
            token,
            limit: self.reply_limit,
            service,
        };
        match reply {
            ParameterReply::List(r) => to.send(&self.list, r, notes),
            ParameterReply::Get(r) => to.send(&self.get, r, notes),
            ParameterReply::GetTypes(r) => to.send(&self.get_types, r, notes),
            ParameterReply::Describe(r) => to.send(&self.describe, r, notes),
            ParameterReply::Set(r) => to.send(&self.set, r, notes),
            ParameterReply::SetAtomically(r) => to.send(&self.set_atomically, r, notes),
            ParameterReply::Trigger(r) => match self.triggers.iter().find(|(n, _)| n == service) {
                Some((_, server)) => to.send(server, r, notes),
                None => Err(format!("no trigger service {service}")),
            },
        }
    }
}

/// Where a reply goes: the request's id, the reply limit and the service's name.
struct Limited<'a> {
    token: RmwRequestId,
    limit: Option<usize>,
    service: &'a str,
}

impl Limited<'_> {
    /// Sends `reply` unless its serialized size exceeds the limit (see [`reply_limit`]): a
    /// reply Fast DDS would drop is not sent, so that only this call goes unanswered and not
    /// every later one of the client; `notes` says so.
    fn send<Req: Message + 'static, Resp: Message + 'static>(
        &self,
        server: &Server<Req, Resp>,
        reply: Resp,
        notes: &mut Vec<String>,
    ) -> Result<(), String> {
        if let Some(limit) = self.limit {
            let size = cdr_encoding::to_vec::<Resp, byteorder::LittleEndian>(&reply)
                .map_or(usize::MAX, |bytes| bytes.len());
            if size > limit {
                let service = self.service;
                notes.push(format!(
                    "the whole {service} reply ({size} bytes): not sent"
                ));
                return Ok(());
            }
        }
        server
            .send_response(self.token, reply)
            .map_err(|e| format!("{e:?}"))
    }
}

#[cfg(test)]
mod tests;
