/*!
 * \file convert_functional.cc
 * \brief TF2 functional control flow: If/StatelessIf and Case/StatelessCase become `cond`,
 * While/StatelessWhile becomes `while_loop`, each body a library function imported by a nested
 * GraphImporter through the same converters (so bodies may hold If/While themselves).
 */
#include <algorithm>

#include "convert_functional.h"
#include "convert_tensor_list.h"
#include "converter.h"
#include "function_inline.h"
#include "graph_importer.h"
#include "ir/op.h"
#include "ir/pass.h"
#include "tf_types.h"

namespace ir {
namespace tf {
namespace {

using Outputs = std::vector<NodeEntry>;
using BodyPtr = std::shared_ptr<const Subgraph>;

constexpr size_t kMaxBodyDepth = 32;
constexpr size_t kMaxBodyNodes = size_t{1} << 18;
/*! \brief The op of the nodes standing for a body's arguments (never in a real graph). */
constexpr const char* kParamOp = "__param__";

/*! \brief What the caller passes a body: one (possibly partial) shape and dtype per argument. */
struct ArgSpec {
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
};

/*! \brief Marks a function as being imported for as long as it lives; refuses recursion and deep nesting. */
class BodyFrame {
 public:
  BodyFrame(FunctionScope* scope, const std::string& name) : scope_(scope) {
    std::vector<std::string>& stack = scope->stack;
    auto again = std::find(stack.begin(), stack.end(), name);
    if (again != stack.end()) {
      std::vector<std::string> cycle(again, stack.end());
      cycle.push_back(name);
      throw Error(StrCat("function '", name, "' calls itself through control-flow bodies (", Join(cycle, " -> "),
                         "): recursive functions are not supported"));
    }
    IR_CHECK(stack.size() < kMaxBodyDepth)
        << "control-flow bodies nest more than " << kMaxBodyDepth << " deep: " << Join(stack, " -> ") << " -> " << name;
    stack.push_back(name);
  }
  ~BodyFrame() { scope_->stack.pop_back(); }
  BodyFrame(const BodyFrame&) = delete;
  BodyFrame& operator=(const BodyFrame&) = delete;

