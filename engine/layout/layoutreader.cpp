// Reading a layout file (DESIGN.md, "Layout format"): the JSON text to a Layout, checking every
// key against what the format allows and naming the JSON path of what is wrong.
#include "layout/layout.h"

#include "base/boundedread.h"
#include "base/units.h"
#include "layout/layoutio_p.h"
#include "layout/softwarestack.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace railyard::engine {

namespace {

const std::vector<std::string> kDims = {"tp", "cp", "ep", "dp", "pp"};

void checkOrder(const JsonCursor &c, const std::string &order)
{
    std::vector<std::string> parts;
    std::stringstream ss(order);
    std::string part;
    while (std::getline(ss, part, '-'))
        parts.push_back(part);
    const std::string want = "dimensions tp, cp, ep, dp, pp joined by '-', each once (Megatron's "
                             "default is \"tp-cp-ep-dp-pp\", TP fastest)";
    for (const auto &d : kDims) {
        int count = 0;
        for (const auto &p : parts)
            count += p == d;
        if (count > 1 || (count == 0 && d != "ep"))
            c.expected(want);
    }
    for (const auto &p : parts) {
        bool known = false;
        for (const auto &d : kDims)
            known = known || p == d;
        if (!known)
            c.expected(want);
    }
}

// An explicit server sets the GPUs per server, the NVLink domain (the server) and the NICs.
void applyServerTemplate(const JsonCursor &, ClusterConfig &k)
{
    k.gpusPerNode = k.server->count(ServerDeviceKind::Gpu);
    k.nvlinkDomain = k.gpusPerNode;
    k.nic.perGpu = static_cast<double>(k.server->count(ServerDeviceKind::Nic)) / k.gpusPerNode;
}

// gpus_per_node and nvlink_domain, when given beside an explicit server, must agree with it.
void checkServerShape(const JsonCursor &c, const ClusterConfig &k)
{
    const int gpus = k.server->count(ServerDeviceKind::Gpu);
    if (k.gpusPerNode != gpus)
        c.at("gpus_per_node")
                .fail("expected " + std::to_string(gpus) + " (the GPUs in cluster.server), got "
                      + std::to_string(k.gpusPerNode));
    if (k.nvlinkDomain != gpus)
        c.at("nvlink_domain")
                .fail("expected " + std::to_string(gpus)
                      + ": with an explicit server the NVLink domain is the server, got "
                      + std::to_string(k.nvlinkDomain));
}

ClusterConfig readCluster(const JsonCursor &c, const Catalog *catalog, std::int64_t version)
{
    c.requireObject();
    ClusterConfig k;
    if (const auto server = c.find("server")) {
        if (version < 2)
            server->fail("an explicit server needs \"version\": 2 (this file says version "
                         + std::to_string(version) + ")");
        k.server = readServerTemplate(*server);
        applyServerTemplate(c, k);
    }
    const JsonCursor gpu = c.at("gpu");
    k.gpu = gpu.toString();
    if (catalog && !catalog->gpu(k.gpu))
        gpu.fail("unknown GPU " + quote(k.gpu) + " (expected one of: " + catalog->gpuIdList() + ")");
    k.nodes = static_cast<int>(c.at("nodes").toInt(1, 1'000'000'000));
    k.gpusPerNode = c.intOr("gpus_per_node", k.server ? k.gpusPerNode : 8, 1, 128);
    const JsonCursor where = c.find("nodes").value();
    const long long gpus = 1LL * k.nodes * k.gpusPerNode;
    if (gpus > kMaxGpus)
        where.fail("the cluster would have " + std::to_string(gpus)
                   + " GPUs; Railyard accepts at most " + std::to_string(kMaxGpus)
                   + " (nodes x gpus_per_node)");
    k.nvlinkDomain = c.intOr("nvlink_domain", k.gpusPerNode, 1, 1024);
    if (k.server)
        checkServerShape(c, k);
    if (k.nvlinkDomain < k.gpusPerNode || k.nvlinkDomain % k.gpusPerNode != 0)
        c.at("nvlink_domain")
                .fail("expected a multiple of gpus_per_node (" + std::to_string(k.gpusPerNode)
                      + "): an NVLink domain holds whole servers, got "
                      + std::to_string(k.nvlinkDomain));
    if (k.nodes % k.nodesPerDomain() != 0)
        where.fail("expected a multiple of " + std::to_string(k.nodesPerDomain())
                   + " (the servers in one NVLink domain of " + std::to_string(k.nvlinkDomain)
                   + " GPUs), got " + std::to_string(k.nodes));
    k.serversPerRack = c.optInt("servers_per_rack", 1, 1024);
    if (const auto nic = c.find("nic")) {
        nic->requireObject();
        k.nic.gbitPerS = nic->doubleOr("gbps", 400, 1, 1e5);
        if (k.server) {
            // The server's NICs say how many there are.
            if (const auto per = nic->find("per_gpu");
                per
                && std::fabs(per->toDouble(0, 16) * k.gpusPerNode
                             - k.server->count(ServerDeviceKind::Nic))
                           > 1e-6)
                per->fail("expected " + formatNumber(k.nic.perGpu) + " (the server's "
                          + std::to_string(k.server->count(ServerDeviceKind::Nic)) + " NICs for "
                          + std::to_string(k.gpusPerNode) + " GPUs), got "
                          + formatNumber(per->toDouble()));
        } else {
            k.nic.perGpu = nic->doubleOr("per_gpu", 1, 0, 16);
        }
        const double nics = k.nic.perGpu * k.gpusPerNode;
        if (!k.server && std::fabs(nics - std::round(nics)) > 1e-9)
            nic->at("per_gpu").fail("expected a value that gives whole NICs per server ("
                                    + std::to_string(k.gpusPerNode) + " GPUs x "
                                    + formatNumber(k.nic.perGpu) + " is not a whole number)");
        const int whole = static_cast<int>(std::lround(nics));
        if (!k.server && whole > 0
            && (whole > k.gpusPerNode ? whole % k.gpusPerNode : k.gpusPerNode % whole) != 0)
            nic->at("per_gpu").fail("expected NICs to be shared evenly: " + std::to_string(whole)
                                    + " NICs for " + std::to_string(k.gpusPerNode)
                                    + " GPUs per server");
        k.nic.model = nic->stringOr("model", "");
        if (catalog && !k.nic.model.empty() && !catalog->nic(k.nic.model)) {
            std::string ids;
            for (const NicModel &m : catalog->nics())
                ids += (ids.empty() ? "" : ", ") + m.id;
            nic->at("model").fail("unknown NIC model " + quote(k.nic.model)
                                  + " (expected one of: " + ids + ")");
        }
        // The servers of different NVLink domains reach each other only through NICs.
        if (whole == 0 && k.domainCount() > 1)
            nic->at("per_gpu").fail("expected NICs: with 0 per GPU the "
                                    + std::to_string(k.domainCount())
                                    + " NVLink domains cannot reach each other");
    }
    if (const auto fabric = c.find("fabric")) {
        fabric->requireObject();
        if (const auto kind = fabric->find("kind")) {
            const std::string s = kind->toChoice({"rail-optimized", "single-switch", "three-tier"});
            k.fabric.kind = s == "single-switch" ? FabricKind::SingleSwitch
                            : s == "three-tier"  ? FabricKind::ThreeTier
                                                 : FabricKind::RailOptimized;
        }
        k.fabric.oversubscription = fabric->doubleOr("oversubscription", 1.0, 1.0, 64.0);
        k.fabric.sharp = fabric->boolOr("sharp", false);
    }
    if (const auto tuning = c.find("tuning")) {
        tuning->requireObject();
        k.tuning.nvls = tuning->boolOr("nvls", true);
        k.tuning.qpsPerConnection = tuning->intOr("qps_per_connection", 1, 1, 128);
        k.tuning.efficiency = tuning->optDouble("efficiency", 0.01, 1.0);
        k.tuning.adaptiveRouting = tuning->optBool("adaptive_routing");
    }
    k.pricePerGpuHour = c.optDouble("price_per_gpu_hour", 0, 1e4);
    if (const auto faults = c.find("faults"))
        k.faults = readFaults(*faults);
    return k;
}

ModelConfig readModel(const JsonCursor &c)
{
    c.requireObject();
    ModelConfig m;
    if (const auto preset = c.find("preset")) {
        m.preset = preset->toString();
        if (!findModelPreset(m.preset))
            preset->fail("unknown model preset " + quote(m.preset)
                         + " (expected one of: " + modelPresetList() + ")");
    }
    constexpr int big = 1 << 24;
    m.layers = c.optInt("layers", 1, 100000);
    m.hidden = c.optInt("hidden", 1, big);
    m.ffn = c.optInt("ffn", 1, big);
    m.heads = c.optInt("heads", 1, 100000);
    m.kvHeads = c.optInt("kv_heads", 1, 100000);
    m.headDim = c.optInt("head_dim", 1, 100000);
    m.vocab = c.optInt("vocab", 1, big);
    m.gatedMlp = c.optBool("gated_mlp");
    if (const auto moe = c.find("moe")) {
        moe->requireObject();
        MoeOverrides o;
        o.experts = moe->optInt("experts", 0, 100000);
        o.topK = moe->optInt("top_k", 1, 100000);
        o.expertFfn = moe->optInt("expert_ffn", 1, big);
        o.sharedExperts = moe->optInt("shared_experts", 0, 1000);
        o.moeLayers = moe->optInt("moe_layers", 0, 100000);
        m.moe = o;
    }
    if (const auto mla = c.find("mla")) {
        mla->requireObject();
        MlaOverrides o;
        o.qLoraRank = mla->optInt("q_lora_rank", 0, big);
        o.kvLoraRank = mla->optInt("kv_lora_rank", 1, big);
        o.qkNopeHeadDim = mla->optInt("qk_nope_head_dim", 1, 100000);
        o.qkRopeHeadDim = mla->optInt("qk_rope_head_dim", 1, 100000);
        o.vHeadDim = mla->optInt("v_head_dim", 1, 100000);
        m.mla = o;
    }
    if (const auto sw = c.find("sliding_window")) {
        sw->requireObject();
        SlidingWindowOverrides o;
        o.window = sw->optInt("window", 1, 1 << 24);
        o.layers = sw->optInt("layers", 0, 100000);
        m.slidingWindow = o;
    }
    m.gluClamp = c.optDouble("glu_clamp", 0, 1e4);
    m.linearBias = c.optBool("linear_bias");
    if (const auto rope = c.find("rope_scaling"))
        m.yarnRope = rope->toChoice({"none", "yarn"}) == "yarn";
    if (const auto norm = c.find("norm"))
        m.layerNorm = norm->toChoice({"layernorm", "rmsnorm"}) == "layernorm";
    if (const auto position = c.find("position"))
        m.rotary = position->toChoice({"rope", "learned"}) == "rope";
    m.dropout = c.optBool("dropout");
    const ResolvedModel r = resolveModel(m);
    if (!r.error.empty())
        c.fail(r.error);
    return m;
}

TrainingConfig readTraining(const JsonCursor &c)
{
    c.requireObject();
    TrainingConfig t;
    // A named stack first: its defaults stand under the keys given beside it.
    const StackProfile *stack = nullptr;
    if (const auto st = c.find("stack")) {
        std::vector<std::string> ids;
        for (const StackProfile &p : stackProfiles())
            ids.push_back(p.id);
        stack = findStack(st->toChoice(ids));
        applyStackDefaults(t, *stack);
    }
    t.seqLen = c.intOr("seq_len", t.seqLen, 1, 1 << 24);
    t.globalBatch = c.intOr("global_batch", t.globalBatch, 1, 1 << 26);
    t.microBatch = c.intOr("micro_batch", t.microBatch, 1, 1 << 20);
    if (const auto p = c.find("precision"))
        t.precision = p->toChoice({"bf16", "fp8"}) == "fp8" ? Precision::Fp8 : Precision::Bf16;
    if (const auto r = c.find("recompute")) {
        const std::string s = r->toChoice({"none", "selective", "full"});
        t.recompute = s == "none"   ? Recompute::None
                      : s == "full" ? Recompute::Full
                                    : Recompute::Selective;
    }
    if (const auto a = c.find("attention"))
        attentionKernelFromString(
                a->toChoice({"flash", "materialized", "fa1", "triton", "fa2", "fa3", "cudnn"}),
                t.attention);
    t.moeForceBalance = c.boolOr("moe_force_balance", t.moeForceBalance);
    t.compile = c.boolOr("compile", t.compile);
    t.offloadLayers = c.intOr("cpu_offload_layers", 0, 0, 1 << 20);
    t.recomputeLayers = c.intOr("recompute_layers", 0, 0, 1 << 20);
    if (const auto r = c.find("recompute_modules")) {
        r->requireArray();
        std::vector<std::string> names;
        for (const auto &[name, bit] : recomputeModuleNames())
            names.push_back(name);
        if (r->size() > names.size())
            r->fail("expected at most " + std::to_string(names.size())
                    + " modules, each named once");
        t.recomputeModules = 0;
        for (std::size_t i = 0; i < r->size(); ++i) {
            const JsonCursor entry = r->at(i);
            const std::string name = entry.toChoice(names);
            const auto at = std::find(names.begin(), names.end(), name);
            const unsigned bit = recomputeModuleNames()[std::size_t(at - names.begin())].second;
            if (t.recomputeModules & bit)
                entry.fail("\"" + name + "\" is named twice");
            t.recomputeModules |= bit;
        }
    }
    if (const auto d = c.find("moe_dispatcher"))
        t.moeDispatcher = d->toChoice({"alltoall", "deepep"}) == "deepep" ? MoeDispatcher::DeepEP
                                                                          : MoeDispatcher::AllToAll;
    if (const auto o = c.find("optimizer")) {
        o->requireObject();
        t.optimizer.distributed = o->boolOr("distributed", true);
        t.optimizer.zeroStage = o->intOr("zero_stage", t.optimizer.distributed ? 1 : 0, 0, 3);
        t.optimizer.fsdp = o->boolOr("fsdp", false);
        if (stack)
            t.optimizer.gradReduceFp32 = stackGradReduceFp32(*stack, t.optimizer.fsdp);
        t.optimizer.gradReduceFp32 = o->boolOr("grad_reduce_fp32", t.optimizer.gradReduceFp32);
        t.optimizer.fp8ParamGather = o->boolOr("fp8_param_gather", false);
        t.optimizer.bucketParams = o->doubleOr("bucket_params", 0, 1e3, 1e12);
        t.optimizer.shardGroup = o->intOr("shard_group", 0, 0, 1 << 20);
    }
    if (const auto o = c.find("overlap")) {
        o->requireObject();
        t.overlap.dp = o->boolOr("dp", t.overlap.dp);
        t.overlap.tp = o->boolOr("tp", t.overlap.tp);
        t.overlap.pp = o->boolOr("pp", t.overlap.pp);
        t.overlap.ep = o->boolOr("ep", t.overlap.ep);
    }
    return t;
}

ParallelConfig readParallel(const JsonCursor &c)
{
    c.requireObject();
    ParallelConfig p;
    p.tp = c.intOr("tp", 1, 1, kMaxGpus);
    p.cp = c.intOr("cp", 1, 1, kMaxGpus);
    p.ep = c.intOr("ep", 1, 1, kMaxGpus);
    p.pp = c.intOr("pp", 1, 1, kMaxGpus);
    p.vp = c.intOr("vp", 1, 1, 1024);
    p.dp = c.optInt("dp", 1, kMaxGpus);
    p.etp = c.optInt("etp", 1, kMaxGpus);
    p.sequenceParallel = c.optBool("sequence_parallel");
    p.attentionDp = detail::readAttentionDp(c);
    if (const auto order = c.find("order")) {
        p.order = order->toString();
        checkOrder(*order, p.order);
    }
    return p;
}

} // namespace

Layout parseLayout(const std::string &text, const std::string &file)
{
    return parseLayout(text, file, &Catalog::builtin());
}

namespace {

Layout readLayout(const std::string &text, const std::string &file, const Catalog *catalog)
{
    Json doc = parseJsonText(text, file);
    const JsonCursor root(doc, file);
    root.requireObject();
    const JsonCursor format = root.at("format");
    if (format.toString() != "railyard-layout")
        format.expected("\"railyard-layout\"");
    const JsonCursor version = root.at("version");
    const std::int64_t v = version.toInt(1, 1'000'000);
    if (v > kLayoutFormatVersion)
        version.fail("version " + std::to_string(v) + " is newer than this Railyard reads (up to "
                     + std::to_string(kLayoutFormatVersion) + "); update Railyard to open it");

    Layout l;
    l.title = root.stringOr("title", "");
    l.notes = root.stringOr("notes", "");
    l.cluster = readCluster(root.at("cluster"), catalog, v);
    if (const auto m = root.find("model"))
        l.model = readModel(*m);
    if (const auto t = root.find("training"))
        l.training = readTraining(*t);
    if (const auto s = root.find("serving")) {
        if (root.has("training"))
            s->fail("a layout carries either \"training\" or \"serving\", not both (remove "
                    "one of them)");
        l.serving = detail::readServing(*s);
    }
    if (const auto p = root.find("parallel"))
        l.parallel = readParallel(*p);
    if (l.serving)
        detail::checkServingLayout(root, l);
    if (const auto m = root.find("mapping")) {
        m->requireArray();
        const int gpus = l.cluster.gpuCount();
        std::vector<bool> used(static_cast<std::size_t>(gpus), false);
        for (std::size_t i = 0; i < m->size(); ++i) {
            const JsonCursor e = m->at(i);
            const int g = static_cast<int>(e.toInt(0, gpus - 1));
            if (used[static_cast<std::size_t>(g)])
                e.fail("GPU " + std::to_string(g) + " is mapped to two ranks");
            used[static_cast<std::size_t>(g)] = true;
            l.mapping.push_back(g);
        }
        const std::int64_t ranks = l.serving ? detail::servingRanks(l)
                                             : sizeProduct({l.parallel.tp,
                                                            l.parallel.cp,
                                                            l.parallel.pp,
                                                            l.dataParallel()});
        if (static_cast<std::int64_t>(l.mapping.size()) != ranks)
            m->fail("expected one GPU per rank: " + sizeText(ranks) + " entries ("
                    + (l.serving && l.serving->disaggregated ? "the prefill and decode pools' GPUs"
                       : l.serving                           ? "TP x PP x DP"
                                                             : "TP x CP x PP x DP")
                    + "), got " + std::to_string(l.mapping.size()));
    }
    if (const auto view = root.find("view")) {
        view->requireObject();
        l.view = view->value();
    }
    l.original = std::move(doc);
    return l;
}

} // namespace

Layout parseLayout(const std::string &text, const std::string &file, const Catalog *catalog)
{
    try {
        return readLayout(text, file, catalog);
    } catch (const Json::exception &e) {
        // Every check above goes through JsonCursor; this is a safety net so that nothing from
        // nlohmann reaches the user without the file's name.
        throw InputError(file, "", "cannot read the layout: " + echo(e.what(), 200));
    }
}

std::string readLayoutText(const std::string &path)
{
    return readBoundedFile(path, kMaxJsonBytes, "a layout file", "a layout");
}

Layout readLayoutFile(const std::string &path)
{
    return parseLayout(readLayoutText(path), path);
}

} // namespace railyard::engine
