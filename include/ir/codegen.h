/*!
 * \file codegen.h
 * \brief Generated kernels: their description (Kernel), and the per-target registries of
 * printers (Kernel -> source text) and compilers (source -> launchable module).
 *
 * CodeGen builds one Kernel per fused node from its members' FCodeGen expressions and prints
 * all kernels of a graph as one translation unit with the target's KernelPrinter. RTCGen
 * compiles that unit with the target's KernelCompiler through the KernelCache.
 * Passes reach backends only through these registries.
 */
#ifndef IR_CODEGEN_H_
#define IR_CODEGEN_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ir/ast.h"
#include "ir/ndarray.h"
#include "ir/op_kernel.h"

namespace ir {

/*! \brief A buffer argument of a kernel. */
struct KernelParam {
  std::string name;
  DType dtype = DType::kUnknown;
  bool is_output = false;
};

/*!
 * \brief One generated kernel.
 *
 * kMap: the iteration domain is `extents` (dimensions collapsed where every buffer is
 * contiguous or broadcast alike; loop variables "i0", "i1", ... of type int64). Every element
 * evaluates `lets` in order, then writes each store's value at the element's row-major
 * position in the store's buffer.
 *
 * kReduce: `extents` is {outer, reduce, inner}; loop variables "i0" (outer), "i1" (reduce),
 * "i2" (inner). For each (outer, inner) the kernel combines `reduce_value` over the reduce
 * axis with `reduce_kind` and writes the result (divided by the extent for "mean") at
 * outer * inner + i2 of buffer `reduce_output`. `stores` are written at the input-domain
 * position (prologue values needed outside the kernel).
 *
 * kRow: `extents` is {rows, cols}; loop variables "i0" (row) and "i1" (column). Each row runs
 * `stages` in order, then writes `row_stores` at position i0 (see RowStage).
 */
struct RowStage {
  /*! \brief Per-row scalars (name, value) computed before the stage's pass; they read i0 only. */
  std::vector<std::pair<std::string, ast::Expr>> row_lets;
  /*! \brief Per-element values of the pass, as Kernel::lets. */
  std::vector<std::pair<std::string, ast::Expr>> lets;
  /*!
   * \brief (let index, slot): lets computed by an earlier stage, which a printer with row
   * scratch may read back from scratch slot `slot` at column i1 instead of evaluating them.
   */
  std::vector<std::pair<size_t, int>> reloads;
  /*! \brief (slot, let name): values a printer with row scratch saves for later reloads. */
  std::vector<std::pair<int, std::string>> saves;
  /*! \brief (param index, value) pairs written at i0 * cols + i1. */
  std::vector<std::pair<int, ast::Expr>> stores;
  /*! \brief "" for a map pass; else "sum", "mean", "max", "min" or "prod" of reduce_value. */
  std::string reduce_kind;
  ast::Expr reduce_value;
  /*! \brief Name of the per-row scalar holding the finished reduction, visible to later stages. */
  std::string result;
};

struct Kernel {
  enum Kind { kMap, kReduce, kRow };
  Kind kind = kMap;
  /*! \brief Content-derived name ("fused_" + hash of the body), equal for equal kernels. */
  std::string name;
  /*! \brief Inputs first, then outputs, in the order the launcher passes arrays. */
  std::vector<KernelParam> params;
  std::vector<int64_t> extents;
  std::vector<std::pair<std::string, ast::Expr>> lets;
  /*! \brief (param index, value) pairs. */
  std::vector<std::pair<int, ast::Expr>> stores;
  /*! \brief "sum", "mean", "max", "min" or "prod" (kReduce only). */
  std::string reduce_kind;
  ast::Expr reduce_value;
  int reduce_output = -1;
  /*! \brief kRow: the passes over each row, the dtypes of the row scratch slots, and the
   * per-row outputs (param index, value) written at i0 after the last stage. */
  std::vector<RowStage> stages;
  std::vector<DType> scratch;
  std::vector<std::pair<int, ast::Expr>> row_stores;

