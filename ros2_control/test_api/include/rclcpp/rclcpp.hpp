// Stand-in for the parts of rclcpp the plugin uses; the real umbrella header rclcpp/rclcpp.hpp
// includes each real header named below. Signatures as in rclcpp 16.x (Humble) and 28.x (Jazzy),
// the same for everything here but NodeOptions::enable_logger_service (Jazzy's); defaulted
// parameters the plugin never passes are left out where they would drag in more types, and say
// so.
#ifndef RCLCPP__RCLCPP_HPP_
#define RCLCPP__RCLCPP_HPP_

#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "rcl_interfaces/msg/parameter_descriptor.hpp"
#include "rcl_interfaces/msg/set_parameters_result.hpp"

namespace rclcpp
{
// Real: rclcpp/time.hpp. The real constructors also take a clock type (defaulted, never
// passed here); seconds() is nanoseconds / 1e9 as in the real one.
class Time
{
public:
  Time(int32_t seconds, uint32_t nanoseconds) : ns_(seconds * 1000000000LL + nanoseconds) {}
  explicit Time(int64_t nanoseconds = 0) : ns_(nanoseconds) {}
  double seconds() const { return static_cast<double>(ns_) / 1e9; }
  int64_t nanoseconds() const { return ns_; }

private:
  int64_t ns_;
};

// Real: rclcpp/duration.hpp.
class Duration
{
public:
  Duration(int32_t seconds, uint32_t nanoseconds) : ns_(seconds * 1000000000LL + nanoseconds) {}
  double seconds() const { return static_cast<double>(ns_) / 1e9; }

private:
  int64_t ns_;
};

// Real: rclcpp/qos.hpp: the conversion constructor from a history depth (implicit on purpose).
class QoS
{
public:
  QoS(size_t history_depth) : depth_(history_depth) {}  // NOLINT(runtime/explicit)

private:
  size_t depth_;
};

// Real: rclcpp/publisher.hpp (read at ros2/rclcpp 00b9d0a0): a class template on the message
// and an allocator, publish(const MessageT &). The stand-in keeps what was published.
template <typename MessageT, typename AllocatorT = std::allocator<void>>
class Publisher
{
public:
  using SharedPtr = std::shared_ptr<Publisher<MessageT, AllocatorT>>;
  virtual ~Publisher() = default;
  void publish(const MessageT & message) { standin_published_.push_back(message); }

  // Not rclcpp: every message published, oldest first.
  const std::vector<MessageT> & standin_published() const { return standin_published_; }

private:
  std::vector<MessageT> standin_published_;
};

// Real: rclcpp/publisher_options.hpp (a struct template on the allocator).
template <typename AllocatorT>
struct PublisherOptionsWithAllocator
{
};

// Real: rclcpp/logger.hpp.
class Logger
{
};

namespace standin
{
// Not rclcpp: every log line, for the harness to read (and printed to stderr).
struct LogLine
{
  char level;
  std::string text;
};
inline std::vector<LogLine> & log_lines()
{
  static std::vector<LogLine> lines;
  return lines;
}

// Checks the format like the real macros (rcutils_log is printf-attributed).
__attribute__((format(printf, 3, 4))) inline void log(
  const Logger &, char level, const char * format, ...)
{
  char text[2048];
  va_list arguments;
  va_start(arguments, format);
  std::vsnprintf(text, sizeof text, format, arguments);
  va_end(arguments);
  log_lines().push_back(LogLine{level, text});
  std::fprintf(stderr, "[%c] %s\n", level, text);
}
}  // namespace standin
}  // namespace rclcpp

// Real: rclcpp/logging.hpp: RCLCPP_<LEVEL>(logger, format, ...), which also requires the first
// argument to be an rclcpp::Logger.
#define RCLCPP_STANDIN_LOG(level, logger, ...) \
  do { \
    static_assert( \
      std::is_same< \
        std::remove_cv_t<std::remove_reference_t<decltype(logger)>>, ::rclcpp::Logger>::value, \
      "First argument to logging macros must be an rclcpp::Logger"); \
    ::rclcpp::standin::log(logger, level, __VA_ARGS__); \
  } while (0)
#define RCLCPP_DEBUG(logger, ...) RCLCPP_STANDIN_LOG('D', logger, __VA_ARGS__)
#define RCLCPP_INFO(logger, ...) RCLCPP_STANDIN_LOG('I', logger, __VA_ARGS__)
#define RCLCPP_WARN(logger, ...) RCLCPP_STANDIN_LOG('W', logger, __VA_ARGS__)
#define RCLCPP_ERROR(logger, ...) RCLCPP_STANDIN_LOG('E', logger, __VA_ARGS__)

