// One request's prefill: the GEMMs and attention over its input tokens in chunks of the
// prefill budget (each chunk attending to itself causally and to the chunks before it, a
// sliding-window layer to at most its window), with the collectives after each layer, the
// chunks pipelined through the stages.
#include "serving/forwardcost.h"

#include "serving/layercostmemo.h"

#include <algorithm>
#include <cmath>

namespace railyard::engine {

namespace {

// Keys attended by the queries at positions [from, from + n), causally: sum of (q + 1).
double causalPairs(double from, double n)
{
    return n * from + n * (n + 1) / 2;
}

// The same with at most `w` keys per query.
double windowPairs(double from, double n, double w)
{
    if (w <= 0)
        return causalPairs(from, n);
    // Queries at q < w attend q + 1 keys, the rest w.
    const double full = std::clamp(w - from, 0.0, n); // queries still inside the window
    return causalPairs(from, full) + (n - full) * w;
}

} // namespace

PassCost prefillRequest(const ServingSetup &setup,
                        const ServingPoolShape &p,
                        const PoolComm &comm,
                        const ComputeModel &cm,
                        double tokens,
                        double concurrent,
                        std::span<const double> stageSlowdown)
{
    const ModelDims &m = setup.model;
    const double budget = std::max(1, setup.config.maxPrefillTokens);
    const int chunks = static_cast<int>(std::ceil(tokens / budget));
    const double h = m.hidden;
    PassCost cost;
    double firstStages = 0, sumMax = 0;
    for (int c = 0; c < chunks; ++c) {
        const double from = c * budget;
        const double n = std::min(budget, tokens - from);
        PassShape pass;
        pass.tokens = n;
        pass.routedCopies = n * m.topK * std::clamp(concurrent, 1.0, double(p.attentionDp));
        pass.keyPairs = causalPairs(from, n);
        pass.keyPairsSliding = windowPairs(from, n, m.slidingWindow);
        pass.prefixTokens = from;
        double slowest = 0, through = 0;
        LayerCostMemo memo;
        for (int stage = 0; stage < p.pp; ++stage) {
            const StageLayers s = stageLayers(m, p.pp, stage);
            LayerCost work;
            const double count = s.count;
            const double slidingShare = count > 0 ? s.sliding / count : 0;
            const auto layers = [&](bool moe, double k) {
                if (k <= 0)
                    return;
                if (slidingShare < 1)
                    work += memo.get(m, moe, false, p, pass, cm, setup.precision, setup.kvPrecision)
                                    .scaled(k * (1 - slidingShare));
                if (slidingShare > 0)
                    work += memo.get(m, moe, true, p, pass, cm, setup.precision, setup.kvPrecision)
                                    .scaled(k * slidingShare);
            };
            layers(false, s.dense);
            layers(true, s.moe);
            // Only the last chunk's last token is sampled.
            if (stage == p.pp - 1 && c == chunks - 1)
                work += servingOutputCost(m, p, 1, cm);
            if (static_cast<std::size_t>(stage) < stageSlowdown.size())
                work = work.stretched(stageSlowdown[static_cast<std::size_t>(stage)]);
            PassCollectives k;
            if (comm.attentionAr.valid()) {
                k.attentionAr = count + s.dense + (p.attentionDp == 1 ? s.moe : 0);
                k.attentionArBytes = n * h * 2.0;
            }
            if (s.moe > 0 && p.attentionDp > 1) {
                if (comm.dispatch.valid()) {
                    const double copies = n / p.attentionTp() * m.topK * h;
                    k.dispatch = s.moe;
                    k.dispatchBytes = copies
                                      * (setup.precision == Precision::Bf16 ? 2.0
                                                                            : 1.0 + 4.0 / 128.0);
                    k.combineBytes = copies * 2.0;
                } else if (comm.tpAr.valid()) {
                    k.tpAr = s.moe;
                    k.tpArBytes = n * std::clamp(concurrent, 1.0, double(p.attentionDp)) * h * 2.0;
                }
            }
            const double tp = k.attentionAr * comm.attentionAr.timeS(k.attentionArBytes)
                              + k.tpAr * comm.tpAr.timeS(k.tpArBytes);
            const double ep = k.dispatch
                              * (comm.dispatch.timeS(k.dispatchBytes)
                                 + comm.dispatch.timeS(k.combineBytes));
            double stageS = work.total() + tp + ep;
            // Prefill runs eagerly in every stack (CUDA graphs capture decode batches); its
            // kernels are long enough to hide their launches except on tiny chunks.
            stageS += std::max(0.0,
                               (work.kernels + k.attentionAr + k.tpAr + 2 * k.dispatch)
                                               * kEagerLaunchS
                                       - stageS);
            cost.compute += work.compute;
            cost.weightsRead += work.weightsRead;
            cost.attention += work.attention;
            cost.tp += tp;
            cost.ep += ep;
            cost.overhead += stageS - (work.total() + tp + ep);
            cost.weightBytes += work.weightBytes;
            cost.kvBytes += work.kvBytes;
            PassCollectives &all = cost.collectives;
            all.attentionAr += k.attentionAr;
            all.attentionArBytes = std::max(all.attentionArBytes, k.attentionArBytes);
            all.tpAr += k.tpAr;
            all.tpArBytes = std::max(all.tpArBytes, k.tpArBytes);
            all.dispatch += k.dispatch;
            all.dispatchBytes = std::max(all.dispatchBytes, k.dispatchBytes);
            all.combineBytes = std::max(all.combineBytes, k.combineBytes);
            slowest = std::max(slowest, stageS);
            through += stageS;
        }
        if (c == 0)
            firstStages = through;
        else
            sumMax += slowest;
        if (comm.pipeline.valid()) {
            const double bytes = n * h * 2.0;
            cost.collectives.pipelineSends += p.pp - 1;
            cost.collectives.pipelineBytes = std::max(cost.collectives.pipelineBytes, bytes);
            cost.pp += (p.pp - 1) * comm.pipeline.timeS(bytes);
        }
    }
    // Chunks pipeline through the stages: the first chunk crosses every stage, each later one
    // adds its slowest stage. The parts above sum every stage of every chunk; scale them to the
    // pipelined time.
    const double summed = cost.compute + cost.weightsRead + cost.attention + cost.tp + cost.ep
                          + cost.overhead;
    const double pipelined = firstStages + sumMax;
    if (summed > 0 && p.pp > 1) {
        const double f = pipelined / summed;
        cost.compute *= f;
        cost.weightsRead *= f;
        cost.attention *= f;
        cost.tp *= f;
        cost.ep *= f;
        cost.overhead *= f;
    }
    return cost;
}

} // namespace railyard::engine
