#pragma once

// The step as it runs, stage by stage: each pipeline stage's own work in order (the bubble, the
// micro-batches' forwards and backwards, the DP wait, the optimizer) and the collectives beside
// it, each on its stream (NCCL orders the operations of one communicator). Collectives of
// different streams that run at one moment share the links they cross: each link's rate is
// split max-min fairly between them (progressive filling: every collective's bandwidth rises
// together until a link is full or the collective runs as fast as it would alone; NCCL's
// channels of two collectives share a NIC or an NVLink port roughly evenly). A collective that
// gets less than its own rate lasts longer; the step grows where what waits for it is exposed:
// a micro-batch by the share of its collective's time that was exposed (StepTimes: exposed over
// total), the optimizer by the end of the last gradient reduction, the first forwards by the
// parameter gathers. Shared by the full evaluation (which draws the timeline from it) and the
// planner's fast path, so that the step time, the timeline and the link loads agree.
//
// Links are grouped in two classes, as the collectives are priced (stageTime()): NVLink, and
// every other link (PCIe to the NIC, NIC uplinks, spine and core). A collective's demand on a
// class is the share of its busiest link of that class it keeps busy while it runs alone
// (CollectiveCost::nvlinkBusyS and networkBusyS over its time); two collectives of one stage
// are taken to meet on their busiest links (every GPU of a stage carries its share of each
// dimension's traffic through its own NVLink port and NIC), which bounds the load on any single
// link by the class's.

#include "step/stepcost.h"
#include "step/timeline.h"

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

namespace railyard::engine {

// What a phase of the scheduled step is doing.
enum class StepActivity : std::uint8_t {
    // The stage's own time line (exposed: these tile the step).
    Fill,      // the pipeline fill: waiting for the first input
    Bubble,    // between the warm-up forwards and the steady one-forward-one-backward
    Forward,   // micro-batch group `op`
    Backward,  // micro-batch group `op`
    Drain,     // the pipeline drain
    DpWait,    // the gradient reduction and parameter gathers the step waits for
    Optimizer, // the optimizer step
    Idle,      // waiting for a slower stage to end the step
    // Beside it.
    Tp,
    Cp,
    Ep,
    PpSend,
    DpParams,   // the step's parameter all-gather (sharded optimizer) or broadcast
    DpGrads,    // the gradient reduce-scatter or all-reduce (ZeRO-2: one per micro-batch group)
    ZeroGather, // ZeRO-3 / FSDP: one micro-batch group's parameter gathers
    ZeroReduce, // ZeRO-3 / FSDP: one micro-batch group's gradient reduce-scatters
};

struct ScheduledPhase
{
    StepActivity activity = StepActivity::Fill;
    bool exposed = false;
    bool forward = false; // collectives of a micro-batch group: in its forward
    int op = -1;          // the micro-batch group (0 .. ops-1), or -1
    int stage = 0;
    double start = 0, end = 0;
    double share = 0;  // communication: the share of its kind's bytes per step on this stage
    double aloneS = 0; // communication: how long it takes with the links to itself
    // Into StepSchedule::segments where its rate changed while it ran (none: it kept one).
    int firstSegment = -1, segments = 0;
    double duration() const { return end - start; }
};

// A collective's demand while it runs alone, per class of link: the share of its busiest
// NVLink and of its busiest other link that it keeps busy.
struct LinkDemand
{
    double nvlink = 0, network = 0;
};

struct StepSchedule
{
    int stages = 0;
    int ops = 0;             // micro-batch groups per direction (at most 16)
    double perOp = 1;        // micro-batches per group
    double stepS = 0;        // the stage that ends last
    StepBreakdown exposed;   // that stage's, what the links' sharing added included
    double sharedLinksS = 0; // what the links' sharing added to the step
    // Kept when asked for: stage after stage, each stage's exposed phases from start to end and
    // then its collectives; last, an idle phase for each stage that ends before the step.
    std::vector<ScheduledPhase> phases;
    std::vector<PhaseSegment> segments;
};

// Runs the step (see above). Keeps its buffers between runs: one per thread.
class StepScheduler
{
public:
    // `times` is composeStep()'s step with every collective alone. With `sharing` off every
    // collective gets its own rate (the step as composeStep() prices it, where the streams fit
    // in it). With `keepPhases` the phases are kept in `out.phases` (the timeline). Without
    // them, the run stops as soon as a stage ends after `giveUpAbove` and returns false (`out`
    // then holds that stage's end in `stepS`, below the step, and nothing else).
    bool run(const StepSetting &setting,
             const StepComm &comm,
             const StepTimes &times,
             StepSchedule &out,
             bool keepPhases,
             bool sharing = true,
             double giveUpAbove = std::numeric_limits<double>::infinity());

private:
    // What waits for a collective.
    enum class Waits : std::uint8_t {
        Owner,   // its micro-batch grows by `exposure` x its stretch
        Barrier, // the DP wait ends no earlier than it
        Gather,  // the first forwards (parameterGatherWait(), counted in the DP wait)
    };
    // StepBreakdown's fields by index (compute, tp, cp, ep, ppBubble, ppP2p, dp, optimizer).
    static constexpr int kPartTp = 1, kPartCp = 2, kPartEp = 3, kPartPpP2p = 5, kPartDp = 6;
    // What every stage shares: the step's parts as composeStep() priced them.
    struct Terms
    {
        int pp = 1, ops = 1;
        double perOp = 1;
        StepBreakdown x, tot;                             // exposed, total
        double fwdLen = 0, bwdLen = 0;                    // one micro-batch group
        double tpFwd = 0, cpFwd = 1.0 / 3.0, epFwd = 0.5; // the forward's share of the bytes
        double p2p = 0;                                   // one group's sends
        bool zero2 = false, zero3 = false, overlapDp = false;
        double dpGradS = 0, dpParamS = 0, gradExposed = 0, paramExposed = 0, dpWait = 0;
        double overlapLoss = 0; // StepTimes::dpOverlapLoss
        int paramChunks = 1;
        double paramGroup = 1, paramUnitForward = 0;
        double layersPerOp = 0, gatherPerLayer = 0, reducePerLayer = 0, gathers = 1;
        // The share of each kind's time alone that its micro-batch waits for.
        double eTp = 0, eCp = 0, eEp = 0, ePp = 0, eZero = 0;
    };
    // One of the stage's own phases.
    struct Exposed
    {
        StepActivity activity = StepActivity::Fill;
        int op = -1;
        double base = 0; // its length with every collective alone
        double start = 0, end = 0, grown = 0;
    };
    // A collective as planned: it starts `offset` after its anchor (an exposed phase) starts,
    // once the collective before it on its stream is done.
    struct Planned
    {
        StepActivity activity = StepActivity::Tp;
        bool forward = false;
        int op = -1;
        int stream = 0;
        int anchor = 0;
        double offset = 0;
        double work = 0; // seconds with the links to itself
        double share = 0;
        Waits waits = Waits::Owner;
        double exposure = 0; // Owner: the share of its stretch its micro-batch waits
        int part = 0;        // the StepBreakdown field its exposed stretch counts in
    };
    struct Comm
    {
        Planned plan;
        double start = 0, end = 0, left = 0, rate = 1, lastRate = -1;
    };
    struct RateChange
    {
        int comm;
        double at, rate;
    };

