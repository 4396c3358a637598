#include "tools/compare.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <future>
#include <optional>

#include "core/byteorder.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "formats/partel.hpp"
#include "tools/merge.hpp"
#include "h5/results.hpp"

namespace anabranch::pio {
namespace {

std::string precision_words(const serafin::Header& h) {
  return h.precision == Precision::Double ? "double precision" : "single precision";
}

class FileCompared final : public Compared {
 public:
  explicit FileCompared(const std::string& path) : file_(ResultFile::open(path)), name_(path), times_(file_->times()) {}
  const std::string& name() const override { return name_; }
  std::string kind() const override {
    const auto& h = header();
    if (file_->format() == std::string("hdf5")) return "HDF5, " + precision_words(h);
    return "SERAFIN, " + precision_words(h) + (h.byte_order == ByteOrder::Big ? ", big-endian" : ", little-endian");
  }
  const serafin::Header& header() const override { return file_->header(); }
  std::int64_t frames() const override { return file_->frame_count(); }
  const std::vector<double>& times() const override { return times_; }
  Mesh mesh() const override { return file_->read_mesh(); }
  void read(std::int64_t frame, int var, double* out) const override {
    file_->read_values(frame, var, 0, header().npoin, out);
  }
  void prefetch(std::int64_t first, std::int64_t count) const override {
    if (const auto* r = file_->serafin_reader()) r->prefetch(first, count);
  }
  const serafin::Reader* stored() const override { return file_->serafin_reader(); }

 private:
  std::unique_ptr<ResultFile> file_;
  std::string name_;
  std::vector<double> times_;
};

// TELEMAC's per-rank files seen as the global file: every part stays open; a value of a
// node several parts hold is the last part's (as a merge writes it).
class PartsCompared final : public Compared {
 public:
  PartsCompared(const std::string& base, partel::PartSet set) : name_(base), set_(std::move(set)) {
    raise_open_file_limit();
    for (int p = 0; p < set_.size(); ++p) parts_.push_back(set_.open(p));
    const serafin::Header& h0 = parts_[0]->header();
    // NPOIN2: the largest global node any part holds (a partition covers every node).
    std::int64_t npoin2 = 0;
    for (const auto& part : parts_) {
      const auto knolg = part->read_ipobo();
      const std::int64_t np2 = part->header().npoin / part->header().nplan();
      for (std::int64_t i = 0; i < np2; ++i) npoin2 = std::max<std::int64_t>(npoin2, knolg[static_cast<std::size_t>(i)]);
    }
    header_ = h0;
    header_.npoin = npoin2 * h0.nplan();
    header_.nelem = 0;
    std::vector<char> covered(static_cast<std::size_t>(header_.npoin), 0);
    frames_ = parts_[0]->frame_count();
    for (int p = 0; p < set_.size(); ++p) {
      const auto& part = *parts_[static_cast<std::size_t>(p)];
      if (part.header().nvar() != h0.nvar())
        throw FormatError(set_.name(p), "record NBV1", 88,
                          std::to_string(part.header().nvar()) + " variables, " + set_.name(0) + " has " + std::to_string(h0.nvar()));
      gid_.push_back(part_nodes(part, set_.name(p), npoin2, h0.nplan()));
      for (auto g : gid_.back()) covered[static_cast<std::size_t>(g)] = 1;
      header_.nelem += part.header().nelem;
      frames_ = std::min(frames_, part.frame_count());
    }
    const auto missing = std::find(covered.begin(), covered.end(), 0);
    if (missing != covered.end())
      throw FormatError(base, "record IPOBO/KNOLG", 0,
                        "global node " + std::to_string(missing - covered.begin() + 1) + " is in none of the " +
                            std::to_string(set_.size()) + " parts");
    times_ = parts_[0]->read_times();
    times_.resize(static_cast<std::size_t>(frames_));
  }
  const std::string& name() const override { return name_; }
  std::string kind() const override {
    return std::to_string(set_.size()) + (set_.concatenated() ? " parts in a CONCAT file, SERAFIN, " : " per-rank SERAFIN files, ") +
           precision_words(header_);
  }
  const serafin::Header& header() const override { return header_; }
  bool per_rank() const override { return true; }
  std::int64_t frames() const override { return frames_; }
  const std::vector<double>& times() const override { return times_; }
  Mesh mesh() const override {
    Mesh m;
    m.npoin = header_.npoin;
    m.nelem = header_.nelem;
    m.ndp = header_.ndp;
    m.nplan = header_.nplan();
    m.x.assign(static_cast<std::size_t>(m.npoin), 0);
    m.y.assign(static_cast<std::size_t>(m.npoin), 0);
    for (std::size_t p = 0; p < parts_.size(); ++p) {
      const auto x = parts_[p]->read_x(), y = parts_[p]->read_y();
      for (std::size_t i = 0; i < gid_[p].size(); ++i) {
        m.x[static_cast<std::size_t>(gid_[p][i])] = x[i];
        m.y[static_cast<std::size_t>(gid_[p][i])] = y[i];
      }
    }
    return m;
  }
  void read(std::int64_t frame, int var, double* out) const override {
    for (std::size_t p = 0; p < parts_.size(); ++p) {
      buf_.resize(gid_[p].size());
      parts_[p]->read_values(frame, var, 0, static_cast<std::int64_t>(buf_.size()), buf_.data());
      for (std::size_t i = 0; i < buf_.size(); ++i) out[gid_[p][i]] = buf_[i];
    }
  }

