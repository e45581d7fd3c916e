#include "serving/kvtransfer.h"

#include "collectives/collective.h"
#include "collectives/traffic.h"
#include "serving/servingmemory.h"
#include "topology/topology.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace railyard::engine {

namespace {

// The most replica pairs a request's transfer is averaged over (a large deployment's pairs are
// sampled evenly: pair k joins prefill replica k mod P and decode replica k mod D).
constexpr int kMaxPairs = 1024;

struct Flow
{
    int from = 0, to = 0;
    double bytes = 0;
};

// One request's sends from prefill replica `rp` to decode replica `rd` (attention-DP group 0 of
// each: the others are alike).
void requestFlows(const ServingSetup &s,
                  const PoolGroups &pg,
                  const PoolGroups &dg,
                  int rp,
                  int rd,
                  double tokens,
                  std::vector<Flow> &out)
{
    const ModelDims &m = s.model;
    const ServingPoolShape &P = s.prefill, &D = s.decode;
    const double full = tokens;
    const double window = m.slidingWindow > 0 ? std::min(tokens, double(m.slidingWindow)) : tokens;
    const double unsharded = kvBytesPerTokenPerLayer(m, 1, s.kvPrecision);
    // What one decode attention-TP rank keeps of one token's KV on one layer.
    const double share = m.isMla() ? 1.0
                                   : std::max(1.0, std::ceil(double(m.kvHeads) / D.attentionTp()))
                                             / m.kvHeads;
    for (int sd = 0; sd < D.pp; ++sd) {
        const StageLayers ld = stageLayers(m, D.pp, sd);
        for (int sp = 0; sp < P.pp; ++sp) {
            const StageLayers lp = stageLayers(m, P.pp, sp);
            const int from = std::max(ld.first, lp.first);
            const int to = std::min(ld.first + ld.count, lp.first + lp.count);
            if (to <= from)
                continue;
            const double layers = to - from;
            // Sliding-window layers in proportion (they are spread evenly).
            const double sliding = m.layers > 0 ? layers * m.slidingLayers / m.layers : 0;
            const double perRank = unsharded * share
                                   * ((layers - sliding) * full + sliding * window);
            for (int t = 0; t < D.attentionTp(); ++t) {
                const int tp = t * P.attentionTp() / D.attentionTp();
                const int src
                        = pg.replicas.gpus[static_cast<std::size_t>((rp * P.pp + sp) * P.tp + tp)];
                const int dst
                        = dg.replicas.gpus[static_cast<std::size_t>((rd * D.pp + sd) * D.tp + t)];
                out.push_back({src, dst, perRank});
            }
        }
    }
}

} // namespace

