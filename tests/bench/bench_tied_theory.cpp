// Wall time of one RS theory point of tied attention (T = 2, Fig. 1 parameters k0 = 0.5, λ = 0.01,
// Δ = 0.5, β = β0 = 1; final phase 2^16 scrambled Sobol points, one thread), and of one channel
// evaluation at 2^16 points. Prints a table; usage: bench_tied_theory [alpha ...]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "slr/tied/theory.hpp"

int main(int argc, char** argv) {
  std::vector<double> alphas;
  for (int i = 1; i < argc; ++i) alphas.push_back(std::atof(argv[i]));
  if (alphas.empty()) alphas = {0.05, 0.5, 4.0};
  std::printf("%-8s %-12s %-8s %-9s %-9s %-10s %-10s %-12s %-10s\n", "alpha", "param", "status", "iters", "seconds",
              "q", "test_clean", "newton/pt", "channel_s");
  for (double alpha : alphas)
    for (auto param : {slr::tied::parametrisation::factorised, slr::tied::parametrisation::direct}) {
      slr::tied::problem p;
      p.alpha = alpha;
      p.param = param;
      const slr::tied::theory_options o;
      const auto r = slr::tied::solve_theory(p, o);
      // One channel evaluation at the converged overlaps, all 2^T starts at every point.
      const auto sample = slr::tied::channel_sample(p, o.log2_points, o.seed);
      const auto t0 = std::chrono::steady_clock::now();
      const auto c = slr::tied::channel_average(p, r.x.q, r.x.m, r.x.V, sample);
      const double ct = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("%-8g %-12s %-8s %3d + %-3d %-9.3f %-10.6g %-10.6g %-12.2f %-10.3f\n", alpha,
                  std::string(slr::tied::parametrisation_name(param)).c_str(),
                  std::string(slr::tied::theory_status_name(r.status)).c_str(), r.iterations_coarse, r.iterations,
                  r.seconds, r.x.q, r.test_clean, double(c.newton_steps) / c.points, ct);
    }
}
