/*!
 * \file convert_einsum.cc
 * \brief Einsum with one or two operands as transposes, reshapes, sums and one batched matmul:
 * the equations models use (EinsumDense "abc,cd->abd", attention "bqhd,bkhd->bhqk", "ij->ji",
 * ellipses). Labels repeated within one operand (diagonals) are not supported.
 */
#include <algorithm>

#include "converter.h"

namespace ir {
namespace tf {
namespace {

using Outputs = std::vector<NodeEntry>;
using Labels = std::string;

/*! \brief An operand as labels (one char per axis, ellipsis axes as '0' + k from the right) and its dims. */
struct Operand {
  NodeEntry value;
  Labels labels;
  std::vector<int64_t> dims;  // -1 unknown

  int64_t Dim(char label) const { return dims[labels.find(label)]; }
};

/*! \brief `term` with "..." expanded for an operand of `rank` axes. */
Labels ExpandEllipsis(const std::string& term, int64_t rank, const std::string& what) {
  size_t dots = term.find("...");
  if (dots == std::string::npos) {
    IR_CHECK(static_cast<int64_t>(term.size()) == rank)
        << what << " '" << term << "' has " << term.size() << " labels but the operand has rank " << rank;
    return term;
  }
  Labels rest = term.substr(0, dots) + term.substr(dots + 3);
  int64_t n = rank - static_cast<int64_t>(rest.size());
  IR_CHECK(n >= 0) << what << " '" << term << "' has more labels than the operand's rank " << rank;
  Labels ellipsis;
  for (int64_t k = n - 1; k >= 0; --k) ellipsis += static_cast<char>('0' + k);
  return term.substr(0, dots) + ellipsis + term.substr(dots + 3);
}

/*! \brief Positions of `to`'s labels in `from`: the transpose taking `from` to `to`. */
std::vector<int64_t> Permutation(const Labels& from, const Labels& to) {
  std::vector<int64_t> perm;
  for (char c : to) {
    IR_CHECK(from.find(c) != std::string::npos) << "einsum output label '" << c << "' is in no operand";
    perm.push_back(static_cast<int64_t>(from.find(c)));
  }
  return perm;
}

/*! \brief The product of the dims of `labels` in `op`, -1 when one is unknown. */
int64_t Product(const Operand& op, const Labels& labels) {
  int64_t p = 1;
  for (char c : labels) {
    int64_t d = op.Dim(c);
    if (d < 0) return -1;
    p *= d;
  }
  return p;
}

class EinsumBuilder {
 public:
  explicit EinsumBuilder(ImportContext& ctx) : ctx_(ctx) {}

  /*! \brief `op` transposed so its labels read `to`. */
  Operand Transpose(const Operand& op, const Labels& to) {
    if (op.labels == to) return op;
    std::vector<int64_t> perm = Permutation(op.labels, to);
    Operand out{ctx_.Op("transpose", {op.value}, {{"axes", IntsAttr(perm)}}, "transpose"), to, {}};
    for (int64_t p : perm) out.dims.push_back(op.dims[static_cast<size_t>(p)]);
    return out;
  }
  /*! \brief `op` summed over the labels it has that `keep` lacks. */
  Operand SumOut(const Operand& op, const Labels& keep) {
    std::vector<int64_t> axes;
    Operand out{op.value, "", {}};
    for (size_t i = 0; i < op.labels.size(); ++i) {
      if (keep.find(op.labels[i]) == std::string::npos) {
        axes.push_back(static_cast<int64_t>(i));
      } else {
        out.labels += op.labels[i];
        out.dims.push_back(op.dims[i]);
      }
    }
    if (axes.empty()) return op;
    out.value = ctx_.Op("sum", {op.value}, {{"axis", IntsAttr(axes)}, {"keepdims", "false"}}, "sum");
    return out;
  }
  NodeEntry Reshape(const NodeEntry& x, const std::vector<int64_t>& shape) {
    IR_CHECK(std::count(shape.begin(), shape.end(), -1) <= 1)
        << "einsum needs all but one of the grouped dimensions known at import, got " << IntsAttr(shape);
    return ctx_.Op("reshape", {x}, {{"shape", IntsAttr(shape)}}, "reshape");
  }

