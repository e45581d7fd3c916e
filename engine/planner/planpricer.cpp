// Pricing plans fast (PlanPricer, planner.h): the layers, patterns and step terms each candidate
// shares with others are built once and kept; a candidate is priced alone, then with the links
// it shares (stepschedule.h). What a plan is and how it applies to a layout: planner.cpp.
#include "planner/planner.h"

#include "base/inputerror.h"
#include "base/units.h"
#include "layout/softwarestack.h"
#include "layout/transformer.h"
#include "planner/plannerpatterns.h"
#include "step/compute.h"
#include "step/fidelity.h"
#include "step/layerset.h"
#include "step/memory.h"
#include "step/offload.h"
#include "step/stepcost.h"
#include "step/stepschedule.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <unordered_map>

namespace railyard::engine {

namespace {

// With pipeline stages inside replicas (tp-pp-dp, CP 1), rank = tp + TP x (pp + PP x dp): a
// group's size and rank stride (pipelineInnerValid() says when every group has one). Expert
// groups take a stage's TP x DP ranks TP fastest (EP, then its expert-data-parallel groups).
void pipelineInnerGroups(
        CommGroups groups, int tp, int pp, int dp, int ep, int shard, int &n, int &stride)
{
    switch (groups) {
    case CommGroups::Tp:
        n = tp;
        stride = 1;
        break;
    case CommGroups::Cp:
        n = 1;
        stride = tp;
        break;
    case CommGroups::Pp:
        n = pp;
        stride = tp;
        break;
    case CommGroups::Dp:
        n = dp;
        stride = tp * pp;
        break;
    case CommGroups::Ep: // EP divides TP, or TP is 1
        n = ep;
        stride = tp == 1 ? pp : 1;
        break;
    case CommGroups::Edp: // TP divides EP
        n = tp * dp / ep;
        stride = pp * ep;
        break;
    case CommGroups::DpShard:
        n = shard;
        stride = tp * pp;
        break;
    case CommGroups::DpReplica:
        n = dp / shard;
        stride = tp * pp * shard;
        break;
    }
}

// priceAlone()'s step is the exposed parts' sum less this share: below the schedule's step
// whatever order each adds its terms in (a few hundred terms: ~1e-14 apart at most).
constexpr double kAloneMargin = 1e-12;
constexpr double kInf = std::numeric_limits<double>::infinity();

std::uint64_t layerKey(int tp, int cp, int ep, int mb, Recompute r)
{
    return std::uint64_t(tp) | std::uint64_t(cp) << 18 | std::uint64_t(ep) << 36
           | std::uint64_t(mb) << 46 | std::uint64_t(static_cast<int>(r)) << 62;
}

} // namespace

struct PlanPricer::Impl
{
    Impl(const Layout &l, const Topology &t)
        : layout(l)
        , topology(t)
        , patterns(t)
        , cm(t.gpuSpec(), l.training.precision)
    {}

    const Layout &layout;
    const Topology &topology;
    std::string error;
    ModelDims m;
    const StackProfile *stack = nullptr;
    TrainingConfig t; // the layout's, varied in place
    CollectivePatterns patterns;
    ComputeModel cm;
    StepScheduler scheduler; // the collectives that run at once share the links
    StepSchedule schedule;
    // The configuration last priced: its step with every collective alone (for shareLinks()).
    PlanChoice lastChoice;
    StepSetting lastSetting;
    StepTimes lastTimes;
    double hbm = 0, gpuHourPrice = 0, flopsPerStep = 0, tokensPerStep = 0;
    int gpus = 0;

    using Layers = LayerSet;
    std::unordered_map<std::uint64_t, Layers> layerCache;
    std::uint64_t lastLayerKey = ~0ull;
    const Layers *lastLayers = nullptr;

    int runsPp = -1, nRuns = 0;
    std::array<StageRun, 16> runs{};
    std::vector<StageRun> allRuns; // when 16 runs do not hold the stages

    // The step time's uncertainty band per regime (MoE with EP, ZeRO-3 or FSDP, CP): the
    // evaluation's, from the validation runs.
    struct Band
    {
        double fraction = 0;
        int basis = -1;
    };
    std::array<Band, 8> bands{};
    std::array<bool, 8> haveBand{};
    std::vector<std::string> bandBases;

