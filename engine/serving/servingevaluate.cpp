#include "serving/servingevaluate.h"

#include "base/inputerror.h"
#include "base/units.h"
#include "collectives/traffic.h"
#include "serving/servingband.h"
#include "serving/servingmodel_p.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace railyard::engine {

namespace detail {

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Decode-step grid point k: 2^(k/4) to a sixteenth (a table: every evaluation walks it).
double gridBatch(int k)
{
    const auto point = [](int i) { return std::round(std::pow(2.0, 0.25 * i) * 16.0) / 16.0; };
    static const std::vector<double> table = [&] {
        std::vector<double> t(256);
        for (int i = 0; i < 256; ++i)
            t[static_cast<std::size_t>(i)] = point(i);
        return t;
    }();
    return k < 256 ? table[static_cast<std::size_t>(k)] : point(k);
}

std::string poolKey(const ServingSetup &s, const ServingPoolShape &p)
{
    if (!s.disaggregated)
        return "parallel";
    return std::string("serving.disaggregated.") + p.role;
}
} // namespace

ServingModel::ServingModel(const Layout &l,
                           const Topology &t,
                           EvaluationWorkspace &w,
                           const ServingOptions &o)
    : m_layout(l)
    , m_topo(t)
    , m_workspace(w)
    , m_options(o)
{}

ServingEvaluation ServingModel::run()
{
    // What does not fit is known before any pool is priced (a plan tries many such).
    if (!prepare() || !checkMemory())
        return std::move(m_result);
    pricePools();
    solve();
    fillResult();
    if (m_options.details) {
        warnPlacement();
        warnLoad();
    }
    if (m_options.linkLoads)
        fillLinks();
    if (m_options.timeline)
        buildTimelines();
    m_result.ok = true;
    return std::move(m_result);
}

bool ServingModel::prepare()
{
    m_result.error = resolveServing(m_layout, m_topo.gpuCount(), m_setup);
    if (!m_result.error.empty() || !takeOutOfService())
        return false;
    const GpuSpec &gpu = m_topo.gpuSpec();
    KernelChoice kernels;
    kernels.blockScaledActivations = m_setup.config.fp8BlockScaled;
    kernels.expertPromotionExposed = m_setup.config.fp8BlockScaled && gpu.architecture == "hopper"
                                     && m_setup.stack && m_setup.stack->moePromotionExposed;
    m_compute = std::make_unique<ComputeModel>(gpu, m_setup.precision, kernels);
    if (m_setup.precision == Precision::Fp8 && gpu.fp8Tflops <= 0)
        warn(Severity::Warning,
             "no-fp8",
             gpu.id + " has no FP8 tensor cores: FP8 weights are read as 1 byte and multiplied in BF16");
    if (m_setup.precision == Precision::Fp4 && gpu.fp4Tflops <= 0)
        warn(Severity::Info,
             "no-fp4",
             gpu.id + " has no FP4 tensor cores: 4-bit weights are read from HBM and multiplied on "
                     + (gpu.fp8Tflops > 0 ? "FP8" : "BF16") + " tensor cores");
    m_result.disaggregated = m_setup.disaggregated;
    m_result.phase = toString(m_setup.config.phase);
    m_result.gpus = m_heldGpus;
    m_result.replicasOutOfService = m_outDecode;
    m_result.prefillReplicasOutOfService = m_outPrefill;
    m_result.gpusOutOfService = static_cast<int>(m_outDecode.size()) * m_heldDecode.gpusPerReplica()
                                + static_cast<int>(m_outPrefill.size())
                                          * m_heldPrefill.gpusPerReplica();
    m_accepted = acceptedTokensPerStep(m_setup.config);
    m_result.acceptedTokensPerStep = m_accepted;
    const ServingConfig &c = m_setup.config;
    m_context = c.inputTokens + c.outputTokens / 2.0;
    return true;
}

