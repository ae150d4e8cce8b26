// The `cotangent` command-line tool. Built only on the public API (include/cotangent/).
// Exit codes: 0 success; 1 an error in the program or its input; 2 wrong usage.
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/checked_stdout.h"
#include "cotangent/cotangent.h"
#include "gradbench/serve.h"
#include "gradbench/tool.h"

namespace {

constexpr int kOk = 0;
constexpr int kError = 1;
constexpr int kUsage = 2;

const char* const kHelp = R"(cotangent: a compiler for differentiable tensor programs

usage:
  cotangent check FILE
      Parse and check FILE. Prints nothing and exits 0 when the module is fine.
  cotangent run FILE FN --input IN.json [--arg NAME=PATH.npy]... [--output OUT]
                [--backend native|interp] [--threads N] [--max-iterations N]
      Evaluate function FN. IN.json is an object with one entry per parameter
      (numbers, booleans, nested arrays for tensors, arrays for tuples);
      `--input -` reads standard input. `--arg NAME=PATH.npy` gives a tensor
      parameter from a NumPy file instead. Prints {"result": VALUE}; with
      --output writes it to OUT instead (a .npy path writes a tensor result).
      A while-loop stops with an error after N iterations (default 100000000;
      --max-iterations 0 removes the limit). --backend native (the default)
      compiles FN for the input's shapes with the system C++ compiler and
      caches the code (in $COTANGENT_CACHE_DIR, else $XDG_CACHE_HOME/cotangent,
      else ~/.cache/cotangent: a directory that is yours and that nobody else
      can write); --backend interp runs the reference interpreter.
      --threads N runs parallel loops on N threads (default 0: all cores).
  cotangent print FILE FN [--grad [A,B...] | --jvp [A...] | --vjp [A...]]
      Print the Core IR of FN as source in the language, followed by the user
      functions it calls and the derived functions it calls (each as a def
      named from its operator: grad(f, w) prints as grad_f_w): a complete
      program that computes the same values. With --grad, --jvp or --vjp
      (also --value-and-grad, --jacobian A, --hessian A), print that
      derivative of FN instead, with respect to the parameters A, B (by
      default every real parameter); the names come right after the flag,
      separated by commas, or as --grad=A,B.
  cotangent grad FILE FN --input IN.json [--arg NAME=PATH.npy]... [--wrt A,B]
                 [--output OUT.json] [--backend native|interp] [--threads N]
                 [--max-iterations N]
      Evaluate FN, which must return a real scalar, and its gradient with
      respect to the parameters A, B (default: every real parameter). Prints
      {"value": V, "grad": {"A": G, "B": G}} with the numbers as run prints
      them; with --output writes it to OUT.json instead.
  cotangent cost FILE FN --input IN.json [--arg NAME=PATH.npy]...
                 [--grad [A,B] | --value-and-grad [A,B] | --hessian [A]]
      Evaluate FN as the compiler runs it (after the optimizer) and print its
      operation counts under the cost model: {"ops": N, "add": N, "mul": N,
      "call": N}. With --grad, --value-and-grad, --jacobian or --hessian,
      count that derivative of FN on the same input instead.
  cotangent bench FILE FN --input IN.json [--arg NAME=PATH.npy]... [--runs N]
                  [--grad [A,B] | --value-and-grad [A,B] | --hessian [A]]
                  [--threads N] [--backend native|interp]
      Time FN (or, with --grad and the like, that derivative of FN) on the
      input: compile it once for the input's shapes, run it once to warm up,
      then N times (default 10), timing each call alone (no reading, no
      writing, no compiling). Prints {"median_s": T, "min_s": T, "runs": N,
      "compile_s": T, "cache_hit": B}; compile_s is the time to compile (or
      load from the cache) the native code.
  cotangent emit FILE FN [--grad [A,B] | --value-and-grad [A,B] | --hessian [A]
                 | --jvp [A] | --vjp [A]] -o DIR
      Write FN (or that derivative of FN) as standalone C++ for any sizes:
      DIR/NAME.h declares the C function NAME (cot_fn_FN, or cot_grad_FN
      and the like: the operator, not A,B) and documents its ABI (sizes,
      argument and result pointers, an error code and message); DIR/NAME.cpp
      implements it and needs nothing from Cotangent (compile it with -O3
      -march=native -fopenmp). Both files are written whole or not at all.
      examples/aot/ shows it used from a CMake project.
  cotangent gradbench [DIR] [--threads N]
      Speak GradBench's tool protocol on standard input and output (one JSON
      object per line): start, define (loads DIR/MODULE.cot, by default the
      evals in the source tree's examples/gradbench), evaluate (compiles for
      the input's shapes, untimed, then times each of the eval's runs) and
      analysis. Parallel loops run on N threads (default 1).
  cotangent help | --help | -h
      Show this text.

