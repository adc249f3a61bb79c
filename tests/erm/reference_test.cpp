// Always-on version of the agreement with the replica fixed point: D = 300, 6 seeds per case.
// Finite-D fluctuations at D = 300 are √2 larger than at the reference's D = 600 and are
// measured by the seed spread, which enters the bound.
#include <gtest/gtest.h>

#include "reference_agreement.hpp"

TEST(ReferenceAgreement, SmallInstance) { slr_test::check_reference_agreement(300, 6, 2); }
