#include "server/store/sweep_table.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/wire_format_lite.h"

namespace nmsparse::server {
namespace {

constexpr char kColumns[] = "id, name, spec, created_at_ms, cancelled, submitted_by, search_ended";

// The serialized spec with its grid axes skipped, field by field: a length-delimited field is skipped by its
// length, so the cost does not grow with the grid.
std::string WithoutGrid(const std::string& spec) {
  using google::protobuf::internal::WireFormatLite;
  std::string kept;
  {
    google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(spec.data()),
                                              static_cast<int>(spec.size()));
    google::protobuf::io::StringOutputStream sink(&kept);
    google::protobuf::io::CodedOutputStream out(&sink);
    while (const uint32_t tag = in.ReadTag()) {
      const bool grid = WireFormatLite::GetTagFieldNumber(tag) == v1::SweepSpec::kGridFieldNumber;
      if (!(grid ? WireFormatLite::SkipField(&in, tag) : WireFormatLite::SkipField(&in, tag, &out))) break;
    }
  }
  return kept;
}

v1::Sweep SweepFromRow(const Statement& st, bool with_grid = true) {
  v1::Sweep s;
  s.set_id(st.Int(0));
  s.set_name(st.Text(1));
  s.mutable_spec()->ParseFromString(with_grid ? st.Text(2) : WithoutGrid(st.Text(2)));
  s.set_created_at_ms(st.Int(3));
  s.set_cancelled(st.Int(4) != 0);
  s.set_submitted_by(st.Text(5));
  s.set_search_ended(st.Text(6));
  return s;
}

// From the counts the triggers of migration 8 keep: a few rows, however many runs the sweep has.
absl::Status FillRunCounts(Database* db, v1::Sweep* sweep) {
  NM_ASSIGN_OR_RETURN(Stmt st,
                      db->Prepare("SELECT state, n FROM sweep_run_counts WHERE sweep_id = ? AND n > 0"));
  st->Bind(1, sweep->id());
  while (true) {
    NM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    (*sweep->mutable_run_counts())[v1::RunState_Name(static_cast<v1::RunState>(st->Int(0)))] =
        static_cast<uint32_t>(st->Int(1));
  }
  return absl::OkStatus();
}

// The stored form of an idempotency key: scoped by its owner's token, so that one caller's key never returns
// another's sweep. Without authentication the key is stored as given (as before tokens existed).
std::string OwnersKey(const SweepOwner& owner, const std::string& key) {
  return owner.token_sha256.empty() ? key : absl::StrCat(owner.token_sha256, "/", key);
}

}  // namespace

absl::StatusOr<int64_t> InsertSweep(Database* db, const v1::SweepSpec& spec, int64_t now_ms,
                                    const SweepOwner& owner) {
  NM_ASSIGN_OR_RETURN(Stmt st,
                      db->Prepare("INSERT INTO sweeps (name, spec, idempotency_key, priority, created_at_ms, "
                                  "submitted_by, owner_token) VALUES (?, ?, ?, ?, ?, ?, ?)"));
  st->BindText(1, spec.name()).BindBlob(2, spec.SerializeAsString());
  if (spec.idempotency_key().empty()) {
    st->BindNull(3);
  } else {
    st->BindText(3, OwnersKey(owner, spec.idempotency_key()));
  }
  NM_RETURN_IF_ERROR(st->Bind(4, spec.priority())
                         .Bind(5, now_ms)
                         .BindText(6, owner.name)
                         .BindText(7, owner.token_sha256)
                         .Run());
  return db->LastInsertId();
}

absl::StatusOr<SweepOwner> LoadSweepOwner(Database* db, int64_t id) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("SELECT submitted_by, owner_token FROM sweeps WHERE id = ?"));
  st->Bind(1, id);
  NM_ASSIGN_OR_RETURN(bool row, st->Step());
  if (!row) return absl::NotFoundError(absl::StrCat("no sweep with id ", id));
  return SweepOwner{st->Text(0), st->Text(1)};
}

absl::StatusOr<std::optional<int64_t>> FindSweepByKey(Database* db, const SweepOwner& owner,
                                                      const std::string& key) {
  if (key.empty()) return std::optional<int64_t>();
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("SELECT id FROM sweeps WHERE idempotency_key = ?"));
  st->BindText(1, OwnersKey(owner, key));
  NM_ASSIGN_OR_RETURN(bool row, st->Step());
  return row ? std::optional<int64_t>(st->Int(0)) : std::nullopt;
}

namespace {

absl::StatusOr<v1::Sweep> LoadSweepRow(Database* db, int64_t id, bool with_grid) {
  v1::Sweep sweep;
  {
    NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare(absl::StrCat("SELECT ", kColumns, " FROM sweeps WHERE id = ?")));
    st->Bind(1, id);
    NM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) return absl::NotFoundError(absl::StrCat("no sweep with id ", id));
    sweep = SweepFromRow(*st, with_grid);
  }
  NM_RETURN_IF_ERROR(FillRunCounts(db, &sweep));
  return sweep;
}

}  // namespace

absl::StatusOr<v1::Sweep> LoadSweep(Database* db, int64_t id) { return LoadSweepRow(db, id, true); }

absl::StatusOr<v1::Sweep> LoadSweepWithoutGrid(Database* db, int64_t id) {
  return LoadSweepRow(db, id, false);
}

absl::StatusOr<std::vector<v1::Sweep>> ListSweeps(Database* db) {
  std::vector<v1::Sweep> out;
  {
    NM_ASSIGN_OR_RETURN(Stmt st,
                        db->Prepare(absl::StrCat("SELECT ", kColumns, " FROM sweeps ORDER BY id DESC")));
    while (true) {
      NM_ASSIGN_OR_RETURN(bool row, st->Step());
      if (!row) break;
      out.push_back(SweepFromRow(*st));
    }
  }
  for (v1::Sweep& s : out) NM_RETURN_IF_ERROR(FillRunCounts(db, &s));
  return out;
}

absl::Status MarkSweepCancelled(Database* db, int64_t id) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("UPDATE sweeps SET cancelled = 1 WHERE id = ?"));
  NM_RETURN_IF_ERROR(st->Bind(1, id).Run());
  if (db->Changes() == 0) return absl::NotFoundError(absl::StrCat("no sweep with id ", id));
  return absl::OkStatus();
}

absl::Status EndSearch(Database* db, int64_t id, const std::string& reason) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("UPDATE sweeps SET search_ended = ? WHERE id = ?"));
  NM_RETURN_IF_ERROR(st->BindText(1, reason).Bind(2, id).Run());
  if (db->Changes() == 0) return absl::NotFoundError(absl::StrCat("no sweep with id ", id));
  return absl::OkStatus();
}

}  // namespace nmsparse::server
