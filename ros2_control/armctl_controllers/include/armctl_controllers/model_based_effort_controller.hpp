// armctl_controllers/ModelBasedEffortController: armctl's controller runtime (include/armctl.h)
// inside the controller_manager's real-time loop. Thread rules: see crates/capi/src/lib.rs.
#ifndef ARMCTL_CONTROLLERS__MODEL_BASED_EFFORT_CONTROLLER_HPP_
#define ARMCTL_CONTROLLERS__MODEL_BASED_EFFORT_CONTROLLER_HPP_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "armctl.h"
#include "controller_interface/controller_interface.hpp"
#include "geometry_msgs/msg/pose_stamped.hpp"
#include "geometry_msgs/msg/wrench_stamped.hpp"
#include "hardware_interface/loaned_command_interface.hpp"
#include "hardware_interface/loaned_state_interface.hpp"
#include "rclcpp/rclcpp.hpp"
#include "rclcpp_lifecycle/lifecycle_node.hpp"
#include "sensor_msgs/msg/joint_state.hpp"
#include "trajectory_msgs/msg/joint_trajectory.hpp"
// realtime_tools renamed its headers to .hpp (Jazzy's later releases; Humble's since 2.10), the
// .h becoming a deprecated forwarder; older installs of either have only the .h.
#if __has_include("realtime_tools/realtime_buffer.hpp")
#include "realtime_tools/realtime_buffer.hpp"
#else
#include "realtime_tools/realtime_buffer.h"
#endif
#if __has_include("realtime_tools/realtime_publisher.hpp")
#include "realtime_tools/realtime_publisher.hpp"
#else
#include "realtime_tools/realtime_publisher.h"
#endif

namespace armctl_controllers
{
/// A parameter value in armctl's C form that owns what its pointers point to. seal() sets the
/// string pointers once the value sits where it stays; view() then only reads, so the
/// real-time thread can pass it to armctl without allocating.
struct OwnedValue
{
  ArmctlParameterType kind = ARMCTL_PARAMETER_TYPE_DOUBLE;
  bool boolean = false;
  int64_t integer = 0;
  double number = 0.0;
  std::string text;
  std::vector<double> numbers;
  std::vector<std::string> texts;
  std::vector<const char *> pointers;

  void seal();
  ArmctlValue view() const;
};

/// A JointTrajectory in the controller's joint order, ready for armctl_set_trajectory. Built
/// once in a subscriber callback and never changed, so `points` may point into it.
struct PendingTrajectory
{
  uint64_t sequence = 0;
  double stamp = 0.0;  // s, the header's; 0 starts the trajectory when update() takes it
  std::vector<double> times, positions, velocities, accelerations;  // point-major
  std::vector<ArmctlTrajectoryPoint> points;
};

/// What the parameter callback accepted: the newest value of every parameter changed so far,
/// each with the sequence number of its change. A newer snapshot carries the older changes
/// too, so none is lost when update() skips a snapshot.
struct PendingParameters
{
  struct Change
  {
    std::string name;
    uint64_t sequence = 0;
    OwnedValue value;
  };
  uint64_t sequence = 0;
  std::vector<Change> changes;
};

/// A message's frame_id, NUL-terminated, in a fixed array: copied between threads without
/// allocating. Longer names are refused when the message arrives.
using FrameName = std::array<char, 128>;

struct PendingPose
{
  uint64_t sequence = 0;
  FrameName frame{};
  std::array<double, 3> position{};
  std::array<double, 4> orientation{};  // x, y, z, w
};

struct PendingWrench
{
  uint64_t sequence = 0;
  FrameName frame{};
  std::array<double, 6> wrench{};  // force, torque
};

/// Log lines from the real-time thread to a non-real-time timer: fixed slots, one producer,
/// one consumer, no lock, no allocation. A full ring drops the line and counts it.
class LogRing
{
public:
  static constexpr std::size_t kSlots = 16;
  // A collision's line with its hints runs to about 520 characters (a long joint name more).
  static constexpr std::size_t kLength = 1024;

