#include "serving/servingcomm.h"

#include "collectives/traffic.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace railyard::engine {

const char *toString(CollectiveMethod m)
{
    switch (m) {
    case CollectiveMethod::None: return "none";
    case CollectiveMethod::Nccl: return "nccl";
    case CollectiveMethod::OneShot: return "one-shot";
    case CollectiveMethod::TwoShot: return "two-shot";
    case CollectiveMethod::DeepEP: return "deepep";
    }
    return "none";
}

namespace {

// A size at which floats hold the bytes of a phase well (the traffic is linear in it).
constexpr double kProbeBytes = 1e9;

// Host time to launch one kernel outside a CUDA graph (layout/servingstack.h).
double eagerLaunch(bool graphs)
{
    return graphs ? 0.0 : kEagerLaunchS;
}

template<class ForEachGroup>
CollectivePricer build(const Topology &t,
                       CollectiveOp op,
                       const ServingStackProfile &stack,
                       bool graphs,
                       bool deepEp,
                       LinkTraffic &scratch,
                       int groups,
                       ForEachGroup forEach)
{
    CollectivePricer p;
    p.op = op;
    p.groups = groups;
    // The widest group (most NVLink domains) sets the latency and the algorithms NCCL weighs.
    GroupShape widest, shape;
    bool first = true;
    forEach([&](std::span<const int> g) {
        analyzeGroup(t, g, shape);
        if (first || shape.domains > widest.domains) {
            widest = shape;
            first = false;
        }
    });
    if (first || widest.n < 2)
        return p;
    p.n = widest.n;
    p.domains = widest.domains;
    p.launchCutS = graphs ? ncclLaunchOverheadS() : 0.0;
    p.curve = collectiveCurve(t, widest, op, Algorithm::Auto, scratch);
    // Every group at once: each algorithm's link-bound seconds per byte on the shared links.
    const double nvlsScale = nvlsFanInEfficiency(t.gpuSpec(), widest.ppn);
    if (groups > 1) {
        for (int i = 0; i < p.curve.algorithms; ++i) {
            const Algorithm a = p.curve.algorithm[static_cast<std::size_t>(i)];
            scratch.beginPhase(1.0);
            if (a == Algorithm::Nvls || a == Algorithm::NvlsTree)
                scratch.setKindScale(LinkKind::NvLink, nvlsScale);
            forEach([&](std::span<const int> g) {
                analyzeGroup(t, g, shape);
                addCollectiveTraffic(scratch, t, shape, op, a, kProbeBytes);
            });
            scratch.phaseTime();
            const double all = stageTime(scratch, a, widest.domains) / kProbeBytes;
            double &bw = p.curve.bwPerByte[static_cast<std::size_t>(i)];
            bw = std::max(bw, all);
        }
    }
    for (int i = 0; i < p.curve.algorithms; ++i)
        if (p.curve.algorithm[static_cast<std::size_t>(i)] == Algorithm::Direct)
            p.directIndex = i;
    p.deepEp = deepEp && op == CollectiveOp::AllToAll && p.directIndex >= 0;
    if (p.deepEp)
        p.deepEpLatencyS = widest.domains == 1 ? kDeepEpNvlinkLatencyS : kDeepEpLatencyS;
    p.oneShot = op == CollectiveOp::AllReduce && stack.customAllReduceMaxBytes > 0
                && p.n <= stack.customAllReduceMaxRanks && widest.domains == 1 && !widest.pcieOnly;
    if (p.oneShot) {
        p.oneShotMaxBytes = stack.customAllReduceMaxBytes;
        scratch.beginPhase(1.0);
        forEach([&](std::span<const int> g) {
            const double each = (static_cast<double>(g.size()) - 1.0) * kProbeBytes;
            for (int gpu : g)
                scratch.addNvlink(gpu, each, each);
        });
        scratch.phaseTime();
        p.oneShotPerByteS = scratch.phaseNvlinkTime() / kProbeBytes;
        scratch.beginPhase(1.0);
        forEach([&](std::span<const int> g) {
            const double n = static_cast<double>(g.size());
            const double each = 2.0 * (n - 1.0) / n * kProbeBytes;
            for (int gpu : g)
                scratch.addNvlink(gpu, each, each);
        });
        scratch.phaseTime();
        p.twoShotPerByteS = scratch.phaseNvlinkTime() / kProbeBytes;
    }
    return p;
}

} // namespace

double CollectivePricer::ncclTimeS(double bytes) const
{
    const int k = valid() ? chooseCandidate(curve, bytes) : -1;
    if (k < 0)
        return std::numeric_limits<double>::infinity();
    const CollectiveCandidate &c = curve.candidate[static_cast<std::size_t>(k)];
    return candidateLatency(curve, c, bytes) - launchCutS + candidateBwTime(curve, c, bytes);
}

