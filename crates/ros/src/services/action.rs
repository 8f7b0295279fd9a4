//! The FollowJointTrajectory action's services, written once for every backend: a request
//! received on any of the three (`send_goal`, `cancel_goal`, `get_result`) is kept with the
//! backend's token until the node answers it, and the answer goes back only as the response of
//! the service it came on. What the node decides is in [`crate::nodes::trajectory_action`].

use super::pending::PendingRequests;
use crate::follow_joint_trajectory::{ActionRequest, ActionResponse};

/// At most this many requests wait for an answer: a get_result waits for its goal to end.
const MAX_PENDING: usize = 1024;

/// Which service a request came on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Service {
    SendGoal,
    CancelGoal,
    GetResult,
}

fn service_of(request: &ActionRequest) -> Service {
    match request {
        ActionRequest::SendGoal(..) => Service::SendGoal,
        ActionRequest::Cancel(_) => Service::CancelGoal,
        ActionRequest::GetResult(_) => Service::GetResult,
    }
}

fn answers(response: &ActionResponse) -> Service {
    match response {
        ActionResponse::Goal { .. } => Service::SendGoal,
        ActionResponse::Cancel { .. } => Service::CancelGoal,
        ActionResponse::Result { .. } => Service::GetResult,
    }
}

/// The action requests of one node waiting for its answers, each with the backend's token.
#[derive(Debug)]
pub struct ActionServices<T> {
    pending: PendingRequests<(T, Service)>,
}

impl<T> Default for ActionServices<T> {
    fn default() -> Self {
        Self {
            pending: PendingRequests::new(MAX_PENDING),
        }
    }
}

impl<T> ActionServices<T> {
    /// Keeps the request received on `token`; its number for the node.
    pub fn receive(&mut self, token: T, request: &ActionRequest) -> u64 {
        self.pending.number((token, service_of(request)))
    }

    /// The token to answer request `id` on with `response` (`Ok(None)`: no such request
    /// waits; `Err`: the response is another service's, not sent).
    pub fn answer(&mut self, id: u64, response: &ActionResponse) -> Result<Option<T>, String> {
        let Some((token, service)) = self.pending.take(id) else {
            return Ok(None);
        };
        if answers(response) != service {
            return Err(format!(
                "action request {id} came on {service:?}: a response of {:?} is not sent",
                answers(response)
            ));
        }
        Ok(Some(token))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::follow_joint_trajectory::CancelCode;

    #[test]
    fn an_answer_goes_back_once_and_only_on_the_service_asked() {
        let mut services = ActionServices::default();
        let id = services.receive("cancel", &ActionRequest::GetResult([1; 16]));
        let cancel = ActionResponse::Cancel {
            code: CancelCode::None,
            canceling: vec![],
        };
        assert!(services.answer(id, &cancel).is_err());
        let id = services.receive("cancel", &ActionRequest::Cancel(Default::default()));
        assert_eq!(services.answer(id, &cancel), Ok(Some("cancel")));
        assert_eq!(services.answer(id, &cancel), Ok(None), "answered once");
    }
}