  void push(bool warning, const char * prefix, const char * text);
  bool pop(bool & warning, std::string & text);
  uint64_t take_dropped() { return dropped_.exchange(0); }

private:
  struct Slot
  {
    bool warning = false;
    char text[kLength] = {};
  };
  std::array<Slot, kSlots> slots_{};
  std::atomic<std::size_t> head_{0};  // next slot to write
  std::atomic<std::size_t> tail_{0};  // next slot to read
  std::atomic<uint64_t> dropped_{0};
};

/// One parameter as armctl declares it.
struct ParameterSpec
{
  std::string name;
  ArmctlParameterType kind = ARMCTL_PARAMETER_TYPE_DOUBLE;
  ArmctlParameterScope scope = ARMCTL_PARAMETER_SCOPE_RUNTIME;
};

class ModelBasedEffortController : public controller_interface::ControllerInterface
{
public:
  ModelBasedEffortController() = default;
  ~ModelBasedEffortController() override;

  controller_interface::CallbackReturn on_init() override;
  controller_interface::InterfaceConfiguration command_interface_configuration() const override;
  controller_interface::InterfaceConfiguration state_interface_configuration() const override;
  controller_interface::CallbackReturn on_configure(
    const rclcpp_lifecycle::State & previous_state) override;
  controller_interface::CallbackReturn on_activate(
    const rclcpp_lifecycle::State & previous_state) override;
  controller_interface::CallbackReturn on_deactivate(
    const rclcpp_lifecycle::State & previous_state) override;
  controller_interface::CallbackReturn on_cleanup(
    const rclcpp_lifecycle::State & previous_state) override;
  controller_interface::return_type update(
    const rclcpp::Time & time, const rclcpp::Duration & period) override;
#ifdef ARMCTL_ROS_DISTRO_JAZZY
  rclcpp::NodeOptions define_custom_node_options() const override;
#endif

private:
  // on_configure (non-real-time).
  controller_interface::CallbackReturn configure_armctl();
  void set_configured(bool configured);
  bool read_settings();
  std::string robot_description();
  ArmctlController * create(
    const std::string & urdf, const std::vector<std::string> & names,
    const std::vector<OwnedValue> & values);
  bool create_handles(const std::string & urdf);
  bool unchecked_names_known(ArmctlController * probe);
  bool start_values(std::vector<std::string> & names, std::vector<OwnedValue> & values);
  void declare_parameters();
  void declare_unchecked(
    const std::string & name, const rclcpp::ParameterValue & value,
    const rcl_interfaces::msg::ParameterDescriptor & descriptor);
  void set_declaring(const rclcpp::Parameter & parameter);
  void warn_unknown_overrides();
  void start_interfaces();
  void free_handles();
  const ParameterSpec * spec(const std::string & name) const;

  // Callbacks of the controller's node (non-real-time).
  void restore(const std::vector<std::pair<std::string, OwnedValue>> & previous);
  std::string not_settable(const rclcpp::Parameter & parameter) const;
  std::string unknown(ArmctlController * handle, const std::string & name) const;
  rcl_interfaces::msg::SetParametersResult apply_to_shadow(
    const std::vector<rclcpp::Parameter> & parameters);
  template <typename Body>
  void guarded(const char * what, Body && body);
  rcl_interfaces::msg::SetParametersResult on_parameters(
    const std::vector<rclcpp::Parameter> & parameters);
  void publish_parameters();
  void on_trajectory(const trajectory_msgs::msg::JointTrajectory & msg);
  void on_target_pose(const geometry_msgs::msg::PoseStamped & msg);
  void on_wrench(const geometry_msgs::msg::WrenchStamped & msg);
  bool copy_frame(const std::string & frame_id, FrameName & frame, const char * what);
  void flush_log();

  // update() (real-time).
  void read_states();
  void write_efforts();
  void apply_parameters();
  void apply_references(double now);
  void fail_safe(const char * what);
  void publish_estimates(const rclcpp::Time & time);
  void publish_efforts(
    realtime_tools::RealtimePublisher<sensor_msgs::msg::JointState> * publisher,
    const builtin_interfaces::msg::Time & stamp,
    ArmctlStatus (*fill)(ArmctlController *, double *));

