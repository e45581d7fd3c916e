#include "collective.h"

#include "inputerror.h"
#include "units.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace railyard::engine {

const char *toString(CollectiveOp op)
{
    switch (op) {
    case CollectiveOp::AllReduce: return "all_reduce";
    case CollectiveOp::AllGather: return "all_gather";
    case CollectiveOp::ReduceScatter: return "reduce_scatter";
    case CollectiveOp::AllToAll: return "all_to_all";
    case CollectiveOp::Broadcast: return "broadcast";
    case CollectiveOp::SendRecv: return "sendrecv";
    }
    return "all_reduce";
}

const char *toString(Algorithm algo)
{
    switch (algo) {
    case Algorithm::Auto: return "auto";
    case Algorithm::Ring: return "ring";
    case Algorithm::Tree: return "tree";
    case Algorithm::Nvls: return "nvls";
    case Algorithm::Sharp: return "sharp";
    case Algorithm::Hierarchical: return "hierarchical";
    case Algorithm::FlatRing: return "flat-ring";
    }
    return "auto";
}

std::optional<CollectiveOp> collectiveOpFromString(const std::string &s)
{
    for (CollectiveOp op : {CollectiveOp::AllReduce,
                            CollectiveOp::AllGather,
                            CollectiveOp::ReduceScatter,
                            CollectiveOp::AllToAll,
                            CollectiveOp::Broadcast,
                            CollectiveOp::SendRecv})
        if (s == toString(op))
            return op;
    return std::nullopt;
}

std::optional<Algorithm> algorithmFromString(const std::string &s)
{
    for (Algorithm a : {Algorithm::Auto,
                        Algorithm::Ring,
                        Algorithm::Tree,
                        Algorithm::Nvls,
                        Algorithm::Sharp,
                        Algorithm::Hierarchical,
                        Algorithm::FlatRing})
        if (s == toString(a))
            return a;
    return std::nullopt;
}

double busBandwidthFactor(CollectiveOp op, int n)
{
    if (n <= 1)
        return op == CollectiveOp::Broadcast || op == CollectiveOp::SendRecv ? 1.0 : 0.0;
    switch (op) {
    case CollectiveOp::AllReduce: return 2.0 * (n - 1) / n;
    case CollectiveOp::AllGather:
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllToAll: return double(n - 1) / n;
    case CollectiveOp::Broadcast:
    case CollectiveOp::SendRecv: return 1.0;
    }
    return 1.0;
}

double pathLineRate(const Topology &t, int a, int b)
{
    const ClusterShape &s = t.shape();
    double rate = std::numeric_limits<double>::infinity();
    if (a == b)
        return rate;
    const auto sum = [&](std::span<const int> links) {
        double total = 0;
        for (int l : links)
            total += t.links()[static_cast<std::size_t>(l)].gbPerS;
        return total;
    };
    if (!s.pcieOnly && t.domainOfGpu(a) == t.domainOfGpu(b))
        return std::min(sum(t.gpuNvlinks(a)), sum(t.gpuNvlinks(b)));
    // Leaving the NVLink domain: GPU -> PCIe -> NIC(s) -> fabric -> NIC(s) -> PCIe -> GPU.
    for (int g : {a, b}) {
        rate = std::min(rate, t.links()[static_cast<std::size_t>(t.gpuHostLink(g))].gbPerS);
        if (t.nodeOfGpu(a) != t.nodeOfGpu(b)) {
            double nics = 0;
            for (int nic : t.gpuNics(g))
                nics += t.links()[static_cast<std::size_t>(t.nicUplink(nic - t.nicDevice(0)))].gbPerS;
            rate = std::min(rate, nics);
        }
    }
    return rate;
}

CollectiveResult flatRing(const Topology &t,
                          CollectiveOp op,
                          double bytes,
                          const std::vector<int> &gpus,
                          double efficiency)
{
    CollectiveResult r;
    r.op = op;
    r.algorithm = Algorithm::FlatRing;
    r.ranks = static_cast<int>(gpus.size());
    r.bytes = bytes;
    if (r.ranks < 2)
        throw InputError("a ring needs at least two GPUs, got " + std::to_string(r.ranks));
    if (!(efficiency > 0 && efficiency <= 1))
        throw InputError("efficiency must be in (0, 1], got " + formatNumber(efficiency));
    double slowest = std::numeric_limits<double>::infinity();
    bool crossesDomains = false;
    for (int i = 0; i < r.ranks; ++i) {
        const int a = gpus[static_cast<std::size_t>(i)];
        const int b = gpus[static_cast<std::size_t>((i + 1) % r.ranks)];
        slowest = std::min(slowest, pathLineRate(t, a, b));
        crossesDomains = crossesDomains || t.domainOfGpu(a) != t.domainOfGpu(b);
    }
    const double factor = busBandwidthFactor(op, r.ranks);
    r.bottleneckGBps = slowest * efficiency;
    r.timeS = factor * bytes / (r.bottleneckGBps * 1e9);
    r.algbwGBps = r.timeS > 0 ? bytes / r.timeS / 1e9 : 0;
    r.busbwGBps = r.algbwGBps * factor;
    r.bottleneck = crossesDomains || t.shape().pcieOnly ? "network path" : "NVLink";
    r.notes.push_back("textbook flat ring: every step at the slowest link (" + formatNumber(slowest)
                      + " GB/s x " + formatNumber(efficiency)
                      + "); no latency, hierarchy or channels");
    return r;
}

CollectiveResult estimateCollective(const Topology &t, const CollectiveRequest &req)
{
    std::vector<int> gpus = req.gpus;
    if (gpus.empty()) {
        gpus.resize(static_cast<std::size_t>(t.gpuCount()));
        std::iota(gpus.begin(), gpus.end(), 0);
    }
    if (req.bytes <= 0)
        throw InputError("the message size must be positive");
    switch (req.algorithm) {
    case Algorithm::FlatRing:
        return flatRing(t, req.op, req.bytes, gpus, req.efficiency.value_or(1.0));
    default:
        throw InputError(std::string("algorithm \"") + toString(req.algorithm)
                         + "\" is not available yet; use flat-ring");
    }
}

} // namespace railyard::engine
