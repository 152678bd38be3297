// Plugin images: read once, hash, validate the ELF, load from a sealed memfd.
#include "plugin/plugin_image.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <boost/dll/shared_library.hpp>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>

namespace quereus {
namespace {

static_assert(sizeof(void*) == 8, "the ELF checks are written for 64-bit hosts");
#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
#else
#error "PluginImage: unknown host machine"
#endif
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the ELF checks assume a little-endian host");

// The memfd flag that asks for an executable memfd on kernels that have the noexec
// policy (6.3+); older kernels refuse unknown flags, so it is retried without.
#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

std::string errno_text(int e) { return std::strerror(e); }

// [off, off + len) lies within [0, size), without overflow.
bool within(uint64_t off, uint64_t len, uint64_t size) { return off <= size && len <= size - off; }

Status malformed(const std::string& what) {
  return Status(StatusCode::kPlugin, "not a plugin: malformed library: " + what);
}

// Reads a T at `off` of `bytes` (unaligned-safe). REQUIRES: within(off, sizeof(T), size).
template <class T>
T read_at(const std::string& bytes, uint64_t off) {
  T out;
  std::memcpy(&out, bytes.data() + off, sizeof(T));
  return out;
}

// The ELF checks, over one image. Each returns "" or the first problem.
class ElfChecker {
 public:
  explicit ElfChecker(const std::string& bytes) : b_(bytes), size_(bytes.size()) {}

  std::string check(std::vector<std::string>* exports) {
    if (size_ < sizeof(Elf64_Ehdr)) return "shorter than an ELF header (" + std::to_string(size_) + " bytes)";
    if (std::memcmp(b_.data(), ELFMAG, SELFMAG) != 0) return "not an ELF file (bad magic)";
    eh_ = read_at<Elf64_Ehdr>(b_, 0);
    if (eh_.e_ident[EI_CLASS] != ELFCLASS64) return "not a 64-bit ELF file";
    if (eh_.e_ident[EI_DATA] != ELFDATA2LSB) return "not a little-endian ELF file";
    if (eh_.e_ident[EI_VERSION] != EV_CURRENT || eh_.e_version != EV_CURRENT) return "unknown ELF version";
    if (eh_.e_type != ET_DYN) return "not a shared object (ELF type " + std::to_string(eh_.e_type) + ")";
    if (eh_.e_machine != kHostMachine)
      return "built for another machine (ELF machine " + std::to_string(eh_.e_machine) + ")";
    if (eh_.e_ehsize != sizeof(Elf64_Ehdr)) return "bad ELF header size";
    if (std::string p = program_headers(); !p.empty()) return p;
    if (std::string p = section_headers(exports); !p.empty()) return p;
    return dynamic();
  }

 private:
  std::string program_headers() {
    if (eh_.e_phnum == 0 || eh_.e_phentsize != sizeof(Elf64_Phdr)) return "no program headers";
    if (!within(eh_.e_phoff, uint64_t{eh_.e_phnum} * sizeof(Elf64_Phdr), size_))
      return "the program headers lie past the end of the file";
    int dynamics = 0;
    for (uint16_t i = 0; i < eh_.e_phnum; ++i) {
      auto ph = read_at<Elf64_Phdr>(b_, eh_.e_phoff + uint64_t{i} * sizeof(Elf64_Phdr));
      if (ph.p_type == PT_LOAD) {
        if (!within(ph.p_offset, ph.p_filesz, size_))
          return "segment " + std::to_string(i) + " lies past the end of the file (truncated?)";
        if (ph.p_filesz > ph.p_memsz) return "segment " + std::to_string(i) + " is larger in the file than in memory";
        if (ph.p_vaddr + ph.p_memsz < ph.p_vaddr) return "segment " + std::to_string(i) + " wraps the address space";
        loads_.push_back(ph);
      } else if (ph.p_type == PT_TLS) {
        has_tls_ = true;
      } else if (ph.p_type == PT_DYNAMIC) {
        ++dynamics;
        dyn_ = ph;
      }
    }
    if (loads_.empty()) return "no loadable segment";
    if (dynamics != 1) return "not exactly one dynamic segment";
    if (!within(dyn_.p_offset, dyn_.p_filesz, size_)) return "the dynamic segment lies past the end of the file";
    if (!file_range(dyn_.p_vaddr, dyn_.p_filesz)) return "the dynamic segment is not inside a loaded segment";
    return "";
  }

