use super::*;

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
    let values = vec![
        Some(RosValue::String("x".repeat(7_000))),
        Some(RosValue::DoubleArray(vec![100.0; 7])),
    ];
    let (sent, withheld) = within_limit(Some(NETWORK_REPLY_LIMIT), &names, values);
    assert_eq!(withheld.len(), 1);
    assert!(withheld[0].starts_with("robot_description"), "{withheld:?}");
    assert_eq!(to_ros(sent[0].clone()), None);
    assert_eq!(
        to_ros(sent[1].clone()),
        Some(RosValue::DoubleArray(vec![100.0; 7]))
    );
    let reply = GetParametersResponse { values: sent };
    assert!(serialized(&reply) <= NETWORK_REPLY_LIMIT);
}

#[test]
fn long_descriptions_are_shortened_to_fit_and_the_rest_kept() {
    let declaration =
        Declaration::double_array("kp", vec![1.0; 7], &"d".repeat(300)).range(0.0, 1e6);
    let mut values: Vec<raw::ParameterDescriptor> = (0..4)
        .map(|_| descriptor("kp", Some(&declaration)))
        .collect();
    assert!(shorten_descriptions(Some(NETWORK_REPLY_LIMIT), &mut values));
    assert!(values
        .iter()
        .all(|d| d.floating_point_range.len() == 1 && d.r#type == 8));
    let reply = DescribeParametersResponse { values };
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
    let mut notes = vec![];
    let whole = list_within_limit(Some(usize::MAX), names.clone(), &mut notes);
    assert_eq!(whole.result.prefixes, vec!["group".to_string()]);
    assert!(notes.is_empty());
    let just_over = serialized(&whole) - 4;
    let reply = list_within_limit(Some(just_over), names.clone(), &mut notes);
    assert_eq!(reply.result.names, names);
    assert!(reply.result.prefixes.is_empty());
    assert_eq!(notes, ["list_parameters: without prefixes"]);
    notes.clear();
    let reply = list_within_limit(Some(NETWORK_REPLY_LIMIT / 2), names.clone(), &mut notes);
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
