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

/// On a network a reply must fit about 1.2 kB: a 7 kB URDF is answered not set and named,
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