  // The file offset of the loaded bytes [vaddr, vaddr + len), when they are all backed by
  // one PT_LOAD's file bytes.
  std::optional<uint64_t> file_range(uint64_t vaddr, uint64_t len) const {
    for (const Elf64_Phdr& ph : loads_)
      if (vaddr >= ph.p_vaddr && within(vaddr - ph.p_vaddr, len, ph.p_filesz))
        return ph.p_offset + (vaddr - ph.p_vaddr);
    return std::nullopt;
  }
  // [vaddr, vaddr + len) lies inside one PT_LOAD's memory image.
  bool in_memory(uint64_t vaddr, uint64_t len) const {
    for (const Elf64_Phdr& ph : loads_)
      if (vaddr >= ph.p_vaddr && within(vaddr - ph.p_vaddr, len, ph.p_memsz)) return true;
    return false;
  }

  std::string section_headers(std::vector<std::string>* exports) {
    if (eh_.e_shnum == 0) return "";  // stripped of sections: the dynamic checks still apply
    if (eh_.e_shentsize != sizeof(Elf64_Shdr)) return "bad section header size";
    if (!within(eh_.e_shoff, uint64_t{eh_.e_shnum} * sizeof(Elf64_Shdr), size_))
      return "the section headers lie past the end of the file (truncated?)";
    if (eh_.e_shstrndx != SHN_UNDEF && eh_.e_shstrndx >= eh_.e_shnum) return "bad section name table index";
    std::vector<Elf64_Shdr> sh(eh_.e_shnum);
    for (uint16_t i = 0; i < eh_.e_shnum; ++i) {
      sh[i] = read_at<Elf64_Shdr>(b_, eh_.e_shoff + uint64_t{i} * sizeof(Elf64_Shdr));
      if (sh[i].sh_type != SHT_NOBITS && sh[i].sh_type != SHT_NULL && !within(sh[i].sh_offset, sh[i].sh_size, size_))
        return "section " + std::to_string(i) + " lies past the end of the file (truncated?)";
    }
    for (uint16_t i = 0; i < eh_.e_shnum; ++i) {
      if (sh[i].sh_type != SHT_DYNSYM) continue;
      if (sh[i].sh_entsize != sizeof(Elf64_Sym) || sh[i].sh_link >= eh_.e_shnum ||
          sh[i].sh_size % sizeof(Elf64_Sym) != 0)
        return "bad dynamic symbol table";
      const Elf64_Shdr& str = sh[sh[i].sh_link];
      if (str.sh_type != SHT_STRTAB || str.sh_size == 0 || b_[str.sh_offset + str.sh_size - 1] != '\0')
        return "bad dynamic string table";
      exports_known_ = true;
      section_nsyms_ = std::max<uint64_t>(section_nsyms_, sh[i].sh_size / sizeof(Elf64_Sym));
      for (uint64_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); ++k) {
        auto sym = read_at<Elf64_Sym>(b_, sh[i].sh_offset + k * sizeof(Elf64_Sym));
        if (sym.st_name >= str.sh_size) return "a dynamic symbol's name lies outside its string table";
        if (sym.st_shndx == SHN_UNDEF) continue;
        exports->emplace_back(b_.data() + str.sh_offset + sym.st_name);
      }
    }
    std::sort(exports->begin(), exports->end());
    return "";
  }

