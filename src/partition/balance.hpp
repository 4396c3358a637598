// Load balancing of multi-block structured grids: blocks of very different sizes dealt to
// P processes by work (cells), not by count, keeping block-to-block faces inside processes
// where possible; blocks split along their longest index direction when the balance needs
// it, so that any process count works, including more processes than blocks.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "grid/block.hpp"

namespace anabranch {

enum class BalanceMethod { Metis, Greedy, RoundRobin };
BalanceMethod parse_balance_method(const std::string& name);
const char* to_string(BalanceMethod m);

struct BalanceOptions {
  BalanceMethod method = BalanceMethod::Metis;
  double comm_weight = 1.0;   // METIS edge weight per shared face cell (0: work only)
  bool split = true;          // split blocks when the balance needs it
  double tolerance = 1.03;    // target max/mean load
  int max_pieces_per_process = 8;  // splitting stops there
};

// One piece of a block: the whole block, or an index range of it.
struct Piece {
  std::int64_t block = 0;  // block id
  int index = 0, count = 1;  // piece index within the block, pieces of the block
  std::array<std::array<std::int64_t, 2>, 3> range{};  // [begin, end) per index direction (cells)
  double weight = 0;
};

struct BalanceResult {
  std::vector<Piece> pieces;
  std::vector<int> process;   // per piece
  std::vector<double> load;   // per process
  double imbalance = 0;       // max / mean load
  double cut_cells = 0;       // face cells between pieces on different processes
  double roundrobin_imbalance = 0, roundrobin_cut_cells = 0;
  int splits = 0;
};

// Throws UsageError on duplicate ids, faces naming unknown blocks, negative sizes, P < 1.
BalanceResult balance(const std::vector<Block>& blocks, const std::vector<Face>& faces, int nprocs,
                      const BalanceOptions& options = {});

}  // namespace anabranch
