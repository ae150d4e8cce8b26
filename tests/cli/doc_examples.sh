#!/usr/bin/env bash
# Checks the examples of the language reference, docs/language.md:
#   - every ```cot block that defines a function passes `cotangent check` (exit code 0);
#   - every ```cot-error block that defines a function fails it with exit code 1;
#   - every ```console transcript prints exactly what the document shows. A transcript line
#     `$ COMMAND` runs COMMAND (with `cotangent` meaning the binary under test) in a scratch
#     directory, after writing the closest preceding cot/cot-error block to each `NAME.cot`
#     the command names; the lines up to the next `$ ` are its expected standard output and
#     standard error, interleaved as a terminal shows them.
# Set COT_DOC_SKIP_TRANSCRIPTS=1 to check the blocks only.
#
# Run by ctest as: bash doc_examples.sh <path-to-cotangent> <source-dir>
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: bash $0 <path-to-cotangent> <source-dir>" >&2
  exit 2
fi
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
doc=$2/docs/language.md
if [[ ! -x $bin ]]; then
  echo "error: $bin is not an executable" >&2
  exit 2
fi
if [[ ! -f $doc ]]; then
  echo "error: $doc does not exist" >&2
  exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/blocks" "$tmp/work"

# Split the document into its fenced blocks: blocks/NNN holds the text of block NNN, and
# blocks/index lists "NNN KIND LINE" (LINE: the block's first line in the document).
awk -v dir="$tmp/blocks" '
  !inside && /^```/ {
    inside = 1
    n++
    kind = substr($0, 4)
    if (kind == "") kind = "-"
    file = sprintf("%s/%03d", dir, n)
    printf "" > file
    printf "%03d %s %d\n", n, kind, NR + 1 >> (dir "/index")
    next
  }
  inside && $0 == "```" { inside = 0; close(file); next }
  inside { print >> file }
  END { if (inside) { print "unterminated code block" > "/dev/stderr"; exit 1 } }
' "$doc"

failures=0
checked=0
transcripts=0
fail() {
  echo "FAIL: docs/language.md:$1: $2" >&2
  failures=$((failures + 1))
}

defines_functions() { grep -Eq '^[[:space:]]*def[[:space:]]' "$1"; }

# Runs one transcript command in the scratch directory; prints its output (stdout and stderr).
run_command() {
  local source=$1 cmd=$2 name
  for name in $({ grep -oE '[A-Za-z0-9_.-]+\.cot' <<<"$cmd" || true; } | sort -u); do
    if [[ -z $source ]]; then
      echo "(no cot block precedes this transcript)"
      return
    fi
    cp "$source" "$tmp/work/$name"
  done
  (cd "$tmp/work" &&
    COT_BIN=$bin bash -c 'cotangent() { "$COT_BIN" "$@"; }; '"$cmd" </dev/null 2>&1) || true
}

# Compares the commands of one ```console block with what they print.
check_transcript() {
  local block=$1 line=$2 source=$3
  local -a cmds=() starts=() outputs=()
  local text k=0 i expected actual
  while IFS= read -r text || [[ -n $text ]]; do
    if [[ $text == '$ '* ]]; then
      cmds+=("${text#\$ }")
      starts+=($((line + k)))
      outputs+=("")
    elif [[ ${#cmds[@]} -gt 0 ]]; then
      i=$((${#cmds[@]} - 1))
      outputs[i]+=$text$'\n'
    fi
    k=$((k + 1))
  done <"$block"
  for i in "${!cmds[@]}"; do
    expected=$(printf '%s' "${outputs[i]}")
    actual=$(run_command "$source" "${cmds[i]}")
    if [[ "$actual" != "$expected" ]]; then
      fail "${starts[i]}" "the output of \`${cmds[i]}\` differs (< documented, > actual):"$'\n'"$(
        diff <(printf '%s\n' "$expected") <(printf '%s\n' "$actual") || true)"
    fi
    transcripts=$((transcripts + 1))
  done
}

source=""
while read -r n kind line; do
  block=$tmp/blocks/$n
  case $kind in
    cot | cot-error)
      source=$block
      defines_functions "$block" || continue
      cp "$block" "$tmp/example.cot"
      status=0
      output=$("$bin" check "$tmp/example.cot" 2>&1) || status=$?
      want=0
      [[ $kind == cot-error ]] && want=1
      if [[ $status -ne $want ]]; then
        fail "$line" "\`cotangent check\` exited with $status, expected $want"$'\n'"$output"
      fi
      checked=$((checked + 1))
      ;;
    console)
      if [[ ${COT_DOC_SKIP_TRANSCRIPTS:-0} != 1 ]]; then
        check_transcript "$block" "$line" "$source"
      fi
      ;;
  esac
done <"$tmp/blocks/index"

if [[ $checked -eq 0 ]]; then
  fail 1 "no cot blocks were found"
fi
echo "docs/language.md: $checked cot blocks checked, $transcripts transcript commands compared," \
  "$failures failures"
[[ $failures -eq 0 ]]
