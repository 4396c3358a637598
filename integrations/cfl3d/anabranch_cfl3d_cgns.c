/* anabranch in a CFL3D run built with CGNS (icgns = 1): the arrays of a CGNS dump written by
 * the ranks that hold the blocks, into the one file CFL3D's host keeps.
 *
 * CFL3D writes a CGNS dump with its own routines (libs/cgnstools.F: writebcs, writesoln,
 * writeturb and the host's writeziter, writehist, writeref, writetime, writeeqn) on the host,
 * after gathering every block's arrays there. anabranch_cfl3d.F keeps those routines and
 * splits their work:
 *   - the host calls them as CFL3D does, without the arrays: the node tree, its names, sizes,
 *     descriptors and the host's own values are CFL3D's, through CGNS's library. The two calls
 *     that carry a block's values (cg_field_write_f, cg_array_write_f, renamed in CFL3D's
 *     cgnstools.o to abc_h_*) make the array's node with one value, so that HDF5 allocates its
 *     contiguous storage, and remember the dataset's path.
 *   - each owner calls the same routines (a second copy of cgnstools.o, every routine renamed
 *     abc_o_*, its CGNS calls renamed to the abc_o_cg_* below) on its own arrays: the values
 *     the routines would write are kept here, in call order, with no file touched.
 *   - at the dump's last block the host closes the file, finds each dataset's bytes
 *     (ab_h5_extents) and sends each owner the places of its arrays; the owners write them
 *     through anabranch (a raw records layout), and the host opens the file again.
 * The k-th array an owner keeps for a block is the k-th the host made for it: both run the
 * same routines on a block of the same dimensions and model.
 *
 * Compiled by `anabranch-cfl3d build` when CFL3D's build defines CGNS; CGNS's library of that
 * build (cgnslib.h, int-sized cgsize_t as CFL3D's Fortran passes) is the one called.
 */
#define _GNU_SOURCE
#include <cgnslib.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ab_h5_extents(const char* path, int64_t n, const char* const* datasets, int64_t* offsets, int64_t* bytes);

/* CGNS's Fortran entry points this file passes calls on to (cg_ftoc.c; lengths last). */
void cg_field_write_f_(int* fn, int* B, int* Z, int* S, int* type, char* name, void* data, int* F, int* ier, size_t len);
void cg_array_write_f_(char* name, int* type, int* ndim, int* dims, void* data, int* ier, size_t len);
void cg_open_f_(char* name, int* mode, int* fn, int* ier, size_t len);

static int mode = 0;       /* 0: CGNS's own calls; 1: the host (nodes made); 2: an owner (values kept) */
static int64_t nfield = 0; /* values of a field array in the routines now running */
static char path_[4096];   /* the CGNS file CFL3D opened last */

struct item {
  char* where;   /* the host: the HDF5 dataset */
  void* values;  /* an owner: the values */
  int64_t bytes; /* an owner: their bytes */
};
static struct item* items = NULL;
static int64_t nitems = 0, cap = 0;

static void die(const char* what) {
  fprintf(stderr, "anabranch_cfl3d: %s\n", what);
  fflush(stderr);
  exit(1);
}

static struct item* add(void) {
  if (nitems == cap) {
    cap = cap ? 2 * cap : 64;
    items = realloc(items, (size_t)cap * sizeof *items);
    if (!items) die("out of memory (CGNS arrays)");
  }
  memset(&items[nitems], 0, sizeof *items);
  return &items[nitems++];
}

/* A Fortran string (blank-padded) as a C one. */
static void cstr(const char* s, size_t len, char* out, size_t cap_) {
  while (len > 0 && s[len - 1] == ' ') --len;
  if (len >= cap_) len = cap_ - 1;
  memcpy(out, s, len);
  out[len] = 0;
}

static int real_bytes(int type) { return type == CGNS_ENUMV(RealDouble) ? 8 : type == CGNS_ENUMV(RealSingle) ? 4 : 0; }

/* ---- called from anabranch_cfl3d.F ---- */

void abc_cg_mode(int m, int64_t n) {
  mode = m;
  nfield = n;
}
int64_t abc_cg_count(void) { return nitems; }
void* abc_cg_values(int64_t i) { return items[i].values; }
int64_t abc_cg_bytes(int64_t i) { return items[i].bytes; }
void abc_cg_clear(void) {
  for (int64_t i = 0; i < nitems; ++i) {
    free(items[i].where);
    free(items[i].values);
  }
  nitems = 0;
}

/* The CGNS file's path (NUL-terminated) into out (len bytes, blank-padded). */
void abc_cg_path(char* out, size_t len) {
  size_t n = strlen(path_);
  if (n > len) n = len;
  memcpy(out, path_, n);
  memset(out + n, ' ', len - n);
}

