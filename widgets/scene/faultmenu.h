#pragma once

// The canvas's fault edits: Fail, Degrade, Slow Down and Restore for the device or the link
// under a right-click (ClusterView::contextMenuEvent), and the one place that checks and pushes
// a new fault set, shared with the fault dock. Each edit is one undo step (ChangeFaults); a set
// the engine cannot route (every uplink of a leaf down, say) is refused with its message and
// nothing is pushed.

#include "layout/faults.h"
#include "topology/topology.h"

#include <QString>

#include <cstddef>
#include <string>
#include <vector>

class QMenu;
class QWidget;

namespace railyard {

class Document;

namespace faultmenu {

// What a fault calls `device` ("leaf 3", "NIC 17.3", "GPU 12"): a name the topology finds again,
// or empty when the device cannot fail on its own (a CPU takes its server with it).
std::string faultName(const engine::Topology &topology, int device);

// The faults (indices into cluster.faults) that take down or degrade `device` (one that names
// it, or a rail through it) or, with `link` >= 0, that link.
std::vector<std::size_t> faultsOn(const engine::Topology &topology, int device, int link);

// Checks the layout with `faults` (Document::checkLayout) and pushes it as one undo step named
// `text`. When the engine refuses it, shows why in a message box that does not block (object
// name "faultRefused"), pushes nothing and returns false; `refusal` (if given) gets the text.
bool applyFaults(Document *document,
                 std::vector<engine::Fault> faults,
                 const QString &text,
                 QWidget *parent,
                 QString *refusal = nullptr);

// The degraded rates the Degrade submenu offers (fractions of the line rate left) and the
// slowdowns of Slow Down; each submenu ends with "Custom...".
inline constexpr double kDegradeRates[] = {0.75, 0.5, 0.25};
inline constexpr double kSlowdowns[] = {1.05, 1.1, 1.25, 1.5};

// Adds the fault actions for `device` (or, when it is -1, `link`) to `menu`: "Fail leaf 3",
// "Degrade leaf 3" (a submenu), "Slow Down GPU 12" (a submenu, GPUs only), "Restore leaf 3"
// (when a fault takes it). Nothing when neither names an element that can fail. The actions'
// object names: "actionFail", "actionDegrade<pct>", "actionSlowDown<x100>", "actionRestore".
void addFaultActions(QMenu *menu, Document *document, int device, int link, QWidget *parent);

} // namespace faultmenu
} // namespace railyard
