/*!
 * \file cond_while_infer.cc
 * \brief cond and while_loop (cond_while.cc): their parameters, parsing, and shape / dtype
 * inference through their bodies (by running the InferShape / InferType passes on them).
 */
#include "ops/control_flow/cond_while_infer.h"

#include <cctype>
#include <string>
#include <vector>

#include "ir/pass.h"

namespace ir {
namespace op {

DMLC_REGISTER_PARAMETER(WhileParam);

const Subgraph& Body(const NodeAttrs& attrs, size_t k) { return *attrs.subgraphs.at(k); }

namespace {

/*! \brief Throws unless the node has `count` bodies. */
void CheckBodyCount(const NodeAttrs& attrs, size_t count, const char* what) {
  IR_CHECK(attrs.subgraphs.size() == count)
      << NodeDesc(attrs) << " needs " << count << " bodies (" << what << "), got " << attrs.subgraphs.size();
}

/*! \brief Throws unless body `k` takes `params` params and returns `outputs` values (-1: any). */
void CheckArity(const NodeAttrs& attrs, size_t k, const char* name, size_t params, int outputs) {
  const Subgraph& body = Body(attrs, k);
  IR_CHECK(body.params.size() == params) << NodeDesc(attrs) << ": body " << k << " (" << name << ") takes "
                                         << body.params.size() << " params, expected " << params;
  IR_CHECK(outputs < 0 || body.graph.outputs.size() == static_cast<size_t>(outputs))
      << NodeDesc(attrs) << ": body " << k << " (" << name << ") returns " << body.graph.outputs.size()
      << " values, expected " << outputs;
}

bool IsHiddenKey(const std::string& key) {
  return key.size() > 4 && key.compare(0, 2, "__") == 0 && key.compare(key.size() - 2, 2, "__") == 0;
}

}  // namespace

void ParseCond(NodeAttrs* attrs) {
  for (const auto& kv : attrs->dict) {
    IR_CHECK(IsHiddenKey(kv.first)) << NodeDesc(*attrs) << " takes no parameters, got '" << kv.first << "'";
  }
  CheckBodyCount(*attrs, 2, "then_branch, else_branch");
  const Subgraph& then_branch = Body(*attrs, 0);
  IR_CHECK(!then_branch.graph.outputs.empty()) << NodeDesc(*attrs) << ": the branches return no value";
  CheckArity(*attrs, 1, "else_branch", then_branch.params.size(), static_cast<int>(then_branch.graph.outputs.size()));
}

namespace {

/*! \brief Per loop variable, its declared shape invariant (empty when none are declared). */
std::vector<Shape> ShapeInvariants(const NodeAttrs& attrs) {
  const std::string& text = dmlc::get<WhileParam>(attrs.parsed).shape_invariants;
  std::vector<Shape> shapes;
  std::string body;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) body += c;
  }
  if (body.empty()) return shapes;
  IR_CHECK(body.size() >= 2 && body.front() == '[' && body.back() == ']')
      << NodeDesc(attrs) << ": shape_invariants must be a list of shapes like [[-1,2],[]], got '" << text << "'";
  size_t pos = 1;
  while (pos + 1 < body.size()) {
    size_t end = body[pos] == '[' ? body.find(']', pos) : body.find(',', pos);
    end = end == std::string::npos ? body.size() - 1 : (body[pos] == '[' ? end + 1 : end);
    shapes.push_back(Shape::Parse(body.substr(pos, end - pos)));
    pos = end + 1;
  }
  return shapes;
}

}  // namespace

/*!
 * \brief Parses a while_loop (bodies cond, body) or _while_loop_grad (bodies cond, body, gradient
 * and, when the gradient reads values the loop saves, the body returning them after its own).
 */
