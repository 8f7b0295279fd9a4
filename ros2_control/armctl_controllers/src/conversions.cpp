// The conversions between ROS and armctl that are not templates (those are in conversions.hpp):
// parameter values and descriptors, a JointTrajectory in the controller's joint order.
#include "conversions.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace armctl_controllers::detail
{
namespace
{
// armctl's names of its types, as its refusals print them.
const char * kind_name(ArmctlParameterType kind)
{
  switch (kind) {
    case ARMCTL_PARAMETER_TYPE_BOOL:
      return "bool";
    case ARMCTL_PARAMETER_TYPE_INTEGER:
      return "integer";
    case ARMCTL_PARAMETER_TYPE_DOUBLE:
      return "double";
    case ARMCTL_PARAMETER_TYPE_STRING:
      return "string";
    case ARMCTL_PARAMETER_TYPE_DOUBLE_ARRAY:
      return "double array";
    default:
      return "string array";
  }
}

// `choices` is armctl's comma-separated list ("a, b").
bool one_of(const std::string & text, const std::string & choices)
{
  std::size_t start = 0;
  while (start <= choices.size()) {
    const std::size_t end = std::min(choices.find(", ", start), choices.size());
    if (choices.compare(start, end - start, text) == 0) {
      return true;
    }
    start = end + 2;
  }
  return false;
}

std::string range_text(const ArmctlParameterInfo & info)
{
  const bool integer = info.kind == ARMCTL_PARAMETER_TYPE_INTEGER;
  char text[96];
  std::snprintf(
    text, sizeof(text), "%sin [%g, %g]",
    info.kind == ARMCTL_PARAMETER_TYPE_DOUBLE_ARRAY ? "each element " : "",
    integer ? std::ceil(info.min) : info.min, integer ? std::floor(info.max) : info.max);
  return text;
}
}  // namespace

// Whether armctl lists `name` as given by ArmctlConfig's fields (declared in on_init, read
// once in on_configure), with its declaration in `info`.
bool config_parameter(const std::string & name, ArmctlParameterInfo & info)
{
  for (std::size_t k = 0; k < armctl_config_parameter_count(); ++k) {
    if (armctl_config_parameter_info(k, &info) == ARMCTL_STATUS_OK && name == info.name) {
      return true;
    }
  }
  return false;
}

bool config_parameter(const std::string & name)
{
  ArmctlParameterInfo info;
  return config_parameter(name, info);
}

// Before configure armctl has no handle to check ArmctlConfig's parameters with: their type
// and choices are checked here, in armctl's words ("" if they pass); armctl_create checks the
// rest at configure.
std::string config_problem(const rclcpp::Parameter & parameter, const ArmctlParameterInfo & info)
{
  const std::string prefix = "parameter '" + parameter.get_name() + "': ";
  OwnedValue v;
  std::string why;
  if (!to_armctl(parameter.get_parameter_value(), info.kind, v, why)) {
    return prefix + why;
  }
  if (v.kind != info.kind) {
    return prefix + "expected " + kind_name(info.kind) + ", got " + kind_name(v.kind);
  }
  const std::string choices = info.choices ? info.choices : "";
  if (v.kind == ARMCTL_PARAMETER_TYPE_STRING && !choices.empty() && !one_of(v.text, choices)) {
    return prefix + "'" + v.text + "' is not one of " + choices;
  }
  return "";
}

double seconds(int32_t sec, uint32_t nanosec) { return sec + nanosec * 1e-9; }

// A ROS parameter value as armctl's, converted to armctl's declared kind where YAML gives an
// integer for a number (`kp: [400, 400, ...]` parses as integers).
bool to_armctl(
  const rclcpp::ParameterValue & value, ArmctlParameterType declared, OwnedValue & out,
  std::string & why)
{
  const bool wants_double = declared == ARMCTL_PARAMETER_TYPE_DOUBLE;
  const bool wants_doubles = declared == ARMCTL_PARAMETER_TYPE_DOUBLE_ARRAY;
  switch (value.get_type()) {
    case rclcpp::PARAMETER_BOOL:
      out.kind = ARMCTL_PARAMETER_TYPE_BOOL;
      out.boolean = value.get<bool>();
      return true;
    case rclcpp::PARAMETER_INTEGER:
      out.kind = wants_double ? ARMCTL_PARAMETER_TYPE_DOUBLE : ARMCTL_PARAMETER_TYPE_INTEGER;
      out.integer = value.get<int64_t>();
      out.number = static_cast<double>(out.integer);
      return true;
    case rclcpp::PARAMETER_DOUBLE:
      out.kind = ARMCTL_PARAMETER_TYPE_DOUBLE;
      out.number = value.get<double>();
      return true;
    case rclcpp::PARAMETER_STRING:
      out.kind = ARMCTL_PARAMETER_TYPE_STRING;
      out.text = value.get<std::string>();
      return true;
    case rclcpp::PARAMETER_DOUBLE_ARRAY:
      out.kind = ARMCTL_PARAMETER_TYPE_DOUBLE_ARRAY;
      out.numbers = value.get<std::vector<double>>();
      if (out.numbers.empty() && declared == ARMCTL_PARAMETER_TYPE_STRING_ARRAY) {
        out.kind = ARMCTL_PARAMETER_TYPE_STRING_ARRAY;  // an empty YAML list, as armctl reads it
      }
      return true;
    case rclcpp::PARAMETER_INTEGER_ARRAY:
      if (!wants_doubles) {
        break;
      }
      out.kind = ARMCTL_PARAMETER_TYPE_DOUBLE_ARRAY;
      for (const int64_t v : value.get<std::vector<int64_t>>()) {
        out.numbers.push_back(static_cast<double>(v));
      }
      return true;
    case rclcpp::PARAMETER_STRING_ARRAY:
      out.kind = ARMCTL_PARAMETER_TYPE_STRING_ARRAY;
      out.texts = value.get<std::vector<std::string>>();
      return true;
    case rclcpp::PARAMETER_NOT_SET:
      why = std::string("expected ") + kind_name(declared) +
            ", got no value (armctl's parameters cannot be undeclared)";
      return false;
    default:
      break;
  }
  std::string type = rclcpp::to_string(value.get_type());
  std::replace(type.begin(), type.end(), '_', ' ');
  why = std::string("expected ") + kind_name(declared) + ", got " + type;
  return false;
}

rclcpp::ParameterValue to_ros(const ArmctlValue & value)
{
  switch (value.kind) {
    case ARMCTL_PARAMETER_TYPE_BOOL:
      return rclcpp::ParameterValue(value.boolean);
    case ARMCTL_PARAMETER_TYPE_INTEGER:
      return rclcpp::ParameterValue(static_cast<int64_t>(value.integer));
    case ARMCTL_PARAMETER_TYPE_STRING:
      return rclcpp::ParameterValue(std::string(value.text ? value.text : ""));
    case ARMCTL_PARAMETER_TYPE_DOUBLE_ARRAY:
      return rclcpp::ParameterValue(
        std::vector<double>(value.numbers, value.numbers + value.count));
    case ARMCTL_PARAMETER_TYPE_STRING_ARRAY:
      return rclcpp::ParameterValue(std::vector<std::string>(value.texts, value.texts + value.count));
    default:
      return rclcpp::ParameterValue(value.number);
  }
}

// Constraints in text only: rclcpp would refuse a value outside a range, of another type
// (without dynamic typing) or for a read-only parameter itself, with its own text, before the
// set-parameters callback, where armctl checks every value and names the parameter.
rcl_interfaces::msg::ParameterDescriptor descriptor(const ArmctlParameterInfo & info)
{
  rcl_interfaces::msg::ParameterDescriptor d;
  d.name = info.name;
  d.description = info.description;
  d.dynamic_typing = true;  // typed by its value; armctl refuses another type, naming its own
  std::vector<std::string> constraints;
  if (info.read_only) {
    constraints.push_back(
      info.scope == ARMCTL_PARAMETER_SCOPE_CONFIG ? "read-only while configured"
                                                  : "read-only: a start value, taken at configure");
  }
  if (info.has_range) {
    constraints.push_back(range_text(info));
  }
  if (info.choices && *info.choices) {
    constraints.push_back(std::string("one of: ") + info.choices);
  }
  for (const auto & c : constraints) {
    d.additional_constraints += (d.additional_constraints.empty() ? "" : "; ") + c;
  }
  return d;
}

// column[j]: where the message has controller joint j. Every controlled joint exactly once,
// nothing else (a trajectory for other joints is not this controller's).
bool match_joints(
  const std::vector<std::string> & names, const std::vector<std::string> & joints,
  std::vector<std::size_t> & column, std::string & why)
{
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (std::find(joints.begin(), joints.end(), names[k]) == joints.end()) {
      why = "joint '" + names[k] + "' is not controlled by this controller";
      return false;
    }
    if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(k), names[k]) !=
        names.begin() + static_cast<std::ptrdiff_t>(k)) {
      why = "joint '" + names[k] + "' is listed twice";
      return false;
    }
  }
  column.clear();
  for (const auto & joint : joints) {
    const auto at = std::find(names.begin(), names.end(), joint);
    if (at == names.end()) {
      why = "controlled joint '" + joint + "' is missing";
      return false;
    }
    column.push_back(static_cast<std::size_t>(at - names.begin()));
  }
  return true;
}

