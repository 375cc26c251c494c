#pragma once

// What the bounds of a point tell of one model's plan there before it is made: how fast it can be at best and
// how little energy it can spend at least. The exact search leaves out a point these show cannot enter its
// answer (answer_thresholds.h).

namespace phaze::search {

struct ModelBound {
  double samples_per_s = 0;        ///< at most this
  double energy_per_sample_j = 0;  ///< at least this (joules per sample of the global batch)
};

}  // namespace phaze::search
