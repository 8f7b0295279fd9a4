// The ros2_control controller plugin: one ControllerInterface whose lifecycle callbacks,
// parameter callbacks, reference subscriptions and real-time update share the members the
// header declares. About 1,070 lines in one file, above the project's ~600: the conversions
// (the helpers at the top) and the parameter handling are the parts to move out next; they are
// checked here only against stand-in headers (ros2_control/test_api/check.sh), so the split waits
// for a change that can also run the plugin under a real controller_manager.
#include "armctl_controllers/model_based_effort_controller.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hardware_interface/types/hardware_interface_type_values.hpp"
#include "pluginlib/class_list_macros.hpp"

namespace armctl_controllers
{
namespace
{
using controller_interface::CallbackReturn;
using controller_interface::interface_configuration_type;
using controller_interface::return_type;

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

// The controller_manager's own, per controller (a controller's update_rate is honoured by it),
// and the node's clock: not armctl's, and not refused.
constexpr const char * kManagerParameters[] = {
  "type", "is_async", "update_rate", "use_sim_time", "thread_priority"};

// Refuses at once what no armctl controller would read (so far the largest
// max_reference_points); armctl checks its own limit after.
constexpr std::size_t kMaxTrajectoryPoints = 1000000;

// As controller_node: a pose target is reached in this time (s).
constexpr double kTargetPoseDuration = 1.0;

template <std::size_t N>
bool listed(const char * const (&list)[N], const std::string & name)
{
  return std::any_of(std::begin(list), std::end(list), [&](const char * s) { return name == s; });
}

double seconds(int32_t sec, uint32_t nanosec) { return sec + nanosec * 1e-9; }

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
}  // namespace

// The handle's current value of `name`, copied into `out`; false (with armctl's last error
// set by a failed lookup, or none) if armctl does not list it.
static bool current_value(ArmctlController * handle, const std::string & name, OwnedValue & out)
{
  ArmctlParameterInfo info;
  for (std::size_t k = 0; k < armctl_parameter_count(handle); ++k) {
    if (armctl_parameter_info(handle, k, &info) != ARMCTL_STATUS_OK || name != info.name) {
      continue;
    }
    const ArmctlValue & v = info.value;
    out.kind = static_cast<ArmctlParameterType>(v.kind);
    out.boolean = v.boolean;
    out.integer = v.integer;
    out.number = v.number;
    out.text = v.text ? v.text : "";
    out.numbers.assign(v.numbers, v.numbers + (v.numbers ? v.count : 0));
    out.texts.clear();
    for (std::size_t i = 0; v.texts && i < v.count; ++i) {
      out.texts.emplace_back(v.texts[i]);
    }
    out.seal();
    return true;
  }
  return false;
}

void OwnedValue::seal()
{
  pointers.clear();
  for (const auto & t : texts) {
    pointers.push_back(t.c_str());
  }
}

ArmctlValue OwnedValue::view() const
{
  ArmctlValue v{};
  v.kind = static_cast<uint32_t>(kind);
  v.boolean = boolean;
  v.integer = integer;
  v.number = number;
  v.text = text.c_str();
  v.numbers = numbers.data();
  v.texts = pointers.data();
  v.count = kind == ARMCTL_PARAMETER_TYPE_STRING_ARRAY ? pointers.size() : numbers.size();
  return v;
}

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

ModelBasedEffortController::~ModelBasedEffortController() { free_handles(); }

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
  armctl_free(probe);
  {
    std::lock_guard<std::mutex> lock(shadow_mutex_);  // the parameter callback reads specs_
    specs_ = std::move(specs);
  }
  std::vector<std::string> names;
  std::vector<OwnedValue> values;
  if (!start_values(names, values)) {
    return false;
  }
  handle_ = create(urdf, names, values);
  shadow_ = create(urdf, names, values);
  if (!handle_ || !shadow_) {
    free_handles();
    return false;
  }
  return true;
}

