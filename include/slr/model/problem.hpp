#pragma once
// One SLR setting: the task, the length law, the label noise Δ ≥ 0 and the activation.
#include "slr/model/activation.hpp"
#include "slr/model/length_law.hpp"
#include "slr/model/task.hpp"

namespace slr::model {

struct problem {
  model::task task{task_kind::spiked, 1.0};
  length_law lengths = length_law::fixed(3);
  double delta = 0.0; ///< label noise standard deviation Δ ≥ 0 (y = z*_ε + Δξ)
  activation_spec activation{};

  /// Throws std::invalid_argument if Δ < 0 or not finite.
  void validate() const;
};

} // namespace slr::model