    const Band &band(const PlanChoice &c)
    {
        const bool moe = m.isMoe() && c.ep > 1;
        const bool zero3 = c.sharding == Sharding::Zero3 || c.sharding == Sharding::Fsdp;
        const std::size_t k = (moe ? 1 : 0) | (zero3 ? 2 : 0) | (c.cp > 1 ? 4 : 0);
        if (!haveBand[k]) {
            UncertaintyBand u = uncertaintyBand(trainingRegime(
                    topology.gpuSpec(), t.precision, gpus, moe, zero3, c.cp > 1, t.stack));
            // The plans are priced with the layout's stack; with none named, evaluating a plan
            // adds the range of the stacks it may be running (step/stackrange.h).
            if (t.stack.empty())
                u.basis += "; no software stack named: evaluating the plan widens the band to "
                           "the stacks it may be running";
            auto it = std::find(bandBases.begin(), bandBases.end(), u.basis);
            if (it == bandBases.end())
                it = bandBases.insert(it, u.basis);
            bands[k] = {u.fraction, int(it - bandBases.begin())};
            haveBand[k] = true;
        }
        return bands[k];
    }

    // Per request slot: the last pattern and size priced, and its cost.
    struct SlotMemo
    {
        CollectiveOp op = CollectiveOp::AllReduce;
        int n = -1, stride = -1, pattern = -1;
        double bytes = -1;
        CollectiveCost cost;
    };
    std::array<SlotMemo, kCommSlots> memo{};
    StepComm comm;

    const StageRun *stageRunsFor(int pp, int &count)
    {
        if (pp != runsPp) {
            runsPp = pp;
            nRuns = stageRuns(m, pp, runs);
            if (nRuns == 0) {
                allRuns.clear();
                forEachStage(m, pp, [&](int s, int nd, int nm) {
                    allRuns.push_back({s, 1, nd, nm, 1.0});
                });
            }
        }
        count = nRuns > 0 ? nRuns : static_cast<int>(allRuns.size());
        return nRuns > 0 ? runs.data() : allRuns.data();
    }

    const Layers &layers(const PlanChoice &c, bool sp)
    {
        const std::uint64_t key = layerKey(c.tp, c.cp, c.ep, c.microBatch, c.recompute);
        if (key == lastLayerKey)
            return *lastLayers;
        auto it = layerCache.find(key);
        if (it == layerCache.end()) {
            ShardCut cut;
            cut.tp = c.tp;
            cut.cp = c.cp;
            cut.ep = c.ep;
            cut.sequenceParallel = sp;
            cut.microBatch = c.microBatch;
            cut.recompute = c.recompute;
            const LayerSet l = priceLayers(m, t, *stack, topology.gpuSpec(), cm, cut);
            it = layerCache.emplace(key, l).first;
        }
        lastLayerKey = key;
        lastLayers = &it->second;
        return it->second;
    }

    PlanOrder order = PlanOrder::Megatron; // the configuration being priced

    CollectiveCost priceRequest(const CommRequest &r, const StepSetting &s)
    {
        int n = 1, stride = 1;
        const int shard = zeroShardRanks(s.training->optimizer, s.dp * s.cp);
        if (order == PlanOrder::PipelineInner)
            pipelineInnerGroups(r.groups, s.tp, s.pp, s.dp, s.ep, shard, n, stride);
        else
            switch (r.groups) {
            case CommGroups::Tp: n = s.tp; break;
            case CommGroups::Cp:
                n = s.cp;
                stride = s.tp;
                break;
            case CommGroups::Ep:
                n = s.ep;
                stride = s.etp;
                break;
            case CommGroups::Pp:
                n = s.pp;
                stride = s.tp * s.cp * s.dp;
                break;
            case CommGroups::Dp:
                n = s.dp * s.cp;
                stride = s.tp;
                break;
            case CommGroups::Edp:
                n = s.tp * s.cp * s.dp / (s.ep * s.etp);
                stride = s.ep * s.etp;
                break;
            case CommGroups::DpShard:
                n = shard;
                stride = s.tp;
                break;
            case CommGroups::DpReplica:
                n = s.dp * s.cp / shard;
                stride = s.tp * shard;
                break;
            }
        SlotMemo &mm = memo[static_cast<std::size_t>(r.slot)];
        if (mm.n != n || mm.stride != stride || mm.op != r.op) {
            mm.n = n;
            mm.stride = stride;
            mm.op = r.op;
            mm.pattern = patterns.find(r.op, n, stride, r.deepEp ? &m : nullptr);
            mm.bytes = -1;
        }
        if (mm.bytes != r.bytes) {
            mm.bytes = r.bytes;
            mm.cost = patterns.price(mm.pattern, r.bytes);
        }
        return mm.cost;
    }

