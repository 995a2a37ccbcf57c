#include "worker/agent/report_outbox.h"

#include <thread>

#include "gtest/gtest.h"

namespace nmsparse::agent {
namespace {

Report Make(Report::Kind kind, int64_t run, uint32_t attempt) {
  Report r;
  r.kind = kind;
  r.run.set_run_id(run);
  r.run.set_attempt(attempt);
  return r;
}

constexpr std::chrono::milliseconds kNoWait{0};

TEST(ReportOutboxTest, BatchesConsecutiveReportsOfOneKindAndAttempt) {
  ReportOutbox outbox(100);
  outbox.Push(Make(Report::Kind::kStart, 1, 1));
  for (int i = 0; i < 3; ++i) outbox.Push(Make(Report::Kind::kMetric, 1, 1));
  outbox.Push(Make(Report::Kind::kLog, 1, 1));
  outbox.Push(Make(Report::Kind::kMetric, 2, 1));
  outbox.Push(Make(Report::Kind::kComplete, 1, 1));

  auto batch = outbox.PeekBatch(10, kNoWait);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0].kind, Report::Kind::kStart);
  outbox.Ack(batch.back().id);

  batch = outbox.PeekBatch(2, kNoWait);  // Capped by max_batch.
  ASSERT_EQ(batch.size(), 2u);
  outbox.Ack(batch.back().id);
  batch = outbox.PeekBatch(10, kNoWait);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0].kind, Report::Kind::kMetric);
  outbox.Ack(batch.back().id);

  batch = outbox.PeekBatch(10, kNoWait);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0].kind, Report::Kind::kLog);
  outbox.Ack(batch.back().id);
  batch = outbox.PeekBatch(10, kNoWait);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0].run.run_id(), 2);
  outbox.Ack(batch.back().id);
  batch = outbox.PeekBatch(10, kNoWait);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0].kind, Report::Kind::kComplete);
  outbox.Ack(batch.back().id);
  EXPECT_TRUE(outbox.PeekBatch(10, kNoWait).empty());
}

TEST(ReportOutboxTest, PeekDoesNotRemoveUntilAck) {
  ReportOutbox outbox(100);
  outbox.Push(Make(Report::Kind::kComplete, 1, 1));
  EXPECT_EQ(outbox.PeekBatch(10, kNoWait).size(), 1u);
  EXPECT_EQ(outbox.PeekBatch(10, kNoWait).size(), 1u);  // A failed send retries the same report.
  EXPECT_EQ(outbox.size(), 1u);
}

TEST(ReportOutboxTest, CapacityDropsLogsThenMetricsNeverCompletions) {
  ReportOutbox outbox(3);
  outbox.Push(Make(Report::Kind::kStart, 1, 1));
  outbox.Push(Make(Report::Kind::kMetric, 1, 1));
  outbox.Push(Make(Report::Kind::kLog, 1, 1));
  outbox.Push(Make(Report::Kind::kComplete, 1, 1));  // Over capacity: the log line goes.
  EXPECT_EQ(outbox.size(), 3u);
  EXPECT_EQ(outbox.dropped(), 1u);
  outbox.Push(Make(Report::Kind::kComplete, 2, 1));  // Then the metric.
  EXPECT_EQ(outbox.dropped(), 2u);
  outbox.Push(Make(Report::Kind::kComplete, 3, 1));  // Nothing droppable is left: kept over capacity.
  EXPECT_EQ(outbox.size(), 4u);
  auto batch = outbox.PeekBatch(10, kNoWait);
  EXPECT_EQ(batch[0].kind, Report::Kind::kStart);
}

// The final point is the one carrier of a run's final metrics (CompleteRun has none): past the capacity the
// epoch point before it goes, the final point stays.
TEST(ReportOutboxTest, CapacityNeverDropsAFinalPoint) {
  ReportOutbox outbox(2);
  Report final_point = Make(Report::Kind::kMetric, 1, 1);
  final_point.point.set_kind("final");
  Report epoch = Make(Report::Kind::kMetric, 1, 1);
  epoch.point.set_kind("epoch");
  outbox.Push(final_point);
  outbox.Push(epoch);
  outbox.Push(Make(Report::Kind::kComplete, 1, 1));  // Over capacity: the epoch point goes, not the final.
  EXPECT_EQ(outbox.dropped(), 1u);
  outbox.Push(Make(Report::Kind::kComplete, 2, 1));  // Nothing droppable is left: kept over capacity.
  EXPECT_EQ(outbox.dropped(), 1u);
  auto batch = outbox.PeekBatch(10, kNoWait);
  ASSERT_FALSE(batch.empty());
  EXPECT_EQ(batch[0].point.kind(), "final");
}

