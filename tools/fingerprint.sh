#!/bin/sh
# Writes what the compiler makes of every bundled program into OUT: the optimized Core IR
# (`print`, primal and gradient) and the standalone C++ (`emit`, primal and gradient) of every
# function of examples/gradbench and bench/native. A refactoring that must leave behaviour
# unchanged compares two such directories with `diff -r` (design.md §4, "Walking the IR").
# usage: tools/fingerprint.sh COTANGENT OUT
set -u
cot=$1
out=$2
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
for f in "$root"/examples/gradbench/*.cot "$root"/bench/native/kernels.cot; do
  m=$(basename "$f" .cot)
  for fn in $(sed -n 's/^def \([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' "$f"); do
    timeout 30 "$cot" print "$f" "$fn" >"$out/$m.$fn.print" 2>&1
    timeout 30 "$cot" print "$f" "$fn" --grad >"$out/$m.$fn.grad.print" 2>&1
    timeout 30 "$cot" emit "$f" "$fn" -o "$out/$m.$fn.emit" >"$out/$m.$fn.emit.log" 2>&1
    timeout 30 "$cot" emit "$f" "$fn" --grad -o "$out/$m.$fn.grad.emit" >"$out/$m.$fn.grad.emit.log" 2>&1
  done
done
