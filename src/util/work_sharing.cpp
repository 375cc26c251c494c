#include "util/work_sharing.h"

#include <algorithm>
#include <utility>

namespace phaze {

std::function<void()>* WorkSharing::take_next(const std::shared_ptr<Batch>& batch) {
  std::function<void()>* task = &batch->tasks[batch->next++];
  --waiting_;
  if (batch->next == batch->tasks.size()) open_.erase(std::find(open_.begin(), open_.end(), batch));
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
  if (++batch.done == batch.tasks.size()) batch.all_done.notify_all();
}

void WorkSharing::run(std::vector<std::function<void()>> tasks) {
  if (tasks.size() <= 1) {
    for (std::function<void()>& task : tasks) task();
    return;
  }
  const auto batch = std::make_shared<Batch>();
  batch->tasks = std::move(tasks);
  std::function<void()> hook;
  {
    std::lock_guard lock(mutex_);
    open_.push_back(batch);
    waiting_ += batch->tasks.size();
    hook = on_post_;
  }
  posted_.notify_all();
  if (hook) hook();
  // This thread takes its own tasks in order; helpers may have taken some meanwhile.
  while (true) {
    std::function<void()>* task = nullptr;
    {
      std::lock_guard lock(mutex_);
      if (batch->next == batch->tasks.size()) break;
      task = take_next(batch);
    }
    execute(*batch, *task);
  }
  std::unique_lock lock(mutex_);
  batch->all_done.wait(lock, [&] { return batch->done == batch->tasks.size(); });
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

void WorkSharing::help_until(const std::function<bool()>& finished) {
  std::unique_lock lock(mutex_);
  while (true) {
    std::shared_ptr<Batch> batch;
    if (std::function<void()>* task = take(batch)) {
      lock.unlock();
      execute(*batch, *task);
      lock.lock();
      continue;
    }
    if (finished()) return;
    posted_.wait(lock);
  }
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
