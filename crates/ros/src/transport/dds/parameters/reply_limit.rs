//! What a reply may carry on DDS, and cutting it to that: RustDDS fragments a larger reply in
//! a way Fast DDS clients drop (issue 47), so the node answers within one datagram and says
//! what it left out.

use ros2_client::parameters::{raw, ParameterValue};
use ros2_client::rcl_interfaces::{ListParametersResponse, ListParametersResult};

use super::from_ros;
use armctl_control::ParameterValue as RosValue;

/// The largest reply sent with the Enhanced mapping (Fast DDS clients, whose replies carry the
/// request's identity as inline QoS). RustDDS 0.15.1 writes that inline QoS one byte off in a
/// fragmented sample (an `Option` tag before the parameter list), so Fast DDS drops every
/// fragment of a reply that RustDDS splits, and its reliable reader then waits for it and takes
/// none of that client's later replies either. RustDDS splits a sample whose payload exceeds
/// the datagram budget of the reader it goes to: the MTU of the interface on the subnet of the
/// reader's locators, less 48 bytes of headers (1452 for a locator on no local subnet), less a
/// heartbeat (32) and a DATA submessage (48); the payload is the CDR reply and its 4-byte
/// encapsulation. A Fast DDS client on this host announces a locator on every interface that is
/// up (with `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST` too), so the smallest MTU of those bounds
/// the budget: about 1.3 kB on a host with Ethernet, about 65 kB in a loopback-only network
/// namespace. What would exceed the limit is cut and the node says so: values answered "not
/// set", descriptions and refusal reasons shortened, the list without its prefixes: an
/// incomplete answer with its reason on /rosout, not a client that hangs.
pub(super) fn reply_limit(loopback_only: bool) -> usize {
    let smallest = interface_mtus().into_iter().min();
    let budget = smallest.map_or(RUSTDDS_FALLBACK_BUDGET, |mtu| mtu.saturating_sub(48));
    // Clients on other hosts may sit on no local subnet: RustDDS's fallback budget.
    let budget = if loopback_only {
        budget
    } else {
        budget.min(RUSTDDS_FALLBACK_BUDGET)
    };
    budget.saturating_sub(32 + 48 + 4)
}

/// RustDDS's datagram budget for a reader on no local subnet (a 1500-byte MTU less headers).
pub(super) const RUSTDDS_FALLBACK_BUDGET: usize = 1452;

/// The limit on a host whose smallest MTU is 1400 (this project's CI machine), for tests.
#[cfg(test)]
pub(super) const NETWORK_REPLY_LIMIT: usize = 1400 - 48 - 32 - 48 - 4;

/// The MTUs of the network interfaces that are not down (Linux: `/sys/class/net`); none
/// elsewhere.
pub(super) fn interface_mtus() -> Vec<usize> {
    let Ok(entries) = std::fs::read_dir("/sys/class/net") else {
        return vec![];
    };
    entries
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let state = std::fs::read_to_string(path.join("operstate")).ok()?;
            if state.trim() == "down" {
                return None;
            }
            std::fs::read_to_string(path.join("mtu"))
                .ok()?
                .trim()
                .parse()
                .ok()
        })
        .collect()
}

/// About what `value` takes in a reply (CDR with its type tag and alignment, generously).
pub(super) fn reply_size(value: &RosValue) -> usize {
    64 + match value {
        RosValue::String(s) => s.len(),
        RosValue::StringArray(a) => a.iter().map(|s| s.len() + 8).sum(),
        RosValue::DoubleArray(a) => 8 * a.len(),
        RosValue::BoolArray(a) => a.len(),
        RosValue::Bool(_) | RosValue::Integer(_) | RosValue::Double(_) => 8,
    }
}

/// The list reply within `limit`: whole if it fits; else without its prefixes (`ros2 param
/// list` prints the names only); else the names that fit, in declaration order (the others
/// answer get and describe by name). `notes` says what was left out.
pub(super) fn list_within_limit(
    limit: Option<usize>,
    names: Vec<String>,
    notes: &mut Vec<String>,
) -> ListParametersResponse {
    let size = |reply: &ListParametersResponse| {
        cdr_encoding::to_vec::<_, byteorder::LittleEndian>(reply).map_or(usize::MAX, |b| b.len())
    };
    let mut reply = ListParametersResponse {
        result: ListParametersResult {
            prefixes: crate::parameter_services::prefixes_of(&names),
            names,
        },
    };
    let Some(limit) = limit else {
        return reply;
    };
    if size(&reply) <= limit {
        return reply;
    }
    reply.result.prefixes.clear();
    let total = reply.result.names.len();
    while size(&reply) > limit && reply.result.names.pop().is_some() {}
    let kept = reply.result.names.len();
    notes.push(if kept < total {
        format!("list_parameters: {kept} of {total} names, without prefixes")
    } else {
        "list_parameters: without prefixes".into()
    });
    reply
}

/// Shortens descriptions and constraints until `values` fit the reply limit (the types,
/// ranges and read-only flags stay whole); whether it had to.
pub(super) fn shorten_descriptions(
    limit: Option<usize>,
    values: &mut [raw::ParameterDescriptor],
) -> bool {
    let limit = limit.unwrap_or(usize::MAX);
    let size = |v: &[raw::ParameterDescriptor]| -> usize {
        v.iter()
            .map(|d| 96 + d.name.len() + d.description.len() + d.additional_constraints.len())
            .sum()
    };
    if size(values) <= limit {
        return false;
    }
    let fixed: usize = values.iter().map(|d| 96 + d.name.len()).sum();
    let each = limit.saturating_sub(fixed) / values.len().max(1) / 2;
    for d in values.iter_mut() {
        shorten(&mut d.description, each);
        shorten(&mut d.additional_constraints, each);
    }
    true
}

/// The values as sent, and the names of those over the reply limit (sent as not set).
pub(super) fn within_limit(
    limit: Option<usize>,
    names: &[String],
    values: Vec<Option<RosValue>>,
) -> (Vec<raw::ParameterValue>, Vec<String>) {
    let mut room = limit.unwrap_or(usize::MAX);
    let mut withheld = vec![];
    let sent = names
        .iter()
        .zip(values)
        .map(|(name, value)| match value {
            Some(v) if reply_size(&v) <= room => {
                room -= reply_size(&v);
                from_ros(&v)
            }
            Some(v) => {
                withheld.push(format!(
                    "{name} ({} bytes) answered as not set",
                    reply_size(&v)
                ));
                ParameterValue::NotSet.into()
            }
            None => {
                room = room.saturating_sub(64);
                ParameterValue::NotSet.into()
            }
        })
        .collect();
    (sent, withheld)
}

/// Cuts `text` to at most `room` bytes (at a character boundary), marking the cut.
pub(super) fn shorten(text: &mut String, room: usize) {
    if text.len() <= room {
        return;
    }
    let mut end = room.saturating_sub(3);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str("...");
}