void ParseWhile(NodeAttrs* attrs) {
  ParamParser<WhileParam>(attrs);
  bool grad = attrs->op->name == "_while_loop_grad";
  if (!grad || attrs->subgraphs.size() != 4) {
    CheckBodyCount(*attrs, grad ? 3 : 2, grad ? "cond, body, body gradient[, saving body]" : "cond, body");
  }
  size_t n = Body(*attrs, 1).params.size();
  CheckArity(*attrs, 0, "cond", n, 1);
  CheckArity(*attrs, 1, "body", n, static_cast<int>(n));
  if (attrs->subgraphs.size() == 4) {
    CheckArity(*attrs, 3, "saving body", n, -1);
    IR_CHECK(Body(*attrs, 3).graph.outputs.size() > n)
        << NodeDesc(*attrs) << ": body 3 (saving body) saves no value after the " << n << " loop variables";
  }
  size_t saved = attrs->subgraphs.size() == 4 ? Body(*attrs, 3).graph.outputs.size() - n : 0;
  if (grad) CheckArity(*attrs, 2, "body gradient", 2 * n + saved, static_cast<int>(n));
  int limit = dmlc::get<WhileParam>(attrs->parsed).maximum_iterations;
  IR_CHECK(limit >= -1) << NodeDesc(*attrs) << ": maximum_iterations must be at least 0 (or -1: no bound), got "
                        << limit;
  size_t declared = ShapeInvariants(*attrs).size();
  IR_CHECK(declared == 0 || declared == n)
      << NodeDesc(*attrs) << ": shape_invariants lists " << declared << " shapes for " << n << " loop variables";
}

uint32_t NumParams(const NodeAttrs& attrs, size_t body) {
  return attrs.subgraphs.size() > body ? static_cast<uint32_t>(Body(attrs, body).params.size()) : 0;
}
uint32_t NumResults(const NodeAttrs& attrs, size_t body) {
  return attrs.subgraphs.size() > body ? static_cast<uint32_t>(Body(attrs, body).graph.outputs.size()) : 0;
}

// ---------------------------------------------------------------- inference through bodies

namespace {

/*! \brief Shapes or dtypes: what inference of a body gives for each. */
struct ShapeKind {
  using Value = Shape;
  static std::vector<Shape> Infer(const Subgraph& body, const std::vector<Shape>& args, const std::string& where) {
    return InferSubgraphShapes(body, args, where);
  }
};
struct TypeKind {
  using Value = DType;
  static std::vector<DType> Infer(const Subgraph& body, const std::vector<DType>& args, const std::string& where) {
    return InferSubgraphTypes(body, args, where);
  }
};

/*! \brief What inference finds for the outputs of body `k` given its params' values. */
template <typename Kind>
std::vector<typename Kind::Value> InferBody(const NodeAttrs& attrs, size_t k,
                                            const std::vector<typename Kind::Value>& args) {
  return Kind::Infer(Body(attrs, k), args, StrCat(NodeDesc(attrs), ": in body ", k));
}

/*! \brief The least specific shape both satisfy: dimensions that differ become unknown. */
Shape Join(const NodeAttrs& attrs, const std::string& what, const Shape& a, const Shape& b) {
  if (!a.rank_known() || !b.rank_known()) return Shape();
  IR_CHECK(a.ndim() == b.ndim()) << NodeDesc(attrs) << ": " << what << " has shape " << a << " and " << b
                                 << ": the ranks differ";
  Shape out = a;
  for (int d = 0; d < a.ndim(); ++d) {
    if (a[d] != b[d]) out[d] = kUnknownDim;
  }
  return out;
}

void CheckScalar(const NodeAttrs& attrs, const std::string& what, const Shape& shape) {
  IR_CHECK(!shape.is_known() || shape.Size() == 1)
      << NodeDesc(attrs) << ": " << what << " must be a scalar, got shape " << shape;
}

/*!
 * \brief The branches' output shapes on these argument shapes. A branch whose inference fails
 * (one that cannot run on them, as TF's untaken branch of a cond never does) is left out: it
 * fails the run only if it is taken (binding its body then raises, CondCompute names the
 * branch). Throws when both fail.
 */
std::vector<std::vector<Shape>> BranchShapes(const NodeAttrs& attrs, const std::vector<Shape>& args) {
  std::vector<std::vector<Shape>> branches;
  std::string first_error;
  for (size_t k = 0; k < 2; ++k) {
    try {
      branches.push_back(InferBody<ShapeKind>(attrs, k, args));
    } catch (const Error& err) {
      if (first_error.empty()) first_error = err.what();
    }
  }
  if (branches.empty()) throw Error(first_error);
  return branches;
}

}  // namespace

bool CondShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  CheckScalar(attrs, "the predicate (input 0)", (*in)[0]);
  std::vector<Shape> args(in->begin() + 1, in->end());
  std::vector<std::vector<Shape>> branches = BranchShapes(attrs, args);
  const std::vector<Shape>& first = branches.front();
  const std::vector<Shape>& last = branches.back();
  for (size_t j = 0; j < out->size(); ++j) {
    if (!first[j].rank_known() || !last[j].rank_known()) continue;
    AssignShape(attrs, StrCat("output ", j), &(*out)[j],
                Join(attrs, StrCat("output ", j, " of the two branches"), first[j], last[j]));
  }
  return AllKnown(*in, *out);
}

