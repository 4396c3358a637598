// The partitioner under mpiexec: slices of the mesh, shared records, the partition file, the quality.
#include "partition/distributed_util.hpp"

#include <unistd.h>

#include <charconv>

#include "core/error.hpp"
#include "core/outputs.hpp"

namespace anabranch::pio {

using namespace dist;

namespace dist {

// Reads the reals of `nodes` (sorted, 0-based) from a NPOIN-real record at `offset` (after
// its marker), to doubles; the record is read in chunks from each wanted node on, up to
// the last (a contiguous range reads that range, no more).
std::vector<double> read_reals_of(const serafin::Reader& r, std::int64_t offset, const std::vector<std::int32_t>& nodes) {
  const auto& h = r.header();
  const int rs = h.precision == Precision::Double ? 8 : 4;
  constexpr std::int64_t kChunk = std::int64_t{1} << 18;
  std::vector<double> out;
  out.reserve(nodes.size());
  std::vector<unsigned char> buf;
  for (auto it = nodes.begin(); it != nodes.end();) {
    const std::int64_t first = *it, count = std::min(kChunk, nodes.back() + 1 - first);
    buf.resize(static_cast<std::size_t>(count * rs));
    r.source().read_at(offset + first * rs, buf.data(), buf.size());
    for (; it != nodes.end() && *it < first + count; ++it) {
      const unsigned char* p = buf.data() + (*it - first) * rs;
      out.push_back(rs == 8 ? load<double>(p, h.byte_order) : static_cast<double>(load<float>(p, h.byte_order)));
    }
  }
  return out;
}

// Every rank's words, to every rank, in rank order.
std::vector<std::uint64_t> all_words(MPI_Comm comm, const std::vector<std::uint64_t>& mine) {
  const int size = comm_size(comm);
  int n = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(size)), displ(static_cast<std::size_t>(size) + 1, 0);
  check_mpi(MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, comm), "MPI_Allgather");
  for (int r = 0; r < size; ++r) displ[static_cast<std::size_t>(r) + 1] = displ[static_cast<std::size_t>(r)] + counts[static_cast<std::size_t>(r)];
  std::vector<std::uint64_t> all(static_cast<std::size_t>(displ.back()));
  check_mpi(MPI_Allgatherv(mine.data(), n, MPI_UINT64_T, all.data(), counts.data(), displ.data(), MPI_UINT64_T, comm), "MPI_Allgatherv");
  return all;
}

}  // namespace dist

SharedRecord::SharedRecord(MPI_Comm comm, std::int64_t n, const std::vector<std::int32_t>& names) : comm_(comm) {
  const int size = comm_size(comm);
  const Slices shares{n, size};
  std::vector<int> counts(static_cast<std::size_t>(size), 0);
  for (auto v : names) ++counts[static_cast<std::size_t>(shares.owner(v))];  // sorted: grouped by owner
  asked_ = exchange(comm, names, counts, &reply_counts_);
  // Each rank's names come sorted: their runs merged (a heap of one head per run), with no
  // array beside order_ (the names asked of a rank are its largest array here).
  std::vector<std::pair<std::size_t, std::size_t>> runs;  // (next, end) in asked_
  for (std::size_t src = 0, at = 0; src < reply_counts_.size(); ++src) {
    const auto end = at + static_cast<std::size_t>(reply_counts_[src]);
    if (at < end) runs.emplace_back(at, end);
    at = end;
  }
  auto later = [&](const std::pair<std::size_t, std::size_t>& x, const std::pair<std::size_t, std::size_t>& y) {
    return asked_[x.first] != asked_[y.first] ? asked_[x.first] > asked_[y.first] : x.first > y.first;
  };
  std::make_heap(runs.begin(), runs.end(), later);
  order_.reserve(asked_.size());
  while (!runs.empty()) {
    std::pop_heap(runs.begin(), runs.end(), later);
    auto& r = runs.back();
    order_.push_back(static_cast<std::uint32_t>(r.first++));
    if (r.first == r.second)
      runs.pop_back();
    else
      std::push_heap(runs.begin(), runs.end(), later);
  }
}

