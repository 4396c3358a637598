// libFuzzer target: the SERAFIN reader on arbitrary bytes must end in success or an
// anabranch::Error, never a crash, a leak or undefined behaviour.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/error.hpp"
#include "formats/serafin.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace anabranch;
  try {
    auto src = std::make_shared<MemorySource>(data, size, "fuzz.slf");
    serafin::Reader r(src);
    r.read_mesh();
    std::vector<double> v(static_cast<std::size_t>(r.header().npoin));
    for (std::int64_t f = 0; f < r.frame_count() && f < 4; ++f) {
      r.read_time(f);
      for (int k = 0; k < r.header().nvar(); ++k) r.read_values(f, k, v.data());
    }
  } catch (const Error&) {
  }
  return 0;
}
