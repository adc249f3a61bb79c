#pragma once
// Private: the concrete activations, one source file each (see activation.hpp).
#include <memory>

#include "slr/model/activation.hpp"

namespace slr::model::detail {
std::unique_ptr<const activation> make_softmax();
std::unique_ptr<const activation> make_linear();
std::unique_ptr<const activation> make_erf(double offset);
std::unique_ptr<const activation> make_softplus_kernel();
} // namespace slr::model::detail
