#pragma once

#include "layout/parallel.h"
#include "step/evaluate.h"
#include "step/routes.h"

#include <QString>
#include <QStringList>

#include <vector>

namespace railyard {

class Document;

// Words about one link, shared by the canvas tooltip, the inspector and the hottest-links
// list: what it joins, its bytes per step and utilization, and what crosses it. The numbers
// and the groups come from the engine (evaluation, timeline, groupsCrossingLink); this only
// words them.
struct LinkFacts
{
    int link = -1;
    QString title;     // "NIC 17.3 \u2194 leaf 3"
    QString kind;      // "InfiniBand"
    double gbPerS = 0; // line rate per direction
    double health = 1; // the fraction of the line rate the layout's faults leave (0: down)
    double lanes = 1;
    double bytesUp = 0; // per step, a -> b
    double bytesDown = 0;
    double utilization = 0; // step average, busiest direction
    double now = -1;        // at the playback moment; negative: no moment shown
    std::vector<engine::LinkCrossing> crossings;
    unsigned kinds = 0; // PhaseKind bits on the link in the step
    // A serving layout: the bytes and utilization are one decode step's, and a request puts
    // `bytesPerRequest` on the link (its prefill's collectives, its KV transfer).
    bool decodeStep = false;
    double bytesPerRequest = 0;
};

// "Down", "Degraded to 50% of its rate (2 of 4 lanes left)", or empty when healthy.
QString linkFaultText(const LinkFacts &facts);

// The facts of `link` in `evaluation` (`ranks` null: no groups). `now`: the utilization at the
// moment shown, or negative.
LinkFacts linkFacts(const engine::Topology &topology,
                    const engine::Evaluation &evaluation,
                    const engine::RankLayout *ranks,
                    int link,
                    double now = -1);

// The same from the loads and the timeline alone (a serving layout's decode step, say).
LinkFacts linkFacts(const engine::Topology &topology,
                    const engine::LinkLoads *loads,
                    const engine::StepTimeline &timeline,
                    const engine::RankLayout *ranks,
                    int link,
                    double now = -1);

// The facts of `link` as `document` prices it: a training step's (with `ranks`' groups), or a
// serving layout's decode step and bytes per request.
LinkFacts documentLinkFacts(const Document &document,
                            const engine::RankLayout *ranks,
                            int link,
                            double now = -1);

// "NIC 17.3 \u2194 leaf 3"
QString linkTitle(const engine::Topology &topology, int link);
// "12.4 GB per step (8.1 GB up, 4.3 GB down)"
QString bytesText(const LinkFacts &facts);
// "34% step average \u00b7 81% now"
QString utilizationText(const LinkFacts &facts);
// "TP groups 3, 7 \u00b7 DP groups 0\u20137": at most `perDim` groups named per dimension.
QString crossingText(const LinkFacts &facts, int perDim = 8);
// "TP collectives, DP gradient reduction"
QString kindsText(unsigned kinds);
// The tooltip (rich text): title, bytes, utilization, groups and collectives.
QString linkTooltip(const LinkFacts &facts);

} // namespace railyard
