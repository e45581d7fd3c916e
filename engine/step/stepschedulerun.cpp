// Running one stage's plan (stepschedule.h): an event loop over the stage's own phases and its
// collectives, the links' rates shared max-min fairly between the collectives that run at once.
#include "step/stepschedule.h"

#include <algorithm>
#include <limits>

namespace railyard::engine {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
} // namespace

// Max-min fair shares of the links for the running collectives (progressive filling): every
// collective's bandwidth on its most demanded class of link rises at the same pace until a class
// is full, which fixes the collectives that use it, or until a collective runs as fast as alone.
void StepScheduler::shareLinks()
{
    for (int i : m_active)
        m_comm[static_cast<std::size_t>(i)].rate = 1.0;
    if (!m_sharing || m_active.size() < 2)
        return;
    // Nothing to share unless a class is asked for more than it has.
    double nv = 0, net = 0;
    for (int i : m_active) {
        const LinkDemand &d = demandOf(m_comm[static_cast<std::size_t>(i)]);
        nv += d.nvlink;
        net += d.network;
    }
    if (nv <= 1 + 1e-9 && net <= 1 + 1e-9)
        return;
    // A stage runs a handful of collectives at once (one per stream).
    std::array<bool, 8> fixed{};
    const std::size_t n = std::min(m_active.size(), fixed.size());
    std::size_t rising = n;
    for (std::size_t a = 0; a < n; ++a) {
        Comm &c = m_comm[static_cast<std::size_t>(m_active[a])];
        const LinkDemand &d = demandOf(c);
        c.rate = 0;
        if (std::max(d.nvlink, d.network) <= 0) { // latency only
            c.rate = 1;
            fixed[a] = true;
            --rising;
        }
    }
    while (rising > 0) {
        // The bandwidth level (a share of a link) at which the next collective is fixed.
        double fixedNv = 0, fixedNet = 0, slopeNv = 0, slopeNet = 0, level = kInf;
        for (std::size_t a = 0; a < n; ++a) {
            const Comm &c = m_comm[static_cast<std::size_t>(m_active[a])];
            const LinkDemand &d = demandOf(c);
            if (fixed[a]) {
                fixedNv += c.rate * d.nvlink;
                fixedNet += c.rate * d.network;
                continue;
            }
            const double top = std::max(d.nvlink, d.network);
            slopeNv += d.nvlink / top;
            slopeNet += d.network / top;
            level = std::min(level, top); // where it runs as fast as alone
        }
        if (slopeNv > 0)
            level = std::min(level, std::max(0.0, 1 - fixedNv) / slopeNv);
        if (slopeNet > 0)
            level = std::min(level, std::max(0.0, 1 - fixedNet) / slopeNet);
        const bool nvFull = slopeNv > 0 && fixedNv + level * slopeNv >= 1 - 1e-9;
        const bool netFull = slopeNet > 0 && fixedNet + level * slopeNet >= 1 - 1e-9;
        for (std::size_t a = 0; a < n; ++a) {
            if (fixed[a])
                continue;
            Comm &c = m_comm[static_cast<std::size_t>(m_active[a])];
            const LinkDemand &d = demandOf(c);
            c.rate = std::min(1.0, level / std::max(d.nvlink, d.network));
            if (c.rate >= 1 - 1e-12 || (nvFull && d.nvlink > 0) || (netFull && d.network > 0)) {
                fixed[a] = true;
                --rising;
            }
        }
    }
    for (std::size_t a = 0; a < n; ++a) {
        Comm &c = m_comm[static_cast<std::size_t>(m_active[a])];
        c.rate = std::max(c.rate, 1e-6); // a full link still moves (keeps the clock going)
    }
}

