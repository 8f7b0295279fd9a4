// Pinocchio on a URDF: prints "pinocchio <algorithm> <ns>" per line.
// usage: pinocchio_bench MODEL TIP_FRAME STATES_FILE [BATCHES]
//        pinocchio_bench --save URDF MODEL.bin
// MODEL is a URDF, or a model saved with --save (Model::saveToBinary). The wheel's URDF
// parser is compiled for generic x86-64: a program built with -march=native cannot use the
// model it builds (Eigen's alignment differs), so run.sh saves the model from a generic build
// and the native build (compiled with -DBENCH_NO_URDF, header-only) loads it.
#include <pinocchio/algorithm/aba-derivatives.hpp>
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/compute-all-terms.hpp>
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/frames.hpp>
#include <pinocchio/algorithm/jacobian.hpp>
#include <pinocchio/algorithm/kinematics.hpp>
#include <pinocchio/algorithm/regressor.hpp>
#include <pinocchio/algorithm/rnea-derivatives.hpp>
#include <pinocchio/algorithm/rnea.hpp>
#include <pinocchio/multibody.hpp>
#ifndef BENCH_NO_URDF
#include <pinocchio/parsers/urdf.hpp>
#endif
#include <pinocchio/serialization.hpp>

#include <string>

#include "bench_common.hpp"

static bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// The model from a URDF (generic builds only) or from a file saved with --save.
static void load_model(const std::string& path, pinocchio::Model& model) {
  if (ends_with(path, ".bin")) {
    model.loadFromBinary(path);
    return;
  }
#ifdef BENCH_NO_URDF
  throw std::runtime_error("this build reads saved models only: " + path);
#else
  pinocchio::urdf::buildModel(path, model);
#endif
}

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--save") {
    pinocchio::Model model;
    load_model(argv[2], model);
    model.saveToBinary(argv[3]);
    return 0;
  }
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s MODEL TIP_FRAME STATES_FILE [BATCHES] | --save URDF MODEL.bin\n", argv[0]);
    return 2;
  }
  const int batches = argc > 4 ? std::atoi(argv[4]) : 41;
  // Deliberately never destroyed: with other -march flags than the wheel's, freeing a model
  // built by the precompiled parser from this file's code crashes.
  auto& model = *new pinocchio::Model;
  load_model(argv[1], model);
  auto& data = *new pinocchio::Data(model);
  const auto tip = model.getFrameId(argv[2]);
  const bench::States s = bench::read_states(argv[3], model.nv);
  const int m = s.size();
  Eigen::MatrixXd jac = Eigen::MatrixXd::Zero(6, model.nv);
  auto report = [](const char* name, double ns) {
    std::printf("pinocchio %s %.1f\n", name, ns);
    std::fflush(stdout);
  };
  // One inverse-dynamics result on stderr, to check against armctl that the model is sound.
  pinocchio::rnea(model, data, s.q[0], s.qd[0], s.qdd[0]);
  std::fprintf(stderr, "pinocchio rnea(state 0) =");
  for (int i = 0; i < model.nv; ++i) std::fprintf(stderr, " %.12g", data.tau[i]);
  std::fprintf(stderr, "\n");
  using namespace pinocchio;
  report("rnea", bench::median_ns(batches, m, [&](int k) { rnea(model, data, s.q[k], s.qd[k], s.qdd[k]); }));
  report("mass_matrix", bench::median_ns(batches, m, [&](int k) { crba(model, data, s.q[k]); }));
  report("coriolis_matrix", bench::median_ns(batches, m, [&](int k) { computeCoriolisMatrix(model, data, s.q[k], s.qd[k]); }));
  report("gravity", bench::median_ns(batches, m, [&](int k) { computeGeneralizedGravity(model, data, s.q[k]); }));
  report("forward_dynamics", bench::median_ns(batches, m, [&](int k) { aba(model, data, s.q[k], s.qd[k], s.qdd[k]); }));
  report("forward_kinematics", bench::median_ns(batches, m, [&](int k) {
    forwardKinematics(model, data, s.q[k]);
    updateFramePlacement(model, data, tip);
  }));
  report("jacobian", bench::median_ns(batches, m, [&](int k) {
    computeFrameJacobian(model, data, s.q[k], tip, LOCAL_WORLD_ALIGNED, jac);
  }));
  report("regressor", bench::median_ns(batches, m, [&](int k) {
    computeJointTorqueRegressor(model, data, s.q[k], s.qd[k], s.qdd[k]);
  }));
  // What armctl's all_terms gives: M, C qd + G, G, the tip's pose, Jacobian and Jdot qd.
  Data::Matrix6x dj = Data::Matrix6x::Zero(6, model.nv);
  Eigen::VectorXd jdot_v(6);
  report("all_terms", bench::median_ns(batches, m, [&](int k) {
    computeAllTerms(model, data, s.q[k], s.qd[k]);
    updateFramePlacement(model, data, tip);
    getFrameJacobian(model, data, tip, LOCAL_WORLD_ALIGNED, jac);
    getFrameJacobianTimeVariation(model, data, tip, LOCAL_WORLD_ALIGNED, dj);
    jdot_v.noalias() = dj * s.qd[k];
  }));
  Eigen::MatrixXd dg = Eigen::MatrixXd::Zero(model.nv, model.nv);
  report("rnea_derivatives", bench::median_ns(batches, m, [&](int k) {
    computeRNEADerivatives(model, data, s.q[k], s.qd[k], s.qdd[k]);
  }));
  report("gravity_derivatives", bench::median_ns(batches, m, [&](int k) {
    computeGeneralizedGravityDerivatives(model, data, s.q[k], dg);
  }));
  // The sample's qdd as the torque, as for aba above.
  report("forward_dynamics_derivatives", bench::median_ns(batches, m, [&](int k) {
    computeABADerivatives(model, data, s.q[k], s.qd[k], s.qdd[k]);
  }));
  return 0;
}
