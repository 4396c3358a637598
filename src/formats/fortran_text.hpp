// Fortran text records as TELEMAC's tools write and read them (gfortran's runtime):
// list-directed output (WRITE(U,*) a, b, c), the few edit descriptors partel uses (Iw, I0,
// Fw.d) and list-directed input. Byte-for-byte identity with partel's and gretel's text
// files depends on these rules; docs/formats/telemac-partitions.md lists them.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace anabranch {
class FileSource;
}

namespace anabranch::fortran {

// One list-directed output record, as gfortran writes it: a blank opens the record and
// separates items (none between two character items); INTEGER(4) in 11 columns; REAL(4)
// as G16.9E2 and REAL(8) as G25.17E3 (F editing between 0.1 and 10**d, with e+2 trailing
// blanks; E editing outside); character items as given. line() ends it with '\n'.
class ListRecord {
 public:
  ListRecord& integer(std::int64_t v);
  ListRecord& real4(float v);
  ListRecord& real8(double v);
  ListRecord& text(const std::string& s);
  std::string line() const { return out_ + '\n'; }

 private:
  void separate(bool character);
  std::string out_;
  bool empty_ = true, last_character_ = false;
};

// Iw: right-justified in w columns, w asterisks when it does not fit.
std::string iw(std::int64_t v, int w);
// I0: the shortest form.
std::string i0(std::int64_t v);
// Fw.d of a double, right-justified, w asterisks when it does not fit.
std::string fw(double v, int w, int d);
// The shortest text of a number read from a file (for messages): 893, 1.5.
std::string g0(double v);
// A repeated group such as (10(I7,1X)) over values: gfortran leaves out the blanks of X
// descriptors that end a record.
std::string iw_group(const std::vector<std::int64_t>& values, int w);

// List-directed input: values separated by blanks or commas, a record ending the values
// of a READ only when enough were found (a READ of n values goes on to the next records),
// the rest of the last record skipped. Values are returned as text; an unquoted character
// value ends at a blank, a comma or a slash.
class ListReader {
 public:
  ListReader(std::string text, std::string path) : text_(std::move(text)), path_(std::move(path)) {}
  // Streams the file (a window of a few MiB in memory, read as an input): for files of any
  // size, such as a friction-zones file with a line per node.
  explicit ListReader(const std::string& path);
  // One READ of n values (n = 0 skips a record). Throws FormatError naming the file, the
  // line and its byte offset when the file ends first.
  std::vector<std::string> read(int n, const char* what);
  // The same, converted; a value that is not a number is a FormatError.
  std::vector<std::int64_t> read_integers(int n, const char* what);
  std::vector<double> read_reals(int n, const char* what);
  // Line number (1-based) and byte offset of the record the last READ started in.
  std::int64_t line() const { return start_line_; }
  std::int64_t offset() const { return start_offset_; }
  // Byte offset where the next READ starts.
  std::int64_t here() const { return base_ + static_cast<std::int64_t>(pos_); }
  const std::string& path() const { return path_; }
  bool at_end() { return !more(); }

 private:
  template <class T, class Parse>
  std::vector<T> read_numbers(int n, const char* what, const char* kind, Parse parse);
  // Whether a byte is left at pos_, reading the next window of a streamed file when needed.
  bool more() { return pos_ < text_.size() || refill(); }
  bool refill();
  std::string text_, path_;
  std::size_t pos_ = 0;
  std::int64_t line_ = 1, start_line_ = 1, start_offset_ = 0;
  std::shared_ptr<const FileSource> file_;  // a streamed file, or none
  std::int64_t base_ = 0, next_ = 0;  // file offsets of text_[0] and of the first byte not read yet
};

}  // namespace anabranch::fortran