double StepScheduler::simulate(std::array<double, 8> &grown)
{
    const Terms &T = m_terms;
    for (Comm &c : m_comm) {
        c.start = c.end = 0;
        c.left = c.plan.work;
        c.rate = 1;
        c.lastRate = -1;
    }
    m_active.clear();
    m_changes.clear();
    std::array<std::size_t, 4> head{}; // each stream's next collective
    std::array<int, 4> busy{-1, -1, -1, -1};
    const int phases = static_cast<int>(m_exposed.size());
    std::size_t pending = 0; // collectives not done
    for (std::size_t s = 0; s < m_streams.size(); ++s)
        if (m_free[s])
            head[s] = m_streams[s].size(); // placed after the run
        else
            pending += m_streams[s].size();
    double lastDone = 0, gatherGrowth = 0;
    int k = 0; // the exposed phase running
    double t = 0;
    m_exposed[0].start = 0;
    const auto gatherWait = [&](double gatherS) {
        return parameterGatherWait(gatherS, T.paramChunks, T.paramGroup, T.paramUnitForward, m_lead);
    };
    // Where exposed phase `i` ends, as far as is known now (infinite while it waits).
    const auto endOf = [&](int i) {
        const Exposed &e = m_exposed[static_cast<std::size_t>(i)];
        if (e.activity != StepActivity::DpWait)
            return e.start + e.base + e.grown;
        // The optimizer waits for every collective; the gradients' exposed part was priced,
        // and the compute the hidden ones slowed (StepTimes::dpOverlapLoss).
        if (pending > 0)
            return kInf;
        if (!T.overlapDp && !T.zero3)
            return std::max(e.start + T.gradExposed + T.paramExposed, lastDone) + e.grown;
        return std::max(e.start + T.gradExposed, lastDone) + T.paramExposed + gatherGrowth
               + T.overlapLoss + e.grown;
    };
    const auto releaseOf = [&](const Comm &c) {
        return m_exposed[static_cast<std::size_t>(c.plan.anchor)].start + c.plan.offset;
    };
    const double eps = 1e-12 * std::max(1e-12, T.x.sum());
    const std::size_t cap = 8 * (m_exposed.size() + m_comm.size()) + 64;
    for (std::size_t iter = 0; iter < cap; ++iter) {
        // Start what may: each idle stream's next collective, once released.
        bool changed = false;
        for (std::size_t s = 0; s < m_streams.size(); ++s) {
            const std::vector<int> &list = m_streams[s];
            if (busy[s] >= 0 || head[s] >= list.size())
                continue;
            Comm &c = m_comm[static_cast<std::size_t>(list[head[s]])];
            if (c.plan.anchor > k || releaseOf(c) > t + eps)
                continue;
            c.start = t;
            busy[s] = list[head[s]++];
            m_active.push_back(busy[s]);
            changed = true;
        }
        if (changed) {
            shareLinks();
            noteRates(t);
        }
        // The next moment anything happens.
        double next = k < phases ? endOf(k) : kInf;
        for (std::size_t s = 0; s < m_streams.size(); ++s) {
            const std::vector<int> &list = m_streams[s];
            if (busy[s] < 0 && head[s] < list.size()) {
                const Comm &c = m_comm[static_cast<std::size_t>(list[head[s]])];
                if (c.plan.anchor <= k)
                    next = std::min(next, releaseOf(c));
            }
        }
        for (int i : m_active) {
            const Comm &c = m_comm[static_cast<std::size_t>(i)];
            next = std::min(next, t + c.left / c.rate);
        }
        if (next == kInf)
            break;
        next = std::max(next, t);
        const double dt = next - t;
        t = next;
        // Finish the collectives that are done.
        changed = false;
        for (std::size_t a = 0; a < m_active.size();) {
            Comm &c = m_comm[static_cast<std::size_t>(m_active[a])];
            c.left -= c.rate * dt;
            if (c.left > 1e-12 * c.plan.work && c.left / c.rate > eps) {
                ++a;
                continue;
            }
            c.left = 0;
            c.end = t;
            busy[static_cast<std::size_t>(c.plan.stream)] = -1;
            --pending;
            lastDone = std::max(lastDone, t);
            const double stretch = std::max(0.0, (c.end - c.start) - c.plan.work);
            if (c.plan.waits == Waits::Owner && stretch > 0 && k < phases) {
                // The stage waits for its exposed share of the stretch, now.
                const double more = c.plan.exposure * stretch;
                m_exposed[static_cast<std::size_t>(k)].grown += more;
                grown[static_cast<std::size_t>(c.plan.part)] += more;
            } else if (c.plan.waits == Waits::Gather && stretch > 0) {
                gatherGrowth = std::max(0.0, gatherWait(c.end - c.start) - gatherWait(c.plan.work));
            }
            m_active[a] = m_active.back();
            m_active.pop_back();
            changed = true;
        }
        // Move the stage on.
        while (k < phases && endOf(k) <= t + eps) {
            Exposed &e = m_exposed[static_cast<std::size_t>(k)];
            e.end = std::max(e.start, endOf(k));
            if (e.activity == StepActivity::DpWait)
                grown[kPartDp] += (e.end - e.start) - e.base - e.grown;
            if (++k < phases)
                m_exposed[static_cast<std::size_t>(k)].start = e.end;
            changed = true;
        }
        if (changed) {
            shareLinks();
            noteRates(t);
        }
    }
    // A plan that did not finish in `cap` events (not seen): the rest as planned.
    for (; k < phases; ++k) {
        Exposed &e = m_exposed[static_cast<std::size_t>(k)];
        e.end = e.start + e.base + e.grown;
        if (k + 1 < phases)
            m_exposed[static_cast<std::size_t>(k + 1)].start = e.end;
    }
    for (std::size_t s = 0; s < m_streams.size(); ++s)
        if (m_free[s])
            placeFree(s);
    return m_exposed.back().end;
}

