#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hw/architecture.h"

namespace phaze::hw {

/// The TPUv4-like reference chip of method.md section 5: 8 tensor cores of 128 × 128 PEs, 2 vector cores of
/// 128 lanes, 128 MiB global buffer, 32 GiB HBM at 1.2·10^12 B/s, 1.05 GHz (its 4 GiB/s inter-chip link is the
/// network of the tpuv4-like system, system.h). Its area is the default area budget of the design-space enumeration.
Architecture tpuv4_like();

/// The TPUv4-like chip with TPU v4's vector units as published: each of its two TensorCores has a vector unit
/// of 128 lanes × 8 sublanes with 2 ALUs each (2,048 element operations per cycle, where the TPUv4-like chip's
/// vector cores have 128 lanes); everything else as tpuv4_like (docs/accelerator.md 1.2). Outside the search's
/// template (lanes up to 256): a chip for `phaze evaluate` and `--budget`.
Architecture tpuv4_published();

/// Names of the built-in architecture presets, in a stable order.
const std::vector<std::string>& preset_names();
/// The preset of that name (the alias "tpuv4" names "tpuv4-like"), or nothing.
std::optional<Architecture> find_preset(const std::string& name);

}  // namespace phaze::hw
