#!/usr/bin/env bash
# A crawl against a real nginx that limits requests without saying so
# (issue 34, item 1): limit_req at 20 requests a minute with a burst of 1,
# answering 429 without Retry-After, while robots.txt says Crawl-delay: 1.
# It crawls for a fixed time with `polite crawl` (or wget) and counts, from
# nginx's own access log, the pages answered 200 and 429 in each minute.
#
# Usage: bench/nginx/run.sh [-t SECONDS] [-nodelay] [-src DIR | -bin FILE | -wget] [-o DIR]
#
#	-t SECONDS  how long the crawl runs (300)
#	-nodelay    limit_req ... nodelay: answer at once what the burst admits
#	-src DIR    build cmd/polite from the checkout DIR (default: this one)
#	-bin FILE   run this polite binary instead of building one
#	-wget       crawl with `wget -r -w 3 --random-wait` instead
#	-o DIR      keep nginx's access log and the crawler's output in DIR
#
# Without -nodelay, nginx holds a request that comes early, within the
# burst, until its turn, and refuses one only when it comes before the turn
# of the request before it: a crawler that waits for each answer before it
# sends the next request is never refused. With -nodelay, nginx answers the
# early request at once, and refuses the next that comes early.
#
# nginx (Debian's package) runs in the foreground on 127.0.0.1, unprivileged,
# with its prefix, config, pid and logs in a temporary directory; the system
# service is not used. Everything started is stopped, and the temporary
# directory removed, on exit. Not part of `go test ./...`.
set -euo pipefail
export LC_ALL=C
umask 022

here=$(cd "$(dirname "$0")" && pwd)
duration=300
src=$(cd "$here/../.." && pwd)
bin=""
crawler=polite
out=""
nodelay=""

usage() { sed -n '8,15s/^# \{0,1\}//p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	-t) duration=${2:?-t needs seconds}; shift 2 ;;
	-src) src=$(cd "${2:?-src needs a directory}" && pwd); shift 2 ;;
	-bin) bin=$(realpath "${2:?-bin needs a file}"); shift 2 ;;
	-wget) crawler=wget; shift ;;
	-nodelay) nodelay=" nodelay"; shift ;;
	-o) out=${2:?-o needs a directory}; shift 2 ;;
	*) usage ;;
	esac
