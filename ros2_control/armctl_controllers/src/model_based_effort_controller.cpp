// The ros2_control controller plugin's lifecycle, its real-time update() and the log ring; the
// parameters, references and conversions are in the files beside this one.
#include "armctl_controllers/model_based_effort_controller.hpp"

#include <chrono>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "conversions.hpp"
#include "hardware_interface/types/hardware_interface_type_values.hpp"
#include "pluginlib/class_list_macros.hpp"

namespace armctl_controllers
{
namespace
{
using controller_interface::CallbackReturn;
using controller_interface::interface_configuration_type;
using controller_interface::return_type;
}  // namespace

using detail::by_joint;
using detail::descriptor;
using detail::read_value;
using detail::to_ros;
using detail::write_value;

void LogRing::push(bool warning, const char * prefix, const char * text)
{
  const std::size_t head = head_.load(std::memory_order_relaxed);
  const std::size_t next = (head + 1) % kSlots;
  if (next == tail_.load(std::memory_order_acquire)) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  Slot & slot = slots_[head];
  slot.warning = warning;
  std::size_t n = 0;
  for (const char * part : {prefix, text}) {
    for (; part && *part && n + 1 < kLength; ++part) {
      slot.text[n++] = *part;
    }
  }
  slot.text[n] = '\0';
  head_.store(next, std::memory_order_release);
}

bool LogRing::pop(bool & warning, std::string & text)
{
  const std::size_t tail = tail_.load(std::memory_order_relaxed);
  if (tail == head_.load(std::memory_order_acquire)) {
    return false;
  }
  warning = slots_[tail].warning;
  text = slots_[tail].text;
  tail_.store((tail + 1) % kSlots, std::memory_order_release);
  return true;
}

ModelBasedEffortController::~ModelBasedEffortController()
{
  if (parameter_callback_) {
    try {
      // Waits for a call running on an executor thread: it uses this object's members.
      get_node()->remove_on_set_parameters_callback(parameter_callback_.get());
    } catch (...) {
    }
  }
  free_handles();
}

#ifdef ARMCTL_ROS_DISTRO_JAZZY
// Jazzy's controller nodes refuse an undeclared name in rclcpp, with its text; allowed, the
// name reaches on_parameters(): while configured it refuses every name armctl does not take
// with armctl's reason (nothing unknown is stored); before configure it stores armctl's names
// unchecked and the configure refuses a bad one with armctl's reason. Humble's controller
// manager allows undeclared names already.
rclcpp::NodeOptions ModelBasedEffortController::define_custom_node_options() const
{
  return ControllerInterface::define_custom_node_options().allow_undeclared_parameters(true);
}
#endif

CallbackReturn ModelBasedEffortController::on_init()
{
  try {
    // The parameters ArmctlConfig's fields give, as armctl declares them (no handle yet: the
    // joints to claim and the law come from them).
    auto node = get_node();
    if (armctl_config_parameter_count() == 0) {
      RCLCPP_ERROR(node->get_logger(), "armctl lists no configuration parameters (a bug)");
      return CallbackReturn::ERROR;
    }
    ArmctlParameterInfo info;
    for (std::size_t k = 0; k < armctl_config_parameter_count(); ++k) {
      if (armctl_config_parameter_info(k, &info) != ARMCTL_STATUS_OK) {
        RCLCPP_ERROR(node->get_logger(), "armctl lists no configuration parameter %zu", k);
        return CallbackReturn::ERROR;
      }
      if (!node->has_parameter(info.name)) {  // Humble declares those the YAML gives first
        node->declare_parameter(info.name, to_ros(info.value), descriptor(info));
      }
    }
    // From here on every set reaches armctl's checks, before configure too (rclcpp's own
    // checks refuse nothing of armctl's: the descriptors hold no range, type or read-only flag).
    parameter_callback_ = node->add_on_set_parameters_callback(
      [this](const std::vector<rclcpp::Parameter> & parameters) {
        return on_parameters(parameters);
      });
  } catch (const std::exception & e) {
    RCLCPP_ERROR(get_node()->get_logger(), "declaring parameters: %s", e.what());
    return CallbackReturn::ERROR;
  }
  return CallbackReturn::SUCCESS;
}

controller_interface::InterfaceConfiguration
ModelBasedEffortController::command_interface_configuration() const
{
  controller_interface::InterfaceConfiguration config{interface_configuration_type::INDIVIDUAL, {}};
  for (const auto & joint : joints_) {
    config.names.push_back(joint + "/" + hardware_interface::HW_IF_EFFORT);
  }
  return config;
}

controller_interface::InterfaceConfiguration
ModelBasedEffortController::state_interface_configuration() const
{
  controller_interface::InterfaceConfiguration config{interface_configuration_type::INDIVIDUAL, {}};
  for (const auto & joint : joints_) {
    config.names.push_back(joint + "/" + hardware_interface::HW_IF_POSITION);
    config.names.push_back(joint + "/" + hardware_interface::HW_IF_VELOCITY);
  }
  return config;
}

CallbackReturn ModelBasedEffortController::on_configure(const rclcpp_lifecycle::State &)
{
  set_configured(true);  // ArmctlConfig's parameters are read now: fixed from here
  const CallbackReturn result = configure_armctl();
  std::lock_guard<std::mutex> lock(shadow_mutex_);
  if (result == CallbackReturn::SUCCESS) {
    unchecked_.clear();  // armctl took them at creation
  } else {
    configured_ = false;  // what was set before stays stored, to be checked by the next one
  }
  return result;
}

void ModelBasedEffortController::set_configured(bool configured)
{
  std::lock_guard<std::mutex> lock(shadow_mutex_);
  configured_ = configured;
}

CallbackReturn ModelBasedEffortController::configure_armctl()
{
  try {
    if (!read_settings()) {
      return CallbackReturn::FAILURE;
    }
    const std::string urdf = robot_description();
    if (urdf.empty()) {
      RCLCPP_ERROR(
        get_node()->get_logger(),
        "no robot description: the controller_manager has none and 'robot_description' is empty");
      return CallbackReturn::FAILURE;
    }
    if (!create_handles(urdf)) {
      return CallbackReturn::FAILURE;
    }
    declare_parameters();
    warn_unknown_overrides();
    start_interfaces();
  } catch (const std::exception & e) {
    RCLCPP_ERROR(get_node()->get_logger(), "configuring: %s", e.what());
    free_handles();
    return CallbackReturn::FAILURE;  // stays unconfigured (ERROR would finalize the node)
  }
  return CallbackReturn::SUCCESS;
}

bool ModelBasedEffortController::read_settings()
{
  auto node = get_node();
  joints_ = node->get_parameter("joints").as_string_array();
  controller_ = node->get_parameter("controller").as_string();
  base_link_ = node->get_parameter("base_link").as_string();
  tip_link_ = node->get_parameter("tip_link").as_string();
  if (joints_.empty()) {
    // armctl could default to the chain's joints, but the C API does not name them, and the
    // interfaces to claim must be known here.
    RCLCPP_ERROR(node->get_logger(), "'joints' is empty: list the chain's joints");
    return false;
  }
  return true;
}

std::string ModelBasedEffortController::robot_description()
{
#ifdef ARMCTL_ROS_DISTRO_JAZZY
  if (!get_robot_description().empty()) {
    return get_robot_description();
  }
#endif
  return get_node()->get_parameter("robot_description").as_string();
}

ArmctlController * ModelBasedEffortController::create(
  const std::string & urdf, const std::vector<std::string> & names,
  const std::vector<OwnedValue> & values)
{
  std::vector<const char *> joints;
  for (const auto & joint : joints_) {
    joints.push_back(joint.c_str());
  }
  std::vector<ArmctlNamedValue> start;
  for (std::size_t k = 0; k < names.size(); ++k) {
    start.push_back(ArmctlNamedValue{names[k].c_str(), values[k].view()});
  }
  const ArmctlConfig config{
    urdf.c_str(),   base_link_.c_str(),  tip_link_.c_str(), joints.data(),
    joints.size(), controller_.c_str(), start.data(),      start.size()};
  ArmctlController * handle = nullptr;
  char error[1024] = {};
  if (armctl_create(&config, &handle, error, sizeof(error)) != ARMCTL_STATUS_OK) {
    RCLCPP_ERROR(get_node()->get_logger(), "armctl refused the configuration: %s", error);
    return nullptr;
  }
  return handle;
}

// The start values need armctl's parameter list, which needs a handle: a first handle without
// them gives the list, then the two handles are created with them.
bool ModelBasedEffortController::create_handles(const std::string & urdf)
{
  free_handles();
  ArmctlController * probe = create(urdf, {}, {});
  if (!probe) {
    return false;
  }
  std::vector<ParameterSpec> specs;
  ArmctlParameterInfo info;
  for (std::size_t k = 0; k < armctl_parameter_count(probe); ++k) {
    if (armctl_parameter_info(probe, k, &info) == ARMCTL_STATUS_OK) {
      specs.push_back(ParameterSpec{info.name, info.kind, info.scope});
    }
  }
  {
    std::lock_guard<std::mutex> lock(shadow_mutex_);  // the parameter callback reads specs_
    specs_ = std::move(specs);
  }
  const bool known = unchecked_names_known(probe);
  armctl_free(probe);
  if (!known) {
    return false;
  }
  // The values set before configure are among these; armctl_create checks them all and
  // refuses with the first bad one's reason, naming it.
  std::vector<std::string> names;
  std::vector<OwnedValue> values;
  if (!start_values(names, values)) {
    return false;
  }
  handle_ = create(urdf, names, values);
  shadow_ = handle_ ? create(urdf, names, values) : nullptr;  // a refusal is logged once
  if (!handle_ || !shadow_) {
    free_handles();
    return false;
  }
  return true;
}

void ModelBasedEffortController::start_interfaces()
{
  const std::size_t n = joints_.size();
  positions_.assign(n, 0.0);
  readable_.assign(n, 1);
  velocities_.assign(n, 0.0);
  efforts_.assign(n, 0.0);
  {
    std::lock_guard<std::mutex> lock(shadow_mutex_);
    accepted_.clear();
    parameter_sequence_ = 0;
  }
  // update() does not run before activation: nothing reads the buffers now.
  parameter_buffer_.initRT(nullptr);
  trajectory_buffer_.initRT(nullptr);
  pose_buffer_.initRT(PendingPose{});
  wrench_buffer_.initRT(PendingWrench{});
  applied_parameters_ = applied_trajectory_ = applied_pose_ = applied_wrench_ = 0;
  trajectory_sequence_ = pose_sequence_ = wrench_sequence_ = 0;

  auto node = get_node();
  const rclcpp::QoS qos(10);
  // An exception out of a callback would end the controller_manager's executor, and with it
  // the control loop: each is caught and logged.
  trajectory_subscription_ = node->create_subscription<trajectory_msgs::msg::JointTrajectory>(
    "~/joint_trajectory", qos, [this](const trajectory_msgs::msg::JointTrajectory & msg) {
      guarded("joint trajectory", [&] { on_trajectory(msg); });
    });
  pose_subscription_ = node->create_subscription<geometry_msgs::msg::PoseStamped>(
    "~/target_pose", qos, [this](const geometry_msgs::msg::PoseStamped & msg) {
      guarded("target pose", [&] { on_target_pose(msg); });
    });
  wrench_subscription_ = node->create_subscription<geometry_msgs::msg::WrenchStamped>(
    "~/external_wrench", qos, [this](const geometry_msgs::msg::WrenchStamped & msg) {
      guarded("external wrench", [&] { on_wrench(msg); });
    });
  external_torques_publisher_ =
    std::make_unique<realtime_tools::RealtimePublisher<sensor_msgs::msg::JointState>>(
      node->create_publisher<sensor_msgs::msg::JointState>("~/external_torques", qos));
  external_torques_publisher_->msg_.name = joints_;
  external_torques_publisher_->msg_.effort.assign(joints_.size(), 0.0);
  external_torque_bounds_publisher_ =
    std::make_unique<realtime_tools::RealtimePublisher<sensor_msgs::msg::JointState>>(
      node->create_publisher<sensor_msgs::msg::JointState>("~/external_torque_bounds", qos));
  external_torque_bounds_publisher_->msg_.name = joints_;
  external_torque_bounds_publisher_->msg_.effort.assign(joints_.size(), 0.0);
  external_wrench_publisher_ =
    std::make_unique<realtime_tools::RealtimePublisher<geometry_msgs::msg::WrenchStamped>>(
      node->create_publisher<geometry_msgs::msg::WrenchStamped>("~/external_wrench_estimate", qos));
  external_wrench_publisher_->msg_.header.frame_id = armctl_tip_link(handle_);
  log_timer_ = node->create_wall_timer(
    std::chrono::milliseconds(50), [this]() { guarded("logging", [&] { flush_log(); }); });
}

template <typename Body>
void ModelBasedEffortController::guarded(const char * what, Body && body)
{
  try {
    body();
  } catch (const std::exception & e) {
    RCLCPP_ERROR(get_node()->get_logger(), "%s dropped: %s", what, e.what());
  } catch (...) {
    RCLCPP_ERROR(get_node()->get_logger(), "%s dropped: an unknown exception", what);
  }
}

void ModelBasedEffortController::free_handles()
{
  std::lock_guard<std::mutex> lock(shadow_mutex_);
  armctl_free(handle_);
  armctl_free(shadow_);
  handle_ = shadow_ = nullptr;
}

CallbackReturn ModelBasedEffortController::on_activate(const rclcpp_lifecycle::State &)
{
  if (
    !by_joint(command_interfaces_, joints_, hardware_interface::HW_IF_EFFORT, effort_interfaces_) ||
    !by_joint(state_interfaces_, joints_, hardware_interface::HW_IF_POSITION, position_interfaces_) ||
    !by_joint(state_interfaces_, joints_, hardware_interface::HW_IF_VELOCITY, velocity_interfaces_)) {
    RCLCPP_ERROR(get_node()->get_logger(), "a joint's effort, position or velocity interface is missing");
    return CallbackReturn::FAILURE;  // stays inactive (ERROR would finalize the node)
  }
  // Holds where the arm is at the first update, as at creation.
  if (armctl_reset(handle_) != ARMCTL_STATUS_OK) {
    RCLCPP_ERROR(get_node()->get_logger(), "armctl_reset: %s", armctl_last_error(handle_));
    return CallbackReturn::FAILURE;
  }
  // References that arrived before activation belong to the previous run.
  const auto & trajectory = *trajectory_buffer_.readFromRT();
  applied_trajectory_ = trajectory ? trajectory->sequence : 0;
  applied_pose_ = pose_buffer_.readFromRT()->sequence;
  applied_wrench_ = wrench_buffer_.readFromRT()->sequence;
  failed_ = false;
  active_ = true;
  return CallbackReturn::SUCCESS;
}

// The last command the hardware gets from this controller (it keeps it after the release):
// the safe_mode hold at the last valid configuration, once.
CallbackReturn ModelBasedEffortController::on_deactivate(const rclcpp_lifecycle::State &)
{
  active_ = false;
  if (effort_interfaces_.size() == joints_.size()) {
    armctl_safe_command(handle_, efforts_.data());
    write_efforts();
    log_.push(false, "deactivated: wrote the safe_mode command once", "");
  }
  effort_interfaces_.clear();
  position_interfaces_.clear();
  velocity_interfaces_.clear();
  return CallbackReturn::SUCCESS;
}

CallbackReturn ModelBasedEffortController::on_cleanup(const rclcpp_lifecycle::State &)
{
  trajectory_subscription_.reset();
  pose_subscription_.reset();
  wrench_subscription_.reset();
  external_torques_publisher_.reset();
  external_torque_bounds_publisher_.reset();
  external_wrench_publisher_.reset();
  // What update() queued since the timer last ran (deactivation's line, often) is not lost.
  guarded("logging", [&] { flush_log(); });
  log_timer_.reset();
  free_handles();  // waits for the parameter callback; unconfigured, it stores armctl's names
  set_configured(false);
  return CallbackReturn::SUCCESS;
}

// Real-time: no allocation, no blocking (the buffers only try their lock), except what the C
// API allows between two updates (applying a parameter or a reference copies it); an
// incident's text is formatted into a stack buffer (armctl_fault_text allocates nothing).
return_type ModelBasedEffortController::update(
  const rclcpp::Time & time, const rclcpp::Duration & period)
{
  if (failed_ || effort_interfaces_.size() != joints_.size()) {
    return return_type::ERROR;
  }
  const double now = time.seconds();
  read_states();
  ArmctlUpdateStatus status{};
  const ArmctlStatus result = armctl_update_partial(
    handle_, now, period.seconds(), positions_.data(), velocities_.data(), readable_.data(),
    efforts_.data(), &status);
  if (result != ARMCTL_STATUS_OK) {
    fail_safe("armctl_update failed: ");
    return return_type::ERROR;
  }
  write_efforts();
  publish_estimates(time);
  if (status.changed) {
    char text[LogRing::kLength];
    armctl_fault_text(handle_, text, sizeof text);
    log_.push(status.holding, "", text);
  }
  // Between this update and the next, as the thread rules ask; a trajectory is refused before
  // the first valid state, which the update above may just have given.
  apply_parameters();
  apply_references(now);
  return return_type::OK;
}

// Per joint values `fill` writes (an estimate or its bounds) on `publisher`, if the publishing
// thread has taken its last message.
void ModelBasedEffortController::publish_efforts(
  realtime_tools::RealtimePublisher<sensor_msgs::msg::JointState> * publisher,
  const builtin_interfaces::msg::Time & stamp,
  ArmctlStatus (*fill)(ArmctlController *, double *))
{
  if (publisher == nullptr || !publisher->trylock()) {
    return;
  }
  publisher->msg_.header.stamp = stamp;
  if (fill(handle_, publisher->msg_.effort.data()) == ARMCTL_STATUS_OK) {
    publisher->unlockAndPublish();
  } else {
    publisher->unlock();
  }
}

// The external torque estimate, its bounds and its tip wrench, at every update whose message the
// publishing thread has taken (trylock never blocks; a busy publisher skips the update).
void ModelBasedEffortController::publish_estimates(const rclcpp::Time & time)
{
  builtin_interfaces::msg::Time stamp;
  const int64_t ns = time.nanoseconds();
  stamp.sec = static_cast<int32_t>(ns / 1000000000LL);
  stamp.nanosec = static_cast<uint32_t>(ns % 1000000000LL);
  publish_efforts(external_torques_publisher_.get(), stamp, armctl_external_torques);
  publish_efforts(external_torque_bounds_publisher_.get(), stamp, armctl_external_torque_bounds);
  double wrench[6];
  if (
    external_wrench_publisher_ && armctl_external_wrench(handle_, wrench) == ARMCTL_STATUS_OK &&
    external_wrench_publisher_->trylock()) {
    auto & msg = external_wrench_publisher_->msg_;
    msg.header.stamp = stamp;
    msg.wrench.force.x = wrench[0];
    msg.wrench.force.y = wrench[1];
    msg.wrench.force.z = wrench[2];
    msg.wrench.torque.x = wrench[3];
    msg.wrench.torque.y = wrench[4];
    msg.wrench.torque.z = wrench[5];
    external_wrench_publisher_->unlockAndPublish();
  }
}

void ModelBasedEffortController::read_states()
{
  for (std::size_t j = 0; j < joints_.size(); ++j) {
    const bool position = read_value(*position_interfaces_[j], positions_[j]);
    const bool velocity = read_value(*velocity_interfaces_[j], velocities_[j]);
    readable_[j] = position && velocity ? 1 : 0;
  }
}

void ModelBasedEffortController::write_efforts()
{
  for (std::size_t j = 0; j < joints_.size(); ++j) {
    if (!write_value(*effort_interfaces_[j], efforts_[j])) {
      failed_writes_.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

// After a panic armctl refuses everything but the safe command, which still tries the gravity
// hold (zero efforts if that fails too).
void ModelBasedEffortController::fail_safe(const char * what)
{
  log_.push(true, what, armctl_last_error(handle_));
  armctl_safe_command(handle_, efforts_.data());
  write_efforts();
  failed_ = true;
}

// What update() could not log itself.
void ModelBasedEffortController::flush_log()
{
  auto logger = get_node()->get_logger();
  bool warning = false;
  std::string text;
  while (log_.pop(warning, text)) {
    if (warning) {
      RCLCPP_WARN(logger, "%s", text.c_str());
    } else {
      RCLCPP_INFO(logger, "%s", text.c_str());
    }
  }
  if (const uint64_t dropped = log_.take_dropped()) {
    RCLCPP_WARN(logger, "%llu log lines from update() were dropped", static_cast<unsigned long long>(dropped));
  }
  if (const uint64_t failed = failed_writes_.exchange(0)) {
    RCLCPP_WARN(
      logger, "%llu effort writes failed (command interface busy)",
      static_cast<unsigned long long>(failed));
  }
}
}  // namespace armctl_controllers

PLUGINLIB_EXPORT_CLASS(
  armctl_controllers::ModelBasedEffortController, controller_interface::ControllerInterface)