Options of check, run, grad, print and cost:
  --opt N         the optimizer's level: 0 runs the program as written (the
                  reference), 1 local clean-ups, 2 the whole pipeline (the
                  default; the environment variable COTANGENT_OPT changes it).
                  cost counts the program as it runs at that level.
  --dump-after P  print each function to standard error after every run of
                  the optimizer pass P (or all): inline, let-lift, pair-elim,
                  simplify, partial-eval, gen-pushout, output-fission, fuse,
                  iverson, scatter, loop-batch, sink, unswitch, licm,
                  loop-normalize, if-merge, cse, transposed-cse, region-cse,
                  dce. Or the loop IR of each function the native backend
                  compiles (run, grad, bench, emit) after the loop-IR pass P:
                  interchange-sums, split-windows, interchange-split-sums,
                  long-sums, recompute-tables, fuse-loops, partition-loops,
                  plan-memory.

Exit codes: 0 success, 1 an error in the program or its input, 2 wrong usage.
)";

int usage(const std::string& message) {
  std::cerr << "cotangent: " << message << "\n";
  std::cerr << "run `cotangent --help` for usage\n";
  return kUsage;
}

int report(const std::vector<cotangent::Error>& errors) {
  std::cerr << cotangent::to_string(errors);
  return kError;
}

struct Options {
  std::vector<std::string> positional;
  std::optional<std::string> input;
  std::optional<std::string> output;
  std::vector<std::pair<std::string, std::string>> npy_args;
  std::string backend = "native";
  int threads = 0;
  int64_t max_iterations = cotangent::EvalOptions{}.max_while_iterations;
  // print --grad/--jvp/...: the operator and the active parameters (empty: every real one).
  std::optional<cotangent::DerivativeKind> derivative;
  std::string derivative_flag;
  std::vector<std::string> derivative_wrt;
  // grad --wrt.
  std::optional<std::vector<std::string>> wrt;
  // --opt N (-1: the library's default) and --dump-after PASS.
  int opt_level = -1;
  std::string dump_after;
  // bench --runs N.
  int64_t runs = 10;
};

// Loads FILE with the optimizer options of the command line; --dump-after texts go to stderr.
cotangent::Result<cotangent::Module> open_module(const Options& o) {
  cotangent::LoadOptions lo;
  lo.opt_level = o.opt_level;
  if (!o.dump_after.empty()) {
    lo.dump_after = o.dump_after;
    lo.dump = [](const std::string& pass, const std::string& fn, const std::string& text) {
      std::cerr << "# after " << pass << ": " << fn << "\n" << text;
    };
  }
  return cotangent::Module::from_file(o.positional[0], lo);
}

