#pragma once

#include "step/evaluate.h"

#include <string>
#include <vector>

namespace railyard::engine {

// A link whose load differs between two evaluations of the same topology (A/B compare).
struct LinkChange
{
    int link = 0;
    double bytesA = 0; // per step, both directions
    double bytesB = 0;
    double utilizationA = 0;
    double utilizationB = 0;
};

// The `count` links whose utilization changed most from `a` to `b`, largest change first.
// Both evaluations must come from topologies with the same links (else: empty).
std::vector<LinkChange> mostChangedLinks(const Evaluation &a,
                                         const Evaluation &b,
                                         std::size_t count);

// The links whose bytes per step changed (by more than a millionth) from `a` to `b`: those that
// now carry more first, largest increase first, then those that carry less, largest drop first;
// at most `count`. What a fault moved (a changed step time alone changes every utilization).
std::vector<LinkChange> linksWithChangedBytes(const Evaluation &a,
                                              const Evaluation &b,
                                              std::size_t count);
// The same on two sets of link loads (a serving decode step's, say) of the same links.
std::vector<LinkChange> linksWithChangedBytes(const LinkLoads &a,
                                              const LinkLoads &b,
                                              std::size_t count);

// "+41% step time", "-3% step time", "no change": how `after` differs from `before` in words.
std::string describeChange(double before, double after, const std::string &what);

} // namespace railyard::engine
