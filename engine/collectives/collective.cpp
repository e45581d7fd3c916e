#include "collectives/collective.h"
#include "collectives/collective_p.h"
#include "collectives/nccltuning_p.h"

#include "base/inputerror.h"
#include "base/units.h"
#include "collectives/traffic.h"

#include <algorithm>
#include <array>
#include <cmath>
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

const char *toString(Protocol p)
{
    switch (p) {
    case Protocol::Simple: return "simple";
    case Protocol::LL128: return "ll128";
    case Protocol::LL: return "ll";
    }
    return "simple";
}

const char *toString(Algorithm algo)
{
    switch (algo) {
    case Algorithm::NvlsTree: return "nvls-tree";
    case Algorithm::Direct: return "direct";
    case Algorithm::P2p: return "p2p";
    case Algorithm::Auto: return "auto";
    case Algorithm::Ring: return "ring";
    case Algorithm::Tree: return "tree";
    case Algorithm::Nvls: return "nvls";
    case Algorithm::Sharp: return "sharp";
    case Algorithm::Hierarchical: return "hierarchical";
    case Algorithm::FlatRing: return "flat-ring";
    case Algorithm::Pat: return "pat";
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
                        Algorithm::FlatRing,
                        Algorithm::Pat})
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
    if (s.directNvlink && t.domainOfGpu(a) == t.domainOfGpu(b)) {
        // A direct mesh: the pair's own NVLink, or PCIe when they have none.
        if (const int l = t.nvlinkBetween(a, b); l >= 0)
            return t.links()[static_cast<std::size_t>(l)].gbPerS;
        return std::min(t.links()[static_cast<std::size_t>(t.gpuHostLink(a))].gbPerS,
                        t.links()[static_cast<std::size_t>(t.gpuHostLink(b))].gbPerS);
    }
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

using namespace detail;

int p2pChannels(double bytes, int ranks)
{
    constexpr int kChannels = 32;
    constexpr double kChunk = 512.0 * 1024;
    int first = kChannels;
    while (first * ranks > kChannels && first > 1)
        first /= 2;
    int n = static_cast<int>(
            std::min<double>(first, std::max(1.0, std::ceil(bytes / (kChunk / 8)))));
    double part = std::max(kChunk / 8, std::ceil(bytes / n));
    while (part > 32 * kChunk && n <= kChannels / 2) {
        n *= 2;
        part = std::ceil(bytes / n);
    }
    return n;
}

double ncclLaunchOverheadS()
{
    return kLaunchUs * 1e-6;
}

double nvlsFanInEfficiency(const GpuSpec &gpu, int gpusPerDomain)
{
    const double eff = gpu.nvlsEfficiency > 0 ? gpu.nvlsEfficiency : 1.0;
    return eff / (1.0 + gpusPerDomain / kNvlsFanIn);
}

double stageTime(const LinkTraffic &traffic, Algorithm algorithm, int domains)
{
    return stageTime(traffic.phaseNvlinkTime(), traffic.phaseOtherTime(), algorithm, domains);
}

double stageTime(double nv, double net, Algorithm algorithm, int domains)
{
    const bool staged = domains > 1
                        && (algorithm == Algorithm::NvlsTree || algorithm == Algorithm::Tree
                            || algorithm == Algorithm::Sharp
                            || algorithm == Algorithm::Hierarchical);
    if (!staged)
        return std::max(nv, net);
    return std::max(nv, net) + kStageOverlapLoss * std::min(nv, net);
}