// "a,b" -> {a, b}; nullopt when a name is empty.
std::optional<std::vector<std::string>> split_names(const std::string& s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  size_t start = 0;
  while (true) {
    size_t comma = s.find(',', start);
    std::string name =
        s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    while (!name.empty() && name.front() == ' ') name.erase(name.begin());
    while (!name.empty() && name.back() == ' ') name.pop_back();
    if (name.empty()) return std::nullopt;
    out.push_back(name);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

struct DerivativeFlag {
  const char* flag;
  cotangent::DerivativeKind kind;
};
constexpr DerivativeFlag kDerivativeFlags[] = {
    {"--grad", cotangent::DerivativeKind::Grad},
    {"--value-and-grad", cotangent::DerivativeKind::ValueAndGrad},
    {"--jvp", cotangent::DerivativeKind::Jvp},
    {"--vjp", cotangent::DerivativeKind::Vjp},
    {"--jacobian", cotangent::DerivativeKind::Jacobian},
    {"--hessian", cotangent::DerivativeKind::Hessian},
};

// Parses flags common to the subcommands; returns an error message for bad usage.
std::optional<std::string> parse_options(int argc, char** argv, Options& o) {
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* flag) -> std::optional<std::string> {
      std::string prefix = std::string(flag) + "=";
      if (a.rfind(prefix, 0) == 0) return a.substr(prefix.size());
      if (a == flag) {
        if (i + 1 >= argc) return std::nullopt;
        return std::string(argv[++i]);
      }
      return std::nullopt;
    };
    auto is = [&](const char* flag) {
      return a == flag || a.rfind(std::string(flag) + "=", 0) == 0;
    };
    if (is("--input")) {
      auto v = value("--input");
      if (!v) return "--input needs a path (or - for standard input)";
      o.input = *v;
    } else if (is("--output") || a == "-o") {
      auto v = a == "-o" ? (i + 1 < argc ? std::optional<std::string>(argv[++i]) : std::nullopt)
                         : value("--output");
      if (!v) return a == "-o" ? "-o needs a directory" : "--output needs a path";
      o.output = *v;
    } else if (is("--arg")) {
      auto v = value("--arg");
      auto eq = v ? v->find('=') : std::string::npos;
      if (!v || eq == std::string::npos || eq == 0) return "--arg needs NAME=PATH.npy";
      o.npy_args.emplace_back(v->substr(0, eq), v->substr(eq + 1));
    } else if (is("--backend")) {
      auto v = value("--backend");
      if (!v) return "--backend needs a name (native or interp)";
      o.backend = *v;
    } else if (is("--threads")) {
      auto v = value("--threads");
      char* end = nullptr;
      errno = 0;
      long long n = v ? std::strtoll(v->c_str(), &end, 10) : -1;
      if (!v || v->empty() || *end != '\0' || n < 0 || n > 4096 || errno == ERANGE) {
        return "--threads needs a number of threads (0: all cores)";
      }
      o.threads = static_cast<int>(n);
    } else if (is("--max-iterations")) {
      auto v = value("--max-iterations");
      char* end = nullptr;
      errno = 0;
      long long n = v ? std::strtoll(v->c_str(), &end, 10) : -1;
      if (!v || v->empty() || *end != '\0' || n < 0 || errno == ERANGE) {
        return "--max-iterations needs a non-negative integer (0: no limit)";
      }
      o.max_iterations = n;
    } else if (is("--runs")) {
      auto v = value("--runs");
      char* end = nullptr;
      errno = 0;
      long long n = v ? std::strtoll(v->c_str(), &end, 10) : -1;
      if (!v || v->empty() || *end != '\0' || n < 1 || n > 1000000 || errno == ERANGE) {
        return "--runs needs a number of runs (1 or more)";
      }
      o.runs = n;
    } else if (is("--opt")) {
      auto v = value("--opt");
      if (!v || v->size() != 1 || (*v)[0] < '0' || (*v)[0] > '2') {
        return "--opt needs a level: 0 (unoptimized), 1 (local clean-ups) or 2 (everything)";
      }
      o.opt_level = (*v)[0] - '0';
    } else if (is("--dump-after")) {
      auto v = value("--dump-after");
      auto names = cotangent::optimizer_pass_names();
      auto loop_names = cotangent::loop_pass_names();
      auto known = [&](const std::vector<std::string>& ns) {
        return std::find(ns.begin(), ns.end(), *v) != ns.end();
      };
      if (!v || (*v != "all" && !known(names) && !known(loop_names))) {
        std::string list, loop_list;
        for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
        for (const auto& n : loop_names) loop_list += (loop_list.empty() ? "" : ", ") + n;
        return "--dump-after needs the name of an optimizer pass (" + list +
               "), of a loop-IR pass (" + loop_list + ") or all";
      }
      o.dump_after = *v;
    } else if (is("--wrt")) {
      auto v = value("--wrt");
      auto names = v ? split_names(*v) : std::nullopt;
      if (!names) return "--wrt needs parameter names separated by commas, as in --wrt w,b";
      o.wrt = *names;
    } else if (auto it = std::find_if(std::begin(kDerivativeFlags), std::end(kDerivativeFlags),
                                      [&](const DerivativeFlag& d) { return is(d.flag); });
               it != std::end(kDerivativeFlags)) {
      if (o.derivative) {
        return "give one derivative operator (" + o.derivative_flag + " and " + it->flag +
               " were both given)";
      }
      // The names are optional: `--grad=a,b`, or the next argument once FILE and FN are given.
      std::string names;
      const std::string prefix = std::string(it->flag) + "=";
      if (a.rfind(prefix, 0) == 0) {
        names = a.substr(prefix.size());
      } else if (o.positional.size() >= 2 && i + 1 < argc && argv[i + 1][0] != '-') {
        names = argv[++i];
      }
      auto list = split_names(names);
      if (!list) {
        return std::string(it->flag) + " needs parameter names separated by commas, as in " +
               it->flag + " w,b";
      }
      o.derivative = it->kind;
      o.derivative_flag = it->flag;
      o.derivative_wrt = *list;
    } else if (a.size() > 1 && a[0] == '-' && a != "-") {
      return "unknown option " + a;
    } else {
      o.positional.push_back(a);
    }
  }
  if (o.backend != "interp" && o.backend != "native") {
    return "unknown backend `" + o.backend + "`; use --backend native (compiled code, the " +
           "default) or --backend interp (the reference interpreter)";
  }
  return std::nullopt;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Loads the module and the arguments of FN from --input and --arg.
// `precheck`, when given, reports errors of the module and FN to give before any of the input.
int load(const Options& o, const char* cmd, std::optional<cotangent::Module>& module,
         std::vector<cotangent::Value>& args,
         const std::function<std::vector<cotangent::Error>(const cotangent::Module&)>& precheck =
             nullptr) {
  if (o.positional.size() != 2) {
    return usage(std::string(cmd) + " needs FILE and FN, as in `cotangent " + cmd +
                 " model.cot f --input in.json`");
  }
  auto m = open_module(o);
  if (!m) return report(m.errors());
  auto info = m.value().function(o.positional[1]);
  if (!info) return report(info.errors());
  if (precheck) {
    auto errors = precheck(m.value());
    if (!errors.empty()) return report(errors);
  }
  const auto& params = info.value().params;
  std::map<std::string, cotangent::Value> from_npy;
  for (const auto& [arg_name, path] : o.npy_args) {
    const std::string& name = arg_name;  // a plain reference: lambdas cannot capture bindings
    auto it = std::find_if(params.begin(), params.end(),
                           [&](const cotangent::ParamInfo& p) { return p.name == name; });
    if (it == params.end()) {
      return usage("--arg " + name + ": `" + o.positional[1] + "` has no parameter named `" + name +
                   "`");
    }
    auto v = cotangent::read_npy(path, it->kind);
    if (!v) return report(v.errors());
    from_npy[name] = v.value();
  }
  std::vector<std::string> names;
  std::vector<cotangent::ValueKind> kinds;
  for (const auto& p : params) {
    if (!from_npy.count(p.name)) {
      names.push_back(p.name);
      kinds.push_back(p.kind);
    }
  }
  std::vector<cotangent::Value> from_json;
  if (!names.empty() || o.input) {
    if (!o.input) {
      return usage(std::string(cmd) + " needs --input IN.json with the arguments of `" +
                   o.positional[1] + "`");
    }
    auto text = cotangent::read_json_input(*o.input);
    if (!text) return report(text.errors());
    auto parsed = cotangent::arguments_from_json(
        text.value(), *o.input == "-" ? "<stdin>" : *o.input, names, kinds);
    if (!parsed) return report(parsed.errors());
    from_json = std::move(parsed.value());
  }
  size_t k = 0;
  for (const auto& p : params) {
    auto it = from_npy.find(p.name);
    args.push_back(it != from_npy.end() ? it->second : from_json.at(k++));
  }
  module.emplace(std::move(m.value()));
  return kOk;
}

int cmd_check(const Options& o) {
  if (o.positional.size() != 1) return usage("check needs exactly one FILE");
  auto m = open_module(o);
  if (!m) return report(m.errors());
  // A function the compiler could not build is an error of the module, though the others run.
  if (auto broken = m.value().broken_functions(); !broken.empty()) return report(broken);
  return kOk;
}

int cmd_print(const Options& o) {
  if (o.positional.size() != 2) return usage("print needs FILE and FN");
  auto m = open_module(o);
  if (!m) return report(m.errors());
  auto text = o.derivative
                  ? m.value().print_derivative(o.positional[1], *o.derivative, o.derivative_wrt)
                  : m.value().print(o.positional[1]);
  if (!text) return report(text.errors());
  std::cout << text.value();
  return kOk;
}

// The result to standard output, or to --output: JSON, or .npy for a tensor. Files are
// written whole or not at all (cotangent::write_files).
int write_output(const Options& o, const cotangent::Value& v, const std::string& json) {
  if (!o.output) {
    std::cout << json << "\n";
    return kOk;
  }
  if (ends_with(*o.output, ".npy")) {
    if (v.is_tuple()) {
      std::cerr << *o.output << ": error: a tuple result cannot be written as .npy\n"
                << "  help: write JSON instead (an --output path not ending in .npy)\n";
      return kError;
    }
    auto r = cotangent::write_npy(*o.output, v);
    if (!r) return report(r.errors());
    return kOk;
  }
  const std::string text = json + "\n";
  auto r = cotangent::write_files({{*o.output, text}});
  if (!r) return report(r.errors());
  return kOk;
}

cotangent::EvalOptions eval_options(const Options& o) {
  cotangent::EvalOptions eo;
  eo.max_while_iterations = o.max_iterations;
  eo.backend = o.backend == "interp" ? cotangent::Backend::Interpreter : cotangent::Backend::Native;
  eo.threads = o.threads;
  return eo;
}

int cmd_run(const Options& o) {
  std::optional<cotangent::Module> m;
  std::vector<cotangent::Value> args;
  if (int rc = load(o, "run", m, args); rc != kOk) return rc;
  auto r = m->evaluate(o.positional[1], args, eval_options(o));
  if (!r) return report(r.errors());
  if (o.output && ends_with(*o.output, ".npy")) return write_output(o, r.value(), {});
  auto text = cotangent::value_to_json_checked(r.value());
  if (!text) return report(text.errors());
  return write_output(o, r.value(), "{\"result\": " + text.value() + "}");
}

int cmd_cost(const Options& o) {
  std::optional<cotangent::Module> m;
  std::vector<cotangent::Value> args;
  if (int rc = load(o, "cost", m, args); rc != kOk) return rc;
  auto r = o.derivative ? m->derivative_cost(o.positional[1], *o.derivative, args, o.derivative_wrt,
                                             eval_options(o))
                        : m->cost(o.positional[1], args, eval_options(o));
  if (!r) return report(r.errors());
  const auto& c = r.value();
  std::cout << "{\"ops\": " << c.ops << ", \"add\": " << c.add << ", \"mul\": " << c.mul
            << ", \"call\": " << c.call << "}\n";
  return kOk;
}

int cmd_grad(const Options& o) {
  if (o.output && ends_with(*o.output, ".npy")) {
    return usage("grad writes JSON: name an --output path that does not end in .npy");
  }
  const std::vector<std::string> wrt = o.wrt.value_or(std::vector<std::string>{});
  // Errors in FN or --wrt come before those of the input.
  auto check_wrt = [&](const cotangent::Module& module) -> std::vector<cotangent::Error> {
    auto active =
        module.derivative_parameters(o.positional[1], cotangent::DerivativeKind::Grad, wrt);
    return active ? std::vector<cotangent::Error>{} : active.errors();
  };
  std::optional<cotangent::Module> m;
  std::vector<cotangent::Value> args;
  if (int rc = load(o, "grad", m, args, check_wrt); rc != kOk) return rc;
  auto r = m->value_and_grad(o.positional[1], args, wrt, eval_options(o));
  if (!r) return report(r.errors());
  auto value = cotangent::value_to_json_checked(r.value().value);
  if (!value) return report(value.errors());
  std::string json = "{\"value\": " + value.value() + ", \"grad\": {";
  for (size_t k = 0; k < r.value().grad.size(); ++k) {
    const auto& g = r.value().grad[k];
    auto grad = cotangent::value_to_json_checked(g.value);
    if (!grad) return report(grad.errors());
    json += (k ? ", \"" : "\"") + g.name + "\": " + grad.value();
  }
  json += "}}";
  return write_output(o, r.value().value, json);
}

// The leaves of a value (tensors and scalars, tuples depth first), as the compiled code's views.
void leaves_of(const cotangent::Value& v, std::vector<const cotangent::Value*>& out) {
  if (v.is_tuple()) {
    for (const auto& e : v.elems()) leaves_of(e, out);
  } else {
    out.push_back(&v);
  }
}

double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  const size_t n = xs.size();
  return n % 2 == 1 ? xs[n / 2] : 0.5 * (xs[n / 2 - 1] + xs[n / 2]);
}

