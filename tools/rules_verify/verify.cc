/*!
 * \file verify.cc
 * \brief One rule's proof: the instance, the guards, the solver call and the counterexample.
 */
#include "verify.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "guard_models.h"
#include "ir/op.h"
#include "op_semantics.h"

namespace ir {
namespace rules_verify {
namespace {

using rewrite::Term;

/*! \brief "f32[2,3]" -> dtype and shape. */
void ParseTensorType(const std::string& text, DType* dtype, Shape* shape) {
  size_t bracket = text.find('[');
  IR_CHECK(bracket != std::string::npos) << "test type '" << text << "' is not like f32[2,3]";
  static const std::map<std::string, DType> names = {{"f32", DType::kFloat32},
                                                     {"f64", DType::kFloat64},
                                                     {"i32", DType::kInt32},
                                                     {"i64", DType::kInt64},
                                                     {"bool", DType::kBool}};
  auto it = names.find(text.substr(0, bracket));
  *dtype = it != names.end() ? it->second : DTypeFromName(text.substr(0, bracket));
  *shape = Shape::Parse(text.substr(bracket));
}

void CollectVars(const Term& t, std::vector<std::string>* vars) {
  if (t.kind == Term::Kind::kVar && std::find(vars->begin(), vars->end(), t.name) == vars->end()) {
    vars->push_back(t.name);
  }
  for (const Term& a : t.args) CollectVars(a, vars);
}

/*! \brief A rule instantiated at its test clause, evaluated term by term. */
class RuleInstance {
 public:
  RuleInstance(const rewrite::Rule& rule, SmtModel* model) : rule_(rule), model_(model) {
    std::map<std::string, std::string> test(rule.test.begin(), rule.test.end());
    for (const auto& kv : rule.test) {
      if (!kv.first.empty() && kv.first[0] == '?') inst_.attrs[kv.first] = kv.second;
    }
    std::vector<std::string> vars;
    CollectVars(rule.pattern, &vars);
    for (const std::string& v : vars) {
      SymTensor t;
      t.shape = Shape{2, 3};
      if (test.count(v)) ParseTensorType(test[v], &t.dtype, &t.shape);
      for (int64_t e = 0; e < t.shape.Size(); ++e) t.elems.push_back(model->Fresh(StrCat(v, "!", e), t.dtype));
      NodeEntry entry{Node::CreateVariable(v), 0};
      bindings_.values[v] = rewrite::Value{entry, t.shape, t.dtype};
      entries_[v] = entry;
      inst_.values.emplace(v, std::move(t));
      var_order_.push_back(v);
    }
    bindings_.attrs = inst_.attrs;
  }

  const Instance& instance() const { return inst_; }
  const std::vector<std::string>& variables() const { return var_order_; }
  rewrite::Bindings& bindings() { return bindings_; }

  /*! \brief The value `t` denotes; `entry` receives a graph entry for it (for guards and attribute functions). */
  SymTensor Eval(const Term& t, DType literal_dtype, NodeEntry* entry) {
    if (t.kind == Term::Kind::kVar) {
      *entry = entries_.at(t.name);
      return inst_.values.at(t.name);
    }
    if (t.kind == Term::Kind::kLiteral) {
      // A constant all of whose elements equal the literal: a splat of scalar shape broadcasts.
      std::map<std::string, std::string> dict = {
          {"shape", "()"}, {"value", NumberText(t.literal)}, {"dtype", DTypeName(literal_dtype)}};
      *entry = MakeNode("fill", "literal", {}, dict);
      return SymTensor{Shape::Scalar(), literal_dtype, {model_->Constant(t.literal, literal_dtype)}};
    }
    const Op* op = Op::Find(t.name);
    IR_CHECK(op) << "unknown op " << t.name;
    DType arg_dtype = DType::kFloat32;
    for (const Term& a : t.args) {
      if (a.kind == Term::Kind::kVar) arg_dtype = inst_.values.at(a.name).dtype;
    }
    std::vector<SymTensor> args;
    std::vector<NodeEntry> inputs;
    for (const Term& a : t.args) {
      NodeEntry e;
      args.push_back(Eval(a, arg_dtype, &e));
      inputs.push_back(e);
    }
    NodePtr node = Node::Create(op, t.name, Attributes(t), inputs);
    std::vector<SymTensor> outputs = ApplyOp(model_, node->attrs, args);
    IR_CHECK(t.output >= 0 && static_cast<size_t>(t.output) < outputs.size())
        << t.name << " has no output " << t.output;
    *entry = NodeEntry{node, static_cast<uint32_t>(t.output)};
    return outputs[t.output];
  }

 private:
  static std::string NumberText(double v) {
    std::ostringstream os;
    os.precision(17);
    os << v;
    return os.str();
  }

