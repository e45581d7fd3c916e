#include "step/stepmodel_p.h"

#include "step/timelinescratch.h"
#include "step/workspace.h"

#include <algorithm>
#include <string>

namespace railyard::engine::detail {

namespace {
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
    TimelineScratch &scratch = m_workspace.timeline();
    const std::size_t n = static_cast<std::size_t>(m_topo.linkCount());
    if (scratch.sums.size() != n || scratch.dirty)
        scratch.sums.assign(n, {});
    std::vector<LinkShare> &sums = scratch.sums;
    std::vector<int> &touched = scratch.touched;
    touched.clear();
    scratch.dirty = true;
    for (const DimPrice *p : parts) {
        const std::size_t at = stage < 0 ? 0 : static_cast<std::size_t>(stage);
        if (p->perStep <= 0 || at >= p->stageBytes.size())
            continue;
        for (const LinkShare &l : p->stageBytes[at]) {
            LinkShare &sum = sums[static_cast<std::size_t>(l.link)];
            if (sum.up == 0 && sum.down == 0)
                touched.push_back(l.link);
            sum.up += static_cast<float>(l.up * p->perStep);
            sum.down += static_cast<float>(l.down * p->perStep);
        }
    }
    if (touched.empty()) {
        scratch.dirty = false;
        return -1;
    }
    TrafficPattern pattern;
    pattern.kind = kind;
    pattern.stage = stage;
    pattern.links.reserve(touched.size());
    const auto take = [&](int l) {
        LinkShare &sum = sums[static_cast<std::size_t>(l)];
        if (sum.up > 0 || sum.down > 0)
            pattern.links.push_back({l, sum.up, sum.down});
        sum = {};
    };
    // In link order: sorted, or (touching a good part of its span) read off the sums in
    // order, which costs less than sorting them.
    const auto [lo, hi] = std::minmax_element(touched.begin(), touched.end());
    if (touched.size() * 16 >= static_cast<std::size_t>(*hi - *lo)) {
        for (int l = *lo; l <= *hi; ++l)
            take(l);
    } else {
        std::sort(touched.begin(), touched.end());
        touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
        for (int l : touched)
            take(l);
    }
    scratch.dirty = false;
    m_result.timeline.patterns.push_back(std::move(pattern));
    return static_cast<int>(m_result.timeline.patterns.size()) - 1;
}

// The pipeline's sends, one pattern per stage: a stage's phases carry the bytes on the links of
// its own GPUs and NICs (what it sends and receives; every stage sends at once in one
// instance), and an equal part of the bytes on links no one stage owns (spine and core
// uplinks, a NIC two stages share). -1 for a stage without bytes.
std::vector<int> StepModel::addPipelinePatterns()
{
    std::vector<int> out(static_cast<std::size_t>(m_pp), -1);
    const int whole = addPattern(PhaseKind::PpP2p, -1, {&m_comm.ppP2p, &m_comm.ppGather});
    if (whole < 0)
        return out;
    std::vector<TrafficPattern> &patterns = m_result.timeline.patterns;
    const TrafficPattern all = std::move(patterns[static_cast<std::size_t>(whole)]);
    patterns.pop_back();
    // Each link's stage: the one whose GPUs and NICs it touches, -1 none, -2 more than one.
    // It depends only on the topology and where the stages sit, so the workspace keeps it
    // between evaluations of the same build and stages (walking every GPU's links costs more
    // than the rest of the pipeline's patterns).
    TimelineScratch &owners = m_workspace.timeline();
    if (m_topo.buildId() == 0 || owners.ownersBuild != m_topo.buildId()
        || owners.ownersStageOfGpu != m_stageOfGpu) {
        owners.ownersBuild = m_topo.buildId();
        owners.ownersStageOfGpu = m_stageOfGpu;
        owners.ownerOfLink.assign(static_cast<std::size_t>(m_topo.linkCount()), -1);
        const auto claim = [&](int link, int stage) {
            if (link < 0)
                return;
            int &o = owners.ownerOfLink[static_cast<std::size_t>(link)];
            o = o == -1 || o == stage ? stage : -2;
        };
        for (int g = 0; g < m_topo.gpuCount(); ++g) {
            const int s = m_stageOfGpu[static_cast<std::size_t>(g)];
            if (s < 0)
                continue;
            for (int l : m_topo.gpuNvlinks(g))
                claim(l, s);
            claim(m_topo.gpuHostLink(g), s);
            for (int nic : m_topo.gpuNics(g)) {
                const int i = m_topo.devices()[static_cast<std::size_t>(nic)].index;
                claim(m_topo.nicHostLink(i), s);
                claim(m_topo.nicUplink(i), s);
            }
        }
    }
    // One pass: a stage's own links to it, the others' share to every stage (in link order).
    std::vector<TrafficPattern> stages(static_cast<std::size_t>(m_pp));
    std::vector<std::size_t> owned(static_cast<std::size_t>(m_pp), 0);
    std::size_t shared = 0;
    for (const LinkShare &l : all.links) {
        const int o = owners.ownerOfLink[static_cast<std::size_t>(l.link)];
        ++(o >= 0 ? owned[static_cast<std::size_t>(o)] : shared);
    }
    for (std::size_t s = 0; s < stages.size(); ++s)
        stages[s].links.reserve(owned[s] + shared);
    const float spread = 1.0f / static_cast<float>(m_pp);
    for (const LinkShare &l : all.links) {
        const int o = owners.ownerOfLink[static_cast<std::size_t>(l.link)];
        if (o >= 0) {
            stages[static_cast<std::size_t>(o)].links.push_back(l);
        } else {
            for (TrafficPattern &p : stages)
                p.links.push_back({l.link, l.up * spread, l.down * spread});
        }
    }
    for (int stage = 0; stage < m_pp; ++stage) {
        TrafficPattern &p = stages[static_cast<std::size_t>(stage)];
        if (p.links.empty())
            continue;
        p.kind = PhaseKind::PpP2p;
        p.stage = stage;
        out[static_cast<std::size_t>(stage)] = static_cast<int>(patterns.size());
        patterns.push_back(std::move(p));
    }
    return out;
}

// The step's phases as the schedule ran them (stepschedule.h), each with the bytes it puts on
// the links: its kind's pattern on its stage, times its share of the kind's bytes per step.
void StepModel::buildTimeline()
{
    StepTimeline &tl = m_result.timeline;
    tl = {};
    tl.stages = m_pp;
    tl.stepS = m_result.stepTimeS;
    const std::string tpName = m_sp ? "TP all-gather / reduce-scatter" : "TP all-reduce";
    const std::vector<int> ppPatterns = addPipelinePatterns();
    struct StagePatterns
    {
        int tp, cp, ep, grads, params;
    };
    std::vector<StagePatterns> patterns;
    for (int stage = 0; stage < m_pp; ++stage) {
        StagePatterns p;
        p.tp = addPattern(PhaseKind::Tp, stage, {&m_comm.tpAg, &m_comm.tpRs, &m_comm.tpAr});
        p.cp = addPattern(PhaseKind::Cp, stage, {&m_comm.cpRing, &m_comm.cpAg});
        p.ep = addPattern(PhaseKind::Ep, stage, {&m_comm.epA2a});
        p.grads = m_comm.zero3
                          ? addPattern(PhaseKind::Dp,
                                       stage,
                                       {&m_comm.dpRs, &m_comm.edpRs, &m_comm.dpAr}) // hybrid
                          : addPattern(PhaseKind::Dp,
                                       stage,
                                       {&m_comm.dpRs, &m_comm.dpAr, &m_comm.edpRs, &m_comm.edpAr});
        p.params = addPattern(PhaseKind::Dp, stage, {&m_comm.dpAg, &m_comm.edpAg});
        patterns.push_back(p);
    }
    const double perOp = m_schedule.perOp;
    tl.phases.reserve(m_schedule.phases.size());
    for (const ScheduledPhase &sp : m_schedule.phases) {
        const StagePatterns &sps = patterns[static_cast<std::size_t>(sp.stage)];
        Phase p;
        p.stage = sp.stage;
        p.exposed = sp.exposed;
        p.kind = PhaseKind::Bubble;
        switch (sp.activity) {
        case StepActivity::Fill: p.name = "pipeline fill"; break;
        case StepActivity::Bubble: p.name = "pipeline bubble"; break;
        case StepActivity::Drain: p.name = "pipeline drain"; break;
        case StepActivity::Idle: p.name = "waiting for the slowest stage"; break;
        case StepActivity::Forward:
        case StepActivity::Backward:
            p.kind = PhaseKind::Compute;
            p.name = microBatchName(sp.activity == StepActivity::Forward ? "forward" : "backward",
                                    sp.op,
                                    perOp,
                                    m_micro);
            break;
        case StepActivity::DpWait:
            p.kind = PhaseKind::Dp;
            p.name = "DP wait";
            break;
        case StepActivity::Optimizer:
            p.kind = PhaseKind::Optimizer;
            p.name = "optimizer step";
            break;
        case StepActivity::Tp:
            p.kind = PhaseKind::Tp;
            p.name = tpName;
            p.pattern = sps.tp;
            break;
        case StepActivity::Cp:
            p.kind = PhaseKind::Cp;
            p.name = "CP ring attention";
            p.pattern = sps.cp;
            break;
        case StepActivity::Ep:
            p.kind = PhaseKind::Ep;
            p.name = sp.forward ? "EP dispatch / combine" : "EP dispatch / combine (backward)";
            p.pattern = sps.ep;
            break;
        case StepActivity::PpSend:
            p.kind = PhaseKind::PpP2p;
            p.name = sp.forward ? "PP send activations" : "PP send gradients";
            p.pattern = ppPatterns[static_cast<std::size_t>(sp.stage)];
            break;
        case StepActivity::DpParams:
            p.kind = PhaseKind::Dp;
            p.name = m_comm.shardedGrads ? "DP parameter all-gather" : "DP parameters";
            p.pattern = sps.params;
            break;
        case StepActivity::DpGrads:
            p.kind = PhaseKind::Dp;
            p.name = m_comm.shardedGrads ? "DP gradient reduce-scatter" : "DP gradient all-reduce";
            p.pattern = sps.grads;
            break;
        case StepActivity::ZeroGather:
            p.kind = PhaseKind::Dp;
            p.name = "ZeRO-3 parameter gather";
            p.pattern = sps.params;
            break;
        case StepActivity::ZeroReduce:
            p.kind = PhaseKind::Dp;
            p.name = "ZeRO-3 gradient reduce-scatter";
            p.pattern = sps.grads;
            break;
        }
        // A phase with bytes keeps some length, so its bytes have a moment to run in.
        p.start = std::min(sp.start, tl.stepS);
        p.end = std::min(tl.stepS, std::max(sp.end, p.start + (p.pattern >= 0 ? 1e-9 : 0.0)));
        p.start = std::min(p.start, p.end);
        p.share = p.pattern >= 0 ? sp.share : 0.0;
        if (p.end <= p.start && p.pattern < 0)
            continue;
        if (p.pattern >= 0 && sp.segments > 0) {
            p.firstSegment = static_cast<int>(tl.segments.size());
            p.segments = sp.segments;
            for (int i = 0; i < sp.segments; ++i)
                tl.segments.push_back(
                        m_schedule.segments[static_cast<std::size_t>(sp.firstSegment + i)]);
        }
        tl.phases.push_back(std::move(p));
    }
}

} // namespace railyard::engine::detail
