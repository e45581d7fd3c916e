#pragma once

#include "collectives/traffic.h"
#include "lesson/collectivelesson.h"
#include "step/timeline.h"

#include <functional>
#include <string>
#include <vector>

namespace railyard::engine::detail {

// Builds a lesson's steps: measures each pattern of link bytes once (one LinkTraffic phase,
// sparse: only the links touched are kept) and lets steps share it.
class LessonBuilder
{
public:
    LessonBuilder(const Topology &t, const GroupShape &g, CollectiveLesson &out, double nvlinkScale);

    const Topology &topology() const { return m_t; }
    const GroupShape &group() const { return m_g; }
    CollectiveLesson &out() { return m_out; }

    // Puts one step's bytes on the links through `add`; returns the pattern's index.
    int measure(const std::function<void(LinkTraffic &)> &add);
    // Appends a step with a measured pattern's links and time.
    LessonStep &step(int pattern, std::string phase, std::string text, bool network);
    // A transfer between two ranks (indices into the group's domain-ordered GPUs).
    void send(LessonStep &s,
              int fromRank,
              int toRank,
              int chunk,
              int chunks,
              double bytes,
              bool reduce);
    // A transfer from or to a switch (rank -1 with its device id).
    void sendDevice(LessonStep &s,
                    int fromRank,
                    int fromDevice,
                    int toRank,
                    int toDevice,
                    int chunk,
                    int chunks,
                    double bytes,
                    bool reduce);
    int gpuDevice(int rank) const;
    int rank(int d, int k) const; // member k of domain d as a rank
    // The NVSwitches of domain `d` with each one's share of a member's NVLink lanes: NVLS
    // reduces and multicasts in all of them, each on its share of the bytes.
    std::vector<std::pair<int, double>> nvswitchesOf(int d) const;
    // Every member of every domain (with at least two members, and more than `activeStep` + 1
    // when that is not negative) sends egress/m and receives ingress/m over NVLink.
    void intraNvlink(LinkTraffic &tr, double egress, double ingress, int activeStep = -1) const;
    // One ring edge from rank a to rank b: NVLink (or PCIe) inside a domain, the network
    // between domains.
    void ringEdge(LinkTraffic &tr, int a, int b, double bytes) const;

private:
    struct Pattern
    {
        int linkSet = -1;
        int bottleneck = -1;
        double linkS = 0;
    };
    const Topology &m_t;
    const GroupShape &m_g;
    CollectiveLesson &m_out;
    LinkTraffic m_traffic;
    double m_nvScale = 1;
    std::vector<Pattern> m_patterns;
    std::vector<LinkShare> m_shares;
};

void buildSchedule(LessonBuilder &b, CollectiveOp op, Algorithm algo, double bytes);
// collectivelessontree.cpp: NCCL's tree and NVLS-tree, NVLS in one domain, SHARP.
void treeSchedule(LessonBuilder &b, Algorithm algo, double bytes);
void nvlsSchedule(LessonBuilder &b, double bytes);
void sharpSchedule(LessonBuilder &b, double bytes);

} // namespace railyard::engine::detail
