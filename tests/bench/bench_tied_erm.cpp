// Tied-attention ERM timings (prints a table; not a test):
//   ./build/tests/bench/bench_tied_erm [d=100] [alpha=4] [parametrisation=factorised] [seed=0] [tolerance=1e-7] [lbfgs_memory=20] [init_scale=1]
// 1. one loss + gradient at the teacher's S versus a single dgemm of the same shape
//    ((n·T)×d times d×d), measured in the same run (median of repeats);
// 2. one full ERM run to convergence with its optimiser diagnostics and observables.
// The OpenBLAS thread count is whatever OPENBLAS_NUM_THREADS says (both parts use the same).
// SLR_BENCH_CONVEX_START=1: factorised L-BFGS from the PSD-nuclear solution (solver_settings::convex_start);
// SLR_BENCH_SKIP_PRODUCTS=1: skip part 1.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include <cblas.h>

#include "slr/tied_erm/measure.hpp"
#include "slr/tied_erm/risk.hpp"

namespace {

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct timing {
  double wall = 0, cpu = 0; // medians over the repeats, seconds
};

// Median wall and CPU time (all threads of the process) of `work`. CPU time is what the ratios
// use: on a shared machine the wall time of a single-threaded run also counts waiting for a core.
timing median_time(int repeats, const auto& work) {
  std::vector<double> wall, cpu;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const double c0 = cpu_seconds();
    work();
    cpu.push_back(cpu_seconds() - c0);
    wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  return {wall[wall.size() / 2], cpu[cpu.size() / 2]};
}

} // namespace

int main(int argc, char** argv) {
  using namespace slr::tied_erm;
  const std::size_t d = argc > 1 ? std::stoul(argv[1]) : 100;
  slr::tied::problem p;
  p.alpha = argc > 2 ? std::stod(argv[2]) : 4.0;
  p.param = slr::tied::parse_parametrisation(argc > 3 ? argv[3] : "factorised");
  const std::uint64_t seed = argc > 4 ? std::stoull(argv[4]) : 0;
  const double tolerance = argc > 5 ? std::stod(argv[5]) : slr::tied_erm::solver_settings{}.tolerance;
  const std::size_t n = training_size(p.alpha, d);
  std::printf("tied-attention ERM: d = %zu, alpha = %g (n = %zu), T = %d, %s, OpenBLAS threads %d\n", d, p.alpha, n,
              p.T, std::string(slr::tied::parametrisation_name(p.param)).c_str(), openblas_get_num_threads());

  // 1. Loss + gradient versus one dgemm of the same shape.
  if (std::getenv("SLR_BENCH_SKIP_PRODUCTS") == nullptr) {
    const auto t = teacher::draw(d, p.k0, seed);
    const auto data = dataset::generate(p, t, n, seed, slr::model::stream_purpose::training_data);
    empirical_risk risk(p, data);
    Eigen::MatrixXd grad;
    const Eigen::MatrixXd S = t.S;
    row_matrix P(data.tokens().rows(), data.tokens().cols());
    const auto rows = static_cast<int>(data.tokens().rows()), dd = static_cast<int>(d);
    const int repeats = 21;
    double sink = 0;
    const auto gemm_once = [&] {
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, dd, dd, 1.0, data.tokens().data(), dd, S.data(), dd,
                  0.0, P.data(), dd);
      sink += P(0, 0);
    };
    gemm_once(); // warm-up (page faults of P, OpenBLAS buffers)
    sink += risk.loss(S, &grad);
    const auto gemm = median_time(repeats, gemm_once);
    const auto loss_only = median_time(repeats, [&] { sink += risk.loss(S); });
    const auto loss_grad = median_time(repeats, [&] { sink += risk.loss(S, &grad); });
    const double gflop = 2.0 * rows * static_cast<double>(d * d) / 1e9;
    std::printf("  (median of %d; CPU ms / wall ms)\n", repeats);
    std::printf("  dgemm (%d x %zu) * (%zu x %zu): %8.2f / %8.2f ms  (%.1f GFlop/s CPU)\n", rows, d, d, d,
                1e3 * gemm.cpu, 1e3 * gemm.wall, gflop / gemm.cpu);
    std::printf("  loss only                      : %8.2f / %8.2f ms  (%.2f x dgemm)\n", 1e3 * loss_only.cpu,
                1e3 * loss_only.wall, loss_only.cpu / gemm.cpu);
    std::printf("  loss + gradient                : %8.2f / %8.2f ms  (%.2f x dgemm)\n", 1e3 * loss_grad.cpu,
                1e3 * loss_grad.wall, loss_grad.cpu / gemm.cpu);
    if (sink == 0.12345) std::printf("%g\n", sink);
  }

  // 2. ERM to convergence.
  erm_settings s;
  s.d = d;
  s.seed = seed;
  s.solver.tolerance = tolerance;
  if (argc > 6) s.solver.lbfgs_memory = std::stoul(argv[6]);
  if (argc > 7) s.solver.init_scale = std::stod(argv[7]);
  s.solver.convex_start = std::getenv("SLR_BENCH_CONVEX_START") != nullptr;
  const auto start = std::chrono::steady_clock::now();
  const double cpu0 = cpu_seconds();
  const auto m = run_erm(p, s);
  const double cpu = cpu_seconds() - cpu0;
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto& o = m.optimiser;
  std::printf("  ERM%s: %.2f s wall, %.2f s CPU (solver %.2f s wall), status %s%s%s, %zu iterations, %zu evaluations, relative "
              "gradient %.2e\n",
              s.solver.convex_start ? " (convex start)" : "", total, cpu, o.wall_seconds, std::string(solver_status_name(o.status)).c_str(), o.message.empty() ? "" : ": ",
              o.message.c_str(), o.iterations, o.evaluations, o.relative_gradient);
  std::printf("  test_clean %.5f ± %.5f, test_noisy %.5f ± %.5f, train_loss %.5f, objective/d² %.6f\n", m.test_clean,
              m.test_clean_se, m.test_noisy, m.test_noisy_se, m.train_loss, m.objective_per_d2);
  std::printf("  q %.5f, m %.5f, Q* %.5f, mse_S %.5f, rank(1e-3) %.4f, rank(1e-2) %.4f, KKT %.2e\n", m.q, m.m,
              m.target_second_moment, m.mse_S, m.rank_rel_1e3, m.rank_rel_1e2, m.kkt_residual);
  return 0;
}
