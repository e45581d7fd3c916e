#include "serving/servingthroughput.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace railyard::engine {

namespace {

struct State
{
    bool feasible = false;
    double batch = 0, stepS = 0, tpotS = 0, ttftS = 0, waitS = 0, kvS = 0, e2eS = 0, share = 0;
    double prefillS = 0;     // disaggregated: the prefill a request sees, on average
    double slowTtftS = 0;    // the slowest prefill class's requests' TTFT
    double slowPrefillS = 0; // and its wait and prefill
    double slowWaitS = 0;
};

// M/D/1: the mean wait for a server busy `load` of the time, each job `serviceS`.
double queueWait(double load, double serviceS)
{
    return load <= 0 ? 0.0 : load * serviceS / (2.0 * (1.0 - load));
}

// Disaggregated: the longest prefill any prefill replica takes (requests spread evenly: it
// saturates first).
double prefillPaceS(const ThroughputInputs &in)
{
    double pace = in.prefillClasses.empty() ? in.prefillS : 0.0;
    for (const ThroughputInputs::PrefillClass &k : in.prefillClasses)
        pace = std::max(pace, k.prefillS);
    return pace;
}

// Disaggregated: the prefill pool at `rate` requests/s, as one M/D/1 queue of its servers (a
// request's service time one prefill over the servers); with prefill classes each class at its
// own pace and load (requests spread evenly over the replicas). False when a replica
// saturates.
bool prefillAt(const ThroughputInputs &in, double rate, State &s)
{
    const double servers = double(in.prefillReplicas) * in.prefillServers;
    const auto one = [&](double prefillS, double &wait) {
        const double load = rate * prefillS / servers;
        if (load >= 1)
            return false;
        wait = queueWait(load, prefillS / servers);
        return true;
    };
    if (in.prefillClasses.empty()) {
        if (!one(in.prefillS, s.waitS))
            return false;
        s.prefillS = s.slowPrefillS = in.prefillS;
        s.slowWaitS = s.waitS;
        return true;
    }
    s.waitS = s.prefillS = s.slowWaitS = s.slowPrefillS = 0;
    for (const ThroughputInputs::PrefillClass &k : in.prefillClasses) {
        double wait = 0;
        if (!one(k.prefillS, wait))
            return false;
        s.waitS += k.share * wait;
        s.prefillS += k.share * k.prefillS;
        if (wait + k.prefillS > s.slowWaitS + s.slowPrefillS) {
            s.slowWaitS = wait;
            s.slowPrefillS = k.prefillS;
        }
    }
    return true;
}

// The decode batch per replica that `perReplicaRate` requests/s keep in flight, each for
// `steps` decode steps stretched by `stretch`: batch = rate x steps x step(batch) x stretch.
bool decodeBatch(const ThroughputInputs &in,
                 double perReplicaRate,
                 double steps,
                 double stretch,
                 double &batch,
                 double &stepS)
{
    batch = 1;
    stepS = in.decodeStepS(1.0);
    if (perReplicaRate <= 0 || steps <= 0) {
        batch = 0;
        return true;
    }
    const double limit = in.maxConcurrency;
    for (int i = 0; i < 200; ++i) {
        const double next = perReplicaRate * steps * stepS * stretch;
        if (next > limit * (1 + 1e-9))
            return false;
        const bool done = std::fabs(next - batch) <= 1e-6 * std::max(1.0, next);
        batch = next;
        stepS = in.decodeStepS(std::max(1.0, batch));
        if (done)
            return true;
    }
    return true;
}

State at(const ThroughputInputs &in, double rate)
{
    State s;
    const double afterFirst = std::max(0.0, in.outputTokens - 1);
    const double steps = afterFirst / std::max(1.0, in.accepted);
    if (!in.disaggregated) {
        const double perReplica = rate / in.decodeReplicas;
        s.share = perReplica * in.prefillS / in.prefillServers;
        if (s.share >= 1)
            return s;
        const double stretch = 1.0 / (1.0 - s.share);
        if (!decodeBatch(in, perReplica, steps, stretch, s.batch, s.stepS))
            return s;
        s.tpotS = s.stepS * stretch / std::max(1.0, in.accepted);
        s.waitS = queueWait(s.share, in.prefillS / in.prefillServers);
        s.ttftS = s.waitS + in.prefillS + in.prefillChunks * s.stepS;
    } else {
        if (!prefillAt(in, rate, s) || (in.kvMaxRate > 0 && rate >= in.kvMaxRate))
            return s;
        if (!decodeBatch(in, rate / in.decodeReplicas, steps, 1.0, s.batch, s.stepS))
            return s;
        s.tpotS = s.stepS / std::max(1.0, in.accepted);
        s.kvS = in.kvTransferS ? in.kvTransferS(rate) : 0.0;
        s.ttftS = s.waitS + s.prefillS + s.kvS;
        s.slowTtftS = s.slowWaitS + s.slowPrefillS + s.kvS;
    }
    if (!in.disaggregated)
        s.slowTtftS = s.ttftS;
    s.e2eS = s.ttftS + afterFirst * s.tpotS;
    s.feasible = true;
    return s;
}

// The same state from the other side: the decode batch per replica `batch` fixes the step, and
// the rate that keeps that batch in flight is explicit (batch = rate x steps x step x stretch,
// stretch = 1 / (1 - rate x prefill per server) when aggregated): no fixed point to iterate.
// `rate` receives the cluster's requests/s.
State atBatch(const ThroughputInputs &in, double batch, double &rate)
{
    State s;
    const double afterFirst = std::max(0.0, in.outputTokens - 1);
    const double steps = afterFirst / std::max(1.0, in.accepted);
    s.batch = batch;
    s.stepS = in.decodeStepS(std::max(1.0, batch));
    if (!in.disaggregated) {
        const double perServer = in.prefillS / in.prefillServers;
        const double perReplica = batch / (steps * s.stepS + batch * perServer);
        rate = perReplica * in.decodeReplicas;
        s.share = perReplica * perServer;
        if (s.share >= 1)
            return s;
        const double stretch = 1.0 / (1.0 - s.share);
        s.tpotS = s.stepS * stretch / std::max(1.0, in.accepted);
        s.waitS = queueWait(s.share, perServer);
        s.ttftS = s.waitS + in.prefillS + in.prefillChunks * s.stepS;
    } else {
        rate = batch / (steps * s.stepS) * in.decodeReplicas;
        if (!prefillAt(in, rate, s) || (in.kvMaxRate > 0 && rate >= in.kvMaxRate))
            return s;
        s.tpotS = s.stepS / std::max(1.0, in.accepted);
        s.kvS = in.kvTransferS ? in.kvTransferS(rate) : 0.0;
        s.ttftS = s.waitS + s.prefillS + s.kvS;
        s.slowTtftS = s.slowWaitS + s.slowPrefillS + s.kvS;
    }
    if (!in.disaggregated)
        s.slowTtftS = s.ttftS;
    s.e2eS = s.ttftS + afterFirst * s.tpotS;
    s.feasible = true;
    return s;
}

// Closed loop with decode steps (phase both, a concurrency, no request rate): solved on the
// decode batch, each trial one decode-step lookup (the rate-side bisection runs a fixed point
// per trial).
ThroughputResult solveClosedLoop(const ThroughputInputs &in)
{
    ThroughputResult r;
    const double maxBatch = std::max(1, in.maxConcurrency);
    // The most the deployment serves: the largest batch still feasible (the prefill and the KV
    // links below saturation), the rate growing with the batch.
    double lo = 0, hi = maxBatch, rate = 0;
    State top = atBatch(in, hi, rate);
    double capRate = rate;
    if (!top.feasible) {
        for (int i = 0; i < 80 && hi - lo > 1e-12 * hi; ++i) {
            const double mid = 0.5 * (lo + hi);
            (atBatch(in, mid, rate).feasible ? lo : hi) = mid;
        }
        top = atBatch(in, lo, capRate);
        hi = lo;
    }
    r.capacity = top.feasible ? capRate : 0;
    const double served = std::min(in.concurrency, double(in.maxConcurrency));
    const double N = served * in.decodeReplicas;
    double chosen = 0, queuedWait = 0;
    State s;
    if (top.feasible && capRate * top.e2eS <= N) {
        // Saturated (the prefill or the links bound it): the rest wait.
        chosen = hi;
        s = top;
        rate = capRate;
        queuedWait = rate > 0 ? (N - rate * top.e2eS) / rate : 0;
    } else {
        double a = 0, b = hi;
        for (int i = 0; i < 80 && b - a > 1e-12 * b; ++i) {
            const double mid = 0.5 * (a + b);
            double midRate = 0;
            const State m = atBatch(in, mid, midRate);
            (m.feasible && midRate * m.e2eS < N ? a : b) = mid;
        }
        chosen = a;
        s = atBatch(in, chosen, rate);
    }
    r.queued = std::max(0.0, in.concurrency - in.maxConcurrency);
    if (r.queued > 0 && rate > 0)
        queuedWait += r.queued * in.decodeReplicas / rate;
    r.requestsPerS = rate;
    r.decodeBatch = s.batch;
    r.decodeStepS = s.stepS;
    r.tpotS = s.tpotS;
    r.waitS = s.waitS + queuedWait;
    r.kvTransferS = s.kvS;
    r.ttftS = s.ttftS + queuedWait;
    r.slowTtftS = s.slowTtftS + queuedWait;
    r.e2eS = s.e2eS + queuedWait;
    r.prefillShare = s.share;
    r.concurrency = in.concurrency;
    return r;
}

} // namespace

