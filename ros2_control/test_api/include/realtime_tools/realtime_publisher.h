// Stand-in. Real: realtime_tools/realtime_publisher.h, Humble's realtime_tools 2.x name of the
// class in realtime_publisher.hpp (not read here, see there).
#include "realtime_tools/realtime_publisher.hpp"
