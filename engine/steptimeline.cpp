#include "stepmodel.h"

#include <algorithm>

namespace railyard::engine::detail {

void StepModel::buildTimeline()
{
    const StepBreakdown &x = e.exposed;
    const StepBreakdown &tot = e.total;
    double clock = 0;
    const auto phase = [&](const std::string &name,
                           Dim d,
                           bool comm,
                           double len,
                           const std::vector<int> &links) {
        if (len <= 0)
            return;
        Phase p;
        p.name = name;
        p.dim = d;
        p.communication = comm;
        p.start = clock;
        p.end = clock + len;
        p.links = links;
        e.timeline.push_back(std::move(p));
    };
    // Compute on the critical path, with the communication that runs inside it drawn at the
    // same time.
    const double fwd = x.compute / 3.0, bwd = x.compute - fwd;
    phase("pipeline fill", Dim::PP, false, x.ppBubble / 2, {});
    clock += x.ppBubble / 2;
    phase("forward", Dim::TP, false, fwd + (x.tp + x.cp + x.ep) / 3, {});
    phase("TP collectives",
          Dim::TP,
          true,
          x.tp / 3 + (tot.tp - x.tp) / 3,
          (sp ? c.tpAg : c.tpAr).sampleLinks);
    phase("EP all-to-all", Dim::EP, true, tot.ep / 2, c.epA2a.sampleLinks);
    phase("CP ring attention", Dim::CP, true, tot.cp / 3, c.cpRing.sampleLinks);
    phase("PP send/recv", Dim::PP, true, x.ppP2p / 2, c.ppP2p.sampleLinks);
    clock += fwd + (x.tp + x.cp + x.ep) / 3;
    phase("backward", Dim::TP, false, bwd + 2 * (x.tp + x.cp + x.ep) / 3, {});
    phase("TP collectives", Dim::TP, true, 2 * tot.tp / 3, (sp ? c.tpRs : c.tpAr).sampleLinks);
    phase("EP all-to-all", Dim::EP, true, tot.ep / 2, c.epA2a.sampleLinks);
    phase("CP ring attention", Dim::CP, true, 2 * tot.cp / 3, c.cpRing.sampleLinks);
    phase("PP send/recv", Dim::PP, true, x.ppP2p / 2, c.ppP2p.sampleLinks);
    const double backEnd = clock + bwd + 2 * (x.tp + x.cp + x.ep) / 3;
    // DP gradient reduction starts under the last backward.
    const double dpGrad = c.dpGradS;
    const double dpStart = std::max(clock, backEnd - (dpGrad - std::min(dpGrad, x.dp)));
    clock = dpStart;
    phase("DP gradient reduce",
          Dim::DP,
          true,
          dpGrad,
          (c.shardedGrads ? c.dpRs : c.dpAr).sampleLinks);
    clock = std::max(backEnd, dpStart + dpGrad);
    phase("pipeline drain", Dim::PP, false, x.ppBubble / 2, {});
    clock += x.ppBubble / 2;
    phase("optimizer step", Dim::DP, false, x.optimizer, {});
    clock += x.optimizer;
    phase("DP parameter all-gather",
          Dim::DP,
          true,
          std::min(c.dpParamS, std::max(0.0, e.stepTimeS - clock)),
          c.dpAg.sampleLinks);
}

} // namespace railyard::engine::detail
