#pragma once

#include "layout/layout.h"
#include "layout/parallel.h"

#include <string>
#include <vector>

namespace railyard::engine {

// Editing where ranks run: the operations behind dragging a parallel group onto GPUs. Each
// returns the new mapping (rank -> GPU) or an error saying why the edit cannot work; none
// changes the layout it is given.

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
MappingEdit placeRanks(const Layout &layout,
                       const std::vector<int> &ranks,
                       const std::vector<int> &targets,
                       const std::string &name);

// Places group `group` of `dim` on `targets` (GPU indices, in the order its ranks should take),
// swapping with the ranks that were there: those move to the GPUs the group leaves. The targets
// must be as many as the group's ranks, distinct and inside the cluster.
MappingEdit placeGroup(const Layout &layout, Dim dim, int group, const std::vector<int> &targets);

// Places the group on a set of GPUs at least as large as it (a server, a rack): on the set's
// first GPUs, in order.
MappingEdit placeGroupWithin(const Layout &layout, Dim dim, int group, const std::vector<int> &gpus);

// Places a pipeline stage (PP) or a model replica (DP): every rank with that coordinate.
MappingEdit placeCoordinate(const Layout &layout,
                            Dim dim,
                            int value,
                            const std::vector<int> &targets);

// Swaps the ranks on two GPUs (dragging one GPU onto another).
MappingEdit swapGpus(const Layout &layout, int gpuA, int gpuB);

// "Make a TP group here": the group of `dim` that the first selected GPU's rank belongs to moves
// onto the selected GPUs (which must be as many as the group's size).
MappingEdit makeGroupHere(const Layout &layout, Dim dim, const std::vector<int> &selected);

// A choice for a parallel size in the workload panel, and why it is invalid when it is.
struct SizeChoice
{
    int value = 1;
    bool valid = true;
    std::string reason; // empty when valid
};
// The sizes `dim` could take with the other sizes fixed (DP follows from the GPU count). TP:
// divisors of the GPU count; invalid when they do not divide the heads, or make the product
// miss the GPU count, and so on.
std::vector<SizeChoice> sizeChoices(const Layout &layout, Dim dim);
// Virtual pipeline stages per pipeline rank: 1 to the layers a pipeline rank holds; invalid
// without PP, or when the layers do not split evenly into PP x VP virtual stages.
std::vector<SizeChoice> vpChoices(const Layout &layout);

} // namespace railyard::engine
