#!/usr/bin/env bats
# `nanobox-runc sandbox -t`: an interactive terminal, driven by a real one:
# tmux, with a private server. Raw mode on the caller's side, the window
# size inside (stty size) and SIGWINCH forwarded, line editing and ^C done
# by the sandbox's own pty, and the caller's terminal restored however the
# run ends.

load helpers

setup() {
	setup_test
	requires nanobox
	command -v tmux >/dev/null || skip "test requires tmux (apt-get install tmux)"
	TMUX_SOCK="nbx-tty-$$-${BATS_SUITE_TEST_NUMBER:-0}"
}

teardown() {
	tmux -L "$TMUX_SOCK" kill-server 2>/dev/null || true
	teardown_test
}

# tmux_start SANDBOX-ARGS...: `nanobox-runc sandbox -t SANDBOX-ARGS` in a
# 100x30 tmux pane, as the test's user; once it ends, the pane shows
# "exit=STATUS" and the terminal's settings ("canonical=yes", "echo=yes"
# when restored) and stays.
tmux_start() {
	local script="$BATS_TEST_TMPDIR/tty.sh" a quoted=""
	for a in "${AS_USER[@]}" "$RUNTIME" --root "$ROOT" sandbox -t "$@"; do
		quoted+=" $(printf '%q' "$a")"
	done
	cat >"$script" <<-EOF
		#!/bin/bash
		$quoted
		rc=\$?
		# A line of its own, and the settings in one word each: the pane
		# wraps long lines.
		echo
		echo "exit=\$rc"
		s=\$(stty -a)
		case "\$s" in *-icanon*) echo "canonical=no" ;; *icanon*) echo "canonical=yes" ;; esac
		case "\$s" in *" -echo "*) echo "echo=no" ;; *" echo "*) echo "echo=yes" ;; esac
	EOF
	chmod 0755 "$script"
	tmux -L "$TMUX_SOCK" -f /dev/null new-session -d -s t -x 100 -y 30 "$script"
	tmux -L "$TMUX_SOCK" set-option -t t remain-on-exit on >/dev/null
}

# screen: what the pane shows.
screen() {
	tmux -L "$TMUX_SOCK" capture-pane -p -t t
}

# tmux_wait REGEX: poll the pane until a line matches REGEX.
tmux_wait() {
	local i
	for ((i = 0; i < 600; i++)); do
		if screen | grep -qE -- "$1"; then
			return 0
		fi
		sleep 0.05
	done
	echo "the pane never showed /$1/:"
	screen
	return 1
}

# terminal_restored: the caller's terminal is back in canonical mode with
# echo, once nanobox-runc has exited.
terminal_restored() {
	tmux_wait '^echo=' || return 1
	screen | grep -q '^canonical=yes$' && screen | grep -q '^echo=yes$' ||
		fail "the terminal was not restored: $(screen)"
}

keys() {
	tmux -L "$TMUX_SOCK" send-keys -t t "$@"
}

@test "sandbox -t: size, resize, line editing and ^C inside; the terminal restored on exit" {
	tmux_start -- sh
	tmux_wait '^# ?$'
	keys 'stty size; tty' Enter
	tmux_wait '^30 100$'
	tmux_wait '^/dev/pts/0$'
	# A resize of the caller's terminal reaches the program (SIGWINCH).
	tmux -L "$TMUX_SOCK" resize-window -t t -x 120 -y 40
	keys 'stty size' Enter
	tmux_wait '^40 120$'
	# The sandbox's pty edits the line: BSpace erases, and the shell gets
	# "echo abc".
	keys 'echo abx' BSpace 'c' Enter
	tmux_wait '^abc$'
	# ^C is a key like any other for the caller (raw mode): it reaches the
	# program's foreground job through the sandbox's pty.
	local mark=$((9100000 + $$ % 100000))
	keys "sleep $mark" Enter
	retry 600 0.05 pgrep -f "^sleep $mark\$" >/dev/null || fail "sleep did not start: $(screen)"
	keys C-c
	keys 'echo "status-$?"' Enter
	tmux_wait '^status-130$'
	! pgrep -f "^sleep $mark\$" >/dev/null || fail "^C did not end the job"
	# The shell itself (pid 1 of the sandbox) is still there.
	keys 'echo "alive-$$"' Enter
	tmux_wait '^alive-1$'
	keys 'exit 3' Enter
	tmux_wait '^exit=3$'
	# Back to the caller's settings: canonical mode and echo.
	terminal_restored
}

