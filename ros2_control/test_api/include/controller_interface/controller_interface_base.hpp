// Stand-in. Real: controller_interface/controller_interface_base.hpp
// (ros-controls/ros2_control). Humble: the 2.x line, read at 718f90c1. Jazzy: the 4.x line,
// read at 00228c46. Differences that matter to the plugin: get_robot_description() exists only
// in Jazzy (Humble's init() takes no URDF); get_node() const returns a pointer to a const node in
// Jazzy. Members the plugin does not touch (init, configure, chained-mode exports, async
// trigger) are left out; standin_init() stands for init() in the harness.
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

  // Not ros2_control: what the controller manager's init() does, for the harness. It creates the
  // node with the parameters of the controller's YAML (Humble's node declares them all at
  // once; Jazzy's keeps them as overrides and gets the robot description), then runs on_init().
  CallbackReturn standin_init(
    const std::string & urdf, const std::map<std::string, rclcpp::ParameterValue> & parameters)
  {
    node_ = std::make_shared<rclcpp_lifecycle::LifecycleNode>();
#ifdef ARMCTL_ROS_DISTRO_JAZZY
    urdf_ = urdf;
    node_->standin_set_overrides(parameters, false);
#else
    (void)urdf;
    node_->standin_set_overrides(parameters, true);
#endif
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
