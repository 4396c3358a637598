/*
 * anabranch C API: write one shared result file (SERAFIN or HDF5) from all ranks of an MPI
 * code, read this rank's part of a partitioned mesh, read result files, run the commands.
 *
 * Conventions
 *  - Every function returns a status code (AB_OK = 0); ab_last_error() gives the message of
 *    the last failure on the calling thread.
 *  - Functions marked COLLECTIVE must be called by every rank of the communicator; they agree
 *    on failure: if one rank fails, every rank returns the same error code and message (no
 *    rank is left waiting in a later collective call).
 *  - Node numbers are 1-based, as in TELEMAC (IKLE, KNOLG).
 *  - The library never calls exit() or MPI_Abort().
 */
#ifndef ANABRANCH_H
#define ANABRANCH_H

#include <mpi.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes. */
enum {
  AB_OK = 0,
  AB_ERR_USAGE = 1,    /* bad arguments or inconsistent calls */
  AB_ERR_FORMAT = 2,   /* a file's bytes are not what its format says */
  AB_ERR_IO = 3,       /* the system refused a read, write, open or rename */
  AB_ERR_MPI = 4,      /* an MPI call failed */
  AB_ERR_MEMORY = 5,   /* out of memory */
  AB_ERR_INTERNAL = 6  /* anything else */
};

/* Message of the last error on this thread ("" if none). Not collective. */
const char* ab_last_error(void);
/* Library version, e.g. "0.1.0". Not collective. */
const char* ab_version(void);

/* ---------------------------------------------------------------------------------------
 * Header: what a SERAFIN file holds. Build it on every rank with the same title,
 * variables and sizes; the global mesh arrays are needed on rank 0 only.
 */
typedef struct ab_header ab_header;

/* New empty header: single precision, big-endian, no variable. Not collective. */
int ab_header_create(ab_header** header);
/* Frees a header (NULL is fine). Not collective. */
int ab_header_free(ab_header* header);
/* Title (at most 72 characters; the precision suffix is added). Not collective. */
int ab_header_set_title(ab_header* header, const char* title);
/* Appends a variable: name and unit, at most 16 characters each. Not collective. */
int ab_header_add_variable(ab_header* header, const char* name, const char* unit);
/* Precision of the reals: 4 (single, the default) or 8 (double). Not collective. */
int ab_header_set_precision(ab_header* header, int real_bytes);
/* Byte order: 1 big-endian (TELEMAC's convention, the default), 0 little-endian. */
int ab_header_set_big_endian(ab_header* header, int big_endian);
/* IPARAM(1..10) as SERAFIN stores them (IPARAM(7), the planes, must agree with the sizes
 * set; IPARAM(10) follows the date record). Not collective. */
int ab_header_set_iparam(ab_header* header, const int32_t iparam[10]);
/* Date record: year, month, day, hour, minute, second. Not collective. */
int ab_header_set_date(ab_header* header, const int32_t date[6]);
/* Global sizes: elements, nodes (all planes), nodes per element, planes (1 in 2D). */
int ab_header_set_sizes(ab_header* header, int64_t nelem, int64_t npoin, int ndp, int nplan);
/* The sizes set so far (any pointer may be NULL). Not collective. */
int ab_header_sizes(const ab_header* header, int64_t* nelem, int64_t* npoin, int* ndp, int* nplan);
/* Global mesh arrays (rank 0; other ranks may pass NULL): IKLE (nelem*ndp, 1-based),
 * IPOBO (npoin, may be NULL: zeros), X and Y (npoin). Copied. Not collective. */
int ab_header_set_mesh(ab_header* header, const int32_t* ikle, const int32_t* ipobo, const double* x, const double* y);
/* Sizes, IPARAM and (on rank 0, when the file is written) the mesh arrays from a SERAFIN
 * geometry file. Not collective (every rank reads the file's header). */
int ab_header_set_geometry(ab_header* header, const char* path);
/* For the file-per-process strategy: this rank's own elements (IKLE in local numbering)
 * and coordinates of its nlocal nodes. Copied. Not collective. */
