# net_helpers.sh - sourced by bench_net.sh and rss_breakdown.sh (issue 20):
# the network plugins' helper processes of a daemon (oprofiled-pull,
# oprofiled-push, started through plugins/common/np_child), whose CPU and
# memory count with the daemon's.
# SPDX-License-Identifier: MIT

# helpers PID: the daemon's children whose argv[0] begins with oprofiled-
helpers() {
	for _c in $(cat /proc/"$1"/task/*/children 2> /dev/null); do
		case "$(tr '\0' '\n' < /proc/$_c/cmdline 2> /dev/null | head -1)" in
		oprofiled-*) echo "$_c" ;;
		esac
	done
}
