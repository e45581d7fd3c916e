// One decode step of a serving instance: the weights read from HBM once for the whole batch,
// each request's KV cache read, the GEMMs at the batch's tokens (memory-bound at small batches,
// compute-bound at large), the per-layer TP all-reduces and MoE dispatch and combine as small
// messages, the sends between pipeline stages, kernel launches outside CUDA graphs, and
// speculative decoding's drafts and verification.
#include "serving/forwardcost.h"

#include "layout/servingstack.h"
#include "serving/layercostmemo.h"

#include <algorithm>
#include <cmath>

namespace railyard::engine {

namespace {

// Bytes per hidden value a token takes in the MoE dispatch: FP8 with one FP32 scale per 128
// values (DeepEP's FP8 dispatch) when the model runs below BF16, else BF16; the combine is BF16.
double dispatchBytesPerValue(Precision p)
{
    return p == Precision::Bf16 ? 2.0 : 1.0 + 4.0 / 128.0;
}

// One stage's layers at `pass` (work and the collectives after each layer).
struct StageWork
{
    LayerCost work;
    double tp = 0, ep = 0;
    int collectives = 0;
    PassCollectives counts;
};

StageWork stageWork(const ServingSetup &setup,
                    const ModelDims &m,
                    const ServingPoolShape &p,
                    const PoolComm &comm,
                    const ComputeModel &cm,
                    const PassShape &pass,
                    LayerCostMemo &memo,
                    double dense,
                    double moe,
                    double sliding)
{
    StageWork w;
    const double count = dense + moe;
    if (count <= 0)
        return w;
    const double slidingShare = sliding / count;
    const auto layers = [&](bool isMoe, double n) {
        if (n <= 0)
            return;
        if (slidingShare < 1)
            w.work += memo.get(m, isMoe, false, p, pass, cm, setup.precision, setup.kvPrecision)
                              .scaled(n * (1 - slidingShare));
        if (slidingShare > 0)
            w.work += memo.get(m, isMoe, true, p, pass, cm, setup.precision, setup.kvPrecision)
                              .scaled(n * slidingShare);
    };
    layers(false, dense);
    layers(true, moe);
    // Collectives: attention output all-reduce on every layer; the MLP's on dense layers; MoE
    // layers reduce over TP (experts split inside the TP group, every rank holding every token)
    // or, with attention data-parallel, dispatch and combine over the EP group.
    const double h = m.hidden;
    const double arBytes = pass.tokens * h * 2.0;
    PassCollectives &c = w.counts;
    if (comm.attentionAr.valid()) {
        c.attentionAr += count + dense;
        c.attentionArBytes = arBytes;
    }
    if (moe > 0) {
        if (p.attentionDp == 1) {
            if (comm.attentionAr.valid())
                c.attentionAr += moe;
        } else if (comm.dispatch.valid()) {
            const double copies = pass.tokens / p.attentionTp() * m.topK * h;
            c.dispatch += moe;
            c.dispatchBytes = copies * dispatchBytesPerValue(setup.precision);
            c.combineBytes = copies * 2.0;
        } else if (comm.tpAr.valid()) {
            c.tpAr += moe;
            c.tpArBytes = pass.tokens * p.attentionDp * h * 2.0;
        }
    }
    w.tp = c.attentionAr * comm.attentionAr.timeS(c.attentionArBytes)
           + c.tpAr * comm.tpAr.timeS(c.tpArBytes);
    w.ep = c.dispatch
           * (comm.dispatch.timeS(c.dispatchBytes) + comm.dispatch.timeS(c.combineBytes));
    w.collectives = static_cast<int>(std::lround(c.attentionAr + c.tpAr + 2 * c.dispatch));
    return w;
}

void addCounts(PassCollectives &to, const PassCollectives &from)
{
    to.attentionAr += from.attentionAr;
    to.attentionArBytes = std::max(to.attentionArBytes, from.attentionArBytes);
    to.tpAr += from.tpAr;
    to.tpArBytes = std::max(to.tpArBytes, from.tpArBytes);
    to.dispatch += from.dispatch;
    to.dispatchBytes = std::max(to.dispatchBytes, from.dispatchBytes);
    to.combineBytes = std::max(to.combineBytes, from.combineBytes);
}

void addWork(PassCost &cost, const StageWork &w)
{
    cost.compute += w.work.compute;
    cost.weightsRead += w.work.weightsRead;
    cost.attention += w.work.attention;
    cost.tp += w.tp;
    cost.ep += w.ep;
    cost.weightBytes += w.work.weightBytes;
    cost.kvBytes += w.work.kvBytes;
    addCounts(cost.collectives, w.counts);
}

// Host launch time the GPU waits for when the pass runs outside a CUDA graph.
double eagerWait(const StageWork &w, double gpuS)
{
    return std::max(0.0, (w.work.kernels + w.collectives) * kEagerLaunchS - gpuS);
}

} // namespace

PoolComm priceComm(const Topology &t,
                   const PoolGroups &g,
                   const ServingSetup &setup,
                   const ServingPoolShape &p,
                   LinkTraffic &scratch)
{
    PoolComm c;
    const ServingStackProfile &stack = *setup.stack;
    const bool graphs = setup.cudaGraphs;
    if (p.attentionTp() > 1)
        c.attentionAr = priceCollective(t,
                                        g.attention,
                                        CollectiveOp::AllReduce,
                                        stack,
                                        graphs,
                                        false,
                                        scratch);
    if (setup.model.isMoe() && p.attentionDp > 1) {
        if (p.ep > 1)
            c.dispatch = priceCollective(t,
                                         g.ep,
                                         CollectiveOp::AllToAll,
                                         stack,
                                         graphs,
                                         setup.dispatcher == MoeDispatcher::DeepEP,
                                         scratch);
        else if (p.tp > 1)
            c.tpAr = priceCollective(t, g.tp, CollectiveOp::AllReduce, stack, graphs, false, scratch);
    }
    if (p.pp > 1)
        c.pipeline = priceCollective(t,
                                     g.pipeline,
                                     CollectiveOp::SendRecv,
                                     stack,
                                     graphs,
                                     false,
                                     scratch);
    return c;
}

double acceptedTokensPerStep(const ServingConfig &config)
{
    if (!config.speculative)
        return 1.0;
    const SpeculativeConfig &s = *config.speculative;
    if (s.acceptance)
        return *s.acceptance;
    const double p = s.method == SpeculativeMethod::Mtp ? 0.85 : 0.66;
    return (1.0 - std::pow(p, s.draftTokens + 1)) / (1.0 - p);
}

PassCost decodeStep(const ServingSetup &setup,
                    const ServingPoolShape &p,
                    const PoolComm &comm,
                    const ComputeModel &cm,
                    double batch,
                    double context,
                    std::span<const double> stageSlowdown)
{
    const ModelDims &m = setup.model;
    const int draft = setup.config.speculative ? setup.config.speculative->draftTokens : 0;
    // Pipeline stages work on batch / PP requests each (one micro-batch per stage in flight).
    const double micro = std::max(1.0, batch / p.pp);
    const double perRank = micro / p.attentionDp; // requests per attention-DP rank group
    PassShape pass;
    pass.decode = true;
    pass.requests = perRank;
    pass.tokens = perRank * (1 + draft);
    pass.routedCopies = pass.tokens * p.attentionDp * m.topK;
    pass.context = context;
    pass.contextSliding = m.slidingWindow > 0 ? std::min(context, double(m.slidingWindow))
                                              : context;
    // Each GPU replays its own batch's graph: an attention-DP rank its own requests.
    const bool graphs = setup.cudaGraphs && perRank * (1 + draft) <= setup.stack->cudaGraphMaxBatch;
    PassCost cost;
    LayerCostMemo layers;
    for (int stage = 0; stage < p.pp; ++stage) {
        const StageLayers s = stageLayers(m, p.pp, stage);
        StageWork w = stageWork(setup, m, p, comm, cm, pass, layers, s.dense, s.moe, s.sliding);
        if (stage == p.pp - 1) {
            w.work += servingOutputCost(m, p, pass.tokens, cm);
            if (draft > 0) {
                // The drafts: `draft` passes, one token per request each, of the MTP layer
                // (one more layer of the model, its projection and the output layer), the
                // EAGLE head (one dense layer, its fusion of three hidden states and the output
                // layer) or the draft model.
                PassShape one = pass;
                one.tokens = perRank;
                one.routedCopies = perRank * p.attentionDp * m.topK;
                const SpeculativeMethod method = setup.config.speculative->method;
                StageWork d;
                LayerCostMemo draftLayers;
                if (method == SpeculativeMethod::Draft && setup.draftModel) {
                    const ModelDims &dm = *setup.draftModel;
                    d = stageWork(setup,
                                  dm,
                                  p,
                                  comm,
                                  cm,
                                  one,
                                  draftLayers,
                                  dm.denseLayers(),
                                  dm.isMoe() ? dm.moeLayers : 0,
                                  dm.slidingLayers);
                    d.work += servingOutputCost(dm, p, one.tokens, cm);
                } else {
                    const bool moeLayer = method == SpeculativeMethod::Mtp && m.isMoe();
                    d = stageWork(setup,
                                  m,
                                  p,
                                  comm,
                                  cm,
                                  one,
                                  draftLayers,
                                  moeLayer ? 0 : 1,
                                  moeLayer ? 1 : 0,
                                  0);
                    LayerCost fuse;
                    fuse.compute = cm.gemmCost(one.tokens,
                                               m.hidden,
                                               (method == SpeculativeMethod::Mtp ? 2.0 : 3.0)
                                                       * m.hidden,
                                               true,
                                               ComputeModel::Use::Inference)
                                           .totalS;
                    d.work += fuse;
                    d.work += servingOutputCost(m, p, one.tokens, cm);
                }
                const double f = draft;
                d.work = d.work.scaled(f);
                d.tp *= f;
                d.ep *= f;
                d.collectives *= draft;
                d.counts.attentionAr *= f;
                d.counts.tpAr *= f;
                d.counts.dispatch *= f;
                w.work += d.work;
                w.tp += d.tp;
                w.ep += d.ep;
                w.collectives += d.collectives;
                addCounts(w.counts, d.counts);
            }
        }
        if (static_cast<std::size_t>(stage) < stageSlowdown.size())
            w.work = w.work.stretched(stageSlowdown[static_cast<std::size_t>(stage)]);
        addWork(cost, w);
        if (!graphs)
            cost.overhead += eagerWait(w, w.work.total() + w.tp + w.ep);
    }
    if (comm.pipeline.valid()) {
        const double bytes = pass.tokens * m.hidden * 2.0;
        cost.collectives.pipelineSends = p.pp - 1;
        cost.collectives.pipelineBytes = bytes;
        cost.pp = (p.pp - 1) * comm.pipeline.timeS(bytes);
    }
    cost.overhead += setup.stack->stepOverheadS;
    return cost;
}

} // namespace railyard::engine
