#pragma once

// Sizes that cannot wrap. Element counts, bytes and FLOPs of a layer are products of model and shape
// dimensions; each dimension is bounded where it enters, but their products can still leave 64 bits
// (a long sequence times a large micro-batch). CheckedInt does its arithmetic with the compiler's overflow
// builtins and throws SizeOverflow instead of producing a wrong (often negative) number.

#include <concepts>
#include <cstdint>
#include <stdexcept>

namespace phaze {

/// A size product or sum left the range of a signed 64-bit integer.
class SizeOverflow : public std::overflow_error {
 public:
  SizeOverflow() : std::overflow_error("a size exceeds 2^63 - 1") {}
};

/// An int64_t whose +, - and * throw SizeOverflow on overflow. It converts to and from int64_t implicitly, so
/// that a builder's locals can be CheckedInt while the structures it fills keep plain int64_t fields; every
/// product whose left or right operand is a CheckedInt is checked and stays a CheckedInt.
class CheckedInt {
 public:
  constexpr CheckedInt() = default;
  constexpr CheckedInt(int64_t value) : value_(value) {}  // NOLINT(google-explicit-constructor): by design
  constexpr operator int64_t() const { return value_; }   // NOLINT(google-explicit-constructor): by design
  constexpr int64_t value() const { return value_; }

  friend CheckedInt operator*(CheckedInt a, CheckedInt b) {
    int64_t r = 0;
    if (__builtin_mul_overflow(a.value_, b.value_, &r)) throw SizeOverflow();
    return r;
  }
  friend CheckedInt operator+(CheckedInt a, CheckedInt b) {
    int64_t r = 0;
    if (__builtin_add_overflow(a.value_, b.value_, &r)) throw SizeOverflow();
    return r;
  }
  friend CheckedInt operator-(CheckedInt a, CheckedInt b) {
    int64_t r = 0;
    if (__builtin_sub_overflow(a.value_, b.value_, &r)) throw SizeOverflow();
    return r;
  }
  // Mixed with a plain integer: exact matches, so they win over the built-in operators on the converted value.
  template <std::integral I>
  friend CheckedInt operator*(CheckedInt a, I b) {
    return a * CheckedInt(static_cast<int64_t>(b));
  }
  template <std::integral I>
  friend CheckedInt operator*(I a, CheckedInt b) {
    return CheckedInt(static_cast<int64_t>(a)) * b;
  }
  template <std::integral I>
  friend CheckedInt operator+(CheckedInt a, I b) {
    return a + CheckedInt(static_cast<int64_t>(b));
  }
  template <std::integral I>
  friend CheckedInt operator+(I a, CheckedInt b) {
    return CheckedInt(static_cast<int64_t>(a)) + b;
  }
  template <std::integral I>
  friend CheckedInt operator-(CheckedInt a, I b) {
    return a - CheckedInt(static_cast<int64_t>(b));
  }
  template <std::integral I>
  friend CheckedInt operator-(I a, CheckedInt b) {
    return CheckedInt(static_cast<int64_t>(a)) - b;
  }
  // Division and remainder cannot overflow for the positive sizes used here; they give a CheckedInt so that a
  // later product stays checked.
  friend CheckedInt operator/(CheckedInt a, CheckedInt b) { return a.value_ / b.value_; }
  template <std::integral I>
  friend CheckedInt operator/(CheckedInt a, I b) {
    return a.value_ / static_cast<int64_t>(b);
  }
  template <std::integral I>
  friend CheckedInt operator/(I a, CheckedInt b) {
    return static_cast<int64_t>(a) / b.value_;
  }
  CheckedInt& operator+=(CheckedInt b) { return *this = *this + b; }
  CheckedInt& operator*=(CheckedInt b) { return *this = *this * b; }

 private:
  int64_t value_ = 0;
};

/// a · b, throwing SizeOverflow when it leaves int64_t.
inline int64_t checked_mul(int64_t a, int64_t b) {
  return CheckedInt(a) * b;
}
/// a + b, throwing SizeOverflow when it leaves int64_t.
inline int64_t checked_add(int64_t a, int64_t b) {
  return CheckedInt(a) + b;
}

}  // namespace phaze
