#!/usr/bin/env bash
# Run before the tests (npm pretest): the browser sign-in test drives Debian's chromium through
# playwright-core. Install it when missing and possible (Debian, root or sudo); otherwise say so —
# the browser test is then skipped outside CI and fails in CI.
set -u
[ -x /usr/bin/chromium ] && exit 0
if ! command -v apt-get >/dev/null; then
  echo "ensure-chromium: /usr/bin/chromium is missing and apt-get is not available; install Chromium to run the browser test"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
    echo "ensure-chromium: /usr/bin/chromium is missing; run: sudo apt-get install chromium"
    exit 0
  fi
fi
echo "ensure-chromium: installing Debian's chromium for the browser sign-in test"
export DEBIAN_FRONTEND=noninteractive
if ! { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null; }; then
  echo "ensure-chromium: chromium could not be installed"
fi
exit 0
