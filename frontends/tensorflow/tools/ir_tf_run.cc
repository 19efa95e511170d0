/*!
 * \file ir_tf_run.cc
 * \brief ir-tf-run: imports a TensorFlow graph and runs it like tf.Session.run.
 *
 *   ir-tf-run --graph model.pb --feed input=x.npy --fetch output --out results/
 *   ir-tf-run --graph model.txt --init init --run train --steps 200 --fetch loss
 *   ir-tf-run --graph saved_model_dir --signature serving_default --feed x=x.npy --fetch y
 */
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ir/graph_attr.h"
#include "ir/pass.h"
#include "ir_tf/import.h"
#include "ir_tf/npy.h"
#include "ir_tf/session.h"

namespace {

using ir::NDArray;
using Clock = std::chrono::steady_clock;

const char kUsage[] =
    "usage: ir-tf-run --graph FILE|DIR [options]\n"
    "  --graph FILE|DIR      .pb, .pbtxt/.txt, .meta, or a SavedModel directory\n"
    "  --signature NAME      SavedModel/MetaGraph signature (default serving_default); its keys name tensors\n"
    "  --feed NAME=FILE.npy  feed a tensor from a .npy file (repeatable)\n"
    "  --feed NAME=random:SEED  feed uniform random values of the placeholder's shape (unknown dims = 1)\n"
    "  --fetch NAME[:i]      tensor to print and save after the runs (repeatable)\n"
    "  --init NAME           op run once first, e.g. a variable initializer (repeatable)\n"
    "  --run NAME            op run --steps times for effect with the same feeds (e.g. a train op)\n"
    "  --steps N             how many times --run runs (default 1)\n"
    "  --checkpoint PREFIX   restore variables from a checkpoint V2 bundle (PREFIX.index);\n"
    "                        SavedModels and .meta files next to one are restored automatically\n"
    "  --target cpu|opencl|cuda   device (default cpu)\n"
    "  --no-fusion           run every op on its own kernel\n"
    "  --no-simplify         do not apply the rewrite rules (docs/REWRITE_RULES.md)\n"
    "  --fast-math           also apply the fast_math rules (they change IEEE results)\n"
    "  --fmax K              at most K array inputs per fused kernel\n"
    "  --out DIR             write each fetch to DIR/<name>.npy ('/' and ':' become '_')\n"
    "  --dump DIR            write the IR after every pass into DIR\n"
    "  --list-unsupported    list every node whose op has no converter, and exit\n"
    "  --list-supported      list every TensorFlow op the importer converts (no --graph needed), and exit\n";

struct Options {
  std::string graph, signature, run, target = "cpu", out, dump, checkpoint;
  std::vector<std::pair<std::string, std::string>> feeds;
  std::vector<std::string> fetches, inits;
  int steps = 1, fmax = -1;
  bool fusion = true, simplify = true, fast_math = false, list_unsupported = false;
};

[[noreturn]] void Usage(const std::string& problem) {
  std::cerr << "ir-tf-run: " << problem << "\n" << kUsage;
  std::exit(2);
}

int ParseInt(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < 0 || value > (1L << 30))
    Usage(flag + " needs a non-negative integer, got '" + text + "'");
  return static_cast<int>(value);
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--graph")
      o.graph = value();
    else if (flag == "--signature")
      o.signature = value();
    else if (flag == "--feed") {
      std::string spec = value();
      size_t eq = spec.find('=');
      if (eq == std::string::npos || eq == 0)
        Usage("--feed needs NAME=FILE.npy or NAME=random:SEED, got '" + spec + "'");
      o.feeds.emplace_back(spec.substr(0, eq), spec.substr(eq + 1));
    } else if (flag == "--fetch")
      o.fetches.push_back(value());
    else if (flag == "--init")
      o.inits.push_back(value());
    else if (flag == "--run")
      o.run = value();
    else if (flag == "--steps")
      o.steps = ParseInt(flag, value());
    else if (flag == "--checkpoint")
      o.checkpoint = value();
    else if (flag == "--target")
      o.target = value();
    else if (flag == "--no-fusion")
      o.fusion = false;
    else if (flag == "--no-simplify")
      o.simplify = false;
    else if (flag == "--fast-math")
      o.fast_math = true;
    else if (flag == "--fmax")
      o.fmax = ParseInt(flag, value());
    else if (flag == "--out")
      o.out = value();
    else if (flag == "--dump")
      o.dump = value();
    else if (flag == "--list-unsupported")
      o.list_unsupported = true;
    else if (flag == "--list-supported") {
      for (const std::string& op : ir::tf::SupportedOps()) std::cout << op << "\n";
      std::exit(0);
    } else if (flag == "--help" || flag == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else
      Usage("unknown argument '" + flag + "'");
  }
  if (o.graph.empty()) Usage("--graph is required");
  return o;
}

