// Compiled functions by request (manifest.h): the manifest `<key>.json` of the compile cache
// names the object (`<object key>.so`) and describes each function as the host needs it.
#include "codegen/manifest.h"

#include <elf.h>
#include <link.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <nlohmann/json.hpp>

#include "codegen/compiler.h"
#include "codegen/thread_team.h"

namespace cot::codegen {

using nlohmann::json;

namespace {

// What identifies this build of the library: the GNU build ID the linker wrote into the object
// that holds this code (a hash of its contents), found by walking the loaded objects for the
// one whose segments contain this function. Without one, the object's file (the main program
// through /proc/self/exe), its size, modification time and inode. Empty when neither is
// known: then nothing is found or remembered by request.
struct BuildSearch {
  uintptr_t address = 0;
  std::string id;    // the build ID in hex
  std::string path;  // the object's file; empty for the main program
  bool found = false;
};

int find_build(struct dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<BuildSearch*>(data);
  bool contains = false;
  for (int k = 0; k < info->dlpi_phnum && !contains; ++k) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[k];
    const uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    contains =
        ph.p_type == PT_LOAD && search->address >= begin && search->address < begin + ph.p_memsz;
  }
  if (!contains) return 0;
  search->found = true;
  search->path = info->dlpi_name != nullptr ? info->dlpi_name : "";
  for (int k = 0; k < info->dlpi_phnum; ++k) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[k];
    if (ph.p_type != PT_NOTE) continue;
    const auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    const unsigned char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
      const unsigned char* name = p + sizeof(ElfW(Nhdr));
      const unsigned char* desc = name + ((note->n_namesz + 3) & ~3u);
      const unsigned char* next = desc + ((note->n_descsz + 3) & ~3u);
      if (next > end) break;
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
          std::memcmp(name, "GNU", 4) == 0) {
        static const char* const kHex = "0123456789abcdef";
        for (uint32_t b = 0; b < note->n_descsz; ++b) {
          search->id += kHex[desc[b] >> 4];
          search->id += kHex[desc[b] & 15];
        }
        return 1;
      }
      p = next;
    }
  }
  return 1;
}

std::string build_identity() {
  BuildSearch search;
  search.address = reinterpret_cast<uintptr_t>(&find_compiled);
  dl_iterate_phdr(find_build, &search);
  if (!search.found) return "";
  if (!search.id.empty()) return "build-id " + search.id;
  const std::string file = search.path.empty() ? "/proc/self/exe" : search.path;
  struct stat st {};
  if (file[0] != '/' || stat(file.c_str(), &st) != 0) return "";
  return "file " + file + " " + std::to_string(st.st_size) + " " +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + " " +
         std::to_string(st.st_ino);
}

// The manifest's name for `request` under `compiler`, or empty when there is none.
std::string manifest_name(const Compiler& compiler, const std::string& request,
                          const NativeOptions& options) {
  const std::string build = build_identity();
  if (build.empty()) return "";
  return compiler.key_of("cotangent compiled functions v1\nbuild " + build +
                         "\nmax_tensor_elements " + std::to_string(options.max_tensor_elements) +
                         "\n" + request) +
         ".json";
}

int checked_enum(const json& j, int count) {
  const int v = j.get<int>();
  if (v < 0 || v >= count) throw std::out_of_range("an enumerator out of range");
  return v;
}

json leaf_json(const Leaf& l) {
  return {{"type", static_cast<int>(l.type)}, {"shape", l.shape}, {"memory", l.needs_memory}};
}

Leaf leaf_of(const json& j) {
  Leaf l;
  l.type = static_cast<Scalar>(checked_enum(j.at("type"), static_cast<int>(Scalar::Bool) + 1));
  l.shape = j.at("shape").get<std::vector<int64_t>>();
  l.needs_memory = j.at("memory").get<bool>();
  return l;
}

// The result's tuple structure (all NativeFunction::call needs of its type).
json structure_json(const Type& t) {
  if (!t.is_tuple) return static_cast<int>(t.elem);
  json elems = json::array();
  for (const Type& e : t.elems) elems.push_back(structure_json(e));
  return elems;
}

Type structure_of(const json& j, int depth) {
  if (depth > 64) throw std::out_of_range("tuples nested too deeply");
  if (!j.is_array()) {
    return Type::scalar(static_cast<Scalar>(checked_enum(j, static_cast<int>(Scalar::Bool) + 1)));
  }
  std::vector<Type> elems;
  for (const json& e : j) elems.push_back(structure_of(e, depth + 1));
  return Type::tuple(std::move(elems));
}

size_t leaf_count(const Type& t) {
  if (!t.is_tuple) return 1;
  size_t n = 0;
  for (const Type& e : t.elems) n += leaf_count(e);
  return n;
}

json site_json(const Site& s) {
  return {{"kind", static_cast<int>(s.kind)},
          {"span", {s.span.file, s.span.begin, s.span.end}},
          {"message", s.message},
          {"help", s.help},
          {"prim", static_cast<int>(s.prim)},
          {"dim", s.dim},
          {"shape", s.shape},
          {"rule", static_cast<int>(s.size_rule)},
          {"limit", s.limit}};
}