std::string seconds_json(double s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", s);
  return buf;
}

// For processes that call compiled code many times (bench, gradbench): freed memory stays in
// the heap instead of going back to the system. Compiled code allocates its arena per call, and
// glibc serves blocks over 32 MB by mmap, so every call of a large workload (ht with 51,200
// points, ba's 92 MB Jacobian) otherwise page-faults its memory in afresh: up to three times
// the run time.
void keep_freed_memory() {
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
}

int cmd_bench(const Options& o) {
  keep_freed_memory();
  if (o.derivative && (*o.derivative == cotangent::DerivativeKind::Jvp ||
                       *o.derivative == cotangent::DerivativeKind::Vjp)) {
    return usage(
        "bench times derivatives that take FN's arguments (--grad, --value-and-grad, "
        "--jacobian, --hessian); time a function that calls jvp or vjp instead");
  }
  std::optional<cotangent::Module> m;
  std::vector<cotangent::Value> args;
  if (int rc = load(o, "bench", m, args); rc != kOk) return rc;
  const std::string& fn = o.positional[1];
  std::vector<double> times;
  double compile_s = 0;
  bool cache_hit = false;
  using clock = std::chrono::steady_clock;
  auto elapsed = [](clock::time_point t0) {
    return std::chrono::duration<double>(clock::now() - t0).count();
  };
  if (o.backend == "interp") {
    auto once = [&]() -> std::optional<std::vector<cotangent::Error>> {
      if (o.derivative) {
        auto r = m->value_and_grad(fn, args, o.derivative_wrt, eval_options(o));
        if (!r) return r.errors();
      } else {
        auto r = m->evaluate(fn, args, eval_options(o));
        if (!r) return r.errors();
      }
      return std::nullopt;
    };
    if (o.derivative && *o.derivative != cotangent::DerivativeKind::Grad &&
        *o.derivative != cotangent::DerivativeKind::ValueAndGrad) {
      return usage("bench --backend interp times functions and gradients");
    }
    if (auto e = once()) return report(*e);
    for (int64_t k = 0; k < o.runs; ++k) {
      const auto t0 = clock::now();
      if (auto e = once()) return report(*e);
      times.push_back(elapsed(t0));
    }
  } else {
    cotangent::CompileOptions co;
    co.threads = o.threads;
    co.max_while_iterations = o.max_iterations;
    auto compiled = m->compile({{fn, o.derivative, o.derivative_wrt, args}}, co);
    if (!compiled) return report(compiled.errors());
    const cotangent::CompiledFunction& f = compiled.value().front();
    compile_s = f.compile_seconds();
    cache_hit = f.cache_hit();
    std::vector<const cotangent::Value*> in;
    for (const auto& a : args) leaves_of(a, in);
    std::vector<cotangent::TensorRef> in_refs;
    in_refs.reserve(in.size());
    for (const auto* v : in) in_refs.push_back({v->dtype(), v->shape(), v->raw_data()});
    std::vector<cotangent::Value> outs;
    for (const auto& leaf : f.result_leaves()) {
      outs.push_back(cotangent::Value::zeros(leaf.dtype, leaf.shape));
    }
    std::vector<cotangent::MutableTensorRef> out_refs;
    out_refs.reserve(outs.size());
    for (auto& v : outs) out_refs.push_back({v.dtype(), v.shape(), v.raw_mut()});
    auto warm = f.call(in_refs, out_refs);
    if (!warm) return report(warm.errors());
    for (int64_t k = 0; k < o.runs; ++k) {
      const auto t0 = clock::now();
      auto r = f.call(in_refs, out_refs);
      times.push_back(elapsed(t0));
      if (!r) return report(r.errors());
    }
  }
  std::cout << "{\"median_s\": " << seconds_json(median(times))
            << ", \"min_s\": " << seconds_json(*std::min_element(times.begin(), times.end()))
            << ", \"runs\": " << o.runs << ", \"compile_s\": " << seconds_json(compile_s)
            << ", \"cache_hit\": " << (cache_hit ? "true" : "false") << "}\n";
  return kOk;
}