// Copies `from` (message order) into `to` (controller order); false if its length is wrong.
bool reorder(
  const std::vector<double> & from, const std::vector<std::size_t> & column, double * to)
{
  if (from.size() != column.size()) {
    return false;
  }
  for (std::size_t j = 0; j < column.size(); ++j) {
    to[j] = from[column[j]];
  }
  return true;
}

std::shared_ptr<PendingTrajectory> to_controller_order(
  const trajectory_msgs::msg::JointTrajectory & msg, const std::vector<std::string> & joints,
  std::string & why)
{
  auto out = std::make_shared<PendingTrajectory>();
  out->stamp = seconds(msg.header.stamp.sec, msg.header.stamp.nanosec);
  if (msg.points.empty()) {
    return out;  // armctl stops and holds where the arm is, as controller_node does
  }
  std::vector<std::size_t> column;
  if (!match_joints(msg.joint_names, joints, column, why)) {
    return nullptr;
  }
  const std::size_t n = joints.size(), m = msg.points.size();
  out->times.resize(m);
  out->positions.resize(m * n);
  out->velocities.resize(m * n);
  out->accelerations.resize(m * n);
  out->points.resize(m);
  for (std::size_t k = 0; k < m; ++k) {
    const auto & p = msg.points[k];
    const bool v = !p.velocities.empty(), a = !p.accelerations.empty();
    if (
      !reorder(p.positions, column, &out->positions[k * n]) ||
      (v && !reorder(p.velocities, column, &out->velocities[k * n])) ||
      (a && !reorder(p.accelerations, column, &out->accelerations[k * n]))) {
      why = "point " + std::to_string(k) + " does not have one value per joint";
      return nullptr;
    }
    out->times[k] = seconds(p.time_from_start.sec, p.time_from_start.nanosec);
    out->points[k] = ArmctlTrajectoryPoint{
      out->times[k], &out->positions[k * n], v ? &out->velocities[k * n] : nullptr,
      a ? &out->accelerations[k * n] : nullptr};
  }
  return out;
}

rcl_interfaces::msg::SetParametersResult accepted()
{
  rcl_interfaces::msg::SetParametersResult result;
  result.successful = true;
  return result;
}

rcl_interfaces::msg::SetParametersResult refused(const std::string & reason)
{
  rcl_interfaces::msg::SetParametersResult result;
  result.successful = false;
  result.reason = reason;
  return result;
}
}  // namespace armctl_controllers::detail
