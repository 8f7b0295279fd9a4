//! `armctl excite --publish`: the excitation sent as one trajectory_msgs/JointTrajectory to a
//! running controller_node's `~/reference` over DDS, as `ros2 topic pub --once` would, but
//! without the 128 kB limit of a command-line argument (60 s of excitation is over 600 kB of
//! YAML) and without ROS installed. It waits for the node's subscription before sending, and
//! reads the node's `/rosout` for whether it took the trajectory.

use std::time::Duration;

use anyhow::{bail, Result};
use armctl_nodes::msgs::JointTrajectory;
use armctl_nodes::transport::dds::{DdsOptions, DdsTransport};
use armctl_nodes::transport::{Incoming, NodeSpec, Outgoing, Topic, Transport};
use armctl_runtime::node_parameters::ParameterStore;

/// How long the node's answer on /rosout is waited for.
const ANSWER_WAIT: Duration = Duration::from_secs(5);

/// Sends `message` to `node`'s `~/reference` (`node` fully qualified), waiting up to `wait`
/// for the subscription.
pub(crate) fn publish(message: &JointTrajectory, node: &str, wait: f64) -> Result<()> {
    if !node.starts_with('/') || node.ends_with('/') || node.len() < 2 {
        bail!("--node '{node}' is not a fully qualified node name such as /controller_node");
    }
    if !(wait.is_finite() && (0.0..=3600.0).contains(&wait)) {
        bail!("--wait {wait} must be between 0 and 3600 s");
    }
    let wait = Duration::from_secs_f64(wait);
    let dds = DdsOptions::from_env()?;
    let topic = format!("{node}/reference");
    let spec = NodeSpec {
        action: None,
        name: "armctl_excite".into(),
        namespace: "/".into(),
        subscriptions: vec![(Topic::Rosout, "/rosout".into())],
        publications: vec![(Topic::Reference, topic.clone())],
        tick_rate: None,
        parameters: ParameterStore::new(vec![]),
    };
    let runtime = crate::dds_runtime::dds_runtime()?;
    runtime.block_on(async {
        let mut transport = DdsTransport::start(&spec, &dds)?;
        eprintln!("waiting for {topic} on ROS domain {}", dds.domain_id);
        if !subscribed(&mut transport, wait).await {
            bail!(
                "no subscription to {topic} within {} s: is {node} running on ROS domain {} (ROS_DOMAIN_ID)?",
                wait.as_secs_f64(),
                dds.domain_id
            );
        }
        // /rosout keeps its last messages for late joiners: only the node's word from now on,
        // about this many points, is its answer (a clock skew of a second is allowed).
        let sent = wall_clock() - 1.0;
        transport.publish(Outgoing::Reference(message));
        transport.flush().await;
        let asked = Answer {
            logger: node.trim_start_matches('/').replace('/', "."),
            since: sent,
            points: message.points.len(),
        };
        match tokio::time::timeout(ANSWER_WAIT, answer(&mut transport, &asked)).await {
            Ok((true, text)) => println!("{node} took the excitation: {text}"),
            Ok((false, text)) => bail!("{node} refused the excitation: {text}"),
            Err(_) => println!(
                "sent {} points to {topic}; no word from {node} on /rosout within {} s",
                message.points.len(),
                ANSWER_WAIT.as_secs()
            ),
        }
        Ok(())
    })
}

/// Whether the reference topic has a subscriber within `wait`.
async fn subscribed(transport: &mut DdsTransport, wait: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + wait;
    while tokio::time::Instant::now() < deadline {
        if transport.subscriber_count(Topic::Reference) > 0 {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// Which /rosout lines answer the trajectory sent.
struct Answer {
    /// The node's logger name (`ns.node`).
    logger: String,
    /// Wall-clock seconds: earlier lines are old.
    since: f64,
    /// The trajectory's points (a taken one is logged as "new reference: N points").
    points: usize,
}

fn wall_clock() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The node's first word on /rosout about the reference just sent: taken ("new reference: N
/// points ...") or refused ("reference refused: ...", a warning).
async fn answer(transport: &mut DdsTransport, asked: &Answer) -> (bool, String) {
    let taken = format!("new reference: {} points", asked.points);
    loop {
        let Some(Incoming::Rosout(log)) = transport.next().await else {
            continue;
        };
        if log.name != asked.logger || log.stamp.seconds() < asked.since {
            continue;
        }
        if log.msg.starts_with(&taken) {
            return (true, log.msg);
        }
        if log.level >= 30 && log.msg.starts_with("reference refused") {
            return (false, log.msg);
        }
    }
}
