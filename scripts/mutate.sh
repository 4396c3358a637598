#!/usr/bin/env bash
# Mutation check: does the test suite catch small deliberate bugs in core code?
#
#   bash scripts/mutate.sh --changed BASE [--count N] [--seed S] [--list]
#                                          # unbiased mutants on the lines changed since BASE
#                                          # (universalmutator's rules; scripts/mutate_changed.py)
#
# The list below is the named mutants: each written by hand for a behaviour a user relies on.
#   bash scripts/mutate.sh                 # every mutation below
#   bash scripts/mutate.sh ownership-swapped refine-3d-plane0   # some of them
#   MUTATE_TESTS='mpi_writer|cli' bash scripts/mutate.sh ...    # a ctest -R regex
#   MUTATE_QUICK=1 bash scripts/mutate.sh   # only the tests each mutation names (a first look)
#
# Each mutation is applied to a scratch copy of the working tree (built once in
# build-mutate/, next to build/), the tree is rebuilt, the suite runs (ctest, all but the
# pip-install and consumer builds, which test packaging, not behaviour), and the mutation is
# reported caught (some test failed) or missed. The tests a mutation names run first; when
# they all pass, the whole suite runs. The copy is restored after each one. Needs
# `bash scripts/setup.sh --test` first (for the test virtual environment). Exit status: the
# number of mutations missed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [[ ${1:-} == --changed ]]; then
  shift
  [[ -x $root/build/venv/bin/python ]] || { echo "mutate: run bash scripts/setup.sh --test first" >&2; exit 2; }
  exec "$root/build/venv/bin/python" "$root/scripts/mutate_changed.py" "$@"
fi
work=${MUTATE_DIR:-$root/build-mutate}
tests_regex=${MUTATE_TESTS:-}