int ab_header_set_local_mesh(ab_header* header, int64_t nelem, const int32_t* ikle, int64_t nlocal, const double* x,
                             const double* y);

/* ---------------------------------------------------------------------------------------
 * Writer: one shared file written by all ranks.
 */
typedef struct ab_writer ab_writer;

/* COLLECTIVE. Opens `path` for writing. global_ids: the 1-based global number of each of
 * this rank's nlocal nodes (KNOLG); a node held by several ranks is written by the lowest
 * of them. options: NULL or "key=value" pairs separated by spaces or commas:
 *   strategy=aggregated|aggregated-async|collective|independent|file-per-process|hdf5|cgns|tecplot|null
 *     (default: by the file's name: .h5, .hdf5, .hdf, .vtkhdf: hdf5 (VTKHDF), .cgns: cgns
 *     (one unstructured zone), .plt: tecplot (a finite-element zone a frame), else
 *     aggregated (SERAFIN))
 *   frames=N (tecplot: the frames the header has room for, default 1; more cost a move of
 *     every value at close),
 *   writers_per_node=auto|N (aggregated, hdf5; auto, the default: 2 per node, or the node's
 *     ranks if fewer, taking turns at the file; hdf5: 1 per node on a node-local file
 *     system, 2 on a parallel one), buffer_bytes=N (default 16 MiB),
 *   owner=lowest|highest (which rank writes a node several hold; default lowest),
 *   atomic=0|1 (1: written under a temporary name, renamed by close),
 *   any other key is passed to MPI-IO as a hint (cb_nodes, striping_factor, ...).
 * ANABRANCH_MPIIO_HINTS in the environment adds hints the same way. */
int ab_writer_open(MPI_Comm comm, const char* path, const ab_header* header, int64_t nlocal, const int32_t* global_ids,
                   const char* options, ab_writer** writer);
/* The same for Fortran callers: the communicator as a Fortran handle. */
int ab_writer_open_f(MPI_Fint comm, const char* path, const ab_header* header, int64_t nlocal, const int32_t* global_ids,
                     const char* options, ab_writer** writer);
/* COLLECTIVE. The file `anabranch merge` (gretel) would make of the ranks' part files,
 * written by the ranks as they run instead of merged afterwards (TELEMAC's result files).
 * Each rank names its own part: a SERAFIN file of which only the header and mesh are read
 * (IPOBO holds KNOLG, as TELEMAC writes it; frames are not needed). The global header is
 * made from rank 0's part (title, variables, precision, date), the global geometry (mesh;
 * a 2D geometry is extruded for 3D parts) and the boundary file (IPARAM(8); NULL or "":
 * none), exactly as merge makes it. *nlocal receives the part's NPOIN: give each frame's
 * values in the part's node order (nvar blocks of *nlocal) to ab_writer_write_frame. A node
 * held by several ranks takes the highest rank's value, as the last part wins in a merge.
 * options as for ab_writer_open. */
int ab_writer_open_merged(MPI_Comm comm, const char* part, const char* geometry, const char* boundary, const char* path,
                          const char* options, int64_t* nlocal, ab_writer** writer);
int ab_writer_open_merged_f(MPI_Fint comm, const char* part, const char* geometry, const char* boundary, const char* path,
                            const char* options, int64_t* nlocal, ab_writer** writer);
/* COLLECTIVE. One frame: values holds nvar blocks of nlocal values (variable after
 * variable, each in local node order). Returns when the frame is written. */
int ab_writer_write_frame(ab_writer* writer, double time, const double* values);
/* COLLECTIVE. Single-precision values, same layout. */
int ab_writer_write_frame_float(ab_writer* writer, double time, const float* values);
/* COLLECTIVE. Starts a frame and returns once the values are copied (the caller may reuse
 * its array at once); with strategy=aggregated-async the file writes proceed while the
 * caller computes. ab_writer_write_frame_end completes the frame (so do the next begin and
 * close). */
