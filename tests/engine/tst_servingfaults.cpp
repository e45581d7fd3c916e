// Faults on serving layouts (cluster.faults): a leaf down detours the EP all-to-all through
// PXN, a straggler paces its replica, a GPU out takes its replica out of service, the sweep
// ranks serving failures, and bad input names its key.
#include "base/inputerror.h"
#include "base/jsoncursor.h"
#include "collectives/traffic.h"
#include "faults/faultimpact.h"
#include "faults/faultreport.h"
#include "faults/faultsweep.h"
#include "faults/servingfaultimpact.h"
#include "layout/layout.h"
#include "layout/servingstack.h"
#include "serving/servingcomm.h"
#include "serving/servingevaluate.h"
#include "serving/servinggroups.h"
#include "serving/servingsetup.h"
#include "topology/topology.h"

#include "comparenear.h"
#include <QTest>
#include <algorithm>

#include <sstream>

using namespace railyard::engine;

namespace {

Layout shipped(const char *name)
{
    return readLayoutFile(std::string(RAILYARD_SOURCE_DIR "/layouts/") + name);
}

Fault device(const std::string &name, std::optional<double> slowdown = {})
{
    Fault f;
    f.target = FaultTarget::Device;
    f.device = name;
    if (slowdown) {
        f.state = FaultState::Degraded;
        f.slowdown = slowdown;
    }
    return f;
}

struct Priced
{
    ServingEvaluation healthy, faulted;
};

Priced price(const Layout &l, const std::vector<Fault> &faults)
{
    const Topology healthy = buildTopology(l.cluster, Catalog::builtin());
    Layout f = l;
    f.cluster.faults = faults;
    const Topology faulted = withFaults(healthy, faults);
    Priced p;
    p.healthy = evaluateServing(l, healthy);
    p.faulted = evaluateServing(f, faulted);
    return p;
}

} // namespace

