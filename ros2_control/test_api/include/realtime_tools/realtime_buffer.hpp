// Stand-in. Real: realtime_tools/realtime_buffer.hpp (ros-controls/realtime_tools, Jazzy: read
// at 5b65bc7c; Humble's 2.x has it since 2.10.0, its CHANGELOG says, and only realtime_buffer.h
// before, read at 0caf3bcd), with the same class: readFromRT() swaps in the newest data if the
// lock is free (never blocks), writeFromNonRT() copies under the lock.
#ifndef REALTIME_TOOLS__REALTIME_BUFFER_HPP_
#define REALTIME_TOOLS__REALTIME_BUFFER_HPP_

#include <utility>

namespace realtime_tools
{
template <class T>
class RealtimeBuffer
{
public:
  RealtimeBuffer() = default;
  explicit RealtimeBuffer(const T & data) : realtime_data_(data), non_realtime_data_(data) {}
  // As the real one without its lock (the harness has one thread): the newest write, if any,
  // is swapped in; the old value goes to the writer's side.
  T * readFromRT()
  {
    if (new_data_available_) {
      std::swap(realtime_data_, non_realtime_data_);
      new_data_available_ = false;
    }
    return &realtime_data_;
  }
  T * readFromNonRT() const { return const_cast<T *>(&non_realtime_data_); }
  void writeFromNonRT(const T & data)
  {
    non_realtime_data_ = data;
    new_data_available_ = true;
  }
  void initRT(const T & data)
  {
    realtime_data_ = non_realtime_data_ = data;
    new_data_available_ = false;
  }

private:
  T realtime_data_{};
  T non_realtime_data_{};
  bool new_data_available_ = false;
};
}  // namespace realtime_tools

#endif  // REALTIME_TOOLS__REALTIME_BUFFER_HPP_