Site site_of(const json& j) {
  Site s;
  s.kind = static_cast<Site::Kind>(
      checked_enum(j.at("kind"), static_cast<int>(Site::Kind::Overflow) + 1));
  const auto span = j.at("span").get<std::vector<uint32_t>>();
  if (span.size() != 3) throw std::out_of_range("a span of three numbers");
  s.span = Span{span[0], span[1], span[2]};
  s.message = j.at("message").get<std::string>();
  s.help = j.at("help").get<std::string>();
  s.prim = static_cast<Prim>(checked_enum(j.at("prim"), static_cast<int>(Prim::kCount)));
  s.dim = j.at("dim").get<int>();
  s.shape = j.at("shape").get<std::vector<int64_t>>();
  s.size_rule = static_cast<interp::SizeRule>(
      checked_enum(j.at("rule"), static_cast<int>(interp::SizeRule::Accum) + 1));
  s.limit = j.at("limit").get<int64_t>();
  return s;
}

}  // namespace

struct ManifestAccess {
  static json describe(const NativeFunction& f) {
    json inputs = json::array(), outputs = json::array(), sites = json::array();
    for (const Leaf& l : f.inputs_) inputs.push_back(leaf_json(l));
    for (const Leaf& l : f.outputs_) outputs.push_back(leaf_json(l));
    for (const Site& s : f.sites_) sites.push_back(site_json(s));
    return {{"name", f.fn_name_},
            {"entry", f.entry_name_},
            {"parallel", f.parallel_},
            {"sizes", f.sizes_},
            {"inputs", inputs},
            {"outputs", outputs},
            {"result", structure_json(f.result_type_)},
            {"sites", sites}};
  }

  // The function `j` describes, its code in `c`'s object; nullopt when the object lacks it.
  static std::optional<NativeFunction> rebuild(const json& j, const CompileResult& c,
                                               const std::string& source) {
    NativeFunction f;
    f.fn_name_ = j.at("name").get<std::string>();
    f.entry_name_ = j.at("entry").get<std::string>();
    f.parallel_ = j.at("parallel").get<bool>();
    f.sizes_ = j.at("sizes").get<std::vector<int64_t>>();
    for (const json& l : j.at("inputs")) f.inputs_.push_back(leaf_of(l));
    for (const json& l : j.at("outputs")) f.outputs_.push_back(leaf_of(l));
    f.result_type_ = structure_of(j.at("result"), 0);
    if (leaf_count(f.result_type_) != f.outputs_.size()) return std::nullopt;
    for (const json& s : j.at("sites")) f.sites_.push_back(site_of(s));
    f.object_ = c.object;
    f.object_key_ = c.key;
    f.entry_ = reinterpret_cast<EntryPoint>(c.object->symbol(f.entry_name_));
    if (f.entry_ == nullptr) return std::nullopt;
    f.compile_seconds_ = c.seconds;
    f.cache_hit_ = true;
    f.found_by_request_ = true;
    f.source_ = source;
    return f;
  }

  static void set_team(NativeFunction& f, int threads, std::optional<int>& team) {
    if (f.parallel_ && !team) team = creatable_team(threads);
    f.team_requested_ = threads;
    f.team_ = team.value_or(1);
  }

  static const std::string& object_key(const NativeFunction& f) { return f.object_key_; }
};

std::optional<std::vector<NativeFunction>> find_compiled(const std::string& request,
                                                         const NativeOptions& options) {
  const Compiler compiler(options.compiler);
  const std::string name = manifest_name(compiler, request, options);
  if (name.empty()) return std::nullopt;
  const std::optional<std::string> text = compiler.read_entry(name);
  if (!text) return std::nullopt;
  try {
    const json manifest = json::parse(*text);
    const std::string object_key = manifest.at("object").get<std::string>();
    // A name the cache gives: 32 hex digits (no path).
    if (object_key.size() != 32 ||
        object_key.find_first_not_of("0123456789abcdef") != std::string::npos) {
      return std::nullopt;
    }
    const std::optional<CompileResult> object = compiler.load_cached(object_key);
    if (!object) return std::nullopt;
    // The generated source, kept beside the object (CompiledFunction::source).
    const std::string source = compiler.read_entry(object_key + ".cpp").value_or("");
    std::vector<NativeFunction> fns;
    std::optional<int> team;
    for (const json& j : manifest.at("functions")) {
      auto f = ManifestAccess::rebuild(j, *object, source);
      if (!f) return std::nullopt;
      ManifestAccess::set_team(*f, options.threads, team);
      fns.push_back(std::move(*f));
    }
    return fns;
  } catch (const std::exception&) {
    return std::nullopt;  // damaged or of another format: compiled again, then replaced
  }
}

void remember_compiled(const std::string& request, const std::vector<NativeFunction>& fns,
                       const NativeOptions& options) {
  if (fns.empty()) return;
  const Compiler compiler(options.compiler);
  const std::string name = manifest_name(compiler, request, options);
  if (name.empty()) return;
  json functions = json::array();
  for (const NativeFunction& f : fns) {
    if (ManifestAccess::object_key(f) != ManifestAccess::object_key(fns.front())) return;
    functions.push_back(ManifestAccess::describe(f));
  }
  const json manifest = {{"object", ManifestAccess::object_key(fns.front())},
                         {"functions", functions}};
  // Messages hold what the source spelled; bytes that are not UTF-8 are replaced, never thrown.
  compiler.write_entry(name, manifest.dump(-1, ' ', false, json::error_handler_t::replace));
}

}  // namespace cot::codegen
