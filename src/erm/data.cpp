#include "slr/erm/data.hpp"

#include <unistd.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "slr/erm/normals.hpp"
#include "slr/model/parallel.hpp"

namespace slr::erm {
namespace {
template <class T>
T* storage_of(std::unique_ptr<T[]>& owner) noexcept {
  return owner.get();
}

// The token array is gigabytes written once: with 4 KiB pages its first touch costs one page
// fault per 4 KiB (~600 000 at D = N = 10^4, L = 3, a large share of the generation time).
// Ask for transparent huge pages (2 MiB) where the kernel offers them only on request
// (THP "madvise" mode); a hint, so failure is ignored and results do not depend on it.
void advise_huge_pages(void* begin, std::size_t bytes) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::size_t huge_page = std::size_t{1} << 21;
  if (bytes < 2 * huge_page) return;
  const long page_size = sysconf(_SC_PAGESIZE);
  if (page_size <= 0) return;
  const auto page = static_cast<std::uintptr_t>(page_size);
  const auto first = (reinterpret_cast<std::uintptr_t>(begin) + page - 1) / page * page;
  const auto last = (reinterpret_cast<std::uintptr_t>(begin) + bytes) / page * page;
  if (last > first) (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)begin;
  (void)bytes;
#endif
}

std::size_t draw_length(const model::length_law& law, double u) {
  if (law.is_fixed()) return law.support().front().length;
  double cumulative = 0;
  for (const auto& e : law.support()) {
    cumulative += e.probability;
    if (u < cumulative) return e.length;
  }
  return law.support().back().length;
}

std::size_t draw_from(std::span<const double> p, double u) {
  double cumulative = 0;
  for (std::size_t l = 0; l < p.size(); ++l) {
    cumulative += p[l];
    if (u < cumulative) return l;
  }
  return p.size() - 1;
}

// Fills sequences [begin, end) (local indices) of the arrays; T is the token storage type.
template <class T>
void fill_sequences(const model::problem& problem, const teacher& teacher, std::uint64_t seed,
                    model::stream_purpose purpose, std::uint64_t first_index, std::size_t max_length,
                    std::size_t begin, std::size_t end, T* tokens, std::uint32_t* lengths, std::uint32_t* locations,
                    double* labels) {
  const std::size_t D = teacher.dimension();
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(D));
  const auto& task = problem.task;
  const bool spiked = task.kind() == model::task_kind::spiked;
  const double spike = spiked ? std::sqrt(task.nu()) * inv_sqrt_d : 0.0;
  std::vector<double> row(D), chi_star(max_length), posterior(max_length);
  // Labels y = x_ε·v*/√D + Δ ξ, computed for `pending.size()` sequences at a time: each dot
  // product is the same strictly sequential sum as one at a time (identical bits), but the
  // independent sums interleave, so the adds' latency no longer bounds the loop (it was ~10 %
  // of the generation at D = 10^4).
  struct pending_label {
    std::size_t local;
    const T* x; // the token at the label's location
    double noise;
  };
  std::array<pending_label, 4> pending{};
  std::size_t queued = 0;
  const double* v_star = teacher.v_star.data();
  const auto flush = [&] {
    std::array<double, 4> z{};
    if (queued == pending.size()) {
      const T *x0 = pending[0].x, *x1 = pending[1].x, *x2 = pending[2].x, *x3 = pending[3].x;
      for (std::size_t i = 0; i < D; ++i) {
        const double vi = v_star[i];
        z[0] += static_cast<double>(x0[i]) * vi;
        z[1] += static_cast<double>(x1[i]) * vi;
        z[2] += static_cast<double>(x2[i]) * vi;
        z[3] += static_cast<double>(x3[i]) * vi;
      }
    } else {
      for (std::size_t g = 0; g < queued; ++g)
        for (std::size_t i = 0; i < D; ++i) z[g] += static_cast<double>(pending[g].x[i]) * v_star[i];
    }
    for (std::size_t g = 0; g < queued; ++g)
      labels[pending[g].local] = z[g] * inv_sqrt_d + problem.delta * pending[g].noise;
    queued = 0;
  };
  for (std::size_t local = begin; local < end; ++local) {
    const std::uint64_t mu = first_index + local;
    model::counter_rng rng(seed, purpose, mu);
    const std::size_t L = draw_length(problem.lengths, rng.uniform());
    const double location_uniform = rng.uniform();
    const double label_noise = rng.normal();
    std::size_t location = spiked ? std::min(L - 1, static_cast<std::size_t>(location_uniform * static_cast<double>(L)))
                                  : 0;
    T* sequence = tokens + local * max_length * D;
    for (std::size_t l = 0; l < L; ++l) {
      T* target = sequence + l * D;
      const bool spike_here = spiked && l == location;
      if constexpr (std::is_same_v<T, double>) {
        // f64: generate straight into the token array (no staging copy through `row`).
        // (Non-temporal stores for the rows not read again were tried: no gain measured, since
        // the kernel's zeroing of each fresh page has just brought it into the cache.)
        normal_stream(seed, purpose, mu, static_cast<std::uint32_t>(l)).fill({target, D});
        if (spike_here)
          for (std::size_t i = 0; i < D; ++i) target[i] += spike * teacher.k_star[static_cast<Eigen::Index>(i)];
      } else {
        normal_stream(seed, purpose, mu, static_cast<std::uint32_t>(l)).fill(row);
        if (spike_here)
          for (std::size_t i = 0; i < D; ++i) row[i] += spike * teacher.k_star[static_cast<Eigen::Index>(i)];
        for (std::size_t i = 0; i < D; ++i) target[i] = static_cast<T>(row[i]);
      }
      if (!spiked) { // the teacher field of the stored (possibly rounded) token
        double chi = 0;
        for (std::size_t i = 0; i < D; ++i) chi += static_cast<double>(target[i]) * teacher.k_star[static_cast<Eigen::Index>(i)];
        chi_star[l] = chi * inv_sqrt_d;
      }
    }
    std::fill(sequence + L * D, sequence + max_length * D, T{0});
    if (!spiked) {
      // max-SLR: exact sampler ε | χ* ~ softmax(νχ*) (one-hot on the argmax at ν = ∞).
      task.posterior({chi_star.data(), L}, {posterior.data(), L});
      location = draw_from({posterior.data(), L}, location_uniform);
    }
    lengths[local] = static_cast<std::uint32_t>(L);
    locations[local] = static_cast<std::uint32_t>(location);
    pending[queued++] = {local, sequence + location * D, label_noise};
    if (queued == pending.size()) flush();
  }
  flush();
}
} // namespace

