// The lesson's schedules for the algorithms that reduce towards a point: NCCL's tree (chains
// inside each domain, a double binary tree across domains), NVLS (the NVSwitch reduces and
// multicasts) and NVLS-tree, and SHARP (the network switches reduce). Each step's link bytes
// come from the traffic model's pieces, as the estimate routes them (collectivetraffic.cpp).
#include "lesson/collectivelesson_p.h"

#include "base/units.h"
#include "collectives/collective_p.h"

#include <algorithm>
#include <string>

namespace railyard::engine::detail {

namespace {

int mod(int a, int n)
{
    return ((a % n) + n) % n;
}

// Each node's depth in a tree given by parents (the root: 0).
std::vector<int> depths(const std::vector<int> &parents)
{
    std::vector<int> depth(parents.size(), 0);
    for (std::size_t r = 0; r < parents.size(); ++r) {
        int d = 0;
        for (int p = parents[r]; p >= 0 && d <= static_cast<int>(parents.size());
             p = parents[static_cast<std::size_t>(p)])
            ++d;
        depth[r] = d;
    }
    return depth;
}

std::string perDomain(const GroupShape &g)
{
    return std::to_string(g.ppn) + " GPUs";
}

} // namespace

void treeSchedule(LessonBuilder &b, Algorithm algo, double S)
{
    const GroupShape &g = b.group();
    const Topology &t = b.topology();
    CollectiveLesson &out = b.out();
    const int N = g.domains, P = g.ppn;
    const bool nvls = algo == Algorithm::NvlsTree;
    const int w = netWidth(t, P);
    const double flows = g.channelsPerNic;
    // Unit chunk 2ch + h: channel ch's share of the data (S/P), half h (one per binary tree).
    out.chunks = 2 * P;
    out.chunkBytes = S / (2 * P);
    const auto head = [&](int d, int ch) { return (ch % w) % g.members(d); };
    const std::string shard = formatBytes(S / P);

    // 1. Inside each domain, towards the GPUs that talk to the network.
    if (nvls) {
        const int pattern = b.measure([&](LinkTraffic &tr) {
            for (int d = 0; d < N; ++d)
                if (const int m = g.members(d); m > 1)
                    for (int k = 0; k < m; ++k)
                        tr.addNvlink(g.member(d, k), S, S / m);
        });
        LessonStep &st = b.step(
                pattern,
                "NVLS reduce in each server",
                "every GPU pushes its whole buffer (" + formatBytes(S)
                        + ") into the NVSwitches (each its share of the lanes), which add the "
                        + perDomain(g) + "' copies; GPU k gets shard k of the server's sum",
                false);
        for (int d = 0; d < N; ++d) {
            const auto switches = b.nvswitchesOf(d);
            for (const auto &[sw, share] : switches)
                for (int k = 0; k < g.members(d); ++k)
                    b.sendDevice(st,
                                 b.rank(d, k),
                                 b.gpuDevice(b.rank(d, k)),
                                 -1,
                                 sw,
                                 0,
                                 2 * P,
                                 S * share,
                                 true);
            for (const auto &[sw, share] : switches)
                for (int ch = 0; ch < P; ++ch) {
                    const int r = b.rank(d, head(d, ch));
                    b.sendDevice(st, -1, sw, r, b.gpuDevice(r), 2 * ch, 2, S / P * share, false);
                }
        }
    } else {
        for (int s = 0; s < P - 1; ++s) {
            const int pattern = b.measure([&](LinkTraffic &tr) { b.intraNvlink(tr, S, S, s); });
            LessonStep &st = b.step(pattern,
                                    "tree: reduce up the chain in each server",
                                    "in each server every chain passes its running sum of one "
                                    "channel's data ("
                                            + shard + ") one GPU further, which adds its own",
                                    false);
            for (int d = 0; d < N; ++d) {
                const int m = g.members(d);
                if (s >= m - 1)
                    continue;
                for (int ch = 0; ch < P; ++ch) {
                    const int h = head(d, ch);
                    b.send(st,
                           b.rank(d, mod(h + 1 + s, m)),
                           b.rank(d, mod(h + 2 + s, m)),
                           2 * ch,
                           2,
                           S / P,
                           true);
                }
            }
        }
    }

    // 2. and 3. The double binary tree across domains, level by level: up (children send
    // their partial sums to their parents), then down (parents send the result back).
    const auto trees = doubleBinaryTree(N);
    const std::array<std::vector<int>, 2> depth{depths(trees[0]), depths(trees[1])};
    std::array<int, 2> maxDepth{0, 0};
    for (int h = 0; h < 2; ++h)
        for (int d : depth[static_cast<std::size_t>(h)])
            maxDepth[static_cast<std::size_t>(h)] = std::max(maxDepth[static_cast<std::size_t>(h)],
                                                             d);
    const int rounds = std::max(maxDepth[0], maxDepth[1]);
    const auto level = [&](bool up, int r) {
        // The edges (tree, child) of this round.
        std::vector<std::pair<int, int>> edges;
        for (int h = 0; h < 2; ++h) {
            const int want = up ? maxDepth[static_cast<std::size_t>(h)] - r : 1 + r;
            for (int c = 0; c < N; ++c)
                if (want >= 1
                    && depth[static_cast<std::size_t>(h)][static_cast<std::size_t>(c)] == want)
                    edges.emplace_back(h, c);
        }
        if (edges.empty())
            return;
        const int pattern = b.measure([&](LinkTraffic &tr) {
            for (const auto &[h, c] : edges) {
                const int p = trees[static_cast<std::size_t>(h)][static_cast<std::size_t>(c)];
                const int mc = g.members(c), mp = g.members(p);
                const int width = netWidth(t, std::max(mc, mp));
                for (int k = 0; k < width; ++k) {
                    const int from = up ? g.member(c, k % mc) : g.member(p, k % mp);
                    const int to = up ? g.member(p, k % mp) : g.member(c, k % mc);
                    addNetworkFlow(tr, t, from, to, S / 2.0 / width, k, flows);
                }
            }
        });
        LessonStep &st
                = b.step(pattern,
                         up ? "tree up across servers" : "tree down across servers",
                         up ? "the deepest servers still waiting (level "
                                         + std::to_string(rounds - r) + " of "
                                         + std::to_string(rounds)
                                         + ") send their partial sums (half of each shard on "
                                           "each of the two trees) to their parent server, "
                                           "which adds them"
                            : "parent servers send the finished sums down to their "
                              "children at depth "
                                         + std::to_string(r + 1),
                         true);
        for (const auto &[h, c] : edges) {
            const int p = trees[static_cast<std::size_t>(h)][static_cast<std::size_t>(c)];
            for (int ch = 0; ch < P; ++ch) {
                const int rc = b.rank(c, head(c, ch)), rp = b.rank(p, head(p, ch));
                b.send(st, up ? rc : rp, up ? rp : rc, 2 * ch + h, 1, S / (2.0 * P), up);
            }
        }
    };
    for (int r = 0; r < rounds; ++r)
        level(true, r);
    for (int r = 0; r < rounds; ++r)
        level(false, r);

    // 4. Inside each domain, from the network GPUs to every member.
    if (nvls) {
        const int pattern = b.measure([&](LinkTraffic &tr) {
            for (int d = 0; d < N; ++d)
                if (const int m = g.members(d); m > 1)
                    for (int k = 0; k < m; ++k)
                        tr.addNvlink(g.member(d, k), 0, S);
        });
        LessonStep &st = b.step(pattern,
                                "NVLS multicast in each server",
                                "each GPU hands its finished shard to the NVSwitches, which "
                                "multicast it: every GPU receives the whole result ("
                                        + formatBytes(S) + ")",
                                false);
        for (int d = 0; d < N; ++d) {
            const auto switches = b.nvswitchesOf(d);
            for (const auto &[sw, share] : switches)
                for (int ch = 0; ch < P; ++ch) {
                    const int r = b.rank(d, head(d, ch));
                    b.sendDevice(st, r, b.gpuDevice(r), -1, sw, 2 * ch, 2, S / P * share, false);
                }
            for (const auto &[sw, share] : switches)
                for (int k = 0; k < g.members(d); ++k)
                    b.sendDevice(st,
                                 -1,
                                 sw,
                                 b.rank(d, k),
                                 b.gpuDevice(b.rank(d, k)),
                                 0,
                                 2 * P,
                                 S * share,
                                 false);
        }
        return;
    }
    for (int s = 0; s < P - 1; ++s) {
        const int pattern = b.measure([&](LinkTraffic &tr) { b.intraNvlink(tr, S, S, s); });
        LessonStep &st = b.step(pattern,
                                "tree: broadcast down the chain in each server",
                                "in each server every chain passes one channel's finished data ("
                                        + shard + ") one GPU further",
                                false);
        for (int d = 0; d < N; ++d) {
            const int m = g.members(d);
            if (s >= m - 1)
                continue;
            for (int ch = 0; ch < P; ++ch) {
                const int h = head(d, ch);
                b.send(st,
                       b.rank(d, mod(h - s, m)),
                       b.rank(d, mod(h - s - 1, m)),
                       2 * ch,
                       2,
                       S / P,
                       false);
            }
        }
    }
}

void nvlsSchedule(LessonBuilder &b, double S)
{
    const GroupShape &g = b.group();
    CollectiveLesson &out = b.out();
    const int m = g.n;
    out.chunks = m;
    out.chunkBytes = S / m;
    const auto switches = b.nvswitchesOf(0);
    const int reduce = b.measure([&](LinkTraffic &tr) {
        for (int k = 0; k < m; ++k)
            tr.addNvlink(g.member(0, k), S, S / m);
    });
    LessonStep &s1
            = b.step(reduce,
                     "NVLS reduce",
                     "every GPU pushes its whole buffer (" + formatBytes(S)
                             + ") into the NVSwitches (each its share of the lanes), which add the "
                             + std::to_string(m)
                             + " copies of each shard; GPU k reads back shard k ("
                             + formatBytes(S / m) + "), reduced",
                     false);
    for (const auto &[sw, share] : switches)
        for (int k = 0; k < m; ++k)
            b.sendDevice(s1, k, b.gpuDevice(k), -1, sw, 0, m, S * share, true);
    for (const auto &[sw, share] : switches)
        for (int k = 0; k < m; ++k)
            b.sendDevice(s1, -1, sw, k, b.gpuDevice(k), k, 1, S / m * share, false);
    const int multicast = b.measure([&](LinkTraffic &tr) {
        for (int k = 0; k < m; ++k)
            tr.addNvlink(g.member(0, k), 0, S);
    });
    LessonStep &s2 = b.step(multicast,
                            "NVLS multicast",
                            "the NVSwitches multicast every reduced shard: each GPU receives the "
                            "whole result ("
                                    + formatBytes(S) + ")",
                            false);
    for (const auto &[sw, share] : switches)
        for (int k = 0; k < m; ++k)
            b.sendDevice(s2, -1, sw, k, b.gpuDevice(k), 0, m, S * share, false);
}

void sharpSchedule(LessonBuilder &b, double S)
{
    const GroupShape &g = b.group();
    const Topology &t = b.topology();
    CollectiveLesson &out = b.out();
    const int N = g.domains, P = g.ppn;
    out.chunks = P;
    out.chunkBytes = S / P;
    const auto intra = [&](bool reduce) {
        for (int s = 0; s < P - 1; ++s) {
            const int pattern = b.measure([&](LinkTraffic &tr) { b.intraNvlink(tr, S, S, s); });
            LessonStep &st
                    = b.step(pattern,
                             reduce ? "reduce-scatter in each server" : "all-gather in each server",
                             reduce ? "inside each server, each GPU sends a shard ("
                                              + formatBytes(S / P)
                                              + ") to its neighbour, which adds it"
                                    : "inside each server, each GPU forwards a finished shard ("
                                              + formatBytes(S / P) + ") to its neighbour",
                             false);
            for (int d = 0; d < N; ++d) {
                const int m = g.members(d);
                if (s >= m - 1)
                    continue;
                for (int i = 0; i < m; ++i)
                    b.send(st,
                           b.rank(d, i),
                           b.rank(d, (i + 1) % m),
                           reduce ? mod(i - s - 1, m) : mod(i - s, m),
                           1,
                           S / m,
                           reduce);
            }
        }
    };
    // The leaves the members' NICs hang from, and the spine that joins them.
    std::vector<int> leaves;
    for (int d = 0; d < N; ++d)
        for (int k = 0; k < g.members(d); ++k)
            if (const int nic = gpuNic(t, g.member(d, k), 0); nic >= 0) {
                const int leaf = t.leafOfNic(nic);
                if (leaf >= 0 && std::find(leaves.begin(), leaves.end(), leaf) == leaves.end())
                    leaves.push_back(leaf);
            }
    int spine = -1;
    if (leaves.size() > 1 && !t.leafUplinks(leaves[0]).empty())
        spine = t.otherEnd(t.leafUplinks(leaves[0])[0], t.leafDevice(leaves[0]));
    const auto network = [&](bool up) {
        const int pattern = b.measure([&](LinkTraffic &tr) {
            for (int d = 0; d < N; ++d) {
                const int m = g.members(d);
                for (int k = 0; k < m; ++k) {
                    const int gpu = g.member(d, k);
                    const int nic = gpuNic(t, gpu, 0);
                    if (nic < 0)
                        continue;
                    tr.addHostToNic(gpu, nic, up ? S / m : 0, up ? 0 : S / m);
                    tr.addNicToLeaf(nic, up ? S / m : 0, up ? 0 : S / m);
                }
            }
            if (leaves.size() > 1)
                for (int leaf : leaves)
                    tr.addLeafToSpine(leaf, up ? S / P : 0, up ? 0 : S / P, 1);
        });
        LessonStep &st = b.step(pattern,
                                up ? "SHARP reduce in the switches" : "SHARP result back",
                                up ? "GPU k of every server sends shard k (" + formatBytes(S / P)
                                                + ") up its NIC; the switches add the "
                                                + std::to_string(N) + " servers' shards in flight"
                                   : "the switches send each reduced shard back down to GPU k "
                                     "of every server",
                                true);
        if (!up && spine >= 0)
            for (int l : leaves)
                b.sendDevice(st, -1, spine, -1, t.leafDevice(l), 0, P, S / P, false);
        for (int d = 0; d < N; ++d)
            for (int k = 0; k < g.members(d); ++k) {
                const int r = b.rank(d, k);
                const int nic = gpuNic(t, g.member(d, k), 0);
                const int leaf = nic >= 0 ? t.leafOfNic(nic) : -1;
                if (leaf < 0)
                    continue;
                const int dev = t.leafDevice(leaf);
                if (up) {
                    b.sendDevice(st, r, b.gpuDevice(r), -1, dev, k, 1, S / g.members(d), true);
                } else {
                    b.sendDevice(st, -1, dev, r, b.gpuDevice(r), k, 1, S / g.members(d), false);
                }
            }
        if (up && spine >= 0)
            for (int l : leaves)
                b.sendDevice(st, -1, t.leafDevice(l), -1, spine, 0, P, S / P, true);
    };
    intra(true);
    network(true);
    network(false);
    intra(false);
}

} // namespace railyard::engine::detail