// The C name of an emitted function, and of its files: cot_fn_FN, or cot_OP_FN for a
// derivative (cot_grad_FN, cot_value_and_grad_FN, ...). The prefix keeps it apart from every C
// and C++ keyword and library name; the operator is read from the left, and no operator is
// another followed by `_`, so two different requests never share a name (docs/design.md §10).
std::string emitted_name(const Options& o) {
  std::string op = "fn";
  if (o.derivative) {
    op = o.derivative_flag.substr(2);  // "--value-and-grad" -> "value-and-grad"
    std::replace(op.begin(), op.end(), '-', '_');
  }
  return "cot_" + op + "_" + o.positional[1];
}

// The base name of an emitted function's files: its C name, or for a name too long for a file
// name (file systems allow 255 bytes), its first 150 characters and a 64-bit FNV-1a hash of
// the whole, which keeps different names apart (docs/design.md §10).
std::string file_base(const std::string& name) {
  if (name.size() <= 200) return name;
  uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : name) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return name.substr(0, 150) + "_" + hex;
}

int cmd_emit(const Options& o) {
  if (o.positional.size() != 2)
    return usage("emit needs FILE and FN, as in `cotangent emit m.cot f -o out`");
  if (!o.output) return usage("emit needs -o DIR, the directory to write NAME.h and NAME.cpp to");
  auto m = open_module(o);
  if (!m) return report(m.errors());
  const std::string name = emitted_name(o);
  const std::string base = file_base(name);
  auto src = m.value().generate_cpp(o.positional[1], o.derivative, o.derivative_wrt, name);
  if (!src) return report(src.errors());
  std::error_code ec;
  std::filesystem::create_directories(*o.output, ec);
  if (ec) {
    std::cerr << *o.output << ": error: cannot create the directory: " << ec.message() << "\n";
    return kError;
  }
  const std::filesystem::path dir(*o.output);
  auto written = cotangent::write_files({{(dir / (base + ".h")).string(), src.value().header},
                                         {(dir / (base + ".cpp")).string(), src.value().source}});
  if (!written) return report(written.errors());
  std::cout << (dir / (base + ".h")).string() << "\n" << (dir / (base + ".cpp")).string() << "\n";
  return kOk;
}