 private:
  FunctionScope* scope_;
};

/*! \brief The shapes and dtypes of the node's data inputs from `first` on. */
ArgSpec ArgsOf(const ImportContext& ctx, size_t first) {
  ArgSpec args;
  for (size_t i = first; i < ctx.num_inputs(); ++i) {
    args.shapes.push_back(ctx.InputShape(i));
    args.dtypes.push_back(ctx.InputType(i));
  }
  return args;
}

std::map<std::string, std::string> ParamHints(const Shape& shape, DType dtype) {
  std::map<std::string, std::string> hints{{"__kind__", "placeholder"}};
  if (shape.rank_known()) hints["__shape__"] = shape.ToString();
  if (dtype != DType::kUnknown) hints["__dtype__"] = DTypeName(dtype);
  return hints;
}

std::string ParamName(const std::string& prefix, size_t i) { return StrCat(prefix, "/_arg/", i); }

/*!
 * \brief The nodes a body import starts from: one `__param__` per argument and a call of `fn`
 * on them named `prefix`, with the call inlined (body nodes `prefix/n`, results IdentityN `prefix`).
 */
std::vector<tfproto::NodeDef> BodyNodes(const FunctionScope& scope, const std::string& prefix,
                                        const tfproto::NameAttrList& fn, const ArgSpec& args) {
  std::vector<tfproto::NodeDef> nodes;
  tfproto::NodeDef call;
  call.set_name(prefix);
  call.set_op("PartitionedCall");
  *(*call.mutable_attr())["f"].mutable_func() = fn;
  for (size_t i = 0; i < args.shapes.size(); ++i) {
    tfproto::NodeDef param;
    param.set_name(ParamName(prefix, i));
    param.set_op(kParamOp);
    for (const auto& kv : ParamHints(args.shapes[i], args.dtypes[i]))
      (*param.mutable_attr())[kv.first].set_s(kv.second);
    call.add_input(param.name());
    nodes.push_back(std::move(param));
  }
  nodes.push_back(std::move(call));
  return InlineFunctions(nodes, scope.library);
}

/*! \brief The body's params: the variable nodes its `__param__`s became, fresh ones for unused arguments. */
std::vector<NodePtr> Params(const Graph& graph, const std::string& prefix, const ArgSpec& args) {
  std::map<std::string, NodePtr> variables;
  PostOrderDFSVisit(graph.outputs, [&](const NodePtr& node) {
    if (node->is_variable()) variables[node->attrs.name] = node;
  });
  std::vector<NodePtr> params;
  for (size_t i = 0; i < args.shapes.size(); ++i) {
    auto it = variables.find(ParamName(prefix, i));
    params.push_back(it != variables.end()
                         ? it->second
                         : Node::CreateVariable(ParamName(prefix, i), ParamHints(args.shapes[i], args.dtypes[i])));
  }
  return params;
}

/*! \brief A body may update session variables, but not its arguments (a resource passed in). */
void CheckNoArgumentWrites(const Subgraph& body, const std::string& what) {
  const IndexedGraph& idx = body.graph.indexed_graph();
  for (uint32_t nid : idx.mutable_input_nodes()) {
    auto param = std::find_if(body.params.begin(), body.params.end(),
                              [&](const NodePtr& p) { return p.get() == idx[nid].source; });
    IR_CHECK(param == body.params.end())
        << what << " updates its argument " << param - body.params.begin()
        << " (a resource variable passed in): updating variables passed into If/While/Case bodies is not supported";
  }
}

/*!
 * \brief Imports library function `fn` as a body of the node `ctx` converts (`role` names the
 * attribute it came from), with params shaped and typed as `args`.
 * \param num_results set to the function's number of results.
 */
BodyPtr ImportBody(ImportContext& ctx, const std::string& role, const tfproto::NameAttrList& fn, const ArgSpec& args,
                   size_t* num_results) {
  const std::shared_ptr<FunctionScope>& scope = ctx.spec().functions;
  IR_CHECK(scope != nullptr) << "no function library to take '" << role << "' from";
  IR_CHECK(!fn.name().empty()) << "attribute '" << role << "' names no function (empty name)";
  auto found = scope->functions.find(fn.name());
  IR_CHECK(found != scope->functions.end())
      << "attribute '" << role << "' names function '" << fn.name() << "', which the graph's library does not define";
  const tfproto::OpDef& sig = found->second->signature();
  std::string what = StrCat(role, " function '", fn.name(), "'");
  IR_CHECK(static_cast<size_t>(sig.input_arg_size()) == args.shapes.size())
      << what << " takes " << sig.input_arg_size() << " argument(s), but the node passes " << args.shapes.size();
  IR_CHECK(sig.output_arg_size() > 0) << what << " returns nothing";
  BodyFrame frame(scope.get(), fn.name());
  std::string prefix = StrCat(ctx.name(), "/", role);
  std::vector<tfproto::NodeDef> nodes = BodyNodes(*scope, prefix, fn, args);
  scope->nodes += nodes.size();
  IR_CHECK(scope->nodes <= kMaxBodyNodes)
      << "control-flow bodies have more than " << kMaxBodyNodes << " nodes in all (at " << what << ")";
  ImportSpec spec;
  spec.producer = ctx.producer();
  spec.max_const_bytes = ctx.max_const_bytes();
  spec.functions = scope;
  for (int j = 0; j < sig.output_arg_size(); ++j) spec.outputs.push_back(StrCat(prefix, ":", j));
  auto body = std::make_shared<Subgraph>();
  try {
    std::vector<std::string> names;
    body->graph = GraphImporter(std::move(nodes), spec).Import(&names);
  } catch (const Error& err) {
    throw Error(StrCat("in ", what, ": ", err.what()));
  }
  body->params = Params(body->graph, prefix, args);
  CheckNoArgumentWrites(*body, what);
  *num_results = static_cast<size_t>(sig.output_arg_size());
  return body;
}

const tfproto::NameAttrList& FunctionAttr(const ImportContext& ctx, const std::string& key) {
  const tfproto::AttrValue& value = ctx.Attr(key);
  IR_CHECK(value.value_case() == tfproto::AttrValue::kFunc) << "attribute '" << key << "' is not a function";
  return value.func();
}

/*! \brief Throws unless the type-list attribute `key`, when present, has `count` entries. */
void ExpectTypeList(const ImportContext& ctx, const std::string& key, size_t count) {
  if (!ctx.HasAttr(key)) return;
  const tfproto::AttrValue& value = ctx.Attr(key);
  IR_CHECK(value.value_case() == tfproto::AttrValue::kList) << "attribute '" << key << "' is not a list";
  IR_CHECK(static_cast<size_t>(value.list().type_size()) == count)
      << "attribute '" << key << "' lists " << value.list().type_size() << " type(s) for " << count << " value(s)";
}

Outputs Results(const NodePtr& node, size_t count) {
  Outputs outs;
  for (uint32_t j = 0; j < count; ++j) outs.push_back(NodeEntry{node, j});
  return outs;
}

/*! \brief If's predicate: a scalar as it is; a tensor of known shape is true when it has elements (TF's rule). */
NodeEntry Predicate(ImportContext& ctx) {
  Shape shape = ctx.InputShape(0);
  if (!shape.is_known() || shape.ndim() == 0) return ctx.input(0);
  return ctx.Constant(NDArray::Scalar<bool>(shape.Size() > 0), "nonempty");
}

Outputs ConvertIf(ImportContext& ctx) {
  IR_CHECK(ctx.num_inputs() >= 1) << "needs a predicate input";
  ExpectTypeList(ctx, "Tin", ctx.num_inputs() - 1);
  ArgSpec args = ArgsOf(ctx, 1);
  size_t then_results = 0, else_results = 0;
  BodyPtr then_branch = ImportBody(ctx, "then_branch", FunctionAttr(ctx, "then_branch"), args, &then_results);
  BodyPtr else_branch = ImportBody(ctx, "else_branch", FunctionAttr(ctx, "else_branch"), args, &else_results);
  IR_CHECK(then_results == else_results) << "then_branch returns " << then_results << " value(s) but else_branch "
                                         << else_results;
  ExpectTypeList(ctx, "Tout", then_results);
  std::vector<NodeEntry> inputs{Predicate(ctx)};
  inputs.insert(inputs.end(), ctx.inputs().begin() + 1, ctx.inputs().end());
  return Results(ctx.OpWithBodies("cond", std::move(inputs), {then_branch, else_branch}), then_results);
}

/*! \brief `body` taking one more (unused) argument first: a Case branch called with the index. */
BodyPtr WithIndexParam(const BodyPtr& body, const std::string& name) {
  auto out = std::make_shared<Subgraph>(*body);
  out->params.insert(out->params.begin(), Node::CreateVariable(name));
  return out;
}

/*!
 * \brief Case as nested conds: cond(i == 0, b0, cond(i == 1, b1, ... b[n-1])), every cond taking
 * (i, args), so an index out of [0, n-1) runs the last branch as TensorFlow does.
 */
Outputs ConvertCase(ImportContext& ctx) {
  IR_CHECK(ctx.num_inputs() >= 1) << "needs a branch_index input";
  ExpectTypeList(ctx, "Tin", ctx.num_inputs() - 1);
  const tfproto::AttrValue& list = ctx.Attr("branches");
  IR_CHECK(list.value_case() == tfproto::AttrValue::kList && list.list().func_size() > 0)
      << "attribute 'branches' must list at least one function";
  ArgSpec args = ArgsOf(ctx, 1);
  int n = list.list().func_size();
  std::vector<BodyPtr> branches;
  size_t results = 0;
  for (int k = 0; k < n; ++k) {
    size_t count = 0;
    BodyPtr body = ImportBody(ctx, StrCat("branches_", k), list.list().func(k), args, &count);
    IR_CHECK(k == 0 || count == results) << "branch " << k << " returns " << count << " value(s) but branch 0 "
                                         << results;
    results = count;
    branches.push_back(WithIndexParam(body, StrCat(ctx.name(), "/branches_", k, "/_index")));
  }
  ExpectTypeList(ctx, "Tout", results);
  BodyPtr rest = branches[n - 1];
  for (int k = n - 2; k >= 1; --k) {  // the else body of the cond choosing branch k - 1
    std::string prefix = StrCat(ctx.name(), "/else_", k);
    auto body = std::make_shared<Subgraph>();
    std::vector<NodeEntry> inner;
    for (size_t i = 0; i <= args.shapes.size(); ++i) {
      body->params.push_back(Node::CreateVariable(StrCat(prefix, "/_arg/", i)));
      inner.push_back(NodeEntry{body->params.back(), 0});
    }
    NodeEntry pred =
        MakeNode("equal_scalar", prefix + "/is_" + std::to_string(k), {inner[0]}, {{"scalar", std::to_string(k)}});
    inner.insert(inner.begin(), pred);
    NodePtr choose = Node::Create(Op::Get("cond"), prefix + "/case", {}, std::move(inner), {branches[k], rest});
    body->graph.outputs = Results(choose, results);
    rest = body;
  }
  std::vector<NodeEntry> inputs{ctx.Op("equal_scalar", {ctx.input(0)}, {{"scalar", "0"}}, "is_0")};
  inputs.insert(inputs.end(), ctx.inputs().begin(), ctx.inputs().end());
  return Results(ctx.OpWithBodies("cond", std::move(inputs), {branches[0], rest}), results);
}

/*! \brief "[[-1,2],[]]": the loop variables' declared shapes as while_loop's shape_invariants. */
std::string InvariantsText(const std::vector<Shape>& shapes) {
  std::vector<std::string> items;
  for (const Shape& s : shapes) items.push_back(StrCat("[", Join(s.dims(), ","), "]"));
  return StrCat("[", Join(items, ","), "]");
}

/*! \brief Whether loop variable `i` has TF type `type` (T attribute). */
bool LoopVarIs(const ImportContext& ctx, size_t i, tfproto::DataType type) {
  if (!ctx.HasAttr("T") || ctx.Attr("T").value_case() != tfproto::AttrValue::kList) return false;
  const auto& types = ctx.Attr("T").list().type();
  return static_cast<int>(i) < types.size() && types[static_cast<int>(i)] == type;
}

/*!
 * \brief The loop variables' shapes across iterations: TF's `output_shapes` (the shape invariants)
 * when given, else the entering shapes; sets `attrs` shape_invariants when all ranks are known. A
 * TensorList's (TF gives a variant's as a scalar) is its array's as it enters, element dimensions not
 * written yet unknown, and its size unknown when the body may push, pop or resize; a resource's (a
 * handle, also a scalar) is its variable's.
 */
std::vector<Shape> LoopShapes(const ImportContext& ctx, const std::vector<Shape>& entering,
                              std::map<std::string, std::string>* attrs) {
  bool declared = ctx.HasAttr("output_shapes");
  const tfproto::AttrValue* value = declared ? &ctx.Attr("output_shapes") : nullptr;
  IR_CHECK(!declared || value->value_case() == tfproto::AttrValue::kList) << "attribute 'output_shapes' is not a list";
  declared = declared && value->list().shape_size() > 0;
  IR_CHECK(!declared || static_cast<size_t>(value->list().shape_size()) == entering.size())
      << "attribute 'output_shapes' lists " << value->list().shape_size() << " shape(s) for " << entering.size()
      << " loop variable(s)";
  const std::shared_ptr<FunctionScope>& scope = ctx.spec().functions;
  bool resizes = scope != nullptr && MayResizeLists(*scope, FunctionAttr(ctx, "body").name());
  std::vector<Shape> shapes;
  bool all_ranked = true, lists = false;
  for (size_t i = 0; i < entering.size(); ++i) {
    if (LoopVarIs(ctx, i, tfproto::DT_VARIANT)) {  // a TensorList: our tensor array
      shapes.push_back(ListLoopShape(entering[i], resizes));
      lists = true;
    } else if (LoopVarIs(ctx, i, tfproto::DT_RESOURCE)) {  // a variable's value, passed through
      shapes.push_back(entering[i]);
    } else if (declared) {
      shapes.push_back(ToShape(value->list().shape(static_cast<int>(i))));
      Shape merged;
      IR_CHECK(Shape::Merge(entering[i], shapes[i], &merged))
          << "loop variable " << i << " enters with shape " << entering[i] << ", which does not fit its output_shapes "
          << shapes[i];
    } else {
      shapes.push_back(entering[i]);
    }
    all_ranked = all_ranked && shapes[i].rank_known();
  }
  if ((declared || lists) && all_ranked) (*attrs)["shape_invariants"] = InvariantsText(shapes);
  return shapes;
}

/*!
 * \brief Lists entering the loop before their elements' rank is known (element_shape -1) get the
 * rank the body's writes give them: the body is imported once with those loop variables unshaped.
 */
void RankEnteringLists(ImportContext& ctx, std::vector<NodeEntry>* inputs, ArgSpec* args) {
  std::vector<size_t> unranked;
  for (size_t i = 0; i < inputs->size(); ++i) {
    if (IsUnrankedList((*inputs)[i])) unranked.push_back(i);
  }
  if (unranked.empty()) return;
  std::map<std::string, std::string> attrs;
  ArgSpec probe = *args;
  probe.shapes = LoopShapes(ctx, args->shapes, &attrs);
  for (size_t i : unranked) probe.shapes[i] = Shape();
  size_t results = 0;
  BodyPtr body = ImportBody(ctx, "body", FunctionAttr(ctx, "body"), probe, &results);
  std::vector<Shape> after =
      InferSubgraphShapes(*body, probe.shapes, StrCat("body function '", FunctionAttr(ctx, "body").name(), "'"));
  for (size_t i : unranked) {
    IR_CHECK(i < after.size() && after[i].rank_known() && after[i].ndim() >= 1)
        << "loop variable " << i << " is a TensorList of unknown element shape (element_shape -1), and the body "
        << "does not tell its elements' rank";
    (*inputs)[i] = RankedList(ctx, (*inputs)[i], after[i].ndim() - 1);
    std::vector<int64_t> dims(static_cast<size_t>(after[i].ndim()), 0);
    dims[0] = args->shapes[i].is_known() ? args->shapes[i][0] : kUnknownDim;
    args->shapes[i] = Shape(dims);
  }
}

/*!
 * \brief The resource loop variables (variable handles, as keras' recurrent cells capture their
 * weights into the body); each must be a variable, which the loop passes by value.
 */
std::vector<size_t> ResourceLoopVars(const ImportContext& ctx) {
  std::vector<size_t> resources;
  if (!ctx.HasAttr("T") || ctx.Attr("T").value_case() != tfproto::AttrValue::kList) return resources;
  const auto& types = ctx.Attr("T").list().type();
  for (int i = 0; i < types.size(); ++i) {
    if (types[i] != tfproto::DT_RESOURCE) continue;
    try {
      ctx.VariableInput(static_cast<size_t>(i));
    } catch (const Error& err) {
      throw Error(StrCat("loop variable ", i, " ('", ctx.def().input(i), "') is a resource: ", err.what()));
    }
    resources.push_back(static_cast<size_t>(i));
  }
  return resources;
}

/*! \brief Passing a variable's value is right only if the body reads it (ImportBody rejects writes) and returns it. */
void CheckPassedThrough(const ImportContext& ctx, const std::vector<size_t>& resources, const Subgraph& body) {
  for (size_t i : resources) {
    NodeEntry out = body.graph.outputs[i];
    while (!out.node->is_variable() && out.node->op()->name == "identity") out = out.node->inputs[0];
    IR_CHECK(out.node == body.params[i])
        << "loop variable " << i << " ('" << ctx.def().input(static_cast<int>(i))
        << "') is a resource (a variable handle) the body does not return unchanged: While loops that replace "
           "a variable handle are not supported";
  }
}

Outputs ConvertWhile(ImportContext& ctx) {
  size_t n = ctx.num_inputs();
  IR_CHECK(n >= 1) << "needs at least one loop variable";
  ExpectTypeList(ctx, "T", n);
  std::vector<size_t> resources = ResourceLoopVars(ctx);
  ArgSpec args = ArgsOf(ctx, 0);
  std::vector<NodeEntry> inputs = ctx.inputs();
  RankEnteringLists(ctx, &inputs, &args);
  std::map<std::string, std::string> attrs;
  args.shapes = LoopShapes(ctx, args.shapes, &attrs);
  size_t cond_results = 0, body_results = 0;
  BodyPtr cond = ImportBody(ctx, "cond", FunctionAttr(ctx, "cond"), args, &cond_results);
  BodyPtr body = ImportBody(ctx, "body", FunctionAttr(ctx, "body"), args, &body_results);
  IR_CHECK(cond_results == 1) << "cond function '" << FunctionAttr(ctx, "cond").name() << "' returns " << cond_results
                              << " values, not 1";
  IR_CHECK(body_results == n) << "body function '" << FunctionAttr(ctx, "body").name() << "' returns " << body_results
                              << " values for " << n << " loop variable(s)";
  CheckPassedThrough(ctx, resources, *body);
  return Results(ctx.OpWithBodies("while_loop", std::move(inputs), {cond, body}, attrs), n);
}

/*! \brief A body argument: a placeholder the enclosing cond/while_loop binds. */
Outputs ConvertParam(ImportContext& ctx) {
  std::map<std::string, std::string> hints{{"__kind__", "placeholder"}};
  for (const char* key : {"__shape__", "__dtype__"}) {
    if (ctx.HasAttr(key)) hints[key] = ctx.Str(key);
  }
  return {ctx.Variable(hints)};
}

/*! \brief `_Arg` (a function-style graph's input): a placeholder of dtype T. */
Outputs ConvertArg(ImportContext& ctx) {
  return {ctx.Variable({{"__kind__", "placeholder"}, {"__dtype__", DTypeName(ctx.Type("T"))}})};
}

/*! \brief `_Retval` (a function-style graph's output): its input. */
Outputs ConvertRetval(ImportContext& ctx) {
  ctx.ExpectInputs(1);
  return {ctx.input(0)};
}

}  // namespace

IR_TF_CONVERTER({"If", "StatelessIf"}, ConvertIf);
IR_TF_CONVERTER({"Case", "StatelessCase"}, ConvertCase);
IR_TF_CONVERTER({"While", "StatelessWhile"}, ConvertWhile);
IR_TF_CONVERTER({kParamOp}, ConvertParam);
IR_TF_CONVERTER({"_Arg"}, ConvertArg);
IR_TF_CONVERTER({"_Retval"}, ConvertRetval);

}  // namespace tf
}  // namespace ir
