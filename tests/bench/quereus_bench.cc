// quereus-bench: runs named workloads against our engine and against SQLite (in-memory)
// in the same run and prints one tab-separated line per workload (docs/benchmarks.md).
//
//   quereus-bench [--module NAME] [--workload NAME]... [--scale F] [--plugin-dir DIR]
//                 [--timeout SECONDS] [--repeat N] [--clock wall|cpu] [--list]
//
// Every (workload, engine) pair runs in its own forked child, so that each peak-memory
// figure (VmHWM at the end minus VmHWM right after fork) belongs to that engine alone.
// The parent prints the lines.
//
// Exit status: 0 when every workload ran on both engines and their results matched
// (whatever the ratios); 1 when one errored, crashed, timed out or mismatched; 2 for
// usage or plugin errors.
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bench_engine.h"
#include "config/host_setup.h"
#include "config/logging.h"
#include "plugin/plugin_loader.h"
#include "raw_leveldb.h"
#include "workloads.h"

namespace {

using namespace quereus;
using namespace quereus::bench;

constexpr const char* kUsage =
    "usage: quereus-bench [options]\n"
    "  --workload NAME    run this workload (may repeat; default: all, see --list)\n"
    "  --module NAME      our storage module for the tables (default: memory). With store:\n"
    "                     a fresh directory per run, SQLite on a WAL file database, and\n"
    "                     raw LevelDB doing the same key/value work (fillseq, fillrandom,\n"
    "                     readrandom) in a third table. With sync-store: as store, and\n"
    "                     each workload also runs on store, the overhead of replication\n"
    "                     in a third table (bar: sync-store <= 1.3x store)\n"
    "  --sync on|off      store commits synced (SQLite synchronous = full / off; default on)\n"
    "  --scale F          multiply every row and iteration count by F (default: 1 —\n"
    "                     1,000,000 rows; 0.01 is a smoke test)\n"
    "  --plugin-dir DIR   where mem.so is found (default: <exe dir>/../lib/quereus)\n"
    "  --timeout SECONDS  per workload and engine run; 0 for none (default: 300)\n"
    "  --clock wall|cpu   time the workloads by the wall clock (default) or by the\n"
    "                     process's CPU time, all threads (steadier on a shared machine;\n"
    "                     time waiting on the disk is not counted)\n"
    "  --repeat N         run each workload N times per engine, report the fastest time,\n"
    "                     and the largest peak (default: 1)\n"
    "  --list             print the workload names and what they do, then exit\n"
    "Prints: workload  module  ours_ms  sqlite_ms  ratio  ours_peak_mb  sqlite_peak_mb\n"
    "(tab-separated; ratio = ours_ms / sqlite_ms; notes and errors go to stderr), then,\n"
    "when a flat-cost workload ran, a second table after a blank line:\n"
    "  flat_cost  engine  first10_us  last10_us  last/first  bar (PASS: last/first <= 1.2)\n";

constexpr double kBar = 3.0;  // the bar: no workload slower than 3x SQLite
constexpr double kLevelDbBar = 0.5;  // issue 6: bulk insert and point reads at >= 50% of raw LevelDB
bool g_sync = true;  // --sync: store commits (and SQLite's file database) synced

int usage_error(const std::string& message) {
  std::cerr << "quereus-bench: " << message << "\n" << kUsage;
  return 2;
}

// ---------------------------------------------------------------- one child run

enum class EngineKind { kOurs, kSqlite };

struct Outcome {
  enum class State { kOk, kError, kTimeout } state = State::kError;
  double ms = 0;
  double peak_mb = 0;
  std::string checksum;
  std::string message;  // kError
  double first_us = -1, last_us = -1;  // flat-cost workloads only
};

// VmHWM (peak resident set) of this process, in kB; -1 when unreadable.
long read_hwm_kb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  return -1;
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return s;
}