ThroughputResult solveThroughput(const ThroughputInputs &in)
{
    ThroughputResult r;
    const double afterFirst = std::max(0.0, in.outputTokens - 1);
    const double accepted = std::max(1.0, in.accepted);
    if (in.phase == ServingPhase::Prefill) {
        // The pool measured alone at saturation: every replica busy, the slowest setting the
        // rate requests spread evenly over them can keep.
        const double servers = double(in.prefillReplicas) * in.prefillServers;
        const double pace = prefillPaceS(in);
        r.requestsPerS = r.capacity = pace > 0 ? servers / pace : 0;
        double mean = in.prefillClasses.empty() ? in.prefillS : 0.0;
        for (const ThroughputInputs::PrefillClass &k : in.prefillClasses)
            mean += k.share * k.prefillS;
        r.ttftS = r.e2eS = mean;
        r.slowTtftS = pace;
        r.concurrency = in.concurrency;
        return r;
    }
    if (in.phase == ServingPhase::Decode) {
        const double c = in.concurrency > 0 ? in.concurrency : in.maxConcurrency;
        r.decodeBatch = std::min(c, double(in.maxConcurrency));
        r.decodeStepS = in.decodeStepS(std::max(1.0, r.decodeBatch));
        r.tpotS = r.decodeStepS / accepted;
        r.e2eS = afterFirst * r.tpotS;
        r.requestsPerS = r.e2eS > 0 ? in.decodeReplicas * r.decodeBatch / r.e2eS : 0;
        r.capacity = r.requestsPerS;
        r.concurrency = c;
        r.queued = std::max(0.0, c - in.maxConcurrency);
        return r;
    }
    if (in.requestRate <= 0 && in.outputTokens > 1)
        return solveClosedLoop(in);
    // The most the deployment serves: the largest rate that keeps the prefill below saturation,
    // the decode batch within the KV cache and the KV links below their rate.
    double hi = std::numeric_limits<double>::infinity();
    {
        const double servers = double(in.prefillReplicas) * in.prefillServers;
        const double pace = in.disaggregated ? prefillPaceS(in) : in.prefillS;
        if (pace > 0)
            hi = servers / pace;
        const double full = in.decodeStepS(std::max(1, in.maxConcurrency));
        if (afterFirst > 0 && full > 0)
            hi = std::min(hi,
                          in.decodeReplicas * double(in.maxConcurrency) * accepted
                                  / (afterFirst * full));
        if (in.kvMaxRate > 0)
            hi = std::min(hi, in.kvMaxRate);
        if (!std::isfinite(hi))
            hi = 1e12;
    }
    double lo = 0;
    for (int i = 0; i < 80 && hi - lo > 1e-12 * hi; ++i) {
        const double mid = 0.5 * (lo + hi);
        (at(in, mid).feasible ? lo : hi) = mid;
    }
    r.capacity = lo;
    double rate = 0;
    double queuedWait = 0;
    if (in.requestRate > 0) {
        rate = in.requestRate;
        if (rate >= r.capacity) {
            r.overloaded = true;
            rate = r.capacity * (1 - 1e-6);
        }
    } else {
        // Closed loop: the requests in service, N = rate x e2e (Little's law); those past what
        // the KV cache holds wait for a slot.
        const double served = std::min(in.concurrency, double(in.maxConcurrency));
        const double N = served * in.decodeReplicas;
        double a = 0, b = r.capacity;
        const State top = at(in, b * (1 - 1e-9));
        if (top.feasible && b * top.e2eS <= N) {
            // Saturated (the prefill or the links bound it): the rest wait.
            rate = b * (1 - 1e-9);
            queuedWait = (N - rate * top.e2eS) / rate;
        } else {
            for (int i = 0; i < 80 && b - a > 1e-12 * b; ++i) {
                const double mid = 0.5 * (a + b);
                const State s = at(in, mid);
                (s.feasible && mid * s.e2eS < N ? a : b) = mid;
            }
            rate = a;
        }
        r.queued = std::max(0.0, in.concurrency - in.maxConcurrency);
        if (r.queued > 0 && rate > 0)
            queuedWait += r.queued * in.decodeReplicas / rate;
    }
    const State s = at(in, rate);
    r.requestsPerS = rate;
    r.decodeBatch = s.batch;
    r.decodeStepS = s.stepS;
    r.tpotS = s.tpotS;
    r.waitS = s.waitS + queuedWait;
    r.kvTransferS = s.kvS;
    r.ttftS = s.ttftS + queuedWait;
    r.slowTtftS = s.slowTtftS + queuedWait;
    r.e2eS = s.e2eS + queuedWait;
    r.prefillShare = s.share;
    r.concurrency = in.requestRate > 0 ? rate * r.e2eS / in.decodeReplicas : in.concurrency;
    return r;
}

} // namespace railyard::engine