    // The step setting and memory shape of `c`, and its most loaded stage's memory into `out`.
    void sizeUp(const PlanChoice &c, StepSetting &s, PlanPrice &out)
    {
        order = c.order;
        s.model = &m;
        s.training = &t;
        s.stack = stack;
        s.tp = c.tp;
        s.cp = c.cp;
        s.pp = c.pp;
        s.vp = c.vp;
        s.dp = c.dp;
        s.ep = c.ep;
        s.etp = 1;
        s.sp = c.tp > 1;
        s.fp8Weights = fp8ParamGathers(t, topology.gpuSpec());
        s.micro = std::max(1, t.globalBatch / std::max(1, c.microBatch * c.dp));
        out.microBatches = s.micro;
        t.microBatch = c.microBatch;
        t.recompute = c.recompute;
        t.recomputeLayers = 0; // plans recompute every layer or none
        t.offloadLayers = c.offloadLayers;
        setSharding(t.optimizer, layout.training.optimizer, *stack, c.sharding);
        t.optimizer.shardGroup = plannedShardGroup(layout.training.optimizer, c);
        out.shardGroup = t.optimizer.shardGroup;

        // Memory first: most configurations that fail, fail here.
        MemoryShape shape;
        shape.tp = c.tp;
        shape.cp = c.cp;
        shape.pp = c.pp;
        shape.vp = c.vp;
        shape.dp = c.dp;
        shape.ep = c.ep;
        shape.etp = 1;
        shape.sequenceParallel = s.sp;
        shape.microBatches = s.micro;
        setStackMemory(shape, *stack, t, topology.gpuSpec());
        // Activation offload where the choice allows it (no PP, no recomputation).
        s.offloadLayers = offloadedLayers(t, c.pp, m.layers);
        shape.offloadLayers = s.offloadLayers;
        const LayerActivations act = layerActivations(m, t, shape);
        s.offloadDenseBytes = act.dense;
        s.offloadMoeBytes = act.moe;
        s.hostD2hBytesPerS = topology.gpuSpec().hostCopyD2hGBs * 1e9;
        s.hostH2dBytesPerS = topology.gpuSpec().hostCopyH2dGBs * 1e9;
        int nRunsHere = 0;
        const StageRun *stageRunsHere = stageRunsFor(c.pp, nRunsHere);
        for (int i = 0; i < nRunsHere; ++i) {
            // A run's first stage holds the most micro-batches in flight.
            const StageRun &run = stageRunsHere[i];
            const MemoryBreakdown mb = stageMemoryAt(m, t, shape, act, run.first, run.dense, run.moe);
            if (mb.totalGiB() > out.memoryGiB) {
                out.memoryGiB = mb.totalGiB();
                out.memory = mb;
            }
        }
        out.fits = out.memoryGiB <= hbm;
    }

    // Whether activation offload can apply to `c`'s shape (its offloadLayers aside).
    bool offloadApplies(const PlanChoice &c) const
    {
        return stack->activationOffload && c.pp == 1 && c.recompute == Recompute::None
               && m.layers >= 2;
    }

    int offloadToFit(PlanChoice c)
    {
        if (!offloadApplies(c))
            return 0;
        StepSetting s;
        const auto fitsWith = [&](int k) {
            c.offloadLayers = k;
            PlanPrice out;
            sizeUp(c, s, out);
            return out.fits;
        };
        if (fitsWith(0) || !fitsWith(m.layers - 1)) // keep in step with mostOffload()
            return 0;
        // The GPU holds fewer layers' activations the more are offloaded
        // (offloadResidentLayers), so the fewest that fit are found by bisection.
        int lo = 0, hi = m.layers - 1; // lo does not fit, hi does
        while (hi - lo > 1) {
            const int mid = lo + (hi - lo) / 2;
            (fitsWith(mid) ? hi : lo) = mid;
        }
        return hi;
    }