void ServingModel::pricePools()
{
    const ServingConfig &c = m_setup.config;
    m_workspace.bind(m_topo);
    LinkTraffic &scratch = m_workspace.planning();
    m_decodePool = pricePool(m_setup.decode, m_decodeGroups, m_decodeComm);
    PricedPool *prefillPool = m_decodePool;
    if (m_setup.disaggregated) {
        prefillPool = pricePool(m_setup.prefill, m_prefillGroups, m_prefillComm);
    } else {
        m_prefillGroups = m_decodeGroups;
        m_prefillComm = m_decodeComm;
    }
    const auto prefill = [&] {
        return prefillRequest(m_setup,
                              m_setup.prefill,
                              m_prefillComm,
                              *m_compute,
                              c.inputTokens,
                              m_setup.prefill.attentionDp);
    };
    if (prefillPool) {
        if (!prefillPool->prefill || prefillPool->prefillTokens != c.inputTokens) {
            prefillPool->prefill = prefill();
            prefillPool->prefillTokens = c.inputTokens;
        }
        m_prefill = *prefillPool->prefill;
    } else {
        m_prefill = prefill();
    }
    if (m_setup.disaggregated && c.phase == ServingPhase::Both) {
        const auto plan = [&] {
            return planKvTransfer(m_topo,
                                  m_setup,
                                  m_prefillGroups,
                                  m_decodeGroups,
                                  c.inputTokens,
                                  scratch);
        };
        // The split's transfer routed once for the plan (both pools from the cache: the same
        // groups).
        ServingCache *cache = m_options.cache;
        if (cache && prefillPool && m_decodePool) {
            m_kv = cache->findKv(m_setup.prefill, m_setup.decode, c.inputTokens);
            if (!m_kv)
                m_kv = &cache->insertKv(m_setup.prefill, m_setup.decode, c.inputTokens, plan());
        } else {
            m_ownKv = plan();
        }
    }
}

PricedPool *ServingModel::pricePool(const ServingPoolShape &pool, PoolGroups &groups, PoolComm &comm)
{
    LinkTraffic &scratch = m_workspace.planning();
    ServingCache *cache = m_options.cache;
    // With faults the groups lose the replicas out of service and the links price differently:
    // not the plan's shared pricing.
    if (!cache || !m_layout.mapping.empty() || m_topo.hasFaults()) {
        groups = servingGroups(pool);
        comm = priceComm(m_topo, groups, m_setup, pool, scratch);
        return nullptr;
    }
    PricedPool *priced = cache->find(pool);
    if (!priced) {
        PricedPool fresh;
        fresh.groups = poolGroups(m_layout, pool);
        fresh.comm = priceComm(m_topo, fresh.groups, m_setup, pool, scratch);
        priced = &cache->insert(pool, std::move(fresh));
    }
    groups = priced->groups;
    comm = priced->comm;
    return priced;
}

bool ServingModel::checkMemory()
{
    const ServingConfig &c = m_setup.config;
    const GpuSpec &gpu = m_topo.gpuSpec();
    const double tokens = double(c.inputTokens) + c.outputTokens;
    const double concurrency = c.concurrency.value_or(1) * m_loadScale;
    m_decodeMemory = servingMemory(m_setup, m_setup.decode, gpu, tokens, concurrency);
    m_prefillMemory = m_setup.disaggregated
                              ? servingMemory(m_setup, m_setup.prefill, gpu, c.inputTokens, 1)
                              : m_decodeMemory;
    const auto noFit = [&](const ServingPoolShape &p, const ServingMemory &m, double reqTokens) {
        // The numbers alone (a plan, which counts these): the key and the reason, without the
        // figures (formatting them was a twentieth of a plan's time).
        if (!m_options.details) {
            m_result.error = poolKey(m_setup, p) + ".tp: " + m_setup.model.name
                             + " does not fit even at concurrency 1 on " + gpu.id;
            return;
        }
        m_result.error = poolKey(m_setup, p) + ".tp: " + m_setup.model.name
                         + " does not fit even at concurrency 1 on " + gpu.id
                         + " (per GPU: weights " + formatNumber(m.weightsGiB, 3)
                         + " GiB + activations " + formatNumber(m.activationsGiB, 3)
                         + " GiB + one request's KV cache (" + formatNumber(reqTokens, 6)
                         + " tokens) " + formatNumber(m.kvBytesPerRequest / p.attentionDp / kGiB, 3)
                         + " GiB, within the stack's " + formatNumber(m.budgetGiB, 3) + " of "
                         + formatNumber(m.hbmGiB, 3)
                         + " GiB usable): raise tp or pp, or use a lower precision";
    };
    if (m_decodeMemory.maxConcurrency < 1) {
        noFit(m_setup.decode, m_decodeMemory, tokens);
        return false;
    }
    if (m_setup.disaggregated && m_prefillMemory.maxConcurrency < 1) {
        noFit(m_setup.prefill, m_prefillMemory, c.inputTokens);
        return false;
    }
    return true;
}

