#pragma once

// One process of an MPI job: the ranks that mpirun (OpenMPI) started together, or this process alone. MPI is
// initialised only when mpirun started the process, so that a process on its own never touches it.

#include <optional>
#include <string>

namespace phaze {

/// Whether mpirun started this process as one rank of a job of several (its environment says so).
bool launched_as_mpi_ranks();

/// The ranks of the job this process belongs to, with point-to-point messages of bytes between them. Calls
/// may come from any thread, one at a time (MPI_THREAD_SERIALIZED): the caller makes them take turns.
class MpiJob {
 public:
  /// Joins the job when mpirun started this process with other ranks; otherwise the job is this process
  /// alone (rank 0 of 1) and nothing else here may be called.
  MpiJob();
  /// Leaves the job (MPI_Finalize, which waits for every rank to leave).
  ~MpiJob();
  MpiJob(const MpiJob&) = delete;
  MpiJob& operator=(const MpiJob&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  struct Message {
    int from = 0;
    int tag = 0;
    std::string bytes;
  };
  /// Sends `bytes` to rank `to` under `tag`; returns once the buffer may be reused.
  void send(int to, int tag, const std::string& bytes);
  /// The next message that has arrived from any rank, or nothing yet (never waits).
  std::optional<Message> try_receive();

 private:
  bool joined_ = false;  ///< MPI was initialised
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace phaze
