# Sourced by scripts/test.sh and scripts/demo.sh: installs the named commands' Debian packages
# when they are missing (as root, with apt-get); otherwise warns and lets the step that needs them
# say how to install them.
install_missing() {
  local why=$1
  shift
  local missing=()
  for cmd in "$@"; do
    command -v "$cmd" >/dev/null 2>&1 || missing+=("$cmd")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "installing ${missing[*]} ($why)" >&2
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    else
      echo "warning: ${missing[*]} missing; the steps that need them will say how to install them" >&2
    fi
  fi
}