 private:
  std::string name_;
  partel::PartSet set_;
  std::vector<std::unique_ptr<serafin::Reader>> parts_;
  std::vector<std::vector<std::int32_t>> gid_;
  serafin::Header header_;
  std::int64_t frames_ = 0;
  std::vector<double> times_;
  mutable std::vector<double> buf_;
};

// Values as stored at the lower of two precisions: a single-precision file against a
// double one compares what the single one can hold.
double at_precision(double v, bool single) { return single ? static_cast<double>(static_cast<float>(v)) : v; }

std::string num(double v) {
  char s[32];
  std::snprintf(s, sizeof s, "%.9g", v);
  return s;
}

// The first index where two arrays differ (after rounding to the lower precision), -1 if none.
template <class T>
std::int64_t first_difference(const std::vector<T>& a, const std::vector<T>& b, bool single) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i)
    if (at_precision(static_cast<double>(a[i]), single) != at_precision(static_cast<double>(b[i]), single))
      return static_cast<std::int64_t>(i);
  return a.size() == b.size() ? -1 : static_cast<std::int64_t>(n);
}

// True when both are SERAFIN files stored alike whose IKLE, IPOBO, X and Y records hold the
// same bytes (markers included).
bool same_mesh_records(const serafin::Reader* a, const serafin::Reader* b) {
  if (!a || !b) return false;
  const serafin::Header &ha = a->header(), &hb = b->header();
  if (ha.precision != hb.precision || ha.byte_order != hb.byte_order || ha.nelem != hb.nelem || ha.ndp != hb.ndp ||
      ha.npoin != hb.npoin)
    return false;
  const std::int64_t rs = real_size(ha.precision);
  const std::pair<std::int64_t, std::int64_t> records[] = {{a->ikle_offset(), b->ikle_offset()}, {a->ipobo_offset(), b->ipobo_offset()},
                                                            {a->x_offset(), b->x_offset()}, {a->y_offset(), b->y_offset()}};
  const std::int64_t sizes[] = {8 + ha.nelem * ha.ndp * 4, 8 + ha.npoin * 4, 8 + ha.npoin * rs, 8 + ha.npoin * rs};
  constexpr std::int64_t kPiece = std::int64_t{4} << 20;
  std::vector<unsigned char> pa(static_cast<std::size_t>(kPiece)), pb(static_cast<std::size_t>(kPiece));
  for (int k = 0; k < 4; ++k)
    for (std::int64_t at = 0; at < sizes[k]; at += kPiece) {
      const auto n = static_cast<std::size_t>(std::min(kPiece, sizes[k] - at));
      a->source().read_at(records[k].first + at, pa.data(), n);
      b->source().read_at(records[k].second + at, pb.data(), n);
      if (std::memcmp(pa.data(), pb.data(), n) != 0) return false;
    }
  return true;
}

