#!/usr/bin/env bash
# whole.sh BASE NEW: the README example's whole-process figures for two
# cairn binaries, run alternately so both meet the machine in one state.
# Run from the repository root; both run its examples, or, with
# BASE_EXAMPLES set, the base runs the examples of that directory (the
# base tree's, when the change is to a module of the example). Prints, for
# each run:
#   first-run  an empty compile cache and a new store (wall, CPU, peak RSS)
#   warm-run   the same cache, warm, and a new store
#   idle       resident memory 6 s into a run waiting at an approval prompt
#              (the example with its write_file call set to ask, on a terminal)
set -u
BASE=$1 NEW=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir "$T/base" "$T/new"
cp -r "${BASE_EXAMPLES:-examples}" "$T/base/examples"
cp -r examples "$T/new/examples"
for v in base new; do
	sed 's/^limits:/approvals:\n  - {tool: write_file, action: ask}\nlimits:/' "$T/$v/examples/hello/agent.yaml" > "$T/$v/examples/hello/ask.yaml"
done

bin() { if [ "$1" = base ]; then echo "$BASE"; else echo "$NEW"; fi; }
timed() { # label binary args...
	local label=$1 b=$2
	shift 2
	/usr/bin/time -o "$T/time" -f "$label %e s wall, %U s user, %S s sys, %M KB peak" "$b" "$@" >/dev/null 2>&1
	cat "$T/time"
}
for i in 1 2 3; do
	for v in base new; do
		ex=$T/$v/examples/hello
		rm -rf "$T/cache-$v" "$T/store" "$ex/workspace/REPORT.md"
		timed "$v first-run" "$(bin $v)" run -f "$ex/agent.yaml" --store "$T/store" --cache "$T/cache-$v"
	done
done
for i in 1 2 3 4 5; do
	for v in base new; do
		ex=$T/$v/examples/hello
		rm -rf "$T/store" "$ex/workspace/REPORT.md"
		timed "$v warm-run" "$(bin $v)" run -f "$ex/agent.yaml" --store "$T/store" --cache "$T/cache-$v"
	done
done
for i in 1 2 3; do
	for v in base new; do
		ex=$T/$v/examples/hello
		rm -rf "$T/store" "$ex/workspace/REPORT.md"
		b=$(bin $v)
		# stdin stays open and silent, so the prompt waits
		(sleep 30 | script -q -c "$b run -f $ex/ask.yaml --store $T/store --cache $T/cache-$v" /dev/null >/dev/null 2>&1) &
		sleep 6
		pid=$(pgrep -n -f "^$b run -f $ex/ask.yaml")
		echo "$v idle $(grep VmRSS "/proc/$pid/status")"
		kill "$pid"
		sleep 1
	done
done
