// The layout document's `serving` section (DESIGN.md, "Serving (inference) workloads"): reading
// it with the JSON path of every problem, the checks that join it to the cluster and the
// parallel sizes, and writing it back.
#include "layout/layoutio_p.h"

#include "base/units.h"
#include "layout/servingstack.h"

#include <cmath>
#include <limits>

namespace railyard::engine::detail {

namespace {

constexpr int kMaxTokens = 1 << 24; // 16M tokens per request: past any model's context

Precision readPrecision(const JsonCursor &c)
{
    return *precisionFromString(c.toChoice({"bf16", "fp8", "fp4"}));
}

ServingPool readPool(const JsonCursor &c)
{
    c.requireObject();
    ServingPool p;
    p.tp = c.intOr("tp", 1, 1, kMaxGpus);
    p.ep = c.intOr("ep", 1, 1, kMaxGpus);
    p.pp = c.intOr("pp", 1, 1, kMaxGpus);
    p.replicas = c.intOr("replicas", 1, 1, kMaxGpus);
    p.attentionDp = readAttentionDp(c);
    return p;
}

SpeculativeConfig readSpeculative(const JsonCursor &c)
{
    c.requireObject();
    SpeculativeConfig s;
    const std::string method = c.at("method").toChoice({"mtp", "eagle", "draft"});
    s.method = method == "eagle"   ? SpeculativeMethod::Eagle
               : method == "draft" ? SpeculativeMethod::Draft
                                   : SpeculativeMethod::Mtp;
    s.draftTokens = c.intOr("draft_tokens", 1, 1, 64);
    if (const auto a = c.find("acceptance"))
        s.acceptance = a->toDouble(1.0, 1.0 + s.draftTokens);
    if (const auto d = c.find("draft_model")) {
        s.draftModel = d->toString();
        if (!findModelPreset(s.draftModel))
            d->fail("unknown model preset " + quote(s.draftModel)
                    + " (expected one of: " + modelPresetList() + ")");
    }
    if (s.method == SpeculativeMethod::Draft && s.draftModel.empty())
        c.fail("method \"draft\" needs \"draft_model\": the preset of the draft model");
    if (s.method == SpeculativeMethod::Draft && !s.acceptance)
        c.fail("method \"draft\" needs \"acceptance\" (mean tokens accepted per step): a draft "
               "model of your choice has no published rate");
    return s;
}

// Where a pool's sizes are wrong against the model-free rules (EP and attention DP divide TP).
void checkPoolSizes(const JsonCursor &at, int tp, int ep, std::optional<int> attentionDp)
{
    if (tp % ep != 0)
        at.fail("ep (" + std::to_string(ep) + ") must divide tp (" + std::to_string(tp)
                + "): a serving instance splits its experts over its TP ranks");
    if (attentionDp && *attentionDp > 0 && tp % *attentionDp != 0)
        at.fail("attention_dp (" + std::to_string(*attentionDp) + ") must divide tp ("
                + std::to_string(tp) + ")");
}

} // namespace

std::optional<int> readAttentionDp(const JsonCursor &parallel)
{
    const auto a = parallel.find("attention_dp");
    if (!a)
        return std::nullopt;
    if (a->value().is_boolean())
        return a->toBool() ? 0 : 1;
    return static_cast<int>(a->toInt(1, kMaxGpus));
}

ServingConfig readServing(const JsonCursor &c)
{
    c.requireObject();
    ServingConfig s;
    if (const auto st = c.find("stack")) {
        std::vector<std::string> ids;
        for (const ServingStackProfile &p : servingStackProfiles())
            ids.push_back(p.id);
        s.stack = st->toChoice(ids);
    }
    if (const auto p = c.find("precision"))
        s.precision = readPrecision(*p);
    if (const auto p = c.find("kv_precision"))
        s.kvPrecision = readPrecision(*p);
    if (const auto f = c.find("fp8_scaling")) {
        s.fp8BlockScaled = f->toChoice({"tensor", "block"}) == "block";
        if (s.fp8BlockScaled && s.precision != Precision::Fp8)
            f->fail(std::string("\"block\" scales an FP8 checkpoint: it needs \"precision\": "
                                "\"fp8\" (this layout says \"")
                    + toString(s.precision) + "\")");
    }
    s.inputTokens = static_cast<int>(c.at("input_tokens").toInt(1, kMaxTokens));
    s.outputTokens = static_cast<int>(c.at("output_tokens").toInt(1, kMaxTokens));
    s.concurrency = c.optInt("concurrency", 1, 1 << 24);
    s.requestRate = c.optDouble("request_rate", 1e-9, 1e9);
    if (s.concurrency && s.requestRate)
        c.at("request_rate")
                .fail("give either \"concurrency\" (requests in flight per replica, closed loop) "
                      "or \"request_rate\" (requests/s offered, open loop), not both");
    if (!s.concurrency && !s.requestRate)
        c.fail("expected \"concurrency\" (requests in flight per replica: the decode batch "
               "benchmarks sweep) or \"request_rate\" (requests/s offered to the cluster)");
    s.maxPrefillTokens = c.intOr("max_prefill_tokens", 8192, 1, kMaxTokens);
    s.cudaGraphs = c.optBool("cuda_graphs");
    if (const auto d = c.find("moe_dispatcher"))
        s.moeDispatcher = d->toChoice({"alltoall", "deepep"}) == "deepep" ? MoeDispatcher::DeepEP
                                                                          : MoeDispatcher::AllToAll;
    if (const auto d = c.find("disaggregated")) {
        d->requireObject();
        DisaggregationConfig dc;
        dc.prefill = readPool(d->at("prefill"));
        dc.decode = readPool(d->at("decode"));
        for (const char *side : {"prefill", "decode"}) {
            const ServingPool &p = side[0] == 'p' ? dc.prefill : dc.decode;
            checkPoolSizes(d->at(side), p.tp, p.ep, p.attentionDp);
        }
        s.disaggregated = dc;
    }
    if (const auto sp = c.find("speculative"))
        s.speculative = readSpeculative(*sp);
    if (const auto ph = c.find("phase"))
        s.phase = ph->toChoice({"prefill", "decode"}) == "prefill" ? ServingPhase::Prefill
                                                                   : ServingPhase::Decode;
    return s;
}

std::int64_t servingRanks(const Layout &l)
{
    if (l.serving && l.serving->disaggregated) {
        const DisaggregationConfig &d = *l.serving->disaggregated;
        const std::int64_t a = d.prefill.gpus(), b = d.decode.gpus();
        return a > std::numeric_limits<std::int64_t>::max() - b
                       ? std::numeric_limits<std::int64_t>::max()
                       : a + b;
    }
    return sizeProduct({l.parallel.tp, l.parallel.pp, l.dataParallel()});
}

void checkServingLayout(const JsonCursor &root, const Layout &l)
{
    const ServingConfig &s = *l.serving;
    const JsonCursor serving = root.at("serving");
    const auto parallel = root.find("parallel");
    const int gpus = l.cluster.gpuCount();
    if (l.parallel.cp != 1)
        parallel->at("cp").fail("context parallelism is not priced for serving (expected 1, got "
                                + std::to_string(l.parallel.cp) + ")");
    if (s.disaggregated) {
        const DisaggregationConfig &d = *s.disaggregated;
        const std::int64_t need = servingRanks(l);
        if (need > gpus)
            serving.at("disaggregated")
                    .fail("the prefill pool (" + sizeText(d.prefill.gpus())
                          + " GPUs: tp x pp x replicas) and the decode pool ("
                          + sizeText(d.decode.gpus()) + ") need " + sizeText(need)
                          + " GPUs, but the cluster has " + std::to_string(gpus));
        return;
    }
    const JsonCursor at = parallel ? *parallel : root;
    checkPoolSizes(at, l.parallel.tp, l.parallel.ep, l.parallel.attentionDp);
    const std::int64_t need = servingRanks(l);
    if (need > gpus || need < 1)
        (parallel && parallel->has("dp") ? parallel->at("dp") : at)
                .fail("TP x PP x DP = " + std::to_string(l.parallel.tp) + " x "
                      + std::to_string(l.parallel.pp) + " x " + std::to_string(l.dataParallel())
                      + " = " + sizeText(need) + " GPUs, but the cluster has "
                      + std::to_string(gpus));
}

Json attentionDpJson(int attentionDp)
{
    return attentionDp == 0 ? Json(true) : Json(attentionDp);
}

namespace {

Json &childObject(Json &obj, const char *key)
{
    Json &c = obj[key];
    if (!c.is_object())
        c = Json::object();
    return c;
}

void writePool(Json &out, const ServingPool &p)
{
    out["tp"] = p.tp;
    out["ep"] = p.ep;
    out["pp"] = p.pp;
    out["replicas"] = p.replicas;
    if (p.attentionDp)
        out["attention_dp"] = attentionDpJson(*p.attentionDp);
    else
        out.erase("attention_dp");
}

Json number(double v)
{
    if (v == std::floor(v) && std::fabs(v) < 1e15)
        return static_cast<std::int64_t>(v);
    return v;
}

} // namespace

void writeServing(Json &sj, const ServingConfig &s)
{
    const auto optional = [&](const char *key, bool present, const Json &value) {
        if (present)
            sj[key] = value;
        else
            sj.erase(key);
    };
    optional("stack", !s.stack.empty(), s.stack);
    sj["precision"] = toString(s.precision);
    optional("fp8_scaling", s.fp8BlockScaled, "block");
    optional("kv_precision",
             s.kvPrecision.has_value(),
             s.kvPrecision ? toString(*s.kvPrecision) : "");
    sj["input_tokens"] = s.inputTokens;
    sj["output_tokens"] = s.outputTokens;
    optional("concurrency", s.concurrency.has_value(), s.concurrency.value_or(0));
    optional("request_rate", s.requestRate.has_value(), number(s.requestRate.value_or(0)));
    sj["max_prefill_tokens"] = s.maxPrefillTokens;
    optional("cuda_graphs", s.cudaGraphs.has_value(), s.cudaGraphs.value_or(false));
    optional("moe_dispatcher",
             s.moeDispatcher.has_value(),
             s.moeDispatcher ? toString(*s.moeDispatcher) : "");
    if (s.disaggregated) {
        Json &d = childObject(sj, "disaggregated");
        writePool(childObject(d, "prefill"), s.disaggregated->prefill);
        writePool(childObject(d, "decode"), s.disaggregated->decode);
    } else {
        sj.erase("disaggregated");
    }
    if (s.speculative) {
        Json &sp = childObject(sj, "speculative");
        sp["method"] = toString(s.speculative->method);
        sp["draft_tokens"] = s.speculative->draftTokens;
        if (s.speculative->acceptance)
            sp["acceptance"] = number(*s.speculative->acceptance);
        else
            sp.erase("acceptance");
        if (!s.speculative->draftModel.empty())
            sp["draft_model"] = s.speculative->draftModel;
        else
            sp.erase("draft_model");
    } else {
        sj.erase("speculative");
    }
    optional("phase", s.phase != ServingPhase::Both, toString(s.phase));
}

} // namespace railyard::engine::detail
