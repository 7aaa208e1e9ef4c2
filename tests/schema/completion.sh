#!/usr/bin/env bash
# Checks tools/cli/cudag.bash: sources it, fills COMP_WORDS/COMP_CWORD as bash
# does for a command line, calls the completion function and compares
# COMPREPLY with what should be offered.  Then checks that the options it
# offers are exactly the ones README.md's CLI section documents, that it
# offers the common options of tools/cli/cli.h everywhere and its run-only
# options to run and bench alone, so the three cannot drift apart.
#
#     completion.sh SRCROOT
#
# Exits 0 on success, 1 on a failure, 77 (SKIP) where bash has no
# programmable completion.
set -u

src=$(cd "${1:?usage: completion.sh SRCROOT}" && pwd)
if ! type complete >/dev/null 2>&1 || ! type compgen >/dev/null 2>&1; then
    echo "SKIP: this bash has no programmable completion"
    exit 77
fi

# shellcheck source=/dev/null  # the path is an argument
. "$src/tools/cli/cudag.bash"

failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

# complete WORD... : the sorted completions for a line whose last word (maybe
# empty) is the one under the cursor.
complete_line() {
    COMP_WORDS=(cudag "$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMP_LINE="${COMP_WORDS[*]}"
    COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    _cudag cudag "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
    ((${#COMPREPLY[@]})) && printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort
}

# expect 'WORD...' EXPECTED... : the completions must be exactly EXPECTED.
expect() {
    local line=$1
    shift
    local got want
    # shellcheck disable=SC2086  # the line is split into words on purpose
    got=$(eval "complete_line $line" | tr '\n' ' ')
    want=$(printf '%s\n' "$@" | LC_ALL=C sort | tr '\n' ' ')
    [[ $# -eq 0 ]] && want=""
    if [[ $got == "$want" ]]; then
        echo "ok   cudag $line -> ${want:-(nothing)}"
    else
        fail "cudag $line"
        echo "     want: ${want:-(nothing)}"
        echo "     got:  ${got:-(nothing)}"
    fi
}

if [[ $(complete -p cudag 2>/dev/null) == "complete -F _cudag cudag" ]]; then
    echo "ok   complete -F _cudag cudag"
else
    fail "the script registers _cudag for cudag: $(complete -p cudag 2>&1)"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
mkdir sub
touch a.yaml b.yml c.txt d.svg e.png f.dot "sp ace.yaml" sub/g.yaml

shopt -u extglob
all_run=(-D -I --Werror --max-errors --no-pdl --device-launch --gate --no-cache --strict --nvtx --device --timeout -q --help
    --iters --warmup --dump --json)
mapfile -t long_run < <(printf '%s\n' "${all_run[@]}" | grep -e '^--')

expect "''" check dot plan run bench cache help
expect "r" run
expect "b" bench
expect "-" --help --version
expect "run -" "${all_run[@]}"
expect "run --" "${long_run[@]}"
expect "bench --" --Werror --max-errors --no-pdl --device-launch --gate --no-cache --strict --nvtx --device --timeout --help --iters --warmup --host-repeats --json
expect "dot -" -D -I --Werror --strict --max-errors -q --help -o --render --no-critical --no-clusters
expect "plan --j" --json
expect "plan --" --Werror --strict --max-errors --help --json
expect "check --" --Werror --strict --max-errors --help
expect "check ''" a.yaml b.yml "sp ace.yaml" sub
expect "run sp" "sp ace.yaml"
expect "run sub/" sub/g.yaml
expect "dot --render ''" d.svg e.png sub
expect "dot -o ''" f.dot sub
expect "run -I ''" sub
expect "run --iters ''"
expect "run --device ''"
expect "run --timeout ''"
expect "help ''" check dot plan run bench cache
expect "help run ''"
expect "run -D N = 4 ''" a.yaml b.yml "sp ace.yaml" sub
expect "run -D N = 4 --no" --no-pdl --no-cache
expect "cache ''" clean
expect "run --iters 5 a.yaml --w" --warmup
expect "run --iters 5 a.yaml --W" --Werror
expect "run --dump out = ''" a.yaml b.yml c.txt d.svg e.png f.dot "sp ace.yaml" sub
expect "run --dump out = d" d.svg
expect "dot --render = ''" d.svg e.png sub
expect "dot --render = e" e.png

if shopt -q extglob; then
    fail "the completion left extglob switched on"
else
    echo "ok   extglob is restored"
fi

# Every option the completion offers, for any subcommand or none.
offered=$( {
    complete_line -
    for c in check dot plan run bench; do complete_line "$c" -; done
} | LC_ALL=C sort -u)

# Every option README.md's CLI section names (in code spans and blocks).
documented=$(sed -n '/<!-- cli:begin -->/,/<!-- cli:end -->/p' "$src/README.md" |
    grep -oE '(^|[[:space:]`[])--?[A-Za-z][-A-Za-z0-9]*' |
    sed -E 's/^[^-]+//' | LC_ALL=C sort -u)
if [[ -z $documented ]]; then
    fail "README.md's CLI section documents no option"
elif [[ $offered == "$documented" ]]; then
    echo "ok   the options offered are those README.md documents"
else
    fail "the options offered are those README.md documents"
    diff <(echo "$documented") <(echo "$offered") | sed -n 's/^</     only in README.md:/p; s/^>/     only in the completion:/p'
fi

# The options that tools/cli/cli.h parses: the common ones (its first sentence)
# for every subcommand, the others for run and bench alone.
opts_of() {
    grep -o -e ' -[A-Za-z]\b' -e '--[a-zA-Z][-a-zA-Z]*' | tr -d ' ' | LC_ALL=C sort -u
}
parse_doc=$(sed -n '/Parses one common option/,/\*\//p' "$src/tools/cli/cli.h" | tr '\n' ' ')
common=$(echo "${parse_doc%%.  *}" | opts_of)
gpu=$(echo "${parse_doc#*.  }" | opts_of)
if [[ -z $common || -z $gpu ]]; then
    fail "no common or run-only option found in tools/cli/cli.h"
fi
for c in check dot plan run bench; do
    offered=$(complete_line "$c" -)
    missing=$(LC_ALL=C comm -23 <(echo "$common") <(echo "$offered"))
    if [[ -n $missing ]]; then
        fail "cudag $c - lacks the common options of tools/cli/cli.h: ${missing//$'\n'/ }"
    fi
    case $c in
    run | bench) wrong=$(LC_ALL=C comm -23 <(echo "$gpu") <(echo "$offered")) ;;
    *) wrong=$(LC_ALL=C comm -12 <(echo "$gpu") <(echo "$offered")) ;;
    esac
    if [[ -n $wrong ]]; then
        fail "cudag $c - gets the run-only options of tools/cli/cli.h wrong: ${wrong//$'\n'/ }"
    fi
done
[[ -n $common ]] && echo "ok   every subcommand offers the common options of tools/cli/cli.h: ${common//$'\n'/ }"
[[ -n $gpu ]] && echo "ok   run and bench alone offer: ${gpu//$'\n'/ }"

if ((failures)); then
    echo "$failures failed"
    exit 1
fi
echo "all passed"
