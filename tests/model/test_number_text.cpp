// parse_number: the whole text must be one number (blanks around it allowed); never throws.
#include "slr/model/number_text.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace {
using slr::model::parse_number;

TEST(NumberText, AcceptsWholeNumbers) {
  EXPECT_EQ(parse_number("1.5"), 1.5);
  EXPECT_EQ(parse_number("  -3e-2\t"), -0.03);
  EXPECT_EQ(parse_number("0x1p-3"), 0.125);
  EXPECT_TRUE(std::isinf(*parse_number("inf")));
  EXPECT_TRUE(std::isnan(*parse_number("nan")));
  EXPECT_EQ(parse_number("1e-400"), 0.0); // underflow to zero is a number (strtod's result)
}

TEST(NumberText, RejectsEverythingElse) {
  for (const char* bad : {"", "   ", "abc", "1.5x", "1 2", "--1", "1e999", "-1e999", "1,5"})
    EXPECT_FALSE(parse_number(bad).has_value()) << "'" << bad << "'";
}
} // namespace
