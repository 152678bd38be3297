// PluginImage: a plugin library file read once, checked, and loaded from those bytes.
//
// Loading a library straight from its path has three problems: a truncated or malformed
// file can kill the host with SIGBUS (the dynamic loader maps it and touches pages past
// its end), the loader runs the library's constructors before the host can refuse it,
// and a hash checked on the path proves nothing about the file opened again later.
// PluginImage opens the file once and reads it into memory; everything is decided on
// those bytes — the SHA-256, the ELF checks below, the exported entry points — and the
// library is then loaded from a sealed in-memory copy of them (memfd_create, loaded as
// /proc/self/fd/<n>), so the bytes checked are the bytes mapped and a later change to the
// original file (truncation, replacement) cannot reach the loaded library.
//
// The ELF checks (validate()): the header (magic, 64-bit little-endian as this host,
// version, a shared object for this host's machine), the program and section header
// tables within the file, every PT_LOAD segment's file bytes within the file, exactly one
// PT_DYNAMIC lying inside a PT_LOAD with a DT_NULL-terminated table, every section with
// file bytes within the file, and the dynamic symbol table with its strings.
//
// Thread safety: an image is used by one thread; distinct images are independent.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "plugin/host_api.h"

namespace quereus {

class PluginImage {
 public:
  // The largest library file read (a plugin is a few MB; this bounds a hostile file).
  static constexpr size_t kMaxBytes = size_t{256} << 20;

  // Reads the regular file at `path` once. Errors (bare reasons, kPlugin): "cannot open
  // the library file: …", "the library file is larger than … bytes", "cannot read …".
  static Status read(const std::string& path, PluginImage* out);

  // Validates the bytes as an ELF shared object this host can load (see above). The
  // error is the bare reason: "not a plugin: malformed library: <what>".
  Status validate();

  // The lower-case hex SHA-256 of the bytes.
  const std::string& sha256() const { return sha256_; }
  size_t size() const { return bytes_.size(); }
  // REQUIRES: validate() succeeded. True when the dynamic symbol table defines `name`, or
  // when the file has no section headers to tell (the loader's dlsym then decides).
  bool exports(const std::string& name) const;

  // Loads the bytes (REQUIRES: validate() succeeded) through a sealed memfd with
  // Boost.DLL (RTLD_NOW | RTLD_LOCAL); only now does library code run (its constructors).
  // A library with the same bytes already loaded by this process is shared instead of
  // mapped twice; a loaded library stays loaded for the life of the process (its memfd
  // names it to the dynamic loader, see plugin_image.cc). Errors: "not a plugin: cannot load the library: <dlerror>", or
  // "cannot make an in-memory copy of the library: …".
  Status load(PluginLibrary* out);

  // The lower-case hex SHA-256 of `data`.
  static std::string sha256_hex(const std::string& data);

 private:
  std::string bytes_;
  std::string sha256_;
  std::vector<std::string> exports_;  // defined dynamic symbols, sorted
  bool exports_known_ = false;        // false: no section headers, exports() says yes
  bool valid_ = false;
};

}  // namespace quereus