template <class T>
void SharedRecord::read_as(const serafin::Reader& r, std::int64_t offset, std::vector<T>& reply, std::vector<T>& values) const {
  reply.resize(asked_.size());
  collective(comm_, [&] {
    const auto& h = r.header();
    const int rs = h.precision == Precision::Double ? 8 : 4;
    constexpr std::int64_t kChunk = std::int64_t{1} << 18;
    std::vector<unsigned char> buf;
    for (std::size_t j = 0; j < order_.size();) {
      const std::int64_t first = asked_[order_[j]], count = std::min(kChunk, std::int64_t{asked_[order_.back()]} + 1 - first);
      buf.resize(static_cast<std::size_t>(count * rs));
      r.source().read_at(offset + first * rs, buf.data(), buf.size());
      for (; j < order_.size() && asked_[order_[j]] < first + count; ++j) {
        const unsigned char* p = buf.data() + (asked_[order_[j]] - first) * rs;
        reply[order_[j]] = static_cast<T>(rs == 8 ? load<double>(p, h.byte_order) : load<float>(p, h.byte_order));
      }
    }
  });
  exchange_into(comm_, reply, reply_counts_, values);
}

void SharedRecord::read(const serafin::Reader& r, std::int64_t offset, std::vector<double>& values) const {
  read_as<double>(r, offset, reply_, values);
}

std::vector<double> SharedRecord::read(const serafin::Reader& r, std::int64_t offset) const {
  std::vector<double> values, reply;
  read_as<double>(r, offset, reply, values);
  return values;
}

Coordinates SharedRecord::coordinates(const serafin::Reader& r, std::int64_t offset) const {
  if (r.header().precision == Precision::Double) return Coordinates(read(r, offset));
  std::vector<float> values, reply;
  read_as<float>(r, offset, reply, values);
  return Coordinates(std::move(values));
}

std::vector<std::uint64_t> exchange_words(MPI_Comm comm, const std::vector<std::vector<std::uint64_t>>& out) {
  std::vector<int> counts;
  std::vector<std::uint64_t> flat;
  for (const auto& o : out) {
    counts.push_back(static_cast<int>(o.size()));
    flat.insert(flat.end(), o.begin(), o.end());
  }
  return exchange(comm, flat, counts);
}

namespace dist {

void read_ikle_rows(const serafin::Reader& mesh, const MeshSlice& s, std::int64_t from, std::int64_t count, std::int32_t* out) {
  const auto& h = mesh.header();
  const std::int64_t row = 4 * h.ndp;
  constexpr std::int64_t kRows = std::int64_t{1} << 16;
  std::vector<unsigned char> buf;
  for (std::int64_t i = 0; i < count; i += kRows) {
    const std::int64_t n = std::min(kRows, count - i), at = mesh.ikle_offset() + 4 + (s.first + from + i) * row;
    buf.resize(static_cast<std::size_t>(n * row));
    mesh.source().read_at(at, buf.data(), buf.size());
    for (std::int64_t e = 0; e < n; ++e)
      for (int k = 0; k < s.ndp; ++k) {
        const auto v = load<std::int32_t>(buf.data() + e * row + 4 * k, h.byte_order);
        if (v < 1 || v > s.npoin)
          throw FormatError(mesh.name(), "IKLE", at + e * row + 4 * k,
                            "node " + std::to_string(v) + " outside 1.." + std::to_string(s.npoin));
        out[(i + e) * s.ndp + k] = v;
      }
  }
}

}  // namespace dist

