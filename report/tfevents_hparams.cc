#include "report/tfevents_hparams.h"

#include <map>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/visible_text.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "tensorboard/hparams.pb.h"

namespace nmsparse::report {
namespace {

// tensorboard/plugins/hparams/metadata.py.
constexpr char kPluginName[] = "hparams";
constexpr char kExperimentTag[] = "_hparams_/experiment";
constexpr char kSessionStartTag[] = "_hparams_/session_start_info";
constexpr char kSessionEndTag[] = "_hparams_/session_end_info";
constexpr int kDtFloat = 1;
// As the scalar tags (tfevents.cc): visible text, bounded.
constexpr size_t kMaxTagChars = 256;

double Seconds(int64_t ms) { return ms / 1000.0; }

// One summary value whose metadata carries `data` for the hparams plugin, with the empty float tensor (shape
// [0]) that TensorBoard's summary_v2 gives it (metadata.NULL_TENSOR).
tensorboard::Event PluginEvent(const char* tag, double wall_time,
                               const tensorboard::HParamsPluginData& data) {
  tensorboard::Event event;
  event.set_wall_time(wall_time);
  tensorboard::Summary::Value* value = event.mutable_summary()->add_value();
  value->set_tag(tag);
  auto* plugin = value->mutable_metadata()->mutable_plugin_data();
  plugin->set_plugin_name(kPluginName);
  // Deterministic: the session's hyperparameters are a proto map, whose default order varies from process to
  // process; sorted keys make the file the same bytes every time (tfevents_test pins it).
  {
    google::protobuf::io::StringOutputStream stream(plugin->mutable_content());
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    data.SerializeToCodedStream(&coded);
  }
  value->mutable_tensor()->set_dtype(kDtFloat);
  value->mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(0);
  return event;
}

// A label as TensorBoard should sort and plot it: a number when the whole label is one.
google::protobuf::Value LabelValue(const std::string& label) {
  google::protobuf::Value value;
  double number = 0.0;
  if (absl::SimpleAtod(label, &number)) {
    value.set_number_value(number);
  } else {
    value.set_string_value(VisibleText(label, kMaxTagChars));
  }
  return value;
}

std::map<std::string, std::string> Labels(const v1::Run& run) {
  return std::map<std::string, std::string>(run.labels().begin(), run.labels().end());
}

}  // namespace

tensorboard::Event HparamsExperimentEvent(const RunData& run) {
  tensorboard::HParamsPluginData data;
  tensorboard::Experiment* experiment = data.mutable_experiment();
  experiment->set_time_created_secs(Seconds(run.run.created_at_ms()));
  for (const auto& [axis, label] : Labels(run.run)) {
    tensorboard::HParamInfo* info = experiment->add_hparam_infos();
    info->set_name(VisibleText(axis, kMaxTagChars));
    info->set_type(LabelValue(label).has_number_value() ? tensorboard::DATA_TYPE_FLOAT64
                                                        : tensorboard::DATA_TYPE_STRING);
  }
  for (const auto& [name, value] :
       std::map<std::string, double>(run.run.final_metrics().begin(), run.run.final_metrics().end())) {
    experiment->add_metric_infos()->mutable_name()->set_tag(
        VisibleText(absl::StrCat("final/", name), kMaxTagChars));
  }
  return PluginEvent(kExperimentTag, Seconds(run.run.created_at_ms()), data);
}

tensorboard::Event HparamsSessionStartEvent(const RunData& run) {
  tensorboard::HParamsPluginData data;
  tensorboard::SessionStartInfo* start = data.mutable_session_start_info();
  const int64_t started = run.run.started_at_ms() > 0 ? run.run.started_at_ms() : run.run.created_at_ms();
  start->set_start_time_secs(Seconds(started));
  for (const auto& [axis, label] : Labels(run.run))
    (*start->mutable_hparams())[VisibleText(axis, kMaxTagChars)] = LabelValue(label);
  return PluginEvent(kSessionStartTag, Seconds(started), data);
}

tensorboard::Event HparamsSessionEndEvent(const RunData& run) {
  tensorboard::HParamsPluginData data;
  tensorboard::SessionEndInfo* end = data.mutable_session_end_info();
  switch (run.run.state()) {
    case v1::SUCCEEDED:
      end->set_status(tensorboard::STATUS_SUCCESS);
      break;
    case v1::FAILED:
    case v1::CANCELLED:
    case v1::STOPPED_EARLY:  // Not trained to its end: TensorBoard has no other word for it.
      end->set_status(tensorboard::STATUS_FAILURE);
      break;
    case v1::QUEUED:
    case v1::ASSIGNED:
    case v1::RUNNING:
      end->set_status(tensorboard::STATUS_RUNNING);
      break;
    default:
      end->set_status(tensorboard::STATUS_UNKNOWN);
  }
  end->set_end_time_secs(Seconds(run.run.finished_at_ms()));
  return PluginEvent(kSessionEndTag, Seconds(run.run.finished_at_ms()), data);
}

}  // namespace nmsparse::report
