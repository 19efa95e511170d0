/*!
 * \file main.cc
 * \brief ir-rules-verify FILES_OR_DIRS...: proves every rule of the given rule files (a
 * directory stands for its *.rules files) with Z3, one line per rule; exits 1 when a rule
 * fails. First it judges the files as the loader does (ParseRules, CheckRules, and
 * CheckRulesTogether with the shipped sets they do not replace): a file the loader would
 * reject is a FAIL line too. `--list-guards` lists the guards and attribute functions rules may name.
 */
#include <algorithm>
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

/*! \brief A file as read: its rules when it parsed and passed the loader's checks. */
struct Loaded {
  fs::path path;
  ir::rewrite::RuleFile file;
  bool ok = false;
};

/*!
 * \brief Reads, parses and checks one file as the loader does (ir::rewrite::ParseRules and
 * CheckRules); prints a FAIL line for a file the loader would reject.
 */
Loaded Load(const fs::path& path) {
  Loaded loaded;
  loaded.path = path;
  std::ifstream in(path);
  if (!in) {
    std::cout << "FAIL " << path.string() << ": cannot read the file\n";
    return loaded;
  }
  std::stringstream text;
  text << in.rdbuf();
  try {
    loaded.file = ir::rewrite::ParseRules(text.str(), path.stem().string());
    ir::rewrite::CheckRules(loaded.file);
    loaded.ok = true;
  } catch (const std::exception& e) {
    std::cout << "FAIL " << path.string() << ": " << e.what() << "\n";
  }
  return loaded;
}

/*!
 * \brief The loader's checks across the files and the registered (shipped) sets they would
 * apply with: unique rule names, no rule cycle. A file replaces the set of its stem, so
 * `ir-rules-verify rules/` checks the shipped files as they are. Returns 1 on a FAIL line.
 */
int CheckTogether(const std::vector<Loaded>& loaded) {
  std::vector<std::string> replaced;
  for (const Loaded& l : loaded) replaced.push_back(l.path.stem().string());
  try {
    std::vector<ir::rewrite::RuleSource> sets = ir::rewrite::RegisteredRuleSets(replaced);
    for (const Loaded& l : loaded) {
      if (l.ok) sets.push_back(ir::rewrite::RuleSource{&l.file, l.path.string()});
    }
    ir::rewrite::CheckRulesTogether(sets);
  } catch (const std::exception& e) {
    std::cout << "FAIL " << e.what() << "\n";
    return 1;
  }
  return 0;
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
  std::vector<Loaded> loaded;
  int failures = 0;
  for (const fs::path& path : RuleFiles(inputs)) {
    loaded.push_back(Load(path));
    failures += !loaded.back().ok;
  }
  failures += CheckTogether(loaded);
  // Each rule is proved even in a file the loader rejects, so one run shows everything wrong.
  for (const Loaded& l : loaded) {
    for (const ir::rewrite::Rule& rule : l.file.rules) {
      bool failed = false;
      std::cout << ir::rules_verify::VerifyRule(rule, options, &failed) << std::endl;
      failures += failed;
    }
  }
  std::cout << loaded.size() << " file(s), " << failures << " failure(s)\n";
  return failures == 0 ? 0 : 1;
}
