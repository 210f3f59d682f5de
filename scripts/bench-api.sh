#!/usr/bin/env bash
# Prints, measured in one run, the figures of the fact API against their
# baselines:
#   1. bootstrap size of each function (linux/arm64, the flags of `make
#      build`) against bench/hello built the same way (information only:
#      no target);
#   2. cold start under the Lambda Runtime Interface Emulator, from the
#      emulator's start to the answer of the first invocation (the emulator
#      starts the bootstrap then), against bench/hello in the same rounds
#      (linux/amd64 here), RUNS rounds. Each function answers an event it
#      refuses or settles before any AWS call, so that the figure is the
#      start-up alone (target ratio ≤ 1.15): getfacts, deletefact and
#      clearfacts a token without a tenant claim (401), putfact an empty
#      value (400), eraseuser a user-scoped token on the admin route (403),
#      the extractor events/extractor-wrong-group.json, an SQS batch whose
#      one record is decoded and checked, then refused (its body names
#      another user than its message group) before any AWS call; the answer
#      is checked, so that a crash cannot pass for a start. The functions'
#      settings are events/env.json's, which TestEnvJSONStartsEveryFunction
#      holds to what each function requires to start. Then, as information, each
#      CRUD function's start to an answer that needed DynamoDB (moto_server
#      here), which hello does not make. The steadiest ratio on a shared
#      machine is the median over the rounds of each start's ratio to
#      hello's start in the same round; the ratios of the medians and of
#      the minima are printed beside it;
#   3. warm in-process latency of the get-facts handler against a bare
#      GetItem on the same moto_server (Go benchmarks; target ratio ≤ 1.2).
#   2b. start-up CPU time: each bootstrap run, without a runtime API, from
#      exec to the point where lambda.Start gives up (all package
#      initialisation and the function's wiring: settings, SDK
#      configuration, clients), user + system CPU time, median of STARTS
#      runs interleaved with bench/hello (information: the target is 2.'s,
#      whose process start and runtime handshake this leaves out). CPU time
#      hardly depends on what else the machine runs, unlike 2.; with
#      BASELINE_REV=<git revision> the functions built at that revision are
#      measured in the same run (in 2. too), and the CPU time each adds to
#      its build at that revision is printed;
#   2c. package initialisation: each bootstrap of 2b. run with
#      GODEBUG=inittrace=1, the clock time of all its packages' init
#      and its four costliest packages, median of 21 runs (information:
#      what a function initialises at every start that hello does not);
# It runs under scripts/with-moto.sh when no moto_server is given.
# COLD_ONLY=1 measures the start-up (2., 2b. and 2c.) alone.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${USERMEMORY_AWS_ENDPOINT:-}" ]; then exec ./scripts/with-moto.sh "$0" "$@"; fi
RUNS=${RUNS:-7}
GO=${GO:-go}
FUNCS=(getfacts putfact deletefact clearfacts eraseuser)
COLD=("${FUNCS[@]}" extractor)
work=$(mktemp -d -t bench-api.XXXXXX)
trap 'rm -rf "$work"' EXIT
flags=(-tags lambda.norpc -trimpath -ldflags "-s -w")
build() { # arch out pkg
  GOOS=linux GOARCH=$1 CGO_ENABLED=0 $GO build "${flags[@]}" -o "$2" "$3"
}
ratio() { python3 -c "print(f'{$1/$2:.2f}')"; }

if [ -z "${COLD_ONLY:-}" ]; then
echo "== 1. bootstrap size, linux/arm64, -tags lambda.norpc -trimpath -ldflags \"-s -w\""
build arm64 "$work/arm64/hello" ./bench/hello
hello=$(stat -c %s "$work/arm64/hello")
printf '%-12s %10d bytes\n' hello "$hello"
for f in "${FUNCS[@]}" extractor; do
  [ -d "functions/$f" ] || continue
  build arm64 "$work/arm64/$f" "./functions/$f"
  n=$(stat -c %s "$work/arm64/$f")
  printf '%-12s %10d bytes  ratio %s\n' "$f" "$n" "$(ratio "$n" "$hello")"
done
fi

echo "== 2. cold start under the runtime emulator, linux/amd64, $RUNS rounds"
$GO build -o "$work/rie" github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie
table=bench-facts-$$
curl -fsS -o /dev/null "$USERMEMORY_AWS_ENDPOINT" -H 'Content-Type: application/x-amz-json-1.0' \
  -H 'X-Amz-Target: DynamoDB_20120810.CreateTable' \
  -H 'Authorization: AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0' \
  -d "{\"TableName\":\"$table\",\"BillingMode\":\"PAY_PER_REQUEST\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}]}"
build amd64 "$work/amd64/hello" ./bench/hello
for f in "${COLD[@]}"; do build amd64 "$work/amd64/$f" "./functions/$f"; done
# ALL is COLD and, with BASELINE_REV, the same functions built at that
# revision (named function@revision), measured in the same runs.
ALL=("${COLD[@]}")
if [ -n "${BASELINE_REV:-}" ]; then
  mkdir -p "$work/base"
  git archive "$BASELINE_REV" | tar -x -C "$work/base"
  for f in "${COLD[@]}"; do
    (cd "$work/base" && build amd64 "$work/amd64/$f@$BASELINE_REV" "./functions/$f")
    ALL+=("$f@$BASELINE_REV")
  done
