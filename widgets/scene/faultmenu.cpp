#include "faultmenu.h"

#include "commands/changefaults.h"
#include "document/document.h"

#include <QInputDialog>
#include <QMenu>
#include <QMessageBox>
#include <QUndoStack>

#include <algorithm>
#include <cmath>

namespace railyard::faultmenu {

namespace {

QString text(const std::string &s)
{
    return QString::fromStdString(s);
}

QString percentText(double fraction)
{
    return QStringLiteral("%1%").arg(100 * fraction,
                                     0,
                                     'f',
                                     fraction * 100 == std::round(fraction * 100) ? 0 : 1);
}

engine::Fault deviceFault(const std::string &name)
{
    engine::Fault f;
    f.target = engine::FaultTarget::Device;
    f.device = name;
    return f;
}

engine::Fault linkFault(int link)
{
    engine::Fault f;
    f.target = engine::FaultTarget::Link;
    f.linkId = link;
    return f;
}

// The rate a user types for Degrade... (percent of the line rate left), or none when cancelled.
std::optional<double> askRate(QWidget *parent, const QString &what)
{
    bool ok = false;
    const double pct = QInputDialog::getDouble(parent,
                                               QObject::tr("Degrade %1").arg(what),
                                               QObject::tr("Share of the line rate left (%):"),
                                               50,
                                               1,
                                               99,
                                               0,
                                               &ok);
    return ok ? std::optional(pct / 100) : std::nullopt;
}

std::optional<double> askSlowdown(QWidget *parent, const QString &what)
{
    bool ok = false;
    const double x = QInputDialog::getDouble(parent,
                                             QObject::tr("Slow Down %1").arg(what),
                                             QObject::tr("Its kernels take this many times as "
                                                         "long (1.1: 10% slower):"),
                                             1.1,
                                             1.01,
                                             10,
                                             2,
                                             &ok);
    return ok ? std::optional(x) : std::nullopt;
}

} // namespace

std::string faultName(const engine::Topology &t, int device)
{
    if (device < 0 || device >= t.deviceCount())
        return {};
    const engine::Device &d = t.devices()[static_cast<std::size_t>(device)];
    if (d.kind == engine::DeviceKind::Cpu)
        return {};
    // A single-switch fabric calls its switch "switch", which names no index.
    const std::string name = d.kind == engine::DeviceKind::Leaf ? "leaf " + std::to_string(d.index)
                                                                : t.deviceName(device);
    return t.findDevice(name) == device ? name : std::string();
}

std::vector<std::size_t> faultsOn(const engine::Topology &t, int device, int link)
{
    std::vector<std::size_t> out;
    for (const engine::ResolvedFault &f : t.faults()) {
        const bool hit = link >= 0 ? std::binary_search(f.links.begin(), f.links.end(), link)
                                   : std::find(f.devices.begin(), f.devices.end(), device)
                                             != f.devices.end();
        if (hit)
            out.push_back(f.index);
    }
    return out;
}

bool applyFaults(Document *document,
                 std::vector<engine::Fault> faults,
                 const QString &what,
                 QWidget *parent,
                 QString *refusal)
{
    const QString problem = Document::checkLayout(ChangeFaults::apply(document->layout(), faults));
    if (!problem.isEmpty()) {
        if (refusal)
            *refusal = problem;
        auto *box = new QMessageBox(QMessageBox::Warning,
                                    QObject::tr("Cannot Apply the Fault"),
                                    QObject::tr("%1: the engine cannot run the job on the cluster "
                                                "with this fault set.")
                                            .arg(what),
                                    QMessageBox::Ok,
                                    parent);
        box->setObjectName(QStringLiteral("faultRefused"));
        box->setInformativeText(problem);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
        return false;
    }
    document->undoStack()->push(new ChangeFaults(document, std::move(faults), what));
    return true;
}

void addFaultActions(QMenu *menu, Document *document, int device, int link, QWidget *parent)
{
    const engine::Topology &t = document->topology();
    std::string name;
    engine::Fault base;
    bool gpu = false;
    if (device >= 0) {
        name = faultName(t, device);
        if (name.empty())
            return;
        base = deviceFault(name);
        gpu = t.devices()[static_cast<std::size_t>(device)].kind == engine::DeviceKind::Gpu;
    } else if (link >= 0 && link < t.linkCount()) {
        name = t.linkName(link);
        base = linkFault(link);
    } else {
        return;
    }
    const QString what = text(name);
    menu->addSeparator();
    const auto push = [document, parent](engine::Fault f, const QString &edit) {
        applyFaults(document,
                    ChangeFaults::withFault(document->layout().cluster.faults, f),
                    edit,
                    parent);
    };

    QAction *fail = menu->addAction(QObject::tr("Fail %1").arg(what), menu, [=] {
        push(base, QObject::tr("Fail %1").arg(what));
    });
    fail->setObjectName(QStringLiteral("actionFail"));
    fail->setStatusTip(QObject::tr("Take %1 down: the engine routes around it and prices the "
                                   "job again")
                               .arg(what));

    if (gpu) {
        QMenu *slow = menu->addMenu(QObject::tr("Slow Down %1").arg(what));
        slow->setObjectName(QStringLiteral("menuSlowDown"));
        const auto slowTo = [=](double x) {
            engine::Fault f = base;
            f.state = engine::FaultState::Degraded;
            f.slowdown = x;
            push(f, QObject::tr("Slow down %1 to %2x").arg(what).arg(x));
        };
        for (double x : kSlowdowns) {
            QAction *a
                    = slow->addAction(QObject::tr("%1x (%2 slower)").arg(x).arg(percentText(x - 1)),
                                      menu,
                                      [=] { slowTo(x); });
            a->setObjectName(QStringLiteral("actionSlowDown%1").arg(std::lround(x * 100)));
        }
        slow->addSeparator();
        slow->addAction(QObject::tr("Custom\u2026"), menu, [=] {
            if (const auto x = askSlowdown(parent, what))
                slowTo(*x);
        });
    } else {
        QMenu *degrade = menu->addMenu(QObject::tr("Degrade %1").arg(what));
        degrade->setObjectName(QStringLiteral("menuDegrade"));
        const auto degradeTo = [=](double rate) {
            engine::Fault f = base;
            f.state = engine::FaultState::Degraded;
            f.rate = rate;
            push(f, QObject::tr("Degrade %1 to %2").arg(what, percentText(rate)));
        };
        for (double rate : kDegradeRates) {
            QAction *a = degrade->addAction(QObject::tr("%1 of its rate left").arg(percentText(rate)),
                                            menu,
                                            [=] { degradeTo(rate); });
            a->setObjectName(QStringLiteral("actionDegrade%1").arg(std::lround(rate * 100)));
        }
        degrade->addSeparator();
        degrade->addAction(QObject::tr("Custom\u2026"), menu, [=] {
            if (const auto rate = askRate(parent, what))
                degradeTo(*rate);
        });
    }

    const std::vector<engine::Fault> &current = document->layout().cluster.faults;
    // A fault that names this very element (not a rail or a switch it hangs from).
    const auto namesIt = [&](const engine::Fault &f) {
        return device >= 0
                       ? f.target == engine::FaultTarget::Device && t.findDevice(f.device) == device
                       : f.target == engine::FaultTarget::Link && f.linkId == link;
    };
    const bool down = std::any_of(current.begin(), current.end(), [&](const engine::Fault &f) {
        return namesIt(f) && f.state == engine::FaultState::Down;
    });
    fail->setEnabled(!down);
    const std::vector<std::size_t> on = faultsOn(t, device, device >= 0 ? -1 : link);
    if (!on.empty()) {
        QStringList faults;
        for (std::size_t i : on)
            faults << text(current[i].describe());
        const QString label = on.size() == 1 && namesIt(current[on.front()])
                                      ? QObject::tr("Restore %1").arg(what)
                                      : QObject::tr("Restore (%1)")
                                                .arg(faults.join(QStringLiteral("; ")));
        QAction *restore = menu->addAction(label, menu, [=] {
            applyFaults(document,
                        ChangeFaults::without(document->layout().cluster.faults, on),
                        QObject::tr("Restore %1").arg(what),
                        parent);
        });
        restore->setObjectName(QStringLiteral("actionRestore"));
    }
}

} // namespace railyard::faultmenu
