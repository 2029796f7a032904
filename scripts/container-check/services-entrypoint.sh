#!/bin/sh
# Entrypoint of the stand-in PostgreSQL and Redis image the container check builds from Debian's
# packages (no image registry is reachable from CI). It honours what compose.yaml passes to the
# official images: POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB, a `redis-server …` command, and
# the nginx image's `nginx -g 'daemon off;'` (its site mounted at /etc/nginx/conf.d/default.conf).
set -eu
if [ "${1:-}" = "nginx" ]; then
  rm -f /etc/nginx/sites-enabled/default
  exec "$@"
fi
if [ "${1:-}" = "redis-server" ]; then
  shift
  exec redis-server --bind 0.0.0.0 --protected-mode no "$@"
fi
bin=/usr/lib/postgresql/15/bin
data=/var/lib/postgresql/data
mkdir -p "$data" /run/postgresql
chown -R postgres:postgres "$data" /run/postgresql
if [ ! -s "$data/PG_VERSION" ]; then
  printf '%s\n' "$POSTGRES_PASSWORD" > /tmp/pwfile
  chown postgres /tmp/pwfile
  su postgres -s /bin/sh -c "$bin/initdb -D $data -U $POSTGRES_USER --pwfile=/tmp/pwfile --auth=scram-sha-256 >/dev/null"
  rm /tmp/pwfile
  echo "host all all 0.0.0.0/0 scram-sha-256" >> "$data/pg_hba.conf"
  su postgres -s /bin/sh -c "$bin/pg_ctl -D $data -o '-c listen_addresses=' -w start >/dev/null"
  su postgres -s /bin/sh -c "PGPASSWORD='$POSTGRES_PASSWORD' createdb -h /run/postgresql -U $POSTGRES_USER $POSTGRES_DB"
  su postgres -s /bin/sh -c "$bin/pg_ctl -D $data -m fast -w stop >/dev/null"
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups "$bin/postgres" -D "$data" -c "listen_addresses=*"