namespace {

struct Candidate
{
    Algorithm algo;
    Protocol proto;
};

std::vector<Candidate> candidates(const GroupShape &g,
                                  CollectiveOp op,
                                  Algorithm requested,
                                  const Topology &t)
{
    std::vector<Candidate> out;
    const bool hopperPlus = archIndex(g.architecture) >= 2;
    const auto withProtocols = [&](Algorithm a) {
        out.push_back({a, Protocol::Simple});
        if (a == Algorithm::Ring || a == Algorithm::Tree || a == Algorithm::Direct
            || a == Algorithm::P2p) {
            out.push_back({a, Protocol::LL});
            if (hopperPlus && !g.pcieOnly)
                out.push_back({a, Protocol::LL128});
        }
    };
    const bool ar = op == CollectiveOp::AllReduce;
    const bool gatherOrScatter = op == CollectiveOp::AllGather || op == CollectiveOp::ReduceScatter;
    // PAT (NCCL 2.23 on): all-gather and reduce-scatter with one GPU in each NVLink domain,
    // Simple protocol only (tuning.cc ncclPatEnable: "PAT only supports 1 GPU per node").
    const bool patOk = gatherOrScatter && g.ppn == 1 && g.domains > 1;
    const bool nvlsOn = g.nvls && t.gpuSpec().nvls;
    const auto fail = [&](const std::string &why) {
        throw InputError(std::string("algorithm \"") + toString(requested) + "\" cannot run "
                         + toString(op) + " here: " + why);
    };
    if (op == CollectiveOp::AllToAll) {
        if (requested != Algorithm::Auto && requested != Algorithm::Ring)
            fail("all-to-all is a set of direct sends (use auto)");
        withProtocols(Algorithm::Direct);
        return out;
    }
    if (op == CollectiveOp::SendRecv) {
        if (requested != Algorithm::Auto && requested != Algorithm::Ring)
            fail("sendrecv is point to point (use auto)");
        withProtocols(Algorithm::P2p);
        return out;
    }
    switch (requested) {
    case Algorithm::Auto:
        withProtocols(Algorithm::Ring);
        if (ar && g.domains > 1)
            withProtocols(Algorithm::Tree);
        if (ar && nvlsOn)
            withProtocols(g.domains > 1 ? Algorithm::NvlsTree : Algorithm::Nvls);
        if (ar && g.sharp)
            withProtocols(Algorithm::Sharp);
        if (patOk)
            withProtocols(Algorithm::Pat);
        break;
    case Algorithm::Ring: withProtocols(Algorithm::Ring); break;
    case Algorithm::Tree:
        if (!ar)
            fail("NCCL's tree runs all-reduce only");
        if (g.domains < 2)
            fail("a tree needs GPUs in at least two NVLink domains");
        withProtocols(Algorithm::Tree);
        break;
    case Algorithm::Nvls:
        if (!ar)
            fail("NVLS is priced for all-reduce only");
        if (!t.gpuSpec().nvls)
            fail(t.gpuSpec().id + " has no NVLink SHARP (NVLS)");
        if (!t.shape().nvlsEnabled)
            fail("NVLS is off in the layout (cluster.tuning.nvls)");
        if (!g.nvls)
            fail("each NVLink domain holds only one of the GPUs");
        withProtocols(g.domains > 1 ? Algorithm::NvlsTree : Algorithm::Nvls);
        break;
    case Algorithm::Sharp:
        if (!ar)
            fail("SHARP (CollNet) is priced for all-reduce only");
        if (!t.shape().sharp)
            fail("the fabric has no SHARP (fabric.sharp, and switches that support it)");
        if (g.domains < 2)
            fail("SHARP reduces in the network switches: the GPUs must span NVLink domains");
        withProtocols(Algorithm::Sharp);
        break;
    case Algorithm::Pat:
        if (!gatherOrScatter)
            fail("PAT runs all-gather and reduce-scatter only");
        if (!patOk)
            fail("PAT needs one GPU in each of at least two NVLink domains");
        withProtocols(Algorithm::Pat);
        break;
    case Algorithm::Hierarchical:
        if (op != CollectiveOp::AllReduce && op != CollectiveOp::AllGather
            && op != CollectiveOp::ReduceScatter)
            fail("hierarchical runs all-reduce, all-gather and reduce-scatter");
        withProtocols(Algorithm::Hierarchical);
        break;
    default: fail("not a collective algorithm");
    }
    return out;
}

} // namespace

