#include "cli.h"
#include "export/diagramexport.h"
#include "inputerror.h"
#include "layout.h"
#include "mainwindow.h"

#include <railyard/version.h>

#include <QApplication>
#include <QGuiApplication>
#include <QScreen>
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

// `railyard export FILE -o OUT.svg|png|pdf`: drawing needs a QApplication but no window;
// without a display it draws on Qt's offscreen platform.
void writeDiagram(int argc, char **argv, const railyard::cli::DiagramRequest &request)
{
    if (!haveDisplay(argc, argv))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    int qtArgc = 1;                 // Qt sees no arguments: they were the subcommand's
    QApplication app(qtArgc, argv); // the scene (Qt Widgets) needs a QApplication
    railyard::DiagramExportOptions options;
    options.scale = request.scale;
    options.width = request.width;
    // Without --scale or --width a PNG fits 8,192 pixels: a 16,384-GPU page is 42,000 wide.
    options.maxSide = request.scaleGiven ? 0 : railyard::kDefaultMaxPngSide;
    QString error;
    if (!railyard::exportLayoutDiagram(QString::fromStdString(request.file),
                                       QString::fromStdString(request.output),
                                       options,
                                       request.at,
                                       &error))
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
    if (!file.empty() && !haveDisplay(argc, argv)) {
        try {
            railyard::engine::readLayoutFile(file);
        } catch (const std::exception &e) {
            std::cerr << "railyard: " << e.what() << "\n";
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
    if (!file.empty() && !window.openFile(QString::fromStdString(file)))
        std::cerr << "railyard: " << window.lastError().toStdString() << "\n";
    // After a crash, the last session's unsaved work waits in the recovery folder.
    QTimer::singleShot(0, &window, [&window] { window.offerRecovery(); });
    return app.exec();
}
