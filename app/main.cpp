#include "base/inputerror.h"
#include "base/safetext.h"
#include "cli.h"
#include "export/diagramexport.h"
#include "export/reviewreport.h"
#include "layout/catalog.h"
#include "layout/layout.h"
#include "mainwindow.h"

#include <railyard/version.h>

#include <QApplication>
#include <QGuiApplication>
#include <QMessageBox>
#include <QScreen>
#include <QStringList>
#include <QTimer>

#include <cstdlib>
#include <iostream>
#include <string>

namespace {

// Whether a window can be shown: a platform was named, or an X11 or Wayland display is set.
bool haveDisplay(int argc, char **argv)
{
#ifndef __linux__
    return true; // a desktop session always has one
#endif
    for (int i = 1; i < argc; ++i)
        if (std::string(argv[i]) == "-platform")
            return true;
    for (const char *var : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"})
        if (const char *v = std::getenv(var); v && *v)
            return true;
    return false;
}

// Qt's own messages while a diagram is drawn ("QImage: out of memory", "QPainter::begin: ..."):
// kept rather than printed, so the command's message is ours and comes first.
QStringList g_qtMessages;

void keepQtMessage(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    // Notices about the environment (no XDG_RUNTIME_DIR, the platform plugin) say nothing of
    // why a file could not be drawn or written.
    if (message.startsWith(QLatin1String("QStandardPaths:"))
        || QLatin1String(context.category ? context.category : "")
                   .startsWith(QLatin1String("qt.qpa")))
        return;
    if (type != QtDebugMsg && type != QtInfoMsg && g_qtMessages.size() < 5)
        g_qtMessages << message;
}

railyard::DiagramRegion regionOf(const railyard::cli::DiagramRegion &r)
{
    using From = railyard::cli::DiagramRegion::Kind;
    using To = railyard::DiagramRegion::Kind;
    railyard::DiagramRegion region;
    switch (r.kind) {
    case From::Whole: region.kind = To::Whole; break;
    case From::Gpus: region.kind = To::Gpus; break;
    case From::Nodes: region.kind = To::Nodes; break;
    case From::Racks: region.kind = To::Racks; break;
    case From::ScalableUnits: region.kind = To::ScalableUnits; break;
    case From::Area: region.kind = To::Area; break;
    }
    region.ranges = r.ranges;
    region.area = QRectF(r.x, r.y, r.width, r.height);
    region.text = QString::fromStdString(r.text);
    return region;
}

// `railyard export FILE -o OUT.svg|png|pdf` (or a review report): drawing needs a QApplication but no window;
// without a display it draws on Qt's offscreen platform. On failure, the message names the
// file; what Qt said, if anything, follows it.
void writeDiagram(int argc, char **argv, const railyard::cli::DiagramRequest &request)
{
    if (!haveDisplay(argc, argv))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    g_qtMessages.clear();
    const QtMessageHandler previous = qInstallMessageHandler(keepQtMessage);
    QString error;
    bool ok = false;
    {
        int qtArgc = 1;                 // Qt sees no arguments: they were the subcommand's
        QApplication app(qtArgc, argv); // the scene (Qt Widgets) needs a QApplication
        const railyard::DiagramRegion region = regionOf(request.region);
        if (request.report) {
            ok = railyard::exportLayoutReviewReport(QString::fromStdString(request.file),
                                                    QString::fromStdString(request.output),
                                                    QString::fromStdString(request.compare),
                                                    region,
                                                    &error);
        } else {
            railyard::DiagramExportOptions options;
            options.scale = request.scale;
            options.width = request.width;
            // Without --scale or --width a PNG fits 8,192 pixels: a 16,384-GPU page is 42,000
            // wide.
            options.maxSide = request.scaleGiven ? 0 : railyard::kDefaultMaxPngSide;
            options.region = region;
            options.momentOfRequest = request.atRequest;
            ok = railyard::exportLayoutDiagram(QString::fromStdString(request.file),
                                               QString::fromStdString(request.output),
                                               options,
                                               request.at,
                                               &error);
        }
    }
    qInstallMessageHandler(previous);
    if (ok)
        return;
    if (!g_qtMessages.isEmpty())
        error += QStringLiteral(" (Qt: %1)").arg(g_qtMessages.join(QStringLiteral("; ")));
    throw railyard::engine::InputError(error.toStdString());
}

} // namespace

int main(int argc, char **argv)
{
    std::string file;
    {
        const std::vector<std::string> args(argv, argv + argc);
        const auto outcome = railyard::cli::run(args,
                                                std::cout,
                                                std::cerr,
                                                [argc,
                                                 argv](const railyard::cli::DiagramRequest &r) {
                                                    writeDiagram(argc, argv, r);
                                                });
        if (outcome.handled)
            return outcome.exitCode;
        file = outcome.guiFile;
    }

    // The GUI. A bad FILE opens the window anyway, with the default document and a message
    // naming the file and the place (double-clicking a broken file must say why). Only without
    // a display, where no window can say it, does it fail fast and headless.
    // A bad user catalog: the window opens on the built-in catalog and says why (below).
    const std::string &badCatalog = railyard::engine::Catalog::userCatalogError();
    if (!badCatalog.empty())
        std::cerr << "railyard: " << badCatalog << " (using the built-in catalog)\n";
    if (!file.empty() && !haveDisplay(argc, argv)) {
        try {
            railyard::engine::readLayoutFile(file);
        } catch (const std::exception &e) {
            std::cerr << "railyard: " << railyard::engine::terminalLines(e.what()) << "\n";
            return 1;
        }
    }

    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("Railyard"));
    QApplication::setOrganizationName(QStringLiteral("Railyard"));
    QApplication::setApplicationVersion(QStringLiteral(RAILYARD_VERSION));
    QGuiApplication::setDesktopFileName(QStringLiteral("io.github.railyard.Railyard"));

    railyard::MainWindow window; // shows the built-in HGX server until FILE opens
    if (const QScreen *screen = QGuiApplication::primaryScreen()) {
        // Fill a small screen; keep a comfortable size on a large one.
        const QSize avail = screen->availableGeometry().size();
        window.resize(std::min(avail.width(), 2400), std::min(avail.height(), 1500));
    }
    window.restoreSession();
    window.show();
    if (!badCatalog.empty()) {
        // Window-modal and not waited on: the window works behind it.
        auto *box = new QMessageBox(QMessageBox::Warning,
                                    QStringLiteral("Railyard"),
                                    QStringLiteral("Your catalog file was not used: Railyard uses "
                                                   "its built-in catalog until it is fixed."),
                                    QMessageBox::Ok,
                                    &window);
        box->setInformativeText(QString::fromStdString(badCatalog));
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    }
    if (!file.empty() && !window.openFile(QString::fromStdString(file)))
        std::cerr << "railyard: "
                  << railyard::engine::terminalLines(window.lastError().toStdString()) << "\n";
    // After a crash, the last session's unsaved work waits in the recovery folder.
    QTimer::singleShot(0, &window, [&window] { window.offerRecovery(); });
    return app.exec();
}