void write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// In the child: runs the workload, writes "start" on `fd` when its timed section begins,
// then reports "ok\tms\tpeak_kb\tchecksum\tfirst_us\tlast_us" or "error\tmessage". Never
// returns.
[[noreturn]] void child_main(int fd, const Workload& workload, EngineKind kind,
                             const std::shared_ptr<Registry>& registry, const std::string& module,
                             const Sizes& sizes) {
  const long baseline_kb = read_hwm_kb();
  std::string report;
  // The store module: a fresh directory per run, for our database and SQLite's file.
  std::string dir;
  if (module == "store" || module == "sync-store") {
    std::string tmpl = (std::filesystem::temp_directory_path() / "quereus-bench-XXXXXX").string();
    if (mkdtemp(tmpl.data())) dir = tmpl;
  }
  try {
    if ((module == "store" || module == "sync-store") && dir.empty())
      throw BenchError("cannot make a temporary directory");
    std::unique_ptr<BenchEngine> engine =
        kind == EngineKind::kOurs ? open_quereus(registry, module, dir, g_sync)
                                  : open_sqlite(dir.empty() ? "" : dir + "/sqlite.db", g_sync);
    const WorkloadResult result = workload.run(*engine, sizes, [fd] { write_all(fd, "start\n"); });
    const long peak_kb = read_hwm_kb() - baseline_kb;
    char ms[64];
    std::snprintf(ms, sizeof ms, "%.6f", result.ms);
    char phases[128];
    std::snprintf(phases, sizeof phases, "%.6f\t%.6f", result.first_us, result.last_us);
    report = std::string("ok\t") + ms + "\t" + std::to_string(peak_kb) + "\t" + one_line(result.checksum) + "\t" +
             phases + "\n";
    // The engine is not destroyed: tearing down a large table is not part of any figure.
    engine.release();
  } catch (const std::exception& e) {
    report = "error\t" + one_line(e.what()) + "\n";
  } catch (...) {
    report = "error\tunknown exception\n";
  }
  if (!dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  write_all(fd, report);
  close(fd);
  _exit(0);
}

// Forks a child that reports on a pipe: returns the child's pid in the parent (`*fd` the
// read end) and 0 in the child (`*fd` the write end); -1 with `*error` set when the pipe
// or the fork failed.
pid_t fork_with_pipe(int* fd, std::string* error) {
  int fds[2];
  if (pipe(fds) != 0) {
    *error = "pipe failed";
    return -1;
  }
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    *error = "fork failed";
    return -1;
  }
  close(fds[pid == 0 ? 0 : 1]);
  *fd = fds[pid == 0 ? 1 : 0];
  return pid;
}

Outcome run_in_child(const Workload& workload, EngineKind kind, const std::shared_ptr<Registry>& registry,
                     const std::string& module, const Sizes& sizes, double timeout_s) {
  Outcome out;
  int fd = -1;
  const pid_t pid = fork_with_pipe(&fd, &out.message);
  if (pid < 0) return out;
  if (pid == 0) child_main(fd, workload, kind, registry, module, sizes);

  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  std::string text;
  bool timed_out = false;
  std::optional<Clock::time_point> started;  // when the child's timed section began
  char buf[4096];
  for (;;) {
    int wait_ms = -1;
    if (timeout_s > 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(std::min<long long>(left, 1000 * 60));
    }
    pollfd p{fd, POLLIN, 0};
    const int r = poll(&p, 1, wait_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) continue;  // re-check the deadline
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child is done (or died)
    text.append(buf, static_cast<size_t>(n));
    if (!started && text.rfind("start\n", 0) == 0) started = Clock::now();
  }
  close(fd);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }

  if (timed_out) {
    out.state = Outcome::State::kTimeout;
    // A lower bound for the timed section, or 0 when the setup itself ran out of time.
    out.ms = started ? std::chrono::duration<double, std::milli>(deadline - *started).count() : 0;
    return out;
  }
  if (WIFSIGNALED(status)) {
    out.message = std::string("crashed: ") + strsignal(WTERMSIG(status));
    return out;
  }
  if (text.rfind("start\n", 0) == 0) text.erase(0, 6);
  if (!text.empty() && text.back() == '\n') text.pop_back();
  std::vector<std::string> fields;
  std::stringstream in(text);
  for (std::string f; std::getline(in, f, '\t');) fields.push_back(f);
  if (fields.size() == 6 && fields[0] == "ok") {
    out.state = Outcome::State::kOk;
    out.ms = std::strtod(fields[1].c_str(), nullptr);
    out.peak_mb = std::strtod(fields[2].c_str(), nullptr) / 1024.0;
    out.checksum = fields[3];
    out.first_us = std::strtod(fields[4].c_str(), nullptr);
    out.last_us = std::strtod(fields[5].c_str(), nullptr);
  } else if (fields.size() >= 2 && fields[0] == "error") {
    out.message = fields[1];
  } else {
    out.message = "the child exited with status " + std::to_string(WEXITSTATUS(status)) + " and no report";
  }
  return out;
}

