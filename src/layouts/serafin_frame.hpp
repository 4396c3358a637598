// The SERAFIN frame as the engine's layout (io/strategy.hpp): a rank's runs of consecutive
// nodes in each variable record. The writer gives its owned nodes and every variable, and
// rank 0 also holds the fixed runs (the time record, every record's markers); its frame is
// the file's. The reader gives the nodes it needs and the variables it reads (array k is
// variable vars[k]), and no fixed runs; its frame is those variables' values only, one
// segment and one part each (reading one variable reads none of the others' bytes; rank 0
// checks the records' markers apart). The values alone are also an HDF5 frame's (the hdf5
// strategy puts them at its chunks' addresses).
#pragma once
#include <cstdint>
#include <numeric>
#include <vector>

#include "core/byteorder.hpp"
#include "formats/serafin.hpp"
#include "io/strategy.hpp"

namespace anabranch::pio {

class SerafinFrame final : public FrameLayout {
 public:
  enum class Role { Writer, WriterOfFixed, Values };  // WriterOfFixed: the fixed runs too; Values: values only
  // nodes: 0-based, increasing, kept by reference.
  SerafinFrame(const serafin::Header& h, const serafin::Layout& l, const std::vector<std::int64_t>& nodes, Role role)
      : h_(h), l_(l), nodes_(nodes), fixed_(role == Role::WriterOfFixed), reader_(role == Role::Values), vars_(static_cast<std::size_t>(l.nvar)) {
    std::iota(vars_.begin(), vars_.end(), 0);
    for (std::size_t i = 0; i < nodes.size(); ++i)
      if (i == 0 || nodes[i] != nodes[i - 1] + 1) starts_.push_back(static_cast<std::int64_t>(i));
    starts_.push_back(static_cast<std::int64_t>(nodes.size()));
  }
  // The reader: the variables whose records the runs cover, in the arrays' order (default:
  // all). Returns whether they changed.
  bool set_variables(const std::vector<int>& vars) {
    if (vars == vars_) return false;
    vars_ = vars;
    return true;
  }

  int value_bytes() const override { return l_.real_bytes; }
  std::int64_t frame_bytes() const override {
    return reader_ ? static_cast<std::int64_t>(vars_.size()) * values() : l_.frame_offset(1) - l_.frame_offset(0);
  }
  std::pair<std::int64_t, std::int64_t> locate(std::int64_t frame, std::int64_t at) const override {
    if (!reader_) return {l_.frame_offset(frame) + at, frame_bytes() - at};
    const std::int64_t k = at / values(), in = at % values();
    return {l_.values_offset(frame, vars_[static_cast<std::size_t>(k)]) + in, values() - in};
  }
  std::int64_t parts() const override { return reader_ ? static_cast<std::int64_t>(vars_.size()) : 1; }
  // The time record, then a record's length (every marker holds it).
  void fixed_bytes(std::int64_t, double time, std::vector<unsigned char>& out) const override {
    out.clear();
    if (!fixed_) return;
    const int rs = l_.real_bytes;
    out.resize(static_cast<std::size_t>(12 + rs));
    store<std::int32_t>(out.data(), rs, h_.byte_order);
    serafin::encode_reals(&time, 1, h_.precision, h_.byte_order, out.data() + 4);
    store<std::int32_t>(out.data() + 4 + rs, rs, h_.byte_order);
    store<std::int32_t>(out.data() + 8 + rs, static_cast<std::int32_t>(l_.npoin * rs), h_.byte_order);
  }
  void for_each_run(const std::function<void(const Run&)>& f) const override {
    const int rs = l_.real_bytes;
    const std::int64_t frame0 = l_.frame_offset(0), marker = 8 + rs;
    if (fixed_) f({0, 8 + rs, Run::kFixed, 0});
    for (std::size_t k = 0; k < vars_.size(); ++k) {
      const std::int64_t values = reader_ ? static_cast<std::int64_t>(k) * this->values() : l_.values_offset(0, vars_[k]) - frame0;
      if (fixed_) f({values - 4, 4, Run::kFixed, marker});
      for (std::size_t s = 0; s + 1 < starts_.size(); ++s) {
        const std::int64_t i = starts_[s];
        f({values + nodes_[static_cast<std::size_t>(i)] * rs, starts_[s + 1] - i, static_cast<int>(k), i});
      }
      if (fixed_) f({values + l_.npoin * rs, 4, Run::kFixed, marker});
    }
  }

 private:
  std::int64_t values() const { return l_.npoin * l_.real_bytes; }  // a variable's values

  const serafin::Header& h_;
  const serafin::Layout& l_;
  const std::vector<std::int64_t>& nodes_;
  bool fixed_, reader_;
  std::vector<int> vars_;
  std::vector<std::int64_t> starts_;  // where runs of consecutive nodes start, then nodes_.size()
};

}  // namespace anabranch::pio