/* The host: the places of items [first, first + n) (offsets and bytes); 0, or 1 with the
 * reason on stderr. */
int abc_cg_extents(int64_t first, int64_t n, int64_t* offsets, int64_t* bytes) {
  const char** names = malloc((size_t)(n > 0 ? n : 1) * sizeof *names);
  if (!names) die("out of memory (CGNS arrays)");
  for (int64_t i = 0; i < n; ++i) names[i] = items[first + i].where;
  const int r = ab_h5_extents(path_, n, names, offsets, bytes);
  free(names);
  return r;
}

/* A copy of the CGNS file `from` as `to` (the last good file, before a dump changes it): made
 * as to.tmp (copy_file_range, which a file system may share blocks for, else read and
 * write), synced and renamed, so that `to` is whole or absent. 0, or errno. */
int abc_cg_keep(const char* from, const char* to) {
  char tmp[4200];
  if (snprintf(tmp, sizeof tmp, "%s.tmp", to) >= (int)sizeof tmp) return ENAMETOOLONG;
  const int in = open(from, O_RDONLY);
  if (in < 0) return errno;
  const int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out < 0) {
    const int e = errno;
    close(in);
    return e;
  }
  int e = 0;
  struct stat st;
  if (fstat(in, &st) != 0) e = errno;
  for (off_t done = 0; !e && done < st.st_size;) {
    ssize_t n = copy_file_range(in, NULL, out, NULL, (size_t)(st.st_size - done), 0);
    if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
      static char buf[1 << 20];
      n = read(in, buf, sizeof buf);
      for (ssize_t w = 0; n > 0 && w < n;) {
        const ssize_t k = write(out, buf + w, (size_t)(n - w));
        if (k < 0) {
          n = -1;
          break;
        }
        w += k;
      }
    }
    if (n < 0) e = errno;
    else if (n == 0) e = EIO; /* the file shrank under us */
    else done += n;
  }
  if (!e && fsync(out) != 0) e = errno;
  if (close(out) != 0 && !e) e = errno;
  close(in);
  if (!e && rename(tmp, to) != 0) e = errno;
  if (e) unlink(tmp);
  return e;
}

/* CFL3D's CGNS file closed (before the owners write into it) and opened again (after). */
int abc_cg_close(int fn) { return cg_close(fn); }
int abc_cg_reopen(int* fn) { return cg_open(path_, CG_MODE_MODIFY, fn); }

/* CFL3D's deletion of a block's boundary values (a dump without ghost values). */
void abc_cg_delete_bcs(int fn, int B, int Z) {
  if (cg_goto(fn, B, "Zone_t", Z, "end") == 0) cg_delete_node("CFL3DBoundaryValues");
}

/* ---- the host's copy of CFL3D's cgnstools.o calls these ---- */

void abc_h_open_f_(char* name, int* m, int* fn, int* ier, size_t len) {
  cstr(name, len, path_, sizeof path_);
  cg_open_f_(name, m, fn, ier, len);
}

void abc_h_field_write_f_(int* fn, int* B, int* Z, int* S, int* type, char* name, void* data, int* F, int* ier, size_t len) {
  if (mode != 1) {
    cg_field_write_f_(fn, B, Z, S, type, name, data, F, ier, len);
    return;
  }
  char field[64], base[64], zone[64], sol[64];
  cstr(name, len, field, sizeof field);
  cgsize_t one[3] = {1, 1, 1}; /* any one value: the array's storage is allocated whole */
  *ier = cg_field_partial_write(*fn, *B, *Z, *S, (CGNS_ENUMT(DataType_t)) * type, field, one, one, data, F);
  if (*ier) return;
  int cd, pd;
  cgsize_t size[9];
  CGNS_ENUMT(GridLocation_t) loc;
  if ((*ier = cg_base_read(*fn, *B, base, &cd, &pd)) || (*ier = cg_zone_read(*fn, *B, *Z, zone, size)) ||
      (*ier = cg_sol_info(*fn, *B, *Z, *S, sol, &loc)))
    return;
  struct item* it = add();
  const size_t n = strlen(base) + strlen(zone) + strlen(sol) + strlen(field) + 16;
  it->where = malloc(n);
  if (!it->where) die("out of memory (CGNS arrays)");
  snprintf(it->where, n, "/%s/%s/%s/%s/ data", base, zone, sol, field);
}

