#include "search/rank_evaluation.h"

#include <fmt/format.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "search/buckets.h"
#include "search/evaluate.h"
#include "search/schedule_cache.h"
#include "util/input_error.h"

namespace phaze::search {

namespace {

enum Tag : int { kHello = 1, kWork = 2, kDone = 3, kFail = 4, kStop = 5 };

/// How long a rank with nothing to send or receive sleeps before it looks again: short beside a design's
/// evaluation, long enough that the waiting costs no CPU worth counting.
constexpr auto kPollInterval = std::chrono::milliseconds(1);

/// "<slot>\n<rest>" and back: the slot leads the answers, so that the messenger hands them out unparsed.
std::string with_slot(int slot, const std::string& rest) {
  return std::to_string(slot) + "\n" + rest;
}
std::pair<int, std::string> split_slot(const std::string& bytes) {
  const size_t end = bytes.find('\n');
  if (end == std::string::npos) throw std::runtime_error("MPI: a message without its slot");
  return {std::stoi(bytes.substr(0, end)), bytes.substr(end + 1)};
}

/// A failure as sent: "input" or "internal", a line, the message.
std::string failure_text(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const InputError& e) {
    return std::string("input\n") + e.what();
  } catch (const std::exception& e) {
    return std::string("internal\n") + e.what();
  } catch (...) {
    return "internal\nan unknown error";
  }
}
std::exception_ptr failure_of(int rank, const std::string& text) {
  const size_t end = text.find('\n');
  const std::string kind = text.substr(0, end);
  const std::string message = fmt::format("rank {}: {}", rank, end == std::string::npos ? "" : text.substr(end + 1));
  if (kind == "input") return std::make_exception_ptr(InputError(message));
  return std::make_exception_ptr(std::runtime_error(message));
}

/// Thresholds as sent: every double by its bits, so that a rank holds points against the very figures rank 0
/// reached (null: nothing reached yet).
nlohmann::json bits_of(const std::optional<double>& x) {
  return x ? nlohmann::json(std::bit_cast<uint64_t>(*x)) : nlohmann::json(nullptr);
}
std::optional<double> from_bits(const nlohmann::json& j) {
  return j.is_null() ? std::nullopt : std::optional<double>(std::bit_cast<double>(j.get<uint64_t>()));
}
nlohmann::json thresholds_json(const AnswerThresholds& t) {
  nlohmann::json j = {{"combination_best", nlohmann::json::array()},
                      {"model_best", nlohmann::json::array()},
                      {"top", t.top},
                      {"top_last", bits_of(t.top_last)}};
  for (const std::optional<double>& x : t.combination_best) j["combination_best"].push_back(bits_of(x));
  for (const std::optional<double>& x : t.model_best) j["model_best"].push_back(bits_of(x));
  if (!t.frontiers.empty()) {
    nlohmann::json& frontiers = j["frontiers"] = nlohmann::json::array();
    for (const FrontierSet& set : t.frontiers) {
      nlohmann::json& figures = frontiers.emplace_back(nlohmann::json::array());
      for (const FrontierFigures& x : set.figures())
        figures.push_back({bits_of(x.samples_per_s), bits_of(x.area_um2), bits_of(x.energy_per_sample_j)});
    }
  }
  return j;
}
AnswerThresholds thresholds_from_json(const nlohmann::json& j) {
  AnswerThresholds t;
  for (const nlohmann::json& x : j.at("combination_best")) t.combination_best.push_back(from_bits(x));
  for (const nlohmann::json& x : j.at("model_best")) t.model_best.push_back(from_bits(x));
  t.top = j.at("top").get<int64_t>();
  t.top_last = from_bits(j.at("top_last"));
  if (j.contains("frontiers"))
    for (const nlohmann::json& figures : j.at("frontiers")) {
      FrontierSet& set = t.frontiers.emplace_back();
      for (const nlohmann::json& x : figures) set.add({*from_bits(x.at(0)), *from_bits(x.at(1)), *from_bits(x.at(2))});
    }
  return t;
}

}  // namespace

// ---- Rank 0 ----

