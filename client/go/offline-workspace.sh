#!/bin/sh
# Writes OUT_DIR/go.work: a Go workspace over the modules USE_DIR... that
# builds offline (GOPROXY=off) against Debian's Go sources. Every module
# with a go.mod under $GOCODE/src (default /usr/share/gocode: grpc,
# protobuf, x/net, ...) replaces all versions of itself; every module that
# their go.mod files require and Debian does not ship (only packages we
# never import live there: xds's envoyproxy, glog, ...) replaces itself
# with an empty module under OUT_DIR/absent/. Made at build time, never
# committed: a user with the module proxy needs none of it.
#
#   client/go/offline-workspace.sh OUT_DIR USE_DIR...
set -eu
out=$1
shift
src=${GOCODE:-/usr/share/gocode}/src
mkdir -p "$out"
work=$out/go.work.tmp
echo "go 1.18" >"$work"
for dir in "$@"; do
  echo "use $(cd "$dir" && pwd)" >>"$work"
done
present=$(cd "$src" && find . -name go.mod -not -path '*/testdata/*' |
  sed 's|^\./||; s|/go.mod$||' | sort)
for module in $present; do
  echo "replace $module => $src/$module" >>"$work"
done
# Required modules: "require path version" and the lines of require blocks.
required=$(for module in $present; do
  awk '/^require \(/ {block = 1; next}
       block && /^\)/ {block = 0; next}
       block && NF >= 2 && $1 !~ /^\/\// {print $1}
       /^require [^(]/ {print $2}' "$src/$module/go.mod"
done | sort -u)
for module in $required; do
  case " $(echo $present) " in *" $module "*) continue ;; esac
  mkdir -p "$out/absent/$module"
  echo "module $module" >"$out/absent/$module/go.mod"
  echo "replace $module => $out/absent/$module" >>"$work"
done
mv "$work" "$out/go.work"
