#include "style.h"

#include <QCoreApplication>

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

} // namespace railyard::style