  /*! \brief The term's attributes on the instance: `?v` from the test clause, `@fn(...)` computed. */
  std::map<std::string, std::string> Attributes(const Term& t) {
    std::map<std::string, std::string> dict;
    for (const auto& kv : t.attrs) {
      const std::string& v = kv.second;
      if (!v.empty() && v[0] == '?') {
        auto it = inst_.attrs.find(v);
        if (it != inst_.attrs.end()) dict[kv.first] = it->second;  // else the op's default
      } else if (!v.empty() && v[0] == '@') {
        dict[kv.first] = CallAttrFunction(v);
      } else {
        dict[kv.first] = v;
      }
    }
    return dict;
  }

  std::string CallAttrFunction(const std::string& text) {
    size_t open = text.find('('), close = text.rfind(')');
    IR_CHECK(open != std::string::npos && close != std::string::npos) << "bad attribute function " << text;
    std::string name = text.substr(1, open - 1);
    std::vector<std::string> args;
    std::string arg;
    for (char c : text.substr(open + 1, close - open - 1)) {
      if (c == ',') {
        args.push_back(arg);
        arg.clear();
      } else if (c != ' ') {
        arg += c;
      }
    }
    if (!arg.empty()) args.push_back(arg);
    const rewrite::FAttrFunction* fn = rewrite::FindAttrFunction(name);
    IR_CHECK(fn) << "unknown attribute function @" << name;
    return (*fn)(bindings_, args);
  }

