#include "runtime/collective/transport_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace ir {
namespace collective {
namespace detail {
namespace {

/*! \brief One process: every collective is a copy (the sum over one rank is the value itself). */
class LocalTransport : public Transport {
 public:
  std::string name() const override { return "local"; }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  void AllreduceSum(void*, int64_t, DType) override {}
  void Allgatherv(const void* in, void* out, const std::vector<int64_t>& bytes_per_rank) override {
    IR_CHECK(bytes_per_rank.size() == 1) << "local transport: allgather over " << bytes_per_rank.size() << " ranks";
    if (bytes_per_rank[0] > 0 && in != out) std::memmove(out, in, static_cast<size_t>(bytes_per_rank[0]));
  }
  void Broadcast(void*, int64_t, int root) override {
    IR_CHECK(root == 0) << "local transport: broadcast from rank " << root << " of a group of size 1";
  }
  bool AllgatherWithin(const void* in, int64_t bytes, void* out, double) override {
    if (bytes > 0 && in != out) std::memmove(out, in, static_cast<size_t>(bytes));
    return true;
  }
  void Abort(int code) override { std::_Exit(code); }
};

// The directory libir.so was loaded from: plugins are found there and nowhere else.
std::string LibraryDirectory() {
  Dl_info info;
  IR_CHECK(dladdr(reinterpret_cast<void*>(&CreateTransport), &info) != 0 && info.dli_fname != nullptr)
      << "collective: cannot tell which file libir was loaded from (dladdr failed)";
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

// "openmpi, mpich" or "none": the transport plugins next to libir.
std::string BuiltPlugins(const std::string& dir) {
  std::string built;
  for (const char* impl : {"openmpi", "mpich"}) {
    std::string file = dir + "/libir_mpi_" + impl + ".so";
    if (access(file.c_str(), F_OK) == 0) built += std::string(built.empty() ? "" : ", ") + impl;
  }
  return built.empty() ? "none" : built;
}

std::unique_ptr<Transport> LoadPlugin(const std::string& impl) {
  const char* shown = impl == "openmpi" ? "Open MPI" : "MPICH";
  std::string dir = LibraryDirectory();
  std::string file = dir + "/libir_mpi_" + impl + ".so";
  IR_CHECK(access(file.c_str(), F_OK) == 0)
      << "this build has no " << shown << " transport: rebuild with -DIR_MPI=" << impl << " (or -DIR_MPI=auto with "
      << (impl == "openmpi" ? "libopenmpi-dev" : "libmpich-dev") << " installed); built: " << BuiltPlugins(dir)
      << " (looked for " << file << ")";
  // RTLD_GLOBAL: Open MPI's own components (dlopen'ed by libmpi) need libmpi's symbols global.
  // The handle is never closed: MPI libraries cannot be unloaded and loaded again.
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_GLOBAL);
  IR_CHECK(handle != nullptr) << "cannot load the " << shown << " transport " << file << ": " << dlerror();
  auto create = reinterpret_cast<IRCreateTransportFn>(dlsym(handle, IR_CREATE_TRANSPORT_SYMBOL));
  IR_CHECK(create != nullptr) << file << " exports no " << IR_CREATE_TRANSPORT_SYMBOL;
  char error[1024] = {};
  Transport* transport = create(error, sizeof(error));
  IR_CHECK(transport != nullptr) << "cannot start the " << shown << " transport: " << error;
  return std::unique_ptr<Transport>(transport);
}

bool HasEnv(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0';
}

}  // namespace

std::string ResolveTransportName(const std::string& requested) {
  std::string name = requested;
  if (name.empty() && HasEnv("IR_COLLECTIVE_TRANSPORT")) name = std::getenv("IR_COLLECTIVE_TRANSPORT");
  if (name.empty() || name == "mpi") {
    if (HasEnv("OMPI_COMM_WORLD_SIZE")) return "openmpi";
    if (HasEnv("PMI_SIZE")) return "mpich";
    IR_CHECK(name.empty()) << "collective transport \"mpi\": no MPI launcher started this process "
                           << "(neither OMPI_COMM_WORLD_SIZE nor PMI_SIZE is set); run it under mpirun";
    return "local";
  }
  IR_CHECK(name == "local" || name == "openmpi" || name == "mpich")
      << "unknown collective transport \"" << name << "\" (known: local, openmpi, mpich, mpi)";
  return name;
}

std::unique_ptr<Transport> CreateTransport(const std::string& name) {
  if (name == "local") return std::make_unique<LocalTransport>();
  return LoadPlugin(name);
}

}  // namespace detail
}  // namespace collective
}  // namespace ir
