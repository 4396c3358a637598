// Where a file came from: the process-wide facts every output records (program, version,
// git revision, command line, compiler, OS, start time, input files with sizes and CRC-32
// checksums). pio adds the parallel facts (hosts, nodes, MPI library, strategy, hints).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace anabranch::provenance {

// The command line, as the program was started (main calls this; otherwise the library
// reads /proc/self/cmdline).
void set_command_line(int argc, char** argv);
// Records an input file; its size and CRC-32 are computed at once by another thread
// (overlapping the command's work), and facts() waits for them. here false: by others
// (every rank of a parallel run its share, pio's parallel facts), given by set_input.
void add_input(const std::string& path, bool here = true);
// The inputs whose size and CRC-32 are still to be given, in the order added.
std::vector<std::string> inputs_to_check();
void set_input(const std::string& path, std::int64_t bytes, std::uint32_t crc);
// CRC-32 (the zlib / PNG polynomial, as `python -c "zlib.crc32"` gives) of a whole file.
std::uint32_t crc32_file(const std::string& path);

// Name -> value, every value a string; "inputs" is a JSON array of {path, bytes, crc32}
// (left out with with_inputs false: the checksums may still be in the making).
std::map<std::string, std::string> facts(bool with_inputs = true);
// The "inputs" fact alone, once every input's checksum is known.
std::string inputs();

}  // namespace anabranch::provenance
