#pragma once

#include "topology/topology.h"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace railyard::engine {

class LinkTraffic;

enum class CollectiveOp { AllReduce, AllGather, ReduceScatter, AllToAll, Broadcast, SendRecv };
// What the user may ask for (Auto picks as NCCL would), plus what the estimate reports: NVLS on
// several NVLink domains runs as NVLS-tree; all-to-all is direct; sendrecv is point to point.
enum class Algorithm {
    Auto,
    Ring,
    Tree,
    Nvls,
    Sharp,
    Hierarchical,
    FlatRing,
    NvlsTree,
    Direct,
    P2p,
    Pat // NCCL's parallel aggregated trees: all-gather and reduce-scatter, one GPU per node
};
enum class Protocol { Simple, LL128, LL };
const char *toString(Protocol p);

const char *toString(CollectiveOp op);
const char *toString(Algorithm algo);
std::optional<CollectiveOp> collectiveOpFromString(const std::string &s);
std::optional<Algorithm> algorithmFromString(const std::string &s);

// nccl-tests' bus bandwidth factor: busbw = algbw x factor (2(n-1)/n for all-reduce, ...).
double busBandwidthFactor(CollectiveOp op, int ranks);

struct CollectiveRequest
{
    CollectiveOp op = CollectiveOp::AllReduce;
    double bytes = 0;      // nccl-tests' "size": per-rank buffer (AR), total (AG/RS), ...
    std::vector<int> gpus; // ranks in order; empty: every GPU
    Algorithm algorithm = Algorithm::Auto;
    std::optional<double> efficiency; // flat-ring: achieved fraction (default 1.0, textbook)
    bool wantLinks = false;           // fill CollectiveResult::links
};

struct LinkBytes
{
    int link = 0;
    double up = 0;   // bytes a -> b
    double down = 0; // bytes b -> a
};

struct CollectiveResult
{
    CollectiveOp op = CollectiveOp::AllReduce;
    Algorithm algorithm = Algorithm::FlatRing;
    Protocol protocol = Protocol::Simple;
    int ranks = 0;
    int domains = 0;     // NVLink domains the ranks span
    double latencyS = 0; // the latency part of time_s
    double bytes = 0;
    double timeS = 0;
    double algbwGBps = 0;      // bytes / time
    double busbwGBps = 0;      // algbw x bus factor
    double bottleneckGBps = 0; // the per-GPU bandwidth the estimate is bound by
    std::string bottleneck;    // "NVLink", "NIC (400 Gb/s)", ...
    std::vector<LinkBytes> links;
    std::vector<std::string> notes;
};

// Prices one collective on the links its ranks actually cross. Throws InputError for requests
// that cannot be priced (an algorithm the hardware lacks, fewer than two ranks for a ring, ...).
CollectiveResult estimateCollective(const Topology &topology, const CollectiveRequest &request);

// The seed article's textbook estimate: every rank moves the bus-factor share of the data at the
// slowest link any ring step crosses (NVLink inside one NVLink domain, the NIC across servers),
// times `efficiency`. No latency, no hierarchy, no channels.
CollectiveResult flatRing(const Topology &topology,
                          CollectiveOp op,
                          double bytes,
                          const std::vector<int> &gpus,
                          double efficiency);

// The host-side time NCCL's latency model adds for launching a collective outside a CUDA graph
// and waiting for it; a collective replayed from a CUDA graph does not pay it.
double ncclLaunchOverheadS();

// Adds `bytes` sent from GPU `from` to GPU `to` to the traffic's current phase, on the links
// between them: NVLink inside an NVLink domain (PCIe on servers without NVLink), else the host
// path, the NICs and the fabric. `flow` picks among a GPU's NICs.
void addPointToPoint(LinkTraffic &traffic,
                     const Topology &topology,
                     int from,
                     int to,
                     double bytes,
                     int flow = 0);

// The line rate (GB/s per direction) of the slowest link between two GPUs' traffic.
double pathLineRate(const Topology &topology, int gpuA, int gpuB);

class LinkTraffic;

// NVLink SHARP's achieved fraction of the NVLink rate for a reduction across `gpusPerDomain`
// GPUs of one domain (lower as the switches' fan-in grows).
double nvlsFanInEfficiency(const GpuSpec &gpu, int gpusPerDomain);
// The bandwidth time of the phase just measured in `traffic`: the slower of its NVLink and
// network stages, plus a share of the faster where a hierarchical algorithm pipelines them.
double stageTime(const LinkTraffic &traffic, Algorithm algorithm, int domains);
// The same from the two stages' seconds (NVLink ports and links; every other link).
double stageTime(double nvlinkS, double otherS, Algorithm algorithm, int domains);

