#!/usr/bin/env bash
# packaging_deb_test.sh BUILD_DIR VERSION SOURCE_DIR — the ctest test packaging_deb_test (tests/packaging/CMakeLists.txt).
# Builds taxicore_VERSION_*.deb from BUILD_DIR's CPack configuration into a temporary directory,
# unpacks it with dpkg-deb -x and checks the unpacked files as an installed system would use them.
set -euo pipefail

build_dir=$1
version=$2
source_dir=$3
# Scratch space inside the build tree: clean-ups of /tmp by other jobs cannot pull it away mid-run.
mkdir -p "$build_dir/tests/packaging"
work=$(mktemp -d "$build_dir/tests/packaging/run.XXXXXX")
server_pid=
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
trap 'echo "FAIL: packaging_deb_test.sh line $LINENO: $BASH_COMMAND" >&2' ERR
step() { echo "--- $*"; }

for tool in cpack dpkg-deb dpkg-shlibdeps ldd curl lintian desktop-file-validate appstreamcli groff man; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
done
for program in taxicore taxicore-server taxicore-bench taxicore-bench-charts taxicore-import-city; do
  [ -x "$build_dir/bin/$program" ] || { echo "FAIL: $build_dir/bin/$program is not built (build the project first)" >&2; exit 1; }
done

step "cpack: building the package"
# CPackConfig.cmake as the build wrote it, with all output in $work. (With Ninja, cpack installs
# what is built and builds nothing; the programs are checked above.)
cat > "$work/cpack-config.cmake" <<CONFIG
include("$build_dir/CPackConfig.cmake")
set(CPACK_PACKAGE_DIRECTORY "$work/pkg")
set(CPACK_OUTPUT_FILE_PREFIX "$work/pkg")
CONFIG
if ! (cd "$build_dir" && timeout 240 cpack --config "$work/cpack-config.cmake") > "$work/cpack.log" 2>&1; then
  cat "$work/cpack.log" >&2
  echo "FAIL: cpack" >&2
  exit 1
