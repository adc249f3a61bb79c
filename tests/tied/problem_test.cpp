#include "slr/tied/problem.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace {

std::string message_of(const slr::tied::problem& p) {
  try {
    p.validate();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

TEST(TiedProblem, DefaultsAreThePapersFigureOneSetting) {
  const slr::tied::problem p;
  EXPECT_NO_THROW(p.validate());
  EXPECT_EQ(p.fields(), 3);
  EXPECT_DOUBLE_EQ(p.target_second_moment(), 1.5);
}

TEST(TiedProblem, OutOfRangeValuesNameTheParameter) {
  slr::tied::problem p;
  p.T = 1;
  EXPECT_EQ(message_of(p).rfind("T:", 0), 0u);
  p = {};
  p.k0 = 0;
  EXPECT_EQ(message_of(p).rfind("k0:", 0), 0u);
  p = {};
  p.lambda = -1e-3;
  EXPECT_EQ(message_of(p).rfind("lambda:", 0), 0u);
  p = {};
  p.beta0 = 0;
  EXPECT_EQ(message_of(p).rfind("beta0:", 0), 0u);
}

TEST(TiedProblem, ParametrisationNamesRoundTrip) {
  using slr::tied::parametrisation;
  for (auto q : {parametrisation::factorised, parametrisation::direct, parametrisation::psd_nuclear})
    EXPECT_EQ(slr::tied::parse_parametrisation(slr::tied::parametrisation_name(q)), q);
  EXPECT_THROW((void)slr::tied::parse_parametrisation("psd"), std::invalid_argument);
}

} // namespace