// GradBench's tool protocol on standard input and output, one JSON object per line.
int cmd_gradbench(const Options& o) {
  keep_freed_memory();
  if (o.positional.size() > 1) return usage("gradbench takes at most one directory");
  cot::gradbench::ToolOptions to;
  to.dir = o.positional.empty() ? std::string(COTANGENT_GRADBENCH_DIR) : o.positional[0];
  to.threads = o.threads == 0 ? 1 : o.threads;
  cot::gradbench::Tool tool(to);
  return cot::gradbench::serve(tool, std::cin, std::cout, std::cerr);
}

int run_command(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kHelp;
    return kUsage;
  }
  const std::string cmd = argv[1];
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    std::cout << kHelp;
    return kOk;
  }
  if (cmd == "--version") {
    std::cout << "cotangent 0.1.0\n";
    return kOk;
  }
  Options o;
  if (auto err = parse_options(argc, argv, o)) return usage(*err);
  if (o.derivative && cmd != "print" && cmd != "cost" && cmd != "bench" && cmd != "emit") {
    return usage(o.derivative_flag + " is an option of print, cost, bench and emit; " +
                 "`cotangent grad` evaluates gradients");
  }
  if (o.wrt && cmd != "grad") return usage("--wrt is an option of grad");
  if (cmd == "check") return cmd_check(o);
  if (cmd == "run") return cmd_run(o);
  if (cmd == "print") return cmd_print(o);
  if (cmd == "cost") return cmd_cost(o);
  if (cmd == "grad") return cmd_grad(o);
  if (cmd == "bench") return cmd_bench(o);
  if (cmd == "emit") return cmd_emit(o);
  if (cmd == "gradbench") return cmd_gradbench(o);
  return usage("unknown command `" + cmd + "`");
}