CollectiveCurve collectiveCurve(const Topology &t,
                                const GroupShape &g,
                                CollectiveOp op,
                                Algorithm requested,
                                LinkTraffic &scratch,
                                double interDomainScale)
{
    const auto cands = candidates(g, op, requested, t);
    CollectiveCurve curve;
    curve.op = op;
    curve.n = g.n;
    curve.busFactor = std::max(busBandwidthFactor(op, g.n), 1e-12);
    const int arch = archIndex(g.architecture);
    const int bucket = nodeBucket(g.domains);
    const int channels = g.domains > 1 ? std::max(1, g.nicsPerDomain * g.channelsPerNic)
                                       : (arch >= 2 ? 24 : 12);
    const double nvlsEff = nvlsFanInEfficiency(t.gpuSpec(), g.ppn);
    // All-to-all's sends inside an NVLink domain reach less than the rings' NVLink rate
    // (GpuSpec::nvlinkAllToAllEfficiency, measured where nccl-tests ran both).
    const double a2aEff = t.gpuSpec().nvlinkAllToAllEfficiency;
    // What an algorithm's NVLink traffic runs at against the link's rate.
    const auto nvlinkScaleOf = [&](Algorithm a) {
        return (a == Algorithm::Nvls || a == Algorithm::NvlsTree) ? nvlsEff
               : a == Algorithm::Direct                           ? a2aEff
                                                                  : 1.0;
    };
    // NCCL's plateau correction of ring latency applies from this many bytes (ringLatencyUs).
    curve.plateauBytes = 64.0 * 16.0 * g.n;
    // NCCL's single-node rule for point-to-point channels holds where every rank is on one host
    // (an NVL72 rack's trays are hosts of their own: NCCL splits sends there by its multi-node
    // rule, not priced).
    if (op == CollectiveOp::SendRecv && g.domains <= 1 && !g.pcieOnly && !g.gpus.empty()) {
        const int node = t.nodeOfGpu(g.gpus.front());
        const bool oneHost = std::all_of(g.gpus.begin(), g.gpus.end(), [&](int gpu) {
            return t.nodeOfGpu(gpu) == node;
        });
        if (oneHost) {
            curve.p2pRanks = g.n;
            curve.p2pChannelGBps = t.gpuSpec().p2pChannelGBps;
        }
    }

    // The link-bound time of each algorithm is linear in the bytes and does not depend on the
    // protocol: measure it once per algorithm, for one byte's worth (at a size floats hold well).
    constexpr double kProbeBytes = 1e9;
    const auto bwOf = [&](Algorithm a) {
        for (int i = 0; i < curve.algorithms; ++i)
            if (curve.algorithm[static_cast<std::size_t>(i)] == a)
                return i;
        scratch.beginPhase(1.0);
        const double nvScale = nvlinkScaleOf(a);
        if (nvScale != 1.0)
            scratch.setKindScale(LinkKind::NvLink, nvScale);
        addCollectiveTraffic(scratch, t, g, op, a, kProbeBytes, interDomainScale);
        scratch.phaseTime();
        const int i = curve.algorithms++;
        curve.algorithm[static_cast<std::size_t>(i)] = a;
        curve.bwPerByte[static_cast<std::size_t>(i)] = stageTime(scratch, a, g.domains)
                                                       / kProbeBytes;
        curve.nvlinkPerByte[static_cast<std::size_t>(i)] = scratch.phaseNvlinkTime() * nvScale
                                                           / kProbeBytes;
        curve.networkPerByte[static_cast<std::size_t>(i)] = scratch.phaseOtherTime() / kProbeBytes;
        return i;
    };

    for (const Candidate &c : cands) {
        CollectiveCandidate k;
        k.algorithm = c.algo;
        k.protocol = c.proto;
        k.bwIndex = bwOf(c.algo);
        const bool treeLike = c.algo == Algorithm::Tree;
        switch (c.proto) {
        case Protocol::Simple:
            if (treeLike || c.algo == Algorithm::Sharp)
                k.efficiency = kTreeEfficiency;
            if (c.algo == Algorithm::Pat)
                k.efficiency = kPatEfficiency;
            if (treeLike)
                k.capBusGBps = channels * kPerChMaxTree[arch][bucket];
            if (c.algo == Algorithm::NvlsTree)
                k.capBusGBps = 16 * kPerChMaxNvlsTree[arch][bucket];
            break;
        case Protocol::LL128:
            k.efficiency = treeLike ? (g.domains <= 1 ? 7.0 / 9.0 : 120.0 / 128.0) : 0.92;
            k.capBusGBps = channels
                           * (treeLike ? kPerChMaxTreeLL128 : kPerChMaxRingLL128)[arch][bucket];
            break;
        case Protocol::LL:
            k.efficiency = treeLike ? 1.0 / 3.8 : 0.5;
            k.capBusGBps = g.domains <= 1 ? kLLMaxSingleNode[arch]
                                          : kLLMaxMultiNode[g.domains <= 2 ? 0 : 1];
            break;
        }
        k.latencyS = (latencyUs(g, op, c.algo, c.proto, 0) + kLaunchUs) * 1e-6;
        k.plateauLatencyS = (latencyUs(g, op, c.algo, c.proto, curve.plateauBytes) + kLaunchUs)
                            * 1e-6;
        k.nvlinkScale = nvlinkScaleOf(c.algo);
        k.chooseCapBusGBps = k.capBusGBps;
        // NCCL's model caps Blackwell's Simple tree across three or more nodes at 24 GB/s a
        // channel and so runs rings there, but a forced tree runs past it, bound by the NICs:
        // GB200 between three NVL4 / NVL8 partitions over InfiniBand, 8 channels, 234 and 486
        // GB/s of bus bandwidth where the model says 177 (NVIDIA/nccl#1801; sweeps Y4t, Y5t).
        // The choice keeps NCCL's ceiling; the time takes the links'.
        if (treeLike && c.proto == Protocol::Simple && arch >= 3)
            k.capBusGBps = 0;
        if (curve.candidates < static_cast<int>(curve.candidate.size()))
            curve.candidate[static_cast<std::size_t>(curve.candidates++)] = k;
    }
    return curve;
}

