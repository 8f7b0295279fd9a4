// The C ABI as a C++ host uses it, through include/armctl.h and the static library:
//  1. replays a Panda run of `armctl sim` under computed torque (its run.csv: the states the
//     controller saw and the efforts it sent) and checks every effort to 1e-9;
//  2. counts malloc/new during armctl_update: none;
//  3. NaN, infinite, unreadable, implausible and stale states hold, as in controller_node, and
//     control resumes;
//  4. a refused parameter leaves the old value.
// Usage: c_abi_program URDF WAYPOINTS RUN_CSV  (files cpp_program.rs prepares).

#include "armctl.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

// Every allocation of the process passes here (libstdc++'s operator new and Rust's System
// allocator both call malloc), so counting these counts them all.
extern "C" {
void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);
}
static long allocations = 0;

extern "C" void *malloc(size_t size) {
  ++allocations;
  return __libc_malloc(size);
}
extern "C" void *calloc(size_t count, size_t size) {
  ++allocations;
  return __libc_calloc(count, size);
}
extern "C" void *realloc(void *pointer, size_t size) {
  ++allocations;
  return __libc_realloc(pointer, size);
}
extern "C" int posix_memalign(void **out, size_t alignment, size_t size) {
  ++allocations;
  *out = __libc_memalign(alignment, size);
  return *out ? 0 : 12;  // ENOMEM
}

