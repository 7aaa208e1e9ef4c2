# bash completion for cudag(1).
#
# Installed as share/bash-completion/completions/cudag, where bash-completion
# loads it on first use; or source it from ~/.bashrc.  Completes the
# subcommands, their options (the common ones of tools/cli/cli.h, those of the
# commands that run a graph, and each command's own, as README.md's CLI
# section documents them), graph files
# (*.yaml, *.yml) and directories, and the values of options that take a
# file or a directory.  It needs nothing from the bash-completion package and
# leaves the caller's shell options as it found them.

_cudag_commands="check dot plan run bench cache help"
_cudag_common_opts="-D -I --Werror --strict --max-errors -q --help"
_cudag_gpu_opts="--no-pdl --device-launch --gate --no-cache --nvtx --device --timeout"

# Prints the options of subcommand $1 besides the common ones.
_cudag_cmd_opts()
{
    case $1 in
        dot) echo "-o --render --no-critical --no-clusters" ;;
        plan) echo "--json" ;;
        run) echo "$_cudag_gpu_opts --iters --warmup --dump --json" ;;
        bench) echo "$_cudag_gpu_opts --iters --warmup --host-repeats --json" ;;
    esac
}

# True when option $1 takes a value (the next word, or after '=').
_cudag_takes_value()
{
    case $1 in
        -D | -I | --max-errors | --device | --timeout | -o | --render | --iters | --warmup | --host-repeats | --dump) return 0 ;;
    esac
    return 1
}

# Appends to COMPREPLY the directories and the files whose names start with
# $1 and match the extended glob $2 (every file when $2 is empty).
_cudag_files()
{
    local cur=$1 pattern=$2 f
    local -a found
    compopt -o filenames 2>/dev/null
    mapfile -t found < <(compgen -d -- "$cur")
    COMPREPLY+=("${found[@]}")
    mapfile -t found < <(compgen -f -- "$cur")
    for f in "${found[@]}"; do
        [[ -d $f ]] && continue
        # shellcheck disable=SC2053  # $pattern is a glob on purpose
        [[ -z $pattern || $f == $pattern ]] && COMPREPLY+=("$f")
    done
}

# Completes $2 as the value of option $1.  Returns 1 when $1 takes no value.
_cudag_value()
{
    local opt=$1 cur=$2
    local -a found
    case $opt in
        -I)
            compopt -o filenames 2>/dev/null
            mapfile -t found < <(compgen -d -- "$cur")
            COMPREPLY+=("${found[@]}")
            ;;
        --render) _cudag_files "$cur" '*.@(svg|png)' ;;
        -o) _cudag_files "$cur" '*.@(dot|gv)' ;;
        # -D NAME=VALUE, --dump BUF=PATH (names from the graph), numbers.
        -D | --dump | --max-errors | --device | --timeout | --iters | --warmup | --host-repeats) ;;
        *) return 1 ;;
    esac
    return 0
}

_cudag_complete()
{
    local cur=${COMP_WORDS[COMP_CWORD]}
    local prev=${COMP_WORDS[COMP_CWORD - 1]}

    # With '=' in COMP_WORDBREAKS (the default) bash splits `--render=F`
    # into --render, '=' and F, and `--dump BUF=PATH` into --dump, BUF, '='
    # and PATH.  `before` is the word in front of the '='.
    if [[ $cur == "=" || $prev == "=" ]]; then
        local before=$((COMP_CWORD - 1))
        if [[ $cur != "=" ]]; then
            before=$((COMP_CWORD - 2))
        fi
        [[ $cur == "=" ]] && cur=
        if ((before >= 1)) && [[ ${COMP_WORDS[before - 1]} == --dump ]]; then
            _cudag_files "$cur" ""
        elif ((before >= 1)); then
            _cudag_value "${COMP_WORDS[before]}" "$cur"
        fi
        return
    fi

    # The subcommand is the first word that is neither an option nor the
    # value of one; i is left at its index.
    local cmd="" i=1 w
    while ((i < COMP_CWORD)); do
        w=${COMP_WORDS[i]}
        if [[ $w == "=" ]]; then
            ((i += 2))                  # "=VALUE" glued to the word before
        elif _cudag_takes_value "$w"; then
            if [[ ${COMP_WORDS[i + 1]} == "=" ]]; then
                ((i += 3))
            else
                ((i += 2))
            fi
        elif [[ $w == -* ]]; then
            ((i += 1))
        else
            cmd=$w
            break
        fi
    done

    if _cudag_value "$prev" "$cur"; then
        return
    fi

    if [[ -z $cmd ]]; then
        if [[ $cur == -* ]]; then
            mapfile -t COMPREPLY < <(compgen -W "--help --version" -- "$cur")
        else
            mapfile -t COMPREPLY < <(compgen -W "$_cudag_commands" -- "$cur")
        fi
    elif [[ $cmd == cache ]]; then
        if ((COMP_CWORD == i + 1)); then
            mapfile -t COMPREPLY < <(compgen -W "clean" -- "$cur")
        fi
    elif [[ $cmd == help ]]; then
        if ((COMP_CWORD == i + 1)); then
            mapfile -t COMPREPLY < <(compgen -W "${_cudag_commands% help}" -- "$cur")
        fi
    elif [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W \
            "$_cudag_common_opts $(_cudag_cmd_opts "$cmd")" -- "$cur")
    else
        _cudag_files "$cur" '*.@(yaml|yml)'
    fi
}

_cudag()
{
    COMPREPLY=()
    # The globs above are extended ones; restore the user's setting after.
    local restore_extglob
    restore_extglob=$(shopt -p extglob)
    shopt -s extglob
    _cudag_complete
    $restore_extglob
    return 0
}

complete -F _cudag cudag
