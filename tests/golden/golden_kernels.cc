/*!
 * \file golden_kernels.cc
 * \brief ir-golden-kernels: renders the golden kernel corpus (tests/golden/README.md) and
 * compares it with, or writes it to, a directory.
 *
 * Usage: ir-golden-kernels --check DIR | --update DIR
 * The corpus is, for every target whose printer this build has, the translation unit CodeGen
 * prints for each graph of golden_graphs.cc (<graph>.<target>.<ext>), and the device kernel
 * libraries of the opaque ops per element type (lib_<name>.<dtype>.<target>.<ext>).
 * --check exits 1 listing every differing, missing or extra file; --update rewrites the corpus
 * and removes the stale files it owns (those of the targets it rendered).
 */
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/epilogue_kernels.h"
#include "golden/golden_graphs.h"
#include "ir/codegen.h"
#include "ir/device_kernel.h"
#include "ir/graph.h"
#include "ir/pass.h"
#include "runtime/device/device_source.h"
#include "runtime/device/device_target.h"

namespace ir {
namespace golden {
namespace {

namespace fs = std::filesystem;

/*! \brief A target of the corpus and the extension of its files. */
struct Target {
  std::string name;
  std::string ext;
};

const std::vector<Target>& AllTargets() {
  static const std::vector<Target> targets{{"cpu", "c"}, {"opencl", "cl"}, {"cuda", "cu"}};
  return targets;
}

/*! \brief The rendered corpus: file name -> contents, and what was left out and why. */
struct Corpus {
  std::map<std::string, std::string> files;
  /*! \brief Targets rendered (their files are owned and checked). */
  std::set<std::string> targets;
  /*! \brief "target: reason" for targets not in this build. */
  std::vector<std::string> unavailable;
  /*! \brief Graphs or libraries left out, with the reason. */
  std::vector<std::string> skipped;
  /*! \brief Prefixes of file names not rendered in this process (not checked, not removed). */
  std::vector<std::string> unrendered;
};

/*!
 * \brief The translation unit CodeGen prints for `graph` on `target` after Fusion (default F_max);
 * `epilogues` gets the unit of its epilogue kernels ("" when none), which run as their own unit.
 */
std::string RenderGraph(const GoldenGraph& golden, const std::string& target, std::string* epilogues) {
  Graph graph = WithInputs(golden);
  graph.SetAttr("target", target);
  Graph compiled = ApplyPasses(graph, {"InferShape", "InferType", "Fusion", "CodeGen"});
  std::string text = compiled.GetAttr<std::string>("kernel_source");
  std::vector<Kernel> kernels = codegen::EpilogueKernels(compiled);
  *epilogues = kernels.empty() ? "" : KernelPrinter::Get(target).Print(kernels);
  const auto& log = compiled.GetAttr<std::vector<std::string>>("codegen_log");
  if (!log.empty()) {
    text += "/* CodeGen left fused nodes unfused:\n";
    for (const std::string& line : log) text += " * " + line + "\n";
    text += " */\n";
  }
  return text.empty() ? "/* no generated kernels */\n" : text;
}

/*!
 * \brief (g) The device kernel libraries of the opaque ops (DeviceKernelSources()) rendered for
 * each device target, per element type: corpus files lib_<name>.<dtype>.<target>.<ext>.
 */
void AddDeviceLibraries(Corpus* corpus) {
  for (const Target& target : AllTargets()) {
    if (target.name == "cpu" || !corpus->targets.count(target.name)) continue;
    const device::Dialect& dialect = device::GetDeviceTarget(target.name).dialect();
    for (const DeviceKernelSource* source : DeviceKernelSources()) {
      for (DType dtype : source->dtypes) {
        corpus->files[StrCat("lib_", source->name, ".", DTypeName(dtype), ".", target.name, ".", target.ext)] =
            device::RenderKernelSource(dialect, *source, dtype);
      }
    }
  }
}

/*! \brief Renders every graph on every target this build prints, and the device libraries. */
Corpus Render() {
  Corpus corpus;
  for (const Target& target : AllTargets()) {
    try {
      KernelPrinter::Get(target.name);
    } catch (const Error& err) {
      corpus.unavailable.push_back(StrCat(target.name, ": ", err.what()));
      continue;
    }
    corpus.targets.insert(target.name);
    std::vector<std::string> skipped;
    for (const GoldenGraph& graph : GoldenGraphs(&skipped)) {
      std::string file = StrCat(graph.name, ".", target.name, ".", target.ext);
      try {
        std::string epilogues;
        corpus.files[file] = RenderGraph(graph, target.name, &epilogues);
        if (!epilogues.empty())
          corpus.files[StrCat(graph.name, ".epilogues.", target.name, ".", target.ext)] = epilogues;
      } catch (const Error& err) {
        if (!graph.enumerated) throw Error(StrCat("graph '", graph.name, "' on ", target.name, ": ", err.what()));
        std::string why = err.what();
        corpus.skipped.push_back(StrCat(file, ": ", why.substr(0, why.find('\n'))));
      }
    }
    if (corpus.targets.size() == 1) {  // ops the enumeration skips: the same for every target
      for (const std::string& op : skipped) corpus.skipped.push_back("op " + op);
    }
  }
  AddDeviceLibraries(&corpus);
  return corpus;
}

/*! \brief The target of a corpus file name (<stem>.<target>.<ext>); "" when not a corpus file. */
std::string TargetOf(const std::string& file) {
  for (const Target& target : AllTargets()) {
    std::string suffix = StrCat(".", target.name, ".", target.ext);
    if (file.size() > suffix.size() && file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return target.name;
    }
  }
  return "";
}

/*! \brief Corpus files present in `dir` that `corpus` renders the kind of (its targets), sorted. */
std::set<std::string> OwnedFiles(const fs::path& dir, const Corpus& corpus) {
  std::set<std::string> files;
  if (!fs::is_directory(dir)) return files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    bool unrendered = std::any_of(corpus.unrendered.begin(), corpus.unrendered.end(),
                                  [&](const std::string& prefix) { return name.rfind(prefix, 0) == 0; });
    if (entry.is_regular_file() && corpus.targets.count(TargetOf(name)) && !unrendered) files.insert(name);
  }
  return files;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

/*! \brief "line N: expected '...', actual '...'" for the first line where the texts differ. */
std::string FirstDifference(const std::string& expected, const std::string& actual) {
  std::istringstream e(expected), a(actual);
  std::string le, la;
  for (int line = 1;; ++line) {
    bool more_e = static_cast<bool>(std::getline(e, le)), more_a = static_cast<bool>(std::getline(a, la));
    if (!more_e && !more_a) return "the texts differ only in their final newline";
    if (!more_e) le = "<end of file>";
    if (!more_a) la = "<end of file>";
    if (le != la || !more_e || !more_a) return StrCat("line ", line, ": expected '", le, "', actual '", la, "'");
  }
}

void PrintSummary(const Corpus& corpus, const std::string& verb) {
  std::vector<std::string> targets(corpus.targets.begin(), corpus.targets.end());
  std::cout << verb << " targets: " << Join(targets, ", ") << " (" << corpus.files.size() << " files)\n";
  for (const std::string& line : corpus.unavailable) std::cout << "NOT CHECKED (not in this build) " << line << "\n";
  for (const std::string& line : corpus.skipped) std::cout << "left out: " << line << "\n";
}

int Check(const fs::path& dir) {
  Corpus corpus = Render();
  PrintSummary(corpus, "checked");
  std::set<std::string> present = OwnedFiles(dir, corpus);
  int problems = 0;
  for (const auto& kv : corpus.files) {
    if (!present.count(kv.first)) {
      std::cout << "MISSING " << kv.first << "\n";
    } else {
      std::string stored = ReadFile(dir / kv.first);
      if (stored == kv.second) continue;
      std::cout << "DIFFERS " << kv.first << ": " << FirstDifference(stored, kv.second) << "\n";
    }
    ++problems;
  }
  for (const std::string& file : present) {
    if (corpus.files.count(file)) continue;
    std::cout << "EXTRA " << file << " (no graph or library renders it any more)\n";
    ++problems;
  }
  if (problems == 0) {
    std::cout << "golden kernel corpus OK: " << corpus.files.size() << " files match " << dir.string() << "\n";
    return 0;
  }
  std::cout << problems << " corpus file(s) differ. If the change of generated code is intended, regenerate with\n"
            << "  ir-golden-kernels --update " << dir.string() << "\nand review the diff (tests/golden/README.md).\n";
  return 1;
}

int Update(const fs::path& dir) {
  Corpus corpus = Render();
  PrintSummary(corpus, "rendered");
  fs::create_directories(dir);
  for (const std::string& file : OwnedFiles(dir, corpus)) {
    if (!corpus.files.count(file)) {
      fs::remove(dir / file);
      std::cout << "removed stale " << file << "\n";
    }
  }
  size_t bytes = 0;
  for (const auto& kv : corpus.files) {
    std::ofstream out(dir / kv.first, std::ios::binary | std::ios::trunc);
    out << kv.second;
    IR_CHECK(out.good()) << "cannot write " << (dir / kv.first).string();
    bytes += kv.second.size();
  }
  std::cout << "wrote " << corpus.files.size() << " files (" << bytes << " bytes) to " << dir.string() << "\n";
  return 0;
}

}  // namespace
}  // namespace golden
}  // namespace ir

int main(int argc, char** argv) {
  if (argc != 3 || (std::string(argv[1]) != "--check" && std::string(argv[1]) != "--update")) {
    std::cerr << "usage: ir-golden-kernels --check DIR | --update DIR\n";
    return 2;
  }
  try {
    return std::string(argv[1]) == "--check" ? ir::golden::Check(argv[2]) : ir::golden::Update(argv[2]);
  } catch (const std::exception& err) {
    std::cerr << "ir-golden-kernels: " << err.what() << "\n";
    return 2;
  }
}
