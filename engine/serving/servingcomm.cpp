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

std::vector<CollectivePricer> priceCollectiveBySet(const Topology &t,
                                                   const GroupList &groups,
                                                   const std::vector<int> &setOf,
                                                   int sets,
                                                   const CollectivePricer &all,
                                                   LinkTraffic &scratch)
{
    std::vector<CollectivePricer> out(static_cast<std::size_t>(std::max(0, sets)), all);
    if (!all.valid() || groups.empty() || sets < 1 || setOf.size() != groups.count())
        return out;
    const std::size_t n = groups.count();
    std::vector<std::vector<int>> ports(out.size()), links(out.size());
    std::vector<double> alone(out.size());
    // The faulted links, and whether any is outside NVLink (then traffic that crosses the
    // network may be rerouted or share a detour: every uplink's load may have moved).
    std::vector<char> faulted(static_cast<std::size_t>(t.linkCount()), 0);
    bool faultedNetwork = false;
    for (const ResolvedFault &f : t.faults())
        for (int l : f.links) {
            faulted[static_cast<std::size_t>(l)] = 1;
            faultedNetwork = faultedNetwork
                             || t.links()[static_cast<std::size_t>(l)].kind != LinkKind::NvLink;
        }
    // After a phase of every group: whether a fault can touch its links (a faulted link or
    // NVLink port it crosses, or the network when a network link is faulted). When not, every
    // set keeps `all`'s price and the sets are not timed one by one (a leaf down leaves a TP
    // group inside a server alone).
    const auto touchesFault = [&] {
        for (int l : scratch.phaseTouchedLinks())
            if (faulted[static_cast<std::size_t>(l)]
                || (faultedNetwork
                    && t.links()[static_cast<std::size_t>(l)].kind != LinkKind::NvLink))
                return true;
        for (int g : scratch.phasePorts())
            for (int l : t.gpuNvlinks(g))
                if (faulted[static_cast<std::size_t>(l)])
                    return true;
        return false;
    };
    // One kind of traffic (`add` puts one group's on the scratch; `scale` sets the phase's
    // link scales; `staged` times it from its NVLink and network maxima): each set's alone,
    // its ports and links kept, then every group at once read on each set's ports and links.
    const auto bySet = [&](auto add, auto scale, auto staged, auto store) {
        const auto everyGroup = [&] {
            scratch.beginPhase(1.0);
            scale();
            for (std::size_t i = 0; i < n; ++i)
                add(groups[i]);
            scratch.phaseTime();
        };
        everyGroup();
        if (!touchesFault())
            return;
        for (int s = 0; s < sets; ++s) {
            const std::size_t k = static_cast<std::size_t>(s);
            scratch.beginPhase(1.0);
            scale();
            for (std::size_t i = 0; i < n; ++i)
                if (setOf[i] == s)
                    add(groups[i]);
            scratch.phaseTime();
            ports[k] = scratch.phasePorts();
            links[k] = scratch.phaseTouchedLinks();
            alone[k] = staged(scratch.phaseNvlinkTime(), scratch.phaseOtherTime());
        }
        everyGroup();
        for (std::size_t k = 0; k < out.size(); ++k) {
            double nv = 0, net = 0;
            scratch.phaseTimesOver(ports[k], links[k], nv, net);
            store(out[k], std::max(alone[k], staged(nv, net)) / kProbeBytes);
        }
    };
    GroupShape shape, widest;
    analyzeGroup(t, groups[0], widest);
    const double nvlsScale = nvlsFanInEfficiency(t.gpuSpec(), widest.ppn);
    const auto noScale = [] {};
    for (int i = 0; i < all.curve.algorithms; ++i) {
        const std::size_t k = static_cast<std::size_t>(i);
        const Algorithm a = all.curve.algorithm[k];
        bySet(
                [&](std::span<const int> g) {
                    analyzeGroup(t, g, shape);
                    addCollectiveTraffic(scratch, t, shape, all.op, a, kProbeBytes);
                },
                [&] {
                    if (a == Algorithm::Nvls || a == Algorithm::NvlsTree)
                        scratch.setKindScale(LinkKind::NvLink, nvlsScale);
                },
                [&](double nv, double net) { return stageTime(nv, net, a, all.domains); },
                [k](CollectivePricer &p, double perByte) { p.curve.bwPerByte[k] = perByte; });
    }
    if (all.oneShot) {
        const auto nvlinkOnly = [](double nv, double) { return nv; };
        bySet(
                [&](std::span<const int> g) {
                    const double each = (static_cast<double>(g.size()) - 1.0) * kProbeBytes;
                    for (int gpu : g)
                        scratch.addNvlink(gpu, each, each);
                },
                noScale,
                nvlinkOnly,
                [](CollectivePricer &p, double perByte) { p.oneShotPerByteS = perByte; });
        bySet(
                [&](std::span<const int> g) {
                    const double m = static_cast<double>(g.size());
                    const double each = 2.0 * (m - 1.0) / m * kProbeBytes;
                    for (int gpu : g)
                        scratch.addNvlink(gpu, each, each);
                },
                noScale,
                nvlinkOnly,
                [](CollectivePricer &p, double perByte) { p.twoShotPerByteS = perByte; });
    }
    return out;
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
