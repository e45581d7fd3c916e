// The engine's speed: topology build, a step evaluation with per-link loads at 16,384 and
// 131,072 GPUs, one collective with per-link bytes on 1,024 GPUs and an all-to-all on 16,384.
// Prints medians.
//   bench_engine [repeats]
#include "collectives/collective.h"
#include "layout/layout.h"
#include "report/report.h"
#include "step/evaluate.h"
#include "topology/topology.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <ostream>
#include <streambuf>
#include <vector>

using namespace railyard::engine;
using Clock = std::chrono::steady_clock;

namespace {

// Counts what is written and keeps none of it: the report writers' own cost.
class CountingBuf : public std::streambuf
{
public:
    std::size_t bytes = 0;

protected:
    int_type overflow(int_type c) override
    {
        ++bytes;
        return traits_type::not_eof(c);
    }
    std::streamsize xsputn(const char *, std::streamsize n) override
    {
        bytes += static_cast<std::size_t>(n);
        return n;
    }
};

double medianMs(int repeats, const std::function<void()> &work)
{
    std::vector<double> ms;
    for (int i = 0; i < repeats; ++i) {
        const auto t0 = Clock::now();
        work();
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

Layout llama405b(int gpus, int dp)
{
    Layout l;
    l.cluster.gpu = "H100-SXM";
    l.cluster.nodes = gpus / 8;
    l.cluster.nic.gbitPerS = 400;
    l.cluster.fabric.kind = FabricKind::RailOptimized;
    ModelConfig m;
    m.preset = "llama3.1-405b";
    l.model = m;
    l.training.seqLen = 8192;
    l.training.globalBatch = 16 * dp;
    l.training.microBatch = 1;
    l.parallel.tp = 8;
    l.parallel.pp = 16;
    l.parallel.vp = 1;
    l.parallel.dp = dp;
    return l;
}

} // namespace

int main(int argc, char **argv)
{
    const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 15;
    std::printf("railyard engine benchmark, medians of %d runs\n\n", repeats);
    for (const auto &[gpus, dp] :
         std::vector<std::pair<int, int>>{{1024, 8}, {16384, 128}, {131072, 1024}}) {
        const Layout l = llama405b(gpus, dp);
        Topology t;
        const double build = medianMs(std::max(1, repeats / 3),
                                      [&] { t = buildTopology(l.cluster, Catalog::builtin()); });
        Evaluation e;
        EvaluationWorkspace workspace; // kept across evaluations, as the document keeps one
        EvaluateOptions withLinks;
        const double eval = medianMs(repeats, [&] { e = evaluate(l, t, workspace, withLinks); });
        EvaluateOptions noLinks;
        noLinks.linkLoads = false;
        noLinks.timeline = false;
        const double evalNoLinks = medianMs(repeats, [&] { evaluate(l, t, workspace, noLinks); });
        const double evalFresh = medianMs(std::max(1, repeats / 3),
                                          [&] { evaluate(l, t, noLinks); });
        std::printf("%7d GPUs (llama3.1-405b TP8 PP16 DP%d): %7d devices %8d links\n",
                    gpus,
                    dp,
                    t.deviceCount(),
                    t.linkCount());
        std::printf("    build topology          %9.3f ms\n", build);
        std::printf("    evaluate, link loads    %9.3f ms  (%zu loaded links, step %.3f s%s)\n",
                    eval,
                    e.links ? e.links->loaded : 0,
                    e.stepTimeS,
                    e.ok ? "" : ", NOT OK");
        std::printf("    evaluate, numbers only  %9.3f ms\n", evalNoLinks);
        std::printf("    same, fresh workspace   %9.3f ms\n", evalFresh);
        for (const LinkListing listing : {LinkListing::Busiest, LinkListing::All}) {
            ReportOptions report;
            report.links = listing;
            CountingBuf sink;
            const double ms = medianMs(std::max(1, repeats / 3), [&] {
                sink.bytes = 0;
                std::ostream out(&sink);
                writeEvaluationJson(out, e, t, report);
            });
            std::printf("    JSON report, %-10s %9.3f ms  (%.0f kB)\n",
                        listing == LinkListing::All ? "all links" : "default",
                        ms,
                        sink.bytes / 1e3);
        }
    }
    {
        Layout l = llama405b(1024, 8);
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        CollectiveRequest req;
        req.op = CollectiveOp::AllReduce;
        req.bytes = 1e9;
        req.wantLinks = true;
        CollectiveResult r;
        const double ms = medianMs(repeats, [&] { r = estimateCollective(t, req); });
        std::printf("\n1024-GPU all-reduce of 1 GB with per-link bytes: %.3f ms (%s, %zu links)\n",
                    ms,
                    toString(r.algorithm),
                    r.links.size());
    }
    {
        // All-to-all over every GPU: priced per class of NVLink domains (it was per GPU and
        // domain: 4.1 s here).
        Layout l = llama405b(16384, 128);
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        CollectiveRequest req;
        req.op = CollectiveOp::AllToAll;
        req.bytes = 1e9;
        CollectiveResult r;
        const double ms = medianMs(repeats, [&] { r = estimateCollective(t, req); });
        std::printf("16384-GPU all-to-all of 1 GB: %.3f ms (%.4f s, busbw %.1f GB/s)\n",
                    ms,
                    r.timeS,
                    r.busbwGBps);
    }
    return 0;
}
