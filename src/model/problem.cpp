#include "slr/model/problem.hpp"

#include <cmath>
#include <stdexcept>

namespace slr::model {

void problem::validate() const {
  if (!std::isfinite(delta) || delta < 0) throw std::invalid_argument("delta must be finite and >= 0");
  if (!std::isfinite(activation.erf_offset)) throw std::invalid_argument("erf offset must be finite");
}

} // namespace slr::model