void compare_headers(const Compared& a, const Compared& b, CompareReport& r) {
  const serafin::Header &ha = a.header(), &hb = b.header();
  auto differ = [&](const std::string& what, const std::string& va, const std::string& vb) {
    r.header_differences.push_back(what + ": " + va + " / " + vb);
  };
  if (ha.npoin != hb.npoin) differ("NPOIN", std::to_string(ha.npoin), std::to_string(hb.npoin));
  if (ha.nelem != hb.nelem) differ("NELEM", std::to_string(ha.nelem), std::to_string(hb.nelem));
  if (ha.ndp != hb.ndp) differ("NDP", std::to_string(ha.ndp), std::to_string(hb.ndp));
  if (ha.nplan() != hb.nplan()) differ("NPLAN", std::to_string(ha.nplan()), std::to_string(hb.nplan()));
  // The variables, in order, with their units.
  std::string va, vb;
  for (const auto& v : ha.variables) va += (va.empty() ? "" : ", ") + trimmed(v.name) + " [" + trimmed(v.unit) + "]";
  for (const auto& v : hb.variables) vb += (vb.empty() ? "" : ", ") + trimmed(v.name) + " [" + trimmed(v.unit) + "]";
  if (va != vb) differ("variables", va, vb);
  if (a.frames() != b.frames()) differ("frames", std::to_string(a.frames()), std::to_string(b.frames()));
  const bool single = ha.precision == Precision::Single || hb.precision == Precision::Single;
  const auto& ta = a.times();
  const auto& tb = b.times();
  const std::size_t nt = std::min(ta.size(), tb.size());
  for (std::size_t k = 0; k < nt; ++k)
    if (at_precision(ta[k], single) != at_precision(tb[k], single)) {
      differ("time of frame " + std::to_string(k), num(ta[k]), num(tb[k]));
      break;
    }
  if (a.per_rank() || b.per_rank()) {
    r.notes.push_back("IPARAM, IKLE and IPOBO not compared (a per-rank set holds its parts' own)");
  } else {
    for (int i = 0; i < 10; ++i)
      if (ha.iparam[static_cast<std::size_t>(i)] != hb.iparam[static_cast<std::size_t>(i)])
        differ("IPARAM(" + std::to_string(i + 1) + ")", std::to_string(ha.iparam[static_cast<std::size_t>(i)]),
               std::to_string(hb.iparam[static_cast<std::size_t>(i)]));
  }
  if (trimmed(ha.title.substr(0, 72)) != trimmed(hb.title.substr(0, 72)))
    r.notes.push_back("title: \"" + trimmed(ha.title.substr(0, 72)) + "\" / \"" + trimmed(hb.title.substr(0, 72)) + "\"");
  if (ha.date != hb.date) r.notes.push_back("date differs");
  if (ha.precision != hb.precision || ha.byte_order != hb.byte_order)
    r.notes.push_back("stored as " + a.kind() + " / " + b.kind());
  // The meshes, one after the other: coordinates at the lower precision, then connectivity
  // and IPOBO (files only). Two SERAFIN files stored alike with the same mesh bytes have
  // nothing to tell: their records are compared as stored, a piece at a time, without
  // holding either mesh.
  if (ha.npoin == hb.npoin && !same_mesh_records(a.stored(), b.stored())) {
    auto other = std::async(std::launch::async, [&] { return b.mesh(); });  // both read side by side
    Mesh ma;
    try {
      ma = a.mesh();
    } catch (...) {
      other.wait();
      throw;
    }
    {
      const Mesh mb = other.get();
      for (int c = 0; c < 2; ++c) {
        const auto& xa = c == 0 ? ma.x : ma.y;
        const auto& xb = c == 0 ? mb.x : mb.y;
        const std::int64_t i = first_difference(xa, xb, single);
        if (i >= 0)
          differ(std::string(c == 0 ? "X" : "Y") + " of node " + std::to_string(i + 1), num(xa[static_cast<std::size_t>(i)]),
                 num(xb[static_cast<std::size_t>(i)]));
      }
      if (!a.per_rank() && !b.per_rank()) {
        if (ha.nelem == hb.nelem && ha.ndp == hb.ndp) {
          const std::int64_t e = first_difference(ma.ikle, mb.ikle, false);
          if (e >= 0) differ("IKLE of element " + std::to_string(e / ha.ndp + 1), "", "");
        }
        const std::int64_t i = first_difference(ma.ipobo, mb.ipobo, false);
        if (i >= 0)
          differ("IPOBO of node " + std::to_string(i + 1), std::to_string(ma.ipobo[static_cast<std::size_t>(i)]),
                 std::to_string(mb.ipobo[static_cast<std::size_t>(i)]));
      }
    }
  }
  // "IKLE of element 7: / " reads oddly: drop the empty values.
  for (auto& d : r.header_differences)
    if (d.size() > 5 && d.compare(d.size() - 5, 5, ":  / ") == 0) d.resize(d.size() - 5);
}

