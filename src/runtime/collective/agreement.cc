#include "runtime/collective/agreement.h"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace ir {
namespace collective {
namespace detail {

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kAllreduce:
      return "allreduce";
    case Kind::kAllgather:
      return "allgather";
    case Kind::kBroadcast:
      return "broadcast";
  }
  return "unknown collective";
}

std::string CollectiveInfo::Names() const {
  std::ostringstream os;
  os << KindName(kind) << " of [";
  for (size_t i = 0; i < tensors.size(); ++i) os << (i ? ", " : "") << tensors[i].name;
  os << "]";
  return os.str();
}

std::string CollectiveInfo::Details() const {
  std::ostringstream os;
  os << KindName(kind);
  if (kind == Kind::kBroadcast) os << " (root " << root << ")";
  os << " of [";
  for (size_t i = 0; i < tensors.size(); ++i) {
    os << (i ? ", " : "") << tensors[i].name << " " << DTypeName(tensors[i].dtype) << tensors[i].shape;
    if (kind == Kind::kAllreduce) os << (tensors[i].op == ReduceOp::kAverage ? " average" : " sum");
  }
  os << "]";
  return os.str();
}

namespace {
// FNV-1a over raw bytes; the same on every rank of one build (all ranks run one program).
void HashBytes(uint64_t* hash, const void* data, size_t bytes) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) {
    *hash ^= p[i];
    *hash *= 1099511628211ull;
  }
}

void HashInt(uint64_t* hash, int64_t value) { HashBytes(hash, &value, sizeof(value)); }

void CopyTruncated(const std::string& text, char* out, size_t size) {
  std::string shown = text;
  if (shown.size() >= size) shown = shown.substr(0, size - 4) + "...";
  std::memcpy(out, shown.c_str(), shown.size() + 1);
}
}  // namespace

uint64_t CollectiveInfo::Hash() const {
  uint64_t hash = 14695981039346656037ull;
  HashInt(&hash, static_cast<int64_t>(kind));
  HashInt(&hash, kind == Kind::kBroadcast ? root : 0);
  HashInt(&hash, static_cast<int64_t>(tensors.size()));
  for (const TensorInfo& tensor : tensors) {
    HashInt(&hash, static_cast<int64_t>(tensor.name.size()));
    HashBytes(&hash, tensor.name.data(), tensor.name.size());
    HashInt(&hash, static_cast<int64_t>(tensor.dtype));
    HashInt(&hash, kind == Kind::kAllreduce ? static_cast<int64_t>(tensor.op) : 0);
    HashInt(&hash, tensor.shape.ndim());
    size_t first = kind == Kind::kAllgather ? 1 : 0;
    for (size_t d = first; d < tensor.shape.dims().size(); ++d) HashInt(&hash, tensor.shape[d]);
  }
  return hash;
}

AgreementRecord MakeRecord(int64_t sequence, const CollectiveInfo& info) {
  AgreementRecord record;
  record.sequence = sequence;
  record.kind = static_cast<int32_t>(info.kind);
  record.hash = info.Hash();
  CopyTruncated(info.Names(), record.names, sizeof(record.names));
  CopyTruncated(info.Details(), record.details, sizeof(record.details));
  return record;
}

std::string CheckAgreement(const std::vector<AgreementRecord>& records) {
  bool agree = std::all_of(records.begin(), records.end(), [&](const AgreementRecord& r) {
    return r.hash == records[0].hash && r.sequence == records[0].sequence;
  });
  if (agree) return "";
  // Names suffice when they differ; when they agree, the difference is in dtypes, shapes, op or root.
  bool names_differ = std::any_of(records.begin(), records.end(), [&](const AgreementRecord& r) {
    return std::strncmp(r.names, records[0].names, sizeof(r.names)) != 0;
  });
  std::ostringstream os;
  os << "collective #" << records[0].sequence << " differs across ranks: ";
  for (size_t rank = 0; rank < records.size(); ++rank) {
    const AgreementRecord& r = records[rank];
    os << (rank ? "; " : "") << "rank " << rank << " submitted ";
    if (r.sequence != records[0].sequence) os << "(as its collective #" << r.sequence << ") ";
    os << (names_differ ? r.names : r.details);
  }
  return os.str();
}

}  // namespace detail
}  // namespace collective
}  // namespace ir
