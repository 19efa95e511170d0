/*!
 * \file agreement.h
 * \brief What every rank says about the collective it is about to run: a fixed-size record
 * (sequence number, kind, a hash of names, dtypes, sizes, op and root, and a readable
 * description), gathered from every rank before the data moves, so that ranks that submitted
 * different collectives fail with a message naming each side instead of exchanging garbage.
 */
#ifndef IR_RUNTIME_COLLECTIVE_AGREEMENT_H_
#define IR_RUNTIME_COLLECTIVE_AGREEMENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ir/base.h"
#include "ir/collective.h"

namespace ir {
namespace collective {
namespace detail {

/*! \brief The three collectives; their values travel in the agreement record. */
enum class Kind : int32_t { kAllreduce = 0, kAllgather = 1, kBroadcast = 2 };
/*! \brief "allreduce", "allgather", "broadcast". */
const char* KindName(Kind kind);

/*! \brief One tensor of a collective as the agreement sees it. */
struct TensorInfo {
  std::string name;
  DType dtype = DType::kUnknown;
  Shape shape;
  /*! \brief An allreduce member's op (members of one bucket may differ). */
  ReduceOp op = ReduceOp::kSum;
};

/*! \brief What a collective is, on one rank: enough to tell whether every rank agrees. */
struct CollectiveInfo {
  Kind kind = Kind::kAllreduce;
  /*! \brief A broadcast's root rank. */
  int root = 0;
  std::vector<TensorInfo> tensors;
  /*! \brief "allreduce of [a, b]": the kind and the tensors' names. */
  std::string Names() const;
  /*! \brief Names() with each tensor's dtype and shape, its op (allreduce) or the root (broadcast). */
  std::string Details() const;
  /*!
   * \brief 64-bit FNV-1a hash of everything that must agree across ranks. An allgather's
   * first dimension is left out: it may differ from rank to rank.
   */
  uint64_t Hash() const;
};

/*! \brief The fixed-size record each rank contributes to the agreement allgather. */
struct AgreementRecord {
  int64_t sequence = 0;
  int32_t kind = 0;
  int32_t reserved = 0;
  uint64_t hash = 0;
  /*! \brief Truncated, NUL-terminated Names() and Details(). */
  char names[240] = {};
  char details[248] = {};
};
static_assert(sizeof(AgreementRecord) == 512, "the record's layout is the same on every rank");

/*! \brief The record of collective number `sequence` described by `info`. */
AgreementRecord MakeRecord(int64_t sequence, const CollectiveInfo& info);

/*!
 * \brief "" when every rank's record matches; otherwise the error: "collective #12 differs
 * across ranks: rank 0 submitted allreduce of [a, b]; rank 1 submitted allreduce of [c]"
 * (with dtypes and shapes when the names alone agree).
 */
std::string CheckAgreement(const std::vector<AgreementRecord>& records);

}  // namespace detail
}  // namespace collective
}  // namespace ir

#endif  // IR_RUNTIME_COLLECTIVE_AGREEMENT_H_