// How a group of GPUs sits on the topology: the NVLink domains it spans and what each domain
// can send into the fabric. Members are regrouped by domain, as NCCL builds its rings node by
// node whatever the rank order.
struct GroupShape
{
    int n = 0;
    std::vector<int> gpus;        // by domain, in order of first appearance
    std::vector<int> domainStart; // index into gpus where each domain starts (+ end)
    int domains = 0;
    int ppn = 0; // most members in one domain
    int ppnMin = 0;
    bool pcieOnly = false;
    bool nvls = false;           // NVLink SHARP available and enabled
    bool sharp = false;          // in-network reduction available and enabled
    double intraGBps = 0;        // per GPU, achieved, inside a domain (NVLink or PCIe)
    double netPerDomainGBps = 0; // least any domain can send into the fabric (achieved)
    int nicsPerDomain = 0;       // distinct NICs of the members, in the smallest domain
    int channelsPerNic = 1;
    double netMessageUs = 0; // the NIC's cost per network message beyond NCCL's model

    std::string architecture;
    int members(int d) const { return domainStart[d + 1] - domainStart[d]; }
    int member(int d, int k) const { return gpus[domainStart[d] + k]; }
};
GroupShape analyzeGroup(const Topology &topology, const std::vector<int> &gpus);
// The same, reusing `out`'s storage (the cost engine's inner loop).
void analyzeGroup(const Topology &topology, std::span<const int> gpus, GroupShape &out);

// The algorithm and protocol chosen for a group, and what they cost beyond the link bytes.
struct CollectivePlan
{
    Algorithm algorithm = Algorithm::Ring;
    Protocol protocol = Protocol::Simple;
    double latencyS = 0;
    double efficiency = 1;  // the share of the links' achieved rate the algorithm gets
    double nvlinkScale = 1; // NVLS: the NVSwitch's multicast efficiency on NVLink
    double capBusGBps = 0;  // NCCL's per-channel ceiling on bus bandwidth (0: none)
    double timeS = 0;       // for the group alone
    double bwTimeS = 0;     // its bandwidth part
};

// One (algorithm, protocol) NCCL may choose for a group: what it costs beyond the link bytes.
struct CollectiveCandidate
{
    Algorithm algorithm = Algorithm::Ring;
    Protocol protocol = Protocol::Simple;
    int bwIndex = 0;       // its algorithm's entry in CollectiveCurve::bwPerByte
    double efficiency = 1; // share of the links' achieved rate
    double capBusGBps = 0; // per-channel ceiling on bus bandwidth (0: none)
    // The ceiling NCCL's own model puts there when it chooses (tuning.cc): capBusGBps, except
    // where measurements run past it (Blackwell's tree across nodes; collective.cpp).
    double chooseCapBusGBps = 0;
    double latencyS = 0;        // below CollectiveCurve::plateauBytes
    double plateauLatencyS = 0; // from plateauBytes on (NCCL's large multi-node ring)
    double nvlinkScale = 1;     // NVLS: the NVSwitch's multicast efficiency on NVLink
};

// A collective on one group as a function of its size: every candidate NCCL would weigh, with
// the group's link-bound seconds per byte for each algorithm (the bytes a collective puts on a
// link are linear in its size). Built once per group shape; choosePlan() then prices any size
// with arithmetic alone (the planner's inner loop and planCollective share it).
struct CollectiveCurve
{
    CollectiveOp op = CollectiveOp::AllReduce;
    int n = 0;
    double busFactor = 1;
    double plateauBytes = 0;
    std::array<Algorithm, 6> algorithm{};
    std::array<double, 6> bwPerByte{}; // the group alone, stageTime() per byte
    // Its busiest NVLink (at the link's own rate) and busiest other link, seconds per byte.
    std::array<double, 6> nvlinkPerByte{}, networkPerByte{};
    int algorithms = 0;
    std::array<CollectiveCandidate, 16> candidate{};
    int candidates = 0;
    // Point to point among ranks on one host: the communicator's ranks and what one channel
    // moves (GpuSpec::p2pChannelGBps); 0: every send at the links' rate.
    int p2pRanks = 0;
    double p2pChannelGBps = 0;
};

