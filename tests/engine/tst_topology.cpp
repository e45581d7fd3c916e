#include "layout/layout.h"
#include "topology/topology.h"

#include "comparenear.h"
#include <QTest>

using namespace railyard::engine;

class TestTopology : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void hgxServer()
    {
        Layout l; // one H100 server
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        QCOMPARE(t.gpuCount(), 8);
        QCOMPARE(t.countOf(DeviceKind::NvSwitch), 4);
        QCOMPARE(t.countOf(DeviceKind::Nic), 8);
        QCOMPARE(t.countOf(DeviceKind::PcieSwitch), 4);
        QCOMPARE(t.countOf(DeviceKind::Leaf), 0);
        // 18 NVLinks per GPU spread 5/4/4/5 over the four switches: 450 GB/s in all.
        double nv = 0;
        for (int link : t.gpuNvlinks(0))
            nv += t.links()[static_cast<std::size_t>(link)].gbPerS;
        QCOMPARE(nv, 450.0);
        QCOMPARE(t.links()[static_cast<std::size_t>(t.gpuNvlinks(0)[0])].lanes, 5.0);
        QCOMPARE(t.deviceName(t.gpuDevice(3)), std::string("GPU 3"));
        QCOMPARE(t.findDevice("gpu 5"), t.gpuDevice(5));
        // Every name the topology gives can be searched for.
        for (int id = 0; id < t.deviceCount(); ++id)
            QCOMPARE(t.findDevice(t.deviceName(id)), id);
        QCOMPARE(t.deviceName(t.findDevice("pcie sw 0.2")), std::string("PCIe switch 0.2"));
        QCOMPARE(t.findDevice("nvswitch 9.9"), -1);
    }

    void railOptimizedFabric()
    {
        Layout l;
        l.cluster.nodes = 16;
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        const ClusterShape &s = t.shape();
        QCOMPARE(t.gpuCount(), 128);
        QCOMPARE(s.rails, 8);
        QCOMPARE(s.leaves, 8); // one scalable unit: one leaf per rail
        QVERIFY(s.spines >= 1);
        // GPU k of every server reaches the leaf of rail k.
        for (int node = 0; node < 16; ++node) {
            const int gpu = node * 8 + 3;
            const int nic = t.gpuNics(gpu)[0] - t.nicDevice(0);
            QCOMPARE(t.leafOfNic(nic), 3);
        }
        // Non-blocking: each leaf's uplinks carry as much as its downlinks.
        double up = 0;
        for (int link : t.leafUplinks(0))
            up += t.links()[static_cast<std::size_t>(link)].gbPerS;
        QCOMPARE(up, 16 * 50.0);
        QCOMPARE(t.findDevice("leaf 3"), t.leafDevice(3));
        QCOMPARE(t.findDevice("node 2"), t.gpuDevice(16));
    }

    void nvl72Rack()
    {
        Layout l;
        l.cluster.gpu = "GB200";
        l.cluster.nodes = 18;
        l.cluster.gpusPerNode = 4;
        l.cluster.nvlinkDomain = 72;
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        QCOMPARE(t.gpuCount(), 72);
        QCOMPARE(t.shape().domainCount(), 1);
        QCOMPARE(t.countOf(DeviceKind::NvSwitch), 18);
        QCOMPARE(static_cast<int>(t.gpuNvlinks(71).size()), 18);
        QCOMPARE(t.shape().racks, 1);
        QCOMPARE(t.deviceName(t.findDevice("NVSwitch r0.17")), std::string("NVSwitch r0.17"));
    }

    void oversubscriptionHalvesUplinks()
    {
        Layout l;
        l.cluster.nodes = 64;
        l.cluster.fabric.oversubscription = 2.0;
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        const ClusterShape &s = t.shape();
        double up = 0;
        for (int link : t.leafUplinks(0))
            up += t.links()[static_cast<std::size_t>(link)].gbPerS;
        const double down = s.nodesPerLeafGroup * 50.0;
        RAILYARD_COMPARE_ABS(up, down / 2.0, 50.0); // rounded to whole ports
    }
};

QTEST_APPLESS_MAIN(TestTopology)
#include "tst_topology.moc"
