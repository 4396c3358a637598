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
    // cd_values[1], when given: the element's size, whose bytes HDF5's shuffle laid out as
    // that many streams; each ends a block of the frame (its own entropy tables), as
    // core/compression.cpp's encode_chunk does. Decoders read one frame either way.
    const std::size_t streams = cd_nelmts > 1 && cd_values[1] > 1 && nbytes % cd_values[1] == 0 ? cd_values[1] : 1;
    size = ZSTD_compressBound(nbytes) + 64 * streams;
    if (!(out = std::malloc(size))) return 0;
    static thread_local const std::unique_ptr<ZSTD_CCtx, std::size_t (*)(ZSTD_CCtx*)> context(ZSTD_createCCtx(), ZSTD_freeCCtx);
    ZSTD_CCtx* z = context.get();
    if (!z) {
      std::free(out);
      return 0;
    }
    // The frame carries its content's checksum: a damaged chunk fails to decode (in any
    // reader's zstd) instead of decoding to other values.
    ZSTD_CCtx_reset(z, ZSTD_reset_session_and_parameters);
    ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(z, ZSTD_c_checksumFlag, 1);
    ZSTD_CCtx_setPledgedSrcSize(z, nbytes);
    ZSTD_outBuffer dst{out, size, 0};
    const std::size_t each = nbytes / streams;
    for (std::size_t k = 0; k < streams; ++k) {
      ZSTD_inBuffer src{static_cast<const char*>(*buf) + k * each, k + 1 == streams ? nbytes - k * each : each, 0};
      const ZSTD_EndDirective mode = k + 1 == streams ? ZSTD_e_end : ZSTD_e_flush;
      std::size_t left = 0;
      do {
        left = ZSTD_compressStream2(z, &dst, &src, mode);
        if (ZSTD_isError(left) || (left != 0 && dst.pos == dst.size)) {
          std::free(out);
          return 0;
        }
      } while (left != 0);
    }
    used = dst.pos;
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