CollectivePlan choosePlan(const CollectiveCurve &curve, double bytes)
{
    CollectivePlan best;
    best.timeS = std::numeric_limits<double>::infinity();
    const int best_ = chooseCandidate(curve, bytes);
    if (best_ < 0)
        return best;
    const CollectiveCandidate &k = curve.candidate[static_cast<std::size_t>(best_)];
    best.algorithm = k.algorithm;
    best.protocol = k.protocol;
    best.latencyS = candidateLatency(curve, k, bytes);
    best.efficiency = k.efficiency;
    best.nvlinkScale = k.nvlinkScale;
    best.capBusGBps = capAt(curve, k, bytes, k.capBusGBps);
    best.bwTimeS = candidateBwTime(curve, k, bytes);
    best.timeS = best.latencyS + best.bwTimeS;
    return best;
}

CollectivePlan planCollective(const Topology &t,
                              const GroupShape &g,
                              CollectiveOp op,
                              double bytes,
                              Algorithm requested,
                              LinkTraffic &scratch,
                              double interDomainScale)
{
    return choosePlan(collectiveCurve(t, g, op, requested, scratch, interDomainScale), bytes);
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
    if (req.algorithm == Algorithm::FlatRing)
        return flatRing(t, req.op, req.bytes, gpus, req.efficiency.value_or(1.0));
    if (gpus.size() < 2)
        throw InputError("a collective needs at least two GPUs, got " + std::to_string(gpus.size()));

    const GroupShape g = analyzeGroup(t, gpus);
    LinkTraffic traffic(t);
    const CollectivePlan plan = planCollective(t, g, req.op, req.bytes, req.algorithm, traffic);

    CollectiveResult r;
    r.op = req.op;
    r.algorithm = plan.algorithm;
    r.protocol = plan.protocol;
    r.ranks = g.n;
    r.domains = g.domains;
    r.bytes = req.bytes;
    r.timeS = plan.timeS;
    r.latencyS = plan.latencyS;
    r.algbwGBps = req.bytes / plan.timeS / 1e9;
    r.busbwGBps = r.algbwGBps * busBandwidthFactor(req.op, g.n);

    // Re-run the chosen algorithm's traffic to report its links and bottleneck.
    traffic.beginPhase(1.0);
    traffic.setKindScale(LinkKind::NvLink, plan.nvlinkScale);
    addCollectiveTraffic(traffic, t, g, req.op, plan.algorithm, req.bytes);
    traffic.phaseTime();
    const int bl = traffic.phaseBottleneck();
    if (bl >= 0) {
        const Link &l = t.links()[static_cast<std::size_t>(bl)];
        const DeviceKind ka = t.devices()[static_cast<std::size_t>(l.a)].kind;
        const DeviceKind kb = t.devices()[static_cast<std::size_t>(l.b)].kind;
        if (l.kind == LinkKind::NvLink)
            r.bottleneck = "NVLink";
        else if (ka == DeviceKind::Nic)
            r.bottleneck = kb == DeviceKind::Leaf ? "NIC uplinks" : "NIC PCIe";
        else if (ka == DeviceKind::Leaf)
            r.bottleneck = "spine uplinks";
        else if (ka == DeviceKind::Spine)
            r.bottleneck = "core uplinks";
        else
            r.bottleneck = toString(l.kind);
        r.bottleneckGBps = l.effectiveGbPerS();
    }
    if (plan.capBusGBps > 0
        && plan.bwTimeS * 1e9 * plan.capBusGBps
                   <= busBandwidthFactor(req.op, g.n) * req.bytes * 1.0000001)
        r.notes.push_back("bounded by NCCL's per-channel ceiling (" + formatNumber(plan.capBusGBps)
                          + " GB/s bus bandwidth)");
    if (g.ppn != g.ppnMin)
        r.notes.push_back("uneven group: " + std::to_string(g.ppnMin) + " to "
                          + std::to_string(g.ppn) + " GPUs per NVLink domain");
    const std::vector<int> touched = traffic.phaseLinks();
    if (!t.shape().pcieOnly && g.domains > 1 && t.shape().fabric == FabricKind::RailOptimized) {
        // Say when flows went through the spine.
        bool spine = false;
        for (int l : touched)
            spine = spine
                    || t.devices()[static_cast<std::size_t>(t.links()[static_cast<std::size_t>(l)].a)]
                                       .kind
                               == DeviceKind::Leaf;
        if (spine)
            r.notes.push_back("some traffic crosses the spine");
    }
    if (req.wantLinks) {
        for (int l : touched)
            r.links.push_back({l, traffic.phaseUp(l), traffic.phaseDown(l)});
        std::sort(r.links.begin(), r.links.end(), [](const LinkBytes &a, const LinkBytes &b) {
            return a.link < b.link;
        });
    }
    return r;
}

} // namespace railyard::engine
