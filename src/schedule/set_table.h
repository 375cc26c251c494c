#pragma once

// A hash table keyed by task sets (64-bit masks), for the exact search's memos: open addressing with linear
// probing in one array, so that an entry costs no allocation of its own, and a clear costs O(1) (a stamp).
// Internal to the exact solver.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace phaze::schedule::detail {

template <typename Value>
class SetTable {
 public:
  /// The value kept for `set`, or nullptr. The pointer holds until the next insert or clear.
  Value* find(uint64_t set) {
    if (slots_.empty()) return nullptr;
    for (size_t i = slot_of(set);; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (slot.stamp != stamp_) return nullptr;
      if (slot.set == set) return &slot.value;
    }
  }
  const Value* find(uint64_t set) const { return const_cast<SetTable*>(this)->find(set); }

  /// Keeps `value` for `set`, which must not be kept yet; returns the kept value.
  Value& insert(uint64_t set, Value value) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    ++size_;
    return place(set, std::move(value));
  }

  /// The value kept for `set`, inserted as Value{} when there is none.
  Value& operator[](uint64_t set) {
    if (Value* known = find(set)) return *known;
    return insert(set, Value{});
  }

  size_t size() const { return size_; }
  void clear() {
    size_ = 0;
    if (++stamp_ == 0) {  // the stamp wrapped: old stamps could match again
      for (Slot& slot : slots_) slot.stamp = 0;
      stamp_ = 1;
    }
  }

 private:
  struct Slot {
    uint64_t set = 0;
    uint32_t stamp = 0;  ///< the slot is in use when it equals stamp_
    Value value{};
  };

  size_t slot_of(uint64_t set) const {
    // Fibonacci hashing: task sets differ in few, often high, bits.
    return static_cast<size_t>((set * 0x9E3779B97F4A7C15ull) >> (64 - bits_)) & mask_;
  }
  Value& place(uint64_t set, Value value) {
    size_t i = slot_of(set);
    while (slots_[i].stamp == stamp_) i = (i + 1) & mask_;
    slots_[i] = Slot{set, stamp_, std::move(value)};
    return slots_[i].value;
  }
  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    const uint32_t old_stamp = stamp_;
    bits_ = old.empty() ? 6 : bits_ + 1;
    slots_.assign(size_t{1} << bits_, Slot{});
    mask_ = slots_.size() - 1;
    stamp_ = 1;
    for (Slot& slot : old)
      if (slot.stamp == old_stamp) place(slot.set, std::move(slot.value));
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  int bits_ = 0;
  size_t size_ = 0;
  uint32_t stamp_ = 1;
};

}  // namespace phaze::schedule::detail