MeshSlice read_mesh_slice(MPI_Comm comm, const serafin::Reader& mesh) {
  MeshSlice s;
  collective(comm, [&] {
    const auto& h = mesh.header();
    const int nplan = h.nplan();
    if (nplan > 1 && h.ndp != 6)
      throw UsageError(mesh.name() + ": a 3D mesh must be made of prisms (NDP 6), this one has NDP " + std::to_string(h.ndp));
    s.ndp = nplan > 1 ? 3 : h.ndp;
    s.nelem = nplan > 1 ? h.nelem / (nplan - 1) : h.nelem;
    s.npoin = h.npoin / nplan;
    const Slices slices{s.nelem, comm_size(comm)};
    const int rank = comm_rank(comm);
    s.first = slices.first(rank);
    const std::int64_t count = slices.first(rank + 1) - s.first;
    s.elements = count;
    s.ikle.resize(static_cast<std::size_t>(count * s.ndp));
    read_ikle_rows(mesh, s, 0, count, s.ikle.data());
  });
  return s;
}

std::vector<std::int32_t> read_weights_slice(MPI_Comm comm, const std::string& path, const MeshSlice& slice) {
  // A text of one integer per 2D element: each rank parses the numbers that start in its
  // share of the bytes (a number is at most a few bytes past the share's end), learns their
  // place from the ranks before, and sends them to the ranks whose slices hold them.
  const int size = comm_size(comm), rank = comm_rank(comm);
  std::vector<std::uint64_t> values;
  std::int64_t bad = -1;  // the first entry (counted in the share) that is not an integer
  std::int64_t file_bytes = 0;
  collective(comm, [&] {
    const FileSource src(path);  // read as an input: no output may replace it
    file_bytes = src.size();
    const Slices shares{file_bytes, size};
    const std::int64_t begin = shares.first(rank), end = shares.first(rank + 1);
    if (begin >= end) return;
    constexpr std::int64_t kTail = 32;  // longer than any number allowed: a longer one is refused anyway
    const std::int64_t from = std::max<std::int64_t>(begin - 1, 0), to = std::min(file_bytes, end + kTail);
    std::string text(static_cast<std::size_t>(to - from), '\0');
    src.read_at(from, text.data(), text.size());
    auto blank = [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; };
    for (std::int64_t at = begin; at < end; ++at) {
      const auto i = static_cast<std::size_t>(at - from);
      if (blank(text[i]) || (at > 0 && !blank(text[i - 1]))) continue;  // not where a number starts
      std::size_t j = i;
      while (j < text.size() && !blank(text[j])) ++j;
      long long v = 0;
      const char* first = text.data() + i + (text[i] == '+' ? 1 : 0);
      const auto [ptr, ec] = std::from_chars(first, text.data() + j, v);
      if (ec != std::errc() || ptr != text.data() + j) {
        if (bad < 0) bad = static_cast<std::int64_t>(values.size());
        v = 0;
      }
      values.push_back(static_cast<std::uint64_t>(v));
    }
  });
  const auto count = static_cast<std::int64_t>(values.size());
  std::int64_t before = 0, total = 0;
  MPI_Exscan(&count, &before, 1, MPI_INT64_T, MPI_SUM, comm);
  if (rank == 0) before = 0;  // MPI_Exscan leaves rank 0's undefined
  MPI_Allreduce(&count, &total, 1, MPI_INT64_T, MPI_SUM, comm);
  collective(comm, [&] {  // the first bad entry is the lowest rank's
    for (std::int64_t i = 0; i < count; ++i) {
      if (i == bad) throw FormatError(path + ": entry " + std::to_string(before + i + 1) + " is not an integer");
      const auto v = static_cast<long long>(values[static_cast<std::size_t>(i)]);
      if (v < 0 || v > 1000000000)
        throw FormatError(path + ": weight " + std::to_string(before + i + 1) + " = " + std::to_string(v) + " is out of range 0..1e9");
    }
  });
  collective(comm, [&] {
    if (total != slice.nelem)
      throw UsageError(path + ": " + std::to_string(total) + " weights for " + std::to_string(slice.nelem) + " (2D) elements");
  });
  // Entries [before, before + count) to the ranks whose slices hold them (in order).
  const Slices slices{slice.nelem, size};
  std::vector<int> counts(static_cast<std::size_t>(size), 0);
  for (std::int64_t i = 0; i < count; ++i) ++counts[static_cast<std::size_t>(slices.owner(before + i))];
  const auto got = exchange(comm, values, counts);
  return std::vector<std::int32_t>(got.begin(), got.end());
}

