#include "reference_agreement.hpp"

namespace {

using slr::tied::parametrisation;

// 16 seeds: our standard errors are then ~0.7 of the reference's, so the comparison is limited by
// the reference's 8 seeds rather than ours.
TEST(TiedErmReference, FactorisedAtSmallAlpha) {
  tied_erm_reference::expect_agreement("fact1_alpha0.05_d60", parametrisation::factorised, 0.05, 16);
}
TEST(TiedErmReference, FactorisedAtAlphaHalf) {
  tied_erm_reference::expect_agreement("fact1_alpha0.5_d60", parametrisation::factorised, 0.5, 16);
}
TEST(TiedErmReference, DirectAtSmallAlpha) {
  tied_erm_reference::expect_agreement("direct_alpha0.05_d60", parametrisation::direct, 0.05, 16);
}
TEST(TiedErmReference, DirectAtAlphaHalf) {
  tied_erm_reference::expect_agreement("direct_alpha0.5_d60", parametrisation::direct, 0.5, 16);
}

} // namespace