void abc_h_array_write_f_(char* name, int* type, int* ndim, int* dims, void* data, int* ier, size_t len) {
  if (mode != 1) {
    cg_array_write_f_(name, type, ndim, dims, data, ier, len);
    return;
  }
  char array[64], base[64], zone[64], user[64];
  cstr(name, len, array, sizeof array);
  if (*ndim < 1 || *ndim > 12) die("a CGNS array of more than 12 dimensions");
  cgsize_t d[12], one[12], m1 = 1;
  for (int i = 0; i < *ndim; ++i) {
    d[i] = dims[i];
    one[i] = 1;
  }
  int fn, B, depth, num[CG_MAX_GOTO_DEPTH];
  char lab[CG_MAX_GOTO_DEPTH][33], *labels[CG_MAX_GOTO_DEPTH];
  for (int i = 0; i < CG_MAX_GOTO_DEPTH; ++i) labels[i] = lab[i];
  if ((*ier = cg_where(&fn, &B, &depth, labels, num))) return;
  /* CFL3D's boundary values: Zone_t / UserDefinedData_t */
  if (depth != 2 || strcmp(labels[0], "Zone_t") != 0 || strcmp(labels[1], "UserDefinedData_t") != 0)
    die("a CGNS array outside a zone's UserDefinedData_t node: not written through anabranch");
  *ier = cg_array_general_write(array, (CGNS_ENUMT(DataType_t)) * type, *ndim, d, one, one, (CGNS_ENUMT(DataType_t)) * type, 1, &m1,
                                &m1, &m1, data);
  if (*ier) return;
  int cd, pd;
  cgsize_t size[9];
  if ((*ier = cg_base_read(fn, B, base, &cd, &pd)) || (*ier = cg_zone_read(fn, B, num[0], zone, size)) ||
      (*ier = cg_goto(fn, B, "Zone_t", num[0], "end")) || (*ier = cg_user_data_read(num[1], user)) ||
      (*ier = cg_goto(fn, B, "Zone_t", num[0], "UserDefinedData_t", num[1], "end")))
    return;
  struct item* it = add();
  const size_t n = strlen(base) + strlen(zone) + strlen(user) + strlen(array) + 16;
  it->where = malloc(n);
  if (!it->where) die("out of memory (CGNS arrays)");
  snprintf(it->where, n, "/%s/%s/%s/%s/ data", base, zone, user, array);
}

/* ---- an owner's copy of CFL3D's cgnstools.o calls these: nothing reaches a file ---- */

static void keep(const void* data, int64_t values, int type) {
  const int rb = real_bytes(type);
  if (rb == 0) die("a CGNS array of a type other than RealSingle or RealDouble");
  if (values < 0) die("a CGNS array of unknown size");
  struct item* it = add();
  it->bytes = values * rb;
  it->values = malloc((size_t)(it->bytes > 0 ? it->bytes : 1));
  if (!it->values) die("out of memory (CGNS arrays)");
  memcpy(it->values, data, (size_t)it->bytes);
}

static void owner_only(void) {
  if (mode != 2) die("CFL3D's CGNS routines called on a block's owner outside a dump");
}

void abc_o_cg_goto_f(int* fn, int* B, int* ier) {
  (void)fn;
  (void)B;
  owner_only();
  *ier = 0;
}
void abc_o_cg_sol_write_f_(int* fn, int* B, int* Z, char* name, int* loc, int* S, int* ier, size_t len) {
  (void)fn, (void)B, (void)Z, (void)name, (void)loc, (void)len;
  owner_only();
  *S = 1;
  *ier = 0;
}
void abc_o_cg_descriptor_write_f_(char* name, char* text, int* ier, size_t l1, size_t l2) {
  (void)name, (void)text, (void)l1, (void)l2;
  owner_only();
  *ier = 0;
}
void abc_o_cg_rind_write_f(int* rind, int* ier) {
  (void)rind;
  owner_only();
  *ier = 0;
}
void abc_o_cg_field_write_f_(int* fn, int* B, int* Z, int* S, int* type, char* name, void* data, int* F, int* ier, size_t len) {
  (void)fn, (void)B, (void)Z, (void)S, (void)name, (void)len;
  owner_only();
  keep(data, nfield, *type);
  *F = 1;
  *ier = 0;
}
void abc_o_cg_user_data_write_f_(char* name, int* ier, size_t len) {
  (void)name, (void)len;
  owner_only();
  *ier = 0;
}
void abc_o_cg_nuser_data_f(int* n, int* ier) {
  owner_only();
  *n = 0;
  *ier = 0;
}
void abc_o_cg_user_data_read_f_(int* i, char* name, int* ier, size_t len) {
  (void)i;
  owner_only();
  memset(name, ' ', len);
  *ier = 0;
}
void abc_o_cg_array_write_f_(char* name, int* type, int* ndim, int* dims, void* data, int* ier, size_t len) {
  (void)name, (void)len;
  owner_only();
  int64_t n = 1;
  for (int i = 0; i < *ndim; ++i) n *= dims[i];
  keep(data, n, *type);
  *ier = 0;
}
void abc_o_cg_error_exit_f(void) { die("CGNS error on a block's owner"); }
