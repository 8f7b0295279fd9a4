// Stand-in for the parts of rclcpp_lifecycle the plugin uses. Real headers:
// rclcpp_lifecycle/state.hpp, rclcpp_lifecycle/node_interfaces/lifecycle_node_interface.hpp
// (read at ros2/rclcpp 00d4cc0c) and rclcpp_lifecycle/lifecycle_node.hpp (read at ros2/rclcpp
// 00b9d0a0). The on_* callbacks, declare_parameter, create_subscription and
// add_on_set_parameters_callback have the same signatures in Humble (rclcpp 16) and Jazzy
// (rclcpp 28); create_wall_timer gained `bool autostart = true` in Jazzy.
#ifndef RCLCPP_LIFECYCLE__LIFECYCLE_NODE_HPP_
#define RCLCPP_LIFECYCLE__LIFECYCLE_NODE_HPP_

#include <chrono>
#include <cstdint>
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
// not rclcpp: they stand for the launch file's parameters, `ros2 param set`, a publisher and the
// executor.
class LifecycleNode : public node_interfaces::LifecycleNodeInterface,
                      public std::enable_shared_from_this<LifecycleNode>
{
public:
  using SharedPtr = std::shared_ptr<LifecycleNode>;

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

  // As the real one: the override wins unless ignored, the set-parameters callbacks see the
  // value, and declaring twice throws (rclcpp's ParameterAlreadyDeclaredException).
  const rclcpp::ParameterValue & declare_parameter(
    const std::string & name, const rclcpp::ParameterValue & default_value,
    const rcl_interfaces::msg::ParameterDescriptor & parameter_descriptor =
      rcl_interfaces::msg::ParameterDescriptor(),
    bool ignore_override = false)
  {
    if (has_parameter(name)) {
      throw std::runtime_error("parameter '" + name + "' has already been declared");
    }
    const auto override_value = overrides_.find(name);
    const rclcpp::ParameterValue value =
      !ignore_override && override_value != overrides_.end() ? override_value->second : default_value;
    const auto result = run_callbacks({rclcpp::Parameter(name, value)});
    if (!result.successful) {
      throw std::runtime_error("parameter '" + name + "' refused: " + result.reason);
    }
    descriptors_[name] = parameter_descriptor;
    return parameters_[name] = value;
  }

  bool has_parameter(const std::string & name) const { return parameters_.count(name) > 0; }

  // Throws for an undeclared name, as the real one (ParameterNotDeclaredException).
  rclcpp::Parameter get_parameter(const std::string & name) const
  {
    const auto at = parameters_.find(name);
    if (at == parameters_.end()) {
      throw std::runtime_error("parameter '" + name + "' is not declared");
    }
    return rclcpp::Parameter(name, at->second);
  }

  rclcpp::node_interfaces::OnSetParametersCallbackHandle::SharedPtr add_on_set_parameters_callback(
    rclcpp::node_interfaces::OnSetParametersCallbackHandle::OnSetParametersCallbackType callback)
  {
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

  // Not rclcpp: the parameters a launch file gives the node. Humble's controller nodes also
  // declare every one of them at once, dynamically typed and writable
  // (automatically_declare_parameters_from_overrides), and allow undeclared ones.
  void standin_set_overrides(
    const std::map<std::string, rclcpp::ParameterValue> & overrides, bool declare_all)
  {
    overrides_ = overrides;
    humble_options_ = declare_all;
    parameters_interface_->overrides = overrides;
    for (const auto & entry : overrides) {
      if (declare_all && !has_parameter(entry.first)) {
        parameters_[entry.first] = entry.second;
        descriptors_[entry.first] = rcl_interfaces::msg::ParameterDescriptor();
        descriptors_[entry.first].dynamic_typing = true;
      }
    }
  }

  // Not rclcpp: `ros2 param set`, all at once. Refused for an undeclared or read-only name, a
  // changed type, or by a set-parameters callback; nothing changes then.
  rcl_interfaces::msg::SetParametersResult standin_set_parameters(
    const std::vector<rclcpp::Parameter> & parameters)
  {
    rcl_interfaces::msg::SetParametersResult result;
    for (const auto & p : parameters) {
      const auto at = parameters_.find(p.get_name());
      if (at == parameters_.end() && humble_options_) {
        continue;  // allow_undeclared_parameters
      }
      if (at == parameters_.end() || descriptors_[p.get_name()].read_only) {
        result.reason = "parameter '" + p.get_name() + "' is undeclared or read-only";
        return result;
      }
      if (at->second.get_type() != p.get_type() && !descriptors_[p.get_name()].dynamic_typing) {
        result.reason = "wrong parameter type for '" + p.get_name() + "'";
        return result;
      }
    }
    result = run_callbacks(parameters);
    if (result.successful) {
      for (const auto & p : parameters) {
        parameters_[p.get_name()] = p.get_parameter_value();
      }
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
    const auto at = descriptors_.find(name);
    return at == descriptors_.end() ? nullptr : &at->second;
  }

private:
  rcl_interfaces::msg::SetParametersResult run_callbacks(
    const std::vector<rclcpp::Parameter> & parameters)
  {
    rcl_interfaces::msg::SetParametersResult result;
    result.successful = true;
    for (const auto & weak : callbacks_) {
      if (const auto handle = weak.lock()) {
        result = handle->callback(parameters);
        if (!result.successful) {
          return result;
        }
      }
    }
    return result;
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
  std::map<std::string, rclcpp::ParameterValue> parameters_, overrides_;
  bool humble_options_ = false;
  std::map<std::string, rcl_interfaces::msg::ParameterDescriptor> descriptors_;
  std::vector<std::weak_ptr<rclcpp::node_interfaces::OnSetParametersCallbackHandle>> callbacks_;
  std::map<std::string, std::weak_ptr<rclcpp::SubscriptionBase>> subscriptions_;
  // Keyed by topic; the harness asks with the type it was created with.
  std::map<std::string, std::weak_ptr<void>> publishers_;
  std::vector<std::weak_ptr<rclcpp::TimerBase>> timers_;
};
}  // namespace rclcpp_lifecycle

#endif  // RCLCPP_LIFECYCLE__LIFECYCLE_NODE_HPP_