fi
python3 - "$RUNS" "$work" "$table" "$USERMEMORY_AWS_ENDPOINT" "${ALL[@]}" <<'EOF'
import http.client, json, os, socket, statistics, subprocess, sys, time
runs, work, table, endpoint, funcs = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]

def status(code):
    return f'"statusCode":{code},'

# The start-up alone: an event each function answers before any AWS call
# (a request refused on its token or its body; for the extractor an SQS
# batch whose one record is decoded and checked, then refused: its body
# names another user than its message group; a record that is not due
# would note the thread's tail, a DynamoDB write, since the idle read is
# on), and what the answer must hold, so that a crash or another path
# cannot pass for a start: the refusal's status, or the extractor's report
# of its one record as failed.
START = {
    "getfacts": ("getfacts-no-tenant-claim.json", status(401)),
    "putfact": ("putfact-empty-value.json", status(400)),
    "deletefact": ("deletefact-no-tenant-claim.json", status(401)),
    "clearfacts": ("clearfacts-no-tenant-claim.json", status(401)),
    "eraseuser": ("eraseuser-user-scope.json", status(403)),
    "extractor": ("extractor-wrong-group.json", '"itemIdentifier":"0b8f4c1e-2222-4a51-9a3e-000000000009"'),
}
# The start-up and the function's first DynamoDB request(s) to
# moto_server, which hello does not make (information).
DYNAMODB = {
    "getfacts": ("getfacts-me.json", status(200)),
    "putfact": ("putfact-me.json", status(200)),
    "deletefact": ("deletefact-me.json", status(204)),
    "clearfacts": ("clearfacts-me.json", status(204)),
    "eraseuser": ("eraseuser-admin.json", status(200)),
}
# Only what Lambda sets (and the endpoint): this machine's variables, such
# as an AWS_CA_BUNDLE that the SDK's config loader would parse at every
# start, are not Lambda's.
# The functions' own settings are the template's defaults, as
# events/env.json holds them (a test keeps the two together).
ENV = dict(json.load(open("events/env.json"))["Parameters"])
ENV.update({"PATH": os.environ["PATH"], "HOME": work, "TABLE_NAME": table, "AWS_ENDPOINT_URL": endpoint,
       "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"})

def freeports():
    """Two distinct free ports (both bound at once, so never the same)."""
    with socket.socket() as a, socket.socket() as b:
        a.bind(("127.0.0.1", 0))
        b.bind(("127.0.0.1", 0))
        return a.getsockname()[1], b.getsockname()[1]

def coldstart(binary, event, want):
    """Starts the emulator with binary and sends it event, its first
    invocation (the emulator starts the binary then). Returns the
    milliseconds from the emulator's start to the answer."""
    body = open(os.path.join("events", event), "rb").read()
    p, q = freeports()
    log = open(os.path.join(work, "rie.log"), "w+")
    t0 = time.perf_counter()
    rie = subprocess.Popen([os.path.join(work, "rie"), "--runtime-interface-emulator-address", f"127.0.0.1:{p}",
                            "--runtime-api-address", f"127.0.0.1:{q}", binary],
                           env=ENV, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    try:
        for port in (q, p):  # until the emulator listens, its runtime API first
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port)).close()
                    break
                except ConnectionRefusedError:
                    if rie.poll() is not None:
                        log.seek(0)
                        sys.exit(f"error: the emulator exited; its log:\n{log.read()}")
                    time.sleep(0.0005)
        try:
            c = http.client.HTTPConnection("127.0.0.1", p, timeout=60)
            c.request("POST", "/2015-03-31/functions/function/invocations", body)
            r = c.getresponse()
            out = r.read().decode()
        except (OSError, http.client.HTTPException) as e:
            log.seek(0)
            sys.exit(f"error: invoking {os.path.basename(binary)} with events/{event}: {e}; the emulator's log:\n{log.read()[-2000:]}")
        t1 = time.perf_counter()
    finally:
        rie.kill()
        rie.wait()
    name = os.path.basename(binary)
    if r.status != 200 or "errorMessage" in out or want not in out:
        log.seek(0)
        sys.exit(f"error: {name} answered events/{event} with {r.status} {out}, want {want}; the emulator's log:\n{log.read()[-2000:]}")
    return (t1 - t0) * 1000

# Interleaved rounds, so that a busy moment of the machine hits all alike.
ms = {}  # name → one time per round
for _ in range(runs):
    ms.setdefault("hello", []).append(coldstart(os.path.join(work, "amd64", "hello"), "getfacts-me.json", '"hello"'))
    for f in funcs:
        base, binary = f.split("@")[0], os.path.join(work, "amd64", f)
        ms.setdefault(f, []).append(coldstart(binary, *START[base]))
        if base in DYNAMODB:
            ms.setdefault(f + "+dynamodb", []).append(coldstart(binary, *DYNAMODB[base]))
