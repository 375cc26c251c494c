#include "cli/search_command.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <functional>
#include <iostream>

#include "cli/option_values.h"
#include "cli/shape_options.h"
#include "hw/architecture_json.h"
#include "hw/area.h"
#include "hw/system_json.h"
#include "io/chrome_trace.h"
#include "io/html_report.h"
#include "io/pipeline_trace.h"
#include "io/search_report.h"
#include "model/hf_config.h"
#include "search/driver.h"
#include "search/question_json.h"
#include "search/rank_evaluation.h"
#include "util/input_error.h"
#include "util/mpi_job.h"
#include "util/output_file.h"
#include "util/read_file.h"
#include "util/run_on_threads.h"

namespace phaze::cli {

namespace {

using search::kGiB;

struct SearchOptions {
  std::vector<std::string> models;
  std::string seq, mbs = "1,2,4,8", hbm = "32,64,80", tp, ep;
  std::string tc, vc, width, depth, glb_mib;
  std::string hbm_bandwidth;  ///< GB/s, comma-separated
  std::string core_overhead;  ///< µm² per tensor core and per vector core
  int64_t devices = 1024;
  int64_t global_batch = 4096;
  std::string recompute = "both";
  std::string optimizer = "adam";
  std::string execution = "phaze";
  std::string planner = "phaze";
  bool overlap_dp = false;
  std::string attention_backend = "fused";
  std::string ranking = "smaller-area";
  bool phaze_compat = false;  ///< PHAZE's settings where no flag says otherwise (kPhazeCompat)
  std::string budget;
  double budget_um2 = 0;
  double budget_mm2 = 0;  ///< --budget-mm2, the same budget in mm²
  double lower_fraction = 0.3;
  bool no_exemption = false;
  double link_gib_s = 4;
  std::string system = "tpuv4-pod";  ///< preset or file whose network joins the devices (or --link-bandwidth)
  std::string stop_rule = "exact";
  bool exhaustive = false;    ///< --exhaustive, the exact rule's earlier name
  bool evaluate_all = false;  ///< no points left out on their bounds
  int64_t stop_window = 5;
  double bucket_um2 = 10'000;
  int threads = 0;
  std::string db, output, csv, trace, pareto, report;
  std::string progress = "auto";
  int64_t top = 5;
  bool json = false;
  int64_t schedule_nodes = 0;
  std::string question_in, question_out;
  std::string arch;           ///< phaze evaluate: the one chip (preset or file)
  std::string gpu_baselines;  ///< --baseline: GPU systems or GPUs, comma-separated
};

/// Whether an option was given on the command line (CLI11 counts it).
using GivenFn = std::function<bool(const char* option)>;

/// A comma-separated list of sizes in GiB, as bytes; each at least 1 KiB, so that none rounds to nothing.
std::vector<int64_t> gibibytes(const std::string& text, const char* option) {
  std::vector<int64_t> out;
  // Bytes given for GiB are said to be bytes, not only out of range.
  const std::vector<double> values =
      parse_number_list(option, text, 0, search::limits::kHbmGiB, {"bytes", 1 / kGiB, "GiB", 1.0 / (1 << 20)});
  for (double gib : values) {
    if (gib < 1.0 / (1 << 20))
      throw InputError(fmt::format("{} '{}': {} GiB is below the smallest size, 1 KiB (2^-20 GiB)", option, text, gib));
    out.push_back(static_cast<int64_t>(std::llround(gib * kGiB)));
  }
  return out;
}

/// Sets the models' sequence lengths and widths from --seq, --tp and --ep (the mixtures of experts' only; the
/// other models keep e = 1); when not given, `models` (of the command line) get their defaults and those of a
/// question file keep theirs.
void set_seq_and_widths(std::vector<search::ModelCase>& models, const SearchOptions& o, bool defaults) {
  const std::vector<int64_t> seqs = parse_integer_list("--seq", o.seq, 1, model::limits::kSequence);
  if (!seqs.empty() && seqs.size() != 1 && seqs.size() != models.size())
    throw InputError(
        fmt::format("--seq '{}': give one length for all models or one per model ({})", o.seq, models.size()));
  const std::vector<int64_t> widths = parse_integer_list("--tp", o.tp, 1, model::limits::kTensorParallel);
  std::vector<int64_t> expert_widths = parse_integer_list("--ep", o.ep, 1, model::limits::kExperts);
  std::sort(expert_widths.begin(), expert_widths.end());
  const bool any_experts =
      std::any_of(models.begin(), models.end(), [](const search::ModelCase& m) { return m.spec.moe(); });
  if (!any_experts && (expert_widths.size() > 1 || (expert_widths.size() == 1 && expert_widths[0] != 1)))
    throw InputError(fmt::format("--ep '{}': no model of the question has experts", o.ep));
  for (size_t i = 0; i < models.size(); ++i) {
    search::ModelCase& m = models[i];
    if (!seqs.empty()) m.seq = seqs[seqs.size() == 1 ? 0 : i];
    if (!widths.empty()) m.widths = widths;
    if (!expert_widths.empty() && m.spec.moe()) m.expert_widths = expert_widths;
    if (defaults && seqs.empty()) m.seq = m.spec.default_seq;
    if (defaults && widths.empty()) m.widths = search::default_widths(m.spec);
    std::sort(m.widths.begin(), m.widths.end());
  }
}

/// The settings --phaze-compat restores, where no flag of their own is given: the original evaluation's
/// (docs/method.md 5): materialised attention, SGD, one 4 GiB/s link, PHAZE's order of equal points (and no
/// per-core overhead, the default anyway).
struct PhazeSettings {
  const char* optimizer = "sgd";
  const char* attention_backend = "unfused";
  const char* ranking = "canonical";
  double link_gib_s = 4;
};

/// The question of the command line's flags, every setting not given at its default (PHAZE's with
/// --phaze-compat).
search::SearchQuestion question_from(SearchOptions o, const GivenFn& given) {
  const bool budget_given = given("--budget"), budget_um2_given = given("--budget-um2"),
             budget_mm2_given = given("--budget-mm2"), optimizer_given = given("--optimizer");
  const bool network_given = given("--link-bandwidth") || given("--system");
  if (o.phaze_compat) {
    const PhazeSettings phaze;
    if (!optimizer_given) o.optimizer = phaze.optimizer;
    if (!given("--attention-backend")) o.attention_backend = phaze.attention_backend;
    if (!given("--ranking")) o.ranking = phaze.ranking;
    if (!network_given) o.link_gib_s = phaze.link_gib_s;
  }
  // The network: one link where --link-bandwidth (or --phaze-compat) says so, else the system's.
  const bool one_link = given("--link-bandwidth") || (o.phaze_compat && !network_given);
  search::SearchQuestion q;
  if (!o.arch.empty()) q.chip = hw::load_architecture(o.arch);
  if (o.models.size() > kMaxListValues)
    throw InputError(fmt::format("--model: {} models, at most {} allowed", o.models.size(), kMaxListValues));
  for (const std::string& source : o.models) {
    search::ModelCase m;
    m.source = source;
    m.spec = model::load_model(source);
    q.models.push_back(std::move(m));
  }
  set_seq_and_widths(q.models, o, true);
  q.devices = o.devices;
  q.global_batch = o.global_batch;
  q.micro_batches = parse_integer_list("--mbs", o.mbs, 1, model::limits::kMicroBatch);
  // A chip is evaluated at its own HBM capacity unless --hbm names others.
  q.hbm_bytes = q.chip && !given("--hbm") ? std::vector<int64_t>{q.chip->hbm_bytes} : gibibytes(o.hbm, "--hbm");
  q.recompute = o.recompute == "on"    ? search::RecomputeChoice::On
                : o.recompute == "off" ? search::RecomputeChoice::Off
                                       : search::RecomputeChoice::Both;
  q.optimizer = o.optimizer == "adam"         ? placement::Optimizer::MixedPrecisionAdam
                : o.optimizer == "adam-phaze" ? placement::Optimizer::Adam
                                              : placement::Optimizer::Sgd;
  q.execution = o.execution == "megatron" ? search::Execution::Megatron : search::Execution::Phaze;
  // Megatron-LM trains with mixed-precision Adam: its execution takes it unless --optimizer says otherwise.
  if (q.execution == search::Execution::Megatron && !optimizer_given)
    q.optimizer = placement::Optimizer::MixedPrecisionAdam;
  q.planner = o.planner == "stagewise" || o.planner == "piper" ? search::PlannerChoice::Stagewise
                                                               : search::PlannerChoice::Phaze;
  q.overlap_dp = o.overlap_dp;
  q.fused_attention = o.attention_backend == "fused";
  q.ranking = o.ranking == "smaller-area" ? search::Ranking::SmallerArea : search::Ranking::Canonical;
  q.schedule_node_budget = o.schedule_nodes;
  q.network = one_link ? hw::one_tier_network(o.link_gib_s * kGiB) : hw::load_system(o.system).network;
  for (const std::string& name : list_items("--baseline", o.gpu_baselines)) {
    // A GPU preset stands for the first system preset built of it (h100-sxm: dgx-h100).
    std::optional<hw::System> system;
    if (hw::find_gpu_preset(name))
      for (const std::string& preset : hw::system_preset_names()) {
        const hw::System s = *hw::find_system_preset(preset);
        if (std::holds_alternative<hw::Gpu>(s.device) && hw::device_name(s.device) == name) {
          system = s;
          break;
        }
      }
    if (!system) system = hw::load_system(name);
    if (!std::holds_alternative<hw::Gpu>(system->device))
      throw InputError(
          fmt::format("--baseline {}: its device '{}' is not a GPU (a GPU system or GPU preset, e.g. "
                      "dgx-h100 or h100-sxm)",
                      name, hw::device_name(system->device)));
    q.gpu_baselines.push_back(*system);
  }
  if (given("--core-overhead-um2")) {
    const std::vector<double> um2 = parse_number_list("--core-overhead-um2", o.core_overhead, -1, hw::kMaxBudgetUm2);
    if (um2.size() != 2 || um2[0] < 0 || um2[1] < 0)
      throw InputError(
          fmt::format("--core-overhead-um2 '{}': give two areas ≥ 0 in µm², per tensor core and per "
                      "vector core",
                      o.core_overhead));
    q.space.core_overheads = {um2[0], um2[1]};
  }
  if (budget_given) {
    // The budget chip sets the technology the designs share: its HBM bandwidth and clock too.
    const hw::Architecture budget = hw::load_architecture(o.budget);
    q.space.budget_um2 = hw::area_um2(budget, q.space.core_overheads);
    q.space.base.hbm_bandwidth = budget.hbm_bandwidth;
    q.space.base.clock_hz = budget.clock_hz;
  }
  if (given("--hbm-bandwidth"))
    for (double gb_s : parse_number_list("--hbm-bandwidth", o.hbm_bandwidth, 0, hw::kMaxHbmBandwidth * 1e-9,
                                         OtherUnit{"bytes/s", 1e-9, "GB/s", 1e3, "give GB/s (10^9 bytes/s)"}))
      q.space.hbm_bandwidths.push_back(std::round(gb_s * 1e9));
  if (budget_um2_given) q.space.budget_um2 = o.budget_um2;
  if (budget_mm2_given) q.space.budget_um2 = o.budget_mm2 * 1e6;
  q.space.lower_fraction = o.lower_fraction;
  q.space.single_core_exemption = !o.no_exemption;
  // The template's ranges are checked in search::validate; these bounds only keep the values in range of it.
  q.filter.num_tc = parse_integer_list("--tc", o.tc, 1, 1 << 20);
  q.filter.num_vc = parse_integer_list("--vc", o.vc, 1, 1 << 20);
  q.filter.width = parse_integer_list("--width", o.width, 1, 1 << 20);
  q.filter.depth = parse_integer_list("--depth", o.depth, 1, 1 << 20);
  for (int64_t mib : parse_integer_list("--glb-mib", o.glb_mib, 1, 1 << 20)) q.filter.glb_bytes.push_back(mib << 20);
  q.stop_rule = o.stop_rule == "buckets" ? search::StopRule::Buckets : search::StopRule::Exact;
  q.stop_window = o.stop_window;
  q.bucket_um2 = o.bucket_um2;
  return q;
}

/// The settings a flag sets, by flag: what a flag given beside --question replaces in the file's question.
using Setting = void (*)(search::SearchQuestion& to, const search::SearchQuestion& from);
const std::pair<const char*, Setting> kFlagSettings[] = {
    {"--devices", [](auto& t, const auto& f) { t.devices = f.devices; }},
    {"--global-batch", [](auto& t, const auto& f) { t.global_batch = f.global_batch; }},
    {"--mbs", [](auto& t, const auto& f) { t.micro_batches = f.micro_batches; }},
    {"--hbm", [](auto& t, const auto& f) { t.hbm_bytes = f.hbm_bytes; }},
    {"--recompute", [](auto& t, const auto& f) { t.recompute = f.recompute; }},
    {"--optimizer", [](auto& t, const auto& f) { t.optimizer = f.optimizer; }},
    {"--execution",
     [](auto& t, const auto& f) {
       t.execution = f.execution;
       t.optimizer = f.optimizer;
     }},
    {"--planner", [](auto& t, const auto& f) { t.planner = f.planner; }},
    {"--overlap-dp", [](auto& t, const auto& f) { t.overlap_dp = f.overlap_dp; }},
    {"--attention-backend", [](auto& t, const auto& f) { t.fused_attention = f.fused_attention; }},
    {"--ranking", [](auto& t, const auto& f) { t.ranking = f.ranking; }},
    {"--baseline", [](auto& t, const auto& f) { t.gpu_baselines = f.gpu_baselines; }},
    {"--phaze-compat",
     [](auto& t, const auto& f) {
       // Megatron-LM's execution trains with Adam: a question of it keeps its optimizer.
       if (t.execution != search::Execution::Megatron) t.optimizer = f.optimizer;
       t.fused_attention = f.fused_attention;
       t.ranking = f.ranking;
       t.network = f.network;
     }},
    {"--arch",
     [](auto& t, const auto& f) {
       t.chip = f.chip;
       t.hbm_bytes = f.hbm_bytes;
     }},
    {"--schedule-nodes", [](auto& t, const auto& f) { t.schedule_node_budget = f.schedule_node_budget; }},
    {"--link-bandwidth", [](auto& t, const auto& f) { t.network = f.network; }},
    {"--system", [](auto& t, const auto& f) { t.network = f.network; }},
    {"--budget",
     [](auto& t, const auto& f) {
       t.space.budget_um2 = f.space.budget_um2;
       t.space.base.hbm_bandwidth = f.space.base.hbm_bandwidth;
       t.space.base.clock_hz = f.space.base.clock_hz;
     }},
    {"--hbm-bandwidth", [](auto& t, const auto& f) { t.space.hbm_bandwidths = f.space.hbm_bandwidths; }},
    {"--core-overhead-um2",
     [](auto& t, const auto& f) {
       t.space.core_overheads = f.space.core_overheads;
       t.space.budget_um2 = f.space.budget_um2;  // the default budget is the tpuv4-like chip's with them
     }},
    {"--budget-um2", [](auto& t, const auto& f) { t.space.budget_um2 = f.space.budget_um2; }},
    {"--budget-mm2", [](auto& t, const auto& f) { t.space.budget_um2 = f.space.budget_um2; }},
    {"--lower-fraction", [](auto& t, const auto& f) { t.space.lower_fraction = f.space.lower_fraction; }},
    {"--no-single-core-exemption",
     [](auto& t, const auto& f) { t.space.single_core_exemption = f.space.single_core_exemption; }},
    {"--tc", [](auto& t, const auto& f) { t.filter.num_tc = f.filter.num_tc; }},
    {"--vc", [](auto& t, const auto& f) { t.filter.num_vc = f.filter.num_vc; }},
    {"--width", [](auto& t, const auto& f) { t.filter.width = f.filter.width; }},
    {"--depth", [](auto& t, const auto& f) { t.filter.depth = f.filter.depth; }},
    {"--glb-mib", [](auto& t, const auto& f) { t.filter.glb_bytes = f.filter.glb_bytes; }},
    {"--stop-rule", [](auto& t, const auto& f) { t.stop_rule = f.stop_rule; }},
    {"--exhaustive", [](auto& t, const auto& f) { t.stop_rule = f.stop_rule; }},
    {"--stop-window", [](auto& t, const auto& f) { t.stop_window = f.stop_window; }},
    {"--bucket-um2", [](auto& t, const auto& f) { t.bucket_um2 = f.bucket_um2; }},
};

/// The question: the flags' alone, or the file's with the flags given beside it in place of its values
/// (--model replaces its model list; --seq and --tp alone apply to its models).
search::SearchQuestion the_question(const SearchOptions& o, const GivenFn& given) {
  const search::SearchQuestion flags = question_from(o, given);
  if (o.question_in.empty()) return flags;
  search::SearchQuestion q = search::parse_question(read_text_file(o.question_in), o.question_in);
  for (const auto& [option, set] : kFlagSettings)
    if (given(option)) set(q, flags);
  if (given("--model")) {
    q.models = flags.models;
  } else {
    set_seq_and_widths(q.models, o, false);
  }
  search::validate(q);
  return q;
}

/// The bucket rule's settings given beside another rule are refused, not ignored.
void check_stop_rule(const SearchOptions& o, const search::SearchQuestion& q, const GivenFn& given) {
  if (o.exhaustive && given("--stop-rule") && o.stop_rule != "exact")
    throw InputError(fmt::format("--exhaustive: the exact rule; it contradicts --stop-rule {}", o.stop_rule));
  if (q.stop_rule == search::StopRule::Buckets) {
    if (given("--pareto"))
      throw InputError(
          "--pareto: needs the exact rule, as the bucket rule leaves points of the frontier unexplored; drop "
          "--stop-rule buckets");
    return;
  }
  for (const char* option : {"--stop-window", "--bucket-um2"})
    if (given(option))
      throw InputError(fmt::format("{}: applies to --stop-rule buckets only; this search's rule is exact", option));
}

void write_question(const search::SearchQuestion& q, const std::string& path) {
  search::validate(q);
  const std::string text = search::question_json(q).dump(2) + "\n";
  if (path == "-") {
    std::cout << text;
    return;
  }
  write_text_file(path, text);
}

int thread_count(const SearchOptions& o) {
  return threads_or_hardware(o.threads);
}

/// A rank other than 0 of an MPI job: reads the same question and evaluates the designs rank 0 hands it; rank 0
/// writes every output.
void serve(MpiJob& job, const SearchOptions& o, const GivenFn& given) {
  std::optional<search::SearchQuestion> q;
  try {
    if (!given("--model") && o.question_in.empty()) throw CLI::RequiredError("--model");
    q = the_question(o, given);
  } catch (...) {
    search::tell_rank_zero(job, std::current_exception());
    throw;
  }
  if (o.question_out.empty()) search::serve_designs(job, *q, thread_count(o));
}

/// On rank 0 of an MPI job, tells the other ranks to stop when the run ends, however it ends.
struct StopOtherRanks {
  MpiJob& job;
  ~StopOtherRanks() {
    try {
      search::stop_other_ranks(job);
    } catch (...) {  // MPI failed: mpirun ends the job
    }
  }
};

void run(const SearchOptions& o, const GivenFn& given) {
  MpiJob job;
  if (job.rank() > 0) return serve(job, o, given);
  const StopOtherRanks stop{job};
  if (!given("--model") && o.question_in.empty()) throw CLI::RequiredError("--model");
  if (!o.question_out.empty() && o.question_out != "-") check_writable("--write-question", o.question_out);
  const search::SearchQuestion q = the_question(o, given);
  check_stop_rule(o, q, given);
  if (!o.question_out.empty()) return write_question(q, o.question_out);
  // The answer of a long search must not be lost to a mistyped output path: check them all first.
  if (!o.output.empty()) check_writable("--output", o.output);
  if (!o.csv.empty()) check_writable("--csv", o.csv);
  if (!o.trace.empty()) check_writable("--trace", o.trace);
  if (!o.pareto.empty()) check_writable("--pareto", o.pareto);
  if (!o.report.empty()) check_writable("--report", o.report);
  search::RunSettings settings;
  settings.threads = thread_count(o);
  settings.job = &job;
  settings.db_path = o.db;
  settings.top = o.top;
  settings.keep_all = !o.csv.empty();
  settings.pareto = !o.pareto.empty();
  settings.leave_out_by_bound = !o.evaluate_all;
  settings.progress = stderr_progress_output(o.progress == "plain"  ? ProgressMode::Plain
                                             : o.progress == "none" ? ProgressMode::None
                                                                    : ProgressMode::Auto);
  search::RunStats stats;
  search::SearchAnswer answer;
  try {
    answer = search::run_search(q, settings, &stats);
  } catch (const ThreadStartError& e) {
    throw InputError(fmt::format("--threads {}: {}; ask for fewer threads", settings.threads, e.what()));
  }

  const std::string json = io::answer_json(q, answer).dump(2) + "\n";
  if (!o.output.empty()) write_text_file(o.output, json);
  if (!o.csv.empty()) write_file(o.csv, [&](std::ostream& out) { io::write_points_csv(out, q, answer); });
  if (!o.pareto.empty()) write_file(o.pareto, [&](std::ostream& out) { io::write_pareto_csv(out, q, answer); });
  const std::vector<io::Timeline> timelines =
      answer.best ? io::best_point_timelines(q, *answer.best) : std::vector<io::Timeline>{};
  if (!o.trace.empty()) io::write_chrome_trace(o.trace, timelines);
  if (!o.report.empty()) {
    std::vector<nlohmann::json> traces;
    if (!timelines.empty()) traces.push_back(nlohmann::json::parse(io::chrome_trace_json(timelines).dump()));
    // Each pass of the best point's transformer layer on the chip's cores, a chart of its own.
    if (answer.best)
      for (const io::Timeline& layer : io::best_point_layer_timelines(q, *answer.best))
        traces.push_back(nlohmann::json::parse(io::chrome_trace_json({layer}).dump()));
    std::string models;
    for (const search::ModelCase& m : q.models) models += (models.empty() ? "" : ", ") + m.spec.name;
    write_text_file(o.report, io::html_report(nlohmann::json::parse(json), io::ReportKind::Search, traces,
                                              "phaze: co-search for " + models));
  }
  if (o.json) {
    std::cout << json;
  } else {
    std::cout << io::answer_text(q, answer);
    std::cout << fmt::format(
        "\n{} evaluated{}, {} resumed from the results file, in {:.3g} s on {}{}; {} scheduled, {} reused{}\n",
        counted(stats.points_evaluated, "point"),
        stats.points_past_stop > 0
            ? fmt::format(" ({} of them past their combination's stop, not in the answer)", stats.points_past_stop)
            : "",
        stats.points_resumed, stats.elapsed_s, counted(settings.threads, "thread"),
        job.size() > 1 ? fmt::format(" and {} of {} other ranks", stats.remote_threads, job.size() - 1) : "",
        counted(stats.schedule_misses, "layer pass", "layer passes"), stats.schedule_hits,
        stats.unproven_passes > 0 ? fmt::format("; {} not proven optimal within the node budget",
                                                counted(stats.unproven_passes, "pass", "passes"))
                                  : "");
    if (stats.points_left_out > 0)
      std::cout << fmt::format(
          "{} left out unevaluated{}: their bounds show they cannot enter the answer (--evaluate-all "
          "evaluates them)\n",
          counted(stats.points_left_out, "point"),
          job.size() > 1 ? fmt::format(" ({} by other ranks)", stats.points_left_out_remote) : "");
    const search::BaselineTimes& b = stats.baseline_times;
    std::cout << fmt::format(
        "baselines took {:.3g} s: TPUv4-like 32 GiB {:.3g} s, hand-set plans {:.3g} s, Spotlight-style {:.3g} s "
        "({} estimated, {} scheduled){}\n",
        b.total_s, b.tpuv4_32gib_s, b.hand_set_s, b.spotlight_s, counted(b.spotlight_estimated, "design"),
        b.spotlight_scheduled, q.gpu_baselines.empty() ? "" : fmt::format(", GPU clusters {:.3g} s", b.gpu_s));
  }
  if (!answer.best) std::cerr << "phaze: no feasible design in the searched space\n";
}

/// The models and their training: devices, batch, sequence, micro-batches, HBM sizes, recomputation, widths.
void add_workload_options(CLI::App* cmd, SearchOptions& o) {
  cmd->add_option("--model", o.models,
                  "Preset or Hugging Face config.json; repeat (or comma-separate) for a set (required without "
                  "--question; with it, replaces the file's models)")
      ->delimiter(',');
  add_integer_option(cmd, "--devices", o.devices, 1, search::limits::kDevices, "Accelerators in the cluster");
  add_integer_option(cmd, "--global-batch", o.global_batch, 1, search::limits::kGlobalBatch, "Sequences per iteration");
  cmd->add_option("--seq", o.seq,
                  fmt::format("Sequence length: one for all models or one per model (default: the model's) [1..{}]",
                              model::limits::kSequence));
  cmd->add_option("--mbs", o.mbs,
                  fmt::format("Micro-batch sizes, comma-separated [1..{}, at most {} values]",
                              model::limits::kMicroBatch, kMaxListValues))
      ->capture_default_str();
  cmd->add_option("--hbm", o.hbm,
                  fmt::format("HBM capacities in GiB, comma-separated [(0, {:g}]]", search::limits::kHbmGiB))
      ->capture_default_str();
  cmd->add_option("--recompute", o.recompute, "Activation recomputation: both, on or off")
      ->check(CLI::IsMember({"both", "on", "off"}))
      ->capture_default_str();
  cmd->add_option("--tp", o.tp,
                  "Tensor-parallel widths allowed, comma-separated (default: every power of two up to 8 dividing "
                  "the heads)");
  cmd->add_option("--ep", o.ep,
                  "Expert-parallel widths tried for a mixture of experts, comma-separated, with --execution megatron "
                  "(default 1: every device holds every expert)");
}

/// How points of equal throughput are ordered (search and evaluate).
void add_ranking_option(CLI::App* cmd, SearchOptions& o) {
  cmd->add_option("--ranking", o.ranking,
                  "Points of equal throughput: canonical (PHAZE's, with --phaze-compat: the design with the most cores "
                  "first; the top list "
                  "one entry per design and HBM size) or smaller-area (the smaller chip first; the top list one entry "
                  "per chip, at its best HBM size)")
      ->check(CLI::IsMember({"canonical", "smaller-area"}))
      ->capture_default_str();
}

/// The chips searched: the area budget and its lower fraction, and the core, array and buffer values.
void add_space_options(CLI::App* cmd, SearchOptions& o) {
  CLI::Option* budget =
      cmd->add_option("--budget", o.budget, "Area budget = area of this preset or architecture file (default tpuv4)");
  CLI::Option* budget_um2 =
      add_number_option(cmd, "--budget-um2", o.budget_um2, 0, search::limits::kAreaUm2, false, "Area budget in µm²");
  CLI::Option* budget_mm2 = add_number_option(cmd, "--budget-mm2", o.budget_mm2, 0, search::limits::kAreaUm2 * 1e-6,
                                              false, "Area budget in mm² (default: the TPUv4-like chip's 278.8)",
                                              {"µm²", 1e-6, "mm²", 0.01, "give µm² as --budget-um2"});
  for (CLI::Option* a : {budget, budget_um2, budget_mm2})
    for (CLI::Option* b : {budget, budget_um2, budget_mm2})
      if (a != b) a->excludes(b);
  add_number_option(cmd, "--lower-fraction", o.lower_fraction, 0, 1, false,
                    "Keep designs with area ≥ this fraction of the budget (not applied when num_tc = 1 or num_vc = 1)");
  cmd->add_flag("--no-single-core-exemption", o.no_exemption,
                "Apply the lower bound to num_tc = 1 and num_vc = 1 designs too");
  cmd->add_option("--tc", o.tc, "Only these tensor-core counts (comma-separated powers of two)");
  cmd->add_option("--vc", o.vc, "Only these vector-core counts");
  cmd->add_option("--width", o.width, "Only these systolic-array widths (= vector-core lanes)");
  cmd->add_option("--depth", o.depth, "Only these systolic-array depths");
  cmd->add_option("--glb-mib", o.glb_mib, "Only these global-buffer sizes in MiB");
  cmd->add_option("--hbm-bandwidth", o.hbm_bandwidth,
                  "HBM bandwidths searched in GB/s (10^9 bytes/s), comma-separated: each chip once per value "
                  "(default: the budget chip's, 1200 for the TPUv4-like one); the area model charges nothing for "
                  "bandwidth, so give the values a design could have");
  cmd->add_option("--core-overhead-um2", o.core_overhead,
                  "Area per tensor core and per vector core that the template leaves out (control, network-on-chip "
                  "router, SRAM ports), µm², as TC,VC (default 0,0, PHAZE's model): every design and the default "
                  "budget pay it; an assumption to test how the answer depends on it");
  add_ranking_option(cmd, o);
}

/// How the devices are joined and how an iteration runs on them: network, optimizer, execution, planner.
void add_execution_options(CLI::App* cmd, SearchOptions& o) {
  CLI::Option* link = add_number_option(cmd, "--link-bandwidth", o.link_gib_s, 0, search::limits::kLinkGiBs, true,
                                        "Inter-chip link bandwidth in GiB/s (TP, pipeline, data-parallel): a network "
                                        "of one link instead of the system's (4 with --phaze-compat)",
                                        {"bytes/s", 1 / kGiB, "GiB/s", 0.01});
  CLI::Option* system = cmd->add_option("--system", o.system,
                                        "System preset or JSON file whose network joins the devices (see 'phaze "
                                        "system list'): TP collectives on the tier their group spans (a group wider "
                                        "than a node shares its node's links there), data-parallel rings and "
                                        "pipeline sends on the tiers the plan's layout puts them on; its device "
                                        "is not used (the search chooses the chip)")
                            ->capture_default_str();
  link->excludes(system);
  system->excludes(link);
  cmd->add_option("--optimizer", o.optimizer,
                  "sgd (PHAZE's, with --phaze-compat), adam (mixed-precision Adam as 'phaze predict' models it: 18 "
                  "bytes per parameter) or adam-phaze (PHAZE's Adam: one parameter-sized copy of state); memory and "
                  "optimizer-step time")
      ->check(CLI::IsMember({"sgd", "adam", "adam-phaze"}))
      ->capture_default_str();
  cmd->add_option("--execution", o.execution,
                  "How an iteration runs: phaze (PHAZE's placement: stages of any sizes) or megatron (Megatron-LM's "
                  "execution as 'phaze predict' models it: every configuration of p, d, v, sequence parallelism, "
                  "selective or full recomputation and distributed optimizer tried per point; Adam)")
      ->check(CLI::IsMember({"phaze", "megatron"}))
      ->capture_default_str();
  cmd->add_option(
         "--planner", o.planner,
         "Placement of each point under --execution phaze: phaze (PHAZE's: one width and one data-parallel "
         "degree, whole-stage recomputation) or stagewise (each stage its own width and degree, each layer its "
         "own recomputation; never slower, costs search time; `piper` is another name for it)")
      ->check(CLI::IsMember({"phaze", "stagewise", "piper"}))
      ->capture_default_str();
  cmd->add_flag("--overlap-dp", o.overlap_dp,
                "With --execution megatron: overlap the gradient reduction with the backward pass");
  add_attention_backend_option(cmd, o.attention_backend);
  cmd->add_option("--baseline", o.gpu_baselines,
                  "GPU clusters to price beside the designs, comma-separated GPU systems or GPU presets (h100-sxm: "
                  "dgx-h100): each model's fastest Megatron-LM configuration in BF16 on as many GPUs, as 'phaze plan' "
                  "finds it; the chips' areas are not compared (docs/cli.md, \"Defaults\")")
      ->type_name("LIST");
  cmd->add_flag("--phaze-compat", o.phaze_compat,
                "The original PHAZE evaluation's settings where no flag of their own is given: materialised attention "
                "(--attention-backend unfused), SGD (--optimizer sgd), one 4 GiB/s link (--link-bandwidth 4), "
                "PHAZE's order of equal points (--ranking canonical), no per-core overhead; its answers are the "
                "earlier defaults' to the byte");
}

/// How the space is searched: the exact or the area-bucket stop rule, the schedules' node budget, threads.
void add_strategy_options(CLI::App* cmd, SearchOptions& o) {
  cmd->add_option("--stop-rule", o.stop_rule,
                  "exact: every point evaluated or left out by a bound that proves it cannot enter the answer (the "
                  "answer and the top list are the optimum); buckets: PHAZE's area-bucket rule, a heuristic (see "
                  "--stop-window, --bucket-um2)")
      ->check(CLI::IsMember({"exact", "buckets"}))
      ->capture_default_str();
  cmd->add_flag("--exhaustive", o.exhaustive, "The exact rule (--stop-rule exact), under its earlier name");
  cmd->add_flag("--evaluate-all", o.evaluate_all,
                "Exact rule without --csv: evaluate every point, also those whose bounds (layers at "
                "their schedules' root bounds) show they cannot enter the answer; the answer is the same");
  add_integer_option(cmd, "--stop-window", o.stop_window, 1, search::limits::kStopWindow,
                     "--stop-rule buckets: stop a combination once this many last buckets with a feasible design have "
                     "non-increasing best scores");
  add_number_option(cmd, "--bucket-um2", o.bucket_um2, 0, search::limits::kAreaUm2, true,
                    "--stop-rule buckets: width of an area bucket in µm²");
  add_integer_option(cmd, "--schedule-nodes", o.schedule_nodes, 0, search::limits::kScheduleNodes,
                     "Search nodes per layer schedule before the best one found is taken unproven (0: 1,000,000, "
                     "a second at most; phaze schedule proves with 4,000,000)");
  add_integer_option(cmd, "--threads", o.threads, 0, search::limits::kThreads,
                     "Worker threads (0: one per CPU); the answer does not depend on it");
}

/// Where the answer goes, and the question as a file.
void add_output_options(CLI::App* cmd, SearchOptions& o) {
  cmd->add_option("--db", o.db,
                  "SQLite results file: every point evaluated is stored; a killed search run again with it resumes");
  cmd->add_option("-o,--output", o.output, "Write the answer as JSON to this file");
  cmd->add_option("--csv", o.csv, "Write every point as CSV to this file");
  cmd->add_option("--report", o.report,
                  "Write an HTML page of the answer (phaze report): the design space with the Pareto frontier when "
                  "--pareto is given, throughput per model against the baselines, the best point's timeline");
  cmd->add_option("--pareto", o.pareto,
                  "Write the Pareto frontiers as CSV to this file: the points no other beats at once on samples/s, "
                  "chip area and energy per sample, per model and averaged (exact rule only; bounds leave out the "
                  "points they show to be beaten)");
  cmd->add_option("--trace", o.trace,
                  "Write the best point's pipelines as Chrome trace-event JSON (Perfetto, chrome://tracing): one "
                  "track per stage, one for the gradients and the optimizer, ending at the time per batch");
  add_integer_option(cmd, "--top", o.top, 0, search::limits::kTop, "Points listed in the top list");
  cmd->add_flag("--json", o.json, "Print the answer as JSON instead of text");
  cmd->add_option("--progress", o.progress,
                  "Progress on standard error: auto (a bar on a terminal, nothing otherwise), plain (a line every "
                  "5 s, for logs) or none")
      ->check(CLI::IsMember({"auto", "plain", "none"}))
      ->capture_default_str();
  cmd->add_option("--question", o.question_in,
                  "Search question JSON (docs/question.md), as --write-question writes it; flags given beside it "
                  "replace its values");
  cmd->add_option("--write-question", o.question_out,
                  "Write the search question as JSON to this file ('-': standard output) instead of searching");
}

/// Whether `cmd` was given an option; false for an option it does not have (the search and evaluate commands
/// share the code that asks).
GivenFn given_on(CLI::App* cmd) {
  return [cmd](const char* option) {
    const CLI::Option* given = cmd->get_option_no_throw(option);
    return given != nullptr && given->count() > 0;
  };
}

}  // namespace

void add_search_command(CLI::App& app) {
  auto o = std::make_shared<SearchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "search",
      "Co-search the accelerator design and the training plan (t, pipeline stages, d, micro-batch, "
      "recomputation) for the highest training throughput: the proven optimum over the whole space, every point "
      "evaluated or left out by a bound that proves it cannot enter the answer; --stop-rule buckets runs PHAZE's "
      "area-bucket heuristic instead");
  add_workload_options(cmd, *o);
  add_space_options(cmd, *o);
  add_execution_options(cmd, *o);
  add_strategy_options(cmd, *o);
  add_output_options(cmd, *o);
  cmd->callback([o, cmd] { run(*o, given_on(cmd)); });
}

void add_evaluate_command(CLI::App& app) {
  auto o = std::make_shared<SearchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "evaluate",
      "Price one chip end to end, as the search prices each of its designs: the best training plan over the "
      "widths, pipelines, data-parallel degrees, micro-batches and recomputation settings, its time per batch "
      "and energy, against the TPUv4-like chip and the hand-set plans");
  cmd->add_option("--arch", o->arch,
                  "Architecture preset or JSON file (see 'phaze arch show'): its cores, buffers, HBM capacity and "
                  "bandwidth and clock, which need not lie in the search's template")
      ->required();
  add_workload_options(cmd, *o);
  cmd->get_option("--hbm")->description("HBM capacities in GiB, comma-separated (default: the chip's)");
  add_execution_options(cmd, *o);
  add_ranking_option(cmd, *o);
  add_strategy_options(cmd, *o);
  add_output_options(cmd, *o);
  // The space is the one chip: nothing is left to stop early or to restrict.
  for (const char* option : {"--stop-rule", "--stop-window", "--bucket-um2", "--exhaustive", "--evaluate-all"})
    cmd->remove_option(cmd->get_option(option));
  cmd->callback([o, cmd] { run(*o, given_on(cmd)); });
}

}  // namespace phaze::cli
