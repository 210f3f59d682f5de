#!/usr/bin/env bash
# Names each tool the build and the tests use, where it was found and its
# version, or that it is missing and which make target or package brings
# it. make setup runs it last; it changes nothing.
# Usage: scripts/setup-report.sh [VENV] (default: make setup's venv)
set -uo pipefail
venv="${1:-${XDG_DATA_HOME:-$HOME/.local/share}/usermemory/venv}"
PATH="$PATH:$venv/bin"
missing=0

# say NAME PATH VERSION: one line of the report.
say() { printf '  %-12s %s (%s)\n' "$1" "$2" "$3"; }
lack() { printf '  %-12s MISSING: %s\n' "$1" "$2"; missing=$((missing + 1)); }

# python_of PROGRAM: the Python interpreter a Python program's first line
# names, or python3 when it names none (a pyenv shim, for one).
python_of() {
  local first
  first=$(head -n 1 "$1" 2>/dev/null)
  case "$first" in
    '#!'*python*) echo "${first#\#!}" | awk '{print $1}' ;;
    *) echo python3 ;;
  esac
}

echo "tools found (make setup installs moto_server and cfn-lint into $venv where they are missing):"

if p=$(command -v go); then say go "$p" "$(go env GOVERSION 2>/dev/null || echo 'version unknown')"
else lack go "install Go (go.mod names the version: $(awk '/^go /{print $2}' go.mod 2>/dev/null))"; fi

if p=$(command -v python3); then say python3 "$p" "$(python3 --version 2>&1)"
else lack python3 "install Python 3 with its venv module (Debian and Ubuntu: sudo apt-get install python3-venv)"; fi

moto="${USERMEMORY_MOTO_SERVER:-$(command -v moto_server)}"
if [ -n "$moto" ] && [ -x "$(command -v "$moto")" ]; then
  v=$("$(python_of "$(command -v "$moto")")" -c 'import moto; print("moto " + moto.__version__)' 2>/dev/null || echo "version unknown")
  from=""; [ -n "${USERMEMORY_MOTO_SERVER:-}" ] && from=", named by USERMEMORY_MOTO_SERVER"
  say moto_server "$(command -v "$moto")" "$v$from"
else lack moto_server "make setup installs it"; fi

if p=$(command -v cfn-lint); then say cfn-lint "$p" "$(cfn-lint --version 2>/dev/null || echo 'version unknown')"
else lack cfn-lint "make setup installs it"; fi

if p=$(command -v node); then say node "$p" "$(node --version 2>/dev/null)"
else lack node "the TypeScript client and the page's audit need Node.js 20.19+ (Debian and Ubuntu: sudo apt-get install nodejs npm)"; fi

if p=$(command -v npm); then say npm "$p" "$(npm --version 2>/dev/null)"
else lack npm "comes with Node.js (Debian and Ubuntu: sudo apt-get install npm)"; fi

if p=$(command -v chromium || command -v chromium-browser); then say chromium "$p" "$("$p" --version 2>/dev/null | head -n 1 || echo 'version unknown')"
else lack chromium "the browser tests need it: make browser installs Debian's chromium"; fi

if [ "$missing" -gt 0 ]; then echo "$missing missing: make test needs them all; a plain go test ./... skips the tests that need them (go run ./scripts/skips names them)"; fi
exit 0
