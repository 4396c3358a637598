// null: writes nothing. For tests of the collective machinery and overhead measurements.
#include "io/strategy.hpp"

namespace anabranch::pio {
namespace {

class NullStrategy final : public Strategy {
 public:
  const char* name() const override { return "null"; }
  void open(const StrategySetup&) override {}
  void write(const EncodedFrame&) override {}
  void close() override {}
  int files_created(int) const override { return 0; }
};

}  // namespace

std::unique_ptr<Strategy> make_null_strategy() { return std::make_unique<NullStrategy>(); }

}  // namespace anabranch::pio
