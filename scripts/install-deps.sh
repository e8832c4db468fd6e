#!/usr/bin/env bash
# Installs what building, running and testing TaxiCore needs on Debian 12.
# Idempotent and quiet when everything is already there; run as root or with sudo.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  qt6-base-dev qt6-base-dev-tools qt6-httpserver-dev qt6-websockets-dev qt6-declarative-dev
  qt6-declarative-dev-tools qt6-positioning-dev qt6-charts-dev libqt6sql6-sqlite libgl-dev
  qml6-module-qtquick qml6-module-qtquick-controls qml6-module-qtquick-layouts
  qml6-module-qtquick-window qml6-module-qtquick-templates qml6-module-qtqml-workerscript
  qml6-module-qtquick-dialogs qml6-module-qtcharts qml6-module-qttest qml6-module-qtqml
  qt6-qpa-plugins libgl1-mesa-dri xvfb xauth
  apache2-utils wrk siege hyperfine
  libosmium2-dev zlib1g-dev libbz2-dev libexpat1-dev
  clang libclang-rt-14-dev llvm clang-format
  chromium
  postgresql libpq-dev redis-server libhiredis-dev nginx-light iptables faketime
  dpkg-dev lintian desktop-file-utils appstream curl groff man-db
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# Node.js may come from another source with npm bundled: only ask apt when the commands are absent.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
[ ${#missing[@]} -eq 0 ] && exit 0

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
timeout 600 "${sudo_cmd[@]}" apt-get update -qq
timeout 1800 "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