  std::string dynamic() {
    const uint64_t n = dyn_.p_filesz / sizeof(Elf64_Dyn);
    std::map<int64_t, uint64_t> one;  // tag → value of the tags read once
    std::vector<uint64_t> string_offsets;
    bool terminated = false;
    for (uint64_t i = 0; i < n && !terminated; ++i) {
      auto d = read_at<Elf64_Dyn>(b_, dyn_.p_offset + i * sizeof(Elf64_Dyn));
      switch (d.d_tag) {
        case DT_NULL: terminated = true; break;
        case DT_NEEDED: case DT_SONAME: case DT_RPATH: case DT_RUNPATH: string_offsets.push_back(d.d_un.d_val); break;
        default: one[d.d_tag] = d.d_un.d_val; break;
      }
    }
    if (!terminated) return "the dynamic table is not terminated";
    auto has = [&](int64_t tag) { return one.count(tag) != 0; };
    // Tables the dynamic loader reads from the loaded image: in the file's bytes.
    if (!has(DT_STRTAB) || !has(DT_SYMTAB) || !has(DT_STRSZ)) return "no dynamic symbol or string table";
    auto str = file_range(one[DT_STRTAB], one[DT_STRSZ]);
    if (!str || one[DT_STRSZ] == 0) return "the dynamic string table lies outside the file";
    for (uint64_t off : string_offsets)
      if (off >= one[DT_STRSZ] || std::memchr(b_.data() + *str + off, '\0', one[DT_STRSZ] - off) == nullptr)
        return "a dynamic entry names a string outside the string table";
    // The number of dynamic symbols, as the loader's hash tables index them.
    uint64_t nsyms = 0;
    if (has(DT_HASH)) {
      auto h = file_range(one[DT_HASH], 8);
      if (!h) return "the symbol hash table lies outside the file";
      const uint64_t nbucket = read_at<uint32_t>(b_, *h);
      nsyms = read_at<uint32_t>(b_, *h + 4);
      auto table = file_range(one[DT_HASH], (2 + nbucket + nsyms) * 4);
      if (!table) return "the symbol hash table lies outside the file";
      for (uint64_t k = 0; k < nbucket + nsyms; ++k)
        if (read_at<uint32_t>(b_, *table + 8 + 4 * k) >= std::max<uint64_t>(nsyms, 1))
          return "the symbol hash table names a symbol past the table";
    }
    if (has(DT_GNU_HASH)) {
      std::string p = gnu_hash(one[DT_GNU_HASH], &nsyms);
      if (!p.empty()) return p;
    }
    if (!has(DT_HASH) && !has(DT_GNU_HASH)) return "no symbol hash table";
    // A GNU hash table does not count the unhashed symbols after its last bucket's chain
    // when every symbol is undefined: the section header, when there is one, does.
    nsyms = std::max(nsyms, section_nsyms_);
    auto symtab = file_range(one[DT_SYMTAB], std::max<uint64_t>(nsyms, 1) * sizeof(Elf64_Sym));
    if (!symtab) return "the dynamic symbol table lies outside the file";
    for (uint64_t k = 0; k < nsyms; ++k) {
      auto sym = read_at<Elf64_Sym>(b_, *symtab + k * sizeof(Elf64_Sym));
      if (sym.st_name >= one[DT_STRSZ]) return "a dynamic symbol's name lies outside the string table";
      const int type = ELF64_ST_TYPE(sym.st_info);
      if (type == STT_TLS && sym.st_shndx != SHN_UNDEF && !has_tls_)
        return "a thread-local symbol without a TLS segment";
      // A defined symbol's address (an IFUNC's resolver is even called while loading).
      if (sym.st_shndx != SHN_UNDEF && sym.st_shndx != SHN_ABS && type != STT_TLS && !in_memory(sym.st_value, 0))
        return "a dynamic symbol's address lies outside the loaded segments";
    }
    nsyms_ = std::max<uint64_t>(nsyms, 1);
    const std::pair<int64_t, int64_t> tables[] = {{DT_RELA, DT_RELASZ}, {DT_REL, DT_RELSZ}, {DT_JMPREL, DT_PLTRELSZ},
                                                  {DT_INIT_ARRAY, DT_INIT_ARRAYSZ}, {DT_FINI_ARRAY, DT_FINI_ARRAYSZ},
                                                  {DT_PREINIT_ARRAY, DT_PREINIT_ARRAYSZ}};
    for (auto [addr, sz] : tables) {
      if (has(addr) != has(sz)) return "a dynamic table without its size or a size without its table";
      if (!has(addr)) continue;
      if (addr == DT_INIT_ARRAY || addr == DT_FINI_ARRAY || addr == DT_PREINIT_ARRAY) {
        if (!in_memory(one[addr], one[sz])) return "an init or fini array lies outside the loaded segments";
        continue;
      }
      if (addr == DT_JMPREL && one[DT_PLTREL] != DT_RELA && one[DT_PLTREL] != DT_REL)
        return "an unknown PLT relocation kind";
      auto rel = file_range(one[addr], one[sz]);
      if (!rel) return "a relocation table lies outside the file";
      if (std::string p = relocations(*rel, one[sz], addr == DT_REL || (addr == DT_JMPREL && one[DT_PLTREL] == DT_REL));
          !p.empty())
        return p;
    }
    for (int64_t tag : {DT_INIT, DT_FINI})
      if (has(tag) && !in_memory(one[tag], 1)) return "an init or fini function lies outside the loaded segments";
    if (has(DT_VERSYM) && !file_range(one[DT_VERSYM], nsyms * 2)) return "the symbol version table lies outside the file";
    for (int64_t tag : {int64_t{DT_VERDEF}, int64_t{DT_VERNEED}})
      if (has(tag) && !file_range(one[tag], 16)) return "a symbol version table lies outside the file";
    return "";
  }