void fold(Extreme& total, const Extreme& f, std::int64_t frame) {
  if (f.node_abs >= 0 && (total.node_abs < 0 || f.abs > total.abs)) {
    total.abs = f.abs;
    total.node_abs = f.node_abs;
    total.frame_abs = frame;
    total.a = f.a;
    total.b = f.b;
  }
  if (f.node_rel >= 0 && (total.node_rel < 0 || f.rel > total.rel)) {
    total.rel = f.rel;
    total.node_rel = f.node_rel;
    total.frame_rel = frame;
  }
  total.beyond += f.beyond;
  total.nan += f.nan;
}

// One pass without branches for the largest differences and the counts, then a scan for
// the first node where each largest one is. Pairs with a NaN take no part in the largest
// differences; a NaN on one side only is beyond any tolerance.
Extreme differences(const double* a, const double* b, std::int64_t n, Tolerance tol) {
  Extreme e;
  if (tol.range > 0) {  // A's range in this frame, its finite values
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (std::int64_t i = 0; i < n; ++i)
      if (std::isfinite(a[i])) lo = std::min(lo, a[i]), hi = std::max(hi, a[i]);
    if (hi >= lo) tol.atol += tol.range * (hi - lo);
  }
  auto rel_of = [](double d, double m) { return m > 0 ? d / m : 0.0; };
  double maxd = -1, maxr = -1;
  std::int64_t beyond = 0, nan = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double x = a[i], y = b[i];
    const bool xn = std::isnan(x), yn = std::isnan(y), both = !(xn || yn);
    const double d = std::fabs(x - y), m = std::max(std::fabs(x), std::fabs(y));
    const double dd = both ? d : -1.0, rr = both ? rel_of(d, m) : -1.0;
    maxd = dd > maxd ? dd : maxd;
    maxr = rr > maxr ? rr : maxr;
    nan += xn != yn;
    beyond += (xn != yn) || (both && d > tol.atol + tol.rtol * m);
  }
  e.beyond = beyond;
  e.nan = nan;
  if (maxd < 0) return e;  // every pair has a NaN
  e.abs = maxd;
  e.rel = maxr;
  for (std::int64_t i = 0; i < n && (e.node_abs < 0 || e.node_rel < 0); ++i) {
    const double x = a[i], y = b[i];
    if (std::isnan(x) || std::isnan(y)) continue;
    const double d = std::fabs(x - y);
    if (e.node_abs < 0 && d == maxd) {
      e.node_abs = i;
      e.a = x;
      e.b = y;
    }
    if (e.node_rel < 0 && rel_of(d, std::max(std::fabs(x), std::fabs(y))) == maxr) e.node_rel = i;
  }
  return e;
}

// Stored values (the file's precision and byte order) as doubles.
void decode(const unsigned char* in, std::int64_t n, const serafin::Header& h, double* out) {
  const bool swap = h.byte_order != native_byte_order();
  if (h.precision == Precision::Single) {
    for (std::int64_t i = 0; i < n; ++i) {
      std::uint32_t w;
      std::memcpy(&w, in + 4 * i, 4);
      if (swap) w = bswap(w);
      float f;
      std::memcpy(&f, &w, 4);
      out[i] = f;
    }
  } else {
    for (std::int64_t i = 0; i < n; ++i) {
      std::uint64_t w;
      std::memcpy(&w, in + 8 * i, 8);
      if (swap) w = bswap(w);
      std::memcpy(out + i, &w, 8);
    }
  }
}