int ab_writer_write_frame_begin(ab_writer* writer, double time, const double* values);
int ab_writer_write_frame_end(ab_writer* writer);
/* COLLECTIVE. Completes, closes and frees the writer (also after an error). */
int ab_writer_close(ab_writer* writer);
/* Frees the writer without completing the file (a rank that cannot go on; a Python writer
 * collected unclosed). Not collective for the SERAFIN strategies; the hdf5 strategy closes
 * its HDF5 file, which is collective: call it on every rank there. With the "atomic=1"
 * option the temporary file is removed; a solver's output stays readable up to its last
 * complete frame. */
int ab_writer_abandon(ab_writer* writer);

/* ---------------------------------------------------------------------------------------
 * Reader: every rank reads the values of its own nodes from one shared result file
 * (SERAFIN or anabranch's HDF5), on any number of ranks and any decomposition (a restart
 * on N -> M processes without per-rank files). The writer's mirror.
 */
typedef struct ab_reader ab_reader;

/* COLLECTIVE. Opens `path` for reading. global_ids: the 1-based global number of each of
 * this rank's nlocal nodes (KNOLG); nodes may repeat across ranks and within one. options:
 * NULL or "key=value" pairs separated by spaces or commas:
 *   strategy=aggregated (default: a few readers per node read large contiguous blocks once
 *     and send each rank its values) | independent (each rank reads its own runs of nodes) |
 *     collective (SERAFIN: each rank's runs through one MPI-IO file view and read_all per
 *     round) | hdf5 (parallel HDF5, each rank selects its own nodes) | file-per-process
 *     (each rank reads its TELEMAC part file, path being their base name),
 *   readers_per_node=auto|N, buffer_bytes=auto|N (aggregated: bytes read per reader and
 *     round; auto: 4 MiB when every rank takes its values from its node's shared memory,
 *     16 MiB when values cross nodes; independent and collective: a rank's bytes per read
 *     call or round, auto 4 and 16 MiB); any other key is an MPI-IO hint.
 * Only the reading ranks (independent, collective: rank 0) parse the file's header; the
 * others receive it. */
int ab_reader_open(MPI_Comm comm, const char* path, int64_t nlocal, const int32_t* global_ids, const char* options,
                   ab_reader** reader);
int ab_reader_open_f(MPI_Fint comm, const char* path, int64_t nlocal, const int32_t* global_ids, const char* options,
                     ab_reader** reader);
/* The file's global sizes (any pointer may be NULL). Not collective. */
int ab_reader_sizes(const ab_reader* reader, int64_t* nelem, int64_t* npoin, int* ndp, int* nplan);
/* Whole frames in the file and variables per frame. Not collective. */
int ab_reader_frames(const ab_reader* reader, int64_t* frames, int* nvar);
/* Name and unit of variable var (0-based), trailing blanks removed, each into 17 chars
 * (either may be NULL). Not collective. */
int ab_reader_variable(const ab_reader* reader, int var, char name[17], char unit[17]);
/* Time of frame (0-based). Not collective. */
int ab_reader_time(const ab_reader* reader, int64_t frame, double* time);
/* COLLECTIVE. Every variable of frame (0-based): values receives nvar blocks of nlocal
 * values (variable after variable, each in local node order), as the writer takes them.
 * After a non-zero return (a damaged record fails the read on every rank) the values are
 * not the file's. */
int ab_reader_read_frame(ab_reader* reader, int64_t frame, double* values);
int ab_reader_read_frame_float(ab_reader* reader, int64_t frame, float* values);
/* COLLECTIVE. One variable (0-based) of frame: nlocal values. */
int ab_reader_read_variable(ab_reader* reader, int64_t frame, int var, double* values);
/* COLLECTIVE. Closes and frees the reader (also after an error). */
int ab_reader_close(ab_reader* reader);
/* Frees the reader without the collective close (a Python reader collected unclosed). Not
 * collective, except with strategy=hdf5, where HDF5 closes its file collectively. */
int ab_reader_abandon(ab_reader* reader);

