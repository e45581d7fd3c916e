#include "devicedescription.h"

#include "scene/style.h"

#include <QCoreApplication>
#include <QLocale>

#include <algorithm>
#include <map>

namespace railyard {

using engine::DeviceKind;

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("DeviceDescription", text);
}

QString number(double v, int decimals = 0)
{
    return QLocale().toString(v, 'f', decimals);
}

QString gbps(double gbPerS)
{
    return gbPerS >= 100 || gbPerS == static_cast<int>(gbPerS)
                   ? tr("%1 GB/s").arg(number(gbPerS))
                   : tr("%1 GB/s").arg(number(gbPerS, 1));
}

} // namespace

QString deviceTitle(const engine::Topology &t, int id)
{
    const engine::Device &d = t.devices()[static_cast<std::size_t>(id)];
    const QString name = QString::fromStdString(t.deviceName(id));
    switch (d.kind) {
    case DeviceKind::Gpu:
        return name + QStringLiteral(" \u2014 ") + QString::fromStdString(t.gpuSpec().name);
    case DeviceKind::Nic:
        return name + QStringLiteral(" \u2014 ") + QString::fromStdString(t.nicModel().name);
    case DeviceKind::Leaf:
    case DeviceKind::Spine:
    case DeviceKind::Core:
        return name + QStringLiteral(" \u2014 ") + QString::fromStdString(t.switchModel().name);
    default: return name;
    }
}

QStringList deviceSpecs(const engine::Topology &t, int id)
{
    const engine::Device &d = t.devices()[static_cast<std::size_t>(id)];
    const engine::GpuSpec &g = t.gpuSpec();
    const engine::ClusterShape &s = t.shape();
    QStringList out;
    const auto place = [&] {
        QStringList where;
        if (d.node >= 0)
            where << (s.nodesPerDomain > 1 ? tr("tray %1") : tr("node %1")).arg(d.node);
        if (d.rack >= 0)
            where << tr("rack %1").arg(d.rack);
        if (d.domain >= 0)
            where << tr("NVLink domain %1").arg(d.domain);
        return where.join(QStringLiteral(", "));
    };
    switch (d.kind) {
    case DeviceKind::Gpu:
        out << tr("BF16 %1 TFLOPS dense%2")
                        .arg(number(g.bf16Tflops))
                        .arg(g.fp8Tflops > 0 ? tr(", FP8 %1").arg(number(g.fp8Tflops)) : QString());
        out << tr("HBM %1 GB at %2 TB/s").arg(number(g.hbmGB)).arg(number(g.hbmTBPerS, 1));
        if (g.nvlink.generation > 0)
            out << tr("NVLink %1: %2 links, %3 per direction")
                            .arg(g.nvlink.generation)
                            .arg(g.nvlink.links)
                            .arg(gbps(g.nvlink.gbPerS));
        out << tr("GPU %1 of %2, %3")
                        .arg(d.local)
                        .arg(s.gpusPerNode > 0 ? s.gpusPerNode : 0)
                        .arg(place());
        break;
    case DeviceKind::NvSwitch:
        out << tr("NVSwitch chip %1 of %2 in its NVLink domain")
                        .arg(d.local)
                        .arg(g.nvswitchesPerDomain);
        out << tr("NVLink SHARP (NVLS): %1").arg(g.nvls ? tr("yes") : tr("no"));
        out << place();
        break;
    case DeviceKind::PcieSwitch:
        out << tr("PCIe Gen%1 switch: two GPUs and their NICs").arg(g.pcieGen);
        out << place();
        break;
    case DeviceKind::Cpu:
        out << (s.nodesPerDomain > 1 ? tr("Grace CPU, NVLink-C2C to its GPUs") : tr("Host CPU"));
        out << place();
        break;
    case DeviceKind::Nic:
        out << tr("%1 Gbit/s (%2), %3")
                        .arg(number(t.nicModel().gbitPerS))
                        .arg(gbps(t.nicModel().gbPerS()))
                        .arg(t.nicModel().fabric == "ethernet" ? tr("Ethernet") : tr("InfiniBand"));
        if (d.rail >= 0)
            out << tr("Rail %1").arg(d.rail);
        out << place();
        break;
    case DeviceKind::Leaf:
    case DeviceKind::Spine:
    case DeviceKind::Core: {
        const engine::SwitchModel &sw = t.switchModel();
        out << tr("%1 ports of %2 Gbit/s, SHARP %3")
                        .arg(sw.ports)
                        .arg(number(sw.portGbitPerS))
                        .arg(sw.sharp ? (s.sharp ? tr("on") : tr("capable, off")) : tr("no"));
        if (d.kind == DeviceKind::Leaf && d.rail >= 0
            && s.fabric == engine::FabricKind::RailOptimized)
            out << tr("Rail %1 of scalable unit %2").arg(d.rail).arg(d.group);
        if (d.kind != DeviceKind::Core && s.oversubscription > 1)
            out << tr("Oversubscription %1:1").arg(number(s.oversubscription, 1));
        break;
    }
    }
    return out;
}

