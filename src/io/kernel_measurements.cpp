#include "io/kernel_measurements.h"

#include <fmt/format.h>

#include "io/csv_table.h"
#include "model/model_spec.h"
#include "util/read_file.h"

namespace phaze::io {

namespace {

const std::vector<std::string> kRequired = {"kind", "seconds"};
const std::vector<std::string> kOptional = {"model",   "tp",   "op",    "direction", "dtype",    "batch",
                                            "m",       "n",    "k",     "seq",       "head_dim", "causal",
                                            "backend", "flop", "bytes", "tflops"};

/// Largest seconds of one kernel, and bytes of one streaming kernel.
constexpr double kMaxSeconds = 1e6;
constexpr double kMaxBytes = 1e18;

megatron::KernelKind parse_kind(const CsvRow& r) {
  const std::string kind = r.text("kind").value_or("");
  if (kind == "gemm") return megatron::KernelKind::Gemm;
  if (kind == "attention") return megatron::KernelKind::Attention;
  if (kind == "stream") return megatron::KernelKind::Stream;
  if (kind == "launch") return megatron::KernelKind::Launch;
  throw r.bad("kind", kind, "gemm, attention, stream or launch");
}

model::Direction parse_direction(const CsvRow& r) {
  const std::string direction = r.text("direction").value_or("");
  if (direction == "forward" || direction.empty()) return model::Direction::Forward;
  if (direction == "backward" || direction == "dgrad" || direction == "wgrad") return model::Direction::Backward;
  throw r.bad("direction", direction, "forward, dgrad, wgrad or backward");
}

megatron::KernelMeasurement parse_row(const CsvRow& r) {
  megatron::KernelMeasurement k;
  k.line = r.line();
  k.kind = parse_kind(r);
  k.dtype = r.text("dtype").value_or("");
  k.backend = r.text("backend").value_or("");
  k.direction = parse_direction(r);
  const std::string tp = r.text("tp").value_or("");
  k.label = fmt::format("{}{}{} {} {}", r.text("model").value_or(""), tp.empty() ? "" : " t", tp,
                        r.text("op").value_or(""), r.text("direction").value_or(""));
  switch (k.kind) {
    case megatron::KernelKind::Gemm:
      k.gemm.m = r.required_integer("m", model::limits::kTokens);
      k.gemm.n = r.required_integer("n", model::limits::kTokens);
      k.gemm.k = r.required_integer("k", model::limits::kTokens);
      k.gemm.batch = r.integer("batch", 1, model::limits::kTokens, true);
      break;
    case megatron::KernelKind::Attention:
      k.batch_heads = r.required_integer("batch", model::limits::kTokens);
      k.seq = r.required_integer("seq", model::limits::kSequence);
      k.head_dim = r.required_integer("head_dim", model::limits::kHidden);
      k.causal = r.flag("causal");
      break;
    case megatron::KernelKind::Stream: k.bytes = r.number("bytes", kMaxBytes); break;
    case megatron::KernelKind::Launch: break;
  }
  k.seconds = r.number("seconds", kMaxSeconds);
  return k;
}

}  // namespace

std::vector<megatron::KernelMeasurement> parse_kernel_measurements(const std::string& text, const std::string& source) {
  const auto table = parse_csv(text, source, kRequired, kOptional, kMaxKernels, "kernels");
  std::vector<megatron::KernelMeasurement> out;
  out.reserve(table->rows.size());
  for (const CsvRow& row : table->rows) out.push_back(parse_row(row));
  return out;
}

std::vector<megatron::KernelMeasurement> read_kernel_measurements(const std::string& path) {
  return parse_kernel_measurements(read_text_file(path), path);
}

}  // namespace phaze::io
