#include "app/gui/LiveRun.h"

#include <QJsonDocument>
#include <QTimer>
#include <string_view>
#include <variant>

#include "core/io/LiveEvents.h"
#include "core/io/ProfileJson.h"

namespace mario::gui {

namespace {
QString firstLine(const QByteArray& text) {
    for (const QByteArray& line : text.split('\n')) {
        const QString trimmed = QString::fromUtf8(line).trimmed();
        if (!trimmed.isEmpty()) return trimmed;
    }
    return {};
}
}  // namespace

LiveRun::LiveRun(QObject* parent) : QObject(parent), killTimer_(new QTimer(this)) {
    killTimer_->setSingleShot(true);
    killTimer_->setInterval(2000);
    connect(killTimer_, &QTimer::timeout, this, [this] {
        if (isRunning()) process_->kill();
    });
}

LiveRun::~LiveRun() {
    if (isRunning()) {
        process_->disconnect(this);
        process_->kill();
        process_->waitForFinished(3000);
    }
}

bool LiveRun::isRunning() const { return process_ && process_->state() != QProcess::NotRunning; }

bool LiveRun::start(const QString& planPath, const QString& executablePath, const QString& modelSpec,
                    const QStringList& extraArgs) {
    if (isRunning()) return false;
    if (process_) process_->deleteLater();
    process_ = new QProcess(this);
    buffer_.clear();
    stderr_.clear();
    lastText_.clear();
    summary_ = {};
    hello_ = {};
    stopRequested_ = false;
    failedReported_ = false;
    ended_ = false;
    connect(process_, &QProcess::started, this, &LiveRun::started);
    connect(process_, &QProcess::readyReadStandardOutput, this, &LiveRun::readOutput);
    connect(process_, &QProcess::readyReadStandardError, this, [this] { stderr_ += process_->readAllStandardError(); });
    connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error != QProcess::FailedToStart) return;  // crashes arrive through finished
        fail(tr("could not start the executor %1: %2").arg(process_->program(), process_->errorString()));
        end();
    });
    connect(process_, &QProcess::finished, this, [this](int exitCode, QProcess::ExitStatus status) {
        killTimer_->stop();
        readOutput();
        if (!buffer_.trimmed().isEmpty()) handleLine(buffer_);  // a last line without '\n'
        buffer_.clear();
        stderr_ += process_->readAllStandardError();
        if (!stopRequested_) {
            if (status == QProcess::CrashExit)
                fail(tr("the executor crashed%1").arg(stderr_.isEmpty() ? QString() : ": " + firstLine(stderr_)));
            else if (exitCode != 0)
                fail(!stderr_.trimmed().isEmpty() ? firstLine(stderr_)
                     : !lastText_.isEmpty()       ? lastText_
                                                  : tr("the executor exited with code %1").arg(exitCode));
        }
        end();
    });
    QStringList args{QStringLiteral("run"),     planPath,  QStringLiteral("--backend"), QStringLiteral("cpu"),
                     QStringLiteral("--model"), modelSpec, QStringLiteral("--events")};
    args += extraArgs;
    process_->start(executablePath, args, QIODevice::ReadOnly);
    return true;
}

QString LiveRun::modelSpecFor(const std::optional<std::string>& profilePath) {
    const QString fallback = QStringLiteral("tiny");
    if (!profilePath) return fallback;
    auto provenance = readProfileProvenance(*profilePath);
    if (!provenance) return fallback;
    const QString model = QString::fromStdString(provenance->model).trimmed();
    return model.isEmpty() ? fallback : model;
}

void LiveRun::stop() {
    if (!isRunning()) return;
    stopRequested_ = true;
    process_->terminate();
    killTimer_->start();
}

void LiveRun::readOutput() {
    if (!process_) return;
    buffer_ += process_->readAllStandardOutput();
    qsizetype from = 0;
    for (qsizetype nl; (nl = buffer_.indexOf('\n', from)) >= 0; from = nl + 1) handleLine(buffer_.mid(from, nl - from));
    buffer_.remove(0, from);
}

// The protocol is core's (io/LiveEvents.h): this only turns parsed events into signals. The
// hello and the summary are also kept whole, as JSON objects, for their accessors.
void LiveRun::handleLine(const QByteArray& line) {
    const QByteArray text = line.trimmed();
    if (text.isEmpty()) return;
    const auto parsed = parseLiveEvent(std::string_view(text.constData(), static_cast<std::size_t>(text.size())));
    if (!parsed) {  // not an event: remember it, it may be the error message
        lastText_ = QString::fromUtf8(text);
        return;
    }
    const LiveEvent& event = *parsed;
    if (const auto* instruction = std::get_if<LiveInstruction>(&event)) {
        emit instructionFinished(instruction->device, static_cast<int>(instruction->index),
                                 instruction->start_us / 1000.0, instruction->end_us / 1000.0, instruction->iteration);
    } else if (const auto* iteration = std::get_if<LiveIteration>(&event)) {
        emit iterationFinished(iteration->step_ms, iteration->loss, iteration->iteration);
    } else if (const auto* hello = std::get_if<LiveHello>(&event)) {
        hello_ = QJsonDocument::fromJson(text).object();
        if (!checkLiveProtocol(*hello)) {
            fail(tr("the executor speaks protocol %1, the workbench %2").arg(hello->protocol).arg(kLiveEventProtocol));
            stop();
        }
    } else if (const auto* error = std::get_if<LiveError>(&event)) {
        fail(error->message.empty() ? QString::fromUtf8(text) : QString::fromStdString(error->message));
    } else if (std::holds_alternative<LiveSummary>(event)) {
        summary_ = QJsonDocument::fromJson(text).object();
    }
}

void LiveRun::fail(const QString& message) {
    if (failedReported_) return;
    failedReported_ = true;
    QString one = message;
    one.replace('\n', ' ');
    emit failed(one);
}

void LiveRun::end() {
    if (ended_) return;
    ended_ = true;
    emit finished();
}

}  // namespace mario::gui
