#include "util/work_sharing.h"

#include <algorithm>
#include <utility>

namespace phaze {

std::function<void()>* WorkSharing::take_next(const std::shared_ptr<Batch>& batch, bool last) {
  std::function<void()>* task = last ? &batch->tasks[--batch->end] : &batch->tasks[batch->next++];
  --waiting_;
  if (batch->next == batch->end) open_.erase(std::find(open_.begin(), open_.end(), batch));
  return task;
}

std::function<void()>* WorkSharing::take(std::shared_ptr<Batch>& from) {
  if (open_.empty()) return nullptr;
  from = open_.front();
  return take_next(from);
}

void WorkSharing::execute(Batch& batch, std::function<void()>& task) {
  std::exception_ptr failure;
  try {
    task();
  } catch (...) {
    failure = std::current_exception();
  }
  std::lock_guard lock(mutex_);
  if (failure && !batch.failure) batch.failure = failure;
  if (++batch.done == batch.tasks.size()) posted_.notify_all();
}

void WorkSharing::run(std::vector<std::function<void()>> tasks) {
  if (tasks.size() <= 1) {
    for (std::function<void()>& task : tasks) task();
    return;
  }
  const auto batch = std::make_shared<Batch>();
  batch->tasks = std::move(tasks);
  batch->end = batch->tasks.size();
  std::function<void()> hook;
  {
    std::lock_guard lock(mutex_);
    open_.push_back(batch);
    waiting_ += batch->tasks.size();
    hook = on_post_;
  }
  posted_.notify_all();
  if (hook) hook();
  // This thread takes its own tasks from the last back; helpers may have taken some meanwhile.
  while (true) {
    std::function<void()>* task = nullptr;
    {
      std::lock_guard lock(mutex_);
      if (batch->next == batch->end) break;
      task = take_next(batch, /*last=*/true);
    }
    execute(*batch, *task);
  }
  // Helpers still run some of them: this thread takes what others posted meanwhile.
  std::unique_lock lock(mutex_);
  help_while(lock, [&] { return batch->done == batch->tasks.size(); });
  if (batch->failure) std::rethrow_exception(batch->failure);
}

bool WorkSharing::help() {
  std::shared_ptr<Batch> batch;
  std::function<void()>* task = nullptr;
  {
    std::lock_guard lock(mutex_);
    task = take(batch);
  }
  if (!task) return false;
  execute(*batch, *task);
  return true;
}

void WorkSharing::help_while(std::unique_lock<std::mutex>& lock, const std::function<bool()>& finished) {
  while (!finished()) {
    std::shared_ptr<Batch> batch;
    if (std::function<void()>* task = take(batch)) {
      lock.unlock();
      execute(*batch, *task);
      lock.lock();
      continue;
    }
    posted_.wait(lock);
  }
}

void WorkSharing::help_until(const std::function<bool()>& finished) {
  std::unique_lock lock(mutex_);
  help_while(lock, finished);
}

void WorkSharing::wake() {
  std::lock_guard lock(mutex_);
  posted_.notify_all();
}

void WorkSharing::set_on_post(std::function<void()> hook) {
  std::lock_guard lock(mutex_);
  on_post_ = std::move(hook);
}

void run_tasks(WorkSharing* sharing, std::vector<std::function<void()>> tasks) {
  if (sharing) {
    sharing->run(std::move(tasks));
    return;
  }
  for (std::function<void()>& task : tasks) task();
}

}  // namespace phaze
