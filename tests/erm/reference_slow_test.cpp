// The medium-size agreement with the replica fixed point (LABELS slow): D = 800, 20 seeds per case.
#include <gtest/gtest.h>

#include "reference_agreement.hpp"

TEST(ReferenceAgreement, MediumInstance) { slr_test::check_reference_agreement(800, 20, 2); }
