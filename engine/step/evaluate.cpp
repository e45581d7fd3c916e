#include "step/evaluate.h"

#include "base/inputerror.h"
#include "base/units.h"
#include "step/fidelity.h"
#include "step/layerset.h"
#include "step/reformjob.h"
#include "step/stackrange.h"
#include "step/stepmodel_p.h"

#include <memory>

namespace railyard::engine {

namespace detail {

StepModel::StepModel(const Layout &l,
                     const Topology &t,
                     EvaluationWorkspace &w,
                     const EvaluateOptions &o)
    : m_layout(l)
    , m_topo(t)
    , m_options(o)
    , m_workspace(w)
    , m_traffic(w.traffic())
    , m_planning(w.planning())
{
    // The step totals and peaks are read only for the link loads (fillLinks()).
    m_traffic.keepStepTotals(o.linkLoads);
}

Evaluation StepModel::run()
{
    if (!validate())
        return m_result;
    buildGroups();
    const TrainingConfig &t = m_layout.training;
    const GpuSpec &gpu = m_topo.gpuSpec();
    m_compute = std::make_unique<ComputeModel>(gpu,
                                               t.precision,
                                               kernelChoice(*m_stack, t.attention, gpu, t.compile));
    if (t.precision == Precision::Fp8 && gpu.fp8Tflops <= 0)
        warn(Severity::Warning, "no-fp8", gpu.id + " has no FP8 tensor cores; priced in BF16");
    if (t.optimizer.fp8ParamGather && t.precision != Precision::Fp8)
        warn(Severity::Warning,
             "fp8-param-gather-bf16",
             std::string("training.optimizer.fp8_param_gather needs \"precision\": \"fp8\" (this "
                         "layout trains in ")
                     + toString(t.precision) + "): the parameters are gathered in BF16");
    if (m_stack->pipelineZeroAtMost1 && m_pp > 1 && (t.optimizer.zeroStage >= 2 || t.optimizer.fsdp))
        warn(Severity::Warning,
             "pipeline-zero",
             m_stack->id
                     + " refuses ZeRO-2 and ZeRO-3 with pipeline parallelism (DeepSpeed's "
                       "PipelineEngine: \"ZeRO-2 and ZeRO-3 are incompatible with pipeline "
                       "parallelism\"); priced as if it ran");

    ShardCut cut;
    cut.tp = m_tp;
    cut.cp = m_cp;
    cut.ep = m_ep;
    cut.etp = m_etp;
    cut.sequenceParallel = m_sp;
    cut.microBatch = t.microBatch;
    cut.recompute = t.recompute;
    cut.recomputeShare = t.recompute == Recompute::Full ? fullRecomputeShare(t, m_dims.layers, m_pp)
                                                        : 1.0;
    const LayerSet layers = priceLayers(m_dims, t, *m_stack, gpu, *m_compute, cut);
    m_dense = layers.dense;
    m_moe = layers.moe;
    m_out = layers.out;
    const MoeHostTime &moeHost = layers.moeHost;

    priceCommunication();
    composeStep();
    throughput();
    warnHostBound(moeHost);
    describeOffload();
    // The band from the validation runs of this regime.
    const UncertaintyBand band = uncertaintyBand(trainingRegime(gpu,
                                                                t.precision,
                                                                m_topo.gpuCount(),
                                                                m_dims.isMoe() && m_ep > 1,
                                                                m_comm.zero3,
                                                                m_cp > 1,
                                                                t.stack));
    m_result.stepTimeBand.fraction = band.fraction;
    // The band bounds the tokens/s error: the step is t (1 + e), |e| <= fraction. Past 100% its
    // low side says nothing (no published run was priced that slow), so it stops at zero.
    m_result.stepTimeBand.lowS = m_result.stepTimeS * std::max(0.0, 1 - band.fraction);
    m_result.stepTimeBand.highS = m_result.stepTimeS * (1 + band.fraction);
    m_result.stepTimeBand.basis = band.basis;
    memory();
    warnPlacements();
    warnStragglers();
    if (m_options.linkLoads)
        fillLinks();
    if (m_options.timeline)
        buildTimeline();
    m_result.assumptions.push_back("step time band \u00b1" + formatNumber(100 * band.fraction, 2)
                                   + "%: " + band.basis);
    if (m_result.memory.fp8WeightCopiesGiB > 0) {
        // StackProfile::fp8WeightCache, measured on B200 (Megatron-LM's allocator report).
        const bool transposed = m_topo.gpuSpec().architecture != "blackwell";
        m_result.assumptions.push_back(
                "FP8 weights kept through the step (Transformer Engine caches each layer's "
                "quantized weights across micro-batches): a byte per parameter, "
                + formatNumber(m_result.memory.fp8WeightCopiesGiB, 3) + " GiB per GPU"
                + (transposed ? "; the transposed copy it also keeps on this GPU (FP8 GEMMs "
                                "before Blackwell take only the TN layout) is not counted"
                              : std::string()));
    }
    if (m_dims.isMoe()) {
        const TrainingConfig &t = m_layout.training;
        const double imbalance = t.moeForceBalance ? 1.0 : m_stack->moeDroplessImbalance;
        m_result.assumptions.push_back(
                t.moeForceBalance ? "MoE routing forced to balance: every expert gets its share "
                                    "of tokens"
                : imbalance > 1.0
                        ? "dropless MoE routing: the busiest expert-parallel rank gets "
                                  + formatNumber(imbalance, 3)
                                  + " times its share of the tokens (this stack's measured "
                                    "imbalance), and its experts' GEMMs set the pace"
                        : "dropless MoE routing priced as balanced: every expert gets its share "
                          "of tokens (no imbalance measured for this stack)");
    }
    if (const std::string modules = nonDefaultRecomputeModules(m_layout.training); !modules.empty())
        m_result.assumptions.push_back(
                "selective recomputation reruns " + modules
                + " in the backward pass and keeps none of their activations (Megatron's "
                  "--recompute-modules)");
    if (m_dims.isMoe() && moeHost.priced())
        m_result.assumptions.push_back(
                "MoE layers launched eagerly: the dispatcher waits on the GPU once per layer "
                "forward, then the host launches the experts' GEMMs one by one ("
                + formatSeconds(moeHost.afterWaitS) + " forward, " + formatSeconds(moeHost.backwardS)
                + " backward per layer and micro-batch at this host's measured cost per "
                  "operation); the GPU waits "
                + formatSeconds(m_moe.hostWaitForward + m_moe.hostWaitBackward)
                + " of each layer's " + formatSeconds(m_moe.forward + m_moe.backward));
    else if (m_dims.isMoe())
        m_result.assumptions.push_back(
                "MoE layers: the host's side (the dispatcher's wait, one GEMM launch per "
                "expert) is not priced for this stack and GPU");
    if (m_layout.training.overlap.tp && m_sp && m_tp > 1) {
        std::string tp = "TP overlap: each TP collective moves in TP chunks beside its own GEMM "
                         "(a block's all-gather beside its input projections, its "
                         "reduce-scatter beside its output projection; the first chunk's "
                         "transfer waits)";
        if (!m_stack->tpOverlapBackwardReduceScatter)
            tp += "; the backward's input-gradient reduce-scatters are not overlapped";
        if (m_stack->tpOverlapSeparateReduce)
            tp += "; each forward reduce-scatter then sums the TP ranks' partials in a kernel "
                  "of its own, priced at a third of HBM's peak (PyTorch's torch.sum over them "
                  "measures 23-43%)";
        m_result.assumptions.push_back(tp);
    }
    m_result.assumptions.push_back(
            "collectives below ~256 MiB per GPU: NCCL's latency model and the NIC's "
            "cost per message; measured sweeps are within 6-11% (median by "
            "fabric; 15% on GPUDirect-TCPXO), single sizes up to 30-50% off");
    m_result.assumptions.push_back(
            "pipeline stages split layers evenly; the last stage also runs the "
            "output layer and loss");
    if (m_dims.dropout && m_dims.layers > 0) {
        const double forward = m_compute->attentionDropoutShare(false);
        const double backward = m_compute->attentionDropoutShare(true);
        m_result.assumptions.push_back(
                forward < 1.0
                        ? "attention dropout (the model trains with dropout): the attention kernel "
                          "at " + formatNumber(100 * forward, 3)
                                  + "% of its forward rate and " + formatNumber(100 * backward, 3)
                                  + "% of its backward (measured on GB200)"
                        : "attention dropout (the model trains with dropout): not priced on this "
                          "GPU (its cost was measured on Blackwell only)");
    }
    if (m_overlapLossS > 0)
        m_result.assumptions.push_back(
                "data-parallel collectives hidden behind compute slow it: this GPU's GEMMs are "
                "persistent kernels (one CTA per SM), so beside NCCL's kernels each runs a "
                "second wave and takes twice as long (measured on H100 under FSDP); here +"
                + formatSeconds(m_overlapLossS) + " of the step, in its DP part");
    if (m_options.shareLinks) {
        // Below a microsecond the sharing's cost is the schedule's rounding, not a cost.
        const double sharedS = m_schedule.sharedLinksS;
        m_result.assumptions.push_back(
                "collectives that run at once on one pipeline stage share its links max-min "
                "fairly ("
                + (sharedS >= 1e-6 ? "here +" + formatNumber(1e3 * sharedS) + " ms of step"
                                   : std::string("here it adds nothing to the step"))
                + "); two stages' collectives that meet on one link are priced as if each had "
                  "it alone");
    }
    m_result.ok = true;
    return std::move(m_result);
}

// The MoE layers' GPUs waiting on the host (step/hostlaunch.h): said when it is a tenth of the
// step or more, with what hides it.
void StepModel::warnHostBound(const MoeHostTime &host)
{
    int moeLayers = 0;
    for (const StageRun &r : m_runs)
        moeLayers = std::max(moeLayers, r.moe);
    const double waitS = double(m_micro) * moeLayers
                         * (m_moe.hostWaitForward + m_moe.hostWaitBackward);
    if (moeLayers == 0 || waitS < 0.1 * m_result.stepTimeS)
        return;
    const int experts = static_cast<int>(host.localExperts);
    warn(Severity::Warning,
         "moe-host-bound",
         "MoE layers wait on the host: the GPUs idle " + formatSeconds(waitS) + " of the "
                 + formatSeconds(m_result.stepTimeS) + " step ("
                 + formatNumber(100 * waitS / m_result.stepTimeS, 2)
                 + "%) while the CPU launches each layer's work after the dispatcher's wait, "
                   "GEMMs one expert at a time ("
                 + std::to_string(experts) + " experts per GPU; "
                 + formatSeconds(host.afterWaitS + host.backwardS)
                 + " of launches per layer and micro-batch). Larger micro-batches, fewer "
                   "experts per GPU (a larger EP) or CUDA graphs over the MoE layers (which "
                   "need a static expert capacity) hide it",
         {},
         waitS);
}

// Bytes one GPU's activation offload moves each way per step: its micro-batches' offloaded
// layers (the first ones, dense before MoE).
double StepModel::offloadBytesPerStep() const
{
    const int k = m_setting.offloadLayers;
    if (k <= 0)
        return 0;
    const int dense = std::min(k, m_dims.isMoe() ? m_dims.denseLayers() : m_dims.layers);
    return double(m_micro)
           * (dense * m_setting.offloadDenseBytes + (k - dense) * m_setting.offloadMoeBytes);
}

// Activation offload (step/offload.h): what moves over the host link, and the step's wait for
// it, said as an assumption; a warning where the wait is a twentieth of the step or more.
void StepModel::describeOffload()
{
    const int k = m_setting.offloadLayers;
    if (k <= 0)
        return;
    const GpuSpec &gpu = m_topo.gpuSpec();
    const double layerBytes = m_dims.isMoe() ? std::max(m_setting.offloadDenseBytes,
                                                        m_setting.offloadMoeBytes)
                                             : m_setting.offloadDenseBytes;
    const double perStep = offloadBytesPerStep();
    const double waitS = double(m_micro) * m_offloadStallS;
    const int hostLink = m_topo.gpuCount() > 0 ? m_topo.gpuHostLink(0) : -1;
    const bool c2c = hostLink >= 0
                     && m_topo.links()[static_cast<std::size_t>(hostLink)].kind == LinkKind::C2C;
    const std::string link = c2c ? "NVLink-C2C" : "PCIe";
    m_result.assumptions.push_back(
            "activations of the first " + std::to_string(k) + " of " + std::to_string(m_dims.layers)
            + " layers offloaded to host memory (Transformer Engine's CPU offload): "
            + formatNumber(perStep / 1e9, 3) + " GB a step each way over " + link + " at "
            + formatNumber(gpu.hostCopyD2hGBs, 3) + " / " + formatNumber(gpu.hostCopyH2dGBs, 3)
            + " GB/s, each layer's copy behind the compute of the layers TE spreads it over; the "
              "step waits "
            + formatSeconds(waitS) + " for the copies");
    if (waitS < 0.05 * m_result.stepTimeS)
        return;
    warn(Severity::Warning,
         "offload-bound",
         "Activation offload outruns the host link: the compute waits " + formatSeconds(waitS)
                 + " of the " + formatSeconds(m_result.stepTimeS) + " step ("
                 + formatNumber(100 * waitS / m_result.stepTimeS, 2) + "%) for copies of "
                 + formatNumber(layerBytes / 1e9, 3) + " GB per layer at "
                 + formatNumber(gpu.hostCopyD2hGBs, 3)
                 + " GB/s. Fewer offloaded layers give each copy more layers to hide behind",
         {},
         waitS);
}

void StepModel::fillLinks()
{
    std::shared_ptr<LinkLoads> loads = m_workspace.linkLoads();
    m_traffic.totals(loads->bytesUp, loads->bytesDown);
    m_traffic.peaks(loads->peakUtilization);
    const auto &links = m_topo.links();
    // Activation offload: each GPU's activations out to its host and back over its own host
    // link (PCIe or NVLink-C2C), the same bytes each way.
    if (const double offload = offloadBytesPerStep(); offload > 0)
        for (int g = 0; g < m_topo.gpuCount(); ++g) {
            const int l = m_topo.gpuHostLink(g);
            if (l < 0)
                continue;
            const auto i = static_cast<std::size_t>(l);
            const bool fromGpu = links[i].a == m_topo.gpuDevice(g);
            (fromGpu ? loads->bytesUp : loads->bytesDown)[i] += static_cast<float>(offload);
            (fromGpu ? loads->bytesDown : loads->bytesUp)[i] += static_cast<float>(offload);
        }
    const std::size_t n = links.size();
    loads->utilization.resize(n);
    loads->loaded = 0;
    const double step = m_result.stepTimeS;
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
    m_result.links = loads;
}

} // namespace detail

Evaluation evaluate(const Layout &layout,
                    const Topology &topology,
                    EvaluationWorkspace &workspace,
                    const EvaluateOptions &options)
{
    try {
        workspace.bind(topology);
        if (topology.downGpuCount() > 0) {
            // GPUs out (cluster.faults): price the job as it restarts around them.
            const ReformedJob job = reformJob(layout, topology);
            if (!job.ok) {
                Evaluation e;
                e.error = job.error;
                return e;
            }
            Evaluation e = detail::StepModel(job.layout, topology, workspace, options).run();
            if (e.ok && job.changed)
                e.warnings.insert(e.warnings.begin(),
                                  Warning{Severity::Warning, "gpu-out", job.policy, job.lostGpus, 0});
            if (options.stackRange)
                applyStackRange(e, job.layout, topology, workspace);
            return e;
        }
        Evaluation e = detail::StepModel(layout, topology, workspace, options).run();
        if (options.stackRange)
            applyStackRange(e, layout, topology, workspace);
        return e;
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