double ServingModel::gridTime(ReplicaClass &k, std::size_t i)
{
    double &t = k.gridTime[i];
    if (!std::isnan(t))
        return t;
    const double b = m_gridBatch[i];
    const auto step = [&] {
        return decodeStep(m_setup, m_setup.decode, k.comm, *m_compute, b, m_context, k.slowdown)
                .total();
    };
    if (m_decodePool && k.slowdown.empty()) {
        const auto [it, fresh] = m_decodePool->decodeStepS->try_emplace(b, 0.0);
        if (fresh)
            it->second = step();
        t = it->second;
    } else {
        t = step();
    }
    return t;
}

double ServingModel::decodeTimeAt(ReplicaClass &k, double batch)
{
    const std::vector<double> &b = m_gridBatch;
    if (b.size() == 1)
        return gridTime(k, 0);
    const double x = std::max(1.0, batch);
    std::size_t i = static_cast<std::size_t>(std::upper_bound(b.begin(), b.end(), x) - b.begin());
    i = std::clamp<std::size_t>(i, 1, b.size() - 1);
    const double f = (x - b[i - 1]) / (b[i] - b[i - 1]);
    const double lo = gridTime(k, i - 1), hi = gridTime(k, i);
    return lo + f * (hi - lo);
}

void ServingModel::solve()
{
    const ServingConfig &c = m_setup.config;
    formClasses();
    ThroughputInputs in;
    in.disaggregated = m_setup.disaggregated;
    in.phase = c.phase;
    in.prefillServers = m_setup.prefill.attentionDp;
    in.inputTokens = c.inputTokens;
    in.outputTokens = c.outputTokens;
    in.accepted = m_accepted;
    in.prefillChunks = static_cast<int>(
            std::ceil(double(c.inputTokens) / std::max(1, c.maxPrefillTokens)));
    in.maxConcurrency = m_decodeMemory.maxConcurrency;
    // Closed loop: the requests in flight per replica (more per replica when some are out of
    // service: the same load).
    in.concurrency = c.concurrency.value_or(0) * m_loadScale;
    // Decode steps priced on a grid of batches, a factor of 2^(1/4) apart from 1 (the same
    // points whatever the top, so a plan's configurations share them: servingcache.h), up to
    // what the KV cache holds (and the concurrency asked for, when more), then interpolated.
    const double top = std::max({1.0, double(m_decodeMemory.maxConcurrency), in.concurrency});
    m_gridBatch.clear();
    const double last = std::round(top * 16.0) / 16.0;
    for (int k = 0;; ++k) {
        const double b = gridBatch(k);
        if (b >= last)
            break;
        m_gridBatch.push_back(b);
    }
    m_gridBatch.push_back(last);
    const int replicas = m_setup.decode.replicas;
    for (ReplicaClass &k : m_classes) {
        // Priced when the solver first needs them (it looks at a few of them).
        k.gridTime.assign(m_gridBatch.size(), std::numeric_limits<double>::quiet_NaN());
        // Each class serves its replicas' share of the requests (spread evenly over the
        // replicas), with that share of a disaggregated prefill pool.
        const double share = double(k.replicas.size()) / replicas;
        ThroughputInputs ki = in;
        ki.decodeReplicas = static_cast<int>(k.replicas.size());
        ki.prefillReplicas = m_setup.disaggregated ? m_setup.prefill.replicas * share
                                                   : double(ki.decodeReplicas);
        ki.requestRate = c.requestRate.value_or(0) * share;
        ki.prefillS = k.prefill.total();
        ki.prefillClasses = m_prefillPace;
        ki.decodeStepS = [this, &k](double b) { return decodeTimeAt(k, b); };
        if (!m_kv->empty()) {
            const bool layerwise = m_setup.stack->kvLayerwise;
            const double prefillS = ki.prefillS;
            const int layers = m_setup.model.layers;
            // The KV links carry every class's transfers: priced at the cluster's rate.
            ki.kvTransferS = [this, layerwise, prefillS, layers, share](double rate) {
                return exposedKvTransfer(m_kv->timeS(rate / share), prefillS, layers, layerwise);
            };
            ki.kvMaxRate = m_kv->maxRequestsPerS() * share;
        }
        k.throughput = solveThroughput(ki);
    }
    m_slowestClass = 0;
    for (std::size_t i = 1; i < m_classes.size(); ++i)
        if (m_classes[i].throughput.tpotS > m_classes[m_slowestClass].throughput.tpotS)
            m_slowestClass = i;
    m_throughput = combineClasses();
    const ReplicaClass &slowest = m_classes[m_slowestClass];
    // The prefill shown: the slowest replica's (disaggregated: the slowest prefill replica's).
    m_prefill = m_setup.disaggregated ? m_slowPrefill : slowest.prefill;
    if (!m_options.details)
        return;
    // The decode step at the served batch: the slowest replica's (the healthy one's without
    // stragglers).
    m_step = decodeStep(m_setup,
                        m_setup.decode,
                        slowest.comm,
                        *m_compute,
                        std::max(1.0, slowest.throughput.decodeBatch),
                        m_context,
                        slowest.slowdown);
}

