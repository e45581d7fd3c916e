// The planner's speed: configurations priced per second over whole searches (collective
// patterns built from scratch each time, as the CLI does), and the same with the pattern
// building left out (the fast path's own rate), on Llama 3.1 405B at 16,384 and 1,024 H100 and
// DeepSeek-V3 on 1,024 H100. Prints medians.
//   bench_planner [repeats] [layouts-dir]
#include "layout/layout.h"
#include "planner/planner.h"
#include "topology/topology.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace railyard::engine;

namespace {

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

void run(const char *name, const Layout &layout, int repeats)
{
    const Topology topology = buildTopology(layout.cluster, Catalog::builtin());
    std::vector<double> rate, pricing, elapsed, build;
    PlanSearch s;
    for (int i = 0; i < repeats; ++i) {
        s = searchPlans(layout, topology, {});
        elapsed.push_back(s.elapsedS);
        build.push_back(s.patternBuildS);
        rate.push_back(s.evaluated / s.elapsedS);
        pricing.push_back(s.evaluated / std::max(1e-9, s.elapsedS - s.patternBuildS));
    }
    std::printf("%s (%d GPUs): search size %lld configurations, %lld fit in HBM, %lld priced "
                "with shared links\n",
                name,
                topology.gpuCount(),
                static_cast<long long>(s.evaluated),
                static_cast<long long>(s.fitting),
                static_cast<long long>(s.scheduled));
    std::printf("  median %.1f ms per search (%.1f ms building collective patterns)\n",
                1e3 * median(elapsed),
                1e3 * median(build));
    std::printf("  median %.3g configurations/s end to end, %.3g/s pricing alone\n",
                median(rate),
                median(pricing));
    if (!s.plans.empty()) {
        const PlanChoice &c = s.plans.front().choice;
        std::printf("  best: tp%d cp%d ep%d pp%d vp%d dp%d mb%d %s %s %s: %.3f s/step, %.1f GiB\n",
                    c.tp,
                    c.cp,
                    c.ep,
                    c.pp,
                    c.vp,
                    c.dp,
                    c.microBatch,
                    toString(c.recompute),
                    toString(c.sharding),
                    toString(c.order),
                    s.plans.front().price.stepTimeS,
                    s.plans.front().price.memoryGiB);
    }
}

} // namespace

int main(int argc, char **argv)
{
    const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
    const std::string dir = argc > 2 ? argv[2] : RAILYARD_SOURCE_DIR "/layouts";
    const Layout big = readLayoutFile(dir + "/llama3.1-405b-16k-h100.railyard.json");
    run("llama3.1-405b-16k-h100", big, repeats);
    Layout small = big;
    small.cluster.nodes = 128;
    run("llama3.1-405b on 1,024 H100", small, repeats);
    Layout moe = small;
    moe.model = ModelConfig{};
    moe.model->preset = "deepseek-v3";
    moe.training.seqLen = 4096;
    moe.training.globalBatch = 4096;
    moe.training.precision = Precision::Fp8;
    run("deepseek-v3 on 1,024 H100", moe, repeats);
    return 0;
}
