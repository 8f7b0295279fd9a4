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
// Whether armctl lists `name` as given by ArmctlConfig's fields (declared in on_init, read
// once in on_configure).
bool config_parameter(const std::string & name)
{
  ArmctlParameterInfo info;
  for (std::size_t k = 0; k < armctl_config_parameter_count(); ++k) {
    if (armctl_config_parameter_info(k, &info) == ARMCTL_STATUS_OK && name == info.name) {
      return true;
    }
  }
  return false;
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
    default:
      break;
  }
  why = "a value of this type means nothing to armctl";
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

// ROS applies ranges to single numbers only; for arrays the range goes into the text (armctl
// checks every element either way).
rcl_interfaces::msg::ParameterDescriptor descriptor(const ArmctlParameterInfo & info)
{
  rcl_interfaces::msg::ParameterDescriptor d;
  d.name = info.name;
  d.description = info.description;
  d.read_only = info.read_only;
  if (info.choices && *info.choices) {
    d.additional_constraints = std::string("one of: ") + info.choices;
  }
  if (!info.has_range || !std::isfinite(info.min) || !std::isfinite(info.max)) {
    return d;
  }
  if (info.kind == ARMCTL_PARAMETER_TYPE_DOUBLE) {
    rcl_interfaces::msg::FloatingPointRange range;
    range.from_value = info.min;
    range.to_value = info.max;
    d.floating_point_range.push_back(range);
  } else if (info.kind == ARMCTL_PARAMETER_TYPE_INTEGER) {
    rcl_interfaces::msg::IntegerRange range;
    range.from_value = static_cast<int64_t>(std::ceil(info.min));
    range.to_value = static_cast<int64_t>(std::floor(info.max));
    d.integer_range.push_back(range);
  } else if (info.kind == ARMCTL_PARAMETER_TYPE_DOUBLE_ARRAY) {
    char text[96];
    std::snprintf(text, sizeof(text), "each element in [%g, %g]", info.min, info.max);
    d.additional_constraints = text;
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

rcl_interfaces::msg::SetParametersResult refused(const std::string & reason)
{
  rcl_interfaces::msg::SetParametersResult result;
  result.successful = false;
  result.reason = reason;
  return result;
}
}  // namespace armctl_controllers::detail