hello = ms.pop("hello")
hmed, hmin = statistics.median(hello), min(hello)
print(f"{'hello':<32} median {hmed:5.1f} ms, min {hmin:5.1f} ms")
# The median over the rounds of a start's ratio to hello's start in the
# same round is the steadiest figure on a shared machine; the ratios of
# the medians and of the minima are printed beside it.
for title, names in (
        ("start-up alone, to an answer given before any AWS call (target ≤ 1.15):",
         [n for n in ms if not n.endswith("+dynamodb")]),
        ("start-up and first DynamoDB round trip(s), which hello does not make (information):",
         [n for n in ms if n.endswith("+dynamodb")])):
    print(title)
    for n in names:
        v = ms[n]
        paired = statistics.median(a / b for a, b in zip(v, hello))
        med, mn = statistics.median(v), min(v)
        print(f"  {n:<30} median {med:5.1f} ms, min {mn:5.1f} ms   "
              f"ratio to hello: per round {paired:.2f}, of medians {med / hmed:.2f}, of minima {mn / hmin:.2f}")
EOF

echo "== 2b. start-up CPU time to lambda.Start, linux/amd64, user+system, median of ${STARTS:-200}"
startbins=("$work/amd64/hello")
for f in "${COLD[@]}"; do startbins+=("$work/amd64/$f"); done
for f in "${ALL[@]}"; do [ "$f" = "${f%@*}" ] || startbins+=("$work/amd64/$f"); done
python3 - "${STARTS:-200}" "$table" "${startbins[@]}" <<'EOF'
import json, os, resource, statistics, subprocess, sys
n, table, bins = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
# Only what Lambda sets, as in 2.
env = dict(json.load(open("events/env.json"))["Parameters"])
env.update({"PATH": os.environ.get("PATH", ""), "TABLE_NAME": table, "AWS_REGION": "us-east-1",
       "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "HOME": "/nonexistent"})
cpu = {b: [] for b in bins}
for _ in range(n):
    for b in bins:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        r = subprocess.run([b], env=env, stdin=subprocess.DEVNULL, capture_output=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        # Without a runtime API, lambda.Start says so and exits: a function
        # that stopped before it (a wrong setting) would measure less.
        if b"AWS_LAMBDA_RUNTIME_API" not in r.stdout + r.stderr:
            sys.exit(f"error: {b} stopped before lambda.Start: {(r.stdout + r.stderr).decode()[-400:]}")
        cpu[b].append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
med = {b: statistics.median(v) for b, v in cpu.items()}
hello = med[bins[0]]
for b in bins:
    line = f"{os.path.basename(b):<24} {med[b]:6.2f} ms CPU   ratio to hello {med[b] / hello:.2f}"
    base = [x for x in bins if os.path.basename(x).startswith(os.path.basename(b) + "@")]
    if base:
        line += f"   {med[b] - med[base[0]]:+.2f} ms against {os.path.basename(base[0])}"
    print(line)
EOF

echo "== 2c. package initialisation (GODEBUG=inittrace=1), clock time, median of 21"
python3 - "$table" "${startbins[@]}" <<'EOF'
import collections, json, os, re, statistics, subprocess, sys
table, bins = sys.argv[1], sys.argv[2:]
env = dict(json.load(open("events/env.json"))["Parameters"])
env.update({"PATH": os.environ.get("PATH", ""), "TABLE_NAME": table, "AWS_REGION": "us-east-1",
       "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "HOME": "/nonexistent", "GODEBUG": "inittrace=1"})
line = re.compile(r"^init (\S+) @[\d.]+ ms, ([\d.]+) ms clock", re.M)
for b in bins:
    total, pkgs = [], collections.defaultdict(list)
    for _ in range(21):
        out = subprocess.run([b], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True).stderr
        inits = [(m[1], float(m[2])) for m in line.finditer(out)]
        if not inits:
            sys.exit(f"error: {b} printed no inittrace line: {out[-400:]}")
        total.append(sum(ms for _, ms in inits))
        for p, ms in inits:
            pkgs[p].append(ms)
    top = sorted(pkgs, key=lambda p: -statistics.median(pkgs[p]))[:4]
    print(f"{os.path.basename(b):<24} {statistics.median(total):5.2f} ms   " +
          ", ".join(f"{p.removeprefix('github.com/aws/aws-sdk-go-v2/')} {statistics.median(pkgs[p]):.2f}" for p in top))
EOF
[ -n "${COLD_ONLY:-}" ] && exit 0

echo "== 3. warm in-process latency on moto_server: get-facts handler against a bare GetItem"
out=$($GO test -run '^$' -bench 'BenchmarkGetFactsHandler$|BenchmarkBareGetItem$' -benchtime "${BENCHTIME:-3s}" -count 1 ./functions/getfacts/)
echo "$out" | grep -E '^Benchmark'
handler=$(echo "$out" | awk '/^BenchmarkGetFactsHandler/ {print $3}')
bare=$(echo "$out" | awk '/^BenchmarkBareGetItem/ {print $3}')
echo "handler/GetItem ratio $(ratio "$handler" "$bare") (target ≤ 1.2)"
