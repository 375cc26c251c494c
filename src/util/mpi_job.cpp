#include "util/mpi_job.h"

#include <fmt/format.h>
#include <mpi.h>

#include <cstdlib>
#include <limits>
#include <stdexcept>

namespace phaze {

namespace {

void check(int status, const char* call) {
  if (status != MPI_SUCCESS) throw std::runtime_error(fmt::format("MPI: {} failed with code {}", call, status));
}

}  // namespace

bool launched_as_mpi_ranks() {
  // OpenMPI's mpirun gives every rank the size of the job.
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  return size != nullptr && std::atoi(size) > 1;
}

MpiJob::MpiJob() {
  if (!launched_as_mpi_ranks()) return;
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  if (provided < MPI_THREAD_SERIALIZED) {
    MPI_Finalize();
    throw std::runtime_error("MPI: this MPI library cannot take calls from several threads, one at a time");
  }
  joined_ = true;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
}

MpiJob::~MpiJob() {
  if (joined_) MPI_Finalize();
}

void MpiJob::send(int to, int tag, const std::string& bytes) {
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw std::runtime_error(fmt::format("MPI: a message of {} bytes is too long", bytes.size()));
  check(MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD), "MPI_Send");
}

std::optional<MpiJob::Message> MpiJob::try_receive() {
  int arrived = 0;
  MPI_Status status;
  check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &arrived, &status), "MPI_Iprobe");
  if (!arrived) return std::nullopt;
  int count = 0;
  check(MPI_Get_count(&status, MPI_CHAR, &count), "MPI_Get_count");
  Message m;
  m.from = status.MPI_SOURCE;
  m.tag = status.MPI_TAG;
  m.bytes.resize(static_cast<size_t>(count));
  check(MPI_Recv(m.bytes.data(), count, MPI_CHAR, m.from, m.tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
  return m;
}

}  // namespace phaze
