#include "h5/codecs.hpp"

#include <cstdlib>
#include <memory>

#ifdef ANABRANCH_HAVE_ZSTD
#include <zstd.h>
#endif

namespace anabranch::pio::h5 {

#ifdef ANABRANCH_HAVE_ZSTD
namespace {

// HDF5's filter callback: *buf (malloc'ed, *buf_size bytes, nbytes used) replaced by its
// encoding or decoding; the bytes it holds after, or 0 for a failure (HDF5 then fails the
// read or write naming the filter).
size_t zstd_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes, size_t* buf_size,
                   void** buf) {
  void* out = nullptr;
  size_t size = 0, used = 0;
  if (flags & H5Z_FLAG_REVERSE) {
    const unsigned long long whole = ZSTD_getFrameContentSize(*buf, nbytes);
    if (whole == ZSTD_CONTENTSIZE_ERROR || whole == ZSTD_CONTENTSIZE_UNKNOWN) return 0;
    size = static_cast<size_t>(whole);
    if (!(out = std::malloc(size ? size : 1))) return 0;
    used = ZSTD_decompress(out, size, *buf, nbytes);
    if (ZSTD_isError(used) || used != size) {
      std::free(out);
      return 0;
    }
  } else {
    const int level = cd_nelmts > 0 ? static_cast<int>(cd_values[0]) : ZSTD_CLEVEL_DEFAULT;
    size = ZSTD_compressBound(nbytes);
    if (!(out = std::malloc(size))) return 0;
    const std::unique_ptr<ZSTD_CCtx, std::size_t (*)(ZSTD_CCtx*)> z(ZSTD_createCCtx(), ZSTD_freeCCtx);
    if (!z) {
      std::free(out);
      return 0;
    }
    // The frame carries its content's checksum: a damaged chunk fails to decode (in any
    // reader's zstd) instead of decoding to other values.
    ZSTD_CCtx_setParameter(z.get(), ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(z.get(), ZSTD_c_checksumFlag, 1);
    used = ZSTD_compress2(z.get(), out, size, *buf, nbytes);
    if (ZSTD_isError(used)) {
      std::free(out);
      return 0;
    }
  }
  std::free(*buf);
  *buf = out;
  *buf_size = size;
  return used;
}

const H5Z_class2_t kZstdClass = {H5Z_CLASS_T_VERS, kZstdFilter, 1, 1, "zstd", nullptr, nullptr, zstd_filter};

}  // namespace

void register_codecs(herr_t (*zregister)(const void*)) { zregister(&kZstdClass); }
#else
void register_codecs(herr_t (*)(const void*)) {}
#endif

}  // namespace anabranch::pio::h5
