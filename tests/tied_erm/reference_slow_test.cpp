#include "reference_agreement.hpp"

namespace {

using slr::tied::parametrisation;

// α = 4 (n = 14 400 sequences at d = 60): minutes, hence LABELS slow.
TEST(TiedErmReferenceSlow, FactorisedAtAlphaFour) {
  tied_erm_reference::expect_agreement("fact1_alpha4.0_d60", parametrisation::factorised, 4.0, 8);
}
TEST(TiedErmReferenceSlow, DirectAtAlphaFour) {
  tied_erm_reference::expect_agreement("direct_alpha4.0_d60", parametrisation::direct, 4.0, 8);
}

} // namespace