    void setTerms(const StepSetting &setting, const StepComm &comm, const StepTimes &times);
    void plan(int stage);
    // Marks the streams whose collectives can never be slowed or delayed (see m_free).
    void markFreeStreams();
    // Places a free stream's collectives, once the stage's phases are known.
    void placeFree(std::size_t stream);
    // Runs the planned stage; returns its end and adds what each part grew by to `grown`.
    double simulate(std::array<double, 8> &grown);
    void shareLinks();
    void noteRates(double t); // keeping: where the running collectives' rates changed
    void keep(int stage, StepSchedule &out);
    const LinkDemand &demandOf(const Comm &c) const
    {
        return m_demand[static_cast<std::size_t>(c.plan.activity)];
    }

    Terms m_terms;
    std::array<LinkDemand, 16> m_demand{};
    std::vector<Exposed> m_exposed;
    std::vector<Comm> m_comm;
    std::array<std::vector<int>, 4> m_streams; // comm indices per stream, in order
    // A stream is free when its collectives run at their own rate whatever else runs (every
    // class of link they use holds every kind of the plan at once), each ends within the phase
    // it is anchored to (so none waits for the one before it, and the last is done before the
    // DP wait) and only its own micro-batch waits for it. It then changes nothing in the run:
    // the event loop leaves it out and its collectives are placed after it.
    std::array<bool, 4> m_free{};
    std::vector<int> m_active;
    std::vector<double> m_starts; // the stage's exposed phases' starts, every collective alone
    std::vector<double> m_stageEnds;
    std::vector<RateChange> m_changes;
    double m_lead = 0; // the stage's pipeline fill
    bool m_sharing = true;
    bool m_keep = false;
};

} // namespace railyard::engine
