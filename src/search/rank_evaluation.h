#pragma once

// A search spread over the ranks of an MPI job. Rank 0 walks the designs, stores the points and builds the
// answer (search/driver.h); every other rank prepares the same question and evaluates the designs rank 0
// hands it, one per thread, sending the points back. Points travel as the records of the results file, whose
// text keeps every double bit for bit, so the answer is the one a single process gives, byte for byte.
//
// Messages (tag: text): hello (threads of the rank), work (a design's visiting position, the keys of its
// points to evaluate with their combinations and, when points may be left out, the thresholds the answer had
// reached when rank 0 handed the design out), done (those points, and those left out on their bounds), fail
// (why a rank could not go on), stop. Rank 0 makes every MPI
// call from one messenger thread while its walk runs; the threads waiting for a remote design only wait.

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "search/answer_thresholds.h"
#include "search/evaluate.h"
#include "search/point.h"
#include "search/question.h"
#include "util/mpi_job.h"

namespace phaze::search {

/// Rank 0's side: an evaluation slot per thread of every other rank.
class RemoteRanks {
 public:
  /// Waits until every other rank has prepared the question and said on how many threads it evaluates.
  /// Throws the error of a rank that could not (InputError when its input was bad).
  explicit RemoteRanks(MpiJob& job);
  /// Waits for the designs in flight, then tells every other rank to stop.
  ~RemoteRanks();
  RemoteRanks(const RemoteRanks&) = delete;
  RemoteRanks& operator=(const RemoteRanks&) = delete;

  int slots() const { return static_cast<int>(slot_rank_.size()); }
  /// The points with these keys (of these combinations) of the design at visiting position `position`,
  /// evaluated by remote slot `slot` (one caller per slot at a time), in canonical order; adds the passes its
  /// rank left unproven to `unproven`. With `reached`, the points that cannot enter an answer that reached it
  /// (cannot_enter, on their bounds) are left out as Evaluator::evaluate leaves them out, and added to
  /// `left_out`. Throws the error of the rank when it failed.
  std::vector<PointOutcome> evaluate(int slot, size_t position, const std::vector<std::string>& keys,
                                     const std::vector<size_t>& combinations,
                                     const std::optional<AnswerThresholds>& reached,
                                     std::vector<LeftOutPoint>& left_out, int64_t& unproven);

 private:
  void relay();  ///< the messenger thread: sends the work queued, hands out the answers that arrive

  MpiJob& job_;
  std::vector<int> slot_rank_;  ///< per slot, its rank
  std::mutex mutex_;
  std::condition_variable queued_;
  std::deque<std::pair<int, std::string>> outbox_;              ///< (rank, work message)
  std::unordered_map<int, std::promise<std::string>> waiting_;  ///< per slot in flight, its answer to come
  bool ending_ = false;
  std::thread messenger_;
};

/// What every rank but 0 does: prepares the question's designs and workload, then evaluates the designs rank 0
/// sends on `threads` threads until it says stop. An error is sent to rank 0 (tell_rank_zero) and rethrown.
void serve_designs(MpiJob& job, const SearchQuestion& question, int threads);

/// Sends rank 0 the error `error` of this rank (not rank 0), which it could not get past: rank 0 stops the
/// search with it. Call it for an error before serve_designs, e.g. while the question is read.
void tell_rank_zero(MpiJob& job, const std::exception_ptr& error);

/// Rank 0 tells every other rank to stop: the last message of a run, sent whether it succeeded or not (a rank
/// still waiting for work would otherwise wait for ever). Only the first call of the process sends.
void stop_other_ranks(MpiJob& job);

}  // namespace phaze::search
