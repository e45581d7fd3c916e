#pragma once

#include <string>

namespace railyard::engine::detail {

// NCCL's architecture index for its tuning tables (0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell):
// shared by the collective planner (collective.cpp) and the group analysis (groupshape.cpp).
int archIndex(const std::string &arch);

} // namespace railyard::engine::detail