@test "sandbox -t: the terminal is restored when the program is killed, and when nanobox-runc is" {
	local mark=$((9000000 + $$ % 1000000))
	tmux_start -- sh -c "echo ready; exec sleep $mark"
	tmux_wait '^ready'
	local pid
	pid=$(pgrep -f "^sleep $mark\$")
	[[ -n "$pid" ]] || fail "the program is not running"
	kill -9 "$pid"
	tmux_wait '^exit=137$'
	terminal_restored

	tmux -L "$TMUX_SOCK" kill-server
	tmux_start -- sh -c "echo ready; exec sleep $mark"
	tmux_wait '^ready'
	pid=$(pgrep -f "sandbox -t -- sh -c echo ready; exec sleep $mark" | head -1)
	[[ -n "$pid" ]] || fail "nanobox-runc is not running"
	kill -TERM "$pid"
	tmux_wait '^exit=143$'
	terminal_restored
	! pgrep -f "^sleep $mark\$" >/dev/null || fail "the sandbox outlived nanobox-runc"
}

@test "sandbox -t: the program's output goes through the output limit" {
	tmux_start --output-limit 4K --report "$BATS_TEST_TMPDIR/report.json" -- sh -c 'yes tty-flood'
	tmux_wait '^exit=[0-9]+$'
	screen | grep -q 'tty-flood' || fail "no output: $(screen)"
	[[ "$(jq -r .status "$BATS_TEST_TMPDIR/report.json")" == output-limit ]] ||
		fail "report: $(cat "$BATS_TEST_TMPDIR/report.json")"
	[[ "$(jq -r .outputBytes "$BATS_TEST_TMPDIR/report.json")" -gt 4096 ]] || fail "output counted: $(cat "$BATS_TEST_TMPDIR/report.json")"
	terminal_restored
}

@test "sandbox -t --tty-size: the terminal's size where the caller has none; bad sizes refused" {
	local out="$BATS_TEST_TMPDIR/out" err="$BATS_TEST_TMPDIR/err"
	# No terminal here (a binding's pipes): 24x80 unless --tty-size.
	"${AS_USER[@]}" "$RUNTIME" --root "$ROOT" sandbox -t -- stty size </dev/null >"$out" 2>"$err" || fail "stty: $(cat "$err")"
	[[ "$(tr -d '\r' <"$out")" == "24 80" ]] || fail "default size: $(cat -A "$out")"
	"${AS_USER[@]}" "$RUNTIME" --root "$ROOT" sandbox -t --tty-size 33x101 -- stty size </dev/null >"$out" 2>"$err" ||
		fail "stty: $(cat "$err")"
	[[ "$(tr -d '\r' <"$out")" == "33 101" ]] || fail "--tty-size 33x101: $(cat -A "$out")"
	local bad
	for bad in 0x80 24x 24 65536x80 x; do
		run "${AS_USER[@]}" "$RUNTIME" --root "$ROOT" sandbox -t --tty-size "$bad" -- true </dev/null
		[[ $status -eq 125 && "$output" == *"--tty-size \"$bad\": want ROWSxCOLS"* ]] || fail "$bad: $status $output"
	done
	run "${AS_USER[@]}" "$RUNTIME" --root "$ROOT" sandbox --tty-size 30x90 -- true </dev/null
	[[ $status -eq 125 && "$output" == *"--tty-size is the size of --tty's terminal"* ]] || fail "without -t: $status $output"
}