RemoteRanks::RemoteRanks(MpiJob& job) : job_(job) {
  std::vector<int> threads(static_cast<size_t>(job.size()), -1);
  int heard = 0;
  while (heard < job.size() - 1) {
    const std::optional<MpiJob::Message> m = job.try_receive();
    if (!m) {
      std::this_thread::sleep_for(kPollInterval);
      continue;
    }
    if (m->tag == kFail) std::rethrow_exception(failure_of(m->from, split_slot(m->bytes).second));
    if (m->tag != kHello || threads[static_cast<size_t>(m->from)] >= 0)
      throw std::runtime_error(fmt::format("MPI: rank {} sent message {} before its hello", m->from, m->tag));
    threads[static_cast<size_t>(m->from)] = std::stoi(m->bytes);
    ++heard;
  }
  for (int r = 1; r < job.size(); ++r)
    for (int t = 0; t < threads[static_cast<size_t>(r)]; ++t) slot_rank_.push_back(r);
  messenger_ = std::thread([this] { relay(); });
}

RemoteRanks::~RemoteRanks() {
  {
    std::lock_guard lock(mutex_);
    ending_ = true;
  }
  queued_.notify_all();
  messenger_.join();
  stop_other_ranks(job_);
}

std::vector<PointOutcome> RemoteRanks::evaluate(int slot, size_t position, const std::vector<std::string>& keys,
                                                const std::vector<size_t>& combinations,
                                                const std::optional<AnswerThresholds>& reached,
                                                std::vector<LeftOutPoint>& left_out, int64_t& unproven) {
  nlohmann::json work = {{"slot", slot}, {"position", position}, {"keys", keys}, {"combinations", combinations}};
  if (reached) work["thresholds"] = thresholds_json(*reached);
  std::future<std::string> answer;
  {
    std::lock_guard lock(mutex_);
    answer = waiting_[slot].get_future();
    outbox_.emplace_back(slot_rank_[static_cast<size_t>(slot)], work.dump());
  }
  queued_.notify_all();
  const nlohmann::json done = nlohmann::json::parse(answer.get());
  unproven += done.at("unproven").get<int64_t>();
  std::vector<PointOutcome> points;
  for (const nlohmann::json& p : done.at("points")) points.push_back(from_record(p.at(0).get<std::string>(), p.at(1)));
  for (const nlohmann::json& p : done.at("left_out"))
    left_out.push_back({p.at(0).get<std::string>(), p.at(1).get<bool>()});
  return points;
}

void RemoteRanks::relay() {
  while (true) {
    std::deque<std::pair<int, std::string>> out;
    {
      std::unique_lock lock(mutex_);
      queued_.wait_for(lock, kPollInterval, [&] { return ending_ || !outbox_.empty(); });
      // Ends once no thread waits for a design: the walk is over.
      if (ending_ && waiting_.empty() && outbox_.empty()) return;
      out.swap(outbox_);
    }
    for (const auto& [rank, bytes] : out) job_.send(rank, kWork, bytes);
    while (const std::optional<MpiJob::Message> m = job_.try_receive()) {
      if (m->tag != kDone && m->tag != kFail) continue;
      auto [slot, rest] = split_slot(m->bytes);
      std::lock_guard lock(mutex_);
      const auto waiting = waiting_.find(slot);
      if (waiting == waiting_.end()) continue;
      if (m->tag == kDone)
        waiting->second.set_value(std::move(rest));
      else
        waiting->second.set_exception(failure_of(m->from, rest));
      waiting_.erase(waiting);
    }
  }
}

void stop_other_ranks(MpiJob& job) {
  // Once per process (MPI runs once per process): the other ranks leave after the first.
  static std::atomic<bool> sent{false};
  if (job.size() < 2 || sent.exchange(true)) return;
  for (int r = 1; r < job.size(); ++r) job.send(r, kStop, "");
}

// ---- Every other rank ----

void tell_rank_zero(MpiJob& job, const std::exception_ptr& error) {
  job.send(0, kFail, with_slot(-1, failure_text(error)));
}