// Runs `repeat` fresh children; keeps the fastest time, the lowest first- and last-10%
// figures (each on its own) and the largest peak. The first
// failure, or a checksum that changes between runs, ends the series.
Outcome run_repeated(int repeat, const Workload& workload, EngineKind kind, const std::shared_ptr<Registry>& registry,
                     const std::string& module, const Sizes& sizes, double timeout_s) {
  Outcome best = run_in_child(workload, kind, registry, module, sizes, timeout_s);
  for (int i = 1; i < repeat && best.state == Outcome::State::kOk; ++i) {
    Outcome o = run_in_child(workload, kind, registry, module, sizes, timeout_s);
    if (o.state != Outcome::State::kOk) return o;
    if (o.checksum != best.checksum) {
      o.state = Outcome::State::kError;
      o.message = "result changed between runs: " + best.checksum + "; then " + o.checksum;
      return o;
    }
    best.ms = std::min(best.ms, o.ms);
    // Each flat-cost slice keeps its best run, as the time does: a slice of a few
    // thousand statements is easily hit by a stray preemption on a busy machine.
    best.first_us = std::min(best.first_us, o.first_us);
    best.last_us = std::min(best.last_us, o.last_us);
    best.peak_mb = std::max(best.peak_mb, o.peak_mb);
  }
  return best;
}

// ---------------------------------------------------------------- printing

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string ms_cell(const Outcome& o) {
  switch (o.state) {
    case Outcome::State::kOk:
      return fixed(o.ms, 1);
    case Outcome::State::kTimeout:
      return "TIMEOUT";
    default:
      return "ERROR";
  }
}

std::string peak_cell(const Outcome& o) { return o.state == Outcome::State::kOk ? fixed(o.peak_mb, 1) : "-"; }

// One line of the flat-cost table.
struct FlatLine {
  std::string workload, engine;
  Outcome outcome;
};

// Prints the flat-cost table; our engine's lines over the bar (or without a figure) go
// to `flat_failed`. SQLite's lines are for reference.
void print_flat_table(const std::vector<FlatLine>& lines, std::vector<std::string>* flat_failed) {
  std::cout << "\nflat_cost\tengine\tfirst10_us\tlast10_us\tlast/first\tbar\n";
  for (const FlatLine& l : lines) {
    const Outcome& o = l.outcome;
    std::string first = "-", last = "-", ratio = "-", verdict;
    if (o.state == Outcome::State::kOk && o.first_us > 0 && o.last_us >= 0) {
      const double r = o.last_us / o.first_us;
      first = fixed(o.first_us, 3);
      last = fixed(o.last_us, 3);
      ratio = fixed(r, 2);
      verdict = r <= kFlatBar ? "PASS" : "FAIL";
      if (l.engine == "ours" && r > kFlatBar) flat_failed->push_back(l.workload + " " + ratio + "x");
    } else {
      verdict = ms_cell(o);
      if (l.engine == "ours") flat_failed->push_back(l.workload + " " + verdict);
    }
    std::cout << l.workload << "\t" << l.engine << "\t" << first << "\t" << last << "\t" << ratio << "\t" << verdict
              << "\n";
  }
  std::cout << std::flush;
}

