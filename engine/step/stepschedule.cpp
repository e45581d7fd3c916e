// The step's schedule: what every stage shares (the parts as composeStep() priced them, each
// kind of collective's demand on the links) and each stage's plan (its own phases in 1F1B order
// and the collectives beside them). Running a plan: stepschedulerun.cpp.
#include "step/stepschedule.h"

#include <algorithm>
#include <initializer_list>
#include <limits>

namespace railyard::engine {

namespace {

// At most this many compute phases per direction and stage: more micro-batches are grouped
// (64 micro-batches: 16 phases of 4), so a 16k-GPU step stays a few thousand phases.
constexpr int kMaxOps = 16;

// Streams: the layer's collectives (TP, CP, EP, issued in layer order by the compute stream),
// the pipeline's sends, the gradient reductions, the parameter gathers.
constexpr int kLayer = 0, kPipeline = 1, kGrads = 2, kParams = 3;

double &part(StepBreakdown &b, int i)
{
    double *all[] = {&b.compute, &b.tp, &b.cp, &b.ep, &b.ppBubble, &b.ppP2p, &b.dp, &b.optimizer};
    return *all[i];
}

double ratio(double a, double b)
{
    return b > 0 ? std::clamp(a / b, 0.0, 1.0) : 0.0;
}

} // namespace

void StepScheduler::setTerms(const StepSetting &s, const StepComm &c, const StepTimes &times)
{
    const TrainingConfig &tc = *s.training;
    Terms &T = m_terms;
    T = {};
    T.pp = s.pp;
    T.ops = std::min(std::max(1, s.micro), kMaxOps);
    T.perOp = double(std::max(1, s.micro)) / T.ops;
    T.x = times.exposed;
    T.tot = times.total;
    const StepBreakdown &x = T.x;
    T.zero2 = c.zero2;
    T.zero3 = c.zero3;
    T.overlapDp = tc.overlap.dp;
    // A micro-batch group's forward is a third of its work, the backward two thirds.
    const double work = x.compute + x.tp + x.cp + x.ep + x.ppP2p + (c.zero3 ? x.dp : 0.0);
    T.fwdLen = work / 3.0 / T.ops;
    T.bwdLen = 2.0 * T.fwdLen;
    // The forward's share of each collective's bytes (SP: per layer two all-gathers and two
    // reduce-scatters forward, of 10; without SP two all-reduces of 4; recomputation repeats the
    // forward's in the backward).
    const double rc = 2.0 * fullRecomputeShare(tc, s.model->layers, s.pp);
    T.tpFwd = s.sp ? 4.0 / (10.0 + 2.0 * rc) : 2.0 / (4.0 + rc);
    T.p2p = c.ppTransferS * T.perOp * s.vp;
    T.dpGradS = c.dpGradS;
    T.dpParamS = c.dpParamS;
    T.gradExposed = times.dpGradExposed;
    T.paramExposed = times.dpParamExposed;
    T.overlapLoss = times.dpOverlapLoss;
    T.dpWait = c.zero3 ? 0.0 : x.dp;
    T.paramChunks = times.paramChunks;
    T.paramGroup = times.paramGroup;
    T.paramUnitForward = times.paramUnitForward;
    T.layersPerOp = double(s.model->layers) / s.pp * T.perOp;
    T.gatherPerLayer = c.zeroGatherPerLayerS;
    T.reducePerLayer = c.zeroReducePerLayerS;
    T.gathers = c.zeroBackwardGathers;
    T.eTp = ratio(x.tp, T.tot.tp);
    T.eCp = ratio(x.cp, T.tot.cp);
    T.eEp = ratio(x.ep, T.tot.ep);
    T.ePp = ratio(x.ppP2p, T.tot.ppP2p);
    T.eZero = c.zero3 ? ratio(x.dp, T.tot.dp) : 0.0;

    // Each kind's demand on the links: its busiest links' seconds over its time, over every
    // collective it is made of (as many of each as the step runs).
    std::array<double, kCommSlots> perStep{};
    for (int i = 0; i < c.requests; ++i) {
        const CommRequest &r = c.request[static_cast<std::size_t>(i)];
        perStep[static_cast<std::size_t>(r.slot)] = r.perStep;
    }
    const auto of = [&](std::initializer_list<CommSlot> slots) {
        double nv = 0, net = 0, time = 0;
        for (CommSlot slot : slots) {
            const CollectiveCost &k = c.at(slot);
            const double n = perStep[static_cast<std::size_t>(slot)];
            nv += n * k.nvlinkBusyS;
            net += n * k.networkBusyS;
            time += n * k.timeS;
        }
        return LinkDemand{ratio(nv, time), ratio(net, time)};
    };
    // ZeRO-3: one layer's dense and expert collectives over the layer's priced seconds.
    // ZeRO-3: one layer's collectives over the layer's priced seconds (under hybrid sharding
    // a layer's reduction is its reduce-scatters, then its shard's all-reduce across the
    // replicas).
    const auto ofLayer = [&](std::initializer_list<CommSlot> slots, double perLayerS) {
        double nv = 0, net = 0;
        for (CommSlot slot : slots) {
            nv += c.at(slot).nvlinkBusyS;
            net += c.at(slot).networkBusyS;
        }
        return LinkDemand{ratio(c.zeroUnits * nv, perLayerS), ratio(c.zeroUnits * net, perLayerS)};
    };
    m_demand = {};
    const auto set = [&](StepActivity a, LinkDemand d) {
        m_demand[static_cast<std::size_t>(a)] = d;
    };
    set(StepActivity::Tp, of({CommSlot::TpAg, CommSlot::TpRs, CommSlot::TpAr}));
    set(StepActivity::Cp, of({CommSlot::CpRing, CommSlot::CpAg}));
    set(StepActivity::Ep, of({CommSlot::EpA2a}));
    set(StepActivity::PpSend, of({CommSlot::PpP2p, CommSlot::PpGather}));
    set(StepActivity::DpGrads,
        of({CommSlot::DpRs, CommSlot::DpAr, CommSlot::EdpRs, CommSlot::EdpAr}));
    set(StepActivity::DpParams, of({CommSlot::DpAg, CommSlot::EdpAg}));
    if (c.zero3) {
        set(StepActivity::ZeroGather, ofLayer({CommSlot::DpAg, CommSlot::EdpAg}, T.gatherPerLayer));
        set(StepActivity::ZeroReduce,
            ofLayer({CommSlot::DpRs, CommSlot::EdpRs, CommSlot::DpAr}, T.reducePerLayer));
    }
}

bool StepScheduler::run(const StepSetting &s,
                        const StepComm &c,
                        const StepTimes &times,
                        StepSchedule &out,
                        bool keepPhases,
                        bool sharing,
                        double giveUpAbove)
{
    m_sharing = sharing;
    m_keep = keepPhases;
    setTerms(s, c, times);
    out.stages = s.pp;
    out.ops = m_terms.ops;
    out.perOp = m_terms.perOp;
    out.phases.clear();
    out.segments.clear();
    // Every stage, the one that ends last making the step.
    double last = -std::numeric_limits<double>::infinity();
    std::array<double, 8> lastGrown{};
    m_stageEnds.assign(static_cast<std::size_t>(s.pp), 0.0);
    for (int stage = 0; stage < s.pp; ++stage) {
        plan(stage);
        std::array<double, 8> grown{};
        const double end = simulate(grown);
        m_stageEnds[static_cast<std::size_t>(stage)] = end;
        if (!keepPhases && end > giveUpAbove) {
            out.stepS = end;
            return false;
        }
        if (end > last) {
            last = end;
            lastGrown = grown;
        }
        if (keepPhases)
            keep(stage, out);
    }
    out.stepS = last;
    out.exposed = m_terms.x;
    out.sharedLinksS = 0;
    for (int i = 0; i < 8; ++i) {
        part(out.exposed, i) += lastGrown[static_cast<std::size_t>(i)];
        out.sharedLinksS += lastGrown[static_cast<std::size_t>(i)];
    }
    if (!keepPhases)
        return true;
    for (int stage = 0; stage < s.pp; ++stage) {
        const double end = m_stageEnds[static_cast<std::size_t>(stage)];
        if (end >= last)
            continue;
        ScheduledPhase p;
        p.activity = StepActivity::Idle;
        p.exposed = true;
        p.stage = stage;
        p.start = end;
        p.end = last;
        out.phases.push_back(p);
    }
    return true;
}

void StepScheduler::plan(int stage)
{
    const Terms &T = m_terms;
    m_exposed.clear();
    m_comm.clear();
    for (auto &s : m_streams)
        s.clear();
    const StepBreakdown &x = T.x;
    const int pp = T.pp, ops = T.ops;
    // The bubble: a later stage waits longer for its first input and ends its backwards sooner.
    const double before = pp > 1 ? double(stage) / (pp - 1) : 0.0;
    const double lead = x.ppBubble * before / 3.0;
    const double tail = x.ppBubble * before * 2.0 / 3.0;
    const double middle = x.ppBubble - lead - tail;
    m_lead = lead;
    double planned = 0; // where the next exposed phase starts, every collective alone
    std::vector<double> &starts = m_starts;
    starts.clear();
    const auto exposed = [&](StepActivity a, int op, double len) {
        Exposed e;
        e.activity = a;
        e.op = op;
        e.base = std::max(0.0, len);
        m_exposed.push_back(e);
        starts.push_back(planned);
        planned += e.base;
        return static_cast<int>(m_exposed.size()) - 1;
    };
    const auto comm = [&](const Planned &p) {
        if (p.work <= 0)
            return;
        m_streams[static_cast<std::size_t>(p.stream)].push_back(static_cast<int>(m_comm.size()));
        Comm c;
        c.plan = p;
        c.plan.offset = std::max(0.0, p.offset);
        m_comm.push_back(c);
    };

    exposed(StepActivity::Fill, -1, lead);
    // With DP overlap the step's parameter gathers run ahead of the first forwards.
    if (!T.zero3 && T.overlapDp)
        comm({.activity = StepActivity::DpParams,
              .forward = true,
              .stream = kParams,
              .work = T.dpParamS,
              .share = 1.0,
              .waits = Waits::Gather,
              .part = kPartDp});

    // 1F1B order: warm-up forwards, then one forward one backward, then the backwards.
    const int warm = std::min(ops, pp - 1 - stage);
    const double share = 1.0 / ops;
    int f = 0, b = 0;
    for (int j = 0; j < 2 * ops; ++j) {
        if (j == warm)
            exposed(StepActivity::Bubble, -1, middle);
        const bool fwd = j < warm || (j < 2 * ops - warm && (j - warm) % 2 == 0);
        const int op = fwd ? f++ : b++;
        const double len = fwd ? T.fwdLen : T.bwdLen;
        const int mb = exposed(fwd ? StepActivity::Forward : StepActivity::Backward, op, len);
        // TP, CP and EP one after another at the micro-batch's start (the layers issue them in
        // order); each stretched by sharing, its micro-batch waits for the exposed share.
        const Planned layer{.forward = fwd, .op = op, .stream = kLayer, .anchor = mb};
        const struct
        {
            StepActivity activity;
            double total, forwardShare, exposure;
            int part;
        } layerComms[] = {{StepActivity::Tp, T.tot.tp, T.tpFwd, T.eTp, kPartTp},
                          {StepActivity::Cp, T.tot.cp, T.cpFwd, T.eCp, kPartCp},
                          {StepActivity::Ep, T.tot.ep, T.epFwd, T.eEp, kPartEp}};
        for (const auto &lc : layerComms) {
            const double part = fwd ? lc.forwardShare : 1 - lc.forwardShare;
            Planned p = layer;
            p.activity = lc.activity;
            p.work = lc.total * part / ops;
            p.share = share * part;
            p.exposure = lc.exposure;
            p.part = lc.part;
            comm(p);
        }
        if (T.zero3) {
            // Each micro-batch gathers every layer's parameters once forward and `gathers`
            // times backward (the pattern's bytes split the same way), and reduce-scatters
            // every layer's gradients backward (FSDP: a stream each).
            const double g = fwd ? 1.0 : T.gathers;
            comm({.activity = StepActivity::ZeroGather,
                  .forward = fwd,
                  .op = op,
                  .stream = kParams,
                  .anchor = mb,
                  .work = T.layersPerOp * T.gatherPerLayer * g,
                  .share = share * g / (1.0 + T.gathers),
                  .exposure = T.eZero,
                  .part = kPartDp});
            // The reduce-scatters follow the backward layer by layer: the first after one
            // layer's gradients, each no sooner than its own layer's, the last after the
            // backward. As one phase of `work` seconds: from one layer in, or late enough that
            // the last layer's still runs after the backward ends, whichever is later.
            const double reduce = T.layersPerOp * T.reducePerLayer;
            const double layerLen = T.layersPerOp > 0 ? len / T.layersPerOp : len;
            if (!fwd)
                comm({.activity = StepActivity::ZeroReduce,
                      .op = op,
                      .stream = kGrads,
                      .anchor = mb,
                      .offset = std::max(layerLen, len + T.reducePerLayer - reduce),
                      .work = T.layersPerOp * T.reducePerLayer,
                      .share = share,
                      .exposure = T.eZero,
                      .part = kPartDp});
        }
        // The sends at the micro-batch's end (the stage's part of the pipeline's bytes: each
        // of its groups sends once forward and once backward).
        if (pp > 1)
            comm({.activity = StepActivity::PpSend,
                  .forward = fwd,
                  .op = op,
                  .stream = kPipeline,
                  .anchor = mb,
                  .offset = len - T.p2p,
                  .work = T.p2p,
                  .share = share / 2.0,
                  .exposure = T.ePp,
                  .part = kPartPpP2p});
    }
    exposed(StepActivity::Drain, -1, tail);
    const int wait = exposed(StepActivity::DpWait, -1, T.dpWait);
    if (!T.zero3 && T.overlapDp) {
        // The gradients reduce as the backward makes them, on the DP stream, back to back up to
        // where the exposed part of the reduction ends (composeStep(): the buckets the last
        // backwards fill; ZeRO-2: each micro-batch group's reduction, the first after the first
        // forward).
        const double release = starts[static_cast<std::size_t>(wait)] + T.gradExposed - T.dpGradS;
        int anchor = 0;
        for (int e = 0; e <= wait; ++e)
            if (starts[static_cast<std::size_t>(e)] <= release)
                anchor = e;
        const int pieces = T.zero2 ? ops : 1;
        for (int i = 0; i < pieces; ++i)
            comm({.activity = StepActivity::DpGrads,
                  .op = T.zero2 ? i : -1,
                  .stream = kGrads,
                  .anchor = anchor,
                  .offset = release - starts[static_cast<std::size_t>(anchor)],
                  .work = T.dpGradS / pieces,
                  .share = 1.0 / pieces,
                  .waits = Waits::Barrier,
                  .part = kPartDp});
    } else if (!T.zero3) {
        // Without overlap the reduction, then the gathers, after the backward.
        comm({.activity = StepActivity::DpGrads,
              .stream = kGrads,
              .anchor = wait,
              .work = T.dpGradS,
              .share = 1.0,
              .waits = Waits::Barrier,
              .part = kPartDp});
        comm({.activity = StepActivity::DpParams,
              .stream = kGrads,
              .anchor = wait,
              .work = T.dpParamS,
              .share = 1.0,
              .waits = Waits::Barrier,
              .part = kPartDp});
    }
    exposed(StepActivity::Optimizer, -1, x.optimizer);
    markFreeStreams();
}

void StepScheduler::markFreeStreams()
{
    // Each class's demand were every kind of the plan to run at once.
    std::array<bool, 16> present{};
    for (const Comm &c : m_comm)
        present[static_cast<std::size_t>(c.plan.activity)] = true;
    LinkDemand all;
    for (std::size_t a = 0; a < present.size(); ++a) {
        if (!present[a])
            continue;
        all.nvlink += m_demand[a].nvlink;
        all.network += m_demand[a].network;
    }
    const bool nvlinkFree = !m_sharing || all.nvlink <= 1 + 1e-9;
    const bool networkFree = !m_sharing || all.network <= 1 + 1e-9;
    for (std::size_t s = 0; s < m_streams.size(); ++s) {
        bool free = !m_streams[s].empty();
        int anchor = -1;
        double end = 0; // the last collective's end after its anchor's start
        for (int i : m_streams[s]) {
            const Planned &p = m_comm[static_cast<std::size_t>(i)].plan;
            const LinkDemand &d = m_demand[static_cast<std::size_t>(p.activity)];
            if (p.waits != Waits::Owner || (d.nvlink > 0 && !nvlinkFree)
                || (d.network > 0 && !networkFree) || p.anchor < anchor) {
                free = false;
                break;
            }
            if (p.anchor != anchor) {
                anchor = p.anchor;
                end = 0;
            }
            end = std::max(end, p.offset) + p.work;
            if (!(end <= m_exposed[static_cast<std::size_t>(anchor)].base)) {
                free = false;
                break;
            }
        }
        m_free[s] = free;
    }
}

} // namespace railyard::engine
