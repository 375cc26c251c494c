// The extension module of the Python package: the command line run in process (its JSON answers are the
// package's results) and the search run on the library with a progress callback, the GIL released and
// Ctrl-C honoured. The package's Python files (python/phaze) wrap both in typed results.

#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "cli/run.h"
#include "io/search_report.h"
#include "search/driver.h"
#include "search/question_json.h"
#include "util/input_error.h"

namespace py = pybind11;

namespace {

/// Standard output and error captured into strings while it lives (the command line prints its answers and
/// errors there).
class CapturedOutput {
 public:
  CapturedOutput() : out_(std::cout.rdbuf(out_text_.rdbuf())), err_(std::cerr.rdbuf(err_text_.rdbuf())) {}
  ~CapturedOutput() {
    std::cout.rdbuf(out_);
    std::cerr.rdbuf(err_);
  }
  CapturedOutput(const CapturedOutput&) = delete;
  CapturedOutput& operator=(const CapturedOutput&) = delete;
  std::string out() const { return out_text_.str(); }
  std::string err() const { return err_text_.str(); }

 private:
  std::ostringstream out_text_, err_text_;
  std::streambuf* out_;
  std::streambuf* err_;
};

/// `phaze args...` in process: its exit status, standard output and standard error.
std::tuple<int, std::string, std::string> run_command(const std::vector<std::string>& args) {
  std::vector<const char*> argv{"phaze"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  int status = 0;
  CapturedOutput captured;
  {
    py::gil_scoped_release release;
    status = phaze::cli::run(static_cast<int>(argv.size()), argv.data());
  }
  return {status, captured.out(), captured.err()};
}

/// What the search thread shares with the Python thread that waits for it.
struct SearchState {
  std::mutex mutex;
  std::condition_variable changed;
  bool done = false;
  std::optional<std::tuple<int64_t, int64_t, std::string>> progress;  ///< the latest figures not yet reported
  std::exception_ptr failure;
  std::string answer;
  phaze::search::RunStats stats;
};

/// Runs the search of `question_text` (a question file's JSON) on the library. The search runs on a thread of
/// its own while this one, with the GIL, calls `progress(done, total, best)` at most ten times a second and
/// checks for signals: Ctrl-C stops the search (no design is taken after it) and raises KeyboardInterrupt.
/// Returns the answer's JSON text and the run's figures.
std::pair<std::string, py::dict> search(const std::string& question_text, int threads, int64_t top, bool pareto,
                                        const std::string& db, const py::object& progress) {
  const phaze::search::SearchQuestion question = phaze::search::parse_question(question_text, "question");
  phaze::search::validate(question);
  std::atomic<bool> cancel{false};
  SearchState state;
  phaze::search::RunSettings settings;
  settings.threads = threads;
  settings.top = top;
  settings.pareto = pareto;
  settings.db_path = db;
  settings.cancel = &cancel;
  if (!progress.is_none()) {
    settings.progress.is_terminal = true;
    settings.progress.report = [&](int64_t done, int64_t total, std::string_view best) {
      std::lock_guard lock(state.mutex);
      state.progress.emplace(done, total, std::string(best));
      state.changed.notify_all();
    };
  }
  std::thread worker([&] {
    try {
      const phaze::search::SearchAnswer answer = phaze::search::run_search(question, settings, &state.stats);
      std::string text = phaze::io::answer_json(question, answer).dump();
      std::lock_guard lock(state.mutex);
      state.answer = std::move(text);
    } catch (...) {
      std::lock_guard lock(state.mutex);
      state.failure = std::current_exception();
    }
    std::lock_guard lock(state.mutex);
    state.done = true;
    state.changed.notify_all();
  });
  // The worker must be joined however this thread leaves: a Python exception from the callback or a signal.
  auto stop = [&] {
    cancel = true;
    py::gil_scoped_release release;
    worker.join();
  };
  while (true) {
    std::optional<std::tuple<int64_t, int64_t, std::string>> report;
    bool done = false;
    {
      py::gil_scoped_release release;
      std::unique_lock lock(state.mutex);
      state.changed.wait_for(lock, std::chrono::milliseconds(100), [&] { return state.done || state.progress; });
      report.swap(state.progress);
      done = state.done;
    }
    try {
      if (report) progress(std::get<0>(*report), std::get<1>(*report), std::get<2>(*report));
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    } catch (...) {
      stop();
      throw;
    }
    if (done) break;
  }
  worker.join();
  if (state.failure) std::rethrow_exception(state.failure);
  const phaze::search::RunStats& s = state.stats;
  py::dict stats;
  stats["points_evaluated"] = s.points_evaluated;
  stats["points_resumed"] = s.points_resumed;
  stats["points_left_out"] = s.points_left_out;
  stats["elapsed_s"] = s.elapsed_s;
  return {state.answer, stats};
}

}  // namespace

PYBIND11_MODULE(_phaze, m) {
  m.doc() = "phaze's C++ library, as the package's Python files use it (import phaze instead).";
  py::register_exception<phaze::InputError>(m, "InputError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr e) {
    try {
      if (e) std::rethrow_exception(e);
    } catch (const phaze::search::SearchCancelled&) {
      PyErr_SetNone(PyExc_KeyboardInterrupt);
    }
  });
  m.def("run_command", &run_command, py::arg("args"),
        "Runs `phaze ARGS...` in process: (exit status, standard output, standard error).");
  m.def("search", &search, py::arg("question"), py::arg("threads"), py::arg("top"), py::arg("pareto"), py::arg("db"),
        py::arg("progress"), "Runs the search of a question file's JSON text: (answer JSON text, run figures).");
}
