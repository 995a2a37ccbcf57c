#include "server/api/model_export_relay.h"

#include <thread>

#include "gtest/gtest.h"

namespace nmsparse::server {
namespace {

v1::ModelFileChunk Chunk(const std::string& data, bool last = false) {
  v1::ModelFileChunk c;
  c.set_file("model.safetensors");
  c.set_data(data);
  c.set_last(last);
  return c;
}

TEST(ModelExportRelayTest, ChunksArriveInOrderThroughTheBoundedQueue) {
  ModelExportRelay relay;
  const uint64_t id = relay.Open(3, 42);
  ASSERT_TRUE(relay.Attach(id, 3).ok());
  constexpr int kChunks = 5 * ModelExportRelay::kMaxQueuedChunks;  // The producer must wait for the reader.
  std::thread producer([&] {
    for (int i = 0; i < kChunks; ++i) ASSERT_TRUE(relay.Push(id, Chunk(std::to_string(i))).ok());
    relay.Finish(id, absl::OkStatus());
  });
  for (int i = 0; i < kChunks;) {
    absl::StatusOr<std::optional<v1::ModelFileChunk>> next = relay.Next(id, absl::Seconds(30));
    ASSERT_TRUE(next.ok()) << next.status();
    if (!next->has_value()) continue;
    EXPECT_EQ((*next)->data(), std::to_string(i));
    ++i;
  }
  producer.join();
  EXPECT_TRUE(absl::IsOutOfRange(relay.Next(id, absl::Seconds(1)).status()));
}

TEST(ModelExportRelayTest, TheUploadsErrorReachesTheCallerAfterItsChunks) {
  ModelExportRelay relay;
  const uint64_t id = relay.Open(3, 42);
  ASSERT_TRUE(relay.Attach(id, 3).ok());
  ASSERT_TRUE(relay.Push(id, Chunk("a")).ok());
  relay.Finish(id, absl::FailedPreconditionError("run 42: no checkpoint"));
  EXPECT_EQ((*relay.Next(id, absl::Seconds(1)))->data(), "a");
  absl::Status s = relay.Next(id, absl::Seconds(1)).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_EQ(s.message(), "run 42: no checkpoint");
}

TEST(ModelExportRelayTest, OnlyTheOrderedWorkerAttachesAndOnlyOnce) {
  ModelExportRelay relay;
  const uint64_t id = relay.Open(3, 42);
  EXPECT_TRUE(absl::IsPermissionDenied(relay.Attach(id, 4)));
  EXPECT_TRUE(relay.Attach(id, 3).ok());
  EXPECT_TRUE(absl::IsPermissionDenied(relay.Attach(id, 3)));
  EXPECT_TRUE(absl::IsNotFound(relay.Attach(id + 1, 3)));
}

TEST(ModelExportRelayTest, ACallerWhoLeftReleasesAWaitingUpload) {
  ModelExportRelay relay;
  const uint64_t id = relay.Open(3, 42);
  ASSERT_TRUE(relay.Attach(id, 3).ok());
  for (size_t i = 0; i < ModelExportRelay::kMaxQueuedChunks; ++i)
    ASSERT_TRUE(relay.Push(id, Chunk("x")).ok());
  absl::Status pushed;
  std::thread producer([&] { pushed = relay.Push(id, Chunk("y")); });  // Waits for room, or the close.
  relay.Close(id);
  producer.join();
  EXPECT_TRUE(absl::IsCancelled(pushed)) << pushed;
  EXPECT_TRUE(absl::IsNotFound(relay.Next(id, absl::Milliseconds(1)).status()));
}

}  // namespace
}  // namespace nmsparse::server