double Ms(Clock::time_point since) { return std::chrono::duration<double, std::milli>(Clock::now() - since).count(); }

/*! \brief Uniform values in [0, 1) (integers in [0, 10), random bools) of the input's shape. */
NDArray RandomFeed(const ir::tf::TFModel& model, const std::string& name, const std::string& seed_text) {
  ir::tf::InputSpec spec = ir::tf::FindInputSpec(model, name);
  if (!spec.shape.rank_known())
    throw ir::Error("random feed for '" + name + "': its rank is unknown; feed a .npy file");
  std::vector<int64_t> dims = spec.shape.dims();
  for (int64_t& d : dims) {
    if (d < 0) {
      std::cout << "note: random feed for '" << name << "': unknown dimension set to 1\n";
      d = 1;
    }
  }
  if (spec.dtype == ir::DType::kUnknown) spec.dtype = ir::DType::kFloat32;
  NDArray array(ir::Shape(dims), spec.dtype);
  std::mt19937_64 rng(std::strtoull(seed_text.c_str(), nullptr, 10));
  std::uniform_real_distribution<double> uniform(0, 1);
  for (int64_t i = 0; i < array.Size(); ++i) {
    double u = uniform(rng);
    switch (spec.dtype) {
      case ir::DType::kFloat32:
        array.data<float>()[i] = static_cast<float>(u);
        break;
      case ir::DType::kFloat64:
        array.data<double>()[i] = u;
        break;
      case ir::DType::kInt32:
        array.data<int32_t>()[i] = static_cast<int32_t>(u * 10);
        break;
      case ir::DType::kInt64:
        array.data<int64_t>()[i] = static_cast<int64_t>(u * 10);
        break;
      case ir::DType::kBool:
        array.data<bool>()[i] = u < 0.5;
        break;
      default:
        break;
    }
  }
  return array;
}

std::string Describe(const NDArray& a) {
  std::string text = std::string(ir::DTypeName(a.dtype())) + a.shape().ToString() + " = [";
  int64_t shown = std::min<int64_t>(a.Size(), 8);
  for (int64_t i = 0; i < shown; ++i) {
    char buf[32];
    switch (a.dtype()) {
      case ir::DType::kFloat32:
        std::snprintf(buf, sizeof(buf), "%.6g", a.data<float>()[i]);
        break;
      case ir::DType::kFloat64:
        std::snprintf(buf, sizeof(buf), "%.6g", a.data<double>()[i]);
        break;
      case ir::DType::kInt32:
        std::snprintf(buf, sizeof(buf), "%d", a.data<int32_t>()[i]);
        break;
      case ir::DType::kInt64:
        std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(a.data<int64_t>()[i]));
        break;
      case ir::DType::kBool:
        std::snprintf(buf, sizeof(buf), "%s", a.data<bool>()[i] ? "true" : "false");
        break;
      default:
        buf[0] = '\0';
    }
    text += (i ? ", " : "") + std::string(buf);
  }
  return text + (a.Size() > shown ? ", ...]" : "]");
}

std::string OutFile(const std::string& dir, std::string name) {
  for (char& c : name) {
    if (c == '/' || c == ':') c = '_';
  }
  return dir + "/" + name + ".npy";
}

void PrintTimings(const char* what, const ir::tf::TFRunTimings& t, double total) {
  std::printf("%s: %.2f ms (import %.2f, bind %.2f, run %.2f)\n", what, total, t.import_ms, t.bind_ms, t.run_ms);
}

