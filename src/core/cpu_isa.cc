/*!
 * \file cpu_isa.cc
 * \brief The CPU's vector instruction set, capped by IR_MAX_CPU_ISA.
 */
#include "ir/cpu_isa.h"

#include <strings.h>

#include <cstdio>
#include <cstdlib>
#include <initializer_list>

namespace ir {
namespace {

/*! \brief What the CPU runs, by the checks GCC's function multi-versioning makes (clang has them too). */
CpuIsa Detected() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return CpuIsa::kAvx512;
  // The AVX2 copies (src/ops/simd.h) are compiled with FMA.
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return CpuIsa::kAvx2;
#endif
  return CpuIsa::kBaseline;
}

CpuIsa Capped() {
  CpuIsa isa = Detected();
  const char* value = std::getenv("IR_MAX_CPU_ISA");
  if (value == nullptr || *value == '\0') return isa;
  for (CpuIsa cap : {CpuIsa::kBaseline, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    if (strcasecmp(value, CpuIsaName(cap)) == 0) return cap < isa ? cap : isa;
  }
  // Kernels may first ask inside an OpenMP region, where an exception cannot be thrown.
  std::fprintf(stderr, "ir: IR_MAX_CPU_ISA='%s' is not avx512, avx2 or baseline: ignored (using %s)\n", value,
               CpuIsaName(isa));
  return isa;
}

}  // namespace

CpuIsa MaxCpuIsa() {
  static const CpuIsa isa = Capped();
  return isa;
}

const char* CpuIsaName(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx512:
      return "avx512";
    case CpuIsa::kAvx2:
      return "avx2";
    default:
      return "baseline";
  }
}

}  // namespace ir
