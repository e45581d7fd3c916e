#include "step/stepmodel_p.h"

#include <algorithm>
#include <string>

namespace railyard::engine::detail {

namespace {
// At most this many compute phases per direction and stage: more micro-batches are grouped
// (64 micro-batches: 16 phases of 4), so a 16k-GPU step stays a few thousand phases.
constexpr int kMaxOps = 16;

std::string microBatchName(const char *what, int op, double perOp, int micro)
{
    const int first = static_cast<int>(op * perOp) + 1;
    const int last = std::min(micro, static_cast<int>((op + 1) * perOp));
    if (last <= first)
        return std::string(what) + ", micro-batch " + std::to_string(first);
    return std::string(what) + ", micro-batches " + std::to_string(first) + "-"
           + std::to_string(last);
}
} // namespace

// The bytes per step of `parts` on the stage's groups (stage -1: their only entry), merged and
// sorted by link, as a new pattern; -1 if they carry nothing.
int StepModel::addPattern(PhaseKind kind, int stage, std::initializer_list<const DimPrice *> parts)
{
    const std::size_t n = static_cast<std::size_t>(m_topo.linkCount());
    if (m_sum.size() != n)
        m_sum.assign(n, {});
    std::vector<int> touched;
    for (const DimPrice *p : parts) {
        const std::size_t at = stage < 0 ? 0 : static_cast<std::size_t>(stage);
        if (p->perStep <= 0 || at >= p->stageBytes.size())
            continue;
        for (const LinkShare &l : p->stageBytes[at]) {
            LinkShare &sum = m_sum[static_cast<std::size_t>(l.link)];
            if (sum.up == 0 && sum.down == 0)
                touched.push_back(l.link);
            sum.up += static_cast<float>(l.up * p->perStep);
            sum.down += static_cast<float>(l.down * p->perStep);
        }
    }
    if (touched.empty())
        return -1;
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    TrafficPattern pattern;
    pattern.kind = kind;
    pattern.stage = stage;
    pattern.links.reserve(touched.size());
    for (int l : touched) {
        LinkShare &sum = m_sum[static_cast<std::size_t>(l)];
        if (sum.up > 0 || sum.down > 0)
            pattern.links.push_back({l, sum.up, sum.down});
        sum = {};
    }
    m_result.timeline.patterns.push_back(std::move(pattern));
    return static_cast<int>(m_result.timeline.patterns.size()) - 1;
}

// One step, stage by stage, as the step's breakdown prices it: the micro-batches in 1F1B order
// (warm-up forwards, one forward one backward, cool-down backwards; grouped when there are
// many), each forward a third and each backward two thirds of the compute with the exposed
// TP/CP/EP/PP time; the bubble split between the start (the stage waits for its first input),
// the middle and the end; then the exposed DP wait and the optimizer. The communication runs
// beside the compute it overlaps: the TP, CP and EP collectives at the start of each
// micro-batch, PP send/recv at its end, the DP gradient reduction ending where the exposed DP
// wait ends, the parameter gather under the first forward.
void StepModel::buildTimeline()
{
    StepTimeline &tl = m_result.timeline;
    tl = {};
    tl.stages = m_pp;
    tl.stepS = m_result.stepTimeS;
    const StepBreakdown &x = m_result.exposed;
    const StepBreakdown &tot = m_result.total;
    const TrainingConfig &t = m_layout.training;
    const int ops = std::min(m_micro, kMaxOps);
    const double perOp = double(m_micro) / ops;
    const double work = x.compute + x.tp + x.cp + x.ep + x.ppP2p + (m_comm.zero3 ? x.dp : 0.0);
    const double fwdLen = work / 3.0 / ops, bwdLen = 2.0 * fwdLen;
    // The forward's share of each collective's bytes (SP: per layer two all-gathers and two
    // reduce-scatters forward, of 10; without SP two all-reduces of 4; recomputation repeats the
    // forward's in the backward).
    const double rc = t.recompute == Recompute::Full ? 2.0 : 0.0;
    const double tpFwd = m_sp ? 4.0 / (10.0 + 2.0 * rc) : 2.0 / (4.0 + rc);
    const double cpFwd = 1.0 / 3.0, epFwd = 0.5;
    const std::string tpName = m_sp ? "TP all-gather / reduce-scatter" : "TP all-reduce";
    const int ppPattern = addPattern(PhaseKind::PpP2p, -1, {&m_comm.ppP2p});

    double clock = 0;
    int stage = 0;
    // Where each pattern's last phase on this stage ends: one group's collectives run one after
    // another on its stream (NCCL orders the operations of a communicator), so a phase that
    // would start before the previous one of its pattern ends waits for it.
    std::vector<double> patternFree;
    bool chained = true; // false: the phase keeps the start it is given
    const auto add = [&](std::string name,
                         PhaseKind kind,
                         bool exposed,
                         double start,
                         double len,
                         int pattern,
                         double share) {
        if (len <= 0 && pattern < 0)
            return;
        if (pattern >= 0 && chained) {
            if (patternFree.size() <= static_cast<std::size_t>(pattern))
                patternFree.resize(static_cast<std::size_t>(pattern) + 1, 0.0);
            double &free = patternFree[static_cast<std::size_t>(pattern)];
            // ... unless waiting would run it past the step's end: where the priced step
            // leaves a stream too little time, its phases keep the start the schedule gives
            // them and overlap (the link load shows more than the link's rate: the contention
            // the step time does not price yet, issue 19).
            if (free + std::max(0.0, len) <= tl.stepS)
                start = std::max(start, free);
            free = std::max(free, start + std::max(0.0, len));
        }
        Phase p;
        p.name = std::move(name);
        p.kind = kind;
        p.stage = stage;
        p.exposed = exposed;
        p.start = start;
        // A phase with bytes keeps some length, so its bytes have a moment to run in.
        p.end = std::min(tl.stepS, start + std::max(len, pattern >= 0 ? 1e-9 : 0.0));
        p.start = std::min(p.start, p.end);
        p.pattern = pattern;
        p.share = pattern >= 0 ? share : 0.0;
        tl.phases.push_back(std::move(p));
    };
    const auto main = [&](std::string name, PhaseKind kind, double len) {
        add(std::move(name), kind, true, clock, len, -1, 0);
        clock += std::max(0.0, len);
    };

    for (stage = 0; stage < m_pp; ++stage) {
        clock = 0;
        patternFree.assign(patternFree.size(), 0.0);
        const int tpP = addPattern(PhaseKind::Tp, stage, {&m_comm.tpAg, &m_comm.tpRs, &m_comm.tpAr});
        const int cpP = addPattern(PhaseKind::Cp, stage, {&m_comm.cpRing});
        const int epP = addPattern(PhaseKind::Ep, stage, {&m_comm.epA2a});
        const int gradP
                = m_comm.zero3
                          ? addPattern(PhaseKind::Dp, stage, {&m_comm.dpRs, &m_comm.edpRs})
                          : addPattern(PhaseKind::Dp,
                                       stage,
                                       {&m_comm.dpRs, &m_comm.dpAr, &m_comm.edpRs, &m_comm.edpAr});
        const int paramP = addPattern(PhaseKind::Dp, stage, {&m_comm.dpAg, &m_comm.edpAg});

        const double before = m_pp > 1 ? double(stage) / (m_pp - 1) : 0.0;
        const double lead = x.ppBubble * before / 3.0;
        const double tail = x.ppBubble * before * 2.0 / 3.0;
        const double middle = x.ppBubble - lead - tail;
        main("pipeline fill", PhaseKind::Bubble, lead);
        if (!m_comm.zero3 && paramP >= 0)
            add(m_comm.shardedGrads ? "DP parameter all-gather" : "DP parameters",
                PhaseKind::Dp,
                false,
                0.0,
                m_comm.dpParamS,
                paramP,
                1.0);

        // 1F1B order: warm-up forwards, then one forward one backward, then the backwards.
        const int warm = std::min(ops, m_pp - 1 - stage);
        std::vector<bool> forward;
        for (int i = 0; i < warm; ++i)
            forward.push_back(true);
        for (int i = warm; i < ops; ++i) {
            forward.push_back(true);
            forward.push_back(false);
        }
        for (int i = 0; i < warm; ++i)
            forward.push_back(false);
        int f = 0, b = 0;
        for (std::size_t j = 0; j < forward.size(); ++j) {
            if (j == static_cast<std::size_t>(warm))
                main("pipeline bubble", PhaseKind::Bubble, middle);
            const bool fwd = forward[j];
            const double start = clock, len = fwd ? fwdLen : bwdLen;
            main(microBatchName(fwd ? "forward" : "backward", fwd ? f : b, perOp, m_micro),
                 PhaseKind::Compute,
                 len);
            const double share = 1.0 / ops;
            add(tpName,
                PhaseKind::Tp,
                false,
                start,
                tot.tp * (fwd ? tpFwd : 1 - tpFwd) / ops,
                tpP,
                share * (fwd ? tpFwd : 1 - tpFwd));
            add("CP ring attention",
                PhaseKind::Cp,
                false,
                start,
                tot.cp * (fwd ? cpFwd : 1 - cpFwd) / ops,
                cpP,
                share * (fwd ? cpFwd : 1 - cpFwd));
            add(fwd ? "EP dispatch / combine" : "EP dispatch / combine (backward)",
                PhaseKind::Ep,
                false,
                start,
                tot.ep * (fwd ? epFwd : 1 - epFwd) / ops,
                epP,
                share * (fwd ? epFwd : 1 - epFwd));
            if (m_comm.zero3) {
                // Each micro-batch gathers every layer's parameters once forward and
                // `gathers` times backward (the pattern's bytes split the same way), and
                // reduce-scatters every layer's gradients backward.
                const double layers = double(m_dims.layers) / m_pp * perOp;
                const double gathers = m_comm.zeroBackwardGathers;
                add("ZeRO-3 parameter gather",
                    PhaseKind::Dp,
                    false,
                    start,
                    layers * m_comm.zeroGatherPerLayerS * (fwd ? 1.0 : gathers),
                    paramP,
                    share * (fwd ? 1.0 : gathers) / (1.0 + gathers));
                if (!fwd)
                    add("ZeRO-3 gradient reduce-scatter",
                        PhaseKind::Dp,
                        false,
                        start + len / 2,
                        layers * m_comm.zeroReducePerLayerS,
                        gradP,
                        share);
            } else if (m_comm.zero2 && !fwd) {
                // Priced as one collective overlapping the backward (stepcost.cpp), not as a
                // chain: each keeps its backward's start.
                chained = false;
                add("DP gradient reduce-scatter",
                    PhaseKind::Dp,
                    false,
                    start,
                    m_comm.dpGradS / ops,
                    gradP,
                    share);
                chained = true;
            }
            if (ppPattern >= 0) {
                const double p2p = m_comm.ppP2p.timeS * perOp * m_vp;
                add(fwd ? "PP send activations" : "PP send gradients",
                    PhaseKind::PpP2p,
                    false,
                    std::max(start, clock - p2p),
                    p2p,
                    ppPattern,
                    share / (2.0 * m_pp));
            }
            (fwd ? f : b)++;
        }
        main("pipeline drain", PhaseKind::Bubble, tail);
        const double dpWait = m_comm.zero3 ? 0.0 : x.dp;
        if (!m_comm.zero3 && !m_comm.zero2 && gradP >= 0) {
            // The buckets reduce as the last backward fills them; what is left waits.
            const double end = clock + std::min(dpWait, m_comm.dpGradS);
            add(m_comm.shardedGrads ? "DP gradient reduce-scatter" : "DP gradient all-reduce",
                PhaseKind::Dp,
                false,
                std::max(0.0, end - m_comm.dpGradS),
                m_comm.dpGradS,
                gradP,
                1.0);
        }
        main("DP wait", PhaseKind::Dp, dpWait);
        main("optimizer step", PhaseKind::Optimizer, x.optimizer);
    }
}

} // namespace railyard::engine::detail
