//! rcl_interfaces' parameter services and std_srvs/Trigger as plain structs with the fields in
//! wire order (their CDR form is the DDS payload), and their conversion to and from armctl's
//! parameter values. A backend carries these; what they mean is in [`super::parameters`].

use serde::{Deserialize, Serialize};

use crate::msgs::Time;
use armctl_control::ParameterValue as Value;

/// rcl_interfaces/ParameterValue: `type_` says which field holds the value (0: not set).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ParameterValue {
    /// rcl_interfaces/ParameterType.
    pub type_: u8,
    /// Type 1.
    pub bool_value: bool,
    /// Type 2.
    pub integer_value: i64,
    /// Type 3.
    pub double_value: f64,
    /// Type 4.
    pub string_value: String,
    /// Type 5.
    pub byte_array_value: Vec<u8>,
    /// Type 6.
    pub bool_array_value: Vec<bool>,
    /// Type 7.
    pub integer_array_value: Vec<i64>,
    /// Type 8.
    pub double_array_value: Vec<f64>,
    /// Type 9.
    pub string_array_value: Vec<String>,
}

impl ParameterValue {
    /// The value as armctl takes it (integer arrays widen to double arrays; byte arrays and
    /// "not set" are not parameter values here).
    pub fn to_value(&self) -> Option<Value> {
        Some(match self.type_ {
            1 => Value::Bool(self.bool_value),
            2 => Value::Integer(self.integer_value),
            3 => Value::Double(self.double_value),
            4 => Value::String(self.string_value.clone()),
            6 => Value::BoolArray(self.bool_array_value.clone()),
            7 => Value::DoubleArray(self.integer_array_value.iter().map(|i| *i as f64).collect()),
            8 => Value::DoubleArray(self.double_array_value.clone()),
            9 => Value::StringArray(self.string_array_value.clone()),
            _ => return None,
        })
    }

    /// `value` on the wire.
    pub fn from_value(value: &Value) -> Self {
        let mut v = Self::default();
        match value {
            Value::Bool(b) => (v.type_, v.bool_value) = (1, *b),
            Value::Integer(i) => (v.type_, v.integer_value) = (2, *i),
            Value::Double(d) => (v.type_, v.double_value) = (3, *d),
            Value::String(s) => (v.type_, v.string_value) = (4, s.clone()),
            Value::BoolArray(b) => (v.type_, v.bool_array_value) = (6, b.clone()),
            Value::DoubleArray(d) => (v.type_, v.double_array_value) = (8, d.clone()),
            Value::StringArray(s) => (v.type_, v.string_array_value) = (9, s.clone()),
        }
        v
    }
}

/// rcl_interfaces/Parameter.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Parameter {
    /// Name.
    pub name: String,
    /// Value.
    pub value: ParameterValue,
}

/// rcl_interfaces/FloatingPointRange.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FloatingPointRange {
    /// Lowest.
    pub from_value: f64,
    /// Highest.
    pub to_value: f64,
    /// Step (0: any value).
    pub step: f64,
}

/// rcl_interfaces/IntegerRange.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct IntegerRange {
    /// Lowest.
    pub from_value: i64,
    /// Highest.
    pub to_value: i64,
    /// Step (0: any value).
    pub step: u64,
}

/// rcl_interfaces/ParameterDescriptor.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ParameterDescriptor {
    /// Name.
    pub name: String,
    /// rcl_interfaces/ParameterType.
    pub type_: u8,
    /// Description.
    pub description: String,
    /// Constraints in words.
    pub additional_constraints: String,
    /// Read-only.
    pub read_only: bool,
    /// Whether the type may change.
    pub dynamic_typing: bool,
    /// At most one range of a double.
    pub floating_point_range: Vec<FloatingPointRange>,
    /// At most one range of an integer.
    pub integer_range: Vec<IntegerRange>,
}

/// rcl_interfaces/SetParametersResult.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SetParametersResult {
    /// Whether the change was made.
    pub successful: bool,
    /// Why not.
    pub reason: String,
}

/// rcl_interfaces/ListParametersResult.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ListParametersResult {
    /// Names.
    pub names: Vec<String>,
    /// The prefixes of the dotted names.
    pub prefixes: Vec<String>,
}

/// rcl_interfaces/ParameterEvent.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ParameterEvent {
    /// When.
    pub stamp: Time,
    /// The node's fully qualified name.
    pub node: String,
    /// Declared.
    pub new_parameters: Vec<Parameter>,
    /// Changed.
    pub changed_parameters: Vec<Parameter>,
    /// Undeclared.
    pub deleted_parameters: Vec<Parameter>,
}

/// rcl_interfaces/ListParameters's request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ListParametersRequest {
    /// Prefixes to list under (none: all).
    pub prefixes: Vec<String>,
    /// Levels below them (0: all).
    pub depth: u64,
}

/// rcl_interfaces/ListParameters's response.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ListParametersResponse {
    /// The names.
    pub result: ListParametersResult,
}

/// The request of GetParameters, GetParameterTypes and DescribeParameters: names.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NamesRequest {
    /// Names.
    pub names: Vec<String>,
}

/// rcl_interfaces/GetParameters's response.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GetParametersResponse {
    /// Per name asked, in order.
    pub values: Vec<ParameterValue>,
}

/// rcl_interfaces/GetParameterTypes's response.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GetParameterTypesResponse {
    /// Per name asked, in order.
    pub types: Vec<u8>,
}

/// rcl_interfaces/DescribeParameters's response.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DescribeParametersResponse {
    /// Per name asked, in order.
    pub descriptors: Vec<ParameterDescriptor>,
}

/// The request of SetParameters and SetParametersAtomically.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SetParametersRequest {
    /// The changes.
    pub parameters: Vec<Parameter>,
}

/// rcl_interfaces/SetParameters's response.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SetParametersResponse {
    /// Per change, in order.
    pub results: Vec<SetParametersResult>,
}

/// rcl_interfaces/SetParametersAtomically's response.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SetParametersAtomicallyResponse {
    /// All or none.
    pub result: SetParametersResult,
}

/// std_srvs/Trigger's request (ROS 2 gives an empty message one byte).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TriggerRequest {
    /// Unused.
    pub structure_needs_at_least_one_member: u8,
}

/// std_srvs/Trigger's response.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TriggerResponse {
    /// Whether it was done.
    pub success: bool,
    /// What happened, or why not.
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_survive_the_wire_and_integer_arrays_widen() {
        for value in [
            Value::Bool(true),
            Value::Integer(-3),
            Value::Double(0.5),
            Value::String("s".into()),
            Value::BoolArray(vec![true, false]),
            Value::DoubleArray(vec![1.0, 2.0]),
            Value::StringArray(vec!["a".into()]),
        ] {
            assert_eq!(ParameterValue::from_value(&value).to_value(), Some(value));
        }
        let integers = ParameterValue {
            type_: 7,
            integer_array_value: vec![1, 2],
            ..Default::default()
        };
        assert_eq!(
            integers.to_value(),
            Some(Value::DoubleArray(vec![1.0, 2.0]))
        );
        let bytes = ParameterValue {
            type_: 5,
            ..Default::default()
        };
        assert_eq!(bytes.to_value(), None);
        assert_eq!(ParameterValue::default().to_value(), None);
    }
}