precision parse_precision(std::string_view name) {
  if (name == "f64") return precision::f64;
  if (name == "f32") return precision::f32;
  throw std::invalid_argument("unknown precision '" + std::string(name) + "' (expected f64 or f32)");
}

std::string_view precision_name(precision p) noexcept { return p == precision::f64 ? "f64" : "f32"; }

std::size_t bytes_per_token_entry(precision p) noexcept { return p == precision::f64 ? sizeof(double) : sizeof(float); }

teacher teacher::draw(std::size_t dimension, std::uint64_t seed) {
  if (dimension < 2) throw std::invalid_argument("D must be >= 2 (got " + std::to_string(dimension) + ")");
  teacher t;
  t.k_star.resize(static_cast<Eigen::Index>(dimension));
  t.v_star.resize(static_cast<Eigen::Index>(dimension));
  normal_stream(seed, model::stream_purpose::teacher_weights, 0, 0).fill({t.k_star.data(), dimension});
  normal_stream(seed, model::stream_purpose::teacher_weights, 0, 1).fill({t.v_star.data(), dimension});
  const double scale = std::sqrt(static_cast<double>(dimension));
  t.k_star *= scale / t.k_star.norm();
  // Gram–Schmidt twice (re-orthogonalisation) so that k*·v* is zero to rounding.
  for (int pass = 0; pass < 2; ++pass) t.v_star -= (t.v_star.dot(t.k_star) / static_cast<double>(dimension)) * t.k_star;
  t.v_star *= scale / t.v_star.norm();
  return t;
}

double token_bytes(std::size_t sequences, std::size_t max_length, std::size_t dimension, precision storage) noexcept {
  return static_cast<double>(sequences) * static_cast<double>(max_length) * static_cast<double>(dimension) *
         static_cast<double>(bytes_per_token_entry(storage));
}

double available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream fields(line.substr(13));
      double kib = 0;
      if (fields >> kib) return kib * 1024.0;
    }
  }
  const long pages = sysconf(_SC_AVPHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0) return static_cast<double>(pages) * static_cast<double>(page_size);
  return std::numeric_limits<double>::infinity(); // unknown: do not refuse
}

sequence_data sequence_data::generate(const model::problem& problem, const teacher& teacher, std::size_t count,
                                      std::uint64_t seed, model::stream_purpose purpose, precision storage,
                                      unsigned threads, std::uint64_t first_index) {
  if (count == 0) throw std::invalid_argument("the number of sequences must be >= 1");
  if (teacher.dimension() < 2) throw std::invalid_argument("D must be >= 2");
  problem.validate();
  sequence_data data;
  data.max_length_ = problem.lengths.max_length();
  data.dimension_ = teacher.dimension();
  data.storage_ = storage;
  const std::size_t entries = count * data.max_length_ * data.dimension_;
  // Uninitialised allocation: every entry is written below (padding explicitly zeroed), so
  // the pages are first touched by the generating threads, not by a memset.
  if (storage == precision::f64)
    data.f64_ = std::make_unique_for_overwrite<double[]>(entries);
  else
    data.f32_ = std::make_unique_for_overwrite<float[]>(entries);
  if (storage == precision::f64)
    advise_huge_pages(data.f64_.get(), entries * sizeof(double));
  else
    advise_huge_pages(data.f32_.get(), entries * sizeof(float));
  data.lengths_.resize(count);
  data.locations_.resize(count);
  data.labels_.resize(count);
  struct nothing {
    nothing& operator+=(const nothing&) { return *this; }
  };
  model::chunked_reduce(count, 16, threads, nothing{}, [&](std::size_t begin, std::size_t end, nothing&) {
    if (storage == precision::f64)
      fill_sequences(problem, teacher, seed, purpose, first_index, data.max_length_, begin, end,
                     storage_of(data.f64_), data.lengths_.data(), data.locations_.data(), data.labels_.data());
    else
      fill_sequences(problem, teacher, seed, purpose, first_index, data.max_length_, begin, end,
                     storage_of(data.f32_), data.lengths_.data(), data.locations_.data(), data.labels_.data());
  });
  return data;
}

Eigen::VectorXd sequence_data::token(std::size_t mu, std::size_t l) const {
  Eigen::VectorXd out(static_cast<Eigen::Index>(dimension_));
  const std::size_t offset = (mu * max_length_ + l) * dimension_;
  for (std::size_t i = 0; i < dimension_; ++i)
    out[static_cast<Eigen::Index>(i)] = f64_ ? f64_[offset + i] : static_cast<double>(f32_[offset + i]);
  return out;
}

double sequence_data::bytes() const noexcept {
  return token_bytes(size(), max_length_, dimension_, storage_) +
         static_cast<double>(size()) * (2 * sizeof(std::uint32_t) + sizeof(double));
}

} // namespace slr::erm
