// Fault sweeps at 16,384 GPUs (layouts/llama3.1-405b-16k-h100.railyard.json): every leaf and
// every spine failed in turn and the job priced each time, on one worker thread and on all of
// them; one fault's impact (the healthy and faulted evaluations with link loads, and the
// recovery search). Then the same cluster serving DeepSeek-R1 as 256 wide-EP replicas (EP 64
// over 8 servers each, DeepEP), built here: its leaf and spine sweeps, every replica timed on
// its own links. Prints medians.
//   bench_faults [repeats]
#include "faults/faultimpact.h"
#include "faults/faultsweep.h"
#include "layout/layout.h"
#include "serving/servingevaluate.h"
#include "step/evaluate.h"
#include "topology/topology.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <thread>
#include <vector>

using namespace railyard::engine;
using Clock = std::chrono::steady_clock;

namespace {

// The process's CPU time on every thread (what the work costs where other processes share
// the cores), in ms.
double cpuMs()
{
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

double lastCpuMs = 0; // the CPU time of the median run of the last medianMs

double medianMs(int repeats, const std::function<void()> &work)
{
    std::vector<std::pair<double, double>> ms;
    for (int i = 0; i < repeats; ++i) {
        const auto t0 = Clock::now();
        const double c0 = cpuMs();
        work();
        ms.emplace_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count(),
                        cpuMs() - c0);
    }
    std::sort(ms.begin(), ms.end());
    lastCpuMs = ms[ms.size() / 2].second;
    return ms[ms.size() / 2].first;
}

} // namespace

int main(int argc, char **argv)
{
    const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
    const Layout layout = readLayoutFile(RAILYARD_SOURCE_DIR
                                         "/layouts/llama3.1-405b-16k-h100.railyard.json");
    const Topology healthy = buildTopology(layout.cluster, Catalog::builtin());
    std::printf("railyard fault benchmark, medians of %d runs\n", repeats);
    std::printf("%d GPUs, %d leaves, %d spines, %d links; %u hardware threads\n\n",
                healthy.gpuCount(),
                healthy.countOf(DeviceKind::Leaf),
                healthy.countOf(DeviceKind::Spine),
                healthy.linkCount(),
                std::max(1u, std::thread::hardware_concurrency()));

    EvaluationWorkspace workspace;
    EvaluateOptions fast;
    fast.linkLoads = false;
    fast.timeline = false;
    const double eval = medianMs(repeats, [&] { evaluate(layout, healthy, workspace, fast); });
    const double evalCpu = lastCpuMs;
    const double copy = medianMs(repeats, [&] { withFaults(healthy, {}); });
    Fault leaf;
    leaf.device = "leaf 0";
    Topology scratch = healthy;
    const double refault = medianMs(repeats, [&] { scratch.refault(healthy, {leaf}); });
    const double refaultCpu = lastCpuMs;
    std::printf("one evaluation (no link loads)      %9.2f ms wall, %.2f ms CPU\n", eval, evalCpu);
    std::printf("topology copy                       %9.2f ms\n", copy);
    std::printf("refault (undo, one leaf down)       %9.2f ms wall, %.2f ms CPU\n\n",
                refault,
                refaultCpu);

    for (const int threads : {1, 0}) {
        for (const SweepKind kind : {SweepKind::Leaves, SweepKind::Spines}) {
            SweepResult r;
            SweepOptions o;
            o.threads = threads;
            const double ms = medianMs(repeats, [&] { r = sweepFaults(layout, healthy, kind, o); });
            std::printf("sweep %-7s %-9s %4d candidates, %4d priced   %9.1f ms wall, %9.1f ms "
                        "CPU  (worst: %s, %+.2f%% throughput)\n",
                        toString(kind),
                        threads == 1 ? "1 thread" : "all",
                        r.candidates,
                        r.priced,
                        ms,
                        lastCpuMs,
                        r.ranked.empty() ? "-" : r.ranked.front().name.c_str(),
                        r.ranked.empty() ? 0.0 : -100 * r.ranked.front().costFraction);
        }
    }

    // The same cluster serving: 256 replicas of DeepSeek-R1 at EP 64 (attention DP, DeepEP's
    // low-latency all-to-all over the NICs), as the wide-EP H200 layout runs one.
    Layout serving = layout;
    serving.training = {};
    serving.serving = ServingConfig{};
    {
        const Layout wide = readLayoutFile(
                RAILYARD_SOURCE_DIR "/layouts/serving-deepseek-r1-wide-ep-h200-ib.railyard.json");
        serving.model = wide.model;
        serving.serving = wide.serving;
        serving.parallel = wide.parallel;
        serving.parallel.dp = healthy.gpuCount() / (wide.parallel.tp * wide.parallel.pp);
    }
    const ServingEvaluation base = evaluateServing(serving, healthy);
    std::printf("\nserving DeepSeek-R1, %d EP-%d replicas: %s, TPOT %.3f ms\n",
                serving.dataParallel(),
                serving.parallel.ep,
                base.ok ? "priced" : base.error.c_str(),
                1e3 * base.tpotS);
    for (const SweepKind kind : {SweepKind::Leaves, SweepKind::Spines}) {
        SweepResult r;
        SweepOptions o;
        o.threads = 1;
        const double ms = medianMs(repeats, [&] { r = sweepFaults(serving, healthy, kind, o); });
        std::printf("serving sweep %-7s 1 thread %4d candidates, %4d priced   %9.1f ms wall, "
                    "%9.1f ms CPU  (worst: %s, %+.2f%% output tokens/s)%s%s\n",
                    toString(kind),
                    r.candidates,
                    r.priced,
                    ms,
                    lastCpuMs,
                    r.ranked.empty() ? "-" : r.ranked.front().name.c_str(),
                    r.ranked.empty() ? 0.0 : -100 * r.ranked.front().costFraction,
                    r.ok ? "" : " error: ",
                    r.ok ? "" : r.error.c_str());
    }

    Layout straggler = layout;
    Fault slow;
    slow.device = "GPU 5000";
    slow.state = FaultState::Degraded;
    slow.slowdown = 1.1;
    straggler.cluster.faults = {slow};
    FaultImpact impact;
    const double impactMs = medianMs(repeats, [&] {
        const Topology faulted = withFaults(healthy, straggler.cluster.faults);
        impact = analyzeFaults(straggler, healthy, faulted);
    });
    std::printf("\nimpact of a 10%% straggler (GPU 5000), with the recovery search  %9.1f ms\n",
                impactMs);
    std::printf("  step %.3f s -> %.3f s; recovery: %s (%.1f%% of the loss back)\n",
                impact.healthy.stepTimeS,
                impact.faulted.stepTimeS,
                impact.recovery ? impact.recovery->summary.c_str() : "none",
                impact.recovery ? 100 * impact.recovery->recovered : 0.0);
    return 0;
}
