#include "step/evaluate.h"

#include "base/inputerror.h"
#include "base/units.h"
#include "step/fidelity.h"
#include "step/stepmodel_p.h"

#include <memory>

namespace railyard::engine {

namespace detail {

StepModel::StepModel(const Layout &l,
                     const Topology &t,
                     EvaluationWorkspace &w,
                     const EvaluateOptions &o)
    : layout(l)
    , topo(t)
    , options(o)
    , workspace(w)
    , traffic(w.traffic())
    , planning(w.planning())
{}

Evaluation StepModel::run()
{
    if (!validate())
        return e;
    buildGroups();
    const TrainingConfig &t = layout.training;
    const GpuSpec &gpu = topo.gpuSpec();
    cm = std::make_unique<ComputeModel>(gpu, t.precision);
    if (t.precision == Precision::Fp8 && gpu.fp8Tflops <= 0)
        warn(Severity::Warning, "no-fp8", gpu.id + " has no FP8 tensor cores; priced in BF16");

    LayerShard shard;
    shard.tp = tp;
    shard.cp = cp;
    shard.ep = ep;
    shard.etp = etp;
    shard.sequenceParallel = sp;
    shard.microBatch = t.microBatch;
    shard.seqLen = t.seqLen;
    shard.recompute = t.recompute;
    shard.attention = t.attention;
    shard.tpOverlap = t.overlap.tp;
    dense = layerTimes(m, false, shard, *cm);
    moe = m.isMoe() ? layerTimes(m, true, shard, *cm) : LayerTimes{};
    out = outputLayerTimes(m, shard, *cm);

    priceCommunication();
    composeStep();
    throughput();
    // The band from the validation runs of this regime.
    const UncertaintyBand band = uncertaintyBand(
            trainingRegime(gpu, t.precision, topo.gpuCount(), m.isMoe() && ep > 1, c.zero3, cp > 1));
    e.stepTimeBand.fraction = band.fraction;
    e.stepTimeBand.lowS = e.stepTimeS * (1 - band.fraction);
    e.stepTimeBand.highS = e.stepTimeS * (1 + band.fraction);
    e.stepTimeBand.basis = band.basis;
    memory();
    warnPlacements();
    if (options.linkLoads)
        fillLinks();
    if (options.timeline)
        buildTimeline();
    e.assumptions.push_back("step time band \u00b1" + formatNumber(100 * band.fraction, 2)
                            + "%: " + band.basis);
    e.assumptions.push_back("balanced MoE routing (every expert gets its share of tokens)");
    if (m.isMoe())
        e.assumptions.push_back("MoE layers: host-side overheads of the token dispatcher (count "
                                "syncs, kernel launches) are not priced; with many small "
                                "micro-batches measured steps have been 20-35% longer");
    e.assumptions.push_back("collectives below ~256 MiB per GPU: NCCL's latency model; measured "
                            "bandwidth there can be up to 30-50% lower");
    e.assumptions.push_back("pipeline stages split layers evenly; the last stage also runs the "
                            "output layer and loss");
    e.ok = true;
    return std::move(e);
}

void StepModel::fillLinks()
{
    std::shared_ptr<LinkLoads> loads = workspace.linkLoads();
    traffic.totals(loads->bytesUp, loads->bytesDown);
    traffic.peaks(loads->peakUtilization);
    const auto &links = topo.links();
    const std::size_t n = links.size();
    loads->utilization.resize(n);
    loads->loaded = 0;
    const double step = e.stepTimeS;
    for (std::size_t i = 0; i < n; ++i) {
        const float busiest = std::max(loads->bytesUp[i], loads->bytesDown[i]);
        if (busiest == 0) {
            loads->utilization[i] = 0;
            continue;
        }
        ++loads->loaded;
        const double rate = links[i].effectiveGbPerS() * 1e9;
        loads->utilization[i] = rate > 0 && step > 0 ? static_cast<float>(busiest / (rate * step))
                                                     : 0.0f;
    }
    e.links = loads;
}

} // namespace detail

Evaluation evaluate(const Layout &layout,
                    const Topology &topology,
                    EvaluationWorkspace &workspace,
                    const EvaluateOptions &options)
{
    try {
        workspace.bind(topology);
        return detail::StepModel(layout, topology, workspace, options).run();
    } catch (const InputError &err) {
        Evaluation e;
        e.error = err.what();
        return e;
    }
}

Evaluation evaluate(const Layout &layout, const Topology &topology, const EvaluateOptions &options)
{
    EvaluationWorkspace workspace;
    return evaluate(layout, topology, workspace, options);
}

} // namespace railyard::engine
