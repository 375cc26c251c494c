#include "megatron/fit_suggestions.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>

#include "util/input_error.h"

namespace phaze::megatron {

namespace {

/// One memory-saving step: its flags, or nothing when it does not apply to `plan`; it changes `plan`.
using Step = std::function<std::optional<std::string>(TrainingPlan& plan)>;

/// The steps, the two recomputation steps first (one of them at most is taken: they set the same option).
constexpr size_t kRecomputeSteps = 2;

std::vector<Step> steps() {
  return {
      [](TrainingPlan& p) -> std::optional<std::string> {
        if (p.recompute != Recompute::None) return std::nullopt;
        p.recompute = Recompute::Selective;
        return "--recompute selective";
      },
      [](TrainingPlan& p) -> std::optional<std::string> {
        if (p.recompute == Recompute::Full) return std::nullopt;
        p.recompute = Recompute::Full;
        return "--recompute full";
      },
      [](TrainingPlan& p) -> std::optional<std::string> {
        if (p.zero >= 3 || p.dp * p.cp < 2) return std::nullopt;
        ++p.zero;
        return fmt::format("--zero {}", p.zero);
      },
      [](TrainingPlan& p) -> std::optional<std::string> {
        if (p.sequence_parallel || p.tp < 2) return std::nullopt;
        p.sequence_parallel = true;
        return "--sequence-parallel";
      },
      [](TrainingPlan& p) -> std::optional<std::string> {
        if (p.dp % 2 != 0) return std::nullopt;
        p.tp *= 2;
        p.dp /= 2;
        return fmt::format("--tp {} --dp {}", p.tp, p.dp);
      },
      [](TrainingPlan& p) -> std::optional<std::string> {
        if (p.dp % 2 != 0) return std::nullopt;
        p.pp *= 2;
        p.dp /= 2;
        return fmt::format("--pp {} --dp {}", p.pp, p.dp);
      },
      [](TrainingPlan& p) -> std::optional<std::string> {
        if (p.micro_batch % 2 != 0) return std::nullopt;
        p.micro_batch /= 2;
        return fmt::format("--mbs {}", p.micro_batch);
      },
  };
}

}  // namespace

std::vector<FitSuggestion> fitting_neighbours(const model::ModelSpec& spec, const hw::System& system,
                                              const TrainingPlan& plan, size_t most) {
  struct Found {
    FitSuggestion suggestion;
    int steps = 0;
    size_t order = 0;
  };
  std::vector<Found> found;
  const std::vector<Step> all = steps();
  auto consider = [&](const TrainingPlan& candidate, const std::string& flags, int count) {
    try {
      validate(candidate, spec);
    } catch (const InputError&) {
      return;  // Megatron-LM cannot run it
    }
    StepPrediction p = predict_step(spec, system, candidate);
    if (p.memory.fits) found.push_back({{flags, std::move(p)}, count, found.size()});
  };
  for (size_t i = 0; i < all.size(); ++i) {
    TrainingPlan one = plan;
    const std::optional<std::string> first = all[i](one);
    if (!first) continue;
    consider(one, *first, 1);
    for (size_t j = std::max(i + 1, i < kRecomputeSteps ? kRecomputeSteps : 0); j < all.size(); ++j) {
      TrainingPlan two = one;
      const std::optional<std::string> second = all[j](two);
      if (second) consider(two, *first + " " + *second, 2);
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    const double ta = a.suggestion.prediction.time.iteration_s, tb = b.suggestion.prediction.time.iteration_s;
    if (ta != tb) return ta < tb;
    if (a.steps != b.steps) return a.steps < b.steps;
    return a.order < b.order;
  });
  std::vector<FitSuggestion> out;
  for (size_t k = 0; k < found.size() && k < most; ++k) out.push_back(std::move(found[k].suggestion));
  return out;
}

}  // namespace phaze::megatron
