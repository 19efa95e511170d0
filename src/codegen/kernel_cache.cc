/*!
 * \file kernel_cache.cc
 * \brief The kernel cache: in memory, and on disk as single files written atomically.
 *
 * Disk entry <dir>/<key>.kbin = "IRKC1 <checksum> <size>\n" followed by the compiled blob.
 * It is written to a unique temporary file in the same directory and renamed into place,
 * so readers see either no entry or a whole one; a bad header, size or checksum marks the
 * entry corrupt and it is rebuilt.
 */
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "ir/codegen.h"

namespace ir {
namespace {

std::string DefaultDirectory() {
  const char* dir = std::getenv("IR_KERNEL_CACHE_DIR");
  if (dir != nullptr && *dir) return std::string(dir) == "off" ? "" : dir;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg) return std::string(xdg) + "/ir-kernels";
  const char* home = std::getenv("HOME");
  return home != nullptr && *home ? std::string(home) + "/.cache/ir-kernels" : "";
}

bool MakeDirs(const std::string& dir) {
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    if (mkdir(dir.substr(0, pos).c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  return true;
}

// Reads an entry; returns false when missing, sets *corrupt when present but damaged.
bool ReadEntry(const std::string& path, std::string* blob, bool* corrupt) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::string magic, checksum;
  size_t size = 0;
  in >> magic >> checksum >> size;
  in.get();
  if (!in || magic != "IRKC1") {
    *corrupt = true;
    return false;
  }
  blob->assign(size, '\0');
  in.read(&(*blob)[0], static_cast<std::streamsize>(size));
  if (static_cast<size_t>(in.gcount()) != size || in.peek() != EOF || HashHex(*blob) != checksum) {
    *corrupt = true;
    return false;
  }
  return true;
}

void WriteEntry(const std::string& dir, const std::string& path, const std::string& blob) {
  static int counter = 0;  // callers hold the cache lock
  std::string temp = StrCat(dir, "/.tmp-", getpid(), "-", ++counter, "-", HashHex(path));
  {
    std::ofstream out(temp, std::ios::binary);
    out << "IRKC1 " << HashHex(blob) << " " << blob.size() << "\n";
    out.write(blob.data(), static_cast<std::streamsize>(blob.size()));
    if (!out.good()) {
      std::remove(temp.c_str());
      return;  // a full or read-only disk only costs a recompilation next time
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) std::remove(temp.c_str());
}

}  // namespace

KernelCache& KernelCache::Global() {
  static KernelCache* cache = new KernelCache();
  return *cache;
}

std::string KernelCache::directory() const {
  std::string dir = DefaultDirectory();
  return !dir.empty() && MakeDirs(dir) ? dir : "";
}

std::shared_ptr<CompiledModule> KernelCache::GetOrCompile(const std::string& target, const std::string& source) {
  const KernelCompiler& compiler = KernelCompiler::Get(target);
  std::string key = HashHex(StrCat(target, "\n", compiler.Id(), "\n", source));
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = modules_.find(key);
  if (it != modules_.end()) {
    ++stats_.memory_hits;
    return it->second;
  }
  std::string dir = directory();
  std::string path = dir.empty() ? "" : StrCat(dir, "/", target, "-", key, ".kbin");
  std::string blob;
  bool corrupt = false;
  if (!path.empty() && ReadEntry(path, &blob, &corrupt)) {
    try {
      std::shared_ptr<CompiledModule> module = compiler.Load(blob);
      ++stats_.disk_hits;
      modules_[key] = module;
      return module;
    } catch (const Error&) {
      corrupt = true;
    }
  }
  if (corrupt) ++stats_.corrupt_entries;
  blob = compiler.Compile(source);
  ++stats_.compilations;
  if (!path.empty()) WriteEntry(dir, path, blob);
  std::shared_ptr<CompiledModule> module = compiler.Load(blob);
  modules_[key] = module;
  return module;
}

KernelCacheStats KernelCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void KernelCache::ClearMemory() {
  std::lock_guard<std::mutex> lock(mutex_);
  modules_.clear();
}

}  // namespace ir
