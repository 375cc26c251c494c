#pragma once

// The identity of a search point: a design (cores, arrays, lanes, global buffer, HBM bandwidth and size), a
// micro-batch
// size and a recomputation setting. The design's fields are listed once, in kDesignFields; the point key, the
// canonical order, equality, the results record and the report's JSON and CSV all iterate that table, so a
// new field of the template is one line there.

#include <array>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "hw/architecture.h"

namespace phaze::search {

/// One integer field of a design's identity.
struct DesignField {
  const char* name;                           ///< in JSON objects and CSV headers
  int64_t (*get)(const hw::Architecture&);    ///< cores, PEs, lanes, bytes or bytes/s
  void (*set)(hw::Architecture&, int64_t);    ///< the inverse of get
  const char* key_prefix;                     ///< written before the value in the point key
  int rank;                                   ///< position in the canonical order (0 first)
  bool largest_first;                         ///< the canonical order takes larger values first
};

/// A field stored as an integer member of the architecture.
template <int64_t hw::Architecture::*Member>
constexpr DesignField integer_field(const char* name, const char* key_prefix, int rank, bool largest_first) {
  return {name, [](const hw::Architecture& a) { return a.*Member; },
          [](hw::Architecture& a, int64_t v) { a.*Member = v; }, key_prefix, rank, largest_first};
}

/// The HBM bandwidth in whole bytes per second (search::validate keeps the question's values whole and below
/// 2^53, so the round trip is exact).
inline constexpr DesignField kHbmBandwidthField{
    "hbm_bandwidth", [](const hw::Architecture& a) { return static_cast<int64_t>(a.hbm_bandwidth); },
    [](hw::Architecture& a, int64_t v) { a.hbm_bandwidth = static_cast<double>(v); }, " bw", 6, false};

/// The design's fields in the order of keys, records, JSON and CSV: the chip (the first kChipFields), then the
/// HBM size. The canonical order (hw/enumerate.h) compares them by `rank`: num_tc, num_vc, tc_width, vc_width,
/// tc_depth, glb_bytes, each from the largest down, then the smaller HBM bandwidth and the smaller HBM size
/// (of equal answers, the cheaper memory).
inline constexpr std::array<DesignField, 8> kDesignFields{{
    integer_field<&hw::Architecture::num_tc>("num_tc", "tc", 0, true),
    integer_field<&hw::Architecture::tc_width>("tc_width", "x", 2, true),
    integer_field<&hw::Architecture::tc_depth>("tc_depth", "x", 4, true),
    integer_field<&hw::Architecture::num_vc>("num_vc", " vc", 1, true),
    integer_field<&hw::Architecture::vc_width>("vc_width", "x", 3, true),
    integer_field<&hw::Architecture::glb_bytes>("glb_bytes", " glb", 5, true),
    kHbmBandwidthField,
    integer_field<&hw::Architecture::hbm_bytes>("hbm_bytes", " hbm", 7, false),
}};
/// The chip's fields: kDesignFields without the HBM size (a design as enumerated, before an HBM size).
inline constexpr size_t kChipFields = kDesignFields.size() - 1;

/// A point: a design with an HBM size (only kDesignFields count; bandwidths and clock are the question's), a
/// micro-batch size and a recomputation setting.
struct PointId {
  hw::Architecture design;
  int64_t micro_batch = 0;
  bool recompute = false;
  bool operator==(const PointId&) const = default;
};

/// The point's canonical key, e.g. "tc8x128x64 vc2x128 glb67108864 hbm34359738368 mbs2 rc1".
std::string point_key(const hw::Architecture& design, int64_t micro_batch, bool recompute);
inline std::string point_key(const PointId& p) {
  return point_key(p.design, p.micro_batch, p.recompute);
}

/// Canonical order: the design by kDesignFields' ranks, then the smaller micro-batch, recomputation off before
/// on.
bool canonical_before(const PointId& a, const PointId& b);

/// A design's identity as values, in kDesignFields' order: what a compact record of a point keeps.
using DesignValues = std::array<int64_t, kDesignFields.size()>;
DesignValues design_values(const hw::Architecture& design);
/// Sets the fields of kDesignFields of `to` from `values`, leaving its other fields.
void set_design_values(hw::Architecture& to, const DesignValues& values);
/// canonical_before on designs given as values.
bool canonical_before(const DesignValues& a, int64_t a_micro_batch, bool a_recompute, const DesignValues& b,
                      int64_t b_micro_batch, bool b_recompute);

/// The same design: every field of kDesignFields equal (micro-batch and recomputation aside).
bool same_design(const hw::Architecture& a, const hw::Architecture& b);
/// The same chip: the first kChipFields equal (the HBM size aside).
bool same_chip(const hw::Architecture& a, const hw::Architecture& b);
/// Copies the fields of kDesignFields from `from` into `to`, leaving its other fields.
void copy_design(hw::Architecture& to, const hw::Architecture& from);

/// The chip's fields as a JSON array in kDesignFields' order (the results record), and back into `to`.
nlohmann::json chip_array(const hw::Architecture& design);
void read_chip_array(const nlohmann::json& array, hw::Architecture& to);

/// The chip's fields as a JSON object, with the HBM size unless `with_hbm` is false (a design chosen without
/// one).
nlohmann::ordered_json design_object(const hw::Architecture& design, bool with_hbm);

/// The design's field names, comma-separated (a CSV header), and its values in the same order.
std::string design_csv_header();
std::string design_csv(const hw::Architecture& design);

}  // namespace phaze::search
