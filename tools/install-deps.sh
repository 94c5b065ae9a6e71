#!/bin/sh
# Installs the Debian packages hlo's build and tests need, when missing.
# Runs as root (as on the project's machines) or through sudo.
set -e
need=""
for p in gcc make liblapack-dev libblas-dev python3; do
  dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
[ -z "$need" ] && exit 0
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
echo "installing:$need"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $need