fi
deb=$(ls "$work"/pkg/taxicore_"$version"_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || { ls -R "$work/pkg" >&2; echo "FAIL: no taxicore_${version}_*.deb was made" >&2; exit 1; }
echo "made $(basename "$deb")"

step "control: version and dependencies"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "package version $(dpkg-deb -f "$deb" Version), project version $version"
depends=$(dpkg-deb -f "$deb" Depends)
depends_names=$(tr ',' '\n' <<<"$depends" | sed 's/(.*//; s/|.*//; s/ //g')   # one package name a line
for needed in libqt6core6 libqt6quick6 libqt6httpserver6 libqt6sql6-sqlite qt6-qpa-plugins qml6-module-qtquick-controls \
              qml6-module-qtquick-layouts qml6-module-qtquick-dialogs qml6-module-qtcharts; do
  grep -qx "$needed" <<<"$depends_names" || fail "Depends lacks $needed: $depends"
done
# Every Qt module the console's QML imports is loaded by name at run time, which dpkg-shlibdeps
# cannot see: each needs its Debian package in Depends (QtQuick.Controls → qml6-module-qtquick-controls).
for module in $(grep -rhoE '^import Qt[A-Za-z.]*' "$source_dir/qml" "$source_dir/app" --include='*.qml' | awk '{print $2}' | sort -u); do
  needed="qml6-module-$(tr 'A-Z.' 'a-z-' <<<"$module")"
  grep -qx "$needed" <<<"$depends_names" || fail "qml imports $module: Depends lacks $needed (packaging/CMakeLists.txt)"
done
dpkg-deb -I "$deb" conffiles | grep -qx /etc/default/taxicore-server || fail "/etc/default/taxicore-server is not a conffile"

step "unpacking into a throw-away root"
root="$work/root"
dpkg-deb -x "$deb" "$root"
for file in usr/bin/taxicore usr/bin/taxicore-server usr/bin/taxicore-bench usr/bin/taxicore-bench-charts \
            usr/bin/taxicore-import-city usr/share/taxicore/cities/gothenburg.taxicity \
            usr/share/applications/taxicore.desktop usr/share/icons/hicolor/scalable/apps/taxicore.svg \
            usr/share/metainfo/io.github.taxicore.TaxiCore.metainfo.xml usr/share/doc/taxicore/copyright \
            usr/share/man/man1/taxicore.1.gz usr/share/man/man1/taxicore-server.1.gz usr/share/man/man1/taxicore-bench.1.gz \
            usr/share/man/man1/taxicore-bench-charts.1.gz usr/share/man/man1/taxicore-import-city.1.gz \
            lib/systemd/system/taxicore-server.service etc/default/taxicore-server; do
  [ -e "$root/$file" ] || fail "/$file is not in the package"
done

step "ldd: every ELF file's libraries resolve"
elf_count=0
while IFS= read -r -d '' file; do
  head -c 4 "$file" | grep -q $'\x7fELF' || continue
  elf_count=$((elf_count + 1))
  missing=$(ldd "$file" 2>&1 | grep "not found" || true)
  [ -z "$missing" ] || fail "${file#"$root"}: $missing"
done < <(find "$root" -type f -print0)
[ "$elf_count" -ge 5 ] || fail "only $elf_count ELF files in the package"
echo "$elf_count ELF files checked"

step "the unpacked taxicore-server: version, the bundled city, an HTTP request"
printed=$("$root/usr/bin/taxicore-server" --version)
grep -q "$version" <<<"$printed" || fail "--version printed '$printed', not $version"
"$root/usr/bin/taxicore-server" --port 0 --data-dir "$work/data" --cars 20 > "$work/server.out" 2> "$work/server.err" &
server_pid=$!
url=
for _ in $(seq 1 300); do   # up to 30 s on a loaded machine
  url=$(sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$work/server.out" | head -1)
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$url" ]; then
  cat "$work/server.out" "$work/server.err" >&2
  fail "the unpacked taxicore-server did not start"
else
  health=$(curl -sS --max-time 10 "$url/healthz" || true)
  grep -q "\"version\": *\"$version\"" <<<"$health" || fail "/healthz answered '$health' (want version $version)"
  route_status=$(curl -sS --max-time 10 -o "$work/route.json" -w '%{http_code}' \
    "$url/api/v1/route?from_lat=57.700&from_lng=11.950&to_lat=57.708&to_lng=11.975" || true)
  [ "$route_status" = 200 ] || fail "GET /api/v1/route answered $route_status: $(cat "$work/route.json" 2>/dev/null)"
  # The city file stays mapped while the server runs: it must be the packaged copy, found
  # relative to the binary, not the one in the source tree.
  grep -q "$root/usr/share/taxicore/cities/gothenburg.taxicity" "/proc/$server_pid/maps" \
    || fail "the server did not map the packaged city: $(grep -o '/[^ ]*\.taxicity' "/proc/$server_pid/maps" | sort -u)"
  kill -TERM "$server_pid" 2>/dev/null || fail "taxicore-server died while serving: $(cat "$work/server.err")"
  status=0
  for _ in $(seq 1 150); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$server_pid" 2>/dev/null; then
    kill -KILL "$server_pid"; fail "taxicore-server did not stop within 15 s of SIGTERM"
  fi
  wait "$server_pid" || status=$?
  [ "$status" = 0 ] || fail "taxicore-server exited with $status after SIGTERM"
  server_pid=
fi

step "lintian: no errors"
# Every tag shown; E: lines fail the test, W:/I: are reported only.
lintian --tag-display-limit 0 "$deb" > "$work/lintian.log" 2>&1 || true
cat "$work/lintian.log"
if grep -q '^E: ' "$work/lintian.log"; then fail "lintian reports errors"; fi

step "systemd-analyze verify taxicore-server.service"
if command -v systemd-analyze >/dev/null; then
  # Pointed at the unpacked binary (verify checks that ExecStart is executable).
  sed "s|/usr/bin/taxicore-server|$root/usr/bin/taxicore-server|" "$root/lib/systemd/system/taxicore-server.service" \
    > "$work/taxicore-server.service"
  systemd-analyze verify --man=no "$work/taxicore-server.service" || fail "systemd-analyze verify"
else
  echo "SKIP: systemd-analyze not installed (a container without systemd): the unit file is not verified"
fi

step "desktop-file-validate, appstreamcli validate"
desktop-file-validate "$root/usr/share/applications/taxicore.desktop" || fail "desktop-file-validate"
appstreamcli validate --no-net "$root/usr/share/metainfo/io.github.taxicore.TaxiCore.metainfo.xml" \
  || fail "appstreamcli validate"
grep -q "<release version=\"$version\"" "$root/usr/share/metainfo/io.github.taxicore.TaxiCore.metainfo.xml" \
  || fail "the metainfo has no release $version"

step "man pages: no warnings, every flag of --help documented"
for page in taxicore taxicore-server taxicore-bench taxicore-bench-charts taxicore-import-city; do
  gz="$root/usr/share/man/man1/$page.1.gz"
  warnings=$( { zcat "$gz" | groff -man -Tutf8 -ww >/dev/null; } 2>&1)
  [ -z "$warnings" ] || fail "groff warns on $page.1: $warnings"
  warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$gz" 2>&1 >/dev/null)
  [ -z "$warnings" ] || fail "man warns on $page.1: $warnings"
  text=$(zcat "$gz" | sed 's/\\-/-/g')   # the roff source, \- read as -
  help=$(QT_QPA_PLATFORM=offscreen timeout 20 "$root/usr/bin/$page" --help 2>&1 || true)
  for flag in $(grep -oE -- '--[a-z0-9][a-z0-9.-]*' <<<"$help" | sort -u); do
    grep -qF -- "$flag" <<<"$text" || fail "$page --help lists $flag, packaging/man/$page.1 does not"
  done
done

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "package $(basename "$deb") OK"
