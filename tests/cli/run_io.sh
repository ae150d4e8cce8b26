#!/usr/bin/env bash
# `cotangent run`: arguments from JSON (a file or standard input) and from .npy files, the
# {"result": ...} format (17 significant digits, non-finite reals as strings, tuples as
# arrays), --output to JSON or .npy, and program errors (exit 1, file:line:col: error:).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

cat >m.cot <<'COT'
def third(x: f64) -> f64 { x / 3.0 }
def dot2(x: f64[n], y: f64[n]) -> f64 { sum i. x[i] * y[i] }
def inv(x: f64[n]) -> f64[n] { for i. 1.0 / x[i] }
def logs(x: f64[n]) -> f64[n] { for i. log(x[i]) }
def pair(x: f64, n: i64) -> (f64, i64) { (x * 2.0, n + 1) }
def tr(A: f64[m, n]) -> f64[n, m] { transpose(A) }
def count(k: i64[n]) -> i64 { sum i. k[i] }
def single(x: f32) -> f32 { x * 3 }
def last(x: f64[n]) -> f64 { x[n] }
def spin(x: f64) -> f64 { loop s = x while s > 0.0 { s + 1.0 } }
COT

# JSON from a file and from standard input; 17 significant digits.
echo '{"x": 1}' >one.json
cot run m.cot third --input one.json
expect_status 0
expect_err_empty
expect_out '{"result": 0.33333333333333331}'
cot_stdin '{"x": 2}' run m.cot third --input -
expect_status 0
expect_err_empty
expect_out '{"result": 0.66666666666666663}'
cot_stdin '{"x": 0.3}' run m.cot third --input -
expect_out '{"result": 0.099999999999999992}'
# Integers and integer-valued reals print without a fraction.
cot_stdin '{"x": [1, 2], "y": [3, 4]}' run m.cot dot2 --input -
expect_status 0
expect_out '{"result": 11}'
cot_stdin '{"k": [1, -5, 7]}' run m.cot count --input -
expect_out '{"result": 3}'

# Tensors as nested arrays, tuples as arrays, f32 results.
cot_stdin '{"A": [[1, 2, 3], [4, 5, 6]]}' run m.cot tr --input -
expect_status 0
expect_out '{"result": [[1, 4], [2, 5], [3, 6]]}'
cot_stdin '{"x": 1.25, "n": 41}' run m.cot pair --input -
expect_out '{"result": [2.5, 42]}'
cot_stdin '{"x": 0.5}' run m.cot single --input -
expect_out '{"result": 1.5}'
cot_stdin '{"x": 0.1}' run m.cot single --input -
expect_out '{"result": 0.30000001192092896}'  # f32: its exact value, 17 significant digits

# Non-finite outputs are the strings "inf", "-inf" and "nan"; they are accepted as inputs too.
cot_stdin '{"x": [1, 0, -0.5]}' run m.cot inv --input -
expect_status 0
expect_out '{"result": [1, "inf", -2]}'
cot_stdin '{"x": [0, 1, -1]}' run m.cot logs --input -
expect_out '{"result": ["-inf", 0, "nan"]}'
cot_stdin '{"x": ["inf", "-inf", "nan"]}' run m.cot inv --input -
expect_status 0
expect_out '{"result": [0, -0.0, "nan"]}'  # "-0" would read back as the integer 0

# --arg NAME=PATH.npy: a tensor parameter from a NumPy file, the rest from JSON.
write_npy x.npy '<f8' '3' '1.5 2.0 -3.0'
echo '{"y": [2, 1, 1]}' >y.json
cot run m.cot dot2 --arg x=x.npy --input y.json
expect_status 0
expect_err_empty
expect_out '{"result": 2}'
# Every parameter from .npy: no --input needed.
write_npy A.npy '<f8' '2,3' '1 2 3 4 5 6'
cot run m.cot tr --arg A=A.npy
expect_status 0
expect_out '{"result": [[1, 4], [2, 5], [3, 6]]}'
write_npy k.npy '<i8' '4' '1 2 3 -10'
cot run m.cot count --arg=k=k.npy
expect_status 0
expect_out '{"result": -4}'
# A .npy of the wrong element type is an input error.
cot run m.cot count --arg k=x.npy
expect_status 1
expect_out_empty
expect_err_contains "x.npy"

# --output OUT.json writes the JSON there and prints nothing.
cot run m.cot tr --arg A=A.npy --output out.json
expect_status 0
expect_out_empty
expect_err_empty
[[ $(cat out.json) == '{"result": [[1, 4], [2, 5], [3, 6]]}' ]] || fail "out.json: $(cat out.json)"
# --output OUT.npy writes a tensor result as .npy.
cot run m.cot tr --arg A=A.npy --output out.npy
expect_status 0
expect_out_empty
expect_err_empty
got=$(read_npy out.npy)
[[ $got == "<f8 3,2 1.0 4.0 2.0 5.0 3.0 6.0" ]] || fail "out.npy holds: $got"
cot_stdin '{"x": 1}' run m.cot third --input - --output scalar.npy
expect_status 0
got=$(read_npy scalar.npy)
[[ $got == "<f8  0.3333333333333333" ]] || fail "scalar.npy holds: $got"
# A tuple cannot be a .npy file.
cot_stdin '{"x": 1, "n": 2}' run m.cot pair --input - --output pair.npy
expect_status 1
expect_err_contains "pair.npy: error: a tuple result cannot be written as .npy"
[[ ! -e pair.npy ]] || fail "pair.npy was written"

# Errors in the program or its input: exit 1, located messages on standard error.
cot_stdin '{"x": [1, 2]}' run m.cot last --input -
expect_status 1
expect_out_empty
expect_err_first_line '^m\.cot:9:30: error: index 2 is out of range'
cot_stdin '{"x": [1, 2' run m.cot inv --input -
expect_status 1
expect_err_first_line '^<stdin>:1:12: error: invalid JSON'
cot_stdin '{"x": [1, "a"]}' run m.cot inv --input -
expect_status 1
expect_err_first_line '^<stdin>:1:11: error: x\[1\] must be a real number \(f64\)'
cot_stdin '{}' run m.cot third --input -
expect_status 1
expect_err_first_line "^<stdin>:1:1: error: parameter 'x' is missing from the input"
cot run m.cot third --input missing.json
expect_status 1
expect_err_first_line '^missing\.json: error: cannot read missing\.json$'
cot_stdin '{"x": 1}' run m.cot nope --input -
expect_status 1
expect_err_first_line '^error: no function named `nope`'
cot_stdin '{"x": 1}' run nofile.cot third --input -
expect_status 1
expect_err_first_line '^nofile\.cot: error: cannot read nofile\.cot'
cot_stdin '{"x": 1}' run m.cot spin --input - --max-iterations 10
expect_status 1
expect_err_first_line '^m\.cot:10:'

echo "run_io.sh: ok"
