// The one place where the coordinator takes file names from another process: a worker's UploadModelExport
// (docs/interop.md, docs/security.md). Users upload no files; a worker's names are checked against the
// export's fixed list (contract/model_export_files.h) before a chunk is relayed, so a hostile name (a path,
// a control character, a file sent twice) ends the upload and the caller's ExportModel with an error that
// shows the name escaped, and the caller receives no chunk.
#include <grpcpp/grpcpp.h>

#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "server/test_support.h"

namespace nmsparse::server {
namespace {

using testing::Attempt;
using testing::FakeWorker;
using testing::MSweep;
using testing::TempDbPath;
using testing::TestServer;

struct Exported {
  grpc::Status upload;               // The worker's UploadModelExport.
  grpc::Status call;                 // The caller's ExportModel.
  std::vector<std::string> relayed;  // The names of the chunks the caller received.
};

class ModelExportUploadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<TestServer>(TempDbPath("model_export_upload"));
    v1::SubmitSweepRequest req;
    *req.mutable_spec() = MSweep("s", {"4"});
    v1::SubmitSweepResponse resp;
    grpc::ClientContext ctx;
    ASSERT_TRUE(server_->coordinator().SubmitSweep(&ctx, req, &resp).ok());
    run_ = resp.runs(0).id();
    worker_ = std::make_unique<FakeWorker>(&server_->gateway(), 1);
    ASSERT_EQ(worker_->WaitAssignments(1).size(), 1u);
    ASSERT_TRUE(testing::GatewayStart(server_->gateway(), Attempt(run_, 1)).ok());
    ASSERT_TRUE(testing::GatewayComplete(server_->gateway(), Attempt(run_, 1), v1::SUCCEEDED).ok());
  }

  // A caller exports the run; the worker takes the order and uploads one chunk per name of `files`.
  Exported Export(const std::vector<std::string>& files) {
    Exported out;
    grpc::ClientContext call_ctx;
    v1::ExportModelRequest request;
    request.set_run_id(run_);
    std::thread caller([&] {
      auto reader = server_->coordinator().ExportModel(&call_ctx, request);
      v1::ModelFileChunk chunk;
      while (reader->Read(&chunk)) out.relayed.push_back(chunk.file());
      out.call = reader->Finish();
    });
    // The order arrives on the worker's assignment stream: the run's assignment, then one per export.
    const std::vector<v1::Assignment> received = worker_->WaitAssignments(++orders_ + 1);
    EXPECT_EQ(received.size(), orders_ + 1);
    if (received.size() == orders_ + 1 && received.back().has_export_model()) {
      grpc::ClientContext upload_ctx;
      testing::AsWorker(&upload_ctx, worker_->id());
      v1::Ack ack;
      auto writer = server_->gateway().UploadModelExport(&upload_ctx, &ack);
      for (const std::string& file : files) {
        v1::ModelExportUpload msg;
        msg.set_worker_id(worker_->id());
        msg.set_export_id(received.back().export_model().export_id());
        msg.mutable_chunk()->set_file(file);
        msg.mutable_chunk()->set_data("x");
        msg.mutable_chunk()->set_last(true);
        if (!writer->Write(msg)) break;
      }
      writer->WritesDone();
      out.upload = writer->Finish();
    } else {
      call_ctx.TryCancel();
    }
    caller.join();
    return out;
  }

  std::unique_ptr<TestServer> server_;
  std::unique_ptr<FakeWorker> worker_;
  int64_t run_ = 0;
  size_t orders_ = 0;
};

TEST_F(ModelExportUploadTest, HostileFileNamesAreRefusedBeforeAnyChunkIsRelayed) {
  const std::vector<std::pair<std::string, std::string>> hostile = {
      {"../../etc/passwd", "'../../etc/passwd'"},
      {"/etc/passwd", "'/etc/passwd'"},
      {"config.json/../../../x", "'config.json/../../../x'"},
      {"README.md\n\x1b[2J", "'README.md\\n\\x1b[2J'"},
      {".config.json.partial", "'.config.json.partial'"},
      {"", "''"},
  };
  for (const auto& [name, shown] : hostile) {
    const Exported e = Export({name});
    EXPECT_EQ(e.upload.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << shown;
    EXPECT_EQ(e.upload.error_message(), "chunk.file: " + shown + " is not an export file still to send");
    EXPECT_EQ(e.call.error_message(), e.upload.error_message()) << shown;
    EXPECT_TRUE(e.relayed.empty()) << shown;
  }
  // A file of the list sent twice: the first is relayed, the second refused.
  const Exported twice = Export({"config.json", "config.json"});
  EXPECT_EQ(twice.upload.error_message(), "chunk.file: 'config.json' is not an export file still to send");
  EXPECT_EQ(twice.relayed, std::vector<std::string>{"config.json"});
  EXPECT_FALSE(twice.call.ok());
}

}  // namespace
}  // namespace nmsparse::server
