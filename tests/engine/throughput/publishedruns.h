#pragma once

#include "layout/catalog.h"
#include "layout/layout.h"
#include "step/evaluate.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <string>

// The published training runs of tests/data/throughput/runs.txt (the reference throughput.md,
// sections 3, 3b and 3d, and family Z), each as a layout the engine prices.
namespace railyard::test {

using namespace railyard::engine;

struct Run
{
    QString id;
    QChar family;
    bool heldOut = false;
    bool section3d = false; // released after the engine was measured on it; fitted from then
    QString system, model;
    int gpus = 0, seq = 0, gbs = 0, mbs = 0, tp = 1, pp = 1, vp = 1, dp = 1, cp = 1, ep = 1;
    QString shard, recompute, precision, stack, measured;
    bool sp = false;
    QStringList flags;
    double measuredTokens = 0; // tokens/s/GPU
    double measuredMemGiB = 0; // the memory the source reports per GPU (flag mem:GiB); 0: none
    // PyTorch's max_memory_allocated on one GPU, GiB (flag memalloc:GiB); 0: none.
    double measuredAllocGiB = 0;
};

struct Priced
{
    Evaluation e;
    double err = 0; // (model - measured) / measured, tokens/s/GPU
};

// Every run of tests/data/throughput/runs.txt; a malformed line stops the test (qFatal).
QList<Run> readRuns();
// The run as a layout: its system's GPUs, NICs and fabric, its model, parallel sizes and stack.
Layout layoutFor(const Run &r);
// The catalog GPU id of the run's system.
std::string gpuFor(const Run &r);
// The Grand Teton hosts of torchtitan's runs (system TTN) hold H100s with 96 GB of HBM2e at
// 2.4 TB/s under a 500 W power limit: `catalog` with its H100-SXM entry made that GPU, its
// sustained clock `clockScale` times the 700 W part's (kGrandTetonClock: measured on that
// board's GEMMs, tst_kernels::grandTetonClockFromKernels). Other systems: `catalog` as it is.
constexpr double kGrandTetonClock = 0.802;
Catalog catalogFor(const Run &r, const Catalog &catalog, double clockScale = kGrandTetonClock);
// Prices the run on `catalog` (link loads and timeline off).
Priced price(const Run &r,
             const Catalog &catalog = Catalog::builtin(),
             double grandTetonClock = kGrandTetonClock);
bool outOfMemory(const Evaluation &e);

} // namespace railyard::test
