// anabranch: partition meshes, write one shared file from all MPI ranks, merge and convert.
#include "cli/commands.hpp"

int main(int argc, char** argv) { return anabranch::cli::main(argc, argv); }
