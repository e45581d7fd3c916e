// The layout format's `serving` section (DESIGN.md, "Serving (inference) workloads"): every key
// reads as written, a layout round-trips through save and load, the presets carry what serving
// needs (MLA, sliding windows), and bad input is a clear InputError naming the key.
#include "base/inputerror.h"
#include "base/jsoncursor.h"
#include "layout/layout.h"
#include "layout/servingstack.h"
#include "serving/servingevaluate.h"
#include "step/evaluate.h"
#include "topology/topology.h"

#include <QTest>

using namespace railyard::engine;

namespace {

// A serving layout: Llama 3 70B at TP8 on two H100 servers, vLLM, FP8.
Json servingDoc()
{
    return Json::parse(R"({
      "format": "railyard-layout", "version": 1,
      "title": "70B on two H100 servers",
      "cluster": {"gpu": "H100-SXM", "nodes": 2, "gpus_per_node": 8, "nvlink_domain": 8},
      "model": {"preset": "llama3.1-70b"},
      "serving": {"stack": "vllm", "precision": "fp8", "input_tokens": 1024,
                  "output_tokens": 1024, "concurrency": 64},
      "parallel": {"tp": 8}
    })");
}

Layout parse(const Json &doc)
{
    return parseLayout(doc.dump(2), "serving.railyard.json");
}

} // namespace

