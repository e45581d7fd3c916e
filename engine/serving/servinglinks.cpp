// Where serving traffic goes: the bytes every link carries in one decode step and for one
// request (its prefill's collectives, its KV-cache transfer, its share of the decode steps), the
// steady-state utilization, and the timelines of one decode step and one request's life with
// the links each phase loads.
#include "collectives/traffic.h"
#include "serving/servingmodel_p.h"

#include <algorithm>
#include <cmath>

namespace railyard::engine::detail {

namespace {

// The traffic's current phase as a pattern (sorted by link, repeats merged), bytes x `factor`.
TrafficPattern phasePattern(const LinkTraffic &tr, PhaseKind kind, int stage, double factor)
{
    TrafficPattern p;
    p.kind = kind;
    p.stage = stage;
    std::vector<LinkShare> bytes;
    tr.phaseBytes(bytes);
    // Many links touched (a large cluster): summed by link id in one pass over the ids, which
    // costs less than sorting them (a 16,384-GPU wide-EP decode step: 15% of its time sorting).
    if (bytes.size() > 4096) {
        int top = 0;
        for (const LinkShare &l : bytes)
            top = std::max(top, l.link);
        std::vector<float> up(static_cast<std::size_t>(top) + 1, 0.0f), down(up.size(), 0.0f);
        for (const LinkShare &l : bytes) {
            up[static_cast<std::size_t>(l.link)] += static_cast<float>(l.up * factor);
            down[static_cast<std::size_t>(l.link)] += static_cast<float>(l.down * factor);
        }
        for (std::size_t i = 0; i < up.size(); ++i)
            if (up[i] > 0 || down[i] > 0)
                p.links.push_back({static_cast<int>(i), up[i], down[i]});
        return p;
    }
    std::sort(bytes.begin(), bytes.end(), [](const LinkShare &a, const LinkShare &b) {
        return a.link < b.link;
    });
    for (const LinkShare &l : bytes) {
        const float up = static_cast<float>(l.up * factor),
                    down = static_cast<float>(l.down * factor);
        if (!p.links.empty() && p.links.back().link == l.link) {
            p.links.back().up += up;
            p.links.back().down += down;
        } else if (up > 0 || down > 0) {
            p.links.push_back({l.link, up, down});
        }
    }
    return p;
}

void merge(TrafficPattern &into, const TrafficPattern &from, double factor = 1.0)
{
    std::vector<LinkShare> out;
    out.reserve(into.links.size() + from.links.size());
    std::size_t i = 0, j = 0;
    while (i < into.links.size() || j < from.links.size()) {
        if (j >= from.links.size()
            || (i < into.links.size() && into.links[i].link < from.links[j].link)) {
            out.push_back(into.links[i++]);
        } else {
            LinkShare l = from.links[j++];
            l.up = static_cast<float>(l.up * factor);
            l.down = static_cast<float>(l.down * factor);
            if (i < into.links.size() && into.links[i].link == l.link) {
                l.up += into.links[i].up;
                l.down += into.links[i].down;
                ++i;
            }
            out.push_back(l);
        }
    }
    into.links = std::move(out);
}

struct KindBytes
{
    PhaseKind kind;
    const GroupList *groups;
    const CollectivePricer *pricer;
    double count, bytes;
};

// A pass's collectives on a pool's groups, kind by kind.
std::vector<KindBytes> passKinds(const PoolGroups &g,
                                 const PoolComm &c,
                                 const PassCollectives &k,
                                 int pp)
{
    std::vector<KindBytes> out;
    if (k.attentionAr > 0)
        out.push_back(
                {PhaseKind::Tp, &g.attention, &c.attentionAr, k.attentionAr, k.attentionArBytes});
    if (k.tpAr > 0)
        out.push_back({PhaseKind::Tp, &g.tp, &c.tpAr, k.tpAr, k.tpArBytes});
    if (k.dispatch > 0) {
        out.push_back({PhaseKind::Ep, &g.ep, &c.dispatch, k.dispatch, k.dispatchBytes});
        out.push_back({PhaseKind::Ep, &g.ep, &c.dispatch, k.dispatch, k.combineBytes});
    }
    // Pipeline groups ring through their stages (the send back to the first stage is the next
    // step's token): PP - 1 of every PP sends happen in a step.
    if (k.pipelineSends > 0 && pp > 1)
        out.push_back({PhaseKind::PpP2p,
                       &g.pipeline,
                       &c.pipeline,
                       k.pipelineSends / (pp - 1) * (pp - 1.0) / pp,
                       k.pipelineBytes});
    return out;
}

} // namespace

void ServingModel::fillLinks()
{
    const std::size_t n = static_cast<std::size_t>(m_topo.linkCount());
    auto links = std::make_shared<ServingLinks>();
    LinkTraffic &decode = m_workspace.traffic();
    LinkTraffic &scratch = m_workspace.planning();
    const ServingConfig &c = m_setup.config;
    const bool prefillOnly = c.phase == ServingPhase::Prefill;
    const bool decodeOnly = c.phase == ServingPhase::Decode;
    m_decodePatterns.clear();
    m_requestPatterns.clear();
    // Decode: every replica's collectives of one step.
    if (!prefillOnly)
        for (const KindBytes &k :
             passKinds(m_decodeGroups, m_decodeComm, m_step.collectives, m_setup.decode.pp)) {
            decode.beginPhase(k.count);
            addCollectiveBytes(decode, m_topo, *k.groups, *k.pricer, k.bytes);
            decode.phaseTime();
            TrafficPattern p = phasePattern(decode, k.kind, 0, k.count);
            auto it = std::find_if(m_decodePatterns.begin(),
                                   m_decodePatterns.end(),
                                   [&](const TrafficPattern &q) { return q.kind == k.kind; });
            if (it == m_decodePatterns.end())
                m_decodePatterns.push_back(std::move(p));
            else
                merge(*it, p);
        }
    decode.totals(links->decodeStep.bytesUp, links->decodeStep.bytesDown);
    decode.peaks(links->decodeStep.peakUtilization);
    // One request: its prefill's collectives (every replica's, shared by the prefills they run
    // at once), its KV transfer, its share of the decode steps.
    std::vector<float> reqUp(n, 0.0f), reqDown(n, 0.0f);
    const auto addPattern = [&](const TrafficPattern &p, double factor) {
        for (const LinkShare &l : p.links) {
            reqUp[static_cast<std::size_t>(l.link)] += static_cast<float>(l.up * factor);
            reqDown[static_cast<std::size_t>(l.link)] += static_cast<float>(l.down * factor);
        }
    };
    if (!decodeOnly) {
        const double sharing = double(m_setup.prefill.replicas) * m_setup.prefill.attentionDp;
        for (const KindBytes &k :
             passKinds(m_prefillGroups, m_prefillComm, m_prefill.collectives, m_setup.prefill.pp)) {
            scratch.beginPhase(1.0);
            addCollectiveBytes(scratch, m_topo, *k.groups, *k.pricer, k.bytes);
            scratch.phaseTime();
            TrafficPattern p = phasePattern(scratch, k.kind, 0, k.count / sharing);
            auto it = std::find_if(m_requestPatterns.begin(),
                                   m_requestPatterns.end(),
                                   [&](const TrafficPattern &q) { return q.kind == k.kind; });
            if (it == m_requestPatterns.end())
                m_requestPatterns.push_back(std::move(p));
            else
                merge(*it, p);
        }
        if (!m_kv->empty()) {
            TrafficPattern kv;
            kv.kind = PhaseKind::PpP2p;
            kv.stage = -2; // the KV transfer (a pipeline send's kind, its own pattern)
            kv.links = m_kv->perRequest;
            m_requestPatterns.push_back(std::move(kv));
        }
    }
    for (const TrafficPattern &p : m_requestPatterns)
        addPattern(p, 1.0);
    // Utilization: decode steps per second and requests per second through each link.
    const ThroughputResult &t = m_throughput;
    const double stepsPerS = t.decodeStepS > 0 && !prefillOnly
                                     ? (1.0 - t.prefillShare) / t.decodeStepS
                                     : 0;
    const double rate = t.requestsPerS;
    const double perRequestOfDecode = t.decodeBatch > 0 && stepsPerS > 0
                                              ? std::max(0.0, double(c.outputTokens) - 1)
                                                        / m_accepted
                                                        / (t.decodeBatch * m_setup.decode.replicas)
                                              : 0;
    LinkLoads &loads = links->decodeStep;
    loads.bytesUp.resize(n, 0.0f);
    loads.bytesDown.resize(n, 0.0f);
    loads.peakUtilization.resize(n, 0.0f);
    loads.utilization.assign(n, 0.0f);
    links->requestBytes.assign(n, 0.0f);
    loads.loaded = 0;
    const auto &all = m_topo.links();
    for (std::size_t i = 0; i < n; ++i) {
        const double up = loads.bytesUp[i] * stepsPerS + reqUp[i] * rate;
        const double down = loads.bytesDown[i] * stepsPerS + reqDown[i] * rate;
        links->requestBytes[i] = static_cast<float>(
                reqUp[i] + reqDown[i]
                + (double(loads.bytesUp[i]) + loads.bytesDown[i]) * perRequestOfDecode);
        const double busiest = std::max(up, down);
        if (busiest <= 0 && links->requestBytes[i] <= 0)
            continue;
        ++loads.loaded;
        const double capacity = all[i].effectiveGbPerS() * 1e9;
        loads.utilization[i] = capacity > 0 ? static_cast<float>(busiest / capacity) : 0.0f;
    }
    m_result.links = links;
}

void ServingModel::buildTimelines()
{
    const ServingConfig &c = m_setup.config;
    const ThroughputResult &t = m_throughput;
    const bool prefillOnly = c.phase == ServingPhase::Prefill;
    const bool decodeOnly = c.phase == ServingPhase::Decode;
    // Patterns come from fillLinks(); without link loads the phases carry no bytes.
    StepTimeline &d = m_result.decodeTimeline;
    d = {};
    const int pp = m_setup.decode.pp;
    d.stages = pp;
    d.stepS = prefillOnly ? 0 : m_step.total();
    const auto patternOf = [](StepTimeline &tl,
                              const std::vector<TrafficPattern> &from,
                              PhaseKind kind,
                              int stage) {
        for (const TrafficPattern &p : from)
            if (p.kind == kind && p.stage != -2) {
                TrafficPattern copy = p;
                copy.stage = stage;
                tl.patterns.push_back(std::move(copy));
                return static_cast<int>(tl.patterns.size()) - 1;
            }
        return -1;
    };
    if (!prefillOnly) {
        // One micro-batch's token through the stages: each stage a 1/PP share of every part.
        const int tp = patternOf(d, m_decodePatterns, PhaseKind::Tp, 0);
        const int ep = patternOf(d, m_decodePatterns, PhaseKind::Ep, 0);
        const int ppSend = patternOf(d, m_decodePatterns, PhaseKind::PpP2p, -1);
        const PassCost &s = m_step;
        double at = 0;
        for (int stage = 0; stage < pp; ++stage) {
            const auto phase = [&](const char *name,
                                   PhaseKind kind,
                                   double seconds,
                                   int pattern,
                                   double share) {
                if (seconds <= 0)
                    return;
                d.phases.push_back({name, kind, stage, true, at, at + seconds, pattern, share});
                at += seconds;
            };
            const double f = 1.0 / pp;
            phase("GEMMs reading weights from HBM", PhaseKind::Compute, s.weightsRead * f, -1, 0);
            phase("GEMMs and element-wise kernels", PhaseKind::Compute, s.compute * f, -1, 0);
            phase("attention over the KV cache", PhaseKind::Compute, s.attention * f, -1, 0);
            phase("TP all-reduces", PhaseKind::Tp, s.tp * f, tp, f);
            phase("MoE dispatch and combine", PhaseKind::Ep, s.ep * f, ep, f);
            phase("launch and scheduling", PhaseKind::Bubble, s.overhead * f, -1, 0);
            if (stage + 1 < pp)
                phase("send to the next stage",
                      PhaseKind::PpP2p,
                      s.pp / (pp - 1),
                      ppSend,
                      1.0 / (pp - 1));
        }
        d.stepS = at;
    }
    StepTimeline &r = m_result.requestTimeline;
    r = {};
    r.stages = 1;
    double at = 0;
    const auto phase = [&](const char *name, PhaseKind kind, double seconds, int pattern) {
        if (seconds <= 0)
            return;
        r.phases.push_back({name, kind, 0, true, at, at + seconds, pattern, 1.0});
        at += seconds;
    };
    if (!decodeOnly) {
        phase("waiting", PhaseKind::Bubble, t.waitS, -1);
        const PassCost &p = m_prefill;
        const double chunkSteps = m_setup.disaggregated ? 0.0 : (t.ttftS - t.waitS - p.total());
        phase("prefill: GEMMs and attention",
              PhaseKind::Compute,
              p.compute + p.weightsRead + p.attention + p.overhead,
              -1);
        phase("prefill: TP all-reduces",
              PhaseKind::Tp,
              p.tp,
              patternOf(r, m_requestPatterns, PhaseKind::Tp, 0));
        phase("prefill: MoE dispatch and combine",
              PhaseKind::Ep,
              p.ep,
              patternOf(r, m_requestPatterns, PhaseKind::Ep, 0));
        phase("prefill: sends between stages",
              PhaseKind::PpP2p,
              p.pp,
              patternOf(r, m_requestPatterns, PhaseKind::PpP2p, 0));
        phase("decode steps the prefill chunks ride", PhaseKind::Compute, chunkSteps, -1);
        int kv = -1;
        for (const TrafficPattern &q : m_requestPatterns)
            if (q.stage == -2) {
                TrafficPattern copy = q;
                copy.stage = 0;
                r.patterns.push_back(std::move(copy));
                kv = static_cast<int>(r.patterns.size()) - 1;
            }
        phase("KV cache transfer", PhaseKind::PpP2p, t.kvTransferS, kv);
    }
    if (!prefillOnly) {
        // The decode steps of this request: its share of each step's traffic.
        const double steps = std::max(0.0, double(c.outputTokens) - 1) / m_accepted;
        const double stretch = t.tpotS * m_accepted / std::max(1e-12, m_step.total());
        const PassCost &s = m_step;
        const double share = t.decodeBatch > 0 ? 1.0 / (t.decodeBatch * m_setup.decode.replicas)
                                               : 0;
        const auto decodePattern = [&](PhaseKind kind) {
            for (const TrafficPattern &p : m_decodePatterns)
                if (p.kind == kind) {
                    TrafficPattern copy = p;
                    copy.stage = 0;
                    for (LinkShare &l : copy.links) {
                        l.up = static_cast<float>(l.up * steps * share);
                        l.down = static_cast<float>(l.down * steps * share);
                    }
                    r.patterns.push_back(std::move(copy));
                    return static_cast<int>(r.patterns.size()) - 1;
                }
            return -1;
        };
        phase("decode: GEMMs, attention, launches",
              PhaseKind::Compute,
              steps * stretch * (s.compute + s.weightsRead + s.attention + s.overhead),
              -1);
        phase("decode: TP all-reduces",
              PhaseKind::Tp,
              steps * stretch * s.tp,
              decodePattern(PhaseKind::Tp));
        phase("decode: MoE dispatch and combine",
              PhaseKind::Ep,
              steps * stretch * s.ep,
              decodePattern(PhaseKind::Ep));
        phase("decode: sends between stages",
              PhaseKind::PpP2p,
              steps * stretch * s.pp,
              decodePattern(PhaseKind::PpP2p));
    }
    r.stepS = at;
}

} // namespace railyard::engine::detail
