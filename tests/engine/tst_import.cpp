#include "base/inputerror.h"
#include "base/jsoncursor.h"
#include "collectives/collective.h"
#include "import/calibration.h"
#include "import/importer.h"
#include "import/importtext.h"
#include "layout/catalog.h"
#include "layout/layout.h"
#include "topology/topology.h"

#include <QFileInfo>
#include <QStringDecoder>
#include <QTest>

#include "comparenear.h"
#include <cmath>

using namespace railyard::engine;

static std::string dataPath(const std::string &name)
{
    return std::string(RAILYARD_TEST_DATA "/import/") + name;
}

// The message names the file and the place, is valid UTF-8 and stays short.
static void checkMessage(const InputError &e, const QStringList &expected)
{
    const std::string what = e.what();
    QStringDecoder utf8(QStringDecoder::Utf8);
    const QString msg = utf8(QByteArray::fromStdString(what));
    qInfo("%s", qPrintable(msg.left(300)));
    QVERIFY2(!utf8.hasError(), "the message is not valid UTF-8");
    QVERIFY2(what.size() < 1000, qPrintable(QString::number(what.size())));
    for (const QString &part : expected)
        QVERIFY2(msg.contains(part), qPrintable(msg.left(300) + " lacks: " + part));
}

// Imports `text` named `file`, expecting an InputError whose message holds `expected`.
static void expectError(const std::string &text,
                        const std::string &file,
                        const QStringList &expected)
{
    try {
        importText(text, file);
        QFAIL(qPrintable("no error for " + QString::fromStdString(file)));
    } catch (const InputError &e) {
        checkMessage(e, QStringList{QString::fromStdString(file)} + expected);
    }
}

static int linksOf(const ImportedMachine &m, const std::string &kind)
{
    const auto counts = m.linkCounts();
    const auto it = counts.find(kind);
    return it == counts.end() ? 0 : it->second;
}

