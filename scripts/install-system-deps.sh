#!/usr/bin/env bash
# Install the Debian packages Lazarus's embedded stack and tests need (run as root).
#
# Package post-install scripts would start the *system* munge, Slurm and MariaDB
# services, which then sit on default ports and sockets; a temporary
# /usr/sbin/policy-rc.d that exits 101 stops them. Another apt run holding the
# dpkg lock is waited for, not failed on. Safe to run again: installed packages
# are skipped in about a second.
set -euo pipefail

# python3-venv: Debian's python3 cannot create the project's virtualenv without it.
# curl: docs/http-api.md drives Lazarus through Temporal's HTTP API with it, and its test runs those commands.
# chromium: headless, renders the Temporal UI for the docs' screenshots and the UI test (tests/ui).
PACKAGES=(munge slurmctld slurmd slurm-client slurmdbd slurm-wlm-mysql-plugin mariadb-server
          prometheus openssh-server openssh-client gcc make python3 python3-venv curl chromium)

if [[ $(id -u) -ne 0 ]]; then
    echo "install-system-deps.sh must run as root; as root run: apt-get install -y ${PACKAGES[*]}" >&2
    exit 1
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f '${db:Status-Status}' "$pkg" 2>/dev/null || true)
    [[ $status == installed ]] || missing+=("$pkg")
done

if ((${#missing[@]})); then
    echo "installing: ${missing[*]}"
    guard=""
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
        guard=/usr/sbin/policy-rc.d
        printf '#!/bin/sh\n# temporary, from install-system-deps.sh\nexit 101\n' >"$guard"
        chmod 755 "$guard"
        trap 'rm -f "$guard"' EXIT
    fi
    apt_get() { DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 "$@"; }
    installed=0
    for attempt in $(seq 1 12); do
        # The first try works from the existing package lists; later ones refresh them.
        if ((attempt > 1)); then apt_get update -q || true; fi
        if apt_get install -y -q "${missing[@]}"; then installed=1; break; fi
        echo "apt-get install failed (attempt $attempt), retrying in 5 s" >&2
        sleep 5
    done
    ((installed)) || { echo "could not install: ${missing[*]}" >&2; exit 1; }
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ -f $here/fetch-helm.sh ]]; then
    bash "$here/fetch-helm.sh"
fi
