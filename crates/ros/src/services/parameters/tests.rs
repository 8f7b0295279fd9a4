use super::*;

fn set(name: &str, value: ParameterValue) -> Parameter {
    Parameter {
        name: name.into(),
        value,
    }
}

#[test]
fn a_set_is_answered_per_change_and_only_the_accepted_ones_are_announced() {
    let mut services = ParameterServices::default();
    let request = SetParametersRequest {
        parameters: vec![
            set("kp", ParameterValue::from_value(&Value::Integer(100))),
            set("kd", ParameterValue::from_value(&Value::Double(-1.0))),
        ],
    };
    let (id, asked) = services.receive("token", ParameterCall::Set(request));
    assert_eq!(
        asked,
        ParameterRequest::Set(vec![
            ("kp".into(), Value::Integer(100)),
            ("kd".into(), Value::Double(-1.0)),
        ])
    );
    let response = ParameterResponse::Set(vec![
        Ok(Value::Double(100.0)),
        Err("parameter 'kd': -1 is below 0".into()),
    ]);
    let answer = services.answer(id, response).unwrap();
    assert_eq!(answer.token, "token");
    assert_eq!(
        answer.changed,
        vec![("kp".to_string(), Value::Double(100.0))]
    );
    let ParameterReply::Set(reply) = answer.reply else {
        panic!("{:?}", answer.reply)
    };
    assert!(reply.results[0].successful && !reply.results[1].successful);
    assert_eq!(reply.results[1].reason, "parameter 'kd': -1 is below 0");
    assert!(
        services
            .answer(id, ParameterResponse::List(vec![]))
            .is_none(),
        "answered once"
    );
}

#[test]
fn a_byte_array_is_asked_as_a_value_no_declaration_takes() {
    let mut services = ParameterServices::default();
    let bytes = ParameterValue {
        type_: 5,
        byte_array_value: vec![1],
        ..Default::default()
    };
    let request = SetParametersRequest {
        parameters: vec![set("kp", bytes)],
    };
    let (_, asked) = services.receive((), ParameterCall::SetAtomically(request));
    assert_eq!(
        asked,
        ParameterRequest::SetAtomically(vec![("kp".into(), Value::StringArray(vec![]))])
    );
}

#[test]
fn a_trigger_sets_its_parameter_true_and_says_what_happened() {
    let mut services = ParameterServices::default();
    let (id, asked) = services.receive(7, ParameterCall::Trigger("reset_collision".into()));
    assert_eq!(
        asked,
        ParameterRequest::Set(vec![("reset_collision".into(), Value::Bool(true))])
    );
    let answer = services
        .answer(id, ParameterResponse::Set(vec![Ok(Value::Bool(false))]))
        .unwrap();
    assert_eq!(
        answer.changed,
        vec![("reset_collision".to_string(), Value::Bool(false))]
    );
    let ParameterReply::Trigger(reply) = answer.reply else {
        panic!("{:?}", answer.reply)
    };
    assert!(reply.success && reply.message.starts_with("reset_collision applied"));
    let (id, _) = services.receive(8, ParameterCall::Trigger("estimate_payload".into()));
    let refused = ParameterResponse::Set(vec![Err("the arm is moving".into())]);
    let answer = services.answer(id, refused).unwrap();
    assert_eq!(
        answer.reply,
        ParameterReply::Trigger(TriggerResponse {
            success: false,
            message: "the arm is moving".into()
        })
    );
    assert!(answer.changed.is_empty());
}

#[test]
fn describe_answers_each_name_asked_and_an_undeclared_one_read_only() {
    let mut services = ParameterServices::default();
    let names = NamesRequest {
        names: vec!["kp".into(), "nope".into()],
    };
    let (id, _) = services.receive((), ParameterCall::Describe(names));
    let kp = Declaration::double_array("kp", vec![1.0; 7], "gains").range(0.0, 1e6);
    let answer = services
        .answer(id, ParameterResponse::Describe(vec![Some(kp), None]))
        .unwrap();
    let ParameterReply::Describe(reply) = answer.reply else {
        panic!("{:?}", answer.reply)
    };
    assert_eq!(reply.descriptors[0].floating_point_range.len(), 1);
    assert_eq!(reply.descriptors[0].type_, 8);
    assert_eq!(reply.descriptors[1].name, "nope");
    assert!(reply.descriptors[1].read_only);
}

#[test]
fn a_response_of_another_service_is_not_sent() {
    let mut services = ParameterServices::default();
    let (id, _) = services.receive((), ParameterCall::List(Default::default()));
    assert!(services
        .answer(id, ParameterResponse::Get(vec![]))
        .is_none());
}

#[test]
fn an_event_names_the_node_and_each_changed_value() {
    assert!(event("/n", Time::default(), &[]).is_none());
    let changed = [("kp".to_string(), Value::Double(2.0))];
    let event = event("/arm/controller_node", Time::default(), &changed).unwrap();
    assert_eq!(event.node, "/arm/controller_node");
    assert_eq!(event.changed_parameters[0].name, "kp");
    assert_eq!(event.changed_parameters[0].value.double_value, 2.0);
}
