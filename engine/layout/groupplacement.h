#pragma once

#include "layout/layout.h"
#include "layout/parallel.h"
#include "layout/placement.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace railyard::engine {

// Placing a group of ranks by dragging it onto the cluster: which group is meant, which GPUs a
// drop takes and the mapping to store. The editors (the canvas, the Groups palette) ask these
// functions and only draw the answer and forward the mapping to an undo command.

// What the user drags and colours by: a group of ranks that communicate together. TP, CP and EP
// groups are the groups of those dimensions; a PP stage is every rank with one pipeline
// coordinate, a DP replica every rank with one data-parallel coordinate (one copy of the model).
enum class GroupKind { Tp, Cp, Ep, PpStage, DpReplica };
inline constexpr GroupKind kAllGroupKinds[] = {GroupKind::Tp,
                                               GroupKind::Cp,
                                               GroupKind::Ep,
                                               GroupKind::PpStage,
                                               GroupKind::DpReplica};

// Which group of which kind. An index means the group of the job it was taken from: group 3
// holds other ranks under other sizes or another order (see jobId).
struct GroupRef
{
    GroupKind kind = GroupKind::Tp;
    int index = 0;
    bool operator==(const GroupRef &) const = default;
};

Dim dimOf(GroupKind kind);
// "TP group", "PP stage", "DP replica"
const char *groupKindNoun(GroupKind kind);
// "TP group 3", "PP stage 2": for the engine's messages.
std::string describeGroup(const GroupRef &group);

// How many groups of a kind the job has, which one a rank belongs to, and its ranks and GPUs
// (empty for an index the job does not have).
int groupCount(const RankLayout &ranks, GroupKind kind);
int groupOfRank(const RankLayout &ranks, GroupKind kind, int rank);
std::vector<int> groupRanks(const RankLayout &ranks, const GroupRef &group);
std::vector<int> groupGpus(const RankLayout &ranks, const GroupRef &group);
// The group of `kind` that the rank on `gpu` belongs to; none when no rank runs there.
std::optional<GroupRef> groupAtGpu(const RankLayout &ranks, GroupKind kind, int gpu);

// The job a group index refers to ("gpus128-tp8-cp1-ep1-etp1-pp4-dp4-tp-cp-ep-dp-pp"): dragged
// chips and GPUs carry it, so that a drop from another job is refused.
std::string jobId(const Layout &layout);

// The mapping to store: empty when it is what the order alone gives, so a group moved back to
// where it started leaves the layout as it was.
std::vector<int> normalizedMapping(std::vector<int> mapping);

// Places the group on `targets` (one GPU per rank, in order), swapping with what was there.
MappingEdit placeGroup(const RankLayout &ranks,
                       const GroupRef &group,
                       const std::vector<int> &targets);
MappingEdit placeGroup(const Layout &layout, const GroupRef &group, const std::vector<int> &targets);

// Where something is dropped: one GPU, or a server (a tray of a scale-up domain) or a rack,
// given by the GPUs it holds. Which server or rack is under the pointer is the canvas's to say.
struct DropSite
{
    enum class Kind { Gpu, Server, Tray, Rack };
    Kind kind = Kind::Gpu;
    int index = 0;    // the GPU, server or rack number
    int firstGpu = 0; // its first GPU
    int gpuCount = 1; // the GPUs it holds

    static DropSite gpu(int gpu);
    static DropSite server(int node, int gpusPerNode, bool tray = false);
    // A rack holding nodes [firstNode, endNode).
    static DropSite rack(int rack, int firstNode, int endNode, int gpusPerNode);
    // "GPU 4", "server 2", "tray 2", "rack 1"
    std::string name() const;
};

// What a placement would do, worked out before it is done (for the cue while dragging) and
// again when it is.
struct PlacementPlan
{
    enum class Refusal {
        None,        // it works
        NoSite,      // dropped off every GPU, server and rack
        NoRanks,     // the parallel sizes do not fill the cluster
        NoSuchGroup, // the job has no group of that index
        DoesNotFit,  // the group runs past the cluster's last GPU
        Refused,     // the edit itself is refused (see error)
    };
    Refusal refusal = Refusal::None;
    std::string error;        // why not, in lower case where the engine's reasons are
    std::vector<int> targets; // the GPUs taken; for DoesNotFit, the GPUs it would run over
    std::vector<int> mapping; // the mapping to store (normalized) when it changes something
    bool noChange = false;    // it works and leaves every rank where it is
    bool ok() const { return refusal == Refusal::None; }

    // A plan that refuses, and why (in lower case, for use after a colon).
    static PlacementPlan refused(Refusal why, std::string error)
    {
        PlacementPlan plan;
        plan.refusal = why;
        plan.error = std::move(error);
        return plan;
    }
};

// Why a group of `size` GPUs, `name`, cannot land on `site` in a cluster of `count` GPUs: the
// site is outside the cluster, or the group would run past its end (the GPUs it would run over
// are the plan's targets). None: it fits, from the site's first GPU.
std::optional<PlacementPlan> siteRefusal(const std::string &name,
                                         int size,
                                         int count,
                                         const DropSite &site);

// A group dropped on a site takes the site's first GPU and the ones after it, one per rank in
// rank order (a group larger than a server runs on into the servers after it). `ranks` are the
// layout's (null when the sizes do not fill the cluster); no site: dropped on the background.
PlacementPlan planGroupDrop(const Layout &layout,
                            const RankLayout *ranks,
                            const GroupRef &group,
                            const std::optional<DropSite> &site);

// A GPU dropped on another swaps their ranks.
PlacementPlan planGpuSwap(const Layout &layout, int fromGpu, int toGpu);

// "Make a TP group here": the group of `kind` that the first selected GPU runs moves onto the
// selected GPUs (as many as the group's ranks).
PlacementPlan planMakeGroup(const Layout &layout,
                            const RankLayout *ranks,
                            GroupKind kind,
                            const std::vector<int> &selected);

} // namespace railyard::engine