// Raw LevelDB doing the same key/value work as bulk_insert (fillseq: the same rows in one
// batch, as our one transaction), point_select (readrandom) — and fillrandom for reference.
// "fraction" is our throughput as a fraction of raw LevelDB's (leveldb_ms / ours_ms).
// Raw LevelDB in a fresh child process, as each of our runs is (a fresh heap: the first
// touch of the batch's memory costs the same on both sides). Throws BenchError.
RawLevelDbResult run_raw_leveldb_in_child(const std::string& dir, const Sizes& sizes) {
  int fd = -1;
  std::string error;
  const pid_t pid = fork_with_pipe(&fd, &error);
  if (pid < 0) throw BenchError(error);
  if (pid == 0) {
    std::string report;
    try {
      // A stored row of t (id, a, b of 20 characters) is about 40 bytes in the store's codec.
      RawLevelDbResult r = run_raw_leveldb(dir, sizes.rows, sizes.lookups, 40, g_sync);
      char line[128];
      std::snprintf(line, sizeof line, "ok\t%.6f\t%.6f\t%.6f", r.fillseq_ms, r.readrandom_ms, r.fillrandom_ms);
      report = line;
    } catch (const std::exception& e) {
      report = std::string("error\t") + one_line(e.what());
    }
    write_all(fd, report);
    close(fd);
    _exit(0);
  }
  std::string text;
  char buf[512];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::vector<std::string> f;
  std::stringstream in(text);
  for (std::string x; std::getline(in, x, '\t');) f.push_back(x);
  if (f.size() == 4 && f[0] == "ok") {
    RawLevelDbResult r;
    r.fillseq_ms = std::strtod(f[1].c_str(), nullptr);
    r.readrandom_ms = std::strtod(f[2].c_str(), nullptr);
    r.fillrandom_ms = std::strtod(f[3].c_str(), nullptr);
    return r;
  }
  if (f.size() >= 2 && f[0] == "error") throw BenchError(f[1]);
  throw BenchError("the raw LevelDB child exited with no report");
}

// With --repeat N, raw LevelDB runs N times too (each in a fresh child) and each
// operation reports its fastest time, as our workloads do.
void print_leveldb_table(const Sizes& sizes, int repeat, const std::map<std::string, double>& ours_ms,
                         std::vector<std::string>* below, bool* all_ok) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "quereus-bench-leveldb-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) {
    std::cerr << "# raw LevelDB: cannot make a temporary directory\n";
    *all_ok = false;
    return;
  }
  RawLevelDbResult raw;
  try {
    for (int i = 0; i < std::max(repeat, 1); ++i) {
      const std::string dir = tmpl + "/run" + std::to_string(i);
      std::filesystem::create_directories(dir);
      RawLevelDbResult r = run_raw_leveldb_in_child(dir, sizes);
      std::error_code gone;
      std::filesystem::remove_all(dir, gone);  // keep one run's files on disk at a time
      if (i == 0) {
        raw = r;
        continue;
      }
      raw.fillseq_ms = std::min(raw.fillseq_ms, r.fillseq_ms);
      raw.readrandom_ms = std::min(raw.readrandom_ms, r.readrandom_ms);
      raw.fillrandom_ms = std::min(raw.fillrandom_ms, r.fillrandom_ms);
    }
  } catch (const std::exception& e) {
    std::cerr << "# raw LevelDB: " << e.what() << "\n";
    *all_ok = false;
  }
  std::error_code ec;
  std::filesystem::remove_all(tmpl, ec);
  std::cout << "\nleveldb_op\tleveldb_ms\tworkload\tours_ms\tfraction\tbar (>= " << fixed(kLevelDbBar, 2) << ")\n";
  struct Row {
    const char* op;
    double ms;
    const char* workload;
  };
  for (const Row& r : {Row{"fillseq", raw.fillseq_ms, "bulk_insert"}, Row{"readrandom", raw.readrandom_ms, "point_select"},
                       Row{"fillrandom", raw.fillrandom_ms, ""}}) {
    std::string ours = "-", fraction = "-", verdict = "-";
    auto it = *r.workload ? ours_ms.find(r.workload) : ours_ms.end();
    if (it != ours_ms.end() && it->second > 0 && r.ms > 0) {
      double f = r.ms / it->second;
      ours = fixed(it->second, 1);
      fraction = fixed(f, 2);
      verdict = f >= kLevelDbBar ? "PASS" : "FAIL";
      if (f < kLevelDbBar) below->push_back(std::string(r.workload) + " " + fraction);
    }
    std::cout << r.op << "\t" << fixed(r.ms, 1) << "\t" << (*r.workload ? r.workload : "-") << "\t" << ours << "\t"
              << fraction << "\t" << verdict << "\n";
  }
  std::cout << std::flush;
}

}  // namespace

