#include "collectives/collective_p.h"
#include "collectives/nccltuning_p.h"

namespace railyard::engine::detail {

int archIndex(const std::string &arch)
{
    if (arch == "volta")
        return 0;
    if (arch == "ampere")
        return 1;
    if (arch == "hopper")
        return 2;
    return 3; // blackwell
}

double netOverheadUs(Protocol proto)
{
    return kNetOverheadUs * (proto == Protocol::Simple ? 3 : 1);
}

double netHopUs(const GroupShape &g, const LatencyRow &row, Protocol proto)
{
    return row.v[protoIndex(proto)] + netOverheadUs(proto) + g.netMessageUs;
}

namespace {

double ringLatencyUs(const GroupShape &g, CollectiveOp op, Protocol proto, double bytes)
{
    const int p = protoIndex(proto);
    const int n = g.n, N = g.domains;
    double nsteps = 0, inter = 0;
    switch (op) {
    case CollectiveOp::AllReduce:
        nsteps = 2.0 * (n - 1);
        inter = N > 1 ? 2.0 * (N - 1) : 0;
        break;
    case CollectiveOp::AllGather:
    case CollectiveOp::ReduceScatter:
        nsteps = n - 1;
        inter = N > 1 ? N - 1 : 0;
        break;
    case CollectiveOp::Broadcast:
        nsteps = n - 1;
        inter = N > 1 ? N - 1 : 0;
        break;
    default: nsteps = 1; inter = N > 1 ? 1 : 0;
    }
    double intraLat = (g.pcieOnly ? kPciRing : kNvlinkRing).v[p];
    const double overhead = kNetOverheadUs * (proto == Protocol::Simple ? 3 : 1);
    const double interLat = netHopUs(g, kNetRing, proto);
    if (N > 1)
        intraLat = std::max(intraLat, overhead);
    double lat = kBaseRing.v[p] + (nsteps - inter) * intraLat + inter * interLat;
    // NCCL's "plateau" correction for large multi-node Simple rings (Ampere and later).
    if (op == CollectiveOp::AllReduce && proto == Protocol::Simple && N > 1
        && bytes / (16.0 * n) >= 64)
        lat *= archIndex(g.architecture) >= 1 ? 1.4 : 1.9;
    return lat;
}

} // namespace

double latencyUs(const GroupShape &g, CollectiveOp op, Algorithm algo, Protocol proto, double bytes)
{
    const int p = protoIndex(proto);
    const int N = g.domains;
    switch (algo) {
    case Algorithm::Ring:
    case Algorithm::Hierarchical: return ringLatencyUs(g, op, proto, bytes);
    case Algorithm::Tree: {
        const double intra = (g.pcieOnly ? kPciTree : kNvlinkTree).v[p];
        const double inter = netHopUs(g, kNetTree, proto);
        return kBaseTree.v[p] + 2.0 * ((g.ppn - 1) * intra + log2Nodes(N) * inter);
    }
    case Algorithm::Nvls: return kNvlsIntraUs + (N > 1 ? kNvlsNetUs + g.netMessageUs : 0);
    case Algorithm::NvlsTree:
        return kNvlsTreeIntraUs
               + 2.0 * log2Nodes(N) * (kNvlsTreeNetUs + netOverheadUs(proto) + g.netMessageUs);
    case Algorithm::Sharp:
        return 2.0 * (std::min(1, g.ppn - 1) * kCollNetIntraUs + 0.4 * (g.ppn - 1)) + kCollNetNetUs
               + netOverheadUs(proto) + g.netMessageUs;
    case Algorithm::Pat:
        // One GPU per node: NCCL takes the tree's network latency (fully exposed), a log part
        // and a part linear in the ranks (tuning.cc: "still a linear part").
        return kBasePat + log2Nodes(N) * netHopUs(g, kNetTree, proto) / 3.5 + 2.8 * g.n;
    case Algorithm::Direct:
    case Algorithm::P2p: {
        // Grouped point-to-point sends: one step, plus a little per peer to post.
        const double hop = N > 1 ? netHopUs(g, kNetRing, proto)
                                 : (g.pcieOnly ? kPciRing : kNvlinkRing).v[p];
        const double peers = algo == Algorithm::Direct ? g.n - 1 : 1;
        return kBaseRing.v[p] + hop + 0.1 * peers;
    }
    default: return kBaseRing.v[p];
    }
}

} // namespace railyard::engine::detail
