#include "app/gui/ExecutorProbe.h"

#include <QAction>
#include <QDir>
#include <QFileInfo>
#include <QMenu>
#include <QTimer>

namespace mario::gui {
namespace {

// LibTorch's start and a CUDA context on a GPU node take a few seconds; a question still
// unanswered after this is hung, and "unknown" is the honest answer.
constexpr int kTimeoutMs = 30000;

QString firstLine(const QByteArray& text) {
    for (const QByteArray& line : text.split('\n'))
        if (!line.trimmed().isEmpty()) return QString::fromUtf8(line.trimmed());
    return {};
}

}  // namespace

ExecutorProbe::ExecutorProbe(QObject* parent) : QObject(parent), timeout_(new QTimer(this)) {
    timeout_->setSingleShot(true);
    timeout_->setInterval(kTimeoutMs);
    connect(timeout_, &QTimer::timeout, this, [this] {
        if (!process_) return;
        process_->disconnect(this);
        process_->kill();
        error_ = tr("%1 did not answer within %2 s").arg(QFileInfo(executable_).fileName()).arg(kTimeoutMs / 1000);
        finish(State::Failed);
    });
}

ExecutorProbe::~ExecutorProbe() {
    if (process_ && process_->state() != QProcess::NotRunning) {
        process_->disconnect(this);
        process_->kill();
        process_->waitForFinished(3000);
    }
}

QString ExecutorProbe::findExecutable(const QString& applicationDir) {
    const QDir bin(applicationDir);
    for (const QString& candidate : {bin.filePath("../executor/mario-executor"), bin.filePath("mario-executor")})
        if (QFileInfo(candidate).isExecutable()) return QFileInfo(candidate).absoluteFilePath();
    return {};
}

void ExecutorProbe::ask(const QString& executable) {
    if (process_) {
        process_->disconnect(this);
        process_->kill();
        process_->deleteLater();
        process_ = nullptr;
    }
    executable_ = executable;
    capabilities_.reset();
    error_.clear();
    state_ = State::Asking;
    if (executable.isEmpty() || !QFileInfo(executable).isExecutable()) {
        error_ = tr("mario-executor was not found next to the workbench");
        // Queued, so a caller connecting after ask() still hears the answer.
        QTimer::singleShot(0, this, [this] { finish(State::Failed); });
        return;
    }
    process_ = new QProcess(this);
    connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e != QProcess::FailedToStart) return;  // crashes arrive through finished
        error_ = tr("could not start %1: %2").arg(executable_, process_->errorString());
        finish(State::Failed);
    });
    connect(process_, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
        const QByteArray out = process_->readAllStandardOutput();
        const QByteArray err = process_->readAllStandardError();
        if (status == QProcess::CrashExit || code != 0) {
            // An executor older than the question answers with its usage line.
            error_ = tr("%1 could not say what it can run: %2")
                         .arg(QFileInfo(executable_).fileName(),
                              firstLine(err).isEmpty() ? tr("exit code %1").arg(code) : firstLine(err));
            return finish(State::Failed);
        }
        // The answer is the last line: LibTorch may print warnings before it.
        QString last;
        for (const QByteArray& line : out.split('\n'))
            if (!line.trimmed().isEmpty()) last = QString::fromUtf8(line.trimmed());
        auto parsed = parseExecutorCapabilities(last.toStdString());
        if (!parsed) {
            error_ = QString::fromStdString(parsed.error().message);
            return finish(State::Failed);
        }
        capabilities_ = *parsed;
        finish(State::Answered);
    });
    timeout_->start();
    process_->start(executable, {QStringLiteral("capabilities")}, QIODevice::ReadOnly);
}

void ExecutorProbe::finish(State state) {
    if (state_ != State::Asking) return;  // answered once
    timeout_->stop();
    state_ = state;
    emit answered();
}

void describeGpuAction(QAction* runOnGpu, const ExecutorProbe& probe) {
    QString tip;
    bool enabled = false;
    const auto& caps = probe.capabilities();
    switch (probe.state()) {
        case ExecutorProbe::State::NotAsked:
        case ExecutorProbe::State::Asking: tip = QObject::tr("Asking mario-executor whether it can use a GPU…"); break;
        case ExecutorProbe::State::Failed: tip = QObject::tr("Unavailable: %1").arg(probe.error()); break;
        case ExecutorProbe::State::Answered:
            enabled = caps && caps->cuda;
            if (!enabled) {
                tip = QObject::tr("Unavailable: %1")
                          .arg(QString::fromStdString(caps && !caps->cuda_reason.empty()
                                                          ? caps->cuda_reason
                                                          : "this mario-executor has no CUDA"));
            } else if (caps->partition_sms) {
                tip = QObject::tr("Runs every pipeline device on its own share of GPU 0's SMs (%1 visible)")
                          .arg(caps->devices == 1 ? QObject::tr("1 GPU") : QObject::tr("%1 GPUs").arg(caps->devices));
            } else {
                tip = QObject::tr("Runs every pipeline device on GPU 0, sharing its SMs, so slower than separate GPUs: "
                                  "%1")
                          .arg(QString::fromStdString(caps->partition_reason));
            }
            break;
    }
    runOnGpu->setEnabled(enabled);
    runOnGpu->setToolTip(tip);
    runOnGpu->setStatusTip(tip);
    // A menu shows its actions' tooltips only when asked to; a disabled entry must say why.
    for (QObject* holder : runOnGpu->associatedObjects())
        if (auto* menu = qobject_cast<QMenu*>(holder)) menu->setToolTipsVisible(true);
}

QStringList gpuRunArguments(const ExecutorProbe& probe) {
    QStringList args{QStringLiteral("--backend"), QStringLiteral("cuda"), QStringLiteral("--partition-sms")};
    const auto& caps = probe.capabilities();
    if (caps && caps->cuda && !caps->partition_sms) args << QStringLiteral("--shared-streams");
    return args;
}

}  // namespace mario::gui
