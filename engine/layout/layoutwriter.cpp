// Writing a layout file: a Layout to the JSON of the current format, keys the reader did not know
// kept where they were, whole numbers written without a fraction.
#include "layout/layout.h"

#include "base/outputfile.h"
#include "base/units.h"
#include "layout/layoutio_p.h"
#include "layout/softwarestack.h"

#include <cmath>
#include <ostream>

namespace railyard::engine {

namespace {

// Whole numbers are written without a fraction ("400", not "400.0"), as a person would.
Json num(double v)
{
    if (v == std::floor(v) && std::fabs(v) < 1e15)
        return static_cast<std::int64_t>(v);
    return v;
}

template<typename T>
void put(Json &obj, const char *key, const std::optional<T> &value)
{
    if (!value)
        obj.erase(key);
    else if constexpr (std::is_same_v<T, double>)
        obj[key] = num(*value);
    else
        obj[key] = *value;
}

Json &child(Json &obj, const char *key)
{
    Json &c = obj[key];
    if (!c.is_object())
        c = Json::object();
    return c;
}

void writeTraining(Json &tj, const TrainingConfig &t)
{
    if (!t.stack.empty())
        tj["stack"] = t.stack;
    else
        tj.erase("stack");
    tj["seq_len"] = t.seqLen;
    tj["global_batch"] = t.globalBatch;
    tj["micro_batch"] = t.microBatch;
    tj["precision"] = toString(t.precision);
    tj["recompute"] = toString(t.recompute);
    tj["attention"] = toString(t.attention);
    tj["moe_dispatcher"] = toString(t.moeDispatcher);
    if (t.moeForceBalance)
        tj["moe_force_balance"] = true;
    else
        tj.erase("moe_force_balance");
    // Written where it is not the stack's default (true for the generic stack).
    const StackProfile *stack = findStack(t.stack);
    if (t.compile != (stack ? stack->compile : true))
        tj["compile"] = t.compile;
    else
        tj.erase("compile");
    if (t.offloadLayers > 0)
        tj["cpu_offload_layers"] = t.offloadLayers;
    else
        tj.erase("cpu_offload_layers");
    if (t.recomputeLayers > 0)
        tj["recompute_layers"] = t.recomputeLayers;
    else
        tj.erase("recompute_layers");
    // Kept whatever the recompute setting (as recompute_layers is), so a layout saved while
    // another is chosen gets its modules back when selective recomputation is chosen again.
    if (t.recomputeModules != kDefaultRecomputeModules) {
        Json modules = Json::array();
        for (const auto &[name, bit] : recomputeModuleNames())
            if (t.recomputeModules & bit)
                modules.push_back(name);
        tj["recompute_modules"] = modules;
    } else {
        tj.erase("recompute_modules");
    }
    Json &opt = child(tj, "optimizer");
    opt["distributed"] = t.optimizer.distributed;
    opt["zero_stage"] = t.optimizer.zeroStage;
    opt["fsdp"] = t.optimizer.fsdp;
    opt["grad_reduce_fp32"] = t.optimizer.gradReduceFp32;
    if (t.optimizer.fp8ParamGather)
        opt["fp8_param_gather"] = true;
    else
        opt.erase("fp8_param_gather");
    if (t.optimizer.bucketParams > 0)
        opt["bucket_params"] = t.optimizer.bucketParams;
    else
        opt.erase("bucket_params");
    if (t.optimizer.shardGroup > 0)
        opt["shard_group"] = t.optimizer.shardGroup;
    else
        opt.erase("shard_group");
    Json &ov = child(tj, "overlap");
    ov["dp"] = t.overlap.dp;
    ov["tp"] = t.overlap.tp;
    ov["pp"] = t.overlap.pp;
    ov["ep"] = t.overlap.ep;
}

} // namespace

Json layoutToJson(const Layout &l)
{
    Json out = l.original.get().is_object() ? l.original.get() : Json::object();
    out["format"] = "railyard-layout";
    // Format 1 while it says everything, so older Railyard builds still open the file.
    // Faults need a reader that knows them (one that ignored them would price a healthy
    // cluster): format 2, which builds before it refuse.
    out["version"] = l.cluster.server || !l.cluster.faults.empty() ? kLayoutFormatVersion : 1;
    if (!l.title.empty())
        out["title"] = l.title;
    else
        out.erase("title");
    if (!l.notes.empty())
        out["notes"] = l.notes;
    else
        out.erase("notes");

    const ClusterConfig &k = l.cluster;
    Json &c = child(out, "cluster");
    c["gpu"] = k.gpu;
    c["nodes"] = k.nodes;
    c["gpus_per_node"] = k.gpusPerNode;
    c["nvlink_domain"] = k.nvlinkDomain;
    put(c, "servers_per_rack", k.serversPerRack);
    Json &nic = child(c, "nic");
    if (!k.nic.model.empty())
        nic["model"] = k.nic.model;
    else
        nic.erase("model");
    nic["gbps"] = num(k.nic.gbitPerS);
    nic["per_gpu"] = num(k.nic.perGpu);
    Json &fabric = child(c, "fabric");
    fabric["kind"] = toString(k.fabric.kind);
    fabric["oversubscription"] = num(k.fabric.oversubscription);
    fabric["sharp"] = k.fabric.sharp;
    Json &tuning = child(c, "tuning");
    tuning["nvls"] = k.tuning.nvls;
    tuning["qps_per_connection"] = k.tuning.qpsPerConnection;
    put(tuning, "efficiency", k.tuning.efficiency);
    put(tuning, "adaptive_routing", k.tuning.adaptiveRouting);
    put(c, "price_per_gpu_hour", k.pricePerGpuHour);
    if (k.server)
        c["server"] = serverTemplateToJson(*k.server);
    else
        c.erase("server");
    if (!k.faults.empty())
        c["faults"] = faultsToJson(k.faults);
    else
        c.erase("faults");

    if (l.model) {
        const ModelConfig &m = *l.model;
        Json &mj = child(out, "model");
        if (!m.preset.empty())
            mj["preset"] = m.preset;
        else
            mj.erase("preset");
        put(mj, "layers", m.layers);
        put(mj, "hidden", m.hidden);
        put(mj, "ffn", m.ffn);
        put(mj, "heads", m.heads);
        put(mj, "kv_heads", m.kvHeads);
        put(mj, "head_dim", m.headDim);
        put(mj, "vocab", m.vocab);
        put(mj, "gated_mlp", m.gatedMlp);
        if (m.moe) {
            Json &moe = child(mj, "moe");
            put(moe, "experts", m.moe->experts);
            put(moe, "top_k", m.moe->topK);
            put(moe, "expert_ffn", m.moe->expertFfn);
            put(moe, "shared_experts", m.moe->sharedExperts);
            put(moe, "moe_layers", m.moe->moeLayers);
        } else {
            mj.erase("moe");
        }
        if (m.mla) {
            Json &mla = child(mj, "mla");
            put(mla, "q_lora_rank", m.mla->qLoraRank);
            put(mla, "kv_lora_rank", m.mla->kvLoraRank);
            put(mla, "qk_nope_head_dim", m.mla->qkNopeHeadDim);
            put(mla, "qk_rope_head_dim", m.mla->qkRopeHeadDim);
            put(mla, "v_head_dim", m.mla->vHeadDim);
        } else {
            mj.erase("mla");
        }
        if (m.slidingWindow) {
            Json &sw = child(mj, "sliding_window");
            put(sw, "window", m.slidingWindow->window);
            put(sw, "layers", m.slidingWindow->layers);
        } else {
            mj.erase("sliding_window");
        }
        put(mj, "glu_clamp", m.gluClamp);
        put(mj, "linear_bias", m.linearBias);
        if (m.yarnRope)
            mj["rope_scaling"] = *m.yarnRope ? "yarn" : "none";
        else
            mj.erase("rope_scaling");
        if (m.layerNorm)
            mj["norm"] = *m.layerNorm ? "layernorm" : "rmsnorm";
        else
            mj.erase("norm");
        if (m.rotary)
            mj["position"] = *m.rotary ? "rope" : "learned";
        else
            mj.erase("position");
        put(mj, "dropout", m.dropout);
    } else {
        out.erase("model");
    }

    if (l.serving) {
        out.erase("training");
        detail::writeServing(child(out, "serving"), *l.serving);
    } else {
        out.erase("serving");
        writeTraining(child(out, "training"), l.training);
    }

    const ParallelConfig &p = l.parallel;
    Json &pj = child(out, "parallel");
    pj["tp"] = p.tp;
    // Serving has no context parallelism or virtual stages: written only when the file had them.
    if (!l.serving || pj.contains("cp"))
        pj["cp"] = p.cp;
    pj["ep"] = p.ep;
    pj["pp"] = p.pp;
    if (!l.serving || pj.contains("vp"))
        pj["vp"] = p.vp;
    put(pj, "dp", p.dp);
    put(pj, "etp", p.etp);
    put(pj, "sequence_parallel", p.sequenceParallel);
    if (p.attentionDp)
        pj["attention_dp"] = detail::attentionDpJson(*p.attentionDp);
    else
        pj.erase("attention_dp");
    pj["order"] = p.order;

    if (!l.mapping.empty())
        out["mapping"] = l.mapping;
    else
        out.erase("mapping");
    if (!l.view.get().empty())
        out["view"] = l.view.get();
    else
        out.erase("view");
    return out;
}

std::string layoutToText(const Layout &layout)
{
    return layoutToJson(layout).dump(2) + "\n";
}

OutputTarget writeLayoutFile(const Layout &layout,
                             const std::string &path,
                             const std::vector<std::string> &inputs)
{
    const std::string text = layoutToText(layout);
    return writeOutputFile(
            path,
            [&](std::ostream &out) { out.write(text.data(), std::streamsize(text.size())); },
            inputs);
}

} // namespace railyard::engine