// Standard output is checked once everything is written to it (docs/design.md §11): output
// lost to `> /dev/full`, a full disk or a closed descriptor is an error, not an exit 0.
int check_stdout(int rc, const cot::cli::CheckedOutputBuffer& out) {
  const bool flushed = std::fflush(stdout) == 0;  // anything written through C's stdio
  if (out.error() == 0 && flushed && !std::ferror(stdout)) return rc;
  // A command that failed has said why (the GradBench server names the message it could not
  // answer): one error, not a second one about the same output.
  if (rc != 0) return rc;
  const int error = out.error() != 0 ? out.error() : errno;
  std::cerr << "cotangent: error: cannot write to standard output"
            << (error == 0 ? std::string() : ": " + std::string(std::strerror(error))) << "\n";
  return kError;
}

}  // namespace

int main(int argc, char** argv) {
  cot::cli::CheckedOutputBuffer out(STDOUT_FILENO);
  std::streambuf* const previous = std::cout.rdbuf(&out);
  // On a terminal, output appears as it is written, in order with standard error.
  if (::isatty(STDOUT_FILENO)) std::cout << std::unitbuf;
  // The library reports errors as values; what can still escape is running out of memory.
  int rc = kError;
  try {
    rc = run_command(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "cotangent: error: out of memory\n";
  } catch (const std::exception& e) {
    std::cerr << "cotangent: internal error: " << e.what() << "\n";
  }
  std::cout.flush();
  std::cout.rdbuf(previous);
  return check_stdout(rc, out);
}
