// What nmctl's live commands (watch, follow, logs) share: how often they poll, how long they wait out a
// coordinator restart, and the terminal controls that redraw a progress bar in place.
#ifndef NMSPARSE_CLI_LIVE_VIEW_H_
#define NMSPARSE_CLI_LIVE_VIEW_H_

#include <chrono>

#include "nmsparse/v1/sweep.pb.h"

namespace nmsparse::cli {

constexpr int kBarWidth = 24;
constexpr auto kPollInterval = std::chrono::milliseconds(1000);
constexpr int kReconnectAttempts = 60;  // About a minute of a coordinator restart.

// On a terminal the step bar is redrawn in place on one line; every other line first clears it. (Written with
// CommandContext::WriteControl: `out` shows every control character as text.)
constexpr char kClearLine[] = "\r\x1b[2K";
constexpr char kLineUp[] = "\x1b[1A";

// A run stopped early by its sweep's policy ended as the sweep asked: not a failure.
inline bool EndedWell(v1::RunState state) { return state == v1::SUCCEEDED || state == v1::STOPPED_EARLY; }

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_LIVE_VIEW_H_
