#!/bin/sh
# Writes what the compiler makes of every bundled program into OUT: the optimized Core IR
# (`print`, primal and gradient) and the standalone C++ (`emit`, primal and gradient) of every
# function of examples/gradbench, bench/native and bench/natural. A refactoring that must leave
# behaviour unchanged compares two such directories with `diff -r` (docs/design.md §4, "Walking
# the IR").
# Sources are named relative to the checkout and the logs name OUT as `OUT`, so two checkouts and
# two output directories compare equal. A command that
# runs longer than TIMEOUT seconds (default 300: the nested gradients of particle.cot take a
# minute of CPU) leaves its file empty. SKIP names programs to leave out (SKIP=particle: quick
# checks while iterating).
# usage: [TIMEOUT=S] [SKIP=NAME] tools/fingerprint.sh COTANGENT OUT
set -u
cot=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
mkdir -p "$2"
out=$(cd "$2" && pwd)
limit=${TIMEOUT:-300}
cd "$(dirname "$0")/.."
for f in examples/gradbench/*.cot bench/native/kernels.cot bench/natural/*.cot; do
  m=$(basename "$f" .cot)
  case "$f" in bench/natural/*) m="natural.$m" ;; esac
  [ "$m" = "${SKIP:-}" ] && continue
  for fn in $(sed -n 's/^def \([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' "$f"); do
    timeout "$limit" "$cot" print "$f" "$fn" >"$out/$m.$fn.print" 2>&1
    timeout "$limit" "$cot" print "$f" "$fn" --grad >"$out/$m.$fn.grad.print" 2>&1
    timeout "$limit" "$cot" emit "$f" "$fn" -o "$out/$m.$fn.emit" >"$out/$m.$fn.emit.log" 2>&1
    timeout "$limit" "$cot" emit "$f" "$fn" --grad -o "$out/$m.$fn.grad.emit" \
      >"$out/$m.$fn.grad.emit.log" 2>&1
  done
done
for log in "$out"/*.log; do
  sed -i "s|$out|OUT|g" "$log"
done