/* ---------------------------------------------------------------------------------------
 * Reading this rank's part of a mesh partitioned by `anabranch partition`.
 */
typedef struct ab_part ab_part;

/* COLLECTIVE. Opens part `rank` of `base` for the calling rank: the per-rank file
 * <base>NNNNN-IIIII, or part `rank` of <base>-CONCAT through <base>-INDEX; the number of
 * parts must equal the communicator size. */
int ab_part_open(MPI_Comm comm, const char* base, ab_part** part);
int ab_part_open_f(MPI_Fint comm, const char* base, ab_part** part);
/* COLLECTIVE. Part `rank` of a partition straight from the global geometry (SERAFIN) and an
 * element -> part file (`anabranch partition --layout partition-file` writes
 * <mesh>.epart.<P>: one 0-based part per element and line, METIS's .epart format; for 3D
 * prisms one line per base triangle), for solvers that partition at start-up: no per-rank
 * files. Every rank streams both files and keeps its own elements, nodes (KNOLG, global
 * numbers increasing) and coordinates. Parts 0..size-1; an empty part is allowed. The part
 * holds no frames: read values with ab_reader_open. */
int ab_part_open_global(MPI_Comm comm, const char* geometry, const char* partition, ab_part** part);
int ab_part_open_global_f(MPI_Fint comm, const char* geometry, const char* partition, ab_part** part);
/* Local sizes. Not collective. */
int ab_part_sizes(const ab_part* part, int64_t* nelem, int64_t* npoin, int* ndp, int* nplan);
/* Local IKLE (nelem*ndp, local 1-based), KNOLG (npoin, global 1-based), X and Y (npoin). */
int ab_part_mesh(const ab_part* part, int32_t* ikle, int32_t* knolg, double* x, double* y);
/* Frames in the part, and the values of variable var (0-based) of frame (0-based). */
int ab_part_frames(const ab_part* part, int64_t* frames, int* nvar);
int ab_part_read_values(const ab_part* part, int64_t frame, int var, double* values);
/* Frees the part (NULL is fine). Not collective. */
int ab_part_close(ab_part* part);

/* ---------------------------------------------------------------------------------------
 * Reading a whole result file, SERAFIN or anabranch's HDF5 (chosen by its first bytes).
 * Not collective: any rank may read any file.
 */
typedef struct ab_file ab_file;

int ab_file_open(const char* path, ab_file** file);
/* Sizes (any pointer may be NULL); real_bytes: 4 (single) or 8 (double). */
int ab_file_sizes(const ab_file* file, int64_t* nelem, int64_t* npoin, int* ndp, int* nplan, int* nvar, int64_t* frames,
                  int* real_bytes);
/* IKLE (nelem*ndp, 1-based), IPOBO (npoin), X, Y (npoin); any pointer may be NULL. */
int ab_file_mesh(const ab_file* file, int32_t* ikle, int32_t* ipobo, double* x, double* y);
/* The time of every frame (frames values). */
int ab_file_times(const ab_file* file, double* times);
/* Values of nodes [first, first + count) (0-based) of variable var of frame. */
int ab_file_read(const ab_file* file, int64_t frame, int var, int64_t first, int64_t count, double* values);
int ab_file_read_float(const ab_file* file, int64_t frame, int var, int64_t first, int64_t count, float* values);
/* Frees the file (NULL is fine). */
int ab_file_close(ab_file* file);

/* ---------------------------------------------------------------------------------------
 * Multi-block structured grids: all ranks write one file, read back at any process count.
 * A layout names the grid's blocks (ids and index dimensions ni, nj, nk, in file order) and
 * the pieces this rank holds: whole blocks or index ranges of split blocks (as `anabranch
 * balance` deals them), each in the caller's memory as a Fortran-order array of
 * (ni + 2*hi) x (nj + 2*hj) x (nk + 2*hk) values with hi, hj, hk halo layers (the interior is
 * what the file holds). Formats: "raw" (blocks one after another, each block's variables one
 * after another, each one Fortran-order array; optionally Fortran sequential records; a JSON
 * sidecar <file>.json) and "hdf5" (one dataset per variable and frame with every block
 * concatenated, the block table in /blocks, the grid in /grid, an XDMF sidecar for
 * ParaView). Specifications: docs/formats/blocks-raw.md and docs/formats/blocks-hdf5.md.
 */
