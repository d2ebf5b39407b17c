"""On the device: run the kernelscope profiles concurrently until a deadline, then pack small result tars into $OUT.
usage: python3 driver214.py DEADLINE_S RUN_NAMES(comma) ; cwd = kernelscope source (samples/ there)."""
import io, json, os, re, signal, subprocess, sys, tarfile, time
deadline = float(sys.argv[1]); names = sys.argv[2].split(",")
OUT = os.environ.get("OUT", "/tmp/out"); root = "/tmp/ks"; os.makedirs(root, exist_ok=True)
M5 = "eager,default,max-autotune,max-autotune:NVGEMM,max-autotune:ATEN+TRITON+NVGEMM"
common = ["--timeout", "300", "--repeats", "10", "--steps", "2"]
ks = [sys.executable, "-m", "kernelscope"]
RUNS = {
    "seed-fp16": ks + ["profile", "samples/linear_gelu.py", "--python", "/tmp/py214", "--modes", M5, "--dtype", "float16"] + common,
    "seed-bf16": ks + ["profile", "samples/linear_gelu.py", "--python", "/tmp/py214", "--modes", M5, "--dtype", "bfloat16"] + common,
    "tb-bf16-b4": ks + ["profile", "samples/transformer_block.py", "--python", "/tmp/py214", "--modes", M5, "--dtype", "bfloat16"] + common,
    "tb-bf16-b32": ks + ["profile", "samples/transformer_block.py", "--python", "/tmp/py214", "--modes", M5, "--dtype", "bfloat16",
                         "--set", "batch_size=32"] + common,
    "up-seed": ks + ["upgrade-check", "samples/linear_gelu.py", "--before", "python3", "--after", "/tmp/py214",
                     "--modes", "eager,default,max-autotune,max-autotune:NVGEMM", "--dtype", "float16"] + common,
}
t0 = time.time(); procs = {}
for n in names:
    cmd = RUNS[n] + ["--out", f"{root}/{n}"]
    f = open(f"{root}/{n}.console.txt", "w")
    procs[n] = [subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, start_new_session=True), time.time(), cmd, None, False]
    time.sleep(2)
while any(p[3] is None for p in procs.values()):
    for n, p in procs.items():
        if p[3] is None and p[0].poll() is not None:
            p[3] = time.time()
            print(f"[{time.time()-t0:6.1f}s] {n} rc={p[0].returncode} wall={p[3]-p[1]:.1f}s", flush=True)
        elif p[3] is None and not p[4] and time.time() - t0 > deadline:
            print(f"[{time.time()-t0:6.1f}s] {n} deadline: SIGINT", flush=True); p[4] = True
            try: os.killpg(p[0].pid, signal.SIGINT)
            except ProcessLookupError: pass
        elif p[3] is None and p[4] and time.time() - t0 > deadline + 25:
            print(f"[{time.time()-t0:6.1f}s] {n} SIGKILL", flush=True)
            try: os.killpg(p[0].pid, signal.SIGKILL)
            except ProcessLookupError: pass
    time.sleep(1)
STATUS = re.compile(r"^\[\d+/\d+\].*?: (ok|failed|timeout|interrupted|unavailable|skipped)|error|Error|Verdict|Upgrade check|kernelscope:")
summary = {}
for n, p in procs.items():
    con = open(f"{root}/{n}.console.txt", errors="replace").read()
    lines = [l for l in con.splitlines() if STATUS.search(l) and " [" not in l[:22]]
    summary[n] = {"rc": p[0].returncode, "wall_s": round(p[3] - p[1], 1), "interrupted": p[4], "cmd": " ".join(p[2][2:])}
    print(f"===== {n} rc={p[0].returncode} wall={p[3]-p[1]:.1f}s interrupted={p[4]}")
    for l in lines[:40]: print("  " + l[:400])
def keep(rel):
    b = os.path.basename(rel)
    if "/worker/" in "/" + rel or b.endswith(".html"): return False
    if b in ("result.json", "summary.md", "compare.json", "compare.md", "capture.json", "log.txt", "log-warm.txt", "spec.json"): return True
    if "/code/" in rel and b.endswith(".py"): return True
    return b.endswith(".pt.trace.json.gz")
LIM = 15 * 1024 * 1024
for n in procs:
    d = f"{root}/{n}"; files = []
    for dp, dn, fn in os.walk(d):
        for x in fn:
            rel = os.path.relpath(os.path.join(dp, x), d)
            if keep(rel): files.append(rel)
    files.sort(key=lambda r: (r.endswith(".pt.trace.json.gz"), r))
    buf = io.BytesIO(); skipped = []
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=6) as t:
        t.add(f"{root}/{n}.console.txt", arcname=f"{n}/console.txt")
        for rel in files:
            fp = os.path.join(d, rel)
            if buf.tell() + os.path.getsize(fp) > LIM: skipped.append(rel); continue
            t.add(fp, arcname=f"{n}/{rel}")
    open(f"{OUT}/{n}.tar.gz", "wb").write(buf.getvalue())
    summary[n]["tar_bytes"] = len(buf.getvalue()); summary[n]["skipped"] = skipped
    print(f"packed {n}: {len(files)-len(skipped)} files, {len(buf.getvalue())} bytes, skipped {len(skipped)}")
json.dump(summary, open(f"{OUT}/driver.json", "w"), indent=1)
print("elapsed", round(time.time() - t0, 1))
