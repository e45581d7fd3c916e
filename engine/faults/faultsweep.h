#pragma once

// Sweeps (`railyard evaluate FILE --what-if KIND`): every element of one kind failed in turn,
// on top of the layout's own faults, each priced, ranked by what it costs the job ("the ten
// failures that hurt this job most").
//
// Symmetry, where it is exact: elements that an automorphism of the cluster and the job maps
// onto each other cost the same, so one of them is priced for all.
// - Spines: two spines joined to the same leaves (and cores) by links of the same lanes and
//   rates are interchangeable: each leaf spreads its uplink traffic over its working lanes
//   (adaptive routing, or ECMP by lanes), so failing either leaves the same loads relabelled.
//   One spine per such class is priced.
// - Leaf-spine links: by the same argument, a leaf's links to interchangeable spines.
// - GPUs (down): a GPU out drops its data-parallel replica (reformjob.h), and the re-formed job
//   is the same whichever of the replica's GPUs was lost; one GPU per replica is priced (not
//   where spare GPUs take the lost ranks instead: there each GPU's spare differs).
// - Leaves and NICs (and their links), where the rails of every server are interchangeable
//   for the fabric and the job (railsymmetry.h: each TP group one whole server with TP rank =
//   the GPU's place in it, one NIC per GPU under its GPU's switch, switches and rails alike, no
//   EP, no fault yet): swapping two GPUs of a switch, or two switches, in every server maps the
//   fabric and the job onto themselves and one rail's failure onto another's. One leaf per
//   scalable unit and one NIC per server are priced; the others equal them up to the order
//   floating-point sums are taken in.
// - Serving layouts: a GPU out takes its replica out of service whichever of its GPUs it was
//   (one GPU per replica priced), and a GPU that serves nothing costs nothing (one priced for
//   all); spines as above. Rail symmetry is training's (it does not hold for serving).
// Everything else is priced one by one, on worker threads.
//
// Serving layouts are ranked by the output tokens/s per GPU lost, with TPOT and TTFT: each
// entry's stepTimeS is its TPOT and tokensPerS its output tokens/s per GPU.

#include "layout/layout.h"
#include "topology/topology.h"

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace railyard::engine {

enum class SweepKind { Leaves, Spines, Nics, Links, Gpus };
const char *toString(SweepKind kind); // "leaves", ...
std::optional<SweepKind> sweepKindFromString(const std::string &text);

struct SweepEntry
{
    Fault fault;      // the element failed (on top of the layout's faults)
    std::string name; // "leaf 3", "NIC 17.3", "leaf 0 — spine 1"
    bool ok = false;  // priced; else `error` says why the job cannot run
    std::string error;
    double stepTimeS = 0;
    double tokensPerS = 0;
    double costFraction = 0; // of the baseline's tokens/s lost (0.1: 10% slower)
    double ttftS = 0;        // serving
    // The element priced for it by symmetry (its price is that one's); empty: priced itself.
    std::string pricedAs;
};

struct SweepResult
{
    SweepKind kind = SweepKind::Leaves;
    bool ok = false;
    std::string error;              // the baseline cannot be priced
    double baselineStepS = 0;       // the layout as it is (its own faults included); serving: TPOT
    double baselineTokensPerS = 0;  // serving: output tokens/s per GPU
    bool serving = false;           // a serving layout (the keys above as its entries')
    double baselineTtftS = 0;       // serving
    std::vector<SweepEntry> ranked; // every element, costliest first (errors first of all)
    int candidates = 0;             // elements of the kind
    int priced = 0;                 // evaluations made (the rest by symmetry)
    std::vector<std::string> symmetry; // where symmetry stood in for pricing, in words
    double elapsedS = 0;
    bool cancelled = false;
};

struct SweepOptions
{
    int threads = 0; // 0: one per hardware thread
    // Called from the workers after each evaluation with (done, total); returning false
    // cancels the sweep (the result then holds what was priced, cancelled set).
    std::function<bool(int, int)> progress;
};

// Fails each element of `kind` in `layout`'s cluster in turn. `healthy`: the cluster built
// without faults (the layout's own faults are applied to it with each candidate). Never
// throws for a candidate (its error is in its entry); throws InputError when the layout's own
// faults do not resolve.
SweepResult sweepFaults(const Layout &layout,
                        const Topology &healthy,
                        SweepKind kind,
                        const SweepOptions &options = {});

} // namespace railyard::engine
