// Shared by the peer benchmarks: the timing loop of `armctl bench` and its states file.
#pragma once
#include <Eigen/Core>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace bench {

constexpr int kCalls = 2048;

// States written by `armctl bench --states-out`: one state per line, q then qd then qdd.
struct States {
  std::vector<Eigen::VectorXd> q, qd, qdd;
  int size() const { return static_cast<int>(q.size()); }
};

inline States read_states(const std::string& path, int n) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot open states file " + path);
  States s;
  std::string line;
  while (std::getline(file, line)) {
    std::istringstream in(line);
    std::vector<double> v;
    for (double x; in >> x;) v.push_back(x);
    if (v.empty()) continue;
    if (static_cast<int>(v.size()) != 3 * n) throw std::runtime_error("states file does not match the robot's joint count");
    s.q.push_back(Eigen::Map<Eigen::VectorXd>(v.data(), n));
    s.qd.push_back(Eigen::Map<Eigen::VectorXd>(v.data() + n, n));
    s.qdd.push_back(Eigen::Map<Eigen::VectorXd>(v.data() + 2 * n, n));
  }
  return s;
}

// Median ns per call over `batches` batches of kCalls calls cycling through the states.
template <class F>
double median_ns(int batches, int states, F&& call) {
  for (int k = 0; k < states; ++k) call(k);
  std::vector<double> samples;
  for (int b = 0; b < batches; ++b) {
    auto start = std::chrono::steady_clock::now();
    for (int k = 0; k < kCalls; ++k) call(k % states);
    auto ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    samples.push_back(ns / kCalls);
  }
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  return samples[samples.size() / 2];
}

}  // namespace bench