  // Checks the GNU hash table at `vaddr` (header, bloom filter, buckets, and every chain
  // within the file) and raises *nsyms to the number of symbols it reaches.
  std::string gnu_hash(uint64_t vaddr, uint64_t* nsyms) {
    const char* bad = "the GNU hash table lies outside the file";
    auto h = file_range(vaddr, 16);
    if (!h) return bad;
    const uint64_t nbuckets = read_at<uint32_t>(b_, *h), symoffset = read_at<uint32_t>(b_, *h + 4),
                   bloom = read_at<uint32_t>(b_, *h + 8);
    const uint64_t buckets_vaddr = vaddr + 16 + bloom * 8;
    auto buckets = file_range(buckets_vaddr, nbuckets * 4);
    if (nbuckets == 0 || bloom == 0 || !buckets) return bad;
    const uint64_t chains_vaddr = buckets_vaddr + nbuckets * 4;
    uint64_t count = std::max(*nsyms, symoffset);
    for (uint64_t k = 0; k < nbuckets; ++k) {
      uint64_t i = read_at<uint32_t>(b_, *buckets + 4 * k);
      if (i == 0) continue;
      if (i < symoffset) return "the GNU hash table names a symbol before its first";
      for (;; ++i) {  // each step reads 4 more bytes of the file: bounded by its size
        auto link = file_range(chains_vaddr + (i - symoffset) * 4, 4);
        if (!link) return bad;
        if (read_at<uint32_t>(b_, *link) & 1) break;
      }
      count = std::max(count, i + 1);
    }
    *nsyms = count;
    return "";
  }

  // Every relocation of the table at file offset `off` writes inside the loaded segments.
  std::string relocations(uint64_t off, uint64_t size, bool rel) {
    const uint64_t entry = rel ? sizeof(Elf64_Rel) : sizeof(Elf64_Rela);
    if (size % entry != 0) return "a relocation table of a partial entry";
    for (uint64_t k = 0; k < size / entry; ++k) {
      const uint64_t target = read_at<uint64_t>(b_, off + k * entry);  // r_offset leads both forms
      if (!in_memory(target, 1)) return "a relocation writes outside the loaded segments";
      const uint64_t info = read_at<uint64_t>(b_, off + k * entry + 8);
      if (ELF64_R_SYM(info) >= nsyms_) return "a relocation names a symbol past the symbol table";
    }
    return "";
  }

 public:
  bool exports_known_ = false;

 private:
  const std::string& b_;
  const uint64_t size_;
  Elf64_Ehdr eh_{};
  std::vector<Elf64_Phdr> loads_;
  Elf64_Phdr dyn_{};
  uint64_t nsyms_ = 0;
  bool has_tls_ = false;
  uint64_t section_nsyms_ = 0;  // from the SHT_DYNSYM section header (0: none)
};

// A loaded library that keeps the memfd it was loaded from open, so /proc/self/fd/<n>
// (the name the dynamic loader and symbolizers know it by) stays valid while it lives.
struct LoadedImage {
  struct Fd {
    int fd = -1;
    ~Fd() {
      if (fd >= 0) ::close(fd);
    }
  } fd;                             // destroyed after the library is unloaded
  boost::dll::shared_library lib;  // unloaded first
};

// Libraries loaded by this process, by the SHA-256 of their bytes: the same bytes are
// mapped once, as dlopen of one path used to share one handle. Entries are never
// released: a library loaded as /proc/self/fd/<n> must keep that descriptor (and so its
// name) for as long as the dynamic loader may hold it, and glibc keeps most C++ plugins
// after dlclose anyway (GNU unique symbols make them RTLD_NODELETE). Were the descriptor
// closed, a later memfd reusing its number would be answered by dlopen with the stale
// library of that name.
std::mutex g_cache_mutex;
std::map<std::string, PluginLibrary>& cache() {
  static auto* libraries = new std::map<std::string, PluginLibrary>();  // never destroyed: see above
  return *libraries;
}

}  // namespace

