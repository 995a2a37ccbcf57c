#include "schemas/request_bounds.h"

#include <set>
#include <string>

#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "nmsparse/v1/coordinator.pb.h"
#include "nmsparse/v1/worker_gateway.pb.h"
#include "schemas/limits.h"

namespace nmsparse {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::DescriptorPool;
using google::protobuf::FieldDescriptor;

std::string Message(const absl::Status& s) { return std::string(s.message()); }

// Full names of the fields reachable from `type`: all of them, and the string, bytes, repeated and map ones.
void ReachableFields(const Descriptor* type, std::set<const Descriptor*>* seen, std::set<std::string>* all,
                     std::set<std::string>* boundable) {
  if (!seen->insert(type).second) return;
  for (int i = 0; i < type->field_count(); ++i) {
    const FieldDescriptor* f = type->field(i);
    all->insert(f->full_name());
    if (f->is_repeated() || f->cpp_type() == FieldDescriptor::CPPTYPE_STRING)
      boundable->insert(f->full_name());
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE)
      ReachableFields(f->message_type(), seen, all, boundable);
  }
}

TEST(RequestBoundsTableTest, EveryRequestFieldHasABoundChosenForIt) {
  // Linked in by name: the services' descriptors are registered with their messages'.
  v1::SubmitSweepRequest coordinator_message;
  v1::LogReport gateway_message;
  std::set<const Descriptor*> seen;
  std::set<std::string> all, boundable;
  for (const char* service : {"nmsparse.v1.Coordinator", "nmsparse.v1.WorkerGateway"}) {
    const auto* s = DescriptorPool::generated_pool()->FindServiceByName(service);
    ASSERT_NE(s, nullptr) << service;
    for (int m = 0; m < s->method_count(); ++m) {
      ReachableFields(s->method(m)->input_type(), &seen, &all, &boundable);
    }
  }
  // A request field without a row still gets the defaults; this asks its author to choose.
  const std::vector<std::string> named = FieldsWithOwnBounds();
  const std::set<std::string> table(named.begin(), named.end());
  for (const std::string& field : boundable) EXPECT_TRUE(table.count(field)) << field << " has no row";
  for (const std::string& name : table) EXPECT_TRUE(all.count(name)) << name << " is not a request field";
}

v1::SweepSpec OneAxis() {
  v1::SweepSpec spec;
  spec.set_name("s");
  spec.set_base("model: {name: vit_micro_patch4_28}\n");
  v1::GridAxis* axis = spec.add_grid();
  axis->set_name("lr");
  for (const char* v : {"1e-4", "1e-3"}) {
    v1::AxisValue* value = axis->add_values();
    value->set_label(v);
    (*value->mutable_set())["optimizer.lr"] = v;
  }
  return spec;
}

TEST(RequestBoundsTest, AFittingRequestPasses) {
  v1::SubmitSweepRequest req;
  *req.mutable_spec() = OneAxis();
  req.mutable_spec()->set_name(std::string(limits::kMaxNameBytes, 'n'));
  EXPECT_TRUE(CheckRequestBounds(req).ok());
}

TEST(RequestBoundsTest, NamesTheFieldItsSizeAndTheLimit) {
  v1::SubmitSweepRequest req;
  *req.mutable_spec() = OneAxis();
  req.mutable_spec()->mutable_grid(0)->mutable_values(1)->set_label(std::string(300, 'x'));
  EXPECT_EQ(Message(CheckRequestBounds(req)),
            "spec.grid[0].values[1].label: 300 bytes, more than the limit of 256 bytes");

  *req.mutable_spec() = OneAxis();
  req.mutable_spec()->set_base(std::string(limits::kMaxSpecFileBytes + 1, 'b'));
  EXPECT_EQ(Message(CheckRequestBounds(req)),
            "spec.base: 1,048,577 bytes, more than the limit of 1,048,576 bytes");

  *req.mutable_spec() = OneAxis();
  req.mutable_spec()->set_idempotency_key(std::string(129, 'k'));
  EXPECT_EQ(Message(CheckRequestBounds(req)),
            "spec.idempotency_key: 129 bytes, more than the limit of 128 bytes");
  EXPECT_EQ(CheckRequestBounds(req).code(), absl::StatusCode::kInvalidArgument);
}

