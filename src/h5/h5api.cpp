#include "h5/h5api.hpp"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "core/error.hpp"
#include "h5/codecs.hpp"
#include "parallel/mpi_util.hpp"

namespace anabranch::pio::h5api {
namespace {

std::mutex g_mutex;
void* g_library = nullptr;  // never closed: HDF5 stays until the process ends

void* library() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_library) {
    // Local: HDF5's symbols stay out of the global scope, so an application linking
    // another HDF5 of its own keeps it.
    g_library = ::dlopen(ANABRANCH_HDF5_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!g_library) {
      const char* why = ::dlerror();
      throw IoError(std::string("cannot load the HDF5 library ") + ANABRANCH_HDF5_LIBRARY + ": " +
                    (why ? why : "unknown reason"));
    }
    before_finalize(&close_if_loaded);
    // The codecs HDF5 lacks, for every file this process writes or reads.
    if (void* zregister = ::dlsym(g_library, "H5Zregister"))
      h5::register_codecs(reinterpret_cast<herr_t (*)(const void*)>(zregister));
  }
  return g_library;
}

}  // namespace

void* symbol(const char* name) {
  void* lib = library();
  void* s = ::dlsym(lib, name);
  if (!s) throw IoError(std::string("the HDF5 library ") + ANABRANCH_HDF5_LIBRARY + " has no " + name);
  return s;
}

void load() { library(); }

void close_if_loaded() {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_library) return;
  }
  H5close();
}

}  // namespace anabranch::pio::h5api