bool CondType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  std::vector<DType> args(in->begin() + 1, in->end());
  std::vector<DType> then_out = InferBody<TypeKind>(attrs, 0, args);
  std::vector<DType> else_out = InferBody<TypeKind>(attrs, 1, args);
  for (size_t j = 0; j < out->size(); ++j) {
    IR_CHECK(then_out[j] == DType::kUnknown || else_out[j] == DType::kUnknown || then_out[j] == else_out[j])
        << NodeDesc(attrs) << ": output " << j << " is " << DTypeName(then_out[j]) << " in then_branch but "
        << DTypeName(else_out[j]) << " in else_branch";
    DType t = then_out[j] != DType::kUnknown ? then_out[j] : else_out[j];
    if (t != DType::kUnknown) AssignType(attrs, StrCat("output ", j), &(*out)[j], t);
  }
  return AllKnown(*in, *out);
}

namespace {

/*!
 * \brief The loop variables' shapes across iterations: the declared invariants, else a fixed point
 * from the entering shapes where a dimension an iteration changes becomes unknown.
 */
std::vector<Shape> LoopShapes(const NodeAttrs& attrs, const std::vector<Shape>& entering) {
  std::vector<Shape> shapes = ShapeInvariants(attrs);
  if (!shapes.empty()) {
    for (size_t i = 0; i < shapes.size(); ++i) {
      Shape merged;
      IR_CHECK(Shape::Merge(entering[i], shapes[i], &merged))
          << NodeDesc(attrs) << ": loop variable " << i << " enters the loop with shape " << entering[i]
          << ", which does not satisfy its shape invariant " << shapes[i];
    }
    return shapes;
  }
  shapes = entering;
  for (bool changed = true; changed;) {  // dimensions only ever become unknown: this ends
    changed = false;
    std::vector<Shape> after = InferBody<ShapeKind>(attrs, 1, shapes);
    for (size_t i = 0; i < shapes.size(); ++i) {
      Shape merged;
      if (!after[i].rank_known() || Shape::Merge(shapes[i], after[i], &merged)) continue;
      Shape widened = Join(attrs, StrCat("loop variable ", i, " (entering, after an iteration)"), shapes[i], after[i]);
      changed = changed || widened != shapes[i];
      shapes[i] = widened;
    }
  }
  return shapes;
}

}  // namespace

bool WhileShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  size_t n = out->size();
  std::vector<Shape> entering(in->begin(), in->begin() + n);
  std::vector<Shape> shapes = LoopShapes(attrs, entering);
  CheckScalar(attrs, "the loop condition's result", InferBody<ShapeKind>(attrs, 0, shapes)[0]);
  for (size_t i = 0; i < n; ++i) {
    if (shapes[i].rank_known()) AssignShape(attrs, StrCat("output ", i), &(*out)[i], shapes[i]);
  }
  if (in->size() > n) {  // _while_loop_grad: the gradients entering are shaped like the outputs
    for (size_t i = 0; i < n; ++i) {
      if (shapes[i].rank_known()) AssignShape(attrs, StrCat("input ", n + i), &(*in)[n + i], shapes[i]);
    }
  }
  return AllKnown(*in, *out);
}

bool WhileType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  size_t n = out->size();
  std::vector<DType> types(in->begin(), in->begin() + n);
  std::vector<DType> after = InferBody<TypeKind>(attrs, 1, types);
  for (size_t i = 0; i < n; ++i) {
    IR_CHECK(types[i] == DType::kUnknown || after[i] == DType::kUnknown || types[i] == after[i])
        << NodeDesc(attrs) << ": loop variable " << i << " enters the loop as " << DTypeName(types[i])
        << " but the body returns " << DTypeName(after[i]);
    DType t = types[i] != DType::kUnknown ? types[i] : after[i];
    if (t == DType::kUnknown) continue;
    AssignType(attrs, StrCat("output ", i), &(*out)[i], t);
    if (in->size() > n) AssignType(attrs, StrCat("input ", n + i), &(*in)[n + i], t);
  }
  return AllKnown(*in, *out);
}

}  // namespace op
}  // namespace ir
