#!/usr/bin/env bash
# The main job on the bundled example: scan, check for sm_120 (and sm_90 for contrast), then build
# the v1 pull-request branch in a temporary git checkout of the example and print its PR body.
set -uo pipefail
read -r -a tool <<< "${TOOL:-autotune-rewrite}"
example=${EXAMPLE:-examples/sm120_mla_decode}

# Bold headings only on a terminal: `make demo > demo.log 2>&1` must hold no raw escape codes.
if [ -t 2 ] && [ -z "${NO_COLOR:-}" ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain" >&2; }

# check/diff exit 1 when they find something: that is the finding, not a failure of the demo.
allow_found() { "$@"; rc=$?; [ "$rc" -le 1 ] || exit "$rc"; }

step "scan: every @triton.autotune site, its configs and launch sites"
allow_found "${tool[@]}" scan "$example"

step "check: which configs can launch on sm_120 (RTX PRO 6000 Blackwell) and sm_90 (H100/H200)"
allow_found "${tool[@]}" check "$example" --arch sm_120 --arch sm_90

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$example" "$work/repo"
git -C "$work/repo" init -q -b main
git -C "$work/repo" -c user.name=demo -c user.email=demo@example.invalid add -A
git -C "$work/repo" -c user.name=demo -c user.email=demo@example.invalid commit -qm "example serving repo"

step "diff --variant v1 (dry run, what CI prints)"
allow_found "${tool[@]}" diff --variant v1 "$work/repo"

step "apply --variant v1: a review-ready branch in a temporary checkout ($work/repo)"
"${tool[@]}" apply --variant v1 "$work/repo" --out-dir "$work/pr" || exit $?
git -C "$work/repo" branch --list 'autotune-rewrite/*'
git -C "$work/repo" log --format='%n%H%n%B' -1 "$(git -C "$work/repo" branch --list 'autotune-rewrite/*' --format='%(refname:short)' | head -1)"
for body in "$work"/pr/*.md; do
  step "PR body: $body"
  cat "$body"
done
