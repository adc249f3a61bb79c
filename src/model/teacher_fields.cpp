#include "slr/model/teacher_fields.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "slr/model/parallel.hpp"

namespace slr::model {

teacher_fields draw_teacher_fields(const task& task, const length_law& lengths, std::size_t samples,
                                   std::uint64_t seed, unsigned threads) {
  if (samples == 0) throw std::invalid_argument("the number of Monte Carlo samples must be >= 1");
  teacher_fields fields;
  fields.max_length = lengths.max_length();
  const auto& support = lengths.support();
  for (std::uint32_t k = 0; k < support.size(); ++k) {
    const auto count = std::max<std::size_t>(
        1, static_cast<std::size_t>(std::llround(static_cast<double>(samples) * support[k].probability)));
    fields.length.insert(fields.length.end(), count, static_cast<std::uint32_t>(support[k].length));
    fields.stratum.insert(fields.stratum.end(), count, k);
    fields.weight.insert(fields.weight.end(), count, support[k].probability / static_cast<double>(count));
  }
  const std::size_t S = fields.size();
  const std::size_t L = fields.max_length;
  fields.location.assign(S, 0);
  fields.chi_star.assign(S * L, 0.0);
  fields.z_star.assign(S * L, 0.0);
  fields.posterior.assign(S * L, 0.0);
  struct nothing {
    nothing& operator+=(const nothing&) { return *this; }
  };
  chunked_reduce(S, 4096, threads, nothing{}, [&](std::size_t begin, std::size_t end, nothing&) {
    for (std::size_t s = begin; s < end; ++s) {
      counter_rng rng(seed, stream_purpose::teacher_fields, s);
      const std::size_t n = fields.length[s];
      std::span<double> chi(fields.chi_star.data() + s * L, n);
      fields.location[s] = static_cast<std::uint32_t>(task.sample(chi, rng));
      for (std::size_t l = 0; l < n; ++l) fields.z_star[s * L + l] = rng.normal();
      task.posterior(chi, {fields.posterior.data() + s * L, n});
    }
  });
  return fields;
}

std::vector<double> every_row(std::span<const double> rows, std::size_t row_length, std::size_t stride) {
  stride = std::max<std::size_t>(stride, 1);
  const std::size_t count = row_length == 0 ? 0 : rows.size() / row_length;
  std::vector<double> out;
  out.reserve(((count + stride - 1) / stride) * row_length);
  for (std::size_t r = 0; r < count; r += stride)
    out.insert(out.end(), rows.begin() + static_cast<std::ptrdiff_t>(r * row_length),
               rows.begin() + static_cast<std::ptrdiff_t>((r + 1) * row_length));
  return out;
}

teacher_fields teacher_fields::every(std::size_t stride) const {
  stride = std::max<std::size_t>(stride, 1);
  teacher_fields out;
  out.max_length = max_length;
  for (std::size_t s = 0; s < size(); s += stride) {
    out.length.push_back(length[s]);
    out.location.push_back(location[s]);
    out.stratum.push_back(stratum[s]);
    out.weight.push_back(weight[s]);
  }
  out.chi_star = every_row(chi_star, max_length, stride);
  out.z_star = every_row(z_star, max_length, stride);
  out.posterior = every_row(posterior, max_length, stride);
  return out;
}

} // namespace slr::model
