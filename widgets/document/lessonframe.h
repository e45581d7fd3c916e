#pragma once

#include <QString>

#include <cstdint>
#include <vector>

namespace railyard {

// One step of a collective lesson as the canvas shows it, set into the ViewState by the
// Collective Lesson dock from the engine's schedule (engine/collectivelesson.h): the links the
// step crosses with their load while it runs, the devices that send and receive, and a badge
// per GPU. The ids are those of the topology whose buildId() is `topology`: the scene shows a
// frame only on that topology, so a changed cluster never reads stale ids.
struct LessonFrame
{
    std::uint64_t topology = 0;
    struct Link
    {
        int link = -1;
        float load = 0;       // the share of the step the link is busy (its bottleneck: 1)
        bool reverse = false; // more bytes go b -> a (the dashes run that way)
    };
    std::vector<Link> links;
    std::vector<int> senders;   // device ids: GPUs, and the NVSwitch or leaf that reduces
    std::vector<int> receivers; // device ids
    struct Badge
    {
        int device = -1;
        QString text;        // the chunk it sends, "c3"
        float progress = -1; // the share of its final result it holds (0..1), -1: none
    };
    std::vector<Badge> badges;
    // Who sends to whom (device ids): drawn as arrows over the hardware, since the bytes of
    // one GPU to another may cross a switch and the lit links alone do not say which pair.
    struct Arrow
    {
        int from = -1;
        int to = -1;
    };
    std::vector<Arrow> arrows;
    QString caption; // "Step 3 of 14: reduce-scatter"
};

} // namespace railyard