namespace rclcpp
{
// Real: rclcpp/parameter_value.hpp.
enum ParameterType : uint8_t
{
  PARAMETER_NOT_SET = 0,
  PARAMETER_BOOL = 1,
  PARAMETER_INTEGER = 2,
  PARAMETER_DOUBLE = 3,
  PARAMETER_STRING = 4,
  PARAMETER_BYTE_ARRAY = 5,
  PARAMETER_BOOL_ARRAY = 6,
  PARAMETER_INTEGER_ARRAY = 7,
  PARAMETER_DOUBLE_ARRAY = 8,
  PARAMETER_STRING_ARRAY = 9,
};

// Real: rclcpp/parameter_value.hpp (parameter_value.cpp): the type's name, as rclcpp's
// refusals print it.
inline std::string to_string(ParameterType type)
{
  switch (type) {
    case PARAMETER_NOT_SET:
      return "not set";
    case PARAMETER_BOOL:
      return "bool";
    case PARAMETER_INTEGER:
      return "integer";
    case PARAMETER_DOUBLE:
      return "double";
    case PARAMETER_STRING:
      return "string";
    case PARAMETER_BYTE_ARRAY:
      return "byte_array";
    case PARAMETER_BOOL_ARRAY:
      return "bool_array";
    case PARAMETER_INTEGER_ARRAY:
      return "integer_array";
    case PARAMETER_DOUBLE_ARRAY:
      return "double_array";
    case PARAMETER_STRING_ARRAY:
      return "string_array";
    default:
      return "unknown type";
  }
}

// Real: rclcpp/parameter_value.hpp: the constructors and typed get<T>() the plugin uses (the
// real get<T>() is a family of enable_if overloads returning a const reference).
class ParameterValue
{
public:
  ParameterValue() = default;
  explicit ParameterValue(const bool value) : type_(PARAMETER_BOOL), bool_(value) {}
  explicit ParameterValue(const int64_t value) : type_(PARAMETER_INTEGER), integer_(value) {}
  explicit ParameterValue(const double value) : type_(PARAMETER_DOUBLE), double_(value) {}
  explicit ParameterValue(const std::string & value) : type_(PARAMETER_STRING), string_(value) {}
  explicit ParameterValue(const char * value) : ParameterValue(std::string(value)) {}
  explicit ParameterValue(const std::vector<int64_t> & value)
  : type_(PARAMETER_INTEGER_ARRAY), integers_(value)
  {
  }
  explicit ParameterValue(const std::vector<double> & value)
  : type_(PARAMETER_DOUBLE_ARRAY), doubles_(value)
  {
  }
  explicit ParameterValue(const std::vector<std::string> & value)
  : type_(PARAMETER_STRING_ARRAY), strings_(value)
  {
  }

  ParameterType get_type() const { return type_; }

  // As the real one: equal type and value.
  bool operator==(const ParameterValue & rhs) const
  {
    return type_ == rhs.type_ && bool_ == rhs.bool_ && integer_ == rhs.integer_ &&
           double_ == rhs.double_ && string_ == rhs.string_ && integers_ == rhs.integers_ &&
           doubles_ == rhs.doubles_ && strings_ == rhs.strings_;
  }
  bool operator!=(const ParameterValue & rhs) const { return !(*this == rhs); }

