// Private to the plugin's sources (not installed): the conversions between ROS and armctl
// (parameter values, descriptors, interfaces, joint order) and the helpers of their checks.
#ifndef ARMCTL_CONTROLLERS__SRC__CONVERSIONS_HPP_
#define ARMCTL_CONTROLLERS__SRC__CONVERSIONS_HPP_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "armctl_controllers/model_based_effort_controller.hpp"

namespace armctl_controllers::detail
{
bool config_parameter(const std::string & name);
bool config_parameter(const std::string & name, ArmctlParameterInfo & info);
std::string config_problem(const rclcpp::Parameter & parameter, const ArmctlParameterInfo & info);

template <std::size_t N>
bool listed(const char * const (&list)[N], const std::string & name)
{
  return std::any_of(std::begin(list), std::end(list), [&](const char * s) { return name == s; });
}

double seconds(int32_t sec, uint32_t nanosec);

// Jazzy's loaned interfaces gained get_optional() and a set_value() that reports a busy handle
// in the middle of the distribution's life; detect the form instead of trusting a version.
template <typename Interface, typename = void>
struct has_get_optional : std::false_type
{
};
template <typename Interface>
struct has_get_optional<
  Interface, std::void_t<decltype(std::declval<const Interface &>().get_optional())>>
: std::true_type
{
};

// The interface's value, or false when it cannot be read now (Jazzy: get_optional() came back
// empty because the hardware side held its lock); armctl then holds, naming the joint.
template <typename Interface>
bool read_value(const Interface & interface, double & value)
{
  if constexpr (has_get_optional<Interface>::value) {
    const auto read = interface.get_optional();
    value = read.value_or(std::numeric_limits<double>::quiet_NaN());
    return read.has_value();
  } else {
    value = interface.get_value();
    return true;
  }
}

template <typename Interface>
bool write_value(Interface & interface, double value)
{
  if constexpr (std::is_same_v<decltype(interface.set_value(value)), bool>) {
    return interface.set_value(value);
  } else {
    interface.set_value(value);
    return true;
  }
}

// The loaned interfaces of `kind` in the order of `joints`; false if one is missing. Matched by
// name because the controller_manager does not promise the order.
template <typename Loaned, typename Pointer>
bool by_joint(
  std::vector<Loaned> & loaned, const std::vector<std::string> & joints, const char * kind,
  std::vector<Pointer> & out)
{
  out.assign(joints.size(), nullptr);
  for (auto & interface : loaned) {
    if (interface.get_interface_name() != kind) {
      continue;
    }
    const auto at = std::find(joints.begin(), joints.end(), interface.get_prefix_name());
    if (at != joints.end()) {
      out[static_cast<std::size_t>(at - joints.begin())] = &interface;
    }
  }
  return std::find(out.begin(), out.end(), nullptr) == out.end();
}

bool to_armctl(
  const rclcpp::ParameterValue & value, ArmctlParameterType declared, OwnedValue & out,
  std::string & why);
rclcpp::ParameterValue to_ros(const ArmctlValue & value);
rcl_interfaces::msg::ParameterDescriptor descriptor(const ArmctlParameterInfo & info);
bool match_joints(
  const std::vector<std::string> & names, const std::vector<std::string> & joints,
  std::vector<std::size_t> & column, std::string & why);
bool reorder(
  const std::vector<double> & from, const std::vector<std::size_t> & column, double * to);
std::shared_ptr<PendingTrajectory> to_controller_order(
  const trajectory_msgs::msg::JointTrajectory & msg, const std::vector<std::string> & joints,
  std::string & why);
rcl_interfaces::msg::SetParametersResult refused(const std::string & reason);
rcl_interfaces::msg::SetParametersResult accepted();
}  // namespace armctl_controllers::detail

#endif  // ARMCTL_CONTROLLERS__SRC__CONVERSIONS_HPP_
