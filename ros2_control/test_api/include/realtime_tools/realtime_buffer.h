// Stand-in. Real: realtime_tools/realtime_buffer.h (ros-controls/realtime_tools). Humble
// (2.x, read at 0caf3bcd): the RealtimeBuffer class itself. Jazzy (read at f5f79db2): a
// forwarder to realtime_buffer.hpp that emits a deprecation #warning, an error under -Werror.
#ifndef REALTIME_TOOLS__REALTIME_BUFFER_H_
#define REALTIME_TOOLS__REALTIME_BUFFER_H_

#ifdef ARMCTL_ROS_DISTRO_JAZZY
#include "realtime_tools/realtime_buffer.hpp"
#warning "This header include is deprecated. Please update your code to use 'realtime_buffer.hpp' header."
#else
#define ARMCTL_STANDIN_HUMBLE_BUFFER
#include "realtime_tools/realtime_buffer.hpp"
#undef ARMCTL_STANDIN_HUMBLE_BUFFER
#endif

#endif  // REALTIME_TOOLS__REALTIME_BUFFER_H_
