#pragma once
// NCCL's tuning model: the constants and latency formulas of src/graph/tuning.cc (NCCL 2.30;
// shared/reference/collectives.md sections 1.3-1.7), apart from the estimate that uses them
// (collective.cpp). Private to the collectives folder and the collective lesson.

#include "collectives/collective.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace railyard::engine::detail {

// ---- NCCL's tuning constants (src/graph/tuning.cc, NCCL 2.30; shared/reference/collectives.md
// sections 1.3-1.7). Latencies in microseconds, bandwidth caps in GB/s.
enum ProtoIndex { kLL = 0, kLL128 = 1, kSimple = 2 };

inline int protoIndex(Protocol p)
{
    return p == Protocol::LL ? kLL : p == Protocol::LL128 ? kLL128 : kSimple;
}

struct LatencyRow
{
    double v[3]; // LL, LL128, Simple
};

inline constexpr LatencyRow kBaseTree{{6.8, 14.0, 8.4}};
inline constexpr LatencyRow kBaseRing{{6.6, 14.0, 8.4}};
inline constexpr LatencyRow kNvlinkTree{{0.6, 1.25, 4.0}};
inline constexpr LatencyRow kNvlinkRing{{0.6, 1.9, 3.4}};
inline constexpr LatencyRow kPciTree{{1.0, 1.9, 4.0}};
inline constexpr LatencyRow kPciRing{{1.0, 2.5, 5.7}};
inline constexpr LatencyRow kNetTree{{5.0, 8.5, 14.0}};
inline constexpr LatencyRow kNetRing{{2.7, 4.0, 14.0}};
inline constexpr double kNvlsIntraUs = 25.0, kNvlsNetUs = 18.0;
inline constexpr double kNvlsTreeIntraUs = 25.0, kNvlsTreeNetUs = 20.9;
inline constexpr double kCollNetIntraUs = 3.7, kCollNetNetUs = 31.0;
inline constexpr double kNetOverheadUs = 1.0; // Intel hosts; x3 for Simple
inline constexpr double kBasePat = 8.0;       // PAT's base latency (all protocols)
// PAT's bus bandwidth is three quarters of the channels' (tuning.cc).
inline constexpr double kPatEfficiency = 0.75;

// Per-channel ceilings by architecture and node count (1, 2, >= 3 nodes).
inline constexpr double kPerChMaxRingLL128[4][3] = {{20, 20, 20},
                                                    {20, 20, 20},
                                                    {36.7, 36.7, 36.7},
                                                    {40, 40, 40}};
inline constexpr double kPerChMaxTreeLL128[4][3] = {{20, 20, 20},
                                                    {20, 20, 20},
                                                    {36.7, 36.7, 29.0},
                                                    {55.6, 31.67, 20.0}};
inline constexpr double kPerChMaxTree[4][3] = {{26.5, 18.5, 10.0},
                                               {24.0, 23.6, 17.8},
                                               {38.7, 41.4, 36.0},
                                               {70.0, 42.8, 24.0}};
inline constexpr double kPerChMaxNvlsTree[4][3] = {{0, 0, 0},
                                                   {0, 0, 0},
                                                   {0, 57.7, 45.5},
                                                   {0, 96, 80}};
inline constexpr double kLLMaxSingleNode[4] = {39.0, 87.7, 141.0, 282.0};
inline constexpr double kLLMaxMultiNode[2] = {39.0, 20.4}; // Intel hosts: 2 nodes, >= 3 nodes
// NCCL's Simple-protocol efficiency for the pipelined tree and CollNet algorithms.
inline constexpr double kTreeEfficiency = 0.92;
// NVLink SHARP loses efficiency with the number of GPUs the switches reduce across (their
// fan-in): eff(p) = nvls_efficiency / (1 + p / kNvlsFanIn). Fitted to the measured NVLS
// all-reduce of H100 at p = 5..8 (collectives.md S1, S6) and GB200 at p = 8 and 72 (R4, R1).
inline constexpr double kNvlsFanIn = 286.0;
// A hierarchical collective's NVLink and network stages run as a pipeline of chunks, but not
// perfectly: the shorter stage adds this share of itself (2-node H100 NVLS-tree, M2; 8-node
// NVLink/NIC balance of the SimAI worked case, collectives.md 4.4).
inline constexpr double kStageOverlapLoss = 0.15;
// Launching an NCCL kernel without CUDA graphs and waiting for it: what a 1 KB all-reduce on
// one H100 server takes beyond NCCL's own latency model (26 us measured, X3, against 15).
inline constexpr double kLaunchUs = 11.0;

inline int nodeBucket(int domains)
{
    return domains <= 1 ? 0 : domains == 2 ? 1 : 2;
}

inline double log2Nodes(int domains)
{
    return std::log2(std::max(1, domains));
}

// The network's post overhead per message (x3 for Simple, tuning.cc getNetOverhead).
double netOverheadUs(Protocol proto);
// One network hop of an algorithm (NCCL's hardware latency row for NET, plus the post
// overhead) and the NIC's cost per message beyond NCCL's InfiniBand-calibrated model.
double netHopUs(const GroupShape &g, const LatencyRow &row, Protocol proto);
// NCCL's latency of one collective in microseconds (its tuning model, before kernel launch):
// `bytes` matters only for the ring's plateau correction.
double latencyUs(const GroupShape &g, CollectiveOp op, Algorithm algo, Protocol proto, double bytes);

} // namespace railyard::engine::detail
