#include "megatron/grid_fit.h"

#include <algorithm>
#include <cmath>

namespace phaze::megatron {

const std::vector<FitAxis>& iteration_fit_axes() {
  static const std::vector<FitAxis> axes = {{&hw::Gpu::tensor_efficiency, 0.01, 30, 100},
                                            {&hw::Gpu::memory_efficiency, 0.01, 30, 100},
                                            {&hw::Gpu::kernel_launch_s, 0.5e-6, 0, 400}};
  return axes;
}

void fit_on_grid(hw::Gpu& gpu, const std::vector<FitAxis>& axes, const std::function<double(const hw::Gpu&)>& error) {
  for (const FitAxis& a : axes)  // start on the grid
    gpu.*a.field = std::clamp(std::round(gpu.*a.field / a.step), double(a.low), double(a.high)) * a.step;
  double best_error = error(gpu);
  for (bool improved = true; improved;) {
    improved = false;
    for (const FitAxis& a : axes) {
      for (int direction : {-1, 1}) {
        for (;;) {
          const int index = static_cast<int>(std::round(gpu.*a.field / a.step)) + direction;
          if (index < a.low || index > a.high) break;
          const double kept = gpu.*a.field;
          gpu.*a.field = index * a.step;
          const double e = error(gpu);
          if (e < best_error) {
            best_error = e;
            improved = true;
          } else {
            gpu.*a.field = kept;
            break;
          }
        }
      }
    }
  }
}

}  // namespace phaze::megatron
