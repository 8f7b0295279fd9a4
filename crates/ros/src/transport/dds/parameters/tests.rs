use super::reply_limit::{list_within_limit, shorten, shorten_descriptions, values_within_limit};
use super::*;
use crate::services::parameter_msgs::{ListParametersResult, ParameterValue, SetParametersResult};
use crate::services::parameters::descriptor;
use armctl_control::{Declaration, ParameterValue as Value};

fn serialized<T: serde::Serialize>(value: &T) -> usize {
    cdr_encoding::to_vec::<T, byteorder::LittleEndian>(value)
        .unwrap()
        .len()
}

#[test]
fn shortened_text_keeps_whole_characters_and_marks_the_cut() {
    let mut short = "kp".to_string();
    shorten(&mut short, 10);
    assert_eq!(short, "kp");
    let mut long = "é".repeat(50);
    shorten(&mut long, 10);
    assert!(long.len() <= 10 && long.ends_with("..."), "{long}");
}

/// On a host with a 1400-byte MTU a reply must fit 1268 bytes: a 7 kB URDF is answered not set and named,
/// the small values stay, and the reply as serialized fits.
#[test]
fn a_get_reply_over_the_network_limit_answers_the_large_values_not_set() {
    let names = ["robot_description".to_string(), "kp".to_string()];
    let mut values = vec![
        ParameterValue::from_value(&Value::String("x".repeat(7_000))),
        ParameterValue::from_value(&Value::DoubleArray(vec![100.0; 7])),
    ];
    let mut withheld = vec![];
    values_within_limit(NETWORK_REPLY_LIMIT, &names, &mut values, &mut withheld);
    assert_eq!(withheld.len(), 1);
    assert!(withheld[0].starts_with("robot_description"), "{withheld:?}");
    assert_eq!(values[0].to_value(), None);
    assert_eq!(
        values[1].to_value(),
        Some(Value::DoubleArray(vec![100.0; 7]))
    );
    let reply = GetParametersResponse { values };
    assert!(serialized(&reply) <= NETWORK_REPLY_LIMIT);
}

#[test]
fn long_descriptions_are_shortened_to_fit_and_the_rest_kept() {
    let declaration =
        Declaration::double_array("kp", vec![1.0; 7], &"d".repeat(300)).range(0.0, 1e6);
    let mut descriptors: Vec<_> = (0..4)
        .map(|_| descriptor("kp", Some(&declaration)))
        .collect();
    assert!(shorten_descriptions(NETWORK_REPLY_LIMIT, &mut descriptors));
    assert!(descriptors
        .iter()
        .all(|d| d.floating_point_range.len() == 1 && d.type_ == 8));
    let reply = DescribeParametersResponse { descriptors };
    assert!(
        serialized(&reply) <= NETWORK_REPLY_LIMIT,
        "{}",
        serialized(&reply)
    );
}

/// A list that fits goes whole; one just over the limit loses its prefixes only (`ros2 param
/// list` prints names); a longer one keeps the names that fit, in order, and says how many.
#[test]
fn a_list_over_the_limit_drops_its_prefixes_then_its_last_names() {
    let names: Vec<String> = (0..60).map(|k| format!("group.parameter_{k:02}")).collect();
    let whole = ListParametersResponse {
        result: ListParametersResult {
            prefixes: vec!["group".into()],
            names: names.clone(),
        },
    };
    let mut notes = vec![];
    let mut reply = whole.clone();
    list_within_limit(usize::MAX, &mut reply, &mut notes);
    assert_eq!(reply, whole);
    assert!(notes.is_empty());
    let just_over = serialized(&whole) - 4;
    list_within_limit(just_over, &mut reply, &mut notes);
    assert_eq!(reply.result.names, names);
    assert!(reply.result.prefixes.is_empty());
    assert_eq!(notes, ["list_parameters: without prefixes"]);
    notes.clear();
    let mut reply = whole.clone();
    list_within_limit(NETWORK_REPLY_LIMIT / 2, &mut reply, &mut notes);
    let kept = reply.result.names.len();
    assert!(kept > 0 && kept < names.len());
    assert_eq!(reply.result.names[..], names[..kept]);
    assert!(serialized(&reply) <= NETWORK_REPLY_LIMIT / 2);
    assert_eq!(
        notes,
        [format!(
            "list_parameters: {kept} of 60 names, without prefixes"
        )]
    );
}

/// Refusal reasons share the reply: each is cut to its part and marked.
#[test]
fn long_refusal_reasons_are_cut_to_fit() {
    let results = (0..3).map(|_| SetParametersResult {
        successful: false,
        reason: "r".repeat(2_000),
    });
    let mut reply = ParameterReply::Set(SetParametersResponse {
        results: results.collect(),
    });
    fit(Some(NETWORK_REPLY_LIMIT), &mut reply, &[]);
    let ParameterReply::Set(cut) = reply else {
        panic!()
    };
    assert!(cut.results.iter().all(|r| r.reason.ends_with("...")));
    assert!(serialized(&cut) <= NETWORK_REPLY_LIMIT);
}

/// The limit follows the interfaces: at least the loopback's budget on loopback only when
/// that is the only interface up, never more than RustDDS's fallback budget otherwise.
#[test]
fn the_reply_limit_is_within_the_datagram_budgets() {
    assert!(reply_limit(false) <= RUSTDDS_FALLBACK_BUDGET - 84);
    assert!(reply_limit(true) >= reply_limit(false));
    let smallest = interface_mtus().into_iter().min();
    if let Some(mtu) = smallest {
        assert_eq!(reply_limit(true), mtu - 48 - 84);
    }
}