namespace {

int failures = 0;

// The run's control period, s (cpp_program.rs steps at 1 kHz).
constexpr double kPeriod = 1e-3;

void check(bool condition, const std::string &what) {
  if (!condition) {
    std::cerr << "FAILED: " << what << "\n";
    ++failures;
  }
}

std::string read_file(const char *path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::vector<double> numbers(const std::string &line) {
  std::vector<double> out;
  std::stringstream cells(line);
  std::string cell;
  while (std::getline(cells, cell, ',')) out.push_back(std::strtod(cell.c_str(), nullptr));
  return out;
}

std::vector<std::string> cells_of(const std::string &header) {
  std::vector<std::string> cells;
  std::stringstream stream(header);
  std::string cell;
  while (std::getline(stream, cell, ',')) cells.push_back(cell);
  return cells;
}

// The joint names of a run.csv header ("t,q_<joint>...,qd_<joint>...,q_ref_...,effort_<joint>...").
std::vector<std::string> joints_of(const std::string &header) {
  std::vector<std::string> joints;
  for (const auto &cell : cells_of(header))
    if (cell.rfind("effort_", 0) == 0) joints.push_back(cell.substr(7));
  return joints;
}

// The column of `prefix` + `joint` for every joint.
std::vector<size_t> columns(const std::string &header, const char *prefix,
                            const std::vector<std::string> &joints) {
  const std::vector<std::string> cells = cells_of(header);
  std::vector<size_t> out;
  for (const auto &joint : joints)
    for (size_t k = 0; k < cells.size(); ++k)
      if (cells[k] == prefix + joint) out.push_back(k);
  return out;
}

struct Controller {
  ArmctlController *handle = nullptr;
  ~Controller() { armctl_free(handle); }
};

bool create(Controller &controller, const std::string &urdf, const std::vector<std::string> &joints,
            const char *law) {
  std::vector<const char *> names;
  for (const auto &joint : joints) names.push_back(joint.c_str());
  ArmctlConfig config{};
  config.urdf = urdf.c_str();
  config.joints = names.data();
  config.joint_count = names.size();
  config.controller = law;
  char error[512];
  ArmctlStatus status = armctl_create(&config, &controller.handle, error, sizeof error);
  if (status != ARMCTL_STATUS_OK) std::cerr << "armctl_create: " << error << "\n";
  return status == ARMCTL_STATUS_OK;
}

// Waypoints: one per line, "time q1 q2 ...".
std::vector<std::vector<double>> read_waypoints(const char *path) {
  std::vector<std::vector<double>> points;
  std::stringstream lines(read_file(path));
  std::string line;
  while (std::getline(lines, line)) {
    std::stringstream values(line);
    std::vector<double> point;
    double v;
    while (values >> v) point.push_back(v);
    if (!point.empty()) points.push_back(point);
  }
  return points;
}

void send_waypoints(ArmctlController *handle, const std::vector<std::vector<double>> &waypoints, double now) {
  std::vector<ArmctlTrajectoryPoint> points;
  for (const auto &p : waypoints) points.push_back({p[0], p.data() + 1, nullptr, nullptr});
  ArmctlStatus status = armctl_set_trajectory(handle, points.data(), points.size(), now, now);
  check(status == ARMCTL_STATUS_OK, std::string("trajectory accepted: ") + armctl_last_error(handle));
}

// 1 and 2: the replay, and the allocations of armctl_update.
void replay(const std::string &urdf, const char *waypoints_path, const char *run_path) {
  std::stringstream lines(read_file(run_path));
  std::string header, line;
  std::getline(lines, header);
  const std::vector<std::string> joints = joints_of(header);
  const size_t n = joints.size();
  const auto q_at = columns(header, "q_", joints), qd_at = columns(header, "qd_", joints),
             effort_at = columns(header, "effort_", joints);
  if (n == 0 || q_at.size() != n || qd_at.size() != n || effort_at.size() != n) {
    check(false, "run.csv has q_, qd_ and effort_ columns for every joint: " + header);
    return;
  }
  Controller controller;
  if (!create(controller, urdf, joints, "computed_torque")) return ++failures, void();
  const auto waypoints = read_waypoints(waypoints_path);
  std::vector<double> q(n), qd(n), efforts(n);
  double largest_difference = 0.0;
  long rows = 0, allocated_in_update = 0;
  while (std::getline(lines, line)) {
    const std::vector<double> row = numbers(line);
    for (size_t i = 0; i < n; ++i) q[i] = row[q_at[i]], qd[i] = row[qd_at[i]];
    ArmctlUpdateStatus status{};
    const long before = allocations;
    const ArmctlStatus result =
        armctl_update(controller.handle, row[0], kPeriod, q.data(), qd.data(), efforts.data(), &status);
    allocated_in_update += allocations - before;
    check(result == ARMCTL_STATUS_OK && !status.holding, "row " + std::to_string(rows) + " controlled");
    for (size_t i = 0; i < n; ++i)
      largest_difference = std::fmax(largest_difference, std::fabs(efforts[i] - row[effort_at[i]]));
    if (rows == 0) send_waypoints(controller.handle, waypoints, row[0]);
    ++rows;
  }
  std::printf("replay of armctl sim's run.csv: %ld rows, largest effort difference %.3e N m, "
              "%ld allocations in armctl_update\n",
              rows, largest_difference, allocated_in_update);
  check(rows > 1000, "the run has rows");
  check(largest_difference <= 1e-9, "efforts match armctl sim to 1e-9");
  check(allocated_in_update == 0, "armctl_update allocates nothing");
}

// Allocations inside armctl_update calls of `step`.
long allocated_in_steps = 0;

ArmctlUpdateStatus step(ArmctlController *handle, double t, const std::vector<double> &q,
                        const std::vector<double> &qd) {
  std::vector<double> efforts(q.size());
  ArmctlUpdateStatus status{};
  const long before = allocations;
  const ArmctlStatus result = armctl_update(handle, t, 1e-3, q.data(), qd.data(), efforts.data(), &status);
  allocated_in_steps += allocations - before;
  check(result == ARMCTL_STATUS_OK, "update returns OK while holding");
  for (double e : efforts) check(std::isfinite(e), "hold efforts are finite");
  return status;
}

ArmctlUpdateStatus partial_step(ArmctlController *handle, double t, const std::vector<double> &q,
                                const std::vector<uint8_t> &readable) {
  std::vector<double> qd(q.size(), 0.0), efforts(q.size());
  ArmctlUpdateStatus status{};
  const long before = allocations;
  const ArmctlStatus result = armctl_update_partial(handle, t, 1e-3, q.data(), qd.data(), readable.data(),
                                                    efforts.data(), &status);
  allocated_in_steps += allocations - before;
  check(result == ARMCTL_STATUS_OK, "update returns OK while holding");
  for (double e : efforts) check(std::isfinite(e), "hold efforts are finite");
  return status;
}

// 3: states that cannot be used hold, once per incident, and control resumes.
void faults(const std::string &urdf, const std::vector<std::string> &joints) {
  Controller controller;
  if (!create(controller, urdf, joints, "pd_gravity")) return ++failures, void();
  const std::vector<double> q{0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8}, still(7, 0.0);
  check(!step(controller.handle, 0.0, q, still).holding, "a valid state is controlled");
  auto nan = q;
  nan[2] = std::nan("");
  ArmctlUpdateStatus status = step(controller.handle, 0.001, nan, still);
  check(status.holding && status.changed && status.fault == ARMCTL_FAULT_NON_FINITE, "NaN holds");
  char buffer[256];
  const long before = allocations;
  armctl_fault_text(controller.handle, buffer, sizeof buffer);
  const long allocated = allocations - before;  // before the message below allocates
  check(allocated == 0, "armctl_fault_text allocates nothing");
  const std::string text = buffer;
  check(text.find("panda_joint3") != std::string::npos, "the incident names the joint: " + text);
  auto spinning = still;
  spinning[0] = INFINITY;
  status = step(controller.handle, 0.002, q, spinning);
  check(status.holding && status.fault == ARMCTL_FAULT_NON_FINITE, "an infinite velocity holds");
  auto far = q;
  far[0] = 100.0;
  status = step(controller.handle, 0.003, far, still);
  check(status.holding && status.fault == ARMCTL_FAULT_IMPLAUSIBLE, "100 rad is implausible");
  status = step(controller.handle, 0.004, q, still);
  check(!status.holding && status.changed, "control resumes on a valid state");
  std::vector<uint8_t> readable(q.size(), 1);
  readable[4] = 0;  // as a Jazzy state interface whose get_optional() came back empty
  status = partial_step(controller.handle, 0.005, q, readable);
  check(status.holding && status.changed && status.fault == ARMCTL_FAULT_MISSING_JOINT,
        "an unreadable joint holds");
  armctl_fault_text(controller.handle, buffer, sizeof buffer);
  check(std::string(buffer).find("panda_joint5") != std::string::npos, "it is named: " + std::string(buffer));
  std::fill(readable.begin(), readable.end(), 1);
  check(!partial_step(controller.handle, 0.006, q, readable).holding, "readable again: control resumes");
  std::fill(readable.begin(), readable.end(), 0);  // no reading at all: the state ages
  check(!partial_step(controller.handle, 0.05, q, readable).holding, "younger than state_timeout");
  status = partial_step(controller.handle, 0.2, q, readable);
  check(status.holding && status.fault == ARMCTL_FAULT_STALE, "older than state_timeout: stale");
  check(allocated_in_steps == 0, "armctl_update allocates nothing while it holds or resumes");
  std::printf("faults: NaN, infinite velocity, an unreadable joint, 100 rad and a stale state held; "
              "resumed; %ld allocations in armctl_update\n",
              allocated_in_steps);
}

// The current kp of the handle, or empty.
std::vector<double> kp_of(ArmctlController *handle) {
  for (size_t index = 0; index < armctl_parameter_count(handle); ++index) {
    ArmctlParameterInfo info;
    if (armctl_parameter_info(handle, index, &info) != ARMCTL_STATUS_OK) break;
    if (std::strcmp(info.name, "kp") == 0)
      return std::vector<double>(info.value.numbers, info.value.numbers + info.value.count);
  }
  return {};
}

// 4: a refused parameter changes nothing and says why.
void refusal(const std::string &urdf, const std::vector<std::string> &joints) {
  Controller controller;
  if (!create(controller, urdf, joints, "computed_torque")) return ++failures, void();
  const std::vector<double> before = kp_of(controller.handle);
  check(before.size() == joints.size(), "kp is listed per joint");
  const std::vector<double> negative(joints.size(), -1.0);
  ArmctlValue value{};
  value.kind = ARMCTL_PARAMETER_TYPE_DOUBLE_ARRAY;
  value.numbers = negative.data();
  value.count = negative.size();
  check(armctl_set_parameter(controller.handle, "kp", &value) == ARMCTL_STATUS_REFUSED, "negative kp refused");
  const std::string reason = armctl_last_error(controller.handle);
  check(reason.find("kp") != std::string::npos, "the refusal names kp: " + reason);
  check(kp_of(controller.handle) == before, "the old kp stays");
  std::printf("refusal: %s\n", reason.c_str());
}

// 5: no points (an empty JointTrajectory) stop the trajectory and hold where the arm is.
void cancel(const std::string &urdf, const std::vector<std::string> &joints) {
  Controller moving, fresh;
  if (!create(moving, urdf, joints, "computed_torque") || !create(fresh, urdf, joints, "computed_torque"))
    return ++failures, void();
  const std::vector<double> q{0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8}, still(7, 0.0);
  step(moving.handle, 0.0, q, still);
  std::vector<std::vector<double>> reach{{0.5}, {2.0}};
  for (double v : q) {
    reach[0].push_back(v);
    reach[1].push_back(v + 0.3);
  }
  send_waypoints(moving.handle, reach, 0.0);
  step(moving.handle, 1.0, q, still);
  check(armctl_set_trajectory(moving.handle, nullptr, 0, 1.0, 1.0) == ARMCTL_STATUS_OK,
        std::string("no points accepted: ") + armctl_last_error(moving.handle));
  std::vector<double> held(7), expected(7);
  ArmctlUpdateStatus status{};
  armctl_update(moving.handle, 1.1, 1e-3, q.data(), still.data(), held.data(), &status);
  step(fresh.handle, 0.0, q, still);
  armctl_update(fresh.handle, 1.1, 1e-3, q.data(), still.data(), expected.data(), &status);
  double largest = 0.0;
  for (size_t i = 0; i < held.size(); ++i) largest = std::max(largest, std::fabs(held[i] - expected[i]));
  check(largest < 1e-9, "after no points the arm is held where it is: " + std::to_string(largest));
  std::printf("cancel: no points hold where the arm is (largest difference %.1e N m)\n", largest);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s URDF WAYPOINTS RUN_CSV\n", argv[0]);
    return 2;
  }
  const std::string urdf = read_file(argv[1]);
  replay(urdf, argv[2], argv[3]);
  std::string header;
  std::ifstream run(argv[3]);
  std::getline(run, header);
  faults(urdf, joints_of(header));
  refusal(urdf, joints_of(header));
  cancel(urdf, joints_of(header));
  return failures == 0 ? 0 : 1;
}
