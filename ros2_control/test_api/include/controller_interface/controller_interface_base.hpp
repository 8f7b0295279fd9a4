// Stand-in. Real: controller_interface/controller_interface_base.hpp
// (ros-controls/ros2_control). Humble: the 2.x line, read at 718f90c1. Jazzy: the 4.x line,
// read at 00228c46. Differences that matter to the plugin: get_robot_description() exists only
// in Jazzy (Humble's init() takes no URDF); get_node() const returns a pointer to a const node in
// Jazzy; define_custom_node_options() (the controller's node options, which the controller
// manager starts from) exists only in Jazzy: Humble's init() takes the options, by default
// allowing undeclared names and declaring the overrides at once. Members the plugin does not
// touch (init, configure, chained-mode exports, async trigger) are left out; standin_init()
// stands for the controller manager's loading and init() in the harness.
#ifndef CONTROLLER_INTERFACE__CONTROLLER_INTERFACE_BASE_HPP_
#define CONTROLLER_INTERFACE__CONTROLLER_INTERFACE_BASE_HPP_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hardware_interface/loaned_command_interface.hpp"
#include "hardware_interface/loaned_state_interface.hpp"
#include "rclcpp/rclcpp.hpp"
#include "rclcpp_lifecycle/lifecycle_node.hpp"

namespace controller_interface
{
using CallbackReturn = rclcpp_lifecycle::node_interfaces::LifecycleNodeInterface::CallbackReturn;

enum class return_type : std::uint8_t
{
  OK = 0,
  ERROR = 1,
};

enum class interface_configuration_type : std::uint8_t
{
  ALL = 0,
  INDIVIDUAL = 1,
  NONE = 2,
};

struct InterfaceConfiguration
{
  interface_configuration_type type;
  std::vector<std::string> names = {};
};

class ControllerInterfaceBase : public rclcpp_lifecycle::node_interfaces::LifecycleNodeInterface
{
public:
  ControllerInterfaceBase() = default;
  virtual ~ControllerInterfaceBase() = default;

  virtual InterfaceConfiguration command_interface_configuration() const = 0;
  virtual InterfaceConfiguration state_interface_configuration() const = 0;
  virtual CallbackReturn on_init() = 0;
  virtual return_type update(const rclcpp::Time & time, const rclcpp::Duration & period) = 0;

  std::shared_ptr<rclcpp_lifecycle::LifecycleNode> get_node() { return node_; }
#ifdef ARMCTL_ROS_DISTRO_JAZZY
  std::shared_ptr<const rclcpp_lifecycle::LifecycleNode> get_node() const { return node_; }
  const std::string & get_robot_description() const { return urdf_; }
#else
  std::shared_ptr<rclcpp_lifecycle::LifecycleNode> get_node() const { return node_; }
#endif
  unsigned int get_update_rate() const { return 0; }

#ifdef ARMCTL_ROS_DISTRO_JAZZY
  // Real (Jazzy), its rclcpp >= 21 branch.
  virtual rclcpp::NodeOptions define_custom_node_options() const
  {
    rclcpp::NodeOptions node_options;
    node_options.enable_logger_service(true);
    return node_options;
  }
#endif

  // Real (both distributions): what the controller manager hands over on activation, and takes
  // back on deactivation.
  void assign_interfaces(
    std::vector<hardware_interface::LoanedCommandInterface> && command_interfaces,
    std::vector<hardware_interface::LoanedStateInterface> && state_interfaces)
  {
    command_interfaces_ = std::move(command_interfaces);
    state_interfaces_ = std::move(state_interfaces);
  }
  void release_interfaces()
  {
    command_interfaces_.clear();
    state_interfaces_.clear();
  }

  // Not ros2_control: what the controller manager does to load a controller with the
  // parameters of its YAML, and init(). Humble: the controller manager calls init() with its
  // default node options (undeclared names allowed, the YAML's declared at once). Jazzy: it
  // starts from define_custom_node_options() and adds the YAML (as a params file), and init()
  // gets the robot description. init() then creates the node, declares update_rate and (Jazzy,
  // Humble's later 2.x) is_async with auto_declare, and runs on_init().
  CallbackReturn standin_init(
    const std::string & urdf, const std::map<std::string, rclcpp::ParameterValue> & parameters)
  {
    std::vector<rclcpp::Parameter> overrides;
    for (const auto & entry : parameters) {
      overrides.emplace_back(entry.first, entry.second);
    }
#ifdef ARMCTL_ROS_DISTRO_JAZZY
    urdf_ = urdf;
    rclcpp::NodeOptions options = define_custom_node_options();
#else
    (void)urdf;
    rclcpp::NodeOptions options = rclcpp::NodeOptions()
                                    .allow_undeclared_parameters(true)
                                    .automatically_declare_parameters_from_overrides(true);
#endif
    options.parameter_overrides(overrides);
    node_ = std::make_shared<rclcpp_lifecycle::LifecycleNode>("controller", "", options, false);
    const auto auto_declare = [this](const std::string & name, const rclcpp::ParameterValue & v) {
      if (!node_->has_parameter(name)) {
        node_->declare_parameter(name, v);
      }
    };
    auto_declare("update_rate", rclcpp::ParameterValue(int64_t{0}));
    auto_declare("is_async", rclcpp::ParameterValue(false));
    return on_init();
  }

  virtual bool is_chainable() const = 0;
  virtual bool set_chained_mode(bool chained_mode) = 0;
  virtual bool is_in_chained_mode() const = 0;

protected:
  std::vector<hardware_interface::LoanedCommandInterface> command_interfaces_;
  std::vector<hardware_interface::LoanedStateInterface> state_interfaces_;

private:
  std::shared_ptr<rclcpp_lifecycle::LifecycleNode> node_;
#ifdef ARMCTL_ROS_DISTRO_JAZZY
  std::string urdf_;
#endif
};
}  // namespace controller_interface

#endif  // CONTROLLER_INTERFACE__CONTROLLER_INTERFACE_BASE_HPP_
