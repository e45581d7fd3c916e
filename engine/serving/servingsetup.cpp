#include "serving/servingsetup.h"

#include <algorithm>

namespace railyard::engine {

namespace {

ServingPoolShape poolFrom(const ServingPool &p, const char *role)
{
    ServingPoolShape s;
    s.role = role;
    s.tp = p.tp;
    s.ep = p.ep;
    s.pp = p.pp;
    s.replicas = p.replicas;
    s.attentionDp = p.attentionDp ? (*p.attentionDp == 0 ? p.tp : *p.attentionDp) : 1;
    return s;
}

// Why `pool` cannot serve `m`, naming the key (`where`), or empty.
std::string checkPool(const ModelDims &m, const ServingPoolShape &p, const std::string &where)
{
    const auto key = [&](const char *k) { return where + k; };
    if (p.pp > m.layers)
        return key("pp") + ": " + std::to_string(p.pp) + " pipeline stages for "
               + std::to_string(m.layers) + " layers";
    if (m.heads % p.attentionTp() != 0)
        return key(p.attentionDp > 1 ? "attention_dp" : "tp") + ": attention at TP "
               + std::to_string(p.attentionTp()) + " does not divide the " + std::to_string(m.heads)
               + " attention heads";
    if (p.ep > 1 && !m.isMoe())
        return key("ep") + ": " + m.name + " has no experts to split (ep " + std::to_string(p.ep)
               + ")";
    if (m.isMoe() && p.ep > m.experts)
        return key("ep") + ": EP " + std::to_string(p.ep) + " is more than the "
               + std::to_string(m.experts) + " experts";
    return {};
}

} // namespace

std::string resolveServing(const Layout &l, int clusterGpus, ServingSetup &s)
{
    if (!l.serving)
        return "the layout has no \"serving\" section";
    if (!l.model)
        return "the layout has no model: add \"model\": {\"preset\": ...} to price serving";
    const ResolvedModel r = resolveModel(*l.model);
    if (!r.error.empty())
        return r.error;
    s.model = r.dims;
    s.config = *l.serving;
    s.stack = findServingStack(s.config.stack);
    if (!s.stack)
        return "serving.stack: unknown stack \"" + s.config.stack
               + "\" (known: " + servingStackList() + ")";
    s.cudaGraphs = s.config.cudaGraphs.value_or(s.stack->cudaGraphs);
    s.dispatcher = s.config.moeDispatcher.value_or(s.stack->moeDispatcher);
    s.precision = s.config.precision;
    s.kvPrecision = s.config.kvCache();
    s.clusterGpus = clusterGpus;
    if (s.config.speculative && s.config.speculative->method == SpeculativeMethod::Draft) {
        ModelConfig draft;
        draft.preset = s.config.speculative->draftModel;
        const ResolvedModel d = resolveModel(draft);
        if (!d.error.empty())
            return "serving.speculative.draft_model: " + d.error;
        s.draftModel = d.dims;
    }
    std::string error;
    if (s.config.disaggregated) {
        s.disaggregated = true;
        s.prefill = poolFrom(s.config.disaggregated->prefill, "prefill");
        s.decode = poolFrom(s.config.disaggregated->decode, "decode");
        s.decode.firstRank = s.prefill.gpus();
        error = checkPool(s.model, s.prefill, "serving.disaggregated.prefill.");
        if (error.empty())
            error = checkPool(s.model, s.decode, "serving.disaggregated.decode.");
        s.gpus = s.prefill.gpus() + s.decode.gpus();
    } else {
        ServingPool p;
        p.tp = l.parallel.tp;
        p.ep = l.parallel.ep;
        p.pp = l.parallel.pp;
        p.replicas = l.dataParallel();
        p.attentionDp = l.parallel.attentionDp;
        s.decode = poolFrom(p, "serving");
        s.prefill = s.decode;
        error = checkPool(s.model, s.decode, "parallel.");
        s.gpus = s.decode.gpus();
    }
    if (!error.empty())
        return error;
    if (s.gpus > clusterGpus)
        return "serving needs " + std::to_string(s.gpus) + " GPUs, but the cluster has "
               + std::to_string(clusterGpus);
    if (!l.mapping.empty() && static_cast<int>(l.mapping.size()) != s.gpus)
        return "mapping: expected " + std::to_string(s.gpus) + " entries (one GPU per rank), got "
               + std::to_string(l.mapping.size());
    return {};
}

PoolGroups poolGroups(const Layout &l, const ServingPoolShape &p)
{
    const auto gpuOf = [&](int rank) {
        return l.mapping.empty() ? rank : l.mapping[static_cast<std::size_t>(rank)];
    };
    const auto rankOf = [&](int replica, int stage, int t) {
        return p.firstRank + (replica * p.pp + stage) * p.tp + t;
    };
    PoolGroups g;
    g.tp.size = p.tp;
    g.attention.size = p.attentionTp();
    g.ep.size = p.ep;
    g.pipeline.size = p.pp;
    g.replicas.size = p.gpusPerReplica();
    const std::size_t n = static_cast<std::size_t>(p.gpus());
    g.tp.gpus.reserve(n);
    g.attention.gpus.reserve(n);
    g.ep.gpus.reserve(n);
    g.pipeline.gpus.reserve(n);
    g.replicas.gpus.reserve(n);
    const int etp = p.etp();
    for (int r = 0; r < p.replicas; ++r) {
        for (int s = 0; s < p.pp; ++s) {
            for (int t = 0; t < p.tp; ++t) {
                g.tp.gpus.push_back(gpuOf(rankOf(r, s, t)));
                g.attention.gpus.push_back(gpuOf(rankOf(r, s, t)));
                g.replicas.gpus.push_back(gpuOf(rankOf(r, s, t)));
            }
            // EP groups: the TP ranks with the same expert-TP coordinate (t % etp).
            for (int j = 0; j < etp; ++j)
                for (int e = 0; e < p.ep; ++e)
                    g.ep.gpus.push_back(gpuOf(rankOf(r, s, j + etp * e)));
        }
        for (int t = 0; t < p.tp; ++t)
            for (int s = 0; s < p.pp; ++s)
                g.pipeline.gpus.push_back(gpuOf(rankOf(r, s, t)));
    }
    return g;
}

StageLayers stageLayers(const ModelDims &m, int pp, int stage)
{
    StageLayers out;
    const long long L = m.layers;
    out.first = static_cast<int>(L * stage / pp);
    const int last = static_cast<int>(L * (stage + 1) / pp);
    out.count = last - out.first;
    const int dense = m.denseLayers();
    out.dense = std::clamp(dense - out.first, 0, out.count);
    out.moe = out.count - out.dense;
    // Sliding-window layers spread evenly (gpt-oss alternates them): layer i is one when
    // floor((i + 1) S / L) passes an integer.
    const long long S = m.slidingLayers;
    if (S > 0 && L > 0)
        out.sliding = static_cast<int>(S * last / L - S * out.first / L);
    return out;
}

} // namespace railyard::engine