TEST(RequestBoundsTest, NamesMapEntriesByTheirKeyOrPosition) {
  v1::SubmitSweepRequest req;
  *req.mutable_spec() = OneAxis();
  (*req.mutable_spec()->mutable_grid(0)->mutable_values(0)->mutable_set())["optimizer.lr"] =
      std::string(limits::kMaxValueTextBytes + 1, '1');
  EXPECT_EQ(Message(CheckRequestBounds(req)),
            "spec.grid[0].values[0].set[\"optimizer.lr\"].value: 8,193 bytes, more than the limit of 8,192 "
            "bytes");

  *req.mutable_spec() = OneAxis();
  auto* set = req.mutable_spec()->mutable_grid(0)->mutable_values(0)->mutable_set();
  set->clear();
  (*set)[std::string(300, 'k')] = "1";
  EXPECT_EQ(Message(CheckRequestBounds(req)),
            "spec.grid[0].values[0].set[#0].key: 300 bytes, more than the limit of 256 bytes");
}

TEST(RequestBoundsTest, CountsEntriesOfRepeatedAndMapFields) {
  v1::ForkRunRequest fork;
  for (int i = 0; i <= limits::kMaxRepeatedCount; ++i) fork.add_set("seed=1");
  EXPECT_EQ(Message(CheckRequestBounds(fork)), "set: 1,025 entries, more than the limit of 1,024 entries");

  v1::SubmitSweepRequest req;
  *req.mutable_spec() = OneAxis();
  v1::RandomAxis* axis = req.mutable_spec()->add_random();
  axis->set_key("seed");
  for (int i = 0; i <= limits::kMaxAxisValues; ++i) axis->add_choices("1");
  EXPECT_EQ(Message(CheckRequestBounds(req)),
            "spec.random[0].choices: 100,001 entries, more than the limit of 100,000 entries");
}

TEST(RequestBoundsTest, BoundsTheWholeSpec) {
  v1::SubmitSweepRequest req;
  *req.mutable_spec() = OneAxis();
  v1::GridAxis* axis = req.mutable_spec()->mutable_grid(0);
  // Values within every field's own bound, together past the spec's.
  const std::string text(limits::kMaxValueTextBytes, '1');
  for (int i = 0; axis->ByteSizeLong() <= static_cast<size_t>(limits::kMaxSweepSpecBytes); ++i) {
    v1::AxisValue* value = axis->add_values();
    value->set_label(std::to_string(i));
    (*value->mutable_set())["data.path"] = text;
  }
  const absl::Status s = CheckRequestBounds(req);
  EXPECT_NE(Message(s).find("spec: "), std::string::npos) << Message(s);
  EXPECT_NE(Message(s).find("bytes, more than the limit of 8,388,608 bytes"), std::string::npos)
      << Message(s);
}

TEST(RequestBoundsTest, AFieldNotInTheTableGetsTheDefaultAndUnknownFieldsAreBounded) {
  // Unknown fields stand for a field this build does not know: a newer client's, or a hostile one's.
  v1::GetSweepRequest req;
  req.set_sweep_id(1);
  req.GetReflection()->MutableUnknownFields(&req)->AddLengthDelimited(99, std::string(5000, 'u'));
  EXPECT_EQ(Message(CheckRequestBounds(req)),
            "(unknown fields): 5,000 bytes, more than the limit of 4,096 bytes");
  v1::CancelRunRequest fits;
  fits.GetReflection()->MutableUnknownFields(&fits)->AddLengthDelimited(99, "newer field");
  EXPECT_TRUE(CheckRequestBounds(fits).ok());
}

TEST(RequestBoundsTest, AReportsLongTextIsCutNotRefused) {
  v1::LogReport log;
  log.add_lines()->set_text("short");
  log.add_lines()->set_text(std::string(limits::kMaxLogLineBytes * 3, 'l'));
  EXPECT_EQ(Message(CheckRequestBounds(log)),
            "lines[1].text: 12,288 bytes, more than the limit of 4,096 bytes");
  ASSERT_TRUE(CutAndCheckReportBounds(&log).ok());
  EXPECT_EQ(log.lines(0).text(), "short");
  EXPECT_EQ(log.lines(1).text(), limits::CutLogLine(std::string(limits::kMaxLogLineBytes * 3, 'l')));

  v1::CompleteRunRequest done;
  done.set_outcome(v1::FAILED);
  done.set_message(std::string(limits::kMaxRunMessageBytes + 1, 'm'));
  ASSERT_TRUE(CutAndCheckReportBounds(&done).ok());
  EXPECT_LE(static_cast<int64_t>(done.message().size()), limits::kMaxRunMessageBytes);
  EXPECT_NE(done.message().find(" bytes cut]"), std::string::npos);

  // Only text the contract cuts: any other field of a report past its bound is refused.
  v1::MetricReport metric;
  (*metric.mutable_point()->mutable_labels())["phase"] = std::string(300, 'p');
  EXPECT_EQ(Message(CutAndCheckReportBounds(&metric)),
            "point.labels[\"phase\"].value: 300 bytes, more than the limit of 256 bytes");
}

}  // namespace
}  // namespace nmsparse
