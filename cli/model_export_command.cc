#include "cli/model_export_command.h"

#include <filesystem>
#include <ostream>

#include "absl/strings/str_cat.h"
#include "cli/nmctl_exit_codes.h"
#include "cli/model_export_receiver.h"
#include "contract/model_export_files.h"

namespace nmsparse::cli {
namespace {

absl::StatusOr<v1::ExportModelRequest> ParseRequest(const CommandContext& context) {
  absl::StatusOr<int64_t> id = IdArgument(context, "run id");
  if (!id.ok()) return id.status();
  v1::ExportModelRequest request;
  request.set_run_id(*id);
  const std::string weights = context.args->Get("weights").value_or("final");
  if (weights != "final" && weights != "ema") {
    return absl::InvalidArgumentError(absl::StrCat("--weights: value '", weights, "' is not final or ema"));
  }
  request.set_weights(weights == "ema" ? v1::MODEL_WEIGHTS_EMA : v1::MODEL_WEIGHTS_FINAL);
  const std::string dtype = context.args->Get("dtype").value_or("fp32");
  if (dtype != "fp32" && dtype != "bf16") {
    return absl::InvalidArgumentError(absl::StrCat("--dtype: value '", dtype, "' is not fp32 or bf16"));
  }
  request.set_dtype(dtype == "bf16" ? v1::MODEL_DTYPE_BF16 : v1::MODEL_DTYPE_FP32);
  return request;
}

// Reads the whole stream into `receiver`; the first error (the coordinator's or the receiver's) ends it.
absl::Status Receive(const CommandContext& context, const v1::ExportModelRequest& request,
                     ModelExportReceiver* receiver) {
  CoordinatorConnection& connection = context.connection();
  std::unique_ptr<grpc::ClientContext> rpc = connection.Context(/*streaming=*/true);
  std::unique_ptr<grpc::ClientReader<v1::ModelFileChunk>> reader =
      connection.stub().ExportModel(rpc.get(), request);
  v1::ModelFileChunk chunk;
  absl::Status taken;
  while (taken.ok() && reader->Read(&chunk)) taken = receiver->Take(chunk);
  if (!taken.ok()) {
    rpc->TryCancel();
    reader->Finish();
    return taken;
  }
  return connection.Check(reader->Finish());
}

}  // namespace

int RunExportModelCommand(const CommandContext& context) {
  absl::StatusOr<v1::ExportModelRequest> request = ParseRequest(context);
  if (!request.ok()) return Fail(context, request.status());
  const std::string dir = context.args->Get("output").value_or("");
  if (dir.empty()) return Fail(context, absl::InvalidArgumentError("'export-model' needs -o DIR"));
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error)
    return Fail(context,
                absl::PermissionDeniedError(absl::StrCat("cannot create ", dir, ": ", error.message())));

  ModelExportReceiver receiver(dir, request->run_id());
  absl::Status s = Receive(context, *request, &receiver);
  if (s.ok()) s = receiver.Commit();
  if (!s.ok()) return Fail(context, s);
  if (context.json) {
    Json files = Json::array();
    for (const char* file : contract::kExportFiles) {
      files.push_back({{"file", file}, {"bytes", receiver.sizes().at(file)}});
    }
    PrintJson(context, Json{{"run_id", request->run_id()}, {"dir", dir}, {"files", files}});
    return kExitOk;
  }
  *context.out << "exported run " << request->run_id() << " to " << dir << ":\n";
  for (const char* file : contract::kExportFiles) {
    *context.out << "  " << file << "  " << receiver.sizes().at(file) << " bytes\n";
  }
  *context.out << "load it in timm: docs/interop.md (\"Exporting a run\")\n";
  return kExitOk;
}

}  // namespace nmsparse::cli