namespace {

/// One design rank 0 asks this rank to evaluate.
struct ServedWork {
  int slot = 0;
  size_t position = 0;
  std::map<std::string, size_t> combination;  ///< per key wanted, its combination
  std::optional<AnswerThresholds> reached;    ///< when points may be left out on their bounds
};

ServedWork work_from_message(const std::string& bytes) {
  const nlohmann::json request = nlohmann::json::parse(bytes);
  ServedWork w;
  w.slot = request.at("slot").get<int>();
  w.position = request.at("position").get<size_t>();
  const nlohmann::json& keys = request.at("keys");
  const nlohmann::json& combinations = request.at("combinations");
  if (keys.size() != combinations.size())
    throw std::runtime_error("MPI: a work message's keys and combinations differ in number");
  for (size_t k = 0; k < keys.size(); ++k)
    w.combination.emplace(keys[k].get<std::string>(), combinations[k].get<size_t>());
  if (request.contains("thresholds")) w.reached = thresholds_from_json(request.at("thresholds"));
  return w;
}

/// The answer to one piece of work, as the (tag, message) to send to rank 0.
std::pair<int, std::string> answer_work(Evaluator& evaluator, const std::vector<hw::Design>& designs,
                                        const BucketOrder& order, const ServedWork& w) {
  try {
    if (w.position >= order.designs.size())
      throw std::runtime_error(fmt::format("MPI: no design at position {}", w.position));
    const int64_t unproven_before = evaluator.unproven_passes();
    // The test rank 0's own threads apply (driver.cpp), on the thresholds it sent.
    LeaveOutTest test;
    if (w.reached)
      test = [&](const std::string& key, const std::vector<std::optional<ModelBound>>& bounds) {
        return cannot_enter(*w.reached, w.combination.at(key), designs[order.designs[w.position]].area_um2, bounds);
      };
    std::vector<LeftOutPoint> out;
    const std::vector<PointOutcome> points = evaluator.evaluate(
        designs[order.designs[w.position]], [&](const std::string& key) { return w.combination.contains(key); }, test,
        &out);
    nlohmann::json done = {{"unproven", evaluator.unproven_passes() - unproven_before},
                           {"points", nlohmann::json::array()},
                           {"left_out", nlohmann::json::array()}};
    for (const PointOutcome& p : points) done["points"].push_back({p.key, to_record(p)});
    for (const LeftOutPoint& p : out) done["left_out"].push_back({p.key, p.feasible});
    return {kDone, with_slot(w.slot, done.dump())};
  } catch (...) {
    return {kFail, with_slot(w.slot, failure_text(std::current_exception()))};
  }
}

/// What this rank's receiving loop and its evaluating threads share. However the scope that owns it ends
/// (stopped, or by an exception), the threads are stopped and joined before what they read is destroyed.
/// Work not yet taken is dropped: rank 0 wants no more answers.
struct ServedQueue {
  std::mutex mutex;
  std::condition_variable arrived;
  std::deque<ServedWork> work;
  std::deque<std::pair<int, std::string>> outbox;  // (tag, message)
  bool stopping = false;
  std::vector<std::thread> pool;

  ~ServedQueue() {
    {
      std::lock_guard lock(mutex);
      stopping = true;
      work.clear();
    }
    arrived.notify_all();
    for (std::thread& t : pool) t.join();
  }

  /// The next work, or nothing once stopping.
  std::optional<ServedWork> take() {
    std::unique_lock lock(mutex);
    arrived.wait(lock, [&] { return stopping || !work.empty(); });
    if (work.empty()) return std::nullopt;
    ServedWork w = std::move(work.front());
    work.pop_front();
    return w;
  }
};

}  // namespace

void serve_designs(MpiJob& job, const SearchQuestion& q, int threads) {
  try {
    validate(q);
    const std::vector<hw::Design> designs = search_designs(q);
    const BucketOrder order = bucket_order(designs, q.bucket_um2);
    const Workload workload = prepare_workload(q);
    ScheduleCache cache;
    ServedQueue queue;  // after what its threads read: destroyed (and joined) first
    for (int t = 0; t < threads; ++t)
      queue.pool.emplace_back([&] {
        Evaluator evaluator(workload, cache);
        while (const std::optional<ServedWork> w = queue.take()) {
          std::pair<int, std::string> answer = answer_work(evaluator, designs, order, *w);
          std::lock_guard lock(queue.mutex);
          queue.outbox.push_back(std::move(answer));
        }
      });
    job.send(0, kHello, std::to_string(threads));

    while (true) {
      std::deque<std::pair<int, std::string>> out;
      {
        std::lock_guard lock(queue.mutex);
        out.swap(queue.outbox);
      }
      for (const auto& [tag, bytes] : out) job.send(0, tag, bytes);
      bool heard = false;
      while (const std::optional<MpiJob::Message> m = job.try_receive()) {
        heard = true;
        std::lock_guard lock(queue.mutex);
        if (m->tag == kStop) queue.stopping = true;
        if (m->tag == kWork) queue.work.push_back(work_from_message(m->bytes));
      }
      queue.arrived.notify_all();
      {
        std::lock_guard lock(queue.mutex);
        if (queue.stopping) break;
      }
      if (out.empty() && !heard) std::this_thread::sleep_for(kPollInterval);
    }
  } catch (...) {
    tell_rank_zero(job, std::current_exception());
    throw;
  }
}

}  // namespace phaze::search
