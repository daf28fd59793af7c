#include "sim/engine/load_book.h"

#include <cstddef>

namespace sim::engine {

LoadBook::LoadBook(const std::vector<int>& pe_nodes, const std::vector<int>& de_nodes, int nodes,
                   double hbm_per_de_bytes) {
  for (std::size_t i = 0; i < pe_nodes.size(); ++i)
    view_.pes.push_back({static_cast<int>(i), pe_nodes[i], 0, 0, 0});
  for (std::size_t i = 0; i < de_nodes.size(); ++i)
    view_.des.push_back({static_cast<int>(i), de_nodes[i], 0, 0, hbm_per_de_bytes});
  view_.read_q.assign(nodes, 0.0);
}

}  // namespace sim::engine
