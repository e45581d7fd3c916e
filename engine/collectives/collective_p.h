#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace railyard::engine {
class LinkTraffic;
class Topology;
struct GroupShape;
} // namespace railyard::engine

namespace railyard::engine::detail {

// NCCL's architecture index for its tuning tables (0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell):
// shared by the collective planner (collective.cpp) and the group analysis (groupshape.cpp).
int archIndex(const std::string &arch);

// The routing pieces of the traffic model (collectivetraffic.cpp), shared with the collective
// lesson (collectivelesson.cpp) so that each step of a lesson crosses the links the estimate
// puts its bytes on.
// How many members of a domain carry its traffic to other domains (NCCL's network channels).
int netWidth(const Topology &t, int members);
// The members of a group's domain `d` as a mask of local GPU positions in their server.
std::uint64_t localMask(const Topology &t, const GroupShape &g, int d);
int nicIndex(const Topology &t, int nicDevice);
// The NIC a GPU uses for its k-th flow (GPUs with several NICs spread flows over them).
int gpuNic(const Topology &t, int gpu, int k);
// Sends `bytes` from GPU a to GPU b across the fabric: host path, NICs, leaves, spine.
void addNetworkFlow(
        LinkTraffic &tr, const Topology &t, int a, int b, double bytes, int k, double flows);
// NCCL's double binary tree over `n` nodes: for each tree, each node's parent (-1: the root).
std::array<std::vector<int>, 2> doubleBinaryTree(int n);

} // namespace railyard::engine::detail