typedef struct ab_blocks ab_blocks;
int ab_blocks_create(ab_blocks** layout);
int ab_blocks_free(ab_blocks* layout);
/* A block of the grid (in file order). */
int ab_blocks_add_block(ab_blocks* layout, int64_t id, int64_t ni, int64_t nj, int64_t nk);
/* A piece this rank holds: range = {i0, i1, j0, j1, k0, k1}, 0-based, end excluded. */
int ab_blocks_add_piece(ab_blocks* layout, int64_t id, const int64_t range[6]);
int ab_blocks_set_halo(ab_blocks* layout, int64_t hi, int64_t hj, int64_t hk);
/* The grid and the pieces of process `rank` from `anabranch balance --json`'s report (or
 * from a block file with dimensions: every block whole, on process 0). */
int ab_blocks_load(ab_blocks* layout, const char* assignment, int rank);
int ab_blocks_count(const ab_blocks* layout, int64_t* blocks, int64_t* pieces);
/* Piece p (0-based) of this rank: its block's id, its range, its memory array's dimensions. */
int ab_blocks_piece(const ab_blocks* layout, int64_t p, int64_t* id, int64_t range[6], int64_t memory_dims[3]);

typedef struct ab_block_writer ab_block_writer;
/* COLLECTIVE. Opens `path` for nvar variables named names[0..nvar-1] (none: a grid alone, not
 * raw). Checks that the ranks' pieces cover every point of every block once. options: NULL or
 * "key=value" pairs:
 *   format=raw|hdf5|cgns|tecplot (default: hdf5 for .h5/.hdf5/.hdf names, cgns for .cgns,
 *     tecplot for .plt, raw otherwise; cgns: a structured zone per block, the tree written by
 *     rank 0 at close; tecplot: Tecplot's binary .plt, an ORDERED zone a block and a frame,
 *     the header written by rank 0 at close),
 *   frames=N (tecplot: the frames the header has room for, default 1; more frames than that
 *     cost a move of every value at close),
 *   strategy=independent|collective|aggregated|aggregated-async (independent, the default:
 *     contiguous runs through one buffer; collective: an indexed file view, MPI_File_write_all
 *     in rounds of the buffer; aggregated: a few writers per node, the node's values copied
 *     into their shared buffers; aggregated-async: aggregated, the writes overlapped with
 *     the caller's next step: ab_block_writer_write_frame_begin/_end),
 *   precision=4|8 (the file's; default 8), records=fortran|none (raw), atomic=0|1,
 *   xdmf=0|1 (hdf5), buffer_bytes=N (independent: the stage, 1 MiB; collective: a rank's bytes
 *   per round, 8 MiB; aggregated: a writer's per round, 4 MiB), writers_per_node=N (aggregated),
 *   compress=lossless|abs=TOL|rel=TOL, then :deflate or :zstd (cgns: every array chunked within
 *     the ranks' pieces, compressed and written by its rank; hdf5: chunked datasets through
 *     HDF5's collective filtered writes; the grid losslessly), any other key an MPI-IO hint. */
int ab_block_writer_open(MPI_Comm comm, const char* path, const ab_blocks* layout, int nvar, const char* const* names,
                         const char* options, ab_block_writer** writer);
int ab_block_writer_open_f(MPI_Fint comm, const char* path, const ab_blocks* layout, int nvar, const char* const* names,
                           const char* options, ab_block_writer** writer);
