/*!
 * \file guard_models.cc
 * \brief The verifier's guard table (see guard_models.h). A guard added to the library must
 * be added here too, or every rule naming it fails verification with "unknown guard".
 */
#include "guard_models.h"

#include <string>

namespace ir {
namespace rules_verify {
namespace {

const SymTensor& ValueOf(const Instance& inst, const std::string& name) {
  auto it = inst.values.find(name);
  IR_CHECK(it != inst.values.end()) << "guard argument " << name << " is not a variable of the rule";
  return it->second;
}

/*! \brief x is a float element that is neither NaN nor infinite (always, over the reals). */
z3::expr FiniteElement(SmtModel* m, const z3::expr& x) { return x.is_fpa() ? Finite(x) : m->ctx().bool_val(true); }

/*! \brief A value guard holding when `pred` holds of every element of its first argument. */
FAssume EveryElement(std::function<z3::expr(SmtModel*, const z3::expr&, DType)> pred) {
  return [pred](SmtModel* m, const Instance& inst, const std::vector<std::string>& args) {
    const SymTensor& t = ValueOf(inst, args.at(0));
    z3::expr all = m->ctx().bool_val(true);
    for (const z3::expr& x : t.elems) all = all && pred(m, x, t.dtype);
    return all;
  };
}

/*! \brief x as a real number (IEEE: its exact value; NaN and Inf are excluded separately). */
z3::expr AsReal(SmtModel* m, const z3::expr& x) {
  return x.is_fpa() ? z3::expr(m->ctx(), Z3_mk_fpa_to_real(m->ctx(), x)) : x;
}

/*! \brief The axis a guard names: a `?a` variable's test value or a literal. */
int AxisArg(const Instance& inst, const std::string& arg, int ndim) {
  std::string text = arg;
  if (!arg.empty() && arg[0] == '?') {
    auto it = inst.attrs.find(arg);
    text = it == inst.attrs.end() ? "-1" : it->second;
  }
  int axis = std::stoi(text);
  return axis < 0 ? axis + ndim : axis;
}

/*!
 * \brief rows_sum_to_one(y, ?a): each row of y along axis ?a sums to exactly 1 (over the reals,
 * exactly, every element finite); one_hot_rows(y, ?a) also makes each element 0 or 1.
 */
FAssume RowsSumToOne(bool one_hot) {
  return [one_hot](SmtModel* m, const Instance& inst, const std::vector<std::string>& args) {
    const SymTensor& y = ValueOf(inst, args.at(0));
    int axis = AxisArg(inst, args.size() > 1 ? args[1] : "-1", y.shape.ndim());
    int64_t extent = y.shape[axis], inner = 1;
    for (int d = axis + 1; d < y.shape.ndim(); ++d) inner *= y.shape[d];
    z3::expr all = m->ctx().bool_val(true);
    for (int64_t e = 0; e < y.shape.Size(); ++e) {
      const z3::expr& x = y.elems[e];
      all = all && FiniteElement(m, x);
      if (one_hot) all = all && (x == m->Constant(0, y.dtype) || x == m->Constant(1, y.dtype));
      if ((e / inner) % extent != 0) continue;  // not the first element of its row
      z3::expr total = m->ctx().real_val(0);
      for (int64_t j = 0; j < extent; ++j) total = total + AsReal(m, y.elems[e + j * inner]);
      all = all && total == 1;
    }
    return all;
  };
}

const std::map<std::string, GuardModel>& Table() {
  auto zero = [](SmtModel* m, DType dt) { return m->Constant(0, dt); };
  static const std::map<std::string, GuardModel> table = {
      // Value guards: assumptions on every element. positive, nonnegative and nonzero are facts
      // over the reals (rewrite_value_guards.cc): over IEEE a positive value may still be NaN, +0
      // (exp underflows) or -0 (sqrt(-0)), so there they say only that x is not below 0.
      {"positive", {EveryElement([zero](SmtModel* m, const z3::expr& x, DType dt) {
         return x.is_fpa() ? !(x < zero(m, dt)) : x > zero(m, dt);
       })}},
      {"nonnegative", {EveryElement([zero](SmtModel* m, const z3::expr& x, DType dt) {
         return x.is_fpa() ? !(x < zero(m, dt)) : x >= zero(m, dt);
       })}},
      {"nonzero", {EveryElement([](SmtModel* m, const z3::expr& x, DType dt) {
         return x.is_fpa() ? m->ctx().bool_val(true) : !m->Compare("==", x, m->Constant(0, dt), dt);
       })}},
      {"finite", {EveryElement([](SmtModel* m, const z3::expr& x, DType) { return FiniteElement(m, x); })}},
      {"not_nan", {EveryElement([](SmtModel* m, const z3::expr& x, DType dt) { return m->Compare("==", x, x, dt); })}},
      {"rows_sum_to_one", {RowsSumToOne(false)}},
      {"one_hot_rows", {RowsSumToOne(true)}},
      // Instance guards: shapes, dtypes and attributes, decided by the registered guard
      // (src/passes/rewrite_guards.cc) on the test instance.
      {"all_ones", {}},
      {"attr_is", {}},
      {"bias_for", {}},
      {"dtype_is", {}},
      {"has_rank", {}},
      {"identity_perm", {}},
      {"is_int", {}},
      {"known_rank", {}},
      {"known_shape", {}},
      {"larger", {}},
      {"last_axis", {}},
      {"matmul_cols", {}},
      {"no_copy_dims", {}},
      {"no_ordering", {}},
      {"one_hot_depth", {}},
      {"pow2", {}},
      {"reduces_all", {}},
      {"result_like", {}},
      {"same_axis", {}},
      {"same_shape", {}},
      {"swaps_last_two", {}},
  };
  return table;
}

}  // namespace

const GuardModel* FindGuardModel(const std::string& name) {
  auto it = Table().find(name);
  return it == Table().end() ? nullptr : &it->second;
}

}  // namespace rules_verify
}  // namespace ir
