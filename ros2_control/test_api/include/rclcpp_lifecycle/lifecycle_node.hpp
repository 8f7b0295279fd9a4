// Stand-in for the parts of rclcpp_lifecycle the plugin uses. Real headers:
// rclcpp_lifecycle/state.hpp, rclcpp_lifecycle/node_interfaces/lifecycle_node_interface.hpp
// (read at ros2/rclcpp 00d4cc0c) and rclcpp_lifecycle/lifecycle_node.hpp (read at ros2/rclcpp
// 00b9d0a0). The constructor, the on_* callbacks, declare_parameter, create_subscription and
// add_on_set_parameters_callback have the same signatures in Humble (rclcpp 16) and Jazzy
// (rclcpp 28); create_wall_timer gained `bool autostart = true` in Jazzy. The parameters follow
// rclcpp's node_parameters.cpp (the order of its checks and its refusal texts), which Humble and
// Jazzy share but for Jazzy's pre-set callbacks.
#ifndef RCLCPP_LIFECYCLE__LIFECYCLE_NODE_HPP_
#define RCLCPP_LIFECYCLE__LIFECYCLE_NODE_HPP_

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "rcl_interfaces/msg/parameter_descriptor.hpp"
#include "rclcpp/rclcpp.hpp"

namespace rclcpp_lifecycle
{
// Real: rclcpp_lifecycle/state.hpp.
class State
{
public:
  uint8_t id() const { return 0; }
};

// Real: rclcpp_lifecycle/lifecycle_publisher.hpp: a rclcpp::Publisher that publishes while its
// node is active (the stand-in always publishes).
template <typename MessageT, typename AllocatorT = std::allocator<void>>
class LifecyclePublisher : public rclcpp::Publisher<MessageT, AllocatorT>
{
public:
  using SharedPtr = std::shared_ptr<LifecyclePublisher<MessageT, AllocatorT>>;
};

namespace node_interfaces
{
// Real: rclcpp_lifecycle/node_interfaces/lifecycle_node_interface.hpp (CallbackReturn values
// are lifecycle_msgs/Transition's TRANSITION_CALLBACK_SUCCESS/FAILURE/ERROR: 97, 98, 99).
class LifecycleNodeInterface
{
protected:
  LifecycleNodeInterface() {}

public:
  enum class CallbackReturn : uint8_t
  {
    SUCCESS = 97,
    FAILURE = 98,
    ERROR = 99,
  };
  virtual CallbackReturn on_configure(const State &) { return CallbackReturn::SUCCESS; }
  virtual CallbackReturn on_cleanup(const State &) { return CallbackReturn::SUCCESS; }
  virtual CallbackReturn on_shutdown(const State &) { return CallbackReturn::SUCCESS; }
  virtual CallbackReturn on_activate(const State &) { return CallbackReturn::SUCCESS; }
  virtual CallbackReturn on_deactivate(const State &) { return CallbackReturn::SUCCESS; }
  virtual CallbackReturn on_error(const State &) { return CallbackReturn::FAILURE; }
  virtual ~LifecycleNodeInterface() {}
};
}  // namespace node_interfaces

// Real: rclcpp_lifecycle/lifecycle_node.hpp. The stand-in keeps parameters, subscriptions and
// timers so that the plugin runs in the harness (run_plugin.cpp); the `standin_*` members are
// not rclcpp: they stand for `ros2 param set`, a publisher and the executor.
class LifecycleNode : public node_interfaces::LifecycleNodeInterface,
                      public std::enable_shared_from_this<LifecycleNode>
{
public:
  using SharedPtr = std::shared_ptr<LifecycleNode>;

  // As the real constructor's parameters (rclcpp's NodeParameters): the options' overrides
  // are kept, and declared at once with their values (dynamically typed, writable) when the
  // options say so; the options decide whether undeclared names may be set.
  LifecycleNode(
    const std::string & node_name, const std::string & namespace_,
    const rclcpp::NodeOptions & options = rclcpp::NodeOptions(),
    bool enable_communication_interface = true)
  : allow_undeclared_(options.allow_undeclared_parameters())
  {
    (void)node_name, (void)namespace_, (void)enable_communication_interface;
    for (const auto & p : options.parameter_overrides()) {
      overrides_[p.get_name()] = p.get_parameter_value();
    }
    parameters_interface_->overrides = overrides_;
    if (options.automatically_declare_parameters_from_overrides()) {
      rcl_interfaces::msg::ParameterDescriptor dynamic;
      dynamic.dynamic_typing = true;
      for (const auto & entry : overrides_) {
        if (!has_parameter(entry.first)) {
          declare_parameter(entry.first, entry.second, dynamic, true);
        }
      }
    }
  }

  rclcpp::Logger get_logger() const { return rclcpp::Logger(); }

  // The real one has a further defaulted parameter, msg_mem_strat, never passed here. The
  // callback forms accepted include void(const MessageT &).
  template <
    typename MessageT, typename CallbackT, typename AllocatorT = std::allocator<void>,
    typename SubscriptionT = rclcpp::Subscription<MessageT, AllocatorT>>
  std::shared_ptr<SubscriptionT> create_subscription(
    const std::string & topic_name, const rclcpp::QoS & qos, CallbackT && callback,
    const rclcpp::SubscriptionOptionsWithAllocator<AllocatorT> & options =
      rclcpp::SubscriptionOptionsWithAllocator<AllocatorT>())
  {
    static_assert(
      std::is_invocable<CallbackT, const MessageT &>::value,
      "a subscription callback taking const MessageT &");
    (void)qos, (void)options;
    auto subscription = std::make_shared<SubscriptionT>(
      std::function<void(const MessageT &)>(std::forward<CallbackT>(callback)));
    subscriptions_[topic_name] = subscription;
    return subscription;
  }

  // As the real one (its options default to create_default_publisher_options()).
  template <typename MessageT, typename AllocatorT = std::allocator<void>>
  std::shared_ptr<LifecyclePublisher<MessageT, AllocatorT>> create_publisher(
    const std::string & topic_name, const rclcpp::QoS & qos,
    const rclcpp::PublisherOptionsWithAllocator<AllocatorT> & options =
      rclcpp::PublisherOptionsWithAllocator<AllocatorT>())
  {
    (void)qos, (void)options;
    auto publisher = std::make_shared<LifecyclePublisher<MessageT, AllocatorT>>();
    publishers_[topic_name] = publisher;
    return publisher;
  }

  // Not rclcpp: what the live publisher of `topic` (as named at creation) published, or
  // nullptr when there is none of that type.
  template <typename MessageT>
  const std::vector<MessageT> * standin_published(const std::string & topic) const
  {
    const auto at = publishers_.find(topic);
    const auto publisher = at == publishers_.end() ? nullptr : at->second.lock();
    const auto typed = std::static_pointer_cast<rclcpp::Publisher<MessageT>>(publisher);
    return typed ? &typed->standin_published() : nullptr;
  }

  template <typename DurationRepT = int64_t, typename DurationT = std::milli, typename CallbackT>
  typename rclcpp::WallTimer<CallbackT>::SharedPtr create_wall_timer(
    std::chrono::duration<DurationRepT, DurationT> period, CallbackT callback,
    rclcpp::CallbackGroup::SharedPtr group = nullptr
#ifdef ARMCTL_ROS_DISTRO_JAZZY
    ,
    bool /* autostart */ = true
#endif
  )
  {
    static_assert(std::is_invocable<CallbackT>::value, "a timer callback taking nothing");
    (void)period, (void)group;
    auto timer = std::make_shared<rclcpp::WallTimer<CallbackT>>(std::move(callback));
    timers_.push_back(timer);
    return timer;
  }

  // As the real one (rclcpp's node_parameters.cpp): declaring twice throws; a descriptor
  // without dynamic_typing fixes the type to the default's; the override wins unless ignored;
  // the value then passes the type and range checks and the set-parameters callbacks, and a
  // refusal throws (InvalidParameterTypeException, InvalidParameterValueException).
  const rclcpp::ParameterValue & declare_parameter(
    const std::string & name, const rclcpp::ParameterValue & default_value,
    const rcl_interfaces::msg::ParameterDescriptor & parameter_descriptor =
      rcl_interfaces::msg::ParameterDescriptor(),
    bool ignore_override = false)
  {
    not_in_callback();
    if (has_parameter(name)) {
      throw std::runtime_error("parameter '" + name + "' has already been declared");
    }
    Info info{rclcpp::ParameterValue(), parameter_descriptor};
    if (!info.descriptor.dynamic_typing) {
      if (default_value.get_type() == rclcpp::PARAMETER_NOT_SET) {
        throw std::runtime_error(
          "parameter '" + name + "' has invalid type: cannot declare a statically typed "
          "parameter with an uninitialized value");
      }
      info.descriptor.type = default_value.get_type();
    }
    const auto override_value = overrides_.find(name);
    const rclcpp::ParameterValue & initial =
      !ignore_override && override_value != overrides_.end() ? override_value->second : default_value;
    std::map<std::string, Info> staged{{name, info}};
    if (initial.get_type() != rclcpp::PARAMETER_NOT_SET) {
      const auto result = set_common({rclcpp::Parameter(name, initial)}, staged, false);
      if (!result.successful && result.reason.rfind("Wrong parameter type", 0) == 0) {
        throw std::runtime_error("parameter '" + name + "' has invalid type: " + result.reason);
      }
      if (!result.successful) {
        throw std::runtime_error("parameter '" + name + "' could not be set: " + result.reason);
      }
    }
    staged[name].descriptor.name = name;
    return (parameters_[name] = staged[name]).value;
  }

  bool has_parameter(const std::string & name) const { return parameters_.count(name) > 0; }

  // As the real one: an undeclared name throws (ParameterNotDeclaredException), or reads as
  // not set where undeclared names are allowed.
  rclcpp::Parameter get_parameter(const std::string & name) const
  {
    const auto at = parameters_.find(name);
    if (at != parameters_.end()) {
      return rclcpp::Parameter(name, at->second.value);
    }
    if (allow_undeclared_) {
      return rclcpp::Parameter(name);
    }
    throw std::runtime_error("parameter '" + name + "' is not declared");
  }

  rclcpp::node_interfaces::OnSetParametersCallbackHandle::SharedPtr add_on_set_parameters_callback(
    rclcpp::node_interfaces::OnSetParametersCallbackHandle::OnSetParametersCallbackType callback)
  {
    not_in_callback();
    auto handle = std::make_shared<rclcpp::node_interfaces::OnSetParametersCallbackHandle>();
    handle->callback = std::move(callback);
    callbacks_.push_back(handle);
    return handle;
  }

  // As the real one: the callback stops being called (the real one also waits for a call in
  // progress, and throws if the handle is not registered).
  void remove_on_set_parameters_callback(
    const rclcpp::node_interfaces::OnSetParametersCallbackHandle * const handler)
  {
    not_in_callback();
    for (auto at = callbacks_.begin(); at != callbacks_.end(); ++at) {
      if (at->lock().get() == handler) {
        callbacks_.erase(at);
        return;
      }
    }
    throw std::runtime_error("Callback doesn't exist");
  }

  // The node owns this interface (a caller may keep a reference into it, as the real one).
  rclcpp::node_interfaces::NodeParametersInterface::SharedPtr get_node_parameters_interface()
  {
    return parameters_interface_;
  }

  // Not rclcpp: `ros2 param set` of `parameters` at once (the parameter service's
  // set_parameters_atomically), in rclcpp's order and with its texts: (Jazzy: the pre-set
  // callbacks, none here) an undeclared name unless undeclared ones are allowed (the service
  // answers ParameterNotDeclaredException's text), a read-only one, undeclaring a statically
  // typed one, then per value its type (unless dynamically typed) and its descriptor's range,
  // then the set-parameters callbacks. Nothing changes on a refusal. A value of no type (not
  // set) undeclares a dynamically typed parameter once accepted.
  rcl_interfaces::msg::SetParametersResult standin_set_parameters(
    const std::vector<rclcpp::Parameter> & parameters)
  {
    not_in_callback();
    rcl_interfaces::msg::SetParametersResult result;
    std::map<std::string, Info> infos = parameters_;
    for (const auto & p : parameters) {
      const std::string & name = p.get_name();
      const auto at = parameters_.find(name);
      if (at == parameters_.end() && !allow_undeclared_) {
        result.reason = "parameter '" + name + "' cannot be set because it was not declared";
        return result;
      }
      if (at == parameters_.end()) {
        infos[name].descriptor.dynamic_typing = true;  // declared implicitly
      } else if (at->second.descriptor.read_only) {
        result.reason = "parameter '" + name + "' cannot be set because it is read-only";
        return result;
      } else if (
        p.get_type() == rclcpp::PARAMETER_NOT_SET && !at->second.descriptor.dynamic_typing) {
        result.reason = "cannot undeclare a statically typed parameter";
        return result;
      }
    }
    result = set_common(parameters, infos, allow_undeclared_);
    if (result.successful) {
      for (const auto & p : parameters) {
        if (p.get_type() == rclcpp::PARAMETER_NOT_SET) {
          infos.erase(p.get_name());
        }
      }
      parameters_ = std::move(infos);
    }
    return result;
  }

  // Not rclcpp: a message on `topic` (as named at creation) reaches its live subscription.
  template <typename MessageT>
  bool standin_deliver(const std::string & topic, const MessageT & message)
  {
    const auto at = subscriptions_.find(topic);
    const auto subscription = at == subscriptions_.end() ? nullptr : at->second.lock();
    const auto typed = std::dynamic_pointer_cast<rclcpp::Subscription<MessageT>>(subscription);
    if (typed) {
      typed->standin_deliver(message);
    }
    return typed != nullptr;
  }

  // Not rclcpp: every live timer fires once.
  void standin_fire_timers()
  {
    for (const auto & weak : timers_) {
      if (const auto timer = weak.lock()) {
        timer->standin_fire();
      }
    }
  }

  // Not rclcpp: a declared parameter's descriptor (nullptr if undeclared).
  const rcl_interfaces::msg::ParameterDescriptor * standin_descriptor(const std::string & name) const
  {
    const auto at = parameters_.find(name);
    return at == parameters_.end() ? nullptr : &at->second.descriptor;
  }

private:
  struct Info
  {
    rclcpp::ParameterValue value;
    rcl_interfaces::msg::ParameterDescriptor descriptor;
  };

  // As rclcpp's __set_parameters_atomically_common: checks, callbacks, then the values in
  // `infos` (each descriptor then names its parameter and type).
  rcl_interfaces::msg::SetParametersResult set_common(
    const std::vector<rclcpp::Parameter> & parameters, std::map<std::string, Info> & infos,
    bool allow_undeclared)
  {
    auto result = check_parameters(infos, parameters, allow_undeclared);
    if (result.successful) {
      result = run_callbacks(parameters);
    }
    for (const auto & p : parameters) {
      if (result.successful) {
        Info & info = infos[p.get_name()];
        info.descriptor.name = p.get_name();
        info.descriptor.type = p.get_type();
        info.value = p.get_parameter_value();
      }
    }
    return result;
  }

  // As rclcpp's __check_parameters: the type unless dynamically typed (a name not in `infos`
  // is, where undeclared names are allowed), then the range.
  static rcl_interfaces::msg::SetParametersResult check_parameters(
    const std::map<std::string, Info> & infos, const std::vector<rclcpp::Parameter> & parameters,
    bool allow_undeclared)
  {
    rcl_interfaces::msg::SetParametersResult result;
    result.successful = true;
    for (const auto & p : parameters) {
      rcl_interfaces::msg::ParameterDescriptor descriptor;
      const auto at = infos.find(p.get_name());
      if (at != infos.end()) {
        descriptor = at->second.descriptor;
      } else {
        descriptor.dynamic_typing = allow_undeclared;
      }
      const auto specified = static_cast<rclcpp::ParameterType>(descriptor.type);
      if (!descriptor.dynamic_typing && specified != p.get_type()) {
        result.successful = false;
        result.reason = "Wrong parameter type, parameter {" + p.get_name() + "} is of type {" +
                        rclcpp::to_string(specified) + "}, setting it to {" +
                        rclcpp::to_string(p.get_type()) + "} is not allowed.";
        return result;
      }
      result = in_range(descriptor, p.get_parameter_value());
      if (!result.successful) {
        return result;
      }
    }
    return result;
  }

  // As rclcpp's __check_parameter_value_in_range (Humble's and Jazzy's: single integers and
  // doubles only; a bound itself passes, doubles within 100 ulp).
  static rcl_interfaces::msg::SetParametersResult in_range(
    const rcl_interfaces::msg::ParameterDescriptor & descriptor,
    const rclcpp::ParameterValue & value)
  {
    rcl_interfaces::msg::SetParametersResult result;
    result.successful = true;
    const auto near = [](double x, double y) {
      return std::abs(x - y) <= std::numeric_limits<double>::epsilon() * std::abs(x + y) * 100.0;
    };
    if (!descriptor.integer_range.empty() && value.get_type() == rclcpp::PARAMETER_INTEGER) {
      const auto & range = descriptor.integer_range.at(0);
      const int64_t v = value.get<int64_t>();
      const bool off_step =
        range.step != 0 && static_cast<uint64_t>(v - range.from_value) % range.step != 0;
      result.successful = v == range.from_value || v == range.to_value ||
                          (v > range.from_value && v < range.to_value && !off_step);
      if (!result.successful) {
        result.reason = "Parameter {" + descriptor.name + "} doesn't comply with integer range.";
      }
    }
    if (!descriptor.floating_point_range.empty() && value.get_type() == rclcpp::PARAMETER_DOUBLE) {
      const auto & range = descriptor.floating_point_range.at(0);
      const double v = value.get<double>();
      const bool off_step =
        range.step != 0.0 &&
        !near(v, range.from_value + std::round((v - range.from_value) / range.step) * range.step);
      result.successful = near(v, range.from_value) || near(v, range.to_value) ||
                          (v > range.from_value && v < range.to_value && !off_step);
      if (!result.successful) {
        result.reason =
          "Parameter {" + descriptor.name + "} doesn't comply with floating point range.";
      }
    }
    return result;
  }

  rcl_interfaces::msg::SetParametersResult run_callbacks(
    const std::vector<rclcpp::Parameter> & parameters)
  {
    rcl_interfaces::msg::SetParametersResult result;
    result.successful = true;
    in_callback_ = true;
    for (const auto & weak : callbacks_) {
      if (const auto handle = weak.lock()) {
        result = handle->callback(parameters);
        if (!result.successful) {
          break;
        }
      }
    }
    in_callback_ = false;
    return result;
  }

  // As rclcpp's ParameterMutationRecursionGuard (ParameterModifiedInCallbackException).
  void not_in_callback() const
  {
    if (in_callback_) {
      throw std::runtime_error(
        "cannot set or declare a parameter, or change the callback from within set callback");
    }
  }

  struct Overrides : rclcpp::node_interfaces::NodeParametersInterface
  {
    const std::map<std::string, rclcpp::ParameterValue> & get_parameter_overrides() const override
    {
      return overrides;
    }
    std::map<std::string, rclcpp::ParameterValue> overrides;
  };

  std::shared_ptr<Overrides> parameters_interface_ = std::make_shared<Overrides>();
  std::map<std::string, Info> parameters_;
  std::map<std::string, rclcpp::ParameterValue> overrides_;
  bool allow_undeclared_ = false;
  bool in_callback_ = false;
  std::vector<std::weak_ptr<rclcpp::node_interfaces::OnSetParametersCallbackHandle>> callbacks_;
  std::map<std::string, std::weak_ptr<rclcpp::SubscriptionBase>> subscriptions_;
  // Keyed by topic; the harness asks with the type it was created with.
  std::map<std::string, std::weak_ptr<void>> publishers_;
  std::vector<std::weak_ptr<rclcpp::TimerBase>> timers_;
};
}  // namespace rclcpp_lifecycle

#endif  // RCLCPP_LIFECYCLE__LIFECYCLE_NODE_HPP_
