// Stand-in. Real: hardware_interface/loaned_command_interface.hpp (ros-controls/ros2_control).
// Humble (2.x line, read at 8befba39): void set_value(double), double get_value() const.
// Jazzy (4.x line, read at 0a81bfc1): set_value is a [[nodiscard]] template returning false when
// the handle stays locked, get_value() is deprecated in favour of get_optional(). Earlier Jazzy
// releases still had the Humble forms; the plugin detects which one it gets.
#ifndef HARDWARE_INTERFACE__LOANED_COMMAND_INTERFACE_HPP_
#define HARDWARE_INTERFACE__LOANED_COMMAND_INTERFACE_HPP_

#include <optional>
#include <string>

namespace hardware_interface
{
class LoanedCommandInterface
{
public:
  // Not ros2_control (the real one wraps a CommandInterface): the joint `prefix`, the interface,
  // the value it writes, and a flag the harness sets to make it busy (Jazzy's set_value fails).
  LoanedCommandInterface(
    const std::string & prefix, const std::string & interface, double * value,
    const bool * busy = nullptr)
  : prefix_(prefix), interface_(interface), value_(value), busy_(busy)
  {
  }
  LoanedCommandInterface(const LoanedCommandInterface &) = delete;
  LoanedCommandInterface(LoanedCommandInterface &&) = default;
  virtual ~LoanedCommandInterface() = default;

#ifdef ARMCTL_ROS_DISTRO_JAZZY
  const std::string & get_name() const { return name_; }
#else
  const std::string get_name() const { return name_; }
#endif
  const std::string & get_interface_name() const { return interface_; }
  const std::string & get_prefix_name() const { return prefix_; }

#ifdef ARMCTL_ROS_DISTRO_JAZZY
  template <typename T>
  [[nodiscard]] bool set_value(const T & value, unsigned int max_tries = 10)
  {
    (void)max_tries;
    if (busy_ && *busy_) {
      return false;
    }
    *value_ = value;
    return true;
  }

  [[deprecated("Use std::optional<T> get_optional() instead to retrieve the value.")]]
  double get_value() const
  {
    return *value_;
  }

  template <typename T = double>
  [[nodiscard]] std::optional<T> get_optional(unsigned int max_tries = 10) const
  {
    (void)max_tries;
    if (busy_ && *busy_) {
      return std::nullopt;
    }
    return *value_;
  }
#else
  void set_value(double val) { *value_ = val; }
  double get_value() const { return *value_; }
#endif

private:
  std::string prefix_, interface_;
  std::string name_ = prefix_ + "/" + interface_;
  double * value_;
  const bool * busy_;
};
}  // namespace hardware_interface

#endif  // HARDWARE_INTERFACE__LOANED_COMMAND_INTERFACE_HPP_