class TestImport : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void topoMatrix_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("gpus");
        QTest::addColumn<int>("nics");
        QTest::addColumn<int>("nvlinkPairs");
        QTest::addColumn<int>("lanesPerGpu"); // GPU0's NVLinks
        QTest::addColumn<int>("pixPairs");
        // Counts read off the matrices by hand (see tests/data/import/README.md).
        QTest::newRow("a100 17 nics")
                << "a100-8gpu-17nic-xuesongtap.txt" << 8 << 17 << 28 << 12 << 8;
        QTest::newRow("dgx a100") << "dgx-a100-8gpu-10nic-UNATTRIBUTED.txt" << 8 << 10 << 28 << 12
                                  << 1;
        QTest::newRow("gb200 grace")
                << "gb200-4gpu-8nic-gracenuma-UNATTRIBUTED.txt" << 4 << 8 << 6 << 18 << 2;
        QTest::newRow("h20-3e no legend")
                << "h20-3e-8gpu-vm-no-legend-nccltests321.txt" << 8 << 8 << 28 << 18 << 8;
        QTest::newRow("b300 bond")
                << "hgx-b300-8gpu-cx8-bond-deepep590.txt" << 8 << 8 << 28 << 18 << 0;
        QTest::newRow("h100 paired")
                << "hgx-h100-8gpu-8nic-paired-sglang25887.txt" << 8 << 8 << 28 << 18 << 12;
        QTest::newRow("h100") << "hgx-h100-8gpu-8nic-sglang30401.txt" << 8 << 8 << 28 << 18 << 8;
        QTest::newRow("h20") << "hgx-h20-8gpu-8nic-sglang9696.txt" << 8 << 8 << 28 << 18 << 8;
        QTest::newRow("h200 tabs")
                << "hgx-h200-8gpu-8nic-vastai-tabs.txt" << 8 << 8 << 28 << 18 << 8;
        QTest::newRow("h800 nv8") << "hgx-h800-8gpu-nv8-9nic-sglang28424.txt" << 8 << 9 << 28 << 8
                                  << 8;
        QTest::newRow("1080ti old header")
                << "pcie-2x1080ti-desktop-phb-xuesongtap.txt" << 2 << 0 << 0 << 0 << 0;
        QTest::newRow("2080ti pix") << "pcie-2x2080ti-pix-autodl.txt" << 2 << 0 << 0 << 0 << 1;
        QTest::newRow("5090 tabs")
                << "pcie-2xrtx5090-phb-tabs-club3090-1229.txt" << 2 << 0 << 0 << 0 << 0;
        QTest::newRow("4x a10") << "pcie-4xa10-2nic-xuesongtap.txt" << 4 << 2 << 0 << 0 << 1;
        QTest::newRow("8x 4090") << "pcie-8xrtx4090-2nic-tabs-gogpuallocator17.txt" << 8 << 2 << 0
                                 << 0 << 1;
        QTest::newRow("perlmutter mesh")
                << "perlmutter-a100-4gpu-nv4-tabs.txt" << 4 << 0 << 6 << 12 << 0;
        QTest::newRow("v100 hybrid cube")
                << "v100-8gpu-hybridcube-legacy-mlx5col-paddlefleetx.txt" << 8 << 1 << 16 << 6 << 0;
    }
    void topoMatrix()
    {
        QFETCH(QString, file);
        QFETCH(int, gpus);
        QFETCH(int, nics);
        QFETCH(int, nvlinkPairs);
        QFETCH(int, lanesPerGpu);
        QFETCH(int, pixPairs);
        const ImportedMachine m = importFile(dataPath("topo-m/" + file.toStdString()));
        QCOMPARE(m.format, std::string("nvidia-smi-topo"));
        QCOMPARE(int(m.gpus.size()), gpus);
        QCOMPARE(int(m.nics.size()), nics);
        QCOMPARE(linksOf(m, "nvlink"), nvlinkPairs);
        QCOMPARE(m.gpus.front().nvlinks, lanesPerGpu);
        QCOMPARE(linksOf(m, "pix"), pixPairs);
        // Every device pair is one link.
        const int d = gpus + nics;
        QCOMPARE(int(m.links.size()), d * (d - 1) / 2);
        // The nearest layout builds and prices.
        const Layout l = layoutFromImport(m, Catalog::builtin());
        QCOMPARE(l.cluster.gpuCount(), gpus);
        const Layout back = parseLayout(layoutToText(l),
                                        "roundtrip.railyard.json",
                                        &Catalog::builtin());
        QVERIFY(back.sameContent(l));
        QCOMPARE(back.original.get()["imported"]["summary"]["gpus"].get<int>(), gpus);
    }

    void topoMatrixDetails()
    {
        // H200 tabs: NIC legend, affinity, GPU0 PIX to NIC0, 2 NUMA nodes.
        ImportedMachine m = importFile(dataPath("topo-m/hgx-h200-8gpu-8nic-vastai-tabs.txt"));
        QCOMPARE(m.nics[3].name, std::string("mlx5_3"));
        QCOMPARE(m.nics[0].nearestGpu, 0);
        QCOMPARE(m.nics[0].nearestPath, std::string("PIX"));
        QCOMPARE(m.gpus[5].cpuAffinity, std::string("96-191"));
        QCOMPARE(m.gpus[5].numa, 1);
        QCOMPARE(m.numaNodes, 2);
        QVERIFY(m.nvlinkSwitched);
        // H20-3e: NIC order runs opposite to the GPUs.
        m = importFile(dataPath("topo-m/h20-3e-8gpu-vm-no-legend-nccltests321.txt"));
        QCOMPARE(m.nics[7].nearestGpu, 0);
        QCOMPARE(m.nics[0].nearestGpu, 7);
        // GB200: NUMA affinity is a list, and all NICs are SYS (none near a GPU).
        m = importFile(dataPath("topo-m/gb200-4gpu-8nic-gracenuma-UNATTRIBUTED.txt"));
        QCOMPARE(m.gpus[2].numaAffinity, std::string("1,19-25,27-33"));
        QCOMPARE(m.gpus[2].cpuAffinity, std::string("72-143"));
        for (const ImportedNic &n : m.nics)
            QCOMPARE(n.nearestGpu, -1);
        // V100: a raw mlx5_0 label and a direct mesh, not a switch.
        m = importFile(dataPath("topo-m/v100-8gpu-hybridcube-legacy-mlx5col-paddlefleetx.txt"));
        QCOMPARE(m.nics[0].name, std::string("mlx5_0"));
        QVERIFY(!m.nvlinkSwitched);
        QCOMPARE(m.nvlinkLanes(), 24); // 8 GPUs x 6 links / 2
        // Perlmutter: NV4 to each of 3 peers is a mesh of 12 links per GPU.
        m = importFile(dataPath("topo-m/perlmutter-a100-4gpu-nv4-tabs.txt"));
        QVERIFY(!m.nvlinkSwitched);
    }

    void spacesTabsAndEscapes()
    {
        // The same matrix with tabs, with spaces, with an ANSI-underlined header and CRLF.
        const std::string tabs = "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
                                 "GPU0\t X \tNV12\tPXB\t0-63\t0\t\tN/A\n"
                                 "GPU1\tNV12\t X \tSYS\t64-127\t1\t\tN/A\n"
                                 "NIC0\tPXB\tSYS\t X \t\t\t\t\n\nNIC Legend:\n\n  NIC0: mlx5_4\n";
        const std::string spaces
                = "        GPU0    GPU1    NIC0    CPU Affinity    NUMA Affinity   GPU NUMA ID\n"
                  "GPU0     X      NV12    PXB     0-63    0               N/A\r\n"
                  "GPU1    NV12     X      SYS     64-127  1               N/A\r\n"
                  "NIC0    PXB     SYS      X\r\n";
        const std::string ansi
                = "\x1b[4m\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n"
                  + tabs.substr(tabs.find('\n') + 1);
        for (const std::string &text : {tabs, spaces, ansi}) {
            const ImportedMachine m = importText(text, "mini.txt");
            QCOMPARE(int(m.gpus.size()), 2);
            QCOMPARE(int(m.nics.size()), 1);
            QCOMPARE(m.gpus[1].cpuAffinity, std::string("64-127"));
            QCOMPARE(m.nics[0].nearestGpu, 0);
            QCOMPARE(m.nics[0].nearestPath, std::string("PXB"));
            QCOMPARE(m.nvlinkLanes(), 12);
        }
        QCOMPARE(importText(tabs, "mini.txt").nics[0].name, std::string("mlx5_4"));
    }

    void ncclTopoXml_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("gpus");
        QTest::addColumn<int>("nics");
        QTest::addColumn<int>("lanesPerGpu");
        QTest::addColumn<double>("nicGbps");
        QTest::addColumn<QString>("gpu"); // the catalog GPU of the nearest layout
        QTest::newRow("p4d comments")
                << "aws-p4d.24xlarge-topo.xml" << 8 << 4 << 0 << 0.0 << "A100-SXM-80GB";
        QTest::newRow("p5 32 efa")
                << "aws-p5.48xlarge-topo.xml" << 8 << 32 << 0 << 100.0 << "H100-SXM";
        QTest::newRow("ncv4 self nvlink")
                << "azure-ncv4-topo.xml" << 4 << 1 << 0 << 100.0 << "A100-SXM-80GB";
        QTest::newRow("ndv2") << "azure-ndv2-topo.xml" << 8 << 1 << 0 << 0.0 << "";
        QTest::newRow("ndv4") << "azure-ndv4-topo.xml" << 8 << 8 << 0 << 0.0 << "";
        QTest::newRow("ndv5") << "azure-ndv5-topo.xml" << 8 << 8 << 0 << 0.0 << "";
        QTest::newRow("ibm vm") << "ibm-cloud-gx3d-8xh100-topo.xml" << 8 << 8 << 18 << 200.0
                                << "H100-SXM";
        QTest::newRow("perlmutter") << "simllm-perlmutter-a100-4x-slingshot-dump.xml" << 4 << 4
                                    << 12 << 0.0 << "A100-SXM-80GB";
        QTest::newRow("b200") << "simllm-vastai-hgx-b200-8x-dump.xml" << 8 << 1 << 18 << 0.0
                              << "B200";
        QTest::newRow("h200") << "simllm-vastai-hgx-h200-8x-dump.xml" << 8 << 1 << 18 << 10.0
                              << "H200-SXM";
    }
    void ncclTopoXml()
    {
        QFETCH(QString, file);
        QFETCH(int, gpus);
        QFETCH(int, nics);
        QFETCH(int, lanesPerGpu);
        QFETCH(double, nicGbps);
        QFETCH(QString, gpu);
        const ImportedMachine m = importFile(dataPath("nccl-topo-xml/" + file.toStdString()));
        QCOMPARE(m.format, std::string("nccl-topo-xml"));
        QCOMPARE(int(m.gpus.size()), gpus);
        QCOMPARE(int(m.nics.size()), nics);
        for (const ImportedGpu &g : m.gpus)
            QCOMPARE(g.nvlinks, lanesPerGpu);
        if (nicGbps > 0)
            QCOMPARE(m.nics.front().gbitPerS, nicGbps);
        const Layout l = layoutFromImport(m, Catalog::builtin());
        QCOMPARE(l.cluster.gpuCount(), gpus);
        if (!gpu.isEmpty())
            QCOMPARE(QString::fromStdString(l.cluster.gpu), gpu);
    }

    void ncclTopoXmlDetails()
    {
        ImportedMachine m = importFile(
                dataPath("nccl-topo-xml/simllm-vastai-hgx-h200-8x-dump.xml"));
        QCOMPARE(m.nvswitches, 4); // c3..c6
        QVERIFY(m.nvlinkSwitched);
        QCOMPARE(m.numaNodes, 2);
        QCOMPARE(m.gpus[3].label, std::string("GPU3"));
        m = importFile(dataPath("nccl-topo-xml/simllm-perlmutter-a100-4x-slingshot-dump.xml"));
        QVERIFY(!m.nvlinkSwitched);
        QCOMPARE(linksOf(m, "nvlink"), 6);             // every pair, each listed from both ends
        QCOMPARE(m.nics[0].name, std::string("cxi3")); // in file order
        QCOMPARE(m.nics[0].gbitPerS, 200.0);
        m = importFile(dataPath("nccl-topo-xml/azure-ncv4-topo.xml"));
        QCOMPARE(linksOf(m, "nvlink"), 0); // the self-targeted NVLinks are dropped, with a note
        QVERIFY(m.notes.front().find("itself") != std::string::npos);
        m = importFile(dataPath("nccl-topo-xml/aws-p4d.24xlarge-topo.xml"));
        QCOMPARE(m.pcieSwitches, 4);
        QCOMPARE(m.nics[1].nearestGpu, 2); // NIC 1 shares switch 1 with GPUs 2 and 3
        const Layout l = layoutFromImport(m, Catalog::builtin());
        QCOMPARE(l.cluster.nic.perGpu, 0.5);
        QVERIFY(l.notes.find("PCIe switches") != std::string::npos);
    }

    void ncclGraph()
    {
        const ImportedMachine m = importFile(dataPath("nccl-graph-xml/azure-ncv4-graph.xml"));
        QCOMPARE(m.format, std::string("nccl-graph-xml"));
        QCOMPARE(int(m.graphs.size()), 3);
        QCOMPARE(m.graphs[0].pattern, std::string("ring"));
        QCOMPARE(m.graphs[1].pattern, std::string("balanced-tree"));
        QCOMPARE(m.graphs[2].pattern, std::string("tree"));
        QCOMPARE(int(m.graphs[0].channels.size()), 2);
        QCOMPARE(m.graphs[0].channels[1].gpus, (std::vector<int>{0, 3, 2, 1}));
        QCOMPARE(m.graphs[0].speedIntra, 12.0);
        QCOMPARE(int(m.gpus.size()), 4);
        const Layout l = layoutFromImport(m, Catalog::builtin());
        QCOMPARE(l.original.get()["imported"]["summary"]["graphs"].size(), std::size_t(3));
    }

    void ncclTests_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("op");
        QTest::addColumn<int>("hosts");
        QTest::addColumn<int>("ranks");
        QTest::addColumn<int>("rows");
        QTest::addColumn<double>("largest"); // bytes
        QTest::addColumn<double>("busbw");   // out-of-place at the largest size, GB/s
        QTest::addColumn<double>("busbwIn"); // in-place
        QTest::addColumn<double>("timeUs");  // out-of-place
        // Values read from the logs' last rows.
        QTest::newRow("a3mega") << "gcp-a3mega-h100-2node-allreduce.txt"
                                << "all_reduce" << 2 << 16 << 31 << 8589934592.0 << 338.82 << 337.35
                                << 47535.0;
        QTest::newRow("h100 nvls")
                << "h100-1node-8gpu-allreduce-nvls-nccltests290.txt"
                << "all_reduce" << 1 << 8 << 6 << 4294967296.0 << 473.60 << 476.53 << 15870.0;
        QTest::newRow("srun prefixed")
                << "h100-2node-16gpu-allreduce-srun-prefixed-nccltests290.txt"
                << "all_reduce" << 2 << 16 << 11 << 8589934592.0 << 155.57 << 155.56 << 103530.0;
        QTest::newRow("h200 bare metal")
                << "h200-2node-16gpu-allreduce-baremetal-nccltests256.txt"
                << "all_reduce" << 2 << 16 << 3 << 9663676416.0 << 488.81 << 486.84 << 37069.0;
        QTest::newRow("h200 vm stray line")
                << "h200-2node-16gpu-allreduce-kvm-vm-nccltests256.txt"
                << "all_reduce" << 2 << 16 << 6 << 8153726976.0 << 54.97 << 52.10 << 278106.0;
        QTest::newRow("mlperf oracle")
                << "mlperf4.0-oracle-bm.gpu.h100.8-1node-allreduce-half.txt"
                << "all_reduce" << 1 << 8 << 1 << 53687090.0 << 327.37 << 326.68 << 287.0;
        QTest::newRow("mlperf smc")
                << "mlperf4.0-supermicro-h100-sxm-1node-allreduce-half-sweep.txt"
                << "all_reduce" << 1 << 8 << 6 << 704643072.0 << 457.77 << 458.66 << 2693.8;
        QTest::newRow("reduce 1 gpu wide")
                << "pcie-1x2080ti-reduce-single-gpu-autodl.txt"
                << "reduce" << 1 << 1 << 28 << 1073741824.0 << 267.37 << 5706839.35 << 4016.0;
        QTest::newRow("all_gather")
                << "pcie-2x2080ti-1node-allgather-autodl.txt"
                << "all_gather" << 1 << 2 << 28 << 1073741824.0 << 3.79 << 3.84 << 141614.0;
        QTest::newRow("alltoall") << "pcie-2x2080ti-1node-alltoall-autodl.txt"
                                  << "alltoall" << 1 << 2 << 28 << 1073741824.0 << 4.61 << 4.73
                                  << 116573.0;
    }
    void ncclTests()
    {
        QFETCH(QString, file);
        QFETCH(QString, op);
        QFETCH(int, hosts);
        QFETCH(int, ranks);
        QFETCH(int, rows);
        QFETCH(double, largest);
        QFETCH(double, busbw);
        QFETCH(double, busbwIn);
        QFETCH(double, timeUs);
        const ImportedMachine m = importFile(dataPath("nccl-tests/" + file.toStdString()));
        QCOMPARE(m.format, std::string("nccl-tests"));
        QCOMPARE(QString::fromStdString(m.collective), op);
        QCOMPARE(int(m.hosts.size()), hosts);
        QCOMPARE(m.ranks, ranks);
        QCOMPARE(int(m.measurements.size()), 2 * rows);
        const Measurement *big = m.largest();
        QVERIFY(big);
        QCOMPARE(big->sizeBytes, largest);
        QCOMPARE(big->busbwGBps, busbw);
        QCOMPARE(big->timeUs, timeUs);
        QVERIFY(!big->inPlace);
        const Measurement &in
                = m.measurements[static_cast<std::size_t>(big - m.measurements.data()) + 1];
        QVERIFY(in.inPlace);
        QCOMPARE(in.busbwGBps, busbwIn);
        QCOMPARE(in.sizeBytes, largest);
    }

    void calibration()
    {
        // 2 x 8 H100 over IB measured 155.57 GB/s busbw at 8 GiB: the layout's efficiency is
        // set so the model gives the same (within 1%), and it was far above before.
        const ImportedMachine m = importFile(
                dataPath("nccl-tests/h100-2node-16gpu-allreduce-srun-prefixed-nccltests290.txt"));
        const Layout l = layoutFromImport(m, Catalog::builtin());
        QCOMPARE(l.cluster.gpu, std::string("H100-SXM"));
        QCOMPARE(l.cluster.nodes, 2);
        QCOMPARE(l.cluster.gpusPerNode, 8);
        QVERIFY(l.cluster.tuning.efficiency);
        const double e = *l.cluster.tuning.efficiency;
        QVERIFY2(e > 0.05 && e < 0.9, qPrintable(QString::number(e)));
        const Json &cal = l.original.get()["imported"]["calibration"];
        QCOMPARE(cal["measured_busbw_gbps"].get<double>(), 155.57);
        QVERIFY(cal["modelled_busbw_gbps_before"].get<double>() > 1.5 * 155.57);
        // Price it again, independently of the importer.
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        CollectiveRequest r;
        r.bytes = 8589934592.0;
        const double modelled = estimateCollective(t, r).busbwGBps;
        RAILYARD_COMPARE_NEAR(modelled, 155.57, 0.01);
        QCOMPARE(cal["points"].size(), std::size_t(11));
        // A single-GPU reduce cannot calibrate: no efficiency, a note says why.
        const Layout one = layoutFromImport(
                importFile(dataPath("nccl-tests/pcie-1x2080ti-reduce-single-gpu-autodl.txt")),
                Catalog::builtin());
        QVERIFY(!one.cluster.tuning.efficiency);
        QVERIFY(one.notes.find("No calibration") != std::string::npos);
    }

    // The calibration as the Cluster panel's chart reads it: every out-of-place size of the
    // log, priced again on the cluster as it is now.
    // A log far short of the model at large sizes: which fault would explain it, with its
    // numbers, priced again here on the faulted cluster; a log that matches the model, or
    // whose shape no single fault explains, gets none.
    void faultHypotheses()
    {
        const Layout l = layoutFromImport(
                importFile(dataPath(
                        "nccl-tests/h100-2node-16gpu-allreduce-srun-prefixed-nccltests290.txt")),
                Catalog::builtin());
        const Json &list = l.original.get()["imported"]["calibration"]["fault_hypotheses"];
        QVERIFY(list.is_array() && !list.empty());
        const Json &best = list[0];
        QCOMPARE(best["measured_busbw_gbps"].get<double>(), 155.57);
        QVERIFY(best["healthy_busbw_gbps"].get<double>() > 2.5 * 155.57);
        RAILYARD_COMPARE_NEAR(best["modelled_busbw_gbps"].get<double>(), 155.57, 0.15);
        QVERIFY(best["fit"].get<double>() <= 0.2);
        QVERIFY(l.notes.find("hypotheses that would explain it") != std::string::npos);
        // The hypothesis's faults on the imported cluster (at the catalog's efficiencies) give
        // the bus bandwidth it states.
        Layout faulted = l;
        faulted.cluster.tuning.efficiency.reset();
        faulted.cluster.faults = readFaults(JsonCursor(best["faults"], "hypothesis"));
        CollectiveRequest r;
        r.bytes = best["size_bytes"].get<double>();
        RAILYARD_COMPARE_NEAR(estimateCollective(buildTopology(faulted.cluster, Catalog::builtin()),
                                                 r)
                                      .busbwGBps,
                              best["modelled_busbw_gbps"].get<double>(),
                              1e-9);
        for (const char *file : {"h200-2node-16gpu-allreduce-baremetal-nccltests256.txt",
                                 "h200-2node-16gpu-allreduce-kvm-vm-nccltests256.txt"}) {
            const Layout other = layoutFromImport(importFile(dataPath(std::string("nccl-tests/")
                                                                      + file)),
                                                  Catalog::builtin());
            QVERIFY2(!other.original.get()["imported"]["calibration"].contains("fault_hypotheses"),
                     file);
        }
    }

    void calibrationCurve()
    {
        const ImportedMachine m = importFile(
                dataPath("nccl-tests/h100-2node-16gpu-allreduce-srun-prefixed-nccltests290.txt"));
        Layout l = layoutFromImport(m, Catalog::builtin());
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        const auto cal = calibrationOf(l, t);
        QVERIFY(cal);
        QCOMPARE(cal->test, std::string("all_reduce"));
        QCOMPARE(cal->points.size(), std::size_t(11));
        const Json &stored = l.original.get()["imported"]["calibration"]["points"];
        for (std::size_t i = 0; i < cal->points.size(); ++i) {
            QVERIFY(i == 0 || cal->points[i].sizeBytes > cal->points[i - 1].sizeBytes);
            // As stored at import (the same cluster): to the last digit.
            QCOMPARE(cal->points[i].measuredGBps, stored[i]["measured_busbw_gbps"].get<double>());
            RAILYARD_COMPARE_NEAR(cal->points[i].modelledGBps,
                                  stored[i]["modelled_busbw_gbps"].get<double>(),
                                  1e-9);
        }
        // Fitted at the largest size: within 1% there.
        RAILYARD_COMPARE_NEAR(cal->points.back().modelledGBps, 155.57, 0.01);
        // Twice the efficiency: the model's bandwidth-bound sizes get faster, the log does not.
        l.cluster.tuning.efficiency = 2 * *l.cluster.tuning.efficiency;
        const auto faster = calibrationOf(l, buildTopology(l.cluster, Catalog::builtin()));
        QVERIFY(faster);
        QVERIFY(faster->points.back().modelledGBps > 1.6 * cal->points.back().modelledGBps);
        QCOMPARE(faster->points.back().measuredGBps, cal->points.back().measuredGBps);
        // A hand-edited file with no usable calibration shows no chart (and throws nothing).
        Layout broken = l;
        broken.original.get()["imported"]["calibration"]["points"] = "none";
        QVERIFY(!calibrationOf(broken, t));
        broken.original.get()["imported"]["calibration"] = {{"op", "reduce"}};
        QVERIFY(!calibrationOf(broken, t));
        broken.original.get()["imported"] = 3;
        QVERIFY(!calibrationOf(broken, t));
        QVERIFY(!calibrationOf(Layout{}, t));
    }

    void oddServerIsWrittenOut()
    {
        // 4 NICs for 8 GPUs, GPUs two to a PCIe switch, a missing NVLink: the layout carries the
        // server as found (format 2) and the notes say so. (A direct mesh of NV6 bundles: at
        // most 18 lanes per H100, which tst_importhostile holds the importer to.)
        const std::string text
                = "\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\n"
                  "GPU0\t X \tNV6\tNV6\tSYS\tPIX\tSYS\t0-47\t0\n"
                  "GPU1\tNV6\t X \tNV6\tNV6\tPIX\tSYS\t0-47\t0\n"
                  "GPU2\tNV6\tNV6\t X \tNV6\tSYS\tPIX\t48-95\t1\n"
                  "GPU3\tSYS\tNV6\tNV6\t X \tSYS\tPIX\t48-95\t1\n"
                  "NIC0\tPIX\tPIX\tSYS\tSYS\t X \tSYS\n"
                  "NIC1\tSYS\tSYS\tPIX\tPIX\tSYS\t X \n";
        const ImportedMachine m = importText(text, "odd-h100.txt");
        QCOMPARE(linksOf(m, "nvlink"), 5);
        const Layout l = layoutFromImport(m, Catalog::builtin());
        QCOMPARE(l.cluster.nic.perGpu, 0.5);
        QVERIFY(l.cluster.server);
        const ServerTemplate &s = *l.cluster.server;
        QCOMPARE(s.count(ServerDeviceKind::Cpu), 2);
        QCOMPARE(s.count(ServerDeviceKind::PcieSwitch), 2);
        QCOMPARE(s.count(ServerDeviceKind::Nic), 2);
        QCOMPARE(s.links.size(), std::size_t(5)); // GPU 0 - GPU 3 has none
        QCOMPARE(s.devices[static_cast<std::size_t>(s.indexOf("gpu1"))].host, std::string("pex0"));
        QCOMPARE(s.devices[static_cast<std::size_t>(s.indexOf("nic1"))].host, std::string("pex1"));
        QVERIFY2(l.notes.find("written out as found") != std::string::npos, l.notes.c_str());
        QVERIFY2(l.notes.find("5 direct NVLink pairs") != std::string::npos, l.notes.c_str());
        QVERIFY(l.original.get()["imported"]["deviations"].empty());
        QCOMPARE(l.original.get()["imported"]["devices"]["links"].size(), std::size_t(15));
        // A log gives no board: the nearest generated shape, with its deviations noted.
        const Layout log = layoutFromImport(
                importFile(dataPath(
                        "nccl-tests/h100-2node-16gpu-allreduce-srun-prefixed-nccltests290.txt")),
                Catalog::builtin());
        QVERIFY(!log.cluster.server);
    }

    void badInput_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("what");
        const QByteArray header = "\tGPU0\tGPU1\tCPU Affinity\n";
        const QByteArray logHead = "# nThread 1 nGpus 2 minBytes 8 maxBytes 8 step: 2(factor)\n#  "
                                   "Rank  0 Group  0 Pid 1 on h device  0 [0x01] NVIDIA H100\n";
        QTest::newRow("empty") << QByteArray("  \n\n") << ""
                               << "empty";
        QTest::newRow("binary") << QByteArray("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16) << "line 3"
                                << "binary";
        QTest::newRow("utf-16") << QByteArray("\xFF\xFEG\0P\0U\0", 8) << "line 1"
                                << "UTF-16";
        QTest::newRow("latin-1") << QByteArray(header + "GPU0\t X \tNV4\t0-7 caf\xE9\n") << "line 2"
                                 << "UTF-8";
        QTest::newRow("unknown format") << QByteArray("hello\nworld\n") << "line 1"
                                        << "not a format";
        QTest::newRow("truncated matrix")
                << QByteArray(header + "GPU0\t X \tNV4\t0-7\n") << "line 3"
                << "no row for \"GPU1\"";
        QTest::newRow("short row") << QByteArray(header + "GPU0\t X \n") << "line 2"
                                   << "1 cell;";
        QTest::newRow("bad cell") << QByteArray(header
                                                + "GPU0\t X \tNVX\t0-7\nGPU1\tNV4\t X \t0-7\n")
                                  << "line 2"
                                  << "\"NVX\"";
        QTest::newRow("absurd nv")
                << QByteArray(header + "GPU0\t X \tNV99999999\t0-7\nGPU1\tNV4\t X \t0-7\n")
                << "line 2"
                << "NV99999999";
        QTest::newRow("no diagonal")
                << QByteArray(header + "GPU0\tSYS\tSYS\t0-7\nGPU1\tSYS\t X \t0-7\n") << "line 2"
                << "expected X";
        QTest::newRow("xml truncated")
                << QByteArray("<system version=\"1\">\n  <cpu numaid=\"0\">\n    <pci "
                              "busid=\"0000:01:00.0\" class=\"0x030200\"/>\n")
                << "line 4"
                << "never closed";
        QTest::newRow("xml mismatched")
                << QByteArray("<system>\n<cpu>\n</pci>\n</system>\n") << "line 3"
                << "</pci> closes <cpu>";
        QTest::newRow("billion laughs") << QByteArray(
                "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n <!ENTITY lol \"lol\">\n <!ENTITY lol2 "
                "\"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">\n]>\n<system "
                "version=\"&lol2;\"/>\n")
                                        << "line 2"
                                        << "DTD";
        QTest::newRow("undefined entity")
                << QByteArray("<system version=\"&xxe;\">\n</system>\n") << "line 1"
                << "&xxe;";
        QTest::newRow("xml no gpu")
                << QByteArray("<system version=\"1\"><cpu numaid=\"0\"/></system>") << "line 1"
                << "no GPU";
        QTest::newRow("xml bad class") << QByteArray(
                "<system>\n<cpu>\n<pci busid=\"a\" class=\"0xZZ\"/>\n</cpu>\n</system>")
                                       << "line 3"
                                       << "hexadecimal";
        QTest::newRow("xml nan count") << QByteArray(
                "<system>\n<cpu>\n<pci busid=\"a\" class=\"0x030200\"><gpu dev=\"0\"><nvlink "
                "target=\"b\" count=\"nan\"/></gpu></pci>\n</cpu>\n</system>")
                                       << "line 3"
                                       << "count";
        QTest::newRow("graph only junk")
                << QByteArray("<graphs version=\"1\"></graphs>") << "line 1"
                << "no <graph>";
        QTest::newRow("xml wrong root") << QByteArray("<html><body/></html>") << "line 1"
                                        << "<html>";
        QTest::newRow("log nan") << QByteArray(
                logHead + "     8     2  float  sum  -1  nan  0.00  0.00  0  1.0  0.00  0.00  0\n")
                                 << "line 3"
                                 << "finite";
        QTest::newRow("log inf") << QByteArray(
                logHead + "     8     2  float  sum  -1  1.0  inf  0.00  0  1.0  0.00  0.00  0\n")
                                 << "line 3"
                                 << "algbw";
        QTest::newRow("log absurd size") << QByteArray(logHead
                                                       + "  999999999999999999     2  float  sum  "
                                                         "-1  1.0  1.0  1.0  0  1.0  1.0  1.0  0\n")
                                         << "line 3"
                                         << "size";
        QTest::newRow("log absurd time") << QByteArray(
                logHead + "     8     2  float  sum  -1  1e300  1.0  1.0  0  1.0  1.0  1.0  0\n")
                                         << "line 3"
                                         << "time";
        QTest::newRow("log no rows")
                << QByteArray(logHead + "# Out of bounds values : 0 OK\n") << "line 3"
                << "no result rows";
    }
    void badInput()
    {
        QFETCH(QByteArray, text);
        QFETCH(QString, where);
        QFETCH(QString, what);
        QStringList expected{what};
        if (!where.isEmpty())
            expected << where;
        expectError(text.toStdString(), "bad-input.txt", expected);
    }

    void deepNesting()
    {
        std::string xml;
        for (int i = 0; i < 100000; ++i)
            xml += "<pci>";
        expectError("<system>" + xml, "deep.xml", {"line 1", "deeper than 64"});
    }

    void hugeInputs()
    {
        // 20 MB: refused by size before any parsing.
        const std::string big(20u << 20, ' ');
        expectError(big + "x", "huge.txt", {"MiB"});
        // 15 MB of one line: a line cap, not a quadratic scan.
        expectError(std::string(15u << 20, 'a'), "oneline.txt", {"line 1", "longer than"});
        // Many rows: 100,001 nccl-tests rows are refused with the line.
        std::string log = "# nThread 1 nGpus 2\n";
        for (int i = 0; i <= 100000; ++i)
            log += "8 2 float sum -1 1.0 1.0 1.0 0 1.0 1.0 1.0 0\n";
        expectError(log, "long.log", {"more than 100000 rows"});
        // A 4097-column matrix header is refused.
        std::string wide = "";
        for (int i = 0; i < 4097; ++i)
            wide += "\tGPU" + std::to_string(i);
        expectError(wide + "\tCPU Affinity\n", "wide.txt", {"line 1", "4097 device columns"});
    }

    // Inputs the fuzzers found (tests/data/fuzz/import-crashers/): each imports or fails with
    // an InputError, and what imports saves as valid JSON and loads again.
    void fuzzCrashers()
    {
        const std::string dir = RAILYARD_TEST_DATA "/fuzz/import-crashers/";
        for (const char *name : {"log-cut-utf8-busid", "xml-gpu-sm-1e20.xml"}) {
            QVERIFY2(QFileInfo(QString::fromStdString(dir + name)).isFile(), name); // not skipped
            ImportedMachine m;
            try {
                m = importFile(dir + name);
            } catch (const InputError &e) {
                // Refused with a reason that names the file, not a crash or a missing file.
                const std::string what = e.what();
                QVERIFY2(what.find(name) != std::string::npos, e.what());
                QVERIFY2(what.find("No such file") == std::string::npos, e.what());
                continue;
            }
            const Layout l = layoutFromImport(m, Catalog::builtin());
            const std::string text = layoutToText(l); // threw on a cut UTF-8 sequence
            QVERIFY(parseLayout(text, name).sameContent(l));
            QVERIFY(!importSummary(m).dump().empty());
        }
    }

    void readFileErrors()
    {
        try {
            importFile(RAILYARD_TEST_DATA "/import");
            QFAIL("a directory was read");
        } catch (const InputError &e) {
            checkMessage(e, {"import", "directory"});
        }
        try {
            importFile(RAILYARD_TEST_DATA "/import/no-such-file.txt");
            QFAIL("a missing file was read");
        } catch (const InputError &e) {
            checkMessage(e, {"no-such-file.txt", "cannot open"});
        }
    }
};

QTEST_APPLESS_MAIN(TestImport)
#include "tst_import.moc"
