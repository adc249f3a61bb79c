#include "slr/theory/bayes_jump.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "slr/model/random.hpp"

namespace slr::theory {

void bayes_jump_options::validate() const {
  if (!(alpha_min > 0) || !std::isfinite(alpha_max) || !(alpha_max > alpha_min))
    throw std::invalid_argument("alpha-min and alpha-max must satisfy 0 < alpha-min < alpha-max < inf");
  if (scan_points < 3) throw std::invalid_argument("scan must be >= 3 points");
  if (!(relative_tolerance > 0 && relative_tolerance < 1))
    throw std::invalid_argument("jump-tol must be in (0, 1)");
  if (!(minimum_gap > 0) || !std::isfinite(minimum_gap)) throw std::invalid_argument("minimum gap must be finite and > 0");
  if (!solver.informed || !solver.uninformed)
    throw std::invalid_argument("the jump search needs both the informed and the uninformed start");
  solver.validate();
}

double bayes_jump_side::free_entropy_gap() const {
  if (!result.coexistence) return std::numeric_limits<double>::quiet_NaN();
  if (exact_recovery) return std::numeric_limits<double>::infinity();
  double informed = std::numeric_limits<double>::quiet_NaN(), uninformed = informed;
  for (const auto& b : result.branches) (b.start == "informed" ? informed : uninformed) = b.free_entropy.value;
  return informed - uninformed;
}

double bayes_jump_side::free_entropy_gap_stderr() const {
  return result.coexistence ? result.free_entropy_gap.stderr : std::numeric_limits<double>::quiet_NaN();
}

namespace {
using clock_type = std::chrono::steady_clock;

double distance(const bayes_jump_side& a, const bayes_jump_side& b) {
  return (a.result.chosen.q - b.result.chosen.q).cwiseAbs().maxCoeff();
}

// Which side of the transition an α is on, where the branches tell: −1 below (the uninformed
// branch has the larger free entropy), +1 above, 0 where only one fixed point exists.
int side_of(const bayes_jump_side& s) {
  const double gap = s.free_entropy_gap();
  return std::isfinite(gap) ? (gap > 0 ? 1 : -1) : 0;
}
} // namespace

namespace {
// One search on one sample (the whole of locate_bayes_jump but the batches).
bayes_jump_result locate_once(const model::problem& problem, const bayes_jump_options& options, std::uint64_t seed,
                              clock_type::time_point start, double budget) {
  bayes_jump_result out;
  bool out_of_time = false;
  const auto evaluate = [&](double alpha) {
    state_evolution_options o = options.solver;
    const double left = budget - std::chrono::duration<double>(clock_type::now() - start).count();
    if (!(left > 0)) out_of_time = true;
    o.wall_time_limit_s = left > 0 ? left : 1e-9;
    bayes_jump_side side;
    side.alpha = alpha;
    side.result = state_evolution(problem, alpha, o).solve(seed);
    // Noiseless labels: an informed branch at q_vv = 1 recovers v exactly, and its free entropy
    // diverges (−½ log V_vv, docs/theory.md §5): it wins wherever it exists.
    if (problem.delta == 0 && side.result.coexistence)
      for (const auto& b : side.result.branches)
        if (b.start == "informed" && b.status == solve_status::ok && 1 - b.q(1, 1) < exact_recovery_gap)
          side.exact_recovery = true;
    ++out.evaluations;
    return side;
  };

  // Coarse scan, log-spaced, the end points exact.
  const double log_min = std::log(options.alpha_min), log_max = std::log(options.alpha_max);
  const std::size_t n = options.scan_points;
  for (std::size_t i = 0; i < n && !out_of_time; ++i) {
    const double alpha = i == 0       ? options.alpha_min
                         : i + 1 == n ? options.alpha_max
                                      : std::exp(log_min + (log_max - log_min) * static_cast<double>(i) /
                                                               static_cast<double>(n - 1));
    out.scan.push_back(evaluate(alpha));
  }
  const auto nan = std::numeric_limits<double>::quiet_NaN();
  out.alpha_jump = nan;
  if (out.scan.size() < 2) {
    out.status = solve_status::timeout;
    out.message = "wall-time limit reached during the coarse scan";
    return out;
  }
  // The bracket: neighbours across which the free entropies exchange the lead, if the scan saw
  // both branches there; otherwise the neighbours with the largest change of the chosen q.
  std::size_t at = out.scan.size();
  for (std::size_t i = 0; i + 1 < out.scan.size() && at == out.scan.size(); ++i)
    if (side_of(out.scan[i]) == -1 && side_of(out.scan[i + 1]) == 1) at = i;
  if (at == out.scan.size()) {
    double widest = -1;
    for (std::size_t i = 0; i + 1 < out.scan.size(); ++i) {
      const double d = distance(out.scan[i], out.scan[i + 1]);
      if (d > widest) widest = d, at = i;
    }
  }
  bayes_jump_side below = out.scan[at], above = out.scan[at + 1];
  const double coarse_gap = distance(below, above);
  // Bisection in log α. A midpoint where both branches exist is placed by the sign of the free-
  // entropy difference; elsewhere it joins the end whose chosen q it is closer to (the half with
  // the larger change keeps the discontinuity).
  while (above.alpha / below.alpha - 1 > options.relative_tolerance) {
    if (out_of_time) break;
    const double middle = std::sqrt(below.alpha * above.alpha);
    auto side = evaluate(middle);
    const int where = side_of(side);
    const bool goes_below = where != 0 ? where < 0 : distance(side, below) <= distance(side, above);
    if (goes_below) below = std::move(side);
    else above = std::move(side);
  }
  out.below = std::move(below);
  out.above = std::move(above);
  out.gap_q = distance(out.below, out.above);
  out.gap_risk = out.below.result.chosen.test_risk.value - out.above.result.chosen.test_risk.value;
  out.status = worse(out.below.result.status, out.above.result.status);
  if (out_of_time && out.status == solve_status::ok) out.status = solve_status::timeout;
  const double width = out.above.alpha / out.below.alpha - 1;

  if (out.status == solve_status::timeout) {
    out.message = "wall-time limit reached with the bracket at relative width " + std::to_string(width);
    return out;
  }
  if (out.status != solve_status::ok) {
    out.message = "a state-evolution solve at the bracket did not converge";
    return out;
  }
  // Both branches at both ends with the lead exchanged: a first-order transition by construction.
  const bool exchanged = side_of(out.below) == -1 && side_of(out.above) == 1;
  out.found = exchanged || (out.gap_q >= options.minimum_gap && out.gap_q >= 0.2 * coarse_gap);
  if (!out.found) {
    out.message = "no jump in [" + std::to_string(options.alpha_min) + ", " + std::to_string(options.alpha_max) +
                  "]: the largest change of q shrank from " + std::to_string(coarse_gap) + " to " +
                  std::to_string(out.gap_q) + " with the bracket (continuous curve)";
    return out;
  }
  // Free-entropy crossing where both branches exist at both ends; the bracket's midpoint otherwise.
  const double g_below = out.below.free_entropy_gap(), g_above = out.above.free_entropy_gap();
  const double lb = std::log(out.below.alpha), la = std::log(out.above.alpha);
  if (std::isfinite(g_below) && std::isfinite(g_above) && g_below <= 0 && g_above >= 0 && g_above > g_below) {
    out.alpha_jump = std::exp(lb + (la - lb) * (-g_below) / (g_above - g_below));
    out.message = "free entropies of the two branches cross inside the bracket";
  } else if (out.above.exact_recovery) {
    out.alpha_jump = std::sqrt(out.below.alpha * out.above.alpha);
    out.message = "noiseless labels: the informed branch recovers v exactly (q_vv = 1, divergent free entropy) and "
                  "wins where it appears, inside the bracket";
  } else {
    out.alpha_jump = std::sqrt(out.below.alpha * out.above.alpha);
    out.message = "a branch ends inside the bracket (spinodal); no free-entropy crossing to interpolate";
  }
  return out;
}
} // namespace

bayes_jump_result locate_bayes_jump(const model::problem& problem, const bayes_jump_options& options,
                                    std::uint64_t seed) {
  problem.validate();
  options.validate();
  const auto start = clock_type::now();
  const double budget = options.solver.wall_time_limit_s;
  auto out = locate_once(problem, options, seed, start, budget);
  out.alpha_jump_stderr = std::numeric_limits<double>::quiet_NaN();
  if (!out.found || options.batches < 2) return out;
  // The uncertainty of α_jump from independent batches: the same search on `batches` samples of
  // S/batches each (seeds derived from this point's). Their standard deviation is used as it is,
  // not divided by √batches: at spiked ν = 1, L = 3, Δ = 0 the full-sample α_jump of three seeds
  // (S = 4·10⁵) scatters by 0.005, as much as batches of 10⁵ do, so the location error does not
  // shrink like 1/√S (docs/theory.md §5). The bracket's half-width is added in quadrature.
  bayes_jump_options part = options;
  part.batches = 0;
  part.solver.samples = std::max<std::size_t>(1, options.solver.samples / options.batches);
  double sum = 0, sum_sq = 0;
  for (std::size_t k = 1; k <= options.batches; ++k) {
    auto batch = locate_once(problem, part, model::derive_seed(seed, k), start, budget);
    out.evaluations += batch.evaluations;
    if (batch.status == solve_status::timeout) {
      out.status = solve_status::timeout;
      out.message += "; wall-time limit reached in batch " + std::to_string(k) + " of the uncertainty";
      out.batch_alpha_jumps.clear();
      return out;
    }
    if (!batch.found) continue;
    out.batch_alpha_jumps.push_back(batch.alpha_jump);
    sum += batch.alpha_jump;
    sum_sq += batch.alpha_jump * batch.alpha_jump;
  }
  const auto n = static_cast<double>(out.batch_alpha_jumps.size());
  if (n >= 2) {
    const double variance = std::max(0.0, (sum_sq - sum * sum / n) / (n - 1));
    const double half_width = 0.5 * (out.above.alpha - out.below.alpha);
    out.alpha_jump_stderr = std::hypot(std::sqrt(variance), half_width);
    out.message += "; alpha_jump = " + std::to_string(out.alpha_jump) + " +- " + std::to_string(out.alpha_jump_stderr) +
                   " (spread of " + std::to_string(out.batch_alpha_jumps.size()) + " batches of " +
                   std::to_string(part.solver.samples) + " samples)";
  } else {
    out.message += "; no uncertainty: fewer than two batches located the jump";
  }
  return out;
}

} // namespace slr::theory