// A declared parameter's current value (set live before a cleanup, or from the YAML on Humble,
// which declares those itself), else the YAML's value from the node's overrides.
bool ModelBasedEffortController::start_values(
  std::vector<std::string> & names, std::vector<OwnedValue> & values)
{
  auto node = get_node();
  const auto & overrides = node->get_node_parameters_interface()->get_parameter_overrides();
  for (const auto & s : specs_) {
    if (s.scope != ARMCTL_PARAMETER_SCOPE_RUNTIME) {
      continue;
    }
    rclcpp::ParameterValue value;
    if (node->has_parameter(s.name)) {
      value = node->get_parameter(s.name).get_parameter_value();
    } else if (const auto at = overrides.find(s.name); at != overrides.end()) {
      value = at->second;
    }
    if (value.get_type() == rclcpp::PARAMETER_NOT_SET) {
      continue;
    }
    OwnedValue v;
    std::string why;
    if (!to_armctl(value, s.kind, v, why)) {
      RCLCPP_ERROR(node->get_logger(), "parameter '%s': %s", s.name.c_str(), why.c_str());
      return false;
    }
    names.push_back(s.name);
    values.push_back(std::move(v));
  }
  for (auto & v : values) {
    v.seal();  // after the last push_back: the strings no longer move
  }
  return true;
}

// Declared with armctl's effective value (ignoring the override, already given to armctl and
// possibly converted), its description, range and read-only flag. On Humble those given in the
// YAML are already declared, without a descriptor; armctl still checks them.
void ModelBasedEffortController::declare_parameters()
{
  auto node = get_node();
  ArmctlParameterInfo info;
  for (std::size_t k = 0; k < armctl_parameter_count(handle_); ++k) {
    if (armctl_parameter_info(handle_, k, &info) != ARMCTL_STATUS_OK) {
      continue;
    }
    const std::string name = info.name;
    if (info.scope != ARMCTL_PARAMETER_SCOPE_RUNTIME || node->has_parameter(name)) {
      continue;
    }
    node->declare_parameter(name, to_ros(info.value), descriptor(info), true);
  }
}