  std::vector<std::string> joints_;
  std::string controller_, base_link_, tip_link_;
  std::vector<ParameterSpec> specs_;

  // Used by the real-time thread while active, by lifecycle transitions otherwise.
  ArmctlController * handle_ = nullptr;
  // Same configuration, used only by the parameter callback: armctl_validate_parameter takes a
  // handle, and a handle is used by one thread at a time (lib.rs), so it cannot be handle_.
  ArmctlController * shadow_ = nullptr;
  // shadow_, accepted_, parameter_sequence_, configured_, declaring_, unchecked_
  std::mutex shadow_mutex_;
  std::map<std::string, PendingParameters::Change> accepted_;
  uint64_t parameter_sequence_ = 0;
  bool configured_ = false;  // from on_configure's start to on_cleanup (ArmctlConfig's are fixed)
  rclcpp::Parameter declaring_;  // what declare_parameters() is declaring: armctl's own value
  // Names other than ArmctlConfig's and the manager's set before configure (no handle to check
  // them with): stored as set, checked by the next configure, which fails on a refusal.
  std::set<std::string> unchecked_;

  realtime_tools::RealtimeBuffer<std::shared_ptr<const PendingParameters>> parameter_buffer_;
  realtime_tools::RealtimeBuffer<std::shared_ptr<const PendingTrajectory>> trajectory_buffer_;
  realtime_tools::RealtimeBuffer<PendingPose> pose_buffer_;
  realtime_tools::RealtimeBuffer<PendingWrench> wrench_buffer_;
  std::atomic<uint64_t> trajectory_sequence_{0}, pose_sequence_{0}, wrench_sequence_{0};
  // What update() applied last (real-time thread only).
  uint64_t applied_parameters_ = 0, applied_trajectory_ = 0, applied_pose_ = 0,
           applied_wrench_ = 0;

  std::vector<double> positions_, velocities_, efforts_;
  // One per joint: 0 when its state interfaces could not be read this cycle.
  std::vector<uint8_t> readable_;
  std::vector<hardware_interface::LoanedCommandInterface *> effort_interfaces_;
  std::vector<const hardware_interface::LoanedStateInterface *> position_interfaces_,
    velocity_interfaces_;
  std::atomic<bool> active_{false};
  bool failed_ = false;
  std::string refused_frame_;  // subscriber callbacks only
  FrameName refused_wrench_frame_{};  // update() only: a refused wrench frame is said once
  std::atomic<uint64_t> failed_writes_{0};
  LogRing log_;

  rclcpp::Subscription<trajectory_msgs::msg::JointTrajectory>::SharedPtr trajectory_subscription_;
  rclcpp::Subscription<geometry_msgs::msg::PoseStamped>::SharedPtr pose_subscription_;
  rclcpp::Subscription<geometry_msgs::msg::WrenchStamped>::SharedPtr wrench_subscription_;
  rclcpp::node_interfaces::OnSetParametersCallbackHandle::SharedPtr parameter_callback_;
  rclcpp::TimerBase::SharedPtr log_timer_;
  // ~/external_torques, ~/external_torque_bounds and ~/external_wrench_estimate, as
  // controller_node publishes them: the messages are sized at configuration, so update() only
  // copies numbers into them.
  std::unique_ptr<realtime_tools::RealtimePublisher<sensor_msgs::msg::JointState>>
    external_torques_publisher_;
  std::unique_ptr<realtime_tools::RealtimePublisher<sensor_msgs::msg::JointState>>
    external_torque_bounds_publisher_;
  std::unique_ptr<realtime_tools::RealtimePublisher<geometry_msgs::msg::WrenchStamped>>
    external_wrench_publisher_;
};
}  // namespace armctl_controllers

#endif  // ARMCTL_CONTROLLERS__MODEL_BASED_EFFORT_CONTROLLER_HPP_