KvTransfer planKvTransfer(const Topology &t,
                          const ServingSetup &s,
                          const PoolGroups &pg,
                          const PoolGroups &dg,
                          double tokens,
                          LinkTraffic &scratch)
{
    KvTransfer k;
    if (!s.disaggregated || pg.replicas.gpus.empty() || dg.replicas.gpus.empty())
        return k;
    std::vector<Flow> flows;
    requestFlows(s, pg, dg, 0, 0, tokens, flows);
    k.flows = static_cast<int>(flows.size());
    for (const Flow &f : flows) {
        k.bytesPerRequest += f.bytes;
        k.crossesDomains = k.crossesDomains || t.domainOfGpu(f.from) != t.domainOfGpu(f.to);
    }
    // The representative request's own links.
    scratch.beginPhase(1.0);
    int i = 0;
    for (const Flow &f : flows)
        addPointToPoint(scratch, t, f.from, f.to, f.bytes, i++);
    scratch.phaseTime();
    std::vector<LinkShare> own;
    scratch.phaseBytes(own);
    // Every pair's, averaged.
    const int P = s.prefill.replicas, D = s.decode.replicas;
    const int pairs = std::min(kMaxPairs, std::max(P, D));
    scratch.beginPhase(1.0);
    for (int pair = 0; pair < pairs; ++pair) {
        flows.clear();
        requestFlows(s, pg, dg, pair % P, pair % D, tokens, flows);
        i = 0;
        for (const Flow &f : flows)
            addPointToPoint(scratch, t, f.from, f.to, f.bytes / pairs, i++);
    }
    scratch.phaseTime();
    scratch.phaseBytes(k.perRequest);
    const auto byLink = [](const LinkShare &a, const LinkShare &b) { return a.link < b.link; };
    const auto merge = [&](std::vector<LinkShare> &v) {
        std::sort(v.begin(), v.end(), byLink);
        std::size_t w = 0;
        for (std::size_t r = 0; r < v.size(); ++r) {
            if (w > 0 && v[w - 1].link == v[r].link) {
                v[w - 1].up += v[r].up;
                v[w - 1].down += v[r].down;
            } else {
                v[w++] = v[r];
            }
        }
        v.resize(w);
    };
    merge(own);
    merge(k.perRequest);
    for (const LinkShare &l : own) {
        const double bytes = std::max(l.up, l.down);
        if (bytes <= 0)
            continue;
        KvTransfer::PathLink p;
        p.link = l.link;
        p.bytes = bytes;
        p.rate = t.links()[static_cast<std::size_t>(l.link)].effectiveGbPerS() * 1e9;
        const auto it = std::lower_bound(k.perRequest.begin(), k.perRequest.end(), l, byLink);
        if (it != k.perRequest.end() && it->link == l.link)
            p.averageBytes = std::max(it->up, it->down);
        k.path.push_back(p);
    }
    // A link's time at any rate grows with its seconds per transfer and its load per
    // request/s: one no better on both than another is never the slowest.
    for (const KvTransfer::PathLink &p : k.path) {
        if (p.rate <= 0)
            continue;
        const double a = p.bytes / p.rate, c = p.averageBytes / p.rate;
        bool dominated = false;
        for (const KvTransfer::PathLink &q : k.path)
            if (&q != &p && q.rate > 0) {
                const double qa = q.bytes / q.rate, qc = q.averageBytes / q.rate;
                if (qa >= a && qc >= c && (qa > a || qc > c || &q < &p)) {
                    dominated = true;
                    break;
                }
            }
        if (!dominated)
            k.slowest.push_back(p);
    }
    // A send's latency: NCCL's point-to-point model between the first flow's GPUs.
    if (!flows.empty()) {
        std::vector<Flow> rep;
        requestFlows(s, pg, dg, 0, 0, tokens, rep);
        const std::vector<int> pairGpus = {rep.front().from, rep.front().to};
        if (pairGpus[0] != pairGpus[1]) {
            const GroupShape g = analyzeGroup(t, pairGpus);
            const CollectivePlan plan
                    = planCollective(t, g, CollectiveOp::SendRecv, 1.0, Algorithm::Auto, scratch);
            k.latencyS = std::max(0.0, plan.latencyS - ncclLaunchOverheadS());
        }
    }
    return k;
}

double KvTransfer::timeS(double rate) const
{
    double worst = 0;
    for (const PathLink &p : slowest) {
        if (p.rate <= 0)
            continue;
        const double load = std::min(0.95, rate * p.averageBytes / p.rate);
        worst = std::max(worst, p.bytes / p.rate / (1.0 - load));
    }
    return empty() ? 0.0 : latencyS + worst;
}

double KvTransfer::maxRequestsPerS() const
{
    double best = std::numeric_limits<double>::infinity();
    for (const PathLink &p : path)
        if (p.averageBytes > 0 && p.rate > 0)
            best = std::min(best, p.rate / p.averageBytes);
    return best;
}

double KvTransfer::peakLoad(double rate, int *link) const
{
    double peak = 0;
    for (const PathLink &p : path)
        if (p.rate > 0 && rate * p.averageBytes / p.rate > peak) {
            peak = rate * p.averageBytes / p.rate;
            if (link)
                *link = p.link;
        }
    return peak;
}

double exposedKvTransfer(double transferS, double prefillS, int layers, bool layerwise)
{
    if (!layerwise || layers <= 1)
        return transferS;
    const double L = layers;
    return std::max(transferS / L, transferS - prefillS * (L - 1) / L);
}

} // namespace railyard::engine
