// libFuzzer target: the .cli parser on arbitrary text.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "formats/boundary.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace anabranch;
  try {
    auto f = boundary::parse(std::string(reinterpret_cast<const char*>(data), size), "fuzz.cli");
    for (const auto& l : f.lines) (void)boundary::rewrite(l, l.n + 1, l.k);
    boundary::validate(f, 1000, "mesh");
  } catch (const Error&) {
  }
  return 0;
}