class TestServingFaults : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void leafDownDetoursTheEpAllToAll()
    {
        // The wide-EP H200 layout: 8 servers of 8 H200, one 400G CX7 NIC per GPU on a
        // rail-optimized fabric (NIC k of every server on leaf k), DeepSeek-R1 at EP 64 with
        // DeepEP's low-latency all-to-all. Leaf 3 down: NIC 3 of every server has no uplink, so
        // GPU 3 sends and receives through the other NIC under its PCIe switch (GPUDirect RDMA
        // across the switch, as NCCL picks a NIC), which now carries two GPUs' traffic.
        Layout l = shipped("serving-deepseek-r1-wide-ep-h200-ib.railyard.json");
        const Topology healthy = buildTopology(l.cluster, Catalog::builtin());
        const Topology faulted = withFaults(healthy, {device("leaf 3")});
        QVERIFY(faulted.gpuNics(3)[0] != healthy.gpuNics(3)[0]);
        QCOMPARE(faulted.gpuNics(3)[0], healthy.gpuNics(2)[0]);
        QVERIFY(!faulted.faultNotes().empty());

        // By hand, one dispatch of B bytes per rank (nccl-tests' size: B / 64 to each rank):
        // 56 of the 64 shares leave the server through the GPU's NIC, at 400 Gb/s x 0.96 (CX7)
        // = 48 GB/s, so the link-bound part is B x 56/64 / 48 GB/s; NVLink (7/64 of B at
        // ~370 GB/s) is far below. With leaf 3 down the busiest NIC carries GPU 3's shares as
        // well: 2 x B x 56/64 / 48 GB/s. DeepEP's latency (kDeepEpLatencyS, 30 us) stays.
        ServingSetup setup;
        QVERIFY(resolveServing(l, healthy.gpuCount(), setup).empty());
        const PoolGroups groups = poolGroups(l, setup.decode);
        QCOMPARE(groups.ep.count(), std::size_t(1));
        QCOMPARE(groups.ep.size, 64);
        LinkTraffic scratchA(healthy), scratchB(faulted);
        const CollectivePricer a = priceCollective(healthy,
                                                   groups.ep,
                                                   CollectiveOp::AllToAll,
                                                   *setup.stack,
                                                   true,
                                                   true,
                                                   scratchA);
        const CollectivePricer b = priceCollective(faulted,
                                                   groups.ep,
                                                   CollectiveOp::AllToAll,
                                                   *setup.stack,
                                                   true,
                                                   true,
                                                   scratchB);
        QVERIFY(a.deepEp && b.deepEp);
        const double B = 128 * 7168 * 8.0 * 1.03; // 128 tokens, hidden 7168, top-8, FP8 + scales
        const double nic = 400 / 8.0 * 0.96 * 1e9;
        RAILYARD_COMPARE_NEAR(a.timeS(B) - kDeepEpLatencyS, B * 56 / 64 / nic, 0.01);
        RAILYARD_COMPARE_NEAR(b.timeS(B) - kDeepEpLatencyS, 2 * B * 56 / 64 / nic, 0.01);

        // The evaluation: the decode pool measured alone (phase decode: no prefill takes its
        // time, so the decode batch is the concurrency with and without the fault). R1's 58 MoE
        // layers each dispatch and combine once per step: 116 all-to-alls, each paying the
        // latency once and its bytes twice as slowly. By hand: ep_after = 116 L +
        // 2 (ep_before - 116 L).
        l.serving->phase = ServingPhase::Decode;
        Layout lf = l;
        lf.cluster.faults = {device("leaf 3")};
        const ServingEvaluation eh = evaluateServing(l, healthy);
        const ServingEvaluation ef = evaluateServing(lf, faulted);
        QVERIFY2(eh.ok && ef.ok, (eh.error + ef.error).c_str());
        QCOMPARE(ef.decodeBatch, eh.decodeBatch);
        const double latency = 116 * kDeepEpLatencyS;
        qInfo("leaf 3 down: decode EP %.4f ms -> %.4f ms (x%.3f; by hand %.4f ms), TPOT %.3f -> "
              "%.3f ms",
              1e3 * eh.decode.ep,
              1e3 * ef.decode.ep,
              ef.decode.ep / eh.decode.ep,
              1e3 * (latency + 2 * (eh.decode.ep - latency)),
              1e3 * eh.tpotS,
              1e3 * ef.tpotS);
        RAILYARD_COMPARE_NEAR(ef.decode.ep, latency + 2 * (eh.decode.ep - latency), 0.01);
        // Nothing else of the step moves: the kernels run as they did.
        RAILYARD_COMPARE_NEAR(ef.decode.compute, eh.decode.compute, 1e-12);
        RAILYARD_COMPARE_NEAR(ef.decode.weightsRead, eh.decode.weightsRead, 1e-12);
        RAILYARD_COMPARE_NEAR(ef.tpotS - eh.tpotS, ef.decode.ep - eh.decode.ep, 1e-6);

        // The impact names the change: TPOT and tokens/s per GPU, decode.ep, and the NICs that
        // now carry GPU 3's bytes.
        const FaultImpact impact = analyzeFaults(lf, healthy, faulted);
        QVERIFY(impact.serving && impact.priced());
        bool tpot = false;
        for (const ImpactMetric &m : impact.metrics)
            if (m.key == "tpot_s") {
                tpot = true;
                RAILYARD_COMPARE_NEAR(m.after, ef.tpotS, 1e-9);
            }
        QVERIFY(tpot);
        QVERIFY(!impact.links.empty());
        const LinkChange &most = impact.links.front();
        QVERIFY(most.bytesB > most.bytesA);
        for (const LinkChange &c : impact.links)
            if (c.link == healthy.nicUplink(3))
                QCOMPARE(c.bytesB, 0.0); // leaf 3's NIC link carries nothing now
    }

    void nicDownSlowsOnlyItsReplica()
    {
        // The wide-EP H200 cluster (8 servers, one 400G NIC per GPU on a rail-optimized
        // fabric) serving DeepSeek-R1 as two EP-32 replicas of four servers each, the decode
        // pool alone (the batch stays the concurrency). NIC 0.3 down: GPU 3 of server 0 sends
        // and receives through NIC 0.2, which now carries two GPUs' shares of replica 0's
        // all-to-alls; replica 1's traffic never crosses it. Each replica is timed on its own
        // links, so replica 0's 116 all-to-alls per step (58 MoE layers, dispatch and combine)
        // each take their bytes twice as long (the latency kDeepEpLatencyS once, as before),
        // and replica 1 runs as it did. By hand: ep_0 = 116 L + 2 (ep - 116 L), TPOT_0 = TPOT
        // + ep_0 - ep, TPOT_1 = TPOT.
        Layout l = shipped("serving-deepseek-r1-wide-ep-h200-ib.railyard.json");
        l.parallel.tp = 32;
        l.parallel.ep = 32;
        l.parallel.dp = 2;
        l.serving->phase = ServingPhase::Decode;
        const Priced nic = price(l, {device("NIC 0.3")});
        QVERIFY2(nic.healthy.ok && nic.faulted.ok, (nic.healthy.error + nic.faulted.error).c_str());
        QVERIFY(nic.healthy.replicaClasses.empty());
        QCOMPARE(nic.faulted.replicaClasses.size(), std::size_t(2));
        const ServingEvaluation::ReplicaClass *slow = nullptr, *fast = nullptr;
        for (const ServingEvaluation::ReplicaClass &k : nic.faulted.replicaClasses)
            (k.replicas == std::vector<int>{0} ? slow : fast) = &k;
        QVERIFY(slow && fast);
        QCOMPARE(fast->replicas, std::vector<int>{1});
        const double latency = 116 * kDeepEpLatencyS;
        const double epBefore = nic.healthy.decode.ep;
        const double epAfter = latency + 2 * (epBefore - latency);
        qInfo("NIC 0.3 down, two EP-32 replicas: replica 0 TPOT %.3f -> %.3f ms (by hand %.3f), "
              "replica 1 %.3f ms; decode EP %.3f -> %.3f ms; mean TPOT %.3f ms",
              1e3 * nic.healthy.tpotS,
              1e3 * slow->tpotS,
              1e3 * (nic.healthy.tpotS + epAfter - epBefore),
              1e3 * fast->tpotS,
              1e3 * epBefore,
              1e3 * nic.faulted.decode.ep,
              1e3 * nic.faulted.tpotS);
        RAILYARD_COMPARE_NEAR(nic.faulted.decode.ep, epAfter, 0.01);
        RAILYARD_COMPARE_NEAR(slow->tpotS, nic.healthy.tpotS + epAfter - epBefore, 0.01);
        RAILYARD_COMPARE_NEAR(fast->tpotS, nic.healthy.tpotS, 1e-9);
        RAILYARD_COMPARE_NEAR(nic.faulted.slowestTpotS, slow->tpotS, 1e-12);
        // A warning names the slow replica, selects its GPUs and prices what its requests pay
        // per token; the healthy cluster has none.
        const auto slowReplica = [](const ServingEvaluation &e) {
            return std::find_if(e.warnings.begin(), e.warnings.end(), [](const Warning &w) {
                return w.code == "slow-replica";
            });
        };
        const auto warning = slowReplica(nic.faulted);
        QVERIFY(warning != nic.faulted.warnings.end());
        QVERIFY(slowReplica(nic.healthy) == nic.healthy.warnings.end());
        QVERIFY2(warning->message.find("decode replica 0 (") != std::string::npos
                         && warning->message.find("faulted or detoured links") != std::string::npos,
                 warning->message.c_str());
        RAILYARD_COMPARE_NEAR(warning->costS, slow->tpotS - fast->tpotS, 1e-12);
        QCOMPARE(warning->gpus.size(), std::size_t(32));
        QVERIFY(std::count(warning->gpus.begin(), warning->gpus.end(), 3) == 1);
        // The cluster serves the sum of its replicas: replica 1 its healthy half.
        RAILYARD_COMPARE_NEAR(fast->requestsPerS, nic.healthy.requestsPerS / 2, 1e-9);
        RAILYARD_COMPARE_NEAR(nic.faulted.requestsPerS,
                              slow->requestsPerS + fast->requestsPerS,
                              1e-12);

        // Leaf 3 down takes NIC 3 of every server off the fabric: both replicas carry a
        // doubled NIC, so the leaf costs more than the one NIC (it cost as much when every
        // replica was timed on the cluster's busiest link).
        const Priced leaf = price(l, {device("leaf 3")});
        QVERIFY2(leaf.faulted.ok, leaf.faulted.error.c_str());
        QVERIFY(leaf.faulted.replicaClasses.empty());
        RAILYARD_COMPARE_NEAR(leaf.faulted.tpotS, slow->tpotS, 0.01);
        qInfo("output tokens/s: healthy %.0f, NIC 0.3 down %.0f, leaf 3 down %.0f",
              nic.healthy.outputTokensPerS,
              nic.faulted.outputTokensPerS,
              leaf.faulted.outputTokensPerS);
        QVERIFY(nic.faulted.outputTokensPerS < nic.healthy.outputTokensPerS);
        QVERIFY(leaf.faulted.outputTokensPerS < nic.faulted.outputTokensPerS);

        // The impact says which replica slowed and what the reported latencies mean.
        Layout lf = l;
        lf.cluster.faults = {device("NIC 0.3")};
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        const FaultImpact impact = analyzeFaults(lf, t, withFaults(t, lf.cluster.faults));
        QVERIFY(impact.priced());
        bool said = false;
        std::string changes;
        for (const std::string &c : impact.jobChanges) {
            changes += c + "\n";
            said = said
                   || (c.find("replica 0 TPOT 36.19 ms") != std::string::npos
                       && c.find("replica 1 TPOT 31.15 ms") != std::string::npos
                       && c.find("spread evenly") != std::string::npos);
        }
        QVERIFY2(said, changes.c_str());
    }

    void stragglerPacesItsReplica()
    {
        // Llama 3 70B on two H100 servers, one TP8 replica each (vLLM, FP8, 32 requests in
        // flight per replica, 1024 in, 1024 out). GPU 3 runs 10% slow: its TP group waits for it
        // at every all-reduce, so replica 0's kernels all take 1.1x as long; the all-reduces
        // themselves (link-bound) do not change, nor does replica 1.
        const Layout l = shipped("serving-llama70b-tp8-h100.railyard.json");
        const Priced p = price(l, {device("GPU 3", 1.1)});
        QVERIFY2(p.healthy.ok && p.faulted.ok, (p.healthy.error + p.faulted.error).c_str());
        const ServingBreakdown &a = p.healthy.decode, &b = p.faulted.decode;
        // The faulted breakdown is the slowest replica's decode step. By hand: the kernels
        // (compute, weights read, attention) x 1.1, the TP all-reduces as they were.
        RAILYARD_COMPARE_NEAR(b.compute, 1.1 * a.compute, 1e-3);
        RAILYARD_COMPARE_NEAR(b.weightsRead, 1.1 * a.weightsRead, 1e-3);
        RAILYARD_COMPARE_NEAR(b.attention, 1.1 * a.attention, 1e-3);
        RAILYARD_COMPARE_NEAR(b.tp, a.tp, 1e-3);
        const double kernels = a.compute + a.weightsRead + a.attention;
        const double stepRatio = (1.1 * kernels + (a.sum() - kernels)) / a.sum();
        // Its requests' TPOT stretches by the step's ratio (the prefill chunks it interleaves
        // stretch alike, within the share their all-reduces take: 0.5%).
        RAILYARD_COMPARE_NEAR(p.faulted.slowestTpotS, p.healthy.tpotS * stepRatio, 5e-3);
        QVERIFY(p.faulted.slowestTpotS > p.faulted.tpotS); // the mean holds replica 1's too
        // The aggregate: each replica keeps its 32 requests in flight (closed loop), so each
        // serves 32 x 1024 tokens per request life (TTFT + 1023 TPOT). Replica 1 serves as
        // before (half the healthy rate); replica 0 that rate x e2e_healthy / e2e_slow.
        const double out = l.serving->outputTokens;
        const double e2eHealthy = p.healthy.ttftS + (out - 1) * p.healthy.tpotS;
        RAILYARD_COMPARE_NEAR(p.healthy.e2eLatencyS, e2eHealthy, 1e-9);
        const double e2eSlow = p.faulted.slowestTtftS + (out - 1) * p.faulted.slowestTpotS;
        const double perGpu = p.healthy.outputTokensPerSPerGpu / 2 * (1 + e2eHealthy / e2eSlow);
        qInfo("10%% straggler in replica 0: its step %.3f -> %.3f ms (x%.4f by hand), TPOT "
              "%.3f -> %.3f ms (mean %.3f), TTFT %.2f -> %.2f ms, tokens/s per GPU %.1f -> %.1f "
              "(by hand %.1f), per user %.1f -> %.1f",
              1e3 * a.sum(),
              1e3 * b.sum(),
              stepRatio,
              1e3 * p.healthy.tpotS,
              1e3 * p.faulted.slowestTpotS,
              1e3 * p.faulted.tpotS,
              1e3 * p.healthy.ttftS,
              1e3 * p.faulted.slowestTtftS,
              p.healthy.outputTokensPerSPerGpu,
              p.faulted.outputTokensPerSPerGpu,
              perGpu,
              p.healthy.tokensPerSPerUser,
              p.faulted.tokensPerSPerUser);
        RAILYARD_COMPARE_NEAR(p.faulted.outputTokensPerSPerGpu, perGpu, 1e-6);
        QCOMPARE(p.faulted.gpus, 16);
    }

    void prefillStragglerPacesItsInstance()
    {
        // Disaggregated DeepSeek-R1 on a GB200 NVL72 (TensorRT-LLM, FP8, 8192 in, 1024 out):
        // 11 TP4 prefill replicas on GPUs 0-43, 7 TP4 decode replicas. GPU 1 runs 1.5x slow:
        // prefill replica 0's kernels all take 1.5x as long (its TP group waits for it), its
        // all-reduces do not change. Requests are spread evenly over the prefill replicas, so
        // one in 11 is prefilled there; nothing else slows but through the KV transfer.
        Layout l = shipped("serving-disaggregated-gb200-nvl72.railyard.json");
        const double slow = 1.5;
        Layout alone = l;
        alone.serving->phase = ServingPhase::Prefill;
        const Priced a = price(alone, {device("GPU 1", slow)});
        QVERIFY2(a.healthy.ok && a.faulted.ok, (a.healthy.error + a.faulted.error).c_str());
        const ServingBreakdown &h = a.healthy.prefill;
        QCOMPARE(h.overhead, 0.0); // prefill kernels hide their launches
        // By hand: P = the healthy prefill; P0 = P + 0.5 x its kernels (one stage).
        const double P = h.compute + h.weightsRead + h.attention + h.tp + h.ep + h.pp;
        const double P0 = P + (slow - 1) * (h.compute + h.weightsRead + h.attention);
        // The pool alone at saturation: each replica takes one in 11 requests, so the slow one
        // saturates first: 11 / P0 requests/s; a request's TTFT is P or P0, (10 P + P0) / 11
        // on average, P0 at the slow instance.
        qInfo("prefill pool alone, GPU 1 1.5x slow: %.3f -> %.3f requests/s (by hand %.3f), TTFT "
              "%.1f -> %.1f ms (mean; by hand %.1f), slowest %.1f ms (by hand %.1f)",
              a.healthy.requestsPerS,
              a.faulted.requestsPerS,
              11 / P0,
              1e3 * a.healthy.ttftS,
              1e3 * a.faulted.ttftS,
              1e3 * (10 * P + P0) / 11,
              1e3 * a.faulted.slowestTtftS,
              1e3 * P0);
        RAILYARD_COMPARE_NEAR(a.healthy.requestsPerS, 11 / P, 1e-9);
        RAILYARD_COMPARE_NEAR(a.faulted.requestsPerS, 11 / P0, 1e-6);
        RAILYARD_COMPARE_NEAR(a.faulted.ttftS, (10 * P + P0) / 11, 1e-6);
        RAILYARD_COMPARE_NEAR(a.faulted.slowestTtftS, P0, 1e-6);
        // The breakdown shown is the slow instance's prefill.
        RAILYARD_COMPARE_NEAR(a.faulted.prefill.compute, slow * h.compute, 1e-9);
        RAILYARD_COMPARE_NEAR(a.faulted.prefill.tp, h.tp, 1e-9);

        // Serving (48 in flight per decode replica, closed loop): the requests prefilled on
        // replica 0 wait in the pool's queue at its pace and load, w(P0), the others at w(P),
        // w(S) = rho S' / (2 (1 - rho)) with rho = rate x S / 11 and S' = S / 11 (the pool as
        // one M/D/1 queue of 11 servers); both then pay the KV transfer.
        const Priced b = price(l, {device("GPU 1", slow)});
        QVERIFY2(b.healthy.ok && b.faulted.ok, (b.healthy.error + b.faulted.error).c_str());
        const double rate = b.faulted.requestsPerS;
        const auto wait = [rate](double S) {
            const double rho = rate * S / 11;
            return rho * (S / 11) / (2 * (1 - rho));
        };
        const double kv = b.faulted.prefill.kvTransfer;
        const double ttft0 = wait(P0) + P0 + kv, ttft = wait(P) + P + kv;
        qInfo("serving: TTFT %.1f -> %.1f ms (mean; by hand %.1f), slow instance's %.1f ms (by "
              "hand %.1f); TPOT %.3f -> %.3f ms",
              1e3 * b.healthy.ttftS,
              1e3 * b.faulted.ttftS,
              1e3 * (10 * ttft + ttft0) / 11,
              1e3 * b.faulted.slowestTtftS,
              1e3 * ttft0,
              1e3 * b.healthy.tpotS,
              1e3 * b.faulted.tpotS);
        RAILYARD_COMPARE_NEAR(b.faulted.slowestTtftS, ttft0, 1e-6);
        RAILYARD_COMPARE_NEAR(b.faulted.ttftS, (10 * ttft + ttft0) / 11, 1e-6);
        // The decode pool runs as it did: its steps only see the few requests the longer
        // TTFT keeps out of it (closed loop), well under 1%.
        RAILYARD_COMPARE_NEAR(b.faulted.tpotS, b.healthy.tpotS, 0.01);
        QVERIFY(b.faulted.replicaClasses.empty()); // the decode replicas all run alike
    }

    void gpuOutTakesItsReplica()
    {
        // GPU 3 out: replica 0 (GPUs 0-7) leaves service and replica 1 serves the same load,
        // 64 requests in flight. By hand that is the layout with one replica on GPUs 8-15 at
        // concurrency 64; per GPU over the 16 the deployment still holds.
        const Layout l = shipped("serving-llama70b-tp8-h100.railyard.json");
        const Priced p = price(l, {device("GPU 3")});
        QVERIFY2(p.healthy.ok && p.faulted.ok, (p.healthy.error + p.faulted.error).c_str());
        QCOMPARE(p.faulted.replicasOutOfService, std::vector<int>{0});
        QCOMPARE(p.faulted.gpusOutOfService, 8);
        QCOMPARE(p.faulted.gpus, 16);
        bool warned = false;
        for (const Warning &w : p.faulted.warnings)
            warned = warned
                     || (w.code == "gpu-out" && w.message.find("replica 0") != std::string::npos);
        QVERIFY(warned);

        Layout one = l;
        one.parallel.dp = 1;
        one.mapping = {8, 9, 10, 11, 12, 13, 14, 15};
        one.serving->concurrency = 64;
        const ServingEvaluation e = evaluateServing(one,
                                                    buildTopology(one.cluster, Catalog::builtin()));
        QVERIFY2(e.ok, e.error.c_str());
        qInfo("GPU 3 out: output tokens/s %.0f -> %.0f (one replica at 64 in flight: %.0f), TPOT "
              "%.3f -> %.3f ms, TTFT %.2f -> %.2f ms, tokens/s per GPU %.1f -> %.1f",
              p.healthy.outputTokensPerS,
              p.faulted.outputTokensPerS,
              e.outputTokensPerS,
              1e3 * p.healthy.tpotS,
              1e3 * p.faulted.tpotS,
              1e3 * p.healthy.ttftS,
              1e3 * p.faulted.ttftS,
              p.healthy.outputTokensPerSPerGpu,
              p.faulted.outputTokensPerSPerGpu);
        RAILYARD_COMPARE_NEAR(p.faulted.outputTokensPerS, e.outputTokensPerS, 1e-9);
        RAILYARD_COMPARE_NEAR(p.faulted.tpotS, e.tpotS, 1e-9);
        RAILYARD_COMPARE_NEAR(p.faulted.ttftS, e.ttftS, 1e-9);
        RAILYARD_COMPARE_NEAR(p.faulted.outputTokensPerSPerGpu, e.outputTokensPerS / 16, 1e-9);
        QVERIFY(p.faulted.outputTokensPerS < p.healthy.outputTokensPerS);
    }

    void everyReplicaOut()
    {
        // A GPU out in each replica: nothing is left to serve, said plainly.
        const Layout l = shipped("serving-llama70b-tp8-h100.railyard.json");
        const Priced p = price(l, {device("GPU 3"), device("GPU 12")});
        QVERIFY(p.healthy.ok);
        QVERIFY(!p.faulted.ok);
        QVERIFY2(p.faulted.error.find("cluster.faults") != std::string::npos,
                 p.faulted.error.c_str());
        QVERIFY2(p.faulted.error.find("every replica has a GPU out") != std::string::npos,
                 p.faulted.error.c_str());
    }

    void sweepRanksALeafAboveANic()
    {
        // The wide-EP layout (one EP-64 replica over 8 servers). A leaf down moves GPU k of
        // every server onto the NIC beside it, a NIC down one GPU of one server: either way the
        // busiest NIC carries two GPUs' shares of the all-to-all, and every rank of the EP
        // group waits for it, so the traffic says a leaf costs no less than any NIC (here
        // exactly as much), and much more than the rest of the NICs' failures would suggest
        // on their own. Every leaf and every NIC is priced (no rail symmetry for serving).
        // With several replicas a NIC costs less than its leaf (nicDownSlowsOnlyItsReplica):
        // each replica is timed on its own links.
        const Layout l = shipped("serving-deepseek-r1-wide-ep-h200-ib.railyard.json");
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        SweepOptions o;
        o.threads = 2;
        const SweepResult leaves = sweepFaults(l, t, SweepKind::Leaves, o);
        const SweepResult nics = sweepFaults(l, t, SweepKind::Nics, o);
        QVERIFY2(leaves.ok && nics.ok, (leaves.error + nics.error).c_str());
        QVERIFY(leaves.serving && nics.serving);
        QCOMPARE(leaves.candidates, 8);
        QCOMPARE(nics.candidates, 64);
        const SweepEntry &leaf = leaves.ranked.front(), &nic = nics.ranked.front();
        QVERIFY2(leaf.ok && nic.ok, (leaf.error + nic.error).c_str());
        qInfo("sweep: worst leaf %s -%.2f%% (TPOT %.3f ms, TTFT %.1f ms), worst NIC %s -%.2f%% "
              "(TPOT %.3f ms); baseline TPOT %.3f ms, %.1f tokens/s per GPU",
              leaf.name.c_str(),
              100 * leaf.costFraction,
              1e3 * leaf.stepTimeS,
              1e3 * leaf.ttftS,
              nic.name.c_str(),
              100 * nic.costFraction,
              1e3 * nic.stepTimeS,
              1e3 * leaves.baselineStepS,
              leaves.baselineTokensPerS);
        QVERIFY(leaf.costFraction > 0.1);
        QVERIFY(leaf.costFraction >= nic.costFraction - 1e-12);
        QCOMPARE(leaves.priced, 8);
        QCOMPARE(nics.priced, 64);
        QVERIFY(leaf.stepTimeS > leaves.baselineStepS);
        // The ranking's numbers are the evaluation's.
        Layout one = l;
        one.cluster.faults = {leaf.fault};
        const ServingEvaluation e = evaluateServing(one, withFaults(t, one.cluster.faults));
        RAILYARD_COMPARE_NEAR(e.outputTokensPerSPerGpu, leaf.tokensPerS, 1e-12);
        RAILYARD_COMPARE_NEAR(e.tpotS, leaf.stepTimeS, 1e-12);
        // The JSON says it is serving and names TPOT.
        const Json j = sweepJson(leaves, 3);
        QCOMPARE(j["serving"].get<bool>(), true);
        QVERIFY(j["ranked"][0].contains("tpot_s"));
        QVERIFY(j.contains("baseline_output_tokens_per_s_per_gpu"));
    }

    void sweepGpusOnePerReplica()
    {
        // A GPU out takes its replica, whichever GPU it is: one GPU priced per replica, and
        // pricing each agrees.
        const Layout l = shipped("serving-llama70b-tp8-h100.railyard.json");
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        const SweepResult s = sweepFaults(l, t, SweepKind::Gpus);
        QVERIFY2(s.ok, s.error.c_str());
        QCOMPARE(s.candidates, 16);
        QCOMPARE(s.priced, 2);
        for (const SweepEntry &e : s.ranked) {
            Layout one = l;
            one.cluster.faults = {e.fault};
            const ServingEvaluation each = evaluateServing(one, withFaults(t, one.cluster.faults));
            QVERIFY2(each.ok, each.error.c_str());
            QCOMPARE(each.outputTokensPerSPerGpu, e.tokensPerS);
        }
    }

    void stragglerRecoveryDropsItsReplica_data()
    {
        QTest::addColumn<double>("slowdown");
        QTest::addColumn<bool>("recovers");
        // Twice as slow: its replica serves half as much; the other one at 64 in flight serves
        // more than both together. 10% slow: dropping it loses more than the straggler costs.
        QTest::newRow("2x") << 2.0 << true;
        QTest::newRow("1.1x") << 1.1 << false;
    }

    void stragglerRecoveryDropsItsReplica()
    {
        QFETCH(double, slowdown);
        QFETCH(bool, recovers);
        Layout l = shipped("serving-llama70b-tp8-h100.railyard.json");
        const Topology healthy = buildTopology(l.cluster, Catalog::builtin());
        l.cluster.faults = {device("GPU 3", slowdown)};
        const Topology faulted = withFaults(healthy, l.cluster.faults);
        const FaultImpact impact = analyzeFaults(l, healthy, faulted);
        QVERIFY(impact.priced());
        qInfo("%.1fx straggler: recovery %s (%s)",
              slowdown,
              impact.recovery ? impact.recovery->summary.c_str() : "none",
              impact.recovery ? impact.recovery->price.c_str() : impact.recoveryNote.c_str());
        QCOMPARE(bool(impact.recovery), recovers);
        for (const Recovery &r : impact.consideredRecoveries)
            QVERIFY(r.tokensPerS > impact.servingFaulted.outputTokensPerS);
        if (!recovers)
            return;
        const Recovery &r = *impact.recovery;
        QCOMPARE(r.kind, std::string("drop-replicas"));
        QCOMPARE(r.layout.dataParallel(), 1);
        QCOMPARE(r.layout.mapping, (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
        QCOMPARE(*r.layout.serving->concurrency, 64);
        QCOMPARE(r.layout.cluster.faults, l.cluster.faults);
        const Json change = recoveryChangeJson(l, r.layout);
        QCOMPARE(change["serving"]["concurrency"].get<int>(), 64);
    }

    void decodeStragglerSwapsIntoThePrefillPool()
    {
        // Disaggregated R1 on a GB200 NVL72: GPU 45 (decode replica 0, GPUs 44-47) twice as
        // slow paces one decode replica in seven, its requests' every token. A different
        // placement moves that replica off it: swapped, rank for rank, with a prefill
        // replica's GPUs, the straggler paces one prefill replica in eleven instead (one
        // request in eleven waits longer for its first token), and the decode pool runs
        // healthy again. Priced as the evaluation prices the swapped layout.
        Layout l = shipped("serving-disaggregated-gb200-nvl72.railyard.json");
        const Topology healthy = buildTopology(l.cluster, Catalog::builtin());
        l.cluster.faults = {device("GPU 45", 2.0)};
        const Topology faulted = withFaults(healthy, l.cluster.faults);
        const FaultImpact impact = analyzeFaults(l, healthy, faulted);
        QVERIFY(impact.priced());
        const Recovery *swap = nullptr;
        for (const Recovery &r : impact.consideredRecoveries) {
            qInfo("%s: %.0f -> %.0f output tokens/s (recovers %.0f%%; %s)",
                  r.summary.c_str(),
                  impact.servingFaulted.outputTokensPerS,
                  r.tokensPerS,
                  100 * r.recovered,
                  r.price.c_str());
            if (r.kind == "swap-replicas" && !swap)
                swap = &r;
        }
        QVERIFY(swap);
        QVERIFY2(swap->summary.find("decode replica 0 (GPUs 44-47)") != std::string::npos,
                 swap->summary.c_str());
        QVERIFY(swap->tokensPerS > impact.servingFaulted.outputTokensPerS);
        QCOMPARE(swap->layout.cluster.faults, l.cluster.faults);
        // GPU 45 now serves the prefill pool, and the decode replicas all run alike.
        const ServingGpuGroups before = servingGpuGroups(l, faulted.gpuCount());
        const ServingGpuGroups after = servingGpuGroups(swap->layout, faulted.gpuCount());
        QVERIFY(before.ok() && after.ok());
        QCOMPARE(before.group[ServingGpuGroups::Pool][45], 1);
        QCOMPARE(after.group[ServingGpuGroups::Pool][45], 0);
        const ServingEvaluation e = evaluateServing(swap->layout, faulted);
        QVERIFY2(e.ok, e.error.c_str());
        QVERIFY(e.replicaClasses.empty());
        RAILYARD_COMPARE_NEAR(e.outputTokensPerS, swap->tokensPerS, 1e-12);
        RAILYARD_COMPARE_NEAR(e.tpotS, impact.servingHealthy.tpotS, 0.01);
        QVERIFY(e.slowestTtftS > e.ttftS); // the slow prefill replica's requests
        // The change is the mapping alone (one edit; the GUI applies it as one undo step).
        const Json change = recoveryChangeJson(l, swap->layout);
        QVERIFY(change.contains("mapping"));
        QVERIFY(!change.contains("serving"));
    }

    void unknownDeviceNamesTheKey()
    {
        // A fault naming a leaf the serving layout's cluster does not have.
        Layout l = shipped("serving-llama70b-tp8-h100.railyard.json");
        l.cluster.faults = {device("leaf 99")};
        try {
            (void)buildTopology(l.cluster, Catalog::builtin());
            QFAIL("no error");
        } catch (const InputError &e) {
            const std::string what = e.what();
            QVERIFY2(what.find("/cluster/faults/0/device") != std::string::npos, what.c_str());
            QVERIFY2(what.find("leaf 99") != std::string::npos, what.c_str());
        }
    }

    void impactReports()
    {
        // The serving impact's JSON and text carry the serving keys.
        Layout l = shipped("serving-llama70b-tp8-h100.railyard.json");
        const Topology healthy = buildTopology(l.cluster, Catalog::builtin());
        l.cluster.faults = {device("GPU 3")};
        const Topology faulted = withFaults(healthy, l.cluster.faults);
        const FaultImpact impact = analyzeFaults(l, healthy, faulted);
        QVERIFY(impact.priced());
        const Json j = faultImpactJson(impact, faulted);
        QCOMPARE(j["serving"].get<bool>(), true);
        QVERIFY(j["metrics"].contains("tpot_s"));
        QVERIFY(j["metrics"].contains("output_tokens_per_s_per_gpu"));
        QVERIFY(j["breakdown_s"].contains("decode.tp"));
        std::ostringstream text;
        writeFaultImpactText(text, impact, faulted);
        QVERIFY2(text.str().find("tpot_s") != std::string::npos, text.str().c_str());
        QVERIFY2(text.str().find("left service") != std::string::npos, text.str().c_str());
        const ReviewSection section = faultReviewSection(impact, faulted);
        QVERIFY(!section.blocks.empty());
        QVERIFY2(section.blocks.front().text.find("TPOT") != std::string::npos,
                 section.blocks.front().text.c_str());
    }
};

QTEST_GUILESS_MAIN(TestServingFaults)
#include "tst_servingfaults.moc"
