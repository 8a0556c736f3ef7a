# test_user.sh - sourced by tests that play an unprivileged user against a
# root oprofiled or a root tool. op_test_user makes (once) the system user
# "opng-tester" (no home, no login shell) and sets OP_USER, OP_UID, OP_GID;
# op_as_user CMD... runs CMD as that user (no supplementary groups).
# A test that is not root, or cannot create the user, exits 77 with a message.
# SPDX-License-Identifier: MIT

OP_USER=opng-tester

op_test_user() {
	if [ "$(id -u)" != 0 ]; then
		echo "SKIP: needs root (plays a user against a root daemon)"; exit 77
	fi
	if ! id -u "$OP_USER" >/dev/null 2>&1; then
		useradd --system --no-create-home --shell /usr/sbin/nologin "$OP_USER" 2>/dev/null ||
			id -u "$OP_USER" >/dev/null 2>&1 || {
			echo "SKIP: cannot create the test user $OP_USER (useradd failed)"; exit 77; }
	fi
	OP_UID=$(id -u "$OP_USER")
	OP_GID=$(id -g "$OP_USER")
	command -v setpriv >/dev/null 2>&1 || { echo "SKIP: setpriv (util-linux) missing"; exit 77; }
}

op_as_user() {
	setpriv --reuid="$OP_UID" --regid="$OP_GID" --clear-groups -- "$@"
}
