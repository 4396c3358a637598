// The engine's StretchedFrame: a layout's runs cut where the stretches (an HDF5 dataset's
// chunks) end, every byte of the frame located in its stretch, at that stretch's address.
#include <gtest/gtest.h>

#include <vector>

#include "io/strategy.hpp"

using namespace anabranch;
using pio::FrameLayout;
using pio::StretchedFrame;

namespace {

// Two arrays of 10 values of 4 bytes, one after the other; the rank holds values 2..8 of
// the first and 0..9 of the second.
class TwoArrays final : public FrameLayout {
 public:
  int value_bytes() const override { return 4; }
  std::int64_t frame_bytes() const override { return 80; }
  void for_each_run(const std::function<void(const pio::Run&)>& f) const override {
    f({8, 7, 0, 0});
    f({40, 10, 1, 0});
  }
  std::pair<std::int64_t, std::int64_t> locate(std::int64_t, std::int64_t at) const override { return {at, 80 - at}; }
};

}  // namespace

TEST(StretchedFrame, RunsAreCutWhereStretchesEndAndLocatedInTheirOwn) {
  const TwoArrays arrays;
  StretchedFrame frame(arrays, 20);  // stretches of 5 values: [0, 20), [20, 40), ...
  std::vector<pio::Run> runs;
  frame.for_each_run([&](const pio::Run& r) { runs.push_back(r); });
  const std::vector<std::vector<std::int64_t>> want = {{8, 3, 0, 0}, {20, 4, 0, 3}, {40, 5, 1, 0}, {60, 5, 1, 5}};
  ASSERT_EQ(runs.size(), want.size());
  for (std::size_t k = 0; k < runs.size(); ++k)
    EXPECT_EQ((std::vector<std::int64_t>{runs[k].at, runs[k].count, runs[k].array, runs[k].index}), want[k]) << k;
  frame.set(3, {1000, 5000, 3000, 7000});
  EXPECT_EQ(frame.locate(3, 0), std::make_pair(std::int64_t{1000}, std::int64_t{20}));
  EXPECT_EQ(frame.locate(3, 27), std::make_pair(std::int64_t{5007}, std::int64_t{13}));
  EXPECT_EQ(frame.locate(3, 79), std::make_pair(std::int64_t{7019}, std::int64_t{1}));
  EXPECT_THROW(frame.locate(2, 0), std::logic_error);  // only the frame set is located
}
