// KDL on a URDF chain: prints "kdl <algorithm> <ns>" per line. KDL has no Coriolis matrix
// (only the vector C qd) and no regressor.
// usage: kdl_bench URDF ROOT_LINK TIP_LINK STATES_FILE [BATCHES]
#include <kdl/chaindynparam.hpp>
#include <kdl/chainfdsolver_recursive_newton_euler.hpp>
#include <kdl/chainfksolverpos_recursive.hpp>
#include <kdl/chainidsolver_recursive_newton_euler.hpp>
#include <kdl/chainjnttojacsolver.hpp>
#include <kdl_parser/kdl_parser.hpp>

#include "bench_common.hpp"

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s URDF ROOT_LINK TIP_LINK STATES_FILE [BATCHES]\n", argv[0]);
    return 2;
  }
  const int batches = argc > 5 ? std::atoi(argv[5]) : 41;
  KDL::Tree tree;
  KDL::Chain chain;
  if (!kdl_parser::treeFromFile(argv[1], tree) || !tree.getChain(argv[2], argv[3], chain)) {
    std::fprintf(stderr, "KDL could not build the chain %s -> %s\n", argv[2], argv[3]);
    return 1;
  }
  const unsigned n = chain.getNrOfJoints();
  const bench::States s = bench::read_states(argv[4], n);
  const int m = s.size();
  std::vector<KDL::JntArray> q(m, KDL::JntArray(n)), qd(m, KDL::JntArray(n)), qdd(m, KDL::JntArray(n));
  for (int k = 0; k < m; ++k) {
    q[k].data = s.q[k];
    qd[k].data = s.qd[k];
    qdd[k].data = s.qdd[k];
  }
  const KDL::Vector gravity(0, 0, -9.81);
  KDL::ChainIdSolver_RNE rne(chain, gravity);
  KDL::ChainDynParam dyn(chain, gravity);
  KDL::ChainFkSolverPos_recursive fk(chain);
  KDL::ChainJntToJacSolver jac_solver(chain);
  KDL::ChainFdSolver_RNE fd(chain, gravity);
  KDL::JntArray tau(n), out(n);
  KDL::JntSpaceInertiaMatrix mass(n);
  KDL::Wrenches wrenches(chain.getNrOfSegments(), KDL::Wrench::Zero());
  KDL::Frame frame;
  KDL::Jacobian jac(n);
  auto report = [](const char* name, double ns) { std::printf("kdl %s %.1f\n", name, ns); };
  report("rnea", bench::median_ns(batches, m, [&](int k) { rne.CartToJnt(q[k], qd[k], qdd[k], wrenches, tau); }));
  report("mass_matrix", bench::median_ns(batches, m, [&](int k) { dyn.JntToMass(q[k], mass); }));
  report("coriolis_vector", bench::median_ns(batches, m, [&](int k) { dyn.JntToCoriolis(q[k], qd[k], out); }));
  report("gravity", bench::median_ns(batches, m, [&](int k) { dyn.JntToGravity(q[k], out); }));
  report("forward_dynamics", bench::median_ns(batches, m, [&](int k) { fd.CartToJnt(q[k], qd[k], qdd[k], wrenches, out); }));
  report("forward_kinematics", bench::median_ns(batches, m, [&](int k) { fk.JntToCart(q[k], frame); }));
  report("jacobian", bench::median_ns(batches, m, [&](int k) { jac_solver.JntToJac(q[k], jac); }));
  return 0;
}
