#!/usr/bin/env bash
# Writes docs/normalization-gradients.md from docs/normalization-gradients.md.in by running the
# `normlab grad` commands it names, so the tutorial's numbers are real and can be regenerated.
#   <!-- run: ARGS -->           -> "$ normlab ARGS" and its output in a text block (@OUT@ = scratch dir)
#   <!-- snippet: FILE NAME -->  -> the lines of FILE between "// [snippet:NAME]" and "// [/snippet]"
# The probe's plots are copied to docs/img/grad-probe-*.svg.
# Usage: docs/make-normalization-gradients.sh [path/to/normlab]   (default: build/normlab)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$root/build/normlab}"
[[ -x "$bin" ]] || { echo "error: normlab binary '$bin' not found; build first (cmake --build build)" >&2; exit 1; }
template="$root/docs/normalization-gradients.md.in"
target="$root/docs/normalization-gradients.md"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
out="$scratch/page.md"

while IFS= read -r line; do
  if [[ "$line" =~ ^\<!--\ run:\ (.*)\ --\>$ ]]; then
    args="${BASH_REMATCH[1]}"
    shown="${args//@OUT@/results\/grad-probe}"
    echo "running: normlab $shown" >&2
    {
      echo '```text'
      echo "\$ normlab $shown"
      # shellcheck disable=SC2086  # ARGS are words from our own template
      "$bin" ${args//@OUT@/$scratch/probe} | sed "s#$scratch/probe#results/grad-probe#g"
      echo '```'
    } >>"$out"
  elif [[ "$line" =~ ^\<!--\ snippet:\ ([^ ]+)\ ([^ ]+)\ --\>$ ]]; then
    file="$root/${BASH_REMATCH[1]}" name="${BASH_REMATCH[2]}"
    body="$(awk -v s="// [snippet:$name]" '$0 == s {on = 1; next} $0 == "// [/snippet]" {on = 0} on' "$file")"
    [[ -n "$body" ]] || { echo "error: snippet '$name' not found in $file" >&2; exit 1; }
    printf '```cpp\n%s\n```\n' "$body" >>"$out"
  else
    printf '%s\n' "$line" >>"$out"
  fi
done <"$template"

mkdir -p "$root/docs/img"
for f in mean-dx layernorm-simple detachnorm; do
  [[ -f "$scratch/probe/$f.svg" ]] && cp "$scratch/probe/$f.svg" "$root/docs/img/grad-probe-$f.svg"
done
mv "$out" "$target"
echo "wrote $target" >&2