# name # file # text to replace (exact; \n: a line end) # replacement # the tests that should catch it first
# (a ctest -R regex, or py:ARGS for pytest: test files and -k) # the behaviour it breaks
mutations=$(cat <<'EOF'
dual-graph-later-list-skipped#src/partition/partitioner.cpp#for (int j = k + 1; j < ndp && !seen && !again; ++j) again#for (int j = k + 2; j < ndp && !seen && !again; ++j) again#unit#the dual graph misses the neighbours across an element's consecutive nodes
section-disc-too-small#src/partition/distributed_cases.cpp#(y - centre[j].second) * (y - centre[j].second) <= r2[j]) {#(y - centre[j].second) * (y - centre[j].second) <= 0.25 * r2[j]) {#py:test_partition_parallel.py -k case_files#the ranks index too few elements around a section's walk
view-marker-long#src/h5/vtkhdf.cpp#store<std::int32_t>(marker, static_cast<std::int32_t>(r.bytes), in_.header().byte_order);#store<std::int32_t>(marker, static_cast<std::int32_t>(r.bytes + 4), in_.header().byte_order);#py:test_partition_parallel.py -k hdf5#an HDF5 mesh read as SERAFIN gets wrong record markers
stream-window-overlaps#src/formats/fortran_text.cpp#  next_ += static_cast<std::int64_t>(n);#  next_ += static_cast<std::int64_t>(n) - 1;#unit#a streamed text file repeats a byte at every window
case-nodes-local-0#src/partition/distributed_write.cpp#static_cast<std::uint64_t>(l + 1)});#static_cast<std::uint64_t>(l)});#py:test_partition_parallel.py -k case_files#sections and weirs split on the ranks name 0-based local nodes
ownership-swapped#src/io/ownership.cpp#o = highest ? std::max(o, r) : std::min(o, r);#o = highest ? std::min(o == -1 ? size : o, r) : (o == size ? r : std::max(o, r));#mpi_writer#the lowest and highest rules swapped
merge-first-holder-wins#src/tools/merge.cpp#for (const auto g : parts[k].gid) last[static_cast<std::size_t>(g)] = static_cast<std::int32_t>(k);#for (const auto g : parts[k].gid) if (last[static_cast<std::size_t>(g)] < 0) last[static_cast<std::size_t>(g)] = static_cast<std::int32_t>(k);#py:test_merge_split.py -k large_frames#merge alone takes an interface node from the first part holding it, not the last
info-first-of-later-half#src/cli/cmd_info.cpp#  if (out.count == 0) {\n    out.record = second.record;#  if (second.count > 0) {\n    out.record = second.record;#py:test_info.py -k both_halves#info --check names the later half's first non-finite value, not the file's first
fpp-x-as-y#src/layouts/writer.cpp#local_mesh_.npoin = nlocal_;#local_mesh_.npoin = nlocal_; local_mesh_.x = local_mesh_.y;#mpi_writer#file-per-process parts get Y as X
refine-3d-plane0#src/grid/refine.cpp#const T* src = in + p * n2;#const T* src = in;#py:test_generate_refine.py#refine gives every plane the first plane's values
hints-dropped#src/io/shared_file.cpp#MPI_MODE_CREATE | MPI_MODE_WRONLY, setup.info, &fh);#MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);#mpi_writer#MPI-IO hints never reach the file
short-write-ignored#src/parallel/mpi_util.cpp#if (count == MPI_UNDEFINED || count >= asked) return;#return;#py:test_faults.py#a short MPI-IO write (full disk) passes
size-check-off#src/io/shared_file.cpp#if (size != expected)#if (false)#py:test_faults.py#a shared file shorter than its frames passes at close
wedge-serafin-order#src/formats/vtu.cpp#static const int wedge[6] = {0, 2, 1, 3, 5, 4};#static const int wedge[6] = {0, 1, 2, 3, 4, 5};#py:-k vtu#VTK wedges inside out
signal-cleanup-off#src/core/outputs.cpp#for (const auto& t : temporaries()) remove_with_companions(t);#(void)0;#py:test_faults.py -k signal#a signal leaves temporaries
write-behind-off#src/core/io.cpp#if (written_ - behind_ < (all ? 1 : kStep)) return;#if (written_ - behind_ < (all ? 1 : kStep) || true) return;#py:test_merge_split.py -k written_behind#outputs left in memory until the tool ends, not written behind
commit-not-whole#src/core/outputs.cpp#  const CreatingTemporary whole;  // a signal's sweep waits for the last rename\n#\n#py:test_faults.py -k renames#a signal between the renames of a set of outputs leaves a part of the set
section-lowest-part#src/formats/partel_extras.cpp#if (where.local(b, p) > 0) to = p;#if (where.local(b, p) > 0 && to < 0) to = p;#py:test_partition.py -k highest_common_part#a section segment on a part boundary goes to the lowest common part
diff-asymmetric#src/tools/compare.cpp#m = std::max(std::fabs(x), std::fabs(y));#m = std::fabs(x);#py:test_diff.py#diff's relative tolerance depends on which file comes first
nodes-not-emulated#src/parallel/topology.cpp#if (emulated > 1) {#if (false) {#nodes#emulated nodes are one node: the inter-node paths untested
restart-reads-parts#integrations/telemac/anabranch_telemac.f#IF(NF.EQ.0) MINE = 1#MINE = 0#py:test_telemac_integration.py#a continued TELEMAC run does not read the one file
hdf5-short-dataset#src/h5/vtkhdf.cpp#if (have < needed)#if (false)#py:test_hdf5.py#a cut HDF5 dataset reads as fewer frames
title-d-suffix#src/formats/serafin.cpp#suffix.back() != 'D'#suffix != "SERAFIND"#py:test_info.py#a title ending in D is rewritten
merged-owner-lowest#src/tools/merge.cpp#options.owner_highest = true;  // gretel's rule#options.owner_highest = false;  // gretel's rule#py:test_merged_writer.py#a file written during the run takes the lowest rank's interface values, not the merge's
owned-run-shifted#src/io/ownership.cpp#encode_words<R>(in + local[i], #encode_words<R>(in + local[i] + 1, #mpi_writer#a run of owned values encoded from one place on
output-is-input#src/core/io.cpp#  if (::stat(path.c_str(), &st) != 0) return;\n  std::lock_guard<std::mutex> lock(inputs_mu);#  return;\n  std::lock_guard<std::mutex> lock(inputs_mu);#py:test_output_is_input.py#an output may replace an input
error-no-offset#src/core/error.cpp#" at byte "#" at "#unit#errors no longer name the byte offset
bswap64-off#src/core/byteorder.cpp#    v = __builtin_bswap64(v);\n#\n#py:test_merge_split.py#double-precision values not byte-swapped
extrude-flat#src/grid/mesh.cpp#+ (l + 1) * np);#+ l * np);#py:test_partition.py -k 3d#a 2D part extruded to 3D gets flat prisms
edge-cut-same#src/grid/plan.cpp#cut[i].second != cut[i + 1].second#cut[i].second == cut[i + 1].second#unit#the edge cut counts the faces inside parts
progress-every-update#src/core/progress.cpp#if (decile == last_decile_) return;#(void)last_decile_;#py:test_progress.py#progress in a log prints a line per update, not per 10%
provenance-crc-upper#src/core/provenance.cpp#"%08x"#"%08X"#py:test_hdf5.py#the inputs' CRC-32 in upper case
epart-part-nparts#src/formats/epart.cpp#else if (value >= nparts)#else if (value > nparts)#py:test_part_global.py#a partition file naming part P (of 0..P-1) accepted
blocks-negative-cells#src/blockformats/blocks.cpp#c[a].get<std::int64_t>() < 0)#c[a].get<std::int64_t>() < -1)#unit#a block of -1 cells accepted
fortran-f-point#src/formats/fortran_text.cpp#if (d == k) f += '.';#(void)0;#unit#Fortran F format without its decimal point
cli-node-beyond#src/formats/boundary.cpp#if (l.n < 1 || l.n > npoin)#if (l.n < 1)#unit#a boundary line naming a node beyond the mesh accepted
partel-iseg-next#src/formats/partel.cpp#      b.iseg = n + 1;#      b.iseg = n;#py:test_telemac_v8.py#partel's ISEG names the wrong next boundary node
sfc-x-for-y#src/partition/partitioner.cpp#(cy - y0) * scale#(cx - x0) * scale#unit#the Hilbert curve sees only X: strips, not compact parts
balance-cut-inverted#src/partition/balance.cpp#if (proc[f.a] != proc[f.b]) ev.cut += f.cells;#if (proc[f.a] == proc[f.b]) ev.cut += f.cells;#unit#balance reports the faces inside a process as cut
hints-no-equals#src/parallel/hints.cpp#if (eq == std::string::npos || eq == 0) throw#if (eq == 0) throw#mpi_writer#an MPI-IO hint without = accepted
fpp-first-variable#src/io/strategy_file_per_process.cpp#frame.local_values->data() + v * bytes#frame.local_values->data()#mpi_writer#file-per-process parts repeat the first variable
independent-stage-gap#src/io/strategy_independent.cpp#if (used_ > 0 && (at != start_ + used_ || used_ + n > capacity())) flush();#if (used_ > 0 && (at < start_ + used_ || used_ + n > capacity())) flush();#mpi_writer#the independent stage appends a run that does not follow the last one (written at the wrong place)
part-global-node-range#src/partition/part_global.cpp#if (v < 1 || v > h.npoin)#if (v < 1)#py:test_part_global.py#a geometry IKLE node beyond NPOIN read by a part
fpp-reader-pick#src/layouts/reader_file_per_process.cpp#whole_.data() + pick_[static_cast<std::size_t>(i)] * rs_#whole_.data() + i * rs_#py:test_reader.py -k asked_in_their_order#reading parts returns the first nodes, not those asked
serafin-frame-variable-order#src/layouts/serafin_frame.hpp#l_.values_offset(0, vars_[k])#l_.values_offset(0, static_cast<int>(k))#py:test_reader.py#the SERAFIN reader reads the k-th variable, not the k-th asked
reader-markers-unchecked#src/layouts/reader_shared.cpp#for (int v : vars) markers_->check_markers(frame, v);#for (int v : vars) (void)v;#py:test_reader.py -k damaged#the shared file's readers hand out values from a file with damaged record markers
reader-places-unchecked#src/layouts/reader.cpp#    for (std::size_t i = 0; i < need_.size() && in_place_; ++i) in_place_ = where_[i] == i;\n#\n#py:test_reader.py#local nodes as many as the needed ones but in another order decoded in place
reader-spread-unsorted#src/layouts/reader.cpp#      radix_sort(a, [](std::uint64_t w) { return w >> 32; });#      radix_sort(a, [](std::uint64_t w) { return w >> 40; });#py:test_reader.py#a rank's scattered node numbers sorted by their high bits only: values read into the wrong places
p3d-repeat-once#src/blockformats/plot3d.cpp#    left_ = r - 1;#    left_ = 0;#py:test_plot3d_formatted.py#a formatted grid's repeat count r*v read as one value
p3d-read-keeps-line#src/blockformats/plot3d.cpp#  void end_read() {\n    left_ = 0;#  void end_read() {\n    return;#py:test_plot3d_formatted.py#a formatted read does not leave the rest of its last line unread
p3d-header-every-rank#src/cli/cmd_convert.cpp#    if (rank == 0) g = plot3d::read_header(o.input);#    g = plot3d::read_header(o.input);#py:test_plot3d_formatted.py -k parallel#every rank of a parallel PLOT3D convert reads the whole formatted grid for its header
p3d-q-2d-five#src/blockformats/plot3d.cpp#  int nvar = function ? 0 : dims + 2;#  int nvar = function ? 0 : 5;#py:test_plot3d_solutions.py#a 2D PLOT3D q file read with five variables, not four
p3d-solution-double-stride#src/blockformats/plot3d.cpp#    const std::int64_t at = s.values_at[b] + v * n * s.real_bytes;#    const std::int64_t at = s.values_at[b] + v * n * 8;#py:test_plot3d_solutions.py#a single-precision PLOT3D solution's later variables read from the wrong bytes
cgns-sids-names-off#src/blockformats/cgns.cpp#  return it == known.end() ? name : it->second;#  return name;#py:test_blocks.py -k cgns#a CGNS file names the solver's variables by its own names, not SIDS's
cgns-names-not-restored#src/h5/cgns_files.cpp#out.variables = kept_names.size() == fields.size() ? kept_names : fields;#out.variables = fields;#py:test_gen_cgns.py -k cgns_4#a CGNS file read back names its variables by SIDS's names, not the writer's
cfl3d-smin-signed#integrations/cfl3d/anabranch_cfl3d.F#                  d(np+i1) = abs(a(i1,i2,i3,i4))#                  d(np+i1) = a(i1,i2,i3,i4)#py:test_cfl3d_stub.py#CFL3D's restart holds the wall distance with its sign, not CFL3D's absolute value
cfl3d-thetay-lost#integrations/cfl3d/anabranch_cfl3d.F#        thetay(nbl) = ack(1)#        continue#py:test_cfl3d_stub.py#CFL3D's host keeps its own thetay, not the owner's, after a dump
cfl3d-plot3d-j-fastest#integrations/cfl3d/anabranch_cfl3d.F#              o(m) = a(j,k,i)\n#              o(m) = a(i,k,j)\n#py:test_cfl3d_stub.py -k plot3d#CFL3D's PLOT3D values written in CFL3D's own j, k, i order, not PLOT3D's i fastest
cfl3d-plot3d-not-turned#integrations/cfl3d/anabranch_cfl3d.F#          if (ial .ne. 0 .and. k2d .eq. 0) call turn()#          continue#py:test_cfl3d_stub.py -k plot3d#a grid read with alpha in the x-y plane written unturned to the PLOT3D grid file
cfl3d-plot3d-host-not-at-end#integrations/cfl3d/anabranch_cfl3d.F#        open(unit=4, file=paths(2), form='unformatted', status='old',\n     &       position='append')#        open(unit=4, file=paths(2), form='unformatted', status='old')#py:test_cfl3d_stub.py -k plot3d#the host's q unit left at the file's start after an owner's block: CFL3D's next records overwrite it
cgns-cell-centre-strides#src/cgns/cgns_tool.cpp#                  sum += v[static_cast<std::size_t>(((k + dk) * z.dims[1] + jj + dj) * z.dims[0] + i + di)];#                  sum += v[static_cast<std::size_t>(((k + dk) * d[1] + jj + dj) * d[0] + i + di)];#py:test_blocks.py -k cgns#a CGNS cell's centre taken from the wrong corners (the cells' strides, not the points')
plot3d-solution-form-not-sent#src/cli/cmd_convert.cpp#  s.formatted = next() != 0;\n  const auto nb = next(), na = next(), ne = next();\n  s.blocks#  s.formatted = next() != 0 && false;\n  const auto nb = next(), na = next(), ne = next();\n  s.blocks#py:test_plot3d_solutions.py#a formatted solution's form not sent with rank 0's header: the other ranks read its text as binary values
records-subrecord-signs#src/layouts/records.cpp#    const std::int64_t lead = i + 1 < parts ? -len : len, trail = i > 0 ? -len : len;#    const std::int64_t lead = i + 1 < parts ? -len : len, trail = len;#py:test_records.py#a long Fortran record's later subrecords end with a positive marker, not gfortran's negative one
records-markers-unchecked#src/layouts/records.cpp#    if (got == frame.markers()) return;#    return;#py:test_records.py#a Fortran file read with another layout or byte order gives its bytes as values
records-old-bytes-kept#src/layouts/records.cpp#    s.truncate = true;#    s.truncate = false;#py:test_records.py#a Fortran file written over an older, longer one keeps its stale tail
hdf5-userblock#src/h5/results.cpp#at = at == 0 ? 512 : at * 2#at = at == 0 ? 1024 : at * 2#py:test_hdf5.py -k user_block#an HDF5 file behind a 512-byte user block not recognised
serafin-frame-no-tail-marker#src/layouts/serafin_frame.hpp#      if (fixed_) f({values + l_.npoin * rs, 4, Run::kFixed, marker});\n#\n#mpi_writer#a value record's closing marker not written
collective-view-shift#src/io/strategy.cpp#disps.push_back(static_cast<MPI_Aint>(p.offset));#disps.push_back(static_cast<MPI_Aint>(p.offset + 4));#mpi_writer#the collective file view (writing and reading) four bytes off
collective-overlap-unchecked#src/io/strategy.cpp#    if (p.offset < 0 || (!disps.empty() && p.offset < disps.back() + lens.back()))#    if (p.offset < 0)#mpi_writer#a rank whose runs overlap hands MPI-IO an overlapping view (refused on that rank alone: the others wait)
aggregated-piece-place#src/io/strategy_aggregated.cpp#const std::int64_t dst = k * piece_ + at % piece_;#const std::int64_t dst = at % piece_;#mpi_blocks|mpi_writer#every piece's bytes placed where a writer's first piece goes in its buffer
hdf5-chunk-address#src/io/strategy.cpp#  return {at_.at(static_cast<std::size_t>(at / stretch_)) + at % stretch_, stretch_ - at % stretch_};#  return {at_.at(0) + at % stretch_, stretch_ - at % stretch_};#py:test_mini_solver.py -k hdf5_strategy_holds#every variable's HDF5 values written into the first variable's chunk
stretch-run-uncut#src/io/strategy.cpp#      const std::int64_t n = std::min(p.count, (stretch_ - p.at % stretch_) / rs);#      const std::int64_t n = p.count;#unit#a run of values is not cut where an HDF5 chunk ends
hdf5-z-never-set#src/h5/vtkhdf.cpp#  return m.options.flush_frames || (frames_ == 1#  return m.options.flush_frames || (frames_ == 2#py:test_hdf5.py#a 3D VTKHDF file's points keep Z = 0 (the first frame's elevation never copied)
output-temporary-kept#src/io/shared_file.cpp#  if (rank_ == 0) ::unlink(open_.c_str());#  (void)rank_;#py:test_faults.py -k one_file_per_step#an output that failed is left under its temporary name (one file per step, atomic outputs)
h5-no-reason#src/h5/h5.cpp#detail = "file write failed (" + write_failure_reason(file, -1) + ")";#(void)0;#py:test_faults.py#a failed HDF5 write does not say why (disk full, size limit)
reader-hdf5-double#src/layouts/reader_shared.cpp#const bool dp = h5_->header().precision == Precision::Double;#const bool dp = false;#py:test_reader.py#HDF5 double-precision values read as single
aggregated-reader-dst#src/io/read_aggregated.cpp#values.decode(c.array, c.index, c.count, a.buffer(c.reader, u) + c.at);#values.decode(c.array, 0, c.count, a.buffer(c.reader, u) + c.at);#py:test_reader.py#the aggregated reader puts every run of a round at the first needed node
aggregated-read-no-tail#src/io/read_aggregated.cpp#std::min(hi + rs - 1, F - a.starts[self])#std::min(hi, F - a.starts[self])#mpi_blocks#the aggregated reader leaves out the rest of a value cut at a round's end
aggregated-read-remote-round#src/io/read_aggregated.cpp#a.send.insert(a.send.end(), mine + q.at, mine + q.at + q.bytes);#a.send.insert(a.send.end(), mine + q.at + (r > 0), mine + q.at + q.bytes + (r > 0));#py:test_reader.py -k shared_memory#a reader sends other nodes' values from one byte off after its first round
exchange-displacements-sent#src/parallel/mpi_util.hpp#    rd[d + 1] = rd[d] + rc[d];#    rd[d + 1] = rd[d] + sc[d];#mpi_writer#an all-to-all places what each rank receives by what this rank sends (the aggregated plans, the ownership directory, the distributed partitioner)
reader-frame-variable#src/layouts/serafin_frame.hpp#return {l_.values_offset(frame, vars_[static_cast<std::size_t>(k)]) + in, values() - in};#return {l_.values_offset(frame, static_cast<int>(k)) + in, values() - in};#py:test_reader.py#reading one variable reads the first variable's record
option-least-unchecked#src/parallel/hints.cpp#  if (x < least) throw#  if (x < 0) throw#py:test_reader.py -k option#an option below its least value (a reader's buffer of 12 bytes) is taken
unknown-command-ok#src/cli/app.cpp#      return 2;\n    }\n    break;#      return 0;\n    }\n    break;#py:test_info.py test_package.py#an unknown command exits 0
balance-json-imbalance#src/cli/cmd_balance.cpp#{"imbalance", r.imbalance},#{"imbalance", r.roundrobin_imbalance},#py:test_balance.py#balance --json reports round-robin's imbalance as its own
convert-no-frame#src/cli/cmd_convert.cpp#if (frames == 0 && h.nvar() > 0) throw#if (false) throw#py:test_hdf5.py -k without_frames#convert of a file without frames writes an empty result
diff-stored-double-unswapped#src/tools/compare.cpp#std::memcpy(&w, in + 8 * i, 8);\n      if (swap) w = bswap(w);#std::memcpy(&w, in + 8 * i, 8);#py:test_diff.py#diff decodes big-endian doubles stored alike without their byte swap
diff-mesh-bytes-unread#src/tools/compare.cpp#      if (std::memcmp(pa.data(), pb.data(), n) != 0) return false;#      (void)n;#py:test_diff.py#diff finds the meshes of two files stored alike the same without comparing their bytes
ikle-rows-from-the-start#src/formats/serafin.cpp#const std::int64_t n = count * header_.ndp, at = ikle_at_ + 4 * header_.ndp * first;#const std::int64_t n = count * header_.ndp, at = ikle_at_;#py:test_info.py test_hdf5.py#a piece of IKLE rows read from the record's start
diff-negative-tolerance#src/cli/cmd_diff.cpp#v >= 0 && std::isfinite(v)#std::isfinite(v)#py:test_diff.py#a negative tolerance accepted
generate-cli-fail-keeps-mesh#src/cli/cmd_generate.cpp#::unlink(o->output.c_str());#(void)0;#py:test_generate_refine.py#a failed .cli write leaves the mesh without it
info-non-finite-byte-order#src/cli/cmd_info.cpp#const W mask = h.byte_order != native_byte_order() ? bswap(native) : native;#const W mask = h.byte_order == native_byte_order() ? bswap(native) : native;#py:test_info.py#info --check tests the exponent in the wrong byte order
split-words-one-plane#src/formats/partel.cpp#std::memcpy(dst, &src[knolg[i] + j * npoin2], sizeof(W));#std::memcpy(dst, &src[knolg[i]], sizeof(W));#py:test_telemac_v8.py test_merge_split.py#the parts of a 3D file get the first plane's values on every plane
crc-fold-constants-swapped#src/core/crc32.cpp#const __m128i k128 = _mm_set_epi64x(0x0ccaa009e, 0x1751997d0);#const __m128i k128 = _mm_set_epi64x(0x1751997d0, 0x0ccaa009e);#unit#the folded CRC-32 folds with its constants swapped
merge-fpp-accepted#src/cli/cmd_merge.cpp#if (m->o.strategy == "file-per-process") throw#if (false) throw#py:test_merge_split.py#merge --strategy file-per-process accepted
partel-concat-ignored#src/cli/cmd_partition.cpp#o.layout = "concat";#o.layout = "telemac";#py:test_telemac_v8.py test_partition.py#PARTEL.PAR's concatenate answer ignored
refine-wall-midpoint#src/cli/cmd_refine.cpp#if (!is_wall(cli.lines[static_cast<std::size_t>(s)]) && is_wall(cli.lines[static_cast<std::size_t>(t)])) s = t;#(void)t;#py:test_generate_refine.py#a midpoint between a wall and an open node is open
split-default-name#src/cli/cmd_merge.cpp#name = s == std::string::npos ? o->input : o->input.substr(s + 1);#name = o->input;#py:test_merge_split.py#split names its outputs after the input's whole path
tune-lustre-count#src/cli/cmd_tune.cpp#if (tok == "stripe_count:" || tok == "lmm_stripe_count:") in >> count;#if (tok == "lmm_stripe_count:") in >> count;#py:test_bench_tune.py#tune misreads lfs getstripe's stripe count
halo-same-part-shifted#src/partition/distributed_write.cpp#q = lp.p, l = other + 1;#q = lp.p, l = other;#py:test_partition_parallel.py#PAR halo rows written by the ranks name the wrong neighbour inside the part
capi-long-name#src/c_api/c_api.cpp#if (std::strlen(name) > 16 ||#if (std::strlen(name) > 32 ||#py:test_package.py -k anabranch_errors#a variable name over 16 characters accepted (cut in the file)
sfc-distributed-offset#src/partition/distributed_sfc.cpp#sfc_part(before[0] + static_cast<std::int64_t>(i), s.nelem, nparts)#sfc_part(static_cast<std::int64_t>(i), s.nelem, nparts)#py:test_partition_parallel.py#the ranks' stretches of the curve all start at part 0
radix-skips-a-pass#src/core/radix_sort.hpp#if (std::find(c.begin(), c.end(), n) != c.end()) continue;#if (std::find(c.begin(), c.end(), 0) != c.end()) continue;#unit#the radix sort skips a digit that differs between items: keys out of order
node-set-place-shifted#src/core/node_set.hpp#((std::uint64_t{1} << (node & 63)) - 1)#(std::uint64_t{1} << (node & 63))#py:test_partition_parallel.py#a node's place among the rank's nodes counts itself: coordinates of the next node
epart-written-at-zero#src/partition/distributed_read.cpp#write_at(fh, offset, text.data(), bytes, path)#write_at(fh, 0, text.data(), bytes, path)#py:test_partition_parallel.py#every rank writes its lines of the partition file at its start
block-run-halo-j#src/grid/block_layout.hpp#      const std::int64_t mem = ((k + halo[2]) * m[1] + j + halo[1]) * m[0] + halo[0];#      const std::int64_t mem = ((k + halo[2]) * m[1] + j) * m[0] + halo[0];#mpi_blocks#a piece's interior read from its halo in j
block-raw-no-marker-room#src/blockformats/block_file.cpp#return frame * raw_offset_.back() + raw_offset_[block] + array * var + (records ? 4 : 0);#return frame * raw_offset_.back() + raw_offset_[block] + array * var;#mpi_blocks#raw values written over their record markers
block-cover-unchecked#src/grid/block_layout.cpp#    if (covered != blocks[b].points())#    if (false)#mpi_blocks#pieces that leave points unwritten accepted
engine-cut-value-head#src/io/strategy.cpp#std::memcpy(dst, scratch + from % rs, static_cast<std::size_t>(n));#std::memcpy(dst, scratch, static_cast<std::size_t>(n));#mpi_blocks|mpi_writer#a value cut at a piece's start takes its first bytes, not its last
block-h5-block-offset#src/blockformats/block_file.cpp#    return base + first_point_[block] * real_bytes;#    return base;#mpi_blocks#every block of an HDF5 file written at the first block's place
block-check-marker#src/h5/block_files.cpp#            if (marker != n * rb)#            if (false)#py:test_blocks.py -k info#info --check misses a damaged record marker
block-diff-where#src/tools/compare.cpp#d.at = {idx % dims[0], (idx / dims[0]) % dims[1], idx / (dims[0] * dims[1])};#d.at = {idx / (dims[0] * dims[1]), (idx / dims[0]) % dims[1], idx % dims[0]};#py:test_blocks.py -k diff#diff names i and k swapped
plot3d-no-swap#src/blockformats/plot3d.cpp#    if (swap) std::reverse(p, p + g.real_bytes);#    (void)swap;#py:test_blocks.py -k plot3d#big-endian PLOT3D coordinates read unswapped
vts-points-one-slot#src/blockformats/vts.cpp#pts[3 * i + static_cast<std::uint64_t>(c)] = buf[i];#pts[3 * i] = buf[i];#py:test_blocks.py -k paraview#VTS points with z in the x slot
aggregated-remote-from#src/io/strategy_aggregated.cpp#      std::memcpy(base + at, from, static_cast<std::size_t>(n));\n      from += n;#      std::memcpy(base + at, from, static_cast<std::size_t>(n));#mpi_blocks|mpi_writer#the node writer places every cut from another node from the first bytes received
cgns-order-lost#src/cgns/cgns_tool.cpp#      if (cg_ordinal_read(&o) == CG_OK && o > 0) ordinal = o;#      (void)o;#py:test_blocks.py -k cgns#blocks read back from CGNS in the bases' order, not the file's
block-h5-xdmf-dims-reversed#src/h5/block_h5.cpp#static_cast<long long>(b.dims[2]), static_cast<long long>(b.dims[1]), static_cast<long long>(b.dims[0]));\n        for (const char* c#static_cast<long long>(b.dims[0]), static_cast<long long>(b.dims[1]), static_cast<long long>(b.dims[2]));\n        for (const char* c#py:test_roundtrip.py -k xdmf#the XDMF of a block file with its grid gives the dimensions i j k, not k j i
block-h5-dims-reversed#src/h5/block_h5.cpp#dims.insert(dims.end(), b.dims.begin(), b.dims.end());#dims.insert(dims.end(), b.dims.rbegin(), b.dims.rend());#py:test_roundtrip.py -k hdf5#an HDF5 block file's table holds each block's dimensions k j i
vts-extent-reversed#src/blockformats/vts.cpp#"0 " + std::to_string(dims[0] - 1) + " 0 " + std::to_string(dims[1] - 1) + " 0 " + std::to_string(dims[2] - 1);#"0 " + std::to_string(dims[2] - 1) + " 0 " + std::to_string(dims[1] - 1) + " 0 " + std::to_string(dims[0] - 1);#py:test_roundtrip.py -k vtk#a VTS block's extent gives k j i
shared-record-order#src/partition/distributed_read.cpp#        reply[order_[j]] = rs == 8#        reply[j] = rs == 8#py:test_partition_parallel.py -k serial#a record's values sent in the order read, not the order asked
share-starts-mid-line#src/formats/epart.cpp#    src.read_at(begin - 1, &c, 1);\n    while#    c = '\\n';\n    while#py:test_part_global.py -k share#a rank parses the partition file from the middle of a line
part-global-one-layer#src/partition/part_global.cpp#first = before + i + layer * nelem2;#first = before + i;#py:test_part_global.py#every layer of prisms read from the first layer's rows
mesh-share-shifted#src/formats/serafin.cpp#        write_at(at + 4 + i * r.out, in.data(), in.size());#        write_at(at + i * r.out, in.data(), in.size());#unit#a share of the header's mesh records written over its length marker
weights-to-own-slice#src/partition/distributed_read.cpp#++counts[static_cast<std::size_t>(slices.owner(before + i))];#++counts[static_cast<std::size_t>(slices.owner(i))];#py:test_partition_parallel.py -k weight#weights sent to the slices by their place in the rank's share
zones-first-wins#src/partition/distributed_cases.cpp#    zone[static_cast<std::size_t>(static_cast<std::int64_t>(got[i]) - first)] = static_cast<std::int64_t>(got[i + 1]);#    if (!zone[static_cast<std::size_t>(static_cast<std::int64_t>(got[i]) - first)]) zone[static_cast<std::size_t>(static_cast<std::int64_t>(got[i]) - first)] = static_cast<std::int64_t>(got[i + 1]);#py:test_partition_parallel.py -k zones#a node listed twice in the zones file keeps its first zone
hdf5-mesh-last-offset#src/h5/vtkhdf.cpp#  if (share == 0) h5::write_range<std::int64_t>(offs, nelem, 1, &last, xfer_independent, f);#  if (share == 1) h5::write_range<std::int64_t>(offs, nelem, 1, &last, xfer_independent, f);#py:test_hdf5.py#the HDF5 mesh's last cell offset never written
section-step-farthest#src/partition/distributed_cases.cpp#    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &bd, 1, MPI_DOUBLE, MPI_MIN, st->comm), "MPI_Allreduce");#    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &bd, 1, MPI_DOUBLE, MPI_MAX, st->comm), "MPI_Allreduce");#py:test_partition_parallel.py -k section#the ranks agree on the farthest of their candidates for a section's next vertex
plot3d-single-unswapped#src/blockformats/plot3d.cpp#    if (swap) std::reverse(p, p + g.real_bytes);#    if (swap && g.real_bytes == 8) std::reverse(p, p + g.real_bytes);#py:test_roundtrip.py -k plot3d#big-endian single-precision PLOT3D coordinates read unswapped
cgns-coordinates-named-yx#src/blockformats/cgns.cpp#axes[3] = {"CoordinateX", "CoordinateY", "CoordinateZ"}#axes[3] = {"CoordinateY", "CoordinateX", "CoordinateZ"}#py:test_gen_cgns.py -k block_files#CGNS coordinates written under each other's names
merge-h5-single-unswapped#src/tools/merge.cpp#        if (rs == 4)\n          to_order<4>(at, static_cast<std::size_t>(out.npoin), out.byte_order);#        if (rs == 4)\n          (void)at;#py:test_roundtrip.py -k merge_of_telemac#merge alone into HDF5 stores single-precision values in the parts' byte order
h5-flush-unreserved#src/h5/h5.cpp#if (const int err = reserve_room(path, bytes); err != 0)#if (const int err = reserve_room(path, bytes); err != 0 && false)#py:test_faults.py -k at_each_phase#an HDF5 file flushed at close with no room for its metadata (a crash at exit)
block-raw-stale-tail#src/io/shared_file.cpp#    if (biggest > 0) {#    if (biggest < 0) {#py:test_roundtrip.py -k older_longer#a raw block file written over an older, longer one keeps its stale tail
block-piece-past-end#src/grid/block_layout.cpp#piece.range[a][1] > s.dims[a]#piece.range[a][1] > s.dims[a] + 1#py:test_roundtrip.py -k block_limits#a block piece one past its block's end accepted
extruded-upper-plane#src/formats/serafin.cpp#        out[(o + e) * 6 + 3 + k] = rows[static_cast<std::size_t>(e * 3 + k)] + above;#        out[(o + e) * 6 + 3 + k] = rows[static_cast<std::size_t>(e * 3 + k)] + below;#unit#an extruded prism's upper triangle numbered on its lower plane (TELEMAC-3D's merged header)
extruded-coordinates-from-plane-start#src/formats/serafin.cpp#    mesh_file.read_coordinates(y, p2, m, out + o);#    mesh_file.read_coordinates(y, 0, m, out + o);#unit#a share of an extruded coordinate record that starts within a plane read from the plane's first node
block-abandon-marker-kept#src/layouts/block_io.cpp#info.value_offset(complete_frames, 0, 0) - (info.records ? 4 : 0)));#info.value_offset(complete_frames, 0, 0)));#py:test_roundtrip.py -k complete_frames#a failed frame leaves the next record's first marker after the complete frames
info-split-record-skipped#src/cli/cmd_info.cpp#return non_finite_in<W>(r, records / 2, records); });#return non_finite_in<W>(r, records / 2 + 1, records); });#py:test_info.py -k split_points#info --check skips the later half's first record
info-piece-last-word#src/cli/cmd_info.cpp#      const std::int64_t n = std::min(kPiece, h.npoin - at);\n      r.read_encoded(#      const std::int64_t n = std::min(kPiece - 1, h.npoin - at);\n      r.read_encoded(#py:test_info.py -k split_points#info --check misses the last value of every 256 KiB piece
block-h5-segment-end#src/layouts/block_io.cpp#return {base + at % array_bytes_, array_bytes_ - at % array_bytes_};#return {base + at % array_bytes_, array_bytes_};#mpi_blocks#a write runs past an HDF5 dataset's end into the next
block-trailing-marker-of-first#src/layouts/block_io.cpp#f({at + shape.points() * rb, 4, Run::kFixed, static_cast<std::int64_t>(4 * p)});#f({at + shape.points() * rb, 4, Run::kFixed, 0});#mpi_blocks#a record's closing marker holds the first piece's block length
read-runs-gap#src/io/strategy.cpp#if (used > 0 && (offset != start + used || used + n > most)) flush();#if (used > 0 && (offset < start + used || used + n > most)) flush();#mpi_blocks#the independent reader reads runs that do not follow one another as if they did
records-kept-file-removed#src/layouts/records.cpp#if (!options.keep && rank == 0) ::unlink(path.c_str());#if (rank == 0) ::unlink(path.c_str());#py:test_gen_records.py -k keep#a write into a kept file (keep=1) that fails removes the file
records-other-records-zeroed#src/layouts/records.cpp#      if (!used[static_cast<std::size_t>(r)]) continue;#      if (false) continue;#py:test_gen_records.py -k keep#a call writing some records writes zeros over the others (a kept file, an earlier call's records)
p3d-negative-exponent-sign-alone#src/blockformats/plot3d.cpp#if ((c == '+' || c == '-') && i > 0 && v[i - 1] != 'e'#if ((c == '+') && i > 0 && v[i - 1] != 'e'#py:test_gen_plot3d.py#a formatted real whose negative exponent has no letter (1.5-100) is no number
p3d-block-starts-mid-repeat#src/blockformats/plot3d.cpp#    values.skip(b < g.coords_skip.size() ? g.coords_skip[b] : 0);#    (void)0;#py:test_gen_plot3d.py -k one_write#a grid written by one WRITE: a block starting inside a repeat gets the repeat's copies the block before took
p3d-solutions-first-file#src/cli/cmd_convert.cpp#        plot3d::read_solution_block(s, static_cast<std::size_t>(p.block), block);#        plot3d::read_solution_block(sols.front(), static_cast<std::size_t>(p.block), block);#py:test_gen_plot3d.py -k solution#every PLOT3D solution file's frame holds the first file's values
cgns-cells-flat-zone#src/cgns/cgns_tool.cpp#const std::int64_t step[3] = {z.dims[0] > 1, z.dims[1] > 1, z.dims[2] > 1};#const std::int64_t step[3] = {z.dims[0] > 1, z.dims[1] > 1, 1};#py:test_gen_cgns.py#a 2D zone's cells centred from corners in a third direction it does not have
mesh-share-converted-in-its-own-order#src/formats/serafin.cpp#static_cast<double>(load<float>(in.data() + 4 * k, g.byte_order))#static_cast<double>(load<float>(in.data() + 4 * k, bo))#py:test_gen_writer.py#a single-precision geometry's coordinates read in the result's byte order when the result is double
block-grid-unchecked#src/h5/block_files.cpp#  for (std::int64_t f = info.has_grid ? -1 : 0; f < info.frames(); ++f)#  for (std::int64_t f = 0; f < info.frames(); ++f)#py:test_gen_blocks.py#info --check does not read an HDF5 block file's grid
weights-share-tail-short#src/partition/distributed_read.cpp#constexpr std::int64_t kTail = 32;#constexpr std::int64_t kTail = 6;#py:test_gen_partition.py#a weight whose digits run past a rank's share of the weights file is cut
merge-teams-both-write#src/tools/merge.cpp#      if (last[static_cast<std::size_t>(gid[i])] == static_cast<std::int32_t>(k)) {#      if (last[static_cast<std::size_t>(gid[i])] >= 0) {#py:test_gen_merge.py#every part scatters all its nodes: the merge's threads race for the interface nodes
ompio-overlap-unchecked#src/io/read_aggregated.cpp#  if (how_.mode == RunReading::Mode::Collective && !collective_reads_safe(comm_)) how_.mode = RunReading::Mode::Independent;#  (void)0;#py:test_gen_records.py -k read_back#collective reads of overlapping records under Open MPI 4.1.4's read data sieving (zeros past the sieve)
python-refusal-one-rank#bindings/python/anabranch/__init__.py#    agreed = _core.agree(comm, mine)#    agreed = mine#py:test_gen_records.py -k keep#a Python argument refused on one rank only: the others wait in the collective call
EOF
)