void ServingModel::fillResult()
{
    const ServingConfig &c = m_setup.config;
    const ThroughputResult &t = m_throughput;
    ServingEvaluation &r = m_result;
    r.ttftS = t.ttftS;
    r.ttftWaitS = t.waitS;
    r.tpotS = t.tpotS;
    r.e2eLatencyS = t.e2eS;
    r.slowestTpotS = m_classes[m_slowestClass].throughput.tpotS;
    r.slowestTtftS = 0;
    for (const ReplicaClass &k : m_classes)
        r.slowestTtftS = std::max(r.slowestTtftS, k.throughput.slowTtftS);
    if (m_classes.size() > 1)
        for (const ReplicaClass &k : m_classes)
            r.replicaClasses.push_back(
                    {k.replicas, k.throughput.tpotS, k.throughput.ttftS, k.throughput.requestsPerS});
    r.requestsPerS = t.requestsPerS;
    r.concurrency = t.concurrency;
    r.decodeBatch = t.decodeBatch;
    r.decodeStepS = t.decodeStepS;
    r.maxConcurrency = m_decodeMemory.maxConcurrency;
    const bool prefillOnly = c.phase == ServingPhase::Prefill;
    const bool decodeOnly = c.phase == ServingPhase::Decode;
    // The GPUs the pools hold, those of replicas out of service included.
    const int gpus = prefillOnly  ? m_heldPrefill.gpus()
                     : decodeOnly ? m_heldDecode.gpus()
                                  : m_heldGpus;
    r.gpus = gpus;
    // A decode pool measured alone makes every token but the first (the prefill makes that one).
    const double tokensPerRequest = prefillOnly  ? 1.0
                                    : decodeOnly ? std::max(0.0, double(c.outputTokens) - 1)
                                                 : double(c.outputTokens);
    r.outputTokensPerS = t.requestsPerS * tokensPerRequest;
    r.outputTokensPerSPerGpu = gpus > 0 ? r.outputTokensPerS / gpus : 0;
    r.inputTokensPerSPerGpu = gpus > 0 && !decodeOnly ? t.requestsPerS * c.inputTokens / gpus : 0;
    r.tokensPerSPerUser = t.tpotS > 0 ? 1.0 / t.tpotS : 0;
    const double price = m_layout.cluster.pricePerGpuHour.value_or(m_topo.gpuSpec().pricePerGpuHour);
    if (price > 0 && r.outputTokensPerS > 0)
        r.costPerMillionOutputTokens = price * gpus / 3600.0 / r.outputTokensPerS * 1e6;
    const auto breakdown = [](const PassCost &p) {
        ServingBreakdown b;
        b.compute = p.compute;
        b.weightsRead = p.weightsRead;
        b.attention = p.attention;
        b.tp = p.tp;
        b.ep = p.ep;
        b.pp = p.pp;
        b.overhead = p.overhead;
        return b;
    };
    if (!prefillOnly)
        r.decode = breakdown(m_step);
    if (!decodeOnly) {
        r.prefill = breakdown(m_prefill);
        r.prefill.kvTransfer = t.kvTransferS;
    }
    const auto memory = [](const ServingMemory &m) {
        ServingMemoryUse u;
        u.weightsGiB = m.weightsGiB;
        u.kvCacheGiB = m.kvCacheGiB;
        u.activationsGiB = m.activationsGiB;
        u.kvPoolGiB = m.kvPoolGiB;
        u.hbmGiB = m.hbmGiB;
        return u;
    };
    // The KV cache of the requests actually in flight.
    const ServingMemory served = servingMemory(m_setup,
                                               m_setup.decode,
                                               m_topo.gpuSpec(),
                                               double(c.inputTokens) + c.outputTokens,
                                               std::max(1.0, t.concurrency));
    r.memory = memory(served);
    r.prefillMemory = memory(m_setup.disaggregated ? m_prefillMemory : served);
    if (!m_options.details)
        return;
    const double a2aBytes = m_step.collectives.dispatchBytes;
    r.tpMethod = m_decodeComm.attentionAr.valid()
                         ? m_decodeComm.attentionAr.describe(m_step.collectives.attentionArBytes)
                         : "";
    r.epMethod = m_decodeComm.dispatch.valid() ? m_decodeComm.dispatch.describe(a2aBytes) : "";
    // The band: TTFT rests on the prefill, the KV transfer and the decode steps its chunks ride.
    const bool across = m_decodeComm.attentionAr.domains > 1 || m_decodeComm.tpAr.domains > 1
                        || m_prefillComm.attentionAr.domains > 1;
    ServingBreakdown ttftPrefill = r.prefill;
    const double chunkSteps = m_setup.disaggregated ? 0.0
                                                    : std::ceil(double(c.inputTokens)
                                                                / std::max(1, c.maxPrefillTokens));
    const double ttftBase = r.prefill.sum() + chunkSteps * t.decodeStepS;
    const ServingBandResult ttft = servingBand(r.decode,
                                               ttftBase > 0 && r.decode.sum() > 0
                                                       ? chunkSteps * t.decodeStepS / r.decode.sum()
                                                       : 0.0,
                                               ttftPrefill,
                                               1.0,
                                               across);
    // TPOT (and every rate): the end-to-end band of the published serving runs.
    constexpr double b = kServingRunsBand;
    r.tpotBand = {t.tpotS / (1 + b), t.tpotS * (1 + b), b};
    // Waiting is the queueing model's, not a measured part: outside the band, named in it.
    const double waitShare = t.ttftS > 0 ? t.waitS / t.ttftS : 0;
    r.ttftBand = {t.ttftS * (1 - ttft.fraction * (1 - waitShare)),
                  t.ttftS * (1 + ttft.fraction * (1 - waitShare)),
                  ttft.fraction * (1 - waitShare)};
    r.bandBasis = "TPOT and the rates (tokens/s per GPU and per user): divided or multiplied by "
                  + formatNumber(1 + b, 3) + ", the range that held "
                  + formatNumber(100 * kServingRunsBandCoverage, 2)
                  + "% of the published serving runs of the fitted families (nothing fitted to "
                    "them; tests/data/serving/README.md, leave-one-family-out and held-out "
                    "coverage). TTFT (no published TTFT with its configuration yet): "
                  + ttft.basis
                  + (waitShare > 0.005
                             ? "; queueing (" + formatNumber(100 * waitShare, 2)
                                       + "% of TTFT) is the queueing model's, not in the band"
                             : std::string());
    r.assumptions.push_back("band: " + r.bandBasis);
    r.assumptions.push_back(
            "balanced MoE routing: every expert gets its share of tokens; experts active in a "
            "decode step by the chance that any of the batch's tokens picks them");
    r.assumptions.push_back("decode attention reads each request's KV cache at the input length "
                            "plus half the output (the mean over a request's decode)");
    r.assumptions.push_back("aggregated serving: prefill chunks share the replicas' time with "
                            "decode steps (TPOT stretched by the prefill share); queueing for the "
                            "prefill as M/D/1");
    r.assumptions.push_back(
            "the stack's host-side scheduling is overlapped with the GPU (an overlap "
            "scheduler) unless its profile says otherwise; no two-batch overlap "
            "of communication with compute");
}

} // namespace detail

ServingEvaluation evaluateServing(const Layout &layout,
                                  const Topology &topology,
                                  EvaluationWorkspace &workspace,
                                  const ServingOptions &options)
{
    try {
        return detail::ServingModel(layout, topology, workspace, options).run();
    } catch (const InputError &err) {
        ServingEvaluation e;
        e.error = err.what();
        return e;
    }
}

ServingEvaluation evaluateServing(const Layout &layout,
                                  const Topology &topology,
                                  const ServingOptions &options)
{
    EvaluationWorkspace workspace;
    return evaluateServing(layout, topology, workspace, options);
}

} // namespace railyard::engine
