// Issue 36: idle and slow sockets cannot starve the dashboard. 32 sockets that trickle a request header a
// byte at a time and 32 that send nothing are open and accepted by the dashboard (its listening socket's
// accept queue, /proc/net/tcp, is empty) before a normal GET, which must answer while they stay; then an idle
// socket is closed by the server. cpp-httplib's fixed pool of 24 threads gave every thread to the tricklers
// and the GET waited behind them for as long as they trickled. Loopback only, 65 sockets, a few seconds.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "server/dashboard/dashboard_server.h"
#include "server/test_support.h"

namespace nmsparse::server {
namespace {

constexpr int kTricklers = 32;  // More than the old pool's 24 threads.
constexpr int kIdle = 32;

// A loopback TCP connection to `port`, or -1.
int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  return fd;
}

// Connections to 127.0.0.1:`port` that the kernel holds for the listening socket until the server accepts
// them (/proc/net/tcp's rx_queue of the LISTEN row), or -1 when there is no such row.
int AcceptQueue(int port) {
  std::ifstream tcp("/proc/net/tcp");
  const std::string local = absl::StrCat("0100007F:", absl::AsciiStrToUpper(absl::StrCat(absl::Hex(port))));
  std::string line;
  while (std::getline(tcp, line)) {
    std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() < 5 || f[1] != local || f[3] != "0A") continue;  // 0A: LISTEN.
    int queued = -1;
    return absl::SimpleHexAtoi(std::vector<std::string>(absl::StrSplit(f[4], ':'))[1], &queued) ? queued : -1;
  }
  return -1;
}

class SlowClientsTest : public ::testing::Test {
 protected:
  SlowClientsTest() : server_(testing::TempDbPath("slow_clients_test")) {}

  void SetUp() override {
    auto started = DashboardServer::Start(server_.server().coordinator(), DashboardOptions{"127.0.0.1:0"});
    ASSERT_TRUE(started.ok()) << started.status();
    dashboard_ = std::move(*started);
  }

  void TearDown() override {
    for (int fd : fds_) close(fd);
  }

  int Open() {
    const int fd = Connect(dashboard_->port());
    EXPECT_GE(fd, 0);
    fds_.push_back(fd);
    return fd;
  }

  testing::TestServer server_;
  std::unique_ptr<DashboardServer> dashboard_;
  std::vector<int> fds_;
};

TEST_F(SlowClientsTest, IdleAndTricklingSocketsLeaveThePageAnswering) {
  std::vector<int> tricklers, idle;
  for (int i = 0; i < kTricklers; ++i) {
    tricklers.push_back(Open());
    const std::string start = "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ";
    ASSERT_EQ(send(tricklers.back(), start.data(), start.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(start.size()));
  }
  for (int i = 0; i < kIdle; ++i) idle.push_back(Open());
  // The known point: every socket is accepted (each has its place in the server's queue or a thread).
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (AcceptQueue(dashboard_->port()) != 0 && absl::Now() < deadline)
    absl::SleepFor(absl::Milliseconds(10));
  ASSERT_EQ(AcceptQueue(dashboard_->port()), 0);

  // The tricklers send a byte each tenth of a second, well within any read timeout, until the GET is
  // answered.
  std::atomic<bool> answered{false};
  std::thread trickle([&] {
    while (!answered) {
      for (int fd : tricklers) send(fd, "a", 1, MSG_NOSIGNAL);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  httplib::Client client("127.0.0.1", dashboard_->port());
  client.set_connection_timeout(20);
  client.set_read_timeout(20);  // A bound on the test, not a measure: the answer takes milliseconds.
  httplib::Result res = client.Get("/api/sweeps");
  answered = true;
  trickle.join();
  ASSERT_TRUE(res) << "GET /api/sweeps beside " << kTricklers << " trickling and " << kIdle
                   << " idle sockets: " << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);

  // An idle socket is closed by the server (kIdleSeconds), not held: recv sees the end of the stream.
  timeval bound{20, 0};
  setsockopt(idle.back(), SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof(bound));
  char byte;
  EXPECT_EQ(recv(idle.back(), &byte, 1, 0), 0) << "the idle socket was not closed";
}

}  // namespace
}  // namespace nmsparse::server
