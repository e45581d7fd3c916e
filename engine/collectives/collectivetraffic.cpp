// The bytes each collective algorithm puts on each link: the traffic patterns of NCCL's ring,
// tree, NVLS, SHARP, hierarchical and all-to-all algorithms over the links a group crosses.
#include "collectives/collective.h"

#include "collectives/traffic.h"

#include <algorithm>
#include <array>
#include <span>
#include <vector>

namespace railyard::engine {

// Shared with the collective lesson (collectivelesson.cpp), which routes each step of a
// collective with these same pieces.
namespace detail {

// How many members of a domain carry its traffic to other domains (NCCL's network channels:
// on NVL72, fewer than the domain's NICs).
int netWidth(const Topology &t, int members)
{
    const int heads = t.gpuSpec().netHeadsPerDomain;
    return heads > 0 ? std::min(members, heads) : members;
}

// The members of a group's domain `d` as a mask of local GPU positions in their server.
std::uint64_t localMask(const Topology &t, const GroupShape &g, int d)
{
    std::uint64_t mask = 0;
    for (int k = 0; k < g.members(d); ++k) {
        const int local = t.localOfGpu(g.member(d, k));
        if (local < 64)
            mask |= std::uint64_t(1) << local;
    }
    return mask;
}

int nicIndex(const Topology &t, int nicDevice)
{
    return nicDevice - t.nicDevice(0);
}

// The NIC a GPU uses for its k-th flow (GPUs with several NICs spread flows over them).
int gpuNic(const Topology &t, int gpu, int k)
{
    const auto nics = t.gpuNics(gpu);
    if (nics.empty())
        return -1;
    return nicIndex(t, nics[static_cast<std::size_t>(k) % nics.size()]);
}

// Sends `bytes` from GPU a to GPU b across the fabric: host path, NICs, leaves, spine.
void addNetworkFlow(
        LinkTraffic &tr, const Topology &t, int a, int b, double bytes, int k, double flows)
{
    const auto nicsA = t.gpuNics(a);
    const auto nicsB = t.gpuNics(b);
    if (nicsA.empty() || nicsB.empty())
        return;
    const int first = t.nicDevice(0);
    if (nicsA.size() == 1 && nicsB.size() == 1) {
        const int na = nicsA[0] - first, nb = nicsB[0] - first;
        tr.addHostToNic(a, na, bytes, 0);
        tr.addNetwork(na, nb, bytes, flows);
        tr.addHostToNic(b, nb, 0, bytes);
        return;
    }
    // A GPU with several NICs spreads the flow over all of them.
    const std::size_t count = nicsA.size();
    const double part = bytes / static_cast<double>(count);
    for (std::size_t j = 0; j < count; ++j) {
        const int na = nicsA[(j + static_cast<std::size_t>(k)) % count] - first;
        const int nb = nicsB[(j + static_cast<std::size_t>(k)) % nicsB.size()] - first;
        tr.addHostToNic(a, na, part, 0);
        tr.addNetwork(na, nb, part, flows);
        tr.addHostToNic(b, nb, 0, part);
    }
}

// NCCL's double binary tree over `n` nodes (ncclGetBtree / ncclGetDtree): for each tree, each
// node's parent (-1 for the root).
std::array<std::vector<int>, 2> doubleBinaryTree(int n)
{
    std::array<std::vector<int>, 2> parents;
    const auto btree = [n](int rank) {
        int bit = 1;
        while (bit < n && !(bit & rank))
            bit <<= 1;
        if (rank == 0)
            return -1;
        int up = (rank ^ bit) | (bit << 1);
        if (up >= n)
            up = rank ^ bit;
        return up;
    };
    parents[0].resize(static_cast<std::size_t>(n));
    parents[1].resize(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r)
        parents[0][static_cast<std::size_t>(r)] = btree(r);
    // The second tree: mirrored for even counts, shifted by one for odd counts.
    for (int r = 0; r < n; ++r) {
        if (n % 2 == 1) {
            const int shifted = (r - 1 + n) % n;
            const int p = btree(shifted);
            parents[1][static_cast<std::size_t>(r)] = p < 0 ? -1 : (p + 1) % n;
        } else {
            const int mirrored = n - 1 - r;
            const int p = btree(mirrored);
            parents[1][static_cast<std::size_t>(r)] = p < 0 ? -1 : n - 1 - p;
        }
    }
    return parents;
}

} // namespace detail

using detail::addNetworkFlow;
using detail::doubleBinaryTree;
using detail::gpuNic;
using detail::localMask;
using detail::netWidth;

namespace {

// For each distinct key of `from` (sorted): the key, how often it occurs there and in `other`
// (sorted).
template<class F>
void forEachKey(const std::vector<int> &from, const std::vector<int> &other, F f)
{
    for (std::size_t i = 0; i < from.size();) {
        std::size_t j = i;
        while (j < from.size() && from[j] == from[i])
            ++j;
        const auto [lo, hi] = std::equal_range(other.begin(), other.end(), from[i]);
        f(from[i], double(j - i), double(hi - lo));
        i = j;
    }
}

// NCCL's all-to-all: every rank sends S/n to every other. Inside a domain over NVLink (or
// PCIe); across domains GPU k of domain d sends to GPU k (modulo its size) of every other domain
// e, S x |e| / n bytes, through its own NICs (PXN keeps the flows on their rail), so NICs do not
// aggregate. Priced per pair of domain classes (domains of one size), not per GPU and domain:
// for one sender position and NIC slot, the senders' and receivers' NICs, leaves and pods are
// counted, and each link gets its number of crossing flows x the bytes per flow at once. The
// bytes and flow counts are those of the flow-by-flow loop, in O(GPUs x log domains).
void addDirectAllToAll(LinkTraffic &tr,
                       const Topology &t,
                       const GroupShape &g,
                       double S,
                       double interDomainScale,
                       double flowsPerNic)
{
    const int n = g.n;
    const int N = g.domains;
    for (int d = 0; d < N; ++d) {
        const int m = g.members(d);
        const double intra = S * (m - 1) / n;
        for (int k = 0; k < m; ++k) {
            const int a = g.member(d, k);
            if (g.pcieOnly) {
                if (m > 1)
                    tr.addPciePeer(a, g.member(d, (k + 1) % m), intra);
            } else {
                tr.addNvlink(a, intra, intra);
            }
        }
    }
    const int c = t.shape().nicsPerGpu; // every GPU has this many NIC slots
    if (N < 2 || c <= 0)
        return;
    std::vector<std::pair<int, int>> bySize; // (members, domain)
    bySize.reserve(static_cast<std::size_t>(N));
    for (int d = 0; d < N; ++d)
        bySize.emplace_back(g.members(d), d);
    std::sort(bySize.begin(), bySize.end());
    struct Class
    {
        int size;
        std::vector<int> domains;
    };
    std::vector<Class> classes;
    for (const auto &[size, d] : bySize) {
        if (classes.empty() || classes.back().size != size)
            classes.push_back({size, {}});
        classes.back().domains.push_back(d);
    }
    const int firstNic = t.nicDevice(0);
    struct End
    {
        int gpu, nic;
    };
    std::vector<End> senders, receivers;
    std::vector<int> sendNics, recvNics, sendLeaves, recvLeaves, sendPods, recvPods;
    const auto collect = [&](const Class &cls, int position, int slot, std::vector<End> &ends) {
        ends.clear();
        for (int d : cls.domains) {
            const int gpu = g.member(d, position);
            const auto nics = t.gpuNics(gpu);
            ends.push_back({gpu, nics[static_cast<std::size_t>(slot)] - firstNic});
        }
    };
    const auto keys = [&](const std::vector<End> &ends,
                          std::vector<int> &nics,
                          std::vector<int> &leaves,
                          std::vector<int> &pods) {
        nics.clear();
        leaves.clear();
        pods.clear();
        for (const End &e : ends) {
            nics.push_back(e.nic);
            const int leaf = t.leafOfNic(e.nic);
            if (leaf < 0)
                continue; // no fabric beyond the NIC: no spine traffic
            leaves.push_back(leaf);
            if (const int pod = tr.podOfLeaf(leaf); pod >= 0)
                pods.push_back(pod);
        }
        std::sort(nics.begin(), nics.end());
        std::sort(leaves.begin(), leaves.end());
        std::sort(pods.begin(), pods.end());
    };
    for (const Class &A : classes) {
        for (const Class &B : classes) {
            const double bytes = S * B.size / n * interDomainScale; // one flow
            const double part = c == 1 ? bytes : bytes / c;         // one flow's share per NIC
            const double self = &A == &B ? 1.0 : 0.0; // a domain does not send to itself
            const double nA = double(A.domains.size()), nB = double(B.domains.size());
            for (int k = 0; k < A.size; ++k) {
                for (int j = 0; j < c; ++j) {
                    // The k-th flow's j-th NIC share: slot (j + k) mod c on both ends.
                    const int slot = (j + k) % c;
                    collect(A, k, slot, senders);
                    collect(B, k % B.size, slot, receivers);
                    if (nB - self > 0)
                        for (const End &e : senders)
                            tr.addHostToNic(e.gpu, e.nic, part * (nB - self), 0);
                    if (nA - self > 0)
                        for (const End &e : receivers)
                            tr.addHostToNic(e.gpu, e.nic, 0, part * (nA - self));
                    if (part <= 0)
                        continue;
                    keys(senders, sendNics, sendLeaves, sendPods);
                    keys(receivers, recvNics, recvLeaves, recvPods);
                    // A flow between two GPUs on one NIC stays in the NIC; one between two
                    // leaves (pods) goes through the spine (core). A sender's own domain, if
                    // among the receivers, has its key and so never counts as crossing.
                    forEachKey(sendNics, recvNics, [&](int nic, double ca, double cb) {
                        if (const double flows = ca * (nB - cb); flows > 0)
                            tr.addLink(t.nicUplink(nic), flows * part, 0);
                    });
                    forEachKey(recvNics, sendNics, [&](int nic, double cb, double ca) {
                        if (const double flows = cb * (nA - ca); flows > 0)
                            tr.addLink(t.nicUplink(nic), 0, flows * part);
                    });
                    const double leavesA = double(sendLeaves.size());
                    const double leavesB = double(recvLeaves.size());
                    forEachKey(sendLeaves, recvLeaves, [&](int leaf, double ca, double cb) {
                        if (const double flows = ca * (leavesB - cb); flows > 0)
                            tr.addLeafToSpine(leaf, flows * part, 0, flows * flowsPerNic);
                    });
                    forEachKey(recvLeaves, sendLeaves, [&](int leaf, double cb, double ca) {
                        if (const double flows = cb * (leavesA - ca); flows > 0)
                            tr.addLeafToSpine(leaf, 0, flows * part, flows * flowsPerNic);
                    });
                    forEachKey(sendPods, recvPods, [&](int pod, double ca, double cb) {
                        if (const double flows = ca * (leavesB - cb); flows > 0)
                            tr.addPodToCore(pod, flows * part, 0);
                    });
                    forEachKey(recvPods, sendPods, [&](int pod, double cb, double ca) {
                        if (const double flows = cb * (leavesA - ca); flows > 0)
                            tr.addPodToCore(pod, 0, flows * part);
                    });
                }
            }
        }
    }
}

} // namespace

void addPointToPoint(LinkTraffic &tr, const Topology &t, int from, int to, double bytes, int flow)
{
    if (from == to || bytes <= 0)
        return;
    const ClusterShape &s = t.shape();
    if (t.domainOfGpu(from) == t.domainOfGpu(to)) {
        if (s.pcieOnly) {
            tr.addPciePeer(from, to, bytes);
            return;
        }
        if (s.directNvlink) {
            tr.setNvlinkPeers(from, std::uint64_t(1) << std::min(63, t.localOfGpu(to)));
            tr.setNvlinkPeers(to, std::uint64_t(1) << std::min(63, t.localOfGpu(from)));
        }
        tr.addNvlink(from, bytes, 0);
        tr.addNvlink(to, 0, bytes);
        return;
    }
    addNetworkFlow(tr, t, from, to, bytes, flow, 1);
}

namespace {

// PAT (one GPU per domain): each rank exchanges with the ranks 1, 2, 4, ... away (a Bruck
// pattern, as NCCL's PAT schedules it), passing on the blocks it holds so far: 1, 2, 4, ... of
// the N - 1 it lacks, S / N bytes each. The bytes are the ring's; the peers are log2 N, further
// apart. Every link a step's flow crosses belongs to its sender or its receiver (the host path,
// the NIC's uplink, the leaf's uplinks to the spine, the pod's to the core), so each member's
// bytes (and queue pairs) are summed per NIC over its steps and added once: the same bytes on
// the same links as adding every step as a flow (addNetworkFlow), log2 N times fewer additions.
void addPatTraffic(LinkTraffic &tr, const Topology &t, const GroupShape &g, double S, double flows)
{
    const int N = g.domains;
    const std::size_t members = g.gpus.size();
    std::vector<std::span<const int>> memberNics(members);
    std::size_t slots = 0; // NICs of the member with the most
    for (std::size_t a = 0; a < members; ++a) {
        memberNics[a] = t.gpuNics(g.gpus[a]);
        slots = std::max(slots, memberNics[a].size());
    }
    if (slots == 0)
        return;
    // Per member (its place in g.gpus) and NIC: where the NIC sits, and the bytes out and in
    // through the member's host path, over the NIC's uplink (not for a flow that stays on one
    // NIC), over its leaf's uplinks (with their queue pairs) and its pod's core uplinks.
    struct Side
    {
        int nic = -1, leaf = -1, pod = -1;
        double hostOut = 0, hostIn = 0, upOut = 0, upIn = 0;
        double spineOut = 0, spineIn = 0, flowsOut = 0, flowsIn = 0, coreOut = 0, coreIn = 0;
    };
    std::vector<Side> sides(members * slots);
    std::vector<std::size_t> nicCount(members);
    const int first = t.nicDevice(0);
    for (std::size_t a = 0; a < members; ++a) {
        const std::span<const int> nics = memberNics[a];
        nicCount[a] = nics.size();
        for (std::size_t s = 0; s < nics.size(); ++s) {
            Side &side = sides[a * slots + s];
            side.nic = nics[s] - first;
            side.leaf = t.leafOfNic(side.nic);
            side.pod = tr.podOfLeaf(side.leaf);
        }
    }
    // One step's flow of `part` bytes from one member's NIC to another's.
    const auto add = [flows](Side &out, Side &in, double part) {
        out.hostOut += part;
        in.hostIn += part;
        if (out.nic == in.nic)
            return;
        out.upOut += part;
        in.upIn += part;
        if (out.leaf == in.leaf || out.leaf < 0 || in.leaf < 0)
            return;
        out.spineOut += part;
        out.flowsOut += flows;
        in.spineIn += part;
        in.flowsIn += flows;
        if (out.pod != in.pod) {
            out.coreOut += part;
            in.coreIn += part;
        }
    };
    // The steps: how far each rank sends, and how many bytes.
    std::vector<std::pair<int, double>> steps;
    for (int dist = 1, remaining = N - 1; remaining > 0; dist *= 2) {
        const int blocks = std::min(dist, remaining);
        remaining -= blocks;
        steps.emplace_back(dist, S * blocks / N);
    }
    // These loops run N log2 N times a collective, for every DP group of an evaluation, so
    // they keep divisions off the common path. The peer domain (d + dist) mod N: dist < N.
    const bool oneNicEach = std::all_of(nicCount.begin(), nicCount.end(), [](std::size_t c) {
        return c == 1;
    });
    if (g.ppn == 1 && oneNicEach) { // the usual case: member d is domain d
        for (const auto &[dist, bytes] : steps)
            if (bytes > 0)
                for (int d = 0; d < N; ++d) {
                    const int e = d + dist < N ? d + dist : d + dist - N;
                    add(sides[static_cast<std::size_t>(d)],
                        sides[static_cast<std::size_t>(e)],
                        bytes);
                }
    } else {
        for (std::size_t k = 0; k < steps.size(); ++k) {
            const auto &[dist, bytes] = steps[k];
            if (bytes <= 0)
                continue;
            for (int d = 0; d < N; ++d) {
                const int e = d + dist < N ? d + dist : d + dist - N;
                const int membersE = g.members(e);
                for (int m = 0; m < g.members(d); ++m) {
                    const std::size_t a = static_cast<std::size_t>(g.domainStart[d] + m);
                    const std::size_t b = static_cast<std::size_t>(g.domainStart[e] + m % membersE);
                    const std::size_t count = nicCount[a], countB = nicCount[b];
                    if (count == 0 || countB == 0)
                        continue;
                    // A GPU with several NICs spreads the flow over all of them
                    // (addNetworkFlow), its k-th flow starting at its k-th NIC.
                    const double part = bytes / static_cast<double>(count);
                    for (std::size_t j = 0; j < count; ++j)
                        add(sides[a * slots + (j + k) % count],
                            sides[b * slots + (j + k) % countB],
                            part);
                }
            }
        }
    }
    for (std::size_t a = 0; a < members; ++a)
        for (std::size_t s = 0; s < nicCount[a]; ++s) {
            const Side &side = sides[a * slots + s];
            if (side.hostOut > 0 || side.hostIn > 0)
                tr.addHostToNic(g.gpus[a], side.nic, side.hostOut, side.hostIn);
            if (side.upOut > 0 || side.upIn > 0)
                tr.addNicToLeaf(side.nic, side.upOut, side.upIn);
            if (side.spineOut > 0)
                tr.addLeafToSpine(side.leaf, side.spineOut, 0, side.flowsOut);
            if (side.spineIn > 0)
                tr.addLeafToSpine(side.leaf, 0, side.spineIn, side.flowsIn);
            if (side.coreOut > 0 || side.coreIn > 0)
                tr.addPodToCore(side.pod, side.coreOut, side.coreIn);
        }
}

} // namespace

void addCollectiveTraffic(LinkTraffic &tr,
                          const Topology &t,
                          const GroupShape &g,
                          CollectiveOp op,
                          Algorithm algo,
                          double S,
                          double interDomainScale)
{
    const int n = g.n;
    const int N = g.domains;
    if (n < 2)
        return;
    const double f = busBandwidthFactor(op, n);
    const double flows = g.channelsPerNic;
    if (t.shape().directNvlink)
        for (int d = 0; d < N; ++d) {
            const std::uint64_t mask = localMask(t, g, d);
            for (int k = 0; k < g.members(d); ++k)
                tr.setNvlinkPeers(g.member(d, k), mask);
        }

    // Ring-shaped traffic (ring all-reduce, all-gather, reduce-scatter, pipelined broadcast,
    // sendrecv's shift): each rank sends `edge` bytes to the next. Across domains NCCL builds one
    // ring per channel with a different GPU entering and leaving each domain, so the boundary
    // bytes spread over all members and their NICs.
    const auto ring = [&](double edge) {
        if (N == 1) {
            for (int k = 0; k < n; ++k) {
                const int a = g.gpus[static_cast<std::size_t>(k)];
                const int b = g.gpus[static_cast<std::size_t>((k + 1) % n)];
                if (g.pcieOnly)
                    tr.addPciePeer(a, b, edge);
                else
                    tr.addNvlink(a, edge, edge);
            }
            return;
        }
        for (int d = 0; d < N; ++d) {
            const int m = g.members(d);
            if (!g.pcieOnly) {
                const double intra = edge * (m - 1) / m;
                for (int k = 0; k < m; ++k)
                    tr.addNvlink(g.member(d, k), intra, intra);
            } else {
                for (int k = 0; k + 1 < m; ++k)
                    tr.addPciePeer(g.member(d, k), g.member(d, k + 1), edge / m * (m - 1));
            }
            const int e = (d + 1) % N;
            const int me = g.members(e);
            const int width = netWidth(t, std::max(m, me));
            for (int k = 0; k < width; ++k)
                addNetworkFlow(tr,
                               t,
                               g.member(d, k % m),
                               g.member(e, k % me),
                               edge / width,
                               k,
                               flows);
        }
    };

    switch (algo) {
    case Algorithm::Ring:
    case Algorithm::FlatRing: ring(op == CollectiveOp::Broadcast ? S : f * S); return;
    case Algorithm::P2p: ring(S); return;
    case Algorithm::Pat: addPatTraffic(tr, t, g, S, flows); return;
    case Algorithm::Direct: addDirectAllToAll(tr, t, g, S, interDomainScale, flows); return;
    case Algorithm::Hierarchical: {
        // Reduce-scatter inside each domain, the collective across domains between GPUs of the
        // same position (one ring per position, on its own NIC), all-gather back; pipelined.
        const bool ar = op == CollectiveOp::AllReduce;
        const double phases = ar ? 2.0 : 1.0;
        for (int d = 0; d < N; ++d) {
            const int m = g.members(d);
            const double intra = phases * S * (m - 1) / m;
            for (int k = 0; k < m; ++k)
                tr.addNvlink(g.member(d, k), intra, intra);
        }
        if (N > 1) {
            const double shard = S / g.ppn;
            const double edge = (ar ? 2.0 : 1.0) * (N - 1) / N * shard;
            for (int d = 0; d < N; ++d) {
                const int e = (d + 1) % N;
                for (int k = 0; k < g.members(d); ++k)
                    addNetworkFlow(tr,
                                   t,
                                   g.member(d, k),
                                   g.member(e, k % g.members(e)),
                                   edge,
                                   k,
                                   flows);
            }
        }
        return;
    }
    case Algorithm::Nvls:
    case Algorithm::NvlsTree:
    case Algorithm::Tree:
    case Algorithm::Sharp: {
        // Inside each domain: NVLS (the switch reduces; each GPU sends S and receives
        // S(m+1)/m), a chain (tree), or reduce-scatter + all-gather (CollNet).
        for (int d = 0; d < N; ++d) {
            const int m = g.members(d);
            double egress = 0, ingress = 0;
            if (algo == Algorithm::Nvls || algo == Algorithm::NvlsTree) {
                egress = S;
                ingress = S * (m + 1) / m;
            } else if (algo == Algorithm::Tree) {
                egress = ingress = 2.0 * S * (m - 1) / m;
            } else {
                egress = ingress = 2.0 * S * (m - 1) / m;
            }
            if (m > 1)
                for (int k = 0; k < m; ++k)
                    tr.addNvlink(g.member(d, k), egress, ingress);
        }
        if (N == 1)
            return;
        if (algo == Algorithm::Sharp) {
            // Each GPU's NIC sends its shard up and gets the reduced shard back; the leaves
            // reduce what their NICs send and pass one stream to the spine.
            std::vector<int> leaves;
            for (int d = 0; d < N; ++d) {
                const int m = g.members(d);
                for (int k = 0; k < m; ++k) {
                    const int gpu = g.member(d, k);
                    const int nic = gpuNic(t, gpu, 0);
                    if (nic < 0)
                        continue;
                    tr.addHostToNic(gpu, nic, S / m, S / m);
                    tr.addNicToLeaf(nic, S / m, S / m);
                    const int leaf = t.leafOfNic(nic);
                    if (std::find(leaves.begin(), leaves.end(), leaf) == leaves.end())
                        leaves.push_back(leaf);
                }
            }
            if (leaves.size() > 1)
                for (int leaf : leaves)
                    tr.addLeafToSpine(leaf, S / g.ppn, S / g.ppn, 1);
            return;
        }
        // Across domains: NCCL's double binary tree, each tree carrying half the data; per tree
        // edge the child sends its partial sum up and the parent sends the result down.
        const auto trees = doubleBinaryTree(N);
        for (const auto &parents : trees) {
            for (int c = 0; c < N; ++c) {
                const int p = parents[static_cast<std::size_t>(c)];
                if (p < 0)
                    continue;
                const int mc = g.members(c), mp = g.members(p);
                const int width = netWidth(t, std::max(mc, mp));
                const double half = S / 2.0 / width;
                for (int k = 0; k < width; ++k) {
                    addNetworkFlow(tr, t, g.member(c, k % mc), g.member(p, k % mp), half, k, flows);
                    addNetworkFlow(tr, t, g.member(p, k % mp), g.member(c, k % mc), half, k, flows);
                }
            }
        }
        return;
    }
    case Algorithm::Auto: break;
    }
}

} // namespace railyard::engine