// A misspelt gain would otherwise be ignored in silence; controller_node refuses unknown
// parameters, but here the controller_manager may set names of its own.
void ModelBasedEffortController::warn_unknown_overrides()
{
  auto node = get_node();
  for (const auto & entry : node->get_node_parameters_interface()->get_parameter_overrides()) {
    const std::string & name = entry.first;
    const ParameterSpec * s = spec(name);
    if (config_parameter(name) || listed(kManagerParameters, name)) {
      continue;
    }
    if (!s) {
      RCLCPP_WARN(
        node->get_logger(), "parameter '%s' is not a parameter of '%s' here: ignored",
        name.c_str(), controller_.c_str());
    } else if (s->scope == ARMCTL_PARAMETER_SCOPE_NODE_ONLY) {
      RCLCPP_WARN(
        node->get_logger(),
        "parameter '%s' is controller_node's own and means nothing inside ros2_control (the "
        "controller_manager sets the rate and the clock): ignored",
        name.c_str());
    }
  }
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
  // After the declarations: declaring runs this callback too.
  parameter_callback_ = node->add_on_set_parameters_callback(
    [this](const std::vector<rclcpp::Parameter> & parameters) { return on_parameters(parameters); });
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

const ParameterSpec * ModelBasedEffortController::spec(const std::string & name) const
{
  const auto at = std::find_if(
    specs_.begin(), specs_.end(), [&](const ParameterSpec & s) { return s.name == name; });
  return at == specs_.end() ? nullptr : &*at;
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
  if (parameter_callback_) {
    // Waits for a callback running on an executor thread, which a plain reset would not.
    get_node()->remove_on_set_parameters_callback(parameter_callback_.get());
  }
  parameter_callback_.reset();
  trajectory_subscription_.reset();
  pose_subscription_.reset();
  wrench_subscription_.reset();
  // What update() queued since the timer last ran (deactivation's line, often) is not lost.
  guarded("logging", [&] { flush_log(); });
  log_timer_.reset();
  free_handles();
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

void ModelBasedEffortController::apply_parameters()
{
  const auto & snapshot = *parameter_buffer_.readFromRT();
  if (!snapshot || snapshot->sequence == applied_parameters_) {
    return;
  }
  for (const auto & change : snapshot->changes) {
    if (change.sequence <= applied_parameters_) {
      continue;
    }
    const ArmctlValue value = change.value.view();
    if (armctl_set_parameter(handle_, change.name.c_str(), &value) != ARMCTL_STATUS_OK) {
      log_.push(
        true, "refused when applied (the ROS parameter now shows a value not in use): ",
        armctl_last_error(handle_));
    }
  }
  applied_parameters_ = snapshot->sequence;
}

void ModelBasedEffortController::apply_references(double now)
{
  const auto & trajectory = *trajectory_buffer_.readFromRT();
  if (trajectory && trajectory->sequence != applied_trajectory_) {
    applied_trajectory_ = trajectory->sequence;
    const double start = trajectory->stamp > 0.0 ? trajectory->stamp : now;
    const ArmctlStatus s = armctl_set_trajectory(
      handle_, trajectory->points.data(), trajectory->points.size(), start, now);
    if (s != ARMCTL_STATUS_OK) {
      log_.push(true, "joint trajectory refused: ", armctl_last_error(handle_));
    }
  }
  const PendingPose & pose = *pose_buffer_.readFromRT();
  if (pose.sequence != applied_pose_) {
    applied_pose_ = pose.sequence;
    const ArmctlStatus s = armctl_set_target_pose_in(
      handle_, pose.frame.data(), pose.position.data(), pose.orientation.data(),
      kTargetPoseDuration);
    if (s != ARMCTL_STATUS_OK) {
      log_.push(true, "target pose refused: ", armctl_last_error(handle_));
    }
  }
  const PendingWrench & wrench = *wrench_buffer_.readFromRT();
  if (wrench.sequence != applied_wrench_) {
    applied_wrench_ = wrench.sequence;
    const ArmctlStatus s =
      armctl_set_external_wrench_in(handle_, wrench.frame.data(), wrench.wrench.data());
    // Said once per frame: a wrench may come at 1 kHz.
    if (s != ARMCTL_STATUS_OK) {
      if (std::strncmp(wrench.frame.data(), refused_wrench_frame_.data(), sizeof(FrameName))) {
        refused_wrench_frame_ = wrench.frame;
        log_.push(true, "external wrench refused: ", armctl_last_error(handle_));
      }
    } else {
      refused_wrench_frame_[0] = '\0';
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

rcl_interfaces::msg::SetParametersResult ModelBasedEffortController::on_parameters(
  const std::vector<rclcpp::Parameter> & parameters)
{
  try {
    std::lock_guard<std::mutex> lock(shadow_mutex_);
    for (const auto & p : parameters) {
      const std::string why = not_settable(p.get_name());
      if (!why.empty()) {
        return refused("parameter '" + p.get_name() + "': " + why);
      }
    }
    return apply_to_shadow(parameters);
  } catch (const std::exception & e) {
    return refused(std::string("armctl_controllers: ") + e.what());
  }
}

// Why `name` cannot be set live ("" if it can, or is not armctl's to judge). Humble declares
// every name of the YAML as a dynamically typed, writable parameter, so the plugin's own
// structural ones and misspelt names reach this callback and are refused here.
std::string ModelBasedEffortController::not_settable(const std::string & name) const
{
  if (listed(kManagerParameters, name)) {
    return "";
  }
  if (config_parameter(name)) {
    return "read-only: set it in the controller's parameters and configure again";
  }
  const ParameterSpec * s = spec(name);
  if (!s) {
    return "not a parameter of armctl's '" + controller_ + "'";
  }
  if (s->scope != ARMCTL_PARAMETER_SCOPE_RUNTIME) {
    return "controller_node's own, meaningless inside ros2_control";
  }
  return "";
}

// Applies every armctl parameter of the batch to the shadow handle (the law's own checks run
// there, so a value accepted here is one the real-time handle, configured the same, accepts in
// update()), then hands them to update(); on a refusal the shadow is put back, nothing is handed.
rcl_interfaces::msg::SetParametersResult ModelBasedEffortController::apply_to_shadow(
  const std::vector<rclcpp::Parameter> & parameters)
{
  std::vector<std::pair<std::string, OwnedValue>> changes, previous;
  for (const auto & p : parameters) {
    const ParameterSpec * s = spec(p.get_name());
    if (!shadow_ || !s) {
      continue;  // the controller_manager's
    }
    OwnedValue v, old;
    std::string why;
    if (!to_armctl(p.get_parameter_value(), s->kind, v, why)) {
      restore(previous);
      return refused("parameter '" + s->name + "': " + why);
    }
    v.seal();
    const ArmctlValue value = v.view();
    if (
      !current_value(shadow_, s->name, old) ||
      armctl_set_parameter(shadow_, s->name.c_str(), &value) != ARMCTL_STATUS_OK) {
      const std::string reason = armctl_last_error(shadow_);
      restore(previous);
      return refused(reason);
    }
    previous.emplace_back(s->name, std::move(old));
    changes.emplace_back(s->name, std::move(v));
  }
  for (auto & change : changes) {
    accepted_[change.first] = {change.first, ++parameter_sequence_, std::move(change.second)};
  }
  if (!changes.empty()) {
    publish_parameters();
  }
  rcl_interfaces::msg::SetParametersResult result;
  result.successful = true;
  return result;
}

// Puts back, newest first, what a refused batch changed on the shadow (each an accepted value).
void ModelBasedEffortController::restore(
  const std::vector<std::pair<std::string, OwnedValue>> & previous)
{
  for (auto at = previous.rbegin(); at != previous.rend(); ++at) {
    const ArmctlValue value = at->second.view();
    armctl_set_parameter(shadow_, at->first.c_str(), &value);
  }
}

// A fresh immutable snapshot each time: update() only ever reads one, and the old one is
// released here, in the writer's thread, when the buffer's slot is overwritten.
void ModelBasedEffortController::publish_parameters()
{
  auto snapshot = std::make_shared<PendingParameters>();
  snapshot->sequence = parameter_sequence_;
  for (const auto & entry : accepted_) {
    snapshot->changes.push_back(entry.second);
  }
  for (auto & change : snapshot->changes) {
    change.value.seal();
  }
  parameter_buffer_.writeFromNonRT(std::move(snapshot));
}

void ModelBasedEffortController::on_trajectory(const trajectory_msgs::msg::JointTrajectory & msg)
{
  auto logger = get_node()->get_logger();
  if (!active_) {
    RCLCPP_WARN(logger, "joint trajectory ignored: the controller is not active");
    return;
  }
  if (msg.points.size() > kMaxTrajectoryPoints) {
    RCLCPP_WARN(
      logger, "joint trajectory refused: %zu points (at most %zu)", msg.points.size(),
      kMaxTrajectoryPoints);
    return;
  }
  std::string why;
  auto pending = to_controller_order(msg, joints_, why);
  if (!pending) {
    RCLCPP_WARN(logger, "joint trajectory refused: %s", why.c_str());
    return;
  }
  pending->sequence = ++trajectory_sequence_;
  trajectory_buffer_.writeFromNonRT(std::move(pending));
}

// armctl places the frame (a link of the chain, with the model's kinematics) in update(); here
// the name is only copied into a fixed array, refused when it does not fit (said once per
// frame, not per message: a wrench may come at 1 kHz).
bool ModelBasedEffortController::copy_frame(
  const std::string & frame_id, FrameName & frame, const char * what)
{
  if (frame_id.size() < frame.size()) {
    std::memcpy(frame.data(), frame_id.c_str(), frame_id.size() + 1);
    return true;
  }
  if (frame_id != refused_frame_) {
    refused_frame_ = frame_id;
    RCLCPP_WARN(
      get_node()->get_logger(), "%s refused: frame name of %zu characters is too long", what,
      frame_id.size());
  }
  return false;
}

void ModelBasedEffortController::on_target_pose(const geometry_msgs::msg::PoseStamped & msg)
{
  PendingPose pose;
  if (!active_ || !copy_frame(msg.header.frame_id, pose.frame, "target pose")) {
    return;
  }
  const auto & p = msg.pose.position;
  const auto & q = msg.pose.orientation;
  pose.sequence = ++pose_sequence_;
  pose.position = {p.x, p.y, p.z};
  pose.orientation = {q.x, q.y, q.z, q.w};
  pose_buffer_.writeFromNonRT(pose);
}

void ModelBasedEffortController::on_wrench(const geometry_msgs::msg::WrenchStamped & msg)
{
  PendingWrench wrench;
  if (!active_ || !copy_frame(msg.header.frame_id, wrench.frame, "external wrench")) {
    return;
  }
  const auto & f = msg.wrench.force;
  const auto & t = msg.wrench.torque;
  wrench.sequence = ++wrench_sequence_;
  wrench.wrench = {f.x, f.y, f.z, t.x, t.y, t.z};
  wrench_buffer_.writeFromNonRT(wrench);
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
