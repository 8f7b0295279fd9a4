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
#include <string>
#include <type_traits>
#include <utility>

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

// Real: rclcpp_lifecycle/lifecycle_node.hpp.
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
    (void)topic_name, (void)qos, (void)callback, (void)options;
    return nullptr;
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
    (void)period, (void)callback, (void)group;
    return nullptr;
  }

  const rclcpp::ParameterValue & declare_parameter(
    const std::string & name, const rclcpp::ParameterValue & default_value,
    const rcl_interfaces::msg::ParameterDescriptor & parameter_descriptor =
      rcl_interfaces::msg::ParameterDescriptor(),
    bool ignore_override = false)
  {
    (void)name, (void)parameter_descriptor, (void)ignore_override;
    return default_value;
  }

  bool has_parameter(const std::string & name) const { return name.empty(); }

  rclcpp::Parameter get_parameter(const std::string & name) const
  {
    return rclcpp::Parameter(name, rclcpp::ParameterValue());
  }

  rclcpp::node_interfaces::OnSetParametersCallbackHandle::SharedPtr add_on_set_parameters_callback(
    rclcpp::node_interfaces::OnSetParametersCallbackHandle::OnSetParametersCallbackType callback)
  {
    auto handle = std::make_shared<rclcpp::node_interfaces::OnSetParametersCallbackHandle>();
    handle->callback = std::move(callback);
    return handle;
  }

  rclcpp::node_interfaces::NodeParametersInterface::SharedPtr get_node_parameters_interface()
  {
    struct NoOverrides : rclcpp::node_interfaces::NodeParametersInterface
    {
      const std::map<std::string, rclcpp::ParameterValue> & get_parameter_overrides() const override
      {
        return overrides;
      }
      std::map<std::string, rclcpp::ParameterValue> overrides;
    };
    return std::make_shared<NoOverrides>();
  }
};
}  // namespace rclcpp_lifecycle

#endif  // RCLCPP_LIFECYCLE__LIFECYCLE_NODE_HPP_
