// CheckedInt against the exact results of __int128 arithmetic: in range it equals the plain product, sum or
// difference; out of range it throws SizeOverflow instead of wrapping.

#include "util/checked_int.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>

namespace {

using phaze::CheckedInt;
using phaze::SizeOverflow;

__extension__ typedef __int128 Wide;  // a GCC and Clang extension: exact for any product of two int64_t

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

bool fits(Wide x) {
  return x >= kMin && x <= kMax;
}

TEST(CheckedInt, AgreesWithWideArithmeticOrThrows) {
  std::mt19937_64 rng(13);
  for (int k = 0; k < 100000; ++k) {
    // Magnitudes of every size, so that both sides of the boundary are hit often.
    const int64_t a = static_cast<int64_t>(rng() >> (rng() % 64)) * (rng() % 2 ? 1 : -1);
    const int64_t b = static_cast<int64_t>(rng() >> (rng() % 64)) * (rng() % 2 ? 1 : -1);
    const Wide product = static_cast<Wide>(a) * b, sum = static_cast<Wide>(a) + b,
               difference = static_cast<Wide>(a) - b;
    if (fits(product)) {
      EXPECT_EQ(int64_t{CheckedInt(a) * b}, static_cast<int64_t>(product));
    } else {
      EXPECT_THROW((void)(CheckedInt(a) * b), SizeOverflow) << a << " * " << b;
    }
    if (fits(sum)) {
      EXPECT_EQ(int64_t{a + CheckedInt(b)}, static_cast<int64_t>(sum));
    } else {
      EXPECT_THROW((void)(a + CheckedInt(b)), SizeOverflow) << a << " + " << b;
    }
    if (fits(difference)) {
      EXPECT_EQ(int64_t{CheckedInt(a) - CheckedInt(b)}, static_cast<int64_t>(difference));
    } else {
      EXPECT_THROW((void)(CheckedInt(a) - CheckedInt(b)), SizeOverflow) << a << " - " << b;
    }
  }
}

TEST(CheckedInt, ProductsOfProductsStayChecked) {
  // seq · seq · mbs · heads of a 2^26-token sequence: each factor in bounds, the product 2^63.
  const CheckedInt seq = int64_t{1} << 26;
  EXPECT_EQ(int64_t{seq * seq * 64}, int64_t{1} << 58);
  EXPECT_THROW((void)(seq * seq * 64 * 32), SizeOverflow);
  EXPECT_EQ(int64_t{(seq * 4) / 2 * 3}, int64_t{3} << 27);
}

}  // namespace