  const rewrite::Rule& rule_;
  SmtModel* model_;
  Instance inst_;
  rewrite::Bindings bindings_;
  std::map<std::string, NodeEntry> entries_;
  std::vector<std::string> var_order_;
};

std::string TypeText(const SymTensor& t) { return StrCat(DTypeName(t.dtype), t.shape.ToString()); }

/*! \brief The elements as the model gives them; "_" for one the proof leaves free (any value). */
std::string ListText(const z3::model& model, const std::vector<z3::expr>& elems) {
  std::string s = elems.size() == 1 ? "" : "[";
  for (size_t i = 0; i < elems.size(); ++i) {
    z3::expr v = model.eval(elems[i], false);
    bool free = v.is_app() && v.num_args() == 0 && v.decl().decl_kind() == Z3_OP_UNINTERPRETED;
    s += (i ? ", " : "") + (free ? std::string("_") : ElementText(v));
  }
  return elems.size() == 1 ? s : s + "]";
}

/*! \brief The assumptions of the rule's guards; throws when an instance guard fails or a guard is unknown. */
z3::expr_vector GuardAssumptions(const rewrite::Rule& rule, RuleInstance* inst, SmtModel* model) {
  z3::expr_vector assumptions(model->ctx());
  for (const rewrite::Guard& g : rule.guards) {
    const GuardModel* gm = FindGuardModel(g.name);
    IR_CHECK(gm) << "unknown guard " << g.name << " in the verifier";
    if (gm->assume) {
      // `not positive(x)` admits anything: a guard may answer false for "not known".
      if (!g.negated) assumptions.push_back(gm->assume(model, inst->instance(), g.args));
      continue;
    }
    const rewrite::FGuard* fn = rewrite::FindGuard(g.name);
    IR_CHECK(fn) << "guard " << g.name << " is not registered";
    IR_CHECK((*fn)(inst->bindings(), g.args) != g.negated)
        << "test instance does not satisfy guard " << (g.negated ? "not " : "") << g.name;
  }
  return assumptions;
}

}  // namespace

Verdict ProveRule(const rewrite::Rule& rule, Obligation obligation, const VerifyOptions& options) {
  z3::context ctx;
  SmtModel model(&ctx, DomainOf(obligation));
  Verdict verdict;
  try {
    RuleInstance inst(rule, &model);
    NodeEntry root;
    SymTensor pattern = inst.Eval(rule.pattern, DType::kFloat32, &root);
    size_t pattern_conditions = model.domain_conditions().size();
    inst.bindings().root = rewrite::Value{root, pattern.shape, pattern.dtype};
    z3::expr_vector assumptions = GuardAssumptions(rule, &inst, &model);
    NodeEntry unused;
    SymTensor replacement = inst.Eval(rule.replacement, pattern.dtype, &unused);
    if (replacement.shape != pattern.shape || replacement.dtype != pattern.dtype) {
      verdict.detail = StrCat("the pattern is ", TypeText(pattern), " but the replacement ", TypeText(replacement));
      verdict.kind = Verdict::Kind::kCounterexample;
      return verdict;
    }
    z3::expr_vector breaks(ctx);
    for (size_t i = 0; i < pattern.elems.size(); ++i) {
      std::string note;
      breaks.push_back(Breaks(obligation, &model, pattern.elems[i], replacement.elems[i], &note));
      if (!note.empty() && verdict.note.find(note) == std::string::npos) {
        verdict.note += (verdict.note.empty() ? "" : "; ") + note;
      }
    }
    // A stabilizing rule promises equality only where the pattern has a value (log(softmax(x))
    // has none where softmax underflows); fast_math where no divisor is 0 (x * (1 / y) -> x / y).
    if (obligation == Obligation::kRealWherePatternDefined) {
      for (size_t i = 0; i < pattern_conditions; ++i) assumptions.push_back(model.domain_conditions()[i]);
    }
    if (obligation == Obligation::kRealNonzeroDivisors) {
      for (const z3::expr& d : model.divisors()) assumptions.push_back(d != model.Constant(0, DType::kFloat32));
    }
    // One query per element: each is small (a disjunction over all of them is much harder).
    for (unsigned i = 0; i < breaks.size(); ++i) {
      z3::solver solver(ctx);
      z3::params params(ctx);
      params.set("timeout", options.timeout_ms);
      if (options.rlimit > 0) params.set("rlimit", options.rlimit);
      solver.set(params);
      z3::expr_vector roots(ctx);
      roots.push_back(breaks[i]);
      for (unsigned a = 0; a < assumptions.size(); ++a) roots.push_back(assumptions[a]);
      solver.add(assumptions);
      solver.add(model.Axioms(roots));
      solver.add(breaks[i]);
      z3::check_result result = solver.check();
      if (result == z3::unsat) continue;
      if (result == z3::unknown) {
        verdict.kind = Verdict::Kind::kUnknown;
        verdict.detail =
            StrCat(ObligationName(obligation), ": solver gave up on element ", i, " (", solver.reason_unknown(), ")");
        return verdict;
      }
      z3::model m = solver.get_model();
      std::string text = StrCat(ObligationName(obligation), ": counterexample ");
      for (const std::string& v : inst.variables()) {
        text += StrCat(v, " = ", ListText(m, inst.instance().values.at(v).elems), ", ");
      }
      text += StrCat("element ", i, ": pattern ", ElementText(m.eval(pattern.elems[i], true)), ", replacement ",
                     ElementText(m.eval(replacement.elems[i], true)));
      verdict.kind = Verdict::Kind::kCounterexample;
      verdict.detail = text;
      return verdict;
    }
    verdict.kind = Verdict::Kind::kProved;
    return verdict;
  } catch (const std::exception& e) {
    verdict.kind = Verdict::Kind::kError;
    verdict.detail = e.what();
  }
  return verdict;
}

std::string VerifyRule(const rewrite::Rule& rule, const VerifyOptions& options, bool* failed) {
  std::string head = StrCat(rule.name, " (", rewrite::TagName(rule.tag), ")"), notes;
  *failed = false;
  for (Obligation obligation : ObligationsOf(rule.tag)) {
    // The ULP bound is proved where tractable: a multiplier against a divider may exhaust the
    // solver (deterministically, by its resource limit), and the reals proof bounds the rest.
    bool best_effort = obligation == Obligation::kUlpBound;
    VerifyOptions limits = options;
    if (best_effort) limits.rlimit = options.rlimit / 10;
    Verdict v = ProveRule(rule, obligation, limits);
    if (best_effort && v.kind == Verdict::Kind::kUnknown) {
      notes += "; ULP bound not proved (the solver gave up: the reals proof and the differential test bound it)";
      continue;
    }
    bool ok = v.kind == Verdict::Kind::kProved || (v.kind == Verdict::Kind::kUnknown && options.allow_unknown);
    if (!ok) {
      *failed = true;
      return StrCat("FAIL ", head, ": ", v.detail);
    }
    if (v.kind == Verdict::Kind::kUnknown) notes += StrCat("; ", v.detail, " (allowed)");
    if (!v.note.empty()) notes += StrCat("; ", v.note);
  }
  std::string line = StrCat("ok   ", head, notes);
  if (rule.tag == rewrite::RuleTag::kFastMath) {
    // Informational: the IEEE behavior that makes the rule fast_math.
    VerifyOptions quick = options;
    quick.rlimit = options.rlimit / 20;  // informational: do not wait long (deterministically)
    Verdict ieee = ProveRule(rule, Obligation::kBitExact, quick);
    if (ieee.kind == Verdict::Kind::kProved) {
      line += "; also exact over IEEE (could be tagged exact)";
    } else {
      line += StrCat("; IEEE ", ieee.detail);
    }
  }
  return line;
}

}  // namespace rules_verify
}  // namespace ir