  template <typename T>
  const T & get() const;

private:
  ParameterType type_ = PARAMETER_NOT_SET;
  bool bool_ = false;
  int64_t integer_ = 0;
  double double_ = 0.0;
  std::string string_;
  std::vector<int64_t> integers_;
  std::vector<double> doubles_;
  std::vector<std::string> strings_;
};

template <>
inline const bool & ParameterValue::get<bool>() const
{
  return bool_;
}
template <>
inline const int64_t & ParameterValue::get<int64_t>() const
{
  return integer_;
}
template <>
inline const double & ParameterValue::get<double>() const
{
  return double_;
}
template <>
inline const std::string & ParameterValue::get<std::string>() const
{
  return string_;
}
template <>
inline const std::vector<int64_t> & ParameterValue::get<std::vector<int64_t>>() const
{
  return integers_;
}
template <>
inline const std::vector<double> & ParameterValue::get<std::vector<double>>() const
{
  return doubles_;
}
template <>
inline const std::vector<std::string> & ParameterValue::get<std::vector<std::string>>() const
{
  return strings_;
}

// Real: rclcpp/parameter.hpp.
class Parameter
{
public:
  Parameter() = default;
  explicit Parameter(const std::string & name) : name_(name) {}  // not set
  Parameter(const std::string & name, const ParameterValue & value) : name_(name), value_(value) {}
  ParameterType get_type() const { return value_.get_type(); }
  const std::string & get_name() const { return name_; }
  const ParameterValue & get_parameter_value() const { return value_; }
  bool operator==(const Parameter & rhs) const
  {
    return name_ == rhs.name_ && value_ == rhs.value_;
  }
  bool operator!=(const Parameter & rhs) const { return !(*this == rhs); }
  const std::string & as_string() const { return value_.get<std::string>(); }
  const std::vector<std::string> & as_string_array() const
  {
    return value_.get<std::vector<std::string>>();
  }

private:
  std::string name_;
  ParameterValue value_;
};

// Real: rclcpp/node_options.hpp (Humble and Jazzy): the options the plugin and the controller
// manager set, as the real setters (each returns *this) and getters. Parameter overrides stand
// for every source of them (the real ones also come from --params-file arguments).
class NodeOptions
{
public:
  bool allow_undeclared_parameters() const { return allow_undeclared_parameters_; }
  NodeOptions & allow_undeclared_parameters(bool allow_undeclared_parameters)
  {
    allow_undeclared_parameters_ = allow_undeclared_parameters;
    return *this;
  }
  bool automatically_declare_parameters_from_overrides() const
  {
    return automatically_declare_parameters_from_overrides_;
  }
  NodeOptions & automatically_declare_parameters_from_overrides(
    bool automatically_declare_parameters_from_overrides)
  {
    automatically_declare_parameters_from_overrides_ =
      automatically_declare_parameters_from_overrides;
    return *this;
  }
  const std::vector<Parameter> & parameter_overrides() const { return parameter_overrides_; }
  NodeOptions & parameter_overrides(const std::vector<Parameter> & parameter_overrides)
  {
    parameter_overrides_ = parameter_overrides;
    return *this;
  }
#ifdef ARMCTL_ROS_DISTRO_JAZZY
  // Since rclcpp 21 (Iron).
  const bool & enable_logger_service() const { return enable_logger_service_; }
  NodeOptions & enable_logger_service(bool enable_log_service)
  {
    enable_logger_service_ = enable_log_service;
    return *this;
  }
#endif

private:
  bool allow_undeclared_parameters_ = false;
  bool automatically_declare_parameters_from_overrides_ = false;
  std::vector<Parameter> parameter_overrides_;
#ifdef ARMCTL_ROS_DISTRO_JAZZY
  bool enable_logger_service_ = false;
#endif
};

// Real: rclcpp/callback_group.hpp.
class CallbackGroup
{
public:
  using SharedPtr = std::shared_ptr<CallbackGroup>;
};

// Real: rclcpp/subscription_options.hpp.
template <typename AllocatorT>
struct SubscriptionOptionsWithAllocator
{
};

// Real: rclcpp/subscription_base.hpp.
class SubscriptionBase
{
public:
  virtual ~SubscriptionBase() = default;
};

// Real: rclcpp/subscription.hpp (further template parameters have defaults). The stand-in
// keeps the callback; the harness delivers messages through the node (no executor here).
template <typename MessageT, typename AllocatorT = std::allocator<void>>
class Subscription : public SubscriptionBase
{
public:
  using SharedPtr = std::shared_ptr<Subscription>;
  explicit Subscription(std::function<void(const MessageT &)> callback)
  : callback_(std::move(callback))
  {
  }
  void standin_deliver(const MessageT & message) const { callback_(message); }

private:
  std::function<void(const MessageT &)> callback_;
};

// Real: rclcpp/timer.hpp. The stand-in fires only when the harness says so.
class TimerBase
{
public:
  using SharedPtr = std::shared_ptr<TimerBase>;
  virtual ~TimerBase() = default;
  virtual void standin_fire() = 0;
};

// Real: rclcpp/timer.hpp (WallTimer<FunctorT, ...> : GenericTimer<FunctorT, ...> : TimerBase).
template <typename FunctorT>
class WallTimer : public TimerBase
{
public:
  using SharedPtr = std::shared_ptr<WallTimer>;
  explicit WallTimer(FunctorT callback) : callback_(std::move(callback)) {}
  void standin_fire() override { callback_(); }

private:
  FunctorT callback_;
};

namespace node_interfaces
{
// Real: rclcpp/node_interfaces/node_parameters_interface.hpp.
struct OnSetParametersCallbackHandle
{
  using SharedPtr = std::shared_ptr<OnSetParametersCallbackHandle>;
  using OnSetParametersCallbackType = std::function<rcl_interfaces::msg::SetParametersResult(
    const std::vector<rclcpp::Parameter> &)>;
  OnSetParametersCallbackType callback;
};

// Real: rclcpp/node_interfaces/node_parameters_interface.hpp.
class NodeParametersInterface
{
public:
  using SharedPtr = std::shared_ptr<NodeParametersInterface>;
  virtual ~NodeParametersInterface() = default;
  virtual const std::map<std::string, rclcpp::ParameterValue> & get_parameter_overrides() const = 0;
};
}  // namespace node_interfaces
}  // namespace rclcpp

#endif  // RCLCPP__RCLCPP_HPP_
