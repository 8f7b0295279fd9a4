// The parameters: declared from armctl's list, the start values, the set-parameters callback
// checking on the shadow handle, and update() applying what it accepted.
#include <algorithm>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "armctl_controllers/model_based_effort_controller.hpp"
#include "conversions.hpp"

namespace armctl_controllers
{
using detail::accepted;
using detail::config_parameter;
using detail::config_problem;
using detail::descriptor;
using detail::listed;
using detail::refused;
using detail::to_armctl;
using detail::to_ros;

namespace
{
// The controller_manager's own, per controller (init() declares update_rate and is_async; a
// controller's params file may hold type, params_file and fallback_controllers for the
// spawner; the manager sets use_sim_time), and the node's clock: not armctl's, accepted.
constexpr const char * kManagerParameters[] = {
  "type", "is_async", "update_rate", "use_sim_time", "thread_priority", "params_file",
  "fallback_controllers"};
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

// A declared parameter's current value (set before configure, e.g. by a spawner's --param-file
// on Humble; set live before a cleanup; or from the YAML on Humble, which declares those
// itself), else the YAML's value from the node's overrides. armctl_create checks them all.
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
    declare_unchecked(name, to_ros(info.value), descriptor(info));
  }
}

// Declaring runs the set-parameters callback; armctl's own value passes it unchecked (a
// read-only one would be refused as a change).
void ModelBasedEffortController::declare_unchecked(
  const std::string & name, const rclcpp::ParameterValue & value,
  const rcl_interfaces::msg::ParameterDescriptor & descriptor)
{
  set_declaring(rclcpp::Parameter(name, value));
  try {
    get_node()->declare_parameter(name, value, descriptor, true);
  } catch (...) {
    set_declaring(rclcpp::Parameter());
    throw;
  }
  set_declaring(rclcpp::Parameter());
}

// Not held while declaring: the callback runs under rclcpp's parameter lock, which a
// concurrent set holds while it waits for this one.
void ModelBasedEffortController::set_declaring(const rclcpp::Parameter & parameter)
{
  std::lock_guard<std::mutex> lock(shadow_mutex_);
  declaring_ = parameter;
}

// The parameter file's names armctl's law does not take. A misspelt gain would otherwise be
// ignored in silence; controller_node refuses unknown parameters, but a controller's overrides
// may hold the controller_manager's own (a launch file's `/**` section reaches every node of
// its process), so they are warned about, naming them, and ignored. A name *set* before
// configure is refused by configure instead (unchecked_names_known()).
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
        node->get_logger(),
        "%s: ignored (a name of the controller's parameters that is neither armctl's '%s' nor "
        "the controller_manager's)",
        unknown(handle_, name).c_str(), controller_.c_str());
    } else if (s->scope == ARMCTL_PARAMETER_SCOPE_NODE_ONLY) {
      RCLCPP_WARN(
        node->get_logger(),
        "parameter '%s' is controller_node's own (its rate, topics, clock, action or control "
        "thread) and means nothing inside ros2_control: ignored",
        name.c_str());
    }
  }
}