void write_partition_file(MPI_Comm comm, const std::string& path, const std::vector<std::int32_t>& slice_parts) {
  const int rank = comm_rank(comm);
  std::string text;
  text.reserve(slice_parts.size() * 4);
  char line[16];
  for (std::int32_t p : slice_parts) {
    auto r = std::to_chars(line, line + sizeof line - 1, p);
    *r.ptr++ = '\n';
    text.append(line, r.ptr);
  }
  std::int64_t bytes = static_cast<std::int64_t>(text.size()), offset = 0;
  MPI_Exscan(&bytes, &offset, 1, MPI_INT64_T, MPI_SUM, comm);
  if (rank == 0) offset = 0;
  long long pid = rank == 0 ? static_cast<long long>(::getpid()) : 0;
  MPI_Bcast(&pid, 1, MPI_LONG_LONG, 0, comm);
  const std::string temp = path + ".tmp." + std::to_string(pid);
  register_temporary(temp);
  MPI_File fh = MPI_FILE_NULL;
  try {
    collective(comm, [&] {
      if (rank == 0) refuse_open_input(path);
    });
    collective(comm, [&] {  // MPI_File_open is collective: nothing may throw on one rank before it
      const CreatingTemporary creating;
      const int rc = MPI_File_open(comm, temp.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
      if (rc != MPI_SUCCESS) throw IoError("cannot create " + path + ": " + mpi_error_text(rc));
    });
    collective(comm, [&] { write_at(fh, offset, text.data(), bytes, path); });
    MPI_File_close(&fh);
    collective(comm, [&] {
      if (rank != 0) return;
      refuse_open_input(path);
      if (std::rename(temp.c_str(), path.c_str()) != 0) throw IoError::from_errno("cannot rename " + temp + " to", path);
    });
  } catch (...) {
    if (fh != MPI_FILE_NULL) MPI_File_close(&fh);
    if (rank == 0) ::unlink(temp.c_str());
    release_temporary(temp);
    throw;
  }
  release_temporary(temp);
}

DistributedQuality distributed_quality(MPI_Comm comm, const MeshSlice& s, const std::vector<std::int32_t>& parts, int nparts,
                                       bool count_cut) {
  DistributedQuality q;
  std::vector<std::int64_t> per(static_cast<std::size_t>(nparts), 0);
  for (auto p : parts) ++per[static_cast<std::size_t>(p)];
  MPI_Allreduce(MPI_IN_PLACE, per.data(), nparts, MPI_INT64_T, MPI_SUM, comm);
  q.min_elems = s.nelem;
  for (auto c : per) {
    q.min_elems = std::min(q.min_elems, c);
    q.max_elems = std::max(q.max_elems, c);
    q.empty_parts += c == 0;
  }
  q.mean_elems = static_cast<double>(s.nelem) / nparts;
  q.imbalance = q.mean_elems > 0 ? static_cast<double>(q.max_elems) / q.mean_elems : 0;
  if (!count_cut) return q;
  std::int64_t cut = 0;
  edge_pairs(comm, s, parts, [&](const EdgeRecord& a, const EdgeRecord& b) { cut += a.part() != b.part(); });
  MPI_Allreduce(&cut, &q.edge_cut, 1, MPI_INT64_T, MPI_SUM, comm);
  return q;
}

}  // namespace anabranch::pio
