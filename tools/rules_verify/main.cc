/*!
 * \file main.cc
 * \brief ir-rules-verify FILES_OR_DIRS...: proves every rule of the given rule files (a
 * directory stands for its *.rules files) with Z3, one line per rule; exits 1 when a rule
 * fails. `--list-guards` lists the guards and attribute functions rules may name.
 */
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "ir/rewrite.h"
#include "verify.h"

namespace {

namespace fs = std::filesystem;

int Usage() {
  std::cerr << "usage: ir-rules-verify [--rlimit N] [--timeout-ms N] [--allow-unknown] FILE_OR_DIR...\n"
               "       ir-rules-verify --list-guards\n";
  return 2;
}

/*! \brief The rule files named: files as given, directories' *.rules files sorted. */
std::vector<fs::path> RuleFiles(const std::vector<std::string>& args) {
  std::vector<fs::path> files;
  for (const std::string& a : args) {
    if (!fs::is_directory(a)) {
      files.emplace_back(a);
      continue;
    }
    std::vector<fs::path> found;
    for (const auto& e : fs::directory_iterator(a)) {
      if (e.path().extension() == ".rules") found.push_back(e.path());
    }
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

/*! \brief Verifies one file's rules; returns how many failed (a file that does not parse counts one). */
int VerifyFile(const fs::path& path, const ir::rules_verify::VerifyOptions& options) {
  std::ifstream in(path);
  if (!in) {
    std::cout << "FAIL " << path.string() << ": cannot read the file\n";
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  ir::rewrite::RuleFile file;
  try {
    file = ir::rewrite::ParseRules(text.str(), path.stem().string());
  } catch (const std::exception& e) {
    std::cout << "FAIL " << path.string() << ": " << e.what() << "\n";
    return 1;
  }
  int failures = 0;
  for (const ir::rewrite::Rule& rule : file.rules) {
    bool failed = false;
    std::cout << ir::rules_verify::VerifyRule(rule, options, &failed) << std::endl;
    failures += failed;
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  ir::rules_verify::VerifyOptions options;
  std::vector<std::string> inputs;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--list-guards") {
      for (const std::string& line : ir::rewrite::DescribeGuards()) std::cout << line << "\n";
      return 0;
    } else if (a == "--allow-unknown") {
      options.allow_unknown = true;
    } else if (a == "--rlimit" && i + 1 < argc) {
      options.rlimit = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
    } else if (a == "--timeout-ms" && i + 1 < argc) {
      options.timeout_ms = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
    } else if (!a.empty() && a[0] == '-') {
      return Usage();
    } else {
      inputs.push_back(a);
    }
  }
  if (inputs.empty()) return Usage();
  int failures = 0, files = 0;
  for (const fs::path& path : RuleFiles(inputs)) {
    failures += VerifyFile(path, options);
    ++files;
  }
  std::cout << files << " file(s), " << failures << " failure(s)\n";
  return failures == 0 ? 0 : 1;
}
