#include "faults/faultsweep.h"

#include "base/inputerror.h"
#include "faults/railsymmetry.h"
#include "layout/parallel.h"
#include "serving/servingevaluate.h"
#include "serving/servinggroups.h"
#include "step/evaluate.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>

namespace railyard::engine {

const char *toString(SweepKind kind)
{
    switch (kind) {
    case SweepKind::Leaves: return "leaves";
    case SweepKind::Spines: return "spines";
    case SweepKind::Nics: return "nics";
    case SweepKind::Links: return "links";
    case SweepKind::Gpus: return "gpus";
    }
    return "leaves";
}

std::optional<SweepKind> sweepKindFromString(const std::string &text)
{
    for (SweepKind k :
         {SweepKind::Leaves, SweepKind::Spines, SweepKind::Nics, SweepKind::Links, SweepKind::Gpus})
        if (text == toString(k))
            return k;
    return std::nullopt;
}

namespace {

// What a spine is to the rest of the fabric: the devices its links reach, with their lanes and
// rates. Spines with the same signature (in the same pod) are interchangeable.
using Signature = std::vector<std::tuple<int, double, double, double, double>>;

Signature spineSignature(const Topology &t, int spineDevice)
{
    Signature s;
    for (int l : t.linksOf(spineDevice)) {
        const Link &k = t.links()[static_cast<std::size_t>(l)];
        s.emplace_back(t.otherEnd(l, spineDevice), k.lanes, k.gbPerS, k.efficiency, k.health);
    }
    std::sort(s.begin(), s.end());
    s.emplace_back(t.devices()[static_cast<std::size_t>(spineDevice)].group, 0, 0, 0, 0);
    return s;
}

// For every spine, the first spine interchangeable with it (itself if none before it).
std::vector<int> spineClasses(const Topology &t)
{
    const int spines = t.countOf(DeviceKind::Spine);
    std::vector<int> rep(static_cast<std::size_t>(spines));
    std::map<Signature, int> seen;
    for (int k = 0; k < spines; ++k)
        rep[static_cast<std::size_t>(k)] = seen.emplace(spineSignature(t, t.spineDevice(k)), k)
                                                   .first->second;
    return rep;
}

constexpr const char *kRailSymmetryWhy
        = "each TP group is one whole server in the GPUs' order and the servers' rails are "
          "alike, so swapping rails in every server maps the fabric and the job onto themselves";

// One candidate priced: training's step, or serving's TPOT and output tokens/s per GPU.
struct Priced
{
    bool ok = false;
    std::string error;
    double stepTimeS = 0, tokensPerS = 0, ttftS = 0;
};

Priced priceLayout(const Layout &layout, const Topology &t, EvaluationWorkspace &workspace)
{
    Priced p;
    if (layout.isServing()) {
        ServingOptions o;
        o.linkLoads = false;
        o.timeline = false;
        o.details = false;
        const ServingEvaluation e = evaluateServing(layout, t, workspace, o);
        p.ok = e.ok;
        p.error = e.error;
        p.stepTimeS = e.tpotS;
        p.tokensPerS = e.outputTokensPerSPerGpu;
        p.ttftS = e.ttftS;
        return p;
    }
    EvaluateOptions fast;
    fast.linkLoads = false;
    fast.timeline = false;
    const Evaluation e = evaluate(layout, t, workspace, fast);
    p.ok = e.ok;
    p.error = e.error;
    p.stepTimeS = e.stepTimeS;
    p.tokensPerS = e.tokensPerS;
    return p;
}

Fault deviceFault(const std::string &name)
{
    Fault f;
    f.target = FaultTarget::Device;
    f.device = name;
    f.state = FaultState::Down;
    return f;
}

} // namespace

SweepResult sweepFaults(const Layout &layout,
                        const Topology &healthy,
                        SweepKind kind,
                        const SweepOptions &options)
{
    const auto start = std::chrono::steady_clock::now();
    SweepResult out;
    out.kind = kind;
    const Topology base = withFaults(healthy, layout.cluster.faults);
    out.serving = layout.isServing();
    {
        EvaluationWorkspace workspace;
        const Priced e = priceLayout(layout, base, workspace);
        if (!e.ok) {
            out.error = e.error;
            return out;
        }
        out.baselineStepS = e.stepTimeS;
        out.baselineTokensPerS = e.tokensPerS;
        out.baselineTtftS = e.ttftS;
    }

    // Rails interchangeable for the fabric and the job (railsymmetry.h): leaves, NICs and
    // their links priced once per scalable unit or server.
    const RailSymmetry rails = kind == SweepKind::Leaves || kind == SweepKind::Nics
                                               || kind == SweepKind::Links
                                       ? railSymmetry(layout, base)
                                       : RailSymmetry{};
    // The candidates, and for each the candidate whose price it takes (itself: priced).
    std::vector<SweepEntry> &entries = out.ranked;
    std::vector<int> rep;
    const auto add = [&](Fault f, std::string name, int priceAs) {
        SweepEntry e;
        e.fault = std::move(f);
        e.name = std::move(name);
        rep.push_back(priceAs < 0 ? static_cast<int>(entries.size()) : priceAs);
        entries.push_back(std::move(e));
    };
    // The candidate that prices the class `key` stands for (-1 for the class's first member,
    // which is then recorded as the candidate about to be added, priced itself).
    const auto pricedAs = [&entries](auto &entryOf, const auto &key) {
        if (const auto it = entryOf.find(key); it != entryOf.end())
            return it->second;
        entryOf[key] = static_cast<int>(entries.size());
        return -1;
    };
    switch (kind) {
    case SweepKind::Leaves: {
        // With rail symmetry, one leaf per scalable unit (its first) is priced for the unit.
        std::map<int, int> entryOfUnit;
        int shared = 0;
        for (int l = 0; l < base.countOf(DeviceKind::Leaf); ++l) {
            const int device = base.leafDevice(l);
            if (base.deviceDown(device))
                continue;
            int as = -1;
            if (rails.holds) {
                const int unit = base.devices()[static_cast<std::size_t>(device)].group;
                as = pricedAs(entryOfUnit, unit);
                shared += as >= 0;
            }
            add(deviceFault(base.deviceName(device)), base.deviceName(device), as);
        }
        if (shared > 0)
            out.symmetry.push_back(std::to_string(shared) + " of " + std::to_string(entries.size())
                                   + " leaves priced by rail symmetry: " + kRailSymmetryWhy
                                   + "; one leaf per scalable unit is priced");
        break;
    }
    case SweepKind::Spines: {
        const std::vector<int> classes = spineClasses(base);
        std::map<int, int> entryOfSpine;
        int shared = 0;
        for (int k = 0; k < static_cast<int>(classes.size()); ++k) {
            if (base.deviceDown(base.spineDevice(k)))
                continue;
            const int as = pricedAs(entryOfSpine, classes[static_cast<std::size_t>(k)]);
            shared += as >= 0;
            add(deviceFault(base.deviceName(base.spineDevice(k))),
                base.deviceName(base.spineDevice(k)),
                as);
        }
        if (shared > 0)
            out.symmetry.push_back(std::to_string(shared) + " of " + std::to_string(entries.size())
                                   + " spines priced by symmetry: each is joined to the same "
                                     "leaves (and cores) by links of the same lanes and rates "
                                     "as one priced, and traffic spreads over a leaf's uplinks "
                                     "by their working lanes, so failing either gives the same "
                                     "loads relabelled");
        break;
    }
    case SweepKind::Nics: {
        // With rail symmetry, one NIC per server (its first) is priced for the server.
        std::map<int, int> entryOfServer;
        int shared = 0;
        for (int n = 0; n < base.nicCount(); ++n) {
            const int device = base.nicDevice(n);
            if (base.deviceDown(device))
                continue;
            int as = -1;
            if (rails.holds) {
                const int server = base.devices()[static_cast<std::size_t>(device)].node;
                as = pricedAs(entryOfServer, server);
                shared += as >= 0;
            }
            add(deviceFault(base.deviceName(device)), base.deviceName(device), as);
        }
        if (shared > 0)
            out.symmetry.push_back(std::to_string(shared) + " of " + std::to_string(entries.size())
                                   + " NICs priced by rail symmetry: " + kRailSymmetryWhy
                                   + "; one NIC per server is priced");
        break;
    }
    case SweepKind::Links: {
        const std::vector<int> classes = spineClasses(base);
        // Leaf-spine links: (leaf device, spine class), or with rail symmetry (-1 - the leaf's
        // unit, spine class); NICs' uplinks with rail symmetry: (-1 - server, -1).
        std::map<std::pair<int, int>, int> entryOfClass;
        int shared = 0, sharedByRails = 0;
        for (int l = 0; l < base.linkCount(); ++l) {
            const Link &k = base.links()[static_cast<std::size_t>(l)];
            if ((k.kind != LinkKind::Ib && k.kind != LinkKind::Ethernet) || k.down())
                continue;
            Fault f;
            f.target = FaultTarget::Link;
            f.linkId = l;
            int as = -1;
            const Device &a = base.devices()[static_cast<std::size_t>(k.a)];
            const Device &b = base.devices()[static_cast<std::size_t>(k.b)];
            std::optional<std::pair<int, int>> key;
            if (b.kind == DeviceKind::Spine)
                key = std::pair{rails.holds && a.kind == DeviceKind::Leaf ? -1 - a.group : k.a,
                                classes[static_cast<std::size_t>(b.index)]};
            else if (rails.holds && a.kind == DeviceKind::Nic && b.kind == DeviceKind::Leaf)
                key = std::pair{-1 - a.node, -1};
            if (key) {
                as = pricedAs(entryOfClass, *key);
                if (as >= 0)
                    ++(rails.holds ? sharedByRails : shared);
            }
            add(std::move(f), base.linkName(l), as);
        }
        if (shared > 0)
            out.symmetry.push_back(std::to_string(shared)
                                   + " leaf-spine links priced by symmetry: "
                                     "a leaf's links to interchangeable "
                                     "spines (same leaves, lanes and "
                                     "rates) cost the same");
        if (sharedByRails > 0)
            out.symmetry.push_back(std::to_string(sharedByRails)
                                   + " links priced by symmetry: a leaf's links to "
                                     "interchangeable spines cost the same, and by rail "
                                     "symmetry ("
                                   + kRailSymmetryWhy
                                   + ") so do those of the other leaves of its scalable unit, "
                                     "and every NIC uplink of a server");
        break;
    }
    case SweepKind::Gpus: {
        if (out.serving) {
            // A GPU out takes its replica out of service, whichever GPU of it that was; a GPU
            // that serves nothing costs nothing.
            const ServingGpuGroups groups = servingGpuGroups(layout, base.gpuCount());
            std::map<int, int> entryOfReplica;
            int shared = 0;
            for (int g = 0; g < base.gpuCount(); ++g) {
                if (base.gpuDown(g))
                    continue;
                const int replica = groups.ok() ? groups.group[ServingGpuGroups::Replica]
                                                              [static_cast<std::size_t>(g)]
                                                : g;
                int as = -1;
                if (groups.ok()) {
                    as = pricedAs(entryOfReplica, replica);
                    shared += as >= 0;
                }
                add(deviceFault("GPU " + std::to_string(g)), "GPU " + std::to_string(g), as);
            }
            if (shared > 0)
                out.symmetry.push_back(std::to_string(shared)
                                       + " GPUs priced by symmetry: a GPU out takes its serving "
                                         "replica out of service whichever of its GPUs it was, "
                                         "and a GPU that serves nothing costs nothing");
            break;
        }
        // Without spare GPUs a GPU out drops its replica, whichever GPU of it that was: one
        // priced per replica. With spares (or GPUs already out) each GPU is priced.
        std::unique_ptr<RankLayout> ranks;
        try {
            ranks = std::make_unique<RankLayout>(layout);
        } catch (const InputError &) {
        }
        bool spares = !ranks || base.downGpuCount() > 0;
        for (int g = 0; ranks && !spares && g < base.gpuCount(); ++g)
            spares = ranks->rankOfGpu(g) < 0;
        std::map<int, int> entryOfReplica;
        int shared = 0;
        for (int g = 0; g < base.gpuCount(); ++g) {
            if (base.gpuDown(g))
                continue;
            int as = -1;
            if (!spares) {
                const int replica = ranks->coord(ranks->rankOfGpu(g), Dim::DP);
                as = pricedAs(entryOfReplica, replica);
                shared += as >= 0;
            }
            add(deviceFault("GPU " + std::to_string(g)), "GPU " + std::to_string(g), as);
        }
        if (shared > 0)
            out.symmetry.push_back(
                    std::to_string(shared)
                    + " GPUs priced by symmetry: with no spare GPU, a GPU out drops its "
                      "data-parallel replica, and the re-formed job is the same whichever of "
                      "the replica's GPUs was lost");
        break;
    }
    }
    out.candidates = static_cast<int>(entries.size());

    // Price the representatives on worker threads, each with its own workspace.
    std::vector<int> todo;
    for (std::size_t i = 0; i < entries.size(); ++i)
        if (rep[i] == static_cast<int>(i))
            todo.push_back(static_cast<int>(i));
    std::atomic<std::size_t> next{0};
    std::atomic<int> done{0};
    std::atomic<bool> cancelled{false};
    std::mutex progressMutex;
    const auto work = [&] {
        EvaluationWorkspace workspace;
        // The layout as it is with one more fault (the job re-formed around a GPU out reads
        // its faults).
        Layout candidate = layout;
        std::vector<Fault> &faults = candidate.cluster.faults;
        faults.emplace_back();
        // One copy of the cluster per worker, its faults redone for each candidate.
        Topology t = healthy;
        for (;;) {
            const std::size_t i = next++;
            if (i >= todo.size() || cancelled)
                return;
            SweepEntry &e = entries[static_cast<std::size_t>(todo[i])];
            faults.back() = e.fault;
            try {
                t.refault(healthy, faults);
                const Priced r = priceLayout(candidate, t, workspace);
                e.ok = r.ok;
                if (r.ok) {
                    e.stepTimeS = r.stepTimeS;
                    e.tokensPerS = r.tokensPerS;
                    e.ttftS = r.ttftS;
                } else {
                    e.error = r.error;
                }
            } catch (const InputError &err) {
                e.error = err.message();
            } catch (const std::bad_alloc &) {
                e.error = "out of memory pricing this failure";
            }
            const int n = ++done;
            if (options.progress) {
                const std::lock_guard lock(progressMutex);
                if (!options.progress(n, static_cast<int>(todo.size())))
                    cancelled = true;
            }
        }
    };
    const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
    const int threads = std::clamp(options.threads > 0 ? options.threads
                                                       : static_cast<int>(hardware),
                                   1,
                                   std::max(1, static_cast<int>(todo.size())));
    if (threads == 1) {
        work();
    } else {
        std::vector<std::thread> pool;
        pool.reserve(static_cast<std::size_t>(threads));
        for (int k = 0; k < threads; ++k)
            pool.emplace_back(work);
        for (std::thread &th : pool)
            th.join();
    }
    out.priced = done;
    out.cancelled = cancelled;

    for (std::size_t i = 0; i < entries.size(); ++i) {
        SweepEntry &e = entries[i];
        const int r = rep[i];
        if (r != static_cast<int>(i)) {
            const SweepEntry &p = entries[static_cast<std::size_t>(r)];
            e.ok = p.ok;
            e.error = p.error;
            e.stepTimeS = p.stepTimeS;
            e.tokensPerS = p.tokensPerS;
            e.ttftS = p.ttftS;
            e.pricedAs = p.name;
        }
        e.costFraction = e.ok && out.baselineTokensPerS > 0
                                 ? 1.0 - e.tokensPerS / out.baselineTokensPerS
                                 : 0.0;
    }
    if (out.cancelled) // what was not priced is left out
        std::erase_if(entries, [](const SweepEntry &e) { return !e.ok && e.error.empty(); });
    // Costliest first: failures the job cannot run through, then by the throughput lost.
    std::stable_sort(entries.begin(), entries.end(), [](const SweepEntry &a, const SweepEntry &b) {
        if (a.ok != b.ok)
            return !a.ok;
        return a.costFraction > b.costFraction;
    });
    out.ok = true;
    out.elapsedS = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
}

} // namespace railyard::engine
