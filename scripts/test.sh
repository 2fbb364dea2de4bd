#!/usr/bin/env bash
# Runs Anvil's whole test suite on a fresh Debian machine of this kind,
# installing what the tests need first. Run as root (CI is root).
#
#   scripts/test.sh            # everything
#   scripts/test.sh -run Foo   # extra arguments go to `go test`
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages the tests drive as real peers.
PACKAGES=(postgresql ipmitool openipmi curl qemu-system-x86 ipxe-qemu ovmf iproute2
  isc-dhcp-client kea-admin busybox-static linux-image-amd64 cpio tftp-hpa atftp
  ipxe pxelinux syslinux-common shim-signed grub-efi-amd64-signed debootstrap
  syslinux dosfstools mtools xz-utils extlinux e2fsprogs chromium netplan.io cloud-init
  openvswitch-switch gdisk mdadm lvm2 bcache-tools bind9-dnsutils dnsperf bind9 lshw smartmontools memtester
  fio stress-ng nvme-cli)

need=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  echo "== installing ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

# PostgreSQL: start the packaged cluster and give the tests a role that may
# create databases; each test makes (and drops) a database of its own.
if command -v pg_ctlcluster >/dev/null; then
  ver=$(pg_lsclusters -h | awk 'NR==1{print $1}')
  if [ -n "$ver" ]; then
    pg_ctlcluster "$ver" main start 2>/dev/null || true
    for _ in $(seq 30); do pg_isready -q -h 127.0.0.1 && break; sleep 1; done
    su postgres -c "psql -q -tAc \"DO \\\$\\\$BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname='anvil') THEN CREATE ROLE anvil LOGIN CREATEDB PASSWORD 'anvil'; END IF; END\\\$\\\$\"" 
    su postgres -c "psql -q -tAc \"SELECT 1 FROM pg_database WHERE datname='anvil_test'\" | grep -q 1 || createdb -O anvil anvil_test"
    export ANVIL_TEST_POSTGRES="postgres://anvil:anvil@127.0.0.1:5432/anvil_test?sslmode=disable"
    echo "== PostgreSQL $ver running; store and API tests run on it as well as SQLite"
  fi
fi

echo "== go vet"
go vet ./...
echo "== go test"
export ANVIL_REQUIRE_BROWSER=1
go test -count=1 -timeout 60m "$@" ./...
