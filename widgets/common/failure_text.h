#pragma once
// What a worker or the launcher said went wrong, in the UI's language. Their messages are English
// on the wire (the CLI prints them, recordings keep them); the GUI shows each known form in its
// translated words with the run's byte units, e.g. "out of memory on rank 0: allocating 102400
// bytes of activation for block1 would exceed the device capacity of 1600000 bytes (1551048 bytes
// live)" → "rank 0 的设备内存不足：block1 的 102 kB 激活值放不下 …". A message of another form is
// shown as it was written, never dropped.
#include <QString>

namespace shardscope::widgets {

QString failureText(const QString& message);
inline QString failureText(const std::string& message) {
    return failureText(QString::fromStdString(message));
}

} // namespace shardscope::widgets