Status PluginImage::read(const std::string& path, PluginImage* out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status(StatusCode::kPlugin, "cannot open the library file: " + errno_text(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Status(StatusCode::kPlugin, "cannot read the library file: " + errno_text(errno));
  if (!S_ISREG(st.st_mode)) return Status(StatusCode::kPlugin, "the library is not a regular file");
  if (static_cast<uint64_t>(st.st_size) > kMaxBytes)
    return Status(StatusCode::kPlugin, "the library file is larger than " + std::to_string(kMaxBytes) + " bytes");
  PluginImage image;
  // Read to the end (the size may change while reading; what was read is the image).
  image.bytes_.resize(static_cast<size_t>(st.st_size) + 1);
  size_t have = 0;
  for (;;) {
    if (have == image.bytes_.size()) {
      if (image.bytes_.size() > kMaxBytes)
        return Status(StatusCode::kPlugin, "the library file is larger than " + std::to_string(kMaxBytes) + " bytes");
      image.bytes_.resize(image.bytes_.size() * 2);
    }
    ssize_t n = ::read(fd, image.bytes_.data() + have, image.bytes_.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status(StatusCode::kPlugin, "cannot read the library file: " + errno_text(errno));
    if (n == 0) break;
    have += static_cast<size_t>(n);
  }
  image.bytes_.resize(have);
  image.sha256_ = sha256_hex(image.bytes_);
  *out = std::move(image);
  return Status::Ok();
}

Status PluginImage::validate() {
  ElfChecker checker(bytes_);
  exports_.clear();
  std::string problem = checker.check(&exports_);
  if (!problem.empty()) return malformed(problem);
  if (!checker.exports_known_) exports_.clear();
  exports_known_ = checker.exports_known_;
  valid_ = true;
  return Status::Ok();
}

bool PluginImage::exports(const std::string& name) const {
  return !exports_known_ || std::binary_search(exports_.begin(), exports_.end(), name);
}

Status PluginImage::load(PluginLibrary* out) {
  if (!valid_) return Status(StatusCode::kInternal, "PluginImage::load before validate");
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  if (auto it = cache().find(sha256_); it != cache().end()) {
    *out = it->second;
    return Status::Ok();
  }
  auto holder = std::make_shared<LoadedImage>();
  const unsigned flags = MFD_CLOEXEC | MFD_ALLOW_SEALING;
  holder->fd.fd = ::memfd_create("quereus-plugin", flags | MFD_EXEC);
  if (holder->fd.fd < 0 && errno == EINVAL) holder->fd.fd = ::memfd_create("quereus-plugin", flags);
  if (holder->fd.fd < 0)
    return Status(StatusCode::kPlugin, "cannot make an in-memory copy of the library: " + errno_text(errno));
  const int fd = holder->fd.fd;
  for (size_t done = 0; done < bytes_.size();) {
    ssize_t n = ::write(fd, bytes_.data() + done, bytes_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status(StatusCode::kPlugin, "cannot make an in-memory copy of the library: " + errno_text(errno));
    done += static_cast<size_t>(n);
  }
  // Sealed: nobody, this process included, can change, shrink or grow the copy now.
  // F_SEAL_WRITE fails with EBUSY while the kernel still holds transient references to
  // pages just written (it waits for them only briefly, and a loaded machine can outlast
  // that): retry for up to about a second before giving up.
  int sealed = -1, seal_errno = 0;
  for (int attempt = 0; attempt < 50; ++attempt) {
    sealed = ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
    seal_errno = errno;
    if (sealed == 0 || seal_errno != EBUSY) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (sealed != 0)
    return Status(StatusCode::kPlugin, "cannot seal the in-memory copy of the library: " + errno_text(seal_errno));
  boost::dll::fs::error_code ec;
  holder->lib.load(boost::dll::fs::path("/proc/self/fd/" + std::to_string(fd)), ec,
                   boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  if (ec) {
    const char* why = dlerror();
    return Status(StatusCode::kPlugin, "not a plugin: cannot load the library: " + std::string(why ? why : ec.message()));
  }
  PluginLibrary lib(holder, &holder->lib);
  cache()[sha256_] = lib;
  *out = std::move(lib);
  return Status::Ok();
}

std::string PluginImage::sha256_hex(const std::string& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr) != 1)
    throw Error(StatusCode::kInternal, "SHA-256 failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) {
    hex += kHex[md[i] >> 4];
    hex += kHex[md[i] & 15];
  }
  return hex;
}

}  // namespace quereus