int main(int argc, char** argv) {
  std::string module = "memory", plugin_dir;
  std::vector<std::string> names;
  double scale = 1.0, timeout_s = 300;
  int repeat = 1;
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (arg == "--list") {
      list = true;
    } else if (arg == "--module" || arg == "--workload" || arg == "--scale" || arg == "--plugin-dir" ||
               arg == "--timeout" || arg == "--repeat" || arg == "--sync" || arg == "--clock") {
      const char* v = value();
      if (!v) return usage_error(arg + " needs a value");
      if (arg == "--clock") {
        if (std::string(v) != "wall" && std::string(v) != "cpu") return usage_error("--clock takes wall or cpu");
        set_cpu_clock(std::string(v) == "cpu");
      } else if (arg == "--module") {
        module = v;
      } else if (arg == "--sync") {
        if (std::string(v) != "on" && std::string(v) != "off") return usage_error("--sync takes on or off");
        g_sync = std::string(v) == "on";
      } else if (arg == "--workload") {
        names.push_back(v);
      } else if (arg == "--plugin-dir") {
        plugin_dir = v;
      } else if (arg == "--repeat") {
        char* end = nullptr;
        const long n = std::strtol(v, &end, 10);
        if (*end || n < 1 || n > 1000) return usage_error("bad --repeat '" + std::string(v) + "'");
        repeat = static_cast<int>(n);
      } else {
        char* end = nullptr;
        const double d = std::strtod(v, &end);
        if (*end || !(arg == "--scale" ? d > 0 : d >= 0)) return usage_error("bad " + arg + " '" + v + "'");
        (arg == "--scale" ? scale : timeout_s) = d;
      }
    } else {
      return usage_error("unknown argument " + arg);
    }
  }

  if (list) {
    for (const Workload& w : workloads()) std::cout << w.name << "\t" << w.description << "\n";
    return 0;
  }
  std::vector<const Workload*> selected;
  if (names.empty()) {
    for (const Workload& w : workloads()) selected.push_back(&w);
  } else {
    for (const std::string& n : names) {
      const Workload* found = nullptr;
      for (const Workload& w : workloads())
        if (n == w.name) found = &w;
      if (!found) return usage_error("no workload named '" + n + "' (see --list)");
      if (std::find(selected.begin(), selected.end(), found) == selected.end()) selected.push_back(found);
    }
  }

  // Load the plugins once, before forking, as the CLI does (host/cli/main.cc).
  HostOptions options;
  options.plugin_dir = plugin_dir;
  const bool persistent = module == "store" || module == "sync-store";
  if (persistent) {
    PluginEntry store;
    store.path = "store";
    store.origin = "quereus-bench --module " + module;
    options.plugins.push_back(store);
  }
  if (module == "sync-store") {  // compared with the store on the same work (replication overhead)
    PluginEntry sync;
    sync.path = "sync-store";
    sync.origin = "quereus-bench --module sync-store";
    options.plugins.push_back(sync);
  }
  // The auxiliary-access workloads store a member in the trigram test plugin.
  for (const Workload* w : selected)
    if (std::string_view(w->name).starts_with("decomp_aux_read")) {
      PluginEntry trigram;
      trigram.path = "trigram";
      trigram.origin = "quereus-bench --workload " + std::string(w->name);
      options.plugins.push_back(trigram);
      break;
    }
  if (Status s = apply_logging(options.logging); !s.ok()) {
    std::cerr << "Error: " << s.to_string() << "\n";
    return 2;
  }
  std::shared_ptr<Registry> registry;
  std::unique_ptr<PluginLoader> loader;
  if (Status s = load_host_plugins(options, &registry, &loader); !s.ok()) {
    std::cerr << "Error: " << s.to_string() << "\n";
    return 2;
  }
  try {
    // Refuses an unknown module before any child runs.
    if (persistent) {
      std::string tmpl = (std::filesystem::temp_directory_path() / "quereus-bench-XXXXXX").string();
      if (!mkdtemp(tmpl.data())) throw BenchError("cannot make a temporary directory");
      open_quereus(registry, module, tmpl, g_sync);
      std::filesystem::remove_all(tmpl);
    } else {
      open_quereus(registry, module);
    }
  } catch (const std::exception& e) {
    std::cerr << "Error: " << e.what() << "\n";
    return 2;
  }

  const Sizes sizes = Sizes::at(scale);
  std::cerr << "# quereus-bench: scale " << scale << " (t " << sizes.rows << " rows, d " << sizes.dim_rows
            << " rows, " << sizes.lookups << " lookups, " << sizes.ranges << " ranges of " << sizes.range_width
            << ", " << sizes.groups << " groups, " << sizes.writes << " writes, flat " << sizes.flat_txn
            << " in one transaction / " << sizes.flat_autocommit << " autocommit), module " << module << ", SQLite " << sqlite3_libversion()
            << ", timeout " << timeout_s << " s, repeat " << repeat << "\n";
  std::cout << "workload\tmodule\tours_ms\tsqlite_ms\tratio\tours_peak_mb\tsqlite_peak_mb\n" << std::flush;

  bool all_ok = true;
  std::map<std::string, double> ours_ms;  // per workload, for the raw LevelDB table
  std::vector<std::string> over_bar, failed;
  std::vector<FlatLine> flat_lines;
  struct Replication {
    std::string name;
    Outcome sync, plain;
  };
  std::vector<Replication> replication;
  for (const Workload* w : selected) {
    const Outcome ours = run_repeated(repeat, *w, EngineKind::kOurs, registry, module, sizes, timeout_s);
    const Outcome lite = run_repeated(repeat, *w, EngineKind::kSqlite, registry, module, sizes, timeout_s);
    std::string ratio = "-";
    const bool both_ok = ours.state == Outcome::State::kOk && lite.state == Outcome::State::kOk;
    if (ours.state == Outcome::State::kError)
      std::cerr << "ERROR: " << w->name << ": ours: " << ours.message << "\n";
    if (ours.state == Outcome::State::kTimeout)
      std::cerr << "TIMEOUT: " << w->name << ": ours: killed after " << timeout_s << " s, "
                << (ours.ms > 0 ? fixed(ours.ms, 1) + " ms into the timed section" : "still in setup") << "\n";
    if (lite.state == Outcome::State::kError)
      std::cerr << "ERROR: " << w->name << ": sqlite: " << lite.message << "\n";
    if (lite.state == Outcome::State::kTimeout)
      std::cerr << "TIMEOUT: " << w->name << ": sqlite: killed after " << timeout_s << " s, "
                << (lite.ms > 0 ? fixed(lite.ms, 1) + " ms into the timed section" : "still in setup") << "\n";
    if (both_ok && ours.checksum != lite.checksum) {
      std::cerr << "MISMATCH: " << w->name << ": ours " << ours.checksum << "; sqlite " << lite.checksum << "\n";
      ratio = "MISMATCH";
      all_ok = false;
      failed.push_back(w->name);
    } else if (both_ok) {
      const double r = lite.ms > 0 ? ours.ms / lite.ms : 0;
      ratio = fixed(r, 2);
      if (r > kBar) over_bar.push_back(std::string(w->name) + " " + ratio + "x");
    } else {
      all_ok = false;
      failed.push_back(w->name);
      if (ours.state == Outcome::State::kTimeout && lite.state == Outcome::State::kOk && lite.ms > 0 &&
          ours.ms > 0) {
        ratio = ">" + fixed(ours.ms / lite.ms, 2);  // a lower bound
        over_bar.push_back(std::string(w->name) + " " + ratio + "x");
      }
    }
    std::cout << w->name << "\t" << module << "\t" << ms_cell(ours) << "\t" << ms_cell(lite) << "\t" << ratio << "\t"
              << peak_cell(ours) << "\t" << peak_cell(lite) << "\n"
              << std::flush;
    if (w->flat_cost) {
      flat_lines.push_back({w->name, "ours", ours});
      flat_lines.push_back({w->name, "sqlite", lite});
    }
    if (ours.state == Outcome::State::kOk) ours_ms[w->name] = ours.ms;
    if (module == "sync-store") {
      const Outcome plain = run_repeated(repeat, *w, EngineKind::kOurs, registry, "store", sizes, timeout_s);
      if (plain.state == Outcome::State::kOk && ours.state == Outcome::State::kOk && plain.checksum != ours.checksum) {
        std::cerr << "MISMATCH: " << w->name << ": sync-store " << ours.checksum << "; store " << plain.checksum << "\n";
        all_ok = false;
      }
      replication.push_back({w->name, ours, plain});
    }
  }
  if (module == "sync-store") {
    // The cost of replication: the same workload on sync-store (capture in the commit
    // batch) against the store alone. Bar: 1.3x (cr-sqlite publishes about 2.5x).
    std::cout << "\nworkload\tsync_store_ms\tstore_ms\toverhead\tbar (<= 1.30)\n";
    for (const auto& r : replication) {
      std::string ratio = "-", verdict = "-";
      if (r.sync.state == Outcome::State::kOk && r.plain.state == Outcome::State::kOk && r.plain.ms > 0) {
        const double x = r.sync.ms / r.plain.ms;
        ratio = fixed(x, 2);
        verdict = x <= 1.3 ? "PASS" : "FAIL";
      }
      std::cout << r.name << "\t" << ms_cell(r.sync) << "\t" << ms_cell(r.plain) << "\t" << ratio << "\t" << verdict
                << "\n";
    }
    std::cout << std::flush;
  }
  std::vector<std::string> below_leveldb;
  if (module == "store") print_leveldb_table(sizes, repeat, ours_ms, &below_leveldb, &all_ok);
  std::vector<std::string> flat_failed;
  if (!flat_lines.empty()) print_flat_table(flat_lines, &flat_failed);
  if (module == "store") {
    if (below_leveldb.empty()) {
      std::cerr << "# raw LevelDB: every compared workload at >= " << kLevelDbBar * 100 << "% of raw LevelDB\n";
    } else {
      std::cerr << "# below " << kLevelDbBar * 100 << "% of raw LevelDB:";
      for (const std::string& s : below_leveldb) std::cerr << " " << s << ";";
      std::cerr << "\n";
    }
  }
  if (!failed.empty()) {
    std::cerr << "# without a verified figure:";
    for (const std::string& s : failed) std::cerr << " " << s << ";";
    std::cerr << "\n";
  }
  if (over_bar.empty()) {
    if (failed.empty()) std::cerr << "# every workload is within " << kBar << "x of SQLite\n";
  } else {
    std::cerr << "# slower than " << kBar << "x SQLite:";
    for (const std::string& s : over_bar) std::cerr << " " << s << ";";
    std::cerr << "\n";
  }
  if (!flat_lines.empty()) {
    if (flat_failed.empty()) {
      std::cerr << "# flat cost: PASS (our last 10% of statements within " << kFlatBar << "x of the first 10%)\n";
    } else {
      std::cerr << "# flat cost: FAIL (our last 10% over " << kFlatBar << "x the first 10%, or no figure):";
      for (const std::string& s : flat_failed) std::cerr << " " << s << ";";
      std::cerr << "\n";
    }
  }
  // The bars (3x SQLite, flat cost) are reported, not enforced: the exit status reflects
  // errors, crashes, timeouts and mismatches only.
  return all_ok ? 0 : 1;
}