std::vector<LinkGroup> deviceLinkGroups(const engine::Topology &t, int id)
{
    std::map<std::pair<int, int>, LinkGroup> groups;
    for (int link : t.linksOf(id)) {
        const engine::Link &l = t.links()[static_cast<std::size_t>(link)];
        const DeviceKind peer = t.devices()[static_cast<std::size_t>(t.otherEnd(link, id))].kind;
        LinkGroup &g = groups[{static_cast<int>(l.kind), static_cast<int>(peer)}];
        g.kind = l.kind;
        g.peer = peer;
        ++g.count;
        g.gbPerS += l.gbPerS;
        g.effectiveGbPerS += l.effectiveGbPerS();
    }
    std::vector<LinkGroup> out;
    for (const auto &[key, g] : groups)
        out.push_back(g);
    return out;
}

QString linkGroupText(const LinkGroup &g)
{
    const QString count = g.count > 1 ? QStringLiteral(" \u00d7 %1").arg(g.count) : QString();
    return tr("%1 to %2%3: %4 per direction (%5 achieved)")
            .arg(style::linkKindName(g.kind),
                 style::deviceKindName(g.peer),
                 count,
                 gbps(g.gbPerS),
                 gbps(g.effectiveGbPerS));
}

QString deviceFaultText(const engine::Topology &t, int id)
{
    if (id < 0 || id >= t.deviceCount())
        return {};
    const engine::Device &d = t.devices()[static_cast<std::size_t>(id)];
    if (d.kind == DeviceKind::Gpu) {
        if (t.gpuDown(d.index))
            return tr("Down: out of the job");
        if (const double slow = t.gpuSlowdown(d.index); slow > 1)
            return tr("Runs %1% slow (a straggler: its kernels take %2\u00d7 as long)")
                    .arg(number(100 * (slow - 1), slow < 1.1 ? 1 : 0))
                    .arg(number(slow, 2));
    }
    if (t.deviceDown(id))
        return tr("Down");
    // Not down itself: its links that are (a fault on the device degrades them all alike).
    int down = 0, degraded = 0, count = 0;
    double least = 1;
    for (int link : t.linksOf(id)) {
        const engine::Link &l = t.links()[static_cast<std::size_t>(link)];
        ++count;
        if (l.down())
            ++down;
        else if (l.health < 1) {
            ++degraded;
            least = std::min(least, l.health);
        }
    }
    if (down == 0 && degraded == 0)
        return {};
    if (down == 0 && degraded == count)
        return tr("Degraded to %1% of its rate").arg(number(100 * least, least < 0.1 ? 1 : 0));
    QStringList parts;
    if (down > 0)
        parts << (down == 1 ? tr("1 of its links down") : tr("%1 of its links down").arg(down));
    if (degraded > 0)
        parts << tr("%1 degraded (to %2% of their rate or more)")
                         .arg(degraded)
                         .arg(number(100 * least, least < 0.1 ? 1 : 0));
    return parts.join(QStringLiteral(", "));
}

QString deviceTooltip(const engine::Topology &t, int id)
{
    QString html = QStringLiteral("<b>%1</b>").arg(deviceTitle(t, id).toHtmlEscaped());
    if (const QString fault = deviceFaultText(t, id); !fault.isEmpty())
        html += QStringLiteral("<br><b style=\"color:%1\">%2</b>")
                        .arg(style::kFaultDown.name(), fault.toHtmlEscaped());
    for (const QString &line : deviceSpecs(t, id))
        html += QStringLiteral("<br>") + line.toHtmlEscaped();
    const auto groups = deviceLinkGroups(t, id);
    if (!groups.empty()) {
        html += QStringLiteral("<hr>");
        for (const LinkGroup &g : groups)
            html += QStringLiteral("<span style=\"color:%1\">\u25a0</span> %2<br>")
                            .arg(style::linkColor(g.kind).name(), linkGroupText(g).toHtmlEscaped());
    }
    return html;
}

} // namespace railyard
