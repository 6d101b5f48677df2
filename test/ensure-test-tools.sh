#!/usr/bin/env bash
# Run before the tests (npm pretest): the browser tests drive Debian's chromium through
# playwright-core, the federation tests start Debian's OpenLDAP slapd as a throwaway directory.
# Install what is missing when possible (Debian, root or sudo); otherwise say so — those tests are
# then skipped outside CI and fail in CI.
set -u
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/sbin/slapd ] || missing+=(slapd)
[ ${#missing[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null; then
  echo "ensure-test-tools: ${missing[*]} missing and apt-get is not available; install them to run the browser and LDAP tests"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
    echo "ensure-test-tools: ${missing[*]} missing; run: sudo apt-get install ${missing[*]}"
    exit 0
  fi
fi
echo "ensure-test-tools: installing Debian's ${missing[*]} for the tests"
export DEBIAN_FRONTEND=noninteractive
# slapd's package would start a system directory: it is not wanted (the tests start their own).
if ! { $SUDO apt-get update -qq && $SUDO env RUNLEVEL=1 apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }; then
  echo "ensure-test-tools: ${missing[*]} could not be installed"
fi
exit 0
