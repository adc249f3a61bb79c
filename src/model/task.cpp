#include "slr/model/task.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace slr::model {
namespace {
// p = softmax(scale · x), computed with the maximum subtracted (log-sum-exp).
void softmax_scaled(std::span<const double> x, double scale, std::span<double> p) {
  double top = -std::numeric_limits<double>::infinity();
  for (double v : x) top = std::max(top, scale * v);
  double total = 0;
  for (std::size_t l = 0; l < x.size(); ++l) total += (p[l] = std::exp(scale * x[l] - top));
  for (double& v : p) v /= total;
}
} // namespace

task::task(task_kind kind, double nu) : kind_(kind), nu_(nu) {
  if (std::isnan(nu) || nu < 0) throw std::invalid_argument("nu must be >= 0 (got " + std::to_string(nu) + ")");
  if (kind == task_kind::spiked && std::isinf(nu))
    throw std::invalid_argument("nu = inf is only defined for the max task");
}

std::span<const task_name> task_names() noexcept {
  static constexpr task_name names[] = {{task_kind::spiked, "spiked"}, {task_kind::max, "max"}};
  return names;
}

task_kind task::parse_kind(std::string_view name) {
  std::string known;
  for (const auto& entry : task_names()) {
    if (name == entry.name) return entry.kind;
    known += (known.empty() ? "" : ", ") + std::string(entry.name);
  }
  throw std::invalid_argument("unknown task '" + std::string(name) + "' (expected one of: " + known + ")");
}

std::string task::kind_name(task_kind kind) {
  for (const auto& entry : task_names())
    if (entry.kind == kind) return entry.name;
  return "unknown";
}

bool task::is_hard() const noexcept { return kind_ == task_kind::max && std::isinf(nu_); }

std::string task::name() const { return kind_name(kind_); }

std::size_t task::sample(std::span<double> chi_star, counter_rng& rng) const {
  const std::size_t L = chi_star.size();
  for (double& c : chi_star) c = rng.normal();
  if (kind_ == task_kind::spiked) {
    const auto location = std::min(L - 1, static_cast<std::size_t>(rng.uniform() * static_cast<double>(L)));
    chi_star[location] += std::sqrt(nu_);
    return location;
  }
  if (is_hard()) return static_cast<std::size_t>(std::max_element(chi_star.begin(), chi_star.end()) - chi_star.begin());
  // max-SLR, finite ν: the χ* marginal is untouched and ε* | χ* ~ softmax(νχ*) (an exact sampler).
  double p[64];
  std::vector<double> heap;
  std::span<double> probabilities(p, std::min<std::size_t>(L, 64));
  if (L > 64) {
    heap.resize(L);
    probabilities = heap;
  }
  softmax_scaled(chi_star, nu_, probabilities);
  const double u = rng.uniform();
  double cumulative = 0;
  for (std::size_t l = 0; l < L; ++l) {
    cumulative += probabilities[l];
    if (u < cumulative) return l;
  }
  return L - 1;
}

void task::posterior(std::span<const double> chi_star, std::span<double> p) const {
  if (is_hard()) {
    std::fill(p.begin(), p.end(), 0.0);
    p[static_cast<std::size_t>(std::max_element(chi_star.begin(), chi_star.end()) - chi_star.begin())] = 1.0;
    return;
  }
  softmax_scaled(chi_star, kind_ == task_kind::spiked ? std::sqrt(nu_) : nu_, p);
}

void task::tilt_score(std::size_t location, std::span<const double> chi_star, std::span<double> score) const {
  if (is_hard()) throw std::logic_error("the tilt of max-SLR at nu = inf has no score; use the Stein-free estimator");
  if (kind_ == task_kind::spiked) {
    std::fill(score.begin(), score.end(), 0.0);
    score[location] = std::sqrt(nu_);
    return;
  }
  softmax_scaled(chi_star, nu_, score);
  for (std::size_t l = 0; l < chi_star.size(); ++l) score[l] = nu_ * ((l == location ? 1.0 : 0.0) - score[l]);
}

} // namespace slr::model