done
[[ $duration =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: -t wants whole seconds, not $duration" >&2; exit 2; }

die() { echo "run.sh: $*" >&2; exit 1; }

# The packages it needs, from Debian's archive when missing.
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
need=()
[ -x /usr/sbin/nginx ] || command -v nginx >/dev/null || need+=(nginx)
[ "$crawler" = wget ] && ! command -v wget >/dev/null && need+=(wget)
if [ ${#need[@]} -gt 0 ]; then
	echo "== installing ${need[*]}" >&2
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
nginx=$(command -v nginx || echo /usr/sbin/nginx)

# The temporary directory, and the cleanup of everything started in it.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/polite-nginx.XXXXXX")
chmod 755 "$tmp"
nginx_pid=""
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [ -n "$nginx_pid" ] && kill -0 "$nginx_pid" 2>/dev/null; then
		kill -QUIT "$nginx_pid" 2>/dev/null || true
		# A graceful stop takes well under a second; do not wait for ever.
		for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$nginx_pid" 2>/dev/null || break; sleep 0.5; done
		kill -KILL "$nginx_pid" 2>/dev/null || true
		wait "$nginx_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The crawler: polite built from the checkout (or given), or wget.
if [ "$crawler" = polite ]; then
	if [ -z "$bin" ]; then
		echo "== building cmd/polite in $src" >&2
		(cd "$src" && go build -o "$tmp/polite" ./cmd/polite) || die "go build failed in $src"
		bin=$tmp/polite
		label="polite $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo "$src")"
	else
		label="polite $bin"
	fi
else
	label="$(wget --version | head -1 | cut -d' ' -f1-3)"
fi

# The site: robots.txt with Crawl-delay: 1, and pages in a tree of fan-out F,
# each page also linking to its parent and to one page elsewhere. Every page
# is at most 3 links from /, crawl's default -max-depth, and there are more
# pages than one a second for the whole run, so the crawl never runs out.
site=$tmp/site
mkdir -p "$site/p"
printf 'User-agent: *\nCrawl-delay: 1\n' >"$site/robots.txt"
pages=$((duration + 200 > 500 ? duration + 200 : 500))
fan=2
while [ $((1 + fan + fan * fan + fan * fan * fan)) -lt "$pages" ]; do fan=$((fan + 1)); done
page_url() { if [ "$1" = 0 ]; then echo /; else echo "/p/$1.html"; fi; }
for ((i = 0; i < pages; i++)); do
	file=$site/p/$i.html
	[ "$i" = 0 ] && file=$site/index.html
	{
		printf '<!doctype html>\n<html><head><title>Page %d</title></head><body>\n' "$i"
		printf '<h1>Page %d</h1>\n<p>Some text about page %d, so that it is a page.</p>\n<ul>\n' "$i" "$i"
		for ((c = fan * i + 1; c <= fan * i + fan && c < pages; c++)); do
			printf '<li><a href="%s">page %d</a></li>\n' "$(page_url $c)" "$c"
		done
		[ "$i" != 0 ] && printf '<li><a href="%s">up</a></li>\n' "$(page_url $(((i - 1) / fan)))"
		printf '<li><a href="%s">see also</a></li>\n' "$(page_url $(((i * 37 + 11) % pages)))"
		printf '</ul>\n</body></html>\n'
	} >"$file"
done

# nginx's config: limit_req on the pages, not on robots.txt, and an access
# log with the time the answer ended ($msec, in milliseconds), how long the
# request took ($request_time, limit_req's delay included) and the status.
run=$tmp/nginx
mkdir -p "$run"
write_conf() {
	cat >"$run/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $run/nginx.pid;
error_log $run/error.log notice;
events { worker_connections 64; }
http {
	default_type text/html;
	types { text/html html; text/plain txt; }
	client_body_temp_path $run/client_body;
	proxy_temp_path $run/proxy;
	fastcgi_temp_path $run/fastcgi;
	uwsgi_temp_path $run/uwsgi;
	scgi_temp_path $run/scgi;
	log_format timed '\$msec \$request_time \$status \$request_uri';
	access_log $run/access.log timed;
	limit_req_zone \$binary_remote_addr zone=one:1m rate=20r/m;
	server {
		listen 127.0.0.1:$1;
		root $site;
		location = /robots.txt { }
		location / {
			limit_req zone=one burst=1$nodelay;
			limit_req_status 429;
		}
	}
}
EOF
}

# Start nginx on a free port: as nobody when run as root, so that no nginx
# process is privileged. A port that turns out taken is tried again.
as_user=()
if [ "$(id -u)" = 0 ]; then
	chown -R nobody:nogroup "$run"
	as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
fi
port=""
for _ in 1 2 3 4 5; do
	try=$((20000 + RANDOM % 40000))
	(exec 3<>"/dev/tcp/127.0.0.1/$try") 2>/dev/null && continue # something listens there
	write_conf "$try"
	"${as_user[@]}" "$nginx" -p "$run" -c "$run/nginx.conf" -e "$run/error.log" &
	nginx_pid=$!
	for _ in $(seq 50); do
		kill -0 "$nginx_pid" 2>/dev/null || break
		if (exec 3<>"/dev/tcp/127.0.0.1/$try") 2>/dev/null; then port=$try; break; fi
		sleep 0.1
	done
	[ -n "$port" ] && break
	kill -KILL "$nginx_pid" 2>/dev/null || true
	wait "$nginx_pid" 2>/dev/null || true
	nginx_pid=""
	grep -q 'Address already in use' "$run/error.log" 2>/dev/null || { cat "$run/error.log" >&2 || true; die "nginx did not start"; }
done
[ -n "$port" ] || die "no free port for nginx after 5 tries"
base_url=http://127.0.0.1:$port
curl -fsS "$base_url/robots.txt" >/dev/null || die "nginx does not serve $base_url/robots.txt"
: >"$run/access.log" # the check above is not part of the crawl

# The crawl, for $duration seconds, then SIGINT. polite crawl keeps its
# defaults (-delay 1s, -concurrency 4, -max-depth 3, -retries 1) but for
# what a fixed-time crawl needs: no page limit and no idle timeout.
echo "== $label: crawling $base_url/ for ${duration}s ($pages pages, limit_req rate=20r/m burst=1$nodelay, Crawl-delay: 1)" >&2
if [ "$crawler" = polite ]; then
	cmd=("$bin" crawl -max-pages 1000000 -idle-timeout 0 "$base_url/")
else
	cmd=(wget -r -w 3 --random-wait -nv -P "$tmp/wget" "$base_url/")
fi
# In the foreground: a background job of a script starts with SIGINT
# ignored, and timeout's SIGINT would then not stop wget. A Ctrl-C reaches
# the crawl with the script; a SIGTERM to the script alone takes effect
# when the crawl ends, at most 30 s after the duration. --foreground, so that timeout sends SIGINT to
# the crawler once and not again to its process group: polite crawl takes
# a second SIGINT as "exit at once", before its report.
t0=$(date +%s.%N)
rc=0
timeout --foreground -s INT -k 30 "$duration" "${cmd[@]}" >"$tmp/crawl.out" 2>"$tmp/crawl.err" || rc=$?
t1=$(date +%s.%N)

# Stop nginx, so that its log is complete.
kill -QUIT "$nginx_pid"
wait "$nginx_pid" 2>/dev/null || true
nginx_pid=""

if [ -n "$out" ]; then
	mkdir -p "$out"
	cp "$run/access.log" "$out/access.log"
	cp "$tmp/crawl.out" "$out/crawl.out"
	cp "$tmp/crawl.err" "$out/crawl.err"
fi
if [ "$crawler" = polite ]; then
	echo "== polite crawl's own report" >&2
	grep -v '^{' "$tmp/crawl.err" >&2 || true
fi

# The log, by request start ($msec - $request_time), pages only: the minute
# of the run each started in, and the gaps between consecutive starts. A
# 200 that took 0.1s or more was held back by limit_req's burst (the pages
# are small static files) rather than refused.
awk '$4 != "/robots.txt" { printf "%.3f %s %s\n", $1 - $2, $3, $2 }' "$run/access.log" | sort -n >"$tmp/starts"
awk 'NR > 1 { printf "%.3f\n", $1 - prev } { prev = $1 }' "$tmp/starts" | sort -n >"$tmp/gaps"
robots=$(awk '$4 == "/robots.txt"' "$run/access.log" | wc -l)
ngaps=$(wc -l <"$tmp/gaps")
[ "$ngaps" -gt 0 ] || die "nginx logged fewer than two page requests; the crawl ended with status $rc: $(tail -3 "$tmp/crawl.err")"
gap_min=$(head -1 "$tmp/gaps")
gap_med=$(sed -n "$(((ngaps + 1) / 2))p" "$tmp/gaps")

echo "$label, ${duration}s, burst=1$nodelay, $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v t0="$t0" -v dur="$duration" -v robots="$robots" -v gmin="$gap_min" -v gmed="$gap_med" '
	BEGIN { mins = int((dur + 59) / 60) }
	{
		m = int(($1 - t0) / 60)
		if (m < 0) m = 0
		if (m >= mins) m = mins - 1
		if ($2 == 200) ok[m]++; else if ($2 == 429) no[m]++; else other[m]++
		if ($2 == 200 && $3 >= 0.1) held[m]++
	}
	END {
		printf "%-7s %5s %8s %5s %6s %9s\n", "minute", "200", "(held)", "429", "other", "of limit"
		for (m = 0; m < mins; m++) {
			len = (m + 1) * 60 <= dur ? 60 : dur - m * 60
			printf "%-7d %5d %8s %5d %6d %9.2f\n", m + 1, ok[m], "(" held[m]+0 ")", no[m], other[m], ok[m] / (20 * len / 60)
			tok += ok[m]; theld += held[m]; tno += no[m]; toth += other[m]
		}
		printf "%-7s %5d %8s %5d %6d %9.2f\n", "total", tok, "(" theld+0 ")", tno, toth, tok / (20 * dur / 60)
		printf "429s: %d; pages taken: %d, %.2f of the limit (20 a minute); robots.txt fetched %d times\n", tno, tok, tok / (20 * dur / 60), robots
		printf "gap between two page requests'"'"' starts: smallest %.3fs, median %.3fs\n", gmin, gmed
	}' "$tmp/starts"

# The crawl must have run the whole time: timeout's 124 says it was stopped.
case $rc in
124) ;;
*) die "the crawl ended after $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", b - a }')s with status $rc, before ${duration}s: $(tail -3 "$tmp/crawl.err")" ;;
esac
