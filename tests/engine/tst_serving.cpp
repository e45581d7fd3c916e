// The serving model as a whole: every shipped serving layout prices (numbers that make sense,
// memory within HBM, no link past its rate, timelines that add up), the seed's claims hold in
// numbers (TP inside one NVLink domain, wide EP on NVL72, KV cache over NVLink), and load,
// queueing, speculation and single-phase pricing behave as their mechanisms say.
#include "base/jsoncursor.h"
#include "comparenear.h"
#include "layout/layout.h"
#include "report/report.h"
#include "serving/servingband.h"
#include "serving/servingevaluate.h"
#include "topology/topology.h"

#include <QDir>
#include <QTest>

#include <algorithm>

using namespace railyard::engine;

namespace {

struct Priced
{
    Layout layout;
    Topology topology;
    ServingEvaluation e;
};

Priced priceLayout(Layout l)
{
    Priced p{std::move(l), {}, {}};
    p.topology = buildTopology(p.layout.cluster, Catalog::builtin());
    p.e = evaluateServing(p.layout, p.topology);
    return p;
}

Priced shipped(const char *name)
{
    return priceLayout(readLayoutFile(std::string(RAILYARD_SOURCE_DIR "/layouts/") + name));
}

Priced priced(const Json &doc)
{
    return priceLayout(parseLayout(doc.dump(), "serving.railyard.json"));
}

Json llama(int concurrency)
{
    Json d = Json::parse(R"({"format": "railyard-layout", "version": 1,
      "cluster": {"gpu": "H100-SXM", "nodes": 1, "gpus_per_node": 8, "price_per_gpu_hour": 2.6},
      "model": {"preset": "llama3.1-70b"},
      "serving": {"stack": "vllm", "precision": "fp8", "input_tokens": 1024,
                  "output_tokens": 1024},
      "parallel": {"tp": 8}})");
    d["serving"]["concurrency"] = concurrency;
    return d;
}

bool hasWarning(const ServingEvaluation &e, const char *code)
{
    return std::any_of(e.warnings.begin(), e.warnings.end(), [&](const Warning &w) {
        return w.code == code;
    });
}

double tierBytes(const Priced &p, const char *tier, bool perRequest)
{
    double bytes = 0;
    const ServingLinks &l = *p.e.links;
    for (std::size_t i = 0; i < l.requestBytes.size(); ++i)
        if (linkTier(p.topology, static_cast<int>(i)).name() == tier)
            bytes += perRequest ? l.requestBytes[i]
                                : double(l.decodeStep.bytesUp[i]) + l.decodeStep.bytesDown[i];
    return bytes;
}

// The phases of a timeline follow each other from 0 to its end without gaps.
void checkTiles(const StepTimeline &tl, double end)
{
    QVERIFY(!tl.phases.empty());
    double at = 0;
    for (const Phase &p : tl.phases) {
        RAILYARD_COMPARE_ABS(p.start, at, 1e-12);
        QVERIFY(p.end > p.start);
        at = p.end;
    }
    RAILYARD_COMPARE_NEAR(tl.stepS, end, 1e-6);
}

} // namespace

