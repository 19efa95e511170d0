/*!
 * \file cpu_isa.h
 * \brief The x86 vector instruction set libir's CPU code uses: the best the CPU runs, at most
 * what $IR_MAX_CPU_ISA allows (to run and test an AVX-512 machine as an AVX2 one).
 */
#ifndef IR_CPU_ISA_H_
#define IR_CPU_ISA_H_

namespace ir {

/*! \brief Instruction-set levels, lowest first: x86-64's baseline (SSE2), AVX2 with FMA, AVX-512 (F). */
enum class CpuIsa : int { kBaseline = 0, kAvx2 = 1, kAvx512 = 2 };

/*!
 * \brief The level the vectorized kernels (src/ops/simd.h), oneDNN and the runtime-compiled CPU
 * kernels use: the CPU's best, lowered by IR_MAX_CPU_ISA=avx512|avx2|baseline when it is set
 * (decided once, at the first call; a value that is none of these is ignored with one warning
 * on stderr). On other CPUs it is kBaseline. (A clang build compiles the kernels of simd.h for
 * the baseline only, whatever the level.)
 */
CpuIsa MaxCpuIsa();

/*! \brief "avx512", "avx2" or "baseline". */
const char* CpuIsaName(CpuIsa isa);

}  // namespace ir

#endif  // IR_CPU_ISA_H_