  /*! \brief Number of elements the kernel iterates over. */
  int64_t NumIterations() const;
  /*! \brief Canonical text of the kernel (used for its name and for tests). */
  std::string Describe() const;
  /*! \brief Sets `name` from a hash of Describe() (without the name). */
  void AssignCanonicalName();
};

/*! \brief Prints kernels as one translation unit of a dialect (C, OpenCL C, CUDA C). */
class KernelPrinter {
 public:
  virtual ~KernelPrinter() = default;
  virtual std::string Print(const std::vector<Kernel>& kernels) const = 0;
  /*! \brief The printer registered for a target ("cpu", "opencl", "cuda"). Throws when none. */
  static const KernelPrinter& Get(const std::string& target);
  static void Register(const std::string& target, std::shared_ptr<KernelPrinter> printer);
};

/*! \brief A compiled translation unit from which kernels can be launched. */
class CompiledModule {
 public:
  virtual ~CompiledModule() = default;
  /*!
   * \brief Runs kernel `name` on `args` (the kernel's params in order: inputs then outputs),
   * all on the module's device.
   */
  virtual void Launch(const std::string& name, const std::vector<NDArray>& args, const OpContext& ctx) = 0;
  /*! \brief Runs one resolved kernel on args[0..n) (as Launch); valid while its module lives. */
  using Launcher = std::function<void(const NDArray* const* args, size_t n, const OpContext& ctx)>;
  /*!
   * \brief Kernel `name` resolved once, so a launch does no lookup by name. The default calls
   * Launch; a module may look the kernel up here and launch it directly.
   */
  virtual Launcher Resolve(const std::string& name) {
    return [this, name](const NDArray* const* args, size_t n, const OpContext& ctx) {
      std::vector<NDArray> list;
      for (size_t i = 0; i < n; ++i) list.push_back(*args[i]);
      Launch(name, list, ctx);
    };
  }
};

/*! \brief Turns source text into a CompiledModule for one target. */
class KernelCompiler {
 public:
  virtual ~KernelCompiler() = default;
  /*! \brief Compiler identity and flags: part of every cache key. */
  virtual std::string Id() const = 0;
  /*!
   * \brief Compiles `source` to a binary blob (a shared object, a program binary, PTX).
   * Throws ir::Error with the source and the compiler's log on failure.
   */
  virtual std::string Compile(const std::string& source) const = 0;
  /*! \brief Loads a blob produced by Compile (possibly by another process). Throws if invalid. */
  virtual std::shared_ptr<CompiledModule> Load(const std::string& blob) const = 0;
  /*! \brief The compiler registered for a target. Throws naming the target when none. */
  static const KernelCompiler& Get(const std::string& target);
  static void Register(const std::string& target, std::shared_ptr<KernelCompiler> compiler);
};

/*!
 * \brief What a target registers for passes to read (passes never branch on target names).
 * fmax: F_max when the graph does not set "fusion.fmax" (measured per target, docs/PERFORMANCE.md).
 */
struct TargetDefaults {
  int fmax = 8;
  /*! \brief Registers the defaults of a target kind ("cpu", "opencl", "cuda"). */
  static void Register(const std::string& target, TargetDefaults defaults);
  /*! \brief The defaults of the kind of `target` ("opencl:1" -> "opencl"); the struct's own when none. */
  static TargetDefaults Get(const std::string& target);
};

/*! \brief Counters of the kernel cache, for callers and tests. */
struct KernelCacheStats {
  int64_t compilations = 0;
  int64_t memory_hits = 0;
  int64_t disk_hits = 0;
  /*! \brief Disk entries found corrupt, truncated or for another key (and rebuilt). */
  int64_t corrupt_entries = 0;
  /*!
   * \brief Disk entries ignored as unsafe (and rebuilt): not a regular file (a symbolic link,
   * a FIFO), owned by another user, writable by group or others, or larger than 256 MiB.
   */
  int64_t refused_entries = 0;
};

/*!
 * \brief Compiled modules keyed by (target, compiler id, source), kept in memory and on disk
 * ($IR_KERNEL_CACHE_DIR, default $XDG_CACHE_HOME/ir-kernels or ~/.cache/ir-kernels;
 * IR_KERNEL_CACHE_DIR=off disables the disk). Disk entries are written to a fresh mode-0600
 * temporary file and renamed, and carry their whole key and a checksum, so a concurrent
 * process never reads a half-written entry and a corrupt or mismatched one is rebuilt.
 * Entries load machine code, so only a directory (created 0700) and entries owned by the
 * effective user and writable by nobody else are used; others are ignored with a warning.
 */
class KernelCache {
 public:
  static KernelCache& Global();
  /*! \brief The module for `source` on `target`, compiling only when no cache has it. */
  std::shared_ptr<CompiledModule> GetOrCompile(const std::string& target, const std::string& source);
  KernelCacheStats stats() const;
  /*! \brief Forgets the in-memory entries (the disk cache stays). */
  void ClearMemory();
  /*! \brief The disk directory in use ("" when disabled, or refused as unsafe). */
  std::string directory() const;

 private:
  mutable std::mutex mutex_;
  /*! \brief Hash of the key -> (whole key, module): equal hashes of different keys never mix. */
  std::map<std::string, std::pair<std::string, std::shared_ptr<CompiledModule>>> modules_;
  KernelCacheStats stats_;
};

/*! \brief The device kind of a target string: "opencl:1" -> "opencl". */
inline std::string TargetKind(const std::string& target) { return target.substr(0, target.find(':')); }

/*! \brief 64-bit FNV-1a hash, printed as 16 hex digits (stable across processes). */
std::string HashHex(const std::string& text);

namespace codegen {
/*!
 * \brief Runs the generated kernel of a node on `target` ("cpu", "opencl", ...): an elementwise
 * or reduction node, or a "_fused" map/reduce node (its whole group as one kernel); kernels are
 * compiled once per attributes, dtypes and shapes. False, running nothing, when there is none.
 */
bool RunGeneratedKernel(const std::string& target, const OpContext& ctx, const NodeAttrs& attrs,
                        const std::vector<NDArray>& inputs, const std::vector<NDArray>& outputs);
struct SingleOpKernel;
/*!
 * \brief The generated kernel RunGeneratedKernel would run for these inputs' dtypes and shapes
 * (compiled on first use), or null. It lives as long as the process: a caller that keeps the
 * pointer per input signature launches it later without the lookup by attributes.
 */
const SingleOpKernel* FindGeneratedKernel(const std::string& target, const NodeAttrs& attrs,
                                          const std::vector<NDArray>& inputs);
/*! \brief Launches a kernel FindGeneratedKernel gave on inputs of the signature it was found for. */
void LaunchGeneratedKernel(const SingleOpKernel& kernel, const OpContext& ctx, const std::vector<NDArray>& inputs,
                           const std::vector<NDArray>& outputs);
}  // namespace codegen

}  // namespace ir

#endif  // IR_CODEGEN_H_
