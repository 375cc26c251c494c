// Fixed notation to six significant digits: the digits {:.6g} gives, never an exponent.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "util/number_text.h"

namespace {

using phaze::fixed_significant;

TEST(FixedSignificant, WritesWhatGWritesWithoutAnExponent) {
  EXPECT_EQ(fixed_significant(8431670.0), "8431670");
  EXPECT_EQ(fixed_significant(8.43167e6), "8431670");
  EXPECT_EQ(fixed_significant(1234567.0), "1234570");  // six significant digits, rounded as {:.6g} rounds
  EXPECT_EQ(fixed_significant(5.62481e-5), "0.0000562481");
  EXPECT_EQ(fixed_significant(100.323), "100.323");
  EXPECT_EQ(fixed_significant(0.09214), "0.09214");
  EXPECT_EQ(fixed_significant(999999.7), "1000000");  // rounding carries into a new digit
  EXPECT_EQ(fixed_significant(-2.5), "-2.5");
  EXPECT_EQ(fixed_significant(0), "0");
  EXPECT_EQ(fixed_significant(82.6666, 4), "82.67");
  // Wherever {:.6g} writes no exponent, the two agree.
  for (double x = 1.234567e-4; x < 1e6; x *= 3.7) EXPECT_EQ(fixed_significant(x), fmt::format("{:.6g}", x)) << x;
}

}  // namespace

TEST(Counted, OneIsSingularEveryOtherCountPlural) {
  EXPECT_EQ(phaze::counted(1, "design"), "1 design");
  EXPECT_EQ(phaze::counted(0, "design"), "0 designs");
  EXPECT_EQ(phaze::counted(29360, "design"), "29360 designs");
  EXPECT_EQ(phaze::counted(1, "layer pass", "layer passes"), "1 layer pass");
  EXPECT_EQ(phaze::counted(2, "layer pass", "layer passes"), "2 layer passes");
}
