/* Counts a process's MPI calls and the bytes it hands to them, through MPI's profiling
 * interface: loaded with LD_PRELOAD (bench/rank_probe.py does), each MPI_X below counts
 * and calls PMPI_X. At MPI_Finalize the counts go to $AB_MPI_COUNT_DIR/mpi.<rank>.json:
 * per call, how many and the bytes this rank sent (a collective's whole send buffer; a
 * file write's bytes under "file"). Nothing is printed; without the variable nothing is
 * written. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum {
  SEND, ISEND, RECV, IRECV, BCAST, REDUCE, ALLREDUCE, GATHER, GATHERV, ALLGATHER, ALLGATHERV, ALLTOALL, ALLTOALLV,
  EXSCAN, SCAN, BARRIER, COMM_SPLIT, COMM_SPLIT_TYPE, FILE_OPEN, FILE_WRITE_AT, FILE_WRITE_AT_ALL, FILE_READ_AT,
  FILE_READ_AT_ALL, KINDS
};
static const char* names[KINDS] = {
    "Send", "Isend", "Recv", "Irecv", "Bcast", "Reduce", "Allreduce", "Gather", "Gatherv", "Allgather", "Allgatherv",
    "Alltoall", "Alltoallv", "Exscan", "Scan", "Barrier", "Comm_split", "Comm_split_type", "File_open",
    "File_write_at", "File_write_at_all", "File_read_at", "File_read_at_all"};
static long long calls[KINDS], bytes[KINDS];

static long long size_of(int count, MPI_Datatype type) {
  int s = 0;
  if (type != MPI_DATATYPE_NULL) PMPI_Type_size(type, &s);
  return (long long)count * s;
}
static int comm_size(MPI_Comm c) {
  int n = 1;
  PMPI_Comm_size(c, &n);
  return n;
}
static void count(int kind, long long b) {
  calls[kind]++;
  bytes[kind] += b;
}

int MPI_Send(const void* b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c) {
  count(SEND, size_of(n, t));
  return PMPI_Send(b, n, t, d, tag, c);
}
int MPI_Isend(const void* b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request* r) {
  count(ISEND, size_of(n, t));
  return PMPI_Isend(b, n, t, d, tag, c, r);
}
int MPI_Recv(void* b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Status* st) {
  count(RECV, 0);
  return PMPI_Recv(b, n, t, s, tag, c, st);
}
int MPI_Irecv(void* b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Request* r) {
  count(IRECV, 0);
  return PMPI_Irecv(b, n, t, s, tag, c, r);
}
int MPI_Bcast(void* b, int n, MPI_Datatype t, int root, MPI_Comm c) {
  count(BCAST, size_of(n, t));
  return PMPI_Bcast(b, n, t, root, c);
}
int MPI_Reduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c) {
  count(REDUCE, size_of(n, t));
  return PMPI_Reduce(s, r, n, t, op, root, c);
}
int MPI_Allreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  count(ALLREDUCE, size_of(n, t));
  return PMPI_Allreduce(s, r, n, t, op, c);
}
int MPI_Gather(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, int root, MPI_Comm c) {
  count(GATHER, size_of(sn, st));
  return PMPI_Gather(s, sn, st, r, rn, rt, root, c);
}
int MPI_Gatherv(const void* s, int sn, MPI_Datatype st, void* r, const int* rn, const int* rd, MPI_Datatype rt, int root,
                MPI_Comm c) {
  count(GATHERV, size_of(sn, st));
  return PMPI_Gatherv(s, sn, st, r, rn, rd, rt, root, c);
}
int MPI_Allgather(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, MPI_Comm c) {
  count(ALLGATHER, size_of(sn, st));
  return PMPI_Allgather(s, sn, st, r, rn, rt, c);
}
int MPI_Allgatherv(const void* s, int sn, MPI_Datatype st, void* r, const int* rn, const int* rd, MPI_Datatype rt,
                   MPI_Comm c) {
  count(ALLGATHERV, size_of(sn, st));
  return PMPI_Allgatherv(s, sn, st, r, rn, rd, rt, c);
}
int MPI_Alltoall(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, MPI_Comm c) {
  count(ALLTOALL, size_of(sn, st) * comm_size(c));
  return PMPI_Alltoall(s, sn, st, r, rn, rt, c);
}
int MPI_Alltoallv(const void* s, const int* sn, const int* sd, MPI_Datatype st, void* r, const int* rn, const int* rd,
                  MPI_Datatype rt, MPI_Comm c) {
  long long total = 0;
  const int n = comm_size(c);
  for (int i = 0; i < n; ++i) total += sn[i];
  count(ALLTOALLV, size_of(1, st) * total);
  return PMPI_Alltoallv(s, sn, sd, st, r, rn, rd, rt, c);
}
int MPI_Exscan(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  count(EXSCAN, size_of(n, t));
  return PMPI_Exscan(s, r, n, t, op, c);
}
int MPI_Scan(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  count(SCAN, size_of(n, t));
  return PMPI_Scan(s, r, n, t, op, c);
}
int MPI_Barrier(MPI_Comm c) {
  count(BARRIER, 0);
  return PMPI_Barrier(c);
}
int MPI_Comm_split(MPI_Comm c, int color, int key, MPI_Comm* out) {
  count(COMM_SPLIT, 0);
  return PMPI_Comm_split(c, color, key, out);
}
int MPI_Comm_split_type(MPI_Comm c, int type, int key, MPI_Info info, MPI_Comm* out) {
  count(COMM_SPLIT_TYPE, 0);
  return PMPI_Comm_split_type(c, type, key, info, out);
}
int MPI_File_open(MPI_Comm c, const char* name, int mode, MPI_Info info, MPI_File* f) {
  count(FILE_OPEN, 0);
  return PMPI_File_open(c, name, mode, info, f);
}
int MPI_File_write_at(MPI_File f, MPI_Offset o, const void* b, int n, MPI_Datatype t, MPI_Status* s) {
  count(FILE_WRITE_AT, size_of(n, t));
  return PMPI_File_write_at(f, o, b, n, t, s);
}
int MPI_File_write_at_all(MPI_File f, MPI_Offset o, const void* b, int n, MPI_Datatype t, MPI_Status* s) {
  count(FILE_WRITE_AT_ALL, size_of(n, t));
  return PMPI_File_write_at_all(f, o, b, n, t, s);
}
int MPI_File_read_at(MPI_File f, MPI_Offset o, void* b, int n, MPI_Datatype t, MPI_Status* s) {
  count(FILE_READ_AT, size_of(n, t));
  return PMPI_File_read_at(f, o, b, n, t, s);
}
int MPI_File_read_at_all(MPI_File f, MPI_Offset o, void* b, int n, MPI_Datatype t, MPI_Status* s) {
  count(FILE_READ_AT_ALL, size_of(n, t));
  return PMPI_File_read_at_all(f, o, b, n, t, s);
}

int MPI_Finalize(void) {
  const char* dir = getenv("AB_MPI_COUNT_DIR");
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/mpi.%d.json", dir, rank);
    FILE* f = fopen(path, "w");
    if (f) {
      fprintf(f, "{");
      for (int k = 0; k < KINDS; ++k)
        fprintf(f, "%s\"%s\": [%lld, %lld]", k ? ", " : "", names[k], calls[k], bytes[k]);
      fprintf(f, "}\n");
      fclose(f);
    }
  }
  return PMPI_Finalize();
}