class TestServing : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void shippedLayouts_data()
    {
        QTest::addColumn<QString>("file");
        const QDir dir(QStringLiteral(RAILYARD_SOURCE_DIR "/layouts"));
        int serving = 0;
        for (const QString &f : dir.entryList({QStringLiteral("*.railyard.json")}, QDir::Files)) {
            if (!readLayoutFile(dir.filePath(f).toStdString()).isServing())
                continue;
            QTest::newRow(qPrintable(f)) << f;
            ++serving;
        }
        QVERIFY(serving >= 6);
    }
    void shippedLayouts()
    {
        QFETCH(QString, file);
        const Priced p = shipped(qPrintable(file));
        QVERIFY2(p.e.ok, p.e.error.c_str());
        const ServingEvaluation &e = p.e;
        qInfo("TTFT %.1f ms, TPOT %.2f ms, %.0f output tokens/s per GPU, %.1f per user, "
              "memory %.1f of %.1f GiB, max concurrency %d",
              e.ttftS * 1e3,
              e.tpotS * 1e3,
              e.outputTokensPerSPerGpu,
              e.tokensPerSPerUser,
              e.memory.totalGiB(),
              e.memory.hbmGiB,
              e.maxConcurrency);
        for (const Warning &w : e.warnings)
            qInfo("  %s: %s", w.code.c_str(), w.message.c_str());
        QVERIFY(e.ttftS > 0 && e.tpotS > 0 && e.e2eLatencyS > e.ttftS);
        QVERIFY(e.outputTokensPerSPerGpu > 0 && e.requestsPerS > 0);
        RAILYARD_COMPARE_NEAR(e.tokensPerSPerUser, 1 / e.tpotS, 1e-12);
        RAILYARD_COMPARE_NEAR(e.outputTokensPerS, e.outputTokensPerSPerGpu * e.gpus, 1e-12);
        QVERIFY(e.memory.totalGiB() <= e.memory.hbmGiB);
        QVERIFY(e.maxConcurrency >= 1);
        QVERIFY(e.tpotBand.lowS < e.tpotS && e.tpotS < e.tpotBand.highS);
        QVERIFY(e.ttftBand.lowS < e.ttftS && e.ttftS < e.ttftBand.highS);
        QVERIFY(e.bandBasis.find("published serving runs") != std::string::npos);
        QCOMPARE(e.tpotBand.highS / e.tpotS, 1 + kServingRunsBand);
        QVERIFY(e.costPerMillionOutputTokens > 0);
        // No link carries more than its rate in the steady state.
        QVERIFY(e.links);
        const auto &u = e.links->decodeStep.utilization;
        const auto worst = std::max_element(u.begin(), u.end());
        qInfo("busiest link %s at %.1f%%",
              p.topology.linkName(static_cast<int>(worst - u.begin())).c_str(),
              100 * *worst);
        QVERIFY(*worst > 0.001 && *worst <= 1.0);
        // The timelines add up: one decode step, one request's life.
        checkTiles(e.decodeTimeline, e.decode.sum());
        checkTiles(e.requestTimeline, e.e2eLatencyS);
    }

    // The seed: "for latency-sensitive serving, keeping a model inside one NVLink domain is
    // usually worth more than adding servers". On the same two H100 servers, two TP8 replicas
    // beat one TP16 replica per GPU and per user, and the TP16's all-reduces cross the NICs.
    void tpInsideOneServer()
    {
        const Priced tp8 = shipped("serving-llama70b-tp8-h100.railyard.json");
        const Priced tp16 = shipped("serving-llama70b-tp16-two-servers.railyard.json");
        qInfo("TP8: TPOT %.2f ms, %.0f tokens/s per GPU; TP16 across: TPOT %.2f ms, %.0f",
              tp8.e.tpotS * 1e3,
              tp8.e.outputTokensPerSPerGpu,
              tp16.e.tpotS * 1e3,
              tp16.e.outputTokensPerSPerGpu);
        QVERIFY(tp8.e.tpotS < tp16.e.tpotS);
        QVERIFY(tp8.e.outputTokensPerSPerGpu > tp16.e.outputTokensPerSPerGpu);
        QVERIFY(tp16.e.decode.tp > 2 * tp8.e.decode.tp);
        QVERIFY(hasWarning(tp16.e, "tp-spans-domains"));
        QVERIFY(!hasWarning(tp8.e, "tp-spans-domains"));
        QCOMPARE(tierBytes(tp8, "nic-leaf", false), 0.0);
        QVERIFY(tierBytes(tp16, "nic-leaf", false) > 0);
    }

    // DeepSeek-R1 with wide EP: the all-to-all on NVLink inside a GB200 NVL72 costs a fraction of
    // the same over InfiniBand between H200 servers.
    void wideEpOnNvl72()
    {
        const Priced nvl = shipped("serving-deepseek-r1-wide-ep-gb200-nvl72.railyard.json");
        const Priced ib = shipped("serving-deepseek-r1-wide-ep-h200-ib.railyard.json");
        qInfo("EP per decode step: NVL72 %.2f ms (%s), H200 IB %.2f ms (%s)",
              nvl.e.decode.ep * 1e3,
              nvl.e.epMethod.c_str(),
              ib.e.decode.ep * 1e3,
              ib.e.epMethod.c_str());
        QCOMPARE(nvl.e.epMethod, std::string("deepep"));
        QVERIFY(nvl.e.decode.ep < 0.5 * ib.e.decode.ep);
        QVERIFY(nvl.e.outputTokensPerSPerGpu > ib.e.outputTokensPerSPerGpu);
        QVERIFY(hasWarning(ib.e, "ep-spans-domains"));
        QVERIFY(!hasWarning(nvl.e, "ep-spans-domains"));
        QCOMPARE(tierBytes(nvl, "nic-leaf", false), 0.0);
        QVERIFY(tierBytes(ib, "nic-leaf", false) > 0);
    }

    // Disaggregated: each request's KV cache rides NVLink inside the NVL72 and the NICs between
    // trays; over the NICs it takes longer and loads the NIC-leaf tier.
    void kvCacheOverNvlink()
    {
        const Priced nvl = shipped("serving-disaggregated-gb200-nvl72.railyard.json");
        const Priced nic = shipped("serving-disaggregated-gb200-400g.railyard.json");
        qInfo("KV transfer per request: NVLink %.3f ms, 400G %.3f ms",
              nvl.e.prefill.kvTransfer * 1e3,
              nic.e.prefill.kvTransfer * 1e3);
        QVERIFY(nvl.e.disaggregated && nic.e.disaggregated);
        QVERIFY(nvl.e.prefill.kvTransfer > 0);
        QVERIFY(nic.e.prefill.kvTransfer > 3 * nvl.e.prefill.kvTransfer);
        QVERIFY(nic.e.ttftS > nvl.e.ttftS);
        QCOMPARE(tierBytes(nvl, "nic-leaf", true), 0.0);
        // The KV cache of one request: 8,192 tokens x 80 layers x 2 x 8 KV heads x 128 x 1 byte,
        // sent once from prefill to decode (TP 4 on both sides: two KV heads per GPU).
        const double kv = 8192.0 * 80 * 2 * 8 * 128;
        QVERIFY(tierBytes(nic, "nic-leaf", true) >= kv);
        QVERIFY(hasWarning(nic.e, "kv-over-network"));
    }

    // Closed loop past what the KV cache holds: the extra requests wait for a slot.
    void queueingPastTheKvCache()
    {
        Json doc = llama(64);
        doc["serving"]["input_tokens"] = 60000;
        doc["serving"]["output_tokens"] = 2000;
        const Priced below = priced(doc);
        QVERIFY2(below.e.ok, below.e.error.c_str());
        const int cap = below.e.maxConcurrency;
        QVERIFY(cap > 4 && cap < 64);
        QVERIFY(hasWarning(below.e, "queueing"));
        doc["serving"]["concurrency"] = cap;
        const Priced at = priced(doc);
        QVERIFY(!hasWarning(at.e, "queueing"));
        qInfo("KV cache holds %d; at 64 TTFT %.2f s (waiting %.2f s), at %d TTFT %.2f s",
              cap,
              below.e.ttftS,
              below.e.ttftWaitS,
              cap,
              at.e.ttftS);
        RAILYARD_COMPARE_NEAR(below.e.requestsPerS, at.e.requestsPerS, 1e-6);
        // Little's law: the waiting requests over the completion rate.
        QVERIFY(below.e.ttftS > at.e.ttftS + 0.9 * (64 - cap) / below.e.requestsPerS);
    }

    // Open loop: a request rate the deployment serves gives that throughput; one above its
    // capacity is an error-severity warning, priced at capacity.
    void openLoop()
    {
        Json doc = llama(1);
        doc["serving"].erase("concurrency");
        doc["serving"]["request_rate"] = 1.0;
        const Priced light = priced(doc);
        QVERIFY2(light.e.ok, light.e.error.c_str());
        RAILYARD_COMPARE_NEAR(light.e.requestsPerS, 1.0, 1e-9);
        RAILYARD_COMPARE_NEAR(light.e.outputTokensPerS, 1024.0, 1e-9);
        QVERIFY(!hasWarning(light.e, "overloaded"));
        doc["serving"]["request_rate"] = 1e4;
        const Priced heavy = priced(doc);
        QVERIFY(hasWarning(heavy.e, "overloaded"));
        QVERIFY(heavy.e.requestsPerS < 1e4 && heavy.e.requestsPerS > light.e.requestsPerS);
    }

    // Larger batches: more tokens per GPU, fewer per user (the serving Pareto front).
    void batchTradesLatencyForThroughput()
    {
        double lastGpu = 0, lastUser = 1e9;
        for (int c : {1, 4, 16, 64, 256}) {
            const Priced p = priced(llama(c));
            QVERIFY2(p.e.ok, p.e.error.c_str());
            qInfo("concurrency %3d: %.0f tokens/s per GPU, %.1f per user",
                  c,
                  p.e.outputTokensPerSPerGpu,
                  p.e.tokensPerSPerUser);
            QVERIFY(p.e.outputTokensPerSPerGpu > lastGpu);
            QVERIFY(p.e.tokensPerSPerUser < lastUser);
            lastGpu = p.e.outputTokensPerSPerGpu;
            lastUser = p.e.tokensPerSPerUser;
        }
    }

    // Speculative decoding: MTP's accepted tokens per step cut the time per token at low
    // concurrency (the drafts and a wider verification cost less than the tokens they add).
    void speculativeDecoding()
    {
        Json doc = Json::parse(R"({"format": "railyard-layout", "version": 1,
          "cluster": {"gpu": "H200-SXM", "nodes": 1, "gpus_per_node": 8},
          "model": {"preset": "deepseek-r1"},
          "serving": {"stack": "sglang", "precision": "fp8", "input_tokens": 1024,
                      "output_tokens": 1024, "concurrency": 1},
          "parallel": {"tp": 8, "ep": 8}})");
        const Priced plain = priced(doc);
        doc["serving"]["speculative"] = Json::parse(R"({"method": "mtp", "draft_tokens": 1})");
        const Priced mtp = priced(doc);
        QVERIFY2(plain.e.ok && mtp.e.ok, (plain.e.error + mtp.e.error).c_str());
        RAILYARD_COMPARE_NEAR(mtp.e.acceptedTokensPerStep, 1.85, 1e-12);
        qInfo("TPOT %.2f ms without MTP, %.2f ms with (step %.2f ms, 1.85 tokens)",
              plain.e.tpotS * 1e3,
              mtp.e.tpotS * 1e3,
              mtp.e.decodeStepS * 1e3);
        QVERIFY(mtp.e.decodeStepS > plain.e.decodeStepS);
        QVERIFY(mtp.e.tpotS < plain.e.tpotS);
    }

    // A block-scaled FP8 checkpoint (DeepSeek's own) quantizes the activations of every FP8
    // GEMM outside the experts in a kernel of its own: at batch 1 each adds a small kernel's
    // time in a CUDA graph (H200 5.6 us) and a few bytes, to compute only. DeepSeek-R1 runs 8
    // such GEMMs a layer (MLA's q_a, q_b, kv_a, the two absorbed ones, o_proj; the dense MLP's
    // or the shared expert's two), 61 layers.
    void blockScaledFp8()
    {
        Json doc = Json::parse(R"({"format": "railyard-layout", "version": 1,
          "cluster": {"gpu": "H200-SXM", "nodes": 1, "gpus_per_node": 8},
          "model": {"preset": "deepseek-r1"},
          "serving": {"stack": "trtllm", "precision": "fp8", "input_tokens": 1024,
                      "output_tokens": 1024, "concurrency": 1},
          "parallel": {"tp": 8, "ep": 8}})");
        const Priced tensor = priced(doc);
        doc["serving"]["fp8_scaling"] = "block";
        const Priced block = priced(doc);
        QVERIFY2(tensor.e.ok && block.e.ok, (tensor.e.error + block.e.error).c_str());
        const ServingBreakdown &a = tensor.e.decode, &b = block.e.decode;
        const double added = b.compute - a.compute;
        const double kernel = Catalog::builtin().gpu("H200-SXM")->graphKernelS;
        qInfo("decode step %.2f -> %.2f ms: +%.3f ms of activation quantization (%.1f kernels' "
              "time)",
              tensor.e.decodeStepS * 1e3,
              block.e.decodeStepS * 1e3,
              added * 1e3,
              added / kernel);
        QCOMPARE(b.weightsRead, a.weightsRead);
        QCOMPARE(b.attention, a.attention);
        QCOMPARE(b.ep, a.ep);
        QVERIFY(added >= 8 * 61 * kernel);
        QVERIFY(added <= 8 * 61 * kernel * 1.05);
        QVERIFY(block.e.tpotS > tensor.e.tpotS);
    }

    // One phase alone, as benchmarks of a disaggregated pool report it.
    void onePhase()
    {
        Json doc = llama(32);
        doc["serving"]["phase"] = "decode";
        const Priced decode = priced(doc);
        QVERIFY2(decode.e.ok, decode.e.error.c_str());
        QCOMPARE(decode.e.inputTokensPerSPerGpu, 0.0);
        RAILYARD_COMPARE_NEAR(decode.e.tpotS, decode.e.decodeStepS, 1e-12);
        // The decode pool makes every token after the first (the prefill pool makes that one).
        RAILYARD_COMPARE_NEAR(decode.e.outputTokensPerS, 32 * 1023 / decode.e.e2eLatencyS, 1e-9);
        doc["serving"]["phase"] = "prefill";
        const Priced prefill = priced(doc);
        QVERIFY2(prefill.e.ok, prefill.e.error.c_str());
        qInfo("prefill alone %.0f input tokens/s per GPU, decode alone %.0f output tokens/s per "
              "GPU",
              prefill.e.inputTokensPerSPerGpu,
              decode.e.outputTokensPerSPerGpu);
        QVERIFY(prefill.e.inputTokensPerSPerGpu > 3 * decode.e.outputTokensPerSPerGpu);
        RAILYARD_COMPARE_NEAR(prefill.e.requestsPerS, 1 / prefill.e.ttftS, 1e-9);
    }
};

QTEST_APPLESS_MAIN(TestServing)
#include "tst_serving.moc"