    PlanPrice price(const PlanChoice &c, bool always, bool share)
    {
        PlanPrice out;
        StepSetting s;
        sizeUp(c, s, out);
        if (!out.fits && !always)
            return out;

        int nRunsHere = 0;
        const StageRun *stageRunsHere = stageRunsFor(c.pp, nRunsHere);
        const Layers &l = layers(c, s.sp);
        requestStepComm(s, stageRunsHere, nRunsHere, comm);
        const CollectiveCost *last = nullptr;
        for (int i = 0; i < comm.requests; ++i) {
            const CommRequest &r = comm.request[static_cast<std::size_t>(i)];
            CollectiveCost &cost = comm.cost[static_cast<std::size_t>(r.slot)];
            cost = r.samePattern && last ? samePatternCost(*last, r.bytes) : priceRequest(r, s);
            last = &cost;
        }
        finishStepComm(s, comm);
        lastSetting = s;
        lastTimes = composeStep(s, stageRunsHere, nRunsHere, l.dense, l.moe, l.out, comm, cm);
        lastChoice = c;
        if (!share) {
            // Every collective alone: no stage ends before its exposed parts add up (the
            // schedule only stretches them), less a rounding margin (the schedule adds them in
            // another order).
            out.exposed = lastTimes.exposed;
            setStep(out, lastTimes.exposed.sum() * (1 - kAloneMargin));
            return out;
        }
        return *shareLinks(out, kInf);
    }

    // The configuration price() last priced (`out`: its price with every collective alone), with
    // the links shared; none once its step is known to be longer than `giveUpAbove`.
    std::optional<PlanPrice> shareLinks(PlanPrice out, double giveUpAbove)
    {
        if (!scheduler.run(lastSetting, comm, lastTimes, schedule, false, true, giveUpAbove))
            return std::nullopt;
        out.exposed = schedule.exposed;
        setStep(out, schedule.stepS);
        return out;
    }

