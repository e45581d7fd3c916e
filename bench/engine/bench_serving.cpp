// The serving model's speed: a serving layout priced with per-link loads and both timelines, on
// 72 GPUs (a GB200 NVL72 rack: DeepSeek-R1 wide EP, a disaggregated Llama 3.3 70B) and on 16,384
// (Llama 3.1 70B TP8 x 2,048 replicas, DeepSeek-R1 TP64 x 256 over InfiniBand, disaggregated
// pools). The targets (issue 20): under 1 ms at 72 GPUs, under 20 ms at 16,384. Prints medians of
// wall time and of this process's CPU time (on a shared machine the wall time counts the waits).
// Then the serving planner on shipped layouts: configurations per second (by CPU time), every
// configuration priced from scratch and with what configurations share priced once (the
// planner's default; the same front, tst_servingplan), target 100,000 per second.
//   bench_serving [repeats] [layouts dir]
#include "base/jsonvalue.h"

#include "layout/layout.h"
#include "planner/servingplan.h"
#include "serving/servingevaluate.h"
#include "topology/topology.h"
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string>
#include <utility>
#include <vector>

using namespace railyard::engine;
using Clock = std::chrono::steady_clock;

namespace {

double cpuMs()
{
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) * 1e3 + double(t.tv_nsec) * 1e-6;
}

// Median wall and CPU milliseconds of `work`.
std::pair<double, double> medianMs(int repeats, const std::function<void()> &work)
{
    std::vector<double> wall, cpu;
    for (int i = 0; i < repeats; ++i) {
        const auto t0 = Clock::now();
        const double c0 = cpuMs();
        work();
        wall.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        cpu.push_back(cpuMs() - c0);
    }
    std::sort(wall.begin(), wall.end());
    std::sort(cpu.begin(), cpu.end());
    return {wall[wall.size() / 2], cpu[cpu.size() / 2]};
}

void run(const char *name, const Layout &l, int repeats)
{
    const Topology t = buildTopology(l.cluster, Catalog::builtin());
    EvaluationWorkspace workspace;
    ServingEvaluation e;
    ServingOptions all;
    ServingOptions bare;
    bare.linkLoads = false;
    bare.timeline = false;
    const auto full = medianMs(repeats, [&] { e = evaluateServing(l, t, workspace, all); });
    if (!e.ok) {
        std::printf("%s: %s\n", name, e.error.c_str());
        std::exit(1);
    }
    const auto numbers = medianMs(repeats, [&] { e = evaluateServing(l, t, workspace, bare); });
    std::printf("%-54s %6d GPUs %7zu links: with links and timelines %8.3f ms (CPU %8.3f), "
                "numbers only %8.3f ms (CPU %8.3f); TPOT %.2f ms, %.0f tokens/s per GPU\n",
                name,
                t.gpuCount(),
                t.links().size(),
                full.first,
                full.second,
                numbers.first,
                numbers.second,
                e.tpotS * 1e3,
                e.outputTokensPerSPerGpu);
}

Layout h100Llama(int nodes)
{
    Json d = Json::parse(R"({"format": "railyard-layout", "version": 1,
      "cluster": {"gpu": "H100-SXM", "gpus_per_node": 8, "nvlink_domain": 8,
                  "nic": {"gbps": 400, "per_gpu": 1}, "price_per_gpu_hour": 2.6},
      "model": {"preset": "llama3.1-70b"},
      "serving": {"stack": "vllm", "precision": "fp8", "input_tokens": 1024,
                  "output_tokens": 1024, "concurrency": 64},
      "parallel": {"tp": 8}})");
    d["cluster"]["nodes"] = nodes;
    return parseLayout(d.dump(), "bench.railyard.json");
}

// The planner on `l`: median configurations per CPU second, from scratch and sharing work.
void plan(const char *name, const Layout &l, int repeats)
{
    const Topology t = buildTopology(l.cluster, Catalog::builtin());
    for (const bool share : {false, true}) {
        ServingPlanOptions o;
        o.shareWork = share;
        ServingPlanResult r;
        const auto ms = medianMs(repeats, [&] { r = planServing(l, t, o); });
        std::printf("plan %-49s %s: %6lld configurations in %8.2f ms (CPU %8.2f): %8.0f per "
                    "second (CPU), %zu on the front\n",
                    name,
                    share ? "shared work " : "from scratch",
                    r.evaluated,
                    ms.first,
                    ms.second,
                    ms.second > 0 ? r.evaluated / (ms.second * 1e-3) : 0.0,
                    r.front.size());
    }
}

} // namespace

int main(int argc, char **argv)
{
    const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 21;
    const std::string dir = argc > 2 ? argv[2] : RAILYARD_SOURCE_DIR "/layouts";
    const auto shipped = [&](const char *file) { return readLayoutFile(dir + "/" + file); };
    run("DeepSeek-R1 wide EP on a GB200 NVL72 (72 GPUs)",
        shipped("serving-deepseek-r1-wide-ep-gb200-nvl72.railyard.json"),
        repeats);
    run("disaggregated Llama 3.3 70B on a GB200 NVL72",
        shipped("serving-disaggregated-gb200-nvl72.railyard.json"),
        repeats);
    run("Llama 3.1 70B TP8 x 9 on 72 H100", h100Llama(9), repeats);
    run("Llama 3.1 70B TP8 x 2,048 on 16,384 H100", h100Llama(2048), repeats);
    {
        Layout l = shipped("serving-deepseek-r1-wide-ep-h200-ib.railyard.json");
        l.cluster.nodes = 2048;
        l.parallel.dp.reset();
        run("DeepSeek-R1 TP64/EP64 x 256 on 16,384 H200 over IB", l, repeats);
    }
    {
        Layout l = h100Llama(2048);
        DisaggregationConfig d;
        d.prefill.tp = 8;
        d.prefill.replicas = 768;
        d.decode.tp = 8;
        d.decode.replicas = 1280;
        l.serving->disaggregated = d;
        run("disaggregated 70B: 768 TP8 prefill + 1,280 TP8 decode", l, repeats);
    }
    const int planRepeats = std::max(1, repeats / 4);
    plan("Llama 3.1 70B on 2 H100 servers",
         shipped("serving-llama70b-tp8-h100.railyard.json"),
         planRepeats);
    plan("DeepSeek-R1 on a GB200 NVL72",
         shipped("serving-deepseek-r1-wide-ep-gb200-nvl72.railyard.json"),
         planRepeats);
    plan("DeepSeek-R1 on H200 servers over IB",
         shipped("serving-deepseek-r1-wide-ep-h200-ib.railyard.json"),
         planRepeats);
    return 0;
}
