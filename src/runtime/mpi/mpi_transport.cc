// The collective engine's transport over MPI, built once per implementation (IR_MPI_NAME:
// "openmpi" or "mpich") as a plugin libir loads: it sees only include/ir/ and mpi.h, and
// every call comes from the engine's one thread (MPI_THREAD_FUNNELED).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "ir/collective.h"

namespace {

using ir::DType;

// MPI counts are int: large buffers move in segments of at most this many elements.
constexpr int64_t kMaxCount = INT_MAX / 16;

std::string MPIErrorText(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<size_t>(length));
}

void Check(int code, const char* call) { IR_CHECK(code == MPI_SUCCESS) << call << " failed: " << MPIErrorText(code); }

MPI_Datatype MPIType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return MPI_FLOAT;
    case DType::kFloat64:
      return MPI_DOUBLE;
    case DType::kInt32:
      return MPI_INT32_T;
    case DType::kInt64:
      return MPI_INT64_T;
    default:
      IR_CHECK(false) << "MPI allreduce: unsupported dtype " << static_cast<int>(dtype);
  }
  return MPI_DATATYPE_NULL;
}

class MPITransport : public ir::collective::Transport {
 public:
  MPITransport() {
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    IR_CHECK(!finalized) << "MPI was finalized already (collective::Init after Shutdown cannot restart MPI)";
    if (!initialized) {
      int provided = 0;
      Check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
      owns_mpi_ = true;
      IR_CHECK(provided >= MPI_THREAD_FUNNELED) << "MPI provides thread level " << provided << ", FUNNELED needed";
    }
    Check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    // Errors come back as codes (and become exceptions) instead of ending the process.
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    Check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local_), "MPI_Comm_split_type");
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    MPI_Comm_rank(local_, &local_rank_);
    MPI_Comm_size(local_, &local_size_);
  }

  ~MPITransport() override {
    if (!usable_) return;  // A request is still in flight: finalizing could wait forever.
    MPI_Comm_free(&local_);
    MPI_Comm_free(&comm_);
    if (owns_mpi_) MPI_Finalize();
  }

  std::string name() const override { return IR_MPI_NAME; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }

  // Every rank must get the same bits, which MPI_Allreduce does not promise (its algorithm
  // may add in a different order on different ranks). A ring: each segment is summed along
  // the ring once, ending on one rank, then copied around, so its bits are the same everywhere.
  // Measured on a 10 MB float32 buffer, 2 ranks on one host: as fast as MPI_Allreduce (Open MPI
  // 1.4 ms vs 1.4 ms, MPICH 2.5 vs 2.5), faster than MPI_Reduce_scatter + MPI_Allgatherv (2.5,
  // 3.2 ms) and MPI_Reduce + MPI_Bcast (1.7, 11.4 ms).
  void AllreduceSum(void* data, int64_t count, DType dtype) override {
    if (size_ == 1) return;
    MPI_Datatype type = MPIType(dtype);
    int element = 0;
    MPI_Type_size(type, &element);
    char* bytes = static_cast<char*>(data);
    for (int64_t done = 0; done < count;) {
      int64_t n = std::min(count - done, kMaxCount);
      RingAllreduce(bytes + done * element, static_cast<int>(n), type, dtype, element);
      done += n;
    }
  }

  void Allgatherv(const void* in, void* out, const std::vector<int64_t>& bytes_per_rank) override {
    IR_CHECK(static_cast<int>(bytes_per_rank.size()) == size_)
        << "allgather: sizes of " << bytes_per_rank.size() << " ranks in a group of " << size_;
    std::vector<int> counts(size_), displs(size_);
    int64_t offset = 0;
    for (int r = 0; r < size_; ++r) {
      IR_CHECK(bytes_per_rank[r] <= INT_MAX && offset <= INT_MAX)
          << "allgather: " << offset + bytes_per_rank[r] << " bytes is more than MPI's int counts allow";
      counts[r] = static_cast<int>(bytes_per_rank[r]);
      displs[r] = static_cast<int>(offset);
      offset += bytes_per_rank[r];
    }
    Check(MPI_Allgatherv(in, counts[rank_], MPI_BYTE, out, counts.data(), displs.data(), MPI_BYTE, comm_),
          "MPI_Allgatherv");
  }

  void Broadcast(void* data, int64_t bytes, int root) override {
    char* p = static_cast<char*>(data);
    for (int64_t done = 0; done < bytes;) {
      int n = static_cast<int>(std::min<int64_t>(bytes - done, INT_MAX));
      Check(MPI_Bcast(p + done, n, MPI_BYTE, root, comm_), "MPI_Bcast");
      done += n;
    }
  }

  bool AllgatherWithin(const void* in, int64_t bytes, void* out, double timeout_s) override {
    IR_CHECK(bytes <= INT_MAX) << "agreement record of " << bytes << " bytes";
    MPI_Request request;
    Check(
        MPI_Iallgather(in, static_cast<int>(bytes), MPI_BYTE, out, static_cast<int>(bytes), MPI_BYTE, comm_, &request),
        "MPI_Iallgather");
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    // Poll: sleep a little longer each time (up to 0.25 ms) so an idle wait costs no core.
    auto nap = std::chrono::microseconds(1);
    for (;;) {
      int done = 0;
      Check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (done) return true;
      if (std::chrono::steady_clock::now() >= deadline) {
        usable_ = false;  // The request cannot be withdrawn (MPI_Cancel does not apply to collectives).
        return false;
      }
      std::this_thread::sleep_for(nap);
      nap = std::min(nap * 2, std::chrono::microseconds(250));
    }
  }

  void Abort(int code) override { MPI_Abort(MPI_COMM_WORLD, code); }

 private:
  template <typename T>
  static void Add(void* into, const void* from, int count) {
    T* dst = static_cast<T*>(into);
    const T* src = static_cast<const T*>(from);
    for (int i = 0; i < count; ++i) dst[i] += src[i];
  }

  static void Add(void* into, const void* from, int count, DType dtype) {
    switch (dtype) {
      case DType::kFloat32:
        return Add<float>(into, from, count);
      case DType::kFloat64:
        return Add<double>(into, from, count);
      case DType::kInt32:
        return Add<int32_t>(into, from, count);
      default:
        return Add<int64_t>(into, from, count);
    }
  }

  // Segment r of `count` elements: [offset[r], offset[r] + counts[r]).
  void RingAllreduce(char* data, int count, MPI_Datatype type, DType dtype, int element) {
    std::vector<int> counts(size_), offsets(size_);
    for (int r = 0, offset = 0; r < size_; ++r) {
      counts[r] = count / size_ + (r < count % size_ ? 1 : 0);
      offsets[r] = offset;
      offset += counts[r];
    }
    auto at = [&](int segment) { return data + static_cast<int64_t>(offsets[segment]) * element; };
    scratch_.resize(static_cast<size_t>(counts[0]) * element);
    int right = (rank_ + 1) % size_, left = (rank_ + size_ - 1) % size_;
    // Reduce-scatter: after step s this rank's segment (rank - s - 1) holds s + 2 ranks' sum;
    // after size - 1 steps segment (rank + 1) is complete here and nowhere else.
    for (int step = 0; step < size_ - 1; ++step) {
      int send = (rank_ - step + size_) % size_, recv = (rank_ - step - 1 + 2 * size_) % size_;
      Check(MPI_Sendrecv(at(send), counts[send], type, right, 0, scratch_.data(), counts[recv], type, left, 0, comm_,
                         MPI_STATUS_IGNORE),
            "MPI_Sendrecv");
      Add(at(recv), scratch_.data(), counts[recv], dtype);
    }
    // Allgather: the complete segments travel around the ring, copied, never added to again.
    for (int step = 0; step < size_ - 1; ++step) {
      int send = (rank_ + 1 - step + size_) % size_, recv = (rank_ - step + size_) % size_;
      Check(MPI_Sendrecv(at(send), counts[send], type, right, 1, at(recv), counts[recv], type, left, 1, comm_,
                         MPI_STATUS_IGNORE),
            "MPI_Sendrecv");
    }
  }

  std::vector<char> scratch_;
  MPI_Comm comm_ = MPI_COMM_NULL, local_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  bool owns_mpi_ = false, usable_ = true;
};

}  // namespace

extern "C" __attribute__((visibility("default"))) ir::collective::Transport* IRCreateTransport(char* error,
                                                                                               size_t error_size) {
  try {
    return new MPITransport();
  } catch (const std::exception& e) {
    if (error != nullptr && error_size > 0) std::snprintf(error, error_size, "%s", e.what());
    return nullptr;
  }
}
