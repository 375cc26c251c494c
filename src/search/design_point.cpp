#include "search/design_point.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <tuple>

namespace phaze::search {

namespace {

/// Indices of kDesignFields in canonical order (by rank).
constexpr std::array<size_t, kDesignFields.size()> canonical_indices() {
  std::array<size_t, kDesignFields.size()> out{};
  for (size_t i = 0; i < out.size(); ++i) out[static_cast<size_t>(kDesignFields[i].rank)] = i;
  return out;
}
constexpr std::array<size_t, kDesignFields.size()> kCanonical = canonical_indices();

constexpr bool ranks_are_a_permutation() {
  std::array<bool, kDesignFields.size()> seen{};
  for (const DesignField& f : kDesignFields) {
    if (f.rank < 0 || static_cast<size_t>(f.rank) >= seen.size() || seen[static_cast<size_t>(f.rank)]) return false;
    seen[static_cast<size_t>(f.rank)] = true;
  }
  return true;
}
static_assert(ranks_are_a_permutation(), "every design field needs its own place in the canonical order");

/// `a` comes before `b` in a field's direction, or the field does not decide (nothing).
std::optional<bool> field_before(const DesignField& f, const hw::Architecture& a, const hw::Architecture& b) {
  const int64_t x = f.get(a), y = f.get(b);
  if (x == y) return std::nullopt;
  return f.largest_first ? x > y : x < y;
}

}  // namespace

std::string point_key(const hw::Architecture& design, int64_t micro_batch, bool recompute) {
  std::string out;
  for (const DesignField& f : kDesignFields) out += fmt::format("{}{}", f.key_prefix, f.get(design));
  return out + fmt::format(" mbs{} rc{}", micro_batch, recompute ? 1 : 0);
}

bool canonical_before(const PointId& a, const PointId& b) {
  for (size_t i : kCanonical)
    if (const std::optional<bool> decided = field_before(kDesignFields[i], a.design, b.design)) return *decided;
  return std::tie(a.micro_batch, a.recompute) < std::tie(b.micro_batch, b.recompute);
}

DesignValues design_values(const hw::Architecture& design) {
  DesignValues out{};
  for (size_t i = 0; i < kDesignFields.size(); ++i) out[i] = kDesignFields[i].get(design);
  return out;
}

void set_design_values(hw::Architecture& to, const DesignValues& values) {
  for (size_t i = 0; i < kDesignFields.size(); ++i) kDesignFields[i].set(to, values[i]);
}

bool canonical_before(const DesignValues& a, int64_t a_micro_batch, bool a_recompute, const DesignValues& b,
                      int64_t b_micro_batch, bool b_recompute) {
  for (size_t i : kCanonical)
    if (a[i] != b[i]) return kDesignFields[i].largest_first ? a[i] > b[i] : a[i] < b[i];
  return std::tie(a_micro_batch, a_recompute) < std::tie(b_micro_batch, b_recompute);
}

bool same_chip(const hw::Architecture& a, const hw::Architecture& b) {
  for (size_t i = 0; i < kChipFields; ++i)
    if (kDesignFields[i].get(a) != kDesignFields[i].get(b)) return false;
  return true;
}

bool same_design(const hw::Architecture& a, const hw::Architecture& b) {
  return std::all_of(kDesignFields.begin(), kDesignFields.end(),
                     [&](const DesignField& f) { return f.get(a) == f.get(b); });
}

void copy_design(hw::Architecture& to, const hw::Architecture& from) {
  for (const DesignField& f : kDesignFields) f.set(to, f.get(from));
}

nlohmann::json chip_array(const hw::Architecture& design) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < kChipFields; ++i) out.push_back(kDesignFields[i].get(design));
  return out;
}

void read_chip_array(const nlohmann::json& array, hw::Architecture& to) {
  for (size_t i = 0; i < kChipFields; ++i) kDesignFields[i].set(to, array.at(i).get<int64_t>());
}

nlohmann::ordered_json design_object(const hw::Architecture& design, bool with_hbm) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (size_t i = 0; i < (with_hbm ? kDesignFields.size() : kChipFields); ++i)
    out[kDesignFields[i].name] = kDesignFields[i].get(design);
  return out;
}

std::string design_csv_header() {
  std::string out;
  for (const DesignField& f : kDesignFields) {
    if (!out.empty()) out += ',';
    out += f.name;
  }
  return out;
}

std::string design_csv(const hw::Architecture& design) {
  std::string out;
  for (const DesignField& f : kDesignFields) out += fmt::format("{}{}", out.empty() ? "" : ",", f.get(design));
  return out;
}

}  // namespace phaze::search
