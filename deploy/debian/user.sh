# Sourced into the postinst of rackfence-coordinator and rackfence-agent by
# deploy/dist.sh: the "rackfence" system user both daemons run as (the
# packaged units say User=rackfence instead of the repo's DynamicUser=yes,
# so files under /var/lib/rackfence keep a stable owner across restarts,
# backups and upgrades). No login shell, no home directory of its own.
ensure_rackfence_user() {
	if ! getent group rackfence >/dev/null; then
		groupadd --system rackfence
	fi
	if ! getent passwd rackfence >/dev/null; then
		useradd --system --gid rackfence --home-dir /var/lib/rackfence \
			--no-create-home --shell /usr/sbin/nologin \
			--comment "rackfence daemons" rackfence
	fi
}

# reload_systemd tells a running systemd about new or changed units. Units
# are never enabled or started here: see docs/operator.md, "Installing from
# packages".
reload_systemd() {
	if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
		systemctl daemon-reload || true
	fi
}
