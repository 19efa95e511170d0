/*!
 * \file kernel_cache.cc
 * \brief The kernel cache: in memory, and on disk as single files written atomically.
 *
 * Disk entry <dir>/<target>-<hash of key>.kbin =
 *   "IRKC2 <key bytes> <blob bytes> <checksum>\n" <key> <blob>
 * where the key is the whole cache key (target, compiler identity and flags, source) and the
 * checksum is the FNV-1a hash of key and blob. An entry is used only when the header parses
 * strictly, its sizes add up to the file's size, its key equals the wanted key and its
 * checksum matches; anything else is corrupt and is rebuilt, never an error for the caller.
 *
 * The checksum detects damage; it authenticates nothing (anyone able to write the file can
 * recompute it). Safety comes from PrivateDir: the directory and each entry must belong to
 * the effective user and be writable by nobody else, and entries must be regular files, or
 * they are ignored. A directory failing those checks is not used at all (one warning on
 * stderr) and modules then live in memory only: the compiler's own temporary directory is
 * private (mkdtemp) and modules are loaded from memory, so nothing else is needed.
 */
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <set>

#include "codegen/private_dir.h"
#include "ir/codegen.h"

namespace ir {
namespace {

// Entries are shared objects, program binaries or PTX of one graph: far below this.
constexpr size_t kMaxEntryBytes = size_t{256} << 20;
constexpr const char* kMagic = "IRKC2";

std::string DefaultDirectory() {
  const char* dir = std::getenv("IR_KERNEL_CACHE_DIR");
  if (dir != nullptr && *dir) return std::string(dir) == "off" ? "" : dir;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg) return std::string(xdg) + "/ir-kernels";
  const char* home = std::getenv("HOME");
  return home != nullptr && *home ? std::string(home) + "/.cache/ir-kernels" : "";
}

// Prints `message` on stderr the first time it is seen in this process.
void WarnOnce(const std::string& message) {
  static std::mutex mutex;
  static std::set<std::string> seen;
  std::lock_guard<std::mutex> lock(mutex);
  if (seen.insert(message).second) std::fprintf(stderr, "ir: warning: %s\n", message.c_str());
}

// Parses a decimal field of 1 to 10 digits (no sign, no spaces) at text[*pos].
bool ParseSize(const std::string& text, size_t* pos, size_t* value) {
  size_t start = *pos;
  *value = 0;
  while (*pos < text.size() && *pos - start < 10 && text[*pos] >= '0' && text[*pos] <= '9') {
    *value = *value * 10 + static_cast<size_t>(text[(*pos)++] - '0');
  }
  return *pos > start;
}

bool Expect(const std::string& text, size_t* pos, char c) {
  if (*pos >= text.size() || text[*pos] != c) return false;
  ++*pos;
  return true;
}

// The blob of a well-formed entry for `key`; false for anything else.
bool ParseEntry(const std::string& data, const std::string& key, std::string* blob) {
  size_t pos = std::string(kMagic).size();
  size_t key_size = 0, blob_size = 0;
  if (data.compare(0, pos, kMagic) != 0 || !Expect(data, &pos, ' ') || !ParseSize(data, &pos, &key_size) ||
      !Expect(data, &pos, ' ') || !ParseSize(data, &pos, &blob_size) || !Expect(data, &pos, ' ')) {
    return false;
  }
  const size_t kChecksumDigits = 16;
  if (data.size() < pos + kChecksumDigits + 1) return false;
  std::string checksum = data.substr(pos, kChecksumDigits);
  pos += kChecksumDigits;
  if (!Expect(data, &pos, '\n') || data.size() - pos != key_size + blob_size) return false;
  if (key_size != key.size() || data.compare(pos, key_size, key) != 0) return false;
  if (HashHex(data.substr(pos)) != checksum) return false;
  *blob = data.substr(pos + key_size);
  return true;
}

std::string FormatEntry(const std::string& key, const std::string& blob) {
  return StrCat(kMagic, " ", key.size(), " ", blob.size(), " ", HashHex(key + blob), "\n", key, blob);
}

// The cache directory, opened and checked; invalid when disabled or unsafe (warned once).
std::unique_ptr<PrivateDir> OpenDirectory(std::string* path) {
  *path = DefaultDirectory();
  if (path->empty()) return nullptr;
  std::string why;
  auto dir = std::make_unique<PrivateDir>(*path, &why);
  if (dir->valid()) return dir;
  WarnOnce(StrCat("not using kernel cache directory '", *path, "': ", why,
                  "; compiled kernels are kept in memory only (make it a directory of yours with mode 0700, ",
                  "or set IR_KERNEL_CACHE_DIR)"));
  return nullptr;
}

// The module of entry `name` when it is safe, whole and for `key`; null otherwise (counted).
std::shared_ptr<CompiledModule> LoadEntry(const PrivateDir& dir, const std::string& path, const std::string& name,
                                          const std::string& key, const KernelCompiler& compiler,
                                          KernelCacheStats* stats) {
  std::string data, why, blob;
  switch (dir.Read(name, kMaxEntryBytes, &data, &why)) {
    case PrivateDir::ReadResult::kMissing:
      return nullptr;
    case PrivateDir::ReadResult::kRefused:
      ++stats->refused_entries;
      WarnOnce(StrCat("ignoring kernel cache entry '", path, "/", name, "': ", why, "; it is rebuilt"));
      return nullptr;
    case PrivateDir::ReadResult::kRead:
      break;
  }
  if (ParseEntry(data, key, &blob)) {
    try {
      return compiler.Load(blob);
    } catch (const std::exception&) {
      // A blob the compiler cannot load is as corrupt as one with a bad checksum.
    }
  }
  ++stats->corrupt_entries;
  return nullptr;
}

}  // namespace

KernelCache& KernelCache::Global() {
  static KernelCache* cache = new KernelCache();
  return *cache;
}

std::string KernelCache::directory() const {
  std::string path;
  return OpenDirectory(&path) != nullptr ? path : "";
}

std::shared_ptr<CompiledModule> KernelCache::GetOrCompile(const std::string& target, const std::string& source) {
  const KernelCompiler& compiler = KernelCompiler::Get(target);
  std::string key = StrCat(target, "\n", compiler.Id(), "\n", source);
  std::string hash = HashHex(key);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = modules_.find(hash);
  if (it != modules_.end() && it->second.first == key) {
    ++stats_.memory_hits;
    return it->second.second;
  }
  std::string path;
  std::unique_ptr<PrivateDir> dir = OpenDirectory(&path);
  std::string name = StrCat(target.find('/') == std::string::npos ? target : HashHex(target), "-", hash, ".kbin");
  std::shared_ptr<CompiledModule> module = dir ? LoadEntry(*dir, path, name, key, compiler, &stats_) : nullptr;
  if (module != nullptr) {
    ++stats_.disk_hits;
  } else {
    std::string blob = compiler.Compile(source);
    ++stats_.compilations;
    if (dir) dir->Write(name, FormatEntry(key, blob));  // a failed write only costs a recompilation
    module = compiler.Load(blob);
  }
  modules_[hash] = {key, module};
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
