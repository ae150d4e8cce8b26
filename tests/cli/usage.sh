#!/usr/bin/env bash
# Command-line usage: --help, exit code 2 for wrong usage (missing arguments, unknown
# commands, options and backends), and the one-line message that says what is wrong.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

cat >m.cot <<'COT'
def third(x: f64) -> f64 { x / 3.0 }
COT
echo '{"x": 1.5}' >in.json

# --help (and its spellings) succeeds, prints to standard output and names every subcommand.
for h in --help -h help; do
  cot "$h"
  expect_status 0
  expect_err_empty
  for sub in check run print cost help; do
    [[ $out == *"cotangent $sub"* ]] || fail "--help does not mention \`cotangent $sub\`"
  done
  expect_out_contains "Exit codes: 0 success, 1 an error in the program or its input, 2 wrong usage."
done

cot --version
expect_status 0
expect_out "cotangent 0.1.0"

# No arguments at all: the help on standard error, exit 2.
cot
expect_status 2
expect_out_empty
expect_err_contains "usage:"

# Each usage error: exit 2, nothing on standard output, "cotangent: MESSAGE" then a pointer
# to --help on standard error.
usage_error() {
  local message=$1
  shift
  cot "$@"
  expect_status 2
  expect_out_empty
  [[ $err == "cotangent: $message"$'\n'"run \`cotangent --help\` for usage" ]] ||
    fail "expected the usage error: cotangent: $message"
}

usage_error 'unknown command `frob`' frob m.cot
usage_error 'check needs exactly one FILE' check
usage_error 'check needs exactly one FILE' check m.cot m.cot
usage_error 'unknown option --bogus' check m.cot --bogus
usage_error 'print needs FILE and FN' print m.cot
usage_error 'print needs FILE and FN' print m.cot third extra
usage_error 'run needs FILE and FN, as in `cotangent run model.cot f --input in.json`' run m.cot
usage_error 'cost needs FILE and FN, as in `cotangent cost model.cot f --input in.json`' cost
usage_error 'run needs --input IN.json with the arguments of `third`' run m.cot third
usage_error 'cost needs --input IN.json with the arguments of `third`' cost m.cot third
usage_error '--input needs a path (or - for standard input)' run m.cot third --input
usage_error '--output needs a path' run m.cot third --input in.json --output
usage_error '--arg needs NAME=PATH.npy' run m.cot third --arg x.npy
usage_error '--arg needs NAME=PATH.npy' run m.cot third --arg =x.npy
usage_error '--max-iterations needs a non-negative integer (0: no limit)' run m.cot third --input in.json \
  --max-iterations -1
usage_error '--max-iterations needs a non-negative integer (0: no limit)' run m.cot third --input in.json \
  --max-iterations=ten
usage_error '--max-iterations needs a non-negative integer (0: no limit)' run m.cot third --input in.json \
  --max-iterations 99999999999999999999999
usage_error '--arg y: `third` has no parameter named `y`' run m.cot third --arg y=y.npy
usage_error 'unknown backend `llvm`; use --backend native (compiled code, the default) or --backend interp (the reference interpreter)' \
  run m.cot third --input in.json --backend llvm
usage_error 'unknown backend `gpu`; use --backend native (compiled code, the default) or --backend interp (the reference interpreter)' \
  cost m.cot third --input in.json --backend=gpu

# Both backends, named explicitly, are fine; so are --flag=value spellings.
cot run m.cot third --input=in.json --backend interp --max-iterations=5
expect_status 0
expect_err_empty
expect_out '{"result": 0.5}'
cot run m.cot third --input=in.json --backend=native --threads 1
expect_status 0
expect_err_empty
expect_out '{"result": 0.5}'
usage_error '--threads needs a number of threads (0: all cores)' run m.cot third --input in.json \
  --threads many

# A directory is not a module: exit 1 with what is wrong.
mkdir -p adir
cot check adir
expect_status 1
expect_err_contains "adir is a directory"

# A while-loop that never ends stops at the iteration limit with a help that says how to raise
# it; the limit is an option.
cat >w.cot <<'COT'
def spin(x: f64) -> f64 { loop s = x while s > 0.0 { s + 1.0 } }
COT
echo '{"x": 1.0}' >w.json
cot run w.cot spin --input w.json --max-iterations 1000
expect_status 1
expect_err_contains "w.cot:1:27: error: the while loop did not finish within 1000 iterations"
expect_err_contains "help: if it should run longer, raise the limit with --max-iterations N"

echo "usage.sh: ok"
