#pragma once

// The collectives of a serving forward pass, priced on the links their groups cross: TP
// all-reduces of a few kilobytes to megabytes (latency-bound: NCCL's LL and LL128 protocols, or
// the stack's one-shot all-reduce over NVLink), MoE dispatch and combine (NCCL all-to-all or
// DeepEP's low-latency kernels), pipeline sends. Each kind is priced once for all its groups at
// once (groups that share links slow each other) as a function of the message size, so a decode
// step at any batch size is arithmetic.

#include "collectives/collective.h"
#include "layout/servingstack.h"
#include "serving/servingsetup.h"
#include "topology/topology.h"

#include <string>
#include <vector>

namespace railyard::engine {

class LinkTraffic;

// A one-shot all-reduce (every rank reads every peer's buffer over NVLink and reduces locally:
// vLLM's and SGLang's custom all-reduce, TensorRT-LLM's ONESHOT) costs this latency plus the
// (n - 1) buffers each rank reads at its NVLink rate. vLLM's benchmark on H100 with CUDA graphs
// (PR #24111, "Device Communicator Benchmark Results", TP=4, (32, 8192) bf16 = 0.5 MB:
// ca_1stage 0.010 ms): 10 us less 3 x 0.5 MiB at the achieved 371 GB/s = 6 us. The other rows
// (TP 4 and 6, 0.5 to 1 MB) are checked in tst_servingparts.
inline constexpr double kOneShotLatencyS = 6.0e-6;
// A two-shot all-reduce (reduce-scatter then all-gather over NVLink peer access: vLLM's
// ca_2stage, TensorRT-LLM's TWOSHOT) pays that latency once per stage and moves 2 (n - 1) / n of
// the buffer per rank: the same table's ca_2stage rows (TP 6, 1 MB: 0.017 ms) fit it.
// DeepEP's low-latency dispatch or combine: its latency beyond the bytes on the busiest link
// (each token copy sent to its expert's GPU, over RDMA to other servers and NVLink inside one).
// DeepEP's V1 table (docs/legacy.md, "Low-latency kernels with pure RDMA": H800, CX7 400 Gb/s,
// 128 tokens, hidden 7168, top-8) gives 118-194 us for dispatch at EP 16-256; at the NIC's
// achieved 46 GB/s the bytes take 83-165 us: about 30 us more. tst_servingparts checks every row.
// The latency is RDMA's (GPU-initiated sends, completion flags over the network).
inline constexpr double kDeepEpLatencyS = 30e-6;
// Inside one NVLink domain the low-latency kernels store to their peers over NVLink; what a
// dispatch or combine of one token per rank takes there is the kernels' own floor (per-expert
// counts and flags exchanged, every rank waiting for every other): the median of the 32 one-token
// rows of tests/data/serving/alltoall-ep.csv, DeepEP low latency on one H100 (12.2-16.3 us), H200
// (11.9-12.6) and B200 (22.1) server and TensorRT-LLM's NVLink all-to-all on GB200 at EP 2-64
// (10.7-68.6), AIConfigurator @ 095f58a5. tst_servingparts checks every row.
inline constexpr double kDeepEpNvlinkLatencyS = 13.3e-6;

enum class CollectiveMethod { None, Nccl, OneShot, TwoShot, DeepEP };
const char *toString(CollectiveMethod m); // "nccl", "one-shot", "two-shot", "deepep"

// One kind of collective on a set of groups of the same size, as a function of its bytes.
struct CollectivePricer
{
    CollectiveOp op = CollectiveOp::AllReduce;
    int n = 0;       // ranks per group
    int domains = 0; // NVLink domains the widest group spans
    int groups = 0;
    bool valid() const { return n > 1; }
    // NCCL's candidates on the widest group, their link-bound seconds per byte measured with
    // every group running at once.
    CollectiveCurve curve;
    double launchCutS = 0; // NCCL's host launch time, not paid when replayed from a CUDA graph
    // The stack's custom all-reduce may run (inside one NVLink domain): one-shot or two-shot.
    bool oneShot = false;
    double oneShotMaxBytes = 0;
    double oneShotPerByteS = 0; // every group's NVLink ports at once
    double twoShotPerByteS = 0;
    bool deepEp = false;       // DeepEP low-latency dispatch / combine instead of NCCL
    double deepEpLatencyS = 0; // RDMA's across NVLink domains, NVLink's inside one
    int directIndex = -1;      // the all-to-all's entry in curve.bwPerByte

    // Seconds for one collective of `bytes` (nccl-tests' size) on every group at once: the
    // fastest method the stack has.
    double timeS(double bytes) const;
    // Each method on its own (infinity where it cannot run).
    double ncclTimeS(double bytes) const;
    double oneShotTimeS(double bytes) const;
    double twoShotTimeS(double bytes) const;
    CollectiveMethod method(double bytes) const;
    // "nccl ring/ll", "one-shot", "deepep": what runs at `bytes`.
    std::string describe(double bytes) const;
    // The NCCL algorithm that runs at `bytes` (for its traffic).
    Algorithm ncclAlgorithm(double bytes) const;
};

// Prices `op` on `groups` (all at once) for `stack`; `deepEp` for DeepEP's low-latency
// all-to-all. `scratch` is used to measure the links (its step totals are not meaningful after).
CollectivePricer priceCollective(const Topology &topology,
                                 const GroupList &groups,
                                 CollectiveOp op,
                                 const ServingStackProfile &stack,
                                 bool cudaGraphs,
                                 bool deepEp,
                                 LinkTraffic &scratch);
// The same for one group alone (the planner's representative group).
CollectivePricer priceCollective(const Topology &topology,
                                 std::span<const int> group,
                                 CollectiveOp op,
                                 const ServingStackProfile &stack,
                                 bool cudaGraphs,
                                 bool deepEp,
                                 LinkTraffic &scratch);

// `all` (priced on every group of `groups` at once) re-timed for sets of those groups (a
// replica's: `setOf[i]` is group i's set, 0 .. sets - 1): each algorithm's link-bound seconds
// per byte read on the NVLink ports and links the set's own traffic crosses, while every
// group's traffic loads them (the set's alone, when more). A set whose links a fault leaves
// alone keeps the price it had; one that crosses a detoured or degraded link pays for it, and
// no other set does. Latencies and the choice of method stay `all`'s; traffic that crosses no
// faulted link (nor the network, when a network link is faulted) keeps `all`'s price.
std::vector<CollectivePricer> priceCollectiveBySet(const Topology &topology,
                                                   const GroupList &groups,
                                                   const std::vector<int> &setOf,
                                                   int sets,
                                                   const CollectivePricer &all,
                                                   LinkTraffic &scratch);

// Adds the bytes one collective of `bytes` puts on every link, for every group, to the traffic's
// current phase (the method and algorithm that run at that size).
void addCollectiveBytes(LinkTraffic &traffic,
                        const Topology &topology,
                        const GroupList &groups,
                        const CollectivePricer &pricer,
                        double bytes);

} // namespace railyard::engine
