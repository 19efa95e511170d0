/*!
 * \file collective.h
 * \brief Collectives across processes (data-parallel training): the process group, the
 * engine that runs allreduce / allgather / broadcast on its own thread, and the transport
 * (MPI: Open MPI or MPICH, loaded as a plugin; or "local", one process) it runs them over.
 *
 * Ops (src/ops/collective.cc) submit tensors by name; the engine's thread runs each
 * collective once every member of its bucket was submitted, after checking that every rank
 * submitted the same collective (names, dtypes, sizes) in the same order. A rank that
 * submits something else is reported on every rank that sees it, naming the tensors on
 * each side; a collective not every rank joins fails after `timeout_s`, naming the tensors
 * this rank has pending, instead of hanging.
 *
 * The functions below are core's: they call the Engine that src/runtime/collective registers
 * at static initialization (an EngineInterface), so ops, the executor and the C API never call that layer.
 */
#ifndef IR_COLLECTIVE_H_
#define IR_COLLECTIVE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/base.h"
#include "ir/ndarray.h"

namespace ir {
namespace collective {

/*! \brief How allreduce combines: the sum, or the sum divided by the group's size. */
enum class ReduceOp : int { kSum = 0, kAverage = 1 };

/*!
 * \brief A process group's blocking collectives on host memory. Only the engine's thread
 * calls them (MPI_THREAD_FUNNELED is enough), in the same order on every rank.
 */
class Transport {
 public:
  virtual ~Transport() = default;
  /*! \brief "openmpi", "mpich" or "local". */
  virtual std::string name() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /*! \brief Rank and size among the processes on this host. */
  virtual int local_rank() const = 0;
  virtual int local_size() const = 0;
  /*! \brief In-place elementwise sum of `count` elements over every rank; every rank gets the same bits. */
  virtual void AllreduceSum(void* data, int64_t count, DType dtype) = 0;
  /*! \brief Rank r's `bytes_per_rank[r]` bytes, concatenated in rank order into `out`. */
  virtual void Allgatherv(const void* in, void* out, const std::vector<int64_t>& bytes_per_rank) = 0;
  /*! \brief Root's `bytes` bytes into every rank's `data`. */
  virtual void Broadcast(void* data, int64_t bytes, int root) = 0;
  /*!
   * \brief Allgather of `bytes` from every rank into `out` (size() * bytes), started
   * nonblocking and given up after `timeout_s`: false when not every rank joined by then.
   * After a false return the group is unusable (the request cannot be withdrawn).
   */
  virtual bool AllgatherWithin(const void* in, int64_t bytes, void* out, double timeout_s) = 0;
  /*! \brief Ends every process of the group (MPI_Abort), after an error that leaves it unusable. */
  virtual void Abort(int code) = 0;
};

/*! \brief How Init starts the group. */
struct InitOptions {
  /*!
   * \brief "" (from the environment: IR_COLLECTIVE_TRANSPORT, else the launcher's variables:
   * Open MPI's OMPI_COMM_WORLD_SIZE, MPICH Hydra's PMI_SIZE; else "local"), "openmpi",
   * "mpich", "mpi" (whichever the launcher is) or "local".
   */
  std::string transport;
  /*! \brief Seconds a collective may wait for the other ranks; <= 0: IR_COLLECTIVE_TIMEOUT, else 60. */
  double timeout_s = 0;
  /*! \brief Chrome-trace JSON the engine and executor write their events to; "": IR_TIMELINE, else none. */
  std::string timeline;
};

/*!
 * \brief Starts the process group and the engine's thread; a second call is a no-op. MPI
 * transports are plugins (libir_mpi_openmpi.so, libir_mpi_mpich.so) loaded from the
 * directory libir itself was loaded from, never from a search path.
 */
void Init(const InitOptions& options = {});
/*! \brief Whether Init has run (and Shutdown has not). */
bool IsInitialized();
/*! \brief Waits for what was submitted, stops the thread and finalizes the transport. */
void Shutdown();
/*! \brief The group; Init must have run (else a clear error). */
int Rank();
int Size();
int LocalRank();
int LocalSize();
std::string TransportName();

/*! \brief One member of an allreduce bucket. */
struct AllreduceRequest {
  /*! \brief The bucket's key, the same on every rank (its members' names joined, for one). */
  std::string bucket;
  /*! \brief How many members the bucket has, and this one's index (0 .. num_members - 1). */
  int num_members = 1;
  int index = 0;
  /*! \brief The tensor's name, the same on every rank; errors name it. */
  std::string name;
  ReduceOp op = ReduceOp::kSum;
  /*! \brief The member's value (copied at submission; any device: it is copied to the host). */
  NDArray value;
};

/*!
 * \brief Submits one member; returns a ticket for WaitAllreduce. The bucket runs on the
 * engine's thread once all its members are in (packed into one buffer: tensor fusion).
 */
int64_t SubmitAllreduce(const AllreduceRequest& request);
/*!
 * \brief Blocks until the ticket's bucket is reduced and copies this member's result into
 * `out` (its shape and dtype). Throws when the bucket failed or stayed incomplete past the
 * timeout, naming the pending tensors.
 */
void WaitAllreduce(int64_t ticket, NDArray* out);

/*! \brief Synchronous collectives, run by the engine's thread in order with the buckets. */
NDArray Allreduce(const std::string& name, const NDArray& value, ReduceOp op);
/*! \brief Every rank's `value` concatenated along axis 0 in rank order (first dims may differ). */
NDArray Allgather(const std::string& name, const NDArray& value);
/*! \brief Root's `value` on every rank (shapes and dtypes must agree). */
NDArray Broadcast(const std::string& name, const NDArray& value, int root);

/*! \brief What the engine did since Init (or ResetStats), for tests and benchmarks. */
struct EngineStats {
  /*! \brief Collectives run (a bucket counts once), and tensors and bytes they carried. */
  int64_t collectives = 0;
  int64_t tensors = 0;
  int64_t bytes = 0;
  /*! \brief Milliseconds the engine's thread spent in the transport's data collectives. */
  double transport_ms = 0;
};
EngineStats Stats();
void ResetStats();

/*!
 * \brief Records a span [begin_us, end_us] (Microseconds() clock) on the timeline when one is
 * open (thread-safe, a no-op otherwise): the executor's nodes, the engine's phases.
 */
void TimelineRecord(const std::string& name, const std::string& category, double begin_us, double end_us);
/*! \brief Whether a timeline is being written. */
bool TimelineEnabled();
/*! \brief The timeline's clock: microseconds since the process started the engine. */
double Microseconds();

/*!
 * \brief What runs the functions above, one method each: the engine registers itself once, at
 * static initialization. While none is, they throw, except that IsInitialized and
 * TimelineEnabled are false and TimelineRecord does nothing.
 */
class EngineInterface {
 public:
  virtual ~EngineInterface() = default;
  virtual void Init(const InitOptions& options) = 0;
  virtual bool IsInitialized() = 0;
  virtual void Shutdown() = 0;
  virtual int Rank() = 0;
  virtual int Size() = 0;
  virtual int LocalRank() = 0;
  virtual int LocalSize() = 0;
  virtual std::string TransportName() = 0;
  virtual int64_t SubmitAllreduce(const AllreduceRequest& request) = 0;
  virtual void WaitAllreduce(int64_t ticket, NDArray* out) = 0;
  virtual NDArray Allreduce(const std::string& name, const NDArray& value, ReduceOp op) = 0;
  virtual NDArray Allgather(const std::string& name, const NDArray& value) = 0;
  virtual NDArray Broadcast(const std::string& name, const NDArray& value, int root) = 0;
  virtual EngineStats Stats() = 0;
  virtual void ResetStats() = 0;
  virtual void TimelineRecord(const std::string& name, const std::string& category, double begin_us, double end_us) = 0;
  virtual bool TimelineEnabled() = 0;
  virtual double Microseconds() = 0;
};
/*! \brief Makes `engine` (kept for the process) the one the functions call; a second one is an error. */
void RegisterEngine(EngineInterface* engine);

}  // namespace collective
}  // namespace ir

/*!
 * \brief What a transport plugin (libir_mpi_<impl>.so) exports: a new transport, started
 * (MPI_Init_thread), or NULL with a message in `error` (NUL-terminated, at most error_size bytes).
 */
extern "C" typedef ir::collective::Transport* (*IRCreateTransportFn)(char* error, size_t error_size);
#define IR_CREATE_TRANSPORT_SYMBOL "IRCreateTransport"

#endif  // IR_COLLECTIVE_H_
