// Store migration 13's data step: a sweep stored by wire version 1 kept its base as a serialized
// ExperimentSpec message (field 2 of v1.SweepSpec); from version 2 the base is YAML text (field `base`, 14).
// The step reads each old base through the frozen copy of that message (proto/nmsparse/legacy/) and rewrites
// it as the YAML a sweep file's base gets today (BaseSpecYaml), so that the sweep expands into the same runs.
#ifndef NMSPARSE_SERVER_STORE_LEGACY_SWEEP_BASE_H_
#define NMSPARSE_SERVER_STORE_LEGACY_SWEEP_BASE_H_

#include "absl/status/status.h"
#include "server/store/sqlite.h"

namespace nmsparse::server {

// Rewrites every stored sweep spec that still holds a version-1 base. A base that no longer parses (it could
// not have been stored) fails the migration, naming the sweep.
absl::Status ConvertLegacySweepBases(Database* db);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_STORE_LEGACY_SWEEP_BASE_H_
