//! What a reply may carry on DDS, and cutting it to that: RustDDS fragments a larger reply in
//! a way Fast DDS clients drop (issue 47), so the node answers within one datagram and says
//! what it left out.

use crate::services::parameter_msgs::{
    ListParametersResponse, ParameterDescriptor, ParameterValue,
};
use crate::services::parameters::ParameterReply;

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

/// Cuts `reply` to `limit` (none: no limit) and says what it left out; `names` are the names
/// the request asked about, in order.
pub(super) fn fit(
    limit: Option<usize>,
    reply: &mut ParameterReply,
    names: &[String],
) -> Vec<String> {
    let Some(limit) = limit else {
        return vec![];
    };
    let mut notes = vec![];
    match reply {
        ParameterReply::List(r) => list_within_limit(limit, r, &mut notes),
        ParameterReply::Get(r) => values_within_limit(limit, names, &mut r.values, &mut notes),
        ParameterReply::Describe(r) => {
            if shorten_descriptions(limit, &mut r.descriptors) {
                notes.push("descriptions shortened".into());
            }
        }
        ParameterReply::Set(r) => {
            // Each result's share of the reply.
            let room = (limit / r.results.len().max(1)).saturating_sub(16);
            for result in &mut r.results {
                shorten(&mut result.reason, room);
            }
        }
        ParameterReply::SetAtomically(r) => {
            shorten(&mut r.result.reason, limit.saturating_sub(16));
        }
        ParameterReply::Trigger(r) => {
            if shorten(&mut r.message, limit.saturating_sub(16)) {
                notes.push("the trigger's message shortened".into());
            }
        }
        ParameterReply::GetTypes(_) => {}
    }
    notes
}

fn serialized_size<T: serde::Serialize>(reply: &T) -> usize {
    cdr_encoding::to_vec::<_, byteorder::LittleEndian>(reply).map_or(usize::MAX, |b| b.len())
}

/// About what `value` takes in a reply (CDR with its type tag and alignment, generously).
pub(super) fn reply_size(value: &ParameterValue) -> usize {
    64 + match value.type_ {
        4 => value.string_value.len(),
        5 => value.byte_array_value.len(),
        6 => value.bool_array_value.len(),
        7 => 8 * value.integer_array_value.len(),
        8 => 8 * value.double_array_value.len(),
        9 => value.string_array_value.iter().map(|s| s.len() + 8).sum(),
        0 => 0,
        _ => 8,
    }
}

/// The list reply within `limit`: whole if it fits; else without its prefixes (`ros2 param
/// list` prints the names only); else the names that fit, in the order the node lists them, tunable ones first (the others
/// answer get and describe by name). `notes` says what was left out.
pub(super) fn list_within_limit(
    limit: usize,
    reply: &mut ListParametersResponse,
    notes: &mut Vec<String>,
) {
    if serialized_size(reply) <= limit {
        return;
    }
    reply.result.prefixes.clear();
    let total = reply.result.names.len();
    while serialized_size(reply) > limit && reply.result.names.pop().is_some() {}
    let kept = reply.result.names.len();
    notes.push(if kept < total {
        format!("list_parameters: {kept} of {total} names, without prefixes")
    } else {
        "list_parameters: without prefixes".into()
    });
}

/// Shortens descriptions and constraints until `values` fit the reply limit (the types,
/// ranges and read-only flags stay whole); whether it had to.
pub(super) fn shorten_descriptions(limit: usize, values: &mut [ParameterDescriptor]) -> bool {
    let size = |v: &[ParameterDescriptor]| -> usize {
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

/// Answers "not set" for the values over the limit, in order, naming them in `notes`.
pub(super) fn values_within_limit(
    limit: usize,
    names: &[String],
    values: &mut [ParameterValue],
    notes: &mut Vec<String>,
) {
    let mut room = limit;
    for (name, value) in names.iter().zip(values.iter_mut()) {
        let size = reply_size(value);
        if value.type_ == 0 {
            room = room.saturating_sub(size);
        } else if size <= room {
            room -= size;
        } else {
            notes.push(format!("{name} ({size} bytes) answered as not set"));
            *value = ParameterValue::default();
        }
    }
}

/// Cuts `text` to at most `room` bytes (at a character boundary), marking the cut; whether it
/// had to.
pub(super) fn shorten(text: &mut String, room: usize) -> bool {
    if text.len() <= room {
        return false;
    }
    let mut end = room.saturating_sub(3);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str("...");
    true
}
