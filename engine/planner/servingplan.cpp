#include "planner/servingplan.h"

#include "base/jsoncursor.h"
#include "layout/transformer.h"
#include "serving/servingcache.h"
#include "serving/servingevaluate.h"

#include <algorithm>
#include <chrono>

namespace railyard::engine {

namespace {

// The shapes one pool may take on `gpus` GPUs: TP in powers of two (and the NVLink domain, as
// wide-EP deployments fill a whole NVL72), PP in powers of two, EP 1 or the TP group (MoE),
// attention DP off or over the TP group (MoE: SGLang's and TensorRT-LLM's DeepSeek recipe), and
// replicas that fill the GPUs (per-GPU rates then count every GPU given).
std::vector<ServingPool> poolShapes(const ModelDims &m, int gpus, int domain)
{
    std::vector<int> tps;
    for (int tp = 1; tp <= gpus; tp *= 2)
        tps.push_back(tp);
    if (domain > 1 && domain <= gpus && std::find(tps.begin(), tps.end(), domain) == tps.end())
        tps.push_back(domain);
    std::vector<ServingPool> out;
    for (const int tp : tps)
        for (int pp = 1; tp * pp <= gpus && pp <= m.layers; pp *= 2) {
            std::vector<int> eps{1};
            if (m.isMoe() && tp > 1)
                eps.push_back(tp);
            for (const int ep : eps) {
                std::vector<int> adps{1};
                if (ep == tp && tp > 1)
                    adps.push_back(tp);
                for (const int adp : adps) {
                    if (m.heads % (tp / adp) != 0)
                        continue;
                    ServingPool p;
                    p.tp = tp;
                    p.pp = pp;
                    p.ep = ep;
                    p.replicas = gpus / (tp * pp);
                    if (p.replicas * tp * pp != gpus)
                        continue; // a plan uses every GPU it is given
                    if (adp > 1)
                        p.attentionDp = adp;
                    out.push_back(p);
                }
            }
        }
    return out;
}

Json poolJson(const ServingPool &p)
{
    Json o = Json::object();
    o["tp"] = p.tp;
    o["ep"] = p.ep;
    o["pp"] = p.pp;
    o["replicas"] = p.replicas;
    o["attention_dp"] = p.attentionDp.value_or(1);
    return o;
}

} // namespace

ServingPlanResult planServing(const Layout &layout,
                              const Topology &topology,
                              const ServingPlanOptions &options)
{
    const auto start = std::chrono::steady_clock::now();
    ServingPlanResult r;
    if (!layout.isServing() || !layout.model) {
        r.error = "the layout has no \"serving\" section and model: the serving planner plans "
                  "a serving workload";
        return r;
    }
    const ResolvedModel model = resolveModel(*layout.model);
    if (!model.error.empty()) {
        r.error = model.error;
        return r;
    }
    const int gpus = topology.gpuCount();
    r.gpus = gpus;
    const int domain = layout.cluster.nvlinkDomain;
    EvaluationWorkspace workspace;
    ServingOptions numbersOnly;
    numbersOnly.linkLoads = false;
    numbersOnly.timeline = false;
    ServingCache cache;
    if (options.shareWork) {
        numbersOnly.details = false;
        numbersOnly.cache = &cache;
    }
    Layout l = layout;
    l.mapping.clear();
    l.serving->requestRate.reset();
    std::vector<ServingPlanPoint> feasible;
    // What to sweep: every pool shape aggregated, then (when asked) prefill pools of one shape on
    // an eighth, a quarter, three eighths or half of the GPUs with decode pools of every shape
    // on the rest.
    std::vector<ServingPlanPoint> bases;
    for (const ServingPool &s : poolShapes(model.dims, gpus, domain)) {
        ServingPlanPoint base;
        base.serving = s;
        bases.push_back(base);
    }
    const bool onePhase = layout.serving->phase != ServingPhase::Both;
    if (options.disaggregation && !onePhase && gpus >= 2)
        for (const int eighths : {1, 2, 3, 4}) {
            const int prefillGpus = gpus * eighths / 8;
            if (prefillGpus < 1 || (eighths > 1 && prefillGpus == gpus * (eighths - 1) / 8))
                continue;
            const std::vector<ServingPool> decodes = poolShapes(model.dims,
                                                                gpus - prefillGpus,
                                                                domain);
            for (const ServingPool &p : poolShapes(model.dims, prefillGpus, domain)) {
                if (p.pp > 1)
                    continue; // prefill pools run without pipeline stages here
                for (const ServingPool &d : decodes) {
                    ServingPlanPoint base;
                    base.disaggregated = true;
                    base.prefill = p;
                    base.decode = d;
                    bases.push_back(base);
                }
            }
        }
    const auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    double lastProgressS = 0;
    // False when cancelled; reports progress now and then.
    const auto goOn = [&](std::size_t done) {
        if (options.cancel && options.cancel->load(std::memory_order_relaxed)) {
            r.cancelled = true;
            return false;
        }
        if (options.progress && (r.evaluated & 63) == 0) {
            const double now = elapsed();
            if (now - lastProgressS >= options.progressIntervalS) {
                lastProgressS = now;
                options.progress({r.evaluated, double(done) / double(bases.size()), now});
            }
        }
        return true;
    };
    // Prices `l` at growing concurrency until the KV cache is full; keeps what passes.
    const auto sweep = [&](const ServingPlanPoint &base, std::size_t done) {
        for (int c = 1; c <= options.maxConcurrency; c *= 2) {
            if (!goOn(done))
                return;
            l.serving->concurrency = c;
            const ServingEvaluation e = evaluateServing(l, topology, workspace, numbersOnly);
            ++r.evaluated;
            if (!e.ok) {
                ++r.infeasible;
                return;
            }
            ServingPlanPoint p = base;
            p.concurrency = c;
            p.gpus = e.gpus;
            p.outputTokensPerSPerGpu = e.outputTokensPerSPerGpu;
            p.tokensPerSPerUser = e.tokensPerSPerUser;
            p.ttftS = e.ttftS;
            p.tpotS = e.tpotS;
            p.requestsPerS = e.requestsPerS;
            p.memoryGiBPerGpu = e.memory.totalGiB();
            p.maxConcurrency = e.maxConcurrency;
            if ((options.ttftLimitS && e.ttftS > *options.ttftLimitS)
                || (options.tpotLimitS && e.tpotS > *options.tpotLimitS))
                ++r.overLimits;
            else
                feasible.push_back(p);
            // Past what the KV cache holds, more requests only queue.
            if (c >= e.maxConcurrency)
                return;
        }
    };
    for (std::size_t i = 0; i < bases.size() && !r.cancelled; ++i) {
        const ServingPlanPoint &base = bases[i];
        l.parallel = ParallelConfig{};
        if (base.disaggregated) {
            DisaggregationConfig split;
            split.prefill = base.prefill;
            split.decode = base.decode;
            l.serving->disaggregated = split;
        } else {
            l.serving->disaggregated.reset();
            l.parallel.tp = base.serving.tp;
            l.parallel.ep = base.serving.ep;
            l.parallel.pp = base.serving.pp;
            l.parallel.dp = base.serving.replicas;
            l.parallel.attentionDp = base.serving.attentionDp;
        }
        sweep(base, i);
    }
    // The front: sorted by tokens/s per user, fastest first, each keeping a point only if it
    // serves more per GPU than every faster one.
    std::sort(feasible.begin(), feasible.end(), [](const auto &a, const auto &b) {
        if (a.tokensPerSPerUser != b.tokensPerSPerUser)
            return a.tokensPerSPerUser > b.tokensPerSPerUser;
        return a.outputTokensPerSPerGpu > b.outputTokensPerSPerGpu;
    });
    double best = -1;
    for (const ServingPlanPoint &p : feasible)
        if (p.outputTokensPerSPerGpu > best) {
            r.front.push_back(p);
            best = p.outputTokensPerSPerGpu;
        }
    r.ok = true;
    r.elapsedS = elapsed();
    return r;
}

Json servingPlanJson(const ServingPlanResult &r,
                     const ServingPlanOptions &options,
                     const std::string &file)
{
    Json o = Json::object();
    o["file"] = file;
    o["workload"] = "serving";
    o["gpus"] = r.gpus;
    o["evaluated"] = r.evaluated;
    o["infeasible"] = r.infeasible;
    o["over_limits"] = r.overLimits;
    o["elapsed_s"] = r.elapsedS;
    o["configurations_per_s"] = r.elapsedS > 0 ? double(r.evaluated) / r.elapsedS : 0.0;
    Json limits = Json::object();
    if (options.ttftLimitS)
        limits["ttft_s"] = *options.ttftLimitS;
    if (options.tpotLimitS)
        limits["tpot_s"] = *options.tpotLimitS;
    o["limits"] = limits;
    Json front = Json::array();
    for (const ServingPlanPoint &p : r.front) {
        Json j = Json::object();
        j["disaggregated"] = p.disaggregated;
        if (p.disaggregated) {
            j["prefill"] = poolJson(p.prefill);
            j["decode"] = poolJson(p.decode);
        } else {
            j["parallel"] = poolJson(p.serving);
        }
        j["concurrency"] = p.concurrency;
        j["gpus"] = p.gpus;
        j["output_tokens_per_s_per_gpu"] = p.outputTokensPerSPerGpu;
        j["tokens_per_s_per_user"] = p.tokensPerSPerUser;
        j["ttft_s"] = p.ttftS;
        j["tpot_s"] = p.tpotS;
        j["requests_per_s"] = p.requestsPerS;
        j["memory_gib_per_gpu"] = p.memoryGiBPerGpu;
        j["max_concurrency"] = p.maxConcurrency;
        front.push_back(j);
    }
    o["front"] = front;
    return o;
}

} // namespace railyard::engine