// A flood of log lines past the capacity keeps the oldest half of the queue (the head, sent as it is) and the
// latest lines; the first line after the gap carries how many were dropped there, so that the coordinator's
// count is exact, and the agent learns once that the attempt lost lines and, at its end, how many.
TEST(ReportOutboxTest, AFloodKeepsItsHeadAndTailAndCountsTheGap) {
  ReportOutbox outbox(4);
  for (int i = 0; i < 10; ++i) {
    Report r = Make(Report::Kind::kLog, 1, 1);
    r.line.set_text(std::to_string(i));
    outbox.Push(std::move(r));
  }
  std::vector<Report> batch = outbox.PeekBatch(10, kNoWait);
  ASSERT_EQ(batch.size(), 4u);
  EXPECT_EQ(batch[0].line.text(), "0");
  EXPECT_EQ(batch[1].line.text(), "1");
  EXPECT_EQ(batch[2].line.text(), "8");
  EXPECT_EQ(batch[2].line.dropped_before(), 6u);  // Lines 2 to 7.
  EXPECT_EQ(batch[3].line.text(), "9");
  EXPECT_EQ(batch[3].line.dropped_before(), 0u);
  const std::vector<v1::RunAttempt> dropping = outbox.TakeNewlyDropping();
  ASSERT_EQ(dropping.size(), 1u);
  EXPECT_EQ(dropping[0].run_id(), 1);
  EXPECT_TRUE(outbox.TakeNewlyDropping().empty());
  EXPECT_EQ(outbox.TakeDroppedLogLines(dropping[0]), 6u);
  EXPECT_EQ(outbox.TakeDroppedLogLines(dropping[0]), 0u);
}

// A dropped line with no later line of its attempt queued: the attempt's next line carries the count.
TEST(ReportOutboxTest, ADropAtTheEndIsCarriedByTheNextLine) {
  ReportOutbox outbox(2);
  outbox.Push(Make(Report::Kind::kStart, 1, 1));
  outbox.Push(Make(Report::Kind::kMetric, 1, 1));
  outbox.Push(Make(Report::Kind::kLog, 1, 1));  // Over capacity: this line goes.
  outbox.Ack(outbox.PeekBatch(1, kNoWait).back().id);
  outbox.Push(Make(Report::Kind::kLog, 1, 1));
  outbox.Ack(outbox.PeekBatch(1, kNoWait).back().id);
  std::vector<Report> batch = outbox.PeekBatch(10, kNoWait);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0].kind, Report::Kind::kLog);
  EXPECT_EQ(batch[0].line.dropped_before(), 1u);
}

TEST(ReportOutboxTest, DropAttemptKeepsOthersAndAckStaysCorrect) {
  ReportOutbox outbox(100);
  outbox.Push(Make(Report::Kind::kMetric, 1, 1));
  outbox.Push(Make(Report::Kind::kMetric, 1, 2));
  outbox.Push(Make(Report::Kind::kMetric, 1, 1));
  auto batch = outbox.PeekBatch(10, kNoWait);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(outbox.DropAttempt(batch[0].run), 2u);
  outbox.Ack(batch.back().id);  // Already gone; must not remove the other attempt's report.
  batch = outbox.PeekBatch(10, kNoWait);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0].run.attempt(), 2u);
}

TEST(ReportOutboxTest, PeekWaitsForAPush) {
  ReportOutbox outbox(100);
  std::thread pusher([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    outbox.Push(Make(Report::Kind::kLog, 4, 1));
  });
  auto batch = outbox.PeekBatch(10, std::chrono::seconds(10));
  pusher.join();
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0].run.run_id(), 4);
}

}  // namespace
}  // namespace nmsparse::agent
