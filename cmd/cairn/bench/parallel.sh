#!/usr/bin/env bash
# parallel.sh BASE NEW [AGENTS] [ROUNDS]: a workflow of AGENTS agents
# (default 8) run at once, each making ROUNDS rounds (default 1500) of one
# read_file call with a script model, timed as a whole process for two
# cairn binaries, alternately, three times each (wall, CPU, peak RSS).
set -u
BASE=$1 NEW=$2 AGENTS=${3:-8} ROUNDS=${4:-1500}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir "$T/workspace"
echo "a line" > "$T/workspace/f.txt"
{
	echo "turns:"
	for _ in $(seq "$ROUNDS"); do echo "  - tool_calls: [{name: read_file, input: {path: f.txt}}]"; done
	echo "  - text: done"
} > "$T/script.yaml"
cat > "$T/agent.yaml" <<'AGENT'
name: looper
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [read_file]}]
limits: {max_rounds: 1000000}
AGENT
{
	echo "name: parallel"
	echo "workspace: workspace"
	echo "max_parallel: $AGENTS"
	echo "steps:"
	for i in $(seq "$AGENTS"); do printf '  - {name: s%d, agent: agent.yaml, prompt: go}\n' "$i"; done
} > "$T/flow.yaml"
# one run first, to fill the compile cache both binaries then load from
"$NEW" workflow run "$T/flow.yaml" --store "$T/warmup" --cache "$T/cache" >/dev/null 2>&1
for _ in 1 2 3; do
	for v in base new; do
		b=$BASE
		[ "$v" = new ] && b=$NEW
		rm -rf "$T/store"
		/usr/bin/time -o "$T/time" -f "$v $AGENTS agents x $ROUNDS rounds: %e s wall, %U s user, %S s sys, %M KB peak" \
			"$b" workflow run "$T/flow.yaml" --store "$T/store" --cache "$T/cache" >"$T/out" 2>&1 ||
			{ echo "$v failed:"; cat "$T/out"; exit 1; }
		cat "$T/time"
	done
done