/* COLLECTIVE, hdf5, cgns and tecplot, once: xyz[3*p + c] is coordinate c (x, y, z) of piece p (halos included). */
int ab_block_writer_write_grid(ab_block_writer* writer, const double* const* xyz);
/* COLLECTIVE. One frame: values[p*nvar + v] is variable v of piece p (halos included). */
int ab_block_writer_write_frame(ab_block_writer* writer, double time, const double* const* values);
int ab_block_writer_write_frame_float(ab_block_writer* writer, double time, const float* const* values);
/* COLLECTIVE. Starts a frame and returns once the values are copied (the arrays may change);
 * with strategy=aggregated-async the bytes go to disk while the caller computes.
 * ab_block_writer_write_frame_end (collective) completes it; the next frame or close also does. */
int ab_block_writer_write_frame_begin(ab_block_writer* writer, double time, const double* const* values);
int ab_block_writer_write_frame_end(ab_block_writer* writer);
/* COLLECTIVE. Completes, closes and frees the writer (also after an error). */
int ab_block_writer_close(ab_block_writer* writer);

typedef struct ab_block_reader ab_block_reader;
/* COLLECTIVE. Opens a block file to read this rank's pieces (any assignment, any process
 * count; the layout's blocks must be the file's, or none: the file's are taken). options:
 * strategy=independent|collective|aggregated, buffer_bytes=N, writers_per_node=N (readers
 * per node when reading aggregated), MPI-IO hints. */
int ab_block_reader_open(MPI_Comm comm, const char* path, const ab_blocks* layout, const char* options, ab_block_reader** reader);
int ab_block_reader_open_f(MPI_Fint comm, const char* path, const ab_blocks* layout, const char* options, ab_block_reader** reader);
int ab_block_reader_frames(const ab_block_reader* reader, int64_t* frames, int* nvar);
int ab_block_reader_time(const ab_block_reader* reader, int64_t frame, double* time);
/* COLLECTIVE. Fills the interiors of values[p*nvar + v] (halos untouched). */
int ab_block_reader_read_frame(ab_block_reader* reader, int64_t frame, double* const* values);
int ab_block_reader_read_grid(ab_block_reader* reader, double* const* xyz);
/* COLLECTIVE. Closes and frees the reader. */
int ab_block_reader_close(ab_block_reader* reader);

/* ---------------------------------------------------------------------------------------
 * Fortran sequential unformatted files (a Fortran program's WRITE(unit) records: a length
 * marker, the payload, the marker again) written by many ranks at once into the one file
 * the serial program writes, and read back by any rank. A layout lists every record's
 * payload size in file order (the same list on every rank: a restart file's records for
 * each block, then the next block's); each rank writes and reads the records it holds.
 * Records longer than a marker's subrecord limit are split as gfortran splits them
 * (docs/formats/fortran-records.md).
 */
typedef struct ab_records ab_records;
int ab_records_create(ab_records** layout);
int ab_records_free(ab_records* layout);
/* Appends a record of `bytes` payload bytes (0 allowed). */
int ab_records_add(ab_records* layout, int64_t bytes);
/* The file's form: marker_bytes 4 (default) or 8; big_endian 1 big, 0 little, -1 the
 * machine's (default); max_subrecord: the most payload bytes of a subrecord, 0 for the
 * compiler's default (gfortran: 2147483639 with 4-byte markers, no split with 8).
 * marker_bytes 0: raw byte ranges without markers (records that are another format's arrays:
 * a gap the rank does not write is a record too). */
int ab_records_set_form(ab_records* layout, int marker_bytes, int big_endian, int64_t max_subrecord);
/* The byte of the file where the layout's first record starts (default 0): records that
 * follow others written by other means. */
int ab_records_set_offset(ab_records* layout, int64_t offset);
int ab_records_count(const ab_records* layout, int64_t* records);
/* Record r's bytes in the file, markers included: [*first, *end). r = -1: the whole layout. */
int ab_records_extent(const ab_records* layout, int64_t r, int64_t* first, int64_t* end);