// The channels NCCL gives one point-to-point operation of `bytes` in a communicator of `ranks`
// inside one node (src/enqueue.cc at v2.29.3-1, scheduleP2pTasksToPlan and addP2pToPlan): it
// starts on the largest power of two n with n x ranks within its 32 p2p channels (at most one
// per 64 KiB), and doubles them, up to 32, while a channel's part is above 32 chunks of 512 KiB
// (16 MiB). So a send among 8 ranks runs on 4 of 32 channels up to 64 MiB, 16 at 256 MiB, 32
// from 512 MiB.
int p2pChannels(double bytes, int ranks);

inline double candidateLatency(const CollectiveCurve &c, const CollectiveCandidate &k, double bytes)
{
    return bytes >= c.plateauBytes ? k.plateauLatencyS : k.latencyS;
}
// A candidate's ceiling on bus bandwidth at `bytes` (0: none): `capBusGBps` (NCCL's per-channel
// ceiling), and for a point-to-point send among ranks on one host the channels it gets there.
inline double capAt(const CollectiveCurve &c,
                    const CollectiveCandidate &k,
                    double bytes,
                    double capBusGBps)
{
    if (c.p2pChannelGBps <= 0 || k.algorithm != Algorithm::P2p)
        return capBusGBps;
    const double p2p = p2pChannels(bytes, c.p2pRanks) * c.p2pChannelGBps * c.busFactor;
    return capBusGBps > 0 ? std::min(capBusGBps, p2p) : p2p;
}
// The bandwidth part given the link-bound seconds `linkS` (the group alone, or all groups at
// once): the algorithm's efficiency, then the candidate's ceiling at `bytes` (capAt()).
inline double cappedBwTime(const CollectiveCurve &c,
                           const CollectiveCandidate &k,
                           double bytes,
                           double linkS,
                           double capBusGBps)
{
    const double t = linkS / k.efficiency;
    const double cap = capAt(c, k, bytes, capBusGBps);
    return cap > 0 ? std::max(t, c.busFactor * bytes / (cap * 1e9)) : t;
}
// The same with the candidate's own ceiling: what the collective takes.
inline double candidateBwTime(const CollectiveCurve &c,
                              const CollectiveCandidate &k,
                              double bytes,
                              double linkS)
{
    return cappedBwTime(c, k, bytes, linkS, k.capBusGBps);
}
inline double candidateBwTime(const CollectiveCurve &c, const CollectiveCandidate &k, double bytes)
{
    return candidateBwTime(c, k, bytes, c.bwPerByte[static_cast<std::size_t>(k.bwIndex)] * bytes);
}
// The candidate NCCL picks at `bytes` (the fastest for the group alone, as NCCL's model prices
// it: with its own ceilings); -1 if none.
inline int chooseCandidate(const CollectiveCurve &c, double bytes)
{
    int best = -1;
    double bestS = std::numeric_limits<double>::infinity();
    for (int i = 0; i < c.candidates; ++i) {
        const CollectiveCandidate &k = c.candidate[static_cast<std::size_t>(i)];
        const double linkS = c.bwPerByte[static_cast<std::size_t>(k.bwIndex)] * bytes;
        const double t = candidateLatency(c, k, bytes)
                         + cappedBwTime(c, k, bytes, linkS, k.chooseCapBusGBps);
        if (t < bestS) {
            bestS = t;
            best = i;
        }
    }
    return best;
}

// The curve of `op` on group `g` (see CollectiveCurve). Throws InputError if `requested` cannot
// run on this group.
CollectiveCurve collectiveCurve(const Topology &topology,
                                const GroupShape &group,
                                CollectiveOp op,
                                Algorithm requested,
                                LinkTraffic &scratch,
                                double interDomainScale = 1.0);
CollectivePlan choosePlan(const CollectiveCurve &curve, double bytes);

// Adds the bytes one collective puts on each link to the traffic's current phase.
// `interDomainScale` scales the bytes an all-to-all sends between NVLink domains: 1 for NCCL's
// direct sends; below 1 for dispatchers that send each token once per destination node and
// forward it over NVLink there (DeepEP).
void addCollectiveTraffic(LinkTraffic &traffic,
                          const Topology &topology,
                          const GroupShape &group,
                          CollectiveOp op,
                          Algorithm algorithm,
                          double bytes,
                          double interDomainScale = 1.0);
// Prices the collective for one group alone, trying the algorithms NCCL would (or only
// `requested`) and every protocol. Throws InputError if `requested` cannot run on this group.
CollectivePlan planCollective(const Topology &topology,
                              const GroupShape &group,
                              CollectiveOp op,
                              double bytes,
                              Algorithm requested,
                              LinkTraffic &scratch,
                              double interDomainScale = 1.0);

} // namespace railyard::engine