[[ -x $root/build/venv/bin/python ]] || { echo "mutate: run bash scripts/setup.sh --test first" >&2; exit 2; }
mkdir -p "$work"
echo "mutate: copying the tree to $work/tree"
rm -rf "$work/tree" && mkdir -p "$work/tree"
(cd "$root" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -m -xf - -C "$work/tree"  # -m: newer than any earlier build
cd "$work/tree"
py=$root/build/venv/bin/python
cmake -S . -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DAB_TEST_PYTHON="$py" -DPython_EXECUTABLE="$py" \
  -DAB_TELEMAC_DATA="$root/../shared/data/telemac" >/dev/null
cmake --build "$work/build" -j "$(nproc)" >/dev/null

# The environment ctest gives the pytest suite (executables, data, MPI settings).
cli_env=$(ctest --test-dir "$work/build" --show-only=json-v1 | python3 -c '
import json, sys, shlex
for t in json.load(sys.stdin)["tests"]:
    if t["name"] == "cli":
        for p in t.get("properties", []):
            if p["name"] == "ENVIRONMENT":
                print("\n".join("export " + shlex.quote(kv) for kv in p["value"]))
')
run_pytest() {  # name, pytest arguments (test files of tests/python, -k ...)
  local name=$1 args=() a
  shift
  for a in "$@"; do [[ $a == test_*.py* ]] && args+=("$work/tree/tests/python/$a") || args+=("$a"); done
  [[ " ${args[*]} " == *"/tests/python/"* ]] || args+=("$work/tree/tests/python")
  (eval "$cli_env"; cd "$work/build" && timeout 1200 "$py" -m pytest -q -x -p no:cacheprovider "${args[@]}") >"$work/$name.test.log" 2>&1
}
run_ctest() {  # name, ctest arguments
  local name=$1
  shift
  (cd "$work/build" && ctest -j "$(nproc)" "$@") >"$work/$name.test.log" 2>&1
}
failed_ctests() { grep -E '^\s+[0-9]+ - ' "$work/$1.test.log" | sed -E 's/^\s+[0-9]+ - //; s/ \(.*//' | tr '\n' ' '; }

selected=("$@")
caught=0 missed=0 report=""
while IFS='#' read -r -u 3 name file from to tests what; do
  [[ -z $name ]] && continue
  if ((${#selected[@]})) && [[ ! " ${selected[*]} " == *" $name "* ]]; then continue; fi
  from=$(printf '%b' "$from") to=$(printf '%b' "$to")
  cp "$file" "$file.orig"
  if ! FROM="$from" TO="$to" perl -0pi -e 's/\Q$ENV{FROM}\E/$ENV{TO}/' "$file" || cmp -s "$file" "$file.orig"; then
    mv "$file.orig" "$file"
    touch "$file"
    echo "mutate: $name does not apply to $file (the code changed: update the list)" >&2
    exit 2
  fi
  printf 'mutate: %-28s %s ... ' "$name" "$what"
  result=MISSED
  if ! cmake --build "$work/build" -j "$(nproc)" >"$work/$name.build.log" 2>&1; then
    result="caught (does not build)"
  else
    # The tests named first (quick), then, if they pass, the whole suite: caught is caught.
    if [[ $tests == py:* ]]; then
      run_pytest "$name" ${tests#py:} || result="caught by: pytest ${tests#py:}"
    elif [[ -n $tests ]]; then
      run_ctest "$name" -R "$tests" || result="caught by: $(failed_ctests "$name")"
    fi
    if [[ $result == MISSED && ${MUTATE_QUICK:-0} == 1 ]]; then
      result="MISSED by the named tests (MUTATE_QUICK=1: the suite not run)"
    elif [[ $result == MISSED ]] && ! run_ctest "$name" ${tests_regex:+-R "$tests_regex"} -E 'python_install|consumer'; then
      result="caught by: $(failed_ctests "$name")"
    fi
  fi
  echo "$result"
  [[ $result == MISSED* ]] && missed=$((missed + 1)) || caught=$((caught + 1))
  report+="$name: $result"$'\n'
  mv "$file.orig" "$file"
  touch "$file"  # newer than the mutated build: rebuilt
done 3<<<"$mutations"
cmake --build "$work/build" -j "$(nproc)" >/dev/null  # back to the unmutated tree
echo "mutate: $caught caught, $missed missed (logs in $work)"
exit "$missed"
