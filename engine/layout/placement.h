#pragma once

#include "layout/layout.h"
#include "layout/parallel.h"
#include "layout/parallelchoices.h"

#include <string>
#include <vector>

namespace railyard::engine {

// Editing where ranks run: the operations behind dragging a parallel group onto GPUs. Each
// returns the new mapping (rank -> GPU) or an error saying why the edit cannot work; none
// changes the layout it is given. Each comes in two forms: on a layout's ranks (built once by
// the caller, as the document holds them) and on a layout (its ranks built once here).
// layout/groupplacement.h says which GPUs a drop takes and the mapping to store.

struct MappingEdit
{
    std::vector<int> mapping; // the full new mapping, when ok
    std::string error;        // why not, for the status bar ("a server holds 8 GPUs, ...")
    bool ok() const { return error.empty(); }
};

// The mapping in force: the layout's, or the order's identity (rank r on GPU r).
std::vector<int> currentMapping(const Layout &layout);

// Moves `ranks` onto `targets` (one each, in order), swapping with the ranks that were there:
// those move to the GPUs the moved ranks leave. `name` ("TP group 3", "PP stage 2") is used in
// errors. The targets must be as many as the ranks, distinct and inside the cluster.
MappingEdit placeRanks(const RankLayout &ranks,
                       const std::vector<int> &members,
                       const std::vector<int> &targets,
                       const std::string &name);
MappingEdit placeRanks(const Layout &layout,
                       const std::vector<int> &members,
                       const std::vector<int> &targets,
                       const std::string &name);

// Places group `group` of `dim` on `targets` (GPU indices, in the order its ranks should take),
// swapping with the ranks that were there: those move to the GPUs the group leaves. The targets
// must be as many as the group's ranks, distinct and inside the cluster.
MappingEdit placeGroup(const RankLayout &ranks, Dim dim, int group, const std::vector<int> &targets);
MappingEdit placeGroup(const Layout &layout, Dim dim, int group, const std::vector<int> &targets);

// Places a pipeline stage (PP) or a model replica (DP): every rank with that coordinate.
MappingEdit placeCoordinate(const RankLayout &ranks,
                            Dim dim,
                            int value,
                            const std::vector<int> &targets);
MappingEdit placeCoordinate(const Layout &layout,
                            Dim dim,
                            int value,
                            const std::vector<int> &targets);

// Swaps the ranks on two GPUs (dragging one GPU onto another).
MappingEdit swapGpus(const Layout &layout, int gpuA, int gpuB);

// "Make a TP group here": the group of `dim` that the first selected GPU's rank belongs to moves
// onto the selected GPUs (which must be as many as the group's size).
MappingEdit makeGroupHere(const RankLayout &ranks, Dim dim, const std::vector<int> &selected);
MappingEdit makeGroupHere(const Layout &layout, Dim dim, const std::vector<int> &selected);

} // namespace railyard::engine
