# bash completion for quereus(1); installed as <prefix>/share/bash-completion/completions/quereus.
_quereus() {
  local cur prev
  cur="${COMP_WORDS[COMP_CWORD]}"
  prev="${COMP_WORDS[COMP_CWORD-1]}"
  case "$prev" in
    --format|--mode)
      COMPREPLY=($(compgen -W "table box csv tsv json jsonl markdown line" -- "$cur")); return ;;
    --bail|--headers)
      COMPREPLY=($(compgen -W "on off" -- "$cur")); return ;;
    --config)
      COMPREPLY=($(compgen -f -X '!*.@(yaml|yml)' -- "$cur") $(compgen -d -- "$cur")); return ;;
    -c|--command|--nullvalue)
      return ;;
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "--config --format --mode -c --command --bail --headers --no-header --nullvalue
      --check-syntax --version --help" -- "$cur"))
    return
  fi
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "check" -- "$cur"))
  fi
  COMPREPLY+=($(compgen -f -X '!*.sql' -- "$cur") $(compgen -d -- "$cur"))
}
complete -o filenames -F _quereus quereus
