// Stand-in. Real: hardware_interface/loaned_state_interface.hpp (ros-controls/ros2_control).
// Humble (2.x line, read at 8befba39): double get_value() const. Jazzy (4.x line, read at
// 0ffaacc7, and a later stored copy whose commit the index did not name): double get_value()
// const, the later copy adding a [[nodiscard]] try-lock get_value(T &, unsigned int). The
// newest Jazzy-line command interface has get_optional() (see loaned_command_interface.hpp); the
// plugin uses get_optional() where an interface has it, get_value() otherwise.
#ifndef HARDWARE_INTERFACE__LOANED_STATE_INTERFACE_HPP_
#define HARDWARE_INTERFACE__LOANED_STATE_INTERFACE_HPP_

#include <optional>
#include <string>

namespace hardware_interface
{
class LoanedStateInterface
{
public:
  // Not ros2_control (the real one wraps a StateInterface, whose type differs between the two):
  // the joint `prefix`, the interface (`position`, ...), the value it reads, and a flag the
  // harness sets to make the value unreadable, as a hardware side holding its lock.
  LoanedStateInterface(
    const std::string & prefix, const std::string & interface, const double * value,
    const bool * locked = nullptr)
  : prefix_(prefix), interface_(interface), value_(value), locked_(locked)
  {
  }
  LoanedStateInterface(const LoanedStateInterface &) = delete;
  LoanedStateInterface(LoanedStateInterface &&) = default;
  virtual ~LoanedStateInterface() = default;

  const std::string get_name() const { return prefix_ + "/" + interface_; }
  const std::string & get_interface_name() const { return interface_; }
  const std::string & get_prefix_name() const { return prefix_; }
  double get_value() const { return *value_; }
#ifdef ARMCTL_ROS_DISTRO_JAZZY
  template <typename T>
  [[nodiscard]] bool get_value(T & value, unsigned int max_tries = 10) const
  {
    (void)max_tries;
    if (locked_ && *locked_) {
      return false;
    }
    value = *value_;
    return true;
  }

  // As the command interface's get_optional() of the newest Jazzy line (the store held no copy
  // of the state interface's header of that release).
  template <typename T = double>
  [[nodiscard]] std::optional<T> get_optional(unsigned int max_tries = 10) const
  {
    (void)max_tries;
    if (locked_ && *locked_) {
      return std::nullopt;
    }
    return *value_;
  }
#endif

private:
  std::string prefix_, interface_;
  const double * value_;
  const bool * locked_;
};
}  // namespace hardware_interface

#endif  // HARDWARE_INTERFACE__LOANED_STATE_INTERFACE_HPP_
