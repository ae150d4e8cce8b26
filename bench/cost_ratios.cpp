// The op-count ratios of the cheap-gradient bound (design.md §8.2, issue 4 item 5) over the
// whole corpus, as a markdown table for docs/benchmarks.md:
//
//   ops(value_and_grad f) <= 4 * ops(f) + size(inputs) + size(outputs)
//
// The corpus and the measurement are those of the bound's test (tests/opt/gradient_corpus.h),
// at the same seeds, so a row here is what the test checks. Op counts are deterministic (the
// cost model counts operations, it does not time them), and so is this table.
//
//   cost_ratios [--root DIR] [--opt 0|1|2] [--sizes 3,8] [--pathology-sizes 10,100,400]
//               [--cubic-sizes 10,40]
//               [--random N] [--print-random SEED]
//
// --sizes: for the test programs and examples; --pathology-sizes: for tests/opt/corpus;
// --cubic-sizes: for tests/opt/corpus_cubic (functions that cost O(n^3));
// --random N: the random programs of seeds 1..N (0: none), summarized, not tabulated.
// --print-random SEED: print the source of that random program and stop (to study a row with
// `cotangent print` and `cotangent cost`).
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "ad/random_program.h"
#include "opt/gradient_corpus.h"

namespace {

using cotangent::LoadOptions;
using cotangent::Module;
using cotangent::corpus::Measurement;
using cotangent::corpus::SourceFile;

struct Options {
  std::string root = COTANGENT_SOURCE_DIR;
  int opt = 2;
  std::vector<int64_t> sizes = {3, 8};
  std::vector<int64_t> pathology_sizes = {10, 100, 400};
  std::vector<int64_t> cubic_sizes = {10, 40};
  int random = 40;
};

std::vector<int64_t> parse_sizes(const std::string& s) {
  std::vector<int64_t> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(std::stoll(item));
  return out;
}

std::string fixed(double x, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

std::string ratio_text(const Measurement& r) {
  return r.ops_f == 0 ? "—" : fixed(r.ratio(), 2);
}

// Everything measured, for the summary.
struct Tally {
  int measured = 0, holds = 0, skipped = 0;
  std::vector<std::string> failures;     // bound broken or value_and_grad failed
  std::vector<std::string> growing;      // ratio grows by more than 0.5 from the smallest size
  std::vector<std::string> load_errors;  // files that do not load

  void add(const Measurement& r) {
    if (!r.measured) {
      ++skipped;
      return;
    }
    ++measured;
    if (r.holds()) {
      ++holds;
    } else {
      std::ostringstream s;
      s << r.program << ":" << r.fn << " at size " << r.size << ": ops(vg) = " << r.ops_vg
        << ", bound = " << r.bound();
      if (!r.error.empty()) s << " (value_and_grad failed: " << r.error << ")";
      failures.push_back(s.str());
    }
  }
};

void print_row(const Measurement& r) {
  std::cout << "| " << r.program << " | " << r.fn << " | " << r.size << " | " << r.ops_f << " | "
            << (r.error.empty() ? std::to_string(r.ops_vg) : "error") << " | " << ratio_text(r)
            << " | " << r.bound() << " | " << (r.holds() ? "yes" : "**no**") << " |\n";
}

// Measures every candidate of `file` at `sizes`, prints its rows, records them in `tally`.
void measure_file(const SourceFile& file, const std::vector<int64_t>& sizes, uint64_t seed, int opt,
                  Tally& tally, std::vector<Measurement>& rows) {
  LoadOptions o;
  o.opt_level = opt;
  auto m = Module::from_string(file.text, file.name + ".cot", o);
  if (!m) {
    tally.load_errors.push_back(file.name + ": " + m.message());
    return;
  }
  for (const auto& c : cotangent::corpus::candidates(file.text)) {
    std::vector<Measurement> per_size;
    for (int64_t size : sizes) {
      // The seeds of tests/opt/cheap_gradient_test.cpp: seed + size.
      Measurement r = cotangent::corpus::measure(m.value(), file.name, c, size,
                                                 seed + static_cast<uint64_t>(size));
      tally.add(r);
      if (r.measured) per_size.push_back(r);
    }
    for (const auto& r : per_size) rows.push_back(r);
    if (per_size.size() >= 2 && per_size.front().ops_f > 0 &&
        per_size.back().ratio() > per_size.front().ratio() + 0.5) {
      tally.growing.push_back(file.name + ":" + c.fn + " (" + ratio_text(per_size.front()) +
                              " at " + std::to_string(per_size.front().size) + ", " +
                              ratio_text(per_size.back()) + " at " +
                              std::to_string(per_size.back().size) + ")");
    }
  }
}

std::string join(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
  return s;
}

void print_table(const std::vector<Measurement>& rows) {
  std::cout << "| program | function | size | ops(f) | ops(value_and_grad f) | ratio | bound | "
               "holds |\n"
            << "|---|---|--:|--:|--:|--:|--:|:-:|\n";
  for (const auto& r : rows) print_row(r);
  std::cout << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    auto next = [&]() -> std::string {
      if (k + 1 >= argc) {
        std::cerr << "cost_ratios: " << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++k];
    };
    if (a == "--root") {
      opt.root = next();
    } else if (a == "--opt") {
      opt.opt = std::stoi(next());
    } else if (a == "--sizes") {
      opt.sizes = parse_sizes(next());
    } else if (a == "--pathology-sizes") {
      opt.pathology_sizes = parse_sizes(next());
    } else if (a == "--cubic-sizes") {
      opt.cubic_sizes = parse_sizes(next());
    } else if (a == "--random") {
      opt.random = std::stoi(next());
    } else if (a == "--print-random") {
      std::cout << cotangent::adtest::random_program(std::stoull(next())).source;
      return 0;
    } else {
      std::cerr << "usage: cost_ratios [--root DIR] [--opt 0|1|2] [--sizes 3,8] "
                   "[--pathology-sizes 10,100,400] [--cubic-sizes 10,40] [--random N] "
                   "[--print-random SEED]\n";
      return 2;
    }
  }

  const auto files = cotangent::corpus::corpus_files(opt.root);
  if (files.empty()) {
    std::cerr << "cost_ratios: no corpus under " << opt.root << "\n";
    return 1;
  }
  Tally tally;
  std::vector<Measurement> programs, pathologies, cubic;
  for (const auto& file : files) {
    // Seeds as in the bound's test: 11 for the programs, 5 and 7 for the pathologies.
    if (file.name.rfind("opt/", 0) == 0) {
      measure_file(file, opt.pathology_sizes, 5, opt.opt, tally, pathologies);
    } else if (file.name.rfind("opt3/", 0) == 0) {
      measure_file(file, opt.cubic_sizes, 7, opt.opt, tally, cubic);
    } else {
      measure_file(file, opt.sizes, 11, opt.opt, tally, programs);
    }
  }

  std::cout << "Op counts at --opt=" << opt.opt
            << "; bound = 4·ops(f) + size(inputs) + size(outputs); ratio = ops(value_and_grad "
               "f) / ops(f).\n\n";
  std::cout << "#### The pathologies (tests/opt/corpus), sizes " << join(opt.pathology_sizes)
            << "\n\n";
  print_table(pathologies);
  std::cout << "#### The cubic pathologies (tests/opt/corpus_cubic), sizes "
            << join(opt.cubic_sizes) << "\n\n";
  print_table(cubic);
  std::cout << "#### Test programs and examples, sizes " << join(opt.sizes) << "\n\n";
  print_table(programs);

  // The random programs of the AD tests, summarized.
  Tally random;
  std::vector<Measurement> random_rows;
  for (int seed = 1; seed <= opt.random; ++seed) {
    auto p = cotangent::adtest::random_program(static_cast<uint64_t>(seed));
    SourceFile file{"random/" + std::to_string(seed), p.source};
    measure_file(file, {3, 6}, static_cast<uint64_t>(seed), opt.opt, random, random_rows);
  }

  const Measurement* max_ratio = nullptr;
  for (const auto* rows : {&pathologies, &cubic, &programs}) {
    for (const auto& r : *rows) {
      if (r.error.empty() && (!max_ratio || r.ratio() > max_ratio->ratio())) max_ratio = &r;
    }
  }
  std::cout << "#### Summary\n\n";
  std::cout << "- corpus files: " << files.size()
            << "; (function, size) pairs measured: " << tally.measured << "; the bound holds for "
            << tally.holds << " of them";
  if (tally.skipped) {
    std::cout << " (" << tally.skipped << " pairs skipped: f itself refuses the random input)";
  }
  std::cout << ".\n";
  if (max_ratio) {
    std::cout << "- largest ratio: " << ratio_text(*max_ratio) << " (" << max_ratio->program << ":"
              << max_ratio->fn << " at size " << max_ratio->size << ").\n";
  }
  if (opt.random > 0) {
    const Measurement* rmax = nullptr;
    for (const auto& r : random_rows) {
      if (r.error.empty() && (!rmax || r.ratio() > rmax->ratio())) rmax = &r;
    }
    std::cout << "- random programs (seeds 1.." << opt.random
              << ", sizes 3, 6): " << random.measured << " pairs measured, the bound holds for "
              << random.holds;
    if (rmax) {
      std::cout << "; largest ratio " << ratio_text(*rmax) << " (" << rmax->program << ":"
                << rmax->fn << ")";
    }
    std::cout << ".\n";
  }
  auto list = [](const std::string& title, const std::vector<std::string>& items) {
    if (items.empty()) return;
    std::cout << "- " << title << ":\n";
    for (const auto& s : items) std::cout << "  - " << s << "\n";
  };
  std::vector<std::string> failures = tally.failures;
  failures.insert(failures.end(), random.failures.begin(), random.failures.end());
  std::vector<std::string> load_errors = tally.load_errors;
  load_errors.insert(load_errors.end(), random.load_errors.begin(), random.load_errors.end());
  list("the bound does not hold", failures);
  list("the ratio grows with size (by more than 0.5)", tally.growing);
  list("files that do not load", load_errors);
  if (failures.empty() && tally.growing.empty() && load_errors.empty()) {
    std::cout << "- no function breaks the bound, and no ratio grows with size.\n";
  }
  return failures.empty() && load_errors.empty() ? 0 : 1;
}
