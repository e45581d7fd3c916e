#include "style.h"

#include <QCoreApplication>

#include <algorithm>
#include <array>
#include <cmath>

namespace railyard::style {

using engine::DeviceKind;
using engine::LinkKind;

QColor linkColor(LinkKind kind)
{
    switch (kind) {
    case LinkKind::NvLink: return QColor(0x5a, 0x9e, 0x00);   // NVIDIA green, darkened for print
    case LinkKind::Pcie: return QColor(0x8a, 0x94, 0xa6);     // slate
    case LinkKind::Ib: return QColor(0x1f, 0x6f, 0xd1);       // blue
    case LinkKind::Ethernet: return QColor(0xd9, 0x77, 0x06); // amber
    case LinkKind::C2C: return QColor(0x8e, 0x44, 0xad);      // purple
    }
    return Qt::gray;
}

Qt::PenStyle linkPenStyle(LinkKind kind)
{
    // Told apart by more than colour: PCIe dashed, C2C dotted (colour-blind readers, greyscale
    // print).
    switch (kind) {
    case LinkKind::Pcie: return Qt::DashLine;
    case LinkKind::C2C: return Qt::DotLine;
    default: return Qt::SolidLine;
    }
}

QString linkKindName(LinkKind kind)
{
    switch (kind) {
    case LinkKind::NvLink: return QCoreApplication::translate("style", "NVLink");
    case LinkKind::Pcie: return QCoreApplication::translate("style", "PCIe");
    case LinkKind::Ib: return QCoreApplication::translate("style", "InfiniBand");
    case LinkKind::Ethernet: return QCoreApplication::translate("style", "Ethernet (RoCE)");
    case LinkKind::C2C: return QCoreApplication::translate("style", "NVLink-C2C");
    }
    return {};
}

QColor deviceFill(DeviceKind kind)
{
    switch (kind) {
    case DeviceKind::Gpu: return QColor(0x2e, 0x7d, 0x32);
    case DeviceKind::NvSwitch: return QColor(0x1b, 0x5e, 0x20);
    case DeviceKind::PcieSwitch: return QColor(0xd5, 0xda, 0xe1);
    case DeviceKind::Cpu: return QColor(0xe8, 0xea, 0xee);
    case DeviceKind::Nic: return QColor(0xd6, 0xe6, 0xfa);
    case DeviceKind::Leaf: return QColor(0x1f, 0x4e, 0x8c);
    case DeviceKind::Spine: return QColor(0x15, 0x34, 0x5e);
    case DeviceKind::Core: return QColor(0x0d, 0x22, 0x3d);
    }
    return Qt::gray;
}

QColor deviceText(DeviceKind kind)
{
    switch (kind) {
    case DeviceKind::PcieSwitch:
    case DeviceKind::Cpu:
    case DeviceKind::Nic: return kTextDark;
    default: return Qt::white;
    }
}

QString deviceKindName(DeviceKind kind)
{
    switch (kind) {
    case DeviceKind::Gpu: return QCoreApplication::translate("style", "GPU");
    case DeviceKind::NvSwitch: return QCoreApplication::translate("style", "NVSwitch");
    case DeviceKind::PcieSwitch: return QCoreApplication::translate("style", "PCIe switch");
    case DeviceKind::Cpu: return QCoreApplication::translate("style", "CPU");
    case DeviceKind::Nic: return QCoreApplication::translate("style", "NIC");
    case DeviceKind::Leaf: return QCoreApplication::translate("style", "Leaf switch");
    case DeviceKind::Spine: return QCoreApplication::translate("style", "Spine switch");
    case DeviceKind::Core: return QCoreApplication::translate("style", "Core switch");
    }
    return {};
}

namespace {

QColor mix(const QColor &a, const QColor &b, double t)
{
    t = std::clamp(t, 0.0, 1.0);
    return QColor::fromRgbF(static_cast<float>(a.redF() + (b.redF() - a.redF()) * t),
                            static_cast<float>(a.greenF() + (b.greenF() - a.greenF()) * t),
                            static_cast<float>(a.blueF() + (b.blueF() - a.blueF()) * t));
}

// Stops along a scale, evenly spaced; t in [0, 1].
template<std::size_t N>
QColor along(const std::array<QColor, N> &stops, double t)
{
    t = std::clamp(t, 0.0, 1.0) * (N - 1);
    const std::size_t i = std::min(static_cast<std::size_t>(t), N - 2);
    return mix(stops[i], stops[i + 1], t - static_cast<double>(i));
}

} // namespace

QColor groupColor(int index, int count, bool ordered)
{
    if (index < 0)
        return deviceFill(DeviceKind::Gpu);
    if (ordered) {
        // Viridis-like: dark blue-violet to yellow, readable in greyscale too.
        static const std::array<QColor, 5> stops = {QColor(0x44, 0x1a, 0x7a),
                                                    QColor(0x31, 0x5f, 0x9e),
                                                    QColor(0x1f, 0x9a, 0x8a),
                                                    QColor(0x6c, 0xc0, 0x4a),
                                                    QColor(0xe8, 0xd2, 0x1d)};
        return along(stops, count > 1 ? double(index) / (count - 1) : 0.0);
    }
    // Distinct hues, strong enough to carry white text and to stand apart on the grey canvas.
    static const std::array<QColor, kGroupHues> hues = {QColor(0x1f, 0x77, 0xb4),
                                                        QColor(0xe6, 0x7e, 0x22),
                                                        QColor(0x2c, 0xa0, 0x2c),
                                                        QColor(0x94, 0x67, 0xbd),
                                                        QColor(0xd6, 0x27, 0x28),
                                                        QColor(0x17, 0xbe, 0xcf),
                                                        QColor(0x8c, 0x56, 0x4b),
                                                        QColor(0xe3, 0x77, 0xc2),
                                                        QColor(0x7f, 0x7f, 0x7f),
                                                        QColor(0xbc, 0xbd, 0x22),
                                                        QColor(0x39, 0x3b, 0x79),
                                                        QColor(0xad, 0x49, 0x4a)};
    const QColor base = hues[static_cast<std::size_t>(index % kGroupHues)];
    switch ((index / kGroupHues) % 3) {
    case 1: return base.lighter(135);
    case 2: return base.darker(135);
    default: return base;
    }
}

QColor textOn(const QColor &fill)
{
    const double luma = 0.299 * fill.redF() + 0.587 * fill.greenF() + 0.114 * fill.blueF();
    return luma > 0.6 ? kTextDark : QColor(Qt::white);
}

QColor loadColor(double u)
{
    if (!(u > 0))
        return kIdleLink;
    // Viridis (perceptually uniform, readable without red-green vision), on a square-root
    // scale: 25% sits mid-way, so a link busy a tenth of the step already stands out from one
    // busy a hundredth.
    static const std::array<QColor, 9> stops = {QColor(0x44, 0x01, 0x54),
                                                QColor(0x47, 0x2c, 0x7a),
                                                QColor(0x3b, 0x51, 0x8b),
                                                QColor(0x2c, 0x71, 0x8e),
                                                QColor(0x21, 0x90, 0x8d),
                                                QColor(0x27, 0xad, 0x81),
                                                QColor(0x5c, 0xc8, 0x63),
                                                QColor(0xaa, 0xdc, 0x32),
                                                QColor(0xfd, 0xe7, 0x25)};
    return along(stops, std::sqrt(std::min(u, 1.0)));
}

} // namespace railyard::style