 private:
  ImportContext& ctx_;
};

Outputs ConvertEinsum(ImportContext& ctx) {
  std::string equation = ctx.Str("equation");
  equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
  size_t arrow = equation.find("->");
  IR_CHECK(arrow != std::string::npos) << "einsum equation '" << equation << "' has no '->' output";
  std::string lhs = equation.substr(0, arrow), out_term = equation.substr(arrow + 2);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  IR_CHECK(terms.size() == ctx.num_inputs() && (terms.size() == 1 || terms.size() == 2))
      << "einsum equation '" << equation << "' has " << terms.size() << " operand(s) for " << ctx.num_inputs()
      << " input(s); 1 or 2 are supported";
  std::vector<Operand> ops;
  int64_t ellipsis_rank = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    Shape s = ctx.InputShape(i);
    IR_CHECK(s.rank_known()) << "einsum operand " << i << " needs a known rank";
    Operand op{ctx.input(i), ExpandEllipsis(terms[i], s.ndim(), "operand"), {}};
    for (int d = 0; d < s.ndim(); ++d) op.dims.push_back(s[d]);
    for (size_t a = 0; a < op.labels.size(); ++a) {
      IR_CHECK(op.labels.find(op.labels[a], a + 1) == std::string::npos)
          << "einsum label '" << op.labels[a] << "' repeated within operand " << i << " (a diagonal) is not supported";
    }
    int64_t n = static_cast<int64_t>(op.labels.size() + 3) - static_cast<int64_t>(terms[i].size());
    if (terms[i].find("...") != std::string::npos) ellipsis_rank = std::max(ellipsis_rank, n);
    ops.push_back(op);
  }
  Labels out = out_term.find("...") == std::string::npos
                   ? out_term
                   : ExpandEllipsis(out_term, static_cast<int64_t>(out_term.size()) - 3 + ellipsis_rank, "output");
  EinsumBuilder b(ctx);
  if (ops.size() == 1) {
    Operand summed = b.SumOut(ops[0], out);
    IR_CHECK(summed.labels.size() == out.size()) << "einsum output '" << out_term << "' names labels of no operand";
    return {ctx.Op("identity", {b.Transpose(summed, out).value})};
  }
  // Labels only one operand has and the output lacks are summed away first.
  Operand a = b.SumOut(ops[0], ops[1].labels + out), c = b.SumOut(ops[1], ops[0].labels + out);
  Labels batch, free_a, free_b, contracted;
  for (char l : a.labels) {
    bool in_b = c.labels.find(l) != std::string::npos, in_out = out.find(l) != std::string::npos;
    (in_b ? (in_out ? batch : contracted) : free_a) += l;
  }
  for (char l : c.labels) {
    if (a.labels.find(l) == std::string::npos) free_b += l;
  }
  for (char l : batch + contracted) {
    IR_CHECK(a.Dim(l) == c.Dim(l) || a.Dim(l) < 0 || c.Dim(l) < 0)
        << "einsum label '" << l << "' has size " << a.Dim(l) << " in operand 0 but " << c.Dim(l) << " in operand 1";
  }
  a = b.Transpose(a, batch + free_a + contracted);
  c = b.Transpose(c, batch + contracted + free_b);
  NodeEntry lhs_matrix = b.Reshape(a.value, {Product(a, batch), Product(a, free_a), Product(a, contracted)});
  NodeEntry rhs_matrix = b.Reshape(c.value, {Product(c, batch), Product(c, contracted), Product(c, free_b)});
  Operand product{ctx.Op("matmul", {lhs_matrix, rhs_matrix}, {}, "matmul"), batch + free_a + free_b, {}};
  for (char l : batch) product.dims.push_back(a.Dim(l) >= 0 ? a.Dim(l) : c.Dim(l));
  for (char l : free_a) product.dims.push_back(a.Dim(l));
  for (char l : free_b) product.dims.push_back(c.Dim(l));
  IR_CHECK(product.labels.size() == out.size()) << "einsum output '" << out_term << "' names labels of no operand";
  product.value = b.Reshape(product.value, product.dims);
  return {ctx.Op("identity", {b.Transpose(product, out).value})};
}

}  // namespace

IR_TF_CONVERTER({"Einsum"}, ConvertEinsum);

}  // namespace tf
}  // namespace ir