    void setStep(PlanPrice &out, double stepTimeS)
    {
        const PlanChoice &c = lastChoice;
        out.stepTimeS = stepTimeS;
        const StepThroughput rate = stepThroughput(tokensPerStep,
                                                   flopsPerStep,
                                                   out.stepTimeS,
                                                   gpus,
                                                   cm.bf16Peak(),
                                                   gpuHourPrice);
        out.tokensPerS = rate.tokensPerS;
        out.mfu = rate.mfu;
        const Band &b = band(c);
        out.bandFraction = b.fraction;
        out.bandBasis = b.basis;
        out.costPerStep = rate.costPerStep;
        out.costPerMillionTokens = rate.costPerMillionTokens;
        out.tokensPerDollar = rate.tokensPerDollar;
    }
};

PlanPricer::PlanPricer(const Layout &layout, const Topology &topology)
    : d(std::make_unique<Impl>(layout, topology))
{
    d->t = layout.training;
    d->gpus = topology.gpuCount();
    d->hbm = usableHbmGiB(topology.gpuSpec());
    d->gpuHourPrice = layout.cluster.pricePerGpuHour.value_or(topology.gpuSpec().pricePerGpuHour);
    if (!layout.model) {
        d->error = "the layout has no model: add \"model\": {\"preset\": ...} to plan for it";
        return;
    }
    const ResolvedModel r = resolveModel(*layout.model);
    if (!r.error.empty()) {
        d->error = r.error;
        return;
    }
    d->m = r.dims;
    d->stack = findStack(layout.training.stack);
    if (!d->stack) {
        d->error = "training: unknown stack \"" + layout.training.stack
                   + "\" (known: " + stackList() + ")";
        return;
    }
    d->cm.setKernels(kernelChoice(*d->stack,
                                  layout.training.attention,
                                  topology.gpuSpec(),
                                  layout.training.compile));
    d->tokensPerStep = double(layout.training.globalBatch) * layout.training.seqLen;
    d->flopsPerStep = modelFlopsPerStep(d->m, d->tokensPerStep, layout.training.seqLen);
}

PlanPricer::~PlanPricer() = default;

bool PlanPricer::ok() const
{
    return d->error.empty();
}

const std::string &PlanPricer::error() const
{
    return d->error;
}

double PlanPricer::hbmGiB() const
{
    return d->hbm;
}

double PlanPricer::pricePerGpuHour() const
{
    return d->gpuHourPrice;
}

int PlanPricer::gpus() const
{
    return d->gpus;
}

double PlanPricer::patternBuildSeconds() const
{
    return d->patterns.buildSeconds();
}

std::size_t PlanPricer::patterns() const
{
    return d->patterns.size();
}

const std::vector<std::string> &PlanPricer::bandBases() const
{
    return d->bandBases;
}

bool PlanPricer::valid(const PlanChoice &c, std::string *why) const
{
    const ModelDims &m = d->m;
    const TrainingConfig &t = d->layout.training;
    const auto no = [&](std::string reason) {
        if (why)
            *why = std::move(reason);
        return false;
    };
    if (!ok())
        return no(d->error);
    if (c.tp < 1 || c.cp < 1 || c.pp < 1 || c.dp < 1 || c.ep < 1 || c.vp < 1 || c.microBatch < 1)
        return no("sizes must be at least 1");
    if (sizeProduct({c.tp, c.cp, c.pp, c.dp}) != d->gpus)
        return no("TP x CP x PP x DP is not the GPU count");
    if (m.heads % c.tp != 0)
        return no("TP does not divide the attention heads");
    if (m.kvHeads % c.tp != 0 && c.tp % m.kvHeads != 0)
        return no("TP does not divide the key/value heads");
    if (c.cp > 1 && t.seqLen % (2 * c.cp) != 0)
        return no("the sequence length is not a multiple of 2 x CP");
    if (c.pp > m.layers)
        return no("PP is more than the layers");
    if (c.vp > 1 && (c.pp == 1 || m.layers % (c.pp * c.vp) != 0))
        return no("VP needs PP and layers that split evenly into PP x VP");
    if (m.isMoe()) {
        if (m.experts % c.ep != 0)
            return no("EP does not divide the experts");
        if ((c.tp * c.cp * c.dp) % c.ep != 0)
            return no("EP does not divide TP x CP x DP");
    } else if (c.ep != 1) {
        return no("EP without experts");
    }
    if (t.globalBatch % (c.dp * c.microBatch) != 0)
        return no("micro batch x DP does not divide the global batch");
    if (c.order == PlanOrder::PipelineInner && !pipelineInnerApplies(c, m.isMoe()))
        return no("pipeline stages go inside replicas (tp-cp-ep-pp-dp) only with PP and DP above "
                  "1, CP 1 and, with experts, EP dividing TP or TP dividing EP");
    if (c.offloadLayers < 0 || c.offloadLayers >= m.layers)
        return no("activation offload takes from 0 to the layers less one");
    if (c.offloadLayers > 0 && !d->offloadApplies(c))
        return no("activation offload needs a stack that offers it (Transformer Engine's), no "
                  "pipeline parallelism and no recomputation");
    if (c.dp * c.cp == 1 && c.sharding != Sharding::Zero0)
        return no("nothing to shard without data parallelism");
    const Sharding zero3 = d->stack->id == "deepspeed-zero3" ? Sharding::Zero3 : Sharding::Fsdp;
    if ((c.sharding == Sharding::Zero3 || c.sharding == Sharding::Fsdp) && c.sharding != zero3)
        return no(std::string("the stack shards weights with ") + toString(zero3));
    return true;
}

PlanPrice PlanPricer::price(const PlanChoice &choice, bool always)
{
    return d->price(choice, always, true);
}

PlanPrice PlanPricer::priceAlone(const PlanChoice &choice, bool always)
{
    return d->price(choice, always, false);
}

int PlanPricer::offloadToFit(const PlanChoice &choice)
{
    return d->offloadToFit(choice);
}

int PlanPricer::mostOffload(const PlanChoice &choice) const
{
    return d->offloadApplies(choice) ? d->m.layers - 1 : 0;
}

std::optional<PlanPrice> PlanPricer::shareLinks(const PlanPrice &alone, double giveUpAbove)
{
    return d->shareLinks(alone, giveUpAbove);
}

} // namespace railyard::engine