class TestServingLayout : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void readsEveryKey()
    {
        Json doc = servingDoc();
        doc["cluster"]["nodes"] = 4;
        Json &s = doc["serving"];
        s["kv_precision"] = "bf16";
        s["max_prefill_tokens"] = 4096;
        s["cuda_graphs"] = false;
        s["moe_dispatcher"] = "deepep";
        s["phase"] = "decode";
        s["fp8_scaling"] = "block";
        s["speculative"] = Json::parse(
                R"({"method": "eagle", "draft_tokens": 3, "acceptance": 2.5})");
        s["disaggregated"] = Json::parse(R"({"prefill": {"tp": 4, "replicas": 2},
                                             "decode": {"tp": 8, "ep": 8, "replicas": 2,
                                                        "attention_dp": true}})");
        doc["model"] = Json::parse(R"({"preset": "deepseek-v3"})");
        const Layout l = parse(doc);
        QVERIFY(l.isServing());
        const ServingConfig &c = *l.serving;
        QCOMPARE(c.stack, std::string("vllm"));
        QCOMPARE(c.precision, Precision::Fp8);
        QVERIFY(c.fp8BlockScaled);
        QCOMPARE(c.kvCache(), Precision::Bf16);
        QCOMPARE(c.inputTokens, 1024);
        QCOMPARE(c.outputTokens, 1024);
        QCOMPARE(*c.concurrency, 64);
        QVERIFY(!c.requestRate);
        QCOMPARE(c.maxPrefillTokens, 4096);
        QCOMPARE(*c.cudaGraphs, false);
        QCOMPARE(*c.moeDispatcher, MoeDispatcher::DeepEP);
        QCOMPARE(c.phase, ServingPhase::Decode);
        QCOMPARE(c.speculative->method, SpeculativeMethod::Eagle);
        QCOMPARE(c.speculative->draftTokens, 3);
        QCOMPARE(*c.speculative->acceptance, 2.5);
        QCOMPARE(c.disaggregated->prefill.tp, 4);
        QCOMPARE(c.disaggregated->prefill.replicas, 2);
        QCOMPARE(c.disaggregated->decode.ep, 8);
        QCOMPARE(*c.disaggregated->decode.attentionDp, 0); // true: the whole TP group
    }

    // The KV cache's default follows the weights: FP8 or FP4 weights keep an FP8 cache.
    void kvPrecisionDefault()
    {
        Json doc = servingDoc();
        QCOMPARE(parse(doc).serving->kvCache(), Precision::Fp8);
        doc["serving"]["precision"] = "fp4";
        QCOMPARE(parse(doc).serving->kvCache(), Precision::Fp8);
        doc["serving"]["precision"] = "bf16";
        QCOMPARE(parse(doc).serving->kvCache(), Precision::Bf16);
        QCOMPARE(bytesPerValue(Precision::Fp4), 0.5625); // NVFP4: 4 bits + an 8-bit scale per 16
    }

    void requestRateInsteadOfConcurrency()
    {
        Json doc = servingDoc();
        doc["serving"].erase("concurrency");
        doc["serving"]["request_rate"] = 2.5;
        const Layout l = parse(doc);
        QVERIFY(!l.serving->concurrency);
        QCOMPARE(*l.serving->requestRate, 2.5);
    }

    // Save and load give the same layout; saving again gives the same text; `training` is not
    // written for a serving layout, nor `serving` for a training one.
    void roundTrip_data()
    {
        QTest::addColumn<QString>("text");
        QTest::newRow("aggregated") << QString::fromStdString(servingDoc().dump());
        Json d = servingDoc();
        d["cluster"]["nodes"] = 4;
        d["model"] = Json::parse(R"({"preset": "deepseek-r1", "mla": {"kv_lora_rank": 256}})");
        d["serving"]["disaggregated"] = Json::parse(R"({"prefill": {"tp": 8, "ep": 8,
            "attention_dp": 4}, "decode": {"tp": 8, "ep": 8, "replicas": 2, "attention_dp": true}})");
        d["serving"]["speculative"] = Json::parse(R"({"method": "mtp", "draft_tokens": 2})");
        d["serving"]["kv_precision"] = "fp8";
        d["serving"]["fp8_scaling"] = "block";
        d["serving"].erase("concurrency");
        d["serving"]["request_rate"] = 0.75;
        QTest::newRow("disaggregated") << QString::fromStdString(d.dump());
        Json g = servingDoc();
        g["model"] = Json::parse(R"({"preset": "gpt-oss-120b", "sliding_window": {"window": 256}})");
        g["parallel"] = Json::parse(R"({"tp": 4, "ep": 4, "attention_dp": 2, "dp": 2})");
        g["serving"]["phase"] = "prefill";
        QTest::newRow("sliding window") << QString::fromStdString(g.dump());
    }
    void roundTrip()
    {
        QFETCH(QString, text);
        const Layout a = parseLayout(text.toStdString(), "a.railyard.json");
        const std::string saved = layoutToText(a);
        const Layout b = parseLayout(saved, "b.railyard.json");
        QVERIFY(b.sameContent(a));
        QCOMPARE(QString::fromStdString(layoutToText(b)), QString::fromStdString(saved));
        const Json j = Json::parse(saved);
        QVERIFY(j.contains("serving"));
        QVERIFY(!j.contains("training"));
        QVERIFY2(!j["parallel"].contains("cp") && !j["parallel"].contains("vp"),
                 "a serving layout's parallel section has no training-only keys added");
        QCOMPARE(b.serving->fp8BlockScaled, a.serving->fp8BlockScaled);
        QCOMPARE(j["serving"].contains("fp8_scaling"), a.serving->fp8BlockScaled);
        QVERIFY(b.model->mla == a.model->mla);
        QVERIFY(b.model->slidingWindow == a.model->slidingWindow);
    }

    void trainingLayoutWritesNoServing()
    {
        Json doc = servingDoc();
        doc.erase("serving");
        const Json j = Json::parse(layoutToText(parse(doc)));
        QVERIFY(j.contains("training"));
        QVERIFY(!j.contains("serving"));
    }

    // DeepSeek-V3 (and R1) carry MLA's dimensions from the model's config.json; gpt-oss its
    // alternating sliding-window layers; Llama 3.1 / 3.3 70B Llama 3 70B's dimensions.
    void presets()
    {
        for (const char *name : {"deepseek-v3", "deepseek-r1"}) {
            const ModelDims *m = findModelPreset(name);
            QVERIFY2(m, name);
            QCOMPARE(m->qLoraRank, 1536);
            QCOMPARE(m->kvLoraRank, 512);
            QCOMPARE(m->headDim, 128); // qk_nope_head_dim
            QCOMPARE(m->qkRopeDim, 64);
            QCOMPARE(m->vHeadDim, 128);
            QVERIFY(m->isMla());
            QCOMPARE(m->denseLayers(), 3);
        }
        const ModelDims *oss = findModelPreset("gpt-oss-120b");
        QVERIFY(oss);
        QCOMPARE(oss->slidingWindow, 128);
        QCOMPARE(oss->slidingLayers, 18);
        QCOMPARE(oss->experts, 128);
        QCOMPARE(oss->topK, 4);
        // About 117B parameters (OpenAI's model card: 116.8B).
        QVERIFY2(std::abs(oss->totalParams() / 116.8e9 - 1) < 0.03,
                 qPrintable(QString::number(oss->totalParams() / 1e9)));
        const ModelDims *l3 = findModelPreset("llama3-70b");
        for (const char *name : {"llama3.1-70b", "llama3.3-70b"}) {
            ModelDims m = *findModelPreset(name);
            m.name = l3->name;
            QVERIFY2(m == *l3, name);
        }
        QVERIFY(findModelPreset("qwen3-235b-a22b"));
        // Overrides: mla and sliding_window keys beside a preset.
        Json doc = servingDoc();
        doc["model"] = Json::parse(R"({"preset": "deepseek-v3", "mla": {"kv_lora_rank": 256,
            "qk_rope_head_dim": 32}})");
        const ResolvedModel r = resolveModel(*parse(doc).model);
        QCOMPARE(r.dims.kvLoraRank, 256);
        QCOMPARE(r.dims.qkRopeDim, 32);
        QCOMPARE(r.dims.qLoraRank, 1536);
        // gpt-oss's operations beyond Llama's: from the preset, overridden, written back only
        // where the file gave them.
        QCOMPARE(oss->gluClamp, 7.0);
        QVERIFY(oss->linearBias && oss->yarnRope);
        QVERIFY(!l3->linearBias && !l3->yarnRope && l3->gluClamp == 0);
        doc["model"] = Json::parse(R"({"preset": "llama3-70b", "glu_clamp": 10,
            "linear_bias": true, "rope_scaling": "yarn"})");
        const Layout custom = parse(doc);
        const ResolvedModel c = resolveModel(*custom.model);
        QCOMPARE(c.dims.gluClamp, 10.0);
        QVERIFY(c.dims.linearBias && c.dims.yarnRope);
        const Json back = layoutToJson(custom)["model"];
        QCOMPARE(back["glu_clamp"].get<double>(), 10.0);
        QCOMPARE(back["linear_bias"].get<bool>(), true);
        QCOMPARE(back["rope_scaling"].get<std::string>(), std::string("yarn"));
        doc["model"] = Json::parse(R"({"preset": "gpt-oss-120b", "rope_scaling": "none"})");
        QVERIFY(!resolveModel(*parse(doc).model).dims.yarnRope);
        QVERIFY(!layoutToJson(parse(servingDoc())).at("model").contains("rope_scaling"));
        // The norm, the positions and dropout: GPT-style presets (non-gated MLP) have
        // LayerNorm, learned positions and dropout, the gated ones RMSNorm and RoPE without;
        // a file overrides each (MPT: a GeLU MLP without dropout), written back only where
        // given.
        const ModelDims *gpt = findModelPreset("gpt3-175b");
        QVERIFY(gpt && gpt->layerNorm && !gpt->rotary && gpt->dropout);
        QVERIFY(!l3->layerNorm && l3->rotary && !l3->dropout);
        doc["model"] = Json::parse(R"({"layers": 32, "hidden": 4096, "heads": 32, "ffn": 16384,
            "vocab": 50368, "gated_mlp": false, "dropout": false})");
        const Layout mpt = parse(doc);
        const ModelDims m = resolveModel(*mpt.model).dims;
        QVERIFY(m.layerNorm && !m.rotary && !m.dropout);
        QVERIFY(!layoutToJson(mpt)["model"].contains("norm"));
        QCOMPARE(layoutToJson(mpt)["model"]["dropout"].get<bool>(), false);
        doc["model"] = Json::parse(R"({"preset": "gpt3-5b", "norm": "rmsnorm",
            "position": "rope"})");
        const Layout rms = parse(doc);
        const ModelDims r2 = resolveModel(*rms.model).dims;
        QVERIFY(!r2.layerNorm && r2.rotary && r2.dropout);
        const Json rmsBack = layoutToJson(rms)["model"];
        QCOMPARE(rmsBack["norm"].get<std::string>(), std::string("rmsnorm"));
        QCOMPARE(rmsBack["position"].get<std::string>(), std::string("rope"));
        QCOMPARE(*parse(Json(layoutToJson(rms))).model, *rms.model);
    }

    // Every preset written out as a custom model (the Workload panel's "Custom..." does) is the
    // same model: MLA, sliding window, gpt-oss's operations, the norm, the positions and
    // dropout included.
    void presetsWrittenOutAsCustom()
    {
        for (const ModelDims &p : modelPresets()) {
            const ResolvedModel r = resolveModel(customModelConfig(p));
            QVERIFY2(r.error.empty(), (p.name + ": " + r.error).c_str());
            ModelDims back = r.dims;
            back.name = p.name;
            QVERIFY2(back == p, p.name.c_str());
        }
    }

    // The serving stacks are data with a description and their documented defaults.
    void stacks()
    {
        QCOMPARE(QString::fromStdString(servingStackList()),
                 QStringLiteral("vllm, sglang, trtllm, dynamo"));
        for (const ServingStackProfile &p : servingStackProfiles()) {
            QVERIFY(!p.description.empty());
            QVERIFY(p.memoryFraction > 0.5 && p.memoryFraction <= 1);
            QVERIFY(p.kvBlockTokens >= 1);
        }
        QCOMPARE(findServingStack("vllm")->kvBlockTokens, 16);
        QCOMPARE(findServingStack("trtllm")->kvBlockTokens, 32);
        QCOMPARE(findServingStack("sglang")->memoryFractionFor(8), 0.81);
        QVERIFY(findServingStack("dynamo")->kvLayerwise);
        QVERIFY(!findServingStack("nope"));
    }

    // Bad input: an InputError naming the file, the JSON path and what was expected.
    void badInput_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QStringList>("expected");
        const auto row = [](const char *name, const Json &doc, QStringList expected) {
            QTest::newRow(name) << QString::fromStdString(doc.dump()) << expected;
        };
        Json both = servingDoc();
        both["training"] = Json::parse(R"({"seq_len": 4096})");
        row("training and serving", both, {"/serving", "either \"training\" or \"serving\""});
        Json zero = servingDoc();
        zero["serving"]["input_tokens"] = 0;
        row("zero input tokens", zero, {"/serving/input_tokens", "from 1 to", "got 0"});
        Json negative = servingDoc();
        negative["serving"]["output_tokens"] = -5;
        row("negative output tokens", negative, {"/serving/output_tokens", "got -5"});
        Json missing = servingDoc();
        missing["serving"].erase("input_tokens");
        row("no input tokens", missing, {"/serving", "input_tokens"});
        Json conc = servingDoc();
        conc["serving"]["concurrency"] = 0;
        row("concurrency 0", conc, {"/serving/concurrency", "from 1 to", "got 0"});
        Json twoLoads = servingDoc();
        twoLoads["serving"]["request_rate"] = 1.0;
        row("concurrency and rate", twoLoads, {"/serving/request_rate", "not both"});
        Json noLoad = servingDoc();
        noLoad["serving"].erase("concurrency");
        row("no load", noLoad, {"/serving", "\"concurrency\"", "\"request_rate\""});
        Json rate = servingDoc();
        rate["serving"].erase("concurrency");
        rate["serving"]["request_rate"] = -1;
        row("negative rate", rate, {"/serving/request_rate"});
        Json stack = servingDoc();
        stack["serving"]["stack"] = "tgi";
        row("unknown stack", stack, {"/serving/stack", "\"vllm\"", "\"dynamo\""});
        Json precision = servingDoc();
        precision["serving"]["precision"] = "int4";
        row("unknown precision", precision, {"/serving/precision", "\"fp4\""});
        Json scaling = servingDoc();
        scaling["serving"]["fp8_scaling"] = "channel";
        row("unknown fp8 scaling", scaling, {"/serving/fp8_scaling", "\"tensor\"", "\"block\""});
        Json blockBf16 = servingDoc();
        blockBf16["serving"]["precision"] = "bf16";
        blockBf16["serving"]["fp8_scaling"] = "block";
        row("block scaling without fp8",
            blockBf16,
            {"/serving/fp8_scaling", "\"precision\": \"fp8\"", "says \"bf16\""});
        Json split = servingDoc();
        split["serving"]["disaggregated"] = Json::parse(
                R"({"prefill": {"tp": 8, "replicas": 2}, "decode": {"tp": 8, "replicas": 1}})");
        row("split needs more GPUs",
            split,
            {"/serving/disaggregated", "24 GPUs", "the cluster has 16", "prefill pool (16 GPUs"});
        Json pool = servingDoc();
        pool["serving"]["disaggregated"] = Json::parse(
                R"({"prefill": {"tp": 0}, "decode": {"tp": 8}})");
        row("pool tp 0", pool, {"/serving/disaggregated/prefill/tp", "from 1 to", "got 0"});
        Json noDecode = servingDoc();
        noDecode["serving"]["disaggregated"] = Json::parse(R"({"prefill": {"tp": 8}})");
        row("no decode pool", noDecode, {"/serving/disaggregated", "decode"});
        Json ep = servingDoc();
        ep["parallel"] = Json::parse(R"({"tp": 8, "ep": 3})");
        row("ep not dividing tp", ep, {"/parallel", "ep (3) must divide tp (8)"});
        Json adp = servingDoc();
        adp["parallel"] = Json::parse(R"({"tp": 8, "attention_dp": 3})");
        row("attention dp not dividing tp",
            adp,
            {"/parallel", "attention_dp (3) must divide tp (8)"});
        Json cp = servingDoc();
        cp["parallel"] = Json::parse(R"({"tp": 8, "cp": 2})");
        row("context parallel", cp, {"/parallel/cp", "not priced for serving"});
        Json dp = servingDoc();
        dp["parallel"] = Json::parse(R"({"tp": 8, "dp": 4})");
        row("too many replicas", dp, {"/parallel/dp", "32 GPUs", "the cluster has 16"});
        Json draft = servingDoc();
        draft["serving"]["speculative"] = Json::parse(
                R"({"method": "draft", "draft_model": "llama3.1-8b"})");
        row("draft without acceptance", draft, {"/serving/speculative", "acceptance"});
        Json accept = servingDoc();
        accept["serving"]["speculative"] = Json::parse(
                R"({"method": "mtp", "draft_tokens": 1, "acceptance": 3})");
        row("acceptance above drafts", accept, {"/serving/speculative/acceptance", "from 1 to 2"});
        Json window = servingDoc();
        window["model"] = Json::parse(
                R"({"preset": "llama3-70b", "sliding_window": {"window": 0}})");
        row("sliding window 0", window, {"/model/sliding_window/window", "from 1 to", "got 0"});
        Json rope = servingDoc();
        rope["model"] = Json::parse(R"({"preset": "llama3-70b", "rope_scaling": "llama3"})");
        row("rope scaling", rope, {"/model/rope_scaling", "none", "yarn", "llama3"});
        Json norm = servingDoc();
        norm["model"] = Json::parse(R"({"preset": "llama3-70b", "norm": "batchnorm"})");
        row("norm", norm, {"/model/norm", "layernorm", "rmsnorm", "batchnorm"});
        Json position = servingDoc();
        position["model"] = Json::parse(R"({"preset": "llama3-70b", "position": "alibi"})");
        row("position", position, {"/model/position", "rope", "learned", "alibi"});
        Json clamp = servingDoc();
        clamp["model"] = Json::parse(R"({"preset": "gpt-oss-120b", "glu_clamp": -7})");
        row("negative clamp", clamp, {"/model/glu_clamp", "from 0", "-7"});
        Json mapping = servingDoc();
        mapping["serving"]["disaggregated"] = Json::parse(
                R"({"prefill": {"tp": 4}, "decode": {"tp": 4}})");
        mapping["mapping"] = Json::array({0, 1, 2, 3});
        row("mapping length", mapping, {"/mapping", "8 entries", "prefill and decode pools"});
    }
    void badInput()
    {
        QFETCH(QString, text);
        QFETCH(QStringList, expected);
        try {
            parseLayout(text.toStdString(), "bad.railyard.json");
            QFAIL("accepted");
        } catch (const InputError &e) {
            const QString msg = QString::fromStdString(e.what());
            qInfo("%s", qPrintable(msg));
            QVERIFY2(msg.startsWith(QStringLiteral("bad.railyard.json: ")), qPrintable(msg));
            for (const QString &part : expected)
                QVERIFY2(msg.contains(part), qPrintable(msg + " lacks: " + part));
        }
    }

    // A model that does not fit even at concurrency 1 is an error with the numbers, naming the
    // key to change.
    void modelThatDoesNotFit()
    {
        Json doc = servingDoc();
        doc["model"] = Json::parse(R"({"preset": "deepseek-v3"})");
        doc["cluster"]["nodes"] = 1;
        doc["serving"]["precision"] = "bf16";
        const Layout l = parse(doc);
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        const ServingEvaluation e = evaluateServing(l, t);
        QVERIFY(!e.ok);
        qInfo("%s", e.error.c_str());
        for (const char *part : {"parallel.tp",
                                 "does not fit even at concurrency 1",
                                 "weights",
                                 "GiB",
                                 "H100-SXM",
                                 "79.6"})
            QVERIFY2(e.error.find(part) != std::string::npos, part);
    }

    // The training engine does not price a serving layout as if it trained.
    void trainingEvaluationRefusesServing()
    {
        const Layout l = parse(servingDoc());
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        const Evaluation e = evaluate(l, t);
        QVERIFY(!e.ok);
        QVERIFY2(e.error.find("serving workload") != std::string::npos, e.error.c_str());
    }
};

QTEST_APPLESS_MAIN(TestServingLayout)
#include "tst_servinglayout.moc"