// The differences of two arrays with the same bits: none; the first value that is a
// number is where the largest (zero) difference lies, as differences() finds it.
Extreme no_differences(const unsigned char* in, std::int64_t n, const serafin::Header& h) {
  Extreme e;
  const int rs = real_size(h.precision);
  for (std::int64_t i = 0; i < n; ++i) {
    double x;
    decode(in + i * rs, 1, h, &x);
    if (std::isnan(x)) continue;
    e.node_abs = e.node_rel = i;
    e.a = e.b = x;
    break;
  }
  return e;
}

}  // namespace

std::string variable_key(const std::string& name) {
  std::string t = trimmed(name);
  for (char& c : t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return t;
}

std::unique_ptr<Compared> Compared::open(const std::string& spec) {
  if (file_exists(spec)) return std::make_unique<FileCompared>(spec);
  std::optional<partel::PartSet> set;
  try {
    set.emplace(spec);
  } catch (const IoError&) {
    throw IoError(spec + ": no such file, nor per-rank files " + spec + "NNNNN-IIIII or " + spec + "-CONCAT");
  }
  return std::make_unique<PartsCompared>(spec, std::move(*set));
}

CompareReport compare(const Compared& a, const Compared& b, const CompareOptions& o) {
  CompareReport r;
  const serafin::Header &ha = a.header(), &hb = b.header();
  // Tolerances and the variable list name variables of the files.
  auto known = [&](const std::string& name) {
    for (const auto* h : {&ha, &hb})
      for (const auto& v : h->variables)
        if (variable_key(v.name) == name) return true;
    return false;
  };
  for (const auto& [name, tol] : o.per_var)
    if (!known(name)) throw UsageError("a tolerance for '" + name + "', a variable neither " + a.name() + " nor " + b.name() + " has");
  for (const auto& name : o.variables)
    if (!known(name)) throw UsageError("variable '" + name + "': neither " + a.name() + " nor " + b.name() + " has it");
  auto chosen = [&](const std::string& name) {
    return o.variables.empty() || std::find(o.variables.begin(), o.variables.end(), name) != o.variables.end();
  };
  const std::int64_t common = std::min(a.frames(), b.frames());
  std::vector<std::int64_t> frames = o.frames;
  if (frames.empty())
    for (std::int64_t k = 0; k < common; ++k) frames.push_back(k);
  for (auto k : frames)
    if (k < 0 || k >= common)
      throw UsageError("frame " + std::to_string(k) + " requested: " + a.name() + " has " + std::to_string(a.frames()) +
                       " frames, " + b.name() + " " + std::to_string(b.frames()));
  if (!o.values_only) compare_headers(a, b, r);
  // The variables both have, in A's order.
  std::vector<std::pair<int, int>> pairs;
  for (int i = 0; i < ha.nvar(); ++i)
    for (int j = 0; j < hb.nvar(); ++j)
      if (variable_key(ha.variables[static_cast<std::size_t>(i)].name) == variable_key(hb.variables[static_cast<std::size_t>(j)].name) &&
          chosen(variable_key(ha.variables[static_cast<std::size_t>(i)].name))) {
        pairs.emplace_back(i, j);
        VariableDiff v;
        v.name = trimmed(ha.variables[static_cast<std::size_t>(i)].name);
        const auto t = o.per_var.find(variable_key(v.name));
        v.tol = t != o.per_var.end() ? t->second : o.all;
        v.frame_numbers = frames;
        r.variables.push_back(std::move(v));
        break;
      }
  if (pairs.empty() && o.values_only && ha.nvar() + hb.nvar() > 0)
    r.header_differences.push_back("no variable in common");
  r.values_compared = ha.npoin == hb.npoin;
  if (!r.values_compared && o.values_only)
    r.header_differences.push_back("NPOIN: " + std::to_string(ha.npoin) + " / " + std::to_string(hb.npoin));
  if (r.values_compared) {
    // A pipeline of steps (one variable of one frame): while the differences of step k are
    // computed, one thread per file reads step k + 1 into the other pair of buffers. Two
    // SERAFIN files stored alike are read as stored: a step whose bytes are the same has no
    // difference, and only a step that differs is decoded.
    const auto n = static_cast<std::size_t>(ha.npoin);
    const std::size_t steps = frames.size() * pairs.size();
    const serafin::Reader *sa = a.stored(), *sb = b.stored();
    const bool stored = sa && sb && ha.precision == hb.precision && ha.byte_order == hb.byte_order;
    const std::size_t rs = static_cast<std::size_t>(real_size(ha.precision));
    std::vector<double> va[2], vb[2];
    std::vector<unsigned char> ea[2], eb[2];
    for (int s = 0; s < 2; ++s) {
      if (stored) {
        ea[s].resize(n * rs), eb[s].resize(n * rs);  // decoded buffers only once a step differs
      } else {
        va[s].resize(n), vb[s].resize(n);
      }
    }
    std::future<void> ra[2], rb[2];
    auto start = [&](std::size_t k) {
      const std::int64_t f = frames[k / pairs.size()];
      const auto& [i, j] = pairs[k % pairs.size()];
      if (k % pairs.size() == 0 && k / pairs.size() + 1 < frames.size() && frames[k / pairs.size() + 1] == f + 1) {
        a.prefetch(f + 1, 1);
        b.prefetch(f + 1, 1);
      }
      const std::size_t s = k % 2;
      if (stored) {
        ra[s] = std::async(std::launch::async, [&, f, i = i, s] { sa->read_encoded(f, i, 0, ha.npoin, ea[s].data()); });
        rb[s] = std::async(std::launch::async, [&, f, j = j, s] { sb->read_encoded(f, j, 0, hb.npoin, eb[s].data()); });
      } else {
        ra[s] = std::async(std::launch::async, [&, f, i = i, s] { a.read(f, i, va[s].data()); });
        rb[s] = std::async(std::launch::async, [&, f, j = j, s] { b.read(f, j, vb[s].data()); });
      }
    };
    try {
      if (steps > 0) start(0);
      for (std::size_t k = 0; k < steps; ++k) {
        const std::size_t s = k % 2;
        ra[s].get();
        rb[s].get();
        if (k + 1 < steps) start(k + 1);
        VariableDiff& d = r.variables[k % pairs.size()];
        if (stored && std::memcmp(ea[s].data(), eb[s].data(), n * rs) == 0) {
          d.frames.push_back(no_differences(ea[s].data(), ha.npoin, ha));
        } else {
          if (stored) {
            va[s].resize(n), vb[s].resize(n);
            decode(ea[s].data(), ha.npoin, ha, va[s].data());
            decode(eb[s].data(), hb.npoin, hb, vb[s].data());
          }
          d.frames.push_back(differences(va[s].data(), vb[s].data(), ha.npoin, d.tol));
        }
        fold(d.total, d.frames.back(), frames[k / pairs.size()]);
        r.values += ha.npoin;
        if (o.progress) o.progress(static_cast<std::int64_t>(k + 1), static_cast<std::int64_t>(steps));
      }
    } catch (...) {
      for (auto* w : {&ra[0], &ra[1], &rb[0], &rb[1]})
        if (w->valid()) w->wait();
      throw;
    }
  }
  // Where the largest differences are.
  bool any = false;
  for (const auto& v : r.variables) any = any || (v.total.node_abs >= 0 && v.total.abs > 0);
  if (any) {
    const Mesh m = a.mesh();
    auto place = [&](Extreme& e) {
      if (e.node_abs < 0) return;
      e.x = m.x[static_cast<std::size_t>(e.node_abs)];
      e.y = m.y[static_cast<std::size_t>(e.node_abs)];
    };
    for (auto& v : r.variables) {
      place(v.total);
      for (auto& f : v.frames) place(f);
    }
  }
  bool zero = r.values_compared, within = r.values_compared;
  for (const auto& v : r.variables) {
    zero = zero && v.total.abs == 0 && v.total.nan == 0;
    within = within && v.total.beyond == 0;
  }
  const bool header_same = r.header_differences.empty();
  r.identical = header_same && zero;
  r.equal = header_same && within;
  return r;
}

BlockDiffReport compare_block_files(const BlockFileInfo& a, const BlockFileInfo& b,
                                    const std::function<std::pair<double, double>(const std::string&)>& tolerance) {
  BlockDiffReport r;
  if (a.blocks.size() != b.blocks.size())
    r.differences.push_back("blocks: " + std::to_string(a.blocks.size()) + " / " + std::to_string(b.blocks.size()));
  for (std::size_t k = 0; k < std::min(a.blocks.size(), b.blocks.size()); ++k)
    if (a.blocks[k].id != b.blocks[k].id || a.blocks[k].dims != b.blocks[k].dims) {
      r.differences.push_back("block " + std::to_string(k + 1) + ": id " + std::to_string(a.blocks[k].id) + " " + std::to_string(a.blocks[k].dims[0]) +
                              "x" + std::to_string(a.blocks[k].dims[1]) + "x" + std::to_string(a.blocks[k].dims[2]) + " / id " +
                              std::to_string(b.blocks[k].id) + " " + std::to_string(b.blocks[k].dims[0]) + "x" + std::to_string(b.blocks[k].dims[1]) +
                              "x" + std::to_string(b.blocks[k].dims[2]));
      break;
    }
  if (a.frames() != b.frames()) r.differences.push_back("frames: " + std::to_string(a.frames()) + " / " + std::to_string(b.frames()));
  for (std::int64_t f = 0; f < std::min(a.frames(), b.frames()); ++f)
    if (a.times[static_cast<std::size_t>(f)] != b.times[static_cast<std::size_t>(f)]) {
      r.differences.push_back("time of frame " + std::to_string(f) + ": " + std::to_string(a.times[static_cast<std::size_t>(f)]) + " / " +
                              std::to_string(b.times[static_cast<std::size_t>(f)]));
      break;
    }
  if (a.variables != b.variables) {
    std::string x, y;
    for (const auto& v : a.variables) x += (x.empty() ? "" : ",") + v;
    for (const auto& v : b.variables) y += (y.empty() ? "" : ",") + v;
    r.differences.push_back("variables: " + x + " / " + y);
  }
  const bool same_grid = r.differences.empty() || (a.blocks.size() == b.blocks.size() &&
                                                    std::equal(a.blocks.begin(), a.blocks.end(), b.blocks.begin(), [](const BlockShape& x, const BlockShape& y) {
                                                      return x.id == y.id && x.dims == y.dims;
                                                    }));
  std::ifstream ia(a.path, std::ios::binary), ib(b.path, std::ios::binary);
  if (!ia) throw IoError::from_errno("cannot open", a.path);
  if (!ib) throw IoError::from_errno("cannot open", b.path);
  std::vector<double> x, y;
  bool identical = r.differences.empty();
  for (int va = 0; va < a.nvar(); ++va) {
    const auto it = std::find(b.variables.begin(), b.variables.end(), a.variables[static_cast<std::size_t>(va)]);
    if (it == b.variables.end()) continue;
    const int vb = static_cast<int>(it - b.variables.begin());
    BlockDiff d;
    d.variable = a.variables[static_cast<std::size_t>(va)];
    std::tie(d.atol, d.rtol) = tolerance(d.variable);
    if (!same_grid) {
      r.variables.push_back(d);
      continue;
    }
    for (std::int64_t f = 0; f < std::min(a.frames(), b.frames()); ++f)
      for (std::size_t blk = 0; blk < a.blocks.size(); ++blk) {
        read_block_array(a, f, blk, va, x, &ia);
        read_block_array(b, f, blk, vb, y, &ib);
        for (std::size_t n = 0; n < x.size(); ++n) {
          const double p = x[n], q = y[n];
          const bool pn = std::isnan(p), qn = std::isnan(q);
          const double diff = std::fabs(p - q), m = std::max(std::fabs(p), std::fabs(q));
          if (pn != qn || (!pn && diff > d.atol + d.rtol * m)) ++d.beyond;
          if (p != q && !(pn && qn)) identical = false;
          if (!pn && !qn && diff > d.abs) {
            const auto& dims = a.blocks[blk].dims;
            const auto idx = static_cast<std::int64_t>(n);
            d.abs = diff;
            d.frame = f;
            d.block = a.blocks[blk].id;
            d.at = {idx % dims[0], (idx / dims[0]) % dims[1], idx / (dims[0] * dims[1])};
            d.a = p;
            d.b = q;
          }
          if (!pn && !qn && m > 0) d.rel = std::max(d.rel, diff / m);
        }
        r.values += static_cast<std::int64_t>(x.size());
      }
    r.variables.push_back(d);
  }
  r.identical = identical;
  r.equal = r.differences.empty() && std::all_of(r.variables.begin(), r.variables.end(), [](const BlockDiff& d) { return d.beyond == 0; });
  return r;
}

}  // namespace anabranch::pio