const ParameterSpec * ModelBasedEffortController::spec(const std::string & name) const
{
  const auto at = std::find_if(
    specs_.begin(), specs_.end(), [&](const ParameterSpec & s) { return s.name == name; });
  return at == specs_.end() ? nullptr : &*at;
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

// Every set and declaration of the node's parameters, before configure too. The descriptors
// leave the checks to armctl (no range, type or read-only flag for rclcpp to refuse first), so
// each refusal here carries armctl's reason, naming the parameter.
rcl_interfaces::msg::SetParametersResult ModelBasedEffortController::on_parameters(
  const std::vector<rclcpp::Parameter> & parameters)
{
  try {
    std::lock_guard<std::mutex> lock(shadow_mutex_);
    if (parameters.size() == 1 && parameters[0] == declaring_) {
      return accepted();  // declare_parameters(): armctl's own value
    }
    for (const auto & p : parameters) {
      const std::string why = not_settable(p);
      if (!why.empty()) {
        return refused(why);
      }
    }
    if (!configured_) {
      // No handle: armctl's names are stored as set (as rclcpp stores an undeclared name) and
      // checked by the next configure, with the values of the parameter file (a spawner's
      // --param-file on Humble sets them here, between load and configure).
      for (const auto & p : parameters) {
        const std::string & name = p.get_name();
        if (listed(kManagerParameters, name) || config_parameter(name)) {
          continue;
        }
        if (p.get_type() == rclcpp::PARAMETER_NOT_SET) {
          unchecked_.erase(name);  // undeclared: the file's value or armctl's default again
        } else {
          unchecked_.insert(name);
        }
      }
      return accepted();
    }
    return apply_to_shadow(parameters);
  } catch (const std::exception & e) {
    return refused(std::string("armctl_controllers: ") + e.what());
  }
}

// Why `p` is refused before its value reaches armctl's handle ("" if it is not): the
// controller_manager's names pass; ArmctlConfig's are checked here (armctl has no handle for
// them) and fixed while configured; armctl's other names pass unchecked before configure (the
// configure checks them), and once configured need the handle, which also gives the reason
// for a name it does not know.
std::string ModelBasedEffortController::not_settable(const rclcpp::Parameter & p) const
{
  const std::string & name = p.get_name();
  const std::string prefix = "parameter '" + name + "': ";
  if (listed(kManagerParameters, name)) {
    return "";
  }
  ArmctlParameterInfo info;
  if (config_parameter(name, info)) {
    return configured_ ? prefix +
                           "read-only while configured: clean the controller up, set it, "
                           "configure again"
                       : config_problem(p, info);
  }
  if (!configured_) {
    return "";  // stored unchecked: the next configure checks it
  }
  if (!shadow_) {
    return prefix +
           "not settable while the controller is being configured or cleaned up: set it "
           "again once it is configured or unconfigured";
  }
  const ParameterSpec * s = spec(name);
  if (!s) {
    return unknown(shadow_, name);
  }
  if (s->scope != ARMCTL_PARAMETER_SCOPE_RUNTIME) {
    return prefix + "controller_node's own, meaningless inside ros2_control";
  }
  return "";
}

// armctl's reason, from `handle`, for a name it does not list or that is controller_node's own
// (it checks the name before the value).
std::string ModelBasedEffortController::unknown(
  ArmctlController * handle, const std::string & name) const
{
  const OwnedValue any;
  const ArmctlValue value = any.view();
  if (armctl_validate_parameter(handle, name.c_str(), &value) == ARMCTL_STATUS_OK) {
    return "parameter '" + name + "': not a parameter of armctl's '" + controller_ + "'";
  }
  return armctl_last_error(handle);
}

// The names set before configure that armctl's law does not take (unknown, or controller_node's
// own): each is logged with armctl's reason, from `probe`, and the configure fails, as
// controller_node refuses them. Those it takes reach armctl_create with the start values, which
// checks them.
bool ModelBasedEffortController::unchecked_names_known(ArmctlController * probe)
{
  std::set<std::string> names;
  {
    std::lock_guard<std::mutex> lock(shadow_mutex_);
    names = unchecked_;
  }
  auto node = get_node();
  bool known = true;
  for (const auto & name : names) {
    const ParameterSpec * s = spec(name);
    if (!node->has_parameter(name) || (s && s->scope == ARMCTL_PARAMETER_SCOPE_RUNTIME)) {
      continue;
    }
    RCLCPP_ERROR(
      node->get_logger(),
      "%s (set before configure; delete it, e.g. `ros2 param delete`, and configure again)",
      unknown(probe, name).c_str());
    known = false;
  }
  return known;
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
    if (!s || s->scope != ARMCTL_PARAMETER_SCOPE_RUNTIME) {
      continue;  // the controller_manager's, or ArmctlConfig's before configure
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
  return accepted();
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
}  // namespace armctl_controllers
