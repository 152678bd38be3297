// Online backup (Database::backup, docs/operations.md): the database's persistent module
// writes a copy of one committed state into a new directory while writers go on (SDK 1.7
// qrs_module_vtable.backup; the module checks the directory). The engine only picks the
// module and relays progress. It
// may run on another thread while this database executes statements.
#include "main/database_impl.h"

namespace quereus {

Status DatabaseImpl::backup(const std::string& dest_dir, const BackupProgress& progress) {
  try {
    if (dest_dir.empty()) throw Error(StatusCode::kMisuse, "backup: name the directory to write the copy into");
    std::string name;
    std::shared_ptr<VtabModule> module;
    for (const auto& [n, m] : opened_modules()) {
      if (!module_is_per_database(n) || !m->capabilities().persistent) continue;
      if (module)
        throw Error(StatusCode::kMisuse, "modules '" + name + "' and '" + n +
                                             "' both keep this database on disk: back it up with .dump (schema_ddl() and "
                                             "the rows) instead");
      name = n;
      module = m;
    }
    if (!module)
      throw Error(StatusCode::kMisuse,
                  "this database keeps nothing on disk (no module opened with a 'path'): .dump writes a backup script");
    if (!module->backup(dest_dir, progress))
      throw Error(StatusCode::kUnsupported, "module '" + name +
                                                "' has no online backup (SDK 1.7 backup): back up with .dump instead");
  } catch (const std::exception& e) {
    return status_of(e);
  }
  return Status::Ok();
}

}  // namespace quereus
