#!/usr/bin/env bash
# `cotangent gradbench`: GradBench's tool protocol on standard input and output, one JSON
# object per line, with the hello eval from the source tree (and from a directory given).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

messages='{"id":0,"kind":"start","eval":"hello"}
{"id":1,"kind":"define","module":"hello"}
{"id":2,"kind":"evaluate","module":"hello","function":"square","input":3}
{"id":3,"kind":"analysis","of":2,"valid":true}
{"id":4,"kind":"evaluate","module":"hello","function":"double","input":9.5}
{"id":5,"kind":"define","module":"gmm_of_another_tool"}
not json'
cot_stdin "$messages" gradbench --threads 1
expect_status 0
expect_err_empty
[[ $(printf '%s\n' "$out" | wc -l) -eq 7 ]] || fail "expected one response per message"
line() { printf '%s\n' "$out" | sed -n "$1p"; }
[[ $(line 1) == '{"id":0,"tool":"cotangent"}' ]] || fail "start"
[[ $(line 2) == '{"id":1,"success":true}' ]] || fail "define"
[[ $(line 3) == '{"id":2,"output":9.0,"success":true,"timings":[{"name":"prepare","nanoseconds":'*'},{"name":"evaluate","nanoseconds":'*'}]}' ]] ||
  fail "evaluate square: a prepare timing, then one run's"
[[ $(line 4) == '{"id":3}' ]] || fail "analysis"
[[ $(line 5) == '{"id":4,"output":19.0,"success":true,'* ]] || fail "evaluate double"
[[ $(line 6) == *'"id":5,"success":false'* ]] || fail "an unknown module"
[[ $(line 7) == *'"id":null,"success":false'* ]] || fail "a line that is not JSON"

# The programs from another directory: one whose hello squares wrongly is what answers.
mkdir other
printf 'def square(x: f64) -> f64 { x * x + 1.0 }\ndef double(x: f64) -> f64 { 2.0 * x }\n' \
  >other/hello.cot
cot_stdin '{"id":0,"kind":"define","module":"hello"}
{"id":1,"kind":"evaluate","module":"hello","function":"square","input":3}' gradbench other
expect_status 0
[[ $out == *'"output":10.0'* ]] || fail "the directory given"

# An input the eval's program cannot take: the error says which message (line) and where in it.
cot_stdin '{"id":0,"kind":"define","module":"lse"}

{"id":1,"kind":"evaluate","module":"lse","function":"primal","input":{"x":[1.5,[2]]}}' gradbench
expect_status 0
[[ $out == *'"error":"<stdin>:3: error: input.x[1]: expected a number, found an array'*'"success":false'* ]] ||
  fail "the input error names the line and the place: $out"