double CollectivePricer::oneShotTimeS(double bytes) const
{
    if (!oneShot || bytes > oneShotMaxBytes)
        return std::numeric_limits<double>::infinity();
    return kOneShotLatencyS + eagerLaunch(launchCutS > 0) + oneShotPerByteS * bytes;
}

double CollectivePricer::twoShotTimeS(double bytes) const
{
    if (!oneShot || bytes > oneShotMaxBytes)
        return std::numeric_limits<double>::infinity();
    return 2 * (kOneShotLatencyS + eagerLaunch(launchCutS > 0)) + twoShotPerByteS * bytes;
}

CollectiveMethod CollectivePricer::method(double bytes) const
{
    if (!valid() || bytes <= 0)
        return CollectiveMethod::None;
    if (deepEp)
        return CollectiveMethod::DeepEP;
    const double nccl = ncclTimeS(bytes), one = oneShotTimeS(bytes), two = twoShotTimeS(bytes);
    if (std::min(one, two) < nccl)
        return one <= two ? CollectiveMethod::OneShot : CollectiveMethod::TwoShot;
    return CollectiveMethod::Nccl;
}

double CollectivePricer::timeS(double bytes) const
{
    switch (method(bytes)) {
    case CollectiveMethod::None: return 0;
    case CollectiveMethod::DeepEP:
        return deepEpLatencyS + eagerLaunch(launchCutS > 0)
               + curve.bwPerByte[static_cast<std::size_t>(directIndex)] * bytes;
    case CollectiveMethod::OneShot: return oneShotTimeS(bytes);
    case CollectiveMethod::TwoShot: return twoShotTimeS(bytes);
    case CollectiveMethod::Nccl: break;
    }
    return ncclTimeS(bytes);
}

Algorithm CollectivePricer::ncclAlgorithm(double bytes) const
{
    const int k = chooseCandidate(curve, bytes);
    return k < 0 ? Algorithm::Ring : curve.candidate[static_cast<std::size_t>(k)].algorithm;
}

std::string CollectivePricer::describe(double bytes) const
{
    const CollectiveMethod m = method(bytes);
    if (m != CollectiveMethod::Nccl)
        return toString(m);
    const int k = chooseCandidate(curve, bytes);
    if (k < 0)
        return "nccl";
    const CollectiveCandidate &c = curve.candidate[static_cast<std::size_t>(k)];
    return std::string("nccl ") + toString(c.algorithm) + "/" + toString(c.protocol);
}

CollectivePricer priceCollective(const Topology &t,
                                 const GroupList &groups,
                                 CollectiveOp op,
                                 const ServingStackProfile &stack,
                                 bool graphs,
                                 bool deepEp,
                                 LinkTraffic &scratch)
{
    if (groups.empty())
        return {};
    return build(t,
                 op,
                 stack,
                 graphs,
                 deepEp,
                 scratch,
                 static_cast<int>(groups.count()),
                 [&](auto &&f) {
                     for (std::size_t i = 0; i < groups.count(); ++i)
                         f(groups[i]);
                 });
}

CollectivePricer priceCollective(const Topology &t,
                                 std::span<const int> group,
                                 CollectiveOp op,
                                 const ServingStackProfile &stack,
                                 bool graphs,
                                 bool deepEp,
                                 LinkTraffic &scratch)
{
    if (group.size() < 2)
        return {};
    return build(t, op, stack, graphs, deepEp, scratch, 1, [&](auto &&f) { f(group); });
}

void addCollectiveBytes(LinkTraffic &traffic,
                        const Topology &t,
                        const GroupList &groups,
                        const CollectivePricer &p,
                        double bytes)
{
    const CollectiveMethod m = p.method(bytes);
    if (m == CollectiveMethod::None || groups.empty())
        return;
    if (m == CollectiveMethod::OneShot || m == CollectiveMethod::TwoShot) {
        for (std::size_t i = 0; i < groups.count(); ++i) {
            const std::span<const int> g = groups[i];
            const double n = static_cast<double>(g.size());
            const double each = m == CollectiveMethod::OneShot ? (n - 1.0) * bytes
                                                               : 2.0 * (n - 1.0) / n * bytes;
            for (int gpu : g)
                traffic.addNvlink(gpu, each, each);
        }
        return;
    }
    const Algorithm a = m == CollectiveMethod::DeepEP ? Algorithm::Direct : p.ncclAlgorithm(bytes);
    GroupShape shape;
    for (std::size_t i = 0; i < groups.count(); ++i) {
        analyzeGroup(t, groups[i], shape);
        addCollectiveTraffic(traffic, t, shape, p.op, a, bytes);
    }
}

} // namespace railyard::engine