typedef struct ab_records_writer ab_records_writer;
/* COLLECTIVE. Opens `path` to write the layout's records. options: NULL or "key=value" pairs:
 *   strategy=independent|collective|aggregated|aggregated-async (independent, the default),
 *   keep=0|1 (0, the default: the file is made anew and ends at the layout's end, every
 *     record written; 1: an existing file is written into and keeps every byte outside the
 *     records written, for ranks that write their records at different times, each on its
 *     own communicator: an empty layout opened and closed with keep=0 makes the empty file
 *     they start from),
 *   buffer_bytes=N, writers_per_node=N, any other key an MPI-IO hint. */
int ab_records_writer_open(MPI_Comm comm, const char* path, const ab_records* layout, const char* options,
                           ab_records_writer** writer);
int ab_records_writer_open_f(MPI_Fint comm, const char* path, const ab_records* layout, const char* options,
                             ab_records_writer** writer);
/* COLLECTIVE. This rank's n records (0-based indices into the layout, any order, n may be 0):
 * data[i] holds the payload of records[i]. A record is written by one rank. */
int ab_records_writer_write(ab_records_writer* writer, int64_t n, const int64_t* records, const void* const* data);
/* COLLECTIVE. Completes, closes and frees the writer (also after an error). */
int ab_records_writer_close(ab_records_writer* writer);

typedef struct ab_records_reader ab_records_reader;
/* COLLECTIVE. Opens `path` to read the layout's records (the file must hold the layout: its
 * size and each read record's markers are checked). options:
 * strategy=independent|collective|aggregated, buffer_bytes=N, readers_per_node=N, MPI-IO hints. */
int ab_records_reader_open(MPI_Comm comm, const char* path, const ab_records* layout, const char* options,
                           ab_records_reader** reader);
int ab_records_reader_open_f(MPI_Fint comm, const char* path, const ab_records* layout, const char* options,
                             ab_records_reader** reader);
/* COLLECTIVE. This rank's n records into data[i] (each the record's payload size). */
int ab_records_reader_read(ab_records_reader* reader, int64_t n, const int64_t* records, void* const* data);
/* COLLECTIVE. Closes and frees the reader. */
int ab_records_reader_close(ab_records_reader* reader);

/* Where a CGNS (HDF5) file made by another program's CGNS library keeps arrays' values, so
 * that the ranks that hold them write them there (a records layout of raw form, marker_bytes
 * 0): for each of the n HDF5 dataset paths (a node's " data", such as
 * "/Base/Zone 1/FlowSolution/Density/ data"), the byte where its contiguous storage starts and
 * its bytes. Fails naming the file and the dataset when one is not contiguous and allocated.
 * Not collective: one rank, with the file closed by the program that wrote it. */
int ab_h5_extents(const char* path, int64_t n, const char* const* datasets, int64_t* offsets, int64_t* bytes);

/* ---------------------------------------------------------------------------------------
 * The commands, from a program: runs `anabranch ARGV... --json` in this process (argv[0]
 * is the command: "info", "partition", "merge", "split", "convert", "generate", ...) and
 * returns its JSON report, the same as the command line prints, in *report (free it with
 * ab_free; "" for commands without one, and on ranks other than 0). COLLECTIVE over
 * MPI_COMM_WORLD for the commands that use MPI (merge and convert under an MPI launcher,
 * bench); MPI must then be initialised (or is initialised and finalised by the command
 * when it is not). A process not started by an MPI launcher merges alone, without MPI. */
int ab_command(int argc, const char* const* argv, char** report);
/* The command line itself, for a program that embeds it (the Python package's `anabranch`
 * command): runs `anabranch ARGV...` (argv[0] is the program's name) exactly as the
 * executable does, printing its output, progress and one-line errors, and returns its exit
 * status (0 success, 1 failure, 2 usage or, for diff, 1 different and 2 failure). A
 * termination signal ends the process as it ends the executable (its partial outputs
 * removed); termination signals stay blocked in the calling thread afterwards: the process
 * is meant to end with the command. */
int ab_main(int argc, char** argv);
/* Frees memory the library returned. */
void ab_free(void* p);

#ifdef __cplusplus
}
#endif

#endif /* ANABRANCH_H */
