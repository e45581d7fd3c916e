#pragma once

#include "topology.h"

#include <optional>
#include <string>
#include <vector>

namespace railyard::engine {

enum class CollectiveOp { AllReduce, AllGather, ReduceScatter, AllToAll, Broadcast, SendRecv };
enum class Algorithm { Auto, Ring, Tree, Nvls, Sharp, Hierarchical, FlatRing };

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
    int ranks = 0;
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

// The line rate (GB/s per direction) of the slowest link between two GPUs' traffic.
double pathLineRate(const Topology &topology, int gpuA, int gpuB);

} // namespace railyard::engine
