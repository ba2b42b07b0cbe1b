#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A throwaway PostgreSQL server for the tests and benchmarks of the PostgreSQL backend:
#   scripts/pg_server.sh start STATE_DIR [LISTEN_ADDRESSES]   prints the server's base URL
#   scripts/pg_server.sh stop STATE_DIR
#   scripts/pg_server.sh restart STATE_DIR [DOWN_SECONDS]      (same port and data)
# `start` runs initdb into a fresh temporary folder and pg_ctl on a free port of LISTEN_ADDRESSES
# (default 127.0.0.1), and writes STATE_DIR/url ("postgresql://tensortune@127.0.0.1:PORT", the
# superuser "tensortune", trusted from the listen addresses; the role "tt_secret", password
# "s3cret-Pw", must give its password: tests of credentials), STATE_DIR/port, STATE_DIR/data and
# STATE_DIR/log. The server refuses to run as root,
# so as root it runs as "nobody". Nothing is installed here: scripts/setup.sh installs
# postgresql-15.
set -euo pipefail

usage() {
  echo "usage: scripts/pg_server.sh start|stop|restart STATE_DIR [LISTEN_ADDRESSES]" >&2
  exit 2
}
[ $# -ge 2 ] || usage
ACTION="$1"
STATE="$2"
LISTEN="${3:-127.0.0.1}"
[ "$ACTION" = start ] || LISTEN=127.0.0.1

BIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
if [ -z "$BIN" ] || [ ! -x "$BIN/initdb" ]; then
  echo "pg_server.sh: no PostgreSQL server in /usr/lib/postgresql (run scripts/setup.sh)" >&2
  exit 1
fi

as_server() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u nobody -- "$@"
  else
    "$@"
  fi
}

free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

pg_start() {
  local data="$1" port="$2"
  as_server "$BIN/pg_ctl" -D "$data" -l "$data/../log" -w -t 60 \
    -o "-c listen_addresses='$LISTEN' -p $port -k $data/.. -c fsync=off -c max_connections=200" \
    start >/dev/null
}

case "$ACTION" in
  start)
    mkdir -p "$STATE"
    if [ -f "$STATE/data" ] && [ -d "$(cat "$STATE/data")" ]; then
      "$0" stop "$STATE" || true
    fi
    root="$(mktemp -d /tmp/tt-pg.XXXXXX)"
    chmod 755 "$root"
    if [ "$(id -u)" -eq 0 ]; then chown nobody "$root"; fi
    data="$root/data"
    pwfile="$root/pw"
    printf 'tensortune\n' >"$pwfile"
    if [ "$(id -u)" -eq 0 ]; then chown nobody "$pwfile"; fi
    as_server "$BIN/initdb" -D "$data" -U tensortune --pwfile="$pwfile" -E UTF8 --locale=C \
      --auth-local=trust --auth-host=trust >"$root/initdb.log" 2>&1 ||
      { cat "$root/initdb.log" >&2; exit 1; }
    rm -f "$pwfile"
    # tt_secret must give its password (tests of credentials); everyone else from the listen
    # addresses is trusted: the server lives as long as one test run, on addresses it made.
    {
      echo "local all all trust"
      echo "host all tt_secret 0.0.0.0/0 scram-sha-256"
      echo "host all all 0.0.0.0/0 trust"
      echo "host all all ::1/128 trust"
    } | as_server tee "$data/pg_hba.conf" >/dev/null
    port="$(free_port)"
    pg_start "$data" "$port"
    "$BIN/psql" -q -h 127.0.0.1 -p "$port" -U tensortune -d postgres \
      -c "CREATE ROLE tt_secret LOGIN PASSWORD 's3cret-Pw'" >/dev/null
    echo "$data" >"$STATE/data"
    echo "$port" >"$STATE/port"
    echo "$LISTEN" >"$STATE/listen"
    echo "$root/log" >"$STATE/log"
    echo "postgresql://tensortune@127.0.0.1:$port" >"$STATE/url"
    cat "$STATE/url"
    ;;
  restart)
    data="$(cat "$STATE/data")"
    port="$(cat "$STATE/port")"
    LISTEN="$(cat "$STATE/listen")"
    # An immediate stop is a crash to the clients: their connections break mid-session.
    as_server "$BIN/pg_ctl" -D "$data" -m immediate -w stop >/dev/null
    sleep "${3:-0}"
    pg_start "$data" "$port"
    ;;
  stop)
    [ -f "$STATE/data" ] || exit 0
    data="$(cat "$STATE/data")"
    if [ -d "$data" ]; then
      as_server "$BIN/pg_ctl" -D "$data" -m immediate -w stop >/dev/null 2>&1 || true
      rm -rf "$(dirname "$data")"
    fi
    rm -f "$STATE/data" "$STATE/url" "$STATE/port"
    ;;
  *) usage ;;
esac