int Main(const Options& o) {
  auto start = Clock::now();
  if (ir::tf::IsSavedModelFile(o.graph)) {
    std::printf("note: '%s' is the saved_model.pb of a SavedModel: pass its directory; loading that directory\n",
                o.graph.c_str());
  }
  ir::tf::TFModel model = ir::tf::LoadModel(o.graph, o.signature);
  std::printf("loaded '%s' (%s, %zu nodes) in %.2f ms\n", o.graph.c_str(), model.format.c_str(),
              ir::tf::NodeNames(model).size(), Ms(start));
  if (o.list_unsupported) {
    auto missing = ir::tf::ListUnsupported(model.graph_def);
    for (const auto& node : missing) std::printf("unsupported: %s (op %s)\n", node.first.c_str(), node.second.c_str());
    std::printf("%zu node(s) without a converter\n", missing.size());
    return 0;
  }
  ir::SessionOptions options;
  options.target = o.target;
  options.fusion = o.fusion;
  options.simplify = o.simplify;
  options.fast_math = o.fast_math;
  options.fmax = o.fmax;
  options.dump_dir = o.dump;
  ir::tf::TFSession session(model, options);
  std::string checkpoint = o.checkpoint.empty() ? model.checkpoint_prefix : o.checkpoint;
  if (!checkpoint.empty()) {
    auto restored = session.RestoreCheckpoint(checkpoint);
    std::printf("restored %zu variable(s) from checkpoint '%s'\n", restored.size(), checkpoint.c_str());
  } else if (model.format == "saved_model" || model.format == "meta") {
    std::printf(
        "note: no checkpoint found next to the model: variables start uninitialized (use --init or --checkpoint)\n");
  }
  std::map<std::string, NDArray> feeds;
  for (const auto& feed : o.feeds) {
    bool random = feed.second.rfind("random:", 0) == 0;
    feeds[feed.first] = random ? RandomFeed(model, feed.first, feed.second.substr(7)) : ir::tf::ReadNpy(feed.second);
    std::printf("feed %s: %s\n", feed.first.c_str(), Describe(feeds[feed.first]).c_str());
  }
  ir::tf::TFRunTimings total;
  auto add = [&total](const ir::tf::TFRunTimings& t) {
    total.import_ms += t.import_ms;
    total.bind_ms += t.bind_ms;
    total.run_ms += t.run_ms;
  };
  for (const std::string& init : o.inits) {
    auto t0 = Clock::now();
    session.Run(feeds, {}, {init});
    PrintTimings(("init '" + init + "'").c_str(), session.last_timings(), Ms(t0));
    add(session.last_timings());
  }
  if (!o.run.empty()) {
    auto t0 = Clock::now();
    for (int step = 0; step < o.steps; ++step) {
      session.Run(feeds, {}, {o.run});
      add(session.last_timings());
    }
    double ms = Ms(t0);
    std::printf("run '%s' x %d: %.2f ms (%.3f ms/step)\n", o.run.c_str(), o.steps, ms, o.steps ? ms / o.steps : 0.0);
  }
  if (!o.fetches.empty()) {
    auto t0 = Clock::now();
    std::vector<NDArray> values = session.Run(feeds, o.fetches);
    PrintTimings("fetch", session.last_timings(), Ms(t0));
    add(session.last_timings());
    for (size_t i = 0; i < values.size(); ++i) {
      // Results stay on the session's device (a program may feed them back); printing and
      // .npy files need them on the host.
      if (values[i].device() != ir::Device::CPU()) values[i] = values[i].CopyTo(ir::Device::CPU());
      std::printf("%s: %s\n", o.fetches[i].c_str(), Describe(values[i]).c_str());
      if (!o.out.empty()) ir::tf::WriteNpy(OutFile(o.out, o.fetches[i]), values[i]);
    }
    const ir::Graph& bound = session.session().last_graph();
    if (bound.HasAttr("pass_timings")) {
      std::printf("passes of the last bind:");
      for (const ir::PassTiming& t : bound.GetAttr<std::vector<ir::PassTiming>>("pass_timings")) {
        std::printf(" %s %.2f ms;", t.pass.c_str(), t.milliseconds);
      }
      std::printf("\n");
    }
  }
  std::printf("total: %.2f ms (import %.2f, bind %.2f, run %.2f)\n", Ms(start), total.import_ms, total.bind_ms,
              total.run_ms);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options = ParseArgs(argc, argv);
  try {
    return Main(options);
  } catch (const std::exception& err) {
    std::fprintf(stderr, "ir-tf-run: error: %s\n", err.what());
    return 1;
  }
}