void StepScheduler::placeFree(std::size_t stream)
{
    double end = 0;
    for (int i : m_streams[stream]) {
        Comm &c = m_comm[static_cast<std::size_t>(i)];
        const double release = m_exposed[static_cast<std::size_t>(c.plan.anchor)].start
                               + c.plan.offset;
        c.start = std::max(release, end);
        c.end = end = c.start + c.plan.work;
        c.left = 0;
        if (m_keep)
            m_changes.push_back({i, c.start, 1.0});
    }
}

void StepScheduler::noteRates(double t)
{
    if (!m_keep)
        return;
    for (int i : m_active) {
        Comm &c = m_comm[static_cast<std::size_t>(i)];
        if (c.lastRate != c.rate) {
            c.lastRate = c.rate;
            m_changes.push_back({i, t, c.rate});
        }
    }
}

void StepScheduler::keep(int stage, StepSchedule &schedule)
{
    std::vector<ScheduledPhase> &out = schedule.phases;
    for (const Exposed &e : m_exposed) {
        if (e.end <= e.start)
            continue;
        ScheduledPhase p;
        p.activity = e.activity;
        p.exposed = true;
        p.op = e.op;
        p.forward = e.activity == StepActivity::Forward;
        p.stage = stage;
        p.start = e.start;
        p.end = e.end;
        out.push_back(p);
    }
    // Each collective's rate changes, in time order.
    std::stable_sort(m_changes.begin(), m_changes.end(), [](const auto &a, const auto &b) {
        return a.comm < b.comm;
    });
    std::size_t next = 0;
    for (std::size_t i = 0; i < m_comm.size(); ++i) {
        const Comm &c = m_comm[i];
        ScheduledPhase p;
        p.activity = c.plan.activity;
        p.forward = c.plan.forward;
        p.op = c.plan.op;
        p.stage = stage;
        p.start = c.start;
        p.end = c.end;
        p.share = c.plan.share;
        p.aloneS = c.plan.work;
        const std::size_t first = next;
        while (next < m_changes.size() && m_changes[next].comm == static_cast<int>(i))
            ++next;
        if (next - first > 1) {
            // The work done in each stretch, as a share of the whole.
            p.firstSegment = static_cast<int>(schedule.segments.size());
            for (std::size_t j = first; j < next; ++j) {
                const double from = m_changes[j].at;
                const double to = j + 1 < next ? m_changes[j + 1].at : c.end;
                if (to > from)
                    schedule.segments.push_back(
                            {from, to, m_changes[j].rate * (to - from) / c.plan.work});
            }
            p.segments = static_cast<int>(schedule.segments.size()) - p.firstSegment;
        }
        out.push_back(p);
    }
}

} // namespace railyard::engine
