// Stand-in. Real: realtime_tools/realtime_publisher.hpp (ros-controls/realtime_tools, read at
// 021b40fa), with the members the plugin uses, which realtime_tools' ROS 1 realtime_publisher.h
// (read at 0a8cd430) already had and Humble's ROS 2 realtime_publisher.h is expected to keep
// (not read: no stored Humble copy; unverified): constructed from the rclcpp::Publisher it
// wraps, `msg_`, trylock() (never blocks; false while the publishing thread holds the message),
// unlockAndPublish() (hands `msg_` to that thread) and unlock() (gives it back unpublished).
// Here there is one thread: the message is published at once and trylock() always succeeds.
#ifndef REALTIME_TOOLS__REALTIME_PUBLISHER_HPP_
#define REALTIME_TOOLS__REALTIME_PUBLISHER_HPP_

#include <memory>

#include "rclcpp/rclcpp.hpp"

namespace realtime_tools
{
template <class MessageT>
class RealtimePublisher
{
public:
  using PublisherSharedPtr = typename rclcpp::Publisher<MessageT>::SharedPtr;

  MessageT msg_;

  explicit RealtimePublisher(PublisherSharedPtr publisher) : publisher_(publisher) {}
  RealtimePublisher(const RealtimePublisher &) = delete;
  RealtimePublisher & operator=(const RealtimePublisher &) = delete;

  bool trylock() { return true; }
  void unlockAndPublish() { publisher_->publish(msg_); }
  void unlock() {}

private:
  PublisherSharedPtr publisher_;
};
}  // namespace realtime_tools

#endif  // REALTIME_TOOLS__REALTIME_PUBLISHER_HPP_
